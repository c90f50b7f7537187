"""``numpy.partition`` and ``numpy.argpartition`` for DArrays, distributed.

Along an axis that is not cut (every rank holds whole lines), each rank
partitions its own block with NumPy's introselect (one local call; blocks of
other libraries, which have no selection, are sorted). Along a cut axis the
selection is a distributed sort (:func:`darray.sort`: a transpose or a sample
sort, see :mod:`darray._api.sorting`): a sorted line is a valid partition for
every ``kth`` at once, and its ``kth`` values are NumPy's. That costs
``O(n log n)`` instead of introselect's ``O(n)``, and moves the array twice
(there and back), but no rank ever holds more than its share.

As in NumPy, only the values at the ``kth`` positions are determined; the
others satisfy the partition property (no larger value before a ``kth``
position, no smaller one after it) in an order that may differ from NumPy's.
``argpartition`` returns indices along ``axis`` with the same guarantee.
Complex arrays are refused (``TypeError``): darray sorts real numbers.

Examples
--------
>>> import darray as da
>>> from darray._api.numpy.partition import partition
>>> float(partition(da.asarray([3.0, 4.0, 2.0, 1.0]), 2)[2])
3.0
"""

from __future__ import annotations

import numbers

import numpy as np

from ..._backend import NUMPY
from ..._core import DArray, wrap_like
from ..._core.protocols import implements
from ..._errors import message
from ..._layout import normalize_axis
from ..creation import as_darray
from ..manipulation import reshape
from ..sorting import _local_sort, argsort, sort

__all__ = ["argpartition", "partition"]


def _kth(func: str, kth, n: int) -> tuple[int, ...]:
    """``kth`` as a tuple of non-negative positions, checked the same way on every rank."""
    if isinstance(kth, DArray):
        raise TypeError(message(func, "kth must be an integer or a sequence of integers", "a DArray",
                                "Python or NumPy integers"))
    values = np.asarray(kth)
    if values.dtype.kind not in "iu" or values.ndim > 1:
        raise TypeError(message(func, "kth must be an integer or a sequence of integers", kth))
    values = values.reshape(-1)
    bad = values[(values < -n) | (values >= n)]
    if bad.size:
        raise ValueError(message(func, f"kth out of bounds for an axis of length {n}", int(bad[0]),
                                 f"positions in [{-n}, {n})"))
    return tuple(int(k) % n for k in values)


def _select(func: str, a, kth, axis, kind, order, index: bool) -> DArray:
    name = f"numpy.{func}"
    a = as_darray(name, a)  # NumPy's array-likes (a list, a NumPy array)
    if kind != "introselect":
        raise ValueError(message(name, "unknown kind", repr(kind), "'introselect'"))
    if order is not None:
        raise ValueError(message(name, "order= needs an array with fields", repr(order), "None"))
    if a.dtype.kind not in "biuf":
        raise TypeError(message(name, "unsupported dtype", a.dtype, "a real numeric or boolean dtype"))
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    if a.ndim == 0:
        raise ValueError(message(name, "not defined for 0-d arrays", a.shape, "an array with ndim >= 1"))
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(message(name, "axis must be an integer or None", axis))
    axis = normalize_axis(name, axis, a.ndim)
    positions = _kth(name, kth, a.shape[axis])
    if a.layout.axis_dim[axis] is not None:  # a cut axis: a sorted line partitions for every kth
        return argsort(a, axis=axis) if index else sort(a, axis=axis)
    plain = a.layout.without_halo()
    xp, block = a._xp, a.local
    if xp is NUMPY:
        out = (np.argpartition if index else np.partition)(block, positions, axis=axis)
        out = out.astype(np.int64, copy=False) if index else out
    else:  # no selection in the standard: a local sort partitions too
        out = _local_sort(xp, block, axis, False, True, index)
    return wrap_like(out, plain, a)


@implements(np.partition)
def partition(a, kth, axis=-1, kind="introselect", order=None) -> DArray:
    """A copy of ``a`` with the ``kth`` values of each line in their sorted places (``numpy.partition``).

    Smaller values come before each ``kth`` position, larger ones after.

    Examples
    --------
    >>> import darray as da
    >>> p = partition(da.asarray([7, 1, 5, 3, 9]), (1, 3)).gather()
    >>> int(p[1]), int(p[3])
    (3, 7)
    """
    return _select("partition", a, kth, axis, kind, order, index=False)


@implements(np.argpartition)
def argpartition(a, kth, axis=-1, kind="introselect", order=None) -> DArray:
    """Indices along ``axis`` that partition ``a`` (``numpy.argpartition``); int64, in ``a``'s layout.

    Examples
    --------
    >>> import darray as da
    >>> x = da.asarray([7, 1, 5, 3, 9])
    >>> int(argpartition(x, 2).gather()[2])
    2
    """
    return _select("argpartition", a, kth, axis, kind, order, index=True)
