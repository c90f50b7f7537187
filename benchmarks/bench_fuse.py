"""W1, ``sum(a*b + c)``: darray.fuse against eager darray, NumPy, hand-written mpi4py + NumPy and a bandwidth bound.

    python benchmarks/bench_fuse.py [--log2n 24] [--reps 5]
    mpiexec -n 2 python benchmarks/bench_fuse.py
    python benchmarks/bench_fuse.py --smoke          # 2**16 cells, one rep

``a``, ``b``, ``c``: ``2**log2n`` float64 cells cut over the ranks. Timed,
each the median over ``--reps`` of the slowest rank's wall time between
barriers, after one warm-up (which compiles the kernel):

- ``fused``: ``@da.fuse def w1(a, b, c): return da.sum(a * b + c)``, one
  kernel per rank reading a, b and c once, then one allreduce;
- ``eager``: the same function undecorated (three passes, one temporary);
- ``numpy``: ``np.sum(a * b + c)`` on this rank's block (the 1-rank bar);
- ``hand``: hand-written mpi4py + NumPy, each rank's ``np.sum`` of its
  block's ``a * b + c`` and an ``Allreduce`` (the bar of DESIGN.md);
- ``bound``: a STREAM-style bandwidth bound measured in the same run: the
  bytes W1 must move per rank (three reads of 8 bytes per cell) over the
  copy bandwidth every rank gets at once (``np.copyto`` of a block, 16 bytes
  per cell: one read, one write);
- the elementwise part alone, ``a * b + c`` into a new array: fused and eager;
- ``--side N`` (default 2048): a Jacobi sweep of an ``N x N`` field with a
  halo of one cell, ``out[1:-1, 1:-1] = 0.25 * (four windows of u)``, fused
  (halo exchange behind the interior) and eager, against NumPy's slices on
  this rank's block and the bound of one read of ``u`` and one write of
  ``out`` per cell (the copy time);
- on NumPy blocks, when numexpr is installed: ``numexpr.evaluate`` of
  ``a*b + c`` and ``sum(a*b + c)`` on this rank's block, one thread, against
  the fused kernels on one thread (why darray.fuse compiles with numba).

Ratios are printed against ``hand`` (and ``numpy``). The development machine
is shared and loaded: numbers are indicative only. Only rank 0 prints.
"""

from __future__ import annotations

import argparse

import numpy as np

import darray as da
from bench_attention import timed  # the same timing rule (this folder is on sys.path)
from darray.fuse import execute as fuse_execute


@da.fuse
def w1(a, b, c):
    return da.sum(a * b + c)


@da.fuse
def fma(a, b, c):
    return a * b + c


@da.fuse
def jacobi(u, out):
    out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


def sweeps(comm, side: int, reps: int) -> dict[str, float]:
    """The Jacobi sweep fused, eagerly, in NumPy on this rank's block, and its copy bound."""
    u = da.random.default_rng(5).random((side, side), split=0, halo=1)
    out = da.zeros((side, side), split=0, halo=1)
    block = np.ascontiguousarray(u.local)
    local = np.empty_like(block)

    def numpy_sweep():
        local[1:-1, 1:-1] = 0.25 * (block[:-2, 1:-1] + block[2:, 1:-1] + block[1:-1, :-2] + block[1:-1, 2:])

    return {"jacobi fused": timed(comm, lambda: jacobi(u, out), reps),
            "jacobi eager": timed(comm, lambda: jacobi.__wrapped__(u, out), reps),
            "jacobi numpy": timed(comm, numpy_sweep, reps),
            "jacobi bound": timed(comm, lambda: np.copyto(local, block), reps)}


def hand_written(blocks):
    """mpi4py + NumPy: this rank's sum, one Allreduce (plain NumPy where mpi4py is missing: one process)."""
    try:
        from mpi4py import MPI
    except ImportError:  # pragma: no cover - darray[mpi] brings mpi4py
        return lambda: float(np.sum(blocks[0] * blocks[1] + blocks[2]))
    world = MPI.COMM_WORLD
    out = np.zeros(1)

    def run():
        local = np.array([np.sum(blocks[0] * blocks[1] + blocks[2])])
        world.Allreduce(local, out, op=MPI.SUM)
        return float(out[0])

    return run


def compilers(blocks, reps: int) -> dict[str, float]:
    """numexpr against the fused kernels on this rank's block, one thread each (empty without numexpr)."""
    try:
        import numexpr
    except ImportError:
        return {}
    names = dict(zip("abc", blocks))
    numexpr.set_num_threads(1)
    out = np.empty_like(blocks[0])
    local = [da.asarray(x, split=None) for x in blocks]
    threads = fuse_execute.rank_threads
    fuse_execute.rank_threads = lambda: 1
    try:
        found = {"numexpr a*b+c": lambda: numexpr.evaluate("a*b + c", local_dict=names, out=out),
                 "numexpr sum": lambda: numexpr.evaluate("sum(a*b + c)", local_dict=names),
                 "numba a*b+c": lambda: fma(*local), "numba sum": lambda: w1(*local)}
        return {k: timed(da.default_communicator(), f, reps) for k, f in found.items()}
    finally:
        fuse_execute.rank_threads = threads


#: Integer options: flag, default, meaning.
OPTIONS = (("--log2n", 24, "W1 cells: 2**log2n"), ("--reps", 5, "timed repetitions"),
           ("--side", 2048, "Jacobi field side"))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag, default, text in OPTIONS:
        parser.add_argument(flag, type=int, default=default, help=f"{text} (default {default})")
    parser.add_argument("--smoke", action="store_true", help="2**16 cells, a 64 x 64 field, one rep")
    args = parser.parse_args(argv)
    if args.smoke:
        args.log2n, args.reps, args.side = 16, 1, 64
    comm = da.default_communicator()
    n = 1 << args.log2n
    rng = np.random.default_rng(0)
    g = [rng.random(n) for _ in range(3)] if comm.size == 1 else None
    arrays = [da.asarray(g[i], split=0) if g is not None else da.random.default_rng(i).random(n) for i in range(3)]
    blocks = [np.ascontiguousarray(x.local) for x in arrays]
    dst = np.empty_like(blocks[0])
    times = {
        "fused": timed(comm, lambda: w1(*arrays), args.reps),
        "eager": timed(comm, lambda: w1.__wrapped__(*arrays), args.reps),
        "numpy": timed(comm, lambda: np.sum(blocks[0] * blocks[1] + blocks[2]), args.reps),
        "hand": timed(comm, hand_written(blocks), args.reps),
        "copy": timed(comm, lambda: np.copyto(dst, blocks[0]), args.reps),
        "fused a*b+c": timed(comm, lambda: fma(*arrays), args.reps),
        "eager a*b+c": timed(comm, lambda: fma.__wrapped__(*arrays), args.reps),
    }
    cells = blocks[0].size
    bandwidth = 16 * cells / times["copy"]  # bytes per second per rank, every rank copying at once
    times["bound"] = 24 * cells / bandwidth
    extra = compilers(blocks, args.reps)
    stencil = sweeps(comm, args.side, args.reps)
    check = abs(float(w1(*arrays)) - float(w1.__wrapped__(*arrays)))
    if comm.rank == 0:
        print(f"W1 sum(a*b + c), 2**{args.log2n} float64 cells, {comm.size} rank(s), "
              f"{fuse_execute.rank_threads()} kernel thread(s) per rank; copy bandwidth "
              f"{bandwidth / 1e9:.1f} GB/s per rank; |fused - eager| = {check:.2e}")
        for name, t in times.items():
            print(f"  {name:14s} {t * 1e3:9.2f} ms   {t / times['hand']:5.2f}x hand   {t / times['numpy']:5.2f}x numpy")
        print(f"  fused / bound {times['fused'] / times['bound']:.2f}x; fused / eager "
              f"{times['fused'] / times['eager']:.2f}x; fused a*b+c / eager {times['fused a*b+c'] / times['eager a*b+c']:.2f}x")
        print(f"Jacobi sweep, {args.side} x {args.side} float64, halo 1: " + ", ".join(
            f"{k.split()[1]} {t * 1e3:.2f} ms ({t / stencil['jacobi numpy']:.2f}x numpy)" for k, t in stencil.items()))
        if extra:
            print("  one thread, this rank's block: " + ", ".join(f"{k} {t * 1e3:.1f} ms" for k, t in extra.items()))


if __name__ == "__main__":
    main()
