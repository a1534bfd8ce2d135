#!/usr/bin/env bash
# ctest htcondor: pinpoint under HTCondor, which has no Debian package here, so without an
# HTCondor: `pinpoint htcondor conf` against golden files (the per-GPU layout and the multi-GPU
# variant), and the USER_JOB_WRAPPER run as HTCondor's starter runs it (the job's command as its
# arguments, _CONDOR_AssignedGPUs, a job ad in _CONDOR_JOB_AD) against pinpointd on a simulated
# node (two H100s). Every wait is a bounded poll. Needs jq: skipped (77) without it.
# Usage: htcondor_test.sh BIN_DIR
set -uo pipefail
BIN=$(readlink -f "${1:?usage: htcondor_test.sh BIN_DIR}")
HERE=$(cd "$(dirname "$0")" && pwd)
command -v jq >/dev/null || { echo "no jq (scripts/install-deps.sh installs it): skipped"; exit 77; }
S=$(mktemp -d /tmp/pph-XXXXXX)
# shellcheck source=../shell/lib.sh
source "$HERE/../shell/lib.sh"
cleanup() {
  stop_pinpointd
  ((failed == 0)) || { echo "--- pinpointd log"; tail -20 "$S/pinpointd.log"; }
  rm -rf "$S"
}
trap cleanup EXIT

P=$BIN/pinpoint
start_pinpointd "$BIN" "$S" || { bad "pinpointd started"; exit 1; }

# --- the configuration
W=/usr/libexec/pinpoint-htcondor-wrapper
check "per-GPU layout matches golden/h100x2.conf" \
  diff -u "$HERE/golden/h100x2.conf" <("$P" htcondor conf --wrapper "$W")
check "multi-GPU variant matches golden/h100x2-whole1.conf" \
  diff -u "$HERE/golden/h100x2-whole1.conf" <("$P" htcondor conf --whole-gpus 1 --wrapper "$W")
out=$("$P" htcondor conf --whole-gpus 3 2>&1); rc=$?
check "more whole GPUs than the node has: one line, exit 1" \
  test "$rc:$out" = "1:pinpoint htcondor: --whole-gpus 3, but pinpointd has 2 whole GPUs"
out=$("$P" htcondor conf --shares 0 2>&1); rc=$?
check "bad --shares: one line, exit 2" test "$rc:$(wc -l <<< "$out")" = "2:1"

# --- the wrapper, as the starter runs it
uuid0=$("$P" --json gpus | jq -r '.devices[0].uuid')
uuid1=$("$P" --json gpus | jq -r '.devices[1].uuid')
ad() {  # ad FILE CLUSTER PROC GPUMEM_MB: a job ad as the starter writes it
  { echo "ClusterId = $2"; echo "ProcId = $3"; echo "RequestCpus = 2"
    [[ -n $4 ]] && echo "RequestGPUMemoryMB = $4"; echo 'Owner = "root"'; } > "$1"
}
wrapper=$BIN/pinpoint-htcondor-wrapper
show='echo "visible=$CUDA_VISIBLE_DEVICES limit=${CUDA_MPS_PINNED_DEVICE_MEM_LIMIT:-none}"; echo err >&2; exit 3'
ad "$S/ad1" 12 3 4096
out=$(_CONDOR_JOB_AD=$S/ad1 _CONDOR_AssignedGPUs="$uuid1,$uuid1" "$wrapper" sh -c "$show" 2> "$S/err1"); rc=$?
check "slice job: on HTCondor's GPU with its 4096 MiB, exit code and stderr kept" \
  test "$rc|$out|$(cat "$S/err1")" = "3|visible=$uuid1 limit=0=4096M|err"
rec=$("$P" --json queue --all | jq -c '[.[] | select(.request.name == "condor-12.3")][-1]')
check "pinpointd lists it as condor-12.3 with 2 CPUs" \
  test "$(jq -r '"\(.state) \(.request.cpus) \(.request.gpu_mem_bytes)"' <<< "$rec")" = "failed 2 4294967296"
ad "$S/ad2" 12 4 ""
out=$(_CONDOR_JOB_AD=$S/ad2 _CONDOR_AssignedGPUs="$uuid0, $uuid1" "$wrapper" sh -c 'echo "visible=$CUDA_VISIBLE_DEVICES"'); rc=$?
check "multi-GPU job: both whole GPUs" test "$rc|$out" = "0|visible=$uuid0,$uuid1"
out=$("$wrapper" sh -c 'echo plain; exit 4'); rc=$?
check "a job without GPUs runs as it is" test "$rc|$out" = "4|plain"
ad "$S/ad3" 12 5 1024
out=$(_CONDOR_JOB_AD=$S/ad3 _CONDOR_AssignedGPUs=GPU-nope _CONDOR_WRAPPER_ERROR_FILE=$S/werr "$wrapper" true 2>&1); rc=$?
check "an unknown GPU: one line, exit 1, in HTCondor's wrapper error file too" \
  test "$rc|$(wc -l <<< "$out")|$(cat "$S/werr" 2>/dev/null)" = "1|1|$out"

# --- condor_rm: SIGTERM to the wrapper cancels the job through pinpointd
ad "$S/ad4" 13 0 2048
_CONDOR_JOB_AD=$S/ad4 _CONDOR_AssignedGPUs=$uuid0 "$wrapper" sh -c 'sleep 600' > /dev/null 2>&1 &
run=$!
state() { "$P" --json queue --all | jq -r '[.[] | select(.request.name == "condor-13.0")][-1].state'; }
running() { [[ $(state) == running ]]; }
check "the job runs in pinpointd" poll 30 running
kill -TERM "$run"; wait "$run"; rc=$?
check "SIGTERM: pinpoint cancelled it, the wrapper exited non-zero ($rc)" test "$(state):$((rc != 0))" = "cancelled:1"

echo "$passed passed, $failed failed"
((failed == 0))
