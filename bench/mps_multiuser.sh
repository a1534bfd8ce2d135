#!/usr/bin/env bash
# What the driver's multi-user MPS mode (nvidia-cuda-mps-control -d --multiuser-server, root
# only) changes for two users on one GPU, against a control daemon per user (pinpoint's way:
# docs/mps.md, "Why one user at a time"). Two runs each:
#   concurrency: 4 pp-busy copies of user A and 4 of user B started together; each user's time;
#   fault:       4 long copies of A, then one copy of B that makes an illegal memory access;
#                how A's copies end.
#   bench/mps_multiuser.sh PP_BUSY OUT_DIR   (as root, on a machine with an NVIDIA GPU)
set -u
BUSY_FROM=$(readlink -f "${1:?usage: mps_multiuser.sh PP_BUSY OUT_DIR}")
OUT=$(readlink -f "${2:?usage: mps_multiuser.sh PP_BUSY OUT_DIR}")
mkdir -p "$OUT"
W=$(mktemp -d /tmp/ppm-XXXXXX)
chmod 755 "$W"
cp "$BUSY_FROM" "$W/pp-busy"
chmod 755 "$W/pp-busy"
PIPE=""
quit() { [ -n "$PIPE" ] && CUDA_MPS_PIPE_DIRECTORY="$PIPE" timeout 20 nvidia-cuda-mps-control <<< quit > /dev/null 2>&1; PIPE=""; }
trap 'quit; rm -rf "$W"' EXIT
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY CUDA_VISIBLE_DEVICES
for u in ppua ppub; do id "$u" > /dev/null 2>&1 || useradd -M -s /bin/sh "$u"; done
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$@"; }
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.2f", a - b }'; }
# About 3 s of work for one copy alone (--blocks 4).
ITERS=${ITERS:-1500000000}

start() {  # start multi|per-user: a control daemon (multi: root's, -M; per-user: started by root, servers per uid)
  local d="$W/$1"
  mkdir -p "$d/pipe" "$d/log"
  chmod 755 "$d" "$d/pipe" "$d/log"
  PIPE="$d/pipe"
  if [ "$1" = multi ]; then
    CUDA_MPS_PIPE_DIRECTORY="$PIPE" CUDA_MPS_LOG_DIRECTORY="$d/log" nvidia-cuda-mps-control -d -M
  else
    CUDA_MPS_PIPE_DIRECTORY="$PIPE" CUDA_MPS_LOG_DIRECTORY="$d/log" nvidia-cuda-mps-control -d
  fi
}
copies() {  # copies USER N ARGS...: N copies, waited for; prints "seconds exit-codes"
  local u=$1 n=$2 t0 pids=() codes=""; shift 2
  t0=$(now)
  for _ in $(seq "$n"); do
    as "$u" env CUDA_MPS_PIPE_DIRECTORY="$PIPE" "$W/pp-busy" "$@" > /dev/null 2>> "$W/err-$u" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; codes="$codes$?,"; done
  echo "$(since "$t0") ${codes%,}"
}

{
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
  date -u +%FT%TZ
  echo "pp-busy --blocks 4 --iters $ITERS"
  echo
  echo "| daemon | run | user A (s, exit codes) | user B (s, exit codes) | MPS servers (user) |"
  echo "|---|---|---|---|---|"
  for mode in per-user multi; do
    start "$mode" || { echo "| $mode | cannot start the control daemon | | | |"; continue; }
    copies ppua 4 --blocks 4 --iters "$ITERS" > "$W/a" & a=$!
    copies ppub 4 --blocks 4 --iters "$ITERS" > "$W/b" & b=$!
    sleep 1
    servers=$(ps -C nvidia-cuda-mps-server -o user= | sort | uniq -c | awk '{print $2 " x" $1}' | paste -sd, -)
    wait "$a" "$b"
    echo "| $mode | concurrency: 4 + 4 copies | $(cat "$W/a") | $(cat "$W/b") | ${servers:-none seen} |"
    copies ppua 4 --blocks 4 --iters $((ITERS * 3)) > "$W/a" & a=$!
    sleep 2
    copies ppub 1 --blocks 4 --iters "$ITERS" --illegal-access > "$W/b" & b=$!
    wait "$a" "$b"
    echo "| $mode | fault: B's copy makes an illegal access while A's 4 run | $(cat "$W/a") | $(cat "$W/b") | |"
    quit
    sleep 1
  done
  echo
  echo "stderr of A's copies (last lines):"
  tail -n 5 "$W/err-ppua" 2> /dev/null | sed 's/^/    /'
} | tee "$OUT/mps-multiuser.md"
# (a daemon started with -d leaves a defunct parent until the shell reaps it: not a live daemon)
pgrep -fa 'nvidia-cuda-mps-(control|server)' | grep -v defunct && echo "MPS daemons left running" || true
