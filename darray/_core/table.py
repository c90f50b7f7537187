"""THE table of elementwise functions: it generates the public functions and the operators.

One row per function of the Array API standard's elementwise chapter (2024.12):
name, number of array arguments, the dtype category it accepts, and the
operator methods that call it (forward, reflected, in-place).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Elementwise", "ELEMENTWISE", "BY_NAME", "UNARY_OPERATORS", "BINARY_OPERATORS"]


class Elementwise(NamedTuple):
    name: str
    nargs: int
    category: str
    operator: str | None = None  # "__add__" -> also "__radd__" and "__iadd__" for binary ops
    inplace: bool = True  # whether the binary operator has reflected/in-place forms


ELEMENTWISE: tuple[Elementwise, ...] = (
    Elementwise("abs", 1, "numeric", "__abs__"),
    Elementwise("acos", 1, "floating-point"),
    Elementwise("acosh", 1, "floating-point"),
    Elementwise("add", 2, "numeric", "__add__"),
    Elementwise("asin", 1, "floating-point"),
    Elementwise("asinh", 1, "floating-point"),
    Elementwise("atan", 1, "floating-point"),
    Elementwise("atan2", 2, "real floating-point"),
    Elementwise("atanh", 1, "floating-point"),
    Elementwise("bitwise_and", 2, "integer or boolean", "__and__"),
    Elementwise("bitwise_invert", 1, "integer or boolean", "__invert__"),
    Elementwise("bitwise_left_shift", 2, "integer", "__lshift__"),
    Elementwise("bitwise_or", 2, "integer or boolean", "__or__"),
    Elementwise("bitwise_right_shift", 2, "integer", "__rshift__"),
    Elementwise("bitwise_xor", 2, "integer or boolean", "__xor__"),
    Elementwise("ceil", 1, "real numeric"),
    Elementwise("conj", 1, "numeric"),
    Elementwise("copysign", 2, "real floating-point"),
    Elementwise("cos", 1, "floating-point"),
    Elementwise("cosh", 1, "floating-point"),
    Elementwise("divide", 2, "numeric", "__truediv__"),
    Elementwise("equal", 2, "any", "__eq__", inplace=False),
    Elementwise("exp", 1, "floating-point"),
    Elementwise("expm1", 1, "floating-point"),
    Elementwise("floor", 1, "real numeric"),
    Elementwise("floor_divide", 2, "real numeric", "__floordiv__"),
    Elementwise("greater", 2, "real numeric", "__gt__", inplace=False),
    Elementwise("greater_equal", 2, "real numeric", "__ge__", inplace=False),
    Elementwise("hypot", 2, "real floating-point"),
    Elementwise("imag", 1, "complex floating-point"),
    Elementwise("isfinite", 1, "numeric"),
    Elementwise("isinf", 1, "numeric"),
    Elementwise("isnan", 1, "numeric"),
    Elementwise("less", 2, "real numeric", "__lt__", inplace=False),
    Elementwise("less_equal", 2, "real numeric", "__le__", inplace=False),
    Elementwise("log", 1, "floating-point"),
    Elementwise("log1p", 1, "floating-point"),
    Elementwise("log2", 1, "floating-point"),
    Elementwise("log10", 1, "floating-point"),
    Elementwise("logaddexp", 2, "real floating-point"),
    Elementwise("logical_and", 2, "bool"),
    Elementwise("logical_not", 1, "bool"),
    Elementwise("logical_or", 2, "bool"),
    Elementwise("logical_xor", 2, "bool"),
    Elementwise("maximum", 2, "real numeric"),
    Elementwise("minimum", 2, "real numeric"),
    Elementwise("multiply", 2, "numeric", "__mul__"),
    Elementwise("negative", 1, "numeric", "__neg__"),
    Elementwise("nextafter", 2, "real floating-point"),
    Elementwise("not_equal", 2, "any", "__ne__", inplace=False),
    Elementwise("positive", 1, "numeric", "__pos__"),
    Elementwise("pow", 2, "numeric", "__pow__"),
    Elementwise("real", 1, "numeric"),
    Elementwise("reciprocal", 1, "floating-point"),
    Elementwise("remainder", 2, "real numeric", "__mod__"),
    Elementwise("round", 1, "numeric"),
    Elementwise("sign", 1, "numeric"),
    Elementwise("signbit", 1, "real floating-point"),
    Elementwise("sin", 1, "floating-point"),
    Elementwise("sinh", 1, "floating-point"),
    Elementwise("sqrt", 1, "floating-point"),
    Elementwise("square", 1, "numeric"),
    Elementwise("subtract", 2, "numeric", "__sub__"),
    Elementwise("tan", 1, "floating-point"),
    Elementwise("tanh", 1, "floating-point"),
    Elementwise("trunc", 1, "real numeric"),
)

BY_NAME = {row.name: row for row in ELEMENTWISE}
UNARY_OPERATORS = {row.operator: row for row in ELEMENTWISE if row.nargs == 1 and row.operator}
BINARY_OPERATORS = {row.operator: row for row in ELEMENTWISE if row.nargs == 2 and row.operator}
