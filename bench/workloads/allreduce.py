#!/usr/bin/env python3
"""pp-allreduce: a real multi-GPU program for pinpoint's tests: NCCL all-reduce through PyTorch.

One process per visible GPU (torch.multiprocessing), joined in one NCCL group. Each rank fills a
tensor of --mib MiB on its own GPU with its rank + 1, all-reduces it (sum) --iters times, and
checks the result against the closed form. Rank 0 prints, last:
    pp-allreduce ok world=<N> gpus=<uuid,...> mib=<M> iters=<K> seconds=<s> busbw_gbs=<GB/s>
Exit codes: 0 ok, 2 CUDA/NCCL error or fewer than 2 GPUs, 3 wrong result, 64 bad usage.
"""
import argparse
import os
import sys
import time


def parse_args(argv):
    p = argparse.ArgumentParser(prog="allreduce.py", description=__doc__.split("\n")[0])
    p.add_argument("--mib", type=int, default=256)
    p.add_argument("--iters", type=int, default=20)
    args = p.parse_args(argv)
    if args.mib <= 0 or args.iters <= 0:
        p.error("--mib and --iters must be positive")
    return args


def worker(rank, world, args, port, results):
    import torch
    import torch.distributed as dist

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    n = args.mib * (1 << 20) // 4
    x = torch.full((n,), float(rank + 1), device=f"cuda:{rank}")
    dist.all_reduce(x)  # warm-up: NCCL sets up its rings here
    torch.cuda.synchronize()
    x.fill_(float(rank + 1))
    t0 = time.monotonic()
    for _ in range(args.iters):
        dist.all_reduce(x)
        x.div_(world)  # keeps the values bounded: sum of 1..world, averaged, each round
    torch.cuda.synchronize()
    secs = time.monotonic() - t0
    # After round 1 every element is mean(1..world) = (world+1)/2; each later round keeps it.
    want = (world + 1) / 2
    ok = bool(torch.allclose(x, torch.full_like(x, want)))
    uuid = str(torch.cuda.get_device_properties(rank).uuid)
    results.put((rank, ok, uuid, secs))
    dist.destroy_process_group()


def main(argv):
    args = parse_args(argv)
    try:
        import torch
        import torch.multiprocessing as mp
    except ImportError as e:
        print(f"pp-allreduce error: {e}", file=sys.stderr)
        return 2
    world = torch.cuda.device_count()
    if world < 2:
        print(f"pp-allreduce error: needs 2 GPUs or more, sees {world} "
              f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '')})", file=sys.stderr)
        return 2
    port = 29500 + os.getpid() % 1000
    ctx = mp.get_context("spawn")
    results = ctx.SimpleQueue()
    procs = [ctx.Process(target=worker, args=(r, world, args, port, results)) for r in range(world)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    if any(p.exitcode != 0 for p in procs):
        print("pp-allreduce error: a rank failed: exit codes "
              + ",".join(str(p.exitcode) for p in procs), file=sys.stderr)
        return 2
    got = sorted(results.get() for _ in range(world))
    if not all(ok for _, ok, _, _ in got):
        print("pp-allreduce error: wrong all-reduce result", file=sys.stderr)
        return 3
    secs = max(s for _, _, _, s in got)
    # Bus bandwidth as nccl-tests defines it for all-reduce: bytes * 2 * (n-1) / n per second.
    bytes_ = args.mib * (1 << 20) * args.iters
    busbw = bytes_ * 2 * (world - 1) / world / secs / 1e9
    uuids = ",".join(u for _, _, u, _ in got)
    print(f"pp-allreduce ok world={world} gpus={uuids} mib={args.mib} iters={args.iters} "
          f"seconds={secs:.3f} busbw_gbs={busbw:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
