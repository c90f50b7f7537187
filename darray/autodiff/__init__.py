"""Reverse-mode automatic differentiation of distributed programs.

- :class:`Variable`: a DArray on the tape (``data``, ``grad``, ``requires_grad``);
- :func:`grad`, :func:`value_and_grad`: function transforms; :func:`no_grad`;
- :data:`RULES`: the one table of derivative rules (op name -> forward, vjp),
  communication included: ``halo`` (adjoint: accumulate ghost gradients on
  their owners), ``redistribute`` (adjoint: redistribute back); a replicated
  parameter used against distributed data gets the gradient summed over ranks;
- differentiable functions: every elementwise function with a rule
  (``exp``, ``log``, ``maximum``, ...), ``sum mean max min prod var std``,
  ``reshape permute_dims expand_dims squeeze broadcast_to``, ``where``,
  ``matmul``, ``halo``, ``redistribute``.

Examples
--------
>>> import numpy as np, darray as da
>>> from darray import autodiff as ad
>>> f = lambda x: ad.sum(ad.exp(x) * 2.0)
>>> np.asarray(ad.grad(f)(da.zeros(4))).tolist()
[2.0, 2.0, 2.0, 2.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._core import target_layout
from . import rules
from .rules import RULES, register
from .tape import (FUNCTIONS, Variable, apply, backward, enable_grad, grad, is_grad_enabled, no_grad,
                   value_and_grad)

globals().update(FUNCTIONS)

# The elementwise functions set just above, declared for type checkers (tests/test_declared_names.py checks
# that these are tape.FUNCTIONS): each takes Variables or DArrays and records onto the tape.
abs: Callable[..., Any]
acos: Callable[..., Any]
acosh: Callable[..., Any]
add: Callable[..., Any]
asin: Callable[..., Any]
asinh: Callable[..., Any]
atan: Callable[..., Any]
atan2: Callable[..., Any]
atanh: Callable[..., Any]
ceil: Callable[..., Any]
copysign: Callable[..., Any]
cos: Callable[..., Any]
cosh: Callable[..., Any]
divide: Callable[..., Any]
exp: Callable[..., Any]
expm1: Callable[..., Any]
floor: Callable[..., Any]
hypot: Callable[..., Any]
log: Callable[..., Any]
log1p: Callable[..., Any]
log2: Callable[..., Any]
log10: Callable[..., Any]
logaddexp: Callable[..., Any]
maximum: Callable[..., Any]
minimum: Callable[..., Any]
multiply: Callable[..., Any]
negative: Callable[..., Any]
positive: Callable[..., Any]
pow: Callable[..., Any]
reciprocal: Callable[..., Any]
remainder: Callable[..., Any]
round: Callable[..., Any]
sign: Callable[..., Any]
sin: Callable[..., Any]
sinh: Callable[..., Any]
sqrt: Callable[..., Any]
square: Callable[..., Any]
subtract: Callable[..., Any]
tan: Callable[..., Any]
tanh: Callable[..., Any]
trunc: Callable[..., Any]


def sum(x, /, *, axis=None, keepdims=False):
    """Differentiable :func:`darray.sum`."""
    return apply("sum", x, axis=axis, keepdims=keepdims)


def mean(x, /, *, axis=None, keepdims=False):
    """Differentiable :func:`darray.mean`."""
    return apply("mean", x, axis=axis, keepdims=keepdims)


def max(x, /, *, axis=None, keepdims=False):
    """Differentiable :func:`darray.max` (the gradient is split among ties)."""
    return apply("max", x, axis=axis, keepdims=keepdims)


def min(x, /, *, axis=None, keepdims=False):
    """Differentiable :func:`darray.min` (the gradient is split among ties)."""
    return apply("min", x, axis=axis, keepdims=keepdims)


def prod(x, /, *, axis=None, keepdims=False):
    """Differentiable :func:`darray.prod` (inputs without zeros)."""
    return apply("prod", x, axis=axis, keepdims=keepdims)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Differentiable :func:`darray.var`."""
    return apply("var", x, axis=axis, correction=correction, keepdims=keepdims)


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    """Differentiable :func:`darray.std`."""
    return apply("std", x, axis=axis, correction=correction, keepdims=keepdims)


def reshape(x, /, shape):
    """Differentiable :func:`darray.reshape`."""
    return apply("reshape", x, shape=tuple(shape))


def permute_dims(x, /, axes):
    """Differentiable :func:`darray.permute_dims`."""
    return apply("permute_dims", x, axes=tuple(axes))


def expand_dims(x, /, *, axis=0):
    """Differentiable :func:`darray.expand_dims`."""
    return apply("expand_dims", x, axis=axis)


def squeeze(x, /, axis):
    """Differentiable :func:`darray.squeeze`."""
    return apply("squeeze", x, axis=axis)


def broadcast_to(x, /, shape):
    """Differentiable :func:`darray.broadcast_to`."""
    return apply("broadcast_to", x, shape=tuple(shape))


def where(condition, x1, x2, /):
    """Differentiable ``where`` (no gradient flows to ``condition``)."""
    if isinstance(condition, Variable):
        condition = condition.data
    return apply("where", condition, x1, x2)


def matmul(x1, x2, /):
    """Differentiable :func:`darray.matmul`."""
    return apply("matmul", x1, x2)


def astype(x, dtype, /):
    """Differentiable dtype conversion (the gradient is converted back)."""
    return apply("astype", x, dtype=dtype)


def halo(x, /, depth, boundary="none"):
    """``x`` with ghost width ``depth`` exchanged: a communication op on the tape.

    Its adjoint sends the gradients of ghost cells back to their owners and
    adds them (:func:`darray._core.halo.accumulate_halos`); gradients of
    ghost cells past a ``reflect``/``nearest`` edge go to the cells they copy.
    """
    return apply("halo", x, depth=depth, boundary=boundary)


def redistribute(x, /, split="auto", grid=None, *, sizes=None, layout=None):
    """``x`` in another layout, on the tape (the adjoint redistributes the gradient back)."""
    data = x.data if isinstance(x, Variable) else x
    if layout is None:
        layout = target_layout(data, "redistribute", split, grid, sizes, 0, "none")
    return apply("redistribute", x, layout=layout)


__all__ = sorted(["RULES", "Variable", "apply", "astype", "backward", "broadcast_to", "enable_grad",
                  "expand_dims", "grad", "halo", "is_grad_enabled", "matmul", "max", "mean", "min", "no_grad",
                  "permute_dims", "prod", "redistribute", "register", "reshape", "rules", "squeeze", "std", "sum",
                  "value_and_grad", "var", "where", *FUNCTIONS])
