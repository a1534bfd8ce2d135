# Shared by the GPU suites (sourced after P, the pinpoint CLI, is set): PASS/FAIL counting,
# JSON field access, a bounded wait on a condition, a job's state.
passed=0; failed=0
check() { local name=$1; shift; if "$@"; then echo "PASS $name"; passed=$((passed+1)); else echo "FAIL $name"; failed=$((failed+1)); fi; }
js() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
wait_for() {  # wait_for SECONDS CMD...: until CMD succeeds (bounded)
  local n=$(( $1 * 10 )); shift
  for _ in $(seq "$n"); do "$@" && return 0; sleep 0.1; done; return 1
}
state_of() { "$P" --json show "$1" | js "d['job']['state']"; }
# start_pinpointd: pinpointd on $W/config.json (BIN, W set), its log appended to $W/pinpointd.log;
# sets DAEMON and returns once it answers (bounded).
start_pinpointd() {
  LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}" "$BIN/pinpointd" --config "$W/config.json" >> "$W/pinpointd.log" 2>&1 &
  DAEMON=$!
  wait_for 10 "$P" version > /dev/null 2>&1
}
