"""Reading and writing cells picked by index arrays on several axes: requests routed to the owners.

The engine behind mixed basic + advanced keys (:mod:`darray._core.advanced`).
The picked axes ``A`` of an array hold the cells named by index arrays of a
broadcast shape ``B``; every other axis is taken whole. The result (or, for a
write, the values) is laid out as ``(B..., rest...)``: the rest axes keep
their cut, and ``B``'s first axis is cut over the first grid dim that cuts an
axis of ``A`` (``g0``; replicated if none does). A rank asks for its share of
``B`` from the ranks that hold those cells and share its coordinates on every
other grid dim: one exchange of int64 cell ids, one of data. Only the picked
cells move; nothing is gathered.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .. import _recorder
from .._backend import is_numpy_namespace, to_numpy
from .._layout import Layout, balanced_sizes
from .array import DArray

__all__ = ["without_axes", "cells_layout", "index_share", "fetch_cells", "scatter_cells", "first_cut"]


def first_cut(layout: Layout, axes) -> int | None:
    """The first grid dim that cuts one of ``axes`` (``g0``), or None."""
    cut = [layout.axis_dim[a] for a in axes if layout.axis_dim[a] is not None]
    return min(cut) if cut else None


@lru_cache(maxsize=256)
def without_axes(layout: Layout, axes: tuple) -> Layout:
    """``layout`` with ``axes`` removed (grid dims that cut them become replicated), no halo."""
    keep = [a for a in range(layout.ndim) if a not in axes]
    position = {a: i for i, a in enumerate(keep)}
    split = tuple(position.get(s) if s is not None else None for s in layout.split)
    return Layout(tuple(layout.shape[a] for a in keep), layout.dims, split, tuple(layout.sizes[a] for a in keep))


@lru_cache(maxsize=256)
def cells_layout(rest: Layout, g0: int | None, bshape: tuple) -> Layout:
    """Layout of ``(B..., rest...)``: ``B[0]`` in balanced blocks over grid dim ``g0``, rest as ``rest``.

    >>> rest = Layout((4, 6), (2, 3), (None, 1), ((4,), (2, 2, 2)))
    >>> out = cells_layout(rest, 0, (5,))  # B over grid dim 0, the rest cut as before
    >>> out.split, out.sizes
    ((0, 2), ((3, 2), (4,), (2, 2, 2)))
    """
    nb = len(bshape)
    split = tuple(0 if g == g0 else (None if s is None else s + nb) for g, s in enumerate(rest.split))
    first = balanced_sizes(bshape[0], rest.dims[g0]) if g0 is not None else (bshape[0],)
    sizes = (first, *((n,) for n in bshape[1:]), *rest.sizes)
    return Layout(tuple(bshape) + rest.shape, rest.dims, split, sizes)


def index_share(index, cells: Layout, nb: int, x: DArray) -> np.ndarray:
    """This rank's share of one index array broadcast to ``B`` (the first ``nb`` axes of ``cells``), flat int64.

    A DArray index is redistributed to that share (only its entries move).
    """
    from .redistribute import redistribute_to

    rank = x._comm.rank
    bl = _b_layout(cells, nb)
    want = bl.broadcast_layout(index.shape)
    if isinstance(index, DArray):
        moved = redistribute_to(index, want) if index._layout.blocks_key != want.blocks_key else index
        local = to_numpy(moved.local)
    else:
        local = index[want.block_slices(rank)]
    return np.broadcast_to(local, bl.block_shape(rank)).reshape(-1).astype(np.int64)


@lru_cache(maxsize=256)
def _b_layout(cells: Layout, nb: int) -> Layout:
    """The ``B`` part of a cells layout (its first ``nb`` axes)."""
    return Layout(cells.shape[:nb], cells.dims, tuple(s if s is not None and s < nb else None for s in cells.split),
                  cells.sizes[:nb])


def _owners(layout: Layout, axes, coords: list[np.ndarray], rank: int) -> tuple[np.ndarray, np.ndarray]:
    """Owner rank of every requested cell (same grid coordinates as ``rank`` off ``axes``' dims) and its local ids."""
    n = coords[0].shape[0] if coords else 0
    grid = np.tile(np.asarray(layout.coords(rank), dtype=np.int64), (n, 1))
    local = np.empty((n, len(axes)), dtype=np.int64)
    for i, a in enumerate(axes):
        g = layout.axis_dim[a]
        c = coords[i]
        if g is None:
            local[:, i] = c
            continue
        offs = np.asarray(layout.offsets[a])
        block = np.searchsorted(offs, c, side="right") - 1  # 'right' skips empty blocks at an offset
        grid[:, g] = block
        local[:, i] = c - offs[block]
    owner = np.ravel_multi_index(tuple(grid.T), layout.dims) if n else np.zeros(0, dtype=np.int64)
    return owner, local


def _route(comm, owner: np.ndarray, local: np.ndarray):
    """Send every cell id to its owner: (order by owner, sends, receives, the ids this rank holds)."""
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=comm.size).astype(np.int64)
    incoming = to_numpy(comm.allgather(counts))[:, comm.rank]  # rows rank p asks from this rank
    send_off = np.concatenate([[0], np.cumsum(counts)])
    recv_off = np.concatenate([[0], np.cumsum(incoming)])
    k = local.shape[1]
    requests = np.empty((int(incoming.sum()), k), dtype=np.int64)
    sends = [(q, slice(int(send_off[q]), int(send_off[q + 1]))) for q in range(comm.size) if counts[q]]
    recvs = [(p, slice(int(recv_off[p]), int(recv_off[p + 1]))) for p in range(comm.size) if incoming[p]]
    comm.exchange(np.ascontiguousarray(local[order]), [(q, (s, slice(0, k))) for q, s in sends], requests,
                  [(p, (s, slice(0, k))) for p, s in recvs]).wait()
    return order, sends, recvs, requests


def _moved(xp, block, axes):
    rest = [a for a in range(block.ndim) if a not in axes]
    order = (*axes, *rest)
    return block if order == tuple(range(block.ndim)) else xp.permute_dims(block, order)


def fetch_cells(y: DArray, axes, coords: list[np.ndarray]):
    """Cells of ``y`` at global ``coords`` along ``axes`` (this rank's list), rest axes whole: ``(n, *rest_local)``.

    Collective: every rank calls it with its own (possibly empty) list.
    """
    with _recorder.labelled("fetch"):
        comm, xp, rank = y._comm, y._xp, y._comm.rank
        owner, local = _owners(y._layout, axes, coords, rank)
        moved = _moved(xp, y.local, axes)
        if first_cut(y._layout, axes) is None:  # the picked axes are not cut: every rank holds what it asks for
            return _pick(xp, moved, local, y.device)
        order, sends, recvs, requests = _route(comm, owner, local)
        rest = tuple(moved.shape[len(axes):])
        answer = _pick(xp, moved, requests, y.device)
        got = xp.empty((local.shape[0], *rest), dtype=y._block.dtype, device=y.device)
        whole = tuple(slice(0, n) for n in rest)
        comm.exchange(answer, [(p, (s, *whole)) for p, s in recvs], got, [(q, (s, *whole)) for q, s in sends]).wait()
        inverse = np.empty_like(order)
        inverse[order] = np.arange(order.shape[0])
        return xp.take(got, xp.asarray(inverse, device=y.device), axis=0) if order.shape[0] > 1 else got


def _pick(xp, moved, requests: np.ndarray, device):
    """``moved[requests[:, 0], requests[:, 1], ...]`` (picked axes leading) on any backend."""
    k = requests.shape[1]
    if k == 1:
        return xp.take(moved, xp.asarray(requests[:, 0], device=device), axis=0)
    if is_numpy_namespace(xp):
        return moved[tuple(requests.T)]
    rest = tuple(moved.shape[k:])
    if not requests.shape[0]:
        return xp.empty((0, *rest), dtype=moved.dtype, device=device)
    flat = np.ravel_multi_index(tuple(requests.T), tuple(moved.shape[:k]))
    picked = math.prod(moved.shape[:k])  # not -1: NumPy cannot infer it when a trailing axis is empty
    return xp.take(xp.reshape(moved, (picked, *rest)), xp.asarray(flat, device=device), axis=0)


def scatter_cells(x: DArray, axes, coords: list[np.ndarray], values, rest_key: dict) -> None:
    """Write ``values`` (``(n, *rest_local)``, this rank's) into the cells of ``x`` at ``coords`` along ``axes``.

    ``rest_key`` maps every other axis to the local slice this rank writes.
    Collective. A cell written several times keeps the last value, in the
    order of the global list (NumPy's behaviour for repeated indices): ranks
    hold consecutive parts of that list, and receive in rank order.
    """
    with _recorder.labelled("scatter"):
        comm, xp = x._comm, x._xp
        owner, local = _owners(x._layout, axes, coords, comm.rank)
        if first_cut(x._layout, axes) is None:  # the picked axes are not cut: every rank writes its own cells
            if local.shape[0]:
                _put(xp, x.local, axes, rest_key, local, values, x.device)
            x._halo_fresh = False
            return
        order, sends, recvs, requests = _route(comm, owner, local)
        rows = xp.take(values, xp.asarray(order, device=x.device), axis=0) if order.shape[0] > 1 else values
        rows = xp.asarray(rows, copy=True)
        rest = tuple(rows.shape[1:])
        got = xp.empty((requests.shape[0], *rest), dtype=x._block.dtype, device=x.device)
        whole = tuple(slice(0, n) for n in rest)
        comm.exchange(rows, [(q, (s, *whole)) for q, s in sends], got, [(p, (s, *whole)) for p, s in recvs]).wait()
        if requests.shape[0]:
            _put(xp, x.local, axes, rest_key, requests, got, x.device)
        x._halo_fresh = False


def _put(xp, block, axes, rest_key: dict, requests: np.ndarray, got, device) -> None:
    """``block[cells, rest slices] = got``, the last of repeated cells winning."""
    shape = tuple(block.shape[a] for a in axes)
    ids = np.ravel_multi_index(tuple(requests.T), shape)
    _, last = np.unique(ids[::-1], return_index=True)
    keep = np.sort(ids.shape[0] - 1 - last)
    if keep.shape[0] != ids.shape[0]:
        requests = requests[keep]
        got = xp.take(got, xp.asarray(keep, device=device), axis=0)
    key = [rest_key.get(a) for a in range(block.ndim)]
    for i, a in enumerate(axes):
        key[a] = xp.asarray(requests[:, i], device=device)
    # NumPy puts the picked dim where the arrays are when they are adjacent, else first
    first = axes[0]
    vals = got
    if list(axes) == list(range(first, first + len(axes))) and first:
        order = (*range(1, first + 1), 0, *range(first + 1, got.ndim))
        vals = xp.permute_dims(got, order)
    try:
        block[tuple(key)] = vals
    except (TypeError, IndexError):  # backends without integer-array setitem (array_api_strict)
        for r, cell in enumerate(requests.tolist()):
            for i, a in enumerate(axes):
                key[a] = cell[i]
            block[tuple(key)] = got[r, ...]
