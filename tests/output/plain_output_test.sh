#!/usr/bin/env bash
# ctest plain_output: what pinpoint's programs write into a log or a pipe has no terminal control
# bytes. `make demo`'s whole run goes to a file, as `make demo > log` does: its GPU view must be
# plain lines written on change (no ESC[K, no cursor movement, no colour) and the run must still
# complete. The terminal path itself is tested by common_test (LiveBlock, OutputStyle).
# Usage: plain_output_test.sh BIN_DIR
set -uo pipefail
BIN=$(readlink -f "${1:?usage: plain_output_test.sh BIN_DIR}")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../shell/lib.sh
source "$HERE/../shell/lib.sh"
S=$(mktemp -d /tmp/ppout-XXXXXX)
trap 'rm -rf "$S"' EXIT

# A terminal type is set, as in a user's shell whose output is redirected: only isatty decides.
TERM=xterm-256color "$BIN/pinpoint-demo" --bin-dir "$BIN" --state-dir "$S/demo" > "$S/demo.log" 2>&1
demo_rc=$?
check "demo completes with its output in a file" test "$demo_rc" -eq 0
check "demo log has its GPU view" grep -q "GPU 0  \[" "$S/demo.log"
check "demo log has its summary" grep -q "jobs done: *28 completed" "$S/demo.log"
check "demo ends with how to run a pinpointd of one's own" grep -q "^  $BIN/pinpointd --state-dir /tmp/pinpoint --socket /tmp/pinpoint.sock &$" "$S/demo.log"
check "demo log has no escape byte" sh -c "! grep -q \$'\\x1b' '$S/demo.log'"
check "demo log has no carriage return" sh -c "! grep -q \$'\\r' '$S/demo.log'"
TERM=xterm-256color "$BIN/pinpoint" --help > "$S/help.txt" 2>&1
check "pinpoint --help in a pipe has no escape byte" sh -c "! grep -q \$'\\x1b' '$S/help.txt'"
[[ $demo_rc -eq 0 ]] || tail -20 "$S/demo.log"
echo "$passed passed, $failed failed"
((failed == 0 && passed > 0))
