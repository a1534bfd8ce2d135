#!/usr/bin/env bash
# Issue 47 on a real GPU: every job's enforcement list (docs/enforcement.md) shows what the system
# applied, read back, and what was observed. Jobs: a slice that tries to take more device memory
# than it asked (the allocation refused, verdict held), a slice with an SM share, a whole-GPU job,
# a CPU job with CPUs and host memory; and (issue 57) a child that raises its own limit, one that
# goes past its slice with it, a decoy first process. Usage: tests/gpu/enforcement_gpu.sh BIN_DIR
# Prints each job's `show` and PASS/FAIL lines, then "N passed, M failed"; quits the MPS daemons.
set -u
SRC=$(readlink -f "${1:?usage: enforcement_gpu.sh BIN_DIR}")
W=$(mktemp -d /tmp/pp-enf-XXXXXX); chmod 755 "$W"
BIN=$W/bin; mkdir -p "$BIN"; cp -r "$SRC"/* "$BIN"/; chmod 755 "$BIN" "$BIN"/*
export PINPOINT_SOCKET=$W/sock
P="$BIN/pinpoint"
passed=0; failed=0
check() { local name=$1; shift; if "$@"; then echo "PASS $name"; passed=$((passed+1)); else echo "FAIL $name"; failed=$((failed+1)); fi; }
# verdict ID RESOURCE: the verdict of one entry of job ID's list
verdict() { "$P" --json show "$1" | python3 -c "
import json,sys; d=json.load(sys.stdin)['job']
print(next((e['verdict'] for e in d.get('enforcement', []) if e['resource']=='$2'), 'none'))"; }
applied() { "$P" --json show "$1" | python3 -c "
import json,sys; d=json.load(sys.stdin)['job']
print(next((e['applied'] for e in d.get('enforcement', []) if e['resource']=='$2'), 'none'))"; }
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(date -u +%FT%TZ)"
cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "nvml", "mps": "daemons",
 "mps_idle_quit_ms": 600000, "cancel_grace_ms": 5000, "metrics_listen": "127.0.0.1:19477"}
CFG
LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}" "$BIN/pinpointd" --config "$W/config.json" > "$W/pinpointd.log" 2>&1 &
DAEMON=$!
for _ in $(seq 100); do [ -S "$W/sock" ] && break; sleep 0.1; done
cd /tmp

echo "=== 1. a 2 GiB MPS slice that runs inside 1 GiB, then tries to allocate 4 GiB"
# Its first program runs long enough for the watcher to see it on the GPU (what is read back);
# the second asks for twice its slice.
over=$("$P" --json submit --device 0 --name over --gpu-mem 2G -- sh -c "\"$BIN/pp-busy\" --alloc-mib 1024 --blocks 4 --iters 2000000000 && exec \"$BIN/pp-busy\" --alloc-mib 4096 --blocks 4 --iters 1000" | python3 -c "import json,sys; print(json.load(sys.stdin)['id'])")
"$P" wait "$over" > /dev/null
"$P" show "$over"; "$P" logs "$over" | tail -2
check "the allocation was refused (CUDA error in its output)" sh -c "\"$P\" logs $over | grep -q 'pp-busy error'"
check "its first program ran (pp-busy ok)" sh -c "\"$P\" logs $over | grep -q 'pp-busy ok'"
check "gpu_mem applied is the pinned limit read back (0=2048M)" test "$(applied "$over" gpu_mem)" = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=2048M"
check "gpu_mem verdict held" test "$(verdict "$over" gpu_mem)" = held
check "devices verdict held" test "$(verdict "$over" devices)" = held

echo "=== 1b. a 2 GiB MPS slice whose first allocation asks for 4 GiB (it fails within a second)"
fast=$("$P" --json submit --device 0 --name fast --gpu-mem 2G -- "$BIN/pp-busy" --alloc-mib 4096 --blocks 4 --iters 1000 | python3 -c "import json,sys; print(json.load(sys.stdin)['id'])")
"$P" wait "$fast" > /dev/null
"$P" show "$fast"; "$P" logs "$fast" | tail -1
check "the allocation was refused at once" sh -c "\"$P\" logs $fast | grep -q 'pp-busy error'"
check "its pinned limit was still read back (its first process)" test "$(applied "$fast" gpu_mem)" = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=2048M"
check "gpu_mem verdict held" test "$(verdict "$fast" gpu_mem)" = held

echo "=== 2. a 4 GiB MPS slice with a 30% SM share that keeps inside its memory"
share=$("$P" --json submit --device 0 --name share --gpu-mem 4G --gpu-share 30 -- "$BIN/pp-busy" --alloc-mib 1024 --blocks 4 --iters 2000000000 | python3 -c "import json,sys; print(json.load(sys.stdin)['id'])")
"$P" wait "$share" > /dev/null
"$P" show "$share"
check "gpu_share applied is the active thread percentage read back (30)" test "$(applied "$share" gpu_share)" = "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=30"
check "gpu_share verdict: not measurable under MPS" test "$(verdict "$share" gpu_share)" = "not measurable"
check "gpu_mem verdict held" test "$(verdict "$share" gpu_mem)" = held

echo "=== 3. a whole-GPU job"
whole=$("$P" --json submit --gpus 1 --name whole -- "$BIN/pp-busy" --alloc-mib 1024 --blocks 4 --iters 2000000000 | python3 -c "import json,sys; print(json.load(sys.stdin)['id'])")
"$P" wait "$whole" > /dev/null
"$P" show "$whole"
check "devices verdict held (its UUID read back)" test "$(verdict "$whole" devices)" = held
check "gpu_mem: whole device, held" test "$(verdict "$whole" gpu_mem)" = held

echo "=== 4. a CPU job with 2 CPUs and 1 GiB of host memory"
cpu=$("$P" --json submit --cpus 2 --mem 1G --name cpu -- sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done' | python3 -c "import json,sys; print(json.load(sys.stdin)['id'])")
"$P" wait "$cpu" > /dev/null
"$P" show "$cpu"
check "cpus verdict held (read back from its cgroup)" test "$(verdict "$cpu" cpus)" = held
check "mem verdict held (memory.max read back)" test "$(verdict "$cpu" mem)" = held
check "no GPU entries for a CPU job" test "$(verdict "$cpu" gpu_mem)" = none

echo "=== 5. issue 57: processes that run with other limits than the job was given"
# 5a: its first program runs as given; then a child raises its own pinned limit and stays inside
# the slice. Overridden (the job's doing), named with the value it ran with; no disagreement.
raise=$("$P" --json submit --device 0 --name raise --gpu-mem 2G -- sh -c "\"$BIN/pp-busy\" --alloc-mib 256 --blocks 4 --iters 1000000000 && CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=40960M \"$BIN/pp-busy\" --alloc-mib 512 --blocks 4 --iters 2000000000" | python3 -c "import json,sys; print(json.load(sys.stdin)['id'])")
"$P" wait "$raise" > /dev/null
"$P" show "$raise"
check "a child that raised its limit: gpu_mem overridden" test "$(verdict "$raise" gpu_mem)" = overridden
check "the override is named with the value it ran with" sh -c "\"$P\" --json show $raise | grep -q '0=40960M'"
# 5b: the same child allocates past the slice: pinpointd's watcher is the bound.
past=$("$P" --json submit --device 0 --name past --gpu-mem 2G -- sh -c "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=40960M exec \"$BIN/pp-busy\" --alloc-mib 3072 --blocks 4 --iters 2000000000" | python3 -c "import json,sys; print(json.load(sys.stdin)['id'])")
"$P" wait "$past" > /dev/null
"$P" show "$past"
check "past its slice with a raised limit: stopped by the watcher (gpu-mem-exceeded)" sh -c "\"$P\" --json show $past | grep -q gpu-mem-exceeded"
check "gpu_mem verdict exceeded" test "$(verdict "$past" gpu_mem)" = exceeded
# 5c: a decoy: the job's first process itself runs 3 s with another value, then execs the GPU
# process with exactly what the job was given.
cat > "$W/decoy.sh" <<'DECOY'
#!/bin/sh
given=$CUDA_MPS_PINNED_DEVICE_MEM_LIMIT
exec env CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=99999M sh -c 'sleep 3; exec env CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="$0" "$1" --alloc-mib 512 --blocks 4 --iters 2000000000' "$given" "$2"
DECOY
chmod 755 "$W/decoy.sh"
decoy=$("$P" --json submit --device 0 --name decoy --gpu-mem 2G -- "$W/decoy.sh" x "$BIN/pp-busy" | python3 -c "import json,sys; print(json.load(sys.stdin)['id'])")
"$P" wait "$decoy" > /dev/null
"$P" show "$decoy"
check "a decoy before the GPU process: gpu_mem held (the GPU process decides)" test "$(verdict "$decoy" gpu_mem)" = held

echo "=== report and metrics"
"$P" report
curl -s "http://127.0.0.1:19477/metrics" | grep "pinpoint_enforcement_disagreements_total" || true
check "no disagreements counted" sh -c "! curl -s http://127.0.0.1:19477/metrics | grep '^pinpoint_enforcement_disagreements_total' | grep -qv ' 0$'"
curl -s "http://127.0.0.1:19477/metrics" | grep "pinpoint_enforcement_overrides_total" || true
check "the jobs' own overrides counted apart" sh -c "curl -s http://127.0.0.1:19477/metrics | grep '^pinpoint_enforcement_overrides_total' | grep -qv ' 0$'"

kill -TERM "$DAEMON"; wait "$DAEMON"
for pipe in "$W"/state/mps/*/*/pipe; do CUDA_MPS_PIPE_DIRECTORY=$pipe timeout 10 nvidia-cuda-mps-control <<< quit >/dev/null 2>&1; done
sleep 1; pkill -f '^(/[^ ]*/)?nvidia-cuda-mps-(server|control)( |$)'
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
