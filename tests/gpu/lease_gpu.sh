#!/usr/bin/env bash
# Leases (docs/containers.md) on a real GPU, without a container runtime: the lent GPU machines
# have no podman, so each "container" is a process in a cgroup of its own, attached and closed by
# pinpoint-cdi-hook exactly as the CDI spec's createRuntime and poststop hooks would run it, with
# the spec's environment. Two leases of one user on one GPU, each with its slice, each running a
# CUDA program under the user's MPS server; a program allocating past its slice fails alone.
# Usage: tests/gpu/lease_gpu.sh BIN_DIR   (BIN_DIR holds pinpointd, pinpoint, pinpoint-shim,
# pinpoint-cdi-hook, pp-busy and lib/). Needs root, cgroup v2, jq or python3.
# Prints PASS/FAIL lines and "N passed, M failed"; quits the MPS daemons it started.
set -u
SRC=$(readlink -f "${1:?usage: lease_gpu.sh BIN_DIR}")
W=$(mktemp -d /tmp/pp-lease-XXXXXX); chmod 755 "$W"
BIN=$W/bin; mkdir -p "$BIN"; cp -r "$SRC"/* "$BIN"/; chmod -R a+rX "$BIN"; chmod 755 "$BIN"/pp* "$BIN"/pinpoint*
export PINPOINT_SOCKET=$W/sock
P="$BIN/pinpoint"
. "$(dirname "$(readlink -f "$0")")/lib.sh"
CDI=$W/cdi; mkdir -m 755 "$CDI"
CG=/sys/fs/cgroup
containers=()
cleanup() {
  for c in "${containers[@]}"; do
    [ -d "$CG/$c" ] || continue
    while read -r pid; do kill -KILL "$pid" 2>/dev/null; done < "$CG/$c/cgroup.procs"
    rmdir "$CG/$c" 2>/dev/null
  done
  [ -n "${DAEMON:-}" ] && kill -TERM "$DAEMON" 2>/dev/null && wait "$DAEMON"
  sleep 1; pkill -f '^(/[^ ]*/)?nvidia-cuda-mps-(server|control)( |$)'
  [ -n "${PP_GPU_LOGS:-}" ] && mkdir -p "$PP_GPU_LOGS" && cp "$W/pinpointd.log" "$PP_GPU_LOGS/" 2>/dev/null
}
trap cleanup EXIT; trap "exit 1" TERM INT
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(date -u +%FT%TZ)"
[ -f "$CG/cgroup.controllers" ] || { echo "NOT RUN: no cgroup v2 at $CG"; exit 0; }
id ppa >/dev/null 2>&1 || useradd -M ppa
UIDA=$(id -u ppa); GIDA=$(id -g ppa)
cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "nvml", "mps": "daemons",
 "mps_idle_quit_ms": 2000, "cancel_grace_ms": 3000, "cdi_dir": "$CDI", "watch_interval_ms": 500}
CFG
start_pinpointd || { echo "FAIL pinpointd did not start"; tail -5 "$W/pinpointd.log"; exit 1; }

# A "container": a process of ppa's parked in cgroup $1 (moved there by root, then run as ppa, as
# a runtime does; a cgroup holding another user's process is refused, docs/security.md), and a
# bundle whose config.json names ppa.
start_container() {
  local name=$1
  mkdir "$CG/$name" && containers+=("$name")
  mkdir -p "$W/bundle-$name"
  echo "{\"ociVersion\": \"1.0.2\", \"process\": {\"user\": {\"uid\": $UIDA, \"gid\": $GIDA}}}" > "$W/bundle-$name/config.json"
  sh -c "echo \$\$ > $CG/$name/cgroup.procs; exec setpriv --reuid=$UIDA --regid=$GIDA --clear-groups sleep 600" > /dev/null 2>&1 &
  echo $!
}
# The spec's hook for lease $1 (verb $2: attach or close), fed the OCI state a runtime would feed it.
hook() {
  local lease=$1 verb=$2 name=$3 pid=${4:-}
  local state="{\"ociVersion\": \"1.0.2\", \"id\": \"$name\", \"status\": \"created\", \"bundle\": \"$W/bundle-$name\""
  [ -n "$pid" ] && state="$state, \"pid\": $pid"
  echo "$state}" | "$BIN/pinpoint-cdi-hook" "$verb" "$lease" --socket "$W/sock" --cdi-dir "$CDI"
}
# Runs pp-busy ARGS in container $1's cgroup as ppa with exactly the spec's environment.
run_in() {
  local name=$1 spec=$2; shift 2
  local envs; envs=$(python3 -c "import json,sys; print('\n'.join(json.load(open(sys.argv[1]))['devices'][0]['containerEdits']['env']))" "$spec")
  local -a vars; mapfile -t vars <<< "$envs"
  sh -c "echo \$\$ > $CG/$name/cgroup.procs; exec setpriv --reuid=$UIDA --regid=$GIDA --clear-groups env -i PATH=/usr/bin:/bin \"\$@\"" \
    sh "${vars[@]}" "$BIN/pp-busy" "$@"
}

dev1=$("$P" cdi --gpu-mem 4G --gpu-share 30 --user ppa --name c1 --cdi-dir "$CDI"); rc1=$?
dev2=$("$P" cdi --gpu-mem 4G --gpu-share 30 --user ppa --name c2 --cdi-dir "$CDI"); rc2=$?
echo "leases: $dev1 $dev2"
check "two leases opened on one GPU" test "$rc1" = 0 -a "$rc2" = 0
l1=${dev1#pinpoint.io/slice=L}; l2=${dev2#pinpoint.io/slice=L}
s1=$CDI/pinpoint.io-slice-L$l1.json; s2=$CDI/pinpoint.io-slice-L$l2.json
python3 -c "import json,sys; print(json.dumps(json.load(open(sys.argv[1]))['devices'][0]['containerEdits']['env'], indent=1))" "$s1"
p1=$(start_container "ppc1-$$"); p2=$(start_container "ppc2-$$")
hook "$l1" attach "ppc1-$$" "$p1"; a1=$?
hook "$l2" attach "ppc2-$$" "$p2"; a2=$?
check "the createRuntime hook attached each lease to its cgroup" test "$a1" = 0 -a "$a2" = 0
"$P" show "$l1" | sed -n '/state:/p;/cgroup:/p'
check "the lease shows its cgroup" sh -c "\"$P\" --json show $l1 | grep -q '\"lease_cgroup\": \"0::/ppc1-$$\"'"

run_in "ppc1-$$" "$s1" --blocks 4 --iters 4000000 --alloc-mib 1024 > "$W/c1.out" 2>&1 & j1=$!
run_in "ppc2-$$" "$s2" --blocks 4 --iters 4000000 --alloc-mib 1024 > "$W/c2.out" 2>&1 & j2=$!
run_in "ppc2-$$" "$s2" --alloc-mib 6144 > "$W/c2-over.out" 2>&1 & j3=$!
wait $j1; r1=$?; wait $j2; r2=$?; wait $j3; r3=$?
for f in c1 c2 c2-over; do echo "--- $f"; grep -E "^env CUDA_MPS|pp-busy|allocated" "$W/$f.out"; done
check "container 1's CUDA program ran within its slice" test "$r1" = 0
check "container 2's CUDA program ran within its slice" test "$r2" = 0
check "a program allocating past its 4 GiB slice failed alone (exit 3: out of memory)" test "$r3" = 3
check "container 1 ran under the MPS server of its user" grep -q "CUDA_MPS_PIPE_DIRECTORY=$W/state/mps/dev0/$UIDA/pipe" "$W/c1.out"
check "container 1's device memory limit is its slice" grep -q "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=4096M" "$W/c1.out"

# The container ends: its processes exit, then the runtime runs the poststop hook.
while read -r pid; do kill -KILL "$pid" 2>/dev/null; done < "$CG/ppc1-$$/cgroup.procs"
wait "$p1" 2>/dev/null
hook "$l1" close "ppc1-$$"; c1=$?
check "the poststop hook closed lease 1" test "$c1" = 0
wait_for 10 sh -c "test \"\$(\"$P\" --json show $l1 | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"job\"][\"state\"])')\" = completed"
"$P" show "$l1" | sed -n '/state:/,/detail:/p'
check "lease 1 ended completed and its spec is gone" sh -c "test \"\$(\"$P\" --json show $l1 | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"job\"][\"state\"])')\" = completed && ! test -e $s1"
check "lease 2 still runs" test "$("$P" --json show "$l2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["job"]["state"])')" = running
"$P" cancel "$l2" > /dev/null
wait_for 15 sh -c "test \"\$(\"$P\" --json show $l2 | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"job\"][\"state\"])')\" != running"
check "a cancelled lease's container processes were stopped" sh -c "! kill -0 $p2 2>/dev/null || grep -q '^State:.*Z' /proc/$p2/status"
"$P" queue --all | head -5
echo "$passed passed, $failed failed"
