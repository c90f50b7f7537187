"""NumPy's remaining everyday names: ``ndarray``, type tests, ``as*array``, ``fromiter``, error state.

- :data:`ndarray` is :class:`darray.DArray`: ``isinstance(x, np.ndarray)``
  is True for DArrays under ``import darray as np`` and ``np.ndarray`` works
  in type hints. It is not a constructor (as NumPy advises for
  ``numpy.ndarray`` too): ``np.ndarray(...)`` says which creation function to
  use. A NumPy array is not a darray ``ndarray``.
- :func:`issubdtype`, :func:`promote_types`, :func:`isscalar`, :func:`datetime_data` are NumPy's:
  they look at dtypes and Python objects only (a DArray, even 0-d, is not a
  scalar, as a 0-d ``numpy.ndarray`` is not).
- :func:`iscomplexobj` / :func:`isrealobj` read the replicated dtype; no
  communication. :func:`isreal` / :func:`iscomplex` are elementwise.
- :func:`seterr`, :func:`geterr`, :func:`errstate`, :func:`seterrcall`,
  :func:`geterrcall` are NumPy's: darray's NumPy blocks are computed by
  NumPy on each rank, so NumPy's floating-point error state of that rank
  applies to them (set it on every rank, as every rank runs the same script).
  Other local libraries (torch, CuPy) have no such state and ignore it.

Examples
--------
>>> import darray as np
>>> isinstance(np.zeros(3), np.ndarray), np.iscomplexobj(np.zeros(2, complex))
(True, True)
"""

from __future__ import annotations

import numpy

from numpy import exceptions  # darray raises NumPy's exception types (AxisError, ...)

from ..._core import DArray
from ..._errors import message, names_errors
from ..creation import as_darray, asarray, full_like
from ..elementwise import ceil, floor, imag, isfinite, isinf, logical_and, logical_not, not_equal, real, signbit, sin
from ..elementwise import abs as _abs
from ..elementwise import equal as _equal
from ..searching import where
from ..statistical import all as _all

__all__ = ["False_", "True_", "asanyarray", "asarray_chkfinite", "ascontiguousarray", "asfortranarray", "base_repr",
           "binary_repr", "common_type", "datetime_data", "errstate", "euler_gamma", "exceptions", "fix",
           "format_float_positional", "format_float_scientific", "fromiter", "geterr", "geterrcall", "iscomplex",
           "iscomplexobj", "isneginf", "isposinf", "isreal", "isrealobj", "isscalar", "issubdtype", "iterable",
           "little_endian", "min_scalar_type", "mintypecode", "ndarray", "promote_types", "real_if_close", "seterr",
           "seterrcall", "sinc", "typename"]

#: ``darray.ndarray`` is the DArray class (``isinstance`` and type hints; see the module docstring).
ndarray = DArray

issubdtype = numpy.issubdtype
datetime_data = numpy.datetime_data
promote_types = numpy.promote_types
isscalar = numpy.isscalar
# NumPy's constants and helpers on scalars, strings and dtypes (no array in them): NumPy's own objects.
False_, True_, euler_gamma, little_endian = numpy.False_, numpy.True_, numpy.euler_gamma, numpy.little_endian
typename, mintypecode, iterable = numpy.typename, numpy.mintypecode, numpy.iterable
base_repr, binary_repr = numpy.base_repr, numpy.binary_repr
format_float_positional, format_float_scientific = numpy.format_float_positional, numpy.format_float_scientific
seterr, geterr, errstate = numpy.seterr, numpy.geterr, numpy.errstate
seterrcall, geterrcall = numpy.seterrcall, numpy.geterrcall


@names_errors("asanyarray")
def asanyarray(a, dtype=None, order=None, **kwargs) -> DArray:
    """:func:`darray.asarray` (DArray has no subclasses to keep)."""
    return asarray(a, dtype, order, **kwargs)


@names_errors("ascontiguousarray")
def ascontiguousarray(a, dtype=None, **kwargs) -> DArray:
    """:func:`darray.asarray`: every block of a DArray is C-contiguous already."""
    return asarray(a, dtype, **kwargs)


@names_errors("asfortranarray")
def asfortranarray(a, dtype=None, **kwargs) -> DArray:
    """:func:`darray.asarray`: the same values; blocks stay C-ordered (darray's blocks always are).

    A global array cut into blocks has no memory order of its own; what
    Fortran order buys in NumPy (contiguous columns) is a layout question in
    darray: ``split=1`` cuts columns.
    """
    return asarray(a, dtype, **kwargs)


def fromiter(iter, dtype, count: int = -1, **kwargs) -> DArray:  # NumPy's name
    """A 1-d DArray from an iterable (``numpy.fromiter``).

    Every rank consumes its own iterator (the script runs on every rank, so
    each produces the same values): ``O(count)`` memory per rank while
    reading, then each rank keeps only its block. Layout keywords as
    :func:`darray.asarray`.

    >>> import darray as np
    >>> np.fromiter((i * i for i in range(4)), int).gather().tolist()
    [0, 1, 4, 9]
    """
    if dtype is None:
        raise TypeError(message("fromiter", "dtype is required", dtype, "a dtype"))
    return asarray(numpy.fromiter(iter, dtype=dtype, count=count), **kwargs)


def _dtype_of(func: str, x) -> numpy.dtype:
    """The dtype of a DArray (metadata), or of the numeric data NumPy makes of ``x``; ``TypeError`` otherwise."""
    if isinstance(x, DArray):
        return x.dtype
    dtype = x.dtype if isinstance(getattr(x, "dtype", None), numpy.dtype) else numpy.asarray(x).dtype
    if dtype.kind not in "biufc":
        raise TypeError(message(func, "expected numeric data", dtype, "a DArray, an array or numbers"))
    return dtype


def iscomplexobj(x) -> bool:
    """Whether ``x`` has a complex dtype (from the replicated dtype; no communication)."""
    return _dtype_of("iscomplexobj", x).kind == "c"


def isrealobj(x) -> bool:
    """Whether ``x`` has a non-complex dtype (from the replicated dtype; no communication)."""
    return _dtype_of("isrealobj", x).kind != "c"


def isreal(x) -> DArray:
    """Elementwise: whether the imaginary part is zero (True everywhere for real dtypes).

    >>> import darray as np
    >>> np.isreal([1 + 1j, 2]).gather().tolist()
    [False, True]
    """
    x = as_darray("isreal", x)
    if x.dtype.kind == "c":
        return _equal(imag(x), 0)
    return full_like(x, True, dtype=bool)


def iscomplex(x) -> DArray:
    """Elementwise: whether the imaginary part is non-zero (False everywhere for real dtypes)."""
    x = as_darray("iscomplex", x)
    if x.dtype.kind == "c":
        return not_equal(imag(x), 0)
    return full_like(x, False, dtype=bool)


def common_type(*arrays) -> type:
    """The inexact scalar type common to the arrays (``numpy.common_type``): from their dtypes, no communication.

    Integers count as float64, as in NumPy.

    >>> import darray as np
    >>> np.common_type(np.zeros(2, np.float32), np.arange(3))
    <class 'numpy.float64'>
    """
    is_complex, size = False, 0
    for a in arrays:
        dtype = _dtype_of("common_type", a)
        if dtype.kind not in "iufc":
            raise TypeError(message("common_type", "can't get common type for non-numeric array", dtype,
                                    "integer, float or complex arrays"))
        is_complex |= dtype.kind == "c"
        size = max(size, 8 if dtype.kind in "iu" else dtype.itemsize // (2 if dtype.kind == "c" else 1))
    if size == 0:  # no arrays: NumPy answers float16; darray's smallest float
        size = 4
    return {(False, 4): numpy.float32, (False, 8): numpy.float64, (True, 4): numpy.complex64,
            (True, 8): numpy.complex128}[is_complex, size]


def min_scalar_type(a) -> numpy.dtype:
    """``numpy.min_scalar_type``: a scalar's smallest dtype; an array of 1+ dimensions keeps its dtype, as in NumPy.

    A 0-d DArray is read (one value, no gather of anything larger).
    """
    if isinstance(a, DArray):
        return a.dtype if a.ndim else numpy.min_scalar_type(a._scalar(lambda v: v, "min_scalar_type"))
    found = numpy.min_scalar_type(a)
    if found.kind not in "biufc":
        raise TypeError(message("min_scalar_type", "expected numeric data", found, "a DArray, an array or a number"))
    return found


def asarray_chkfinite(a, dtype=None, order=None, **kwargs) -> DArray:
    """:func:`darray.asarray`, refusing infinities and NaNs (``ValueError`` on every rank; one reduction).

    >>> import darray as np
    >>> np.asarray_chkfinite([1.0, 2.0]).shape
    (2,)
    """
    x = asarray(a, dtype, order, **kwargs)
    if x.dtype.kind in "fc" and not bool(_all(isfinite(x))):
        raise ValueError(message("asarray_chkfinite", "array must not contain infs or NaNs", "a non-finite value",
                                 "finite values"))
    return x


def real_if_close(a, tol=100) -> DArray:
    """The real part if every imaginary part is within ``tol`` machine epsilons of zero (one reduction).

    >>> import darray as np
    >>> np.real_if_close([2.1 + 4e-14j, 5.2 + 3e-15j], tol=1000).dtype
    dtype('float64')
    """
    x = as_darray("real_if_close", a)
    if x.dtype.kind != "c":
        return x
    eps = tol * numpy.finfo(x.dtype).eps if tol > 1 else tol
    return real(x) if bool(_all(_abs(imag(x)) < eps)) else x


def fix(x) -> DArray:
    """Round toward zero, keeping the dtype (``numpy.fix``); elementwise.

    >>> import darray as np
    >>> np.fix([2.5, -2.5]).gather().tolist()
    [2.0, -2.0]
    """
    x = as_darray("fix", x)
    return where(signbit(x), ceil(x), floor(x)) if x.dtype.kind == "f" else floor(x)


def _real_only(func: str, x) -> DArray:
    x = as_darray(func, x)
    if x.dtype.kind == "c":
        raise TypeError(message(func, "not supported for complex values because it would be ambiguous", x.dtype,
                                "a real dtype"))
    return x


def isposinf(x) -> DArray:
    """Elementwise: whether the value is +inf (``numpy.isposinf``); complex input raises ``TypeError``."""
    x = _real_only("isposinf", x)
    return logical_and(isinf(x), logical_not(signbit(x))) if x.dtype.kind == "f" else full_like(x, False, dtype=bool)


def isneginf(x) -> DArray:
    """Elementwise: whether the value is -inf (``numpy.isneginf``); complex input raises ``TypeError``."""
    x = _real_only("isneginf", x)
    return logical_and(isinf(x), signbit(x)) if x.dtype.kind == "f" else full_like(x, False, dtype=bool)


def sinc(x) -> DArray:
    """``sin(pi x) / (pi x)``, 1 at 0 (``numpy.sinc``); elementwise, integers computed in float64.

    >>> import darray as np
    >>> np.sinc([0.0, 0.5]).gather().round(6).tolist()
    [1.0, 0.63662]
    """
    x = as_darray("sinc", x)
    if x.dtype.kind not in "fc":
        x = x.astype(numpy.float64)
    y = numpy.pi * where(_equal(x, 0), 1.0e-20, x)
    return sin(y) / y
