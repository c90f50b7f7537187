"""Convolutions and transposed convolutions on spatially cut fields.

A convolution runs on every block extended by the halo its windows need
(:func:`darray.autodiff.halo`: exchanged forward, ghost gradients
accumulated on their owners backward) with the local kernels of the block's
backend (:mod:`darray.nn._kernels`); the weight gradient is summed over the
ranks holding distinct blocks. Transposed convolutions support the
non-overlapping case ``kernel_size == stride`` (learned upsampling): each
input cell owns its output patch, so they are local on every block.
"""

from __future__ import annotations

import inspect

from .. import autodiff as ad
from .._core.reductions import combine
from .._errors import message
from .._layout import Layout
from ..autodiff import apply, register
from ._kernels import kernels_for
from ._util import data, ntuple, redistributed, whole, whole_channel_layout, wrap_storage, zeros
from ._window import WindowPlan, extract, scatter_back, window_plan

__all__ = ["conv", "conv1d", "conv2d", "conv3d", "conv_transpose", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "transpose_geometry"]


# ------------------------------------------------------------------ shared by both kinds
def _add_bias(out, bias, cout: int, nsp: int):
    return out if bias is None else out + ad.reshape(bias, (cout,) + (1,) * nsp)


def _per_dims(base, stem: str, weight_shape: str, what: str):
    """torch's ``{stem}1d``, ``{stem}2d``, ``{stem}3d``: ``base`` with a weight of 1, 2 or 3 kernel axes.

    They keep ``base``'s signature; a weight with another number of axes
    raises ValueError naming the function. ``base`` gets the name for its own
    messages when it takes ``_func``.
    """
    sig = inspect.signature(base)
    named = "_func" in sig.parameters
    sig = sig.replace(parameters=[q for q in sig.parameters.values() if q.name != "_func"])

    def make(nsp):
        name = f"{stem}{nsp}d"

        def f(x, weight, *args, **kwargs):
            wd = data(weight)
            if wd.ndim != nsp + 2:
                raise ValueError(message(name, f"weight must be {weight_shape} with {nsp} kernel axes", tuple(wd.shape),
                                         f"a {nsp + 2}-d weight"))
            return base(x, weight, *args, **kwargs, **({"_func": name} if named else {}))

        f.__name__ = f.__qualname__ = name
        f.__signature__ = sig
        f.__doc__ = f"{nsp}-d {what} (torch's ``{name}``; see :func:`{base.__name__}`)."
        return f

    return tuple(make(n) for n in (1, 2, 3))


# ------------------------------------------------------------------ convolution
def _conv_local_forward(ctx, p, w, plan: WindowPlan, groups: int):
    rank = p._comm.rank
    block, weight = p._block, whole(w)
    win = plan.window(p._layout, rank)
    oshape = plan.out.block_shape(rank)
    ctx.saved["win"] = win
    if any(on == 0 for *_, on in win) or block.shape[0] == 0:
        return wrap_storage(zeros(p, oshape), plan.out, p)
    sub, _ = extract(p._xp, block, win, 0.0, p.device)
    out = kernels_for(p._xp).conv(sub, weight, plan.stride, plan.dilation, groups)
    return wrap_storage(out, plan.out, p)


def _conv_local_backward(ctx, g):
    p, w = ctx.xs
    plan, groups = ctx.params["plan"], ctx.params["groups"]
    block, weight = p._block, whole(w)
    win = ctx.saved["win"]
    gp = gw = None
    if any(on == 0 for *_, on in win) or block.shape[0] == 0:
        gp = zeros(p, block.shape) if ctx.needs[0] else None
        gw = zeros(p, weight.shape, weight.dtype)
    else:
        sub, inner = extract(p._xp, block, win, 0.0, p.device)
        gsub, gw = kernels_for(p._xp).conv_backward(sub, weight, g.local, plan.stride, plan.dilation, groups,
                                                    ctx.needs[0], ctx.needs[1])
        if ctx.needs[0]:
            gp = scatter_back(p._xp, block.shape, gsub, win, inner, p.device)
    out_p = wrap_storage(gp, p._layout, p) if ctx.needs[0] else None
    out_w = None
    if ctx.needs[1]:
        gw = combine(gw, "sum", p._comm, plan.out)
        out_w = wrap_storage(gw, w._layout.replicated(), w)
    return out_p, out_w


register("conv_local", _conv_local_forward, _conv_local_backward)

_MODES = {"zeros": 0.0, "circular": "periodic", "replicate": "nearest"}


def _conv_pads(ksize, stride, dilation, padding, nsp):
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nsp
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError(message("conv", "padding='same' needs stride 1", stride, "stride=1"))
            return tuple(((d * (k - 1)) // 2, d * (k - 1) - (d * (k - 1)) // 2) for k, d in zip(ksize, dilation))
        raise ValueError(message("conv", "unknown padding", padding, "an int, a tuple, 'same' or 'valid'"))
    pads = ntuple("conv", "padding", padding, nsp)
    if any(p < 0 for p in pads):
        raise ValueError(message("conv", "padding must be non-negative", padding, "ints >= 0"))
    return tuple((p, p) for p in pads)


def conv(x, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1, padding_mode: str = "zeros"):
    """N-d convolution (cross-correlation, like torch) of ``x`` ``(N, C, *spatial)`` with ``weight``.

    ``weight``: ``(C_out, C_in / groups, *kernel)``; ``padding``: int, tuple,
    ``'same'`` or ``'valid'``; ``padding_mode``: ``'zeros'``, ``'circular'``
    or ``'replicate'``. The result equals the convolution of the whole field.
    """
    xd, wd = data(x), data(weight)
    nsp = wd.ndim - 2
    if nsp < 1 or xd.ndim != nsp + 2:
        raise ValueError(message("conv", "input must be (N, C, *spatial) matching the weight", xd.shape,
                                 f"{nsp + 2}-d for a weight of shape {wd.shape}"))
    cout, cin_g = wd.shape[0], wd.shape[1]
    groups = int(groups)
    if groups < 1 or xd.shape[1] != cin_g * groups or cout % groups:
        raise ValueError(message("conv", "channels do not match the weight and groups", xd.shape[1],
                                 f"{cin_g * groups} input channels, C_out divisible by groups={groups}"))
    if padding_mode not in _MODES:
        raise ValueError(message("conv", "unsupported padding_mode", padding_mode, f"one of {tuple(_MODES)}"))
    if bias is not None and tuple(data(bias).shape) != (cout,):
        raise ValueError(message("conv", "bias shape does not match the output channels", data(bias).shape,
                                 (cout,)))
    ksize = tuple(wd.shape[2:])
    stride = ntuple("conv", "stride", stride, nsp)
    dilation = ntuple("conv", "dilation", dilation, nsp)
    if any(s < 1 for s in stride) or any(d < 1 for d in dilation):
        raise ValueError(message("conv", "stride and dilation must be positive", (stride, dilation), "ints >= 1"))
    pads = _conv_pads(ksize, stride, dilation, padding, nsp)
    layout = whole_channel_layout("conv", xd)
    plan = window_plan("conv", layout, cout, ksize, stride, dilation, pads)
    if padding_mode != "zeros" and any(r > layout.shape[2 + i] for i, r in enumerate(plan.reach)):
        raise ValueError(message("conv", f"padding_mode={padding_mode!r} needs padding at most the input size",
                                 pads, f"at most {layout.shape[2:]}"))
    x = redistributed(x, layout)
    boundary = ("none", "none") + (_MODES[padding_mode],) * nsp
    padded = ad.halo(x, plan.halo, boundary) if any(plan.halo) else x
    out = apply("conv_local", padded, weight, plan=plan, groups=groups)
    return _add_bias(out, bias, cout, nsp)


conv1d, conv2d, conv3d = _per_dims(conv, "conv", "(C_out, C_in / groups, *kernel)", "convolution")


# ------------------------------------------------------------------ transposed convolution
def transpose_geometry(func, nsp, kernel, stride, padding, output_padding, dilation):
    """``(kernel, stride)`` as tuples; NotImplementedError naming any unsupported setting (same on every rank)."""
    kernel = ntuple(func, "kernel_size", kernel, nsp)
    stride = ntuple(func, "stride", stride, nsp)
    padding = ntuple(func, "padding", padding, nsp)
    output_padding = ntuple(func, "output_padding", output_padding, nsp)
    dilation = ntuple(func, "dilation", dilation, nsp)
    if any(k < 1 for k in kernel) or any(s < 1 for s in stride):
        raise ValueError(message(func, "kernel_size and stride must be positive", (kernel, stride)))
    unsupported = [(name, value, ok) for name, value, ok in (
        ("stride", stride, kernel), ("padding", padding, (0,) * nsp),
        ("output_padding", output_padding, (0,) * nsp), ("dilation", dilation, (1,) * nsp)) if value != ok]
    if unsupported:
        name, value, ok = unsupported[0]
        what = "stride == kernel_size" if name == "stride" else f"{name}={ok[0]}"
        raise NotImplementedError(message(
            func, f"only the non-overlapping case (stride == kernel_size, padding=0, output_padding=0, "
                  f"dilation=1) is supported; unsupported {name}", value,
            f"{what} (kernel_size={kernel})"))
    return kernel, stride


def _transpose_layout(layout: Layout, cout: int, stride) -> Layout:
    """Output layout: channels ``cout``; every block ``stride`` times larger along the spatial axes."""
    shape, sizes = list(layout.shape), list(layout.sizes)
    shape[1], sizes[1] = cout, (cout,)
    for i, s in enumerate(stride):
        shape[2 + i] *= s
        sizes[2 + i] = tuple(n * s for n in sizes[2 + i])
    return layout.replace(shape=tuple(shape), sizes=tuple(sizes))


def _conv_transpose_forward(ctx, x, w, stride, groups):
    local, weight = x.local, whole(w)
    out = _transpose_layout(x._layout.without_halo(), weight.shape[1] * groups, stride)
    oshape = out.block_shape(x._comm.rank)
    if any(n == 0 for n in local.shape):
        return wrap_storage(zeros(x, oshape), out, x)
    return wrap_storage(kernels_for(x._xp).conv_transpose(local, weight, stride, groups), out, x)


def _conv_transpose_backward(ctx, g):
    x, w = ctx.xs
    stride, groups = ctx.params["stride"], ctx.params["groups"]
    local, weight = x.local, whole(w)
    if any(n == 0 for n in local.shape):
        gx, gw = zeros(x, local.shape), zeros(x, weight.shape, weight.dtype)
    else:
        gx, gw = kernels_for(x._xp).conv_transpose_backward(local, weight, g.local, stride, groups,
                                                            ctx.needs[0], ctx.needs[1])
    out_x = wrap_storage(gx, x._layout.without_halo(), x) if ctx.needs[0] else None
    out_w = None
    if ctx.needs[1]:
        gw = combine(gw, "sum", x._comm, x._layout)
        out_w = wrap_storage(gw, w._layout.replicated(), w)
    return out_x, out_w


register("conv_transpose_local", _conv_transpose_forward, _conv_transpose_backward)


def conv_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups: int = 1, dilation=1,
                   *, _func="conv_transpose"):
    """N-d transposed convolution (torch's ``conv_transpose*d``) of ``x`` ``(N, C_in, *spatial)``.

    ``weight``: ``(C_in, C_out / groups, *kernel)``. Only the non-overlapping
    case is supported: ``stride == kernel_size``, ``padding=0``,
    ``output_padding=0``, ``dilation=1`` (NotImplementedError otherwise);
    the output is ``(N, C_out, *(spatial * stride))``. Each input cell fills
    its own output patch, so the op is local on every block: output blocks
    are the input blocks times ``stride`` (no communication forward; the
    weight gradient is summed over the ranks, like :func:`conv`'s).
    """
    xd, wd = data(x), data(weight)
    nsp = wd.ndim - 2
    if nsp < 1 or xd.ndim != nsp + 2:
        raise ValueError(message(_func, "input must be (N, C, *spatial) matching the weight", xd.shape,
                                 f"{nsp + 2}-d for a weight of shape {wd.shape}"))
    groups = int(groups)
    cin, cout_g = wd.shape[0], wd.shape[1]
    if groups < 1 or xd.shape[1] != cin or cin % groups:
        raise ValueError(message(_func, "channels do not match the weight and groups", xd.shape[1],
                                 f"{cin} input channels (weight of shape {wd.shape}), divisible by groups={groups}"))
    cout = cout_g * groups
    if bias is not None and tuple(data(bias).shape) != (cout,):
        raise ValueError(message(_func, "bias shape does not match the output channels", data(bias).shape,
                                 (cout,)))
    kernel, stride = transpose_geometry(_func, nsp, tuple(wd.shape[2:]), stride, padding, output_padding, dilation)
    x = redistributed(x, whole_channel_layout(_func, xd))
    out = apply("conv_transpose_local", x, weight, stride=stride, groups=groups)
    return _add_bias(out, bias, cout, nsp)


conv_transpose1d, conv_transpose2d, conv_transpose3d = _per_dims(
    conv_transpose, "conv_transpose", "(C_in, C_out / groups, *kernel)",
    "transposed convolution (stride == kernel_size only)")
