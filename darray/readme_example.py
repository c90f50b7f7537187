"""The README's example, as one source run three ways: NumPy, darray, and hand-written mpi4py.

:data:`SOURCE` is the README's code block verbatim except for its size and
sweep count (a test checks that the README still shows this text). ``darray
bench`` runs it with ``np`` bound to :mod:`numpy` (one process) and to
:mod:`darray` (1 and P ranks), and compares both with :func:`hand_written`,
the same computation written by hand with mpi4py + NumPy: rows cut over the
ranks, one ghost row above and below exchanged with ``Sendrecv`` per sweep.

Examples
--------
>>> import numpy
>>> u = run(numpy, 64, 2)
>>> u.shape
(64, 64)
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy

__all__ = ["SOURCE", "run", "hand_written"]

#: The README's example with ``{n}`` and ``{iters}`` for its size and sweep count (the final print left out).
SOURCE = """\
n = {n}
x = np.linspace(0.0, 1.0, n)
ys, xs = np.meshgrid(x, x, indexing="ij")    # each rank builds only its block
u = np.exp(-50 * ((xs - 0.5) ** 2 + (ys - 0.5) ** 2))
for _ in range({iters}):                     # shifted slices move only boundary strips
    u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])
"""


def run(np: ModuleType, n: int, iters: int) -> Any:
    """Run :data:`SOURCE` with ``np`` bound to ``np`` (numpy or darray); return the field ``u``."""
    scope: dict[str, Any] = {"np": np}
    exec(SOURCE.format(n=n, iters=iters), scope)  # our own constant text
    return scope["u"]


def hand_written(mpi_comm: Any, n: int, iters: int) -> tuple[numpy.ndarray, slice]:
    """The example by hand: this rank's rows of ``u`` after ``iters`` sweeps, and which global rows they are.

    Rows are cut as evenly as ``numpy.array_split`` does; each rank keeps its
    rows plus one ghost row on each side, refreshed by two ``Sendrecv`` per
    sweep (``PROC_NULL`` at the physical edges, which stay fixed).
    """
    from mpi4py import MPI

    rank, size = mpi_comm.Get_rank(), mpi_comm.Get_size()
    base, extra = divmod(n, size)
    r0 = rank * base + min(rank, extra)
    m = base + (rank < extra)
    x = numpy.linspace(0.0, 1.0, n)
    p = numpy.zeros((m + 2, n))
    ys = x[r0:r0 + m, None]
    p[1:-1] = numpy.exp(-50 * ((x[None, :] - 0.5) ** 2 + (ys - 0.5) ** 2))
    up = rank - 1 if rank > 0 else MPI.PROC_NULL
    down = rank + 1 if rank < size - 1 else MPI.PROC_NULL
    lo, hi = max(0, 1 - r0), min(m, n - 1 - r0)  # local rows that are interior rows of the global field
    c = slice(1, -1)
    for _ in range(iters):
        mpi_comm.Sendrecv(p[1], dest=up, recvbuf=p[-1], source=down)
        mpi_comm.Sendrecv(p[-2], dest=down, recvbuf=p[0], source=up)
        if hi > lo:
            mid = p[1 + lo:1 + hi, c]
            p[1 + lo:1 + hi, c] = mid + 0.2 * (p[2 + lo:2 + hi, c] + p[lo:hi, c] + p[1 + lo:1 + hi, 2:]
                                                + p[1 + lo:1 + hi, :-2] - 4 * mid)
    return p[1:-1], slice(r0, r0 + m)
