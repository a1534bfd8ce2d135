#!/usr/bin/env bash
# The benchmark campaign on a GPU machine: pinpoint bench for the workloads named
# (pp-busy, pp-mlp with cuBLAS, train.py with PyTorch; all three by default) in every mode
# (exclusive, timeslice, mps, bare-mps, bare), after a short calibration that sizes each job to
# about 0.8 s of GPU work alone on this GPU (train.py: 4 s of training, after its start-up).
# Everything ends within PP_CAMPAIGN_SECONDS (540): on the lent machines, which allow 10 minutes
# a call, `busy,mlp` fit one call and `torch` (each copy takes about 10 s to start) another.
#
# Usage, from the repository root:  bash bench/gpu_campaign.sh BIN_DIR OUT_DIR [busy,mlp,torch]
#   BIN_DIR holds pinpointd, pinpoint, pinpoint-shim, pinpoint-bench, pp-busy and pp-mlp, built on
#   the build machine, and lib/ with libcpp-httplib.so.* where the GPU machine lacks it (pp-mlp
#   loads libcublas.so.13 from /usr/local/cuda/lib64, its RUNPATH, or else from PyTorch's
#   nvidia-cublas wheel); python3 with torch must be there for train.py.
# Writes only three files into OUT_DIR (the lent machines return at most 8):
#   campaign.log     everything printed, progress included
#   campaign.md      the device line, the calibration and each workload's results.md
#   results.tar.gz   busy/ mlp/ mlp-cpus1/ torch/: results.json, points.csv, summary.csv, results.md, meta.txt,
#                    logs/; unpack into bench/results/<date>-<gpu>/ and run bench/plot.sh on each
# results.tar.gz is rewritten after each workload, so a run cut short still returns what it measured.
# For a dry run without a GPU: PP_CAMPAIGN_EXTRA (more pinpoint-bench options, e.g. a simulated
# --backend and a stand-in --mps-control), PP_CAMPAIGN_SECONDS (540), PP_CAMPAIGN_JOB_S (0.8),
# PP_CAMPAIGN_TORCH_S (4).
# Every MPS control daemon started under the campaign's scratch directory is quit at the end.
set -u
USAGE="usage: bench/gpu_campaign.sh BIN_DIR OUT_DIR [busy,mlp,torch]"
BIN=$(readlink -f "${1:?$USAGE}")
OUT=$(readlink -f "${2:?$USAGE}")
WORKLOADS=",${3:-busy,mlp,torch},"
want() { [[ $WORKLOADS == *",$1,"* ]]; }
REPO=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
START=$(date +%s)
DEADLINE=$((START + ${PP_CAMPAIGN_SECONDS:-540}))  # everything, cleanup included, before this
WORK=$(mktemp -d /tmp/ppc-XXXXXX)                  # short: MPS socket paths must fit 107 bytes
RESULTS=$WORK/results
mkdir -p "$RESULTS"
LOG=$OUT/campaign.log
MD=$OUT/campaign.md
exec > >(tee -a "$LOG") 2>&1
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY CUDA_VISIBLE_DEVICES
BENCH_PID=
CURRENT=  # the workload pinpoint-bench is running

pack() { tar -C "$RESULTS" -czf "$OUT/results.tar.gz.tmp" . && mv "$OUT/results.tar.gz.tmp" "$OUT/results.tar.gz"; }

cleanup() {
  trap - EXIT INT TERM
  if [ -n "$BENCH_PID" ] && kill -0 "$BENCH_PID" 2>/dev/null; then
    kill -INT "$BENCH_PID"; sleep 20; kill -KILL "$BENCH_PID" 2>/dev/null
  fi
  # MPS control daemons of this campaign (pinpointd's and bare-mps's): their pipe directories are
  # under $WORK. pinpoint-bench quits them itself; this is for a run that was cut short.
  for pidfile in $(find "$WORK" -name nvidia-cuda-mps-control.pid 2>/dev/null); do
    pipe=$(dirname "$pidfile")
    pid=$(cat "$pidfile" 2>/dev/null)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      echo "campaign: quitting MPS control daemon $pid ($pipe)"
      CUDA_MPS_PIPE_DIRECTORY=$pipe timeout 10 nvidia-cuda-mps-control <<< quit >/dev/null 2>&1
      sleep 1
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    fi
  done
  # pinpointd processes of this campaign (their command line names a config under $WORK).
  for p in /proc/[0-9]*; do
    if tr '\0' ' ' 2>/dev/null < "$p/cmdline" | grep -q "^$BIN/pinpointd --config $WORK/"; then
      echo "campaign: stopping pinpointd ${p#/proc/}"; kill -TERM "${p#/proc/}"
    fi
  done
  if [ -n "$CURRENT" ] && [ -f "$RESULTS/$CURRENT/results.md" ]; then  # cut short in a workload
    { sed 's/^# /## /' "$RESULTS/$CURRENT/results.md"; echo; } >> "$MD"
  fi
  pack
  rm -rf "$WORK"
  echo "campaign: done in $(( $(date +%s) - START )) s; results in $OUT"
  sleep 1  # lets tee write the last lines to campaign.log
}
trap cleanup EXIT
trap 'exit 130' INT TERM

left() { echo $((DEADLINE - $(date +%s))); }
field() { sed -n "s/.*[ ]$1=\([^ ]*\).*/\1/p" | tail -1; }  # value of KEY=VALUE in a pp-* line

# --- the device ---
GPU_LINE=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)
CUDA_DRV=$(nvidia-smi | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -1)
NVCC=$(nvcc --version 2>/dev/null | tail -1)
echo "device: $GPU_LINE; CUDA (driver) $CUDA_DRV; $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "toolkit: ${NVCC:-no nvcc}"
echo "mig, compute mode: $(nvidia-smi --query-gpu=mig.mode.current,compute_mode --format=csv,noheader | head -1)"
echo "host: $(nproc) CPUs, $(uname -r)"
TORCH=$(python3 -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda, "gpu", torch.cuda.is_available())' 2>&1 | tail -1)
echo "python3: $(python3 --version 2>&1); torch: $TORCH"
# pinpointd links cpp-httplib, which the GPU machines may lack: BIN_DIR/lib can carry it.
if [ -d "$BIN/lib" ]; then export LD_LIBRARY_PATH=$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
if ldd "$BIN/pinpointd" | grep -q "not found"; then
  echo "campaign: pinpointd lacks shared libraries:"; ldd "$BIN/pinpointd" | grep "not found"
fi
for b in pinpointd pinpoint pinpoint-shim pinpoint-bench pp-busy pp-mlp; do
  [ -x "$BIN/$b" ] || echo "campaign: WARNING: no $BIN/$b"
done
# pp-mlp finds libcublas.so.13 through its RUNPATH, /usr/local/cuda/lib64. Only where that fails is
# LD_LIBRARY_PATH set, to the cuBLAS of PyTorch's nvidia-cublas wheel (set for every job then, so
# not by default: it could make PyTorch load another cuBLAS than its own).
if ldd "$BIN/pp-mlp" 2>/dev/null | grep -q "libcublas.*not found"; then
  CUBLAS_DIR=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null)
  if [ -n "$CUBLAS_DIR" ] && [ -d "$CUBLAS_DIR" ]; then
    export LD_LIBRARY_PATH=$CUBLAS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    echo "pp-mlp: no libcublas.so.13 in /usr/local/cuda/lib64; using $CUBLAS_DIR"
  fi
fi
{
  echo "# pinpoint benchmark campaign"
  echo
  echo "- device: $GPU_LINE; CUDA $CUDA_DRV (driver), toolkit: ${NVCC:-?}"
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ); host: $(nproc) CPUs; torch: $TORCH"
  echo "- MIG mode, compute mode: $(nvidia-smi --query-gpu=mig.mode.current,compute_mode --format=csv,noheader | head -1) (MIG is not measured)"
  echo
} > "$MD"

# --- calibration: each copy about TARGET_S seconds of GPU work when alone on this GPU ---
TARGET_S=${PP_CAMPAIGN_JOB_S:-0.8}
TORCH_S=${PP_CAMPAIGN_TORCH_S:-4}  # train.py: longer, since it spends seconds starting
echo "--- calibration (target: about $TARGET_S s of GPU work per copy alone, $TORCH_S s for train.py)"
echo "## Calibration" >> "$MD"
echo >> "$MD"
if want busy; then
  # shellcheck source=bench/busy_calibration.sh
  . "$REPO/bench/busy_calibration.sh"
  calibrate_busy "$BIN/pp-busy" "$TARGET_S"
  b1=$BUSY_T1 b2=$BUSY_T5
  echo "pp-busy: 1e8 iters in ${b1:-?} s, 5e8 in ${b2:-?} s (context included) -> --iters $BUSY_ITERS"
  echo "- pp-busy: 1e8 iterations in ${b1:-?} s, 5e8 in ${b2:-?} s (CUDA context included): \`--blocks 4 --iters $BUSY_ITERS\`" >> "$MD"
fi
if want mlp; then
  m1=$("$BIN/pp-mlp" --epochs 3 2>&1 | tee "$WORK/mlp-cal.txt" | grep '^pp-mlp ok' | field train_seconds)
  m2=$("$BIN/pp-mlp" --epochs 12 2>&1 | grep '^pp-mlp ok' | field train_seconds)
  MLP_EPOCHS=$(awk -v a="$m1" -v b="$m2" -v t="$TARGET_S" 'BEGIN {
    if (a == "" || b == "") { print ""; exit }
    per = (b > a) ? (b - a) / 9 : b / 12; e = int(t / per + 0.5); if (e < 3) e = 3; if (e > 5000) e = 5000; print e }')
  if [ -z "$MLP_EPOCHS" ]; then echo "pp-mlp does not run here:"; tail -5 "$WORK/mlp-cal.txt"; fi
  echo "pp-mlp: 3 epochs in ${m1:-?} s, 12 in ${m2:-?} s (training only) -> --epochs ${MLP_EPOCHS:-skipped}"
  echo "- pp-mlp: 3 epochs in ${m1:-?} s, 12 epochs in ${m2:-?} s of training: \`--epochs ${MLP_EPOCHS:-(did not run)}\`" >> "$MD"
fi
if want torch; then
  t1=$(python3 "$REPO/bench/workloads/train.py" --epochs 2 2>&1 | tee "$WORK/torch-cal.txt" | grep -E '^pp-(torch ok|work)' | tr '\n' ' ')
  t_train=$(echo "$t1" | field train_seconds)
  t_total=$(echo "$t1" | field seconds)
  TORCH_EPOCHS=$(awk -v a="$t_train" -v t="$TORCH_S" 'BEGIN {
    if (a == "") { print ""; exit } e = int(t / (a / 2) + 0.5); if (e < 1) e = 1; if (e > 5000) e = 5000; print e }')
  if [ -z "$TORCH_EPOCHS" ]; then echo "train.py does not run here:"; tail -5 "$WORK/torch-cal.txt"; fi
  echo "train.py: 2 epochs in ${t_train:-?} s of training, ${t_total:-?} s in all (torch import included) -> --epochs ${TORCH_EPOCHS:-skipped}"
  echo "- train.py: 2 epochs in ${t_train:-?} s of training, ${t_total:-?} s in all (for $TORCH_S s of training): \`--epochs ${TORCH_EPOCHS:-(did not run)}\`" >> "$MD"
fi
echo >> "$MD"

# --- the campaign: one pinpoint bench per workload, each within its share of the time left ---
run_bench() {  # run_bench NAME SHARE_PCT ARGS... -- WORKLOAD-ARGS
  local name=$1 share=$2; shift 2
  # pinpoint-bench starts no point that it expects to end past its budget; the point in flight and
  # the teardown may pass it by a little, hence 25 s more before `timeout` interrupts it, 30 s
  # more before it is killed, and 20 s kept for the cleanup.
  local avail=$(( $(left) - 20 ))
  local budget=$(( avail * share / 100 ))
  [ "$budget" -gt $((avail - 55)) ] && budget=$((avail - 55))
  if [ "$budget" -lt 30 ]; then echo "--- $name: skipped, only $avail s left"; return; fi
  echo "--- $name: pinpoint bench with a budget of $budget s"
  timeout -s INT -k 30 $((budget + 25)) "$BIN/pinpoint-bench" --bin-dir "$BIN" --scratch "$WORK" \
    --cuda-version "$CUDA_DRV" --budget-s "$budget" --out "$RESULTS/$name" ${PP_CAMPAIGN_EXTRA:-} "$@" &
  BENCH_PID=$!
  CURRENT=$name
  wait "$BENCH_PID"
  echo "--- $name: pinpoint-bench exited with $?"
  BENCH_PID=
  CURRENT=
  if [ -f "$RESULTS/$name/results.md" ]; then
    { sed 's/^# /## /' "$RESULTS/$name/results.md"; echo; } >> "$MD"
  fi
  command -v gnuplot >/dev/null && bash "$REPO/bench/plot.sh" "$RESULTS/$name" >/dev/null 2>&1
  pack
}

# Each copy asks for 4 host CPUs: CUDA and cuBLAS start several threads, and a 1-CPU cgroup
# throttles them while the context is made (the cpus1 run below measures how much).
# pp-busy: every N for the overlapping modes, two repetitions; the serial modes (exclusive,
# timeslice) cost N job-times per point, so they run fewer N.
if want busy; then
  run_bench busy 55 --workload busy --cpus 4 --n 1,2,4,8,12,16,24,32 --n-for exclusive=1,2,4,16 \
    --n-for timeslice=1,2,4,16 --reps 2 --reps-at-1 5 -- --blocks 4 --iters "$BUSY_ITERS"
fi
if want mlp && [ -n "$MLP_EPOCHS" ]; then
  run_bench mlp 80 --workload mlp --cpus 4 --n 1,4,8,16 --n-for exclusive=1,4,16 --n-for timeslice=1,4,16 \
    --reps 1 --reps-at-1 3 -- --epochs "$MLP_EPOCHS"
  # The same single job with the 1-CPU cgroup a job gets by default, against bare.
  run_bench mlp-cpus1 100 --workload mlp --cpus 1 --modes exclusive,bare --n 1 --reps 5 \
    -- --epochs "$MLP_EPOCHS"
fi
if want torch && [ -n "$TORCH_EPOCHS" ]; then
  # A PyTorch process takes seconds to start, so fewer points and no warm-up copies (the
  # calibration run has warmed the file cache); judged at N=8.
  run_bench torch 100 --workload torch --cpus 4 --torch-script "$REPO/bench/workloads/train.py" \
    --n 1,4,8 --reps 1 --no-warmup --target-n 8 -- --epochs "$TORCH_EPOCHS"
fi
