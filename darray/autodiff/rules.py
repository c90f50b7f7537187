"""THE table of derivative rules: op name -> (forward, vector-Jacobian product).

Rules speak in DArrays only (they never see a :class:`~darray.autodiff.Variable`):

- ``forward(ctx, *xs, **params)`` computes the op's value from the inputs'
  data (DArrays or Python scalars) and may stash what the backward pass
  needs in ``ctx.saved``;
- ``backward(ctx, g)`` gets the gradient ``g`` with respect to the output
  (a DArray of the output's shape and layout) and returns one gradient per
  input (None where ``ctx.needs[i]`` is False or the input is a constant).

Gradients are GLOBAL arrays, like every DArray: a gradient returned in some
layout is moved to the input's layout by the tape (the adjoint of a
redistribution is the inverse redistribution). Broadcast operands get their
gradient summed over the broadcast axes with :func:`darray.sum`, which
allreduces over the grid dims that cut those axes: a replicated parameter
used against distributed data therefore receives the sum over all ranks.

Communication ops are first-class rules: ``halo`` (adjoint:
:func:`~darray._core.halo.accumulate_halos`, after folding the ghost cells
past a reflect/nearest edge back onto their source cells) and
``redistribute`` (adjoint: redistribute back). Layers in :mod:`darray.nn`
register their local kernels here with :func:`register`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .._api.linear_algebra import matmul
from .._api.overlap import with_halo
from .._core import DArray, redistribute_to
from .._core.elementwise import wrap_like
from .._core.halo import accumulate_halos
from .._core.indexing import is_basic_key
from .._core.reductions import normalize_axes
from .._errors import message
from .._layout import Layout, mirror_source

__all__ = ["Rule", "RULES", "register", "Context", "unbroadcast", "to_layout", "restored", "zeros_in", "accumulate",
           "namespace", "ELEMENTWISE_UNARY", "ELEMENTWISE_BINARY", "NONDIFFERENTIABLE"]

_SCALARS = (bool, int, float, complex)


class Rule(NamedTuple):
    forward: Callable[..., Any]
    backward: Callable[..., tuple]


class Context:
    """What one recorded op keeps for its backward pass."""

    __slots__ = ("xs", "out", "params", "needs", "saved")

    def __init__(self, xs, params, needs):
        self.xs, self.params, self.needs = xs, params, needs
        self.out = None
        self.saved: dict = {}


#: op name -> Rule. One table for every differentiable op, communication included.
RULES: dict[str, Rule] = {}


def register(name: str, forward: Callable, backward: Callable) -> None:
    """Add (or replace) the rule for op ``name``."""
    RULES[name] = Rule(forward, backward)


def namespace():
    """The public namespace :mod:`darray`, whose functions the rules (and :mod:`darray.nn`) compute with.

    Looked up at call time: ``darray/__init__.py`` imports :mod:`darray.autodiff` while it assembles
    the namespace, so a module-level import here would be a cycle.
    """
    import darray  # the namespace is assembled above this layer (see the docstring)

    return darray


# ------------------------------------------------------------------ helpers on DArrays
def zeros_in(layout: Layout, like: DArray) -> DArray:
    """Zeros (ghost cells included) in ``layout``, on ``like``'s communicator and backend."""
    xp = like._xp
    block = xp.zeros(layout.padded_shape(like._comm.rank), dtype=like._block.dtype, device=like.device)
    return DArray._wrap(block, layout, like._comm, xp)


def to_layout(g: DArray, layout: Layout) -> DArray:
    """Gradient ``g`` moved to ``layout`` (the inverse of whatever moved the value)."""
    if g._layout == layout:
        return g
    if g._layout.is_replicated and g.shape == layout.shape:  # every rank holds it all: slice locally
        local = g.local[layout.block_slices(g._comm.rank)] if g.ndim else g.local
        out = wrap_like(local, layout, g) if layout.has_halo else DArray._wrap(local, layout, g._comm, g._xp)
        return out
    if g._layout.blocks_key == layout.blocks_key and not layout.has_halo:
        return DArray._wrap(g.local, layout, g._comm, g._xp)
    return redistribute_to(g, layout)


def restored(value, like: DArray) -> DArray:
    """``value`` (a NumPy array or DArray, e.g. from a checkpoint) as a new DArray in ``like``'s layout and dtype."""
    if not isinstance(value, DArray):
        value = namespace().asarray(np.asarray(value), dtype=like.dtype, split=None, comm=like.comm)
    elif value.dtype != like.dtype:
        value = value.astype(like.dtype)
    out = to_layout(value, like.layout)
    if out is value:
        out = value.astype(value.dtype, copy=True)
    return out


def accumulate(a: DArray | None, b: DArray) -> DArray:
    """``a + b`` for gradients of one variable, ghost cells included (both in ``a``'s layout)."""
    if a is None:
        return b
    if b._layout != a._layout:
        b = to_layout(b, a._layout)
    return DArray._wrap(a._block + b._block, a._layout, a._comm, a._xp)


def unbroadcast(g: DArray, shape: tuple[int, ...]) -> DArray:
    """Sum ``g`` over the axes along which an operand of ``shape`` was broadcast.

    A :func:`darray.sum` over distributed axes allreduces: the result is the
    global sum on every rank.
    """
    da = namespace()
    if g.shape == tuple(shape):
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + a for a, n in enumerate(shape) if n == 1 and g.shape[lead + a] != 1)
    if axes:
        g = da.sum(g, axis=axes, keepdims=True)
    if lead:
        g = g[(0,) * lead]
    return g


def _shape_of(x) -> tuple:
    return tuple(x.shape) if hasattr(x, "shape") else ()


def _reduce_to(g, x):
    """Gradient for operand ``x`` of a broadcasting op (None for scalars)."""
    if isinstance(x, _SCALARS):
        return None
    return unbroadcast(g, _shape_of(x))


# ------------------------------------------------------------------ elementwise
def _f(name):
    return getattr(namespace(), name)


#: unary name -> d(out)/dx given (g, x, y), y the output.
ELEMENTWISE_UNARY: dict[str, Callable] = {
    "negative": lambda g, x, y: -g,
    "positive": lambda g, x, y: g,
    "exp": lambda g, x, y: g * y,
    "expm1": lambda g, x, y: g * (y + 1.0),
    "log": lambda g, x, y: g / x,
    "log1p": lambda g, x, y: g / (x + 1.0),
    "log2": lambda g, x, y: g / (x * math.log(2.0)),
    "log10": lambda g, x, y: g / (x * math.log(10.0)),
    "sqrt": lambda g, x, y: g / (y * 2.0),
    "square": lambda g, x, y: g * x * 2.0,
    "reciprocal": lambda g, x, y: -(g * y * y),
    "sin": lambda g, x, y: g * _f("cos")(x),
    "cos": lambda g, x, y: -(g * _f("sin")(x)),
    "tan": lambda g, x, y: g * (y * y + 1.0),
    "sinh": lambda g, x, y: g * _f("cosh")(x),
    "cosh": lambda g, x, y: g * _f("sinh")(x),
    "tanh": lambda g, x, y: g * (1.0 - y * y),
    "asin": lambda g, x, y: g / _f("sqrt")(1.0 - x * x),
    "acos": lambda g, x, y: -(g / _f("sqrt")(1.0 - x * x)),
    "atan": lambda g, x, y: g / (x * x + 1.0),
    "asinh": lambda g, x, y: g / _f("sqrt")(x * x + 1.0),
    "acosh": lambda g, x, y: g / _f("sqrt")(x * x - 1.0),
    "atanh": lambda g, x, y: g / (1.0 - x * x),
    "abs": lambda g, x, y: g * _f("sign")(x),
}

#: piecewise-constant functions: zero gradient almost everywhere.
NONDIFFERENTIABLE = ("sign", "floor", "ceil", "trunc", "round")


def _half_mask(a, b, pick):
    """1 where ``pick(a, b)`` strictly, 0.5 on ties (torch's maximum/minimum), else 0."""
    da = namespace()
    return da.astype(pick(a, b), da.float64) + da.astype(da.equal(a, b), da.float64) * 0.5


def _pow_b(g, a, b, y):
    """d(a**b)/db = a**b log(a); zero where a <= 0 (torch masks a == 0 likewise)."""
    da = namespace()
    if isinstance(a, _SCALARS):
        return g * y * math.log(a) if a > 0 else g * 0.0
    return g * y * da.log(_where(da.greater(a, 0), a, 1.0))


#: binary name -> (grad for a, grad for b), each given (g, a, b, y); before unbroadcasting.
ELEMENTWISE_BINARY: dict[str, tuple[Callable, Callable]] = {
    "add": (lambda g, a, b, y: g, lambda g, a, b, y: g),
    "subtract": (lambda g, a, b, y: g, lambda g, a, b, y: -g),
    "multiply": (lambda g, a, b, y: g * b, lambda g, a, b, y: g * a),
    "divide": (lambda g, a, b, y: g / b, lambda g, a, b, y: -(g * y / b)),
    "pow": (lambda g, a, b, y: g * b * _f("pow")(a, b - 1.0), _pow_b),
    "maximum": (lambda g, a, b, y: g * _half_mask(a, b, _f("greater")),
                lambda g, a, b, y: g * _half_mask(b, a, _f("greater"))),
    "minimum": (lambda g, a, b, y: g * _half_mask(a, b, _f("less")),
                lambda g, a, b, y: g * _half_mask(b, a, _f("less"))),
    "atan2": (lambda g, a, b, y: g * b / (a * a + b * b), lambda g, a, b, y: -(g * a / (a * a + b * b))),
    "hypot": (lambda g, a, b, y: g * a / y, lambda g, a, b, y: g * b / y),
    "logaddexp": (lambda g, a, b, y: g * _f("exp")(a - y), lambda g, a, b, y: g * _f("exp")(b - y)),
    "remainder": (lambda g, a, b, y: g, lambda g, a, b, y: -(g * _f("floor_divide")(a, b))),
    "copysign": (lambda g, a, b, y: g * _f("sign")(a) * _f("sign")(y), lambda g, a, b, y: g * 0.0),
}


def _unary_rule(name, deriv):
    def forward(ctx, x):
        return getattr(namespace(), name)(x)

    def backward(ctx, g):
        return (deriv(g, ctx.xs[0], ctx.out),)

    return forward, backward


def _binary_rule(name, da_, db_):
    def forward(ctx, a, b):
        return getattr(namespace(), name)(a, b)

    def backward(ctx, g):
        a, b = ctx.xs
        ga = _reduce_to(da_(g, a, b, ctx.out), a) if ctx.needs[0] else None
        gb = _reduce_to(db_(g, a, b, ctx.out), b) if ctx.needs[1] else None
        return ga, gb

    return forward, backward


for _name, _d in ELEMENTWISE_UNARY.items():
    register(_name, *_unary_rule(_name, _d))
for _name in NONDIFFERENTIABLE:
    register(_name, *_unary_rule(_name, lambda g, x, y: g * 0.0))
for _name, (_da_, _db_) in ELEMENTWISE_BINARY.items():
    register(_name, *_binary_rule(_name, _da_, _db_))


def _where_forward(ctx, cond, a, b):
    return _where(cond, a, b)


def _where(cond, a, b):
    return namespace().where(cond, a, b)


def _where_backward(ctx, g):
    cond, a, b = ctx.xs
    ga = _reduce_to(_where(cond, g, 0.0), a) if ctx.needs[1] else None
    gb = _reduce_to(_where(cond, 0.0, g), b) if ctx.needs[2] else None
    return None, ga, gb


register("where", _where_forward, _where_backward)


def _astype_forward(ctx, x, dtype):
    return namespace().astype(x, dtype)


def _astype_backward(ctx, g):
    return (namespace().astype(g, ctx.xs[0].dtype),)


register("astype", _astype_forward, _astype_backward)


# ------------------------------------------------------------------ reductions
def _axes(axis, ndim):
    return normalize_axes("autodiff", axis, ndim)


def _expand_back(g, x, axes, keepdims):
    """``g`` (reduced over ``axes``) broadcast back to ``x``'s shape."""
    da = namespace()
    if not keepdims:
        for a in axes:
            g = da.expand_dims(g, axis=a)
    return da.broadcast_to(g, x.shape)


def _sum_forward(ctx, x, axis=None, keepdims=False):
    return namespace().sum(x, axis=axis, keepdims=keepdims)


def _sum_backward(ctx, g):
    x = ctx.xs[0]
    return (_expand_back(g, x, _axes(ctx.params.get("axis"), x.ndim), ctx.params.get("keepdims", False)),)


def _mean_forward(ctx, x, axis=None, keepdims=False):
    return namespace().mean(x, axis=axis, keepdims=keepdims)


def _mean_backward(ctx, g):
    x = ctx.xs[0]
    axes = _axes(ctx.params.get("axis"), x.ndim)
    count = math.prod(x.shape[a] for a in axes)
    return (_expand_back(g / float(count), x, axes, ctx.params.get("keepdims", False)),)


def _extreme(func):
    def forward(ctx, x, axis=None, keepdims=False):
        return getattr(namespace(), func)(x, axis=axis, keepdims=keepdims)

    def backward(ctx, g):
        """Split evenly among the tied extremes (torch's amax/amin)."""
        da = namespace()
        x = ctx.xs[0]
        axes = _axes(ctx.params.get("axis"), x.ndim)
        keep = ctx.params.get("keepdims", False)
        y = _expand_back(ctx.out, x, axes, keep)
        mask = da.astype(da.equal(x, y), x.dtype)
        count = da.sum(mask, axis=axes, keepdims=True)
        return (mask * _expand_back(g, x, axes, keep) / count,)

    return forward, backward


def _var_forward(ctx, x, axis=None, correction=0.0, keepdims=False):
    return namespace().var(x, axis=axis, correction=correction, keepdims=keepdims)


def _var_backward(ctx, g):
    da = namespace()
    x = ctx.xs[0]
    axes = _axes(ctx.params.get("axis"), x.ndim)
    n = math.prod(x.shape[a] for a in axes)
    centred = x - da.mean(x, axis=axes, keepdims=True)
    scale = 2.0 / max(n - ctx.params.get("correction", 0.0), 0)
    return (_expand_back(g, x, axes, ctx.params.get("keepdims", False)) * centred * scale,)


def _std_forward(ctx, x, axis=None, correction=0.0, keepdims=False):
    return namespace().std(x, axis=axis, correction=correction, keepdims=keepdims)


def _std_backward(ctx, g):
    (gv,) = _var_backward(ctx, g / (ctx.out * 2.0))
    return (gv,)


def _prod_forward(ctx, x, axis=None, keepdims=False):
    return namespace().prod(x, axis=axis, keepdims=keepdims)


def _prod_backward(ctx, g):
    x = ctx.xs[0]
    axes = _axes(ctx.params.get("axis"), x.ndim)
    keep = ctx.params.get("keepdims", False)
    return (_expand_back(g, x, axes, keep) * _expand_back(ctx.out, x, axes, keep) / x,)


register("sum", _sum_forward, _sum_backward)
register("mean", _mean_forward, _mean_backward)
register("max", *_extreme("max"))
register("min", *_extreme("min"))
register("var", _var_forward, _var_backward)
register("std", _std_forward, _std_backward)
register("prod", _prod_forward, _prod_backward)


# ------------------------------------------------------------------ shape manipulation
def _reshape_forward(ctx, x, shape):
    return namespace().reshape(x, shape)


def _reshape_backward(ctx, g):
    return (namespace().reshape(g, ctx.xs[0].shape),)


def _permute_forward(ctx, x, axes):
    return namespace().permute_dims(x, axes)


def _permute_backward(ctx, g):
    axes = tuple(a % ctx.xs[0].ndim for a in ctx.params["axes"])
    inverse = tuple(int(i) for i in np.argsort(axes))
    return (namespace().permute_dims(g, inverse),)


def _expand_dims_forward(ctx, x, axis=0):
    return namespace().expand_dims(x, axis=axis)


def _expand_dims_backward(ctx, g):
    return (namespace().squeeze(g, axis=ctx.params.get("axis", 0)),)


def _squeeze_forward(ctx, x, axis):
    return namespace().squeeze(x, axis=axis)


def _squeeze_backward(ctx, g):
    return (namespace().reshape(g, ctx.xs[0].shape) if g.size else g,)


def _broadcast_to_forward(ctx, x, shape):
    return namespace().broadcast_to(x, shape)


def _broadcast_to_backward(ctx, g):
    return (unbroadcast(g, ctx.xs[0].shape),)


def _getitem_forward(ctx, x, key):
    return x[key]


def _getitem_backward(ctx, g):
    """Scatter into zeros (basic keys select each cell at most once)."""
    x = ctx.xs[0]
    key = ctx.params["key"]
    if not is_basic_key(key):
        raise NotImplementedError(message("backward", "gradients of advanced indexing are not supported", key,
                                          "integers, slices, ... and None"))
    out = zeros_in(x._layout.without_halo(), g)
    out[key] = g
    return (out,)


register("reshape", _reshape_forward, _reshape_backward)
register("permute_dims", _permute_forward, _permute_backward)
register("expand_dims", _expand_dims_forward, _expand_dims_backward)
register("squeeze", _squeeze_forward, _squeeze_backward)
register("broadcast_to", _broadcast_to_forward, _broadcast_to_backward)
register("getitem", _getitem_forward, _getitem_backward)


# ------------------------------------------------------------------ linear algebra
def _matmul_forward(ctx, a, b):
    return matmul(a, b)


def _mt(x):
    da = namespace()
    return da.permute_dims(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))


def _matmul_backward(ctx, g):
    da = namespace()
    a, b = ctx.xs
    mm = matmul
    ga = gb = None
    if a.ndim == 1 and b.ndim == 1:
        return (g * b if ctx.needs[0] else None), (g * a if ctx.needs[1] else None)
    a2 = da.expand_dims(a, axis=0) if a.ndim == 1 else a
    b2 = da.expand_dims(b, axis=-1) if b.ndim == 1 else b
    g2 = g
    if a.ndim == 1:
        g2 = da.expand_dims(g2, axis=g2.ndim - 1)
    if b.ndim == 1:
        g2 = da.expand_dims(g2, axis=g2.ndim)
    if ctx.needs[0]:
        ga = unbroadcast(mm(g2, _mt(b2)), a2.shape)
        ga = da.reshape(ga, a.shape) if a.ndim == 1 else ga
    if ctx.needs[1]:
        gb = unbroadcast(mm(_mt(a2), g2), b2.shape)
        gb = da.reshape(gb, b.shape) if b.ndim == 1 else gb
    return ga, gb


register("matmul", _matmul_forward, _matmul_backward)


# ------------------------------------------------------------------ communication
def _halo_forward(ctx, x, depth, boundary):
    return with_halo(x, depth, boundary)


def fold_boundaries(g: DArray) -> DArray:
    """Adjoint of the boundary fill: ghost gradients past a reflect/nearest edge go to their source cells.

    The forward fill copies axis by axis (corners follow); the adjoint walks
    the axes in reverse. Source cells are in the padded block (owned or
    ghost); constant boundaries have no source (their gradient is dropped).
    """
    layout = g._layout
    block = g._block
    rank = g._comm.rank
    starts, shape = layout.block_start(rank), layout.block_shape(rank)
    for axis in reversed(range(layout.ndim)):
        h, kind = layout.halo[axis], layout.boundary[axis]
        if not h or kind not in ("reflect", "nearest"):
            continue
        n, lo = layout.shape[axis], starts[axis]
        first = lo - h
        size = shape[axis] + 2 * h
        for p in (*range(h), *range(max(h, size - h), size)):  # ghost cells only (owned cells are inside)
            gpos = first + p
            if 0 <= gpos < n:
                continue
            src = mirror_source(kind, gpos, n)
            here = [slice(None)] * block.ndim
            there = [slice(None)] * block.ndim
            here[axis] = slice(p, p + 1)
            there[axis] = slice(src - first, src - first + 1)
            block[tuple(there)] = block[tuple(there)] + block[tuple(here)]
            block[tuple(here)] = 0
    return g


def _halo_backward(ctx, g):
    g = DArray._wrap(g._xp.asarray(g._block, copy=True), g._layout, g._comm, g._xp)
    summed = accumulate_halos(fold_boundaries(g))
    return (summed,)


register("halo", _halo_forward, _halo_backward)


def _redistribute_forward(ctx, x, layout):
    return redistribute_to(x, layout)


def _redistribute_backward(ctx, g):
    x = ctx.xs[0]
    return (redistribute_to(g, x._layout),)


register("redistribute", _redistribute_forward, _redistribute_backward)
