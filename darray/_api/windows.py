"""Sliding windows along axes (``numpy.lib.stride_tricks.sliding_window_view``), distributed.

A window starting at cell ``p`` of an axis covers ``p .. p + w - 1``. Along
a cut axis the windows of a block reach ``w - 1`` cells into the next block:
those cells arrive by one halo exchange, and nothing else moves. The output
blocks are shifted by half a window against the input blocks (block ``r``
holds the windows starting at ``[start_r - (w-1)//2, stop_r - (w-1)//2)``),
so a symmetric halo of ``ceil((w-1)/2)`` cells is all a block needs: about
``w - 1`` cells cross each block boundary, the least any layout allows.

Unlike NumPy's, the result is not a view: it holds ``w`` times the data
(``prod(window_shape)`` times for several window axes); like NumPy's, it is
read-only. :func:`as_strided` reads the cells NumPy's strides would address
in ``x``'s C-ordered global array, as a read-only copy too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._backend import is_numpy_namespace
from .._core import DArray
from .._core.elementwise import wrap_like
from .._core.protocols import implements
from .._errors import message
from .._layout import Layout, normalize_axis
from .overlap import with_halo

__all__ = ["as_strided", "sliding_window_view"]

_FUNC = "sliding_window_view"


def _windows(x: DArray, window_shape, axis) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """NumPy's checks: window lengths and their axes (repeats allowed), before any communication."""
    if not isinstance(x, DArray):
        raise TypeError(message(_FUNC, "expected a DArray", type(x).__name__))
    shape = tuple(window_shape) if np.iterable(window_shape) else (window_shape,)
    if not all(isinstance(w, (int, np.integer)) and not isinstance(w, bool) for w in shape):
        raise TypeError(message(_FUNC, "window_shape must hold integers", window_shape))
    shape = tuple(int(w) for w in shape)
    if any(w < 0 for w in shape):
        raise ValueError(message(_FUNC, "window_shape cannot contain negative values", window_shape))
    if axis is None:
        axes = tuple(range(x.ndim))
        if len(shape) != x.ndim:
            raise ValueError(message(_FUNC, "with axis=None window_shape needs one entry per dimension",
                                     window_shape, f"{x.ndim} entries"))
    else:
        axes = tuple(normalize_axis(_FUNC, a, x.ndim) for a in (axis if np.iterable(axis) else (axis,)))
        if len(shape) != len(axes):
            raise ValueError(message(_FUNC, "window_shape and axis must have the same length",
                                     (window_shape, axis), "one window length per axis"))
    trimmed = list(x.shape)
    for a, w in zip(axes, shape):
        if trimmed[a] < w:
            raise ValueError(message(_FUNC, "window shape cannot be larger than input array shape",
                                     window_shape, f"at most {tuple(x.shape[b] for b in axes)}"))
        trimmed[a] -= w - 1
    return shape, axes


def _output_layout(layout: Layout, reach: Sequence[int], window_shape) -> Layout:
    """Windows of cut axes shifted by half a window (see the module docstring); window axes uncut."""
    sizes = []
    for a, n in enumerate(layout.shape):
        m = n - reach[a]
        if layout.axis_dim[a] is None or not reach[a]:
            sizes.append((m,) if layout.axis_dim[a] is None else layout.sizes[a])
            continue
        bounds = [min(max(o - reach[a] // 2, 0), m) for o in layout.offsets[a]]
        bounds[0], bounds[-1] = 0, m
        sizes.append(tuple(int(b - a_) for a_, b in zip(bounds[:-1], bounds[1:])))
    shape = tuple(n - h for n, h in zip(layout.shape, reach)) + tuple(window_shape)
    sizes += [(w,) for w in window_shape]
    return Layout(shape, layout.dims, layout.split, tuple(sizes))


@implements(np.lib.stride_tricks.sliding_window_view)
def sliding_window_view(x, window_shape, axis=None, *, subok: bool = False, writeable: bool = False) -> DArray:
    """Every window of ``window_shape`` cells along ``axis``, as new trailing axes (NumPy's semantics).

    ``numpy.lib.stride_tricks.sliding_window_view`` for DArrays: the result
    has ``x``'s axes, each windowed one shortened by ``w - 1``, followed by
    one axis per window (``out[..., i, ..., k] == x[..., i + k, ...]``). It is
    cut like ``x``; along a cut axis one halo exchange of about ``w - 1``
    cells per block boundary brings the cells the windows reach into the next
    block. NumPy returns a read-only view; this result is a read-only copy holding
    ``w`` times the data (``prod(window_shape)`` times for several axes), so
    keep windows short or reduce them right away (``.sum(axis=-1)``).
    ``writeable=True`` is refused: writes could not reach ``x``.

    Examples
    --------
    >>> import darray as da
    >>> w = da.lib.stride_tricks.sliding_window_view(da.arange(6.0), 3)
    >>> w.shape
    (4, 3)
    >>> [float(v) for v in da.sum(w, axis=-1).gather()]
    [3.0, 6.0, 9.0, 12.0]
    """
    shape, axes = _windows(x, window_shape, axis)
    if writeable:
        raise ValueError(message(_FUNC, "the windows are a copy, writes would not reach x", "writeable=True",
                                 "writeable=False"))
    reach = [0] * x.ndim
    for a, w in zip(axes, shape):
        reach[a] += w - 1
    if any(w == 0 for w in shape) or any(r < 0 for r in reach):  # empty windows: nothing to read
        from .creation import empty

        out_shape = tuple(n - r for n, r in zip(x.shape, reach)) + shape
        return _read_only(empty(out_shape, dtype=x.dtype, split=x._layout.split, grid=x._layout.dims, comm=x._comm))
    layout = x._layout
    out = _output_layout(layout, reach, shape)
    rank = x._comm.rank
    depth = tuple((r + 1) // 2 if layout.axis_dim[a] is not None else 0 for a, r in enumerate(reach))
    src = with_halo(x, depth, "none") if any(depth) else x
    if any(depth):
        start, halo = layout.block_start(rank), src._layout.halo  # the windows of this rank's output block
        lo, n_out = out.block_start(rank)[:x.ndim], out.block_shape(rank)[:x.ndim]  # read cells lo .. lo+n+r
        cells = tuple(slice(b - s + h, b - s + h + n + r) for b, s, h, n, r in zip(lo, start, halo, n_out, reach))
        block = src._block[cells]
    else:
        block = x.local
    return _read_only(wrap_like(_local_windows(x._xp, block, out.block_shape(rank), shape, axes, x.device), out, x))


def _read_only(out: DArray) -> DArray:
    """``out`` with ``flags.writeable`` False: NumPy's windows are read-only views, and writes to a copy would
    not reach the input."""
    out.flags.writeable = False
    return out


def _local_windows(xp, block, out_shape, window_shape, axes, device):
    """The windows of one block (a copy), NumPy's strides where the block is NumPy's, else stacked slices."""
    if any(n == 0 for n in out_shape):
        return xp.empty(out_shape, dtype=block.dtype, device=device)
    if is_numpy_namespace(xp):
        return np.ascontiguousarray(np.lib.stride_tricks.sliding_window_view(block, window_shape, axes))
    for a, w in zip(axes, window_shape):  # one axis at a time: each appends its window axis at the end
        m = block.shape[a] - w + 1
        block = xp.stack([block[(slice(None),) * a + (slice(k, k + m), ...)] for k in range(w)], axis=-1)
    return block


def as_strided(x, shape=None, strides=None, subok: bool = False, writeable: bool = True) -> DArray:
    """``numpy.lib.stride_tricks.as_strided`` for DArrays: the cells NumPy's strides address, as a read-only copy.

    A DArray has no single buffer; its ``strides`` are those of its C-ordered
    global array, and so are the ``strides`` this function reads: cell
    ``out[i0, i1, ...]`` is the element at byte offset ``sum(i_k * strides[k])``
    of ``x`` laid out in C order (NumPy's answer for a C-contiguous ``x``).
    Offsets must be whole items inside ``x`` (NumPy would read outside the
    buffer: ValueError here). The result is gathered by index (one
    all-to-all, ``O(prod(shape))`` indices): prefer
    :func:`sliding_window_view`, which moves only the block edges, for
    windows. It is a copy, so it is read-only whatever ``writeable`` says:
    writes could not reach ``x`` (and overlapping windows make them unsafe
    in NumPy too). A NumPy array gets NumPy's own ``as_strided``, copied
    into a DArray.

    Examples
    --------
    >>> import darray as np
    >>> from darray.lib import stride_tricks
    >>> z = np.arange(1, 8, dtype=np.uint32)
    >>> stride_tricks.as_strided(z, (4, 4), (4, 4)).tolist()  # numpy-100 exercise 81
    [[1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6], [4, 5, 6, 7]]
    """
    from .creation import arange, asarray, empty
    from .manipulation import reshape
    from .._core.advanced import take

    func = "as_strided"
    if not isinstance(x, DArray):
        x = np.asarray(x)
        return _read_only(asarray(np.lib.stride_tricks.as_strided(x, shape, strides, writeable=False).copy()))
    shape = tuple(x.shape) if shape is None else _ints(func, "shape", shape)
    strides = tuple(x.strides) if strides is None else _ints(func, "strides", strides)
    if any(n < 0 for n in shape):
        raise ValueError(message(func, "negative dimensions are not allowed", shape))
    if len(strides) != len(shape):
        raise ValueError(message(func, "mismatch in length of strides and shape", (shape, strides),
                                 f"{len(shape)} strides"))
    size = x.dtype.itemsize
    if any(s % size for s in strides):
        raise ValueError(message(func, "strides must be whole items", strides,
                                 f"multiples of the itemsize {size} (a DArray's strides are its C-ordered array's)"))
    steps = [s // size for s in strides]
    if any(n == 0 for n in shape):
        return _read_only(empty(shape, dtype=x.dtype, comm=x._comm, device=x.device))
    low = sum((n - 1) * k for n, k in zip(shape, steps) if k < 0)
    high = sum((n - 1) * k for n, k in zip(shape, steps) if k > 0)
    if low < 0 or high >= x.size:
        raise ValueError(message(func, "the strides reach outside the array", (shape, strides),
                                 f"item offsets within 0..{x.size - 1} of x's C-ordered cells (reached {low}..{high})"))
    flat = None
    for a, (n, k) in enumerate(zip(shape, steps)):
        term = reshape(arange(n, dtype="int64", comm=x._comm) * k, (n,) + (1,) * (len(shape) - 1 - a))
        flat = term if flat is None else flat + term
    cells = reshape(x, (-1,))
    out = take(cells, flat if flat is not None else asarray(0, comm=x._comm)) if shape else cells[0:1].reshape(())
    return _read_only(out)


def _ints(func: str, name: str, values) -> tuple[int, ...]:
    values = tuple(values) if np.iterable(values) else (values,)
    if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        raise TypeError(message(func, f"{name} must hold integers", values))
    return tuple(int(v) for v in values)
