"""Any NumPy index key taken apart: a basic key applied first, then a pure advanced part.

NumPy's rules (``numpy.org/doc/stable/user/basics.indexing.html``), which
:func:`split_key` encodes once for ``__getitem__`` and ``__setitem__``:

- integer arrays (lists, tuples, NumPy arrays, DArrays) and boolean arrays
  are advanced indices; when one is present, integers are advanced too. They
  broadcast together to one shape ``B``;
- a boolean array of ``d`` dims stands for the ``d`` integer arrays of its
  ``nonzero()``; a 0-d boolean adds a length-1 axis indexed by ``[0]`` (True)
  or ``[]`` (False);
- when the advanced indices sit next to each other in the key, ``B`` replaces
  them in place in the result; separated by a slice, ``None`` or ``...``,
  ``B`` comes first.

The basic key keeps slices, ``None`` and integers, and puts ``slice(None)`` on
every axis an array indexes (``None`` for a 0-d boolean), so that ``x[basic]``
is one cached basic-indexing plan and the advanced part indexes whole axes of
it. Validation is pure metadata (the same on every rank, before any message),
except what only data can tell: the bounds of DArray indices, the length of a
DArray mask's ``nonzero`` (:func:`resolve`, collective).
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from .._backend import NUMPY, to_numpy
from .._errors import message
from .._layout import Layout
from .array import DArray
from .sample_sort import sample_sort

__all__ = ["Advanced", "split_key", "resolve", "nonzero", "INVALID"]

#: NumPy's words for a key item of another type.
INVALID = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays "
           "are valid indices")


class Advanced(NamedTuple):
    """A key split into ``basic`` (applied first) and index arrays on whole axes of ``x[basic]``.

    ``axes``: the axes of ``x[basic]`` the arrays index, increasing; ``sources``:
    each one's axis of ``x`` (None for the new axis of a 0-d boolean);
    ``index``: each one's indices (NumPy int64, checked and wrapped, or an
    integer DArray; a DArray mask stays ``(mask, axis)`` until :func:`resolve`);
    ``ints``: ``(axis of x, index)`` of the integer items; ``bshape``: the
    broadcast shape of the arrays (None before :func:`resolve`); ``adjacent``:
    whether ``B`` takes the arrays' place in the result (else it goes first).
    """

    basic: tuple
    axes: tuple
    sources: tuple
    index: tuple
    ints: tuple
    bshape: tuple | None
    adjacent: bool
    leading_mask: bool


def _item(func: str, k):
    """One key item as None, Ellipsis, a slice, an int, or ``(kind, value)`` for kind array / mask / bool0."""
    if k is None or k is Ellipsis or isinstance(k, slice):
        return k
    if isinstance(k, (bool, np.bool_)):
        return ("bool0", bool(k))
    if isinstance(k, (numbers.Integral, np.integer)):
        return int(k)
    if isinstance(k, DArray) and k._layout.is_replicated and k.ndim:  # every rank holds it: checked here
        k = to_numpy(k.local)
    if isinstance(k, DArray):
        kind = k.dtype.kind
        if kind == "b":
            return ("bool0", bool(k)) if k.ndim == 0 else ("mask", k)
        if kind in "iu":
            return int(k) if k.ndim == 0 else ("array", k)
        raise IndexError(message(func, "arrays used as indices must be of integer (or boolean) type", k.dtype))
    if isinstance(k, (list, tuple, np.ndarray)) or hasattr(k, "__array_namespace__"):
        a = np.asarray(k) if isinstance(k, (list, tuple, np.ndarray)) else to_numpy(k)
        if a.dtype.kind == "b":
            return ("bool0", bool(a)) if a.ndim == 0 else ("mask", a)
        if a.dtype.kind in "iu":
            return int(a) if a.ndim == 0 else ("array", a.astype(np.int64))
        if a.size == 0 and not isinstance(k, np.ndarray):  # [] is an empty integer index, as in NumPy
            return ("array", a.astype(np.int64))
        raise IndexError(message(func, "arrays used as indices must be of integer (or boolean) type", a.dtype))
    raise IndexError(message(func, INVALID, k))


def _checked(func: str, idx: np.ndarray, axis: int, n: int) -> np.ndarray:
    """``idx`` bounds-checked against an axis of length ``n`` (NumPy's message) and wrapped."""
    if idx.size:
        bad = (idx < -n) | (idx >= n)
        if bad.any():
            raise IndexError(out_of_bounds(func, int(idx[bad][0]), axis, n))
    return np.where(idx < 0, idx + n, idx)


def out_of_bounds(func: str, i: int, axis: int, n: int) -> str:
    return message(func, f"index {i} is out of bounds for axis {axis} with size {n}", i, f"an index in [{-n}, {n})")


def _consumed(k) -> int:
    if k is None or k is Ellipsis:
        return 0
    if isinstance(k, tuple):
        return k[1].ndim if k[0] == "mask" else (0 if k[0] == "bool0" else 1)
    return 1


def split_key(func: str, key, shape: tuple[int, ...]) -> Advanced | tuple:
    """``key`` taken apart (metadata only: NumPy index arrays are checked here), or a basic key.

    Returns a plain tuple when the key holds no array after all (0-d integer
    arrays, NumPy integers): the basic key to use instead.

    Examples
    --------
    >>> import numpy as np
    >>> adv = split_key("__getitem__", ([0, 1], slice(None), [1, 2]), (5, 4, 3))
    >>> adv.basic, adv.axes, adv.bshape, adv.adjacent  # separated by a slice: B goes first
    ((slice(None, None, None), slice(None, None, None), slice(None, None, None)), (0, 2), (2,), False)
    >>> split_key("__getitem__", (np.array(2), 1), (5, 4))
    (2, 1)
    """
    items = [_item(func, k) for k in (key if isinstance(key, tuple) else (key,))]
    if sum(k is Ellipsis for k in items) > 1:
        raise IndexError(message(func, "an index can only have a single ellipsis ('...')", key))
    used = sum(_consumed(k) for k in items)
    if used > len(shape):
        raise IndexError(message(func, f"too many indices for array: array is {len(shape)}-dimensional, but {used} "
                                       "were indexed", key))
    basic, axes, sources, index, ints, positions = [], [], [], [], [], []
    x_axis = y_axis = 0
    for pos, k in enumerate(items):
        if k is Ellipsis:
            n = len(shape) - used
            basic += [slice(None)] * n
            x_axis, y_axis = x_axis + n, y_axis + n
        elif k is None or isinstance(k, slice):
            basic.append(k)
            x_axis, y_axis = x_axis + (k is not None), y_axis + 1
        elif isinstance(k, int):
            basic.append(k)
            n = shape[x_axis]
            if not -n <= k < n:
                raise IndexError(out_of_bounds(func, k, x_axis, n))
            ints.append((x_axis, k % n))
            positions.append(pos)
            x_axis += 1
        elif k[0] == "bool0":  # a new axis, indexed by [0] or []
            basic.append(None)
            axes.append(y_axis)
            sources.append(None)
            index.append(np.zeros(1 if k[1] else 0, dtype=np.int64))
            positions.append(pos)
            y_axis += 1
        elif k[0] == "array":
            a = k[1]
            basic.append(slice(None))
            axes.append(y_axis)
            sources.append(x_axis)
            index.append(a if isinstance(a, DArray) else _checked(func, a, x_axis, shape[x_axis]))
            positions.append(pos)
            x_axis, y_axis = x_axis + 1, y_axis + 1
        else:  # a mask of d dims: its nonzero() on d axes
            mask = k[1]
            d = mask.ndim
            if 0 in mask.shape:  # NumPy: an empty mask selects nothing, whatever its lengths (known everywhere)
                mask = np.zeros(mask.shape, dtype=bool)
            for i in range(d):
                if mask.shape[i] != shape[x_axis + i] and mask.size:
                    raise IndexError(message(
                        func, f"boolean index did not match indexed array along axis {x_axis + i}; size of axis is "
                              f"{shape[x_axis + i]} but size of corresponding boolean axis is {mask.shape[i]}",
                        mask.shape, f"the shape {shape[x_axis:x_axis + d]}"))
            found = np.nonzero(mask) if isinstance(mask, np.ndarray) else [(mask, i) for i in range(d)]
            basic += [slice(None)] * d
            axes += range(y_axis, y_axis + d)
            sources += range(x_axis, x_axis + d)
            index += [f.astype(np.int64) if isinstance(f, np.ndarray) else f for f in found]
            positions.append(pos)
            x_axis, y_axis = x_axis + d, y_axis + d
    if not axes:
        return tuple(basic)
    positions.sort()
    adjacent = positions[-1] - positions[0] + 1 == len(positions)
    leading = (len(items) > 0 and isinstance(items[0], tuple) and items[0][0] == "mask" and len(positions) == 1
               and tuple(items[0][1].shape) == tuple(shape[:items[0][1].ndim]))  # (an empty mask may differ)
    bshape = None if any(isinstance(i, tuple) for i in index) else _broadcast(func, index)
    return Advanced(tuple(basic), tuple(axes), tuple(sources), tuple(index), tuple(ints), bshape, adjacent, leading)


def _broadcast(func: str, index) -> tuple:
    shapes = [tuple(i.shape) for i in index]
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise IndexError(message(func, "shape mismatch: indexing arrays could not be broadcast together with shapes "
                                 + " ".join(str(s) for s in shapes), tuple(shapes))) from None


def resolve(func: str, adv: Advanced, x: DArray) -> Advanced:
    """DArray masks replaced by their (distributed) ``nonzero``, ``B`` computed. Collective if a mask is a DArray."""
    if adv.bshape is not None:
        return adv
    found: dict[int, tuple] = {}
    index = []
    for i in adv.index:
        if isinstance(i, tuple):
            mask, axis = i
            if id(mask) not in found:
                found[id(mask)] = nonzero(mask)
            i = found[id(mask)][axis]
        index.append(i)
    return adv._replace(index=tuple(index), bshape=_broadcast(func, index))


# ---------------------------------------------------------------- nonzero (the engine of darray.nonzero)
def _c_ordered(layout: Layout) -> bool:
    """Do the blocks, in rank order, list the elements in C order (each exactly once)?"""
    cut = [a for a in range(layout.ndim) if layout.axis_dim[a] is not None]
    return len(layout.dims) == 1 and cut in ([], [0])


def nonzero(x: DArray) -> tuple[DArray, ...]:
    """Indices of the non-zero elements of DArray ``x``, one 1-d int64 array per axis, in C order (collective).

    Each rank finds its nonzeros; only their flat indices move (a sample sort
    into C order, skipped when the blocks are already in C order).
    :func:`darray.nonzero` checks its argument and calls this.
    """
    if x.ndim == 0:
        raise ValueError(message("nonzero", "not defined for 0-d arrays", x.shape, "an array with ndim >= 1"))
    layout = x._layout
    comm = x._comm
    rank, nprocs = comm.rank, comm.size
    block = to_numpy(x.local)
    if layout.is_replicated:
        found = np.nonzero(block)
        out_layout = Layout((len(found[0]),), layout.dims, (None,) * len(layout.dims), ((len(found[0]),),))
        return tuple(DArray._wrap(_on_backend(x, f.astype(np.int64)), out_layout, comm, x._xp) for f in found)
    # a replicated grid dim holds copies: only coordinate 0 there contributes
    coords = layout.coords(rank)
    owner = all(c == 0 for g, c in enumerate(coords) if layout.split[g] is None)
    found = np.nonzero(block) if owner else tuple(np.zeros(0, dtype=np.intp) for _ in range(x.ndim))
    start = layout.block_start(rank)
    flat = np.ravel_multi_index(tuple(f + s for f, s in zip(found, start)), x.shape).astype(np.int64)
    counts = tuple(int(c) for c in to_numpy(comm.allgather(np.asarray([flat.shape[0]], dtype=np.int64)))[:, 0])
    if not _c_ordered(layout):
        flat, _, counts = sample_sort(comm, flat, sum(counts[:rank]), index=False)
    total = sum(counts)
    out_layout = Layout((total,), (nprocs,), (0,), (counts,))
    parts = np.unravel_index(flat, x.shape) if x.ndim > 1 else (flat,)
    return tuple(DArray._wrap(_on_backend(x, np.asarray(p, dtype=np.int64)), out_layout, comm, x._xp)
                 for p in parts)


def _on_backend(x: DArray, array: np.ndarray):
    return array if x._xp is NUMPY else x._xp.asarray(array, device=x.device)
