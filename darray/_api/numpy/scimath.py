"""NumPy's ``numpy.emath`` (``numpy.lib.scimath``) for DArrays: results complex where the input leaves the real domain.

One allreduce of a flag says whether any element on any rank is out of the
real domain (then the whole array is complex, as NumPy's is); then
elementwise.

Examples
--------
>>> import darray as da
>>> da.emath.sqrt(da.asarray([-4.0, 4.0])).gather().tolist()
[2j, (2+0j)]
"""

from __future__ import annotations

import types
from collections.abc import Callable

import numpy as np

from ..._core import DArray
from ..._core.protocols import implements
from .. import elementwise as _elementwise
from .._common import first_darray
from ..creation import as_darray
from ..data_types import astype
from ..elementwise import abs as _abs, log, pow
from ..statistical import any as _any_of

__all__ = ["emath"]


def _to_complex(x: DArray) -> DArray:
    small = x.dtype in (np.float16, np.float32, np.int8, np.int16, np.uint8, np.uint16, np.complex64)
    return astype(x, np.complex64 if small else np.complex128)


def _any(x: DArray) -> bool:
    return bool(_any_of(x))  # one allreduce of a flag (nothing when x is replicated)


def _fix(func: str, x, out_of_domain: Callable[[DArray], DArray], like=None, ufunc=None) -> DArray:
    """``x`` as a DArray, complex if any real element anywhere is out of the real domain (NumPy's rule).

    Else, for ``ufunc``, in the floating dtype NumPy's loop takes (``float32`` for ``int16``, as ``numpy.sqrt``;
    ``float16`` for 8-bit integers, ``float32`` where the local library has no float16).
    """
    x = as_darray(func, x, like)
    if x.dtype.kind == "c":
        return x
    if _any(out_of_domain(x)):
        return _to_complex(x)
    loop = x.dtype if ufunc is None else ufunc.resolve_dtypes((x.dtype, None))[0]
    if loop == np.float16 and not hasattr(x._xp, "float16"):  # (array-api-strict has no float16)
        loop = np.dtype(np.float32)
    return x if loop == x.dtype else astype(x, loop)


def _negative(x: DArray) -> DArray:
    return x < 0


def _beyond_one(x: DArray) -> DArray:
    return _abs(x) > 1


def _emath_unary(name: str, darray_name: str, check: Callable, example: str) -> Callable:
    numpy_function = getattr(np.emath, name)

    def function(x):
        return getattr(_elementwise, darray_name)(_fix(f"numpy.emath.{name}", x, check, ufunc=getattr(np, name)))

    function.__name__ = function.__qualname__ = name
    function.__module__ = "darray.emath"
    summary = (numpy_function.__doc__ or "").strip().splitlines()[0].rstrip(".")
    function.__doc__ = (f"{summary} (``numpy.emath.{name}``), elementwise; complex for the whole array if any "
                        f"element\n    is out of the real domain (one allreduce of a flag).\n\n    Examples\n    "
                        f"--------\n    >>> import darray as da\n    {example}\n    ")
    return implements(numpy_function)(function)


def _logn(n, x) -> DArray:
    """The logarithm of ``x`` in base ``n`` (``numpy.emath.logn``), elementwise; complex where NumPy's is.

    Examples
    --------
    >>> import darray as da
    >>> da.emath.logn(2, da.asarray([8.0])).gather().tolist()
    [3.0]
    """
    func = "numpy.emath.logn"
    like = first_darray(n, x)
    x, n = _fix(func, x, _negative, like, np.log), _fix(func, n, _negative, like, np.log)
    lx, ln = log(x), log(n)
    dtype = np.result_type(lx.dtype, ln.dtype)
    return astype(lx, dtype, copy=False) / astype(ln, dtype, copy=False)


def _power(x, p) -> DArray:
    """``x ** p`` (``numpy.emath.power``), complex if any ``x`` is negative; float if any integer ``p`` is.

    Examples
    --------
    >>> import darray as da
    >>> da.emath.power(da.asarray([2, 4]), -1).gather().tolist()
    [0.5, 0.25]
    """
    func = "numpy.emath.power"
    like = first_darray(x, p)
    x, p = _fix(func, x, _negative, like), as_darray(func, p, like)
    if p.dtype.kind in "iu" and _any(p < 0):
        p = astype(p, np.float64)  # NumPy's p * 1.0
    dtype = np.result_type(x.dtype, p.dtype)
    return pow(astype(x, dtype, copy=False), astype(p, dtype, copy=False))


_logn.__name__, _power.__name__ = "logn", "power"
_logn.__module__ = _power.__module__ = "darray.emath"
emath = types.ModuleType("darray.emath", "NumPy's ``numpy.emath`` for DArrays: results complex where the input "
                         "leaves the real domain.\n\nThe whole array is complex when any element on any rank is "
                         "out of the domain (one allreduce of a flag), as NumPy's is; then elementwise.")
for _name, _darray_name, _check, _example in (
        ("sqrt", "sqrt", _negative, ">>> da.emath.sqrt(da.asarray([-4.0, 4.0])).gather().tolist()\n    "
                                    "[2j, (2+0j)]"),
        ("log", "log", _negative, ">>> da.emath.log(da.asarray([1.0])).gather().tolist()\n    [0.0]"),
        ("log2", "log2", _negative, ">>> da.emath.log2(da.asarray([8.0])).gather().tolist()\n    [3.0]"),
        ("log10", "log10", _negative, ">>> da.emath.log10(da.asarray([100.0])).gather().tolist()\n    [2.0]"),
        ("arccos", "acos", _beyond_one, ">>> da.emath.arccos(da.asarray([1.0])).gather().tolist()\n    [0.0]"),
        ("arcsin", "asin", _beyond_one, ">>> da.emath.arcsin(da.asarray([0.0])).gather().tolist()\n    [0.0]"),
        ("arctanh", "atanh", _beyond_one, ">>> da.emath.arctanh(da.asarray([0.0])).gather().tolist()\n    [0.0]")):
    setattr(emath, _name, _emath_unary(_name, _darray_name, _check, _example))
del _name, _darray_name, _check, _example
emath.logn, emath.power = implements(np.emath.logn)(_logn), implements(np.emath.power)(_power)
emath.__all__ = ["arccos", "arcsin", "arctanh", "log", "log10", "log2", "logn", "power", "sqrt"]
