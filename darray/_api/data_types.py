"""Data type functions and objects (Array API chapter "Data Types"); dtypes are NumPy dtypes."""

from __future__ import annotations

import numpy as np

from .._core import DArray, to_numpy_dtype
from .._core import astype as _core_astype
from .._errors import message, names_errors

__all__ = ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"]


def _dtype_of(x):
    if isinstance(x, DArray):
        return x.dtype
    if not isinstance(x, (str, np.dtype, type)) and not hasattr(x, "dtype"):
        raise TypeError(message("dtype", "expected a dtype or an array", type(x).__name__))
    return to_numpy_dtype(x.dtype if hasattr(x, "dtype") and not isinstance(x, (np.dtype, type)) else x)


@names_errors("can_cast")
def can_cast(from_, to, /) -> bool:
    """Whether ``from_`` (a dtype or DArray) casts to ``to`` under the promotion rules."""
    return bool(np.can_cast(_dtype_of(from_), to_numpy_dtype(to), casting="safe"))


class finfo_object:
    """Machine limits of a floating-point dtype: the Array API's fields, NumPy's others.

    ``bits`` is an ``int``; ``eps``, ``max``, ``min`` and ``smallest_normal`` are
    Python ``float``s (the standard's types; ``numpy.finfo`` gives NumPy scalars);
    ``dtype`` is the real floating-point dtype (``float32`` for ``complex64``).
    NumPy's other fields (``tiny``, ``resolution``, ``precision``, ...) come
    from ``numpy.finfo`` unchanged.
    """

    __slots__ = ("_numpy", "bits", "eps", "max", "min", "smallest_normal", "dtype")

    def __init__(self, limits: np.finfo) -> None:
        self._numpy = limits
        self.bits = int(limits.bits)
        self.eps = float(limits.eps)
        self.max = float(limits.max)
        self.min = float(limits.min)
        self.smallest_normal = float(limits.smallest_normal)
        self.dtype = limits.dtype

    def __getattr__(self, name: str):
        return getattr(object.__getattribute__(self, "_numpy"), name)

    def __eq__(self, other) -> bool:
        return isinstance(other, finfo_object) and other.dtype == self.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(bits={self.bits}, eps={self.eps!r}, max={self.max!r}, min={self.min!r}, "
                f"smallest_normal={self.smallest_normal!r}, dtype={self.dtype})")

    __str__ = __repr__


@names_errors("finfo")
def finfo(type, /) -> finfo_object:
    """Machine limits of a floating-point dtype or array (Array API fields as Python numbers).

    Examples
    --------
    >>> import darray as da
    >>> f = da.finfo(da.complex64)
    >>> f.bits, f.eps, f.dtype
    (32, 1.1920928955078125e-07, dtype('float32'))
    >>> float(da.finfo(da.float64).tiny) == da.finfo(da.float64).smallest_normal  # NumPy's fields too
    True
    """
    dtype = _dtype_of(type)
    if dtype.kind not in "fc":
        raise ValueError(message("finfo", "not a floating-point dtype", dtype, "float32/64 or complex64/128"))
    return finfo_object(np.finfo(dtype))


@names_errors("iinfo")
def iinfo(type, /):
    """Machine limits of an integer dtype (``numpy.iinfo``)."""
    dtype = _dtype_of(type)
    if dtype.kind not in "iu":
        raise ValueError(message("iinfo", "not an integer dtype", dtype, "an int or uint dtype"))
    return np.iinfo(dtype)


@names_errors("isdtype")
def isdtype(dtype, kind) -> bool:
    """Whether ``dtype`` is of ``kind`` (a dtype, a kind name like ``"real floating"``, or a tuple)."""
    if isinstance(kind, tuple):
        kind = tuple(k if isinstance(k, str) else to_numpy_dtype(k) for k in kind)
    elif not isinstance(kind, str):
        kind = to_numpy_dtype(kind)
    return bool(np.isdtype(to_numpy_dtype(dtype), kind))


@names_errors("result_type")
def result_type(*arrays_and_dtypes):
    """The promoted dtype of DArrays, dtypes and Python scalars."""
    if not arrays_and_dtypes:
        raise ValueError(message("result_type", "needs at least one array or dtype", 0))
    args = []
    for a in arrays_and_dtypes:
        if isinstance(a, np.generic):  # NumPy scalars carry their dtype
            args.append(a.dtype)
        elif isinstance(a, (bool, int, float, complex)):
            args.append(a)
        else:
            args.append(_dtype_of(a))
    if all(isinstance(a, (bool, int, float, complex)) for a in args):
        raise ValueError(message("result_type", "needs at least one array or dtype", arrays_and_dtypes))
    return np.result_type(*args)


@names_errors("astype")
def astype(x, dtype, /, *, copy: bool = True, device=None) -> DArray:
    """``x`` converted to ``dtype``, in the same layout."""
    if not isinstance(x, DArray):
        raise TypeError(message("astype", "expected a DArray", type(x).__name__))
    from .._core.dtypes import check_dtype

    check_dtype("astype", dtype)
    return _core_astype(x, dtype, copy=copy, device=device)
