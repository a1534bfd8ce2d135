#!/usr/bin/env bash
# Does pinpoint use every GPU of a node? On a machine with two GPUs of one model: N copies
# submitted through pinpoint with no device named (pinpointd places them: slice_placement auto,
# the default) against bare MPS with the same copies split evenly, copy i on GPU i mod 2 (one MPS
# control daemon per GPU), and the same copies under slice_placement pack (what pinpoint did
# before issue 23: every slice onto the first GPU that has room).
#   bench/placement_gpu.sh BIN_DIR OUT_DIR
# BIN_DIR holds pinpointd, pinpoint, pinpoint-shim, pinpoint-bench and pp-busy. Target: 16 small
# trainings (bench/workloads/train.py) and 32 pp-busy copies end within 5% of bare MPS's makespan.
# Writes OUT_DIR/summary.md and one pinpoint-bench directory per run.
set -u
BIN=$(readlink -f "${1:?usage: placement_gpu.sh BIN_DIR OUT_DIR}")
OUT=$(readlink -f "${2:?usage: placement_gpu.sh BIN_DIR OUT_DIR}")
REPO=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/ppp-XXXXXX)  # short: MPS socket paths must fit 107 bytes
trap 'rm -rf "$WORK"' EXIT
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY CUDA_VISIBLE_DEVICES
CUDA_DRV=$(nvidia-smi | sed -n 's/.*CUDA Version: \([0-9.]*\).*/\1/p' | head -1)
GPUS=$(nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader)
echo "$GPUS"
[ "$(echo "$GPUS" | wc -l)" -ge 2 ] || { echo "placement_gpu: needs two GPUs"; exit 1; }
# shellcheck source=bench/busy_calibration.sh
. "$REPO/bench/busy_calibration.sh"
calibrate_busy "$BIN/pp-busy" 0.8
echo "pp-busy: --iters $BUSY_ITERS (1e8 in ${BUSY_T1:-?} s, 5e8 in ${BUSY_T5:-?} s)"
cal=$(python3 "$REPO/bench/workloads/train.py" --epochs 2 2>&1 | grep -E '^pp-(torch ok|work)' | tr '\n' ' ')
t_train=$(echo "$cal" | tr ' ' '\n' | sed -n 's/^train_seconds=//p' | head -1)
EPOCHS=$(awk -v a="$t_train" 'BEGIN { if (a == "") { print ""; exit } e = int(4 / (a / 2) + 0.5); if (e < 1) e = 1; print e }')
echo "train.py: 2 epochs in ${t_train:-?} s -> --epochs ${EPOCHS:-(does not run)}"

bench() {  # bench NAME ARGS...
  local name=$1; shift
  echo "--- $name"
  timeout -s INT -k 20 240 "$BIN/pinpoint-bench" --bin-dir "$BIN" --scratch "$WORK" --cuda-version "$CUDA_DRV" \
    --gpu 0,1 --cpus 4 --no-warmup --out "$OUT/$name" "$@" > "$OUT/$name.log" 2>&1
  echo "--- $name: exit $?"
}
bench busy32 --workload busy --modes mps,bare-mps --n 32 --reps 3 -- --blocks 4 --iters "$BUSY_ITERS"
bench busy32-pack --workload busy --modes mps --n 32 --reps 2 --daemon-set slice_placement=pack -- --blocks 4 --iters "$BUSY_ITERS"
if [ -n "$EPOCHS" ]; then
  bench torch16 --workload torch --torch-script "$REPO/bench/workloads/train.py" --modes mps,bare-mps --n 16 --reps 2 -- --epochs "$EPOCHS"
  bench torch16-pack --workload torch --torch-script "$REPO/bench/workloads/train.py" --modes mps --n 16 --reps 1 --daemon-set slice_placement=pack -- --epochs "$EPOCHS"
fi
python3 - "$OUT" <<'PY' | tee "$OUT/summary.md"
import json, os, statistics, sys
out = sys.argv[1]
print("| run | mode | N | makespan median (s) | reps | copies per GPU (first rep) | all ok |")
print("|---|---|---:|---:|---:|---|---|")
for name in ["busy32", "busy32-pack", "torch16", "torch16-pack"]:
    path = os.path.join(out, name, "results.json")
    if not os.path.exists(path):
        print(f"| {name} | - | - | (no results) | - | - | - |"); continue
    j = json.load(open(path))
    by = {}
    for p in j["points"]:
        if p["skipped"] or p["error"]: continue
        by.setdefault(p["mode"], []).append(p)
    for mode, ps in by.items():
        spans = [p["t1_s"] - p["t0_s"] for p in ps]
        per = {}
        for job in ps[0]["jobs"]: per[job["device"][-6:] or "?"] = per.get(job["device"][-6:] or "?", 0) + 1
        ok = all(job["ok"] for p in ps for job in p["jobs"])
        print(f"| {name} | {mode} | {ps[0]['n']} | {statistics.median(spans):.2f} | {len(ps)} | {per} | {ok} |")
PY
