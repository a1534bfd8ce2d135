#!/usr/bin/env bash
# Issue 56 items 4 and 5 on a real GPU, through a real pinpointd (exclusive GPUs):
#  1. root's suspend of a whole-GPU job holding 8 GiB (pp-hold, its data checked every 0.5 s):
#     its device memory freed while suspended, an urgent job runs on the freed GPU, then
#     root's resume puts it back and its data checks intact;
#  2. an urgent job on a full GPU: its wait when the scavenger is suspended for it (preempt_mode
#     suspend), the scavenger resuming by itself after it, intact; and its wait without
#     preemption (the scavenger's class not preempted).
# Usage: tests/gpu/suspend_gpu.sh BIN_DIR (pinpoint, pinpointd, pinpoint-shim,
# pinpoint-checkpoint, pp-hold, pp-busy). Writes $OUT/suspend_gpu.txt when OUT is set. Every wait
# is bounded; the times are recorded, never judged. SECTIONS (default 12): which sections run.
set -u
HERE=$(dirname "$(readlink -f "$0")")
P=""; . "$HERE/lib.sh"
suite_setup suspend "${1:?usage: suspend_gpu.sh BIN_DIR}"
RESULTS=${OUT:-$W}/suspend_gpu.txt
: > "$RESULTS"
say() { echo "$*" | tee -a "$RESULTS"; }
HOLD_MIB=${HOLD_MIB:-8192}
SECTIONS=${SECTIONS:-12}
config() {  # config SCAVENGER_MODE NORMAL_PREEMPTS(json list)
  cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "nvml", "default_mode": "exclusive",
 "cancel_grace_ms": 5000, "metrics_listen": "127.0.0.1:19481",
 "qos": {"normal": {"preempts": $2},
         "scavenger": {"priority": -1000, "preempt_mode": "$1", "grace_s": 30}}}
CFG
}
diagnose() {
  { echo "--- pinpointd running: $(kill -0 "$DAEMON" 2>/dev/null && echo yes || echo no)"
    tail -30 "$W/pinpointd.log"; } | tee -a "$RESULTS"
}
trap '[ "$failed" -eq 0 ] || diagnose; stop_suite >/dev/null 2>&1' EXIT
gpu_used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0 | head -1; }
now_ms() { date +%s%3N; }
field() { "$P" --json show "$1" | js "$2"; }
phase() { "$P" --json show "$1" | js "d['job'].get('suspend', {}).get('phase', 'none')"; }
phase_is() { test "$(phase "$1")" = "$2"; }
submit() { "$P" --json submit --device 0 "$@" | js "d['id']"; }
hold_job() {  # hold_job QOS SECONDS: a whole-GPU pp-hold, returned once its memory is filled
  local id
  id=$(submit --qos "$1" --name "hold-$1" -- "$BIN/pp-hold" --mib "$HOLD_MIB" --seconds "$2")
  wait_for 120 sh -c "\"$P\" logs $id 2>/dev/null | grep -q 'pp-hold ready'" ||
    say "hold $id not ready after 120 s (state $(state_of "$id"))"
  echo "$id"
}
intact() {  # intact ID: ended completed, its checks with errors=0
  timeout 300 "$P" wait "$1" > /dev/null
  "$P" logs "$1" | tail -1 | tee -a "$RESULTS"
  test "$(state_of "$1")" = completed && "$P" logs "$1" | grep -q 'errors=0'
}
cd /tmp

if [[ $SECTIONS == *1* ]]; then
say "=== 1. root suspends a whole-GPU job; an urgent job uses its GPU; root resumes it"
config requeue '["scavenger"]'
start_pinpointd || { say "FAIL pinpointd did not answer"; cat "$W/pinpointd.log"; exit 1; }
A=$(hold_job normal 60)
before=$(gpu_used); say "GPU memory used with job $A running: $before MiB"
t0=$(now_ms)
"$P" suspend "$A" | tee -a "$RESULTS"
check "1: job $A suspended" wait_for 120 phase_is "$A" suspended
t1=$(now_ms); suspended=$(gpu_used)
say "TIME suspend of $HOLD_MIB MiB through pinpointd: $((t1 - t0)) ms (asked to suspended, polled every 0.1 s)"
say "GPU memory used with job $A suspended: $suspended MiB"
check "1: its device memory was freed" test "$((before - suspended))" -ge "$((HOLD_MIB * 9 / 10))"
"$P" show "$A" | grep -E "suspend|state" | tee -a "$RESULTS"
U=$(submit --qos normal --name urgent -- "$BIN/pp-busy" --blocks 132 --iters 20000000)
check "1: the urgent job ran on the freed GPU and completed" sh -c "timeout 120 \"$P\" wait $U > /dev/null"
say "urgent job $U: $(state_of "$U"), waited $(( $(field "$U" "d['job']['start_ms']") - $(field "$U" "d['job']['submit_ms']") )) ms"
t2=$(now_ms)
"$P" resume "$A" | tee -a "$RESULTS"
check "1: job $A resumed" wait_for 120 phase_is "$A" none
t3=$(now_ms)
say "TIME resume of $HOLD_MIB MiB through pinpointd: $((t3 - t2)) ms; GPU memory used: $(gpu_used) MiB"
check "1: its data checked intact after the resume" intact "$A"
"$P" show "$A" | sed -n '/history/,$p' | tail -8 | tee -a "$RESULTS"
stop_suite > /dev/null 2>&1
fi

if [[ $SECTIONS == *2* ]]; then
say "=== 2a. an urgent job on a full GPU, the scavenger suspended for it"
config suspend '["scavenger"]'
start_pinpointd || { say "FAIL pinpointd did not answer"; exit 1; }
S=$(hold_job scavenger 60)
U=$(submit --qos normal --name urgent -- "$BIN/pp-busy" --blocks 132 --iters 20000000)
check "2a: the urgent job ran" sh -c "timeout 180 \"$P\" wait $U > /dev/null"
waited=$(( $(field "$U" "d['job']['start_ms']") - $(field "$U" "d['job']['submit_ms']") ))
say "WAIT urgent job with the scavenger suspended for it: $waited ms"
check "2a: the scavenger resumed by itself" wait_for 120 phase_is "$S" none
check "2a: the scavenger's data checked intact" intact "$S"
"$P" show "$S" | sed -n '/history/,$p' | tail -8 | tee -a "$RESULTS"
stop_suite > /dev/null 2>&1

say "=== 2b. the same without preemption"
config suspend '[]'
start_pinpointd || { say "FAIL pinpointd did not answer"; exit 1; }
S=$(hold_job scavenger 40)
U=$(submit --qos normal --name urgent -- "$BIN/pp-busy" --blocks 132 --iters 20000000)
check "2b: the urgent job ran after the scavenger" sh -c "timeout 180 \"$P\" wait $U > /dev/null"
waited=$(( $(field "$U" "d['job']['start_ms']") - $(field "$U" "d['job']['submit_ms']") ))
say "WAIT urgent job without preemption: $waited ms (the scavenger's run: 40 s after its fill)"
stop_suite > /dev/null 2>&1
fi
trap - EXIT
say "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
