"""Surrogate training step: time and peak memory per rank at the current rank count.

    python benchmarks/bench_train.py [--n 2048] [--steps 5] [--channels 8]
    mpiexec -n 2 python benchmarks/bench_train.py --n 512
    python benchmarks/bench_train.py --smoke        # n=64, 2 steps, for CI

Trains :class:`darray.nn.surrogate.SurrogateNet` (Adam) on the full ``n x n``
field cut over the ranks (no downsampling, unlike ``train_surrogate``'s
default): one untimed warm-up step, then ``--steps`` timed steps. Each step is
timed between barriers; the table gives the median over steps of the slowest
rank's wall time, each rank's median CPU time per step (``time.process_time``:
less sensitive to other jobs on a shared machine) and each rank's peak
resident set size (``resource.getrusage``, the process's high-water mark,
NumPy/MPI start-up included). Only rank 0 prints.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np

import darray as da
from darray import nn
from darray.nn import functional as F
from darray.nn.surrogate import SurrogateNet, training_pair
from darray.optim import Adam


def field(n: int) -> da.DArray:
    ys, xs = da.meshgrid(da.linspace(0.0, 1.0, n), da.linspace(0.0, 1.0, n), indexing="ij", split=0)
    u = da.zeros_like(xs)
    for cx, cy, w in ((0.3, 0.3, 60.0), (0.7, 0.6, 40.0), (0.5, 0.8, 90.0)):
        u = u + da.exp(-w * ((xs - cx) ** 2 + (ys - cy) ** 2))
    return u


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024.0 if sys.platform != "darwin" else peak / 2 ** 20  # KiB on Linux, bytes on macOS


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2048)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--channels", type=int, default=8)
    parser.add_argument("--smoke", action="store_true", help="n=64, 2 steps")
    args = parser.parse_args(argv)
    if args.smoke:
        args.n, args.steps = 64, 2
    comm = da.default_communicator()
    rss_start = peak_rss_mb()

    x, y, _ = training_pair(field(args.n), max_size=args.n)
    nn.init.manual_seed(0)
    model = SurrogateNet(args.channels, comm=comm)
    optimizer = Adam(model.parameters(), lr=1e-2)

    def step() -> float:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        return float(loss.data)

    step()  # warm-up: plans, caches
    walls, cpus = [], []
    for _ in range(args.steps):
        comm.barrier()
        t0, c0 = time.perf_counter(), time.process_time()
        loss = step()
        cpus.append(time.process_time() - c0)
        walls.append(time.perf_counter() - t0)
        comm.barrier()
    wall = np.asarray(comm.allreduce(np.asarray(walls), "max"))
    per_rank = np.asarray(comm.allgather(np.asarray([np.median(cpus), rss_start, peak_rss_mb()])))
    result = {"ranks": comm.size, "n": args.n, "channels": args.channels, "steps": args.steps,
              "step_s": float(np.median(wall)), "cpu_s": per_rank[:, 0].tolist(),
              "rss_start_mb": per_rank[:, 1].tolist(), "rss_peak_mb": per_rank[:, 2].tolist(), "loss": loss}
    if comm.rank == 0:
        print(f"surrogate training step: n={args.n} channels={args.channels} ranks={comm.size} "
              f"transport={comm.name}; median of {args.steps} steps after 1 warm-up; final loss {loss:.6e}")
        print(f"step wall time (slowest rank, median): {result['step_s'] * 1e3:.1f} ms")
        print(f"{'rank':>4} | {'CPU s/step':>10} | {'RSS at start MB':>15} | {'peak RSS MB':>11}")
        print("-----+------------+-----------------+------------")
        for r, (cpu, start, peak) in enumerate(per_rank):
            print(f"{r:>4} | {cpu:>10.3f} | {start:>15.0f} | {peak:>11.0f}")
    return result


if __name__ == "__main__":
    main()
