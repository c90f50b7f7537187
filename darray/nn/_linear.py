"""``linear``: a dense layer over one feature axis, local once that axis is whole."""

from __future__ import annotations

import math

from .. import autodiff as ad
from .._core.reductions import combine
from .._errors import message
from ..autodiff import apply, register
from ._util import data, whole, whole_axis_layout, wrap_storage

__all__ = ["linear"]


def _linear_forward(ctx, x, w, axis):
    xp, local, weight = x._xp, x.local, whole(w)
    y = xp.moveaxis(xp.tensordot(local, weight, axes=([axis], [1])), -1, axis)
    layout = x._layout.without_halo()
    shape, sizes = list(layout.shape), list(layout.sizes)
    shape[axis], sizes[axis] = weight.shape[0], (weight.shape[0],)
    return wrap_storage(y, layout.replace(shape=tuple(shape), sizes=tuple(sizes)), x)


def _linear_backward(ctx, g):
    x, w = ctx.xs
    axis = ctx.params["axis"]
    xp, local, weight, gl = x._xp, x.local, whole(w), g.local
    gx = gw = None
    if ctx.needs[0]:
        gx = wrap_storage(xp.moveaxis(xp.tensordot(gl, weight, axes=([axis], [0])), -1, axis), x._layout.without_halo(), x)
    if ctx.needs[1]:
        others = [a for a in range(local.ndim) if a != axis]
        part = xp.tensordot(gl, local, axes=(others, others)) if math.prod(local.shape) else \
            xp.zeros(tuple(weight.shape), dtype=weight.dtype, device=x.device)
        gw = wrap_storage(combine(part, "sum", x._comm, x._layout), w._layout.replicated(), w)
    return gx, gw


register("linear_local", _linear_forward, _linear_backward)


def linear(x, weight, bias=None, axis: int = -1):
    """``x @ weight.T + bias`` over feature axis ``axis`` (torch's last axis by default; 1 for NCHW)."""
    xd = data(x)
    axis = axis % xd.ndim
    if xd.shape[axis] != data(weight).shape[1]:
        raise ValueError(message("linear", "feature size does not match the weight", xd.shape[axis],
                                 f"{data(weight).shape[1]} (weight of shape {data(weight).shape})"))
    layout = whole_axis_layout("linear", xd._layout, axis)
    if layout != xd._layout:
        x = ad.redistribute(x, layout=layout)
    out = apply("linear_local", x, weight, axis=axis)
    if bias is not None:
        out = out + ad.reshape(bias, (data(bias).shape[0],) + (1,) * (xd.ndim - 1 - axis))
    return out
