"""NumPy's remaining everyday names: ``ndarray``, type tests, ``as*array``, ``fromiter``, error state.

- :data:`ndarray` is :class:`darray.DArray`: ``isinstance(x, np.ndarray)``
  is True for DArrays under ``import darray as np`` and ``np.ndarray`` works
  in type hints. It is not a constructor (as NumPy advises for
  ``numpy.ndarray`` too): ``np.ndarray(...)`` says which creation function to
  use. A NumPy array is not a darray ``ndarray``.
- :func:`issubdtype`, :func:`promote_types`, :func:`isscalar` are NumPy's:
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

from .._core import DArray
from .._errors import message
from .creation import as_darray, asarray, full_like
from .elementwise import imag, not_equal
from .elementwise import equal as _equal

__all__ = ["asanyarray", "ascontiguousarray", "asfortranarray", "errstate", "fromiter", "geterr", "geterrcall",
           "iscomplex", "iscomplexobj", "isreal", "isrealobj", "isscalar", "issubdtype", "ndarray", "promote_types",
           "seterr", "seterrcall"]

#: ``darray.ndarray`` is the DArray class (``isinstance`` and type hints; see the module docstring).
ndarray = DArray

issubdtype = numpy.issubdtype
promote_types = numpy.promote_types
isscalar = numpy.isscalar
seterr, geterr, errstate = numpy.seterr, numpy.geterr, numpy.errstate
seterrcall, geterrcall = numpy.seterrcall, numpy.geterrcall


def asanyarray(a, dtype=None, order=None, **kwargs) -> DArray:
    """:func:`darray.asarray` (DArray has no subclasses to keep)."""
    return asarray(a, dtype, order, **kwargs)


def ascontiguousarray(a, dtype=None, **kwargs) -> DArray:
    """:func:`darray.asarray`: every block of a DArray is C-contiguous already."""
    return asarray(a, dtype, **kwargs)


def asfortranarray(a, dtype=None, **kwargs) -> DArray:
    """:func:`darray.asarray`: the same values; blocks stay C-ordered (darray's blocks always are).

    A global array cut into blocks has no memory order of its own; what
    Fortran order buys in NumPy (contiguous columns) is a layout question in
    darray: ``split=1`` cuts columns.
    """
    return asarray(a, dtype, **kwargs)


def fromiter(iter, dtype, count: int = -1, **kwargs) -> DArray:  # noqa: A002 - NumPy's name
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
    if isinstance(x, DArray):
        return x.dtype
    return numpy.asarray(x).dtype


def iscomplexobj(x) -> bool:
    """Whether ``x`` has a complex dtype (from the replicated dtype; no communication)."""
    return _dtype_of("iscomplexobj", x).kind == "c"


def isrealobj(x) -> bool:
    """Whether ``x`` has a non-complex dtype (from the replicated dtype; no communication)."""
    return not iscomplexobj(x)


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
