"""Core benchmark: darray vs NumPy (one process) vs hand-written mpi4py + NumPy.

Measures, in one run:

* ``a*b + c`` and ``sum(x)`` on ``2**size_exp`` float64 elements (global size);
* per-call overhead of ``x + y`` and ``sum(x)`` on a 10-element array.

Run on one process or under MPI::

    python benchmarks/bench_core.py [--size-exp 24] [--reps 5] [--json out.json]
    mpiexec -n 2 python benchmarks/bench_core.py
    python benchmarks/bench_core.py --smoke        # tiny sizes, a few seconds (CI)

Timings use ``time.perf_counter`` with a barrier before and after each timed
region; every variant gets one warm-up call, then the median over ``--reps``
of the per-rep maximum over ranks is reported. "NumPy" is always plain NumPy
on the full global array in one process (rank 0; the other ranks wait at a
barrier), so "darray / NumPy" at P ranks is the parallel speedup's inverse.
"hand-written" is what an MPI programmer writes: each rank builds its own
slice with NumPy and calls ``comm.Allreduce`` (buffer-based) for the sum.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys

import numpy as np

from darray.bench.data import balanced_rows
from darray.bench.harness import interleave, max_over_ranks


def _parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size-exp", type=int, default=24, help="global size is 2**SIZE_EXP elements (default 24)")
    p.add_argument("--reps", type=int, default=5, help="timed repetitions, median reported (default 5)")
    p.add_argument("--calls", type=int, default=20000,
                   help="calls per repetition in the per-call overhead loops (default 20000)")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON (rank 0)")
    p.add_argument("--smoke", action="store_true", help="tiny sizes and few reps, for CI (a few seconds)")
    args = p.parse_args(argv)
    if args.smoke:
        args.size_exp, args.reps, args.calls = min(args.size_exp, 16), min(args.reps, 2), min(args.calls, 500)
    if args.reps < 1 or args.size_exp < 4 or args.calls < 1:
        p.error("--reps and --calls must be >= 1 and --size-exp >= 4")
    return args


def _compare(variants, reps, mpi, rank, *, calls=1, stat="median"):
    """Seconds per call of each ``(fn, only_rank0)`` in ``variants``, ``calls`` calls per rep.

    The variants take turns within every rep (:func:`darray.bench.harness.interleave`: slow drifts
    of a shared machine hit them alike); rep 0 is the warm-up. Each rep's time is the maximum over
    ranks; with ``only_rank0`` rank 0 alone calls ``fn`` while the others wait at the closing
    barrier (their empty loop never sets the maximum). Returns the median (or the best,
    ``stat="best"``) over reps.
    """
    rounds = interleave([fn for fn, _ in variants], reps, mpi=mpi, calls=calls,
                        active=[not only_rank0 or rank == 0 for _, only_rank0 in variants])
    agg = np.median(rounds.times, axis=0) if stat == "median" else np.min(rounds.times, axis=0)
    return [float(t) for t in agg]


def _check(mpi, rank, ok, what):
    """Agree on ``ok`` across ranks; abort with a clear message if any rank is wrong."""
    bad = max_over_ranks([0.0 if ok else 1.0], mpi)[0]
    if bad:
        if rank == 0:
            print(f"bench_core: darray result for {what} does not match NumPy; aborting", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        if mpi is not None:
            mpi.Abort(1)
        raise SystemExit(1)


def main(argv=None):
    args = _parse(argv)
    import darray as da

    comm = da.default_communicator()
    mpi_comm = comm.comm if getattr(comm, "name", "") == "mpi" else None
    rank, P = comm.rank, comm.size
    n = 2 ** args.size_exp
    reps = args.reps
    f64 = np.float64
    rows = []  # (name, unit, darray, numpy, hand)

    # ---- data: a = i, b = 0.5, c = 1 (all exact in float64) ----------------------------------
    a = da.arange(n, dtype=da.float64, split=0)
    b = da.full(n, 0.5, dtype=da.float64, split=0)
    c = da.ones(n, dtype=da.float64, split=0)
    mine = balanced_rows(n, P, rank)
    lo, hi = mine.start, mine.stop
    la = np.arange(lo, hi, dtype=f64)
    lb = np.full(hi - lo, 0.5, dtype=f64)
    lc = np.ones(hi - lo, dtype=f64)

    # ---- correctness, once ------------------------------------------------------------------
    r = a * b + c
    rl = np.asarray(r.local)
    s0, _ = r.layout.block_slices(rank)[0].indices(n)[:2]
    _check(mpi_comm, rank,
           rl.shape[0] == 0 or np.array_equal(rl, np.arange(s0, s0 + rl.shape[0], dtype=f64) * 0.5 + 1.0), "a*b+c")
    total = float(da.sum(a))
    _check(mpi_comm, rank, total == float(n) * (n - 1) / 2, "sum(x)")
    del r, rl

    # ---- a*b + c ----------------------------------------------------------------------------
    ga = gb = gc = None
    if rank == 0:
        ga, gb, gc = np.arange(n, dtype=f64), np.full(n, 0.5, dtype=f64), np.ones(n, dtype=f64)
    t_np, t_hand, t_da = _compare([(lambda: ga * gb + gc, True), (lambda: la * lb + lc, False),
                                   (lambda: a * b + c, False)], reps, mpi_comm, rank)
    rows.append(("a*b+c", "ms", t_da, t_np, t_hand))

    # ---- sum(x) -----------------------------------------------------------------------------
    if mpi_comm is not None:
        from mpi4py import MPI

        send, recv = np.empty(1, f64), np.empty(1, f64)

        def hand_sum():
            send[0] = np.sum(la)
            mpi_comm.Allreduce(send, recv, op=MPI.SUM)
            return float(recv[0])
    else:
        def hand_sum():
            return float(np.sum(la))
    t_np, t_hand, t_da = _compare([(lambda: float(np.sum(ga)), True), (hand_sum, False),
                                   (lambda: float(da.sum(a)), False)], reps, mpi_comm, rank)
    rows.append(("sum(x)", "ms", t_da, t_np, t_hand))
    del ga, gb, gc, a, b, c, la, lb, lc

    # ---- per-call overhead on 10 elements --------------------------------------------------
    calls = args.calls
    xs, ys = np.arange(10, dtype=f64), np.ones(10, dtype=f64)
    for split, tag in (("auto", "replicated"), (0, "split=0")):
        x = da.arange(10, dtype=da.float64, split=split)
        y = da.ones(10, dtype=da.float64, split=split)
        _check(mpi_comm, rank, np.array_equal(np.asarray((x + y).gather()), xs + ys) and float(da.sum(x)) == 45.0,
               f"10-element x+y / sum ({tag})")
        lx = np.asarray(x.local).copy()
        ly = np.asarray(y.local).copy()
        t_np, t_hand, t_da = _compare([(lambda: xs + ys, True), (lambda: lx + ly, False), (lambda: x + y, False)],
                                      reps, mpi_comm, rank, calls=calls, stat="best")
        rows.append((f"x+y, n=10, {tag}", "us", t_da, t_np, t_hand))
        if tag == "replicated" or mpi_comm is None:
            lsum = (lambda: float(np.sum(lx)))
        else:
            lsend, lrecv = np.empty(1, f64), np.empty(1, f64)

            def lsum():
                lsend[0] = np.sum(lx)
                mpi_comm.Allreduce(lsend, lrecv, op=MPI.SUM)
                return float(lrecv[0])
        t_np, t_hand, t_da = _compare([(lambda: float(np.sum(xs)), True), (lsum, False),
                                       (lambda: float(da.sum(x)), False)], reps, mpi_comm, rank, calls=calls, stat="best")
        rows.append((f"sum(x), n=10, {tag}", "us", t_da, t_np, t_hand))

    # ---- report -----------------------------------------------------------------------------
    if rank == 0:
        scale = {"ms": 1e3, "us": 1e6}
        machine = (f"machine: {platform.node()} nproc={os.cpu_count()} python={platform.python_version()} "
                   f"numpy={np.__version__} darray={da.__version__}")
        print(machine)
        print(f"ranks: {P} (transport {getattr(comm, 'name', '?')}); global size 2^{args.size_exp} = {n} float64; "
              f"reps={reps} (median; per-call rows: best of reps, {calls} calls each)")
        hdr = (f"{'operation':<26} {'unit':>4} {'darray':>10} {'NumPy 1p':>10} {'hand MPI':>10} "
               f"{'da/NumPy':>9} {'da/hand':>8} {'da-NumPy':>9}")
        print(hdr)
        print("-" * len(hdr))
        out = []
        for name, unit, t_da, t_np, t_hand in rows:
            k = scale[unit]
            diff = f"{(t_da - t_np) * k:9.2f}" if unit == "us" else f"{'':>9}"
            print(f"{name:<26} {unit:>4} {t_da * k:10.3f} {t_np * k:10.3f} {t_hand * k:10.3f} "
                  f"{t_da / t_np:9.2f} {t_da / t_hand:8.2f} {diff}")
            out.append({"operation": name, "unit": unit, "darray_s": t_da, "numpy_1proc_s": t_np,
                        "hand_mpi_s": t_hand, "ratio_darray_numpy": t_da / t_np,
                        "ratio_darray_hand": t_da / t_hand})
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"machine": machine, "ranks": P, "size_exp": args.size_exp, "reps": reps,
                           "calls": calls, "rows": out}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
