#!/usr/bin/env bash
# Issue 2 on a real GPU: pinpointd finds the GPU through NVML, `pinpoint gpus` shows it with its
# UUID and memory, and CUDA jobs submitted as a slice and as a whole GPU run with the right
# environment. Then the demo runs its mixed batch with real CUDA jobs.
# Usage: tests/gpu/core_gpu.sh BIN_DIR   (BIN_DIR holds pinpointd, pinpoint, pinpoint-shim,
#        pinpoint-demo, pp-busy). Prints PASS/FAIL lines and "N passed, M failed".
set -u
BIN=$(readlink -f "${1:?usage: core_gpu.sh BIN_DIR}")
WORK=$(mktemp -d /tmp/pp-gpu-XXXXXX)
export PINPOINT_SOCKET=$WORK/sock
passed=0; failed=0
check() {  # check NAME CONDITION-COMMAND...
  local name=$1; shift
  if "$@"; then echo "PASS $name"; passed=$((passed+1)); else echo "FAIL $name"; failed=$((failed+1)); fi
}
echo "device: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1); $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "cuda: $(nvcc --version 2>/dev/null | tail -1)"
nvidia-smi -L

"$BIN/pinpointd" --state-dir "$WORK/state" --socket "$WORK/sock" --backend auto >"$WORK/pinpointd.log" 2>&1 &
DAEMON=$!
for _ in $(seq 100); do [ -S "$WORK/sock" ] && break; sleep 0.1; done
head -5 "$WORK/pinpointd.log"

GPU_UUID=$(nvidia-smi --query-gpu=uuid --format=csv,noheader | head -1)
"$BIN/pinpoint" gpus | tee "$WORK/gpus.txt"
"$BIN/pinpoint" --json gpus > "$WORK/gpus.json"
check "daemon uses NVML" grep -q '"backend": "nvml"' "$WORK/gpus.json"
check "gpus lists the GPU's UUID ($GPU_UUID)" grep -q "$GPU_UUID" "$WORK/gpus.txt"
check "gpus shows the memory" grep -q '"mem_bytes": [1-9]' "$WORK/gpus.json"
check "start line says NVML" grep -q "NVML" "$WORK/pinpointd.log"

echo "--- slice job: --gpu-mem 4G --gpu-share 25%"
"$BIN/pinpoint" submit --wait --name slice --gpu-mem 4G --gpu-share 25% -- "$BIN/pp-busy" --blocks 4 --iters 2000000 --alloc-mib 512
rc=$?
"$BIN/pinpoint" logs 1 | tee "$WORK/slice.log"
"$BIN/pinpoint" logs --stderr 1
check "slice job exit 0" test $rc -eq 0
check "slice sees only its GPU" grep -q "^env CUDA_VISIBLE_DEVICES=$GPU_UUID$" "$WORK/slice.log"
check "slice has its GPU's MPS pipe directory" grep -q "^env CUDA_MPS_PIPE_DIRECTORY=$WORK/state/mps/dev0/0/pipe$" "$WORK/slice.log"
check "slice memory limit 4096M" grep -q "^env CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=4096M$" "$WORK/slice.log"
check "slice SM share 25" grep -q "^env CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25$" "$WORK/slice.log"
check "CUDA in the job sees the allocated GPU" grep -q "count=1 .*uuid=$GPU_UUID" "$WORK/slice.log"
check "slice kernel ran" grep -q "pp-busy ok" "$WORK/slice.log"

echo "--- whole-GPU job: --gpus 1"
"$BIN/pinpoint" submit --wait --name whole --gpus 1 -- "$BIN/pp-busy" --blocks 132 --iters 2000000
rc=$?
"$BIN/pinpoint" logs 2 | tee "$WORK/whole.log"
check "whole job exit 0" test $rc -eq 0
check "whole job gets no MPS" grep -q "^env CUDA_MPS_PIPE_DIRECTORY=(unset)$" "$WORK/whole.log"
check "whole job sees the GPU" grep -q "count=1 .*uuid=$GPU_UUID" "$WORK/whole.log"
echo "--- host limits: --cpus 2 --mem 1G"
if grep -q "host limits through cgroup v2" "$WORK/pinpointd.log"; then
  "$BIN/pinpoint" submit --wait --name limits --cpus 2 --mem 1G -- sh -c 'g=$(cut -d: -f3 /proc/self/cgroup); echo "cgroup=$g"; echo "cpu.max=$(cat /sys/fs/cgroup$g/cpu.max)"; echo "cpuset.cpus=$(cat /sys/fs/cgroup$g/cpuset.cpus)"; echo "affinity=$(grep Cpus_allowed_list /proc/self/status | cut -f2)"; echo "PINPOINT_CPUS=$PINPOINT_CPUS OMP_NUM_THREADS=$OMP_NUM_THREADS"; echo "memory.max=$(cat /sys/fs/cgroup$g/memory.max)"'
  "$BIN/pinpoint" logs 3 | tee "$WORK/limits.log"
  check "job runs in its own cgroup" grep -q "^cgroup=/pinpoint/job-3$" "$WORK/limits.log"
  # cpu_binding cpuset (the default): two CPUs of its own, so no quota.
  check "two CPUs of its own: cpuset.cpus, its affinity and PINPOINT_CPUS agree" \
    sh -c "c=\$(sed -n 's/^cpuset.cpus=//p' '$WORK/limits.log'); echo \"\$c\" | grep -Eq '^[0-9]+(-|,)[0-9]+$' && grep -q \"^affinity=\$c$\" '$WORK/limits.log' && grep -q \"^PINPOINT_CPUS=\$c OMP_NUM_THREADS=2$\" '$WORK/limits.log'"
  check "cpu.max is no quota (its own CPUs instead)" grep -q "^cpu.max=max 100000$" "$WORK/limits.log"
  check "memory.max is 1 GiB" grep -q "^memory.max=1073741824$" "$WORK/limits.log"
else
  echo "(no cgroup v2 here: $(grep -m1 'limits are off' "$WORK/pinpointd.log"))"
fi
"$BIN/pinpoint" queue --all
"$BIN/pinpoint" show 1
# The slice's CPUs come from its GPU's NUMA node, where NVML names one (the start line says).
numa=$(sed -n 's/.*device 0: .*, NUMA node \([0-9]*\)$/\1/p' "$WORK/pinpointd.log" | head -1)
echo "GPU 0's NUMA node by NVML: ${numa:-not given}; the host's nodes: $(cat /sys/devices/system/node/online 2>/dev/null)"
cat > "$WORK/on_node.py" <<'PY'
import json, sys
def expand(text):
    out = set()
    for part in text.strip().split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out
cpus = json.load(sys.stdin)["job"].get("cpuset", [])
near = expand(open(sys.argv[1]).read())
print("slice cpus:", cpus, "node cpus:", sorted(near))
sys.exit(0 if cpus and set(cpus) <= near else 1)
PY
if [ -n "$numa" ]; then
  "$BIN/pinpoint" --json show 1 > "$WORK/show1.json"
  check "the slice's CPUs are on its GPU's NUMA node $numa" \
    python3 "$WORK/on_node.py" "/sys/devices/system/node/node$numa/cpulist" < "$WORK/show1.json"
fi
check "an MPS control daemon ran for the slice" grep -q "control daemon .* started for device 0" "$WORK/pinpointd.log"
kill -TERM $DAEMON; wait $DAEMON
quit_mps() { for pipe in "$1"/mps/*/*/pipe; do [ -d "$pipe" ] && CUDA_MPS_PIPE_DIRECTORY=$pipe timeout 10 nvidia-cuda-mps-control <<< quit >/dev/null 2>&1; done; }
quit_mps "$WORK/state"

echo "--- demo (mixed batch of real CUDA jobs)"
"$BIN/pinpoint-demo" --bin-dir "$BIN" --state-dir "$WORK/demo" > "$WORK/demo.txt" 2>&1
rc=$?
grep -v '^  GPU' "$WORK/demo.txt"
check "demo exit 0 on the real GPU" test $rc -eq 0
check "demo ran on the real node" grep -q "a real node: nvml" "$WORK/demo.txt"

for d in "$WORK"/demo/*/state; do quit_mps "$d"; done
sleep 1; pkill -f '^(/[^ ]*/)?nvidia-cuda-mps-(server|control)( |$)'
echo "$passed passed, $failed failed"
rm -rf "$WORK"
[ $failed -eq 0 ]
