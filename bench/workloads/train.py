#!/usr/bin/env python3
"""pp-torch: a small PyTorch training for pinpoint-bench.

A multilayer perceptron (--in features -> --layers hidden layers of --hidden units, ReLU -> one
logit) is trained with SGD and momentum for a fixed number of epochs on a synthetic binary
classification set that lives on the GPU, like the small physics trainings of the benchmark's
seeds.

It is made GPU-bound rather than launch-bound: a plain Python loop over a tiny MLP spends its time
launching kernels, and then every sharing mode looks the same. Here the matrices are large enough
(batch 1024, 1024 units) and the whole training step (forward, loss, backward, optimizer) is
captured once as a CUDA graph and replayed, so the host does three launches per step while the
GPU does a few dozen kernels. --no-graph runs the same step eagerly.

Prints "pp-torch ok ..." and, last, the work done:
    pp-work units=<epochs> unit=epochs seconds=<since the script started, torch import included>
Exit codes: 0 ok, 2 CUDA error or no GPU, 3 out of device memory, 64 bad usage.
"""
import argparse
import os
import sys
import time

T0 = time.monotonic()  # before `import torch`: loading torch is part of what the job costs


def parse_args(argv):
    p = argparse.ArgumentParser(prog="train.py", description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--samples", type=int, default=131072)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--in", dest="inputs", type=int, default=64)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--layers", type=int, default=3, help="hidden layers")
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-graph", action="store_true", help="run each step eagerly")
    p.add_argument("--fp32", action="store_true", help="no TF32 in matrix products")
    p.add_argument("--device", default="cuda", help="cuda, or cpu to check the script without a GPU")
    a = p.parse_args(argv)
    if a.epochs < 1 or a.batch < 1 or a.samples < a.batch or a.hidden < 1 or a.layers < 1:
        p.error("epochs, batch, hidden and layers must be positive and samples >= batch")
    return a


def main(argv):
    a = parse_args(argv)
    import torch  # noqa: E402  (timed from T0 on purpose)

    cuda = a.device == "cuda"
    if cuda and not torch.cuda.is_available():
        print("pp-torch error: no CUDA device", flush=True)
        return 2
    dev = torch.device(a.device)
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = not a.fp32
        torch.backends.cudnn.allow_tf32 = not a.fp32
        props = torch.cuda.get_device_properties(dev)
        print(f"pp-torch device={props.name} sms={props.multi_processor_count} torch={torch.__version__} "
              f"cuda={torch.version.cuda} visible={os.environ.get('CUDA_VISIBLE_DEVICES', '(unset)')} "
              f"mps_pipe={os.environ.get('CUDA_MPS_PIPE_DIRECTORY', '(unset)')}", flush=True)

    gen = torch.Generator(device=dev)
    gen.manual_seed(a.seed)
    x = torch.rand(a.samples, a.inputs, device=dev, generator=gen) * 2 - 1
    teacher = torch.sin(1.7 * torch.arange(a.inputs, device=dev, dtype=torch.float32) + 0.3)
    second = x[:, 1] if a.inputs > 1 else x[:, 0]
    y = ((x @ teacher + 2 * x[:, 0] * second) > 0).float().unsqueeze(1)

    torch.manual_seed(a.seed)
    layers = [torch.nn.Linear(a.inputs, a.hidden), torch.nn.ReLU()]
    for _ in range(a.layers - 1):
        layers += [torch.nn.Linear(a.hidden, a.hidden), torch.nn.ReLU()]
    layers.append(torch.nn.Linear(a.hidden, 1))
    model = torch.nn.Sequential(*layers).to(dev)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)

    steps = a.samples // a.batch
    xb = x[: steps * a.batch].view(steps, a.batch, a.inputs)
    yb = y[: steps * a.batch].view(steps, a.batch, 1)
    static_x = xb[0].clone()
    static_y = yb[0].clone()
    loss_sum = torch.zeros((), device=dev)

    def step():
        out = model(static_x)
        loss = loss_fn(out, static_y)
        loss.backward()
        opt.step()
        loss_sum.add_(loss.detach())

    graph = None
    if cuda and not a.no_graph:
        try:
            # Warm up on a side stream (as PyTorch's CUDA graph notes require), then capture.
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    opt.zero_grad(set_to_none=True)
                    step()
            torch.cuda.current_stream().wait_stream(side)
            opt.zero_grad(set_to_none=True)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                step()
        except RuntimeError as e:  # some builds cannot capture: train eagerly, and say so
            print(f"pp-torch warning: CUDA graph capture failed ({e}); running eagerly", flush=True)
            graph = None

    if cuda:
        torch.cuda.synchronize()
    t_train = time.monotonic()
    first_loss = last_loss = float("nan")
    for epoch in range(1, a.epochs + 1):
        loss_sum.zero_()
        for i in range(steps):
            static_x.copy_(xb[i])
            static_y.copy_(yb[i])
            if graph is not None:
                graph.replay()
            else:
                opt.zero_grad(set_to_none=True)
                step()
        last_loss = loss_sum.item() / steps  # one host sync per epoch
        if epoch == 1:
            first_loss = last_loss
            print(f"pp-torch epoch 1 loss {last_loss:.4f}", flush=True)
        if last_loss != last_loss:
            print("pp-torch error: loss is not finite", flush=True)
            return 2
    train_s = time.monotonic() - t_train
    with torch.no_grad():  # in chunks: the whole set at once would need about 1 GiB more
        hits = sum(((model(xc) > 0).float() == yc).sum().item()
                   for xc, yc in zip(x.split(16384), y.split(16384)))
        acc = hits / a.samples
    total_s = time.monotonic() - T0
    print(f"pp-torch epoch {a.epochs} loss {last_loss:.4f} acc {acc:.3f}")
    print(f"pp-torch ok epochs={a.epochs} steps_per_epoch={steps} batch={a.batch} hidden={a.hidden} "
          f"layers={a.layers + 1} graph={1 if graph is not None else 0} train_seconds={train_s:.3f} "
          f"epochs_per_s={a.epochs / train_s:.2f} loss_first={first_loss:.4f} loss_last={last_loss:.4f}")
    print(f"pp-work units={a.epochs} unit=epochs seconds={total_s:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except RuntimeError as e:  # CUDA errors surface as RuntimeError (OutOfMemoryError is one)
        oom = "out of memory" in str(e).lower()
        print(f"pp-torch error: {e}", flush=True)
        sys.exit(3 if oom else 2)
