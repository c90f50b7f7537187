"""Elementwise functions (Array API chapter "Element-wise Functions"), one ufunc object per row of the table.

Each public name is a :class:`darray._api.ufuncs.ufunc` (NumPy's ufunc
interface: ``out=``, ``where=``, ``reduce``, ``accumulate``, ``outer``, ``at``,
``reduceat``) whose plain call is a thin entry into the elementwise engine;
see :mod:`darray._core.table` for the list and :mod:`darray._core.elementwise`
for layout alignment and broadcasting.
"""

from __future__ import annotations

from .._core import DArray, local_operand
from .._core.dtypes import check_category
from .._core.elementwise import align_target, sequence_operand, wrap_like
from .._core.table import ELEMENTWISE
from .._errors import message
from .ufuncs import UFUNCS

__all__ = sorted([row.name for row in ELEMENTWISE] + ["clip"])

globals().update({row.name: UFUNCS[row.name] for row in ELEMENTWISE})


def clip(x, /, min=None, max=None) -> DArray:
    """Clamp every element into ``[min, max]``; the result has ``x``'s dtype and the shape of all three broadcast.

    >>> import darray as da
    >>> da.clip(da.arange(5), 1, 3).gather().tolist()
    [1, 1, 2, 3, 3]
    """
    if not isinstance(x, DArray):
        raise TypeError(message("clip", "expected a DArray", type(x).__name__))
    check_category("clip", x.dtype, "real numeric")
    min, max = sequence_operand("clip", min), sequence_operand("clip", max)  # NumPy's lists and tuples of bounds
    target, layout = align_target("clip", [v for v in (x, min, max) if v is not None])
    if layout.shape != x.shape:  # bounds of more dimensions: the result takes the broadcast shape (NumPy's rule)
        from .manipulation import broadcast_to  # noqa: PLC0415

        x = broadcast_to(x, layout.shape)
    lo = None if min is None else local_operand("clip", min, x._layout, x)
    hi = None if max is None else local_operand("clip", max, x._layout, x)
    return wrap_like(x._xp.clip(x.local, lo, hi), x._layout, x)
