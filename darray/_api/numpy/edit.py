"""NumPy's array-editing functions for DArrays: ``append``, ``delete``, ``insert``, ``resize``, ``block``, ``r_``, ...

Each has NumPy's signature and semantics and is registered with
``__array_function__`` (``numpy.delete(x, ...)`` and ``darray.delete(x, ...)``
give the same DArray). Array-likes are accepted where NumPy takes them (next
to a DArray they are replicated on its ranks). What moves:

- ``append``, ``block``, ``r_``/``c_``, ``ediff1d``'s edges: every piece is
  placed once into the result, cut like the largest piece (one placement
  plan per piece: only cells whose owner changes move);
- ``delete``: a keep-mask along the axis, built by every rank for its own
  cells from ``obj`` (no message); an uncut axis is compressed locally, a cut
  one through darray's boolean indexing (each rank keeps its own rows, one
  allgather of the counts; other grids fetch the kept cells);
- ``insert``: one index: the values slab is cut like the array and the three
  pieces placed; several: values appended, then every result position
  fetched from its source (:func:`darray.take`; local on an uncut axis). The
  insertion indices are held by every rank (as NumPy, ``obj`` is small);
- ``resize``: the flat array joined with its own prefix ``log2(new/old)``
  times, then a reshape; ``trim_zeros``: each rank's bounding box of
  nonzeros, one allreduce of ``2 * ndim`` integers, then a slice;
- ``fliplr``/``flipud``: blocks swap with their mirrors; ``rollaxis``: a
  relabelling; ``h/v/dsplit``: slices; ``array_equiv``: one comparison and
  one ``all`` reduction.

Examples
--------
>>> import darray as da
>>> from darray._api.numpy.edit import delete, insert, r_
>>> delete(da.arange(6), [0, 2]).gather().tolist()
[1, 3, 4, 5]
>>> insert(da.arange(3), 1, 9).gather().tolist()
[0, 9, 1, 2]
>>> r_[da.arange(2), 0:3, 7].gather().tolist()
[0, 1, 0, 1, 2, 7]
"""

from __future__ import annotations

import inspect
import numbers
import warnings
from collections.abc import Callable, Sequence
from math import prod

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from ..._backend import from_numpy, to_numpy
from ..._core import DArray, astype, redistribute_to, to_backend_dtype
from ..._core.advanced import take
from ..._core.elementwise import local_operand
from ..._core.fetch import rows_layout
from ..._core.manipulation import balanced_like, permute_dims, place
from ..._core.protocols import implements
from ..._core.reductions import all as _all
from ..._errors import AxisError, message, names_errors
from ..creation import arange, asarray, linspace, zeros
from ..manipulation import moveaxis, reshape
from .._common import first_darray
from ._common import axis_of, concat_axis, darray_of, integer, numpy_function, numpy_name, split_along
from .stacking import vstack

__all__ = ["append", "array_equiv", "block", "c_", "delete", "dsplit", "ediff1d", "fliplr", "flipud", "hsplit",
           "insert", "r_", "resize", "rollaxis", "trim_zeros", "vsplit"]
if hasattr(np, "row_stack"):  # deprecated in NumPy 2.0, still there in 2.4
    __all__.append("row_stack")
__all__.sort()


def _flat(x: DArray) -> DArray:
    return x if x.ndim == 1 else reshape(x, (-1,))


def _ndmin(x: DArray, ndmin: int) -> DArray:
    """``x`` with length-1 axes prepended up to ``ndmin`` dimensions (``numpy.array(x, ndmin=)``; no message)."""
    return x if x.ndim >= ndmin else reshape(x, (1,) * (ndmin - x.ndim) + x.shape)


# ---------------------------------------------------------------- placing pieces
def _cut_like(like: DArray, shape: tuple[int, ...]):
    """A layout of ``shape`` cut along ``like``'s axes: its blocks on axes of its length, else balanced."""
    layout = balanced_like(like.layout, shape, like.comm.size)
    return layout.replace(sizes=tuple(like.layout.sizes[a] if n == like.shape[a] else sizes
                                      for a, (n, sizes) in enumerate(zip(shape, layout.sizes))))


def _assemble(shape: tuple[int, ...], dtype, like: DArray, pieces) -> DArray:
    """A new array of ``shape`` cut like ``like``; every ``(piece, offset)`` placed once (collective)."""
    layout = _cut_like(like, shape)
    xp = like._xp
    block = xp.empty(layout.block_shape(like.comm.rank), dtype=to_backend_dtype(xp, dtype), device=like.device)
    out = DArray._wrap(block, layout, like.comm, xp)
    for piece, offset in pieces:
        if piece.size:
            place(astype(piece, dtype, copy=False), out, tuple((0, n) for n in piece.shape), tuple(offset))
    return out


def _join(func: str, arrays: Sequence[DArray], axis) -> DArray:
    """``numpy.concatenate(arrays, axis)`` cut like the largest input (one placement per input)."""
    axis = concat_axis(func, arrays, axis)
    first = arrays[0].shape
    ndim = len(first)
    shape = tuple(sum(a.shape[axis] for a in arrays) if i == axis else n for i, n in enumerate(first))
    starts = np.cumsum([0] + [a.shape[axis] for a in arrays])
    pieces = [(a, tuple(int(s) if i == axis else 0 for i in range(ndim))) for a, s in zip(arrays, starts)]
    return _assemble(shape, np.result_type(*(a.dtype for a in arrays)), max(arrays, key=lambda a: a.size), pieces)


def _slab(func: str, values, x: DArray, shape: tuple[int, ...]) -> DArray:
    """``values`` (cast to x's dtype) broadcast to ``shape`` and cut like ``x``: a contiguous block per rank."""
    values = astype(values, x.dtype, copy=False) if isinstance(values, DArray) else _cast(func, values, x.dtype)
    vshape = values.shape
    extra = len(vshape) - len(shape)
    if extra > 0 and all(n == 1 for n in vshape[:extra]):  # NumPy's assignment drops leading length-1 axes
        vshape = vshape[extra:]
        values = reshape(values, vshape) if isinstance(values, DArray) else values.reshape(vshape)
    try:
        ok = np.broadcast_shapes(vshape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(message(numpy_name(func), "could not broadcast the values", vshape, f"a shape broadcasting "
                                 f"to {shape}"))
    layout = _cut_like(x, shape)
    xp = x._xp
    local = local_operand(numpy_name(func), values, layout, x)
    block = xp.asarray(xp.broadcast_to(local, layout.block_shape(x.comm.rank)), copy=True)
    return DArray._wrap(block, layout, x.comm, xp)


def _cast(func: str, values, dtype, ndmin: int = 0) -> np.ndarray:
    """Non-DArray ``values`` as a NumPy array of ``dtype`` (NumPy's unsafe ``array(values, dtype=)``)."""
    try:
        return np.array(values, dtype=dtype, ndmin=ndmin)
    except (TypeError, ValueError) as exc:
        raise type(exc)(message(numpy_name(func), "cannot convert the values to the array's dtype",
                                type(values).__name__, f"values that convert to {np.dtype(dtype)} ({exc})")) from exc


# ---------------------------------------------------------------- keeping / taking positions along an axis
def _local_take(x: DArray, axis: int, idx: np.ndarray) -> DArray:
    """``x`` at positions ``idx`` along an axis that ``x`` does not cut: one local ``take`` per rank."""
    layout = x.layout.without_halo()
    xp = x._xp
    local = xp.take(x.local, from_numpy(xp, np.ascontiguousarray(idx, dtype=np.int64), device=x.device), axis=axis)
    shape = tuple(len(idx) if a == axis else n for a, n in enumerate(x.shape))
    sizes = tuple((len(idx),) if a == axis else s for a, s in enumerate(layout.sizes))
    return DArray._wrap(local, layout.replace(shape=shape, sizes=sizes), x.comm, xp)


def _keep(x: DArray, axis: int, keep: Callable[[int, int], np.ndarray] | DArray) -> DArray:
    """``x`` where ``keep`` is True along ``axis``: ``keep(lo, hi)`` is the mask of positions ``[lo, hi)`` (NumPy
    bools, every rank computes its own cells), or ``keep`` is a 1-d boolean DArray of the axis length."""
    layout = x.layout.without_halo()
    others = tuple(a for a in range(x.ndim) if a != axis)
    mask_layout = layout.reduced(others, keepdims=False)  # the axis cut as x cuts it
    if isinstance(keep, DArray):
        mask = redistribute_to(keep, mask_layout) if keep.layout.blocks_key != mask_layout.blocks_key else keep
    else:
        cells = mask_layout.block_slices(x.comm.rank)[0]
        mask = DArray._wrap(from_numpy(x._xp, np.ascontiguousarray(keep(cells.start, cells.stop)), device=x.device),
                            mask_layout, x.comm, x._xp)
    if layout.axis_dim[axis] is None:  # every rank holds the whole axis: compress locally
        return _local_take(x, axis, np.flatnonzero(to_numpy(mask.local)))
    kept = moveaxis(x, axis, 0)[mask]
    return moveaxis(kept, 0, axis) if axis else kept


def _take_positions(x: DArray, axis: int, length: int, source: Callable[[int, int], np.ndarray]) -> DArray:
    """The array whose position ``p < length`` along ``axis`` is ``x``'s position ``source(p)``: ``source(lo, hi)``
    maps positions ``[lo, hi)`` to ``x``'s (NumPy int64), every rank computing its own share."""
    if x.layout.without_halo().axis_dim[axis] is None:
        return _local_take(x, axis, source(0, length))
    comm = x.comm
    layout = rows_layout((length,), comm.size)
    cells = layout.block_slices(comm.rank)[0]
    idx = DArray._wrap(from_numpy(x._xp, np.ascontiguousarray(source(cells.start, cells.stop), dtype=np.int64),
                                  device=x.device), layout, comm, x._xp)
    return take(x, idx, axis=axis)


# ---------------------------------------------------------------- append, delete, insert
@numpy_function(np.append)
def append(arr, values, axis=None) -> DArray:
    """``values`` appended to the end of ``arr`` (``numpy.append``): both flattened when ``axis`` is None.

    With an ``axis``, ``values`` must have ``arr``'s number of dimensions and
    its shape off the axis. The result is cut like the larger input.

    Examples
    --------
    >>> import darray as da
    >>> append(da.asarray([[1, 2], [3, 4]]), [[5, 6]], axis=0).gather().tolist()
    [[1, 2], [3, 4], [5, 6]]
    >>> append(da.arange(2), 9.5).gather().tolist()
    [0.0, 1.0, 9.5]
    """
    like = first_darray(arr, values)
    x, v = darray_of("append", arr, like), darray_of("append", values, like)
    if axis is None:
        x, v, axis = _flat(x), _flat(v), 0
    return _join("append", [x, v], axis)


def _out_of_bounds(func: str, index, axis: int, n: int, high: int) -> IndexError:
    return IndexError(message(numpy_name(func), f"index {index} is out of bounds for axis {axis} with size {n}", index,
                              f"an index in [{-n}, {high})"))


def _along(func: str, arr, axis, *others) -> tuple[DArray, int]:
    """``arr`` as a DArray (replicated next to a DArray among ``others``), flattened if ``axis`` is None."""
    x = darray_of(func, arr, first_darray(*others))
    return (_flat(x), 0) if axis is None else (x, axis_of(func, axis, x.ndim))


def _deleted(obj, n: int, axis: int) -> Callable[[int, int], np.ndarray] | DArray:
    """The keep-mask of ``numpy.delete(..., obj, ...)`` along an axis of length ``n`` (see :func:`_keep`)."""
    if isinstance(obj, slice):
        start, stop, step = obj.indices(n)
        picked = range(start, stop, step)
        if step < 0 and picked:
            start, stop, step = picked[-1], picked[0] + 1, -step

        def keep_slice(lo: int, hi: int) -> np.ndarray:
            pos = np.arange(lo, hi)
            return ~((pos >= start) & (pos < stop) & ((pos - start) % step == 0)) if picked else pos == pos

        return keep_slice
    if isinstance(obj, DArray):
        if obj.dtype == np.bool_ and obj.shape == (n,):
            return ~obj  # a distributed mask stays distributed
        obj = to_numpy(obj.gather())  # an index list: small, as NumPy's obj (allgathered once)
    given, obj = obj, np.asarray(obj)
    if obj.size == 0 and not isinstance(given, np.ndarray):
        obj = obj.astype(np.intp)  # [] is float64 to NumPy, and fine as indices
    if obj.dtype == np.bool_:
        if obj.shape != (n,):
            raise ValueError(message(numpy_name("delete"), "boolean array argument obj to delete must be one "
                                     f"dimensional and match the axis length of {n}", obj.shape, f"({n},)"))
        mask = obj
        return lambda lo, hi: ~mask[lo:hi]
    if obj.dtype.kind not in "iu":
        raise IndexError(message(numpy_name("delete"), "arrays used as indices must be of integer (or boolean) type",
                                 obj.dtype, "integers or booleans"))
    idx = obj.astype(np.int64).reshape(-1)
    bad = idx[(idx < -n) | (idx >= n)]
    if bad.size:
        raise _out_of_bounds("delete", int(bad[0]), axis, n, n)
    idx = np.where(idx < 0, idx + n, idx)

    def keep_indices(lo: int, hi: int) -> np.ndarray:
        keep = np.ones(hi - lo, dtype=bool)
        keep[idx[(idx >= lo) & (idx < hi)] - lo] = False
        return keep

    return keep_indices


@numpy_function(np.delete)
def delete(arr, obj, axis=None) -> DArray:
    """``arr`` without the sub-arrays at ``obj`` along ``axis`` (``numpy.delete``; flattened if ``axis`` is None).

    ``obj``: an int, a slice, a list/array of ints (repeats and negatives as
    NumPy: deleted once) or a boolean array of the axis length (a boolean
    DArray stays distributed; an integer DArray is an index list, allgathered).

    Examples
    --------
    >>> import darray as da
    >>> x = da.asarray([[1, 2, 3], [4, 5, 6]])
    >>> delete(x, 1, axis=1).gather().tolist()
    [[1, 3], [4, 6]]
    >>> delete(x, slice(None, None, 2)).gather().tolist()
    [2, 4, 6]
    """
    x, axis = _along("delete", arr, axis, obj)
    return _keep(x, axis, _deleted(obj, x.shape[axis], axis))


def _insert_indices(obj, n: int) -> np.ndarray:
    """``obj`` of ``numpy.insert`` as NumPy indices (0-d for a single index given as a scalar)."""
    if isinstance(obj, slice):
        return np.arange(*obj.indices(n), dtype=np.intp)
    indices = to_numpy(obj.gather()) if isinstance(obj, DArray) else np.array(obj)
    if indices.dtype == np.bool_:
        if indices.ndim != 1:
            raise ValueError(message(numpy_name("insert"), "boolean array argument obj to insert must be one "
                                     "dimensional", indices.shape, "a 1-d mask"))
        return np.flatnonzero(indices)
    if indices.ndim > 1:
        raise ValueError(message(numpy_name("insert"), "index array argument obj to insert must be one dimensional or "
                                 "scalar", indices.shape, "a scalar or a 1-d index list"))
    if indices.size == 0 and not isinstance(obj, np.ndarray):
        return indices.astype(np.intp)
    if indices.dtype.kind not in "iu":
        what = "indices must be integers" if indices.size == 1 else \
            "arrays used as indices must be of integer (or boolean) type"
        raise (TypeError if indices.size == 1 else IndexError)(message(numpy_name("insert"), what, indices.dtype,
                                                                       "integers"))
    return indices


@numpy_function(np.insert)
def insert(arr, obj, values, axis=None) -> DArray:
    """``values`` inserted before the indices ``obj`` along ``axis`` (``numpy.insert``; flattened if None).

    ``obj``: an int (``values`` is one block, broadcast as NumPy does), a
    slice, a list of ints or a boolean mask; with several indices the values
    go in ``obj``'s order (equal indices keep it). ``values`` is cast to
    ``arr``'s dtype. Indices outside ``[-N, N]`` raise ``IndexError``.

    Examples
    --------
    >>> import darray as da
    >>> insert(da.asarray([[1, 1], [2, 2]]), 1, [5, 6], axis=1).gather().tolist()
    [[1, 5, 1], [2, 6, 2]]
    >>> insert(da.arange(4), [1, 1, 3], [7, 8, 9]).gather().tolist()
    [0, 7, 8, 1, 2, 9, 3]
    """
    x, axis = _along("insert", arr, axis, values, obj)
    n = x.shape[axis]
    indices = _insert_indices(obj, n)
    bad = indices[(indices < -n) | (indices > n)].reshape(-1)
    if bad.size:
        raise _out_of_bounds("insert", int(bad[0]), axis, n, n + 1)
    lead = (slice(None),) * axis
    if indices.size == 1:
        index = int(indices.reshape(-1)[0])
        index = index + n if index < 0 else index
        if isinstance(values, DArray):
            v = _ndmin(astype(values, x.dtype, copy=False), x.ndim)
        else:
            v = _cast("insert", values, x.dtype, ndmin=x.ndim)
        if indices.ndim == 0:  # as NumPy: x[:, i:i+1] = v, values' first axis moved to `axis`
            v = moveaxis(v, 0, axis) if isinstance(v, DArray) else np.moveaxis(v, 0, axis)
        shape = tuple(v.shape[axis] if a == axis else m for a, m in enumerate(x.shape))
        slab = _slab("insert", v, x, shape)
        return _join("insert", [x[lead + (slice(None, index),)], slab, x[lead + (slice(index, None),)]], axis)
    positions = np.where(indices < 0, indices + n, indices).astype(np.int64)
    numnew = positions.size
    shape = tuple(numnew if a == axis else m for a, m in enumerate(x.shape))
    slab = _slab("insert", values, x, shape)  # checks that values broadcast, even to nothing
    if numnew == 0:
        return astype(x, x.dtype, copy=True)
    order = np.argsort(positions, kind="stable")
    positions[order] += np.arange(numnew)  # where each value lands, in values' order
    landing = positions[order]  # increasing
    joined = _join("insert", [x, slab], axis)

    def source(lo: int, hi: int) -> np.ndarray:
        p = np.arange(lo, hi, dtype=np.int64)
        before = np.searchsorted(landing, p)  # values landing before p
        at = np.minimum(before, numnew - 1)
        return np.where(landing[at] == p, n + order[at], p - before)

    return _take_positions(joined, axis, n + numnew, source)


# ---------------------------------------------------------------- resize, flips, axes, splits
@numpy_function(np.resize)
def resize(a, new_shape) -> DArray:
    """``a`` flattened, repeated as often as needed and cut to ``new_shape`` (``numpy.resize``).

    An empty ``a`` or result gives zeros. The flat array is joined with its
    own prefix (doubling), ``log2(new size / size)`` placements, then reshaped.

    Examples
    --------
    >>> import darray as da
    >>> resize(da.asarray([[1, 2], [3, 4]]), (3, 3)).gather().tolist()
    [[1, 2, 3], [4, 1, 2], [3, 4, 1]]
    """
    x = darray_of("resize", a)
    shape = (new_shape,) if isinstance(new_shape, (numbers.Integral, np.integer)) else tuple(new_shape)
    shape = tuple(integer("resize", "each element of new_shape", n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(message(numpy_name("resize"), "all elements of `new_shape` must be non-negative", shape))
    size = prod(shape)
    if x.size == 0 or size == 0:
        return zeros(shape, dtype=x.dtype, device=x.device, comm=x.comm)
    out = _flat(x)
    while out.size < size:
        out = _join("resize", [out, out[:min(out.size, size - out.size)]], 0)
    out = reshape(out[:size] if out.size > size else out, shape)
    return astype(out, out.dtype, copy=True) if out is x else out


def _directional(name: str, min_ndim: int, what: str, example: str, result: str, run: Callable) -> Callable:
    """``numpy.<name>`` for DArrays from one row of a table (the flips and splits by direction)."""
    signature = inspect.signature(getattr(np, name))  # (m) or (ary, indices_or_sections)

    def function(*args, **kwargs):
        first, *rest = signature.bind(*args, **kwargs).arguments.values()
        x = darray_of(name, first)
        if x.ndim < min_ndim:
            raise ValueError(message(numpy_name(name), f"Input must be >= {min_ndim}-d.", x.shape,
                                     f"an array of {min_ndim} or more dimensions"))
        return run(x, *rest)

    function.__name__ = function.__qualname__ = name
    function.__signature__ = signature
    function.__doc__ = (f"{what} (``numpy.{name}``); at least {min_ndim}-d input.\n\n    Examples\n    --------\n"
                        f"    >>> import darray as da\n    >>> {example}\n    {result}\n    ")
    return implements(getattr(np, name))(names_errors(numpy_name(name))(function))


def _split_by(name: str, axis_of: Callable[[int], int]) -> Callable:
    return lambda x, indices_or_sections: split_along(name, x, indices_or_sections, axis_of(x.ndim), equal=True)


fliplr = _directional("fliplr", 2, "``m`` with its columns (axis 1) reversed; blocks swap with their mirrors",
                      "fliplr(da.asarray([[1, 2, 3], [4, 5, 6]])).gather().tolist()", "[[3, 2, 1], [6, 5, 4]]",
                      lambda x: x[:, ::-1])
flipud = _directional("flipud", 1, "``m`` with its rows (axis 0) reversed; blocks swap with their mirrors",
                      "flipud(da.arange(4)).gather().tolist()", "[3, 2, 1, 0]", lambda x: x[::-1])
hsplit = _directional("hsplit", 1, "Split along axis 1 (axis 0 for 1-d arrays) into slices, no message",
                      "[p.shape for p in hsplit(da.ones((2, 6)), 3)]", "[(2, 2), (2, 2), (2, 2)]",
                      _split_by("hsplit", lambda nd: 1 if nd > 1 else 0))
vsplit = _directional("vsplit", 2, "Split along axis 0 into slices, no message",
                      "[p.shape for p in vsplit(da.ones((4, 2)), [1])]", "[(1, 2), (3, 2)]",
                      _split_by("vsplit", lambda nd: 0))
dsplit = _directional("dsplit", 3, "Split along axis 2 into slices, no message",
                      "[p.shape for p in dsplit(da.ones((1, 2, 4)), 2)]", "[(1, 2, 2), (1, 2, 2)]",
                      _split_by("dsplit", lambda nd: 2))


@numpy_function(np.rollaxis)
def rollaxis(a, axis: int, start: int = 0) -> DArray:
    """``a`` with ``axis`` rolled back until it lies before ``start`` (``numpy.rollaxis``); no message.

    Examples
    --------
    >>> import darray as da
    >>> rollaxis(da.ones((3, 4, 5, 6)), 3, 1).shape
    (3, 6, 4, 5)
    """
    x = darray_of("rollaxis", a)
    n = x.ndim
    axis = axis_of("rollaxis", axis, n)
    given = integer("rollaxis", "start", start)
    start = given + n if given < 0 else given
    if not 0 <= start < n + 1:
        raise AxisError(message(numpy_name("rollaxis"), f"'start' arg requires {-n} <= start < {n + 1}", given))
    if axis < start:
        start -= 1
    if axis == start:
        return x[...]
    axes = [d for d in range(n) if d != axis]
    axes.insert(start, axis)
    return permute_dims(x, tuple(axes))


if "row_stack" in __all__:
    @names_errors("numpy.row_stack")
    def row_stack(tup, *, dtype=None, casting: str = "same_kind") -> DArray:
        """``numpy.row_stack``, NumPy's deprecated alias of :func:`darray.vstack` (warns as NumPy does).

        Examples
        --------
        >>> import warnings, darray as da
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", DeprecationWarning)
        ...     row_stack([da.arange(2), da.arange(2)]).shape
        (2, 2)
        """
        warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.", DeprecationWarning,
                      stacklevel=2)
        return vstack(tup, dtype=dtype, casting=casting)


# ---------------------------------------------------------------- block
def _where(index: list) -> str:
    return "arrays" + "".join(f"[{i}]" for i in index if i is not None)


def _depths(arrays, index: list) -> tuple[list, int]:
    """NumPy's depth check of ``block``: (index of a bottom element, the largest leaf ndim)."""
    if isinstance(arrays, tuple):
        raise TypeError(message(numpy_name("block"), f"{_where(index)} is a tuple. Only lists can be used to arrange "
                                "blocks, and np.block does not allow implicit conversion from tuple to ndarray."))
    if isinstance(arrays, list) and arrays:
        first, most = _depths(arrays[0], index + [0])
        for i, item in enumerate(arrays[1:], 1):
            where, nd = _depths(item, index + [i])
            most = max(most, nd)
            if len(where) != len(first):
                raise ValueError(message(numpy_name("block"), "List depths are mismatched. First element was at depth "
                                         f"{len(first)}, but there is an element at depth {len(where)} "
                                         f"({_where(where)})"))
            if where[-1] is None:
                first = where
        return first, most
    if isinstance(arrays, list):
        return index + [None], 0
    return index, arrays.ndim if isinstance(arrays, DArray) else np.ndim(arrays)


def _arrange(arrays, depth: int, depths: int, ndim: int, like: DArray | None):
    """(shape, [(leaf, offset)]) of the nested ``arrays`` at ``depth``; lists join along ``ndim - depths + depth``."""
    if depth == depths:
        leaf = _ndmin(darray_of("block", arrays, like), ndim)
        return leaf.shape, [(leaf, (0,) * ndim)]
    parts = [_arrange(a, depth + 1, depths, ndim, like) for a in arrays]
    axis = ndim - depths + depth
    first = parts[0][0]
    if any(s[:axis] != first[:axis] or s[axis + 1:] != first[axis + 1:] for s, _ in parts):
        raise ValueError(message(numpy_name("block"), f"Mismatched array shapes in block along axis {axis}.",
                                 tuple(s for s, _ in parts), f"equal lengths except along axis {axis}"))
    placed, start = [], 0
    for shape, leaves in parts:
        placed += [(leaf, tuple(o + start if d == axis else o for d, o in enumerate(off))) for leaf, off in leaves]
        start += shape[axis]
    return first[:axis] + (start,) + first[axis + 1:], placed


@numpy_function(np.block)
def block(arrays) -> DArray:
    """An array assembled from nested lists of blocks (``numpy.block``).

    The innermost lists join along the last axis, the next ones along the
    second-last, ...; leaves get leading length-1 axes up to the result's
    dimensions. Every leaf is placed once into the result, cut like the
    largest DArray leaf (array-likes are replicated next to it).

    Examples
    --------
    >>> import darray as da
    >>> block([[da.eye(2), da.zeros((2, 1))], [da.ones((1, 2)), 5.0]]).gather().tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 5.0]]
    """
    bottom, leaf_ndim = _depths(arrays, [])
    if bottom and bottom[-1] is None:
        raise ValueError(message(numpy_name("block"), f"List at {_where(bottom)} cannot be empty"))
    depths = len(bottom)
    ndim = max(leaf_ndim, depths)
    like = first_darray(arrays)
    shape, pieces = _arrange(arrays, 0, depths, ndim, like)
    if depths == 0:
        return astype(pieces[0][0], pieces[0][0].dtype, copy=True)
    ours = [leaf for leaf, _ in pieces if leaf.layout.split != (None,) * len(leaf.layout.split)] or \
        [leaf for leaf, _ in pieces]
    dtype = np.result_type(*(leaf.dtype for leaf, _ in pieces))
    return _assemble(shape, dtype, max(ours, key=lambda leaf: leaf.size), pieces)


# ---------------------------------------------------------------- trim_zeros, ediff1d, array_equiv
@numpy_function(np.trim_zeros)
def trim_zeros(filt, trim: str = "fb", axis=None) -> DArray:
    """``filt`` without its leading (``'f'``) and/or trailing (``'b'``) zeros (``numpy.trim_zeros``).

    On every axis of ``axis`` (all by default) the result is the bounding box
    of the nonzero cells: each rank finds its own box, one allreduce of
    ``2 * ndim`` integers combines them, then ``filt`` is sliced.

    Examples
    --------
    >>> import darray as da
    >>> trim_zeros(da.asarray([0, 0, 1, 2, 0])).gather().tolist()
    [1, 2]
    >>> trim_zeros(da.asarray([[0, 0, 0], [0, 3, 0]]), axis=1).gather().tolist()
    [[0], [3]]
    """
    if not isinstance(trim, str):
        raise TypeError(message(numpy_name("trim_zeros"), "trim must be a string", trim, "'f', 'b' or 'fb'"))
    x = darray_of("trim_zeros", filt)
    trim = trim.lower()
    if trim not in ("fb", "bf", "f", "b"):
        raise ValueError(message(numpy_name("trim_zeros"), f"unexpected character(s) in `trim`: {trim!r}", trim,
                                 "'f', 'b' or 'fb'"))
    axes = tuple(range(x.ndim)) if axis is None else normalize_axis_tuple(axis, x.ndim, argname="axis")
    if not axes:
        return x
    start, stop = _nonzero_box(x)
    if stop[0] < 0:  # all zeros: empty along the trimmed axes, whatever `trim` says (as NumPy)
        key = tuple(slice(0, 0) if d in axes else slice(None) for d in range(x.ndim))
    else:
        key = tuple(slice(int(start[d]) if "f" in trim else None, int(stop[d]) if "b" in trim else None)
                    if d in axes else slice(None) for d in range(x.ndim))
    return x[key]


def _nonzero_box(x: DArray) -> tuple[np.ndarray, np.ndarray]:
    """Per axis, the first nonzero position and one past the last (stop ``-1`` everywhere if none)."""
    xp = x._xp
    local = x.local
    nonzero = local if x.dtype == np.bool_ else local != 0
    origin = x.layout.block_start(x.comm.rank)
    box = np.empty(2 * x.ndim, dtype=np.int64)
    big = np.iinfo(np.int64).max
    for d in range(x.ndim):
        others = tuple(a for a in range(x.ndim) if a != d)
        hit = np.flatnonzero(to_numpy(xp.any(nonzero, axis=others) if others else nonzero))
        box[d], box[x.ndim + d] = (origin[d] + hit[0], -(origin[d] + hit[-1] + 1)) if hit.size else (big, 1)
    box = np.asarray(to_numpy(x.comm.allreduce(box, "min")))
    return box[:x.ndim], -box[x.ndim:]


def _edge_values(which: str, values, x: DArray) -> DArray | None:
    if values is None:
        return None
    dtype = values.dtype if isinstance(values, DArray) else np.asanyarray(values).dtype
    if not np.can_cast(dtype, x.dtype, casting="same_kind"):
        raise TypeError(message(numpy_name("ediff1d"), f"dtype of `{which}` must be compatible with input `ary` under "
                                "the `same_kind` rule.", dtype, f"a dtype that casts to {x.dtype}"))
    return astype(_flat(darray_of("ediff1d", values, x)), x.dtype, copy=False)


@numpy_function(np.ediff1d)
def ediff1d(ary, to_end=None, to_begin=None) -> DArray:
    """Differences of consecutive elements of the flattened ``ary`` (``numpy.ediff1d``), in ``ary``'s dtype.

    ``to_begin`` / ``to_end`` (cast to ``ary``'s dtype under ``same_kind``)
    are prepended / appended. Only the cells at block edges move.

    Examples
    --------
    >>> import darray as da
    >>> ediff1d(da.asarray([1, 2, 4, 7]), to_begin=-99, to_end=[88, 99]).gather().tolist()
    [-99, 1, 2, 3, 88, 99]
    """
    x = _flat(darray_of("ediff1d", ary, first_darray(to_end, to_begin)))
    if x.dtype == np.bool_:
        raise TypeError(message(numpy_name("ediff1d"), "numpy boolean subtract, the `-` operator, is not supported, "
                                "use the bitwise_xor, the `^` operator, or the logical_xor function instead.", x.dtype,
                                "a numeric array"))
    begin, end = _edge_values("to_begin", to_begin, x), _edge_values("to_end", to_end, x)
    diff = x[1:] - x[:-1]  # one dtype on both sides: the result keeps it
    if begin is None and end is None:
        return diff
    return _join("ediff1d", [p for p in (begin, diff, end) if p is not None], 0)


@implements(np.array_equiv)
def array_equiv(a1, a2) -> bool:
    """Whether ``a1`` and ``a2`` have broadcastable shapes and equal elements (``numpy.array_equiv``).

    An elementwise comparison and one ``all`` reduction; the same Python bool on every rank.

    Examples
    --------
    >>> import darray as da
    >>> array_equiv(da.asarray([1, 2]), [[1, 2], [1, 2]]), array_equiv(da.asarray([1, 2]), [1, 3])
    (True, False)
    """
    like = first_darray(a1, a2)
    try:
        x, y = darray_of("array_equiv", a1, like), darray_of("array_equiv", a2, like)
        np.broadcast_shapes(x.shape, y.shape)
    except (TypeError, ValueError):
        return False
    common = np.result_type(x.dtype, y.dtype)
    return bool(_all(astype(x, common, copy=False) == astype(y, common, copy=False)))


# ---------------------------------------------------------------- r_ and c_
class AxisConcatenator:
    """NumPy's index-trick concatenator (``numpy.r_``, ``numpy.c_``) building DArrays.

    Items: DArrays and array-likes (made at least ``ndmin``-d), scalars, and
    slices (``start:stop:step`` is :func:`darray.arange`, a complex step
    ``start:stop:nj`` is :func:`darray.linspace` with ``n`` points). A first
    string item is a directive as in NumPy: ``'axis'``, ``'axis,ndmin'``,
    ``'axis,ndmin,trans1d'``; ``'r'``/``'c'`` give the 2-d row/column shape
    NumPy's matrix would have (a DArray, not a ``numpy.matrix``). The pieces
    are placed once into the result, cut like the largest piece. darray's
    ``r_`` joins along axis 0, ``c_`` makes 1-d items columns (axis -1).

    Examples
    --------
    >>> import darray as da
    >>> da.r_[1:4, 0, da.asarray([7, 8])].gather().tolist()
    [1, 2, 3, 0, 7, 8]
    >>> da.r_["0,2", [1, 2], [3, 4]].gather().tolist()
    [[1, 2], [3, 4]]
    >>> da.c_[da.asarray([1, 2, 3]), [4, 5, 6]].gather().tolist()
    [[1, 4], [2, 5], [3, 6]]
    """

    __slots__ = ("axis", "matrix", "ndmin", "trans1d", "_func")

    def __init__(self, axis: int = 0, matrix: bool = False, ndmin: int = 1, trans1d: int = -1,
                 func: str = "r_") -> None:
        self.axis, self.matrix, self.ndmin, self.trans1d, self._func = axis, matrix, ndmin, trans1d, func

    def __getitem__(self, key) -> DArray:
        func = self._func
        if isinstance(key, str):
            raise TypeError(message(numpy_name(func), "matrix-building strings (numpy.bmat) are not supported", key,
                                    "items to concatenate, or darray.block for a block matrix"))
        key = key if isinstance(key, tuple) else (key,)
        like = first_darray(*key)
        comm, device = (like.comm, like.device) if like is not None else (None, None)
        axis, ndmin, trans1d, matrix, column = self.axis, self.ndmin, self.trans1d, self.matrix, False
        items, kinds = [], []
        for k, item in enumerate(key):
            if isinstance(item, str):
                if k != 0:
                    raise ValueError(message(numpy_name(func), "special directives must be the first entry.", item))
                if item in ("r", "c"):
                    matrix, column = True, item == "c"
                    continue
                axis, ndmin, trans1d = _directive(func, item, ndmin, trans1d)
                continue
            if isinstance(item, slice):
                obj = _range(item, comm, device)
                if ndmin > 1:
                    obj = _ndmin(obj, ndmin)
                    if trans1d != -1:  # NumPy's swapaxes(-1, trans1d)
                        order = list(range(ndmin))
                        order[-1], order[trans1d] = order[trans1d], order[-1]
                        obj = permute_dims(obj, tuple(order))
                kinds.append(obj.dtype)
            elif type(item) in np.ScalarType:
                obj = item
                kinds.append(item)
            else:
                item_ndim = item.ndim if isinstance(item, DArray) else np.ndim(item)
                obj = _ndmin(darray_of(func, item, like), ndmin)
                if trans1d != -1 and item_ndim < ndmin:
                    k2, k1 = ndmin - item_ndim, trans1d
                    k1 = k1 + k2 + 1 if k1 < 0 else k1
                    order = list(range(ndmin))
                    obj = permute_dims(obj, tuple(order[:k1] + order[k2:] + order[k1:k2]))
                kinds.append(obj.dtype)
            items.append(obj)
        if not items:
            raise ValueError(message(numpy_name(func), "need at least one array to concatenate", key,
                                     "one or more items"))
        dtype = np.result_type(*kinds)
        base = like if like is not None else next((i for i in items if isinstance(i, DArray)), None)
        pieces = [_ndmin(astype(i, dtype) if i.dtype != dtype else i, ndmin) if isinstance(i, DArray) else
                  asarray(np.array(i, dtype=dtype, ndmin=ndmin), split=None, device=device,
                          comm=base.comm if base is not None else comm) for i in items]
        out = _join(func, pieces, axis)
        if matrix:
            if out.ndim > 2:
                raise ValueError(message(numpy_name(func), "matrix must be 2-dimensional", out.shape,
                                         "a 1-d or 2-d result"))
            if out.ndim == 1:
                out = reshape(out, (1, -1))
                out = permute_dims(out, (1, 0)) if column else out
        return out

    def __len__(self) -> int:
        return 0


def _directive(func: str, item: str, ndmin: int, trans1d: int) -> tuple[int, int, int]:
    if "," in item:
        parts = item.split(",")
        try:
            axis, ndmin = (int(p) for p in parts[:2])
            if len(parts) == 3:
                trans1d = int(parts[2])
        except Exception as exc:  # NumPy's ValueError for any malformed directive
            raise ValueError(message(numpy_name(func), f"unknown special directive {item!r}", item,
                                     "'axis', 'axis,ndmin' or 'axis,ndmin,trans1d'")) from exc
        return axis, ndmin, trans1d
    try:
        return int(item), ndmin, trans1d
    except (ValueError, TypeError) as exc:
        raise ValueError(message(numpy_name(func), "unknown special directive", item, "'r', 'c' or integers")) from exc


def _range(item: slice, comm, device) -> DArray:
    start = 0 if item.start is None else item.start
    step = 1 if item.step is None else item.step
    if isinstance(step, (complex, np.complexfloating)):
        return linspace(start, item.stop, num=int(abs(step)), comm=comm, device=device)
    return arange(start, item.stop, step, comm=comm, device=device)


#: ``numpy.r_`` for DArrays: items joined along the first axis.
r_ = AxisConcatenator(0, func="r_")
#: ``numpy.c_`` for DArrays: 1-d items become columns, joined along the last axis.
c_ = AxisConcatenator(-1, ndmin=2, trans1d=0, func="c_")
