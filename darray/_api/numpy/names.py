"""NumPy's names in darray's namespace, so that ``import darray as np`` keeps NumPy scripts running.

darray's namespace is the Array API standard's (``atan2``, ``pow``, ``concat``,
``cumulative_sum``). NumPy scripts say ``arctan2``, ``power``,
``concatenate``, ``cumsum``; these names are here, each calling the NumPy
function of that name, which NumPy hands to darray:

- NumPy ufuncs outside the standard (:data:`UFUNC_NAMES`) are darray ufunc
  objects (:mod:`darray._api.ufuncs`: ``out=``, ``where=``, ``dtype=``,
  ``reduce``, ``accumulate``, ``outer``, ``at``, ``reduceat``), the same
  object as the standard's name where NumPy's are one (``arctan2`` is
  ``atan2``); on local blocks other than NumPy's (CuPy, torch) the names with
  a standard equivalent (:data:`STANDARD_EQUIVALENTS`) run that function, the
  others raise ``TypeError``;
- NumPy functions darray implements through ``__array_function__``
  (:data:`FUNCTION_NAMES`: ``cumsum``, ``pad``, ``median``, ``einsum``, ...);
- the NumPy-only functions of the modules of :mod:`darray._api.numpy`
  (:data:`MODULES`: ``hstack``, ``dot``, ``average``, ``cov``, ``interp``,
  ``bincount``, ``rot90``, ``polyfit``, ...), themselves, and ``array``,
  ``kaiser`` (:mod:`~darray._api.numpy.creation`) and ``intersect1d``,
  ``union1d``, ``setdiff1d``, ``setxor1d`` (:mod:`~darray._api.numpy.sets`);
- :func:`round` with NumPy's ``decimals`` and :func:`trace` (``numpy.trace``;
  with no array, the communication tracer's deprecated old name).

So ``darray.cumsum(x)`` is exactly ``numpy.cumsum(x)`` for a DArray ``x``.
Given no DArray at all (Python scalars, NumPy arrays), the functions return
NumPy's result, as the NumPy script did; the ufuncs return a DArray
(:mod:`darray._api.ufuncs` converts such inputs with ``darray.asarray``).
NumPy functions darray does not implement raise ``TypeError`` from NumPy;
nothing is gathered behind the user's back.

Examples
--------
>>> import darray as np
>>> x = np.linspace(0.0, 1.0, 5)
>>> np.cumsum(np.arctan2(x, 1.0)).shape
(5,)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy

from ..._comm import Communicator
from .. import elementwise as _elementwise
from ..ufuncs import NUMPY_UFUNC_NAMES, STANDARD_EQUIVALENTS, UFUNCS, ufunc  # STANDARD_EQUIVALENTS: tests
from . import (apply as _apply, arrange as _arrange, bits as _bits, convolve as _convolve, edit as _edit,
               histograms as _histograms, mathematical as _mathematical, partition as _partition, poly as _poly,
               products as _products, scimath as _scimath, select as _select, stacking as _stacking,
               statistics as _statistics)
from .apply import *  # vectorize, apply_along_axis, apply_over_axes; in __all__ below
from .arrange import *  # rot90, put, put_along_axis
from .bits import *  # packbits, unpackbits
from .convolve import *  # convolve, correlate
from .creation import array, kaiser
from .edit import *  # append, delete, insert, resize, fliplr, hsplit, block, ...
from .histograms import *  # histogram2d, histogramdd, matvec, vecmat, ...
from .mathematical import *  # nan_to_num, angle, around, interp, i0, unwrap
from .partition import *  # partition, argpartition
from .poly import *  # polyfit, polyval, roots, poly1d, ...
from .products import *  # dot, vdot, inner, cross, kron, diag, ...
from .scimath import *  # emath
from .select import *  # select, choose, compress, extract, putmask, copyto, ...
from .sets import intersect1d, setdiff1d, setxor1d, union1d
from .stacking import *  # hstack, vstack, split, ravel, atleast_2d, ...
from .statistics import *  # average, cov, corrcoef, bincount, digitize

#: The modules of NumPy-only functions (each also registered for ``numpy.<name>(x)``): their ``__all__`` are here.
MODULES = (_apply, _arrange, _bits, _convolve, _edit, _histograms, _mathematical, _partition, _poly, _products,
           _scimath, _select, _stacking, _statistics)
_MORE_NAMES = (*(name for module in MODULES for name in module.__all__), "array", "kaiser", "intersect1d",
               "setdiff1d", "setxor1d", "union1d")


#: NumPy ufuncs that the standard names differently or lacks (darray ufunc objects, :mod:`darray._api.ufuncs`).
UFUNC_NAMES = NUMPY_UFUNC_NAMES

#: NumPy functions outside the standard that darray implements (``darray._api.numpy.protocols``).
FUNCTION_NAMES = (
    "allclose", "amax", "amin", "array_equal", "concatenate", "copy", "cumprod", "cumsum", "einsum", "gradient",
    "histogram", "isclose", "median", "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean",
    "nanmedian", "nanmin", "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar",
    "ndim", "outer", "pad", "percentile", "ptp", "quantile", "shape", "size", "transpose", "trapezoid",
    "unique",
)


def _calling(name: str, how: str) -> Callable:
    target = getattr(numpy, name)

    def call(*args, **kwargs):
        return target(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__module__ = "darray"
    call.__doc__ = (f"``numpy.{name}`` for DArrays, {how}.\n\n"
                    f"The same call as ``numpy.{name}(...)``: NumPy's signature and semantics, computed by "
                    "darray when an argument is a DArray (see :mod:`darray._api.numpy.names`).\n")
    return call


globals().update({name: UFUNCS[name] for name in UFUNC_NAMES})
for _name in FUNCTION_NAMES:
    globals()[_name] = _calling(_name, "distributed (through ``__array_function__``)")

# The names set just above, declared for type checkers (tests/test_declared_names.py checks that these are
# UFUNC_NAMES and FUNCTION_NAMES).
absolute: ufunc
arccos: ufunc
arccosh: ufunc
arcsin: ufunc
arcsinh: ufunc
arctan: ufunc
arctan2: ufunc
arctanh: ufunc
bitwise_count: ufunc
bitwise_not: ufunc
cbrt: ufunc
conjugate: ufunc
deg2rad: ufunc
degrees: ufunc
divmod: ufunc
exp2: ufunc
fabs: ufunc
float_power: ufunc
fmax: ufunc
fmin: ufunc
fmod: ufunc
frexp: ufunc
gcd: ufunc
heaviside: ufunc
invert: ufunc
isnat: ufunc
lcm: ufunc
ldexp: ufunc
left_shift: ufunc
logaddexp2: ufunc
mod: ufunc
modf: ufunc
power: ufunc
rad2deg: ufunc
radians: ufunc
right_shift: ufunc
rint: ufunc
spacing: ufunc
true_divide: ufunc
allclose: Callable[..., Any]
amax: Callable[..., Any]
amin: Callable[..., Any]
array_equal: Callable[..., Any]
concatenate: Callable[..., Any]
copy: Callable[..., Any]
cumprod: Callable[..., Any]
cumsum: Callable[..., Any]
einsum: Callable[..., Any]
gradient: Callable[..., Any]
histogram: Callable[..., Any]
isclose: Callable[..., Any]
median: Callable[..., Any]
nanargmax: Callable[..., Any]
nanargmin: Callable[..., Any]
nancumprod: Callable[..., Any]
nancumsum: Callable[..., Any]
nanmax: Callable[..., Any]
nanmean: Callable[..., Any]
nanmedian: Callable[..., Any]
nanmin: Callable[..., Any]
nanpercentile: Callable[..., Any]
nanprod: Callable[..., Any]
nanquantile: Callable[..., Any]
nanstd: Callable[..., Any]
nansum: Callable[..., Any]
nanvar: Callable[..., Any]
ndim: Callable[..., Any]
outer: Callable[..., Any]
pad: Callable[..., Any]
percentile: Callable[..., Any]
ptp: Callable[..., Any]
quantile: Callable[..., Any]
shape: Callable[..., Any]
size: Callable[..., Any]
transpose: Callable[..., Any]
trapezoid: Callable[..., Any]
unique: Callable[..., Any]



def round(x, /, decimals: int = 0, out=None):  # NumPy's and the standard's name
    """Round to the nearest integer (the standard's ``round``), or to ``decimals`` places as ``numpy.round``.

    Examples
    --------
    >>> import darray as da
    >>> da.round(da.asarray([1.26, 2.5]), 1).gather().tolist()
    [1.3, 2.5]
    """
    if decimals == 0 and out is None:
        return _elementwise.round(x)
    return _mathematical.around(x, decimals, out)


def trace(*args, **kwargs):
    """``numpy.trace``: the sum along a diagonal (:func:`darray._api.numpy.products.trace`).

    ``darray.trace(a, offset=0, axis1=0, axis2=1, dtype=None)``. Called with
    no array (``darray.trace()``, ``darray.trace(comm)``) it is the
    communication tracer under its old name, deprecated: use
    :func:`darray.tracing`.

    Examples
    --------
    >>> import darray as da
    >>> float(da.trace(da.eye(3)))
    3.0
    """
    first = args[0] if args else kwargs.get("a")
    if first is not None and not isinstance(first, Communicator):
        return _products.trace(*args, **kwargs)
    warnings.warn("darray.trace() as the communication tracer is deprecated: use darray.tracing() "
                  "(darray.trace(a) is numpy.trace)", DeprecationWarning, stacklevel=2)
    from ...tracer import tracing

    return tracing(*args, **kwargs)


__all__ = sorted({*UFUNC_NAMES, *FUNCTION_NAMES, *_MORE_NAMES, "round", "trace"})
