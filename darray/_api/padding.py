"""Constant padding without communication: the edge blocks grow, every other block stays as it is.

``numpy.pad(x, width, mode="constant")`` along a cut axis adds ``before``
cells to the first block along that axis and ``after`` cells to the last
one; the blocks keep their cells, so nothing moves between ranks (a
balanced result would shift every block boundary and move most of the
array). This is what xarray's ``rolling``, ``shift`` and ``pad`` call.
"""

from __future__ import annotations

import numpy as np

from .._core import DArray, to_backend_dtype
from .._core.elementwise import wrap_like
from .._errors import message
from .._layout import Layout

__all__ = ["pad_constant"]


def _widths(func: str, pad_width, ndim: int) -> np.ndarray:
    """NumPy's ``pad_width`` forms (``n``, ``(b, a)``, ``((b0, a0), ...)``) as an ``(ndim, 2)`` int array."""
    widths = np.asarray(pad_width)
    if widths.dtype.kind not in "iu":
        raise TypeError(message(func, "pad_width must be of integral type", pad_width,
                                f"an int, (before, after) or {ndim} such pairs"))
    try:
        widths = np.broadcast_to(widths.astype(np.int64), (ndim, 2))
    except ValueError:
        raise ValueError(message(func, "pad_width does not broadcast to (ndim, 2)", pad_width,
                                 f"an int, (before, after) or {ndim} such pairs")) from None
    if np.any(widths < 0):
        raise ValueError(message(func, "pad widths must be non-negative", pad_width))
    return widths


def _assigned(cell: np.ndarray, value):
    """``value`` as NumPy's pad writes it into the array (NaN into integers: ``ValueError``)."""
    cell[...] = value
    return cell.item()


def pad_constant(x: DArray, pad_width, constant_values=0, *, func: str = "pad") -> DArray:
    """``numpy.pad(x, pad_width, mode="constant", constant_values=...)``, local on every rank.

    ``constant_values`` is a scalar, ``(before, after)`` or one pair per axis,
    as in NumPy (axes are padded in order, so corners take the later axis'
    value); it is converted to ``x``'s dtype as NumPy does (NaN into an
    integer array raises ``ValueError``).

    Examples
    --------
    >>> import darray as da
    >>> y = pad_constant(da.arange(3.0), (2, 1), constant_values=-1.0)
    >>> [float(v) for v in y.gather()]
    [-1.0, -1.0, 0.0, 1.0, 2.0, -1.0]
    """
    if not isinstance(x, DArray):
        raise TypeError(message(func, "expected a DArray", type(x).__name__))
    widths = _widths(func, pad_width, x.ndim)
    try:
        values = np.broadcast_to(np.asarray(constant_values), (x.ndim, 2))
    except ValueError:
        raise ValueError(message(func, "constant_values must broadcast to (ndim, 2)", constant_values)) from None
    dtype = x.dtype
    cell = np.empty((), dtype=dtype)
    fills = [[_assigned(cell, v) for v in pair] for pair in values]
    layout, rank, xp = x._layout, x._comm.rank, x._xp
    index = layout.block_index(rank)
    block = x.local
    sizes, shape = list(layout.sizes), list(layout.shape)
    for a in range(x.ndim):
        before, after = (int(w) for w in widths[a])
        if not before and not after:
            continue
        last = len(layout.sizes[a]) - 1
        mine = (before if index[a] == 0 else 0, after if index[a] == last else 0)
        parts = []
        for width, fill in zip(mine, fills[a]):
            strip = tuple(width if b == a else n for b, n in enumerate(block.shape))
            parts.append(xp.full(strip, fill, dtype=to_backend_dtype(xp, dtype), device=x.device) if width else None)
        if mine != (0, 0):
            block = xp.concat([p for p in (parts[0], block, parts[1]) if p is not None], axis=a)
        grown = list(layout.sizes[a])
        grown[0] += before
        grown[-1] += after
        sizes[a], shape[a] = tuple(grown), shape[a] + before + after
    out = Layout(tuple(shape), layout.dims, layout.split, tuple(sizes))
    return wrap_like(block, out, x)
