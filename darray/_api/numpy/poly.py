"""NumPy's legacy polynomials for DArrays: ``polyval``, ``polyfit``, ``poly1d``, ``polyadd``, ``roots``, ...

What moves, per function:

- ``polyval``: Horner's scheme on each block of ``x`` (one local
  ``numpy.polyval``), no communication; the coefficients are held whole by
  every rank (a distributed DArray there is allgathered).
- ``polyfit``: a tall-skinny QR. Each rank factors its rows of the weighted
  ``[vander(x) | y]`` (``numpy.linalg.qr``, ``R`` of at most
  ``(deg + 1 + K)**2`` values); one allgather of the ``R`` factors over the
  ranks that cut the rows; every rank then solves the small stacked system as
  ``numpy.polyfit`` does (``lstsq`` of the column-scaled Vandermonde matrix
  with ``rcond``). ``R``'s Gram matrix is the global one, so the solution, the
  singular values, the rank and the residuals are NumPy's, without squaring
  the condition number as the normal equations would.
- ``polyadd``, ``polysub``, ``polymul``, ``polydiv``, ``polyder``,
  ``polyint``, ``poly``, ``roots``: coefficient vectors are small. DArray
  arguments are gathered whole on every rank, NumPy computes, the result is
  a replicated DArray (``poly`` of a square matrix and ``roots`` solve a small
  eigenvalue problem on every rank). :class:`poly1d` is NumPy's class; DArray
  coefficients are gathered, and evaluating it at a DArray is ``polyval``.

Examples
--------
>>> import darray as da
>>> x = da.linspace(0.0, 1.0, 5)
>>> [round(float(c), 6) + 0.0 for c in da.polyfit(x, 2 * x ** 2 + 1, 2).gather()]
[2.0, 0.0, 1.0]
>>> da.polyval([1.0, 0.0, -1.0], da.asarray([0.0, 2.0])).gather().tolist()
[-1.0, 3.0]
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable

import numpy as np

from ..._backend import to_numpy
from ..._core import DArray, local_operand
from ..._core.protocols import implements
from ..._errors import message
from ..._layout import Layout
from .._common import first_darray
from ..creation import asarray
from ._common import blocks, darray_of, numpy_function, whole, with_axes

__all__ = ["poly", "poly1d", "polyadd", "polyder", "polydiv", "polyfit", "polyint", "polymul", "polysub", "polyval",
           "roots"]


def _replicated(value, like: DArray | None):
    """A small NumPy result as a DArray held by every rank of ``like`` (a ``poly1d`` or Python number as it is)."""
    if isinstance(value, np.poly1d) or not isinstance(value, (np.ndarray, np.generic)):
        return value
    value = np.asarray(value)
    if like is None:
        return asarray(value, split=None)
    return asarray(value, split=None, comm=like.comm, device=like.device)


_SMALL = {  # name: example (the function gathers its DArray arguments, NumPy computes, the result is replicated)
    "polyadd": ">>> da.polyadd(da.asarray([1, 2]), [1, 0, 0]).gather().tolist()\n[1, 1, 2]",
    "polysub": ">>> da.polysub(da.asarray([1, 2]), [1, 0, 0]).gather().tolist()\n[-1, 1, 2]",
    "polymul": ">>> da.polymul(da.asarray([1, 1]), [1, -1]).gather().tolist()\n[1, 0, -1]",
    "polydiv": ">>> [q.gather().tolist() for q in da.polydiv(da.asarray([1.0, 0.0, -1.0]), [1.0, 1.0])]\n"
               "[[1.0, -1.0], [0.0]]",
    "polyder": ">>> da.polyder(da.asarray([1, 1, 1]), 1).gather().tolist()\n[2, 1]",
    "polyint": ">>> da.polyint(da.asarray([3.0, 0.0]), k=1.0).gather().tolist()\n[1.5, 0.0, 1.0]",
    "poly": ">>> da.poly(da.asarray([1.0, -1.0])).gather().tolist()\n[1.0, 0.0, -1.0]",
    "roots": ">>> sorted(round(r, 9) for r in da.roots(da.asarray([1.0, 0.0, -4.0])).gather().tolist())\n[-2.0, 2.0]",
}


def _small_function(name: str, example: str) -> Callable:
    numpy_func = getattr(np, name)

    def function(*args, **kwargs):
        like = first_darray(*args, *kwargs.values())
        result = numpy_func(*(whole(a) for a in args), **{k: whole(v) for k, v in kwargs.items()})
        if isinstance(result, tuple):
            return tuple(_replicated(r, like) for r in result)
        return _replicated(result, like)

    function.__name__ = function.__qualname__ = name
    function.__module__ = __name__
    function.__signature__ = inspect.signature(numpy_func)
    summary = (numpy_func.__doc__ or "").strip().splitlines()[0].rstrip(".")
    function.__doc__ = (f"{summary} (``numpy.{name}``).\n\n    Coefficient vectors are small: DArray arguments are "
                        f"gathered whole on every\n    rank, NumPy computes, and an array result is a replicated "
                        f"DArray (a\n    ``poly1d`` argument gives a ``poly1d``, as NumPy).\n\n    Examples\n    "
                        f"--------\n    >>> import darray as da\n    " + example.replace("\n", "\n    ") + "\n    ")
    return numpy_function(numpy_func)(function)


for _name, _example in _SMALL.items():
    globals()[_name] = _small_function(_name, _example)
del _name, _example


class poly1d(np.poly1d):
    """NumPy's one-dimensional polynomial class (``numpy.poly1d``); DArray coefficients or roots are gathered.

    The coefficients are held whole by every rank. Evaluating at a DArray is
    :func:`polyval` (blockwise, no communication); arithmetic returns NumPy's
    ``poly1d``.

    Examples
    --------
    >>> import darray as da
    >>> p = da.poly1d(da.asarray([1.0, 0.0, 2.0]))
    >>> p(da.asarray([0.0, 1.0, 2.0])).gather().tolist()
    [2.0, 3.0, 6.0]
    """

    def __init__(self, c_or_r, r: bool = False, variable=None):
        super().__init__(whole(c_or_r), r=r, variable=variable)


@implements(np.polyval)
def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x`` (``numpy.polyval``).

    Horner's scheme on each block of ``x``: one local ``numpy.polyval``, no
    communication; ``p`` (small) is held whole by every rank. ``x`` a
    ``poly1d`` composes polynomials, as NumPy.

    Examples
    --------
    >>> import darray as da
    >>> polyval(da.asarray([3.0, 0.0, 1.0]), da.asarray([5.0, 1.0])).gather().tolist()
    [76.0, 4.0]
    """
    like = first_darray(p, x)
    p = whole(p)
    if isinstance(x, np.poly1d) or isinstance(p, np.poly1d):
        return _replicated(np.polyval(p, whole(x)), like)
    p = np.asarray(p)
    if p.ndim != 1:
        raise (TypeError if p.ndim == 0 else ValueError)(message(
            "numpy.polyval", "p must be a 1-d vector of coefficients", p.shape, "a 1-d array"))
    x = darray_of("polyval", x, like)
    return blocks("polyval", lambda block: np.polyval(p, block), x)


def _fit_rows(func: str, x: DArray, y: DArray, w: DArray | None) -> Layout:
    """The 1-d row layout of the fit: cut like the operand whose rows are cut by the most ranks."""
    def parts(a: DArray) -> int:
        g = a.layout.axis_dim[0]
        return a.layout.dims[g] if g is not None else 1

    base = max((a for a in (x, y, w) if a is not None), key=parts)
    lay = base.layout
    split = tuple(s if s == 0 else None for s in lay.split)
    return Layout((x.shape[0],), lay.dims, split, (lay.sizes[0],), (0,), ("none",))


def _fit_checks(func: str, x: DArray, y: DArray, deg, w):
    try:
        order = int(deg) + 1
    except (TypeError, ValueError):
        raise TypeError(message(func, "deg must be an integer", deg)) from None
    if order < 1:
        raise ValueError(message(func, "expected deg >= 0", deg))
    if x.ndim != 1:
        raise TypeError(message(func, "expected 1D vector for x", x.shape))
    if x.size == 0:
        raise TypeError(message(func, "expected non-empty vector for x", x.shape))
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError(message(func, "expected 1D or 2D array for y", y.shape))
    if x.shape[0] != y.shape[0]:
        raise TypeError(message(func, "expected x and y to have same length", (x.shape, y.shape)))
    if x.dtype.kind == "c":
        raise TypeError(message(func, "complex x is not supported", x.dtype, "real x (y may be complex)"))
    if w is not None:
        if w.ndim != 1:
            raise TypeError(message(func, "expected a 1-d array for weights", w.shape))
        if w.shape[0] != y.shape[0]:
            raise TypeError(message(func, "expected w and y to have the same length", (w.shape, y.shape)))
    return order


@implements(np.polyfit)
def polyfit(x, y, deg, rcond=None, full: bool = False, w=None, cov=False):
    """Least-squares polynomial fit of degree ``deg`` (``numpy.polyfit``), distributed over the samples.

    NumPy solves ``lstsq(V / scale, y, rcond)`` for the Vandermonde matrix
    ``V = vander(x, deg + 1)`` (rows weighted by ``w``) with column scales
    ``scale = sqrt(sum(V**2, axis=0))``. Here every rank QR-factors its rows of
    ``[V | y]``, one allgather brings the small ``R`` factors (at most
    ``(deg + 1 + K)**2`` values per rank, ``K`` columns of ``y``) to every
    rank, and the same scaled ``lstsq`` runs on the stacked factors: they have
    ``[V | y]``'s Gram matrix, so the coefficients, singular values, rank and
    residuals are NumPy's (to rounding) without forming the normal equations.
    Results are replicated DArrays (``rank`` an int, ``rcond`` a float).
    Complex ``x`` is refused (``TypeError``); complex ``y`` is fitted.

    Examples
    --------
    >>> import darray as da
    >>> x = da.arange(6.0)
    >>> [round(float(c), 6) for c in polyfit(x, 3.0 * x - 1.0, 1)]
    [3.0, -1.0]
    """
    func = "numpy.polyfit"
    like = first_darray(x, y, w)
    x, y = darray_of("polyfit", x, like), darray_of("polyfit", y, like)
    w = None if w is None else darray_of("polyfit", w, like)
    order = _fit_checks(func, x, y, deg, w)
    xdt = np.result_type(x.dtype, 0.0)
    dtype = np.result_type(np.promote_types(xdt, np.int64), y.dtype, 0.0)  # numpy.vander promotes with int
    n = x.shape[0]
    rcond = n * np.finfo(xdt).eps if rcond is None else rcond
    rows = _fit_rows(func, x, y, w)
    k = order + (y.shape[1] if y.ndim == 2 else 1)
    xl = to_numpy(local_operand(func, x, rows, x)).astype(xdt)
    y_rows = rows if y.ndim == 1 else with_axes(rows, 1, 0, (y.shape[1],))
    yl = to_numpy(local_operand(func, y, y_rows, y)).reshape(xl.shape[0], k - order)
    block = np.concatenate([np.vander(xl, order), yl], axis=1).astype(dtype)
    if w is not None:
        block *= to_numpy(local_operand(func, w, rows, w)).astype(xdt)[:, None]
    r = np.zeros((k, k), dtype)
    if block.shape[0]:
        factor = np.linalg.qr(block, mode="r")
        r[:factor.shape[0]] = factor
    cut = tuple(s == 0 for s in rows.split)
    comm = x.comm.sub(rows.dims, cut) if any(cut) else None
    stacked = np.asarray(comm.allgather(r)).reshape(-1, k) if comm is not None else r
    return _fit_solve(func, stacked, order, n, y.ndim, rcond, full, cov, like)


def _fit_solve(func, stacked, order, n, y_ndim, rcond, full, cov, like):
    """NumPy's scaled lstsq on the stacked R factors; NumPy's return values."""
    lhs, rhs = stacked[:, :order], stacked[:, order:]
    scale = np.sqrt(np.sum(np.abs(lhs) ** 2, axis=0))
    lhs = lhs / scale
    c, _, rank, s = np.linalg.lstsq(lhs, rhs, rcond)
    if rank == order and n > order:
        resids = np.sum(np.abs(rhs - lhs @ c) ** 2, axis=0)
    else:
        resids = np.zeros(0, dtype=s.dtype)
    c = (c.T / scale).T
    if y_ndim == 1:
        c = c[:, 0]
    if rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning, stacklevel=3)
    if full:
        return (_replicated(c, like), _replicated(resids, like), int(rank), _replicated(s, like), rcond)
    if not cov:
        return _replicated(c, like)
    base = np.linalg.inv(lhs.T @ lhs) / np.outer(scale, scale)
    if cov == "unscaled":
        fac = 1
    else:
        if n <= order:
            raise ValueError(message(func, "the number of data points must exceed order to scale the covariance "
                                     "matrix", n, f"more than {order}"))
        fac = resids / (n - order)
    covariance = base * fac if y_ndim == 1 else base[:, :, None] * fac
    return _replicated(c, like), _replicated(covariance, like)
