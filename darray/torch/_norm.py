"""Normalisation layers on ShardTensors: statistics summed over the ranks holding distinct blocks.

Two passes, as a single process computes them: the mean (one allreduce of
the block sums), then the variance of the centred cells (a second
allreduce). Both sums are used on every block, so their gradients are
summed again in backward (:func:`~darray.torch._collective.all_sum`).
GroupNorm and InstanceNorm reduce over the spatial ranks only, BatchNorm
also over the batch ranks of a batch x space grid, LayerNorm over the ranks
cutting its normalised axes (none: local).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ._collective import all_sum, promote
from ._elementwise import align
from ._tensor import ShardTensor, bind_arguments, local, register, unsupported, wrap

__all__ = ["normalize"]


def normalize(xl, layout, comm, axes, count, eps, cut_axes=None):
    """``(xhat, mean, biased var)`` of block ``xl`` over ``axes`` (global ``count`` cells per statistic)."""
    cut_axes = axes if cut_axes is None else cut_axes
    cut = tuple(s is not None and s in cut_axes for s in layout.split)

    def total(t):
        part = t.sum(dim=axes, keepdim=True)
        return all_sum(part, comm, layout, cut) if any(cut) else part

    mean = total(xl) / count
    centred = xl - mean
    var = total(centred * centred) / count
    return centred * torch.rsqrt(var + eps), mean, var


def _affine(y, weight, bias, comm, layout, shape):
    if weight is not None:
        y = y * promote(weight, comm, layout).reshape(shape)
    if bias is not None:
        y = y + promote(bias, comm, layout).reshape(shape)
    return y


def _channel_shape(ndim):
    return (1, -1) + (1,) * (ndim - 2)


@register(F.group_norm)
def _group_norm(func, args, kwargs):
    b = bind_arguments(args, kwargs, ("input", "num_groups", "weight", "bias", "eps"),
                       {"weight": None, "bias": None, "eps": 1e-5})
    x, g = b["input"], int(b["num_groups"])
    lay, comm = x._dlayout, x._dcomm
    if lay.axis_dim[1] is not None:
        raise unsupported(func, x, "the channel axis (1) is cut")
    xl = local(x)
    n, c = xl.shape[0], lay.shape[1]
    grouped = xl.reshape((n, g, c // g) + tuple(xl.shape[2:]))
    axes = tuple(range(2, grouped.ndim))
    count = (c // g) * math.prod(lay.shape[2:])
    glay = lay.replace(shape=(lay.shape[0], g, c // g) + lay.shape[2:],
                       sizes=(lay.sizes[0], (g,), (c // g,)) + lay.sizes[2:],
                       split=tuple(None if s is None else (s + 1 if s >= 2 else s) for s in lay.split))
    y, _, _ = normalize(grouped, glay, comm, axes, count, b["eps"])
    y = y.reshape(xl.shape)
    return wrap(_affine(y, b["weight"], b["bias"], comm, lay, _channel_shape(xl.ndim)), lay, comm)


def _per_channel(func, b):
    """``(x, layout, comm, block, channel shape)`` of a per-channel norm's input: refused where channels are cut."""
    x = b["input"]
    lay = x._dlayout
    if lay.axis_dim[1] is not None:
        raise unsupported(func, x, "the channel axis (1) is cut")
    xl = local(x)
    return x, lay, x._dcomm, xl, _channel_shape(xl.ndim)


def _from_running_stats(b, xl, shape, lay, comm):
    """The norm with the stored statistics (``running_mean`` / ``running_var``): local, no message."""
    y = (xl - b["running_mean"].reshape(shape)) * torch.rsqrt(b["running_var"].reshape(shape) + b["eps"])
    return wrap(_affine(y, b["weight"], b["bias"], comm, lay, shape), lay, comm)


@register(F.batch_norm)
def _batch_norm(func, args, kwargs):
    b = bind_arguments(args, kwargs, ("input", "running_mean", "running_var", "weight", "bias", "training",
                                      "momentum", "eps"),
                       {"running_mean": None, "running_var": None, "weight": None, "bias": None, "training": False,
                        "momentum": 0.1, "eps": 1e-5})
    x, lay, comm, xl, shape = _per_channel(func, b)
    if not b["training"]:
        return _from_running_stats(b, xl, shape, lay, comm)
    axes = (0,) + tuple(range(2, xl.ndim))
    count = lay.shape[0] * math.prod(lay.shape[2:])
    y, mean, var = normalize(xl, lay, comm, axes, count, b["eps"])
    if b["running_mean"] is not None:
        m = b["momentum"]
        with torch.no_grad():
            b["running_mean"].mul_(1 - m).add_(m * mean.reshape(-1))
            b["running_var"].mul_(1 - m).add_(m * var.reshape(-1) * count / max(count - 1, 1))
    return wrap(_affine(y, b["weight"], b["bias"], comm, lay, shape), lay, comm)


@register(F.instance_norm)
def _instance_norm(func, args, kwargs):
    b = bind_arguments(args, kwargs, ("input", "running_mean", "running_var", "weight", "bias", "use_input_stats",
                                      "momentum", "eps"),
                       {"running_mean": None, "running_var": None, "weight": None, "bias": None,
                        "use_input_stats": True, "momentum": 0.1, "eps": 1e-5})
    x, lay, comm, xl, shape = _per_channel(func, b)
    if not b["use_input_stats"]:
        return _from_running_stats(b, xl, shape, lay, comm)
    if b["running_mean"] is not None:
        raise unsupported(func, x, "track_running_stats=True with input statistics")
    axes = tuple(range(2, xl.ndim))
    y, _, _ = normalize(xl, lay, comm, axes, math.prod(lay.shape[2:]), b["eps"])
    return wrap(_affine(y, b["weight"], b["bias"], comm, lay, shape), lay, comm)


@register(F.layer_norm, F.rms_norm if hasattr(F, "rms_norm") else F.layer_norm)
def _layer_norm(func, args, kwargs):
    b = bind_arguments(args, kwargs, ("input", "normalized_shape", "weight", "bias", "eps"),
                       {"weight": None, "bias": None, "eps": 1e-5})
    x = b["input"]
    lay, comm = x._dlayout, x._dcomm
    ns = tuple(b["normalized_shape"])
    ndim = len(lay.shape)
    axes = tuple(range(ndim - len(ns), ndim))
    xl = local(x)
    eps = b["eps"] if b["eps"] is not None else torch.finfo(xl.dtype).eps
    wl = align(func, b["weight"], lay, comm) if isinstance(b["weight"], torch.Tensor) else None
    bl = align(func, b.get("bias"), lay, comm) if isinstance(b.get("bias"), torch.Tensor) else None
    if all(lay.axis_dim[a] is None for a in axes):
        if func is F.layer_norm:
            return wrap(F.layer_norm(xl, ns, wl, bl, eps), lay, comm)
        return wrap(F.rms_norm(xl, ns, wl, eps), lay, comm)
    count = math.prod(ns)
    if func is F.layer_norm:
        y, _, _ = normalize(xl, lay, comm, axes, count, eps)
    else:
        cut = tuple(s is not None and s in axes for s in lay.split)
        ms = all_sum((xl * xl).sum(dim=axes, keepdim=True), comm, lay, cut) / count
        y = xl * torch.rsqrt(ms + eps)
    if wl is not None:
        y = y * wl
    if bl is not None:
        y = y + bl
    return wrap(y, lay, comm)


del ShardTensor
