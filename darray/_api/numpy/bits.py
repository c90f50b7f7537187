"""``numpy.packbits`` and ``numpy.unpackbits`` for DArrays, distributed.

- ``packbits`` along an axis that is not cut: each rank packs its block (one
  local ``numpy.packbits``). Along a cut axis, groups of 8 elements may
  straddle two blocks: the array is first redistributed so that every
  block boundary falls on a multiple of 8 (the bytes balanced over the
  blocks; only cells near the boundaries move), then each rank packs its
  block. ``axis=None`` packs the flattened array (C order) the same way.
- ``unpackbits``: every byte becomes 8 elements of its own block, no
  communication; ``count`` then slices (or pads with zeros) along the axis.

Blocks of other libraries go through a NumPy view and back.

Examples
--------
>>> import darray as da
>>> from darray._api.numpy.bits import packbits, unpackbits
>>> packbits(da.asarray([1, 0, 1, 1, 0, 0, 0, 0, 1])).gather().tolist()
[176, 128]
>>> unpackbits(da.asarray([176], dtype=da.uint8), count=4).gather().tolist()
[1, 0, 1, 1]
"""

from __future__ import annotations

import numbers

import numpy as np

from ..._backend import from_numpy, to_numpy
from ..._core import DArray, redistribute_to
from ..._core.protocols import implements
from ..._errors import AxisError, message
from ..._layout import Layout, balanced_sizes
from ..manipulation import concat, reshape
from ..creation import as_darray, zeros

__all__ = ["packbits", "unpackbits"]


def _checks(func: str, a, axis, bitorder) -> tuple[DArray, int]:
    name = f"numpy.{func}"
    a = as_darray(name, a)  # NumPy's array-likes (a list, a NumPy array)
    if bitorder not in ("big", "little"):
        raise ValueError(message(name, "bitorder must be 'big' or 'little'", repr(bitorder)))
    if axis is None:
        return reshape(a, (-1,)), 0
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(message(name, "axis must be an integer or None", axis))
    if not -a.ndim <= axis < a.ndim:
        raise AxisError(message(name, "axis out of bounds", axis, f"an axis in [{-a.ndim}, {a.ndim})"))
    return a, int(axis) % a.ndim


def _local(x: DArray, out: np.ndarray, layout: Layout) -> DArray:
    return DArray._wrap(from_numpy(x._xp, np.ascontiguousarray(out), device=x.device), layout, x.comm, x._xp)


def _resized(layout: Layout, axis: int, sizes) -> Layout:
    """``layout`` without halo, with block sizes ``sizes`` along ``axis``."""
    all_sizes = tuple(tuple(sizes) if d == axis else s for d, s in enumerate(layout.sizes))
    shape = tuple(sum(sizes) if d == axis else n for d, n in enumerate(layout.shape))
    return Layout(shape, layout.dims, layout.split, all_sizes)


@implements(np.packbits)
def packbits(a, axis=None, bitorder: str = "big") -> DArray:
    """Pack the elements of a boolean or integer array into bits of uint8 (``numpy.packbits``).

    Non-zero elements are 1 bits; the last byte along ``axis`` is padded with
    zeros.

    Examples
    --------
    >>> import darray as da
    >>> packbits(da.asarray([[1, 0, 1], [0, 1, 1]]), axis=1, bitorder="little").gather().tolist()
    [[5], [6]]
    """
    x, axis = _checks("packbits", a, axis, bitorder)
    if x.dtype.kind not in "biu":
        raise TypeError(message("numpy.packbits", "expected an array of integer or boolean data type", x.dtype,
                                "bool or an integer dtype"))
    layout = x.layout
    n = x.shape[axis]
    if layout.axis_dim[axis] is None:
        out = np.packbits(to_numpy(x.local), axis=axis, bitorder=bitorder)
        return _local(x, out, _resized(layout, axis, ((n + 7) // 8,)))
    parts = len(layout.sizes[axis])
    nbytes = balanced_sizes((n + 7) // 8, parts)
    ends = np.minimum(np.cumsum(nbytes) * 8, n)
    aligned = _resized(layout, axis, np.diff(np.concatenate(([0], ends))).tolist())
    x = redistribute_to(x, aligned)
    out = np.packbits(to_numpy(x.local), axis=axis, bitorder=bitorder)
    return _local(x, out, _resized(layout, axis, nbytes))


@implements(np.unpackbits)
def unpackbits(a, axis=None, count=None, bitorder: str = "big") -> DArray:
    """Unpack the bits of a uint8 array into 0/1 uint8 elements (``numpy.unpackbits``).

    ``count`` keeps the first ``count`` elements along ``axis`` (zeros
    added past the end), or drops ``-count`` from the end.

    Examples
    --------
    >>> import darray as da
    >>> unpackbits(da.asarray([[6], [5]], dtype=da.uint8), axis=1, count=-5).gather().tolist()
    [[0, 0, 0], [0, 0, 0]]
    """
    x, axis = _checks("unpackbits", a, axis, bitorder)
    if x.dtype != np.uint8:
        raise TypeError(message("numpy.unpackbits", "expected an input array of unsigned byte data type", x.dtype,
                                "uint8"))
    if count is not None and (isinstance(count, bool) or not isinstance(count, numbers.Integral)):
        raise TypeError(message("numpy.unpackbits", "count must be an integer or None", count))
    layout = x.layout
    out = np.unpackbits(to_numpy(x.local), axis=axis, bitorder=bitorder)
    bits = _local(x, out, _resized(layout, axis, [8 * s for s in layout.sizes[axis]]))
    if count is None:
        return bits
    total = bits.shape[axis]
    keep = int(count) if count >= 0 else max(total + int(count), 0)
    if keep <= total:
        return bits[tuple(slice(0, keep) if d == axis else slice(None) for d in range(bits.ndim))]
    pad_shape = tuple(keep - total if d == axis else s for d, s in enumerate(bits.shape))
    return concat([bits, zeros(pad_shape, dtype=np.uint8, comm=x.comm, device=x.device)], axis=axis)
