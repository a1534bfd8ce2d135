#!/usr/bin/env bash
# Issue 22's fixes that touch a real GPU and real MPS, attacked as a local user would
# (docs/security.md, "Locks, descriptors and budgets"). Usage: tests/gpu/trust_gpu.sh BIN_DIR
# BIN_DIR holds pinpointd, pinpoint, pinpoint-shim, pp-busy (and lib/ with the shared libraries
# pinpointd needs, if the machine lacks them). Prints PASS/FAIL lines and "N passed, M failed";
# quits every MPS daemon it started.
set -u
. "$(dirname "$(readlink -f "$0")")/lib.sh"
suite_setup trust "${1:?usage: trust_gpu.sh BIN_DIR}"
cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "nvml", "mps": "daemons",
 "mps_idle_quit_ms": 2000, "cancel_grace_ms": 3000, "metrics_listen": "127.0.0.1:0"}
CFG
exec 7>"$W/root-only-file"  # pinpointd starts holding it open for writing, without close-on-exec
start_pinpointd
exec 7>&-
cd /tmp
as_ppa() { su ppa -s /bin/sh -c "$*"; }

echo "=== 1. a job holds only stdin, stdout and stderr (pinpointd was started holding fd 7)"
id1=$(as_ppa "PINPOINT_SOCKET=$W/sock $P --json submit --wait --gpu-mem 2G -- sh -c 'ls /proc/\$\$/fd; $BIN/pp-busy --blocks 4 --iters 1000000 > /dev/null'" | js "d['id']")
fds=$("$P" logs "$id1" | tr '\n' ' ')
echo "job $id1 descriptors: $fds"
check "an MPS job of ppa starts with descriptors 0 1 2 only" test "$fds" = "0 1 2 "
CTL=$(pgrep -u ppa -f nvidia-cuda-mps-control | head -1)
if [ -n "$CTL" ]; then
  extra=$(ls /proc/$CTL/fd | awk '$1 > 2' | tr '\n' ' ')
  echo "ppa's control daemon $CTL descriptors above 2: ${extra:-none}; $(ls -l /proc/$CTL/fd | grep -c root-only-file) to the root-only file"
  check "ppa's MPS control daemon does not hold pinpointd's root-only file" test "$(ls -l /proc/$CTL/fd | grep -c root-only-file)" = 0
fi

echo "=== 2. a user cannot open a job's lock to hold the job running"
JD="$W/state/jobs/$id1"
ls -l "$JD"
check "ppa cannot open jobs/<id>/lock" sh -c "! su ppa -s /bin/sh -c 'exec 3< $JD/lock' 2>/dev/null"
check "ppa cannot open pinpointd's lock" sh -c "! su ppa -s /bin/sh -c 'exec 3< $W/state/private/pinpointd.lock' 2>/dev/null"

echo "=== 3. FIFOs a user left where its control daemon writes its pid and log do not wedge its next daemon"
wait_for 30 sh -c "! pgrep -u ppa -x nvidia-cuda-mps > /dev/null && ! pgrep -u ppa -f nvidia-cuda-mps-control > /dev/null"
BASE="$W/state/mps/dev0/$(id -u ppa)"
as_ppa "rm -f $BASE/pipe/nvidia-cuda-mps-control.pid $BASE/log/control.log; mkfifo $BASE/pipe/nvidia-cuda-mps-control.pid $BASE/log/control.log"
ls -l "$BASE/pipe" "$BASE/log"
T0=$(date +%s)
st=$(as_ppa "PINPOINT_SOCKET=$W/sock timeout 120 $P --json submit --wait --gpu-mem 2G -- $BIN/pp-busy --blocks 4 --iters 1000000" | js "d['state']")
T1=$(date +%s)
echo "ppa's slice after the planted FIFOs: $st in $((T1-T0)) s"
check "ppa's slice after planted FIFOs completed under a fresh daemon" test "$st" = completed

echo "=== 4. a user stops its own MPS control daemon: found within seconds, its jobs end with a truthful reason, the GPU returns to service"
hold=$(as_ppa "PINPOINT_SOCKET=$W/sock $P --json submit --gpu-mem 2G -- $BIN/pp-busy --blocks 4 --iters 20000000000000" | js "d['id']")
wait_for 60 sh -c "test \"\$(\"$P\" --json show $hold | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"job\"][\"state\"])')\" = running"
sleep 2
CTL=$("$P" --json gpus | js "d['devices'][0]['mps']['control_pid']")
as_ppa "kill -STOP $CTL" && echo "ppa stopped its control daemon $CTL"
T0=$(date +%s)
timeout 120 "$P" wait "$hold" > /dev/null
T1=$(date +%s)
echo "job $hold: $("$P" --json show $hold | js "d['job']['state'] + ' ' + d['job']['reason'] + ': ' + d['job']['detail']") after $((T1-T0)) s"
grep -E "did not answer" "$W/pinpointd.log" | tail -2
check "the job of the stopped daemon ended mps-unresponsive" sh -c "\"$P\" --json show $hold | grep -q '\"reason\": \"mps-unresponsive\"'"
check "it ended within 30 s" test $((T1-T0)) -lt 30
check "the stopped control daemon is gone" sh -c "! test -d /proc/$CTL || grep -q '^State:.*Z' /proc/$CTL/status"
st=$("$P" --json submit --wait --as-user ppb --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters 1000000 | js "d['state']")
check "another user's slice runs afterwards (the GPU is back in service)" test "$st" = completed
st=$(as_ppa "PINPOINT_SOCKET=$W/sock timeout 120 $P --json submit --wait --gpu-mem 2G -- $BIN/pp-busy --blocks 4 --iters 1000000" | js "d['state']")
check "ppa's next slice runs under a fresh daemon" test "$st" = completed

echo "=== 4b. a user stops its control daemon and cancels 3 of its jobs: nobody waits for that daemon"
more=""
for _ in 1 2 3; do
  more="$more $(as_ppa "PINPOINT_SOCKET=$W/sock $P --json submit --gpu-mem 2G -- $BIN/pp-busy --blocks 4 --iters 20000000000000" | js "d['id']")"
done
for j in $more; do
  wait_for 60 sh -c "test \"\$(\"$P\" --json show $j | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"job\"][\"state\"])')\" = running"
done
sleep 2
CTL=$("$P" --json gpus | js "d['devices'][0]['mps']['control_pid']")
as_ppa "kill -STOP $CTL" && echo "ppa stopped its control daemon $CTL"
# Each cancel asks ppa's stopped daemon to terminate_client: those exchanges run beside the loop.
C0=$(date +%s%N)
as_ppa "PINPOINT_SOCKET=$W/sock $P cancel $more" > /dev/null
C1=$(date +%s%N)
"$P" version > /dev/null
C2=$(date +%s%N)
echo "ppa's cancel of 3 jobs of its stopped daemon answered in $(( (C1-C0)/1000000 )) ms; root's version then in $(( (C2-C1)/1000000 )) ms"
check "a cancel does not wait for the stopped daemon (answered within 2 s; it waited 10 s per job before)" test $(( (C1-C0)/1000000 )) -lt 2000
check "another user's request right after is answered within 2 s" test $(( (C2-C1)/1000000 )) -lt 2000
timeout 120 "$P" wait $more > /dev/null
for j in $more; do echo "job $j: $("$P" --json show $j | js "d['job']['state'] + ' ' + d['job']['reason'] + ' ' + d['job']['detail']")"; done
check "the cancelled jobs ended cancelled" sh -c "for j in $more; do \"$P\" --json show \$j | grep -q '\"state\": \"cancelled\"' || exit 1; done"
wait_for 30 sh -c "! test -d /proc/$CTL || grep -q '^State:.*Z' /proc/$CTL/status"
check "the stopped control daemon is gone (quit when idle, killed when it did not)" sh -c "! test -d /proc/$CTL || grep -q '^State:.*Z' /proc/$CTL/status"
grep -E "safe cancel|did not quit|did not answer" "$W/pinpointd.log" | tail -4
st=$("$P" --json submit --wait --as-user ppb --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters 1000000 | js "d['state']")
check "another user's slice runs afterwards" test "$st" = completed

echo "=== 5. a CUDA process that leaves its job (setsid) is killed before the job ends and its GPU is handed on"
mkdir -p "$W/esc"; chmod 1777 "$W/esc"; ESC="$W/esc/escaped.pid"
id6=$(as_ppa "PINPOINT_SOCKET=$W/sock $P --json submit --gpu-mem 2G -- sh -c 'setsid sh -c \"echo \\\$\\\$ > $ESC; exec $BIN/pp-busy --blocks 4 --iters 20000000000000\" & sleep 2; exit 0'" | js "d['id']")
wait_for 30 test -s "$ESC"
EP=$(cat "$ESC" 2>/dev/null)
echo "job $id6 left process $EP (session $(ps -o sid= -p "$EP" 2>/dev/null | tr -d ' '), user $(ps -o user= -p "$EP" 2>/dev/null))"
timeout 60 "$P" wait "$id6" > /dev/null
echo "job $id6: $("$P" --json show $id6 | js "d['job']['state'] + ' ' + d['job']['reason']")"
check "the escaped CUDA process is gone once the job has ended" sh -c "test -n '$EP' && { ! test -d /proc/$EP || grep -q '^State:.*Z' /proc/$EP/status; }"
check "the job still ended with its program's exit" sh -c "\"$P\" --json show $id6 | grep -q '\"reason\": \"exit-0\"'"
grep "left running" "$W/pinpointd.log" | tail -1

echo "=== 6. many idle connections to /metrics leave pinpointd its descriptors"
PORT=$(grep -o "(port [0-9]*)" "$W/pinpointd.log" | head -1 | tr -dc 0-9)
[ -n "$PORT" ] || PORT=$(ss -ltnp 2>/dev/null | grep "pid=$DAEMON," | grep -o '127.0.0.1:[0-9]*' | head -1 | cut -d: -f2)
python3 - "$PORT" <<'PY' &
import socket, sys, time
port = int(sys.argv[1]); socks = []
for _ in range(4000):
    s = socket.socket(); s.setblocking(False)
    try: s.connect(("127.0.0.1", port))
    except BlockingIOError: pass
    socks.append(s)
time.sleep(20)
PY
FLOOD=$!
sleep 3
nfd=$(ls /proc/$DAEMON/fd | wc -l)
echo "pinpointd holds $nfd descriptors with 4000 connections open to /metrics on port $PORT"
check "pinpointd holds fewer than 100 descriptors under the flood" test "$nfd" -lt 100
st=$("$P" --json submit --wait --gpu-mem 2G -- "$BIN/pp-busy" --blocks 4 --iters 1000000 | js "d['state']")
check "a slice submitted during the flood completes" test "$st" = completed
kill $FLOOD 2>/dev/null; wait $FLOOD 2>/dev/null

stop_suite
echo "$passed passed, $failed failed"
