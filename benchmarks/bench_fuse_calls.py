"""Per-call cost of small fused stencils: ``@da.fuse`` against the same function eager, in one run.

    python benchmarks/bench_fuse_calls.py [--side 258] [--number 300] [--rounds 7]
    mpiexec -n 2 python benchmarks/bench_fuse_calls.py
    python benchmarks/bench_fuse_calls.py --smoke    # a 34 x 34 field, 20 calls, one round

At small sizes a fused call is dominated by what runs around its kernel, so
this times calls, not bandwidth: per workload, ``--rounds`` rounds of
``--number`` calls each, fused and eager in alternation (the machine is
shared: alternation keeps drift out of the ratio), best round, microseconds
per call on the slowest rank. Workloads on a ``side x side`` float64 field
cut in rows over the ranks:

- ``Jacobi sweep``: ``v[1:-1, 1:-1] = 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] +
  u[1:-1, 2:] + u[1:-1, :-2])`` (u and v swapped every call);
- ``README sweep``: the README's in-place update of ``u[1:-1, 1:-1]``;
- ``Jacobi map_overlap``: a periodic ``map_overlap(..., out=v)``, swapped;
- ``residual``: ``sum(lap * lap)`` of the 5-point Laplacian (a reduction).

Also printed: the fused function's ``stats`` (traces, fused and eager calls,
plans built and replayed) and the largest |fused - eager| (0: bitwise).
Only rank 0 prints.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import darray as da


@da.fuse
def jacobi(u, v):
    v[1:-1, 1:-1] = 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2])


@da.fuse
def readme_sweep(u):
    u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])


def _block(b):
    return 0.25 * (b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:])


@da.fuse
def jacobi_overlap(u, v):
    da.map_overlap(_block, u, depth=1, boundary="periodic", trim=False, out=v)


@da.fuse
def residual(u):
    lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
    return da.sum(lap * lap)


def _field(side: int, **kw):
    x = da.linspace(0.0, 1.0, side)
    ys, xs = da.meshgrid(x, x, indexing="ij")
    return da.asarray(da.exp(-50 * ((xs - 0.5) ** 2 + (ys - 0.5) ** 2)), split=0, **kw)


def _swapping(f, pair):
    def call():
        f(pair[0], pair[1])
        pair.reverse()
    return call


def workloads(side: int):
    """Per workload: (fused call, eager call, the fused result, the eager result) as zero-argument functions."""
    out = {}
    for name, fn, kw in (("Jacobi sweep", jacobi, {}), ("Jacobi map_overlap", jacobi_overlap,
                                                         {"halo": 1, "boundary": "periodic"})):
        fused, eager = [_field(side, **kw), _field(side, **kw)], [_field(side, **kw), _field(side, **kw)]
        out[name] = (fn, _swapping(fn, fused), _swapping(fn.__wrapped__, eager), lambda p=fused: p[0],
                     lambda p=eager: p[0])
    u, w = _field(side), _field(side)
    out["README sweep"] = (readme_sweep, lambda: readme_sweep(u), lambda: readme_sweep.__wrapped__(w), lambda: u,
                           lambda: w)
    r = _field(side)
    got = {}
    out["residual"] = (residual, lambda: got.__setitem__("f", residual(r)),
                       lambda: got.__setitem__("e", residual.__wrapped__(r)), lambda: got["f"], lambda: got["e"])
    return out


def per_call(comm, f, number: int) -> float:
    comm.barrier()
    t0 = time.perf_counter()
    for _ in range(number):
        f()
    elapsed = np.asarray([(time.perf_counter() - t0) / number])
    return float(comm.allreduce(elapsed, "max")[0])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=258, help="field side (default 258)")
    parser.add_argument("--number", type=int, default=300, help="calls per round (default 300)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds, fused and eager alternating (default 7)")
    parser.add_argument("--smoke", action="store_true", help="a 34 x 34 field, 20 calls, one round")
    args = parser.parse_args(argv)
    if args.smoke:
        args.side, args.number, args.rounds = 34, 20, 1
    comm = da.default_communicator()
    rows = {}
    for name, (fn, fused, eager, fused_value, eager_value) in workloads(args.side).items():
        for f in (fused, eager):  # warm-up: compiles the kernels, builds the plans
            f()
            f()
        best = {"fused": np.inf, "eager": np.inf}
        for _ in range(args.rounds):
            best["fused"] = min(best["fused"], per_call(comm, fused, args.number))
            best["eager"] = min(best["eager"], per_call(comm, eager, args.number))
        a, b = fused_value(), eager_value()
        diff = float(da.max(da.abs(a - b))) if type(a) is da.DArray and a.ndim else abs(float(a) - float(b))
        rows[name] = (best, diff, {**fn.stats, **fn.replay} if hasattr(fn, "replay") else dict(fn.stats))
    if comm.rank == 0:
        print(f"{args.side}^2 float64, {comm.size} rank(s); best of {args.rounds} x {args.number} calls, "
              f"us per call (slowest rank); /proc/loadavg {open('/proc/loadavg').read().strip()}")
        print("| workload | eager us | fused us | fused/eager | max abs(fused - eager) | stats |")
        print("|---|---|---|---|---|---|")
        for name, (best, diff, stats) in rows.items():
            print(f"| {name} | {best['eager'] * 1e6:.0f} | {best['fused'] * 1e6:.0f} | "
                  f"{best['fused'] / best['eager']:.2f} | {diff:.1e} | {stats} |")


if __name__ == "__main__":
    main()
