"""Row-sharded arrays on the host: row layouts, validation, and moving rows to chosen ranks.

A point set's arrays are cut along their first axis only (rows over the
ranks, any sizes, empty parts allowed). :class:`RowRoute` sends each local
row to a chosen rank (all-to-all, counts first, through ``comm.exchange``
so the tracer records the bytes) and its answers back. Local work happens
on NumPy copies of the blocks (scipy's trees are host code); results go back
to the caller's backend.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _recorder
from .._backend import from_numpy, to_numpy
from .._core import DArray, redistribute_to
from .._core.sample_sort import _routes
from .._errors import message
from .._layout import Layout

__all__ = ["RowRoute", "check_rows", "host_rows", "offsets_of", "owners", "row_layout", "row_sizes", "rows_of", "wrap_rows"]


def row_layout(func: str, shape, nprocs: int, sizes=None) -> Layout:
    """The layout cutting axis 0 of ``shape`` into ``sizes`` (balanced when None), the other axes whole."""
    sizes = {0: list(sizes)} if sizes is not None else None
    return Layout.create(func, tuple(shape), nprocs, split=0, sizes=sizes)


def row_sizes(x: DArray) -> tuple[int, ...] | None:
    """Rows per rank when ``x`` is cut along axis 0 only, over all ranks, without halo; else None."""
    lay = x._layout
    if lay.ndim == 0 or lay.has_halo:
        return None
    if x._comm.size == 1:
        return (lay.shape[0],)
    if lay.dims != (x._comm.size,) or lay.split != (0,):
        return None
    return tuple(lay.sizes[0])


def rows_of(func: str, x: DArray) -> DArray:
    """``x`` cut along its rows (redistributed to balanced rows when its layout is another)."""
    if row_sizes(x) is not None:
        return x
    return redistribute_to(x, row_layout(func, x.shape, x._comm.size))


def owners(offsets: np.ndarray, index: np.ndarray) -> np.ndarray:
    """The rank owning each global row ``index`` of rows cut at ``offsets`` (empty parts skipped)."""
    return np.searchsorted(offsets, index, side="right") - 1


def offsets_of(sizes) -> np.ndarray:
    """Global index of each rank's first row (and the total, last)."""
    return np.concatenate(([0], np.cumsum(np.asarray(sizes, dtype=np.int64))))


def host_rows(x: DArray) -> np.ndarray:
    """This rank's rows of ``x`` as a C-contiguous 2-d NumPy array ``(rows, prod(trailing))``."""
    local = to_numpy(x.local)
    return np.ascontiguousarray(local.reshape(local.shape[0], math.prod(local.shape[1:])))


def wrap_rows(block: np.ndarray, trailing, sizes, like: DArray) -> DArray:
    """A DArray of rows ``block`` (host, ``(rows, ...)``) cut into ``sizes``, on ``like``'s communicator and backend."""
    shape = (int(sum(sizes)), *trailing)
    layout = row_layout("points", shape, like._comm.size, sizes)
    local = from_numpy(like._xp, np.ascontiguousarray(block.reshape((block.shape[0], *trailing))), like.device)
    return DArray._wrap(local, layout, like._comm, like._xp)


class RowRoute:
    """Rows sent to chosen ranks (all-to-all, counts first); ``back`` returns answers to the senders.

    Received rows come in sender rank order, each sender's rows in their
    local order: rows of rank-ordered blocks therefore arrive in global order.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> comm = da.default_communicator()
    >>> route = RowRoute(comm, np.full(3, comm.rank))  # every rank keeps its three rows
    >>> got = route.send(np.arange(6.0).reshape(3, 2), "example")
    >>> got.tolist(), route.back(-got, "example").tolist()
    ([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], [[-0.0, -1.0], [-2.0, -3.0], [-4.0, -5.0]])
    """

    def __init__(self, comm, dest: np.ndarray):
        self.comm = comm
        dest = np.asarray(dest, dtype=np.int64)
        self.order = np.argsort(dest, kind="stable")
        counts = np.bincount(dest, minlength=comm.size).astype(np.int64)
        table = to_numpy(comm.allgather(counts))  # table[r, q]: rows r sends to q
        self.sends, self.recvs, self.n_in = _routes(table, comm.rank, offsets_of(counts))
        self.n_out = dest.shape[0]

    @staticmethod
    def _move(comm, rows: np.ndarray, sends, recvs, n: int, label: str) -> np.ndarray:
        rows = np.ascontiguousarray(rows.reshape(rows.shape[0], math.prod(rows.shape[1:])))
        width = rows.shape[1]
        out = np.empty((n, width), dtype=rows.dtype)
        whole = (slice(0, width),)
        with _recorder.labelled(label):
            comm.exchange(rows, [(p, r + whole) for p, r in sends], out, [(p, r + whole) for p, r in recvs]).wait()
        return out

    def send(self, rows: np.ndarray, label: str) -> np.ndarray:
        """``rows`` (one per routed row, any trailing shape) delivered: ``(received, prod(trailing))``."""
        return self._move(self.comm, rows[self.order], self.sends, self.recvs, self.n_in, label)

    def back(self, answers: np.ndarray, label: str) -> np.ndarray:
        """``answers`` (one row per received row) delivered back, in the senders' original row order."""
        got = self._move(self.comm, answers, self.recvs, self.sends, self.n_out, label)
        out = np.empty_like(got)
        out[self.order] = got
        return out


def check_rows(func: str, name: str, x, n: int, sizes, like: str = "the points") -> None:
    """``x`` must be a DArray of ``n`` rows cut like ``like`` (``sizes``); the same error on every rank."""
    if not isinstance(x, DArray):
        raise TypeError(message(func, f"{name} must be a DArray", type(x).__name__, "a DArray of rows"))
    if x.ndim == 0 or x.shape[0] != n:
        raise ValueError(message(func, f"{name} has another number of rows than {like}", x.shape, f"{n} rows"))
    if row_sizes(x) != sizes:
        raise ValueError(message(func, f"the rows of {name} are cut unlike {like}", row_sizes(x),
                                 f"{sizes} (the row sizes of {like})"))
