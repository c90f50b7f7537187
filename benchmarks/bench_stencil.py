"""Jacobi 5-point stencil: darray vs NumPy (1 process), hand-written mpi4py, and Dask, in one run.

    python benchmarks/bench_stencil.py [--n 4096] [--iters 50]
    mpiexec -n 2 python benchmarks/bench_stencil.py

Prints (rank 0) seconds per run and ratios. Also times one halo exchange
against two raw mpi4py Sendrecv of the same rows (best of 15 interleaved
rounds of 100).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import darray as da


def jacobi_block(b):
    """One Jacobi sweep of a block with one ghost cell on each side."""
    return 0.25 * (b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:])


def numpy_jacobi(u, iters):
    for _ in range(iters):
        p = np.pad(u, 1, mode="wrap")
        u = jacobi_block(p)
    return u


def darray_jacobi(u, iters):
    v = da.empty_like(u)
    for _ in range(iters):
        da.map_overlap(jacobi_block, u, depth=1, boundary="periodic", trim=False, out=v)
        u, v = v, u
    return u


def slicing_jacobi(u, iters):
    """The NumPy way, unchanged: shifted views of one array (interior only, fixed edges)."""
    for _ in range(iters):
        un = u.astype(u.dtype, copy=True) if hasattr(u, "astype") else u.copy()
        u[1:-1, 1:-1] = 0.25 * (un[2:, 1:-1] + un[:-2, 1:-1] + un[1:-1, 2:] + un[1:-1, :-2])
    return u


def hand_jacobi(local, iters, comm):
    """Hand-written mpi4py + NumPy: rows cut over ranks, periodic, Sendrecv of edge rows."""
    from mpi4py import MPI

    rank, size = comm.Get_rank(), comm.Get_size()
    up, down = (rank - 1) % size, (rank + 1) % size
    p = np.empty((local.shape[0] + 2, local.shape[1] + 2))
    for _ in range(iters):
        p[1:-1, 1:-1] = local
        comm.Sendrecv(p[1], dest=up, recvbuf=p[-1], source=down)
        comm.Sendrecv(p[-2], dest=down, recvbuf=p[0], source=up)
        p[:, 0], p[:, -1] = p[:, -2], p[:, 1]
        local = jacobi_block(p)
    del MPI
    return local


def timed(fn, comm, reps=3):
    best = []
    for _ in range(reps):
        comm.barrier()
        t = time.perf_counter()
        fn()
        comm.barrier()
        best.append(time.perf_counter() - t)
    return float(np.median(best))


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
    n, iters = args.n, args.iters
    field = np.fromfunction(lambda i, j: np.sin(i / n * 6.28) * np.cos(j / n * 6.28), (n, n))
    rows = da.asarray(field, split=0, halo=1, boundary="periodic")

    results = {}
    # NumPy on one process (rank 0 works, others wait)
    ref = None
    if comm.rank == 0:
        t = time.perf_counter()
        ref = numpy_jacobi(field, iters)
        results["numpy"] = time.perf_counter() - t
    comm.barrier()
    out = darray_jacobi(rows, iters)
    ok = ref is None or np.allclose(out.gather(root=0), ref)
    if comm.rank != 0:
        out.gather(root=0)
    results["darray"] = timed(lambda: darray_jacobi(rows, iters), comm, args.reps)
    plain = da.asarray(field, split=0)
    results["darray slicing"] = timed(lambda: slicing_jacobi(plain, iters), comm, args.reps)
    if comm.name == "mpi":
        local = field[rows.layout.block_slices(comm.rank)]
        results["mpi4py"] = timed(lambda: hand_jacobi(local, iters, comm.comm), comm, args.reps)
        # one halo exchange vs raw Sendrecv of the same rows: best of 15 interleaved rounds of 100
        x = da.asarray(field, split=0, halo={0: 1}, boundary="periodic")
        p = np.empty((rows.local.shape[0] + 2, n))
        r, s = comm.rank, comm.size

        def halo(k):
            for _ in range(k):
                x.exchange_halos(force=True)

        def raw(k):
            for _ in range(k):
                comm.comm.Sendrecv(p[1], dest=(r - 1) % s, recvbuf=p[-1], source=(r + 1) % s)
                comm.comm.Sendrecv(p[-2], dest=(r + 1) % s, recvbuf=p[0], source=(r - 1) % s)

        rounds = {"halo exchange": [], "raw Sendrecv": []}
        for _ in range(3 if args.smoke else 15):
            for name, fn in (("halo exchange", halo), ("raw Sendrecv", raw)):
                rounds[name].append(timed(lambda: fn(100), comm, 1) / 100)
        exchange = {name: min(times) for name, times in rounds.items()}
    if comm.size == 1:
        try:
            import dask
            import dask.array as dsk

            dx = dsk.from_array(field, chunks=(n // 2, n))

            def dask_run():
                u = dx
                for _ in range(iters):
                    u = u.map_overlap(lambda b: np.pad(jacobi_block(b), 1), depth=1, boundary="periodic")
                with dask.config.set(scheduler="threads", num_workers=2):
                    u.compute()

            results["dask (2 threads)"] = timed(dask_run, comm, 1)
        except ImportError:
            pass
    if comm.rank == 0:
        base = results.get("numpy")
        print(f"Jacobi {n}x{n}, {iters} sweeps, {comm.size} rank(s), nproc={os.cpu_count()}; correct={ok}")
        for name, sec in results.items():
            ratio = f"{sec / base:6.2f}x NumPy" if base else ""
            print(f"  {name:<20} {sec:9.4f} s  {ratio}")
        if comm.name == "mpi":
            print(f"  one halo exchange {exchange['halo exchange'] * 1e6:.1f} us, two raw Sendrecv "
                  f"{exchange['raw Sendrecv'] * 1e6:.1f} us: ratio "
                  f"{exchange['halo exchange'] / exchange['raw Sendrecv']:.2f}")
    if not ok:
        raise SystemExit("bench_stencil: darray result differs from NumPy")


if __name__ == "__main__":
    main()
