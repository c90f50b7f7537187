"""The stencil workloads of ``bench_fuse.py``: the README's sweep, its residual and a periodic Jacobi ``map_overlap``.

Each at ``side x side`` float64 cells cut in rows over the ranks, timed per
sweep (median over the repetitions of the slowest rank):

- ``fused``: the ``@da.fuse`` function (the README's fused block; a fused
  ``map_overlap(jacobi_block, u, depth=1, boundary="periodic", trim=False,
  out=v)`` with ``u`` and ``v`` swapped every sweep, so every sweep exchanges);
  the residual ``sum(lap * lap)`` of the 5-point Laplacian, a reduction of
  stencil values fused into the stencil's pass, bound one read per cell;
- ``eager``: the same function undecorated (eager darray);
- ``hand``: what a user writes with mpi4py + NumPy: each rank's rows with a
  ghost row above and below (and, periodic, a ghost column on each side),
  two ``Sendrecv`` of boundary rows per sweep, the update written with slices;
- ``numpy``: the same slices on this rank's block without communication (at
  one rank: NumPy on the whole field);
- ``bound``: the bytes the sweep must move per rank (one read and one write
  of each cell: 16 bytes) over the copy bandwidth measured on the same block
  in the same run (``np.copyto``, every rank at once).
"""

from __future__ import annotations

import numpy as np

import darray as da
from bench_attention import timed

__all__ = ["readme_sweep", "residual", "jacobi_block", "jacobi_overlap", "stencils"]


@da.fuse
def readme_sweep(u):
    u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])


@da.fuse
def residual(u):
    """The squared 5-point Laplacian summed: a reduction of stencil values, fused into the stencil's pass."""
    lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
    return da.sum(lap * lap)


def jacobi_block(b):
    return 0.25 * (b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:])


@da.fuse
def jacobi_overlap(u, v):
    da.map_overlap(jacobi_block, u, depth=1, boundary="periodic", trim=False, out=v)


def _rows(world, side: int) -> tuple[int, int]:
    """This rank's first row and row count (``numpy.array_split``'s cut, as darray's balanced split)."""
    base, extra = divmod(side, world.Get_size())
    rank = world.Get_rank()
    return rank * base + min(rank, extra), base + (rank < extra)


def _ghost_rows(world, side: int, field: np.ndarray):
    """This rank's rows with a ghost row above and below, the refresh of those ghosts (two Sendrecv, nothing past
    the global edges), and the rows ``lo:hi`` (in ``field``'s numbering) off the global edges."""
    from mpi4py import MPI

    r0, m = _rows(world, side)
    rank, size = world.Get_rank(), world.Get_size()
    p = np.zeros((m + 2, side))
    p[1:-1] = field
    up = rank - 1 if rank > 0 else MPI.PROC_NULL
    down = rank + 1 if rank < size - 1 else MPI.PROC_NULL

    def refresh():
        world.Sendrecv(p[1], dest=up, recvbuf=p[-1], source=down)
        world.Sendrecv(p[-2], dest=down, recvbuf=p[0], source=up)

    return p, refresh, max(0, 1 - r0), min(m, side - 1 - r0)


def hand_readme(world, side: int, field: np.ndarray):
    """One README sweep by hand: ghost rows refreshed by two Sendrecv, the global edges fixed."""
    p, refresh, lo, hi = _ghost_rows(world, side, field)

    def sweep():
        refresh()
        mid = p[1 + lo:1 + hi, 1:-1]
        p[1 + lo:1 + hi, 1:-1] = mid + 0.2 * (p[2 + lo:2 + hi, 1:-1] + p[lo:hi, 1:-1] + p[1 + lo:1 + hi, 2:]
                                              + p[1 + lo:1 + hi, :-2] - 4 * mid)

    return sweep, p


def hand_residual(world, side: int, field: np.ndarray):
    """The residual by hand: ghost rows by two Sendrecv, the Laplacian of the rows, squared, summed, Allreduce."""
    p, refresh, lo, hi = _ghost_rows(world, side, field)
    total = np.zeros(1)

    def run():
        refresh()
        mid = p[1 + lo:1 + hi, 1:-1]
        lap = p[2 + lo:2 + hi, 1:-1] + p[lo:hi, 1:-1] + p[1 + lo:1 + hi, 2:] + p[1 + lo:1 + hi, :-2] - 4 * mid
        world.Allreduce(np.array([np.sum(lap * lap)]), total)
        return float(total[0])

    return run


def hand_jacobi(world, side: int, field: np.ndarray):
    """One periodic Jacobi sweep by hand into a second buffer (swapped every sweep)."""
    _, m = _rows(world, side)
    rank, size = world.Get_rank(), world.Get_size()
    bufs = [np.zeros((m + 2, side + 2)), np.zeros((m + 2, side + 2))]
    bufs[0][1:-1, 1:-1] = field
    up, down = (rank - 1) % size, (rank + 1) % size

    def sweep():
        p, q = bufs
        p[1:-1, 0], p[1:-1, -1] = p[1:-1, -2], p[1:-1, 1]
        world.Sendrecv(p[1], dest=up, recvbuf=p[-1], source=down)
        world.Sendrecv(p[-2], dest=down, recvbuf=p[0], source=up)
        q[1:-1, 1:-1] = 0.25 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])
        bufs.reverse()

    return sweep, bufs


def stencils(comm, side: int, reps: int) -> dict[str, dict[str, float]]:
    """Per workload: fused, eager, hand, numpy and bound seconds per sweep (and the largest |fused - hand|)."""
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    x = da.linspace(0.0, 1.0, side)
    ys, xs = da.meshgrid(x, x, indexing="ij")
    u0 = da.exp(-50 * ((xs - 0.5) ** 2 + (ys - 0.5) ** 2))
    u0 = da.asarray(u0, split=0)  # rows, cut as the hand-written code cuts them
    block = np.ascontiguousarray(u0.local)
    copy = np.empty_like(block)
    bandwidth = 16 * block.size / timed(comm, lambda: np.copyto(copy, block), reps)  # bytes/s, every rank at once
    bound = 16 * block.size / bandwidth  # one read and one write of each cell
    out = {}

    # the README's sweep, in place on a field without halo (as the README builds it)
    u, v = da.asarray(u0, copy=True), da.asarray(u0, copy=True)
    hand, p = hand_readme(world, side, block)
    local = block.copy()

    def numpy_readme():
        local[1:-1, 1:-1] = local[1:-1, 1:-1] + 0.2 * (local[2:, 1:-1] + local[:-2, 1:-1] + local[1:-1, 2:]
                                                       + local[1:-1, :-2] - 4 * local[1:-1, 1:-1])

    out["README sweep"] = {"fused": timed(comm, lambda: readme_sweep(u), reps),
                           "eager": timed(comm, lambda: readme_sweep.__wrapped__(v), reps),
                           "hand": timed(comm, hand, reps), "numpy": timed(comm, numpy_readme, reps),
                           "bound": bound,
                           "error": float(np.max(np.abs(u.local - p[1:-1]), initial=0.0))}

    # the residual of the same field: a reduction of stencil values (reads each cell once, writes nothing)
    w = da.asarray(u0, copy=True)
    hand = hand_residual(world, side, block)

    def numpy_residual():
        lap = block[2:, 1:-1] + block[:-2, 1:-1] + block[1:-1, 2:] + block[1:-1, :-2] - 4 * block[1:-1, 1:-1]
        return float(np.sum(lap * lap))

    out["residual sum(lap**2)"] = {"fused": timed(comm, lambda: float(residual(w)), reps),
                                   "eager": timed(comm, lambda: float(residual.__wrapped__(w)), reps),
                                   "hand": timed(comm, hand, reps), "numpy": timed(comm, numpy_residual, reps),
                                   "bound": bound / 2,  # one read of each cell
                                   "error": abs(float(residual(w)) - hand()) / max(abs(hand()), 1e-300)}

    # a periodic Jacobi map_overlap into a second array, u and v swapped every sweep
    fields = [da.asarray(u0, split=0, halo=1, boundary="periodic"), da.zeros((side, side), split=0, halo=1,
                                                                     boundary="periodic")]
    eager_fields = [da.asarray(u0, split=0, halo=1, boundary="periodic"), da.zeros((side, side), split=0, halo=1,
                                                                           boundary="periodic")]

    def fused_jacobi(f=jacobi_overlap.__call__, state=fields):
        f(state[0], state[1])
        state.reverse()

    hand, bufs = hand_jacobi(world, side, block)
    padded, target = np.pad(block, 1), np.empty_like(block)

    def numpy_jacobi():
        target[...] = 0.25 * (padded[:-2, 1:-1] + padded[2:, 1:-1] + padded[1:-1, :-2] + padded[1:-1, 2:])

    out["Jacobi map_overlap"] = {
        "fused": timed(comm, fused_jacobi, reps),
        "eager": timed(comm, lambda: fused_jacobi(jacobi_overlap.__wrapped__, eager_fields), reps),
        "hand": timed(comm, hand, reps), "numpy": timed(comm, numpy_jacobi, reps), "bound": bound,
        "error": float(np.max(np.abs(fields[0].local - bufs[0][1:-1, 1:-1]), initial=0.0))}
    return out
