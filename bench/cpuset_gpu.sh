#!/usr/bin/env bash
# A one-CPU PyTorch training on the lent GPU, four ways (issue 25 item 3; docs/scheduling.md "Host
# CPUs and memory"): under pinpoint with cpu_binding cpuset (its own CPU), with cpu_binding quota
# (cpu.max on every CPU), under pinpoint with the quota and pinned by hand (taskset inside the
# job), and bare (taskset, no pinpoint, no MPS). Target: cpuset within 5% of pinned by hand.
#   bench/cpuset_gpu.sh BIN_DIR OUT.md [RUNS [EPOCHS]]
# BIN_DIR holds pinpointd, pinpoint, pinpoint-shim (and lib/); needs python3 with torch.
set -u
. "$(dirname "$(readlink -f "$0")")/../tests/gpu/lib.sh"
suite_setup cpuset "${1:?usage: cpuset_gpu.sh BIN_DIR OUT.md [RUNS]}"
out=${2:?usage: cpuset_gpu.sh BIN_DIR OUT.md [RUNS]}
runs=${3:-5}
epochs=${4:-15}
cp "$(dirname "$(readlink -f "$0")")/workloads/train.py" "$W/train.py"; chmod 644 "$W/train.py"
train=(python3 "$W/train.py" --no-graph --epochs "$epochs")  # eager: the host launches every kernel, so its CPU counts
daemon() {  # daemon BINDING: pinpointd (re)started with that cpu_binding
  [ -n "${DAEMON:-}" ] && { kill -TERM "$DAEMON"; wait "$DAEMON"; }
  cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "nvml", "mps": "daemons",
 "mps_idle_quit_ms": 600000, "cpu_binding": "$1"}
CFG
  start_pinpointd
}
seconds() { grep -o 'seconds=[0-9.]*' | tail -1 | cut -d= -f2; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
declare -A times
one() {  # one LABEL -- COMMAND...: a job of one CPU, 8 GiB of the GPU; its training's seconds
  local label=$1; shift 2
  local id; id=$("$P" --json submit --cpus 1 --gpu-mem 8G --name "$label" -- "$@" | js "d['id']")
  timeout 300 "$P" wait "$id" > /dev/null
  "$P" show "$id" | grep -E "^  (state|cpus):" | tr '\n' ' '; echo
  times[$label]+="$("$P" logs "$id" | seconds) "
}
daemon cpuset
for r in $(seq "$runs"); do one cpuset -- "${train[@]}"; done
cpu=$("$P" --json show 1 | js "d['job'].get('cpuset', [0])[0]")
daemon quota
for r in $(seq "$runs"); do one quota -- "${train[@]}"; done
for r in $(seq "$runs"); do one "quota, taskset -c $cpu" -- taskset -c "$cpu" "${train[@]}"; done
stop_suite
for r in $(seq "$runs"); do times[bare]+="$(taskset -c "$cpu" "${train[@]}" | seconds) "; done
{
  echo "# A one-CPU PyTorch training: its own CPU against a quota (cpu_binding)"
  echo
  echo "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); host $(nproc) CPUs; $(date -u +%FT%TZ)"
  echo "workload: bench/workloads/train.py --no-graph --epochs $epochs (eager: the host launches every kernel), 8 GiB MPS slice, --cpus 1, alone on the GPU; $runs runs each, seconds from the script's start (torch import included)"
  echo
  echo "| how | runs (s) | median (s) |"
  echo "|---|---|---|"
  for k in cpuset quota "quota, taskset -c $cpu" bare; do
    echo "| $k | ${times[$k]} | $(echo ${times[$k]} | tr ' ' '\n' | grep . | median) |"
  done
  echo
  echo "cpuset: \`cpu_binding: \"cpuset\"\` (pinpoint binds the job to CPU $cpu); quota: \`cpu_binding: \"quota\"\` (cpu.max of one CPU, any CPU); quota, taskset: the same job pinned by hand inside pinpoint; bare: \`taskset -c $cpu\` without pinpoint or MPS."
} > "$out"
cat "$out"
grep -E "cgroup|host CPUs" "$W/pinpointd.log" | head -4
