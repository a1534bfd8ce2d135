#!/usr/bin/env bash
# submit --signal on a real GPU (docs/cli.md "A signal before the limit"): a PyTorch training in
# an MPS slice gets SIGUSR1 before its time limit, writes a checkpoint and exits 0; with B: the
# signal reaches the training alone, not a helper it started. Usage: tests/gpu/signal_gpu.sh BIN_DIR
# BIN_DIR holds pinpointd, pinpoint, pinpoint-shim (and lib/). Needs python3 with torch. Prints
# PASS/FAIL lines and "N passed, M failed"; quits every MPS daemon it started.
set -u
. "$(dirname "$(readlink -f "$0")")/lib.sh"
suite_setup signal "${1:?usage: signal_gpu.sh BIN_DIR}"
cat > "$W/config.json" <<CFG
{"state_dir": "$W/state", "socket_path": "$W/sock", "backend": "nvml", "mps": "daemons",
 "mps_idle_quit_ms": 600000, "cancel_grace_ms": 3000}
CFG
start_pinpointd
cd /tmp
cat > "$W/train.py" <<'PY'
# Trains until told: SIGUSR1 sets a flag, the loop saves a checkpoint and exits 0. Times are
# from the process's start (importing torch and starting CUDA under MPS take seconds).
import signal, sys, time
t0 = time.time()
told = []
signal.signal(signal.SIGUSR1, lambda *_: told.append(time.time()))
import torch
model = torch.nn.Linear(1024, 1024).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(256, 1024, device="cuda")
steps, start = 0, time.time()
while not told and time.time() - start < 180:
    loss = model(x).square().mean()
    opt.zero_grad(); loss.backward(); opt.step(); steps += 1
torch.cuda.synchronize()
torch.save({"steps": steps, "model": model.state_dict()}, sys.argv[1])
print(f"checkpoint after {steps} steps, {told[0] - t0:.1f} s in ({start - t0:.1f} s to start)" if told else "no signal",
      flush=True)
sys.exit(0 if told else 3)
PY
chmod 644 "$W/train.py"; mkdir -p "$W/ckpt"; chmod 1777 "$W/ckpt"

echo "=== 1. --time 2:00 --signal USR1@90: the training checkpoints about 30 s in and completes"
a=$("$P" --json submit --device 0 --gpu-mem 8G --gpu-share 25% --time 2:00 --signal USR1@90 --name ckpt \
  -- python3 "$W/train.py" "$W/ckpt/a.pt" | js "d['id']")
timeout 150 "$P" wait "$a" > /dev/null
"$P" logs "$a"
"$P" show "$a" | grep -E "state|signal"
check "the training completed (exit 0 after its checkpoint)" test "$(state_of "$a")" = completed
check "it wrote its checkpoint" test -s "$W/ckpt/a.pt"
check "the signal came about 30 s in, while it trained, not at the limit" \
  sh -c "\"$P\" logs $a | grep -Eq 'checkpoint after [1-9][0-9]* steps, (29|3[0-1])\\.[0-9] s in'"
check "the job's events record the signal" sh -c "\"$P\" show $a | grep -q 'sent signal 10 to its processes, 90 s before its time limit'"

echo "=== 2. B: the command alone: a shell that starts the training in the background is told, the training is not"
b=$("$P" --json submit --device 0 --gpu-mem 8G --time 2:00 --signal B:USR1@90 --name shell \
  -- sh -c "python3 $W/train.py $W/ckpt/b.pt & child=\$!; trap 'echo shell told; kill -TERM \$child; wait \$child; echo training ended \$?; exit 0' USR1; wait" | js "d['id']")
timeout 150 "$P" wait "$b" > /dev/null
"$P" logs "$b"
check "the shell was told and ended its training itself" sh -c "\"$P\" logs $b | grep -q 'shell told'"
check "the training was not told (it was ended by the shell's SIGTERM, no checkpoint)" \
  sh -c "\"$P\" logs $b | grep -q 'training ended 143' && ! test -e $W/ckpt/b.pt"
check "the job completed" test "$(state_of "$b")" = completed

stop_suite
echo "$passed passed, $failed failed"
