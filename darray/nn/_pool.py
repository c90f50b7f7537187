"""Max and average pooling with torch's semantics on spatially cut fields.

Any ``kernel_size``, ``stride``, ``padding``, ``ceil_mode`` (and ``dilation``
for max pooling) on any blocks, aligned with the pooling grid or not: every
block computes the outputs whose window centre it owns
(:mod:`darray.nn._window`) on its cells extended by the halo those windows
reach (exchanged forward; ghost gradients go back to their owners). Past the
edges max pooling sees ``-inf`` and average pooling zeros, counted in the
divisor when ``count_include_pad`` (torch's default).

The local kernel is written against the Array API standard (any backend):
one strided view of the block per kernel offset, combined in place
(``max``: the first maximum in the window's row-major order wins, NaN
propagates, as in torch; ``avg``: a sum divided by the window's cell count).
"""

from __future__ import annotations

import math
from itertools import product

import numpy as np

from .. import autodiff as ad
from .._errors import message
from ..autodiff import Variable, apply, register
from ._util import check_input, data, ntuple, wrap_storage, zeros
from ._window import covered, extract, scatter_back, window_plan

__all__ = ["avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d", "pool"]


def _offsets(plan, oshape):
    """Per kernel offset: the index of the cells it meets in the extracted window block."""
    for kidx in product(*(range(k) for k in plan.ksize)):
        yield (slice(None),) * 2 + tuple(slice(k * d, k * d + (on - 1) * s + 1, s) for k, d, s, on in
                                         zip(kidx, plan.dilation, plan.stride, oshape[2:]))


def _divisor(plan, rank, n, count_include_pad, divisor_override):
    """The averaging divisor of this block's outputs: a float, or a host array of the output block's shape."""
    if divisor_override:
        return float(divisor_override)
    ostart, oshape = plan.out.block_start(rank), plan.out.block_shape(rank)
    counts = []
    for i, (k, s, (p, _)) in enumerate(zip(plan.ksize, plan.stride, plan.pads)):
        o = np.arange(ostart[2 + i], ostart[2 + i] + oshape[2 + i])
        start = o * s - p
        end = np.minimum(start + k, n[i] + p)
        counts.append(end - start if count_include_pad else np.minimum(end, n[i]) - np.maximum(start, 0))
    if all(c.size == 0 or np.all(c == c[0]) for c in counts):
        return float(math.prod(int(c[0]) if c.size else 1 for c in counts))
    total = counts[0].astype(np.float64)
    for c in counts[1:]:
        total = np.multiply.outer(total, c)
    return total.reshape((1, 1) + total.shape)


def _pool_forward(ctx, p, plan, mode, fill, count_include_pad, divisor_override):
    xp, rank = p._xp, p._comm.rank
    block = p._block
    oshape = plan.out.block_shape(rank)
    win = plan.window(p._layout, rank)
    ctx.saved["win"] = win
    if any(n == 0 for n in oshape):
        return wrap_storage(zeros(p, oshape), plan.out, p)
    sub, _ = extract(xp, block, win, fill, p.device)
    out = arg = None
    for kf, index in enumerate(_offsets(plan, oshape)):
        v = sub[index]
        if mode == "avg":
            out = xp.asarray(v, copy=True) if out is None else out + v
        elif out is None:
            out, arg = v, xp.zeros(tuple(oshape), dtype=xp.int32, device=p.device)
        else:
            better = (v > out) | xp.isnan(v)
            out = xp.where(better, v, out)
            arg = xp.where(better, kf, arg)
    if mode == "avg":
        n = p._layout.shape[2:]
        divisor = _divisor(plan, rank, n, count_include_pad, divisor_override)
        if not isinstance(divisor, float):
            divisor = xp.asarray(divisor, dtype=out.dtype, device=p.device)
        ctx.saved["divisor"] = divisor
        out = out / divisor
    else:
        ctx.saved["arg"] = arg
        out = xp.asarray(out, copy=True) if kf == 0 else out
    return wrap_storage(out, plan.out, p)


def _pool_backward(ctx, g):
    p = ctx.xs[0]
    plan, mode = ctx.params["plan"], ctx.params["mode"]
    xp, block = p._xp, p._block
    oshape = tuple(g.local.shape)
    win = ctx.saved["win"]
    if any(n == 0 for n in oshape):
        return (wrap_storage(zeros(p, block.shape), p._layout, p),)
    inner, shape = covered(tuple(block.shape), win)
    # windows that do not overlap write their cells once (no read-modify-write); tiling ones cover every cell
    disjoint = all(s >= span for s, span in zip(plan.stride, plan.span))
    tiled = all(s == k and d == 1 and on * s == n for on, s, k, d, n in
                zip(oshape[2:], plan.stride, plan.ksize, plan.dilation, shape[2:]))
    gsub = (xp.empty if tiled else xp.zeros)(shape, dtype=block.dtype, device=p.device)
    gl = g.local
    if mode == "avg":
        gl = gl / ctx.saved["divisor"]
    arg = ctx.saved.get("arg")
    for kf, index in enumerate(_offsets(plan, oshape)):
        part = gl if mode == "avg" else xp.where(arg == kf, gl, 0.0)
        if disjoint:
            gsub[index] = part
        else:
            gsub[index] += part
    return (wrap_storage(scatter_back(xp, block.shape, gsub, win, inner, p.device), p._layout, p),)


register("pool_local", _pool_forward, _pool_backward)


def _indices(plan, ctx_arg, rank, n, xp, device):
    """torch's ``return_indices``: the flat index of each maximum in its (N, C) plane of the global input."""
    ostart, oshape = plan.out.block_start(rank), plan.out.block_shape(rank)
    nsp = len(plan.ksize)
    plane = [math.prod(n[i + 1:]) for i in range(nsp)]
    index = xp.zeros(tuple(oshape), dtype=xp.int64, device=device)
    arg = xp.astype(ctx_arg, xp.int64)
    inner = math.prod(plan.ksize)
    for i in range(nsp):
        inner //= plan.ksize[i]
        k = (arg // inner) % plan.ksize[i]
        base = (np.arange(ostart[2 + i], ostart[2 + i] + oshape[2 + i]) * plan.stride[i] - plan.pads[i][0])
        base = xp.asarray(base.reshape((1, 1) + tuple(-1 if j == i else 1 for j in range(nsp))), dtype=xp.int64,
                          device=device)
        index = index + (base + k * plan.dilation[i]) * plane[i]
    return index


def pool(func, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, mode="max", nsp=2,
         count_include_pad=True, divisor_override=None, return_indices=False):
    """Max (``mode='max'``) or average pooling over the ``nsp`` trailing axes of ``x`` ``(N, C, *spatial)``."""
    check_input(func, x, nsp)
    xd = data(x)
    kernel = ntuple(func, "kernel_size", kernel_size, nsp)
    stride = kernel if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        ntuple(func, "stride", stride, nsp)
    pads = ntuple(func, "padding", padding, nsp)
    dilation = ntuple(func, "dilation", dilation, nsp)
    if any(k < 1 for k in kernel) or any(s < 1 for s in stride) or any(d < 1 for d in dilation):
        raise ValueError(message(func, "kernel_size, stride and dilation must be positive",
                                 (kernel, stride, dilation), "ints >= 1"))
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    if any(p < 0 or 2 * p > span for p, span in zip(pads, spans)):
        raise ValueError(message(func, "padding must be non-negative and at most half of the (dilated) kernel",
                                 pads, f"at most {tuple(span // 2 for span in spans)}"))
    if xd.dtype.kind != "f":
        raise TypeError(message(func, "pooling needs a real floating-point input", xd.dtype, "float32 or float64"))
    if divisor_override is not None and divisor_override == 0:
        raise ValueError(message(func, "divisor_override must be non-zero", divisor_override, "a non-zero int"))
    layout = xd._layout.without_halo()
    plan = window_plan(func, layout, None, kernel, stride, dilation, tuple((p, p) for p in pads), bool(ceil_mode))
    fill = -math.inf if mode == "max" else 0.0
    if layout != xd._layout:
        x = ad.redistribute(x, layout=layout)
    boundary = ("none", "none") + (fill,) * nsp
    padded = ad.halo(x, plan.halo, boundary) if any(plan.halo) else x
    out = apply("pool_local", padded, plan=plan, mode=mode, fill=fill, count_include_pad=bool(count_include_pad),
                divisor_override=divisor_override)
    if not return_indices:
        return out
    pd = data(padded)
    if not isinstance(padded, Variable) or out._node is None:  # nothing recorded: recompute the argmax
        from ..autodiff.rules import Context

        ctx = Context((pd,), {}, (False,))
        _pool_forward(ctx, pd, plan, mode, fill, True, None)
        arg = ctx.saved.get("arg")
    else:
        arg = out._node.ctx.saved.get("arg")
    rank = xd._comm.rank
    oshape = plan.out.block_shape(rank)
    if arg is None:
        arg = pd._xp.zeros(tuple(oshape), dtype=pd._xp.int32, device=pd.device)
    index = _indices(plan, arg, rank, layout.shape[2:], pd._xp, pd.device)
    return out, wrap_storage(index, plan.out, pd)


def _max_pool(nsp):
    name = f"max_pool{nsp}d"

    def f(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
        return pool(name, input, kernel_size, stride, padding, dilation, ceil_mode, "max", nsp,
                    return_indices=return_indices)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"{nsp}-d max pooling (torch's ``{name}``: any stride, padding, dilation, ``ceil_mode``; "
                 "``return_indices`` gives flat indices into each (N, C) plane of the global input).")
    return f


def _avg_pool(nsp):
    name = f"avg_pool{nsp}d"

    if nsp == 1:
        def f(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
            return pool(name, input, kernel_size, stride, padding, 1, ceil_mode, "avg", nsp, count_include_pad)
    else:
        def f(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
              divisor_override=None):
            return pool(name, input, kernel_size, stride, padding, 1, ceil_mode, "avg", nsp, count_include_pad,
                        divisor_override)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"{nsp}-d average pooling (torch's ``{name}``: any stride, padding, ``ceil_mode``, "
                 "``count_include_pad``" + (", ``divisor_override``" if nsp > 1 else "") + ").")
    return f


max_pool1d, max_pool2d, max_pool3d = (_max_pool(n) for n in (1, 2, 3))
avg_pool1d, avg_pool2d, avg_pool3d = (_avg_pool(n) for n in (1, 2, 3))
