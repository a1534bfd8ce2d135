#!/usr/bin/env bash
# pinpoint's multi-GPU claims on a real machine with two GPUs or more: a whole two-GPU job running
# a real two-GPU program (NCCL all-reduce through PyTorch), the slices of two users on two GPUs at
# the same time (one MPS control daemon per GPU and user), a `--gpus 2 --gpu-mem` job with one
# slice on each GPU, a GPU drained after a fault leaving the other in service, and
# `pinpoint slurm run` as Slurm runs a `--gres=gpu:2` job.
# Usage: tests/gpu/multi_gpu.sh BIN_DIR [PYTHON]
# BIN_DIR holds pinpointd, pinpoint, pinpoint-shim, pinpoint-slurm, pp-busy (and lib/ with the
# shared libraries pinpointd needs, if the machine lacks them); PYTHON has torch (default python3).
# Prints PASS/FAIL lines and "N passed, M failed"; on a machine with one GPU it says so and runs
# nothing. Quits every MPS daemon it started.
set -u
SRC=$(readlink -f "${1:?usage: multi_gpu.sh BIN_DIR [PYTHON]}")
PY=${2:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
ALLREDUCE=$(readlink -f "$HERE/../../bench/workloads/allreduce.py")
W=$(mktemp -d /tmp/pp-multi-XXXXXX); chmod 755 "$W"
BIN=$W/bin; mkdir -p "$BIN"; cp -r "$SRC"/* "$BIN"/; cp "$ALLREDUCE" "$BIN"/
chmod -R a+rX "$BIN"; chmod 755 "$BIN"/pp* "$BIN"/pinpoint*
export PINPOINT_SOCKET=$W/sock PINPOINT_BIN=$BIN/pinpoint
P="$BIN/pinpoint"
. "$(dirname "$(readlink -f "$0")")/lib.sh"
running() { test "$(state_of "$1")" = running; }
devices_of() { "$P" --json show "$1" | js "','.join(str(a['device_index']) for a in d['job']['allocations'])"; }
drained_of() { "$P" --json gpus | js "d['devices'][$1]['drained']"; }
is_drained() { test "$(drained_of "$1")" = True; }
ngpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) x$ngpu; $(date -u +%FT%TZ)"
echo "torch: $("$PY" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, torch.cuda.nccl.version())))' 2>&1 | tail -1)"
if [ "$ngpu" -lt 2 ]; then
  echo "NOT RUN: this machine has $ngpu GPU; the multi-GPU suite needs two"
  rm -rf "$W"; exit 0
fi
id ppa >/dev/null 2>&1 || useradd -M ppa; id ppb >/dev/null 2>&1 || useradd -M ppb
cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "nvml", "mps": "daemons",
 "mps_idle_quit_ms": 2000, "cancel_grace_ms": 3000, "mps_fault_drain_after": 1,
 "metrics_listen": ""}
CFG
start_pinpointd
cd /tmp
"$P" gpus
uuid0=$("$P" --json gpus | js "d['devices'][0]['uuid']"); uuid1=$("$P" --json gpus | js "d['devices'][1]['uuid']")
LONG="$BIN/pp-busy --blocks 4 --iters 100000000000"

echo "=== 1. --gpus 2: both GPUs, by UUID, and a real two-GPU program (NCCL all-reduce)"
out=$("$P" submit --wait --name allreduce --gpus 2 -- "$PY" "$BIN/allreduce.py" --mib 256 --iters 20 2>&1); rc=$?
id=$("$P" --json queue --all | js "d[-1]['id']")
logs=$("$P" logs "$id"; "$P" logs --stderr "$id" | tail -3)
echo "$logs" | sed 's/^/  /'
check "the all-reduce ran on two GPUs (exit $rc)" bash -c "[ $rc -eq 0 ] && grep -q 'pp-allreduce ok world=2' <<< \"\$0\"" "$logs"
check "the job held GPU 0 and GPU 1 whole" test "$(devices_of "$id")" = "0,1"
check "the program saw both UUIDs ($uuid0, $uuid1)" bash -c "grep -q '${uuid0#GPU-}' <<< \"\$0\" && grep -q '${uuid1#GPU-}' <<< \"\$0\"" "$logs"

echo "=== 2. two users' slices on two GPUs at the same time, one MPS daemon per GPU and user"
a=$("$P" --json submit --as-user ppa --name a --gpu-mem 2G -- $LONG | js "d['id']")
b=$("$P" --json submit --as-user ppb --name b --gpu-mem 2G -- $LONG | js "d['id']")
wait_for 60 running "$a"; wait_for 60 running "$b"
"$P" queue; "$P" gpus
check "user ppa's and user ppb's slices run at the same time" sh -c "test \"\$(\"$P\" --json show $a | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"job\"][\"state\"])')\" = running && test \"\$(\"$P\" --json show $b | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"job\"][\"state\"])')\" = running"
check "on different GPUs" test "$(devices_of "$a")" != "$(devices_of "$b")"
mpsusers=$("$P" --json gpus | js "' '.join(str(x.get('mps', {}).get('uid', '-')) for x in d['devices'])")
echo "  MPS daemons' users by GPU: $mpsusers"
check "each GPU's MPS control daemon runs as its slice's user" test "$mpsusers" = "$(id -u ppa) $(id -u ppb)" -o "$mpsusers" = "$(id -u ppb) $(id -u ppa)"
ctl=$(pgrep -c -f "^nvidia-cuda-mps-control -f")
check "two control daemons ($ctl)" test "$ctl" -eq 2
"$P" cancel "$a" "$b" > /dev/null; "$P" wait "$a" "$b" > /dev/null

echo "=== 3. --gpus 2 --gpu-mem 3G: one 3 GiB slice on each GPU"
s=$("$P" --json submit --name split --gpus 2 --gpu-mem 3G -- "$BIN/pp-busy" --blocks 4 --iters 200000000 | js "d['id']")
"$P" wait "$s"; "$P" show "$s" | sed -n '/alloc/,/history/p'
check "two allocations, GPU 0 and GPU 1" test "$(devices_of "$s")" = "0,1"
check "3 GiB on each" test "$("$P" --json show "$s" | js "','.join(str(a['gpu_mem_bytes']) for a in d['job']['allocations'])")" = "3221225472,3221225472"
check "it completed" test "$(state_of "$s")" = completed

echo "=== 4. a fault on GPU 1 drains GPU 1 only (mps_fault_drain_after 1)"
bad=$("$P" --json submit --name culprit --device 1 --gpu-mem 2G -- "$BIN/pp-busy" --illegal-access | js "d['id']")
wait_for 60 is_drained 1
grep -E "Xid|confirmed|drained|fatal GPU error" "$W/pinpointd.log" | tail -4
check "GPU 1 drained after its confirmed fault" is_drained 1
check "GPU 0 still in service" test "$(drained_of 0)" = False
after=$("$P" --json submit --wait --name after --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters 1000000 | js "d['id']")
check "a slice still runs, on GPU 0" sh -c "test \"\$(\"$P\" --json show $after | python3 -c 'import json,sys; d=json.load(sys.stdin)[\"job\"]; print(d[\"state\"], d[\"allocations\"][0][\"device_index\"])')\" = 'completed 0'"
"$P" cancel "$bad" > /dev/null 2>&1

echo "=== 5. pinpoint slurm run as Slurm runs a --gres=gpu:2 job (on a restarted daemon: GPU 1 back)"
kill -TERM $DAEMON; wait $DAEMON
start_pinpointd
out=$(SLURM_JOB_ID=4343 SLURM_JOB_GPUS=0,1 SLURM_CPUS_ON_NODE=4 \
  "$P" slurm run -- "$PY" "$BIN/allreduce.py" --mib 64 --iters 10 2>&1); rc=$?
echo "$out" | tail -3 | sed 's/^/  /'
check "the Slurm job ran its all-reduce on both GPUs (exit $rc)" bash -c "[ $rc -eq 0 ] && grep -q 'pp-allreduce ok world=2' <<< \"\$0\"" "$out"

kill -TERM $DAEMON; wait $DAEMON
for pipe in "$W"/state/mps/*/*/pipe; do [ -d "$pipe" ] && CUDA_MPS_PIPE_DIRECTORY=$pipe timeout 10 nvidia-cuda-mps-control <<< quit >/dev/null 2>&1; done
sleep 1; pkill -f '^(/[^ ]*/)?nvidia-cuda-mps-(server|control)( |$)'
grep -E "warn|error" "$W/pinpointd.log" | head -20
echo "$passed passed, $failed failed"
rm -rf "$W"
[ $failed -eq 0 ]
