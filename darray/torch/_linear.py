"""Linear layers, matmul, concatenation and axis shuffles on ShardTensors: local where the cut axes are untouched.

``linear`` / ``matmul`` contract the last axis (the channel axis of a
channels-last field), which must be whole on every block; their weights are
promoted like a convolution's. ``cat`` joins along a whole axis;
``permute`` / ``transpose`` / ``movedim`` move the cuts with the axes; ``unbind`` / ``split`` /
``chunk`` cut along a whole axis;
``reshape`` / ``view`` / ``flatten`` / ``unsqueeze`` / ``squeeze`` regroup
whole axes only, a cut axis staying one axis of its own.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .._layout import Layout
from ._collective import promote, redistribute
from ._tensor import ShardTensor, local, register, unsupported, wrap

__all__ = ["permuted", "reshaped"]


def _with_last(lay: Layout, n: int) -> Layout:
    return lay.replace(shape=lay.shape[:-1] + (n,), sizes=lay.sizes[:-1] + ((n,),))


@register(F.linear)
def _linear(func, args, kwargs):
    b = dict({"bias": None}, **dict(zip(("input", "weight", "bias"), args)), **kwargs)
    x, w, bias = b["input"], b["weight"], b["bias"]
    if not isinstance(x, ShardTensor) or isinstance(w, ShardTensor) or isinstance(bias, ShardTensor):
        raise unsupported(func, x if isinstance(x, ShardTensor) else w, "only the input may be cut")
    lay, comm = x._dlayout, x._dcomm
    if lay.axis_dim[-1] is not None:
        raise unsupported(func, x, "the contracted (last) axis is cut")
    out_lay = _with_last(lay, w.shape[0])
    w = promote(w, comm, out_lay)
    bias = promote(bias, comm, out_lay) if bias is not None else None
    return wrap(F.linear(local(x), w, bias), out_lay, comm)


@register(torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__)
def _matmul(func, args, kwargs):
    a, b = args[0], args[1]
    if not isinstance(a, ShardTensor) or isinstance(b, ShardTensor) or b.ndim not in (1, 2):
        raise unsupported(func, a if isinstance(a, ShardTensor) else b,
                          "only (cut tensor) @ (whole vector or matrix) is supported")
    lay, comm = a._dlayout, a._dcomm
    if lay.axis_dim[-1] is not None:
        raise unsupported(func, a, "the contracted (last) axis is cut")
    if b.ndim == 1:
        out_lay = lay.reduced((len(lay.shape) - 1,), False)
    else:
        out_lay = _with_last(lay, b.shape[1])
    return wrap(torch.matmul(local(a), promote(b, comm, out_lay)), out_lay, comm)


@register(torch.cat, torch.concat, torch.concatenate)
def _cat(func, args, kwargs):
    tensors = args[0] if args else kwargs["tensors"]
    dim = args[1] if len(args) > 1 else kwargs.get("dim", kwargs.get("axis", 0))
    shards = [t for t in tensors if isinstance(t, ShardTensor)]
    lay = shards[0]._dlayout
    axis = dim % len(lay.shape)
    if lay.axis_dim[axis] is not None:
        raise unsupported(func, shards[0], f"it joins along axis {axis}, which is cut")
    comm = shards[0]._dcomm
    blocks = []
    for t in tensors:
        tl = t._dlayout if isinstance(t, ShardTensor) else None
        if tl is None or len(tl.shape) != len(lay.shape) or tl.dims != lay.dims or any(
                tl.shape[a] != lay.shape[a] for a in range(len(lay.shape)) if a != axis):
            raise unsupported(func, shards[0], "every operand must be a ShardTensor of the same shape off the "
                                               "joined axis")
        block = local(t)
        if tl.split != lay.split or any(tl.sizes[a] != lay.sizes[a] for a in range(len(lay.shape)) if a != axis):
            # the same cells cut elsewhere (a pooled-then-upsampled skip on uneven blocks): move what differs
            target = lay.replace(shape=tl.shape, sizes=lay.sizes[:axis] + (tl.sizes[axis],) + lay.sizes[axis + 1:])
            block = redistribute(block, tl, target, comm)
        blocks.append(block)
    n = sum(t._dlayout.shape[axis] for t in tensors)
    out_lay = lay.replace(shape=lay.shape[:axis] + (n,) + lay.shape[axis + 1:],
                          sizes=lay.sizes[:axis] + ((n,),) + lay.sizes[axis + 1:])
    return wrap(torch.cat(blocks, dim=axis), out_lay, comm)


def permuted(lay: Layout, order) -> Layout:
    """``lay`` with its axes in ``order`` (``order[i]``: the old axis that becomes axis ``i``)."""
    new_of = {old: new for new, old in enumerate(order)}
    return Layout(tuple(lay.shape[o] for o in order), lay.dims,
                  tuple(None if s is None else new_of[s] for s in lay.split), tuple(lay.sizes[o] for o in order))


@register(torch.permute, torch.Tensor.permute, torch.transpose, torch.Tensor.transpose, torch.swapaxes,
          torch.Tensor.swapaxes, torch.movedim, torch.Tensor.movedim, torch.moveaxis, torch.Tensor.moveaxis)
def _permute(func, args, kwargs):
    x = args[0]
    lay = x._dlayout
    nd = len(lay.shape)
    rest = list(args[1:]) + list(kwargs.values())
    if func in (torch.permute, torch.Tensor.permute):
        dims = rest[0] if len(rest) == 1 and isinstance(rest[0], (tuple, list)) else rest
        order = [d % nd for d in dims]
    elif func in (torch.movedim, torch.Tensor.movedim, torch.moveaxis, torch.Tensor.moveaxis):
        src, dst = rest[0], rest[1]
        src = [src] if isinstance(src, int) else list(src)
        dst = [dst] if isinstance(dst, int) else list(dst)
        order = [None] * nd
        for s, d in zip(src, dst):
            order[d % nd] = s % nd
        left = iter(a for a in range(nd) if a not in {s % nd for s in src})
        order = [o if o is not None else next(left) for o in order]
    else:
        a, b = rest[0] % nd, rest[1] % nd
        order = list(range(nd))
        order[a], order[b] = order[b], order[a]
    return wrap(local(x).permute(order), permuted(lay, order), x._dcomm)


def reshaped(func, x, shape) -> Layout:
    """The layout of ``x.reshape(shape)`` when every cut axis stays an axis of its own; else NotImplementedError."""
    lay = x._dlayout
    shape = list(shape)
    total = math.prod(lay.shape)
    if shape.count(-1) == 1:
        known = math.prod(s for s in shape if s != -1)
        shape[shape.index(-1)] = total // known if known else 0
    if math.prod(shape) != total:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {total}")
    old, new = list(lay.shape), shape
    i = j = 0
    mapping = {}  # old cut axis -> new axis
    while i < len(old) or j < len(new):
        if i < len(old) and lay.axis_dim[i] is not None:
            while j < len(new) and new[j] == 1 and old[i] != 1:
                j += 1
            if j >= len(new) or new[j] != old[i]:
                raise unsupported(func, x, f"the reshape to {tuple(shape)} regroups cut axis {i}")
            mapping[i] = j
            i, j = i + 1, j + 1
            continue
        # a run of whole axes on both sides up to the next cut axis
        nxt = next((a for a in range(i, len(old)) if lay.axis_dim[a] is not None), len(old))
        size_old = math.prod(old[i:nxt])
        k, size_new = j, 1
        while k < len(new) and (size_new < size_old or (nxt == len(old) and k < len(new))):
            size_new *= new[k]
            k += 1
        while k < len(new) and new[k] == 1 and nxt < len(old) and old[nxt] != 1 and size_new == size_old:
            k += 1
        if size_new != size_old:
            raise unsupported(func, x, f"the reshape to {tuple(shape)} regroups cut axes")
        i, j = nxt, k
    split = tuple(None if s is None else mapping[s] for s in lay.split)
    sizes = []
    for a, n in enumerate(new):
        olds = [o for o, m in mapping.items() if m == a]
        sizes.append(lay.sizes[olds[0]] if olds else (n,))
    return Layout(tuple(new), lay.dims, split, tuple(sizes))


@register(torch.reshape, torch.Tensor.reshape, torch.Tensor.view, torch.flatten, torch.Tensor.flatten,
          torch.unflatten, torch.Tensor.unflatten, torch.unsqueeze, torch.Tensor.unsqueeze, torch.squeeze,
          torch.Tensor.squeeze)
def _reshape(func, args, kwargs):
    x = args[0]
    lay = x._dlayout
    nd = len(lay.shape)
    rest = list(args[1:])
    if func in (torch.flatten, torch.Tensor.flatten):
        start = (rest[0] if rest else kwargs.get("start_dim", 0)) % max(nd, 1)
        end = (rest[1] if len(rest) > 1 else kwargs.get("end_dim", -1)) % max(nd, 1)
        shape = lay.shape[:start] + (math.prod(lay.shape[start:end + 1]),) + lay.shape[end + 1:]
    elif func in (torch.unflatten, torch.Tensor.unflatten):
        dim, sizes = (rest + [kwargs.get("dim"), kwargs.get("sizes")])[:2]
        dim %= nd
        sizes = list(sizes)
        if -1 in sizes:
            sizes[sizes.index(-1)] = lay.shape[dim] // -math.prod(sizes)
        shape = lay.shape[:dim] + tuple(sizes) + lay.shape[dim + 1:]
    elif func in (torch.unsqueeze, torch.Tensor.unsqueeze):
        dim = (rest[0] if rest else kwargs["dim"]) % (nd + 1)
        shape = lay.shape[:dim] + (1,) + lay.shape[dim:]
    elif func in (torch.squeeze, torch.Tensor.squeeze):
        dim = rest[0] if rest else kwargs.get("dim")
        dims = range(nd) if dim is None else [d % nd for d in ((dim,) if isinstance(dim, int) else dim)]
        drop = {d for d in dims if lay.shape[d] == 1}
        shape = tuple(n for a, n in enumerate(lay.shape) if a not in drop)
    else:
        shape = rest[0] if len(rest) == 1 and isinstance(rest[0], (tuple, list, torch.Size)) else rest
        shape = tuple(kwargs.get("shape", shape))
    out_lay = reshaped(func, x, shape)
    block = tuple(s[0] if len(s) == 1 else s[x._dcomm and out_lay.block_index(x._dcomm.rank)[a]]
                  for a, s in enumerate(out_lay.sizes))
    return wrap(local(x).reshape(block), out_lay, x._dcomm)


@register(torch.Tensor.__getitem__)
def _getitem(func, args, kwargs):
    """Basic indexing of whole axes (ints, slices, None, ...); a cut axis must be taken whole (``:``)."""
    x, key = args
    lay = x._dlayout
    key = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis for k in key):
        e = key.index(Ellipsis)
        fill = len(lay.shape) - (len([k for k in key if k is not None]) - 1)
        key = key[:e] + (slice(None),) * fill + key[e + 1:]
    shape, sizes, split_map, axis, local_key = [], [], {}, 0, []
    for k in key:
        if k is None:
            shape.append(1)
            sizes.append((1,))
            local_key.append(None)
            continue
        cut = lay.axis_dim[axis] is not None
        if isinstance(k, slice) and k == slice(None):
            split_map[axis] = len(shape)
            shape.append(lay.shape[axis])
            sizes.append(lay.sizes[axis])
        elif cut or not isinstance(k, (int, slice)) or isinstance(k, bool):
            raise unsupported(func, x, f"index {k!r} on axis {axis}" + (" (cut)" if cut else ""))
        elif isinstance(k, slice):
            n = len(range(*k.indices(lay.shape[axis])))
            shape.append(n)
            sizes.append((n,))
        local_key.append(k)
        axis += 1
    for a in range(axis, len(lay.shape)):
        split_map[a] = len(shape)
        shape.append(lay.shape[a])
        sizes.append(lay.sizes[a])
    out_lay = Layout(tuple(shape), lay.dims, tuple(None if s is None else split_map[s] for s in lay.split),
                     tuple(sizes))
    return wrap(local(x)[tuple(local_key)], out_lay, x._dcomm)


@register(torch.unbind, torch.Tensor.unbind, torch.split, torch.Tensor.split, torch.chunk, torch.Tensor.chunk,
          torch.tensor_split, torch.Tensor.tensor_split)
def _pieces(func, args, kwargs):
    """``unbind`` / ``split`` / ``chunk`` along a whole axis (``q, k, v = qkv.unbind(0)``): local, each piece
    keeping the cuts of the other axes."""
    x = args[0]
    lay = x._dlayout
    nd = len(lay.shape)
    if func in (torch.unbind, torch.Tensor.unbind):
        dim = (args[1] if len(args) > 1 else kwargs.get("dim", 0)) % nd
    else:
        dim = (args[2] if len(args) > 2 else kwargs.get("dim", 0)) % nd
    if lay.axis_dim[dim] is not None:
        raise unsupported(func, x, f"it cuts along axis {dim}, which is cut over the ranks")
    with torch._C.DisableTorchFunctionSubclass():
        pieces = func(local(x), *args[1:], **kwargs)
    if func in (torch.unbind, torch.Tensor.unbind):
        out_lay = lay.reduced((dim,), False)
        return tuple(wrap(p, out_lay, x._dcomm) for p in pieces)
    out = []
    for p in pieces:
        n = p.shape[dim]
        out.append(wrap(p, lay.replace(shape=lay.shape[:dim] + (n,) + lay.shape[dim + 1:],
                                       sizes=lay.sizes[:dim] + ((n,),) + lay.sizes[dim + 1:]), x._dcomm))
    return tuple(out)
