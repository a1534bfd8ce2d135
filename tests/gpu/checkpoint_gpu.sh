#!/usr/bin/env bash
# The driver's checkpoint API through pinpoint-checkpoint (issue 56 item 4) on a real GPU: a
# process holding N GiB of device memory is suspended (its device memory freed while it is) and
# resumed with its data intact, for two sizes (the times against the size); an MPS client is
# refused and left running. Run as root on a GPU machine: tests/gpu/checkpoint_gpu.sh BIN_DIR
# (pinpoint-checkpoint and pp-hold in it). Prints PASS/FAIL lines and the times.
set -u
BIN=$(readlink -f "${1:?usage: checkpoint_gpu.sh BIN_DIR}")
. "$(dirname "$0")/lib.sh"
W=$(mktemp -d /tmp/pp-ckpt-XXXXXX)
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(date -u +%FT%TZ)"
C="$BIN/pinpoint-checkpoint"
used_by() { nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits | awk -F', ' -v p="$1" '$1 == p {print $2}'; }
gpu_used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1; }
start_ticks() { awk '{print $22}' "/proc/$1/stat"; }

for mib in 4096 16384; do
  echo "=== $mib MiB"
  log=$W/hold-$mib.log
  "$BIN/pp-hold" --mib "$mib" --seconds $((25 + mib / 512)) > "$log" 2>&1 &
  hold=$!
  check "$mib: pp-hold filled its memory" wait_for 60 grep -q "pp-hold ready" "$log"
  before=$(used_by "$hold"); gpu_before=$(gpu_used)
  echo "device memory of pid $hold before: ${before:-none} MiB (GPU: $gpu_before MiB used)"
  t0=$(date +%s%N)
  "$C" suspend --lock-timeout-ms 30000 "$hold:$(start_ticks "$hold")" > "$W/suspend-$mib.json"; rc=$?
  t1=$(date +%s%N)
  cat "$W/suspend-$mib.json"
  check "$mib: suspended (exit 0)" test "$rc" = 0
  after=$(used_by "$hold"); gpu_after=$(gpu_used)
  echo "device memory of pid $hold suspended: ${after:-none} MiB (GPU: $gpu_after MiB used)"
  check "$mib: its device memory was freed" test "${after:-0}" -lt 100 -a "$((gpu_before - gpu_after))" -ge "$((mib * 9 / 10))"
  check "$mib: the driver says checkpointed" grep -q '"state":"checkpointed"' <("$C" state "$hold")
  t2=$(date +%s%N)
  "$C" resume "$hold:$(start_ticks "$hold")" > "$W/resume-$mib.json"; rc=$?
  t3=$(date +%s%N)
  cat "$W/resume-$mib.json"
  check "$mib: resumed (exit 0)" test "$rc" = 0
  echo "device memory of pid $hold resumed: $(used_by "$hold") MiB"
  echo "TIME $mib MiB: suspend $(( (t1 - t0) / 1000000 )) ms, resume $(( (t3 - t2) / 1000000 )) ms (whole pinpoint-checkpoint runs)"
  wait "$hold"; rc=$?
  tail -1 "$log"
  check "$mib: its data checked intact after the resume (exit 0, errors=0)" sh -c "test $rc = 0 && grep -q 'errors=0' '$log'"
done

echo "=== an MPS client"
export CUDA_MPS_PIPE_DIRECTORY=$W/mps CUDA_MPS_LOG_DIRECTORY=$W/mpslog
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d
"$BIN/pp-hold" --mib 1024 --seconds 20 > "$W/hold-mps.log" 2>&1 &
hold=$!
check "mps: pp-hold filled its memory" wait_for 60 grep -q "pp-hold ready" "$W/hold-mps.log"
"$C" suspend --lock-timeout-ms 10000 "$hold" > "$W/suspend-mps.json"; rc=$?
cat "$W/suspend-mps.json"
check "mps: refused (exit 1)" test "$rc" = 1
check "mps: the driver said not supported" grep -q "801" "$W/suspend-mps.json"
wait "$hold"; rc=$?
tail -1 "$W/hold-mps.log"
check "mps: the client ran on, intact" sh -c "test $rc = 0 && grep -q 'errors=0' '$W/hold-mps.log'"
echo quit | timeout 10 nvidia-cuda-mps-control
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
echo "passed $passed, failed $failed"
rm -rf "$W"
[ "$failed" = 0 ]
