"""Differentiable neural-network functions on distributed fields (torch.nn.functional's names).

Data is channels-first, ``(N, C, *spatial)``, with the spatial axes cut over
the ranks (batch and channel axes whole). Convolutions run on every block
extended by halos (:func:`darray.autodiff.halo`: exchanged forward, ghost
gradients accumulated on their owners backward) with a local im2col +
matrix product; weight gradients are summed over the ranks holding distinct
blocks. Pooling is local once block boundaries sit on the pooling grid
(otherwise the input is first redistributed to such blocks, on the tape).
Normalisations combine statistics over the ranks through :func:`darray.mean`.

Transposed convolutions (``conv_transpose*``) support the non-overlapping
case kernel_size == stride (learned upsampling): each input cell owns its
output patch, so they are local on every block with no halo.

The local kernels (``conv_local``, ``conv_transpose_local``, ``pool_local``,
``upsample_local``, ``linear_local`` and the activations) are registered in
:data:`darray.autodiff.RULES` next to every other rule.
"""

from __future__ import annotations

import math
import numbers
from functools import lru_cache

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import autodiff as ad
from .._core import DArray
from .._core.elementwise import wrap_like
from .._errors import message
from .._layout import Layout, balanced_sizes
from ..autodiff import Variable, apply, register
from ..autodiff.rules import allreduce_partial

__all__ = ["conv1d", "conv2d", "conv3d", "conv", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "conv_transpose", "linear", "relu", "leaky_relu", "gelu", "silu", "tanh",
           "sigmoid", "softplus", "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d",
           "max_pool3d", "interpolate", "upsample", "batch_norm", "group_norm", "layer_norm", "dropout",
           "softmax", "log_softmax", "mse_loss", "l1_loss", "huber_loss", "cross_entropy"]


def _darray():
    import darray

    return darray


def _data(x):
    return x.data if isinstance(x, Variable) else x


def _var(x):
    """``x`` as a Variable (a constant when it is a DArray): Variables go first in mixed expressions."""
    return x if isinstance(x, Variable) else Variable(x)


def _plain(layout: Layout) -> Layout:
    """``layout`` without ghost cells."""
    if not layout.has_halo:
        return layout
    return layout.replace(halo=(0,) * layout.ndim, boundary=("none",) * layout.ndim)


def _full(w: DArray):
    """The whole (small, replicated) array on this rank."""
    return w.local if w._layout.is_replicated else w.gather()


def _tuple(func, name, value, n) -> tuple[int, ...]:
    if isinstance(value, numbers.Integral):
        return (int(value),) * n
    out = tuple(int(v) for v in value)
    if len(out) != n:
        raise ValueError(message(func, f"{name} needs one entry per spatial axis", value, f"{n} entries"))
    return out


# ------------------------------------------------------------------ pointwise activations
def _pointwise(name, f, df):
    """Register an elementwise rule computed on local blocks: ``y = f(x)``, ``dx = g * df(x, y)``."""

    def forward(ctx, x, **params):
        return wrap_like(f(x.local, **params), x._layout, x)

    def backward(ctx, g):
        x, y = ctx.xs[0], ctx.out
        local = df(x.local, y.local, **ctx.params)
        return (g * wrap_like(local, g._layout, x),)

    register(name, forward, backward)


def _erf(z):
    try:
        from scipy.special import erf
    except ImportError:  # pragma: no cover - scipy is optional
        erf = np.vectorize(math.erf, otypes=[np.float64])
    return erf(z)


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


_SQRT1_2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_C = math.sqrt(2.0 / math.pi)

_pointwise("relu", lambda x: np.maximum(x, 0).astype(x.dtype, copy=False), lambda x, y: (x > 0).astype(x.dtype))
_pointwise("leaky_relu", lambda x, slope=0.01: np.where(x > 0, x, x * slope).astype(x.dtype, copy=False),
           lambda x, y, slope=0.01: np.where(x > 0, 1.0, slope).astype(x.dtype))
_pointwise("gelu", lambda x: (0.5 * x * (1.0 + _erf(x * _SQRT1_2))).astype(x.dtype, copy=False),
           lambda x, y: (0.5 * (1.0 + _erf(x * _SQRT1_2)) + x * _INV_SQRT_2PI * np.exp(-0.5 * x * x)
                         ).astype(x.dtype, copy=False))


def _gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(_GELU_C * (x + 0.044715 * x ** 3)))


def _gelu_tanh_d(x, y):
    t = np.tanh(_GELU_C * (x + 0.044715 * x ** 3))
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * _GELU_C * (1.0 + 3 * 0.044715 * x * x)


_pointwise("gelu_tanh", _gelu_tanh, _gelu_tanh_d)
_pointwise("sigmoid", lambda x: _sigmoid(x).astype(x.dtype, copy=False), lambda x, y: y * (1.0 - y))
_pointwise("silu", lambda x: (x * _sigmoid(x)).astype(x.dtype, copy=False),
           lambda x, y: (_sigmoid(x) * (1.0 + x * (1.0 - _sigmoid(x)))).astype(x.dtype, copy=False))


def _softplus(x, beta=1.0, threshold=20.0):
    bx = x * beta
    return np.where(bx > threshold, x, np.logaddexp(0.0, bx) / beta).astype(x.dtype, copy=False)


def _softplus_d(x, y, beta=1.0, threshold=20.0):
    bx = x * beta
    return np.where(bx > threshold, 1.0, _sigmoid(bx)).astype(x.dtype, copy=False)


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


# ------------------------------------------------------------------ convolution
class _ConvPlan:
    """Geometry of one convolution on one input layout (cached): halo widths and the output layout."""

    def __init__(self, layout: Layout, cout, ksize, stride, dilation, pads):
        nsp = len(ksize)
        self.ksize, self.stride, self.dilation, self.pads = ksize, stride, dilation, pads
        self.span = tuple(d * (k - 1) + 1 for k, d in zip(ksize, dilation))
        halo = [0] * layout.ndim
        shape, sizes = list(layout.shape), list(layout.sizes)
        shape[1], sizes[1] = cout, (cout,)
        self.reach = []
        for i in range(nsp):
            ax = 2 + i
            n, s, span, (pl, pr) = layout.shape[ax], stride[i], self.span[i], pads[i]
            n_out = (n + pl + pr - span) // s + 1
            if n_out < 1:
                raise ValueError(message("conv", f"input too small along spatial axis {i}", n,
                                         f"at least {span - pl - pr} cells for this kernel and padding"))
            offs = layout.offsets[ax]
            counts, reach = [], 0
            for b in range(len(offs) - 1):
                lo, hi = offs[b], offs[b + 1]
                o_lo = min(-(-lo // s), n_out)
                o_hi = n_out if b == len(offs) - 2 else min(-(-hi // s), n_out)
                counts.append(o_hi - o_lo)
                if o_hi > o_lo:
                    need_lo, need_hi = o_lo * s - pl, (o_hi - 1) * s - pl + span
                    reach = max(reach, lo - need_lo, need_hi - hi)
            halo[ax] = min(reach, n)
            self.reach.append(reach)
            shape[ax], sizes[ax] = n_out, tuple(counts)
        self.halo = tuple(halo)
        self.out = Layout(tuple(shape), layout.dims, layout.split, tuple(sizes), (0,) * layout.ndim,
                          ("none",) * layout.ndim)

    def window(self, padded: Layout, rank: int):
        """Per spatial axis: ``(start, stop, pad_lo, pad_hi, n_out)`` in padded-block coordinates."""
        out = []
        starts, oshape, ostart = padded.block_start(rank), self.out.block_shape(rank), self.out.block_start(rank)
        pshape = padded.padded_shape(rank)
        for i in range(len(self.ksize)):
            ax = 2 + i
            h, s, span, pl = padded.halo[ax], self.stride[i], self.span[i], self.pads[i][0]
            o_lo, on = ostart[ax], oshape[ax]
            origin = starts[ax] - h
            start = o_lo * s - pl - origin
            stop = start + (on - 1) * s + span if on else start
            out.append((start, stop, max(0, -start), max(0, stop - pshape[ax]), on))
        return out


@lru_cache(maxsize=256)
def _conv_plan(layout, cout, ksize, stride, dilation, pads) -> _ConvPlan:
    return _ConvPlan(layout, cout, ksize, stride, dilation, pads)


_OUT, _KER = "xyz", "uvw"


def _windows(sub, plan: _ConvPlan):
    nsp = len(plan.ksize)
    view = sliding_window_view(sub, plan.span, axis=tuple(range(2, 2 + nsp)))
    index = (slice(None),) * 2 + tuple(slice(None, None, s) for s in plan.stride) + \
        tuple(slice(None, None, d) for d in plan.dilation)
    return view[index]


def _conv_local_forward(ctx, p: DArray, w: DArray, plan: _ConvPlan, groups: int):
    rank = p._comm.rank
    block, weight = p._block, _full(w)
    nsp = len(plan.ksize)
    win = plan.window(p._layout, rank)
    n, cin = block.shape[0], block.shape[1]
    cout = weight.shape[0]
    oshape = plan.out.block_shape(rank)
    ctx.saved["win"] = win
    if any(on == 0 for *_, on in win) or n == 0:
        return DArray._wrap(np.zeros(oshape, dtype=block.dtype), plan.out, p._comm, p._xp)
    sub = block[(slice(None),) * 2 + tuple(slice(max(a, 0), min(b, block.shape[2 + i]))
                                           for i, (a, b, *_) in enumerate(win))]
    if any(lo or hi for _, _, lo, hi, _ in win):
        sub = np.pad(sub, [(0, 0), (0, 0)] + [(lo, hi) for _, _, lo, hi, _ in win])
    o, k = _OUT[:nsp], _KER[:nsp]
    cols = _windows(sub, plan).reshape((n, groups, cin // groups) + oshape[2:] + plan.ksize)
    wg = weight.reshape((groups, cout // groups, cin // groups) + plan.ksize)
    out = np.einsum(f"ngc{o}{k},gdc{k}->ngd{o}", cols, wg, optimize=True).reshape(oshape)
    ctx.saved["sub_shape"] = sub.shape
    return DArray._wrap(np.ascontiguousarray(out, dtype=block.dtype), plan.out, p._comm, p._xp)


def _conv_local_backward(ctx, g: DArray):
    p, w = ctx.xs
    plan, groups = ctx.params["plan"], ctx.params["groups"]
    rank = p._comm.rank
    block, weight = p._block, _full(w)
    win = ctx.saved["win"]
    nsp = len(plan.ksize)
    n, cin, cout = block.shape[0], block.shape[1], weight.shape[0]
    gp = np.zeros(block.shape, dtype=block.dtype) if ctx.needs[0] else None
    gw = np.zeros(weight.shape, dtype=weight.dtype)
    if not (any(on == 0 for *_, on in win) or n == 0):
        o, k = _OUT[:nsp], _KER[:nsp]
        inner = tuple(slice(max(a, 0), min(b, block.shape[2 + i])) for i, (a, b, *_) in enumerate(win))
        sub = block[(slice(None),) * 2 + inner]
        if any(lo or hi for _, _, lo, hi, _ in win):
            sub = np.pad(sub, [(0, 0), (0, 0)] + [(lo, hi) for _, _, lo, hi, _ in win])
        oshape = plan.out.block_shape(rank)
        gg = g.local.reshape((n, groups, cout // groups) + oshape[2:])
        wg = weight.reshape((groups, cout // groups, cin // groups) + plan.ksize)
        cols = _windows(sub, plan).reshape((n, groups, cin // groups) + oshape[2:] + plan.ksize)
        if ctx.needs[1]:
            gw = np.einsum(f"ngc{o}{k},ngd{o}->gdc{k}", cols, gg, optimize=True).reshape(weight.shape)
        if ctx.needs[0]:
            gcols = np.einsum(f"ngd{o},gdc{k}->ngc{o}{k}", gg, wg, optimize=True)
            gcols = gcols.reshape((n, cin) + oshape[2:] + plan.ksize)
            gsub = np.zeros(sub.shape, dtype=block.dtype)
            for kidx in np.ndindex(*plan.ksize):
                where = (slice(None),) * 2 + tuple(
                    slice(ki * d, ki * d + s * (on - 1) + 1, s)
                    for ki, d, s, (*_, on) in zip(kidx, plan.dilation, plan.stride, win))
                gsub[where] += gcols[(slice(None),) * (2 + nsp) + kidx]
            crop = (slice(None),) * 2 + tuple(slice(lo, gsub.shape[2 + i] - hi)
                                              for i, (_, _, lo, hi, _) in enumerate(win))
            gp[(slice(None),) * 2 + inner] += gsub[crop]
    out_p = DArray._wrap(gp, p._layout, p._comm, p._xp) if ctx.needs[0] else None
    out_w = None
    if ctx.needs[1]:
        gw = allreduce_partial(np.ascontiguousarray(gw), plan.out, p)
        out_w = DArray._wrap(gw, w._layout.replicated(), w._comm, w._xp)
    return out_p, out_w


register("conv_local", _conv_local_forward, _conv_local_backward)

_MODES = {"zeros": 0.0, "circular": "periodic", "replicate": "nearest"}


def conv(x, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1, padding_mode: str = "zeros"):
    """N-d convolution (cross-correlation, like torch) of ``x`` ``(N, C, *spatial)`` with ``weight``.

    ``weight``: ``(C_out, C_in / groups, *kernel)``; ``padding``: int, tuple,
    ``'same'`` or ``'valid'``; ``padding_mode``: ``'zeros'``, ``'circular'``
    or ``'replicate'``. The result equals the convolution of the whole field.
    """
    xd, wd = _data(x), _data(weight)
    nsp = wd.ndim - 2
    if nsp < 1 or xd.ndim != nsp + 2:
        raise ValueError(message("conv", "input must be (N, C, *spatial) matching the weight", xd.shape,
                                 f"{nsp + 2}-d for a weight of shape {wd.shape}"))
    cout, cin_g = wd.shape[0], wd.shape[1]
    if groups < 1 or xd.shape[1] != cin_g * groups or cout % groups:
        raise ValueError(message("conv", "channels do not match the weight and groups", xd.shape[1],
                                 f"{cin_g * groups} input channels, C_out divisible by groups={groups}"))
    if padding_mode not in _MODES:
        raise ValueError(message("conv", "unsupported padding_mode", padding_mode, f"one of {tuple(_MODES)}"))
    ksize = tuple(wd.shape[2:])
    stride = _tuple("conv", "stride", stride, nsp)
    dilation = _tuple("conv", "dilation", dilation, nsp)
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * nsp
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError(message("conv", "padding='same' needs stride 1", stride))
            pads = tuple(((d * (k - 1)) // 2, d * (k - 1) - (d * (k - 1)) // 2) for k, d in zip(ksize, dilation))
        else:
            raise ValueError(message("conv", "unknown padding", padding, "an int, a tuple, 'same' or 'valid'"))
    else:
        pads = tuple((p, p) for p in _tuple("conv", "padding", padding, nsp))
    layout = _plain(xd._layout)
    if layout.axis_dim[1] is not None:  # the channel axis is contracted: make it whole
        split = tuple(None if s == 1 else s for s in layout.split)
        target = Layout.create("conv", layout.shape, xd._comm.size, split=split, grid=layout.dims)
        x = ad.redistribute(x, layout=target)
        layout = target
    elif layout != xd._layout:
        x = ad.redistribute(x, layout=layout)
    plan = _conv_plan(layout, cout, ksize, stride, dilation, pads)
    if padding_mode != "zeros" and any(r > layout.shape[2 + i] for i, r in enumerate(plan.reach)):
        raise ValueError(message("conv", f"padding_mode={padding_mode!r} needs padding at most the input size",
                                 pads, f"at most {layout.shape[2:]}"))
    boundary = ("none", "none") + (_MODES[padding_mode],) * nsp
    padded = ad.halo(x, plan.halo, boundary) if any(plan.halo) else x
    out = apply("conv_local", padded, weight, plan=plan, groups=int(groups))
    if bias is not None:
        out = out + ad.reshape(bias, (cout,) + (1,) * nsp)
    return out


def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, padding_mode="zeros"):
    return conv(x, weight, bias, stride, padding, dilation, groups, padding_mode)


conv2d = conv3d = conv1d


# ------------------------------------------------------------------ transposed convolution
def _transpose_geometry(func, nsp, kernel, stride, padding, output_padding, dilation):
    """``(kernel, stride)`` as tuples; NotImplementedError naming any unsupported setting (same on every rank)."""
    kernel = _tuple(func, "kernel_size", kernel, nsp)
    stride = _tuple(func, "stride", stride, nsp)
    padding = _tuple(func, "padding", padding, nsp)
    output_padding = _tuple(func, "output_padding", output_padding, nsp)
    dilation = _tuple(func, "dilation", dilation, nsp)
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


def _transpose_subscripts(nsp):
    i, k = _OUT[:nsp], _KER[:nsp]
    return i, k, "".join(a + b for a, b in zip(i, k))  # output cells: (input cell, offset in its patch)


def _conv_transpose_forward(ctx, x, w, stride, groups):
    local, weight = x.local, _full(w)
    nsp = len(stride)
    n, cin = local.shape[:2]
    cout_g = weight.shape[1]
    out = _transpose_layout(_plain(x._layout), cout_g * groups, stride)
    oshape = out.block_shape(x._comm.rank)
    if not local.size:
        return DArray._wrap(np.zeros(oshape, dtype=local.dtype), out, x._comm, x._xp)
    i, k, ik = _transpose_subscripts(nsp)
    xg = local.reshape((n, groups, cin // groups) + local.shape[2:])
    wg = weight.reshape((groups, cin // groups, cout_g) + tuple(stride))
    y = np.einsum(f"ngc{i},gcd{k}->ngd{ik}", xg, wg, optimize=True).reshape(oshape)
    return DArray._wrap(np.ascontiguousarray(y, dtype=local.dtype), out, x._comm, x._xp)


def _conv_transpose_backward(ctx, g):
    x, w = ctx.xs
    stride, groups = ctx.params["stride"], ctx.params["groups"]
    local, weight = x.local, _full(w)
    nsp = len(stride)
    n, cin = local.shape[:2]
    cout_g = weight.shape[1]
    i, k, ik = _transpose_subscripts(nsp)
    gx = np.zeros(local.shape, dtype=local.dtype)
    gw = np.zeros(weight.shape, dtype=weight.dtype)
    if local.size:
        xg = local.reshape((n, groups, cin // groups) + local.shape[2:])
        wg = weight.reshape((groups, cin // groups, cout_g) + tuple(stride))
        gg = g.local.reshape((n, groups, cout_g) + tuple(v for m, s in zip(local.shape[2:], stride) for v in (m, s)))
        if ctx.needs[0]:
            gx = np.einsum(f"ngd{ik},gcd{k}->ngc{i}", gg, wg, optimize=True).reshape(local.shape)
        if ctx.needs[1]:
            gw = np.einsum(f"ngc{i},ngd{ik}->gcd{k}", xg, gg, optimize=True).reshape(weight.shape)
    out_x = DArray._wrap(np.ascontiguousarray(gx, dtype=local.dtype), _plain(x._layout), x._comm, x._xp) \
        if ctx.needs[0] else None
    out_w = None
    if ctx.needs[1]:
        gw = allreduce_partial(np.ascontiguousarray(gw, dtype=weight.dtype), _plain(x._layout), x)
        out_w = DArray._wrap(gw, w._layout.replicated(), w._comm, w._xp)
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
    xd, wd = _data(x), _data(weight)
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
    if bias is not None and tuple(_data(bias).shape) != (cout,):
        raise ValueError(message(_func, "bias shape does not match the output channels", _data(bias).shape,
                                 (cout,)))
    kernel, stride = _transpose_geometry(_func, nsp, tuple(wd.shape[2:]), stride, padding, output_padding, dilation)
    layout = _plain(xd._layout)
    if layout.axis_dim[1] is not None:  # the channel axis is contracted: make it whole
        split = tuple(None if s == 1 else s for s in layout.split)
        layout = Layout.create(_func, layout.shape, xd._comm.size, split=split, grid=layout.dims)
    if layout != xd._layout:
        x = ad.redistribute(x, layout=layout)
    out = apply("conv_transpose_local", x, weight, stride=stride, groups=groups)
    if bias is not None:
        out = out + ad.reshape(bias, (cout,) + (1,) * nsp)
    return out


def _conv_transpose_nd(nsp):
    name = f"conv_transpose{nsp}d"

    def f(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
        wd = _data(weight)
        if wd.ndim != nsp + 2:
            raise ValueError(message(name, f"weight must be (C_in, C_out / groups, *kernel) with {nsp} kernel axes",
                                     wd.shape, f"a {nsp + 2}-d weight"))
        return conv_transpose(x, weight, bias, stride, padding, output_padding, groups, dilation, _func=name)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{nsp}-d transposed convolution (see :func:`conv_transpose`; stride == kernel_size only)."
    return f


conv_transpose1d, conv_transpose2d, conv_transpose3d = (_conv_transpose_nd(n) for n in (1, 2, 3))


# ------------------------------------------------------------------ linear
def _linear_forward(ctx, x, w, axis):
    local, weight = x.local, _full(w)
    y = np.moveaxis(np.tensordot(local, weight, axes=([axis], [1])), -1, axis)
    layout = _plain(x._layout)
    shape, sizes = list(layout.shape), list(layout.sizes)
    shape[axis], sizes[axis] = weight.shape[0], (weight.shape[0],)
    out = layout.replace(shape=tuple(shape), sizes=tuple(sizes))
    return DArray._wrap(np.ascontiguousarray(y), out, x._comm, x._xp)


def _linear_backward(ctx, g):
    x, w = ctx.xs
    axis = ctx.params["axis"]
    local, weight, gl = x.local, _full(w), g.local
    gx = gw = None
    if ctx.needs[0]:
        gx = np.moveaxis(np.tensordot(gl, weight, axes=([axis], [0])), -1, axis)
        gx = DArray._wrap(np.ascontiguousarray(gx), _plain(x._layout), x._comm, x._xp)
    if ctx.needs[1]:
        others = [a for a in range(local.ndim) if a != axis]
        part = np.tensordot(gl, local, axes=(others, others)) if local.size else np.zeros(weight.shape)
        gw = DArray._wrap(allreduce_partial(np.ascontiguousarray(part, dtype=weight.dtype), x._layout, x),
                          w._layout.replicated(), w._comm, w._xp)
    return gx, gw


register("linear_local", _linear_forward, _linear_backward)


def linear(x, weight, bias=None, axis: int = -1):
    """``x @ weight.T + bias`` over feature axis ``axis`` (torch's last axis by default; 1 for NCHW)."""
    xd = _data(x)
    axis = axis % xd.ndim
    if xd.shape[axis] != _data(weight).shape[1]:
        raise ValueError(message("linear", "feature size does not match the weight", xd.shape[axis],
                                 f"{_data(weight).shape[1]} (weight of shape {_data(weight).shape})"))
    layout = _plain(xd._layout)
    if layout.axis_dim[axis] is not None:
        g = layout.axis_dim[axis]
        split = tuple(None if i == g else s for i, s in enumerate(layout.split))
        layout = Layout.create("linear", layout.shape, xd._comm.size, split=split, grid=layout.dims)
    if layout != xd._layout:
        x = ad.redistribute(x, layout=layout)
    out = apply("linear_local", x, weight, axis=axis)
    if bias is not None:
        out = out + ad.reshape(bias, (_data(bias).shape[0],) + (1,) * (xd.ndim - 1 - axis))
    return out


# ------------------------------------------------------------------ pooling and upsampling
def _pool_layout(layout: Layout, kernel) -> Layout:
    shape, sizes = list(layout.shape), list(layout.sizes)
    for i, k in enumerate(kernel):
        ax = 2 + i
        n_out = layout.shape[ax] // k
        offs = layout.offsets[ax]
        shape[ax] = n_out
        sizes[ax] = tuple(min(offs[b + 1] // k, n_out) - min(-(-offs[b] // k), n_out) for b in range(len(offs) - 1))
    return Layout(tuple(shape), layout.dims, layout.split, tuple(sizes), (0,) * layout.ndim, ("none",) * layout.ndim)


def _aligned(layout: Layout, kernel) -> Layout:
    """``layout`` with block boundaries on multiples of the pooling window (itself when they are)."""
    sizes = list(layout.sizes)
    changed = False
    for i, k in enumerate(kernel):
        ax = 2 + i
        n = layout.shape[ax]
        n_out = n // k
        offs = layout.offsets[ax]
        if all(o % k == 0 or o >= n_out * k for o in offs[:-1]):
            continue
        windows = balanced_sizes(n_out, len(offs) - 1)
        new = [w * k for w in windows]
        new[-1] += n - n_out * k
        sizes[ax] = tuple(new)
        changed = True
    return layout.replace(sizes=tuple(sizes)) if changed else layout


def _pool_forward(ctx, x, kernel, mode):
    layout = _pool_layout(_plain(x._layout), kernel)
    rank = x._comm.rank
    oshape = layout.block_shape(rank)
    nsp = len(kernel)
    local = x.local
    trimmed = local[(slice(None),) * 2 + tuple(slice(0, on * k) for on, k in zip(oshape[2:], kernel))]
    split_shape = oshape[:2] + tuple(v for on, k in zip(oshape[2:], kernel) for v in (on, k))
    windows = trimmed.reshape(split_shape)
    kaxes = tuple(3 + 2 * i for i in range(nsp))
    if mode == "avg":
        out = windows.mean(axis=kaxes) if windows.size else np.zeros(oshape, dtype=local.dtype)
    else:
        order = (0, 1) + tuple(2 + 2 * i for i in range(nsp)) + kaxes
        flat = windows.transpose(order).reshape(oshape + (math.prod(kernel),))
        if flat.size:
            arg = np.argmax(flat, axis=-1)
            out = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
        else:
            arg, out = np.zeros(oshape, dtype=np.intp), np.zeros(oshape, dtype=local.dtype)
        ctx.saved["arg"] = arg
    return DArray._wrap(np.ascontiguousarray(out, dtype=local.dtype), layout, x._comm, x._xp)


def _pool_backward(ctx, g):
    x = ctx.xs[0]
    kernel, mode = ctx.params["kernel"], ctx.params["mode"]
    nsp = len(kernel)
    local = x.local
    gl = g.local
    oshape = tuple(gl.shape)
    split_shape = oshape[:2] + tuple(v for on, k in zip(oshape[2:], kernel) for v in (on, k))
    if mode == "avg":
        expanded = np.broadcast_to(gl.reshape(oshape[:2] + tuple(v for on in oshape[2:] for v in (on, 1))),
                                   split_shape) / math.prod(kernel)
    else:
        flat = np.zeros(oshape + (math.prod(kernel),), dtype=local.dtype)
        np.put_along_axis(flat, ctx.saved["arg"][..., None], gl[..., None], axis=-1)
        moved = flat.reshape(oshape + tuple(kernel))
        order = [0, 1]
        for i in range(nsp):
            order += [2 + i, 2 + nsp + i]
        expanded = moved.transpose(order)
    grad = np.zeros(local.shape, dtype=local.dtype)
    grad[(slice(None),) * 2 + tuple(slice(0, on * k) for on, k in zip(oshape[2:], kernel))] = \
        expanded.reshape(oshape[:2] + tuple(on * k for on, k in zip(oshape[2:], kernel)))
    return (DArray._wrap(grad, _plain(x._layout), x._comm, x._xp),)


register("pool_local", _pool_forward, _pool_backward)


def _pool(func, x, kernel_size, stride, padding, mode, nsp):
    xd = _data(x)
    if xd.ndim != nsp + 2:
        raise ValueError(message(func, "input must be (N, C, *spatial)", xd.shape, f"a {nsp + 2}-d array"))
    kernel = _tuple(func, "kernel_size", kernel_size, nsp)
    if stride is not None and _tuple(func, "stride", stride, nsp) != kernel:
        raise NotImplementedError(message(func, "only stride == kernel_size is supported", stride, kernel))
    if padding not in (0, (0,) * nsp):
        raise NotImplementedError(message(func, "only padding=0 is supported", padding, 0))
    for i, k in enumerate(kernel):
        if k < 1 or xd.shape[2 + i] < k:
            raise ValueError(message(func, f"kernel larger than spatial axis {i}", k, f"at most {xd.shape[2 + i]}"))
    target = _aligned(_plain(xd._layout), kernel)
    if target != xd._layout:
        x = ad.redistribute(x, layout=target)
    return apply("pool_local", x, kernel=kernel, mode=mode)


def avg_pool1d(x, kernel_size, stride=None, padding=0):
    return _pool("avg_pool1d", x, kernel_size, stride, padding, "avg", 1)


def avg_pool2d(x, kernel_size, stride=None, padding=0):
    return _pool("avg_pool2d", x, kernel_size, stride, padding, "avg", 2)


def avg_pool3d(x, kernel_size, stride=None, padding=0):
    return _pool("avg_pool3d", x, kernel_size, stride, padding, "avg", 3)


def max_pool1d(x, kernel_size, stride=None, padding=0):
    return _pool("max_pool1d", x, kernel_size, stride, padding, "max", 1)


def max_pool2d(x, kernel_size, stride=None, padding=0):
    return _pool("max_pool2d", x, kernel_size, stride, padding, "max", 2)


def max_pool3d(x, kernel_size, stride=None, padding=0):
    return _pool("max_pool3d", x, kernel_size, stride, padding, "max", 3)


def _upsample_forward(ctx, x, scale):
    layout = _plain(x._layout)
    shape, sizes = list(layout.shape), list(layout.sizes)
    local = x.local
    for i, s in enumerate(scale):
        ax = 2 + i
        shape[ax] *= s
        sizes[ax] = tuple(n * s for n in sizes[ax])
        local = np.repeat(local, s, axis=ax)
    out = layout.replace(shape=tuple(shape), sizes=tuple(sizes))
    return DArray._wrap(local, out, x._comm, x._xp)


def _upsample_backward(ctx, g):
    x = ctx.xs[0]
    scale = ctx.params["scale"]
    shape = tuple(x.local.shape)
    split_shape = shape[:2] + tuple(v for n, s in zip(shape[2:], scale) for v in (n, s))
    grad = g.local.reshape(split_shape).sum(axis=tuple(3 + 2 * i for i in range(len(scale))))
    return (DArray._wrap(np.ascontiguousarray(grad), _plain(x._layout), x._comm, x._xp),)


register("upsample_local", _upsample_forward, _upsample_backward)


def interpolate(x, scale_factor=2, mode: str = "nearest"):
    """Nearest-neighbour upsampling by integer factors along the spatial axes (local, no communication)."""
    if mode != "nearest":
        raise NotImplementedError(message("interpolate", "only mode='nearest' is supported", mode))
    nsp = _data(x).ndim - 2
    scale = _tuple("interpolate", "scale_factor", scale_factor, nsp) if not isinstance(scale_factor, float) \
        or scale_factor.is_integer() else None
    if isinstance(scale_factor, float):
        scale = (int(scale_factor),) * nsp
    if scale is None or any(s < 1 for s in scale):
        raise ValueError(message("interpolate", "scale_factor must be a positive integer", scale_factor))
    return apply("upsample_local", x, scale=scale)


upsample = interpolate


# ------------------------------------------------------------------ normalisation
def _normalize(x, axes, eps):
    x = _var(x)
    mean = ad.mean(x, axis=axes, keepdims=True)
    centred = x - mean
    var = ad.mean(centred * centred, axis=axes, keepdims=True)
    return centred / ad.sqrt(var + eps), mean, var


def _channel_shape(ndim):
    return lambda c: (c,) + (1,) * (ndim - 2)


def batch_norm(x, running_mean=None, running_var=None, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    """Batch normalisation over every axis but the channel axis (statistics combined over the ranks).

    In training the batch statistics are used and ``running_mean`` /
    ``running_var`` (DArrays, updated in place of the attribute by the module)
    are returned alongside; call through :class:`darray.nn.BatchNorm2d`.
    """
    xd = _data(x)
    axes = (0,) + tuple(range(2, xd.ndim))
    shape = _channel_shape(xd.ndim)(xd.shape[1])
    if training:
        y, mean, var = _normalize(x, axes, eps)
    else:
        da = _darray()
        mean = da.reshape(running_mean, shape)
        var = da.reshape(running_var, shape)
        y = _var(x) - mean
        y = y / da.sqrt(var + eps)
    if weight is not None:
        y = y * ad.reshape(weight, shape)
    if bias is not None:
        y = y + ad.reshape(bias, shape)
    return y


def group_norm(x, num_groups: int, weight=None, bias=None, eps=1e-5):
    """Group normalisation: statistics per sample over groups of channels and the whole spatial field."""
    x = _var(x)
    xd = _data(x)
    n, c = xd.shape[0], xd.shape[1]
    if c % num_groups:
        raise ValueError(message("group_norm", "channels must divide into groups", c, f"a multiple of {num_groups}"))
    spatial = tuple(range(2, xd.ndim))
    full = (n, c) + (1,) * len(spatial)

    def group_mean(v):
        per_channel = ad.mean(v, axis=spatial, keepdims=True) if spatial else v
        grouped = ad.mean(ad.reshape(per_channel, (n, num_groups, c // num_groups)), axis=2, keepdims=True)
        return ad.reshape(ad.broadcast_to(grouped, (n, num_groups, c // num_groups)), full)

    mean = group_mean(x)
    centred = x - mean
    var = group_mean(centred * centred)
    y = centred / ad.sqrt(var + eps)
    shape = _channel_shape(xd.ndim)(c)
    if weight is not None:
        y = y * ad.reshape(weight, shape)
    if bias is not None:
        y = y + ad.reshape(bias, shape)
    return y


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalisation over the trailing ``normalized_shape`` axes."""
    x = _var(x)
    xd = _data(x)
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else \
        tuple(normalized_shape)
    if tuple(xd.shape[xd.ndim - len(normalized_shape):]) != normalized_shape:
        raise ValueError(message("layer_norm", "trailing axes do not match normalized_shape", xd.shape,
                                 f"... + {normalized_shape}"))
    axes = tuple(range(xd.ndim - len(normalized_shape), xd.ndim))
    y, _, _ = _normalize(x, axes, eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


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
    da = _darray()
    xd = _data(x)
    if p == 1.0:
        return x * 0.0
    rng = generator if generator is not None else da.random.default_rng()
    layout = _plain(xd._layout)
    sizes = {a: list(layout.sizes[a]) for a in range(layout.ndim) if layout.axis_dim[a] is not None}
    u = rng.random(xd.shape, split=layout.split, grid=layout.dims, sizes=sizes or None, comm=xd._comm)
    mask = da.astype(u >= p, xd.dtype) * (1.0 / (1.0 - p))
    return _var(x) * mask


# ------------------------------------------------------------------ softmax and losses
def log_softmax(x, axis: int = 1):
    xd = _data(x)
    shift = _darray().max(xd, axis=axis, keepdims=True)  # a constant: no gradient
    z = _var(x) - shift
    return z - ad.log(ad.sum(ad.exp(z), axis=axis, keepdims=True))


def softmax(x, axis: int = 1):
    return ad.exp(log_softmax(x, axis))


def _reduce(loss, reduction):
    if reduction == "mean":
        return ad.mean(loss)
    if reduction == "sum":
        return ad.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(message("loss", "unknown reduction", reduction, "'mean', 'sum' or 'none'"))


def mse_loss(input, target, reduction: str = "mean"):
    d = _var(input) - target
    return _reduce(d * d, reduction)


def l1_loss(input, target, reduction: str = "mean"):
    return _reduce(ad.abs(_var(input) - target), reduction)


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0):
    d = _var(input) - target
    a = ad.abs(d)
    small = _data(a) < delta
    return _reduce(ad.where(small, d * d * 0.5, (a - 0.5 * delta) * delta), reduction)


def cross_entropy(input, target, reduction: str = "mean", label_smoothing: float = 0.0):
    """Cross entropy of logits ``input`` ``(N, C, ...)`` with class indices ``(N, ...)`` or probabilities.

    Class-index targets average over every sample and spatial cell (torch's
    ``reduction='mean'`` without weights or ignore_index).
    """
    da = _darray()
    xd = _data(input)
    td = _data(target)
    c = xd.shape[1]
    logp = log_softmax(input, axis=1)
    if td.dtype.kind in "iu":
        classes = da.reshape(da.arange(c, split=None, comm=xd._comm), (1, c) + (1,) * (xd.ndim - 2))
        probs = da.astype(da.expand_dims(td, axis=1) == classes, xd.dtype)
    else:
        probs = td
    if label_smoothing:
        probs = probs * (1.0 - label_smoothing) + label_smoothing / c
    loss = -ad.sum(logp * probs, axis=1)
    return _reduce(loss, reduction)
