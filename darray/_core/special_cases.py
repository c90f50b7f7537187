"""Array API special cases that NumPy's kernels compute otherwise, set right on local blocks.

darray follows the standard (2024.12) where NumPy's result for an infinite
operand is an artefact of how NumPy computes, not a choice of meaning:

- ``floor_divide`` (and ``//``, ``//=``): NumPy computes ``floor_divide`` through
  ``divmod``, so ``inf // 2`` is NaN and ``1.0 // -inf`` is ``-1.0``; the
  standard (and ``floor(x1 / x2)``) gives ``inf`` and ``-0.0``. Finite
  operands keep NumPy's values exactly (``7 // 0.1`` stays ``69.0``).
- ``expm1`` of complex numbers with an infinite or NaN part: NumPy gives
  ``NaN + NaN j`` where the standard gives the values of ``exp(z) - 1``
  (``expm1(inf + 0j)`` is ``inf + 0j``, ``expm1(-inf + inf j)`` is ``-1 + 0j``).

Each fix-up costs one extra pass that tests for non-finite values (a
reduction to one boolean) and only recomputes when one is present; integer
and boolean blocks pass through untouched. Every local library (NumPy,
CuPy, torch, array_api_strict) goes through the same wrappers, so results do
not depend on the block library or the rank count.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable

import numpy as np

from .._backend import is_numpy_namespace
from .dtypes import to_numpy_dtype

__all__ = ["standard_kernel", "FIXED"]


def _kind(array) -> str:
    return to_numpy_dtype(array.dtype).kind


def _floor_divide(xp, f: Callable) -> Callable:
    def floor_divide(a, b, /):
        q = f(a, b)
        if _kind(q) != "f":
            return q
        # wrong cells: an infinite dividend (NumPy: NaN) or an infinite divisor (NumPy: -1.0 for -0.0)
        b_inf = bool(xp.any(xp.isinf(b))) if hasattr(b, "shape") else b in (float("inf"), float("-inf"))
        if not b_inf and not bool(xp.any(xp.isnan(q))):
            return q
        a_inf = xp.isinf(a) if hasattr(a, "shape") else a in (float("inf"), float("-inf"))
        b_inf = xp.isinf(b) if hasattr(b, "shape") else b_inf
        with np.errstate(invalid="ignore", divide="ignore"):
            return xp.where(a_inf | b_inf, xp.floor(a / b), q)
    return floor_divide


def _expm1(xp, f: Callable) -> Callable:
    def expm1(z, /):
        result = f(z)
        if _kind(z) != "c" or bool(xp.all(xp.isfinite(z))):
            return result
        with np.errstate(invalid="ignore", over="ignore"):
            return xp.where(xp.isfinite(z), result, xp.exp(z) - 1)
    return expm1


_FIXUPS: dict[str, Callable[[Any, Callable], Callable]] = {"floor_divide": _floor_divide, "expm1": _expm1}
#: The functions whose local kernel is wrapped.
FIXED = frozenset(_FIXUPS)


@lru_cache(maxsize=None)
def standard_kernel(xp, name: str) -> Callable:
    """``xp``'s function ``name``, wrapped where its special cases differ from the standard.

    >>> import numpy as np
    >>> fd = standard_kernel(np, "floor_divide")
    >>> fd(np.array([np.inf, 1.0, 7.0]), np.array([2.0, -np.inf, 0.1])).tolist()
    [inf, -0.0, 69.0]
    """
    f = getattr(xp, name)
    if name == "sign" and is_numpy_namespace(xp):  # NumPy 2's own sign is
        f = np.sign  # the standard's z / |z| for complex numbers, to NumPy's bits (array-api-compat's divides)
    fix = _FIXUPS.get(name)
    return f if fix is None else fix(xp, f)
