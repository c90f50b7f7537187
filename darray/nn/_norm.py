"""Normalisations: statistics combined over the ranks through :func:`darray.autodiff.mean` (any backend)."""

from __future__ import annotations

import numbers

from .. import autodiff as ad
from .._errors import message
from ..autodiff.rules import namespace
from ._util import as_var, data

__all__ = ["batch_norm", "group_norm", "layer_norm"]


def _normalize(x, axes, eps):
    x = as_var(x)
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
    xd = data(x)
    axes = (0,) + tuple(range(2, xd.ndim))
    shape = _channel_shape(xd.ndim)(xd.shape[1])
    if training:
        y, mean, var = _normalize(x, axes, eps)
    else:
        da = namespace()
        mean = da.reshape(running_mean, shape)
        var = da.reshape(running_var, shape)
        y = as_var(x) - mean
        y = y / da.sqrt(var + eps)
    if weight is not None:
        y = y * ad.reshape(weight, shape)
    if bias is not None:
        y = y + ad.reshape(bias, shape)
    return y


def group_norm(x, num_groups: int, weight=None, bias=None, eps=1e-5):
    """Group normalisation: statistics per sample over groups of channels and the whole spatial field."""
    x = as_var(x)
    xd = data(x)
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
    x = as_var(x)
    xd = data(x)
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
