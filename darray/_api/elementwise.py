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
from .ufuncs import UFUNCS, ufunc

__all__ = sorted([row.name for row in ELEMENTWISE] + ["clip"])

globals().update({row.name: UFUNCS[row.name] for row in ELEMENTWISE})

# The table's functions, set just above, declared for type checkers (tests/test_declared_names.py checks that
# these are the table's names).
abs: ufunc
acos: ufunc
acosh: ufunc
add: ufunc
asin: ufunc
asinh: ufunc
atan: ufunc
atan2: ufunc
atanh: ufunc
bitwise_and: ufunc
bitwise_invert: ufunc
bitwise_left_shift: ufunc
bitwise_or: ufunc
bitwise_right_shift: ufunc
bitwise_xor: ufunc
ceil: ufunc
conj: ufunc
copysign: ufunc
cos: ufunc
cosh: ufunc
divide: ufunc
equal: ufunc
exp: ufunc
expm1: ufunc
floor: ufunc
floor_divide: ufunc
greater: ufunc
greater_equal: ufunc
hypot: ufunc
imag: ufunc
isfinite: ufunc
isinf: ufunc
isnan: ufunc
less: ufunc
less_equal: ufunc
log: ufunc
log1p: ufunc
log2: ufunc
log10: ufunc
logaddexp: ufunc
logical_and: ufunc
logical_not: ufunc
logical_or: ufunc
logical_xor: ufunc
maximum: ufunc
minimum: ufunc
multiply: ufunc
negative: ufunc
nextafter: ufunc
not_equal: ufunc
positive: ufunc
pow: ufunc
real: ufunc
reciprocal: ufunc
remainder: ufunc
round: ufunc
sign: ufunc
signbit: ufunc
sin: ufunc
sinh: ufunc
sqrt: ufunc
square: ufunc
subtract: ufunc
tan: ufunc
tanh: ufunc
trunc: ufunc


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
        from .manipulation import broadcast_to

        x = broadcast_to(x, layout.shape)
    lo = None if min is None else local_operand("clip", min, x._layout, x)
    hi = None if max is None else local_operand("clip", max, x._layout, x)
    return wrap_like(x._xp.clip(x.local, lo, hi), x._layout, x)
