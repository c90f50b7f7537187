"""Neighbourhood (windowed) attention through halos: the attention form of a stencil.

Every query cell of a channels-first field ``(N, heads * d, *spatial)``
attends to the ``prod(kernel_size)`` cells of the (dilated) window centred on
it. Keys and values come from a halo of radius ``dilation * (kernel_size // 2)``
per spatial axis, exchanged ONCE with the convolutions' machinery
(:func:`darray.autodiff.halo`: forward exchange, backward the ghost-cell
gradients are sent back to their owners and added), so the op costs one halo
exchange of ``k`` and one of ``v`` instead of a ring over all ranks. Blocks
thinner than the radius are served by multi-hop halos (several neighbours
send); a window longer than its axis is refused.

Boundaries per spatial axis (NATTEN's shifted windows would need a halo of
twice the radius at the domain edges; these do not):

============  ========================================================
``masked``    window cells outside the domain are left out of the
              softmax: an edge query attends to fewer keys (the default)
``zeros``     the field is padded with zero keys and values (score 0),
              like a convolution's zero padding: every query sees the
              full window
``periodic``  the window wraps around the axis
============  ========================================================

The local kernel loops over the window's offsets (``prod(kernel_size)``
vectorised steps on the whole block) and keeps the attention weights
``(N, heads, window, *block)`` for the backward pass.
"""

from __future__ import annotations

import math
import numbers
from functools import lru_cache
from itertools import product

import numpy as np

from .._errors import message
from ..autodiff import apply, halo, register
from ._util import data, ntuple, redistributed, whole_channel_layout, wrap_storage, zeros
from .layers import Linear, _ints
from .module import Module

__all__ = ["neighborhood_attention", "NeighborhoodAttention1d", "NeighborhoodAttention2d",
           "NeighborhoodAttention3d"]

BOUNDARIES = ("masked", "zeros", "periodic")
_HALO_FILL = {"masked": 0.0, "zeros": 0.0, "periodic": "periodic"}


# ------------------------------------------------------------------ the local kernel
def _offsets(ksize, dilation):
    """Every window offset (cells, per spatial axis), row-major."""
    return list(product(*[[d * j for j in range(-(k // 2), k // 2 + 1)] for k, d in zip(ksize, dilation)]))


def _shifted(block, offset, radius, shape):
    """The cells of padded ``block`` at ``offset`` from each owned cell (a view)."""
    return block[(slice(None),) * 3 + tuple(slice(r + o, r + o + n) for o, r, n in zip(offset, radius, shape))]


@lru_cache(maxsize=64)
def _mask_bias(layout, rank, ksize, dilation, masked) -> np.ndarray:
    """``(window, *block)``: 0 where the window cell is inside the domain along every masked axis, else -inf."""
    start, shape = layout.block_start(rank)[2:], layout.block_shape(rank)[2:]
    offsets = _offsets(ksize, dilation)
    bias = np.zeros((len(offsets), *shape))
    for w, off in enumerate(offsets):
        for i, (o, m) in enumerate(zip(off, masked)):
            if not m:
                continue
            pos = start[i] + np.arange(shape[i]) + o
            bad = (pos < 0) | (pos >= layout.shape[2 + i])
            bias[(w,) + (slice(None),) * i + (bad,)] = -np.inf
    bias.flags.writeable = False
    return bias


def _split_heads(xp, block, heads):
    return xp.reshape(block, (block.shape[0], heads, block.shape[1] // heads, *block.shape[2:]))


def _na_forward(ctx, q, kp, vp, ksize, dilation, masked, scale, heads):
    xp, rank = q._xp, q._comm.rank
    layout = q._layout
    qb = q.local
    shape = tuple(qb.shape[2:])
    dv = vp.shape[1] // heads
    out_layout = layout.replace(shape=(layout.shape[0], vp.shape[1], *layout.shape[2:]),
                                sizes=(layout.sizes[0], (vp.shape[1],), *layout.sizes[2:]))
    oshape = (qb.shape[0], vp.shape[1], *shape)
    if any(n == 0 for n in oshape):
        ctx.saved["attn"] = None
        return wrap_storage(zeros(q, oshape), out_layout, q)
    offsets = _offsets(ksize, dilation)
    radius = kp._layout.halo[2:]
    qh = _split_heads(xp, qb, heads)
    kh, vh = _split_heads(xp, kp._block, heads), _split_heads(xp, vp._block, heads)
    scores = xp.stack([xp.sum(qh * _shifted(kh, o, radius, shape), axis=2) for o in offsets], axis=2) * scale
    if any(masked):
        bias = xp.asarray(_mask_bias(layout, rank, ksize, dilation, masked), device=q.device)
        scores = scores + xp.asarray(bias, dtype=scores.dtype)
    scores = xp.exp(scores - xp.max(scores, axis=2, keepdims=True))
    attn = scores / xp.sum(scores, axis=2, keepdims=True)
    ctx.saved["attn"] = attn
    out = xp.zeros((qb.shape[0], heads, dv, *shape), dtype=qb.dtype, device=q.device)
    for w, o in enumerate(offsets):
        out = out + attn[:, :, w:w + 1, ...] * _shifted(vh, o, radius, shape)
    return wrap_storage(xp.reshape(out, oshape), out_layout, q)


def _na_backward(ctx, g):
    q, kp, vp = ctx.xs
    ksize, dilation, scale, heads = (ctx.params[k] for k in ("ksize", "dilation", "scale", "heads"))
    xp, attn = q._xp, ctx.saved["attn"]
    gq = zeros(q, q.local.shape) if ctx.needs[0] else None
    gk = zeros(kp, kp._block.shape) if ctx.needs[1] else None
    gv = zeros(vp, vp._block.shape) if ctx.needs[2] else None
    if attn is not None:
        offsets = _offsets(ksize, dilation)
        radius = kp._layout.halo[2:]
        qb = q.local
        shape = tuple(qb.shape[2:])
        qh, kh, vh = _split_heads(xp, qb, heads), _split_heads(xp, kp._block, heads), _split_heads(xp, vp._block, heads)
        gh = _split_heads(xp, g.local, heads)
        dattn = xp.stack([xp.sum(gh * _shifted(vh, o, radius, shape), axis=2) for o in offsets], axis=2)
        dscore = attn * (dattn - xp.sum(attn * dattn, axis=2, keepdims=True)) * scale
        gqh = xp.zeros(qh.shape, dtype=qh.dtype, device=q.device)
        gkh = _split_heads(xp, gk, heads) if gk is not None else None
        gvh = _split_heads(xp, gv, heads) if gv is not None else None
        for w, o in enumerate(offsets):
            region = (slice(None),) * 3 + tuple(slice(r + c, r + c + n) for c, r, n in zip(o, radius, shape))
            if gq is not None:
                gqh = gqh + dscore[:, :, w:w + 1, ...] * _shifted(kh, o, radius, shape)
            if gkh is not None:
                gkh[region] = gkh[region] + dscore[:, :, w:w + 1, ...] * qh
            if gvh is not None:
                gvh[region] = gvh[region] + attn[:, :, w:w + 1, ...] * gh
        gq = xp.reshape(gqh, qb.shape) if gq is not None else None
        gk = xp.reshape(gkh, kp._block.shape) if gkh is not None else None
        gv = xp.reshape(gvh, vp._block.shape) if gvh is not None else None
    return (wrap_storage(gq, q._layout, q) if gq is not None else None,
            wrap_storage(gk, kp._layout, kp) if gk is not None else None,
            wrap_storage(gv, vp._layout, vp) if gv is not None else None)


register("neighborhood_attention_local", _na_forward, _na_backward)


# ------------------------------------------------------------------ validation
def _per_axis(func, name, value, nsp):
    """``value`` (an int or ``nsp`` ints, each >= 1) as an ``nsp``-tuple."""
    out = ntuple(func, name, value, nsp)  # one entry per spatial axis
    _ints(func, name, value, nsp)  # ints, not floats or bools, each positive
    return out


def _boundaries(func, boundary, nsp):
    items = (boundary,) * nsp if isinstance(boundary, str) else tuple(boundary)
    if len(items) != nsp or any(b not in BOUNDARIES for b in items):
        raise ValueError(message(func, "unknown boundary", boundary,
                                 f"one of {BOUNDARIES} or a tuple of {nsp} of them"))
    return items


def _check(func, q, k, v, kernel_size, dilation, boundary, num_heads):
    """Validate the replicated metadata (same verdict on every rank, before any message)."""
    qd, kd, vd = data(q), data(k), data(v)
    nsp = qd.ndim - 2
    if not 1 <= nsp <= 3:
        raise ValueError(message(func, "q must be (N, C, *spatial) with 1 to 3 spatial axes", qd.shape))
    if tuple(kd.shape) != tuple(qd.shape):
        raise ValueError(message(func, "k must have q's shape", kd.shape, qd.shape))
    if vd.ndim != qd.ndim or vd.shape[0] != qd.shape[0] or tuple(vd.shape[2:]) != tuple(qd.shape[2:]):
        raise ValueError(message(func, "v must be (N, C_v, *spatial) with q's batch and spatial sizes", vd.shape,
                                 f"({qd.shape[0]}, C_v, {', '.join(map(str, qd.shape[2:]))})"))
    if not (qd.dtype == kd.dtype == vd.dtype) or np.dtype(str(qd.dtype)).kind != "f":
        raise TypeError(message(func, "q, k and v must share one real floating dtype",
                                (str(qd.dtype), str(kd.dtype), str(vd.dtype))))
    if not isinstance(num_heads, numbers.Integral) or num_heads < 1 or qd.shape[1] % num_heads \
            or vd.shape[1] % num_heads:
        raise ValueError(message(func, "num_heads must be a positive int dividing the channels of q and v",
                                 num_heads, f"a divisor of {qd.shape[1]} and {vd.shape[1]}"))
    ksize = _per_axis(func, "kernel_size", kernel_size, nsp)
    if any(kk % 2 == 0 for kk in ksize):
        raise ValueError(message(func, "kernel_size must be odd (the window is centred on its query)", kernel_size,
                                 "odd ints"))
    dil = _per_axis(func, "dilation", dilation, nsp)
    span = tuple(d * (kk - 1) + 1 for kk, d in zip(ksize, dil))
    if any(s > n for s, n in zip(span, qd.shape[2:])):
        raise ValueError(message(func, "window (dilation * (kernel_size - 1) + 1) longer than the spatial axes",
                                 span, f"at most {tuple(qd.shape[2:])}"))
    return nsp, ksize, dil, _boundaries(func, boundary, nsp)


# ------------------------------------------------------------------ the function
def neighborhood_attention(q, k, v, kernel_size, dilation=1, boundary="masked", scale=None, num_heads: int = 1):
    """Neighbourhood attention of channels-first fields cut over the ranks.

    Parameters
    ----------
    q, k : Variable or DArray, ``(N, num_heads * d, *spatial)``, 1 to 3 spatial axes
        Queries and keys (head ``h`` is channels ``h * d .. (h + 1) * d``).
    v : Variable or DArray, ``(N, num_heads * d_v, *spatial)``
        Values.
    kernel_size : int or tuple of odd ints
        Window cells per spatial axis.
    dilation : int or tuple of ints
        Spacing of the window cells (the halo radius is ``dilation * (kernel_size // 2)``).
    boundary : {"masked", "zeros", "periodic"} or a tuple of them per spatial axis
        Outside the domain: window cells left out of the softmax (``masked``),
        zero keys and values (``zeros``), or the axis wraps (``periodic``).
    scale : float, optional
        Score scale; ``1 / sqrt(d)`` by default.
    num_heads : int
        Number of heads the channels hold.

    Returns
    -------
    Variable ``(N, num_heads * d_v, *spatial)`` in ``q``'s blocks:
    ``out[n, h, :, x] = sum_j softmax_j(scale * q[n, h, :, x] . k[n, h, :, x + dilation * j]) v[n, h, :, x + dilation * j]``
    over window offsets ``j`` in ``[-(kernel_size // 2), kernel_size // 2]`` per axis.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> from darray.nn._neighborhood import neighborhood_attention
    >>> x = da.asarray(np.ones((1, 4, 6, 5)), split=2)
    >>> y = neighborhood_attention(x, x, x, kernel_size=3, num_heads=2)
    >>> y.shape, float(y.data.sum())
    ((1, 4, 6, 5), 120.0)
    """
    func = "neighborhood_attention"
    nsp, ksize, dil, bnds = _check(func, q, k, v, kernel_size, dilation, boundary, num_heads)
    qd, vd = data(q), data(v)
    d = qd.shape[1] // num_heads
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    layout = whole_channel_layout(func, qd)
    vlayout = layout.replace(shape=(layout.shape[0], vd.shape[1], *layout.shape[2:]),
                             sizes=(layout.sizes[0], (vd.shape[1],), *layout.sizes[2:]))
    q, k, v = redistributed(q, layout), redistributed(k, layout), redistributed(v, vlayout)
    radius = (0, 0) + tuple(dd * (kk // 2) for kk, dd in zip(ksize, dil))
    if any(radius):
        fill = ("none", "none") + tuple(_HALO_FILL[b] for b in bnds)
        k, v = halo(k, radius, fill), halo(v, radius, fill)
    masked = tuple(b == "masked" for b in bnds)
    return apply("neighborhood_attention_local", q, k, v, ksize=ksize, dilation=dil, masked=masked, scale=scale,
                 heads=int(num_heads))


# ------------------------------------------------------------------ the layers
_LAYER_DOC = """Multi-head neighbourhood attention over channels-first fields ``(N, dim, *spatial)``.

    NATTEN's ``NeighborhoodAttention{1,2,3}D`` arguments, parameters and
    state_dict keys, on channels-first data cut over the ranks: ``x`` is
    projected per cell by ``qkv`` (a 1x1 linear map over the channel axis,
    ``dim -> 3 dim``; its output channels are ``q | k | v``, each
    ``(num_heads, head_dim)``), attends through
    :func:`neighborhood_attention` (one halo exchange of k and one of v),
    and is projected back by ``proj`` (``dim -> dim``). No relative position
    bias, no dropout.

    Parameters
    ----------
    dim : int
        Channels of the input and output (a multiple of ``num_heads``).
    num_heads : int
        Attention heads (``head_dim = dim // num_heads``).
    kernel_size : int or tuple of odd ints
        Window cells per spatial axis.
    dilation : int or tuple of ints
        Spacing of the window cells.
    qkv_bias, proj_bias : bool
        Whether ``qkv`` / ``proj`` have a bias.
    qk_scale : float, optional
        Score scale (``head_dim ** -0.5`` by default).
    boundary : {"masked", "zeros", "periodic"} or a tuple per spatial axis
        See :func:`neighborhood_attention`.

    Parameters of the layer: ``qkv.weight (3 dim, dim)``, ``qkv.bias (3 dim,)``,
    ``proj.weight (dim, dim)``, ``proj.bias (dim,)``.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> from darray import nn
    >>> from darray.nn._neighborhood import NeighborhoodAttention2d
    >>> layer = NeighborhoodAttention2d(8, num_heads=2, kernel_size=3)
    >>> y = layer(da.asarray(np.ones((1, 8, 6, 5)), split=2))
    >>> y.shape, sorted(layer.state_dict())
    ((1, 8, 6, 5), ['proj.bias', 'proj.weight', 'qkv.bias', 'qkv.weight'])
    """


class _NeighborhoodAttentionNd(Module):
    __doc__ = _LAYER_DOC

    _nsp = 0

    def __init__(self, dim, num_heads, kernel_size, dilation=1, qkv_bias=True, qk_scale=None, proj_bias=True,
                 boundary="masked", device=None, dtype=None):
        super().__init__()
        name, n = type(self).__name__, self._nsp
        _ints(name, "dim", dim)
        _ints(name, "num_heads", num_heads)
        _ints(name, "kernel_size", kernel_size, n)
        _ints(name, "dilation", dilation, n)
        if dim % num_heads:
            raise ValueError(message(name, "dim must be divisible by num_heads", (dim, num_heads),
                                     "a multiple of num_heads"))
        ksize = _per_axis(name, "kernel_size", kernel_size, n)
        if any(kk % 2 == 0 for kk in ksize):
            raise ValueError(message(name, "kernel_size must be odd", kernel_size, "odd ints"))
        self.boundary = _boundaries(name, boundary, n)
        self.dim, self.num_heads, self.kernel_size = dim, num_heads, ksize
        self.dilation = _per_axis(name, "dilation", dilation, n)
        self.head_dim = dim // num_heads
        self.scale = qk_scale if qk_scale is not None else self.head_dim ** -0.5
        self.qkv = Linear(dim, 3 * dim, bias=qkv_bias, dtype=dtype, axis=1)
        self.proj = Linear(dim, dim, bias=proj_bias, dtype=dtype, axis=1)

    def forward(self, x):
        xd = data(x)
        if xd.ndim != self._nsp + 2 or xd.shape[1] != self.dim:
            raise ValueError(message(type(self).__name__, "input must be (N, dim, *spatial)", tuple(xd.shape),
                                     f"a {self._nsp + 2}-d array with {self.dim} channels"))
        qkv = self.qkv(x)
        c = self.dim
        q, k, v = qkv[:, :c], qkv[:, c:2 * c], qkv[:, 2 * c:]
        out = neighborhood_attention(q, k, v, self.kernel_size, self.dilation, self.boundary, self.scale,
                                     self.num_heads)
        return self.proj(out)

    def extra_repr(self):
        return (f"dim={self.dim}, num_heads={self.num_heads}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, boundary={self.boundary}")


def _layer(n):
    name = f"NeighborhoodAttention{n}d"
    doc = f"{name}: :class:`_NeighborhoodAttentionNd` on fields with {n} spatial axes.\n\n" + _LAYER_DOC
    return type(_NeighborhoodAttentionNd)(name, (_NeighborhoodAttentionNd,),
                                          {"__module__": __name__, "__qualname__": name, "_nsp": n, "__doc__": doc})


NeighborhoodAttention1d, NeighborhoodAttention2d, NeighborhoodAttention3d = (_layer(n) for n in (1, 2, 3))
