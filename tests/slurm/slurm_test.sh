#!/usr/bin/env bash
# ctest slurm: pinpoint under a real Slurm. Starts pinpointd on a simulated node (two H100s) and
# a one-node Slurm cluster (munged, slurmctld, slurmd; tests/slurm/cluster.sh) whose gres.conf
# comes from `pinpoint slurm conf`, with fake GPU device files and pinpoint's Prolog and Epilog.
# Then, with sbatch:
#   - shard and whole-GPU jobs at once: each runs through `pinpoint slurm run` as the slice Slurm
#     allocated (the GPU it chose, K shards = K GiB), sees that environment, and pinpointd lists
#     it as slurm-<job id>;
#   - scancel of a running job goes through pinpoint's safe cancel (pinpoint cancels it);
#   - a pinpoint job a Slurm job left behind is cancelled by the Epilog;
#   - per-job accounting (watcher samples) is there afterwards;
#   - the node was never drained (every Prolog and Epilog succeeded).
# Every wait is a bounded poll of a condition. Needs root (mknod, slurmd) and Debian's slurmctld,
# slurmd, slurm-client, munge and jq: skipped (exit 77) without them. Usage: slurm_test.sh BIN_DIR
# (PP_KEEP_SCRATCH=1 keeps the scratch directory, Slurm's logs included, for a look afterwards)
set -uo pipefail
BIN=$(readlink -f "${1:?usage: slurm_test.sh BIN_DIR}")
HERE=$(cd "$(dirname "$0")" && pwd)
[[ $(id -u) == 0 ]] || { echo "needs root: skipped"; exit 77; }
for b in slurmctld slurmd sbatch munged jq; do
  command -v $b >/dev/null || { echo "no $b (scripts/install-deps.sh installs it): skipped"; exit 77; }
done

S=$(mktemp -d /tmp/pps-XXXXXX)  # short: Unix socket paths
chmod 0755 "$S"  # munged wants every directory above its socket searchable
PP=$S/pp
mkdir -p "$PP" "$S/dev" "$S/out" "$S/hooks"
# shellcheck source=../shell/lib.sh
source "$HERE/../shell/lib.sh"

cleanup() {
  if [[ $failed -gt 0 || $passed -eq 0 ]]; then  # what Slurm and pinpointd saw, before stopping them
    if [[ -n ${SLURM_CONF:-} ]]; then  # the cluster came up
      echo "--- Slurm: nodes, jobs"
      sinfo -N -o '%N %T %E' 2>&1; squeue -o '%i %T %R' 2>&1
      echo "--- pinpointd: jobs"; "$BIN/pinpoint" queue --all 2>&1
      echo "--- job outputs"; tail -n 5 "$S"/out/*.out 2>&1
      echo "--- Slurm logs"; tail -n 25 "$S"/slurm/log/* 2>&1
    fi
    echo "--- pinpointd log"; tail -n 30 "$PP/pinpointd.log"
  fi
  SC_GRES_CONF=/dev/null SC_NODE_GRES=x bash "$HERE/cluster.sh" down "$S/slurm" >/dev/null 2>&1
  stop_pinpointd
  [[ -n ${PP_KEEP_SCRATCH:-} ]] || rm -rf "$S"
}
trap cleanup EXIT

# --- pinpointd on a simulated node
start_pinpointd "$BIN" "$PP" '"watch_interval_ms": 100' || { bad "pinpointd started"; exit 1; }
export PATH=$BIN:$PATH

# --- gres.conf from pinpoint, fake /dev/nvidiaN (char 195,N) and the Slurm cluster
pinpoint slurm conf --dev-dir "$S/dev" > "$S/gres.conf" || { bad "pinpoint slurm conf"; exit 1; }
node_gres=$(pinpoint slurm conf --node-line | sed -n 's/^NodeName=.* Gres=//p')
check "gres.conf has a gpu and a shard line per GPU" \
  test "$(grep -c '^Name=gpu File=' "$S/gres.conf")$(grep -c '^Name=shard Count=79 File=' "$S/gres.conf")" = 22
check "node line counts 2 GPUs and 158 shards" test "$node_gres" = "gpu:2,shard:158"
for i in 0 1; do mknod -m 0666 "$S/dev/nvidia$i" c 195 "$i"; done
for hook in prolog epilog; do
  # slurmd runs hooks with a bare environment: they name the socket themselves.
  printf '#!/bin/sh\nexec env PINPOINT_SOCKET=%s PINPOINT_BIN=%s %s slurm %s\n' \
    "$PP/sock" "$BIN/pinpoint" "$BIN/pinpoint" "$hook" > "$S/hooks/$hook"
  chmod 0755 "$S/hooks/$hook"
done
SC_GRES_CONF=$S/gres.conf SC_NODE_GRES=$node_gres SC_PROLOG=$S/hooks/prolog SC_EPILOG=$S/hooks/epilog \
  bash "$HERE/cluster.sh" up "$S/slurm" || { bad "Slurm cluster started"; exit 1; }
export SLURM_CONF=$S/slurm/etc/slurm.conf
ok "Slurm cluster started with pinpoint's gres.conf"

# --- jobs: three slices held until $S/go exists, then a whole GPU
show_env='echo "slurm=$SLURM_JOB_ID visible=$CUDA_VISIBLE_DEVICES limit=${CUDA_MPS_PINNED_DEVICE_MEM_LIMIT:-none} gpus=$SLURM_JOB_GPUS"'
hold="while [ ! -e $S/go ]; do sleep 0.1; done"
submit() {  # submit GRES COMMAND: prints the Slurm job id
  sbatch --parsable --gres="$1" -o "$S/out/%j.out" --wrap "pinpoint slurm run -- sh -c '$2'"
}
a=$(submit shard:4 "$show_env; $hold") && b=$(submit shard:8 "$show_env; $hold") &&
  d=$(submit shard:2 "$show_env; $hold") || { bad "sbatch"; exit 1; }
pinpoint_state() {  # pinpoint_state SLURM_ID: the state of pinpoint's job slurm-SLURM_ID
  pinpoint --json queue --all | jq -r --arg n "slurm-$1" '[.[] | select(.request.name == $n)][-1].state // "none"'
}
running() { for id in "$@"; do [[ $(pinpoint_state "$id") == running ]] || return 1; done; }
check "slices of jobs $a, $b, $d run in pinpointd as slurm-<id>" poll 60 running "$a" "$b" "$d"
slurm_running() { [[ $(squeue -h -j "$1" -o %T) == RUNNING ]]; }
check "Slurm runs them at once" poll 30 bash -c "$(declare -f slurm_running); slurm_running $a && slurm_running $b && slurm_running $d"
# Slurm 22.05 may give a GPU whose shards are in use to a gpu:1 job too; pinpointd then keeps
# that job waiting until the GPU is empty, so it completes either way.
c=$(submit gpu:1 "$show_env") || { bad "sbatch gpu:1"; exit 1; }
check "the gpu:1 job $c reached pinpointd" poll 60 bash -c "$(declare -f pinpoint_state); [[ \$(pinpoint_state $c) != none ]]"

# --- scancel goes through pinpoint's cancel
scancel "$d"
check "scancel of $d: pinpoint cancelled its job" poll 60 bash -c "$(declare -f pinpoint_state); [[ \$(pinpoint_state $d) == cancelled ]]"
record_d=$(pinpoint --json queue --all | jq -c --arg n "slurm-$d" '[.[] | select(.request.name == $n)][-1]')
check "its record says who cancelled it" test "$(jq -r '.cancelled_by != "" and .reason == "cancelled"' <<< "$record_d")" = true
check "Slurm's job $d is gone" poll 60 bash -c "[[ -z \$(squeue -h -j $d -o %T 2>/dev/null) ]]"

# --- a pinpoint job left behind by its Slurm job is cancelled by the Epilog
e=$(sbatch --parsable --gres=shard:1 -o "$S/out/%j.out" \
  --wrap 'pinpoint submit --name slurm-$SLURM_JOB_ID --device 0 --gpu-mem 1G -- sleep 600')
check "Epilog cancels what Slurm job $e left in pinpointd" \
  poll 60 bash -c "$(declare -f pinpoint_state); [[ \$(pinpoint_state $e) == cancelled ]]"

# --- accounting while they run, then let them finish
id_a=$(pinpoint --json queue --all | jq -r --arg n "slurm-$a" '[.[] | select(.request.name == $n)][-1].id')
check "the watcher accounts job $a" poll 60 bash -c "[[ \$(pinpoint --json show $id_a | jq '.job.usage.samples') -ge 1 ]]"
touch "$S/go"
check "every Slurm job ended" poll 90 bash -c '[[ -z $(squeue -h -o %i) ]]'
# A failing Prolog or Epilog drains the node; pinpoint's must not fail on a job that ended.
check "the node is idle, not drained" poll 30 bash -c '[[ $(sinfo -h -N -o %T) == idle ]]'
for id in "$a" "$b" "$c"; do
  check "job $id completed in pinpointd" test "$(pinpoint_state "$id")" = completed
done

# --- what each job saw
uuid() { pinpoint --json gpus | jq -r --argjson i "$1" '.devices[$i].uuid'; }
expect_env() {  # expect_env SLURM_ID LIMIT
  local line gpu
  line=$(grep '^slurm=' "$S/out/$1.out")
  gpu=$(sed -n 's/.* gpus=\([0-9]*\).*/\1/p' <<< "$line")
  [[ $line == "slurm=$1 visible=$(uuid "$gpu") limit=$2 gpus=$gpu" ]] || { echo "  job $1 saw: $line"; return 1; }
}
check "shard:4 job sees its GPU and 4 GiB" expect_env "$a" 0=4096M
check "shard:8 job sees its GPU and 8 GiB" expect_env "$b" 0=8192M
check "gpu:1 job sees its whole GPU, no MPS limit" expect_env "$c" none
check "a job without a GPU is refused with one line" \
  bash -c "out=\$(SLURM_JOB_ID=1 SLURM_JOB_GPUS= pinpoint slurm run -- true 2>&1); [[ \$out == 'pinpoint slurm: run: job 1 has no GPU'* ]]"

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
