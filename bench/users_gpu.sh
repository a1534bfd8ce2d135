#!/usr/bin/env bash
# Two users on two GPUs, where MPS serves one user per GPU (issue 44). User A submits an array of
# 8 small trainings (bench/workloads/train.py, one 4 GiB slice each, no device named), user B the
# same 0.3 s later; pinpointd places them. Against: the same with slice_placement spread (what
# pinpoint's placement did before: A's spread over both GPUs and B waited for them), and bare MPS
# split per user (A's 8 on GPU 0 under A's MPS control daemon, B's 8 on GPU 1 under B's: what a
# batch system that gives each user a GPU does). Then one user alone: 16 trainings through
# pinpoint against bare MPS split evenly (8 + 8 under that user's two control daemons).
#   bench/users_gpu.sh BIN_DIR OUT_DIR      (as root, on a machine with two GPUs of one model)
# BIN_DIR holds pinpointd, pinpoint, pinpoint-shim. Writes OUT_DIR/summary.md, one JSON listing
# of the jobs per pinpoint run, and what the MPS control daemon says of users.
# Targets: two users at 85% or more of the per-user split's throughput; one user at 95% or more
# of bare MPS split evenly.
set -u
FROM=$(readlink -f "${1:?usage: users_gpu.sh BIN_DIR OUT_DIR}")
OUT=$(readlink -f "${2:?usage: users_gpu.sh BIN_DIR OUT_DIR}")
REPO=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
W=$(mktemp -d /tmp/ppu-XXXXXX)  # short: MPS socket paths must fit 107 bytes
chmod 755 "$W"
# The binaries where the users can run them.
BIN="$W/bin"
mkdir -p "$BIN"
cp "$FROM/pinpointd" "$FROM/pinpoint" "$FROM/pinpoint-shim" "$BIN/"
chmod 755 "$BIN" "$BIN"/*
DAEMON=""
cleanup() {
  [ -n "$DAEMON" ] && kill "$DAEMON" 2>/dev/null && wait "$DAEMON" 2>/dev/null
  quit_daemons "$W"/bare-*/pipe "$W"/*/m/dev*/*/pipe
  rm -rf "$W"
}
trap cleanup EXIT
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY CUDA_VISIBLE_DEVICES
GPUS=$(nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader)
# SMOKE=1: a check of the script itself on any GPU (one run of each kind, two epochs).
[ "$(echo "$GPUS" | wc -l)" -ge 2 ] || [ -n "${SMOKE:-}" ] || { echo "users_gpu: needs two GPUs"; exit 1; }
{ echo "$GPUS"; date -u +%FT%TZ; } | tee "$OUT/device.txt"

# What the driver's MPS control daemon offers for several users.
{
  echo "\$ nvidia-cuda-mps-control -h"
  timeout 10 nvidia-cuda-mps-control -h 2>&1 | head -60
  echo "\$ grep -a the strings of nvidia-cuda-mps-control for multi-user or other user"
  grep -a -o -i -E '[[:print:]]*(multi.?user|other user)[[:print:]]*' "$(command -v nvidia-cuda-mps-control)" | head -40
} > "$OUT/mps-control-users.txt" 2>&1

for u in ppua ppub; do id "$u" > /dev/null 2>&1 || useradd -M -s /bin/sh "$u"; done
cp "$REPO/bench/workloads/train.py" "$W/train.py"
chmod 644 "$W/train.py"
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }
cal=$(cd "$W" && as ppua python3 train.py --epochs 2 2>&1 | grep -E '^pp-work')
t2=$(echo "$cal" | sed -n 's/.*seconds=\([0-9.]*\).*/\1/p')
EPOCHS=$(awk -v a="$t2" 'BEGIN { if (a == "") { print ""; exit } e = int(8 / (a / 2) + 0.5); if (e < 1) e = 1; print e }')
echo "train.py: 2 epochs in ${t2:-?} s (torch import included) -> --epochs ${EPOCHS:-(does not run)}" | tee "$OUT/calibration.txt"
[ -n "$EPOCHS" ] || exit 1
[ -z "${SMOKE:-}" ] || EPOCHS=2
TRAIN=(python3 "$W/train.py" --epochs "$EPOCHS")
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.2f", a - b }'; }

start_daemon() {  # start_daemon NAME EXTRA_CONFIG
  mkdir -p "$W/$1"
  cat > "$W/$1/config.json" <<CFG
{"state_dir": "$W/$1/state", "socket_path": "$W/$1/sock", "mps_dir": "$W/$1/m"$2}
CFG
  "$BIN/pinpointd" --config "$W/$1/config.json" > "$OUT/$1-pinpointd.log" 2>&1 &
  DAEMON=$!
  export PINPOINT_SOCKET="$W/$1/sock"
  for _ in $(seq 100); do "$BIN/pinpoint" version > /dev/null 2>&1 && return 0; sleep 0.1; done
  echo "users_gpu: pinpointd did not start"; return 1
}
stop_daemon() {  # stop_daemon NAME: the jobs' listing, then pinpointd ends, then its MPS daemons
  "$BIN/pinpoint" --json queue --all --limit 200 > "$OUT/$1-jobs.json" 2>&1
  kill "$DAEMON"; wait "$DAEMON" 2>/dev/null; DAEMON=""
  quit_daemons "$W/$1/m"/dev*/*/pipe
}
# pinpointd leaves its MPS control daemons running when it stops (a restart adopts them).
quit_daemons() { for p in "$@"; do [ -d "$p" ] && CUDA_MPS_PIPE_DIRECTORY="$p" timeout 20 nvidia-cuda-mps-control <<< quit > /dev/null 2>&1; done; }
submit_as() {  # submit_as USER N: the user's array, waited for; prints the seconds it took
  local t0; t0=$(now)
  (cd "$W" && as "$1" env PINPOINT_SOCKET="$PINPOINT_SOCKET" "$BIN/pinpoint" submit --wait --array "1-$2" \
     --gpus 1 --gpu-mem 4G --cpus 1 -- "${TRAIN[@]}" > /dev/null 2>&1)
  since "$t0"
}

placed() {  # placed NAME: each user's jobs of the run by GPU, and how many completed
  python3 - "$OUT/$1-jobs.json" <<'PY'
import json, sys
try:
    data = json.load(open(sys.argv[1]))
    jobs = data if isinstance(data, list) else data["jobs"]
except Exception as e:
    print(f"(no listing: {e})"); sys.exit()
by = {}
for j in jobs:
    u = by.setdefault(j.get("user", "?"), {"gpus": {}, "ok": 0, "n": 0})
    u["n"] += 1
    u["ok"] += j.get("state") == "completed"
    for a in j.get("allocations", []):
        u["gpus"][a["device_index"]] = u["gpus"].get(a["device_index"], 0) + 1
print("; ".join(f"{user}: " + ", ".join(f"GPU {g} x{n}" for g, n in sorted(u["gpus"].items())) + f" ({u['ok']}/{u['n']})"
                for user, u in sorted(by.items())))
PY
}

pinpoint_two_users() {  # NAME EXTRA_CONFIG
  start_daemon "$1" "$2" || return
  local t0 a b; t0=$(now)
  submit_as ppua 8 > "$W/a.t" & a=$!
  sleep 0.3
  submit_as ppub 8 > "$W/b.t" & b=$!
  wait "$a" "$b"
  local span; span=$(since "$t0")
  stop_daemon "$1"
  echo "| $1 | $span | $(cat "$W/a.t") | $(cat "$W/b.t") | $(placed "$1") |" >> "$W/two.md"
}

bare_daemon() {  # bare_daemon USER GPU: a control daemon of USER for GPU, as a batch system's job would start
  local d="$W/bare-$1-$2"
  mkdir -p "$d/pipe" "$d/log"; chown -R "$1" "$d"
  as "$1" env CUDA_VISIBLE_DEVICES="$2" CUDA_MPS_PIPE_DIRECTORY="$d/pipe" CUDA_MPS_LOG_DIRECTORY="$d/log" nvidia-cuda-mps-control -d
}
bare_run() {  # bare_run USER GPU N: N trainings of USER on GPU under USER's daemon; prints the seconds
  local d="$W/bare-$1-$2" t0 pids=()
  t0=$(now)
  for _ in $(seq "$3"); do
    (cd "$W" && as "$1" env CUDA_VISIBLE_DEVICES="$2" CUDA_MPS_PIPE_DIRECTORY="$d/pipe" "${TRAIN[@]}" > /dev/null 2>&1) &
    pids+=($!)
  done
  wait "${pids[@]}"
  since "$t0"
}
bare_quit() { for d in "$W"/bare-*; do CUDA_MPS_PIPE_DIRECTORY="$d/pipe" timeout 20 nvidia-cuda-mps-control <<< quit > /dev/null 2>&1; rm -rf "$d"; done; }

echo "| run | makespan (s) | user A's 8 (s) | user B's 8 (s) | where they ran (completed of each user's) |" > "$W/two.md"
echo "|---|---:|---:|---:|---|" >> "$W/two.md"
pinpoint_two_users auto ""
if [ -z "${SMOKE:-}" ]; then
  pinpoint_two_users spread ', "slice_placement": "spread"'
  pinpoint_two_users auto-window0 ', "mps_affinity_ms": 0'
fi
G1=1; [ -z "${SMOKE:-}" ] || G1=0
bare_daemon ppua 0; bare_daemon ppub "$G1"
t0=$(now)
bare_run ppua 0 8 > "$W/a.t" & a=$!
sleep 0.3
bare_run ppub "$G1" 8 > "$W/b.t" & b=$!
wait "$a" "$b"
echo "| bare MPS split per user | $(since "$t0") | $(cat "$W/a.t") | $(cat "$W/b.t") | A: GPU 0 x8; B: GPU 1 x8 |" >> "$W/two.md"
bare_quit

echo "| run | makespan (s) | where they ran |" > "$W/one.md"
echo "|---|---:|---|" >> "$W/one.md"
for rep in $([ -n "${SMOKE:-}" ] && echo 1 || echo 1 2); do
  start_daemon "one-$rep" "" || break
  span=$(submit_as ppua 16)
  stop_daemon "one-$rep"
  echo "| pinpoint (auto), rep $rep | $span | $(placed "one-$rep") |" >> "$W/one.md"
  bare_daemon ppua 0; [ "$G1" = 0 ] || bare_daemon ppua 1
  t0=$(now)
  bare_run ppua 0 8 > /dev/null & a=$!
  bare_run ppua "$G1" 8 > /dev/null & b=$!
  wait "$a" "$b"
  echo "| bare MPS split evenly, rep $rep | $(since "$t0") | GPU 0 x8, GPU 1 x8 |" >> "$W/one.md"
  bare_quit
done

{
  echo "# Two users on two GPUs (MPS: one user per GPU), and one user alone"
  echo
  echo "$GPUS" | sed 's/^/    /'
  echo
  echo "train.py --epochs $EPOCHS (about 8 s of training alone, torch import included), one 4 GiB slice and one CPU each."
  echo
  echo "## Two users: A's array of 8, then B's 0.3 s later"
  echo
  cat "$W/two.md"
  echo
  echo "A's 8 and B's 8 are each user's wall time from their submit to their last training's end."
  echo
  echo "## One user: 16 trainings"
  echo
  cat "$W/one.md"
} | tee "$OUT/summary.md"
leftover=$(pgrep -fa 'nvidia-cuda-mps-(control|server)' || true)
[ -z "$leftover" ] || { echo "MPS daemons left running:"; echo "$leftover"; }
