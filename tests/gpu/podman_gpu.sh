#!/usr/bin/env bash
# Two podman containers on one real GPU, each with its pinpoint slice through CDI
# (docs/containers.md): `pinpoint cdi` opens a lease and writes its spec, `podman run --device
# pinpoint.io/slice=L<id>` applies it (device nodes, environment, the MPS pipe directory) and
# runc runs the spec's hooks (pinpoint-cdi-hook attach at createRuntime, close at poststop).
# Each container runs a CUDA program under its user's MPS server with its slice's limit; one
# allocating past its slice fails alone; a container of another uid is refused; leases end with
# their containers.
# The lent GPU machines have no container runtime: PODMAN_BUNDLE is tests/gpu/podman_bundle.sh's
# output (podman, conmon and runc from Debian 12 with their libraries), run through pp-podman.
# Usage: tests/gpu/podman_gpu.sh BIN_DIR PODMAN_BUNDLE   (BIN_DIR holds pinpointd, pinpoint,
# pinpoint-shim, pinpoint-cdi-hook, pp-busy, busybox and lib/). Needs root, cgroup v2, python3.
# Prints PASS/FAIL lines and "N passed, M failed"; quits the MPS daemons it started.
set -u
SRC=$(readlink -f "${1:?usage: podman_gpu.sh BIN_DIR PODMAN_BUNDLE}")
PB=$(readlink -f "${2:?usage: podman_gpu.sh BIN_DIR PODMAN_BUNDLE}")
W=$(mktemp -d /tmp/pp-podman-XXXXXX); chmod 755 "$W"
BIN=$W/bin; mkdir -p "$BIN"; cp -r "$SRC"/* "$BIN"/; chmod -R a+rX "$BIN"; chmod 755 "$BIN"/pp* "$BIN"/pinpoint*
export PINPOINT_SOCKET=$W/sock
P="$BIN/pinpoint"
. "$(dirname "$(readlink -f "$0")")/lib.sh"
CDI=/var/run/cdi
PODMAN=("$PB/bin/pp-podman" "$W/podman")
RUN=(run --network none --ipc host --security-opt seccomp=unconfined --ulimit nofile=1024:1024 --ulimit nproc=4096:4096)
IMAGE=localhost/pp-gpu:1
made_policy=0
cleanup() {
  "${PODMAN[@]}" rm -af > /dev/null 2>&1
  [ -n "${DAEMON:-}" ] && kill -TERM "$DAEMON" 2>/dev/null && wait "$DAEMON"
  sleep 1; pkill -f '^(/[^ ]*/)?nvidia-cuda-mps-(server|control)( |$)'
  rm -f "$CDI"/pinpoint.io-slice-L*.json
  ((made_policy)) && rm -f /etc/containers/policy.json
  [ -n "${PP_GPU_LOGS:-}" ] && mkdir -p "$PP_GPU_LOGS" && cp "$W"/*.log "$W"/*.out "$PP_GPU_LOGS/" 2>/dev/null
}
trap cleanup EXIT; trap "exit 1" TERM INT
# PP_BACKEND=simulated:h100x2 (and a stand-in pp-busy) tries the container mechanics on a machine
# without a GPU; its CUDA checks then fail by design.
BACKEND=${PP_BACKEND:-nvml}
echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo none); backend $BACKEND; $(date -u +%FT%TZ)"
echo "podman: $("$PB/bin/pp-podman" "$W/podman" --version 2>&1); runc: $(LD_LIBRARY_PATH=$PB/lib "$PB/bin/runc" --version 2>&1 | head -1)"
if compgen -G "$CDI/pinpoint.io-slice-L*.json" > /dev/null; then echo "NOT RUN: $CDI already holds pinpoint specs"; exit 1; fi
mkdir -p -m 755 "$CDI"
# The image policy podman's import reads; the machine has none (removed again at exit).
if [ ! -e /etc/containers/policy.json ]; then
  mkdir -p /etc/containers && echo '{"default": [{"type": "insecureAcceptAnything"}]}' > /etc/containers/policy.json && made_policy=1
fi
id ppa >/dev/null 2>&1 || useradd -M ppa
UIDA=$(id -u ppa); GIDA=$(id -g ppa)
cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "$BACKEND", "mps": "${PP_MPS:-daemons}",
 "mps_idle_quit_ms": 2000, "cancel_grace_ms": 3000, "cdi_dir": "$CDI", "watch_interval_ms": 200}
CFG
start_pinpointd || { echo "FAIL pinpointd did not start"; tail -5 "$W/pinpointd.log"; exit 1; }

# --- an image made offline: busybox, pp-busy and the libraries it loads, the driver's libcuda
# among them (what NVIDIA's container toolkit would mount; pinpoint's spec gives the devices).
R=$W/rootfs; mkdir -p "$R/bin" "$R/tmp"; chmod 1777 "$R/tmp"
cp "$BIN/busybox" "$BIN/pp-busy" "$R/bin/"
for c in sh env cat id; do ln -s busybox "$R/bin/$c"; done
libcuda=$(ldconfig -p | awk '/libcuda\.so\.1 /{print $NF; exit}')
# Where the host keeps them (its ld.so.cache may name /usr/local/nvidia/lib64, say), the image's
# loader, which has no cache, looks only in the default directories: they go there.
mkdir -p "$R/usr/lib/x86_64-linux-gnu"
for f in $( (ldd "$BIN/pp-busy"; [ -n "$libcuda" ] && ldd "$libcuda") 2>/dev/null | awk '$3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u) $libcuda; do
  case "$f" in
    /lib/*|/lib64/*|/usr/lib/*|/usr/lib64/*) cp -L --parents "$f" "$R/" ;;
    *) cp -L "$f" "$R/usr/lib/x86_64-linux-gnu/$(basename "$f")" ;;
  esac
done
tar -C "$R" -cf "$W/rootfs.tar" .
"${PODMAN[@]}" import "$W/rootfs.tar" "$IMAGE" > "$W/import.log" 2>&1
check "the image was imported" test $? = 0
"${PODMAN[@]}" "${RUN[@]}" --rm "$IMAGE" /bin/busybox true > "$W/probe.log" 2>&1
check "podman runs a container here" test $? = 0 || tail -3 "$W/probe.log"

lease() { "$P" cdi --gpu-mem 4G --gpu-share 30 --user ppa --name "$1"; }
# container NAME DEVICE USER ARGS...: runs pp-busy ARGS in a container with the lease's device.
container() {
  local name=$1 dev=$2 user=$3; shift 3
  "${PODMAN[@]}" "${RUN[@]}" --name "$name-$$" --user "$user" --device "$dev" "$IMAGE" /bin/pp-busy "$@"
}
dev1=$(lease c1); dev2=$(lease c2); dev3=$(lease over)
echo "leases: $dev1 $dev2 $dev3"
check "three leases opened on one GPU" test -n "$dev1" -a -n "$dev2" -a -n "$dev3"
l1=${dev1#pinpoint.io/slice=L}; l2=${dev2#pinpoint.io/slice=L}; l3=${dev3#pinpoint.io/slice=L}
container c1 "$dev1" "$UIDA:$GIDA" --blocks 4 --iters 30000000 --alloc-mib 1024 > "$W/c1.out" 2>&1 & j1=$!
container c2 "$dev2" "$UIDA:$GIDA" --blocks 4 --iters 30000000 --alloc-mib 1024 > "$W/c2.out" 2>&1 & j2=$!
container over "$dev3" "$UIDA:$GIDA" --alloc-mib 6144 > "$W/over.out" 2>&1 & j3=$!
wait $j1; r1=$?; wait $j2; r2=$?; wait $j3; r3=$?
echo "exits: c1 $r1, c2 $r2, over $r3"
for f in c1 c2 over; do echo "--- $f"; grep -E "^env CUDA_MPS|pp-busy|Error|error" "$W/$f.out" | head -8; done
check "container 1's CUDA program ran within its slice" test "$r1" = 0
check "container 2's CUDA program ran within its slice" test "$r2" = 0
check "a container allocating past its 4 GiB slice failed alone (exit 3: out of memory)" test "$r3" = 3
check "container 1 ran under the MPS server of its user" grep -q "CUDA_MPS_PIPE_DIRECTORY=$W/state/mps/dev0/$UIDA/pipe" "$W/c1.out"
check "container 1's device memory limit is its slice" grep -q "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=4096M" "$W/c1.out"
check "lease 1 was attached to container 1's cgroup by the createRuntime hook" \
  sh -c "\"$P\" --json show $l1 | grep -q 'container cgroup'"
for l in "$l1" "$l2" "$l3"; do
  wait_for 15 sh -c "test \"\$(\"$P\" --json show $l | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"job\"][\"state\"])')\" != running"
done
"$P" queue --all | head -6
check "each lease ended with its container (poststop hook) and its spec is gone" sh -c "
  for l in $l1 $l2 $l3; do
    test \"\$(\"$P\" --json show \$l | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"job\"][\"state\"])')\" != running || exit 1
    test ! -e $CDI/pinpoint.io-slice-L\$l.json || exit 1
  done"
peak=$("$P" --json show "$l1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["job"]["usage"]["gpu_mem_peak_bytes"])')
echo "lease $l1 peak device memory: $peak bytes"
check "the watcher accounted container 1's device memory to its lease" test "${peak:-0}" -gt $((512 << 20))

# A container of another uid than the lease's would hang on the lease's MPS server: refused.
dev4=$(lease wronguid); l4=${dev4#pinpoint.io/slice=L}
container wronguid "$dev4" 0:0 --alloc-mib 16 > "$W/wronguid.out" 2>&1; r4=$?
grep -m2 -E "uid|Error" "$W/wronguid.out"
check "a container running as root on ppa's lease did not start" test "$r4" != 0
check "... and the hook said why" grep -q "runs as uid 0 but lease $l4" "$W/wronguid.out"
echo "$passed passed, $failed failed"
