"""PyTorch models, unchanged, on a domain cut over ranks: :class:`ShardTensor`.

>>> import torch, darray.torch as dt
>>> x = dt.shard(torch.rand(1, 2, 16, 16, dtype=torch.float64), split=2)
>>> conv = torch.nn.Conv2d(2, 3, 3, padding=1, padding_mode="circular").double()
>>> y = conv(x)                      # halo exchange of one row, then torch's own kernel
>>> tuple(y.shape), type(y).__name__
((1, 3, 16, 16), 'ShardTensor')
>>> loss = (y ** 2).mean()           # the same scalar on every rank
>>> loss.backward()                  # conv.weight.grad: summed over the ranks (one fused allreduce)

A :class:`ShardTensor` is this rank's block, a ``torch.Tensor`` subclass in
torch's own autograd graph, plus darray's layout of the global tensor
(uneven and empty blocks, any grid of ranks). Every torch function that
meets one is looked up in a table of rules (:func:`register`):

- elementwise ops and activations, dropout, softmax along a whole axis: local;
- ``conv1d/2d/3d`` (padding modes zeros, reflect, replicate, circular;
  stride, dilation, groups): a halo exchange of the rows the kernel reads,
  with its adjoint in backward; ``F.pad`` on a cut axis is folded into the
  next convolution's halo;
- ``conv_transpose1d/2d/3d`` (stride, padding, output_padding, dilation,
  groups): each block writes past its outputs into ghost cells that are
  sent to their owners and added (the halo's adjoint), a halo exchange in
  backward;
- max / avg pooling; adaptive avg / max pooling where no output window
  crosses a block edge (pooled to one cell: a reduction over the ranks);
  ``interpolate`` / ``Upsample`` (nearest by integer factors; linear,
  bilinear, trilinear at any size, ``align_corners`` or not), ``pad``;
- ``scaled_dot_product_attention`` with the token axis cut: darray's ring
  attention (causal or not, masks held whole), the ring again in backward;
- BatchNorm / GroupNorm / InstanceNorm / LayerNorm: statistics summed over
  the ranks holding distinct blocks (batch ranks too for BatchNorm);
- ``linear`` / ``matmul`` over a whole last axis, ``cat``, ``permute``,
  ``reshape`` / ``unbind`` / ``chunk`` of whole axes, basic indexing of whole axes: local;
- reductions and losses: a local partial summed over the ranks: the same
  scalar on every rank;
- plain tensors (``nn.Parameter`` weights) meeting a ShardTensor are
  *promoted*: their partial gradients are summed over the domain ranks at
  the end of ``backward()`` in one fused allreduce per dtype
  (:func:`sync_gradients`), so ``torch.optim`` works unchanged.

Anything else raises :class:`NotImplementedError` naming the op and the
layout: nothing is gathered behind your back. Gather explicitly with
``x.full()``, or add a rule::

    @darray.torch.register(torch.special.expit)
    def _expit(func, args, kwargs):
        x = args[0]
        return darray.torch.wrap(func(darray.torch.local(x)), x._dlayout, x._dcomm)

Why ``__torch_function__`` and not ``__torch_dispatch__``
---------------------------------------------------------
``__torch_function__`` sees the calls a model makes (``F.conv2d``,
``F.group_norm``, ``F.interpolate``) with their meaning intact, above
autograd. A rule can then use torch's own kernels and autograd on the block
and add only what the cut changes: a halo exchange, a sum over ranks, each
a small ``torch.autograd.Function`` with its adjoint. ``__torch_dispatch__``
runs below autograd on decomposed ATen ops: a GroupNorm arrives as
``native_group_norm`` and its backward as ``native_group_norm_backward``,
a padded convolution as ``constant_pad_nd`` + ``convolution``, so every
backward op would need its own distributed rule too, and the pad could no
longer be folded into the halo. The price of staying above autograd is
that ops reached only from inside other ops (an ATen decomposition) are
not seen -- which is also why an op without a rule fails loudly instead of
silently running on the block.
"""

from __future__ import annotations

from ._collective import halo, promote, sync_gradients
from ._tensor import RULES, ShardTensor, local, register, shard, unsupported, wrap
from . import _elementwise, _reduce, _pad, _conv, _norm, _resample, _linear  # (the rules register themselves)
from . import _attention, _convt, _adaptive

__all__ = ["ShardTensor", "shard", "register", "local", "wrap", "unsupported", "RULES", "sync_gradients", "halo",
           "promote"]
