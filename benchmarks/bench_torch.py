"""A plain PyTorch UNet on a field cut over the ranks (``darray.torch``): step time and peak memory per rank.

    python benchmarks/bench_torch.py [--sizes 128 256] [--steps 3]          # 1 rank, and plain torch
    mpiexec -n 2 python benchmarks/bench_torch.py --sizes 128 256
    mpiexec -n 4 python benchmarks/bench_torch.py --sizes 128 256

The model is :class:`UNet` of ``examples/torch_unet_unchanged.py`` (width
8, float32, SGD), a batch of 2 fields of ``n x n``, rows cut over the ranks.
One untimed warm-up step, then ``--steps`` steps, each between barriers: the
table gives the median of the slowest rank's wall time per step and each
rank's peak resident set size (``resource.getrusage``: the process's
high-water mark, the torch and MPI start-up included; the growth over the
start-up is the part that scales with the field). At one rank the same model
also trains in plain torch (no ShardTensor) for the baseline. Every rank uses
one torch thread. Only rank 0 prints.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

import darray as da
import darray.torch as dt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from torch_unet_unchanged import UNet


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(comm, n, steps, sharded: bool):
    torch.manual_seed(0)
    model = UNet(width=8)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 1, n, n, generator=g)
    y = torch.roll(x, 1, 2)
    if sharded:
        x, y = dt.shard(x, split=2), dt.shard(y, split=2)
    times = []
    for step in range(steps + 1):
        comm.barrier()
        t0 = time.perf_counter()
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
        comm.barrier()
        if step:
            times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[128, 256])
    ap.add_argument("--steps", type=int, default=3)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    comm = da.default_communicator()
    start = rss_mb()
    rows = []
    for n in args.sizes:
        t = run(comm, n, args.steps, sharded=True)
        peak = comm.allgather(torch.tensor([rss_mb()], dtype=torch.float64)).reshape(-1).tolist()
        rows.append((f"darray.torch P={comm.size}", n, t, peak))
        if comm.size == 1:
            rows.append(("plain torch", n, run(comm, n, args.steps, sharded=False), [rss_mb()]))
    if comm.rank == 0:
        print(f"# UNet width 8, batch 2, float32, {args.steps} steps; start-up RSS {start:.0f} MB")
        print(f"{'run':<22} {'n':>5} {'step s':>8}  peak RSS per rank MB")
        for name, n, t, peak in rows:
            print(f"{name:<22} {n:>5} {t:>8.3f}  {' '.join(f'{p:.0f}' for p in peak)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
