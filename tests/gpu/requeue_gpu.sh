#!/usr/bin/env bash
# submit --requeue on a real GPU (docs/cli.md "Back in the queue"): the node "goes down" under a
# running MPS slice (pinpointd, the job's supervisor and its processes all killed with SIGKILL,
# as a power loss leaves them); at pinpointd's next start the job with --requeue is queued again
# and runs to its end, the one without fails lost. Usage: tests/gpu/requeue_gpu.sh BIN_DIR
# BIN_DIR holds pinpointd, pinpoint, pinpoint-shim, pp-busy (and lib/). Prints PASS/FAIL lines and
# "N passed, M failed"; quits every MPS daemon it started.
set -u
. "$(dirname "$(readlink -f "$0")")/lib.sh"
suite_setup requeue "${1:?usage: requeue_gpu.sh BIN_DIR}"
cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "nvml", "mps": "daemons",
 "mps_idle_quit_ms": 600000, "cancel_grace_ms": 3000}
CFG
start_pinpointd
cd /tmp
# A job that runs long the first time and ends at once the second (its marker file says which).
run="if [ -e $W/ran-\$PINPOINT_JOB_ID ]; then exec $BIN/pp-busy --blocks 4 --iters 1000; fi; \
touch $W/ran-\$PINPOINT_JOB_ID; exec $BIN/pp-busy --blocks 4 --iters 20000000000000"
a=$("$P" --json submit --device 0 --gpu-mem 8G --requeue --name again -- sh -c "$run" | js "d['id']")
b=$("$P" --json submit --device 0 --gpu-mem 8G --name once -- sh -c "$run" | js "d['id']")
running() { [ "$(state_of "$a") $(state_of "$b")" = "running running" ] && [ -e "$W/ran-$a" ] && [ -e "$W/ran-$b" ]; }
check "both slices run" wait_for 60 running
echo "=== the node goes down: pinpointd, the supervisors and the jobs killed at once"
kill -KILL "$DAEMON"; wait "$DAEMON" 2>/dev/null
pkill -KILL -f "$BIN/pinpoint-shim"; pkill -KILL -f "$BIN/pp-busy"
gone() { ! pgrep -f "$BIN/pp-busy" > /dev/null && ! pgrep -f "$BIN/pinpoint-shim" > /dev/null; }
check "nothing of the jobs is left" wait_for 30 gone
start_pinpointd
timeout 120 "$P" wait "$a" "$b" > /dev/null
"$P" show "$a" | grep -E "state|requeue"
"$P" show "$b" | grep -E "state|detail"
check "the job with --requeue was queued again and completed" test "$(state_of "$a")" = completed
check "its events say why" sh -c "\"$P\" show $a | grep -q 'back in the queue (--requeue)'"
check "the job without it failed lost" sh -c "\"$P\" --json show $b | grep -q '\"reason\": \"lost\"'"
stop_suite
echo "$passed passed, $failed failed"
