"""Fetching rows by global index: requests routed to their owners, answers routed back.

The engine behind ``take``, integer-array indexing and ``take_along_axis``:
each rank asks the owners of the rows it needs (one exchange of int64 row
ids), owners answer with those rows (one exchange of data). Only requested
rows move; nothing is gathered.
"""

from __future__ import annotations

import numpy as np

from .. import _recorder
from .._backend import to_numpy
from .._layout import Layout, balanced_sizes
from .array import DArray
from .redistribute import redistribute_to

__all__ = ["rows_layout", "fetch_rows", "scatter_rows", "as_rows"]


def rows_layout(shape, nprocs: int, sizes=None) -> Layout:
    """Whole leading-axis rows cut over all ranks (1-d grid), balanced unless ``sizes`` is given."""
    shape = tuple(shape)
    first = tuple(sizes) if sizes is not None else balanced_sizes(shape[0], nprocs)
    return Layout(shape, (nprocs,), (0,), (first,) + tuple((n,) for n in shape[1:]))


def _route(x: DArray, wanted: np.ndarray):
    """Sort ``wanted`` row ids by owner: (order, per-owner counts, count matrix over ranks)."""
    comm = x._comm
    offs = np.asarray(x._layout.offsets[0])
    owner = np.searchsorted(offs, wanted, side="right") - 1  # 'right' skips empty blocks at an offset
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=comm.size).astype(np.int64)
    matrix = to_numpy(comm.allgather(counts))  # matrix[p, q]: rows rank p asks from rank q
    return order, counts, matrix


def fetch_rows(x: DArray, wanted) -> object:
    with _recorder.labelled("fetch"):
        return _fetch_rows(x, wanted)


def _fetch_rows(x: DArray, wanted) -> object:
    """Rows ``wanted`` (global ids, this rank's own list) of ``x``, which must be cut along axis 0 only.

    Collective: every rank calls it with its own (possibly empty) list.
    """
    comm = x._comm
    xp = x._xp
    rank = comm.rank
    wanted = np.asarray(wanted, dtype=np.int64).reshape(-1)
    order, counts, matrix = _route(x, wanted)
    asked = wanted[order]
    # 1. requests: row ids to their owners
    incoming = matrix[:, rank]
    requests = np.empty(int(incoming.sum()), dtype=np.int64)
    send_off = np.concatenate([[0], np.cumsum(counts)])
    recv_off = np.concatenate([[0], np.cumsum(incoming)])
    sends = [(q, (slice(int(send_off[q]), int(send_off[q + 1])),)) for q in range(comm.size) if counts[q]]
    recvs = [(p, (slice(int(recv_off[p]), int(recv_off[p + 1])),)) for p in range(comm.size) if incoming[p]]
    comm.exchange(asked, sends, requests, recvs).wait()
    # 2. answers: the owner takes the requested rows from its block
    start = x._layout.block_start(rank)[0]
    answer = xp.take(x.local, xp.asarray(requests - start, device=x.device), axis=0)
    rest = tuple(slice(0, n) for n in x.shape[1:])  # regions name explicit bounds
    got = xp.empty((wanted.shape[0], *x.shape[1:]), dtype=x._block.dtype, device=x.device)
    back_s = [(p, (slice(int(recv_off[p]), int(recv_off[p + 1])), *rest)) for p in range(comm.size) if incoming[p]]
    back_r = [(q, (slice(int(send_off[q]), int(send_off[q + 1])), *rest)) for q in range(comm.size) if counts[q]]
    comm.exchange(answer, back_s, got, back_r).wait()
    # 3. undo the sort by owner
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.shape[0])
    return xp.take(got, xp.asarray(inverse, device=x.device), axis=0)


def scatter_rows(x: DArray, targets, values) -> None:
    with _recorder.labelled("scatter"):
        _scatter_rows(x, targets, values)


def _scatter_rows(x: DArray, targets, values) -> None:
    """Write ``values`` (this rank's rows) into rows ``targets`` (global ids) of ``x`` (cut along axis 0 only).

    Collective. When several ranks write one row, the highest rank wins; within
    one rank, the last occurrence wins (NumPy's behaviour for repeated indices).
    """
    comm = x._comm
    xp = x._xp
    rank = comm.rank
    targets = np.asarray(targets, dtype=np.int64).reshape(-1)
    order, counts, matrix = _route(x, targets)
    incoming = matrix[:, rank]
    send_off = np.concatenate([[0], np.cumsum(counts)])
    recv_off = np.concatenate([[0], np.cumsum(incoming)])
    ids = np.empty(int(incoming.sum()), dtype=np.int64)
    sends = [(q, (slice(int(send_off[q]), int(send_off[q + 1])),)) for q in range(comm.size) if counts[q]]
    recvs = [(p, (slice(int(recv_off[p]), int(recv_off[p + 1])),)) for p in range(comm.size) if incoming[p]]
    comm.exchange(targets[order], sends, ids, recvs).wait()
    rest = tuple(slice(0, n) for n in x.shape[1:])
    rows = xp.take(values, xp.asarray(order, device=x.device), axis=0) if order.shape[0] else values
    rows = xp.asarray(rows, copy=True)
    got = xp.empty((ids.shape[0], *x.shape[1:]), dtype=x._block.dtype, device=x.device)
    comm.exchange(rows, [(q, (s, *rest)) for q, (s,) in sends], got, [(p, (s, *rest)) for p, (s,) in recvs]).wait()
    if ids.shape[0]:
        local = x.local
        start = x._layout.block_start(rank)[0]
        local_ids = ids - start
        # the last write of a row wins: keep the last occurrence of every id
        _, last = np.unique(local_ids[::-1], return_index=True)
        keep = np.sort(local_ids.shape[0] - 1 - last)
        rows_in = xp.take(got, xp.asarray(keep, device=x.device), axis=0)
        try:
            local[xp.asarray(local_ids[keep], device=x.device), ...] = rows_in
        except (TypeError, IndexError):  # backends without integer-array setitem (array_api_strict)
            for k, i in enumerate(local_ids[keep].tolist()):
                local[i, ...] = rows_in[k, ...]
    x._halo_fresh = False


def as_rows(x: DArray) -> DArray:
    """``x`` cut along axis 0 only over all ranks (redistributed if it is cut otherwise)."""
    layout = x._layout
    cut = [a for a in range(x.ndim) if layout.axis_dim[a] is not None]
    if cut == [0] and len(layout.dims) == 1 and not layout.has_halo:
        return x
    return redistribute_to(x, rows_layout(x.shape, x._comm.size))
