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
  block's ``a * b + c`` and an ``Allreduce`` (the bar hand-written MPI code sets);
- ``bound``: a STREAM-style bandwidth bound measured in the same run: the
  bytes W1 must move per rank (three reads of 8 bytes per cell) over the
  copy bandwidth every rank gets at once (``np.copyto`` of a block, 16 bytes
  per cell: one read, one write);
- the elementwise part alone, ``a * b + c`` into a new array: fused and eager;
- ``--side N`` (default 2048): the README's sweep and a periodic Jacobi
  ``map_overlap`` of an ``N x N`` field (:mod:`bench_fuse_stencils`), fused,
  eager, hand-written (Sendrecv of boundary rows, slices), NumPy's slices on
  this rank's block, and the bound of one read and one write per cell;
- ``--params N`` (default 2**22): an Adam update of ``N`` float32 parameters
  (:mod:`bench_fuse_train`), fused vs eager vs NumPy's in-place operators;
- on NumPy blocks, when numexpr is installed: ``numexpr.evaluate`` of
  ``a*b + c`` and ``sum(a*b + c)`` on this rank's block, one thread, against
  the fused kernels on one thread (why darray.fuse compiles with numba).

Ratios are printed against ``hand`` (and ``numpy``), then a Markdown table of
every workload (ms per call; fused / hand and fused / bound with the targets
of issue #21), with ``/proc/loadavg``. The development machine is shared and
loaded: numbers are indicative only. Only rank 0 prints.
"""

from __future__ import annotations

import argparse

import numpy as np

import darray as da
from bench_attention import timed  # the same timing rule (this folder is on sys.path)
from bench_fuse_stencils import stencils
from bench_fuse_train import optimizer
from darray.fuse import execute as fuse_execute


@da.fuse
def w1(a, b, c):
    return da.sum(a * b + c)


@da.fuse
def fma(a, b, c):
    return a * b + c


@da.fuse
def w1_returned(a, b, c):
    """``y = a*b + c; s = sum(y)`` with y returned: one pass writes y and sums it."""
    y = a * b + c
    return y, da.sum(y)


def hand_returned(blocks):
    """mpi4py + NumPy of ``y = a*b + c; s = sum(y)``, y kept: NumPy's passes, then one Allreduce."""
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    out = np.zeros(1)

    def run():
        y = blocks[0] * blocks[1] + blocks[2]
        world.Allreduce(np.array([np.sum(y)]), out)
        return y, out[0]

    return run


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
           ("--side", 2048, "stencil field side"), ("--params", 1 << 22, "Adam update: float32 parameters"))

#: Workload -> (target fused / hand-written, target fused / bound) from issue #21.
TARGETS = {"W1 sum(a*b + c)": (0.5, 1.3), "y = a*b + c; sum(y), y returned": (0.6, 1.3),
           "README sweep": (0.6, 1.3), "residual sum(lap**2)": (None, 1.3),
           "Jacobi map_overlap": (0.6, 1.3), "Adam update": (None, 1.3)}


def table(rows: dict[str, dict[str, float]]) -> str:
    """The summary as a Markdown table: ms per call, and the fused time's ratios with the targets."""
    lines = ["| workload | fused ms | eager ms | hand ms | numpy ms | bound ms | fused/hand (target) "
             "| fused/bound (target) | fused/eager |", "|---" * 9 + "|"]
    for name, r in rows.items():
        hand_target, bound_target = TARGETS[name]
        lines.append(f"| {name} | " + " | ".join(f"{r[k] * 1e3:.1f}" for k in ("fused", "eager", "hand", "numpy",
                                                                            "bound"))
                     + f" | {r['fused'] / r['hand']:.2f} ({hand_target or '-'}) | {r['fused'] / r['bound']:.2f} "
                     f"({bound_target}) | {r['fused'] / r['eager']:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag, default, text in OPTIONS:
        parser.add_argument(flag, type=int, default=default, help=f"{text} (default {default})")
    parser.add_argument("--smoke", action="store_true", help="2**16 cells, a 64 x 64 field, one rep")
    args = parser.parse_args(argv)
    if args.smoke:
        args.log2n, args.reps, args.side, args.params = 16, 1, 64, 1 << 16
    comm = da.default_communicator()
    load0 = open("/proc/loadavg").read().strip()
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
        "fused y, sum": timed(comm, lambda: w1_returned(*arrays), args.reps),
        "eager y, sum": timed(comm, lambda: w1_returned.__wrapped__(*arrays), args.reps),
        "hand y, sum": timed(comm, hand_returned(blocks), args.reps),
        "numpy y, sum": timed(comm, lambda: np.sum(np.add(blocks[0] * blocks[1], blocks[2])), args.reps),
    }
    cells = blocks[0].size
    bandwidth = 16 * cells / times["copy"]  # bytes per second per rank, every rank copying at once
    times["bound"] = 24 * cells / bandwidth
    extra = compilers(blocks, args.reps)
    rows = {"W1 sum(a*b + c)": {k: times[k] for k in ("fused", "eager", "hand", "numpy", "bound")},
            "y = a*b + c; sum(y), y returned": {"fused": times["fused y, sum"], "eager": times["eager y, sum"],
                                                "hand": times["hand y, sum"], "numpy": times["numpy y, sum"],
                                                "bound": 32 * cells / bandwidth}}  # (3 reads, 1 write)
    rows.update(stencils(comm, args.side, args.reps))
    rows["Adam update"] = optimizer(comm, args.params, args.reps)
    load = open("/proc/loadavg").read().strip()
    check = abs(float(w1(*arrays)) - float(w1.__wrapped__(*arrays)))
    if comm.rank == 0:
        print(f"/proc/loadavg at the start {load0}")
        print(f"W1 sum(a*b + c), 2**{args.log2n} float64 cells, {comm.size} rank(s), "
              f"{fuse_execute.rank_threads()} kernel thread(s) per rank; copy bandwidth "
              f"{bandwidth / 1e9:.1f} GB/s per rank; |fused - eager| = {check:.2e}")
        for name, t in times.items():
            print(f"  {name:14s} {t * 1e3:9.2f} ms   {t / times['hand']:5.2f}x hand   {t / times['numpy']:5.2f}x numpy")
        print(f"  fused / bound {times['fused'] / times['bound']:.2f}x; fused / eager "
              f"{times['fused'] / times['eager']:.2f}x; fused a*b+c / eager {times['fused a*b+c'] / times['eager a*b+c']:.2f}x")
        print(f"\n{comm.size} rank(s); W1 2**{args.log2n} float64, stencils {args.side}^2 float64, Adam {args.params} "
              f"float32; /proc/loadavg {load}; |fused - hand| README {rows['README sweep']['error']:.1e}, "
              f"Jacobi {rows['Jacobi map_overlap']['error']:.1e}; residual (relative) "
              f"{rows['residual sum(lap**2)']['error']:.1e}")
        print(table(rows))
        if extra:
            print("  one thread, this rank's block: " + ", ".join(f"{k} {t * 1e3:.1f} ms" for k, t in extra.items()))


if __name__ == "__main__":
    main()
