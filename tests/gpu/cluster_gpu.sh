#!/usr/bin/env bash
# Issue 6's GPU-facing parts on a real GPU (no Slurm or HTCondor there: Slurm's daemons are
# tested in CI, in tests/slurm/): a job pinned with `submit --device`, `pinpoint slurm run` with
# the environment Slurm gives a shard job and a gpu job, the HTCondor job wrapper with a
# starter's environment, and that every thread of pinpointd, NVML's included,
# blocks the signals of its main loop so SIGTERM stops it cleanly.
# Usage: tests/gpu/cluster_gpu.sh BIN_DIR [JQ_DIR]. BIN_DIR holds pinpointd, pinpoint,
# pinpoint-shim, pinpoint-slurm, pinpoint-htcondor, pinpoint-htcondor-wrapper, pinpoint-run.sh,
# pp-busy (and lib/); JQ_DIR a jq and its libraries where the
# machine has none. Prints PASS/FAIL lines and "N passed, M failed"; quits the MPS daemons it started.
set -u
SRC=$(readlink -f "${1:?usage: cluster_gpu.sh BIN_DIR [JQ_DIR]}")
if [ -n "${2:-}" ]; then export PATH=$(readlink -f "$2"):$PATH LD_LIBRARY_PATH=$(readlink -f "$2"); fi
W=$(mktemp -d /tmp/pp-cluster-XXXXXX); chmod 755 "$W"
BIN=$W/bin; mkdir -p "$BIN"; cp -r "$SRC"/* "$BIN"/; chmod -R a+rX "$BIN"; chmod 755 "$BIN"/pp* "$BIN"/pinpoint*
export PINPOINT_SOCKET=$W/sock PINPOINT_BIN=$BIN/pinpoint
P="$BIN/pinpoint"
passed=0; failed=0
check() { local name=$1; shift; if "$@"; then echo "PASS $name"; passed=$((passed+1)); else echo "FAIL $name"; failed=$((failed+1)); fi; }
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(date -u +%FT%TZ)"
echo "jq: $(jq --version 2>&1)"
cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "nvml", "mps": "daemons",
 "cancel_grace_ms": 5000, "watch_interval_ms": 200, "metrics_listen": ""}
CFG
LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}" "$BIN/pinpointd" --config "$W/config.json" > "$W/pinpointd.log" 2>&1 &
DAEMON=$!
for _ in $(seq 100); do [ -S "$W/sock" ] && break; sleep 0.1; done
cd /tmp
uuid0=$("$P" --json gpus | jq -r '.devices[0].uuid')
ndev=$("$P" --json gpus | jq '.devices | length')
echo "GPU 0: $uuid0; $ndev device(s)"

echo "=== 1. signals: every thread of pinpointd blocks SIGCHLD (17) and SIGTERM (15)"
threads=0; unblocked=0
for status in /proc/$DAEMON/task/*/status; do
  mask=$((16#$(sed -n 's/^SigBlk:\s*//p' "$status")))
  threads=$((threads + 1))
  (( (mask >> 16) & 1 && (mask >> 14) & 1 )) || { unblocked=$((unblocked + 1)); echo "  thread $(basename "$(dirname "$status")") does not block them"; }
done
echo "  $threads threads"
check "all $threads threads of pinpointd (NVML's included) block SIGCHLD and SIGTERM" test "$unblocked" -eq 0

echo "=== 2. submit --device 0: a slice on the GPU a batch system chose"
out=$("$P" submit --wait --device 0 --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters 100000000 2>&1); rc=$?
id=$("$P" --json queue --all | jq -r '.[-1].id')
logs=$("$P" logs "$id")
echo "$logs" | grep -E "uuid|LIMIT|pp-busy ok" | sed 's/^/  /'
check "pinned slice ran (exit $rc)" test "$rc" -eq 0
check "on GPU 0 ($uuid0) with its 2 GiB MPS limit" bash -c "grep -q '$uuid0' <<< \"\$0\" && grep -q 'CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=2048M' <<< \"\$0\"" "$logs"
refused=$("$P" submit --device "$ndev" --gpu-mem 1G -- true 2>&1); rc=$?
echo "  $refused"
check "a device the node lacks is refused with one line (exit $rc)" test "$rc" -eq 6 -a "$(wc -l <<< "$refused")" -eq 1

echo "=== 3. pinpoint slurm run as Slurm runs it: --gres=shard:3 and --gres=gpu:1 on GPU 0"
out=$(SLURM_JOB_ID=4242 SLURM_JOB_GPUS=0 SLURM_SHARDS_ON_NODE=3 SLURM_CPUS_ON_NODE=2 \
  "$P" slurm run -- "$BIN/pp-busy" --alloc-mib 1024 --blocks 4 --iters 300000000 2>&1); rc=$?
echo "$out" | grep -E "LIMIT|pp-busy ok" | sed 's/^/  /'
check "shard job ran under MPS with 3 GiB (exit $rc)" bash -c "[ $rc -eq 0 ] && grep -q 'CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=3072M' <<< \"\$0\"" "$out"
rec=$("$P" --json queue --all | jq -c '[.[] | select(.request.name == "slurm-4242")][-1]')
echo "  slurm-4242: $(jq -r '"\(.state), peak device memory \(.usage.gpu_mem_peak_bytes) B, energy \(.usage.energy_mj) mJ, \(.usage.samples) samples"' <<< "$rec")"
check "pinpointd lists it as slurm-4242, with its peak device memory and energy" \
  test "$(jq -r '.state == "completed" and .usage.gpu_mem_peak_bytes > 1073741824 and .usage.energy_mj > 0' <<< "$rec")" = true
out=$(SLURM_JOB_ID=4243 SLURM_JOB_GPUS=0 "$P" slurm run -- "$BIN/pp-busy" --blocks 4 --iters 100000000 2>&1); rc=$?
check "gpu:1 job ran on the whole GPU, no MPS limit (exit $rc)" bash -c "[ $rc -eq 0 ] && grep -q '$uuid0' <<< \"\$0\" && ! grep -q 'LIMIT=0=' <<< \"\$0\"" "$out"

echo "=== 3b. the HTCondor job wrapper as the starter runs it: one share, 2048 MiB"
printf 'ClusterId = 77\nProcId = 1\nRequestCpus = 1\nRequestGPUMemoryMB = 2048\n' > "$W/job.ad"
out=$(_CONDOR_JOB_AD=$W/job.ad _CONDOR_AssignedGPUs=$uuid0 "$BIN/pinpoint-htcondor-wrapper" "$BIN/pp-busy" --blocks 4 --iters 100000000 2>&1); rc=$?
echo "$out" | grep -E "LIMIT|pp-busy ok" | sed 's/^/  /'
state77=$("$P" --json queue --all | jq -r '[.[] | select(.request.name == "condor-77.1")][-1].state')
check "HTCondor slice ran under MPS with 2048 MiB as condor-77.1 ($state77, exit $rc)" \
  bash -c "[ $rc -eq 0 ] && [ $state77 = completed ] && grep -q 'CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=2048M' <<< \"\$0\"" "$out"

echo "=== 4. scancel: SIGTERM to pinpoint slurm run cancels its job through pinpointd"
SLURM_JOB_ID=4244 SLURM_JOB_GPUS=0 SLURM_SHARDS_ON_NODE=2 "$P" slurm run -- "$BIN/pp-busy" --blocks 4 --iters 100000000000 > "$W/run4244.txt" 2>&1 &
RUN=$!
for _ in $(seq 100); do
  [ "$("$P" --json queue | jq -r '[.[] | select(.request.name == "slurm-4244")][-1].state')" = running ] && break; sleep 0.1
done
kill -TERM "$RUN"; wait "$RUN"; rc=$?
rec=$("$P" --json queue --all | jq -c '[.[] | select(.request.name == "slurm-4244")][-1]')
echo "  slurm-4244: $(jq -r '"\(.state) (\(.reason)), cancelled by \(.cancelled_by), \(.detail)"' <<< "$rec")"
check "the job was cancelled by pinpoint and run exited non-zero ($rc)" \
  test "$(jq -r '.state == "cancelled" and .cancelled_by != ""' <<< "$rec")" = true -a "$rc" -ne 0

echo "=== 5. SIGTERM stops pinpointd cleanly"
kill -TERM "$DAEMON"; wait "$DAEMON"; rc=$?
check "pinpointd exited 0 on SIGTERM (got $rc)" test "$rc" -eq 0
for pipe in "$W"/state/mps/*/*/pipe; do [ -e "$pipe" ] && CUDA_MPS_PIPE_DIRECTORY=$pipe timeout 10 nvidia-cuda-mps-control <<< quit >/dev/null 2>&1; done
tail -5 "$W/pinpointd.log" | sed 's/^/  log: /'
echo "$passed passed, $failed failed"
rm -rf "$W"
[ "$failed" -eq 0 ]
