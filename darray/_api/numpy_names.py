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
- the NumPy-only functions of :mod:`darray._api.numpy_functions` (``hstack``,
  ``dot``, ``average``, ``cov``, ``interp``, ``bincount``, ...), themselves,
  and those of :mod:`~darray._api.numpy_sets` (``intersect1d``, ``union1d``,
  ``setdiff1d``, ``setxor1d``), :mod:`~darray._api.numpy_partition`,
  :mod:`~darray._api.numpy_convolve`, :mod:`~darray._api.numpy_arrange`
  (``rot90``, ``put``, ``put_along_axis``) and :mod:`~darray._api.numpy_bits`;
- :func:`round` with NumPy's ``decimals`` and :func:`trace`, which is both
  darray's communication tracer and, given an array, ``numpy.trace``.

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

from collections.abc import Callable

import numpy

from .._comm import Communicator
from . import elementwise as _elementwise, numpy_functions
from .ufuncs import NUMPY_UFUNC_NAMES, STANDARD_EQUIVALENTS, UFUNCS  # noqa: F401  (STANDARD_EQUIVALENTS: tests' tables)
from .numpy_functions import *  # noqa: F403  (NumPy-only functions: hstack, dot, cov, ...; in __all__ below)
from . import (numpy_arrange, numpy_bits, numpy_convolve, numpy_edit, numpy_hist, numpy_partition, numpy_poly,
               numpy_select, numpy_sets)
from .numpy_arrange import *  # noqa: F403  (rot90, put, put_along_axis; in __all__ below)
from .numpy_bits import *  # noqa: F403  (packbits, unpackbits)
from .numpy_convolve import *  # noqa: F403  (convolve, correlate)
from .numpy_edit import *  # noqa: F403  (append, delete, insert, resize, fliplr, hsplit, block, ...)
from .numpy_hist import *  # noqa: F403  (histogram2d, histogramdd, matvec, vecmat, ...)
from .numpy_poly import *  # noqa: F403  (polyfit, polyval, roots, vectorize, apply_along_axis, kron, ...)
from .numpy_select import *  # noqa: F403  (select, choose, compress, extract, putmask, copyto, ...)
from .numpy_partition import *  # noqa: F403  (partition, argpartition)
from .numpy_sets import intersect1d, setdiff1d, setxor1d, union1d  # noqa: F401
_MORE_NAMES = (*numpy_arrange.__all__, *numpy_bits.__all__, *numpy_convolve.__all__, *numpy_edit.__all__,
               *numpy_hist.__all__, *numpy_partition.__all__, *numpy_poly.__all__, *numpy_select.__all__,
               "intersect1d", "setdiff1d", "setxor1d", "union1d")


#: NumPy ufuncs that the standard names differently or lacks (darray ufunc objects, :mod:`darray._api.ufuncs`).
UFUNC_NAMES = NUMPY_UFUNC_NAMES

#: NumPy functions outside the standard that darray implements (``darray._api.numpy_protocols``).
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
                    "darray when an argument is a DArray (see :mod:`darray._api.numpy_names`).\n")
    return call


globals().update({name: UFUNCS[name] for name in UFUNC_NAMES})
for _name in FUNCTION_NAMES:
    globals()[_name] = _calling(_name, "distributed (through ``__array_function__``)")



def round(x, /, decimals: int = 0, out=None):  # noqa: A001 - NumPy's and the standard's name
    """Round to the nearest integer (the standard's ``round``), or to ``decimals`` places as ``numpy.round``.

    Examples
    --------
    >>> import darray as da
    >>> da.round(da.asarray([1.26, 2.5]), 1).gather().tolist()
    [1.3, 2.5]
    """
    if decimals == 0 and out is None:
        return _elementwise.round(x)
    return numpy_functions.around(x, decimals, out)


def trace(*args, **kwargs):
    """Two functions under one name: darray's communication tracer, and ``numpy.trace`` for arrays.

    ``darray.trace()`` or ``darray.trace(comm)`` records the communication of
    a ``with`` block (:func:`darray.tracer.trace`); ``darray.trace(a, offset=0,
    axis1=0, axis2=1, dtype=None)`` with an array ``a`` is the sum along its
    diagonal, as ``numpy.trace`` (:func:`darray._api.numpy_functions.trace`).

    Examples
    --------
    >>> import darray as da
    >>> float(da.trace(da.eye(3)))
    3.0
    >>> with da.trace() as t:
    ...     total = float(da.sum(da.ones(8)))
    """
    first = args[0] if args else kwargs.get("a")
    if first is not None and not isinstance(first, Communicator):
        return numpy_functions.trace(*args, **kwargs)
    from ..tracer import trace as communication_trace

    return communication_trace(*args, **kwargs)


__all__ = sorted({*UFUNC_NAMES, *FUNCTION_NAMES, *numpy_functions.__all__, *_MORE_NAMES, "round", "trace"})
