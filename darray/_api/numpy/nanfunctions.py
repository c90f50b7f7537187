"""NumPy's NaN-skipping functions that :mod:`darray._api.numpy.protocols` lacks, registered for DArrays.

``numpy.nanmedian``, ``nanquantile``, ``nanpercentile`` (a distributed sort
along the reduced axes puts the NaNs last; each slice interpolates between
its own ``k`` valid values, ``k`` counted per slice), ``nancumsum``,
``nancumprod`` (NaN read as 0 / 1, then the distributed scan) and
``nanargmax``, ``nanargmin``. xarray calls them for ``median``,
``quantile``, ``cumsum``, ``cumprod``, ``argmax`` and ``idxmax`` with
``skipna`` (its default for floats). Integer and boolean arrays have no NaN:
the plain function runs, as in NumPy.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..._core import DArray, wrap_like
from ..._core.advanced import take_along_axis
from ..._core.protocols import HANDLED_FUNCTIONS, implements
from ..._core.reductions import normalize_axes
from ..._errors import message
from .._common import first_darray
from ..creation import as_darray
from ..data_types import astype
from ..elementwise import clip, floor as _floor, isnan, maximum, minimum
from ..manipulation import moveaxis, permute_dims, reshape
from ..searching import where
from ..sorting import sort
from ..statistical import all as _all, any as _any, sum as _sum

__all__ = ["nanmedian", "nanquantile", "nanpercentile", "nancumsum", "nancumprod", "nanargmax", "nanargmin"]


def _check(name: str, a, out, *others) -> DArray:
    """``a`` as a DArray (NumPy's array-likes replicated on the ranks of a DArray among ``others``)."""
    a = as_darray(f"numpy.{name}", a, first_darray(*others))
    if out is not None:
        raise TypeError(message(f"numpy.{name}", "out= is not supported for DArrays", type(out).__name__,
                                "None (assign the result instead)"))
    return a


def _quantiles(name: str, a: DArray, q, axis, method: str, keepdims: bool, scale: float):
    """``q``-quantiles of the non-NaN values of every slice along ``axis`` (linear interpolation, NumPy's lerp)."""
    func = f"numpy.{name}"
    if a.dtype.kind == "c":
        raise TypeError(message(func, "a must be an array of real numbers", a.dtype))
    if method != "linear":
        raise ValueError(message(func, "only method='linear' is supported for DArrays", method))
    qs = np.asarray(q, dtype=np.float64) / scale
    if np.any((qs < 0) | (qs > 1)):
        raise ValueError(message(func, f"quantiles must be in [0, {scale:g}]", q))
    axes = normalize_axes(func, axis, a.ndim)
    plain = getattr(np, name[3:])  # integers and booleans hold no NaN: NumPy runs the plain function
    if a.dtype.kind != "f":
        extra = {} if name == "nanmedian" else {"q": q, "method": method}
        return HANDLED_FUNCTIONS[plain](a, axis=axis, keepdims=keepdims, **extra)
    if a.size == 0:  # as NumPy: the nanmean of the empty array (NaN, with NumPy's warning)
        return HANDLED_FUNCTIONS[np.nanmean](a, axis=axis, keepdims=keepdims)
    shape = a.shape
    rest = [d for d in range(a.ndim) if d not in axes]
    n = int(np.prod([shape[d] for d in axes]))
    dtype = np.result_type(a.dtype, q if np.ndim(q) == 0 else np.asarray(q))  # as numpy.quantile
    if rest + list(axes) != list(range(a.ndim)):
        a = permute_dims(a, (*rest, *axes))
    if len(axes) != 1:
        a = reshape(a, (*(a.shape[i] for i in range(len(rest))), n))
    s = sort(a, axis=-1)  # NaNs last: a slice's k valid values come first
    valid = _sum(~isnan(s), axis=-1, keepdims=True)
    positions = astype(valid - 1, np.float64) * qs.reshape(-1)  # (..., len(q)), NumPy's (k - 1) * q
    floor = _floor(positions)
    lo = astype(clip(floor, 0, n - 1), np.int64)
    hi = minimum(lo + 1, maximum(valid - 1, 0))
    frac = astype(positions - floor, dtype)
    below, above = _take(s, lo), _take(s, hi)  # differences in a's dtype, as NumPy's lerp
    if name == "nanmedian":  # NumPy's median: the mean of the one or two middle values
        result = where(frac == 0, below, (below + above) / 2)
    else:  # NumPy's lerp, from the nearer end
        step = above - below
        result = where(frac >= 0.5, above - step * (1 - frac), below + step * frac)
    empty = valid == 0
    if bool(_any(empty)):  # an all-NaN slice: NaN, with NumPy's warning (the same verdict on every rank)
        warnings.warn("All-NaN slice encountered", RuntimeWarning, stacklevel=5)
        result = where(empty, np.nan, result)
    result = moveaxis(result, -1, 0)  # NumPy puts the q axis first
    if keepdims:
        result = reshape(result, (result.shape[0], *(1 if d in axes else m for d, m in enumerate(shape))))
    if np.ndim(q) == 0:
        return result[0]
    if np.ndim(q) > 1:
        result = reshape(result, (*np.shape(q), *result.shape[1:]))
    return result


def _take(s: DArray, index: DArray) -> DArray:
    """``take_along_axis(s, index, axis=-1)``: block by block where the last axis is not cut."""
    if s._layout.axis_dim[-1] is None and _same_rows(s, index):
        return wrap_like(s._xp.take_along_axis(s.local, index.local, axis=-1), index._layout, index)
    return take_along_axis(s, index, axis=-1)


def _same_rows(s: DArray, index: DArray) -> bool:
    """Both cut the same way along every axis but the last (so each rank's rows are the same rows)."""
    a, b = s._layout, index._layout
    return a.dims == b.dims and a.split == b.split and a.sizes[:-1] == b.sizes[:-1]


@implements(np.nanquantile)
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                weights=None, interpolation=None):
    """``numpy.nanquantile`` for DArrays: quantiles of the non-NaN values, method ``'linear'``."""
    a = _check("nanquantile", a, out, q)
    _no_weights("nanquantile", weights, interpolation)
    return _quantiles("nanquantile", a, q, axis, method, keepdims, 1.0)


@implements(np.nanpercentile)
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  weights=None, interpolation=None):
    """``numpy.nanpercentile`` for DArrays: percentiles of the non-NaN values, method ``'linear'``."""
    a = _check("nanpercentile", a, out, q)
    _no_weights("nanpercentile", weights, interpolation)
    return _quantiles("nanpercentile", a, q, axis, method, keepdims, 100.0)


@implements(np.nanmedian)
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``numpy.nanmedian`` for DArrays: the median of the non-NaN values (NaN for an all-NaN slice).

    Examples
    --------
    >>> import numpy, darray as da
    >>> float(numpy.nanmedian(da.asarray([1.0, numpy.nan, 3.0, 10.0])))
    3.0
    """
    a = _check("nanmedian", a, out)
    return _quantiles("nanmedian", a, 0.5, axis, "linear", keepdims, 1.0)


def _no_weights(name: str, weights, interpolation) -> None:
    if weights is not None or interpolation is not None:
        raise TypeError(message(f"numpy.{name}", "weights= and interpolation= are not supported for DArrays",
                                (type(weights).__name__, interpolation), "None"))


def _scan(name: str, plain, fill: float):
    def scan(a, axis=None, dtype=None, out=None):
        a = _check(name, a, out)
        if a.dtype.kind in "fc":
            a = where(isnan(a), fill, a)
        return HANDLED_FUNCTIONS[plain](a, axis=axis, dtype=dtype)

    scan.__name__ = scan.__qualname__ = name
    scan.__doc__ = (f"``numpy.{name}`` for DArrays: NaN counts as {fill:g}, then the distributed "
                    f"``{plain.__name__}`` (one allgather of block totals along a cut axis).")
    return implements(getattr(np, name))(scan)


nancumsum = _scan("nancumsum", np.cumsum, 0.0)
nancumprod = _scan("nancumprod", np.cumprod, 1.0)


def _arg(name: str, plain, fill: float):
    def arg(a, axis=None, out=None, *, keepdims=False):
        a = _check(name, a, out)
        if a.dtype.kind in "fc":
            nan = isnan(a)
            if bool(_any(_all(nan, axis=axis))):  # the same verdict on every rank (a reduction)
                raise ValueError(message(f"numpy.{name}", "All-NaN slice encountered", None,
                                         "at least one non-NaN value in every slice"))
            a = where(nan, fill, a)
        return HANDLED_FUNCTIONS[plain](a, axis=axis, keepdims=keepdims)

    arg.__name__ = arg.__qualname__ = name
    arg.__doc__ = (f"``numpy.{name}`` for DArrays: ``{plain.__name__}`` with NaN skipped; ValueError for an "
                   "all-NaN slice, as NumPy.")
    return implements(getattr(np, name))(arg)


nanargmax = _arg("nanargmax", np.argmax, -np.inf)
nanargmin = _arg("nanargmin", np.argmin, np.inf)
