"""NumPy's reduction keywords that the standard's functions lack: ``where=``, ``initial=`` and ``out=``.

``x.sum(where=mask)``, ``np.max(x, initial=0)``, ``np.mean(x, where=x > 0)``
and ``x.std(axis=0, where=mask, out=o)`` work as in NumPy, on every layout:

- ``sum``, ``prod``, ``min``, ``max``, ``all``, ``any`` are the reductions of
  the ufuncs ``add``, ``multiply``, ``minimum``, ``maximum``,
  ``logical_and``, ``logical_or`` (:func:`darray._api.ufunc_methods.reduce`):
  masked-out cells count as the identity (or as ``initial`` for ``min`` and
  ``max``, which have none: NumPy then requires ``initial``), ``initial``
  joins every reduced row, one allreduce as without the keywords;
- ``mean`` is the masked sum over the masked count (two allreduces); ``var``
  and ``std`` add the masked sum of squared deviations from that mean (a
  third), divided by ``count - ddof``. Rows with no selected cell give NaN
  with NumPy's warning.

The mask broadcasts to the array; a mask laid out otherwise is
redistributed to the array's blocks by :func:`darray.where`.

Examples
--------
>>> import darray as np
>>> x = np.asarray([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]])
>>> float(x.sum(where=x > 0)), float(np.max(x, initial=10.0))
(13.0, 10.0)
>>> x.mean(axis=1, where=x > 0).gather().tolist()
[2.0, 4.5]
"""

from __future__ import annotations

import warnings

import numpy

from ..._core import DArray
from ..._core.methods import into
from ..._core.reductions import normalize_axes
from ..._errors import message
from ..data_types import astype
from ..elementwise import maximum
from ..manipulation import broadcast_to, squeeze
from ..statistical import min as minimum
from ..ufunc_methods import NO_VALUE, where_mask
from ..ufuncs import UFUNCS

__all__ = ["reduction", "UFUNC_OF"]

#: Reduction -> the ufunc whose ``reduce`` it is.
UFUNC_OF = {"sum": "add", "prod": "multiply", "min": "minimum", "max": "maximum", "all": "logical_and",
            "any": "logical_or"}
_MOMENTS = ("mean", "var", "std")


def reduction(name: str, a: DArray, axis=None, dtype=None, out=None, keepdims: bool = False, *, where=True,
              initial=NO_VALUE, ddof=0, correction=None, mean=None) -> DArray:
    """NumPy's ``numpy.<name>(a, axis, dtype, out, keepdims, initial=, where=)`` (``ddof`` for var/std).

    Examples
    --------
    >>> import darray as da
    >>> x = da.asarray([3, 1, 4, 1, 5])
    >>> int(reduction("min", x, where=x > 1, initial=99)), int(reduction("prod", x, initial=2))
    (3, 120)
    """
    func = f"numpy.{name}"
    if mean is not None:
        raise TypeError(message(func, "mean= (a precomputed mean) is not supported for DArrays", type(mean).__name__,
                                "None"))
    if name in UFUNC_OF:
        if name in ("all", "any") and initial is not NO_VALUE:
            raise TypeError(message(func, "got an unexpected keyword argument 'initial'", initial))
        if name in ("all", "any") and dtype is not None:
            raise TypeError(message(func, "got an unexpected keyword argument 'dtype'", dtype))
        ufunc = UFUNCS[UFUNC_OF[name]]
        result = ufunc.reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)
        return result if out is None else into(func, out, result)
    if name not in _MOMENTS:
        raise ValueError(message("reduction", "unknown reduction", name, f"one of {sorted([*UFUNC_OF, *_MOMENTS])}"))
    if initial is not NO_VALUE:
        raise TypeError(message(func, "got an unexpected keyword argument 'initial'", initial))
    result = _moment(name, a, axis, dtype, keepdims, where, ddof if correction is None else correction)
    return result if out is None else into(func, out, result)


def _moment(name: str, a: DArray, axis, dtype, keepdims: bool, where, ddof) -> DArray:
    """mean, var or std over the cells ``where`` selects (NumPy's definitions)."""
    add = UFUNCS["add"]
    kind = a.dtype.kind
    work = numpy.dtype(dtype) if dtype is not None else numpy.dtype(numpy.float64 if kind in "biu" else a.dtype)
    mask = where if where is True else _mask(f"numpy.{name}", a, where)
    count = (add.reduce(astype(mask, numpy.float64), axis=axis, keepdims=True) if mask is not True  # float: divides
             else float(numpy.prod([a.shape[i] for i in normalize_axes(f"numpy.{name}", axis, a.ndim)])))
    total = add.reduce(a, axis=axis, dtype=work, keepdims=True, where=mask)
    with numpy.errstate(invalid="ignore", divide="ignore"):
        mean = total / count
    if name == "mean":
        _warn_empty(count, "Mean of empty slice")
        return _shaped(mean, axis, keepdims, a.ndim)
    deviation = (a if a.dtype == work else astype(a, work)) - mean  # integers: in float64 (the standard mixes no kinds)
    squares = (deviation * deviation.conj()).real if kind == "c" else deviation * deviation
    sums = add.reduce(squares, axis=axis, keepdims=True, where=mask)
    with numpy.errstate(invalid="ignore", divide="ignore"):
        var = sums / _nonnegative(count - ddof)
    _warn_empty(count - ddof, "Degrees of freedom <= 0 for slice")
    out = var ** 0.5 if name == "std" else var
    if dtype is not None and out.dtype != work and work.kind != "c":
        out = out.astype(work)
    return _shaped(out, axis, keepdims, a.ndim)


def _shaped(x, axis, keepdims: bool, ndim: int):
    """``x`` (keepdims-shaped) without the reduced axes unless ``keepdims``."""
    if keepdims:
        return x
    axes = normalize_axes("squeeze", axis, ndim)
    return squeeze(x, axis=axes) if axes else x


def _mask(func: str, a: DArray, where) -> DArray:
    """``where`` as a boolean DArray of ``a``'s shape (the count needs every cell's flag)."""
    mask = where_mask(func, a, where)
    if mask.shape != a.shape:
        mask = broadcast_to(mask, a.shape)
    return mask


def _nonnegative(count):
    """``count`` with negative entries as 0 (NumPy divides by ``max(count - ddof, 0)``)."""
    if isinstance(count, DArray):
        return maximum(count, 0)
    return numpy.maximum(count, 0)


def _warn_empty(count, text: str) -> None:
    """NumPy's RuntimeWarning when some reduced row has no cell (the same verdict on every rank)."""
    low = int(minimum(count)) if isinstance(count, DArray) else int(numpy.min(count))
    if low <= 0:
        warnings.warn(text, RuntimeWarning, stacklevel=4)
