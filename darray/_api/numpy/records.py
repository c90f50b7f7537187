"""Sorting record (structured) DArrays by their fields, as NumPy's ``sort``/``argsort`` with ``order=``.

NumPy orders records by the fields ``order`` names, then by the others in the
dtype's order. darray sorts by those fields as keys of one distributed stable
``lexsort`` (nested records flattened, a subarray field one key per element,
dates and durations with NaT last): a sort moves what
:func:`darray._api.numpy.select.lexsort` moves, then each record once
(``take_along_axis``). Records that compare equal are equal, so ``sort`` gives
NumPy's result; ``argsort`` keeps equal records in their input order (NumPy's
default sort does not promise an order for them).
"""

from __future__ import annotations

import numpy as np

from ..._core import DArray
from ..._core.advanced import take_along_axis
from ..._errors import message
from ..._layout import normalize_axis
from .select import lexsort

__all__ = ["sort_records", "field_keys"]


def _leaves(dtype: np.dtype, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Paths of ``dtype``'s fields that hold values, nested records flattened, in the dtype's order."""
    paths = []
    for name in dtype.names:
        sub = dtype.fields[name][0]
        paths += _leaves(sub, prefix + (name,)) if sub.names is not None else [prefix + (name,)]
    return paths


def _ordered(func: str, dtype: np.dtype, order) -> list[tuple[str, ...]]:
    """The fields to sort by, most significant first: ``order``'s (names of top-level fields, or of nested ones
    under their own name), then every other field in the dtype's order (NumPy's rule)."""
    leaves = _leaves(dtype)
    named = [order] if isinstance(order, str) else list(order or ())
    first: list[tuple[str, ...]] = []
    for name in named:
        if not isinstance(name, str) or name not in dtype.names:
            raise ValueError(message(func, f"unknown field name: {name}", name, f"one of {list(dtype.names)}"))
        first += [leaf for leaf in leaves if leaf[0] == name]
    return first + [leaf for leaf in leaves if leaf not in first]


def field_keys(func: str, x: DArray, order=None) -> list[DArray]:
    """The sort keys of record ``x``, most significant first (each one of ``x``'s shape)."""
    keys = []
    for path in _ordered(func, x.dtype, order):
        value = x
        for name in path:
            value = value[name]
        extra = value.ndim - x.ndim  # a subarray field: one key per element, in C order
        for index in np.ndindex(*value.shape[x.ndim:]):
            keys.append(value[(Ellipsis, *index)] if extra else value)
    return keys


def sort_records(func: str, x: DArray, axis: int = -1, order=None, index: bool = False) -> DArray:
    """``numpy.sort(x, axis, order=order)`` (``index``: ``numpy.argsort``) of a record DArray.

    >>> import numpy, darray as da
    >>> r = da.asarray(numpy.array([(2, 1.0), (1, 5.0), (2, 0.5)], dtype=[("n", "i8"), ("w", "f8")]))
    >>> sort_records("sort", r, order="n").gather().tolist()
    [(1, 5.0), (2, 0.5), (2, 1.0)]
    """
    if x.dtype.names is None:
        raise ValueError(message(func, "order= needs a record dtype", x.dtype, "an array with fields"))
    if x.ndim == 0:
        raise np.exceptions.AxisError(message(func, "a 0-d array has no axis to sort", axis, "an array of 1+ dims"))
    axis = normalize_axis(func, axis, x.ndim)
    found = lexsort(list(reversed(field_keys(func, x, order))), axis=axis)
    return found if index else take_along_axis(x, found, axis=axis)
