"""Elementwise functions (Array API chapter "Element-wise Functions"), generated from one table.

Each public function is a thin entry into the elementwise engine; see
:mod:`darray._core.table` for the list and :mod:`darray._core.elementwise`
for layout alignment and broadcasting.
"""

from __future__ import annotations

from .._core import DArray, apply, local_operand
from .._core.dtypes import check_category
from .._core.elementwise import align_target, wrap_like
from .._core.table import ELEMENTWISE, Elementwise
from .._errors import message

__all__ = sorted([row.name for row in ELEMENTWISE] + ["clip"])


def _unary(row: Elementwise):
    def func(x, /) -> DArray:
        return apply(row, (x,))

    return func


def _binary(row: Elementwise):
    def func(x1, x2, /) -> DArray:
        out = apply(row, (x1, x2))
        if out is NotImplemented:
            raise TypeError(message(row.name, "unsupported operand types",
                                    (type(x1).__name__, type(x2).__name__), "DArrays, arrays or numbers"))
        return out

    return func


def _generate(row: Elementwise):
    func = _unary(row) if row.nargs == 1 else _binary(row)
    func.__name__ = func.__qualname__ = row.name
    args = "x" if row.nargs == 1 else "x1, x2"
    func.__doc__ = (f"``{row.name}({args})`` elementwise on the global array (Array API semantics).\n\n"
                    f"Accepts {row.category} dtypes; the result keeps the layout of the first\n"
                    f"distributed operand of the result's shape; other operands are aligned to it.\n")
    return func


globals().update({row.name: _generate(row) for row in ELEMENTWISE})


def clip(x, /, min=None, max=None) -> DArray:
    """Clamp every element into ``[min, max]``; the result has ``x``'s dtype.

    >>> import darray as da
    >>> da.clip(da.arange(5), 1, 3).gather().tolist()
    [1, 1, 2, 3, 3]
    """
    if not isinstance(x, DArray):
        raise TypeError(message("clip", "expected a DArray", type(x).__name__))
    check_category("clip", x.dtype, "real numeric")
    target, layout = align_target("clip", [v for v in (x, min, max) if v is not None])
    if layout.shape != x.shape:
        raise ValueError(message("clip", "min/max must broadcast to x's shape", layout.shape, f"{x.shape}"))
    lo = None if min is None else local_operand("clip", min, x._layout, x)
    hi = None if max is None else local_operand("clip", max, x._layout, x)
    return wrap_like(x._xp.clip(x.local, lo, hi), x._layout, x)
