#!/usr/bin/env bash
# What a job array of 10,000 tasks costs pinpointd (issue 24): the daemon's resident memory and the
# store's size on disk before the submit, after it, and after the array's cancel, with the wall
# time of the submit and of the cancel (each a whole CLI run). The tasks are submitted held, so
# what is measured is the records, not 10,000 jobs being run. A pinpointd on a simulated node.
# Usage: bench/array_bench.sh BUILD_DIR [OUT.md] [TASKS]
set -euo pipefail
build=$(readlink -f "${1:?usage: array_bench.sh BUILD_DIR [OUT.md] [TASKS]}")
out=${2:-/dev/stdout}
tasks=${3:-10000}
for b in pinpointd pinpoint pinpoint-shim; do [ -x "$build/$b" ] || { echo "array_bench: no $build/$b" >&2; exit 1; }; done
W=$(mktemp -d /tmp/pp-arrays-XXXXXX)
P="$build/pinpoint"; export PINPOINT_SOCKET="$W/sock"
cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "simulated:h100x2", "metrics_listen": ""}
CFG
"$build/pinpointd" --config "$W/config.json" > "$W/pinpointd.log" 2>&1 &
DAEMON=$!
trap 'kill $DAEMON 2>/dev/null; wait 2>/dev/null; rm -rf "$W"' EXIT
for _ in $(seq 100); do "$P" version > /dev/null 2>&1 && break; sleep 0.1; done
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$DAEMON/status"; }
store_kib() { du -k -c "$W"/state/*.db* 2>/dev/null | tail -1 | cut -f1; }
ms_of() { local t0 t1; t0=$(date +%s%N); "$@" > /dev/null; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }

rss0=$(rss_kib); store0=$(store_kib)
submit_ms=$(ms_of "$P" submit --hold --array "1-$tasks" --name sweep -- python3 train.py --lr 0.1)
rss1=$(rss_kib); store1=$(store_kib)
queue_ms=$(ms_of "$P" queue)
cancel_ms=$(ms_of "$P" cancel 1)
sleep 1  # one pass of the loop forgets the ended tasks
rss2=$(rss_kib); store2=$(store_kib)

{
  echo "# A job array of $tasks tasks: memory, store and time"
  echo
  echo "pinpoint $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%Y-%m-%d), $(nproc) CPUs, simulated:h100x2 node."
  echo "Produced by \`bench/array_bench.sh BUILD_DIR OUT.md $tasks\`. Tasks are submitted held."
  echo
  echo "| | daemon RSS (MiB) | store on disk (MiB) | wall time of the command (ms) |"
  echo "|---|---|---|---|"
  mib() { awk -v k="$1" -v d="$2" 'BEGIN {printf "%.*f", d, k / 1024}'; }
  echo "| started, no job | $(mib "$rss0" 1) | $(mib "$store0" 2) | |"
  echo "| after \`submit --hold --array 1-$tasks\` | $(mib "$rss1" 1) | $(mib "$store1" 2) | $submit_ms |"
  echo "| \`pinpoint queue\` (first page) | | | $queue_ms |"
  echo "| after \`cancel\` of the array | $(mib "$rss2" 1) | $(mib "$store2" 2) | $cancel_ms |"
} > "$out"
