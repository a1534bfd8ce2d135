#!/usr/bin/env bash
# ctest cdi_podman: pinpoint slices in real podman containers through CDI (docs/containers.md),
# against pinpointd on a simulated node (two H100s). Needs root, podman, runc, busybox-static and
# jq (scripts/install-deps.sh, test set); skipped (77) with the reason when podman cannot run.
# podman runs with the flags hosts in hybrid cgroup mode without rlimit rights need
# (/work/shared/CONTAINERS.md, docs/containers.md "Setting up a node"). Every wait is a bounded poll.
# Usage: cdi_podman_test.sh BIN_DIR
set -uo pipefail
BIN=$(readlink -f "${1:?usage: cdi_podman_test.sh BIN_DIR}")
HERE=$(cd "$(dirname "$0")" && pwd)
skip() { echo "SKIPPED: $*"; exit 77; }
((EUID == 0)) || skip "needs root (rootful podman, and pinpointd reading containers' cgroups)"
for tool in podman runc jq; do command -v $tool >/dev/null || skip "no $tool (scripts/install-deps.sh installs it)"; done
BUSYBOX=$(command -v busybox) || skip "no busybox (busybox-static)"
CDI=/var/run/cdi
# Spec names come from lease ids: another pinpoint's specs there would clash with this test's.
if compgen -G "$CDI/pinpoint.io-slice-L*.json" > /dev/null; then
  skip "$CDI already holds pinpoint specs (another pinpointd or test is using it): $(ls "$CDI" | head -3 | tr '\n' ' ')"
fi
S=$(mktemp -d /tmp/ppc-XXXXXX)
# shellcheck source=../shell/lib.sh
source "$HERE/../shell/lib.sh"
PODMAN=(podman --cgroup-manager=cgroupfs --runtime runc)
RUN=(run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096)
IMAGE=localhost/pinpoint-cdi-test:1
containers=()
cleanup() {
  for c in "${containers[@]}"; do "${PODMAN[@]}" rm -f "$c" >/dev/null 2>&1; done
  stop_pinpointd
  ((failed == 0)) || { echo "--- pinpointd log"; tail -30 "$S/pinpointd.log"; }
  rm -f "$CDI"/pinpoint.io-slice-L*.json.tmp
  rm -rf "$S"
}
trap cleanup EXIT

# --- an image made offline: busybox alone
mkdir -p "$S/rootfs/bin" && cp "$BUSYBOX" "$S/rootfs/bin/busybox"
for cmd in sh env ls sleep cat grep sort test true id; do ln -s busybox "$S/rootfs/bin/$cmd"; done
tar -C "$S/rootfs" -cf "$S/rootfs.tar" . || skip "cannot make the image tarball"
"${PODMAN[@]}" import "$S/rootfs.tar" "$IMAGE" > "$S/import.log" 2>&1 || skip "podman import failed: $(tail -1 "$S/import.log")"
if ! "${PODMAN[@]}" "${RUN[@]}" "$IMAGE" true > "$S/probe.log" 2>&1; then
  skip "podman cannot run a container here: $(tail -1 "$S/probe.log")"
fi

start_pinpointd "$BIN" "$S" "\"cdi_dir\": \"$CDI\", \"watch_interval_ms\": 200, \"gpu_mem_grace_ms\": 400" \
  || { bad "pinpointd started"; exit 1; }
P=$BIN/pinpoint
export PATH=$BIN:$PATH  # pinpoint cdi finds pinpoint-cdi-hook beside itself
lease_of() { echo "${1#pinpoint.io/slice=L}"; }
field() { "$P" --json show "$1" | jq -r ".job.$2"; }

# --- one container sees exactly its slice's environment and device nodes; the lease ends with it
dev=$("$P" cdi --gpu-mem 5G --gpu-share 20 --name web); rc=$?
check "pinpoint cdi prints the CDI device name" test "$rc" = 0 -a -n "$dev"
id=$(lease_of "$dev")
spec=$CDI/pinpoint.io-slice-L$id.json
check "the spec is in $CDI, root's, 0644" test "$(stat -c '%u %a' "$spec")" = "0 644"
check "the lease is listed by queue as running" \
  test "$("$P" --json queue | jq -r ".[] | select(.id == $id) | .kind + \" \" + .state")" = "lease running"
want=$(jq -r '.devices[0].containerEdits.env[]' "$spec" | sort)
pipe=$(jq -r '.devices[0].containerEdits.mounts[0].containerPath // ""' "$spec")
got=$("${PODMAN[@]}" "${RUN[@]}" --device "$dev" "$IMAGE" \
      sh -c 'env | grep -E "^(CUDA|PINPOINT)_" | sort; ls /dev/nvidia*; test -z "$1" || test -d "$1" && echo mounted' sh "$pipe" \
      2> "$S/run1.err")
check "the container sees exactly the spec's CUDA/PINPOINT environment" \
  test "$(grep -E '^(CUDA|PINPOINT)_' <<< "$got")" = "$want"
check "... with PINPOINT_JOB_ID=$id and a 5 GiB MPS limit" \
  grep -qx "PINPOINT_JOB_ID=$id" <<< "$got"
check "... and the slice's GPU device node with nvidiactl" grep -q "/dev/nvidiactl" <<< "$got"
check "... and the MPS pipe directory mounted (when the slice has one: '$pipe')" grep -qx mounted <<< "$got"
poll 20 bash -c "[[ \$($P --json show $id | jq -r .job.state) == completed ]]"
check "the lease ended with the container (poststop or its cgroup emptied)" \
  test "$(field "$id" state)" = completed
check "... reason lease-closed or lease-emptied" grep -qE '^lease-(closed|emptied)$' <<< "$(field "$id" reason)"
check "... and its spec is gone" test ! -e "$spec"

# --- two containers get two slices, each attached to its own cgroup
a=$("$P" cdi --gpu-mem 4G); b=$("$P" cdi --gpu-mem 4G)
ca=$("${PODMAN[@]}" run -d --network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 --device "$a" "$IMAGE" sleep 300)
containers+=("$ca")
cb=$("${PODMAN[@]}" run -d --network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 --device "$b" "$IMAGE" sleep 300)
containers+=("$cb")
ia=$(lease_of "$a"); ib=$(lease_of "$b")
check "lease $ia is attached to its container's cgroup" grep -q "${ca:0:12}" <<< "$(field "$ia" lease_cgroup)"
check "lease $ib is attached to its container's cgroup" grep -q "${cb:0:12}" <<< "$(field "$ib" lease_cgroup)"
check "two leases, two slices of 4 GiB" \
  test "$(field "$ia" 'allocations[0].gpu_mem_bytes') $(field "$ib" 'allocations[0].gpu_mem_bytes')" = "4294967296 4294967296"
"${PODMAN[@]}" rm -f "$ca" "$cb" >/dev/null 2>&1
poll 20 bash -c "[[ \$($P --json show $ia | jq -r .job.state) == completed && \$($P --json show $ib | jq -r .job.state) == completed ]]"
check "both leases ended with their containers" test "$(field "$ia" state) $(field "$ib" state)" = "completed completed"

# --- a container over its budget is stopped, all of it
c=$("$P" cdi --gpu-mem 2G); ic=$(lease_of "$c")
cc=$("${PODMAN[@]}" run -d --network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 --device "$c" "$IMAGE" \
     sh -c 'PINPOINT_SIMULATED_GPU_MEM=1536M sleep 300 & PINPOINT_SIMULATED_GPU_MEM=1536M sleep 300 & wait')
containers+=("$cc")
poll 60 bash -c "[[ \$($P --json show $ic | jq -r .job.state) == failed ]]"
check "two processes of 1.5 GiB each: the 2 GiB lease is stopped (gpu-mem-exceeded)" \
  test "$(field "$ic" reason)" = gpu-mem-exceeded
check "... its peak counted both processes" test "$(field "$ic" usage.gpu_mem_peak_bytes)" -ge $((3 << 30))
poll 30 bash -c "! ${PODMAN[*]} ps -q --no-trunc | grep -q $cc"
check "... and its container is gone" bash -c "! ${PODMAN[*]} ps -q --no-trunc | grep -q $cc"

# --- attacks: a container of another uid than the lease's is refused at its createRuntime hook
n=$("$P" cdi --gpu-mem 1G --user nobody); in=$(lease_of "$n")
out=$("${PODMAN[@]}" "${RUN[@]}" --device "$n" "$IMAGE" true 2>&1); rc=$?
check "a root container on nobody's lease does not start" test "$rc" != 0
check "... the hook said why (uid 0, nobody's lease)" grep -q "runs as uid 0 but lease $in is nobody's" <<< "$out"
check "... and the lease is not attached" test "$(field "$in" lease_cgroup)" = null
"$P" cancel "$in" > /dev/null 2>&1  # ended already when its poststop hook closed it

# --- attacks: a user cannot attach; the hook refuses a lease id that is not a number
chmod 711 "$S"
mkdir -m 755 "$S/bundle" && echo '{"process": {"user": {"uid": 65534}}}' > "$S/bundle/config.json"
state="{\"pid\": 1, \"bundle\": \"$S/bundle\"}"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$BIN/pinpoint-cdi-hook" attach "$ic" --socket "$S/sock" <<< "$state" 2>&1); rc=$?
check "a non-root hook cannot attach (permission denied, one line)" \
  test "$rc:$(wc -l <<< "$out")" = "1:1" -a -n "$(grep -i 'root' <<< "$out")"
out=$("$BIN/pinpoint-cdi-hook" attach '1;rm' --socket "$S/sock" < /dev/null 2>&1); rc=$?
check "a bad lease id: usage error" test "$rc" = 2

echo "passed $passed, failed $failed"
((failed == 0))
