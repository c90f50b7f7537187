"""Reductions and losses on ShardTensors: a local partial, summed over the ranks holding distinct blocks.

A reduction over a cut axis gives the same value on every rank of that
axis (a plain tensor when no cut axis is left, a ShardTensor otherwise);
its gradient passes back unchanged (:func:`~darray.torch._collective.to_replicated`).
Means divide by the global count, so ``loss.item()`` is the same on every
rank and equals single-process torch.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .._core.reductions import combine
from ._collective import to_replicated
from ._elementwise import align
from ._tensor import ShardTensor, bind_arguments, local, register, unsupported, wrap

__all__ = ["reduce_sum"]


def _axes(dim, ndim):
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(sorted({d % ndim for d in dim})) if len(dim) else tuple(range(ndim))


def _result(x, partial, axes, keepdim):
    """Wrap a partial reduced over ``axes``: summed over the grid dims cutting them (done by the caller)."""
    lay = x._dlayout.reduced(axes, keepdim)
    if all(s is None for s in lay.split):
        return partial
    return wrap(partial, lay, x._dcomm)


def _cut(lay, axes):
    return tuple(s is not None and s in axes for s in lay.split)


def reduce_sum(x, axes, keepdim=False, dtype=None):
    """The sum of ShardTensor ``x`` over ``axes`` (same on every rank of the cut dims)."""
    lay = x._dlayout
    part = torch.sum(local(x), dim=axes, keepdim=keepdim, dtype=dtype) if axes else local(x)
    cut = _cut(lay, axes)
    if any(cut):
        part = to_replicated(part, x._dcomm, lay, cut)
    return _result(x, part, axes, keepdim)


@register(torch.sum, torch.Tensor.sum, torch.mean, torch.Tensor.mean, torch.nansum, torch.Tensor.nansum)
def _sum(func, args, kwargs):
    x = args[0]
    b = bind_arguments(args[1:], kwargs, ("dim", "keepdim"), {"dim": None, "keepdim": False, "dtype": None})
    axes = _axes(b["dim"], len(x._dlayout.shape))
    if func in (torch.nansum, torch.Tensor.nansum):
        x = wrap(torch.nan_to_num(local(x), nan=0.0), x._dlayout, x._dcomm)
    out = reduce_sum(x, axes, b["keepdim"], b["dtype"])
    if func in (torch.mean, torch.Tensor.mean):
        out = out / math.prod(x._dlayout.shape[a] for a in axes)
    return out


@register(torch.var, torch.Tensor.var, torch.std, torch.Tensor.std)
def _var(func, args, kwargs):
    x = args[0]
    b = bind_arguments(args[1:], kwargs, ("dim",),
                       {"dim": None, "unbiased": None, "correction": None, "keepdim": False})
    if isinstance(b["dim"], bool):  # var(x, unbiased)
        b["unbiased"], b["dim"] = b["dim"], None
    corr = b["correction"] if b["correction"] is not None else (0 if b["unbiased"] is False else 1)
    axes = _axes(b["dim"], len(x._dlayout.shape))
    n = math.prod(x._dlayout.shape[a] for a in axes)
    mean = reduce_sum(x, axes, True) / n
    out = reduce_sum((x - mean) ** 2, axes, b["keepdim"]) / max(n - corr, 0)
    return out.sqrt() if func in (torch.std, torch.Tensor.std) else out


@register(torch.amax, torch.Tensor.amax, torch.amin, torch.Tensor.amin, torch.max, torch.Tensor.max, torch.min,
          torch.Tensor.min)
def _extreme(func, args, kwargs):
    """max/min over cut axes; the gradient is shared among the tied cells of every rank, as torch's amax."""
    x = args[0]
    big = func in (torch.amax, torch.Tensor.amax, torch.max, torch.Tensor.max)
    if func in (torch.max, torch.Tensor.max, torch.min, torch.Tensor.min) and (len(args) > 1 or kwargs):
        if isinstance(args[1] if len(args) > 1 else None, torch.Tensor):
            from ._elementwise import elementwise

            return elementwise(torch.maximum if big else torch.minimum, args, kwargs)
        raise unsupported(func, x, "max/min along a dim returns indices, which are not supported (use amax/amin)")
    b = bind_arguments(args[1:], kwargs, ("dim", "keepdim"), {"dim": None, "keepdim": False})
    lay = x._dlayout
    axes = _axes(b["dim"] if b["dim"] != () else None, len(lay.shape))
    xl = local(x)
    cut = _cut(lay, axes)
    red = torch.amax if big else torch.amin
    if xl.numel() == 0:
        fill = -torch.inf if big else torch.inf
        shape = [1 if a in axes else n for a, n in enumerate(xl.shape)]
        part = torch.full(shape, fill, dtype=xl.dtype) + xl.sum(dim=axes, keepdim=True) * 0
    else:
        part = red(xl, dim=axes, keepdim=True)
    if not any(cut):
        out = part if b["keepdim"] else part.squeeze(axes) if axes else part
        return _result(x, out, axes, b["keepdim"])
    comm = x._dcomm
    best = combine(part.detach().contiguous(), "max" if big else "min", comm, lay, cut)
    hit = (part.detach() == best)
    ties_here = ((xl.detach() == best) if xl.numel() else torch.zeros_like(xl, dtype=torch.bool)).sum(
        dim=axes, keepdim=True).to(xl.dtype) if xl.numel() else torch.zeros_like(part)
    ties_all = combine(ties_here.contiguous(), "sum", comm, lay, cut)
    share = torch.where(hit, ties_here / ties_all, torch.zeros_like(part))
    contrib = part * share
    contrib = torch.where(hit, contrib, torch.zeros_like(contrib))
    out = to_replicated(contrib - contrib.detach(), comm, lay, cut) + best
    if not b["keepdim"]:
        out = out.squeeze(axes)
    return _result(x, out, axes, b["keepdim"])


# ------------------------------------------------------------------ losses
_POINTWISE = {F.mse_loss: ("input", "target"), F.l1_loss: ("input", "target"),
              F.smooth_l1_loss: ("input", "target"), F.huber_loss: ("input", "target"),
              F.binary_cross_entropy: ("input", "target", "weight"),
              F.binary_cross_entropy_with_logits: ("input", "target", "weight"),
              F.soft_margin_loss: ("input", "target"), F.kl_div: ("input", "target")}


@register(*_POINTWISE)
def _pointwise_loss(func, args, kwargs):
    """Losses of one value per cell: the per-block sum, summed over the ranks, divided by the global count."""
    names = _POINTWISE[func]
    b = bind_arguments(args, kwargs, names, {})
    for legacy in ("size_average", "reduce"):
        if b.get(legacy) is not None:
            raise unsupported(func, b["input"], f"the deprecated {legacy}= (use reduction=)")
    reduction = b.pop("reduction", "mean")
    x = b["input"] if isinstance(b["input"], ShardTensor) else b["target"]
    lay, comm = x._dlayout, x._dcomm
    if func is F.kl_div and reduction == "batchmean":
        reduction, per = "sum", lay.shape[0]
    else:
        per = None
    operands = {k: align(func, v, lay, comm) if isinstance(v, torch.Tensor) else v for k, v in b.items()}
    if reduction == "none":
        return wrap(func(**operands, reduction="none"), lay, comm)
    total = to_replicated(func(**operands, reduction="sum"), comm, lay)
    if per is not None:
        return total / per
    return total / math.prod(lay.shape) if reduction == "mean" else total


@register(F.cross_entropy, F.nll_loss)
def _class_loss(func, args, kwargs):
    """Cross entropy / NLL over the class axis (1, whole on every block): summed, divided by the global weight."""
    b = bind_arguments(args, kwargs, ("input", "target", "weight"),
                       {"weight": None, "ignore_index": -100, "reduction": "mean", "label_smoothing": 0.0})
    x, t = b["input"], b["target"]
    if not isinstance(x, ShardTensor):
        raise unsupported(func, t, "the target is cut but the input is not")
    lay, comm = x._dlayout, x._dcomm
    if len(lay.shape) < 2 or lay.axis_dim[1] is not None:
        raise unsupported(func, x, "the class axis (1) must be whole on every block")
    if b.get("label_smoothing", 0.0) and b["reduction"] == "mean" and b["weight"] is not None:
        raise unsupported(func, x, "label smoothing with class weights and a mean")
    tlay = lay.reduced((1,), False)
    tl = local(t) if isinstance(t, ShardTensor) else align(func, t, tlay, comm)
    extra = {k: b[k] for k in ("weight", "ignore_index", "label_smoothing") if k in b and
             (k != "label_smoothing" or func is F.cross_entropy)}
    if isinstance(extra.get("weight"), torch.Tensor):
        extra["weight"] = align(func, extra["weight"], lay.replicated(), comm)
        from ._collective import promote

        extra["weight"] = promote(b["weight"], comm, lay)
    xl = local(x)
    if b["reduction"] == "none":
        return wrap(func(xl, tl, reduction="none", **extra), tlay, comm)
    total = to_replicated(func(xl, tl, reduction="sum", **extra), comm, lay)
    if b["reduction"] == "sum":
        return total
    valid = (tl != b["ignore_index"])
    if b["weight"] is not None:
        w = b["weight"].detach()
        count = (w[tl.clamp(min=0)] * valid).sum()
    else:
        count = valid.sum().to(xl.dtype)
    count = combine(count.reshape(1).contiguous(), "sum", comm, lay).reshape(())
    return total / count
