"""Pointwise activations and dropout: local on every block, any backend (Array API calls only)."""

from __future__ import annotations

import math

from .._core.elementwise import wrap_like
from .._errors import message
from ..autodiff import apply, register
from ..autodiff.rules import namespace
from ._kernels import kernels_for
from ._util import as_var, data

__all__ = ["relu", "leaky_relu", "gelu", "silu", "sigmoid", "tanh", "softplus", "dropout"]


def _pointwise(name, f, df):
    """Register an elementwise rule computed on local blocks: ``y = f(xp, x)``, ``dx = g * df(xp, x, y)``."""

    def forward(ctx, x, **params):
        return wrap_like(f(x._xp, x.local, **params), x._layout, x)

    def backward(ctx, g):
        x, y = ctx.xs[0], ctx.out
        local = df(x._xp, x.local, y.local, **ctx.params)
        return (g * wrap_like(local, g._layout, x),)

    register(name, forward, backward)


_SQRT1_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_C = math.sqrt(2.0 / math.pi)


def _erf(xp, x):
    return kernels_for(xp).erf(x)


def _sigmoid(xp, z):
    return 0.5 * (1.0 + xp.tanh(0.5 * z))


def _step(xp, x):
    return xp.astype(x > 0, x.dtype)


def _gelu(xp, x):
    return 0.5 * x * (1.0 + _erf(xp, x * _SQRT1_2))


def _gelu_d(xp, x, y):
    return 0.5 * (1.0 + _erf(xp, x * _SQRT1_2)) + x * _INV_SQRT_2PI * xp.exp(-0.5 * x * x)


def _gelu_tanh(xp, x):
    return 0.5 * x * (1.0 + xp.tanh(_GELU_C * (x + 0.044715 * x ** 3)))


def _gelu_tanh_d(xp, x, y):
    t = xp.tanh(_GELU_C * (x + 0.044715 * x ** 3))
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * _GELU_C * (1.0 + 3 * 0.044715 * x * x)


def _softplus(xp, x, beta=1.0, threshold=20.0):
    bx = x * beta
    soft = (xp.log1p(xp.exp(-xp.abs(bx))) + xp.maximum(bx, 0.0)) / beta  # log(1 + e^bx) / beta, stably
    return xp.where(bx > threshold, x, soft)


def _softplus_d(xp, x, y, beta=1.0, threshold=20.0):
    bx = x * beta
    return xp.where(bx > threshold, xp.ones_like(x), _sigmoid(xp, bx))


_pointwise("relu", lambda xp, x: xp.maximum(x, 0.0), lambda xp, x, y: _step(xp, x))
_pointwise("leaky_relu", lambda xp, x, slope=0.01: xp.where(x > 0, x, x * slope),
           lambda xp, x, y, slope=0.01: _step(xp, x) * (1.0 - slope) + slope)
_pointwise("gelu", _gelu, _gelu_d)
_pointwise("gelu_tanh", _gelu_tanh, _gelu_tanh_d)
_pointwise("sigmoid", _sigmoid, lambda xp, x, y: y * (1.0 - y))
_pointwise("silu", lambda xp, x: x * _sigmoid(xp, x),
           lambda xp, x, y: _sigmoid(xp, x) * (1.0 + x * (1.0 - _sigmoid(xp, x))))
_pointwise("softplus", _softplus, _softplus_d)


def relu(x):
    return apply("relu", x)


def leaky_relu(x, negative_slope: float = 0.01):
    return apply("leaky_relu", x, slope=float(negative_slope))


def gelu(x, approximate: str = "none"):
    """GELU: the exact ``x * Phi(x)`` (torch's default) or ``approximate='tanh'``."""
    if approximate not in ("none", "tanh"):
        raise ValueError(message("gelu", "unknown approximation", approximate, "'none' or 'tanh'"))
    return apply("gelu" if approximate == "none" else "gelu_tanh", x)


def silu(x):
    return apply("silu", x)


def sigmoid(x):
    return apply("sigmoid", x)


def tanh(x):
    return apply("tanh", x)


def softplus(x, beta: float = 1.0, threshold: float = 20.0):
    return apply("softplus", x, beta=float(beta), threshold=float(threshold))


def dropout(x, p: float = 0.5, training: bool = True, generator=None):
    """Zero elements with probability ``p`` and scale the rest by ``1/(1-p)``.

    The mask comes from ``generator`` (a :func:`darray.random.default_rng`
    generator): counter-based, so the same cells are dropped whatever the
    number of ranks or the layout.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(message("dropout", "probability out of range", p, "0 <= p <= 1"))
    if not training or p == 0.0:
        return x
    da = namespace()
    xd = data(x)
    if p == 1.0:
        return x * 0.0
    rng = generator if generator is not None else da.random.default_rng()
    layout = xd._layout.without_halo()
    sizes = {a: list(layout.sizes[a]) for a in range(layout.ndim) if layout.axis_dim[a] is not None}
    u = rng.random(xd.shape, split=layout.split, grid=layout.dims, sizes=sizes or None, comm=xd._comm)
    mask = da.astype(u >= p, xd.dtype) * (1.0 / (1.0 - p))
    return as_var(x) * mask
