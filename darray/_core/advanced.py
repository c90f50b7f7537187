"""Integer-array and boolean-mask indexing, ``take`` and ``take_along_axis``, with global semantics.

- ``x[mask]``: each rank compresses its own block (row-cut layouts; others
  are redistributed to rows first); the 1-d result has uneven blocks, one per
  rank, and the only collective is an allgather of the per-rank counts.
- ``take``/``x[idx]``: requested rows are fetched from their owners
  (:mod:`darray._core.fetch`), never gathered.
- ``x[idx] = v`` and ``x[mask] = v``: values are routed to the owners.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._backend import to_numpy
from .._errors import message
from .._layout import Layout, normalize_axis
from .array import DArray
from .fetch import as_rows, fetch_rows, rows_layout, scatter_rows
from .manipulation import permute_dims
from .redistribute import redistribute_to

__all__ = ["take", "take_along_axis", "getitem_advanced", "setitem_advanced", "boolean_key"]


def _index_array(func: str, indices, n: int) -> np.ndarray:
    """Indices as a NumPy int64 array, bounds-checked (negative wrap) identically on every rank."""
    if isinstance(indices, DArray):
        if indices.dtype.kind not in "iu":
            raise IndexError(message(func, "indices must be integers", indices.dtype))
        idx = to_numpy(indices.gather()).astype(np.int64)
    else:
        idx = np.asarray(indices)
        if idx.dtype.kind not in "iu" and idx.size:
            raise IndexError(message(func, "indices must be integers", idx.dtype))
        idx = idx.astype(np.int64)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx[(idx < -n) | (idx >= n)][0]
        raise IndexError(message(func, f"index out of bounds for an axis of size {n}", int(bad),
                                 f"indices in [{-n}, {n})"))
    return np.where(idx < 0, idx + n, idx)


def take(x: DArray, indices, /, *, axis: int | None = None) -> DArray:
    """Elements (or slabs) of ``x`` at ``indices`` along ``axis``; only requested slabs move.

    ``indices`` is 1-d (replicated, or a DArray: it is gathered, being an index
    vector). The result is cut along ``axis`` in balanced blocks.
    """
    if axis is None:
        if x.ndim != 1:
            raise ValueError(message("take", "axis is required for arrays with more than one dimension", x.shape))
        axis = 0
    axis = normalize_axis("take", axis, x.ndim)
    idx = _index_array("take", indices, x.shape[axis])
    if idx.ndim != 1:
        raise ValueError(message("take", "indices must be 1-d", idx.shape))
    order = (axis, *[a for a in range(x.ndim) if a != axis])
    moved = permute_dims(x, order) if axis else x
    rows = as_rows(moved)
    comm = x._comm
    result_layout = rows_layout((idx.shape[0], *moved.shape[1:]), comm.size)
    mine = result_layout.block_slices(comm.rank)[0]
    local = fetch_rows(rows, idx[mine])
    out = DArray._wrap(local, result_layout, comm, x._xp)
    if axis:
        back = [0] * x.ndim
        for i, a in enumerate(order):
            back[a] = i
        out = permute_dims(out, tuple(back))
    return out


def take_along_axis(x: DArray, indices, /, *, axis: int = -1) -> DArray:
    """``numpy.take_along_axis``: pick along ``axis`` with an index array shaped like ``x`` elsewhere."""
    if not isinstance(indices, DArray):
        raise TypeError(message("take_along_axis", "indices must be a DArray", type(indices).__name__))
    axis = normalize_axis("take_along_axis", axis, x.ndim)
    if indices.ndim != x.ndim or any(a != axis and indices.shape[a] != x.shape[a] for a in range(x.ndim)):
        raise ValueError(message("take_along_axis", "indices must match x except along axis", indices.shape,
                                 f"{x.shape} with any length on axis {axis}"))
    if indices.dtype.kind not in "iu":
        raise IndexError(message("take_along_axis", "indices must be integers", indices.dtype))
    n = x.shape[axis]
    xp = x._xp
    comm = x._comm
    rank = comm.rank
    local_idx = to_numpy(indices.local).astype(np.int64)
    bad = (local_idx < -n) | (local_idx >= n)
    from ..testing import agree

    if agree(comm, not bad.any()):
        raise IndexError(message("take_along_axis", f"index out of bounds for axis {axis} of size {n}", None,
                                 f"indices in [{-n}, {n})"))
    local_idx = np.where(local_idx < 0, local_idx + n, local_idx)
    # global flat index of every requested element
    starts = indices.layout.block_start(rank)
    grids = list(np.meshgrid(*[np.arange(s, s + m) for s, m in zip(starts, local_idx.shape)], indexing="ij"))
    grids[axis] = local_idx
    flat_ids = np.ravel_multi_index(tuple(grids), x.shape) if local_idx.size else np.zeros(0, np.int64)
    from .._api.manipulation import reshape  # noqa: PLC0415  (engines of one chapter reuse another's)

    flat = as_rows(reshape(x, (-1,)))
    values = fetch_rows(flat, flat_ids.reshape(-1))
    out_layout = indices.layout.replace(halo=(0,) * x.ndim, boundary=("none",) * x.ndim)
    return DArray._wrap(xp.reshape(values, local_idx.shape), out_layout, comm, xp)


def boolean_key(key) -> bool:
    k = key[0] if isinstance(key, tuple) and len(key) == 1 else key
    return (isinstance(k, DArray) and k.dtype.kind == "b") or (
        isinstance(k, np.ndarray) and k.dtype == np.bool_ and k.ndim > 0)


def _mask_and_rows(func: str, x: DArray, mask):
    if isinstance(mask, np.ndarray):
        mask = DArray._wrap(np.asarray(mask), Layout(mask.shape, x._layout.dims, (None,) * len(x._layout.dims),
                                                     tuple((n,) for n in mask.shape), (0,) * mask.ndim,
                                                     ("none",) * mask.ndim), x._comm, x._xp)
    if mask.ndim == 0 or mask.ndim > x.ndim or mask.shape != x.shape[:mask.ndim]:
        raise IndexError(message(func, "boolean index does not match the indexed array", mask.shape,
                                 f"the leading dims of {x.shape}"))
    rows = as_rows(x)
    want = Layout(mask.shape, rows._layout.dims, rows._layout.split, rows._layout.sizes[:mask.ndim],
                  (0,) * mask.ndim, ("none",) * mask.ndim)
    mask = redistribute_to(mask, want) if mask._layout.blocks_key != want.blocks_key else mask
    return rows, mask


def getitem_advanced(x: DArray, key) -> DArray:
    """``x[mask]`` and ``x[int_array]`` / ``x[int_array, ...]`` (one array on the leading axes)."""
    if boolean_key(key):
        mask = key[0] if isinstance(key, tuple) else key
        if getattr(mask, "ndim", 1) == 0:  # a 0-d mask adds a length-1 axis, kept (True) or empty (False)
            from .indexing import getitem

            keep = bool(mask.gather() if isinstance(mask, DArray) else mask)
            return getitem(getitem(x, (None,)), (slice(0, 1 if keep else 0),))
        rows, mask = _mask_and_rows("__getitem__", x, mask)
        xp = x._xp
        local = rows.local[mask.local]
        counts = to_numpy(x._comm.allgather(np.asarray([local.shape[0]], dtype=np.int64)))[:, 0]
        shape = (int(counts.sum()), *x.shape[mask.ndim:])
        layout = rows_layout(shape, x._comm.size, sizes=counts.tolist())
        return DArray._wrap(xp.asarray(local), layout, x._comm, xp)
    items = key if isinstance(key, tuple) else (key,)
    arrays = [i for i, k in enumerate(items) if _is_int_array(k)]
    if len(arrays) == 1 and arrays[0] > 0:
        return _one_array_later(x, items, arrays[0])
    if not arrays or arrays != list(range(len(arrays))):
        raise IndexError(message("__getitem__", "unsupported index", key,
                                 "integers, slices, ..., None, one boolean mask, or integer arrays on the "
                                 "leading axes followed by basic indices"))
    if len(arrays) == 1:
        idx = items[0]
        idx_np = _index_array("__getitem__", idx, x.shape[0])
        out = take(x, idx_np.reshape(-1), axis=0)
        if idx_np.ndim != 1:
            from .._api.manipulation import reshape

            out = reshape(out, idx_np.shape + x.shape[1:])
    else:
        lead = len(arrays)
        ids = [_index_array("__getitem__", items[i], x.shape[i]) for i in range(lead)]
        ids = np.broadcast_arrays(*ids)
        flat = np.ravel_multi_index(tuple(ids), x.shape[:lead])
        from .._api.manipulation import reshape

        merged = reshape(x, (int(np.prod(x.shape[:lead])), *x.shape[lead:]))
        out = take(merged, flat.reshape(-1), axis=0)
        if flat.ndim != 1:
            out = reshape(out, flat.shape + x.shape[lead:])
    rest = items[len(arrays):]
    if rest:
        from .indexing import getitem

        out = getitem(out, (slice(None),) * (out.ndim - (x.ndim - len(arrays))) + tuple(rest))
    return out


def _one_array_later(x: DArray, items, position: int) -> DArray:
    """``x[..., idx, ...]`` with one integer array after basic indices: basic part first, then ``take``."""
    from .._api.manipulation import reshape
    from .indexing import getitem

    basic = tuple(slice(None) if i == position else k for i, k in enumerate(items))
    y = getitem(x, basic)
    before = items[:position]
    if Ellipsis in before:
        after = [k for k in items[position + 1:] if k is not None and k is not Ellipsis]
        axis = y.ndim - 1 - sum(not isinstance(k, (int, np.integer)) for k in after)
    else:
        axis = sum(1 for k in before if not isinstance(k, (int, np.integer)) or isinstance(k, bool))
    idx = _index_array("__getitem__", items[position], y.shape[axis])
    out = take(y, idx.reshape(-1), axis=axis)
    if idx.ndim != 1:
        out = reshape(out, y.shape[:axis] + idx.shape + y.shape[axis + 1:])
    return out


def _is_int_array(k) -> bool:
    if isinstance(k, DArray):
        return k.ndim > 0 and k.dtype.kind in "iu"
    if isinstance(k, (list, np.ndarray)):
        a = np.asarray(k)
        return a.ndim > 0 and (a.dtype.kind in "iu" or a.size == 0)
    return False


def setitem_advanced(x: DArray, key, value) -> None:
    """``x[mask] = value`` and ``x[int_array] = value`` (rows on axis 0)."""
    comm = x._comm
    xp = x._xp
    scalar = isinstance(value, (bool, int, float, complex, numbers.Number))
    if boolean_key(key):
        mask = key[0] if isinstance(key, tuple) else key
        rows, mask = _mask_and_rows("__setitem__", x, mask)
        local_mask = mask.local
        if scalar:
            rows.local[local_mask] = value
        else:
            count = int(to_numpy(xp.sum(xp.astype(local_mask, xp.int64))))
            counts = to_numpy(comm.allgather(np.asarray([count], dtype=np.int64)))[:, 0]
            shape = (int(counts.sum()), *x.shape[mask.ndim:])
            layout = rows_layout(shape, comm.size, sizes=counts.tolist())
            vals = _values_in(value, layout, x, "__setitem__")
            rows.local[local_mask] = vals
        if rows is not x:
            x.local[...] = redistribute_to(rows, x._layout.replace(halo=(0,) * x.ndim,
                                                                   boundary=("none",) * x.ndim)).local
        x._halo_fresh = False
        return
    items = key if isinstance(key, tuple) else (key,)
    if len(items) != 1 or not _is_int_array(items[0]):
        raise IndexError(message("__setitem__", "unsupported index", key,
                                 "basic indices, one boolean mask, or one integer array on axis 0"))
    idx = _index_array("__setitem__", items[0], x.shape[0]).reshape(-1)
    rows = as_rows(x)
    # every rank writes the part of the index list in its balanced share, with the matching values
    share = rows_layout((idx.shape[0], *x.shape[1:]), comm.size)
    mine = share.block_slices(comm.rank)[0]
    if scalar:
        values = xp.full((mine.stop - mine.start, *x.shape[1:]), value, dtype=x._block.dtype, device=x.device)
    else:
        values = _values_in(value, share, x, "__setitem__")
    scatter_rows(rows, idx[mine], values)
    if rows is not x:
        x.local[...] = redistribute_to(rows, x._layout.replace(halo=(0,) * x.ndim, boundary=("none",) * x.ndim)).local
    x._halo_fresh = False


def _values_in(value, layout: Layout, x: DArray, func: str):
    """This rank's block of ``value`` broadcast to ``layout``'s shape and cut like it."""
    from .elementwise import local_operand

    shape = layout.shape
    vshape = value.shape if hasattr(value, "shape") else np.shape(value)
    try:
        ok = np.broadcast_shapes(tuple(vshape), shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(message(func, "value cannot be broadcast to the selection", tuple(vshape),
                                 f"a shape broadcastable to {shape}"))
    local = local_operand(func, value if isinstance(value, DArray) else np.asarray(value), layout, x)
    xp = x._xp
    return xp.astype(xp.broadcast_to(xp.asarray(local), layout.block_shape(x._comm.rank)), x._block.dtype)

