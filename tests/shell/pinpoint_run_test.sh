#!/usr/bin/env bash
# ctest pinpoint_run: the shared job runner of the integrations (integrations/common/pinpoint-run.sh,
# through `pinpoint-slurm epilog` and `run`) against a stand-in `pinpoint` whose answers are
# scripted, for the races a real pinpointd gives only now and then:
#   - the job ends by itself between the Epilog's listing and its cancel: the cancel answers
#     "already ended", and the Epilog still succeeds (a failing Epilog drains a Slurm node);
#   - a cancel refused for another reason fails the Epilog with one line;
#   - the batch system's signal kills the `pinpoint wait` under `run` while the job still runs:
#     another waiter takes over, so `run` returns only once the job has ended.
# And, against stand-ins for Slurm's sinfo and scontrol, `pinpoint-slurm health` in each state a
# node can be in, and `conf --node`'s lines (an exclusive GPU without shards, a bad name refused).
# Needs jq: skipped (77) without it. Usage: pinpoint_run_test.sh BIN_DIR
set -uo pipefail
BIN=$(readlink -f "${1:?usage: pinpoint_run_test.sh BIN_DIR}")
HERE=$(cd "$(dirname "$0")" && pwd)
command -v jq >/dev/null || { echo "no jq (scripts/install-deps.sh installs it): skipped"; exit 77; }
S=$(mktemp -d /tmp/ppr-XXXXXX)
trap 'rm -rf "$S"' EXIT
# shellcheck source=lib.sh
source "$HERE/lib.sh"

# The stand-in: logs each call to $S/calls; $S/cancel holds the cancel's answer (exit code, then
# the error line); `wait` kills itself with SIGTERM (as Slurm's scancel does to every process of
# the job) as many times as $S/wait-killed says, then answers that job 7 ended.
cat > "$S/pinpoint" <<'STUB'
#!/usr/bin/env bash
S=$(dirname "$0")
echo "$*" >> "$S/calls"
case "$*" in
  "--json queue --limit 10000 --offset 0") echo '[{"id": 7, "request": {"name": "slurm-9"}}, {"id": 8, "request": {"name": "other"}}]' ;;
  "--json gpus") echo '{"devices": [{"index": 0, "gpu_index": 0, "mem_bytes": 85899345920, "uuid": "GPU-0", "is_mig": false, "mode": "mps"},
                                     {"index": 1, "gpu_index": 1, "mem_bytes": 85899345920, "uuid": "GPU-1", "is_mig": false, "mode": "exclusive"}]}' ;;
  "gpus") exit "$(cat "$S/gpus-rc")" ;;
  --json\ submit*)
    # What pinpoint says besides the JSON goes to stderr (a variable it left out of the job).
    [[ -e $S/submit-note ]] && echo "pinpoint: not passed to the job (they look like secrets; docs/security.md): HF_TOKEN" >&2
    echo '{"id": 7}' ;;
  "cancel 7") { read -r code; read -r line; } < "$S/cancel"; [[ -z $line ]] || echo "$line" >&2; exit "$code" ;;
  "wait 7")
    n=$(cat "$S/wait-killed")
    if ((n > 0)); then echo $((n - 1)) > "$S/wait-killed"; kill -TERM $$; fi ;;
  "logs 7") echo "job output" ;;
  "logs --stderr 7") ;;
  "--json show 7") echo '{"job": {"exit_code": 3, "state": "failed", "reason": "exit-3"}}' ;;
  *) echo "pinpoint: stub has no answer for '$*'" >&2; exit 2 ;;
esac
STUB
chmod 0755 "$S/pinpoint"
export PINPOINT_BIN=$S/pinpoint
calls() { grep -c -x "$1" "$S/calls"; }

# --- Epilog: the job ended by itself before the cancel
: > "$S/calls"; printf '6\npinpoint: job 7 already ended (completed)\n' > "$S/cancel"; echo 0 > "$S/wait-killed"
out=$(SLURM_JOB_ID=9 "$BIN/pinpoint-slurm" epilog 2>&1); rc=$?
check "Epilog: a job that ended before the cancel is no error" test "$rc:$out" = "0:"
check "Epilog: only the job named slurm-9 was cancelled" test "$(calls 'cancel 7'):$(calls 'cancel 8')" = "1:0"

# --- Epilog: a cancel refused for another reason
: > "$S/calls"; printf '5\npinpoint: job 7 belongs to alice\n' > "$S/cancel"
out=$(SLURM_JOB_ID=9 "$BIN/pinpoint-slurm" epilog 2>&1); rc=$?
check "Epilog: a refused cancel fails with one line" \
  test "$rc:$out" = "1:pinpoint slurm: cannot cancel job 7 (slurm-9): job 7 belongs to alice"

# --- Epilog: its waiter killed twice, a third one sees the job end
: > "$S/calls"; printf '0\n\n' > "$S/cancel"; echo 2 > "$S/wait-killed"
out=$(SLURM_JOB_ID=9 "$BIN/pinpoint-slurm" epilog 2>&1); rc=$?
check "Epilog: waits again when its waiter is killed" test "$rc:$(calls 'wait 7')" = "0:3"

# --- run: the waiter killed once, the job's output and exit code come back after the second one
: > "$S/calls"; echo 1 > "$S/wait-killed"
out=$(SLURM_JOB_ID=9 SLURM_JOB_GPUS=0 "$BIN/pinpoint-slurm" run -- true 2>/dev/null); rc=$?
check "run: waits again when its waiter is killed" test "$(calls 'wait 7')" = 2
check "run: then copies the output and returns the job's exit code" test "$rc:$out" = "3:job output"

# --- run: a note on submit's stderr is passed on and does not spoil the job's JSON
: > "$S/calls"; echo 0 > "$S/wait-killed"; touch "$S/submit-note"
out=$(SLURM_JOB_ID=9 SLURM_JOB_GPUS=0 "$BIN/pinpoint-slurm" run -- true 2>"$S/run-err"); rc=$?
rm -f "$S/submit-note"
check "run: a note beside submit's JSON still gives the job" test "$rc:$out" = "3:job output"
check "run: the note reaches the batch job's stderr" grep -q "not passed to the job" "$S/run-err"

# --- conf --node: lines that name their node; no shards on an exclusive GPU
out=$("$BIN/pinpoint-slurm" conf --node n1 --dev-dir /d | grep -v '^#' | tr '\n' ';')
check "conf --node: each line names the node, the exclusive GPU has no shards" \
  test "$out" = "NodeName=n1 Name=gpu File=/d/nvidia0;NodeName=n1 Name=shard Count=80 File=/d/nvidia0;NodeName=n1 Name=gpu File=/d/nvidia1;"
check "conf --node --node-line: the node's Gres counts shards of shared GPUs only" \
  test "$("$BIN/pinpoint-slurm" conf --node n1 --node-line | tail -n 1)" = "NodeName=n1 Gres=gpu:2,shard:80"
out=$("$BIN/pinpoint-slurm" conf --node 'n1 Gres=gpu:99' 2>&1); rc=$?
check "conf --node: a name that would add to Slurm's line is refused with one line" \
  test "$rc:$out" = "2:pinpoint slurm: invalid node name 'n1 Gres=gpu:99' (letters, digits, '.', '_', '-')"

# --- health: stand-ins for sinfo (prints $S/sinfo) and scontrol (logs its arguments)
mkdir -p "$S/slurm-bin"
printf '#!/bin/sh\ncat "%s/sinfo"\n' "$S" > "$S/slurm-bin/sinfo"
printf '#!/bin/sh\necho "scontrol $*" >> "%s/calls"\n' "$S" > "$S/slurm-bin/scontrol"
chmod 0755 "$S/slurm-bin/sinfo" "$S/slurm-bin/scontrol"
health() {  # health GPUS-RC SINFO-LINE: runs the health check; leaves its output, code and calls
  : > "$S/calls"; echo "$1" > "$S/gpus-rc"; printf '%s\n' "$2" > "$S/sinfo"
  out=$(PATH=$S/slurm-bin:$PATH SLURMD_NODENAME=n1 "$BIN/pinpoint-slurm" health 2>&1); rc=$?
  updates=$(grep -c '^scontrol update' "$S/calls")
}
health 0 'idle|none'
check "health: pinpointd answers, node in service: nothing to do" test "$rc:$updates" = "0:0"
health 1 'mixed|none'
check "health: pinpointd does not answer: the node is drained with the reason" \
  test "$rc:$(grep '^scontrol' "$S/calls")" = "0:scontrol update NodeName=n1 State=DRAIN Reason=pinpointd not answering"
check "health: and says so in one line" test "$out" = "pinpoint slurm: health: pinpointd does not answer: node n1 drained"
health 1 'drained|pinpointd not answering'
check "health: a node drained already is left as it is" test "$rc:$updates" = "0:0"
health 0 'drained|pinpointd not answering'
check "health: pinpointd answers again: the node it drained is resumed" \
  test "$rc:$(grep '^scontrol' "$S/calls")" = "0:scontrol update NodeName=n1 State=RESUME"
health 0 'draining|disk replaced by admin'
check "health: a drain set for another reason stays" test "$rc:$updates" = "0:0"
health 0 ''
check "health: a node Slurm does not list fails with one line" \
  test "$rc:$out" = "1:pinpoint slurm: health: Slurm does not list node n1"
out=$(PATH=$S/slurm-bin:$PATH "$BIN/pinpoint-slurm" health --node 'n1 State=DOWN' 2>&1); rc=$?
check "health: a bad --node is refused with one line" \
  test "$rc:$out" = "2:pinpoint slurm: invalid node name 'n1 State=DOWN' (letters, digits, '.', '_', '-')"

echo "$passed passed, $failed failed"
((failed == 0 && passed > 0))
