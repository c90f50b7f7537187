"""NumPy's creation functions outside the standard: ``array``, ranges, windows, triangle indices, Vandermonde matrices.

Each is built from darray's distributed pieces, with no gather:
:func:`array` is :func:`darray.asarray` with NumPy's ``copy=True`` and ``ndmin``;
:func:`logspace`/:func:`geomspace` are ``base ** linspace`` blockwise;
triangle indices are :func:`darray.nonzero` of a :func:`darray.tri` built
block by block; the windows (:func:`hanning`, :func:`kaiser`, ...) are NumPy's formulas on a
distributed :func:`darray.arange`; :func:`vander` raises the (distributed) column of ``x`` to
a replicated row of powers, so the matrix is cut like ``x``.

Examples
--------
>>> import darray as np
>>> np.logspace(0, 2, 3).gather().tolist()
[1.0, 10.0, 100.0]
>>> [i.gather().tolist() for i in np.tril_indices(2)]
[[0, 1, 1], [0, 0, 1]]
"""

from __future__ import annotations

import numbers

import numpy

from ..._core import DArray
from ..._core.protocols import implements
from ..._errors import message, names_errors
from ..creation import arange, as_darray, asarray, linspace, ones, tri
from ..data_types import astype
from ..elementwise import cos, logical_not, maximum, pow as _pow, sqrt
from ..manipulation import reshape
from ..searching import nonzero, where
from ._common import integer, numpy_name
from .mathematical import i0
from .products import diag

__all__ = ["array", "bartlett", "blackman", "diag_indices", "diag_indices_from", "diagflat", "geomspace", "hamming",
           "hanning", "kaiser", "logspace", "mask_indices", "tril_indices", "tril_indices_from", "triu_indices",
           "triu_indices_from", "vander"]


def _scalar(func: str, name: str, value):
    if isinstance(value, (DArray, numpy.ndarray)) and value.ndim == 0:  # NumPy takes 0-d arrays
        value = value.item()
    if not isinstance(value, (numbers.Number, numpy.generic)) or isinstance(value, bool):
        raise TypeError(message(func, f"{name} must be a number", value, "a scalar (array start/stop: not supported)"))
    return value


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, **layout) -> DArray:
    """``base ** linspace(start, stop, num)`` (``numpy.logspace``), block by block; layout keywords as linspace."""
    _scalar("logspace", "start", start), _scalar("logspace", "stop", stop), _scalar("logspace", "base", base)
    y = linspace(start, stop, num, endpoint, axis=axis, **layout)
    out = _pow(numpy.asarray(base, dtype=y.dtype)[()] if not isinstance(base, complex) else base, y)
    return out if dtype is None else out.astype(dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0, **layout) -> DArray:
    """Numbers spaced evenly on a log scale from ``start`` to ``stop`` (``numpy.geomspace``), block by block.

    NumPy's algorithm: the endpoints are exactly ``start`` and ``stop``;
    both negative gives negative numbers; complex endpoints follow the
    logarithmic spiral; endpoints of opposite signs give NaNs, as in NumPy.

    >>> import darray as np
    >>> np.geomspace(1, 1000, 4).gather().round(9).tolist()
    [1.0, 10.0, 100.0, 1000.0]
    """
    start, stop = _scalar("geomspace", "start", start), _scalar("geomspace", "stop", stop)
    if start == 0 or stop == 0:
        raise ValueError(message("geomspace", "geometric sequence cannot include zero", (start, stop),
                                 "non-zero start and stop"))
    work = numpy.result_type(start, stop, float)
    first, last = numpy.asarray(start, dtype=work)[()], numpy.asarray(stop, dtype=work)[()]
    sign = 1
    if work.kind != "c" and first < 0 and last < 0:
        first, last, sign = -first, -last, -1
    out = logspace(numpy.log10(first), numpy.log10(last), num, endpoint, 10.0, axis=axis, **layout)
    if num > 0:
        out[0] = first
        if endpoint and num > 1:
            out[num - 1] = last
    if sign < 0:
        out = -out
    return out if dtype is None else out.astype(dtype)


@names_errors("tril_indices")
def tril_indices(n, k=0, m=None, **layout) -> tuple[DArray, DArray]:
    """Row and column indices of the lower triangle of an ``(n, m)`` array (``numpy.tril_indices``).

    ``nonzero`` of a distributed :func:`darray.tri`: distributed results, in NumPy's (row-major) order.
    """
    return nonzero(tri(n, m, k, dtype=bool, **layout))


@names_errors("triu_indices")
def triu_indices(n, k=0, m=None, **layout) -> tuple[DArray, DArray]:
    """Row and column indices of the upper triangle of an ``(n, m)`` array (``numpy.triu_indices``)."""
    return nonzero(logical_not(tri(n, m, k - 1, dtype=bool, **layout)))


def _matrix_shape(func: str, arr) -> tuple[int, int]:
    shape = arr.shape if isinstance(arr, (DArray, numpy.ndarray)) else numpy.shape(arr)
    if len(shape) != 2:
        raise ValueError(message(func, "input array must be 2-d", shape, "a 2-d array"))
    return shape


def tril_indices_from(arr, k=0) -> tuple[DArray, DArray]:
    """:func:`tril_indices` for the shape of the 2-d ``arr`` (metadata only)."""
    n, m = _matrix_shape("tril_indices_from", arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr, k=0) -> tuple[DArray, DArray]:
    """:func:`triu_indices` for the shape of the 2-d ``arr`` (metadata only)."""
    n, m = _matrix_shape("triu_indices_from", arr)
    return triu_indices(n, k, m)


@names_errors("mask_indices")
def mask_indices(n, mask_func, k=0) -> tuple[DArray, DArray]:
    """Indices where ``mask_func(ones((n, n)), k)`` is non-zero (``numpy.mask_indices``), e.g. ``darray.triu``."""
    return nonzero(mask_func(ones((n, n), dtype=int), k))


def diag_indices(n, ndim=2) -> tuple[DArray, ...]:
    """Indices of the main diagonal of an ``n``-wide ``ndim``-d array: ``ndim`` times ``arange(n)``."""
    for name, value in (("n", n), ("ndim", ndim)):
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            raise TypeError(message("diag_indices", f"{name} must be an integer", value))
    idx = arange(n)
    return (idx,) * ndim


def diag_indices_from(arr) -> tuple[DArray, ...]:
    """:func:`diag_indices` for ``arr``, whose dimensions must all be equal (metadata only)."""
    shape = arr.shape if isinstance(arr, (DArray, numpy.ndarray)) else numpy.shape(arr)
    if len(shape) < 2:
        raise ValueError(message("diag_indices_from", "input array must be at least 2-d", shape))
    if len(set(shape)) != 1:
        raise ValueError(message("diag_indices_from", "all dimensions of input must be of equal length", shape))
    return diag_indices(shape[0], len(shape))


def vander(x, N=None, increasing: bool = False) -> DArray:  # NumPy's name
    """The Vandermonde matrix of the 1-d ``x`` (``numpy.vander``): cut along rows like ``x``.

    >>> import darray as np
    >>> np.vander([1, 2, 3], 3).gather().tolist()
    [[1, 1, 1], [4, 2, 1], [9, 3, 1]]
    """
    x = as_darray("vander", x)
    if x.ndim != 1:
        raise ValueError(message("vander", "x must be a one-dimensional array or sequence", x.shape))
    n = x.shape[0] if N is None else N
    if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 0:
        raise ValueError(message("vander", "N must be a non-negative integer", N))
    powers = numpy.arange(n, dtype=numpy.int64 if x.dtype.kind in "iub" else x.dtype)
    if not increasing:
        powers = powers[::-1].copy()
    base = x.astype(numpy.int64) if x.dtype.kind == "b" else x
    row = asarray(powers, split=None, comm=x.comm, device=x.device)
    return _pow(reshape(base, (-1, 1)), reshape(row, (1, -1)))



def diagflat(v, k=0) -> DArray:
    """A 2-d array with the flattened ``v`` on its ``k``-th diagonal (``numpy.diagflat``).

    >>> import darray as np
    >>> np.diagflat([[1, 2]], 1).gather().tolist()
    [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    """
    return diag(reshape(as_darray("diagflat", v), (-1,)), k)


def _window(func: str, M, weights) -> DArray:
    """NumPy's window of length ``M``: ``weights(n / (M - 1))`` at ``n = 1-M, 3-M, ..., M-1`` (float64)."""
    if not isinstance(M, (numbers.Integral, numpy.integer)) or isinstance(M, bool):
        raise TypeError(message(func, "M must be an integer", M))
    if M < 1:
        return asarray(numpy.zeros(0))
    if M == 1:
        return ones(1)
    return weights(arange(1 - int(M), int(M), 2, numpy.float64) / (int(M) - 1))


def bartlett(M) -> DArray:
    """The Bartlett (triangular) window of length ``M`` (``numpy.bartlett``), distributed.

    >>> import darray as np
    >>> np.bartlett(5).gather().tolist()
    [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    return _window("bartlett", M, lambda t: where(t <= 0, 1 + t, 1 - t))


def blackman(M) -> DArray:
    """The Blackman window of length ``M`` (``numpy.blackman``), distributed."""
    return _window("blackman", M, lambda t: 0.42 + 0.5 * cos(numpy.pi * t) + 0.08 * cos(2.0 * numpy.pi * t))


def hamming(M) -> DArray:
    """The Hamming window of length ``M`` (``numpy.hamming``), distributed."""
    return _window("hamming", M, lambda t: 0.54 + 0.46 * cos(numpy.pi * t))


def hanning(M) -> DArray:
    """The Hann window of length ``M`` (``numpy.hanning``), distributed."""
    return _window("hanning", M, lambda t: 0.5 + 0.5 * cos(numpy.pi * t))


@names_errors("numpy.array")
def array(object, dtype=None, *, copy: bool | None = True, order: str | None = "K", subok: bool = False,
          ndmin: int = 0, like=None, device=None, split="auto", grid=None, sizes=None, halo=0, boundary="none",
          comm=None) -> DArray:
    """A DArray from ``object`` (``numpy.array``): :func:`darray.asarray` with ``copy=True`` and ``ndmin``.

    ``object`` is a DArray or global data every rank passes identically;
    ``split``/``grid``/``sizes``/``halo``/``boundary``/``comm``/``device`` as for
    :func:`darray.asarray` (applied after ``ndmin`` prepends ones). ``copy=False``
    raises ValueError when a copy cannot be avoided, as in NumPy 2. ``order`` and
    ``subok`` do not change a DArray (its logical order is C order);
    ``numpy.array(data, like=x)`` dispatches here.

    Examples
    --------
    >>> import darray as da
    >>> array([1, 2, 3], ndmin=2).shape
    (1, 3)
    """
    if order not in ("K", "A", "C", "F", None):
        raise ValueError(message(numpy_name("array"), "order must be one of 'C', 'F', 'A', or 'K'", order))
    ndmin = integer("array", "ndmin", ndmin)
    layout_given = (split != "auto" or grid is not None or sizes is not None or halo or boundary != "none")
    layout = dict(split=split, grid=grid, sizes=sizes, halo=halo, boundary=boundary)
    if isinstance(object, DArray):
        x = object
        if copy is False and ((dtype is not None and numpy.dtype(dtype) != x.dtype) or layout_given
                              or x.ndim < ndmin):
            raise ValueError(message(numpy_name("array"), "unable to avoid copy while creating an array as requested",
                                     "copy=False", "copy=None or True (a new dtype, layout or ndim needs a copy)"))
        if x.ndim < ndmin:
            x = x[(None,) * (ndmin - x.ndim)]
        out = asarray(x, dtype=dtype, **layout) if layout_given else asarray(x, dtype=dtype)
        if copy and out is object:
            out = astype(out, out.dtype, copy=True)
        return out
    try:
        data = numpy.array(object, dtype=dtype, copy=copy, ndmin=ndmin)
    except ValueError as exc:
        raise ValueError(message(numpy_name("array"), str(exc), type(object).__name__)) from None
    if comm is None and isinstance(like, DArray):
        comm = like.comm
    # (numpy.array copied already where a copy was asked for: the blocks may be views of its fresh array)
    return asarray(data, copy=False if copy is False else None, device=device, comm=comm, **layout)


implements(numpy.array)(lambda object, dtype=None, **kw: array(object, dtype, **kw))


def kaiser(M, beta) -> DArray:  # NumPy's name
    """The Kaiser window of length ``M`` and shape ``beta`` (``numpy.kaiser``), distributed like ``arange(M)``.

    ``i0(beta * sqrt(1 - t**2)) / i0(beta)`` at ``t = (2n - M + 1) / (M - 1)``,
    elementwise on each block.

    Examples
    --------
    >>> import darray as da
    >>> [round(v, 6) for v in kaiser(3, 0.0).gather().tolist()]
    [1.0, 1.0, 1.0]
    """
    if isinstance(beta, bool) or not isinstance(beta, (numbers.Real, numpy.floating, numpy.integer)):
        raise TypeError(message("kaiser", "beta must be a real number", beta))
    norm = float(numpy.i0(float(beta)))
    return _window("kaiser", M, lambda t: i0(float(beta) * sqrt(maximum(1.0 - t * t, 0.0))) / norm)
