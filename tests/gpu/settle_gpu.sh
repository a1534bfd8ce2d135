#!/usr/bin/env bash
# An ended job's GPUs go to the next job only once NVML shows nothing of it left there
# (docs/security.md, item 3 of the trust-boundary list), on a real GPU with real MPS, jobs without
# cgroups (the weaker case, where the launcher cannot find a process that left the session and
# cleared its environment). Usage: tests/gpu/settle_gpu.sh BIN_DIR
# BIN_DIR holds pinpointd, pinpoint, pinpoint-shim, pp-busy (and lib/). Prints PASS/FAIL lines and
# "N passed, M failed"; quits every MPS daemon it started and kills what it left. Section 2 also
# shows the settle deadline: the process is named while it holds the GPU and pinpointd kills it
# settle_deadline_s (20 s here) after its job ended; section 3 that the hold survives a restart.
set -u
. "$(dirname "$(readlink -f "$0")")/lib.sh"
suite_setup settle "${1:?usage: settle_gpu.sh BIN_DIR}"
# One GPU in play (the first), MPS servers kept long after their last client (so that a server
# counted as a job's leftover would show), no cgroups, a settle deadline of 20 s.
cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "nvml", "mps": "daemons",
 "mps_idle_quit_ms": 600000, "cancel_grace_ms": 3000, "cgroups": false, "metrics_listen": "127.0.0.1:0",
 "settle_deadline_s": 20}
CFG
start_pinpointd
cd /tmp
as_ppa() { su ppa -s /bin/sh -c "$*"; }
mkdir -p "$W/esc"; chmod 1777 "$W/esc"

echo "=== 1. an MPS server is no job's leftover: a slice's end frees it at once for the next slice"
a=$(as_ppa "PINPOINT_SOCKET=$W/sock $P --json submit --device 0 --gpu-mem 60G -- $BIN/pp-busy --blocks 4 --iters 1000000" | js "d['id']")
b=$(as_ppa "PINPOINT_SOCKET=$W/sock $P --json submit --device 0 --gpu-mem 60G -- $BIN/pp-busy --blocks 4 --iters 1000000" | js "d['id']")
timeout 120 "$P" wait "$a" "$b" > /dev/null
echo "job $a: $(state_of "$a"), job $b: $(state_of "$b"); ppa's MPS server: $(pgrep -u ppa -f nvidia-cuda-mps-server | head -1)"
check "two 60G slices of one user ran one after the other on GPU 0 while their MPS server lived on" \
  test "$(state_of "$a") $(state_of "$b")" = "completed completed"
check "the first slice's end was not held back by its user's MPS server" sh -c "! grep -q 'job $a: ended, but' '$W/pinpointd.log'"

echo "=== 2. a CUDA process that left its job's session and cleared its environment holds the job's GPU from the next job"
ESC="$W/esc/escaped.pid"
c=$(as_ppa "PINPOINT_SOCKET=$W/sock $P --json submit --device 0 --gpus 1 -- sh -c 'setsid env -i sh -c \"echo \\\$\\\$ > $ESC; exec $BIN/pp-busy --blocks 4 --iters 20000000000000\" & sleep 3; exit 0'" | js "d['id']")
wait_for 30 test -s "$ESC"
EP=$(cat "$ESC" 2>/dev/null)
echo "job $c left process $EP (session $(ps -o sid= -p "$EP" 2>/dev/null | tr -d ' '), user $(ps -o user= -p "$EP" 2>/dev/null), environment $(tr '\0' ' ' < /proc/$EP/environ 2>/dev/null | wc -c) bytes)"
timeout 60 "$P" wait "$c" > /dev/null
echo "job $c: $(state_of "$c") $("$P" --json show "$c" | js "d['job']['reason']")"
check "the job is reported ended, with its program's exit" sh -c "\"$P\" --json show $c | grep -q '\"reason\": \"exit-0\"'"
check "the process it left still runs (no cgroup, no session, no key: the launcher cannot tell it is the job's)" \
  sh -c "test -n '$EP' && test -d /proc/$EP && ! grep -q '^State:.*Z' /proc/$EP/status"
d=$("$P" --json submit --as-user ppb --device 0 --gpus 1 -- "$BIN/pp-busy" --blocks 4 --iters 1000000 | js "d['id']")
wait_for 30 grep -q "job $c: ended, but process(es) $EP of uid $(id -u ppa), in no job, hold its GPUs" "$W/pinpointd.log"
grep "job $c: ended" "$W/pinpointd.log" | tail -1
echo "job $d (ppb, the whole GPU 0): $(state_of "$d") $("$P" --json show "$d" | js "d['job']['reason'] + ': ' + d['job']['detail']")"
check "the next whole-GPU job waits while the left process holds GPU 0" test "$(state_of "$d")" = pending
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader
"$P" gpus | sed -n '/held after/,$p'
check "pinpoint gpus names the process that holds GPU 0" sh -c "\"$P\" gpus | grep -q 'device 0: process $EP of ppa, in no job, since job $c ended'"
check "the waiting job's reason names it" sh -c "\"$P\" --json show $d | grep -q 'held by process $EP of ppa'"
wait_for 60 grep -q "job $c: process(es) $EP of uid $(id -u ppa), in no job, held its GPUs past the settle deadline: sent SIGKILL" "$W/pinpointd.log"
grep "past the settle deadline" "$W/pinpointd.log" | tail -1
wait_for 10 sh -c "! test -d /proc/$EP"
check "at the settle deadline pinpointd killed it (SIGKILL through a pidfd)" sh -c "! test -d /proc/$EP"
timeout 120 "$P" wait "$d" > /dev/null
check "once it has exited, the next job gets GPU 0 and completes" test "$(state_of "$d")" = completed
"$P" show "$c" | sed -n '/history/,$p'
check "the ended job's history says held, killed, released" \
  sh -c "\"$P\" --json show $c | grep -q gpu-held && \"$P\" --json show $c | grep -q gpu-hold-killed && \"$P\" --json show $c | grep -q gpu-released"
grep -E "job $c|job $d" "$W/pinpointd.log" | tail -6

echo "=== 3. a restart keeps the hold: the next job still waits, the deadline still runs from the job's end"
ESC2="$W/esc/escaped2.pid"
e=$(as_ppa "PINPOINT_SOCKET=$W/sock $P --json submit --device 0 --gpus 1 -- sh -c 'setsid env -i sh -c \"echo \\\$\\\$ > $ESC2; exec $BIN/pp-busy --blocks 4 --iters 20000000000000\" & sleep 3; exit 0'" | js "d['id']")
wait_for 30 test -s "$ESC2"
EP2=$(cat "$ESC2" 2>/dev/null)
timeout 60 "$P" wait "$e" > /dev/null
f=$("$P" --json submit --as-user ppb --device 0 --gpus 1 -- "$BIN/pp-busy" --blocks 4 --iters 1000000 | js "d['id']")
wait_for 30 grep -q "job $e: ended, but process(es) $EP2 of uid" "$W/pinpointd.log"
kill -TERM "$DAEMON"; wait "$DAEMON"
start_pinpointd
grep "job $e: its GPUs were held" "$W/pinpointd.log" | tail -1
check "after the restart the next job still waits" test "$(state_of "$f")" = pending
wait_for 60 grep -q "job $e: process(es) $EP2 of uid $(id -u ppa), in no job, held its GPUs past the settle deadline: sent SIGKILL" "$W/pinpointd.log"
wait_for 10 sh -c "! test -d /proc/$EP2"
check "the restarted pinpointd killed it at the deadline" sh -c "! test -d /proc/$EP2"
timeout 120 "$P" wait "$f" > /dev/null
check "then the next job completes" test "$(state_of "$f")" = completed
grep -E "job $e|job $f" "$W/pinpointd.log" | tail -6

echo "=== 4. issue 55: a set-user-id holder pinpointd may not kill is reported so, and its GPU drained, not handed on"
# A copy of pp-busy, set-user-id root: run by ppa, its real uid is ppa's, its effective uid root's
# (in /usr/local/bin: /tmp may be mounted nosuid; removed at the end).
SUID=/usr/local/bin/pp-busy-suid-$$
cp "$BIN/pp-busy" "$SUID"; chown root:root "$SUID"; chmod 4755 "$SUID"
ESC3="$W/esc/escaped3.pid"
g=$(as_ppa "PINPOINT_SOCKET=$W/sock $P --json submit --device 0 --gpus 1 -- sh -c 'setsid env -i sh -c \"echo \\\$\\\$ > $ESC3; exec $SUID --blocks 4 --iters 20000000000000\" & sleep 3; exit 0'" | js "d['id']")
wait_for 30 test -s "$ESC3"
EP3=$(cat "$ESC3" 2>/dev/null)
echo "job $g left process $EP3: $(grep -E '^(Uid)' /proc/$EP3/status 2>/dev/null | tr -s '\t' ' ')"
timeout 60 "$P" wait "$g" > /dev/null
h=$("$P" --json submit --as-user ppb --device 0 --gpus 1 -- "$BIN/pp-busy" --blocks 4 --iters 1000000 | js "d['id']")
wait_for 60 grep -q "job $g: process(es) $EP3 of uid $(id -u ppa) hold its GPUs and could not be killed" "$W/pinpointd.log"
grep "job $g:" "$W/pinpointd.log" | tail -3
"$P" gpus
check "past the deadline the set-user-id holder still runs (pinpointd may not kill it)" sh -c "test -d /proc/$EP3"
check "the log does not say it was killed" sh -c "! grep -q 'job $g: process(es) $EP3 of uid $(id -u ppa), in no job, held its GPUs past the settle deadline: sent SIGKILL' '$W/pinpointd.log'"
check "pinpoint gpus shows device 0 drained, with the reason" sh -c "\"$P\" --json gpus | python3 -c \"import json,sys; d=json.load(sys.stdin)['devices'][0]; sys.exit(0 if d['drained'] and 'could not kill' in d.get('drain_reason','') else 1)\""
check "the hold line says it could not be killed" sh -c "\"$P\" gpus | grep -q 'could not be killed; the device is drained'"
check "the history has gpu-hold-unkillable" sh -c "\"$P\" --json show $g | grep -q gpu-hold-unkillable"
check "the next job still waits (the GPU is not handed on)" test "$(state_of "$h")" = pending
kill -KILL "$EP3" 2>/dev/null  # root ends it
timeout 120 "$P" wait "$h" > /dev/null
check "once root ended it, the drain is lifted and the next job completes" test "$(state_of "$h")" = completed

stop_suite
[ -n "${EP3:-}" ] && kill -KILL "$EP3" 2>/dev/null
rm -f "${SUID:-/nonexistent}"
[ -n "${EP:-}" ] && kill -KILL "$EP" 2>/dev/null
[ -n "${EP2:-}" ] && kill -KILL "$EP2" 2>/dev/null
echo "$passed passed, $failed failed"
