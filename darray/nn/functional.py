"""Differentiable neural-network functions on distributed fields (torch.nn.functional's names).

Data is channels-first, ``(N, C, *spatial)``, with the spatial axes cut over
the ranks (batch and channel axes whole). One module per concern:

- :mod:`darray.nn._conv`: convolutions (halo of the width the windows need)
  and non-overlapping transposed convolutions (local);
- :mod:`darray.nn._pool`: max / average pooling, any stride, padding,
  dilation and ``ceil_mode``, on any blocks (halos, no rebalancing);
- :mod:`darray.nn._resample`: nearest and (bi/tri)linear ``interpolate``
  (one ghost cell per resampled axis);
- :mod:`darray.nn._linear`, :mod:`darray.nn._activation` (and dropout),
  :mod:`darray.nn._norm`, :mod:`darray.nn._loss` (softmax and losses);
- :mod:`darray.nn._attention`: ring ``scaled_dot_product_attention`` (K/V
  blocks around the ranks that cut the token axis; backward by the ring again);
- :mod:`darray.nn._neighborhood`: ``neighborhood_attention`` (each cell
  attends to a window around it: one halo exchange of k and v);
  :mod:`darray.nn._tokens` and :mod:`darray.nn._position`: fields as token
  sequences that never move, and position embeddings (these three modules
  also hold layers built on :mod:`darray.nn.layers`, so their functions load
  on first use here);
- :mod:`darray.nn._window`: the sliding-window geometry shared by
  convolutions and pooling; :mod:`darray.nn._kernels`: the local kernels of
  each backend (NumPy / Array API, torch, the CuPy hook).

The local ops (``conv_local``, ``conv_transpose_local``, ``pool_local``,
``resample_local``, ``linear_local`` and the activations) are registered in
:data:`darray.autodiff.RULES` next to every other rule. Everything runs on
any local backend (NumPy, torch, CuPy, any Array API library).
"""

from __future__ import annotations

import importlib

from ._activation import dropout, gelu, leaky_relu, relu, sigmoid, silu, softplus, tanh
from ._attention import scaled_dot_product_attention
from ._conv import (conv, conv1d, conv2d, conv3d, conv_transpose, conv_transpose1d, conv_transpose2d,
                    conv_transpose3d)
from ._linear import linear
from ._loss import cross_entropy, huber_loss, l1_loss, log_softmax, mse_loss, softmax
from ._norm import batch_norm, group_norm, layer_norm
from ._pool import avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d, max_pool3d
from ._resample import interpolate, upsample

__all__ = ["conv1d", "conv2d", "conv3d", "conv", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "conv_transpose", "linear", "relu", "leaky_relu", "gelu", "silu", "tanh",
           "sigmoid", "softplus", "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d",
           "max_pool3d", "interpolate", "upsample", "batch_norm", "group_norm", "layer_norm", "dropout",
           "softmax", "log_softmax", "mse_loss", "l1_loss", "huber_loss", "cross_entropy",
           "scaled_dot_product_attention", "neighborhood_attention", "flatten_tokens", "unflatten_tokens",
           "token_layout", "sincos_position_embedding"]

#: Functions whose modules import :mod:`darray.nn.layers` (which imports this module): loaded on first use.
_ON_FIRST_USE = {"neighborhood_attention": "_neighborhood", "flatten_tokens": "_tokens",
                 "unflatten_tokens": "_tokens", "token_layout": "_tokens",
                 "sincos_position_embedding": "_position"}


def __getattr__(name: str):
    module = _ON_FIRST_USE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__package__}.{module}"), name)
