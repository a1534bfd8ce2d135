#!/usr/bin/env bash
# What pinpoint costs an MPS batch: bare MPS (N copies of pp-busy started directly under an MPS
# control daemon of the benchmark's own) against pinpoint's mps mode (the same N copies submitted
# to a private pinpointd), at N=16 and N=32, each copy sized to about 1 s of GPU work alone on
# this GPU. Rounds of `pinpoint-bench --reps 1` alternate the order of the two modes, so that a
# GPU warming up or a neighbour's load weighs on both alike; the result is, per N, the median
# throughput over the rounds of each mode and their ratio pinpoint / bare, with pinpoint-bench's
# "Where the time goes" table of every round.
#
# Usage, from anywhere:  bash bench/mps_overhead.sh BIN_DIR OUT_DIR
#   BIN_DIR holds pinpointd, pinpoint-shim and pinpoint-bench (and lib/ with
#   libcpp-httplib.so.* where the GPU machine lacks it), and pp-busy; without pp-busy it is built
#   here from bench/workloads/busy.cu with nvcc.
# Writes into OUT_DIR: mps_overhead.md (the ratios and every round's tables), mps_overhead.log
# (everything printed) and rounds.tar.gz (each round's pinpoint-bench output directory).
# Settings (environment): PP_MPS_N (16,32), PP_MPS_ROUNDS (5, at least 3), PP_MPS_JOB_S (1.0),
# PP_MPS_CPUS (4, host CPUs per copy), PP_MPS_CONTROL (nvidia-cuda-mps-control), PP_MPS_SECONDS
# (540: every round starts before this), PP_MPS_EXTRA (more pinpoint-bench options: for a dry run
# without a GPU, a simulated --backend), PP_MPS_NVCC (nvcc).
# Fails with one line on stderr, before anything else, where there is no GPU or no pp-busy.
# Every MPS control daemon started under its scratch directory is quit at the end; pinpoint-bench
# quits its own, this is for a run that was cut short.
set -u
USAGE="usage: bench/mps_overhead.sh BIN_DIR OUT_DIR"
fail() { echo "mps_overhead: $*" >&2; exit 1; }
[ $# -eq 2 ] || fail "$USAGE"
BIN=$(readlink -f "$1") || fail "no directory $1"
OUT_ARG=$2
REPO=$(cd "$(dirname "$0")/.." && pwd)
CONTROL=${PP_MPS_CONTROL:-nvidia-cuda-mps-control}
NS=${PP_MPS_N:-16,32}
ROUNDS=${PP_MPS_ROUNDS:-5}
JOB_S=${PP_MPS_JOB_S:-1.0}
CPUS=${PP_MPS_CPUS:-4}
NVCC=${PP_MPS_NVCC:-nvcc}

# --- what it needs, each missing piece said in one line ---
for b in pinpointd pinpoint-shim pinpoint-bench; do
  [ -x "$BIN/$b" ] || fail "no $BIN/$b (BIN_DIR must hold pinpoint's binaries)"
done
if ! [[ $ROUNDS =~ ^[0-9]+$ ]] || [ "$ROUNDS" -lt 3 ]; then fail "PP_MPS_ROUNDS must be 3 or more (it is $ROUNDS)"; fi
command -v nvidia-smi >/dev/null 2>&1 || fail "needs an NVIDIA GPU: nvidia-smi is not installed"
GPUS=$(nvidia-smi -L 2>&1) || fail "needs an NVIDIA GPU: nvidia-smi -L failed: $(echo "$GPUS" | head -1)"
echo "$GPUS" | grep -q '^GPU ' || fail "needs an NVIDIA GPU: nvidia-smi lists none"
command -v "$CONTROL" >/dev/null 2>&1 || fail "needs MPS: no $CONTROL (set PP_MPS_CONTROL)"
if [ ! -x "$BIN/pp-busy" ]; then
  command -v "$NVCC" >/dev/null 2>&1 || fail "no $BIN/pp-busy and no nvcc to build it from bench/workloads/busy.cu"
fi

mkdir -p "$OUT_ARG" || fail "cannot create $OUT_ARG"
OUT=$(readlink -f "$OUT_ARG")
START=$(date +%s)
DEADLINE=$((START + ${PP_MPS_SECONDS:-540}))
WORK=$(mktemp -d /tmp/ppm-XXXXXX)  # short: MPS socket paths must fit 107 bytes
ROUNDS_DIR=$WORK/rounds
mkdir -p "$ROUNDS_DIR" "$WORK/bin"
LOG=$OUT/mps_overhead.log
MD=$OUT/mps_overhead.md
: > "$LOG"
exec > >(tee -a "$LOG") 2>&1
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY CUDA_VISIBLE_DEVICES
BENCH_PID=

# MPS control daemons and servers started under $WORK (their environment names a pipe directory
# there): asked to quit, then killed if they are still there. Found by /proc, never by pattern.
ours() {  # ours PID: whether it is an MPS process whose pipe directory is under $WORK
  local comm
  comm=$(cat "/proc/$1/comm" 2>/dev/null) || return 1
  case "$comm" in nvidia-cuda-mps*) ;; *) return 1 ;; esac
  tr '\0' '\n' 2>/dev/null < "/proc/$1/environ" | grep -q "^CUDA_MPS_PIPE_DIRECTORY=$WORK/"
}
cleanup() {
  trap - EXIT INT TERM
  if [ -n "$BENCH_PID" ] && kill -0 "$BENCH_PID" 2>/dev/null; then
    kill -INT "$BENCH_PID"  # pinpoint-bench cancels its copies and quits its daemons
    for _ in $(seq 60); do kill -0 "$BENCH_PID" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$BENCH_PID" 2>/dev/null
  fi
  for p in /proc/[0-9]*; do  # pinpointds of this run: their command line names a config under $WORK
    if tr '\0' ' ' 2>/dev/null < "$p/cmdline" | grep -q "^$WORK/bin/pinpointd --config $WORK/"; then
      echo "mps_overhead: stopping pinpointd ${p#/proc/}"; kill -TERM "${p#/proc/}"
    fi
  done
  while IFS= read -r control; do
    pipe=$(dirname "$control")
    CUDA_MPS_PIPE_DIRECTORY=$pipe timeout 10 "$CONTROL" <<< quit >/dev/null 2>&1
  done < <(find "$WORK" -name control -type s 2>/dev/null)
  local left=""
  for p in /proc/[0-9]*; do ours "${p#/proc/}" && left="$left ${p#/proc/}"; done
  if [ -n "$left" ]; then
    sleep 2
    for pid in $left; do
      if ours "$pid"; then echo "mps_overhead: MPS process $pid did not quit: killed"; kill -KILL "$pid"; fi
    done
  fi
  tar -C "$ROUNDS_DIR" -czf "$OUT/rounds.tar.gz" . 2>/dev/null
  rm -rf "$WORK"
  echo "mps_overhead: done in $(( $(date +%s) - START )) s; results in $OUT"
  sleep 1  # lets tee write the last lines to the log
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the device, and pp-busy ---
GPU_LINE=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
CUDA_DRV=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -1)
echo "device: ${GPU_LINE:-?}; CUDA (driver) ${CUDA_DRV:-?}; $(date -u +%Y-%m-%dT%H:%M:%SZ); host: $(nproc) CPUs"
echo "scratch: $WORK"
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH=$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
# pinpoint-bench takes pp-busy from its --bin-dir: one that has pinpoint's binaries and this pp-busy.
for b in pinpointd pinpoint-shim pinpoint-bench; do ln -s "$BIN/$b" "$WORK/bin/$b"; done
if [ -x "$BIN/pp-busy" ]; then
  ln -s "$BIN/pp-busy" "$WORK/bin/pp-busy"
  echo "pp-busy: $BIN/pp-busy"
else
  echo "pp-busy: building it with $("$NVCC" --version | tail -1)"
  "$NVCC" -O2 -std=c++17 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
    -gencode arch=compute_90,code=compute_90 -o "$WORK/bin/pp-busy" "$REPO/bench/workloads/busy.cu" ||
    { echo "mps_overhead: nvcc could not build pp-busy"; exit 1; }
fi

# --- calibration: one copy alone takes about JOB_S seconds of GPU work ---
# shellcheck source=bench/busy_calibration.sh
. "$REPO/bench/busy_calibration.sh"
calibrate_busy "$WORK/bin/pp-busy" "$JOB_S"
ITERS=$BUSY_ITERS b1=$BUSY_T1 b2=$BUSY_T5
echo "calibration: 1e8 iterations in ${b1:-?} s, 5e8 in ${b2:-?} s (context included) -> --blocks 4 --iters $ITERS"

# --- rounds: one repetition of each mode at each N, the modes' order alternating ---
done_rounds=0
for ((r = 1; r <= ROUNDS; r++)); do
  left=$((DEADLINE - $(date +%s)))
  if [ "$left" -lt 60 ]; then echo "--- round $r: not started, $left s left"; break; fi
  if ((r % 2)); then modes=bare-mps,mps; else modes=mps,bare-mps; fi
  echo "--- round $r of $ROUNDS: $modes at N=$NS"
  # shellcheck disable=SC2086  # PP_MPS_EXTRA is a list of options
  timeout -s INT -k 30 "$left" "$WORK/bin/pinpoint-bench" --bin-dir "$WORK/bin" --scratch "$WORK" \
    --mps-control "$CONTROL" --cuda-version "${CUDA_DRV:-unknown}" --out "$ROUNDS_DIR/round-$r" \
    --workload busy --modes "$modes" --n "$NS" --reps 1 --cpus "$CPUS" --target-n "${NS%%,*}" \
    ${PP_MPS_EXTRA:-} -- --blocks 4 --iters "$ITERS" &
  BENCH_PID=$!
  wait "$BENCH_PID"
  rc=$?
  BENCH_PID=
  echo "--- round $r: pinpoint-bench exited with $rc"
  [ -f "$ROUNDS_DIR/round-$r/points.csv" ] && done_rounds=$((done_rounds + 1))
done

# --- the ratios: per N, the median over the rounds of each mode's throughput ---
# points.csv: workload,mode,n,rep,status,ok_jobs,failed_jobs,makespan_s,units,throughput,...
cat "$ROUNDS_DIR"/round-*/points.csv 2>/dev/null | awk -F, '$1 != "workload" && $5 == "ok" && $7 == 0 && $10 != "NaN" {
  print $2, $3, $10, $8 }' > "$WORK/throughputs.txt"
{
  echo "# MPS overhead: pinpoint's mps mode against bare MPS"
  echo
  echo "- device: ${GPU_LINE:-?}; CUDA ${CUDA_DRV:-?} (driver); $(date -u +%Y-%m-%dT%H:%M:%SZ); host: $(nproc) CPUs"
  echo "- pp-busy \`--blocks 4 --iters $ITERS\` (about $JOB_S s alone: 1e8 iterations in ${b1:-?} s, 5e8 in ${b2:-?} s); $CPUS host CPUs per copy under pinpoint"
  echo "- $done_rounds rounds of \`pinpoint-bench --reps 1\`, the modes' order alternating; a round's throughput is the work of its N copies over its makespan (just before the first submission or start to the driver knowing of the last end)"
  echo
  echo "| N | bare-mps throughput (Giter/s) | pinpoint mps throughput (Giter/s) | pinpoint / bare | rounds | bare-mps per round | mps per round | target |"
  echo "|---:|---:|---:|---:|---:|---|---|---|"
  for n in ${NS//,/ }; do
    awk -v n="$n" '
      function median(v, k,   i, j, t) {
        for (i = 2; i <= k; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        return k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2 }
      $2 == n && $1 == "bare-mps" { b[++nb] = $3; bl = bl sprintf("%s%.4g", nb > 1 ? ", " : "", $3) }
      $2 == n && $1 == "mps" { m[++nm] = $3; ml = ml sprintf("%s%.4g", nm > 1 ? ", " : "", $3) }
      END {
        if (nb == 0 || nm == 0) { printf "| %d | %s | %s | - | %d | %s | %s | not measured |\n", n, nb ? "" : "-", nm ? "" : "-", (nb < nm ? nb : nm), bl, ml; exit }
        mb = median(b, nb); mm = median(m, nm); ratio = mm / mb
        printf "| %d | %.4g | %.4g | %.1f%% | %d | %s | %s | %s |\n", n, mb, mm, 100 * ratio, (nb < nm ? nb : nm), bl, ml,
               (ratio >= 0.98 ? "met (>= 98%)" : "MISSED (< 98%)") }' "$WORK/throughputs.txt"
  done
  echo
  for d in "$ROUNDS_DIR"/round-*; do
    [ -f "$d/results.md" ] || continue
    echo "## ${d##*/}"
    echo
    sed -n '/^## Where the time goes/,$p' "$d/results.md" | grep '^|'
    echo
  done
} > "$MD"
cat "$MD"
