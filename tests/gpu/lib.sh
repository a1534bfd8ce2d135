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
# suite_setup NAME BIN_DIR: a fresh work directory W (world-readable), the binaries copied to
# BIN=$W/bin for users ppa and ppb (made when missing), P and PINPOINT_SOCKET set; prints the
# device line.
suite_setup() {
  local src; src=$(readlink -f "$2")
  W=$(mktemp -d "/tmp/pp-$1-XXXXXX"); chmod 755 "$W"
  BIN=$W/bin; mkdir -p "$BIN"; cp -r "$src"/* "$BIN"/; chmod -R a+rX "$BIN"; chmod 755 "$BIN"/pp* "$BIN"/pinpoint*
  export PINPOINT_SOCKET=$W/sock
  P="$BIN/pinpoint"
  echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(date -u +%FT%TZ)"
  id ppa >/dev/null 2>&1 || useradd -M ppa; id ppb >/dev/null 2>&1 || useradd -M ppb
}
# stop_suite: stops pinpointd ($DAEMON) and quits every MPS control daemon whose pipe directory
# is under $W.
stop_suite() {
  kill -TERM "$DAEMON"; wait "$DAEMON"
  local pid dir
  for pid in $(pgrep -f nvidia-cuda-mps-control); do
    dir=$(tr '\0' '\n' < /proc/$pid/environ 2>/dev/null | grep ^CUDA_MPS_PIPE_DIRECTORY= | cut -d= -f2)
    case "$dir" in "$W"/*) CUDA_MPS_PIPE_DIRECTORY=$dir timeout 10 nvidia-cuda-mps-control <<< quit ;; esac
  done
}
start_pinpointd() {
  LD_LIBRARY_PATH="$BIN/lib:${LD_LIBRARY_PATH:-}" "$BIN/pinpointd" --config "$W/config.json" >> "$W/pinpointd.log" 2>&1 &
  DAEMON=$!
  wait_for 10 "$P" version > /dev/null 2>&1
}
