"""Jacobi 5-point stencil: darray vs NumPy (1 process), hand-written mpi4py, and Dask, in one run.

    python benchmarks/bench_stencil.py [--n 4096] [--iters 50]
    mpiexec -n 2 python benchmarks/bench_stencil.py

Prints (rank 0) seconds per run and ratios. Also times one halo exchange
against two raw mpi4py Sendrecv of the same rows (best of 15 interleaved
rounds of 100).

The sweeps (NumPy, darray, mpi4py, Dask) and the field are ``darray bench``'s
W2 (:mod:`darray.bench.workloads`, :mod:`darray.bench.data`); the timing is
its harness (:func:`darray.bench.harness.interleave`): the variants take turns
run by run after one warm-up round, median over ``--reps`` of the maximum over
ranks. NumPy runs on rank 0 while the other ranks wait.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import darray as da
from darray.bench.data import dense
from darray.bench.harness import interleave
from darray.bench.workloads import jacobi_dask, jacobi_darray, jacobi_hand, jacobi_numpy


def slicing_jacobi(u, iters):
    """The NumPy way, unchanged: shifted views of one array (interior only, fixed edges)."""
    for _ in range(iters):
        un = u.astype(u.dtype, copy=True) if hasattr(u, "astype") else u.copy()
        u[1:-1, 1:-1] = 0.25 * (un[2:, 1:-1] + un[:-2, 1:-1] + un[1:-1, 2:] + un[1:-1, :-2])
    return u


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.n, args.iters, args.reps = 64, 3, 1
    comm = da.default_communicator()
    mpi = comm.comm if comm.name == "mpi" else None
    n, iters = args.n, args.iters
    field = dense(f"field{n}", (n, n))
    rows = da.asarray(field, split=0, halo=1, boundary="periodic")
    bufs = (da.empty_like(rows), da.empty_like(rows))

    # correctness, once: darray against NumPy (rank 0)
    out = jacobi_darray(rows, iters, bufs).gather(root=0)
    ok = comm.rank != 0 or np.allclose(out, jacobi_numpy(field, iters))

    # the variants, interleaved: NumPy on rank 0 alone (one process), the others on every rank
    plain = da.asarray(field, split=0)
    variants = {"numpy": (lambda: jacobi_numpy(field, iters), comm.rank == 0),
                "darray": (lambda: jacobi_darray(rows, iters, bufs), True),
                "darray slicing": (lambda: slicing_jacobi(plain, iters), True)}
    if mpi is not None:
        local = field[rows.layout.block_slices(comm.rank)]
        variants["mpi4py"] = (lambda: jacobi_hand(local, iters, mpi), True)
    if comm.size == 1:
        try:
            import dask
            import dask.array as dsk

            dx = dsk.from_array(field, chunks=(n // 2, n))

            def dask_run():
                with dask.config.set(scheduler="threads", num_workers=2):
                    jacobi_dask(dx, iters).compute()

            variants["dask (2 threads)"] = (dask_run, True)
        except ImportError:
            pass
    rounds = interleave([fn for fn, _ in variants.values()], args.reps, mpi=mpi,
                        active=[active for _, active in variants.values()])
    results = dict(zip(variants, np.median(rounds.times, axis=0)))

    if mpi is not None:
        # one halo exchange vs raw Sendrecv of the same rows: best of 15 interleaved rounds of 100
        x = da.asarray(field, split=0, halo={0: 1}, boundary="periodic")
        p = np.empty((rows.local.shape[0] + 2, n))
        r, s = comm.rank, comm.size

        def raw():
            mpi.Sendrecv(p[1], dest=(r - 1) % s, recvbuf=p[-1], source=(r + 1) % s)
            mpi.Sendrecv(p[-2], dest=(r + 1) % s, recvbuf=p[0], source=(r - 1) % s)

        pair = interleave([lambda: x.exchange_halos(force=True), raw], 3 if args.smoke else 15, mpi=mpi, calls=100)
        exchange = dict(zip(("halo exchange", "raw Sendrecv"), pair.times.min(axis=0)))
    if comm.rank == 0:
        base = results.get("numpy")
        print(f"Jacobi {n}x{n}, {iters} sweeps, {comm.size} rank(s), nproc={os.cpu_count()}; correct={ok}")
        for name, sec in results.items():
            ratio = f"{sec / base:6.2f}x NumPy" if base else ""
            print(f"  {name:<20} {sec:9.4f} s  {ratio}")
        if mpi is not None:
            print(f"  one halo exchange {exchange['halo exchange'] * 1e6:.1f} us, two raw Sendrecv "
                  f"{exchange['raw Sendrecv'] * 1e6:.1f} us: ratio "
                  f"{exchange['halo exchange'] / exchange['raw Sendrecv']:.2f}")
    if not ok:
        raise SystemExit("bench_stencil: darray result differs from NumPy")


if __name__ == "__main__":
    main()
