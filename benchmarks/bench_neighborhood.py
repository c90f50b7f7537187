"""Neighbourhood attention against ring attention on the same field: time, bytes and peak memory per rank.

    python benchmarks/bench_neighborhood.py [--side 64] [--window 7] [--heads 4] [--features 16] [--reps 3]
    mpiexec -n 4 python benchmarks/bench_neighborhood.py --side 128
    mpiexec -n 4 python benchmarks/bench_neighborhood.py --side 256   # the 256^2-token field (ring skipped)
    mpiexec -n 4 python benchmarks/bench_neighborhood.py --side 256 --ring-max 65536 --reps 1  # ring too (long)
    python benchmarks/bench_neighborhood.py --smoke        # 16 x 16 cells, one rep

A ``side x side`` field of ``heads x features`` channels, rows cut over the
ranks, attended two ways, forward and forward + backward (gradients of q, k
and v on the tape):

- ``neighbourhood``: :func:`darray.nn.functional.neighborhood_attention`,
  each cell attends to the ``window x window`` cells around it (periodic);
  keys and values come from one halo exchange of ``window // 2`` rows;
- ``ring``: :func:`darray.nn.functional.scaled_dot_product_attention` on the
  same cells as ``side**2`` tokens (every cell attends to every cell), the
  key/value blocks travelling around the ranks. Skipped above ``--ring-max``
  tokens (its time grows as tokens**2: on a 256 x 256 field, 16 times the
  128 x 128 field's).

Times: one warm-up, then the median over ``--reps`` of the slowest rank's
wall time between barriers. Bytes: what each rank sent (darray's tracer) in
one forward + backward. Peak memory, the largest over the ranks: what NumPy
and Python allocated during one forward + backward (``tracemalloc``, each
method on its own), and the resident-set high-water mark after the
neighbourhood runs and again after the ring runs (it never falls). Only
rank 0 prints.
"""

from __future__ import annotations

import argparse

import numpy as np

import darray as da
from bench_attention import peak_rss_mb, timed, traced_peak_mb  # the same timing and memory rules (this folder is on sys.path)
from darray.autodiff import Variable
from darray.nn import functional as F


def _sent(comm, run) -> float:
    """Bytes this rank sends in one ``run()``, from the tracer."""
    with da.tracing() as trace:
        run()
    return float(sum(e["nbytes"] for e in trace.events if e["kind"] == "comm"))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=64, help="field side (default 64: 4096 cells)")
    parser.add_argument("--window", type=int, default=7, help="neighbourhood window, odd (default 7)")
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--features", type=int, default=16, help="features per head (default 16)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--ring-max", type=int, default=16384, help="largest token count the ring runs")
    parser.add_argument("--smoke", action="store_true", help="16 x 16 cells, one rep")
    args = parser.parse_args(argv)
    if args.smoke:
        args.side, args.reps = 16, 1
    comm = da.default_communicator()
    heads, d, side = args.heads, args.features, args.side
    rng = np.random.default_rng(0)
    q, k, v, g = (rng.standard_normal((1, heads * d, side, side)) for _ in range(4))
    fields = [da.asarray(x, split=2) for x in (q, k, v)]
    g_field = da.asarray(g, split=2)
    # the same numbers as (1, heads, tokens, d) sequences, tokens row-major and cut over the ranks
    tokens = [da.asarray(np.ascontiguousarray(x.reshape(heads, d, side * side).transpose(0, 2, 1))[None], split=2)
              for x in (q, k, v, g)]

    def window(backward: bool):
        vs = [Variable(x, requires_grad=backward) for x in fields]
        out = F.neighborhood_attention(*vs, kernel_size=args.window, boundary="periodic", num_heads=heads)
        if backward:
            (out * g_field).sum().backward()

    def ring(backward: bool):
        vs = [Variable(x, requires_grad=backward) for x in tokens[:3]]
        out = F.scaled_dot_product_attention(*vs)
        if backward:
            (out * tokens[3]).sum().backward()

    rows = []
    for name, run in (("neighbourhood", window), ("ring", ring)):
        if name == "ring" and side * side > args.ring_max:
            rows.append((name, float("nan"), float("nan"), float("nan"), float("nan"), float("nan")))
            continue
        forward = timed(comm, lambda: run(False), args.reps)
        both = timed(comm, lambda: run(True), args.reps)
        sent = comm.allreduce(np.asarray([_sent(comm, lambda: run(True))]), "max")[0]
        traced = comm.allreduce(np.asarray([traced_peak_mb(lambda: run(True))]), "max")[0]
        peak = comm.allreduce(np.asarray([peak_rss_mb()]), "max")[0]
        rows.append((name, forward, both, sent, traced, peak))
    if comm.rank == 0:
        print(f"attention on a {side}x{side} field ({side * side} tokens), {heads} heads x {d} features, "
              f"window {args.window}, {comm.size} ranks (float64)")
        print(f"  {'':14s} {'forward ms':>11s} {'fwd+bwd ms':>11s} {'sent/rank MiB':>14s} {'traced peak MiB':>16s}"
              f" {'peak RSS MiB':>13s}")
        for name, forward, both, sent, traced, peak in rows:
            print(f"  {name:14s} {forward * 1e3:11.1f} {both * 1e3:11.1f} {sent / 2**20:14.2f} {traced:16.1f}"
                  f" {peak:13.1f}")


if __name__ == "__main__":
    main()
