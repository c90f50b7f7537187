"""NumPy's statistics outside the standard: ``average``, ``cov``, ``corrcoef``, ``bincount``.

Each has NumPy's signature and semantics and is registered with
``__array_function__``. What moves:

- ``average``: distributed sums (one allreduce each);
- ``cov``/``corrcoef``: the centred data's product with its conjugate
  transpose runs as :func:`darray.matmul`: with observations cut over the
  ranks, local products and one allreduce of the small (variables x
  variables) result;
- ``bincount``: two scalar allreduces (min, max), a local ``numpy.bincount``
  per rank and one allreduce of the ``max(x) + 1`` counts; the result is
  replicated.

Examples
--------
>>> import darray as da
>>> from darray._api.numpy.statistics import average
>>> float(average(da.arange(4.0), weights=da.asarray([1.0, 1.0, 1.0, 5.0])))
2.25
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ..._backend import to_numpy
from ..._core import DArray
from ..._core.elementwise import local_operand
from ..._errors import message
from .. import linalg as _linalg
from .._common import first_darray
from ..creation import asarray, full_like, zeros
from ..data_types import astype
from ..elementwise import clip, conj, real, sqrt
from ..linear_algebra import matmul
from ..manipulation import broadcast_to, permute_dims, reshape, squeeze
from ..statistical import all as _all, any as _any, max as _max, mean, min as _min, sum as _sum
from ._common import axis_of, blocks, concatenate, darray_of, numpy_function, numpy_name, owner, small
from .mathematical import around
from .stacking import atleast_2d

__all__ = ["average", "bincount", "corrcoef", "cov", "digitize"]


def _axes(func: str, axis, ndim: int) -> tuple[int, ...] | None:
    if axis is None:
        return None
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(axis_of(func, a, ndim) for a in items)
    if len(set(axes)) != len(axes):
        raise ValueError(message(numpy_name(func), "repeated axis", tuple(items), "distinct axes"))
    return axes


@numpy_function(np.average)
def average(a, axis=None, weights=None, returned: bool = False, *, keepdims: bool = False):
    """Weighted average over ``axis`` (``numpy.average``); with ``returned=True`` also the sum of weights.

    ``weights`` has ``a``'s shape, or the shape of ``a`` along ``axis`` (then
    it broadcasts along the other axes). Sums are distributed reductions.
    Integer and boolean input is averaged in float64, as in NumPy.

    Examples
    --------
    >>> import darray as da
    >>> float(average(da.arange(4.0), weights=da.asarray([1.0, 1.0, 1.0, 5.0])))
    2.25
    """
    x = darray_of("average", a, first_darray(weights))
    axes = _axes("average", axis, x.ndim)
    keepdims = bool(keepdims) if keepdims is not np._NoValue else False
    if weights is None:
        avg = mean(x, axis=axes, keepdims=keepdims)
        scl = avg.dtype.type(x.size / avg.size)  # NumPy's count (ZeroDivisionError for an empty result, as NumPy)
        if returned:
            return avg, full_like(avg, scl)
        return avg
    w = darray_of("average", weights, x)
    if w.shape != x.shape:
        if axes is None:
            raise TypeError(message(numpy_name("average"), "axis must be specified when shapes of a and weights differ",
                                    (x.shape, w.shape), "an axis, or weights of a's shape"))
        if w.shape != tuple(x.shape[ax] for ax in axes):
            raise ValueError(message(numpy_name("average"), "shape of weights must be consistent with shape of a along "
                                     "specified axis", w.shape, f"{tuple(x.shape[ax] for ax in axes)}"))
        order = tuple(int(i) for i in np.argsort(axes))
        if order != tuple(range(len(axes))):
            w = permute_dims(w, order)
        w = reshape(w, tuple(s if ax in axes else 1 for ax, s in enumerate(x.shape)))
    if x.dtype.kind in "biu":
        dtype = np.result_type(x.dtype, w.dtype, np.float64)
    else:
        dtype = np.result_type(x.dtype, w.dtype)
    wd = astype(w, dtype)
    scl = _sum(wd, axis=axes, keepdims=keepdims)
    if bool(_any(scl == 0.0)):
        raise ZeroDivisionError(message(numpy_name("average"), "weights sum to zero, can't be normalized", None,
                                        "weights with a non-zero sum"))
    avg = _sum(astype(x, dtype) * wd, axis=axes, keepdims=keepdims) / scl
    if returned:
        if scl.shape != avg.shape:
            scl = astype(broadcast_to(scl, avg.shape), scl.dtype, copy=True)
        return avg, scl
    return avg


def _check_weights(func: str, name: str, weights, nobs: int, like: DArray, integral: bool) -> DArray:
    w = astype(darray_of(func, weights, like), np.float64)
    if integral and not bool(_all(w == around(w))):
        raise TypeError(message(numpy_name(func), f"{name} must be integer", None, "whole numbers"))
    if w.ndim > 1:
        raise RuntimeError(message(numpy_name(func), f"cannot handle multidimensional {name}", w.shape, "a 1-d array"))
    if w.ndim == 0 or w.shape[0] != nobs:
        raise RuntimeError(message(numpy_name(func), f"incompatible numbers of samples and {name}", w.shape,
                                   f"{nobs} weights"))
    if bool(_any(w < 0)):
        raise ValueError(message(numpy_name(func), f"{name} cannot be negative", None, "weights >= 0"))
    return w


def _rows(x: DArray, rowvar: bool, transpose_1row: bool) -> DArray:
    """``x`` as (variables, observations)."""
    ndim = x.ndim
    x = atleast_2d(x)
    if not rowvar and (ndim != 1 if not transpose_1row else x.shape[0] != 1):
        x = permute_dims(x, (1, 0))
    return x


@numpy_function(np.cov)
def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof: int | None = None, fweights=None,
        aweights=None, *, dtype=None) -> DArray:
    """Covariance matrix (``numpy.cov``): rows are variables (``rowvar=False``: columns), normalised by
    ``N - ddof`` (``ddof`` defaults to 1, or 0 with ``bias=True``); optional ``fweights``/``aweights``.

    The centred data's product with its conjugate transpose runs as
    :func:`darray.matmul`: with observations cut over the ranks, local products
    and one allreduce of the small (variables x variables) result.

    Examples
    --------
    >>> import darray as da
    >>> cov(da.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).gather().tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    if ddof is not None and ddof != int(ddof):
        raise ValueError(message(numpy_name("cov"), "ddof must be integer", ddof))
    like = first_darray(m, y, fweights, aweights)
    x = darray_of("cov", m, like)
    if x.ndim > 2:
        raise ValueError(message(numpy_name("cov"), "m has more than 2 dimensions", x.shape, "a 1-d or 2-d array"))
    yv = None
    if y is not None:
        yv = darray_of("cov", y, like)
        if yv.ndim > 2:
            raise ValueError(message(numpy_name("cov"), "y has more than 2 dimensions", yv.shape, "a 1-d or 2-d array"))
    if dtype is None:
        dtype = np.result_type(x.dtype, *([yv.dtype] if yv is not None else []), np.float64)
    X = _rows(astype(x, dtype), rowvar, False)
    if X.shape[0] == 0:
        return reshape(zeros(0, dtype=np.float64, comm=X.comm, device=X.device, split=None), (0, 0))
    if yv is not None:
        X = concatenate("cov", [X, _rows(astype(yv, dtype), rowvar, True)], 0)
    if ddof is None:
        ddof = 0 if bias else 1
    nobs = X.shape[1]
    w = aw = None
    if fweights is not None:
        w = _check_weights("cov", "fweights", fweights, nobs, X, integral=True)
    if aweights is not None:
        aw = _check_weights("cov", "aweights", aweights, nobs, X, integral=False)
        w = aw if w is None else w * aw
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = float(real(w_sum[0]))  # real weights: a real sum
    if w is None:
        fact = nobs - ddof
    elif ddof == 0:
        fact = w_sum
    elif aw is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * float(_sum(w * aw)) / w_sum
    if fact <= 0:
        warnings.warn("numpy.cov: degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    X = X - avg[:, None]
    X_T = permute_dims(X * w[None, :] if w is not None else X, (1, 0))
    if X_T.dtype.kind == "c":
        X_T = conj(X_T)
    with np.errstate(divide="ignore"):
        scale = np.true_divide(1, fact)
    c = matmul(X, X_T) * float(scale)
    ones = tuple(i for i, n in enumerate(c.shape) if n == 1)
    return squeeze(c, axis=ones) if ones else c


def _clip_parts(block: np.ndarray) -> np.ndarray:
    out = block.copy()
    np.clip(out.real, -1, 1, out=out.real)
    np.clip(out.imag, -1, 1, out=out.imag)
    return out


@numpy_function(np.corrcoef)
def corrcoef(x, y=None, rowvar: bool = True, bias=np._NoValue, ddof=np._NoValue, *, dtype=None) -> DArray:
    """Pearson correlation coefficients (``numpy.corrcoef``): :func:`cov` scaled by the standard deviations,
    clipped to [-1, 1] (real and imaginary parts separately). ``bias``/``ddof`` have no effect (deprecated in NumPy).

    Examples
    --------
    >>> import darray as da
    >>> corrcoef(da.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).gather().tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    if bias is not np._NoValue or ddof is not np._NoValue:
        warnings.warn("numpy.corrcoef: bias and ddof have no effect and are deprecated", DeprecationWarning,
                      stacklevel=2)
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:  # one variable: nan for nan, inf or 0, else 1
        with np.errstate(divide="ignore", invalid="ignore"):
            return c / c
    d = _linalg.diagonal(c)
    stddev = sqrt(real(d))
    c = c / stddev[:, None]
    c = c / stddev[None, :]
    if c.dtype.kind == "c":
        return blocks("corrcoef", _clip_parts, c)
    return clip(c, -1.0, 1.0)


# ---------------------------------------------------------------- counting
@numpy_function(np.digitize)
def digitize(x, bins, right: bool = False) -> DArray:
    """Index of the bin of every element of ``x`` (``numpy.digitize``), for small monotonic 1-d ``bins``.

    Elementwise: each rank bins its own block; ``bins`` is held whole by every rank. int64 result.

    Examples
    --------
    >>> import darray as da
    >>> digitize(da.asarray([0.5, 1.5, 3.0]), [0.0, 1.0, 2.0]).gather().tolist()
    [1, 2, 3]
    """
    xd = darray_of("digitize", x, first_darray(bins))
    if xd.dtype.kind == "c":
        raise TypeError(message(numpy_name("digitize"), "x may not be complex", xd.dtype, "a real numeric dtype"))
    b = small("digitize", "bins", bins)
    try:
        np.digitize(np.zeros(1, dtype=xd.dtype), b, right)
    except (TypeError, ValueError) as exc:
        raise type(exc)(message(numpy_name("digitize"), str(exc), b.shape, "monotonic 1-d bins")) from None
    return blocks("digitize", lambda block: np.digitize(block, b, right).astype(np.int64, copy=False), xd)


@numpy_function(np.bincount)
def bincount(x, /, weights=None, minlength: int = 0) -> DArray:
    """Occurrences (or sums of ``weights``) of every value ``0..max(x)`` of non-negative ints (``numpy.bincount``).

    Cost: two scalar allreduces (min, max), a local ``numpy.bincount`` per
    rank and one allreduce of the ``max(max(x) + 1, minlength)`` counts. The
    result (int64, float64 with weights) is replicated on every rank.

    Examples
    --------
    >>> import darray as da
    >>> bincount(da.asarray([0, 1, 1, 3])).gather().tolist()
    [1, 2, 0, 1]
    """
    xd = darray_of("bincount", x, first_darray(weights))
    if xd.ndim != 1:
        raise ValueError(message(numpy_name("bincount"), "x must be 1-d", xd.shape, "a 1-d array of non-negative ints"))
    if xd.dtype.kind not in "biu":  # NumPy 2 also takes uint64 (values past int64's range count as negative)
        raise TypeError(message(numpy_name("bincount"), f"cannot cast array data from {xd.dtype} to int64 according "
                                "to the rule 'safe'", xd.dtype, "an integer or boolean dtype"))
    if minlength is None or isinstance(minlength, bool) or not isinstance(minlength, numbers.Integral):
        raise TypeError(message(numpy_name("bincount"), "minlength must be an integer", minlength, "an int >= 0"))
    if minlength < 0:
        raise ValueError(message(numpy_name("bincount"), "'minlength' must not be negative", minlength, "an int >= 0"))
    w = None
    if weights is not None:
        w = darray_of("bincount", weights, xd)
        if w.shape != xd.shape:
            raise ValueError(message(numpy_name("bincount"), "the weights and list don't have the same length",
                                     (w.shape, xd.shape), "weights of x's shape"))
        if not np.can_cast(w.dtype, np.float64, "safe"):
            raise TypeError(message(numpy_name("bincount"), f"cannot cast weights from {w.dtype} to float64 according "
                                    "to the rule 'safe'", w.dtype, "real weights"))
    if xd.size == 0:  # as NumPy: zeros(minlength) of intp, with or without weights
        return zeros(int(minlength), dtype=np.int64, comm=xd.comm, device=xd.device, split=None)
    length = int(minlength)
    xi = astype(xd, np.int64) if xd.dtype == np.bool_ else xd
    top = int(_max(xi))
    if (xd.dtype.kind == "i" and int(_min(xi)) < 0) or top > np.iinfo(np.intp).max:
        raise ValueError(message(numpy_name("bincount"), "'list' argument must have no negative elements", None,
                                 "values in [0, 2**63)"))
    length = max(length, top + 1)
    layout = xd.layout.without_halo()
    block = to_numpy(xd.local).astype(np.intp, copy=False)
    wblock = None if w is None else to_numpy(local_operand(numpy_name("bincount"), w, layout, xd)).astype(np.float64)
    replicated = xd.layout.is_replicated
    if not replicated and not owner(xd):  # a copy of a block that another rank counts
        block = block[:0]
        wblock = None if wblock is None else wblock[:0]
    # one dtype on every rank before the allreduce (an empty block's weighted bincount is intp in NumPy)
    counts = np.bincount(block, weights=wblock, minlength=length).astype(np.float64 if w is not None else np.int64)
    if not replicated:
        counts = to_numpy(xd.comm.allreduce(counts, "sum"))
    return asarray(counts, split=None, comm=xd.comm, device=xd.device)
