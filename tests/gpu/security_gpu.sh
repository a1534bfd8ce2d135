#!/usr/bin/env bash
# Issue 11's MPS-facing fixes on a real GPU, attacked by a local user as docs/security.md
# describes. Usage: tests/gpu/security_gpu.sh BIN_DIR
# BIN_DIR holds pinpointd, pinpoint, pinpoint-shim, pp-busy (and lib/ with the shared libraries
# pinpointd needs, if the machine lacks them). Prints PASS/FAIL lines and "N passed, M failed";
# quits every MPS daemon it started.
set -u
SRC=$(readlink -f "${1:?usage: security_gpu.sh BIN_DIR}")
W=$(mktemp -d /tmp/pp-sec-XXXXXX); chmod 755 "$W"
BIN=$W/bin; mkdir -p "$BIN"; cp -r "$SRC"/* "$BIN"/; chmod -R a+rX "$BIN"; chmod 755 "$BIN"/pp* "$BIN"/pinpoint*
export PINPOINT_SOCKET=$W/sock
P="$BIN/pinpoint"
. "$(dirname "$(readlink -f "$0")")/lib.sh"
drained() { "$P" --json gpus | js "d['devices'][0]['drained']"; }
mps_client() {  # mps_client PIPE_DIR PID: PID is a client of one of the MPS servers there
  local s
  for s in $(echo get_server_list | CUDA_MPS_PIPE_DIRECTORY=$1 timeout 5 nvidia-cuda-mps-control 2>/dev/null); do
    echo "get_client_list $s" | CUDA_MPS_PIPE_DIRECTORY=$1 timeout 5 nvidia-cuda-mps-control 2>/dev/null | grep -qx "$2" && return 0
  done
  return 1
}
is_drained() { test "$(drained)" = True; }
# Gone: no such process, or a zombie (it has exited and let go of the GPU; in a container whose
# init does not reap, an orphan's zombie stays).
gone() { ! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
# Logs for a post-mortem: where PP_GPU_LOGS names a directory, pinpointd's log and the tail of each
# MPS log are copied there when the script ends, however it ends.
save_logs() {
  [ -n "${PP_GPU_LOGS:-}" ] || return 0
  mkdir -p "$PP_GPU_LOGS"; cp "$W/pinpointd.log" "$PP_GPU_LOGS/" 2>/dev/null
  for f in "$W"/state/mps/*/*/log/*.log; do
    [ -f "$f" ] && tail -c 262144 "$f" > "$PP_GPU_LOGS/$(echo "${f#$W/state/mps/}" | tr / _)"
  done
}
trap save_logs EXIT; trap "exit 1" TERM INT
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(date -u +%FT%TZ)"
id ppa >/dev/null 2>&1 || useradd -M ppa; id ppb >/dev/null 2>&1 || useradd -M ppb
cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "nvml", "mps": "daemons",
 "mps_idle_quit_ms": 2000, "cancel_grace_ms": 3000, "mps_fault_drain_after": 3,
 "metrics_listen": ""}
CFG
start_pinpointd
grep -m1 "MPS:" "$W/pinpointd.log"
cd /tmp
ITERS=1000000000

echo "=== 1. the control daemon is pinpointd's child, held by a pidfd; a planted pid file is ignored"
hold=$("$P" --json submit --as-user ppa --name holder1 --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters $((ITERS*100)) | js "d['id']")
wait_for 30 sh -c "test \"\$(\"$P\" --json show $hold | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"job\"][\"state\"])')\" = running"
CTL=$("$P" --json gpus | js "d['devices'][0]['mps']['control_pid']")
PIPE=$(ls -d "$W"/state/mps/dev0/$(id -u ppa)/pipe)
echo "control daemon $CTL: parent $(ps -o ppid= -p "$CTL" | tr -d ' ') (pinpointd is $DAEMON), args: $(tr '\0' ' ' < /proc/$CTL/cmdline)"
check "control daemon runs in the foreground as pinpointd's child" test "$(ps -o ppid= -p "$CTL" | tr -d ' ')" = "$DAEMON"
check "control daemon runs as the job's user" test "$(ps -o user= -p "$CTL")" = ppa
ls -la "$PIPE" "$W"/state/mps/dev0/$(id -u ppa)/log
# The attack: a root process the user wants dead, its pid planted where the old code read it,
# and the user's own daemon stopped so that pinpointd must kill it after `quit` times out.
sleep 10000 & ROOTVICTIM=$!
su ppa -s /bin/sh -c "echo $ROOTVICTIM > $PIPE/nvidia-cuda-mps-control.pid; kill -STOP $CTL" && echo "user planted pid $ROOTVICTIM and stopped its daemon"
"$P" cancel $hold; "$P" wait $hold
wait_for 90 sh -c "! test -d /proc/$CTL || grep -q '^State:.*Z' /proc/$CTL/status"
check "the stopped daemon pinpointd started was ended" sh -c "! test -d /proc/$CTL || grep -q '^State:.*Z' /proc/$CTL/status"
check "the root process named in the planted pid file still runs" kill -0 $ROOTVICTIM
kill $ROOTVICTIM; wait $ROOTVICTIM 2>/dev/null
after=$("$P" --json submit --wait --as-user ppa --name after-plant --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters 1000000 | js "d['state']")
check "the next slice runs under a fresh daemon" test "$after" = completed

echo "=== 2. a user's server log claims faults: nothing drains, nobody else is touched"
LOGD=$(ls -d "$W"/state/mps/dev0/$(id -u ppa)/log)
long=$("$P" --json submit --as-user ppa --name forger --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters $((ITERS*3)) | js "d['id']")
wait_for 30 sh -c "test \"\$(\"$P\" --json show $long | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"job\"][\"state\"])')\" = running"
sleep 1
for i in 1 2 3 4 5; do
  su ppa -s /bin/sh -c "echo '[2026-11-23 00:00:0$i.000 Server  1] Client {PID: 1, Context: 1} encountered a fatal GPU error.' >> $LOGD/control-foreground.log"
  sleep 0.5
done
sleep 12  # past the confirmation window, so unconfirmed claims are dropped
grep "not confirmed\|fatal GPU error" "$W/pinpointd.log" | tail -3
check "5 forged fault lines did not drain the GPU" test "$(drained)" = False
check "pinpointd said the claims were not confirmed by the driver" grep -q "not confirmed by the driver" "$W/pinpointd.log"
"$P" cancel $long > /dev/null; "$P" wait $long > /dev/null
# A 2 GiB log without a newline: every poll reads a bounded slice, requests stay fast.
hold=$("$P" --json submit --as-user ppa --name holder2 --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters $((ITERS*3)) | js "d['id']")
wait_for 30 sh -c "test \"\$(\"$P\" --json show $hold | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"job\"][\"state\"])')\" = running"
LOGD=$(ls -d "$W"/state/mps/dev0/$(id -u ppa)/log)
su ppa -s /bin/sh -c "truncate -s 2G $LOGD/server.log $LOGD/control-foreground.log"; ls -la "$LOGD"
sleep 2
T0=$(date +%s%N); "$P" queue > /dev/null; T1=$(date +%s%N)
echo "pinpoint queue with a 2 GiB newline-free server log: $(( (T1-T0)/1000000 )) ms"
check "queue answers within a second with a 2 GiB log" test $(( (T1-T0)/1000000 )) -lt 1000
"$P" wait $hold > /dev/null
other=$("$P" --json submit --wait --as-user ppb --name other-user --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters 1000000 | js "d['state']")
check "another user's slice runs on the GPU afterwards" test "$other" = completed

echo "=== 3. a real fault is confirmed by the driver's Xid and counts toward draining"
n2=""; for i in 1 2; do n2="$n2 $("$P" --json submit --name n$i --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters $((ITERS*4)) | js "d['id']")"; done
wait_for 30 sh -c "test \$(\"$P\" --json queue | python3 -c 'import json,sys; print(sum(1 for j in json.load(sys.stdin) if j[\"state\"]==\"running\"))') -ge 2"
bad=$("$P" --json submit --name culprit --gpu-mem 2G -- "$BIN/pp-busy" --illegal-access | js "d['id']")
"$P" wait $n2 $bad > "$W/fault.txt"; cat "$W/fault.txt"
grep -E "Xid|confirmed|drained|fatal GPU error" "$W/pinpointd.log" | tail -8
check "neighbours completed after the fault" test "$(grep -c completed "$W/fault.txt")" -eq 2
check "culprit failed with gpu-fault" sh -c "\"$P\" --json show $bad | grep -q '\"reason\": \"gpu-fault\"'"
check "the driver reported a critical Xid" grep -q "critical Xid" "$W/pinpointd.log"
check "the fault was confirmed by the driver" grep -q "MPS fault confirmed by the driver" "$W/pinpointd.log"
wait_for 10 sh -c "test \$(grep -c 'MPS fault confirmed by the driver' $W/pinpointd.log) -ge 2"  # the Xid comes with the watcher's next poll
check "two faults (with neighbours, then alone) confirmed, not yet drained (3 drain)" sh -c "test \$(grep -c 'MPS fault confirmed by the driver' $W/pinpointd.log) -ge 2 && test \"\$(\"$P\" --json gpus | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"devices\"][0][\"drained\"])')\" = False"
bad2=$("$P" --json submit --name culprit2 --gpu-mem 2G -- "$BIN/pp-busy" --illegal-access | js "d['id']")
wait_for 60 is_drained  # the Xid comes with the watcher's next poll
check "a third confirmed fault drained the GPU" is_drained
# The culprit is queued to rerun alone, which the drained device no longer allows: it waits.
"$P" show $bad2 | sed -n '/state:/,/detail:/p;/history/,$p'
"$P" --json gpus | js "d['devices'][0].get('drain_reason')"
grep -E "Xid|confirmed|drained|fatal GPU error" "$W/pinpointd.log" | tail -4

echo "=== 4. a killed supervisor: the job's processes are found and ended, the GPU is not handed on while they live"
# The drained GPU takes no new job: restart pinpointd (running jobs keep running) to put it back.
"$P" cancel $bad2 > /dev/null
kill -TERM $DAEMON; wait $DAEMON
start_pinpointd
orph=$("$P" --json submit --as-user ppa --name orphan --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters $((ITERS*1000)) | js "d['id']")
wait_for 30 sh -c "test \"\$(\"$P\" --json show $orph | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"job\"][\"state\"])')\" = running"
SHIM=$("$P" --json show $orph | js "d['job']['pid']")
JOBPID=""; wait_for 30 sh -c "pgrep -u ppa -f 'pp-busy --blocks 4 --iters $((ITERS*1000))' > /dev/null"
JOBPID=$(pgrep -u ppa -f "pp-busy --blocks 4 --iters $((ITERS*1000))" | head -1)
# The program must be an MPS client (its context made) before the supervisor dies, or there is no
# client for terminate_client to end.
wait_for 60 mps_client "$W/state/mps/dev0/$(id -u ppa)/pipe" "$JOBPID"
echo "job $orph: supervisor $SHIM, program $JOBPID (an MPS client: $(mps_client "$W/state/mps/dev0/$(id -u ppa)/pipe" "$JOBPID" && echo yes || echo no))"
kill -KILL "$SHIM"; echo "killed the supervisor"
# A whole-GPU job that checks, when it starts, that the orphan's program is gone.
next=$("$P" --json submit --name next-whole --gpus 1 -- sh -c "! kill -0 $JOBPID 2>/dev/null || grep -q '^State:.*Z' /proc/$JOBPID/status" | js "d['id']")
"$P" wait $orph $next > "$W/orphan.txt"; cat "$W/orphan.txt"
"$P" show $orph | sed -n '/history/,$p'
echo "program $JOBPID now: $(grep '^State:' /proc/$JOBPID/status 2>/dev/null || echo 'no such process')"
check "the orphaned job's program was ended" gone "$JOBPID"
check "the GPU was not handed on while the orphan lived (next job saw it gone)" grep -q "job $next completed" "$W/orphan.txt"
check "the orphan's end went through terminate_client" grep -q "MPS: terminate_client [0-9]* $JOBPID " "$W/pinpointd.log"
check "the orphaned job is not reported completed" sh -c "! grep -q 'job $orph completed' $W/orphan.txt"

kill -TERM $DAEMON; wait $DAEMON
for pipe in "$W"/state/mps/*/*/pipe; do [ -d "$pipe" ] && CUDA_MPS_PIPE_DIRECTORY=$pipe timeout 10 nvidia-cuda-mps-control <<< quit >/dev/null 2>&1; done
sleep 1; pkill -f '^(/[^ ]*/)?nvidia-cuda-mps-(server|control)( |$)'
grep -E "warn|error" "$W/pinpointd.log" | head -30
echo "$passed passed, $failed failed"
save_logs; trap - EXIT
rm -rf "$W"
[ $failed -eq 0 ]
