#!/usr/bin/env bash
# Issue 3 on a real GPU: pinpointd runs one MPS control daemon per GPU and user, enforces the
# slice's memory limit, keeps two users' clients apart, cancels safely, recovers from a client's
# fatal fault and from a killed control daemon. Usage: tests/gpu/mps_gpu.sh BIN_DIR
# Prints PASS/FAIL lines and "N passed, M failed"; quits every MPS daemon it started.
# Every job is submitted for device 0 (--device 0): what is tested is one GPU's MPS (two users
# taking turns on it, a fault's neighbours on it), which on a machine of several GPUs pinpoint's
# placement would otherwise spread apart (docs/scheduling.md, "Where slices go").
set -u
SRC=$(readlink -f "${1:?usage: mps_gpu.sh BIN_DIR}")
W=$(mktemp -d /tmp/pp-mps-XXXXXX); chmod 755 "$W"
BIN=$W/bin; mkdir -p "$BIN"; cp -r "$SRC"/* "$BIN"/; chmod 755 "$BIN" "$BIN"/*
export PINPOINT_SOCKET=$W/sock
P="$BIN/pinpoint"
passed=0; failed=0
check() { local name=$1; shift; if "$@"; then echo "PASS $name"; passed=$((passed+1)); else echo "FAIL $name"; failed=$((failed+1)); fi; }
js() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
now() { date +%s.%N; }
wait_running() {  # wait_running N: until N jobs run (bounded)
  for _ in $(seq 300); do
    n=$("$P" --json queue | js "sum(1 for j in d if j['state']=='running')"); [ "$n" -ge "$1" ] && return 0; sleep 0.1
  done; return 1
}
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(date -u +%FT%TZ)"
id ppa >/dev/null 2>&1 || useradd -M ppa; id ppb >/dev/null 2>&1 || useradd -M ppb
cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "nvml", "mps": "daemons",
 "mps_idle_quit_ms": 600000, "cancel_grace_ms": 5000}
CFG
LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}" "$BIN/pinpointd" --config "$W/config.json" > "$W/pinpointd.log" 2>&1 &
DAEMON=$!
for _ in $(seq 100); do [ -S "$W/sock" ] && break; sleep 0.1; done
grep -m1 "MPS:" "$W/pinpointd.log"
cd /tmp
ITERS=1000000000

echo "=== 1. 16 GPU-bound slices run concurrently under MPS"
"$P" submit --device 0 --wait --name alone --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters $ITERS > /dev/null
T1=$("$P" --json show 1 | js "(d['job']['end_ms']-d['job']['start_ms'])/1000")
ids=""; for i in $(seq 16); do ids="$ids $("$P" --json submit --device 0 --name c$i --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters $ITERS | js "d['id']")"; done
"$P" wait $ids > /dev/null; rc=$?
T16=$("$P" --json queue --all | js "(lambda js: (max(j['end_ms'] for j in js)-min(j['start_ms'] for j in js))/1000)([j for j in d if j['request']['name'].startswith('c')])")
PEAK=$("$P" --json queue --all | python3 -c "
import json,sys; js=[j for j in json.load(sys.stdin) if j['request']['name'].startswith('c')]
ev=sorted([(j['start_ms'],1) for j in js]+[(j['end_ms'],-1) for j in js]); n=m=0
for t,x in ev: n+=x; m=max(m,n)
print(m)")
CLIENTS=$(cat "$W"/state/mps/*/0/log/control.log "$W"/state/mps/*/0/log/control-foreground.log 2>/dev/null | grep -c "NEW CLIENT")
echo "one job alone: ${T1}s; 16 at once: ${T16}s (16 x alone would be $(python3 -c "print(16*$T1)")s); peak concurrent: $PEAK; MPS client connections logged: $CLIENTS"
check "16 slices all completed" test $rc -eq 0
check "16 slices ran at once (peak 16)" test "$PEAK" -eq 16
check "16 concurrent far below 16x one job (< 4x)" python3 -c "import sys; sys.exit(0 if $T16 < 4*$T1 else 1)"
check "jobs were MPS clients (control log)" test "$CLIENTS" -ge 17
"$P" --json gpus | js "d['devices'][0].get('mps')"

echo "=== 2. a job beyond its --gpu-mem fails; its neighbour finishes"
big=$("$P" --json submit --device 0 --name over --gpu-mem 3G -- "$BIN/pp-busy" --alloc-mib 4096 --blocks 4 --iters 100000 | js "d['id']")
ok=$("$P" --json submit --device 0 --name under --gpu-mem 3G -- "$BIN/pp-busy" --alloc-mib 1024 --blocks 4 --iters $ITERS | js "d['id']")
"$P" wait $big $ok; "$P" logs $big | tail -1; "$P" logs $ok | tail -1
check "over-budget job failed with a CUDA error" sh -c "\"$P\" logs $big | grep -q 'pp-busy error' && \"$P\" --json show $big | grep -q '\"state\": \"failed\"'"
check "neighbour under budget completed" sh -c "\"$P\" logs $ok | grep -q 'pp-busy ok'"

echo "=== 3. two users never share the MPS GPU at once"
ua=""; ub=""
for i in 1 2 3 4; do ua="$ua $("$P" --json submit --device 0 --as-user ppa --name ua$i --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters $ITERS | js "d['id']")"; done
for i in 1 2 3 4; do ub="$ub $("$P" --json submit --device 0 --as-user ppb --name ub$i --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters $ITERS | js "d['id']")"; done
"$P" queue | tee "$W/users-queue.txt"
"$P" wait $ua $ub; rc=$?
check "both users' jobs completed" test $rc -eq 0
check "waiting user's jobs showed reason mps-user naming ppa" grep -q "mps-user: .*ppa" "$W/users-queue.txt"
check "no overlap between users' run intervals" sh -c "\"$P\" --json queue --all | python3 -c \"
import json,sys; js=json.load(sys.stdin)
a=[j for j in js if j['user']=='ppa']; b=[j for j in js if j['user']=='ppb']
bad=[(x['id'],y['id']) for x in a for y in b if x['start_ms']<y['end_ms'] and y['start_ms']<x['end_ms']]
print('overlaps:',bad); sys.exit(1 if bad or not a or not b else 0)\""
ls -la "$W"/state/mps/*/ | head -8

echo "=== 4. cancelling 1 of 8 running MPS jobs leaves the other 7 intact"
c8=""; for i in $(seq 8); do c8="$c8 $("$P" --json submit --device 0 --name k$i --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters $((ITERS*3)) | js "d['id']")"; done
wait_running 8; victim=$(echo $c8 | cut -d' ' -f3)
"$P" cancel $victim
"$P" wait $c8 > "$W/cancel.txt"; cat "$W/cancel.txt"
check "cancelled job is cancelled" grep -q "job $victim cancelled" "$W/cancel.txt"
check "the other 7 completed" test "$(grep -c completed "$W/cancel.txt")" -eq 7
check "cancel went through terminate_client" grep -q "terminate_client" "$W/pinpointd.log"
"$P" logs $victim | tail -1

echo "=== 5. an illegal memory access: neighbours requeued and finish, the culprit fails"
n3=""; for i in 1 2 3; do n3="$n3 $("$P" --json submit --device 0 --name n$i --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters $((ITERS*4)) | js "d['id']")"; done
wait_running 3
bad=$("$P" --json submit --device 0 --name culprit --gpu-mem 2G -- "$BIN/pp-busy" --illegal-access | js "d['id']")
"$P" wait $n3 $bad > "$W/fault.txt"; cat "$W/fault.txt"
for j in $n3 $bad; do "$P" show $j | sed -n '/history/,$p'; done
check "neighbours completed" test "$(grep -c completed "$W/fault.txt")" -eq 3
check "neighbours were requeued as mps-fault-victim" sh -c "for j in $n3; do \"$P\" --json show \$j | grep -q '\"kind\": \"requeue\"' || exit 1; done"
check "culprit failed with gpu-fault" sh -c "\"$P\" --json show $bad | grep -q '\"reason\": \"gpu-fault\"'"
grep "fatal GPU error\|recovered" "$W/pinpointd.log" | head -5

echo "=== 6. a SIGKILLed MPS control daemon is noticed and restarted"
"$P" submit --device 0 --wait --name before-kill --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters 1000000 > /dev/null
CTL=$("$P" --json gpus | js "d['devices'][0]['mps']['control_pid']")
kill -KILL "$CTL"; echo "killed control daemon $CTL"
for _ in $(seq 50); do grep -q "vanished" "$W/pinpointd.log" && break; sleep 0.1; done
after=$("$P" --json submit --device 0 --wait --name after-kill --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters 1000000 | js "d['state']")
NEW=$("$P" --json gpus | js "d['devices'][0]['mps']['control_pid']")
check "pinpointd noticed the dead control daemon" grep -q "vanished; restarting" "$W/pinpointd.log"
check "a new control daemon runs ($CTL -> $NEW)" test "$NEW" != "$CTL" -a -d /proc/$NEW
check "later job completed" test "$after" = "completed"

"$P" queue --all | tail -5
kill -TERM $DAEMON; wait $DAEMON
for pipe in "$W"/state/mps/*/*/pipe; do CUDA_MPS_PIPE_DIRECTORY=$pipe timeout 10 nvidia-cuda-mps-control <<< quit >/dev/null 2>&1; done
sleep 1; pkill -f '^(/[^ ]*/)?nvidia-cuda-mps-(server|control)( |$)'
grep -E "warn|error" "$W/pinpointd.log" | head -20
echo "$passed passed, $failed failed"
rm -rf "$W"
[ $failed -eq 0 ]
