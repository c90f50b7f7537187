"""Searching functions (Array API chapter "Searching Functions"), distributed.

What moves, per function:

- ``argmax``/``argmin``: each rank reduces its block; one allgather of
  (value, global index) per output cell over the grid dims that cut a reduced
  axis; NaN wins, ties go to the lowest global index (first occurrence).
- ``count_nonzero``: a sum reduction of ``x != 0``.
- ``where``: elementwise (operands aligned like any elementwise function).
- ``nonzero``: each rank finds its nonzeros; only their flat indices move
  (a sample sort into C order, skipped when blocks are already in C order).
- ``searchsorted``: the first value of every block of ``x1`` is allgathered
  (P values) to route each query to the block that holds its answer; the
  queries go there and the answers come back (two all-to-alls of x2's size).
"""

from __future__ import annotations

import numpy as np

from .._backend import NUMPY, to_numpy
from .._core import DArray, align_target, local_operand, wrap_like
from .._core.dtypes import to_backend_dtype
from .._core.keys import nonzero as _nonzero
from .._core.reductions import normalize_axes, sum as _sum
from .._core.sample_sort import Routed
from .._errors import message, names_errors
from .sorting import sort, time_keys

__all__ = ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where"]


def _check(func: str, x) -> None:
    if not isinstance(x, DArray):
        raise TypeError(message(func, "expected a DArray", type(x).__name__))


def _to_backend(x: DArray, array: np.ndarray):
    return array if x._xp is NUMPY else x._xp.asarray(array, device=x.device)


# ---------------------------------------------------------------- argmax / argmin
def argmax(x, /, *, axis: int | None = None, keepdims: bool = False) -> DArray:
    """Global index of the first maximum (over the flattened array when ``axis`` is None)."""
    return _arg_extreme("argmax", x, axis, keepdims)


def argmin(x, /, *, axis: int | None = None, keepdims: bool = False) -> DArray:
    """Global index of the first minimum (over the flattened array when ``axis`` is None)."""
    return _arg_extreme("argmin", x, axis, keepdims)


def _arg_extreme(func: str, x, axis, keepdims: bool) -> DArray:
    _check(func, x)
    if x.dtype.kind in "Mm":  # dates and durations by their sort keys; NaT wins, as NumPy's NaN
        keys = time_keys(x)
        if func == "argmin":
            keys = where(x != x, np.uint64(0), keys + np.uint64(1))  # (only NaT is unequal to itself)
        return _arg_extreme(func, keys, axis, keepdims)
    if x.dtype.kind not in "biuf":
        raise TypeError(message(func, "unsupported dtype", x.dtype, "a real numeric or boolean dtype"))
    if axis is not None and (not isinstance(axis, (int, np.integer)) or isinstance(axis, bool)):
        raise TypeError(message(func, "axis must be an int or None", axis))
    axes = normalize_axes(func, axis, x.ndim)
    if x.size == 0 and (axis is None or x.shape[axes[0]] == 0):
        raise ValueError(message(func, "attempt to get the extreme of an empty sequence", x.shape,
                                 "a non-empty array (axis)"))
    layout = x._layout
    rank = x._comm.rank
    block = to_numpy(x.local)
    local_func = np.argmax if func == "argmax" else np.argmin
    if axis is None:
        # over the flattened array: one candidate per rank
        value = np.zeros(1, dtype=block.dtype)
        index = np.full(1, -1, dtype=np.int64)
        if block.size:
            i = int(local_func(block))
            value[0] = block.flat[i]
            coords = np.add(np.unravel_index(i, block.shape), layout.block_start(rank))
            index[0] = np.ravel_multi_index(tuple(int(c) for c in coords), x.shape)
        cut = tuple(s is not None for s in layout.split)
        if any(cut):
            sub = x._comm.sub(layout.dims, cut)
            sign = (func, x.shape, None)
            values, indices = to_numpy(sub.allgather(value, sign)), to_numpy(sub.allgather(index, sign))
            index = _combine(func, values, indices)
        out = index.reshape((1,) * x.ndim if keepdims else ())
        red = layout.reduced(axes, keepdims).replicated()
        return DArray._wrap(_to_backend(x, out), red, x._comm, x._xp)
    (a,) = axes
    n = block.shape[a]
    shape = tuple(1 if i == a else s for i, s in enumerate(block.shape))
    if n:
        local = np.expand_dims(local_func(block, axis=a), a)
        value = np.take_along_axis(block, local, axis=a)
        index = local.astype(np.int64) + layout.block_start(rank)[a]
    else:
        value = np.zeros(shape, dtype=block.dtype)
        index = np.full(shape, -1, dtype=np.int64)
    g = layout.axis_dim[a]
    if g is not None:
        keep = [d == g for d in range(len(layout.dims))]
        sub = x._comm.sub(layout.dims, keep)
        sign = (func, x.shape, a)
        index = _combine(func, to_numpy(sub.allgather(value, sign)), to_numpy(sub.allgather(index, sign)))
    red = layout.reduced(axes, keepdims)
    out = index if keepdims else index.reshape(red.block_shape(rank))
    return DArray._wrap(_to_backend(x, out), red, x._comm, x._xp)


def _combine(func: str, values: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Pick, per cell, the best candidate of the stacked ones (NaN first, then extreme, then lowest index)."""
    best_v, best_i = values[0].copy(), indices[0].copy()
    floating = values.dtype.kind == "f"
    for v, i in zip(values[1:], indices[1:]):
        valid = i >= 0
        empty = best_i < 0
        if floating:
            best_nan, v_nan = np.isnan(best_v), np.isnan(v)
            better = (v_nan & ~best_nan) | (~best_nan & ~v_nan & ((v > best_v) if func == "argmax" else (v < best_v)))
            tie = (v_nan & best_nan) | (v == best_v)
        else:
            better = (v > best_v) if func == "argmax" else (v < best_v)
            tie = v == best_v
        take = valid & (empty | better | (tie & (i < best_i)))
        best_v = np.where(take, v, best_v)
        best_i = np.where(take, i, best_i)
    return best_i


# ---------------------------------------------------------------- count_nonzero / where
@names_errors("count_nonzero")
def count_nonzero(x, /, *, axis=None, keepdims: bool = False) -> DArray:
    """Number of non-zero elements over ``axis`` (int64)."""
    _check("count_nonzero", x)
    layout = x._layout
    if layout.has_halo:
        layout = layout.without_halo()
    xp = x._xp
    mask = x.local if x.dtype == np.bool_ else x.local != 0  # strict namespaces refuse bool != int
    nonzero_ = DArray._wrap(xp.astype(mask, xp.uint8), layout, x._comm, xp)
    return _sum(nonzero_, axis=axis, dtype=np.int64, keepdims=keepdims)


_ONE = object()  # "not given": where(condition) alone is NumPy's nonzero(condition)


_PY_SCALARS = (bool, int, float, complex)


def where(condition, x1=_ONE, x2=_ONE, /):
    """``x1`` where ``condition`` is true, else ``x2`` (broadcast; the layout of the largest distributed operand).

    ``where(condition)`` alone is :func:`nonzero` (NumPy's one-argument form):
    a tuple of index arrays.

    Examples
    --------
    >>> import darray as da
    >>> x = da.asarray([0, 3, 0, 5])
    >>> da.where(x > 0, x, -1).gather().tolist(), [i.gather().tolist() for i in da.where(x)]
    ([-1, 3, -1, 5], [[1, 3]])
    """
    if x1 is _ONE and x2 is _ONE:
        if not isinstance(condition, DArray):
            raise TypeError(message("where", "condition must be a DArray when x1 and x2 are not given",
                                    type(condition).__name__))
        return nonzero(condition)
    if x1 is _ONE or x2 is _ONE:
        raise ValueError(message("where", "either both or neither of x1 and x2 should be given", 1, "0 or 2"))
    args = (condition, x1, x2)
    for a in args:
        if not isinstance(a, (DArray, bool, int, float, complex, np.ndarray, np.generic, list, tuple)):
            raise TypeError(message("where", "arguments must be arrays or numbers", type(a).__name__))
    if not any(isinstance(a, DArray) for a in args):
        raise TypeError(message("where", "needs at least one DArray argument", tuple(type(a).__name__ for a in args)))
    target, layout = align_target("where", args)
    c, a, b = (local_operand("where", v, layout, target) for v in args)
    if isinstance(a, _PY_SCALARS) and isinstance(b, _PY_SCALARS):  # the standard's where takes one scalar at most
        a = target._xp.asarray(a, dtype=to_backend_dtype(target._xp, np.result_type(a, b)), device=target.device)
    out = target._xp.where(c, a, b)
    if not hasattr(out, "shape") or tuple(out.shape) != layout.block_shape(target._comm.rank):
        out = target._xp.broadcast_to(target._xp.asarray(out), layout.block_shape(target._comm.rank))
    return wrap_like(out, layout, target)


# ---------------------------------------------------------------- nonzero
def nonzero(x, /) -> tuple[DArray, ...]:
    """Indices of the non-zero elements, one 1-d int64 array per axis, in C order (distributed)."""
    _check("nonzero", x)
    return _nonzero(x)


# ---------------------------------------------------------------- searchsorted
def searchsorted(x1, x2, /, *, side: str = "left", sorter=None) -> DArray:
    """Insertion indices of ``x2`` into the sorted 1-d ``x1`` (int64, in ``x2``'s layout).

    With ``sorter``, ``x1`` is first sorted (distributed): any valid sorter
    gives the same sorted sequence.
    """
    _check("searchsorted", x1)
    _check("searchsorted", x2)
    if x1.ndim != 1:
        raise ValueError(message("searchsorted", "x1 must be 1-d", x1.shape, "a 1-d array"))
    if side not in ("left", "right"):
        raise ValueError(message("searchsorted", "side must be 'left' or 'right'", side))
    if x1._comm is not x2._comm:
        raise ValueError(message("searchsorted", "arrays live on different communicators", None))
    if x1.dtype.kind not in "biuf" or x2.dtype.kind not in "biuf":
        raise TypeError(message("searchsorted", "unsupported dtype", (x1.dtype, x2.dtype), "real numeric dtypes"))
    if sorter is not None:
        _check("searchsorted", sorter)
        if sorter.shape != x1.shape or sorter.dtype.kind not in "iu":
            raise ValueError(message("searchsorted", "sorter must be an integer array of x1's shape",
                                     (sorter.shape, sorter.dtype), f"shape {x1.shape}"))
        x1 = sort(x1)
    comm = x1._comm
    dtype = np.result_type(x1.dtype, x2.dtype)
    queries = to_numpy(x2.local).astype(dtype, copy=False)
    layout = x2._layout.without_halo() if x2._layout.has_halo \
        else x2._layout
    l1 = x1._layout
    if l1.is_replicated:
        out = np.searchsorted(to_numpy(x1.local).astype(dtype, copy=False), queries, side=side)
        return DArray._wrap(_to_backend(x2, out.astype(np.int64)), layout, comm, x2._xp)
    rank, nprocs = comm.rank, comm.size
    g = l1.axis_dim[0]
    offsets = l1.offsets[0]
    nblocks = len(offsets) - 1
    # every block's first value (P values) routes each query to the block that answers it
    mine = to_numpy(x1.local).astype(dtype, copy=False)
    first = np.zeros(1, dtype=dtype)
    if mine.shape[0]:
        first[0] = mine[0]
    firsts = to_numpy(comm.allgather(first))[:, 0]
    block_of_rank = [l1.block_index(r)[0] for r in range(nprocs)]
    owner = {}  # block -> the rank answering for it (coordinate 0 on replicated grid dims)
    for r in range(nprocs):
        b = block_of_rank[r]
        if b not in owner and all(c == 0 for d, c in enumerate(l1.coords(r)) if d != g):
            owner[b] = r
    nonempty = [b for b in range(nblocks) if offsets[b + 1] > offsets[b]]
    if not nonempty:
        out = np.zeros(queries.shape, dtype=np.int64)
        return DArray._wrap(_to_backend(x2, out), layout, comm, x2._xp)
    heads = np.asarray([firsts[owner[b]] for b in nonempty], dtype=dtype)
    flat = queries.reshape(-1)
    pick = np.searchsorted(heads, flat, side=side) - 1  # last non-empty block whose head precedes the query
    pick = np.maximum(pick, 0)
    dest = np.asarray([owner[b] for b in nonempty], dtype=np.int64)[pick]
    routed = Routed(comm, dest, [flat])
    asked = routed.received[0]
    answers = np.searchsorted(mine, asked, side=side).astype(np.int64) + offsets[block_of_rank[rank]]
    out = routed.reply(answers).reshape(queries.shape)
    return DArray._wrap(_to_backend(x2, out), layout, comm, x2._xp)
