# Shared by the shell tests of the integrations (tests/slurm, tests/htcondor); sourced.
# Counts checks, polls conditions with a deadline (never a blind sleep) and runs a pinpointd.

passed=0 failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

# poll SECONDS CMD...: runs CMD until it succeeds, for at most SECONDS; fails after that.
poll() {
  local end=$(($(date +%s) + $1)); shift
  until "$@" >/dev/null 2>&1; do
    (($(date +%s) < end)) || return 1
    sleep 0.1
  done
}

# start_pinpointd BIN DIR [JSON-SETTINGS]: pinpointd on the simulated two-H100 node, its state,
# socket (DIR/sock) and log (DIR/pinpointd.log) in DIR; returns once it answers. Sets DAEMON and
# exports PINPOINT_SOCKET and PINPOINT_BIN. stop_pinpointd ends it.
start_pinpointd() {
  local bin=$1 dir=$2 extra=${3:-}
  cat > "$dir/config.json" <<CFG
{"state_dir": "$dir/state", "socket_path": "$dir/sock", "backend": "simulated:h100x2",
 "host_cpus": 64, "cancel_grace_ms": 2000, "metrics_listen": "127.0.0.1:0"${extra:+, $extra}}
CFG
  "$bin/pinpointd" --config "$dir/config.json" > "$dir/pinpointd.log" 2>&1 &
  DAEMON=$!
  export PINPOINT_SOCKET=$dir/sock PINPOINT_BIN=$bin/pinpoint
  poll 30 "$bin/pinpoint" gpus
}

stop_pinpointd() {
  if [[ -n ${DAEMON:-} ]]; then
    kill -TERM "$DAEMON" 2>/dev/null
    poll 20 bash -c "! kill -0 $DAEMON"
  fi
}
