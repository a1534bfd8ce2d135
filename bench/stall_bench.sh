#!/usr/bin/env bash
# Does any user stall pinpointd? Runs each attack of docs/security.md ("Locks, descriptors and
# budgets") against a pinpointd on a simulated node, and meanwhile measures what another user
# sees: the latency of `pinpoint version` and `pinpoint queue` (each a whole CLI run: process start,
# connect, request, reply). Target: p99 under 100 ms in every row.
# Usage: bench/stall_bench.sh BUILD_DIR [OUT.md]  (as root: attackers run as uid nobody)
# Each attack runs for the whole measurement (SAMPLES calls of each command, default 200) and is
# stopped after it; every process it started is ended. ROWS=REGEX runs only the rows whose attack
# matches it (and the quiet row), e.g. ROWS=stdout.
set -uo pipefail
build=$(readlink -f "${1:?usage: stall_bench.sh BUILD_DIR [OUT.md]}")
out=${2:-/dev/stdout}
samples=${SAMPLES:-200}
for b in pinpointd pinpoint pinpoint-shim; do [ -x "$build/$b" ] || { echo "stall_bench: no $build/$b" >&2; exit 1; }; done
[ "$(id -u)" = 0 ] || { echo "stall_bench: run as root (attackers run as nobody)" >&2; exit 1; }
W=$(mktemp -d /tmp/pp-stall-XXXXXX); chmod 755 "$W"
mkdir -p "$W/bin"; cp "$build"/pinpointd "$build"/pinpoint "$build"/pinpoint-shim "$W/bin"/; chmod 755 "$W/bin" "$W"/bin/*
P="$W/bin/pinpoint"; export PINPOINT_SOCKET="$W/sock"
# With two CPUs or more, pinpointd and the measuring user share CPU 0 and the attacker's processes
# run on the others: what is measured is the loop's waiting, not the attacker's use of the CPUs
# (which the site bounds with cgroups, as for any user). The attacker's jobs are kept off CPU 0 as
# a site keeps jobs off its system CPUs (system_cpus "0", pinpointd pinned there as systemd's
# CPUAffinity= would): without it a job started by a pinpointd pinned to CPU 0 ran there.
ncpu=$(nproc)
if [ "$ncpu" -ge 2 ]; then near="taskset -c 0"; far="taskset -c 1-$((ncpu - 1))"; system=', "system_cpus": "0"'; else near=""; far=""; system=""; fi
cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "simulated:h100x2", "metrics_listen": "127.0.0.1:0",
 "max_user_stored_bytes": "8M", "max_output_bytes": "64M", "cgroups": false$system}
CFG
$near "$W/bin/pinpointd" --config "$W/config.json" > "$W/pinpointd.log" 2>&1 &
DAEMON=$!
pids=()
idle=()
cleanup() { for p in "${pids[@]}" "${idle[@]}"; do kill -- -"$p" 2>/dev/null; kill "$p" 2>/dev/null; done; kill "$DAEMON" 2>/dev/null; wait 2>/dev/null; rm -rf "$W"; }
trap cleanup EXIT
for _ in $(seq 100); do "$P" version > /dev/null 2>&1 && break; sleep 0.1; done
# A pinpointd that did not start (a library missing: set LD_LIBRARY_PATH) would make every row
# measure a refused connection: stop here instead.
"$P" version > /dev/null 2>&1 || { echo "stall_bench: pinpointd did not start:" >&2; tail -5 "$W/pinpointd.log" >&2; exit 1; }
PORT=$(grep -o "(port [0-9]*)" "$W/pinpointd.log" | head -1 | tr -dc 0-9)
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups env PINPOINT_SOCKET="$W/sock" "$@"; }

# The victim's job and the attacker's: an ended job of root's, and 10000 held tasks of nobody's
# that wait, once released, for a job of nobody's that never ends: released, they stay pending, so
# what is measured is the requests and the passes, not 10000 jobs being run.
victim=$("$P" --json submit --wait -- true | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
blocker=$(as_nobody "$P" --json submit -- sleep 1000000 | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
array=$(as_nobody "$P" --json submit --hold --after "$blocker" --array 1-10000 -- true | python3 -c 'import json,sys; print(json.load(sys.stdin)["array"]["id"])')
ids=$(seq "$array" $((array + 9999)) | tr '\n' ' ')
# 1000 more held tasks, each with a 250 KB environment: a hold or release rewrites whole records.
# Two variables of 125 KB: one string of the environment may not pass 128 KiB (MAX_ARG_STRLEN).
HALF=$(head -c 125000 /dev/zero | tr '\0' x)
# Four arrays of 250: one array stores at most 64 MiB of records.
bigids=""
for _ in 1 2 3 4; do
  first=$(as_nobody env BIG1="$HALF" BIG2="$HALF" "$P" --json submit --hold --after "$blocker" --array 1-250 -- true | python3 -c 'import json,sys; print(json.load(sys.stdin)["array"]["id"])')
  bigids="$bigids $(seq "$first" $((first + 249)) | tr '\n' ' ')"
done
copies=$(yes "$victim" | head -10000 | tr '\n' ' ')
shuffled=$(seq "$array" $((array + 9999)) | shuf | tr '\n' ' ')

measure() {  # measure CMD...: SAMPLES runs; prints p50 and p99 in ms
  local t0 t1 i
  for i in $(seq "$samples"); do
    t0=$(date +%s%N); $near "$@" > /dev/null 2>&1; t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000 ))
  done | sort -n | awk '{a[NR]=$1} END {p50=a[int(NR*0.50)+1]; p99=a[int(NR*0.99)+1]; if (p99=="") p99=a[NR]; printf "%.1f | %.1f", p50/1000, p99/1000}'
}
# The attacker's jobs still running once a row's loop is stopped (one it had just submitted: a job
# still forking its 3000 processes, a `yes`), the blocker's aside: cancelled, and waited for (at
# most 60 s), so that each row measures its own attack, not the end of the one before.
settle() {
  local ids i
  for i in $(seq 600); do
    ids=$("$P" queue --user nobody --state running --format id 2>/dev/null | grep -E "^[0-9]+$" | grep -vx "$blocker" | tr '\n' ' ')
    [ -z "${ids// /}" ] && return
    [ "$i" = 1 ] && "$P" cancel $ids > /dev/null 2>&1
    sleep 0.1
  done
}
attack() {  # attack NAME CMD...: runs CMD in a loop in the background while the victim measures
  local name=$1; shift
  if [ -n "${ROWS:-}" ] && ! grep -qE "$ROWS" <<< "$name"; then return; fi
  local run=$far
  if declare -F "$1" > /dev/null; then run=""; fi  # a function places its own processes
  ( set -m; while true; do $run "$@" > /dev/null 2>&1; done ) &
  pids+=($!)
  local v q
  v=$(measure "$P" version); q=$(measure "$P" queue)
  kill -- -"${pids[-1]}" 2>/dev/null; kill "${pids[-1]}" 2>/dev/null; wait "${pids[-1]}" 2>/dev/null
  settle
  echo "| $name | $v | $q |"
}
# 300 idle processes of uid nobody, in no job, each with an environment of 1 MB (eight variables
# of 125 KB: one string may not pass 128 KiB): on a node without cgroups each ending job of
# nobody's looks at every process of nobody's for its key (docs/security.md, issue 55).
start_idle() {
  local i
  if [ -n "${ROWS:-}" ] && ! grep -qE "$ROWS" <<< "300 idle processes"; then return; fi
  for i in $(seq 300); do
    $far setpriv --reuid=65534 --regid=65534 --clear-groups env -i B1="$HALF" B2="$HALF" B3="$HALF" \
      B4="$HALF" B5="$HALF" B6="$HALF" B7="$HALF" B8="$HALF" sleep 1000000 &
    idle+=($!)
  done
  # Measured once they all run, not while this shell still forks them.
  for i in $(seq 100); do [ "$(pgrep -u 65534 -xc sleep)" -ge 300 ] && break; sleep 0.1; done
}
stop_idle() { [ "${#idle[@]}" = 0 ] && return; kill "${idle[@]}" 2>/dev/null; wait "${idle[@]}" 2>/dev/null; idle=(); }
flood_metrics() {
  $far python3 - "$PORT" <<'PY'
import socket, sys, time
port = int(sys.argv[1]); socks = []
for _ in range(4000):
    s = socket.socket(); s.setblocking(False)
    try: s.connect(("127.0.0.1", port))
    except (BlockingIOError, OSError): pass
    socks.append(s)
time.sleep(5)
PY
}
{
  echo "# Another user's latency while one user attacks pinpointd"
  echo
  echo "pinpointd on a simulated node (simulated:h100x2), jobs without cgroups (\`cgroups: false\`: processes are found by their key); $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')); $(date -u +%F); $samples calls of each command per row; times in ms, each a whole \`pinpoint\` run (process start included). Target: p99 < 100 ms.${near:+ pinpointd and the measured calls run on CPU 0, the attacker and its jobs on the other CPUs (\`system_cpus: \"0\"\`).}"
  echo
  echo "| attack (by uid nobody) | version p50 | version p99 | queue p50 | queue p99 |"
  echo "|---|---|---|---|---|"
  echo "| none | $(measure "$P" version) | $(measure "$P" queue) |"
  attack "wait naming another user's job 10000 times, in a loop" as_nobody "$P" wait $copies
  attack "hold then release of 10000 ids, in a loop" sh -c "setpriv --reuid=65534 --regid=65534 --clear-groups env PINPOINT_SOCKET=$W/sock $P hold $ids; setpriv --reuid=65534 --regid=65534 --clear-groups env PINPOINT_SOCKET=$W/sock $P release $ids"
  attack "hold then release of a 10000-task array by its id, in a loop" sh -c "setpriv --reuid=65534 --regid=65534 --clear-groups env PINPOINT_SOCKET=$W/sock $P hold $array; setpriv --reuid=65534 --regid=65534 --clear-groups env PINPOINT_SOCKET=$W/sock $P release $array"
  attack "queue --all --limit 10000, in a loop" as_nobody "$P" queue --all --limit 10000
  attack "4000 idle connections to /metrics, renewed every 5 s" flood_metrics
  attack "wait naming the 10000 tasks of an array in random order, 10 at once, in a loop" sh -c "for _ in 1 2 3 4 5 6 7 8 9 10; do setpriv --reuid=65534 --regid=65534 --clear-groups env PINPOINT_SOCKET=$W/sock timeout 2 $P wait $shuffled & done; wait"
  attack "a 64-task array of a 250 KB environment starting and ending at once, in a loop" as_nobody env BIG1="$HALF" BIG2="$HALF" "$P" submit --wait --array 1-64 -- true
  attack "a job leaving 3000 processes behind (setsid), in a loop: killed as it ends" as_nobody "$P" submit --wait -- sh -c 'for i in $(seq 3000); do setsid sleep 1000 > /dev/null 2>&1 & done'
  start_idle
  attack "8-task arrays of true ending, in a loop, beside 300 idle processes of the same user with 1 MB environments (no cgroups)" as_nobody "$P" submit --wait --array 1-8 -- true
  stop_idle
  # Before the next row, whose held submits fill uid nobody's max_user_request_bytes.
  attack "jobs of a 250 KB environment ending, in a loop, past max_user_stored_bytes (8M here): purged as they come" as_nobody env BIG1="$HALF" BIG2="$HALF" "$P" submit --wait -- true
  attack "submit of a 250 KB environment, in a loop" as_nobody env BIG1="$HALF" BIG2="$HALF" "$P" submit --hold -- true
  attack "arrays of 200 tasks of a 250 KB environment, in a loop: refused past max_user_request_bytes (each task counts)" as_nobody env BIG1="$HALF" BIG2="$HALF" "$P" submit --hold --array 1-200 -- true
  attack "a job writing stdout without end, in a loop: ended at max_output_bytes (64M here), its output cut" as_nobody "$P" submit --wait -- yes
  attack "hold then release of 1000 ids of 250 KB environments, in a loop" sh -c "setpriv --reuid=65534 --regid=65534 --clear-groups env PINPOINT_SOCKET=$W/sock $P hold $bigids; setpriv --reuid=65534 --regid=65534 --clear-groups env PINPOINT_SOCKET=$W/sock $P release $bigids"
  echo
  kill -0 "$DAEMON" 2>/dev/null || echo "**pinpointd was not running at the end: the rows above are not valid**"
  echo "pinpointd's descriptors at the end: $(ls /proc/$DAEMON/fd | wc -l); its resident memory: $(awk '/VmRSS/ {print $2, $3}' /proc/$DAEMON/status); jobs purged for uid nobody's stored bytes: $(grep -c "over max_user_stored_bytes" "$W/pinpointd.log") passes, the last: $(grep "over max_user_stored_bytes" "$W/pinpointd.log" | tail -1 | sed 's/.*retention: //')."
} > "$out"
# pinpointd's log beside a results file (its last lines), for what the table does not say.
case "$out" in /dev/*) ;; *) tail -n 2000 "$W/pinpointd.log" > "${out%.md}-pinpointd.log" ;; esac
