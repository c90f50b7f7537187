"""``scaled_dot_product_attention`` on ShardTensors whose token axis is cut: darray's ring attention.

The queries stay where they are; the key/value blocks travel around the
ring of ranks that cut the token axis, merged by an online softmax, and the
backward pass runs the ring again with the partial dK/dV one hop behind
(:mod:`darray.nn._attention`: the same plan, the same messages, the same
key chunks, here on torch blocks inside one ``torch.autograd.Function``).
The result equals torch's attention on the whole sequence at any cut,
uneven and empty blocks included. ``is_causal`` skips (and does not send)
the key blocks that lie entirely in a rank's future.

An ``attn_mask`` (a plain tensor broadcastable to ``(..., L, S)``, boolean
or additive) stays on every rank; each rank reads its own query rows. Keys
and values held whole (plain tensors: cross-attention to a replicated
context) need no ring at all: each block attends to them locally and their
gradients are summed over the ranks. ``dropout_p > 0`` and ``enable_gqa``
are refused: torch's dropout mask cannot be reproduced block by block.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .._backend import namespace_of
from .._core import DArray
from .._errors import message
from .._layout import Layout
from ..nn._attention import Spec, _backward, _forward, _ring_comm, key_chunk, ring_plan
from ._collective import promote
from ._tensor import ShardTensor, local, register, unsupported, wrap

__all__ = []


def _darray(block, layout, comm) -> DArray:
    return DArray._wrap(block, layout, comm, namespace_of(block))


class _Ring(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, lays, comm, spec):
        ql, kl, vl = lays
        dq, dk, dv = (_darray(t.detach().contiguous(), lay, comm) for t, lay in ((q, ql), (k, kl), (v, vl)))
        ring = _ring_comm(spec.plan, ql, comm)
        out, lse = _forward(dq, dk, dv, spec, ring)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.meta = (lays, comm, spec)
        return out

    @staticmethod
    def backward(ctx, g):
        q, k, v, out, lse = ctx.saved_tensors
        (ql, kl, vl), comm, spec = ctx.meta
        dq, dk, dv = (_darray(t.detach().contiguous(), lay, comm) for t, lay in ((q, ql), (k, kl), (v, vl)))
        d_out = _darray(out, spec.out_layout, comm)
        d_g = _darray(g.contiguous(), spec.out_layout, comm)
        ring = _ring_comm(spec.plan, ql, comm)
        gq, gk, gv, _ = _backward(lse, dq, dk, dv, d_out, d_g, spec, ring)
        return gq, gk, gv, None, None, None


def _layouts(func, q: ShardTensor, k: ShardTensor, v: ShardTensor):
    ql, kl, vl = q._dlayout, k._dlayout, v._dlayout
    nd = len(ql.shape)
    if nd < 2 or len(kl.shape) != nd or len(vl.shape) != nd:
        raise ValueError(message(_name(func), "query, key and value must have the same number of axes (at least 2)",
                                 (ql.shape, kl.shape, vl.shape), "(..., tokens, features) each"))
    if ql.shape[:-2] != kl.shape[:-2] or ql.shape[:-2] != vl.shape[:-2] or ql.shape[-1] != kl.shape[-1] \
            or kl.shape[-2] != vl.shape[-2]:
        raise ValueError(message(_name(func), "query, key and value shapes do not fit",
                                 (ql.shape, kl.shape, vl.shape), "(..., L, E), (..., S, E), (..., S, Ev)"))
    t = nd - 2
    for name, x, lay in (("query", q, ql), ("key", k, kl), ("value", v, vl)):
        if lay.axis_dim[t + 1] is not None:
            raise unsupported(func, x, f"the feature axis (-1) of {name} is cut")
    for name, x, lay in (("key", k, kl), ("value", v, vl)):
        if lay.dims != ql.dims or lay.split != ql.split or lay.sizes[:t] != ql.sizes[:t]:
            raise unsupported(func, x, f"{name} is not cut like query (the same grid, split and leading blocks)")
    if vl.sizes[t] != kl.sizes[t]:
        raise unsupported(func, v, f"the token axes of key and value are cut differently ({kl.sizes[t]} and "
                                   f"{vl.sizes[t]})")
    return ql, kl, vl


def _name(func) -> str:
    return getattr(func, "__name__", "scaled_dot_product_attention")


def _mask(func, mask, q: ShardTensor, scores: Layout, dtype):
    """``mask`` (a plain tensor, whole on every rank) as the ring's mask DArray: this rank's query rows."""
    if isinstance(mask, ShardTensor):
        raise unsupported(func, mask, "a cut attn_mask (pass it whole: each rank reads its own rows)")
    full = scores.shape
    if mask.ndim > len(full) or any(m not in (1, n) for m, n in zip(mask.shape[::-1], full[::-1])):
        raise ValueError(message(_name(func), "attn_mask is not broadcastable to (..., L, S)", tuple(mask.shape),
                                 full))
    is_bool = mask.dtype == torch.bool
    mask = mask.detach() if is_bool else mask.detach().to(dtype)
    target = scores.broadcast_layout(tuple(mask.shape))
    block = mask[target.block_slices(q._dcomm.rank)].contiguous()
    return _darray(block, target, q._dcomm), is_bool


@register(F.scaled_dot_product_attention)
def _sdpa(func, args, kwargs):
    names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
    b = dict({"attn_mask": None, "dropout_p": 0.0, "is_causal": False, "scale": None, "enable_gqa": False},
             **dict(zip(names, args)), **kwargs)
    q, k, v, mask = b["query"], b["key"], b["value"], b["attn_mask"]
    first = next(x for x in (q, k, v, mask) if isinstance(x, ShardTensor))
    if b["dropout_p"]:
        raise unsupported(func, first, f"dropout_p={b['dropout_p']} (torch's dropout mask cannot be reproduced "
                                       "block by block; use dropout_p=0, e.g. in eval mode)")
    if b["enable_gqa"]:
        raise unsupported(func, first, "enable_gqa=True (repeat the key/value heads first)")
    if b["is_causal"] and mask is not None:
        raise ValueError(message(_name(func), "explicit attn_mask should not be set when is_causal=True",
                                 tuple(mask.shape), "attn_mask=None"))
    if not isinstance(q, ShardTensor):
        raise unsupported(func, first, "only the queries' token axis may be cut (query is a whole tensor)")
    if not isinstance(k, ShardTensor) and not isinstance(v, ShardTensor):
        return _cross(func, q, k, v, mask, b)
    if not (isinstance(k, ShardTensor) and isinstance(v, ShardTensor)):
        raise unsupported(func, q, "key and value must both be cut like query, or both be whole tensors")
    ql, kl, vl = _layouts(func, q, k, v)
    dtype = local(q).dtype
    if local(k).dtype != dtype or local(v).dtype != dtype or not dtype.is_floating_point:
        raise TypeError(message(_name(func), "query, key and value must share one real floating dtype",
                                (dtype, local(k).dtype, local(v).dtype), "float32 or float64"))
    comm = q._dcomm
    t = len(ql.shape) - 2
    e = ql.shape[-1]
    scores = ql.replace(shape=(*ql.shape[:-1], kl.shape[-2]), sizes=(*ql.sizes[:-1], (kl.shape[-2],)))
    masks = (_mask(func, mask, q, scores, dtype),) if mask is not None else ()
    out_layout = ql.replace(shape=(*ql.shape[:-1], vl.shape[-1]), sizes=(*ql.sizes[:-1], (vl.shape[-1],)))
    itemsize = torch.finfo(dtype).bits // 8
    spec = Spec(plan=ring_plan(ql, kl, comm.rank, bool(b["is_causal"])),
                scale=1.0 / math.sqrt(e) if b["scale"] is None else float(b["scale"]), masks=masks,
                out_layout=out_layout, lead_cells=ql.block_slices(comm.rank)[:t], scores_shape=scores.shape,
                chunk=key_chunk(ql.shape, itemsize), s_len=kl.shape[-2])
    out = _Ring.apply(local(q), local(k), local(v), (ql, kl, vl), comm, spec)
    return wrap(out, out_layout, comm)


def _cross(func, q: ShardTensor, k, v, mask, b):
    """Queries cut, keys and values whole on every rank: local attention, their gradients summed over the ranks."""
    lay, comm = q._dlayout, q._dcomm
    t = len(lay.shape) - 2
    if b["is_causal"]:
        raise unsupported(func, q, "is_causal with whole keys and values (cut them like the queries instead)")
    if tuple(k.shape[:-2]) != lay.shape[:-2] or tuple(v.shape[:-2]) != lay.shape[:-2] or any(
            lay.axis_dim[a] is not None for a in range(t)):
        raise unsupported(func, q, "whole keys and values need the leading axes of query whole and equal")
    if lay.axis_dim[t + 1] is not None:
        raise unsupported(func, q, "the feature axis (-1) of query is cut")
    out_layout = lay.replace(shape=(*lay.shape[:-1], v.shape[-1]), sizes=(*lay.sizes[:-1], (v.shape[-1],)))
    if mask is not None:
        if isinstance(mask, ShardTensor):
            raise unsupported(func, mask, "a cut attn_mask (pass it whole: each rank reads its own rows)")
        scores = lay.replace(shape=(*lay.shape[:-1], k.shape[-2]), sizes=(*lay.sizes[:-1], (k.shape[-2],)))
        mask = mask[scores.broadcast_layout(tuple(mask.shape)).block_slices(comm.rank)]
    k, v = promote(k, comm, out_layout), promote(v, comm, out_layout)
    out = F.scaled_dot_product_attention(local(q), k, v, attn_mask=mask, scale=b["scale"])
    return wrap(out, out_layout, comm)
