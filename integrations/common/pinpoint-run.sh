# Shared by pinpoint-slurm and pinpoint-htcondor (sourced, not run): how a batch system's job
# runs through the node's pinpointd. The caller sets PP_WHO ("pinpoint slurm", ...), the prefix
# of every error line, PINPOINT (the pinpoint binary) and, optionally, PP_ERROR_FILE (a file
# that gets each error line too).

pp_fail() {
  echo "$PP_WHO: $*" >&2
  if [[ -n ${PP_ERROR_FILE:-} ]]; then echo "$PP_WHO: $*" >> "$PP_ERROR_FILE"; fi
  exit 1
}
pp_usage() { echo "$PP_WHO: $*" >&2; exit 2; }
command -v jq >/dev/null || pp_fail "needs jq (apt-get install jq)"

# Bytes of a size such as 1G, 512M, 2GiB, 4096B (binary units); fails for anything else, a bare
# number included (as pinpoint's own sizes: never guessed as bytes).
pp_size_bytes() {
  local text=$1 n unit
  [[ $text =~ ^([0-9]+)(B|[KMGT](i?B)?)$ ]] || return 1
  n=${BASH_REMATCH[1]}
  unit=${BASH_REMATCH[2]:0:1}
  case $unit in
    K) n=$((n << 10)) ;; M) n=$((n << 20)) ;; G) n=$((n << 30)) ;; T) n=$((n << 40)) ;;
  esac
  ((n > 0)) || return 1
  echo "$n"
}

# pinpointd's `gpus` listing as JSON, or one error line.
pp_inventory() {
  local out
  out=$("$PINPOINT" --json gpus 2>&1) || pp_fail "pinpointd does not answer: ${out##*pinpoint: }"
  echo "$out"
}

# Whole GPUs by NVML index, the order in which batch-system configs list them:
# "pinpoint_index gpu_index mem_bytes uuid mode" lines, from pp_inventory's JSON on stdin (mode:
# exclusive, timeslice or mps).
pp_whole_gpus() {
  jq -r '[.devices[] | select(.is_mig | not)] | sort_by(.gpu_index)[] | "\(.index) \(.gpu_index) \(.mem_bytes) \(.uuid) \(.mode)"'
}

# pp_cancel_named NAME: cancels, through pinpointd's safe path, every job named NAME that has not
# ended, and waits until they have. A job that ends by itself between the listing and the cancel
# is what was wanted, not an error: a failing Epilog would drain the node. Fails (one line) when
# pinpointd does not answer or refuses a cancel for another reason.
pp_cancel_named() {
  local queue ids="" id out offset=0 page=10000 count
  local PP_QUEUE_ERR
  PP_QUEUE_ERR=$(mktemp)
  # Every page of the active queue: one page holds at most 10000 jobs.
  while :; do
    # stderr apart: with --json, the CLI says on stderr that more pages follow.
    queue=$("$PINPOINT" --json queue --limit "$page" --offset "$offset" 2>"$PP_QUEUE_ERR") || {
      out=$(head -c 1000 "$PP_QUEUE_ERR"); rm -f "$PP_QUEUE_ERR"
      pp_fail "pinpointd does not answer: ${out##*pinpoint: }"
    }
    ids="$ids $(jq -r --arg name "$1" '.[] | select(.request.name == $name) | .id' <<< "$queue")"
    count=$(jq length <<< "$queue")
    [ "$count" -lt "$page" ] && break
    offset=$((offset + page))
  done
  rm -f "$PP_QUEUE_ERR"
  for id in $ids; do
    if ! out=$("$PINPOINT" cancel "$id" 2>&1) && [[ $out != *"already ended"* ]]; then
      pp_fail "cannot cancel job $id ($1): ${out##*pinpoint: }"
    fi
  done
  for id in $ids; do
    pp_wait_ended "$id"
  done
  return 0
}

# pp_wait_ended ID: returns once job ID has ended, or once `pinpoint wait` fails by itself
# (pinpointd gone). A batch system signals every process of its job, so the `pinpoint wait` under
# it can be killed while the job still runs; another one then takes over. `wait` returns early
# when a trapped signal arrives; the waiter's end is what ends the inner loop.
pp_wait_ended() {
  local waiter status
  while :; do
    "$PINPOINT" wait "$1" >/dev/null 2>&1 &
    waiter=$!
    while kill -0 "$waiter" 2>/dev/null; do
      wait "$waiter"
    done
    wait "$waiter"
    status=$?
    ((status > 128)) || return 0
  done
}

# pp_run NAME -- SUBMIT-OPTIONS... -- COMMAND...: submits COMMAND to pinpointd with the options
# (--device, --gpu-mem, --cpus) under NAME, waits for it, copies its stdout and stderr here and
# exits with its exit code (1, with one line, when it ended without one). SIGTERM, SIGINT or
# SIGHUP at any time, during the submission too, cancel it through pinpointd's safe path; the
# wait goes on until it has ended.
pp_run() {
  local name=$1; shift
  local -a options=()
  while (($#)) && [[ $1 != -- ]]; do options+=("$1"); shift; done
  shift
  local submitted id="" cancel_asked=0
  # Set before submitting: a signal that came before the id was known cancels by name below.
  trap 'cancel_asked=1; if [[ -n $id ]]; then "$PINPOINT" cancel "$id" >/dev/null 2>&1; fi' TERM INT HUP
  # stdout is the job's JSON alone; what pinpoint says besides (a variable it left out of the
  # job) goes to the batch job's stderr, and on failure its last line is the reason.
  local said; said=$(mktemp) || pp_fail "run: cannot make a temporary file"
  if ! submitted=$("$PINPOINT" --json submit --name "$name" "${options[@]}" -- "$@" 2>"$said"); then
    ((cancel_asked)) && pp_cancel_named "$name"
    local why; why=$(tail -n 1 "$said"); rm -f "$said"
    pp_fail "run: ${why#pinpoint: }"
  fi
  cat "$said" >&2; rm -f "$said"
  id=$(jq -r '.id' <<< "$submitted" 2>/dev/null)
  [[ $id =~ ^[0-9]+$ ]] || pp_fail "run: pinpoint submit answered no job id"
  ((cancel_asked)) && "$PINPOINT" cancel "$id" >/dev/null 2>&1
  pp_wait_ended "$id"
  trap - TERM INT HUP
  "$PINPOINT" logs "$id"
  "$PINPOINT" logs --stderr "$id" >&2
  local job code
  job=$("$PINPOINT" --json show "$id") || pp_fail "run: cannot read job $id"
  code=$(jq -r '.job.exit_code // empty' <<< "$job")
  if [[ -z $code ]]; then
    echo "$PP_WHO: job $id ($name) ended $(jq -r '.job.state + " (" + .job.reason + ")"' <<< "$job")" >&2
    exit 1
  fi
  exit "$code"
}
