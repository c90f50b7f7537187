"""The graph a traced function records: nodes, their dtypes and shapes, and which of them a kernel computes.

A :class:`Node` is an input (a DArray argument or a Python scalar argument),
a constant, an elementwise operation of darray's table
(:data:`darray._core.table.ELEMENTWISE`), ``where``, ``astype``, or a
reduction (``sum``, ``prod``, ``min``, ``max``, ``mean``). Every node's
dtype is computed when it is recorded, by darray's own rules on NumPy blocks:
the table's dtype category (the same check as the eager engine, so a refused
dtype refuses the trace) and NumPy's promotion, taken from the NumPy function
itself on empty operands (Python scalars stay weak, NEP 50). A node's dtype is
therefore the eager result's dtype by construction, in every category (bool,
int, uint, float32/64, complex).

:data:`KERNEL` is the table of what a compiled kernel computes (numba
spellings); :func:`in_kernel` says whether one node may be computed there.
Nodes outside it (integer ``//`` and ``%``, integer powers, shifts, ``round``,
complex ``expm1``, ...) are computed eagerly by darray, their inputs and
consumers still fused around them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from graphlib import TopologicalSorter

import numpy as np

from .._core.dtypes import CATEGORIES
from .._core.elementwise import NUMPY_BOOL_ARITHMETIC
from .._core.table import BY_NAME
from .._errors import message

__all__ = ["Node", "Untraceable", "REDUCTIONS", "KERNEL", "elementwise_node", "in_kernel", "reduction_dtype",
           "numpy_function", "check_reduction", "common_dtype", "topological"]

#: Reductions a traced function may end with: name -> NumPy ufunc (None: mean, a sum divided by the count).
REDUCTIONS = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum, "mean": None}
_REDUCTION_CATEGORY = {"sum": "any", "prod": "any", "min": "real or boolean", "max": "real or boolean",
                       "mean": "any"}


class Untraceable(Exception):
    """Raised while tracing for anything the graph cannot record: the call then runs eagerly."""


@dataclass(eq=False)
class Node:
    """One value of the traced function: ``op`` applied to ``args`` (nodes), with ``attrs`` (op-specific)."""

    op: str
    args: tuple = ()
    dtype: np.dtype = field(default_factory=lambda: np.dtype(bool))
    shape: tuple = ()
    attrs: tuple = ()
    weak: bool = False  # computed from Python scalars only: eagerly a Python float or complex, weak too

    @property
    def is_scalar(self) -> bool:
        """A Python scalar (argument or constant): weak in promotion, passed to kernels by value."""
        return self.op in ("scalar", "constant")

    def probe(self):
        """What NumPy promotes like this node: a Python scalar, or an empty array of the dtype."""
        if self.is_scalar:
            return self.attrs[-1]
        if self.weak:
            return self.dtype.type(1).item()
        return np.empty(0, self.dtype)


_KIND_NAMES = {"b": "bool", "i": "a signed integer", "u": "an unsigned integer", "f": "a real floating-point",
               "c": "a complex floating-point"}


def _check(name: str, args) -> None:
    """darray's dtype-category check of ``name`` on NumPy blocks (Python scalars are not checked)."""
    row = BY_NAME[name]
    allowed = CATEGORIES[row.category] | ({"b"} if name in NUMPY_BOOL_ARITHMETIC else set())
    for a in args:
        if not (a.is_scalar or a.weak) and a.dtype.kind not in allowed:
            raise Untraceable(message(name, "unsupported dtype", f"{_KIND_NAMES.get(a.dtype.kind)} dtype",
                                      f"a {row.category} dtype"))


def numpy_function(name: str):
    """NumPy's function for the op ``name`` of darray's table (``where`` included)."""
    return getattr(np, {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
                        "atan": "arctan", "atan2": "arctan2", "atanh": "arctanh", "bitwise_invert": "invert",
                        "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
                        "pow": "power"}.get(name, name))


def elementwise_node(name: str, args: tuple) -> Node:
    """The node of ``name(*args)``: category checked, shapes broadcast and the dtype promoted as eager darray."""
    if name == "where":
        probes = [a.probe() for a in args]
        probes[0] = np.empty(0, bool) if args[0].is_scalar else probes[0]
        dtype = np.where(*probes).dtype
    elif name == "astype":
        dtype = args[1]
        args = args[:1]
    else:
        if name not in BY_NAME or BY_NAME[name].nargs != len(args):
            raise Untraceable(name)
        _check(name, args)
        with np.errstate(all="ignore"):
            try:
                dtype = numpy_function(name)(*(a.probe() for a in args)).dtype
            except (TypeError, ValueError, OverflowError) as e:
                raise Untraceable(str(e)) from None
    try:
        shape = np.broadcast_shapes(*(a.shape for a in args))
    except ValueError as e:
        raise Untraceable(str(e)) from None
    weak = name != "astype" and all(a.is_scalar or a.weak for a in args)
    if weak and np.dtype(dtype).kind not in "fc":  # a Python int or bool eagerly: its range decides, not a dtype
        raise Untraceable(f"{name} of Python scalars with an integer or boolean result")
    return Node(name, tuple(args), np.dtype(dtype), shape, (dtype,) if name == "astype" else (), weak)


def reduction_dtype(name: str, dtype: np.dtype) -> np.dtype:
    """The dtype NumPy's (and darray's) reduction ``name`` gives for ``dtype`` (sum of int8: int64)."""
    if name == "mean":
        return np.dtype(np.float64) if dtype.kind in "biu" else dtype
    return REDUCTIONS[name].reduce(np.zeros(1, dtype)).dtype


def check_reduction(name: str, x: Node) -> None:
    """darray's dtype-category check of a reduction (a refused dtype refuses the trace)."""
    if x.dtype.kind not in CATEGORIES[_REDUCTION_CATEGORY[name]]:
        raise Untraceable(name)


@dataclass(frozen=True)
class Kernel:
    """How a kernel computes one op: a numba expression template and how operands are cast first.

    ``cast``: ``"result"`` casts operands to the result dtype (arithmetic: NumPy's loop dtype), ``"common"``
    to their common dtype (comparisons), ``None`` leaves them as they are (unary functions, whose loop takes
    the operand's dtype). The template's value is cast to the node's dtype afterwards.
    """

    template: str
    cast: str | None = None


_K = Kernel
#: What a kernel computes, by op name; templates use {0}, {1}, {2} for the (cast) operands.
KERNEL: dict[str, Kernel] = {
    "add": _K("{0} + {1}", "result"), "subtract": _K("{0} - {1}", "result"),
    "multiply": _K("{0} * {1}", "result"), "divide": _K("{0} / {1}", "result"),
    "maximum": _K("({0} if ({0} >= {1} or {0} != {0}) else {1})", "result"),
    "minimum": _K("({0} if ({0} <= {1} or {0} != {0}) else {1})", "result"),
    "pow": _K("{0} ** {1}", "result"),
    "negative": _K("-{0}"), "positive": _K("+{0}"), "square": _K("{0} * {0}"), "abs": _K("np.abs({0})"),
    "equal": _K("{0} == {1}", "common"), "not_equal": _K("{0} != {1}", "common"),
    "less": _K("{0} < {1}", "common"), "less_equal": _K("{0} <= {1}", "common"),
    "greater": _K("{0} > {1}", "common"), "greater_equal": _K("{0} >= {1}", "common"),
    "logical_and": _K("({0} and {1})"), "logical_or": _K("({0} or {1})"), "logical_xor": _K("({0} != {1})"),
    "logical_not": _K("(not {0})"),
    "bitwise_and": _K("{0} & {1}", "result"), "bitwise_or": _K("{0} | {1}", "result"),
    "bitwise_xor": _K("{0} ^ {1}", "result"),
    "exp": _K("np.exp({0})"), "expm1": _K("np.expm1({0})"), "log": _K("np.log({0})"),
    "log1p": _K("np.log1p({0})"), "log2": _K("np.log2({0})"), "log10": _K("np.log10({0})"),
    "sqrt": _K("np.sqrt({0})"), "sin": _K("np.sin({0})"), "cos": _K("np.cos({0})"), "tan": _K("np.tan({0})"),
    "sinh": _K("np.sinh({0})"), "cosh": _K("np.cosh({0})"), "tanh": _K("np.tanh({0})"),
    "asin": _K("np.arcsin({0})"), "acos": _K("np.arccos({0})"), "atan": _K("np.arctan({0})"),
    "asinh": _K("np.arcsinh({0})"), "acosh": _K("np.arccosh({0})"), "atanh": _K("np.arctanh({0})"),
    "atan2": _K("np.arctan2({0}, {1})", "result"), "hypot": _K("np.hypot({0}, {1})", "result"),
    "copysign": _K("np.copysign({0}, {1})", "result"),
    "floor": _K("np.floor({0})"), "ceil": _K("np.ceil({0})"), "trunc": _K("np.trunc({0})"),
    "sign": _K("np.sign({0})"), "isnan": _K("np.isnan({0})"), "isinf": _K("np.isinf({0})"),
    "isfinite": _K("np.isfinite({0})"), "conj": _K("np.conj({0})"), "real": _K("{0}.real"),
    "imag": _K("{0}.imag"), "reciprocal": _K("1.0 / {0}"),
    "where": _K("({1} if {0} else {2})"), "astype": _K("{0}"),
}

#: Template overrides by (op, kind of the operand): integers and bools where the float spelling is wrong.
KIND_TEMPLATES = {("floor", "i"): "{0}", ("floor", "u"): "{0}", ("ceil", "i"): "{0}", ("ceil", "u"): "{0}",
                  ("trunc", "i"): "{0}", ("trunc", "u"): "{0}", ("abs", "b"): "{0}",
                  ("isnan", "i"): "False", ("isnan", "u"): "False", ("isnan", "b"): "False",
                  ("isinf", "i"): "False", ("isinf", "u"): "False", ("isinf", "b"): "False",
                  ("isfinite", "i"): "True", ("isfinite", "u"): "True", ("isfinite", "b"): "True",
                  ("square", "b"): "({0} and {0})"}


def in_kernel(node: Node) -> bool:
    """Whether a compiled kernel computes ``node`` exactly as eager darray (else darray computes it eagerly).

    Left to darray: ops outside :data:`KERNEL`; integer/bool results of ``pow``; complex ``/`` and ``**``
    (numba raises on a zero divisor); ``sign``, ``negative``, ``positive`` of bools and ``reciprocal`` of
    integers and bools; complex ``sign``/``expm1``/``maximum`` and inverse/hyperbolic functions; comparisons
    that mix signed and unsigned integers (NumPy compares those exactly); casts from complex to real.
    """
    op = node.op
    if op not in KERNEL:
        return False
    kinds = {a.dtype.kind for a in node.args if not (a.is_scalar or a.weak)}
    kind = node.dtype.kind
    if op == "pow" and kind not in "fc" or op in ("pow", "divide") and kind == "c":
        return False  # numba raises ZeroDivisionError for complex division by zero (NumPy: inf/nan)
    if op in ("sign", "expm1", "maximum", "minimum", "reciprocal", "tan", "atanh", "asinh", "acosh", "acos",
              "asin", "atan", "log1p", "log2", "log10", "sinh", "cosh", "tanh") and (kind == "c" or "c" in kinds):
        return False  # complex branch cuts and special values: NumPy's own implementation
    if op in ("sign", "negative", "positive") and "b" in kinds or op == "reciprocal" and kinds & set("biu"):
        return False
    if node.attrs and op == "astype" and node.args[0].dtype.kind == "c" and kind != "c":
        return False
    if KERNEL[op].cast == "common" and ({"i", "u"} <= kinds or common_dtype(node) is None):
        return False
    return True


def common_dtype(node: Node):
    """The dtype NumPy casts ``node``'s operands to before comparing them (None: NumPy compares otherwise,
    e.g. a Python int outside the array's range)."""
    try:
        return np.result_type(*(a.probe() for a in node.args))
    except (TypeError, ValueError, OverflowError):
        return None


def topological(outputs) -> list[Node]:
    """The nodes ``outputs`` depend on, each after its arguments."""
    sorter: TopologicalSorter = TopologicalSorter()
    stack, seen = list(outputs), set()
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            sorter.add(node, *node.args)
            stack.extend(node.args)
    return list(sorter.static_order())
