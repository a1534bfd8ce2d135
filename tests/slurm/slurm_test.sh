#!/usr/bin/env bash
# ctest slurm: pinpoint under a real Slurm cluster of three nodes on this machine
# (tests/slurm/cluster.sh): munged and slurmctld here, and three slurmd, each in its own network
# namespace with its own address and its own pinpointd on a simulated node of another shape:
#   pp1  two H100s (MPS)     pp2  four A100s (MPS)     pp3  one H100 in `exclusive` mode
# The cluster's gres.conf and node lines come from `pinpoint slurm conf` on each node; the GPU
# device files are fake; pinpoint's Prolog, Epilog and HealthCheckProgram run on every node.
# Then, with sbatch and scancel:
#   - shard and whole-GPU jobs land only where they fit (shards never on the exclusive GPU, four
#     GPUs only on pp2), each node's running jobs are the same for Slurm and for its pinpointd,
#     and each job runs under the slice its node's pinpointd made (device, memory limit);
#   - scancel goes through pinpoint's safe cancel on the job's node; the Epilog cancels what a
#     Slurm job left behind; the watcher accounts each job;
#   - an array of 300 small jobs spreads over the nodes that take shards and all complete, each
#     once, in Slurm and in the pinpointds;
#   - a node whose pinpointd stops answering is drained by the health check, new jobs go to the
#     others, and it comes back, and runs jobs again, once its pinpointd does;
#   - no node was ever drained otherwise, and nothing is left running at the end.
# Every wait is a bounded poll of a condition. Needs root (netns, mknod, slurmd), iproute2 and
# Debian's slurmctld, slurmd, slurm-client, munge and jq: skipped (exit 77) without them.
# Usage: slurm_test.sh BIN_DIR (PP_KEEP_SCRATCH=1 keeps the scratch directory, Slurm's logs
# included, for a look afterwards)
set -uo pipefail
BIN=$(readlink -f "${1:?usage: slurm_test.sh BIN_DIR}")
HERE=$(cd "$(dirname "$0")" && pwd)
[[ $(id -u) == 0 ]] || { echo "needs root: skipped"; exit 77; }
for b in slurmctld slurmd sbatch munged jq ip nsenter; do
  command -v $b >/dev/null || { echo "no $b (scripts/install-deps.sh installs it): skipped"; exit 77; }
done
if ! ip netns add "pps-probe-$$" 2>/dev/null; then echo "cannot make a network namespace here: skipped"; exit 77; fi
ip netns del "pps-probe-$$"

S=$(mktemp -d /tmp/pps-XXXXXX)  # short: Unix socket paths
chmod 0755 "$S"  # munged wants every directory above its socket searchable
mkdir -p "$S/out" "$S/arr" "$S/hooks" "$S/bin"
C=$S/slurm  # the cluster's directory
NODES=(pp1 pp2 pp3)
declare -A DAEMON_PID
# shellcheck source=../shell/lib.sh
source "$HERE/../shell/lib.sh"
cluster() { bash "$HERE/cluster.sh" "$@"; }
ppn() { local node=$1; shift; PINPOINT_SOCKET=$S/$node/sock "$BIN/pinpoint" "$@"; }

cleanup() {
  if [[ $failed -gt 0 || $passed -eq 0 ]]; then  # what Slurm and the pinpointds saw, before stopping them
    if [[ -n ${SLURM_CONF:-} ]]; then  # the cluster came up
      echo "--- Slurm: nodes, jobs"
      sinfo -N -o '%N %T %E' 2>&1; squeue -o '%i %T %N %R' 2>&1 | head -n 40
      echo "--- job outputs"; tail -n 5 "$S"/out/*.out 2>&1 | head -n 60
      echo "--- Slurm logs"; tail -n 25 "$C"/log/*.log 2>&1
    fi
    for node in "${NODES[@]}"; do
      echo "--- $node: pinpointd's jobs and log"
      ppn "$node" queue 2>&1 | head -n 20; tail -n 20 "$S/$node/pinpointd.log" 2>&1
    done
  fi
  if [[ -n ${SLURM_CONF:-} ]]; then  # Slurm's jobs end through their pinpointd before it stops
    scancel --full --quiet 2>/dev/null
    poll 30 bash -c '[[ -z $(squeue -h -o %i) ]]'
  fi
  for node in "${!DAEMON_PID[@]}"; do stop_daemon "$node"; done
  cluster down "$C" || bad "the cluster stopped with nothing left behind"
  [[ -n ${PP_KEEP_SCRATCH:-} ]] || rm -rf "$S"
}
trap cleanup EXIT

# --- three network namespaces, and in each a pinpointd on a simulated node of its own shape
cluster net "$C" "${NODES[@]}" || { bad "network namespaces made"; exit 1; }
cat > "$S/a100x4.json" <<'EOF'
{"gpus": [{"name": "NVIDIA A100-SXM4-80GB", "mem": "80G", "sm_count": 108},
          {"name": "NVIDIA A100-SXM4-80GB", "mem": "80G", "sm_count": 108},
          {"name": "NVIDIA A100-SXM4-80GB", "mem": "80G", "sm_count": 108},
          {"name": "NVIDIA A100-SXM4-80GB", "mem": "80G", "sm_count": 108}]}
EOF
cat > "$S/h100x1.json" <<'EOF'
{"gpus": [{"name": "NVIDIA H100 80GB HBM3", "mem": "80G", "sm_count": 132}]}
EOF
start_daemon() {  # start_daemon NODE: its pinpointd, in NODE's namespace; returns once it answers
  local node=$1 d=$S/$1 backend extra=""
  case $node in
    pp1) backend=simulated:h100x2 ;;
    pp2) backend=simulated-file:$S/a100x4.json ;;
    pp3) backend=simulated-file:$S/h100x1.json extra=', "gpu_modes": {"0": "exclusive"}' ;;
  esac
  mkdir -p "$d/dev"
  cat > "$d/config.json" <<CFG
{"state_dir": "$d/state", "socket_path": "$d/sock", "backend": "$backend", "host_cpus": 64,
 "cancel_grace_ms": 2000, "metrics_listen": "127.0.0.1:0", "watch_interval_ms": 100$extra}
CFG
  # cluster.sh execs nsenter, which execs pinpointd: $! is pinpointd's pid.
  bash "$HERE/cluster.sh" exec "$C" "$node" "$BIN/pinpointd" --config "$d/config.json" >> "$d/pinpointd.log" 2>&1 &
  DAEMON_PID[$node]=$!
  poll 30 ppn "$node" gpus
}
stop_daemon() {
  local pid=${DAEMON_PID[$1]:-}
  [[ -n $pid ]] || return 0
  kill -TERM "$pid" 2>/dev/null
  poll 20 bash -c "! kill -0 $pid" || kill -KILL "$pid" 2>/dev/null
  unset "DAEMON_PID[$1]"
}
for node in "${NODES[@]}"; do
  start_daemon "$node" || { bad "pinpointd of $node started"; exit 1; }
done
ok "a pinpointd runs in each node's namespace"
check "pp1's pinpointd is in pp1's namespace" \
  test "$(readlink "/proc/${DAEMON_PID[pp1]}/ns/net")" = "$(cluster exec "$C" pp1 readlink /proc/self/ns/net)"

# On this machine every node shares one file system, so a job finds its node's pinpointd by
# SLURMD_NODENAME; on a real node it is the one socket (/run/pinpoint/sock).
cat > "$S/bin/pinpoint" <<EOF
#!/bin/sh
if [ -n "\${SLURMD_NODENAME:-}" ]; then PINPOINT_SOCKET=$S/\$SLURMD_NODENAME/sock; export PINPOINT_SOCKET; fi
exec "$BIN/pinpoint" "\$@"
EOF
chmod 0755 "$S/bin/pinpoint"
export PATH=$S/bin:$PATH PINPOINT_BIN=$S/bin/pinpoint

# --- gres.conf and node lines from each node's `pinpoint slurm conf`, fake /dev/nvidiaN
: > "$S/gres.conf"; : > "$S/node_lines"
for node in "${NODES[@]}"; do
  ppn "$node" slurm conf --node "$node" --dev-dir "$S/$node/dev" >> "$S/gres.conf" || { bad "slurm conf on $node"; exit 1; }
  ppn "$node" slurm conf --node "$node" --node-line | grep '^NodeName=' >> "$S/node_lines"
  count=$(ppn "$node" --json gpus | jq '.devices | length')
  for ((i = 0; i < count; i++)); do mknod -m 0666 "$S/$node/dev/nvidia$i" c 195 "$i"; done
done
check "node lines: 2 H100s with shards, 4 A100s with shards, an exclusive H100 without" \
  test "$(tr '\n' ';' < "$S/node_lines")" = "NodeName=pp1 Gres=gpu:2,shard:158;NodeName=pp2 Gres=gpu:4,shard:320;NodeName=pp3 Gres=gpu:1;"
check "gres.conf: a gpu line per GPU, shard lines only where jobs share" \
  test "$(grep -c '^NodeName=pp[123] Name=gpu File=' "$S/gres.conf") $(grep -c 'Name=shard' "$S/gres.conf") $(grep -c '^NodeName=pp3 Name=shard' "$S/gres.conf")" = "7 6 0"
for hook in prolog epilog health; do
  # slurmd runs hooks with a bare environment: they name the socket and slurm.conf themselves.
  printf '#!/bin/sh\nexec env SLURM_CONF=%s PINPOINT_BIN=%s %s slurm %s\n' \
    "$C/etc/slurm.conf" "$S/bin/pinpoint" "$S/bin/pinpoint" "$hook" > "$S/hooks/$hook"
  chmod 0755 "$S/hooks/$hook"
done
SC_GRES_CONF=$S/gres.conf SC_NODE_LINES=$S/node_lines SC_PROLOG=$S/hooks/prolog SC_EPILOG=$S/hooks/epilog \
  SC_HEALTH=$S/hooks/health SC_HEALTH_INTERVAL=2 cluster up "$C" || { bad "Slurm cluster started"; exit 1; }
export SLURM_CONF=$C/etc/slurm.conf
ok "a Slurm cluster of three nodes started with pinpoint's gres.conf"

# --- jobs: slices held until $S/go exists, whole GPUs
show_env='echo "slurm=$SLURM_JOB_ID node=$SLURMD_NODENAME visible=$CUDA_VISIBLE_DEVICES limit=${CUDA_MPS_PINNED_DEVICE_MEM_LIMIT:-none} gpus=$SLURM_JOB_GPUS"'
hold="while [ ! -e $S/go ]; do sleep 0.1; done"
submit() {  # submit GRES COMMAND [SBATCH-OPTIONS...]: prints the Slurm job id
  local gres=$1 command=$2; shift 2
  sbatch --parsable --gres="$gres" -o "$S/out/%j.out" "$@" --wrap "pinpoint slurm run -- sh -c '$command'"
}
# The node of a Slurm job, while it runs and after it ended (MinJobAge keeps it 300 s).
node_of() { scontrol -o show job "$1" | sed -n 's/.* NodeList=\([^ ]*\).*/\1/p'; }
pinpoint_state() {  # pinpoint_state NODE SLURM_ID: the state of job slurm-SLURM_ID in NODE's pinpointd
  ppn "$1" --json queue --all --limit 10000 | jq -r --arg n "slurm-$2" '[.[] | select(.request.name == $n)][-1].state // "none"'
}
state_is() { [[ $(pinpoint_state "$1" "$2") == "$3" ]]; }  # state_is NODE SLURM_ID STATE
runs_on() {  # runs_on SLURM_ID...: each runs in Slurm and in the pinpointd of the node Slurm chose
  local id node
  for id in "$@"; do
    [[ $(squeue -h -j "$id" -o %T) == RUNNING ]] || return 1
    node=$(node_of "$id")
    [[ $(pinpoint_state "$node" "$id") == running ]] || return 1
  done
}
a=$(submit shard:4 "$show_env; $hold") && b=$(submit shard:8 "$show_env; $hold") &&
  d=$(submit shard:2 "$show_env; $hold") && f=$(submit gpu:4 "$show_env; $hold") &&
  c=$(submit gpu:1 "$show_env; $hold" -w pp3) || { bad "sbatch"; exit 1; }
check "jobs $a $b $d (shards), $f (four GPUs) and $c (the exclusive GPU) run in Slurm and in their node's pinpointd" \
  poll 60 runs_on "$a" "$b" "$d" "$f" "$c"
check "the four-GPU job runs on pp2, the only node with four" test "$(node_of "$f")" = pp2
check "the shard jobs run where GPUs are shared" \
  bash -c "[[ \$(squeue -h -j $a,$b,$d -o %N | sort -u | tr '\n' ' ') != *pp3* ]]"
check "a shard job asked of the exclusive node is refused by Slurm" \
  bash -c "! sbatch --parsable --gres=shard:1 -w pp3 --wrap true 2>/dev/null"
same_jobs() {  # same_jobs NODE: the jobs Slurm runs there are the ones its pinpointd runs
  local slurm pinpoint
  slurm=$(squeue -h -w "$1" -t R -o %i | sort -n | sed 's/^/slurm-/' | tr '\n' ' ')
  pinpoint=$(ppn "$1" --json queue | jq -r '.[] | select(.state == "running") | .request.name' | sort -t- -k2 -n | tr '\n' ' ')
  [[ $slurm == "$pinpoint" ]] || { echo "  $1: Slurm runs $slurm, pinpointd $pinpoint"; return 1; }
}
for node in "${NODES[@]}"; do check "$node: Slurm and its pinpointd run the same jobs" same_jobs "$node"; done
slice_mem() {  # slice_mem SLURM_ID: the device memory pinpointd gave the job, in GiB
  ppn "$(node_of "$1")" --json queue | jq -r --arg n "slurm-$1" '.[] | select(.request.name == $n) | .request.gpu_mem_bytes / 1073741824'
}
check "each shard job's slice is its shards in GiB (4, 8, 2)" test "$(slice_mem "$a") $(slice_mem "$b") $(slice_mem "$d")" = "4 8 2"

# --- scancel goes through pinpoint's cancel on the job's node
node_d=$(node_of "$d")
scancel "$d"
check "scancel of $d: $node_d's pinpointd cancelled its job" poll 60 state_is "$node_d" "$d" cancelled
ended_in_slurm() { [[ -z $(squeue -h -j "$1" -o %T 2>/dev/null) ]]; }
check "Slurm's job $d is gone" poll 60 ended_in_slurm "$d"

# --- a pinpoint job left behind by its Slurm job is cancelled by the Epilog
e=$(sbatch --parsable --gres=shard:1 -o "$S/out/%j.out" \
  --wrap 'pinpoint submit --name slurm-$SLURM_JOB_ID --device 0 --gpu-mem 1G -- sleep 600')
check "Slurm job $e ended" poll 60 ended_in_slurm "$e"
e_node=$(node_of "$e")
check "the Epilog on $e_node cancelled what Slurm job $e left in its pinpointd" \
  poll 60 state_is "$e_node" "$e" cancelled

# --- accounting while they run, then let them finish
node_a=$(node_of "$a")
id_a=$(ppn "$node_a" --json queue | jq -r --arg n "slurm-$a" '.[] | select(.request.name == $n) | .id')
sampled() { [[ $(ppn "$1" --json show "$2" | jq '.job.usage.samples') -ge 1 ]]; }
check "$node_a's watcher accounts job $a" poll 60 sampled "$node_a" "$id_a"
touch "$S/go"
check "every Slurm job ended" poll 90 bash -c '[[ -z $(squeue -h -o %i) ]]'
for id in "$a" "$b" "$f" "$c"; do
  node=$(node_of "$id")
  check "job $id completed in $node's pinpointd" test "$(pinpoint_state "$node" "$id")" = completed
done

# --- what each job saw: its node's GPUs and its slice
uuids() {  # uuids NODE INDEX...: the UUIDs of those GPUs of NODE, comma-separated
  local node=$1; shift
  ppn "$node" --json gpus | jq -r --arg want "$*" '[.devices[] | select(.index as $i | $want | split(" ") | map(tonumber) | index($i))] | map(.uuid) | join(",")'
}
expect_env() {  # expect_env SLURM_ID LIMIT
  local line node gpus
  line=$(grep '^slurm=' "$S/out/$1.out")
  node=$(sed -n 's/.* node=\([^ ]*\).*/\1/p' <<< "$line")
  gpus=$(sed -n 's/.* gpus=\([0-9,]*\).*/\1/p' <<< "$line")
  [[ $line == "slurm=$1 node=$node visible=$(uuids "$node" ${gpus//,/ }) limit=$2 gpus=$gpus" ]] ||
    { echo "  job $1 saw: $line"; return 1; }
}
check "shard:4 job sees its node's GPU and 4 GiB" expect_env "$a" 0=4096M
check "shard:8 job sees its node's GPU and 8 GiB" expect_env "$b" 0=8192M
check "gpu:4 job sees pp2's four GPUs, no MPS limit" expect_env "$f" none
check "gpu:1 job sees pp3's exclusive GPU, no MPS limit" expect_env "$c" none
check "a job without a GPU is refused with one line" \
  bash -c "out=\$(SLURM_JOB_ID=1 SLURM_JOB_GPUS= pinpoint slurm run -- true 2>&1); [[ \$out == 'pinpoint slurm: run: job 1 has no GPU'* ]]"

# --- an array of 300 small jobs
tasks=300
arr=$(sbatch --parsable --array="1-$tasks" --gres=shard:1 -o "$S/arr/%a.out" \
  --wrap 'echo "node=$SLURMD_NODENAME"; pinpoint slurm run -- sh -c "echo task=\$SLURM_ARRAY_TASK_ID"') ||
  { bad "sbatch --array"; exit 1; }
check "every task of array $arr ended in Slurm" poll 300 bash -c "[[ -z \$(squeue -h -j $arr -o %i) ]]"
scontrol -o show job "$arr" > "$S/array.txt"
check "Slurm says all $tasks tasks completed with exit code 0" \
  test "$(grep -c 'JobState=COMPLETED .*ExitCode=0:0' "$S/array.txt")" = "$tasks"
task_ok() { [[ $(grep -c '^task=' "$S/arr/$1.out") == 1 && $(grep '^task=' "$S/arr/$1.out") == "task=$1" ]]; }
missing=""; for ((i = 1; i <= tasks; i++)); do task_ok "$i" || missing+=" $i"; done
check "each task printed its own index once" test -z "$missing"
sed -n 's/.*JobId=\([0-9]*\) ArrayJobId=.*/slurm-\1/p' "$S/array.txt" | sort > "$S/array_ids"
: > "$S/array_runs"
for node in "${NODES[@]}"; do
  ppn "$node" --json queue --all --limit 10000 |
    jq -r --arg node "$node" '.[] | select(.request.name | startswith("slurm-")) | "\(.request.name) \(.state) \($node)"' >> "$S/array_runs"
done
check "the pinpointds ran each task once, and each completed" \
  test "$(grep -F -w -f "$S/array_ids" "$S/array_runs" | sort | awk '{print $1, $2}' | uniq -c | awk '$1 == 1 && $3 == "completed"' | wc -l)" = "$tasks"
per_node=$(for node in "${NODES[@]}"; do grep -l "^node=$node$" "$S"/arr/*.out | wc -l; done | tr '\n' ' ')
echo "  tasks per node (pp1 pp2 pp3): $per_node"
check "the tasks spread over pp1 and pp2, none on the exclusive pp3" \
  bash -c "read -r n1 n2 n3 <<< '$per_node'; ((n1 > 0 && n2 > 0 && n3 == 0 && n1 + n2 == $tasks))"

# --- a node whose pinpointd stops answering is drained, and comes back when it answers again
stop_daemon pp2
drained_for_pinpointd() { [[ $(sinfo -h -N -n "$1" -o '%T|%E') == drain*'|pinpointd not answering'* ]]; }
not_drained() { [[ -n $(sinfo -h -N -n "$1" -o '%T') && $(sinfo -h -N -n "$1" -o '%T') != drain* ]]; }
check "the health check drains pp2, whose pinpointd stopped" poll 60 drained_for_pinpointd pp2
hold2="while [ ! -e $S/go2 ]; do sleep 0.1; done"
g=$(submit shard:1 "$show_env; $hold2") && h=$(submit gpu:4 "$show_env") || { bad "sbatch while pp2 is drained"; exit 1; }
check "a new shard job $g runs, in Slurm and in pinpoint" poll 60 runs_on "$g"
check "it runs on pp1, not on the drained pp2" test "$(node_of "$g")" = pp1
check "the four-GPU job waits while pp2 is drained" test "$(squeue -h -j "$h" -o %T)" = PENDING
start_daemon pp2 || bad "pinpointd of pp2 started again"
check "the health check resumes pp2 once its pinpointd answers" poll 60 not_drained pp2
check "the four-GPU job then runs on pp2 and completes" poll 60 state_is pp2 "$h" completed
touch "$S/go2"
check "every Slurm job ended" poll 90 bash -c '[[ -z $(squeue -h -o %i) ]]'
check "job $g completed in pp1's pinpointd" state_is pp1 "$g" completed
# A failing Prolog or Epilog drains a node; pinpoint's must not fail on a job that ended.
check "every node is idle, none drained" poll 30 bash -c '[[ $(sinfo -h -N -o %T | sort -u) == idle ]]'

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
