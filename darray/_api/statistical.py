"""Statistical functions (Array API chapter "Statistical Functions") and utility ``all``/``any``."""

from __future__ import annotations

from .._core.reductions import all, any, max, mean, min, prod, std, sum, var

__all__ = ["all", "any", "max", "mean", "min", "prod", "std", "sum", "var"]
