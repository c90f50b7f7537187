"""``numpy.convolve`` and ``numpy.correlate`` of 1-d DArrays, distributed with a halo.

The longer operand (the signal, length ``n``) stays distributed; the shorter
one (the kernel, length ``m <= n``) is held whole by every rank: a NumPy
array or a replicated DArray as it is, a distributed DArray allgathered (its
``m`` values: no more than the ``m - 1`` ghost cells each rank receives
anyway). Each rank then

1. receives a halo of ``m - 1`` cells from its left neighbours (several
   hops where blocks are shorter; zeros past the global edges), and the rank
   holding the last block also ``m - 1`` zeros on its right;
2. computes its part of the ``"full"`` convolution with one local
   ``numpy.convolve(..., "valid")``: output ``k`` needs inputs
   ``k - m + 1 .. k``, so every rank produces as many outputs as it owns
   inputs, the last block ``m - 1`` more.

``"same"`` and ``"valid"`` are slices of that result (NumPy's offsets);
``correlate(a, v)`` is ``convolve(a, conj(v[::-1]))`` (the longer one
flipped when it is ``v``). Memory per rank: its block, ``2 (m - 1)`` ghost
cells and the kernel; work ``O(block * m)`` (direct, as NumPy). Dtypes are
NumPy's (``result_type`` of the operands, booleans included); the local
call runs on a NumPy view of the block (other libraries' blocks go through
the host and back).

Examples
--------
>>> import darray as da
>>> from darray._api.numpy.convolve import convolve
>>> convolve(da.asarray([1.0, 2.0, 3.0]), [0.0, 1.0, 0.5]).gather().tolist()
[0.0, 1.0, 2.5, 4.0, 1.5]
"""

from __future__ import annotations

import numpy as np

from ..._backend import from_numpy, to_numpy
from ..._core import DArray
from ..._core.protocols import implements
from ..._errors import message
from ..._layout import Layout
from ..manipulation import flip
from .._common import first_darray
from ..elementwise import conj
from ..overlap import with_halo
from ._common import darray_of, whole

__all__ = ["convolve", "correlate"]

_MODES = ("full", "same", "valid")


def _operand(func: str, x, like: DArray, what: str):
    """``x`` as a DArray or NumPy array, 1-d and non-empty (checked the same way on every rank)."""
    if not isinstance(x, DArray):
        x = np.asarray(x)  # as NumPy: a string or None is a 0-d array (ValueError below)
    if x.ndim != 1:
        raise ValueError(message(f"numpy.{func}", f"{what} must be 1-d", tuple(x.shape), "a 1-d array"))
    if x.dtype.kind not in "biufc":
        raise TypeError(message(f"numpy.{func}", f"unsupported dtype of {what}", x.dtype, "booleans or numbers"))
    if x.shape[0] == 0:
        raise ValueError(message(f"numpy.{func}", f"{what} cannot be empty", tuple(x.shape), "at least one element"))
    return x


def _signal(x, like: DArray) -> DArray:
    return x if isinstance(x, DArray) else darray_of("convolve", x, like)


def _full(signal: DArray, kernel: np.ndarray) -> DArray:
    """The ``"full"`` convolution of a 1-d DArray with a kernel held by every rank (``len(kernel) <= n``)."""
    n, h = signal.shape[0], kernel.shape[0] - 1
    layout = signal.layout
    rank = signal.comm.rank
    nblocks = len(layout.sizes[0])
    last = layout.block_index(rank)[0] == nblocks - 1
    own = layout.block_shape(rank)[0]
    if h:
        padded = to_numpy(with_halo(signal, h, 0)._block)  # [h ghosts | own | h ghosts], zeros past the edges
    else:
        padded = to_numpy(signal.local)
    dtype = np.result_type(signal.dtype, kernel.dtype)
    count = own + (h if last else 0)  # outputs of this rank: k - m + 1 .. k lie in [ghosts | own | ghosts]
    if count:
        out = np.convolve(padded[:count + h], kernel, "valid")
    else:  # an empty block (not the last, or with nothing to add)
        out = np.zeros(0, dtype=dtype)
    sizes = tuple(s + h if b == nblocks - 1 else s for b, s in enumerate(layout.sizes[0]))
    result = Layout((n + h,), layout.dims, layout.split, (sizes,), (0,), ("none",))
    local = from_numpy(signal._xp, np.ascontiguousarray(out.astype(dtype, copy=False)), device=signal.device)
    return DArray._wrap(local, result, signal.comm, signal._xp)


def _mode(func: str, mode) -> str:
    if mode not in _MODES:
        raise ValueError(message(f"numpy.{func}", "unknown mode", repr(mode), "'full', 'same' or 'valid'"))
    return mode


def _cut(full: DArray, mode: str, longest: int, shortest: int, same_offset: int) -> DArray:
    if mode == "full":
        return full
    if mode == "same":
        return full[same_offset:same_offset + longest]
    return full[shortest - 1:longest]


@implements(np.convolve)
def convolve(a, v, mode: str = "full") -> DArray:
    """The discrete linear convolution of two 1-d arrays (``numpy.convolve``), distributed with a halo.

    Examples
    --------
    >>> import darray as da
    >>> convolve(da.asarray([1, 2, 3, 4]), [1, 1], mode="valid").gather().tolist()
    [3, 5, 7]
    """
    mode = _mode("convolve", mode)
    like = first_darray(a, v)
    a, v = _operand("convolve", a, like, "a"), _operand("convolve", v, like, "v")
    n, m = a.shape[0], v.shape[0]
    signal, kernel = (a, v) if n >= m else (v, a)
    full = _full(_signal(signal, like), whole(kernel))
    return _cut(full, mode, max(n, m), min(n, m), (min(n, m) - 1) // 2)


@implements(np.correlate)
def correlate(a, v, mode: str = "valid") -> DArray:
    """The cross-correlation ``c[k] = sum_n a[n + k] * conj(v[n])`` of two 1-d arrays (``numpy.correlate``).

    Examples
    --------
    >>> import darray as da
    >>> correlate(da.asarray([1.0, 2.0, 3.0]), [0.0, 1.0, 0.5], mode="full").gather().tolist()
    [0.5, 2.0, 3.5, 3.0, 0.0]
    """
    mode = _mode("correlate", mode)
    like = first_darray(a, v)
    a, v = _operand("correlate", a, like, "a"), _operand("correlate", v, like, "v")
    n, m = a.shape[0], v.shape[0]
    if n >= m:
        kernel = np.conj(whole(v)[::-1]) if v.dtype.kind == "c" else whole(v)[::-1]
        full = _full(_signal(a, like), np.ascontiguousarray(kernel))
        offset = (m - 1) // 2
    else:  # the longer v, flipped and conjugated, is the signal
        flipped = flip(_signal(v, like), axis=0)
        full = _full(conj(flipped) if v.dtype.kind == "c" else flipped, whole(a))
        offset = n // 2
    return _cut(full, mode, max(n, m), min(n, m), offset)
