"""Surrogate training step: time and peak memory per rank at the current rank count; local conv throughput.

    python benchmarks/bench_train.py [--n 2048] [--steps 5] [--channels 8]
    mpiexec -n 2 python benchmarks/bench_train.py --n 512
    python benchmarks/bench_train.py --smoke        # n=64, 2 steps, for CI
    python benchmarks/bench_train.py --conv [--n 1024] [--reps 3]   # local conv kernels vs torch

``--conv`` (one process) times the surrogate's three convolutions on one
``n x n`` block, forward and backward (input and weight gradients), with
darray's NumPy kernels (banded im2col + matmul), the previous
``sliding_window_view`` + ``einsum`` kernel, darray's torch kernels and
``torch.nn.functional.conv2d`` + ``aten.convolution_backward`` directly
(float64, and float32 where torch uses its oneDNN kernels); best of
``--reps``, GFLOP/s counted as 2 * multiply-adds of the forward.

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
from darray.nn.surrogate import SurrogateNet, periodic_bumps, training_pair
from darray.optim import Adam


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024.0 if sys.platform != "darwin" else peak / 2 ** 20  # KiB on Linux, bytes on macOS


def _einsum_conv(sub, w):
    """The kernel darray used before: im2col by sliding_window_view, contracted by einsum (forward only)."""
    from numpy.lib.stride_tricks import sliding_window_view

    cols = sliding_window_view(sub, w.shape[2:], axis=(2, 3))
    return np.einsum("ncxyuv,dcuv->ndxy", cols, w, optimize=True)


def conv_bench(n: int, channels: int, reps: int) -> list[dict]:
    """Local 2-d convolutions of the surrogate's shapes: darray kernels vs torch, forward and backward."""
    import importlib

    from darray.nn._kernels import Kernels, kernels_for

    rng = np.random.default_rng(0)
    shapes = [("enc 1->c 3x3", 1, channels, n, 3), ("mid c->c 3x3", channels, channels, n // 2, 3),
              ("head c->1 1x1", channels, 1, n, 1)]
    candidates = [("darray numpy (im2col bands)", Kernels(importlib.import_module("array_api_compat.numpy")),
                   np.float64)]
    try:
        import torch

        txp = importlib.import_module("array_api_compat.torch")
        tk = kernels_for(txp)
        candidates += [("darray torch kernels", tk, np.float64), ("darray torch kernels f32", tk, np.float32),
                       ("generic im2col on torch", Kernels(txp), np.float64),
                       ("generic im2col on torch f32", Kernels(txp), np.float32)]
    except ImportError:
        torch = None

    def best(f):
        f()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            f()
            times.append(time.perf_counter() - t0)
        return min(times)

    rows = []
    for label, cin, cout, m, k in shapes:
        x = rng.standard_normal((1, cin, m + k - 1, m + k - 1))
        w = rng.standard_normal((cout, cin, k, k))
        g = rng.standard_normal((1, cout, m, m))
        flops = 2.0 * cin * cout * k * k * m * m
        row = {"layer": label, "shape": f"(1,{cin},{m},{m})", "gflop": flops / 1e9}
        row["einsum (previous) fwd"] = best(lambda: _einsum_conv(x, w))
        for name, kern, dtype in candidates:
            xs, ws, gs = (kern.xp.asarray(a.astype(dtype)) for a in (x, w, g))
            row[f"{name} fwd"] = best(lambda: kern.conv(xs, ws, (1, 1), (1, 1), 1))
            row[f"{name} bwd"] = best(lambda: kern.conv_backward(xs, ws, gs, (1, 1), (1, 1), 1))
        if torch is not None:
            xt, wt = torch.from_numpy(x), torch.from_numpy(w)
            row["torch.nn.functional.conv2d fwd"] = best(lambda: torch.nn.functional.conv2d(xt, wt))
        rows.append(row)
    return rows


def print_conv(rows, n, reps):
    import os

    print(f"local conv2d kernels, one {n}x{n} block, best of {reps}; threads: "
          f"OMP={os.environ.get('OMP_NUM_THREADS', 'default')}, torch={_torch_threads()}")
    for row in rows:
        print(f"{row['layer']} {row['shape']}: {row['gflop']:.3f} GFLOP forward")
        for key, value in row.items():
            if key in ("layer", "shape", "gflop"):
                continue
            rate = row["gflop"] / value if key.endswith("fwd") else 2 * row["gflop"] / value
            print(f"    {key:<36} {value * 1e3:9.1f} ms  {rate:6.2f} GFLOP/s")


def _torch_threads():
    try:
        import torch

        return torch.get_num_threads()
    except ImportError:
        return "-"


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2048)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--channels", type=int, default=8)
    parser.add_argument("--smoke", action="store_true", help="n=64, 2 steps")
    parser.add_argument("--conv", action="store_true", help="local conv kernels vs torch (one process)")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args(argv)
    if args.smoke:
        args.n, args.steps = 64, 2
    if args.conv:
        rows = conv_bench(args.n, args.channels, args.reps)
        print_conv(rows, args.n, args.reps)
        return {"conv": rows}
    comm = da.default_communicator()
    rss_start = peak_rss_mb()

    x, y, _ = training_pair(periodic_bumps(args.n), max_size=args.n)
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
        import os

        threads = ", ".join(f"{k}={os.environ[k]}" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")
                            if k in os.environ) or "BLAS threads: library default"
        print(f"surrogate training step: n={args.n} channels={args.channels} ranks={comm.size} "
              f"transport={comm.name}; median of {args.steps} steps after 1 warm-up; final loss {loss:.6e}; "
              f"{threads}")
        if comm.size > 1 and "OMP_NUM_THREADS" not in os.environ and "OPENBLAS_NUM_THREADS" not in os.environ:
            print("note: every rank runs its own BLAS thread pool; with several ranks per node set "
                  "OMP_NUM_THREADS=<cores per rank> (oversubscribed BLAS threads made 2 ranks 3-6x slower here)")
        print(f"step wall time (slowest rank, median): {result['step_s'] * 1e3:.1f} ms")
        print(f"{'rank':>4} | {'CPU s/step':>10} | {'RSS at start MB':>15} | {'peak RSS MB':>11}")
        print("-----+------------+-----------------+------------")
        for r, (cpu, start, peak) in enumerate(per_rank):
            print(f"{r:>4} | {cpu:>10.3f} | {start:>15.0f} | {peak:>11.0f}")
    return result


if __name__ == "__main__":
    main()
