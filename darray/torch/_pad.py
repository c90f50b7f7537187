"""``torch.nn.functional.pad`` on ShardTensors, kept pending until a convolution folds it into its halo.

``nn.Conv2d(padding_mode="circular")`` calls ``F.pad(x, ..., mode="circular")``
and then a convolution without padding. Padding a cut axis here would move
the wrapped rows once and the convolution's halo rows again; instead the pad
is recorded on the result (its shape is the padded one) and the next
convolution or pooling exchanges one halo with the pad's boundary rule. Any
other op materialises the pad first (:func:`materialize`: one halo exchange
of the padded width, the padding rows kept by the edge blocks).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .._errors import message
from .._layout import Layout
from ._collective import halo
from ._tensor import ShardTensor, local, register, unsupported, wrap

__all__ = ["materialize", "padded_layout", "pad_pairs"]

_MODES = ("constant", "reflect", "replicate", "circular")


def pad_pairs(pad, ndim: int):
    """torch's flat ``pad`` (last axis first) as ``(lo, hi)`` per axis."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2 or len(pad) // 2 > ndim:
        raise ValueError(message("pad", "pad must have an even length of at most 2 * ndim", pad))
    pairs = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        pairs[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return tuple(pairs)


def padded_layout(base: Layout, pairs) -> Layout:
    """``base`` grown by ``pairs``: the first block of an axis takes the low padding, the last the high."""
    shape, sizes = list(base.shape), list(base.sizes)
    for a, (lo, hi) in enumerate(pairs):
        if lo or hi:
            shape[a] += lo + hi
            s = list(sizes[a])
            s[0] += lo
            s[-1] += hi
            sizes[a] = tuple(s)
    return base.replace(shape=tuple(shape), sizes=tuple(sizes))


def materialize(x) -> torch.Tensor:
    """The block of a ShardTensor with a pending pad, padded (called by :func:`~darray.torch.local`)."""
    base, pairs, mode, value = x._dpad
    with torch._C.DisableTorchFunctionSubclass():
        block = x.as_subclass(torch.Tensor)
    comm = x._dcomm
    depth = tuple(max(lo, hi) for lo, hi in pairs)
    padded = halo(block, base, comm, depth, mode, value)
    idx, shape = base.block_index(comm.rank), base.block_shape(comm.rank)
    for a, (lo, hi) in enumerate(pairs):
        h = depth[a]
        if not h:
            continue
        first, last = idx[a] == 0, idx[a] == len(base.sizes[a]) - 1
        start = h - lo if first else h
        stop = h + shape[a] + (hi if last else 0)
        padded = padded.narrow(a, start, stop - start)
    return padded


@register(F.pad, torch.constant_pad_nd)
def _pad(func, args, kwargs):
    names = ("input", "pad", "mode", "value")
    b = dict({"mode": "constant", "value": None}, **dict(zip(names, args)), **kwargs)
    x, mode = b["input"], b["mode"]
    if func is torch.constant_pad_nd:
        mode = "constant"
    if mode not in _MODES:
        raise unsupported(func, x, f"padding mode {mode!r} (supported: {_MODES})")
    lay = x._dlayout
    pairs = pad_pairs(b["pad"], len(lay.shape))
    if any(lo < 0 or hi < 0 for lo, hi in pairs):
        raise unsupported(func, x, "negative padding (cropping)")
    value = 0.0 if b["value"] is None else b["value"]
    cut = [a for a, (lo, hi) in enumerate(pairs) if (lo or hi) and lay.axis_dim[a] is not None]
    if mode != "constant":
        for a, (lo, hi) in enumerate(pairs):
            if max(lo, hi) > lay.shape[a] - (mode == "reflect"):
                raise ValueError(message("pad", f"{mode} padding must be smaller than the input along axis {a}",
                                         (lo, hi), f"< {lay.shape[a]}"))
    if not cut:
        blk = local(x)
        out = F.pad(blk, b["pad"], mode=mode, value=value) if mode == "constant" else F.pad(blk, b["pad"], mode=mode)
        return wrap(out, padded_layout(lay, pairs), x._dcomm)
    if x._dpad is not None:  # a pad of a pad: the first one now
        x = wrap(local(x), lay, x._dcomm)
    out = wrap(local(x), padded_layout(lay, pairs), x._dcomm, pad=(lay, pairs, mode, value))
    return out


def pending(x: ShardTensor):
    """``(base layout, pairs, mode, value)`` of a pending pad, or None."""
    return x._dpad
