#!/usr/bin/env bash
# ctest mps_overhead: bench/mps_overhead.sh without a GPU. Where there is none it fails with one
# line and writes nothing; then a dry run on a simulated GPU (a stand-in nvidia-smi, pp-busy and
# MPS control daemon) goes through the calibration, three rounds and the table of ratios, and
# leaves no process of its own behind. Asserts what ran and what was written, never how fast.
# Usage: bench/mps_overhead_test.sh BUILD_DIR (with pinpointd, pinpoint-shim and
# pinpoint-bench); exit 77 (skipped) where they are not built.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
build=$(readlink -f "${1:?usage: mps_overhead_test.sh BUILD_DIR}")
for b in pinpointd pinpoint-shim pinpoint-bench; do
  [ -x "$build/$b" ] || { echo "no $build/$b: skipped"; exit 77; }
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
check() {  # check DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok: $1"; else echo "FAIL: $1"; failures=$((failures + 1)); fi
}

# --- no GPU: one line, exit 1, nothing written ---
mkdir -p "$dir/nogpu"
printf '#!/bin/sh\necho "NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver."\nexit 9\n' \
  > "$dir/nogpu/nvidia-smi"
chmod +x "$dir/nogpu/nvidia-smi"
PATH="$dir/nogpu:/usr/bin:/bin" bash "$here/mps_overhead.sh" "$build" "$dir/out-nogpu" \
  > "$dir/nogpu.out" 2> "$dir/nogpu.err"
rc=$?
check "no GPU: exit code 1 (was $rc)" test "$rc" -eq 1
check "no GPU: one line on stderr" test "$(wc -l < "$dir/nogpu.err")" -eq 1
check "no GPU: the line says why" grep -q '^mps_overhead: needs an NVIDIA GPU: nvidia-smi -L failed: NVIDIA-SMI has failed' "$dir/nogpu.err"
check "no GPU: nothing on stdout" test ! -s "$dir/nogpu.out"
check "no GPU: no output directory" test ! -e "$dir/out-nogpu"
bash "$here/mps_overhead.sh" "$dir/nogpu" "$dir/out-nobin" > /dev/null 2> "$dir/nobin.err"
check "no binaries: one line naming the first missing one" \
  grep -qx "mps_overhead: no $dir/nogpu/pinpointd (BIN_DIR must hold pinpoint's binaries)" "$dir/nobin.err"

# --- a dry run on a simulated GPU ---
mkdir -p "$dir/fake" "$dir/bin"
cat > "$dir/fake/nvidia-smi" <<'EOF'
#!/bin/sh
case "$1" in
  -L) echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
  --query-gpu=*) echo "NVIDIA H100 80GB HBM3, 580.00, 81559 MiB" ;;
  *) echo "| NVIDIA-SMI 580.00   Driver Version: 580.00   CUDA Version: 13.0 |" ;;
esac
EOF
# pp-busy: 1e9 iterations a second, plus 10 ms; the lines pinpoint-bench reads. Copies under
# MPS (not the calibration's) sleep FAKE_BUSY_SLEEP seconds (0.05).
cat > "$dir/bin/pp-busy" <<'EOF'
#!/bin/sh
iters=1000
while [ $# -gt 0 ]; do [ "$1" = --iters ] && iters=$2; shift; done
now() { date +%s%6N; }
first=$(now)
echo "pp-cuda first_us=$first ready_us=$(now)"
if [ -n "${CUDA_MPS_PIPE_DIRECTORY:-}" ]; then sleep "${FAKE_BUSY_SLEEP:-0.05}"; fi
secs=$(awk -v i="$iters" 'BEGIN { printf "%.3f", i / 1e9 + 0.01 }')
echo "pp-busy ok blocks=4 iters=$iters seconds=$secs"
echo "pp-work units=$(awk -v i="$iters" 'BEGIN { printf "%.6g", 4 * i / 1e9 }') unit=Giter seconds=$secs"
EOF
chmod +x "$dir/fake/nvidia-smi" "$dir/bin/pp-busy"
for b in pinpointd pinpoint-shim pinpoint-bench; do ln -s "$build/$b" "$dir/bin/$b"; done
echo '{"gpus": [{"name": "NVIDIA H100 80GB HBM3", "mem": "80G", "sm_count": 132}]}' > "$dir/node.json"
PATH="$dir/fake:$PATH" PP_MPS_N=2,3 PP_MPS_ROUNDS=3 PP_MPS_CONTROL="$repo/tests/fake_mps/nvidia-cuda-mps-control" \
  PP_MPS_EXTRA="--backend simulated-file:$dir/node.json --no-cgroups --settle-ms 0 --sample-ms 20 --no-warmup" \
  bash "$here/mps_overhead.sh" "$dir/bin" "$dir/out" > "$dir/run.out" 2>&1
rc=$?
check "dry run: exit code 0 (was $rc)" test "$rc" -eq 0
md=$dir/out/mps_overhead.md
check "dry run: the pp-busy of BIN_DIR is used, not built" grep -q "^pp-busy: $dir/bin/pp-busy" "$dir/out/mps_overhead.log"
check "dry run: calibrated" grep -q -- '-> --blocks 4 --iters ' "$dir/out/mps_overhead.log"
check "dry run: three rounds, the modes alternating" \
  test "$(grep -c -- '--- round [123] of 3: bare-mps,mps\|--- round [123] of 3: mps,bare-mps' "$dir/out/mps_overhead.log")" -eq 3
check "dry run: a ratio at N=2 over 3 rounds" grep -Eq '^\| 2 \| [0-9.e+]+ \| [0-9.e+]+ \| [0-9.]+% \| 3 \|' "$md"
check "dry run: a ratio at N=3 over 3 rounds" grep -Eq '^\| 3 \| [0-9.e+]+ \| [0-9.e+]+ \| [0-9.]+% \| 3 \|' "$md"
check "dry run: each round's breakdown" test "$(grep -c '^| mps | 3 | 1 |' "$md")" -eq 3
check "dry run: the rounds' directories returned" tar -tzf "$dir/out/rounds.tar.gz" ./round-3/results.json
scratch=$(sed -n 's/^scratch: //p' "$dir/out/mps_overhead.log")
check "dry run: its scratch directory is named" test -n "$scratch"
check "dry run: its scratch directory is gone" test ! -e "${scratch:-/nonexistent}/rounds"
left=0
for p in /proc/[0-9]*; do
  if tr '\0' '\n' < "$p/environ" 2>/dev/null | grep -q "^CUDA_MPS_PIPE_DIRECTORY=${scratch:-/nonexistent}/"; then
    left=$((left + 1)); echo "left behind: $(tr '\0' ' ' < "$p/cmdline")"; kill -KILL "${p#/proc/}"
  fi
done
check "dry run: no MPS daemon of its own left running" test "$left" -eq 0

# --- interrupted while copies run: everything it started is stopped ---
PATH="$dir/fake:$PATH" PP_MPS_N=2 PP_MPS_ROUNDS=3 PP_MPS_CONTROL="$repo/tests/fake_mps/nvidia-cuda-mps-control" \
  PP_MPS_EXTRA="--backend simulated-file:$dir/node.json --no-cgroups --settle-ms 0 --sample-ms 20" \
  FAKE_BUSY_SLEEP=600 bash "$here/mps_overhead.sh" "$dir/bin" "$dir/out-int" > "$dir/int.out" 2>&1 &
script=$!
scratch=""
running=0
for _ in $(seq 600); do  # up to 60 s for a copy to be running under MPS
  [ -z "$scratch" ] && scratch=$(sed -n 's/^scratch: //p' "$dir/out-int/mps_overhead.log" 2>/dev/null)
  if [ -n "$scratch" ]; then
    for p in /proc/[0-9]*; do
      tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -q "pp-busy --blocks 4" &&
        tr '\0' '\n' < "$p/environ" 2>/dev/null | grep -q "^CUDA_MPS_PIPE_DIRECTORY=$scratch/" && running=1
    done
  fi
  [ "$running" -eq 1 ] && break
  sleep 0.1
done
check "interrupted: a copy was running under MPS" test "$running" -eq 1
# SIGTERM: a background job of a non-interactive shell starts with SIGINT ignored, which bash
# cannot trap (Ctrl-C in a terminal sends SIGINT to a foreground script, handled alike).
kill -TERM "$script"
wait "$script"
rc=$?
check "interrupted: exit code 130 (was $rc)" test "$rc" -eq 130
left=0
for p in /proc/[0-9]*; do
  if tr '\0' '\n' < "$p/environ" 2>/dev/null | grep -q "^CUDA_MPS_PIPE_DIRECTORY=${scratch:-/nonexistent}/" ||
     tr '\0' ' ' < "$p/cmdline" 2>/dev/null | grep -q "pinpointd --config ${scratch:-/nonexistent}/"; then
    left=$((left + 1)); echo "left behind: $(tr '\0' ' ' < "$p/cmdline")"; kill -KILL "${p#/proc/}"
  fi
done
check "interrupted: no copy, pinpointd or MPS daemon of its own left running" test "$left" -eq 0
check "interrupted: its scratch directory is gone" test ! -e "${scratch:-/nonexistent}/rounds"
check "interrupted: the log says it is done" grep -q "^mps_overhead: done in" "$dir/out-int/mps_overhead.log"
if [ "$failures" -gt 0 ]; then
  echo "--- mps_overhead.sh printed:"; cat "$dir/run.out"
  echo "$failures failed"; exit 1
fi
echo "all passed"
