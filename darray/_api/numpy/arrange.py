"""``numpy.rot90``, ``numpy.put`` and ``numpy.put_along_axis`` for DArrays, distributed.

- ``rot90``: flips and an axis permutation, as NumPy composes them
  (:func:`darray.flip`, :func:`darray.permute_dims`): a flip of a cut axis
  swaps blocks between ranks, a permutation only relabels the layout.
- ``put``: ``a.flat[ind] = v`` in place. Each rank writes its balanced share
  of the index list; the values travel to the owners of their cells
  (:func:`darray._core.fetch.scatter_rows`: one exchange of indices, one of
  values). ``ind`` is an index vector held whole by every rank (a DArray
  there is allgathered, as for :func:`darray.take`); ``v`` a DArray of
  ``ind``'s size is redistributed, not gathered (a shorter one, repeated as
  NumPy does, is allgathered).
- ``put_along_axis``: each rank sends the cells of its block of
  ``indices`` (with the matching ``values``) to their owners, as
  ``take_along_axis`` fetches them.

Repeated indices: the last write wins, as in NumPy. ``numpy.take_along_axis``
takes NumPy's arguments here (NumPy index arrays, ``axis=None``) and runs
:func:`darray.take_along_axis`.

Examples
--------
>>> import darray as da
>>> from darray._api.numpy.arrange import put, rot90
>>> rot90(da.asarray([[1, 2], [3, 4]])).gather().tolist()
[[2, 4], [1, 3]]
>>> a = da.arange(5)
>>> put(a, [0, 2], [-1, -2])
>>> a.gather().tolist()
[-1, 1, -2, 3, 4]
"""

from __future__ import annotations

import numbers

import numpy as np

from ..._backend import from_numpy, to_numpy
from ..._core import DArray, redistribute_to
from ..._core.elementwise import local_operand
from ..._core.fetch import as_rows, rows_layout, scatter_rows
from ..._core.protocols import implements
from ..._errors import AxisError, message
from ..._comm.base import agree
from ..._core.advanced import take_along_axis
from ..creation import as_darray, asarray
from ._common import writes_numpy_arrays
from ..manipulation import broadcast_to, flip, permute_dims, reshape

__all__ = ["put", "put_along_axis", "rot90"]  # numpy.take_along_axis is registered here too


@implements(np.rot90)
def rot90(m, k: int = 1, axes=(0, 1)) -> DArray:
    """``m`` rotated by ``k`` quarter turns in the plane of ``axes`` (``numpy.rot90``).

    Examples
    --------
    >>> import darray as da
    >>> rot90(da.asarray([[1, 2], [3, 4]]), 2).gather().tolist()
    [[4, 3], [2, 1]]
    """
    m = as_darray("numpy.rot90", m)  # NumPy's array-likes (a list, a NumPy array)
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(message("numpy.rot90", "k must be an integer", k))
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError(message("numpy.rot90", "len(axes) must be 2", axes, "two axes"))
    if any(isinstance(a, bool) or not isinstance(a, numbers.Integral) for a in axes):
        raise TypeError(message("numpy.rot90", "axes must be integers", axes))
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError(message("numpy.rot90", "axes must be different", axes, "two distinct axes"))
    if not all(-m.ndim <= a < m.ndim for a in axes):
        raise ValueError(message("numpy.rot90", "axes out of range", axes, f"axes in [{-m.ndim}, {m.ndim})"))
    first, second = (int(a) % m.ndim for a in axes)
    k = int(k) % 4
    if k == 0:
        return m[...]
    if k == 2:
        return flip(m, axis=(first, second))
    order = list(range(m.ndim))
    order[first], order[second] = order[second], order[first]
    if k == 1:
        return permute_dims(flip(m, axis=second), tuple(order))
    return flip(permute_dims(m, tuple(order)), axis=second)


def _index_vector(func: str, ind, n: int, mode: str) -> np.ndarray:
    """``ind`` as flat int64 positions in ``[0, n)`` after ``mode`` (checked the same way on every rank)."""
    idx = to_numpy(ind.gather()) if isinstance(ind, DArray) else np.asarray(ind)
    if idx.size and idx.dtype.kind not in "iu":
        raise TypeError(message(func, "indices must be integers", idx.dtype, "an integer array"))
    idx = idx.astype(np.int64).reshape(-1)
    if mode == "wrap":
        return idx % n if n else idx
    if mode == "clip":
        return np.clip(idx, 0, n - 1)
    bad = idx[(idx < -n) | (idx >= n)]
    if bad.size:
        raise IndexError(message(func, f"index out of bounds for a flat array of size {n}", int(bad[0]),
                                 f"indices in [{-n}, {n})"))
    return np.where(idx < 0, idx + n, idx)


def _write_back(a: DArray, flat: DArray) -> None:
    """Copy the 1-d ``flat`` (a's cells in C order) into ``a``'s owned cells."""
    plain = a.layout.without_halo()
    a.local[...] = redistribute_to(reshape(flat, a.shape), plain).local
    a._halo_fresh = False


@implements(np.put)
@writes_numpy_arrays(np.put)
def put(a, ind, v, mode: str = "raise") -> None:
    """Set ``a.flat[ind] = v`` in place (``numpy.put``; ``v`` repeated to ``ind``'s length).

    ``mode``: ``'raise'`` (``IndexError`` for an index out of bounds),
    ``'wrap'`` (modulo the size) or ``'clip'`` (into ``[0, a.size - 1]``; no
    negative indexing).

    Examples
    --------
    >>> import darray as da
    >>> a = da.zeros((2, 3), dtype=da.int64)
    >>> put(a, [5, 7], [9, 8], mode="wrap")
    >>> a.gather().tolist()
    [[0, 8, 0], [0, 0, 9]]
    """
    func = "numpy.put"
    if not isinstance(a, DArray):
        raise TypeError(message(func, "a must be a DArray", type(a).__name__))
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(message(func, "unknown mode", repr(mode), "'raise', 'wrap' or 'clip'"))
    n = a.size
    if n == 0 and mode != "raise":
        raise IndexError(message(func, "cannot put into an empty array", a.shape, "a non-empty array"))
    idx = _index_vector(func, ind, n, mode)
    size_v = v.size if isinstance(v, DArray) else np.size(v)
    if idx.size == 0 or size_v == 0:
        return
    comm = a.comm
    share = rows_layout((idx.shape[0],), comm.size)
    mine = share.block_slices(comm.rank)[0]
    if isinstance(v, DArray) and v.size == idx.size:
        values = to_numpy(redistribute_to(reshape(v, (-1,)), share).local)
    else:
        values = np.resize(to_numpy(v.gather()) if isinstance(v, DArray) else np.asarray(v), idx.shape)[mine]
    flat = as_rows(reshape(a, (-1,)))
    local = from_numpy(a._xp, np.ascontiguousarray(values.astype(a.dtype, copy=False)), device=a.device)
    scatter_rows(flat, idx[mine], local)
    _write_back(a, flat)


@implements(np.put_along_axis)
@writes_numpy_arrays(np.put_along_axis)
def put_along_axis(arr, indices, values, axis) -> None:
    """Write ``values`` into ``arr`` at ``indices`` along ``axis``, in place (``numpy.put_along_axis``).

    ``indices`` has ``arr``'s number of dimensions (any length along
    ``axis``, its other lengths ``arr``'s or 1); ``values`` broadcasts to it.
    ``axis=None`` works on the flattened ``arr`` with 1-d ``indices``.

    Examples
    --------
    >>> import darray as da
    >>> a = da.asarray([[10, 30, 20], [60, 40, 50]])
    >>> put_along_axis(a, da.asarray([[0], [2]]), 0, axis=1)
    >>> a.gather().tolist()
    [[0, 30, 20], [60, 40, 0]]
    """
    func = "numpy.put_along_axis"
    if not isinstance(arr, DArray):
        raise TypeError(message(func, "arr must be a DArray", type(arr).__name__))
    target = arr
    if axis is None:
        if np.ndim(indices) != 1:
            raise ValueError(message(func, "indices must be 1-d when axis is None", np.shape(indices)))
        arr, axis = reshape(arr, (-1,)), 0
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(message(func, "axis must be an integer or None", axis))
    if not -arr.ndim <= axis < arr.ndim:
        raise AxisError(message(func, "axis out of bounds", axis, f"an axis in [{-arr.ndim}, {arr.ndim})"))
    axis = int(axis) % arr.ndim
    if not isinstance(indices, DArray):
        indices = np.asarray(indices)
        if indices.dtype.kind not in "iu":
            raise IndexError(message(func, "indices must be integers", indices.dtype, "an integer array"))
        indices = asarray(indices, split=None, comm=arr.comm, device=arr.device)
    if indices.dtype.kind not in "iu":
        raise IndexError(message(func, "indices must be integers", indices.dtype, "an integer array"))
    if indices.ndim != arr.ndim:
        raise ValueError(message(func, "indices and arr must have the same number of dimensions",
                                 (indices.ndim, arr.ndim)))
    shape = tuple(indices.shape[d] if d == axis else arr.shape[d] for d in range(arr.ndim))
    if any(indices.shape[d] not in (1, arr.shape[d]) for d in range(arr.ndim) if d != axis):
        raise ValueError(message(func, "indices do not broadcast against arr off the axis", indices.shape,
                                 f"lengths {arr.shape} or 1 except along axis {axis}"))
    if indices.shape != shape:
        indices = broadcast_to(indices, shape)
    try:
        np.broadcast_shapes(np.shape(values) if not isinstance(values, DArray) else values.shape, shape)
    except ValueError:
        raise ValueError(message(func, "values do not broadcast to the indices' shape",
                                 values.shape if isinstance(values, DArray) else np.shape(values), shape)) from None
    n = arr.shape[axis]
    local_idx = to_numpy(indices.local).astype(np.int64)
    if agree(arr.comm, not ((local_idx < -n) | (local_idx >= n)).any()):
        raise IndexError(message(func, f"index out of bounds for axis {axis} of size {n}", None,
                                 f"indices in [{-n}, {n})"))
    local_idx = np.where(local_idx < 0, local_idx + n, local_idx)
    plain = indices.layout.without_halo()
    vals = values if isinstance(values, DArray) else np.asarray(values)
    local_vals = np.broadcast_to(to_numpy(local_operand(func, vals, plain, indices)), local_idx.shape)
    starts = indices.layout.block_start(arr.comm.rank)
    grids = list(np.meshgrid(*[np.arange(s, s + m) for s, m in zip(starts, local_idx.shape)], indexing="ij"))
    grids[axis] = local_idx
    flat_ids = np.ravel_multi_index(tuple(grids), arr.shape).reshape(-1) if local_idx.size else \
        np.zeros(0, np.int64)
    flat = as_rows(reshape(arr, (-1,)))
    rows = np.ascontiguousarray(local_vals.reshape(-1).astype(arr.dtype, copy=False))
    scatter_rows(flat, flat_ids, from_numpy(arr._xp, rows, device=arr.device))
    _write_back(target, flat)


def _numpy_take_along_axis(arr, indices, axis=-1):
    """``numpy.take_along_axis``: NumPy index arrays (held by every rank) and ``axis=None`` too."""
    if not isinstance(arr, DArray):
        raise TypeError(message("numpy.take_along_axis", "arr must be a DArray", type(arr).__name__))
    if axis is None:
        if np.ndim(indices) != 1:
            raise ValueError(message("numpy.take_along_axis", "indices must be 1-d when axis is None",
                                     np.shape(indices)))
        arr, axis = reshape(arr, (-1,)), 0
    if not isinstance(indices, DArray):
        indices = np.asarray(indices)
        if indices.dtype.kind not in "iu":
            raise IndexError(message("numpy.take_along_axis", "indices must be integers", indices.dtype,
                                     "an integer array"))
        indices = asarray(indices, split=None, comm=arr.comm, device=arr.device)
    return take_along_axis(arr, indices, axis=axis)


# replaces the generic adapter of darray._api.numpy.protocols (imported before this module)
implements(np.take_along_axis)(_numpy_take_along_axis)
