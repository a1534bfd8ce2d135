#!/usr/bin/env bash
# Issue 56 item 5 on a real GPU, through a real pinpointd (exclusive GPU): a deterministic PyTorch
# training run twice, once straight through and once suspended half-way (pinpoint suspend, a
# pause, pinpoint resume); the checksum of its weights at the end must be the same.
# Usage: tests/gpu/suspend_training_gpu.sh BIN_DIR (pinpoint, pinpointd, pinpoint-shim,
# pinpoint-checkpoint); python3 with torch on the GPU machine. Writes $OUT/suspend_training.txt
# when OUT is set. Every wait is bounded.
set -u
HERE=$(dirname "$(readlink -f "$0")")
P=""; . "$HERE/lib.sh"
suite_setup training "${1:?usage: suspend_training_gpu.sh BIN_DIR}"
RESULTS=${OUT:-$W}/suspend_training.txt
: > "$RESULTS"
say() { echo "$*" | tee -a "$RESULTS"; }
STEPS=${STEPS:-400}
# How long the second training stays suspended, and its time limit (--time, none by default): with
# PAUSE_S=30 TIME_LIMIT=0:40 its wall time passes its limit, its run time does not.
PAUSE_S=${PAUSE_S:-5}
TIME_LIMIT=${TIME_LIMIT:-}
cat > "$W/train.py" <<'PY'
import hashlib, os, sys, time
import torch
torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
steps = int(sys.argv[1])
dev = torch.device("cuda")
model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
                            torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
                            torch.nn.Linear(4096, 10)).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-4)
g = torch.Generator(device=dev).manual_seed(1)
x = torch.randn(8192, 4096, device=dev, generator=g)
y = torch.randint(0, 10, (8192,), device=dev, generator=g)
ballast = torch.ones(1024, 1024, 1024, device=dev)  # 4 GiB of state kept on the device
for step in range(steps):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    if step % 50 == 0:
        print(f"step {step} loss {loss.item():.6f}", flush=True)
    time.sleep(0.02)
h = hashlib.sha256()
for p in model.parameters():
    h.update(p.detach().cpu().numpy().tobytes())
h.update(str(ballast.sum().item()).encode())
print(f"train done checksum={h.hexdigest()}", flush=True)
PY
chmod a+r "$W/train.py"
cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "nvml", "default_mode": "exclusive",
 "cancel_grace_ms": 5000, "metrics_listen": "127.0.0.1:19482"}
CFG
trap 'stop_suite >/dev/null 2>&1' EXIT
start_pinpointd || { say "FAIL pinpointd did not answer"; cat "$W/pinpointd.log"; exit 1; }
cd /tmp
phase() { "$P" --json show "$1" | js "d['job'].get('suspend', {}).get('phase', 'none')"; }
phase_is() { test "$(phase "$1")" = "$2"; }
# Placed by pinpointd (no --device): the GPU is read from the job's allocation.
submit() { "$P" --json submit --gpus 1 --name "$1" ${2:+--time "$2"} -- env CUBLAS_WORKSPACE_CONFIG=:4096:8 python3 "$W/train.py" "$STEPS" | js "d['id']"; }
sum_of() { "$P" logs "$1" | sed -n 's/^train done checksum=//p'; }

say "=== straight through"
A=$(submit straight)
timeout 600 "$P" wait "$A" > /dev/null
STRAIGHT=$(sum_of "$A"); say "job $A: $(state_of "$A"), checksum ${STRAIGHT:-none}"

say "=== suspended half-way"
B=$(submit suspended "$TIME_LIMIT")
[ -n "$TIME_LIMIT" ] && say "time limit $TIME_LIMIT, suspended for ${PAUSE_S} s"
wait_for 300 sh -c "\"$P\" logs $B 2>/dev/null | grep -q '^step $((STEPS / 2))'" || say "job $B never reached step $((STEPS / 2))"
t0=$(date +%s%3N); "$P" suspend "$B" | tee -a "$RESULTS"
check "job $B suspended" wait_for 120 phase_is "$B" suspended
GPU=$("$P" --json show "$B" | js "d['job']['allocations'][0]['uuid']")
say "suspended in $(( $(date +%s%3N) - t0 )) ms; GPU memory used on its GPU: $(nvidia-smi --query-gpu=memory.used --format=csv,noheader -i "$GPU")"
sleep "$PAUSE_S"  # suspended a while: the measurement's pause, not a synchronisation
t1=$(date +%s%3N); "$P" resume "$B" | tee -a "$RESULTS"
check "job $B resumed" wait_for 120 phase_is "$B" none
say "resumed in $(( $(date +%s%3N) - t1 )) ms"
timeout 600 "$P" wait "$B" > /dev/null
SUSPENDED=$(sum_of "$B"); say "job $B: $(state_of "$B"), checksum ${SUSPENDED:-none}"
check "both trainings completed" test "$(state_of "$A")" = completed -a "$(state_of "$B")" = completed
check "the suspended training's result is unchanged (same checksum)" test -n "$STRAIGHT" -a "$STRAIGHT" = "$SUSPENDED"
"$P" show "$B" | sed -n '/history/,$p' | tee -a "$RESULTS"
say "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
