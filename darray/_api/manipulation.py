"""Manipulation functions (Array API chapter "Manipulation Functions"), distributed.

What moves, per function:

- ``permute_dims``, ``moveaxis``, ``expand_dims``, ``squeeze`` of unsplit
  axes, ``broadcast_to``, ``repeat``: nothing (each rank reshapes its block).
- ``flip`` of a cut axis: each block swaps with its mirror block.
- ``concat``/``stack``/``tile``, ``roll`` of a cut axis: only the cells whose
  owner changes (placement plans, one message per pair of intersecting blocks).
- ``reshape``: nothing when the blocks are contiguous C-order ranges that
  stay whole rows of the new shape; otherwise at most two redistributions
  through a flat 1-d layout. Never a gather.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._backend import to_numpy
from .._core import DArray, to_backend_dtype
from .._core.elementwise import _expand, align_target, local_operand
from .._core.indexing import getitem
from .._core.manipulation import balanced_like, permute_dims, place
from .._core.reshape import reshape as _reshape
from .._core.views import read_only
from .._errors import message
from .._layout import Layout, normalize_axis

__all__ = ["broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis", "permute_dims",
           "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack"]


def _check(func, x):
    if not isinstance(x, DArray):
        raise TypeError(message(func, "expected a DArray", type(x).__name__))


def _axes(func, axis, ndim) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = tuple(normalize_axis(func, a, ndim) for a in items)
    if len(set(out)) != len(out):
        raise ValueError(message(func, "repeated axis", tuple(items), "distinct axes"))
    return out


def expand_dims(x, /, axis: int | tuple[int, ...] = 0) -> DArray:
    """Insert a length-1 axis at ``axis`` (no communication).

    The Array API 2024.12 signature ``expand_dims(x, /, axis)`` (``axis`` may be
    passed by position or by name; an int in ``[-N-1, N]``); as NumPy, a tuple
    inserts several axes, each position counted in the result.

    Examples
    --------
    >>> import darray as da
    >>> x = da.zeros((3, 4))
    >>> da.expand_dims(x, 1).shape, da.expand_dims(x, axis=-1).shape, da.expand_dims(x, (0, 3)).shape
    ((3, 1, 4), (3, 4, 1), (1, 3, 4, 1))
    """
    _check("expand_dims", x)
    items = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    new = {normalize_axis("expand_dims", a, x.ndim + len(items)) for a in items}
    if len(new) != len(items):
        raise ValueError(message("expand_dims", "repeated axis", axis, "distinct axes"))
    return getitem(x, tuple(None if a in new else slice(None) for a in range(x.ndim + len(items))))


def squeeze(x, /, axis) -> DArray:
    """Remove length-1 axes (a cut length-1 axis is broadcast from the rank that holds it)."""
    _check("squeeze", x)
    axes = _axes("squeeze", axis, x.ndim)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(message("squeeze", f"cannot remove axis {a} of length {x.shape[a]}", x.shape,
                                     "length-1 axes"))
    return getitem(x, tuple(0 if a in axes else slice(None) for a in range(x.ndim)))


def flip(x, /, *, axis=None) -> DArray:
    """Reverse the order of elements along ``axis`` (all axes by default)."""
    _check("flip", x)
    axes = _axes("flip", axis, x.ndim)
    return getitem(x, tuple(slice(None, None, -1) if a in axes else slice(None) for a in range(x.ndim)))


def moveaxis(x, source, destination, /) -> DArray:
    """Move axes to new positions (no communication)."""
    _check("moveaxis", x)
    src = _axes("moveaxis", source, x.ndim)
    dst = _axes("moveaxis", destination, x.ndim)
    if len(src) != len(dst):
        raise ValueError(message("moveaxis", "source and destination need the same number of axes",
                                 (source, destination)))
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute_dims(x, tuple(order))


def broadcast_to(x, /, shape) -> DArray:
    """``x`` broadcast to ``shape``; a rank's block is a broadcast view of its part of ``x``."""
    _check("broadcast_to", x)
    shape = tuple(int(n) for n in shape)
    try:
        ok = np.broadcast_shapes(x.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(message("broadcast_to", "cannot broadcast", x.shape, f"a shape broadcastable to {shape}"))
    layout = _expand(x._layout, shape)
    local = local_operand("broadcast_to", x, layout, x)
    out = DArray._wrap(x._xp.broadcast_to(local, layout.block_shape(x._comm.rank)), layout, x._comm, x._xp)
    return read_only(out, "broadcast_to")  # (NumPy's is a read-only view)


def broadcast_shapes(*shapes) -> tuple[int, ...]:
    """The shape that ``shapes`` broadcast to (Array API 2025.12; metadata only).

    >>> broadcast_shapes((3, 1), (4,))
    (3, 4)
    """
    try:
        return tuple(int(n) for n in np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(message("broadcast_shapes", "shapes cannot be broadcast together", shapes)) from None


def broadcast_arrays(*arrays) -> list[DArray]:
    """Broadcast DArrays against each other, all in one layout."""
    for a in arrays:
        _check("broadcast_arrays", a)
    if not arrays:
        return []
    target, layout = align_target("broadcast_arrays", arrays)
    layout = layout.without_halo()
    rank = target._comm.rank
    return [DArray._wrap(a._xp.broadcast_to(local_operand("broadcast_arrays", a, layout, target),
                                            layout.block_shape(rank)), layout, a._comm, a._xp) for a in arrays]


def concat(arrays, /, *, axis: int | None = 0) -> DArray:
    """Join arrays along an existing axis; the result is cut like the first array (balanced)."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError(message("concat", "needs at least one array", 0))
    for a in arrays:
        _check("concat", a)
    if axis is None:
        arrays = [reshape(a, (-1,)) for a in arrays]
        axis = 0
    first = arrays[0]
    axis = normalize_axis("concat", axis, first.ndim)
    for a in arrays[1:]:
        if a.ndim != first.ndim or any(n != m for i, (n, m) in enumerate(zip(a.shape, first.shape)) if i != axis):
            raise ValueError(message("concat", "shapes differ off the concatenation axis",
                                     tuple(b.shape for b in arrays), f"equal lengths except along axis {axis}"))
    dtype = np.result_type(*[a.dtype for a in arrays])
    shape = list(first.shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    layout = balanced_like(first._layout, shape, first._comm.size)
    xp = first._xp
    out = DArray._wrap(xp.empty(layout.block_shape(first._comm.rank), dtype=_backend_dtype(xp, dtype),
                                device=first.device), layout, first._comm, xp)
    start = 0
    for a in arrays:
        a = a if a.dtype == dtype else a.astype(dtype)
        region = tuple((0, n) for n in a.shape)
        place(a, out, region, tuple(start if i == axis else 0 for i in range(a.ndim)))
        start += a.shape[axis]
    return out


def _backend_dtype(xp, dtype):
    return to_backend_dtype(xp, dtype)


def stack(arrays, /, *, axis: int = 0) -> DArray:
    """Join arrays of one shape along a new axis."""
    arrays = list(arrays)
    if not arrays:
        raise ValueError(message("stack", "needs at least one array", 0))
    for a in arrays:
        _check("stack", a)
    if len({a.shape for a in arrays}) != 1:
        raise ValueError(message("stack", "arrays must have one shape", tuple(a.shape for a in arrays)))
    axis = normalize_axis("stack", axis, arrays[0].ndim + 1)
    return concat([expand_dims(a, axis=axis) for a in arrays], axis=axis)


def unstack(x, /, *, axis: int = 0) -> tuple[DArray, ...]:
    """Split along ``axis`` into a tuple of arrays with that axis removed."""
    _check("unstack", x)
    axis = normalize_axis("unstack", axis, x.ndim)
    return tuple(getitem(x, (slice(None),) * axis + (i,)) for i in range(x.shape[axis]))


def roll(x, /, shift, *, axis=None) -> DArray:
    """Shift elements cyclically; along a cut axis only the cells that change owner move."""
    _check("roll", x)
    if axis is None:
        flat = reshape(x, (-1,))
        return reshape(roll(flat, shift, axis=0), x.shape)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,) * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(message("roll", "shift and axis need the same length", (shift, axis)))
    total: dict[int, int] = {}
    for s, a in zip(shifts, axes):
        if not isinstance(s, numbers.Integral):
            raise TypeError(message("roll", "shift must be an integer", s))
        a = normalize_axis("roll", a, x.ndim)
        total[a] = total.get(a, 0) + int(s)
    out = x
    for a, s in total.items():
        out = _roll_axis(out, s, a)
    return out


def _roll_axis(x: DArray, shift: int, axis: int) -> DArray:
    n = x.shape[axis]
    if n == 0:
        return x
    shift %= n
    layout = x._layout.without_halo()
    if layout.axis_dim[axis] is None or shift == 0:
        return DArray._wrap(x._xp.roll(x.local, shift, axis=axis), layout, x._comm, x._xp)
    xp = x._xp
    out = DArray._wrap(xp.empty(layout.block_shape(x._comm.rank), dtype=x._block.dtype, device=x.device),
                       layout, x._comm, xp)
    full = [(0, m) for m in x.shape]
    head, tail = list(full), list(full)
    head[axis], tail[axis] = (0, n - shift), (n - shift, n)
    zero = [0] * x.ndim
    fwd, back = list(zero), list(zero)
    fwd[axis], back[axis] = shift, -(n - shift)
    place(x, out, tuple(head), tuple(fwd))
    place(x, out, tuple(tail), tuple(back))
    return out


def repeat(x, repeats, /, *, axis: int | None = None) -> DArray:
    """Repeat each element ``repeats`` times; blocks grow in place (no communication)."""
    _check("repeat", x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = normalize_axis("repeat", axis, x.ndim)
    layout = x._layout
    xp = x._xp
    rank = x._comm.rank
    cells = layout.block_slices(rank)[axis]
    if isinstance(repeats, numbers.Integral):
        if repeats < 0:
            raise ValueError(message("repeat", "repeats must be non-negative", repeats))
        counts = [s * int(repeats) for s in layout.sizes[axis]]
        local = xp.repeat(x.local, int(repeats), axis=axis)
    else:
        reps = to_numpy(repeats.gather() if isinstance(repeats, DArray) else repeats)  # (CuPy: a device copy)
        if reps.size == 0 and reps.dtype.kind == "f":  # [] is float64 to NumPy, and fine as counts
            reps = reps.astype(np.int64)
        if reps.ndim == 0 and reps.dtype.kind in "iu":  # a 0-d array, as NumPy takes it
            return repeat(x, int(reps), axis=axis)
        if reps.ndim != 1 or reps.shape[0] not in (1, x.shape[axis]) or reps.dtype.kind not in "iu":
            raise ValueError(message("repeat", "repeats must be an int or a 1-d integer array of the axis length",
                                     reps.shape, f"({x.shape[axis]},)"))
        if np.any(reps < 0):
            raise ValueError(message("repeat", "repeats must be non-negative", "negative counts"))
        if reps.shape[0] == 1:
            return repeat(x, int(reps[0]), axis=axis)
        offs = layout.offsets[axis]
        counts = [int(reps[offs[i]:offs[i + 1]].sum()) for i in range(len(offs) - 1)]
        local = xp.repeat(x.local, xp.asarray(reps[cells], device=x.device), axis=axis)
    shape = list(x.shape)
    shape[axis] = sum(counts)
    sizes = list(layout.sizes)
    sizes[axis] = tuple(counts) if layout.axis_dim[axis] is not None else (shape[axis],)
    new = Layout(tuple(shape), layout.dims, layout.split, tuple(sizes))
    return DArray._wrap(local, new, x._comm, xp)


def tile(x, repetitions, /) -> DArray:
    """Repeat the whole array along each axis (``numpy.tile``)."""
    _check("tile", x)
    if isinstance(repetitions, (str, bytes)) or not all(isinstance(r, numbers.Integral) for r in repetitions):
        raise TypeError(message("tile", "repetitions must be a tuple of ints", repetitions))
    reps = tuple(int(r) for r in repetitions)
    if any(r < 0 for r in reps):
        raise ValueError(message("tile", "repetitions must be non-negative", reps))
    while x.ndim < len(reps):
        x = expand_dims(x, axis=0)
    reps = (1,) * (x.ndim - len(reps)) + reps
    for axis, r in enumerate(reps):
        if r != 1:
            x = concat([x] * r, axis=axis) if r else getitem(x, (slice(None),) * axis + (slice(0, 0),))
    return x


def reshape(x, /, shape, *, copy: bool | None = None) -> DArray:
    """C-order reshape; local when every block is a run of whole rows of the new shape."""
    _check("reshape", x)
    return _reshape(x, shape, copy)
