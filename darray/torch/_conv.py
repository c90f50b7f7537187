"""Convolutions and pooling on ShardTensors cut along spatial axes: one halo exchange, then torch's kernel.

Each block computes the outputs whose windows are centred in it
(:func:`darray.nn._window.window_plan`, shared with :mod:`darray.nn`); the
halo it exchanges is the furthest any block's windows reach past its cells,
along the cut axes only (``padding_mode`` rows come from the boundary rule,
``zeros`` padding of uncut axes costs no exchange at all). Forward and
backward run torch's own convolution on the block extended by its halo; the
halo's adjoint sends the ghost gradients home (:func:`darray.torch._collective.halo`)
and the weight's partial gradients are summed over the ranks
(:func:`darray.torch._collective.promote`).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .._errors import message
from ..nn._conv import _conv_pads
from ..nn._util import ntuple
from ..nn._window import covered, window_plan
from ._collective import halo, promote
from ._tensor import ShardTensor, local, register, unsupported, wrap

__all__ = ["windowed"]

_CONV = {F.conv1d: 1, F.conv2d: 2, F.conv3d: 3}
_TORCH_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _base(x: ShardTensor):
    """``(block, layout, pads of a pending pad or None, mode, value)`` of the input."""
    if x._dpad is None:
        return local(x), x._dlayout, None, "constant", 0.0
    base, pairs, mode, value = x._dpad
    with torch._C.DisableTorchFunctionSubclass():
        block = x.as_subclass(torch.Tensor)
    return block, base, pairs, mode, value


def windowed(func, x: ShardTensor, nsp, channels, ksize, stride, dilation, pads, fill, ceil_mode=False):
    """The windows of ``x``'s block: ``(sub, plan, layout)`` where ``sub`` holds exactly the input cells (halo and
    padding included) that this block's outputs read, padded by ``fill``. ``pads``: ``(lo, hi)`` per spatial
    axis of ``func``'s own zero / ``fill`` padding; a pending ``F.pad`` of ``x`` is folded in."""
    block, layout, pending, mode, value = _base(x)
    if pending is not None:
        if any(pending[a] != (0, 0) for a in (0, 1)):
            block, layout, pending, mode, value = local(x), x._dlayout, None, "constant", 0.0
        elif mode == "constant" and value == fill:
            pads = tuple((a + c, b + d) for (a, b), (c, d) in zip(pads, pending[2:]))
        elif all(p == (0, 0) for p in pads):
            pads = tuple(pending[2:])
        else:
            block, layout, pending, mode, value = local(x), x._dlayout, None, "constant", 0.0
    if mode == "constant":
        value = fill
    if len(layout.shape) != nsp + 2:
        raise ValueError(message(_name(func), "input must be (N, C, *spatial)", tuple(layout.shape),
                                 f"{nsp + 2} axes"))
    if layout.axis_dim[1] is not None:
        raise unsupported(func, x, "the channel axis (1) is cut; it must be whole on every block")
    plan = window_plan(_name(func), layout, channels, tuple(ksize), tuple(stride), tuple(dilation), tuple(pads),
                       ceil_mode)
    if mode != "constant" and any(r > layout.shape[2 + i] for i, r in enumerate(plan.reach)):
        raise ValueError(message(_name(func), f"padding mode {mode!r} needs padding at most the input size",
                                 pads, f"at most {layout.shape[2:]}"))
    depth = [0] * len(layout.shape)
    for i in range(nsp):
        ax = 2 + i
        if layout.axis_dim[ax] is not None or mode != "constant":
            depth[ax] = plan.halo[ax]
    comm = x._dcomm
    padded = halo(block, layout, comm, depth, mode, value) if any(depth) else block
    playout = layout.replace(halo=tuple(depth))
    win = plan.window(playout, comm.rank)
    inner, _ = covered(tuple(padded.shape), win)
    sub = padded[inner]
    widths = []
    for i, (_, _, lo, hi, on) in enumerate(win):
        if on == 0:  # no outputs here: one window of zeros, cut off afterwards (same graph on every rank)
            sub = sub.narrow(2 + i, 0, 0)
            lo, hi = plan.span[i], 0
        widths.append((lo, hi))
    flat = [w for lo_hi in reversed(widths) for w in lo_hi]
    if any(flat):
        sub = F.pad(sub, flat, value=float(value))
    return sub, plan, win


def _empty_cut(out, win):
    for i, (*_, on) in enumerate(win):
        if on == 0:
            out = out.narrow(2 + i, 0, 0)
    return out


def _name(func) -> str:
    return getattr(func, "__name__", "conv")


@register(*_CONV)
def _conv(func, args, kwargs):
    names = ("input", "weight", "bias", "stride", "padding", "dilation", "groups")
    b = dict({"bias": None, "stride": 1, "padding": 0, "dilation": 1, "groups": 1}, **dict(zip(names, args)), **kwargs)
    x, weight, bias = b["input"], b["weight"], b["bias"]
    if not isinstance(x, ShardTensor) or isinstance(weight, ShardTensor) or isinstance(bias, ShardTensor):
        raise unsupported(func, x if isinstance(x, ShardTensor) else weight, "only the input may be cut")
    nsp = _CONV[func]
    ksize = tuple(weight.shape[2:])
    stride = ntuple(_name(func), "stride", b["stride"], nsp)
    dilation = ntuple(_name(func), "dilation", b["dilation"], nsp)
    pads = _conv_pads(ksize, stride, dilation, b["padding"], nsp)
    groups = int(b["groups"])
    sub, plan, win = windowed(func, x, nsp, weight.shape[0], ksize, stride, dilation, pads, 0.0)
    layout, comm = plan.out, x._dcomm
    w = promote(weight, comm, layout)
    bias = promote(bias, comm, layout) if bias is not None else None
    out = _TORCH_CONV[nsp](sub, w, bias, stride, 0, dilation, groups)
    return wrap(_empty_cut(out, win), layout, comm)


# ------------------------------------------------------------------ pooling
_MAX = {}
_AVG = {F.avg_pool1d: 1, F.avg_pool2d: 2, F.avg_pool3d: 3}
for _n in (1, 2, 3):
    for _f in (getattr(F, f"max_pool{_n}d"), getattr(F, f"_max_pool{_n}d", None),
               getattr(F, f"max_pool{_n}d_with_indices", None), getattr(torch, f"max_pool{_n}d", None)):
        if _f is not None:
            _MAX[_f] = _n


@register(*_MAX)
def _max_pool(func, args, kwargs):
    names = ("input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices")
    b = dict({"stride": None, "padding": 0, "dilation": 1, "ceil_mode": False, "return_indices": False},
             **dict(zip(names, args)), **kwargs)
    x, nsp = b["input"], _MAX[func]
    if b["return_indices"] or "with_indices" in _name(func):
        raise unsupported(func, x, "return_indices (indices into a cut tensor)")
    name = f"max_pool{nsp}d"
    k = ntuple(name, "kernel_size", b["kernel_size"], nsp)
    s = ntuple(name, "stride", b["stride"] if b["stride"] not in (None, ()) else k, nsp)
    d = ntuple(name, "dilation", b["dilation"], nsp)
    p = ntuple(name, "padding", b["padding"], nsp)
    sub, plan, win = windowed(func, x, nsp, None, k, s, d, tuple((q, q) for q in p), -math.inf, bool(b["ceil_mode"]))
    out = getattr(F, name)(sub, k, s, 0, d, False)
    return wrap(_empty_cut(out, win), plan.out, x._dcomm)


@register(*_AVG)
def _avg_pool(func, args, kwargs):
    names = ("input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override")
    b = dict({"stride": None, "padding": 0, "ceil_mode": False, "count_include_pad": True, "divisor_override": None},
             **dict(zip(names, args)), **kwargs)
    x, nsp = b["input"], _AVG[func]
    name = f"avg_pool{nsp}d"
    k = ntuple(name, "kernel_size", b["kernel_size"], nsp)
    s = ntuple(name, "stride", b["stride"] if b["stride"] not in (None, ()) else k, nsp)
    p = ntuple(name, "padding", b["padding"], nsp)
    pads = tuple((q, q) for q in p)
    ceil = bool(b["ceil_mode"])
    sub, plan, win = windowed(func, x, nsp, None, k, s, (1,) * nsp, pads, 0.0, ceil)
    ones = (1,) * nsp
    sums = F.avg_pool1d(sub, k, s, 0) * k[0] if nsp == 1 else func(sub, k, s, 0, False, True, 1)
    if b["divisor_override"]:
        out = sums / b["divisor_override"]
    elif b["count_include_pad"] and not ceil:
        out = sums / math.prod(k)
    else:  # the cells of each window inside the input (or its padding): counted on a mask, no message
        layout = plan.out
        starts = plan.global_start(x._dcomm.rank)
        mask = None
        for i in range(nsp):
            n = (x._dpad[0] if x._dpad is not None else x._dlayout).shape[2 + i]
            lo, hi = (-pads[i][0], n + pads[i][1]) if b["count_include_pad"] else (0, n)
            pos = torch.arange(sub.shape[2 + i]) + starts[i]
            m1 = ((pos >= lo) & (pos < hi)).to(sub.dtype)
            m1 = m1.reshape((1, 1) + tuple(-1 if j == i else 1 for j in range(nsp)))
            mask = m1 if mask is None else mask * m1
        mask = mask.expand((1, 1) + tuple(sub.shape[2:])).contiguous()
        counts = F.avg_pool1d(mask, k, s, 0) * k[0] if nsp == 1 else func(mask, k, s, 0, False, True, 1)
        out = sums / counts.clamp(min=1)
        del layout, ones
    return wrap(_empty_cut(out, win), plan.out, x._dcomm)
