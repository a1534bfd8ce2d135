#!/usr/bin/env bash
# ctest pinpoint_run: the shared job runner of the integrations (integrations/common/pinpoint-run.sh,
# through `pinpoint-slurm epilog` and `run`) against a stand-in `pinpoint` whose answers are
# scripted, for the races a real pinpointd gives only now and then:
#   - the job ends by itself between the Epilog's listing and its cancel: the cancel answers
#     "already ended", and the Epilog still succeeds (a failing Epilog drains a Slurm node);
#   - a cancel refused for another reason fails the Epilog with one line;
#   - the batch system's signal kills the `pinpoint wait` under `run` while the job still runs:
#     another waiter takes over, so `run` returns only once the job has ended.
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
  "--json gpus") echo '{"devices": [{"index": 0, "gpu_index": 0, "mem_bytes": 85899345920, "uuid": "GPU-0", "is_mig": false}]}' ;;
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

echo "$passed passed, $failed failed"
((failed == 0 && passed > 0))
