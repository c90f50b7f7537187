"""NumPy's elementwise functions outside the standard: ``nan_to_num``, ``angle``, ``around``, ``interp``, ``digitize``.

Each has NumPy's signature and semantics and is registered with
``__array_function__`` (``around`` also as ``numpy.round``). No
communication: each rank computes its own block. The small tables of
``interp`` (``xp``, ``fp``) and ``digitize`` (``bins``) are held whole by
every rank (a DArray there is allgathered).

Examples
--------
>>> import darray as da
>>> from darray._api.numpy.mathematical import interp
>>> interp(da.asarray([0.5, 1.5]), [0.0, 1.0, 2.0], [0.0, 10.0, 0.0]).gather().tolist()
[5.0, 5.0]
"""

from __future__ import annotations

import numpy as np

from ..._core import DArray
from ..._core.protocols import implements
from ..._errors import AxisError, message
from ..._layout import normalize_axis
from .._common import first_darray
from ..creation import as_darray, asarray, zeros_like
from ..cumulative import diff
from ..data_types import astype
from ..elementwise import abs as _abs, atan2, imag, isinf, isnan, real, remainder, round as _round
from ..searching import where
from ._common import blocks, darray_of, integer, no_out, numpy_function, numpy_name, small, unsupported

__all__ = ["angle", "around", "i0", "interp", "nan_to_num", "unwrap"]


@numpy_function(np.nan_to_num)
def nan_to_num(x, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> DArray:
    """NaN to ``nan``, +inf to ``posinf``, -inf to ``neginf`` (``numpy.nan_to_num``; defaults 0 and the
    dtype's largest/smallest finite values). Complex parts are treated separately. ``copy=False`` writes into ``x``.

    Elementwise (``where``; complex arrays block by block), no communication.

    Examples
    --------
    >>> import darray as da
    >>> nan_to_num(da.asarray([da.nan, da.inf, 1.0]), posinf=9.0).gather().tolist()
    [0.0, 9.0, 1.0]
    """
    xd = darray_of("nan_to_num", x)
    kind = xd.dtype.kind
    if kind not in "fc":
        return astype(xd, xd.dtype, copy=True) if copy else xd
    real = np.finfo(xd.dtype)
    hi = real.max if posinf is None else posinf
    lo = real.min if neginf is None else neginf
    if kind == "c":
        out = blocks("nan_to_num", lambda b: np.nan_to_num(b, copy=True, nan=nan, posinf=hi, neginf=lo), xd)
    else:
        dt = xd.dtype.type
        with np.errstate(over="ignore", invalid="ignore"):  # NumPy casts the values into the dtype likewise
            nan_v, hi_v, lo_v = dt(nan), dt(hi), dt(lo)
        out = where(isnan(xd), nan_v, xd)
        out = where(isinf(xd) & (xd > 0), hi_v, out)
        out = where(isinf(xd) & (xd < 0), lo_v, out)
    if not copy and isinstance(x, DArray):
        if x.ndim:
            x[...] = out
        else:  # x[...] = out on a 0-d DArray indexes its block with (), a copy: write the block directly
            x.local[...] = out.local
        return x
    return out


@numpy_function(np.angle)
def angle(z, deg: bool = False) -> DArray:
    """The counterclockwise angle from the positive real axis (``numpy.angle``), in radians or degrees.

    Real input gives 0 or pi (``atan2(0, x)``); integers and booleans are
    computed in float64 (int8/uint8 in float32: NumPy's float16 is not a darray dtype).

    Examples
    --------
    >>> import darray as da
    >>> angle(da.asarray([1.0, 1j, -1.0]), deg=True).gather().tolist()
    [0.0, 90.0, 180.0]
    """
    x = darray_of("angle", z)
    if x.dtype.kind == "c":
        a = atan2(imag(x), real(x))
    else:
        dtype = np.angle(np.zeros(0, dtype=x.dtype)).dtype
        xf = astype(x, np.float32 if dtype == np.float16 else dtype)
        a = atan2(zeros_like(xf), xf)
    return a * (180 / np.pi) if deg else a


def _power_of_ten(n: int) -> float:
    """NumPy's ``power_of_ten`` (the C helper of ``around``), to round exactly as NumPy does."""
    if n < 9:
        return (1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8)[n]
    ret = 1e9
    while n > 9:
        ret *= 10.0
        n -= 1
    return ret


@numpy_function(np.around)
def around(a, decimals: int = 0, out=None) -> DArray:
    """Round to ``decimals`` decimals, halves to even (``numpy.around`` / ``numpy.round``).

    As NumPy: floats are scaled by ``10**decimals``, rounded and scaled back
    (so results carry that scaling's floating-point error); integers are
    unchanged for ``decimals >= 0`` and rounded to tens, hundreds, ... in
    float64 for negative ``decimals``; complex parts are rounded separately.
    Booleans are refused (NumPy gives float16 or fails). Elementwise.

    Examples
    --------
    >>> import darray as da
    >>> around(da.asarray([1.234, 5.675]), 2).gather().tolist()
    [1.23, 5.68]
    >>> around(da.asarray([15, 25, 149]), -1).gather().tolist()
    [20, 20, 150]
    """
    no_out("around", out)
    x = darray_of("around", a)
    decimals = integer("around", "decimals", decimals)
    kind = x.dtype.kind
    if kind == "b":
        raise unsupported("around", "rounding booleans", x.dtype, "a numeric dtype")
    if kind in "iu" and decimals >= 0:
        return astype(x, x.dtype, copy=True)
    if kind == "c":
        return blocks("around", lambda b: np.round(b, decimals), x)
    f = _power_of_ten(abs(decimals))
    y = astype(x, np.float64) if kind in "iu" else x
    y = _round(y * f) / f if decimals >= 0 else _round(y / f) * f
    return astype(y, x.dtype) if kind in "iu" else y


implements(np.round)(around)


@numpy_function(np.interp)
def interp(x, xp, fp, left=None, right=None, period=None) -> DArray:
    """Piecewise-linear interpolation (``numpy.interp``) of the small 1-d ``(xp, fp)`` at the points ``x``.

    Each rank interpolates its own block of ``x`` with NumPy (elementwise, no
    communication); ``xp``/``fp`` are held whole by every rank (NumPy arrays,
    sequences, or small DArrays, which are allgathered). float64 or complex128 result.

    Examples
    --------
    >>> import darray as da
    >>> interp(da.asarray([0.5, 1.5]), [0.0, 1.0, 2.0], [0.0, 10.0, 0.0]).gather().tolist()
    [5.0, 5.0]
    """
    xd = darray_of("interp", x, first_darray(xp, fp))
    if xd.dtype.kind == "c":
        raise TypeError(message(numpy_name("interp"), "x must be real", xd.dtype, "a real numeric dtype"))
    xs, fs = small("interp", "xp", xp), small("interp", "fp", fp)
    if xs.dtype.kind == "c":
        raise TypeError(message(numpy_name("interp"), "xp must be real", xs.dtype, "a real numeric dtype"))
    try:  # NumPy's own checks, on data every rank holds: every rank raises alike
        np.interp(np.zeros(1), xs, fs, left, right, period)
    except (TypeError, ValueError) as exc:
        raise type(exc)(message(numpy_name("interp"), str(exc), (xs.shape, fs.shape),
                                "1-d xp and fp of one non-zero length")) from None
    return blocks("interp", lambda b: np.interp(b, xs, fs, left, right, period), xd)


@implements(np.unwrap)
def unwrap(p, discont=None, axis: int = -1, *, period=2 * np.pi) -> DArray:
    """Unwrap ``p`` by taking the complement of large deltas modulo ``period`` along ``axis`` (``numpy.unwrap``).

    NumPy's algorithm on darray's distributed pieces: ``diff`` (a halo cell
    when the axis is cut), elementwise corrections, ``cumsum`` (one scan
    exchange when cut).

    Examples
    --------
    >>> import darray as da
    >>> unwrap(da.asarray([0.0, 3.0, 6.5])).gather().tolist()[-1] < 1.0
    True
    """
    func = "numpy.unwrap"
    p = as_darray(func, p)
    if p.ndim == 0:
        raise AxisError(message(func, "axis out of bounds for a 0-d array", axis))
    axis = normalize_axis(func, axis, p.ndim)
    if p.dtype.kind not in "biuf":
        raise TypeError(message(func, "unsupported dtype", p.dtype, "booleans, integers or floats"))
    dd = diff(p, axis=axis)
    discont = period / 2 if discont is None else discont
    dtype = np.result_type(dd.dtype, period)
    dd = astype(dd, dtype, copy=False)  # NumPy's arithmetic below runs in dtype
    if np.issubdtype(dtype, np.integer):
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    ddmod = remainder(dd + high, period) - high
    if ambiguous:
        ddmod = where((ddmod == -high) & (dd > 0), astype(asarray(high, comm=p.comm), ddmod.dtype),
                          ddmod)
    correct = ddmod - dd
    size = _abs(dd)
    size = astype(size, np.result_type(size.dtype, discont), copy=False)
    correct = where(size < discont, zeros_like(correct), correct)
    up = astype(p, dtype, copy=True)
    cut = (slice(None),) * axis + (slice(1, None),)
    if p.shape[axis] > 1:
        up[cut] = astype(up[cut] + np.cumsum(correct, axis=axis), dtype, copy=False)
    return up




@implements(np.i0)
def i0(x) -> DArray:
    """The modified Bessel function of the first kind, order 0 (``numpy.i0``), elementwise, no communication.

    Examples
    --------
    >>> import darray as da
    >>> i0(da.asarray([0.0])).gather().tolist()
    [1.0]
    """
    x = as_darray("numpy.i0", x)
    if x.dtype.kind not in "biuf":
        raise TypeError(message("numpy.i0", "i0 not supported for complex values" if x.dtype.kind == "c"
                                else "unsupported dtype", x.dtype, "real numbers"))
    return blocks("i0", np.i0, x)
