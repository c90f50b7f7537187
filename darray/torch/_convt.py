"""Transposed convolutions on ShardTensors cut along spatial axes: the adjoint of a convolution's halo.

A transposed convolution *writes* where a convolution reads: input cell
``i`` adds ``w[j] * x[i]`` into output ``i * stride + j * dilation - padding``.
Each rank runs torch's own ``conv_transpose`` on its block (no padding) and
owns the outputs from ``a * stride + c`` to ``b * stride + c`` of its input
cells ``[a, b)`` (``c`` centres the overhang); what its kernel writes past
those (``dilation * (k - 1) + 1 - stride`` cells in all, half on each side)
lands in ghost cells that are sent to their owners and *added*
(:func:`darray._core.halo.accumulate_halos`, the exact reverse of the halo
exchange). Cells written past the global edges are the cropped ``padding``;
``output_padding`` cells get only the bias. Backward is the adjoint again:
a halo exchange of the output gradient, then torch's convolution.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .._api.overlap import with_halo
from .._backend import namespace_of
from .._core import DArray
from .._core.halo import accumulate_halos
from .._errors import message
from ..nn._util import ntuple
from ._collective import promote
from ._tensor import ShardTensor, local, register, unsupported, wrap

__all__ = ["accumulate", "transposed_plan"]

_CONVT = {F.conv_transpose1d: 1, F.conv_transpose2d: 2, F.conv_transpose3d: 3}
_TORCH = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


_LAYOUTS: dict = {}  # layouts built per call, interned: darray remembers what the ranks agreed on per layout object


def _interned(layout):
    if len(_LAYOUTS) > 1024:
        _LAYOUTS.clear()
    return _LAYOUTS.setdefault(layout, layout)


def _darray(block, layout, comm) -> DArray:
    return DArray._wrap(block, layout, comm, namespace_of(block))


class _Accumulate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, padded, layout, comm):
        ctx.layout, ctx.comm = layout, comm
        out = accumulate_halos(_darray(padded.detach().contiguous(), layout, comm))
        return out.local.contiguous()

    @staticmethod
    def backward(ctx, g):
        lay = ctx.layout
        full = with_halo(_darray(g.contiguous(), _interned(lay.without_halo()), ctx.comm), lay.halo, lay.boundary)
        return full._block, None, None


def accumulate(padded, layout, comm):
    """The owned cells of ``layout`` (a layout with ghost cells) after every rank's ghost values of ``padded`` were
    sent to their owners and added; cells past the global edges are dropped. Backward: a halo exchange."""
    return _Accumulate.apply(padded, layout, comm)


def transposed_plan(n: int, starts, stride: int, pad: int, out_pad: int, dilation: int, k: int):
    """Output blocks of one axis: ``(length, sizes, depth, bounds)`` for input block offsets ``starts``.

    ``bounds[r]`` is where block ``r``'s outputs start in the uncropped
    output (``u = o + pad``); ``depth`` the ghost width every block needs
    for what its kernel writes past its outputs (replicated metadata).
    """
    span = dilation * (k - 1) + 1
    length = (n - 1) * stride - 2 * pad + span + out_pad
    over = span - stride
    c = max(over, 0) // 2
    lo, hi = pad, pad + length
    bounds = [lo] + [min(max(a * stride + c, lo), hi) for a in starts[1:-1]] + [hi]
    depth = 0
    for r in range(len(starts) - 1):
        a, b = starts[r], starts[r + 1]
        if a == b:
            continue
        w0, w1 = max(a * stride, lo), min(b * stride + over, hi)
        if w0 < w1:
            depth = max(depth, bounds[r] - w0, w1 - bounds[r + 1])
    sizes = tuple(bounds[r + 1] - bounds[r] for r in range(len(starts) - 1))
    return length, sizes, depth, tuple(bounds)


@register(*_CONVT)
def _conv_transpose(func, args, kwargs):
    names = ("input", "weight", "bias", "stride", "padding", "output_padding", "groups", "dilation")
    b = dict({"bias": None, "stride": 1, "padding": 0, "output_padding": 0, "groups": 1, "dilation": 1},
             **dict(zip(names, args)), **kwargs)
    x, weight, bias = b["input"], b["weight"], b["bias"]
    name = getattr(func, "__name__", "conv_transpose")
    if not isinstance(x, ShardTensor) or isinstance(weight, ShardTensor) or isinstance(bias, ShardTensor):
        raise unsupported(func, x if isinstance(x, ShardTensor) else weight, "only the input may be cut")
    nsp = _CONVT[func]
    lay, comm = x._dlayout, x._dcomm
    if len(lay.shape) != nsp + 2:
        raise ValueError(message(name, "input must be (N, C, *spatial)", lay.shape, f"{nsp + 2} axes"))
    if lay.axis_dim[1] is not None:
        raise unsupported(func, x, "the channel axis (1) is cut; it must be whole on every block")
    if isinstance(b["padding"], str):
        raise TypeError(message(name, "padding must be numbers for a transposed convolution", b["padding"]))
    stride = ntuple(name, "stride", b["stride"], nsp)
    pad = ntuple(name, "padding", b["padding"], nsp)
    out_pad = ntuple(name, "output_padding", b["output_padding"], nsp)
    dilation = ntuple(name, "dilation", b["dilation"], nsp)
    groups = int(b["groups"])
    ksize = tuple(weight.shape[2:])
    for i in range(nsp):
        if out_pad[i] >= max(stride[i], dilation[i]) or out_pad[i] < 0:
            raise ValueError(message(name, "output padding must be smaller than either stride or dilation",
                                     out_pad, f"< max{(stride, dilation)}"))
    shape, sizes, depth, bounds = list(lay.shape[:2]), list(lay.sizes[:2]), [0, 0], []
    shape[1], sizes[1] = weight.shape[1] * groups, (weight.shape[1] * groups,)
    for i in range(nsp):
        n = lay.shape[2 + i]
        length, sz, dp, bd = transposed_plan(n, lay.offsets[2 + i], stride[i], pad[i], out_pad[i], dilation[i],
                                             ksize[i])
        if length <= 0 or n == 0:
            raise ValueError(message(name, f"the output of spatial axis {i} would be empty", length,
                                     "a positive output size"))
        shape.append(length)
        sizes.append(sz)
        depth.append(dp if lay.axis_dim[2 + i] is not None else 0)
        bounds.append(bd)
    out_layout = _interned(lay.replace(shape=tuple(shape), sizes=tuple(sizes)))
    halo_layout = _interned(out_layout.with_halo(name, tuple(depth), tuple(0.0 for _ in shape)))
    rank = comm.rank
    idx, start, bshape = lay.block_index(rank), lay.block_start(rank), lay.block_shape(rank)
    target = halo_layout.padded_shape(rank)
    w = promote(weight, comm, out_layout)
    xl = local(x)
    if any(s == 0 for s in bshape):  # writes nothing; the same graph on every rank
        padded = xl.new_zeros(target) + xl.sum() * 0 + w.sum() * 0
    else:
        y = _TORCH[nsp](xl, w, None, stride, 0, 0, groups, dilation)
        for i in range(nsp):
            ax = 2 + i
            r, d = idx[ax], depth[ax]
            lo, hi = bounds[i][r] - d, bounds[i][r + 1] + d  # the padded block, uncropped coordinates
            w0 = start[ax] * stride[i]  # where y starts
            a, e = max(lo, w0), min(hi, w0 + y.shape[ax])
            if a >= e:
                y = y.narrow(ax, 0, 0)
                a = e = lo
            else:
                y = y.narrow(ax, a - w0, e - a)
            if a - lo or hi - e:
                widths = [0, 0] * (nsp - 1 - i) + [a - lo, hi - e]
                y = F.pad(y, widths)
        padded = y
    out = accumulate(padded, halo_layout, comm) if any(depth) else padded
    if bias is not None:
        out = out + promote(bias, comm, out_layout).reshape((1, -1) + (1,) * nsp)
    return wrap(out, out_layout, comm)
