"""torch's ``MultiheadAttention``, ``TransformerEncoderLayer`` and ``TransformerEncoder`` on token-cut sequences.

Sequences are ``(N, L, E)`` (``batch_first=True``) or ``(L, N, E)``, the
token axis cut over the ranks (and the batch axis possibly over another grid
dim). Projections are :func:`~darray.nn.functional.linear` over the feature
axis (local); heads are split and merged locally on every block (the
``split_heads`` / ``merge_heads`` rules: tokens never move); attention is the
ring of :mod:`darray.nn._attention`. Parameter names, shapes, defaults,
initialisation and ``state_dict`` keys are torch's, so a torch state dict
loads as is.
"""

from __future__ import annotations

import copy
import math

from .. import autodiff as ad
from .._core import DArray
from .._errors import message
from .._layout import Layout
from ..autodiff import apply, register
from ..autodiff.rules import namespace
from . import init
from ._activation import gelu, relu
from ._attention import dropout_multipliers, dropout_stream, ring_attention
from ._linear import linear
from ._loss import softmax
from ._util import data, redistributed, whole_axis_layout, wrap_storage
from .layers import Dropout, LayerNorm, Linear, _ints
from .module import Module, ModuleList, Parameter

__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder", "split_heads", "merge_heads"]


# ------------------------------------------------------------------ heads: local reshapes that keep the token cut
def _heads_layout(layout: Layout, heads: int) -> Layout:
    """``(N, L, E)`` -> ``(N, heads, L, E / heads)``, the batch and token cuts kept."""
    n, length, e = layout.shape
    split = tuple(None if s is None else {0: 0, 1: 2}[s] for s in layout.split)
    return Layout((n, heads, length, e // heads), layout.dims, split,
                  (layout.sizes[0], (heads,), layout.sizes[1], (e // heads,)))


def _merged_layout(layout: Layout) -> Layout:
    """``(N, H, L, D)`` -> ``(N, L, H * D)`` (the heads axis is never cut)."""
    n, h, length, d = layout.shape
    split = tuple(None if s is None else {0: 0, 2: 1}[s] for s in layout.split)
    return Layout((n, length, h * d), layout.dims, split, (layout.sizes[0], layout.sizes[2], (h * d,)))


def _split_local(xp, block, heads):
    n, length, e = block.shape
    return xp.permute_dims(xp.reshape(block, (n, length, heads, e // heads)), (0, 2, 1, 3))


def _merge_local(xp, block):
    n, h, length, d = block.shape
    return xp.reshape(xp.permute_dims(block, (0, 2, 1, 3)), (n, length, h * d))


def _split_forward(ctx, x, heads):
    return wrap_storage(_split_local(x._xp, x.local, heads), _heads_layout(x._layout, heads), x)


def _split_backward(ctx, g):
    return (wrap_storage(_merge_local(g._xp, g.local), ctx.xs[0]._layout, g),)


def _merge_forward(ctx, x):
    return wrap_storage(_merge_local(x._xp, x.local), _merged_layout(x._layout), x)


def _merge_backward(ctx, g):
    return (wrap_storage(_split_local(g._xp, g.local, ctx.xs[0].shape[1]), ctx.xs[0]._layout, g),)


def _concat_keys_forward(ctx, a, b):
    layout = a._layout.replace(shape=(*a.shape[:-1], a.shape[-1] + b.shape[-1]),
                               sizes=(*a._layout.sizes[:-1], (a.shape[-1] + b.shape[-1],)))
    return wrap_storage(a._xp.concat([a.local, b.local], axis=-1), layout, a)


def _concat_keys_backward(ctx, g):
    a, b = ctx.xs
    n = a.shape[-1]
    return wrap_storage(g.local[..., :n], a._layout, g), wrap_storage(g.local[..., n:], b._layout, g)


register("split_heads", _split_forward, _split_backward)
register("merge_heads", _merge_forward, _merge_backward)
register("concat_keys", _concat_keys_forward, _concat_keys_backward)


def _whole_features(x):
    """``x`` without halo and with its feature axis (last) whole, redistributed on the tape when needed."""
    layout = whole_axis_layout("split_heads", data(x)._layout, -1)
    return x if layout == data(x)._layout else ad.redistribute(x, layout=layout)


def _concat_keys(a, b):
    """``a`` and ``b`` joined along their last axis (whole in both; ``b`` moved onto ``a``'s cut of the others)."""
    lay = data(a)._layout.without_halo()
    a = redistributed(a, lay)
    n = data(b).shape[-1]
    target = lay.replace(shape=(*lay.shape[:-1], n), sizes=(*lay.sizes[:-1], (n,)))
    return apply("concat_keys", a, redistributed(b, target))


def split_heads(x, num_heads: int):
    """``(N, L, E)`` -> ``(N, num_heads, L, E / num_heads)`` on every block (no communication; differentiable)."""
    return apply("split_heads", _whole_features(x), heads=int(num_heads))


def merge_heads(x):
    """``(N, H, L, D)`` -> ``(N, L, H * D)``, the inverse of :func:`split_heads`."""
    return apply("merge_heads", x)


# ------------------------------------------------------------------ MultiheadAttention
def _take_part(mask, func):
    """A user mask in torch's MultiheadAttention convention (bool True: NOT allowed) as the ring's (True: allowed)."""
    mask = data(mask)
    if not isinstance(mask, DArray):
        raise TypeError(message(func, "masks must be DArrays", type(mask).__name__, "a DArray or None"))
    return namespace().logical_not(mask) if mask.dtype.kind == "b" else mask


class MultiheadAttention(Module):
    """torch's ``nn.MultiheadAttention``: ring attention over a token-cut sequence.

    Parameters and ``state_dict`` keys are torch's: ``in_proj_weight``
    ``(3E, E)`` and ``in_proj_bias`` (or ``q_proj_weight``, ``k_proj_weight``,
    ``v_proj_weight`` when ``kdim``/``vdim`` differ from ``embed_dim``),
    ``out_proj.weight``, ``out_proj.bias``; torch's initialisation (xavier
    uniform projections, zero biases). ``dropout`` drops attention weights
    in training, reproducibly (the same cells at any rank count; see
    :func:`darray.nn.functional.scaled_dot_product_attention`), with keep
    masks drawn from ``generator`` (darray's extra keyword; by default one
    spawned from :func:`darray.nn.init.default_generator` at construction).

    ``forward(query, key, value, key_padding_mask=None, need_weights=True,
    attn_mask=None, average_attn_weights=True, is_causal=False)`` returns
    ``(attn_output, attn_weights)`` as torch does. ``attn_output`` comes from
    the ring: no rank holds more than its block of scores. ``need_weights``
    (torch's default) also returns the ``(N, L, S)`` weights (per head with
    ``average_attn_weights=False``), computed on an explicit path that holds
    ``L/P x S`` scores per rank (keys gathered on every rank; differentiable):
    pass ``need_weights=False`` for the ring alone. ``is_causal=True``
    makes the attention causal (``attn_mask``, torch's hint, is then not
    needed and not used).

    ``add_bias_kv=True`` adds the parameters ``bias_k`` and ``bias_v``
    ``(1, 1, embed_dim)`` (torch's keys, xavier-normal initialised), a key
    and a value token after the projected sequence; ``add_zero_attn=True``
    adds one more token of zeros after them. As in torch, the masks (and
    ``key_padding_mask``) are padded so that every query sees these tokens
    (under ``is_causal`` too); the returned weights have ``S + 1`` or
    ``S + 2`` key columns. Every rank holds them replicated and folds them
    into its online softmax as one more local chunk (no ring step); the
    gradients of ``bias_k``/``bias_v`` sum over the ranks.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> from darray import nn
    >>> mha = nn.MultiheadAttention(8, 2, batch_first=True)
    >>> x = da.asarray(np.random.default_rng(0).standard_normal((1, 10, 8)), split=1)
    >>> out, weights = mha(x, x, x, need_weights=False)
    >>> out.shape, weights is None
    ((1, 10, 8), True)
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None, *, generator=None):
        super().__init__()
        for name, value in (("embed_dim", embed_dim), ("num_heads", num_heads), ("kdim", kdim), ("vdim", vdim)):
            if value is not None:
                _ints("MultiheadAttention", name, value)
        if embed_dim % num_heads:
            raise ValueError(message("MultiheadAttention", "embed_dim must be divisible by num_heads",
                                     (embed_dim, num_heads)))
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(message("MultiheadAttention", "dropout out of range", dropout, "0 <= dropout <= 1"))
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim = embed_dim // num_heads
        self.add_zero_attn = add_zero_attn
        dtype = dtype or "float64"
        da = namespace()
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(da.zeros((3 * embed_dim, embed_dim), dtype=dtype, split=None))
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.in_proj_weight = None
            self.q_proj_weight = Parameter(da.zeros((embed_dim, embed_dim), dtype=dtype, split=None))
            self.k_proj_weight = Parameter(da.zeros((embed_dim, self.kdim), dtype=dtype, split=None))
            self.v_proj_weight = Parameter(da.zeros((embed_dim, self.vdim), dtype=dtype, split=None))
        self.in_proj_bias = Parameter(da.zeros((3 * embed_dim,), dtype=dtype, split=None)) if bias else None
        if add_bias_kv:
            self.bias_k = Parameter(da.zeros((1, 1, embed_dim), dtype=dtype, split=None))
            self.bias_v = Parameter(da.zeros((1, 1, embed_dim), dtype=dtype, split=None))
        else:
            self.bias_k = self.bias_v = None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        self.generator = generator if generator is not None else init.default_generator().spawn(1)[0]
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """torch's: xavier-uniform projections, zero biases (``out_proj.weight`` keeps Linear's init)."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        for b in (self.bias_k, self.bias_v):
            if b is not None:
                init.xavier_normal_(b)

    def _projections(self):
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            weights = [self.in_proj_weight[i * e:(i + 1) * e] for i in range(3)]
        else:
            weights = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        biases = [None] * 3 if self.in_proj_bias is None else [self.in_proj_bias[i * e:(i + 1) * e] for i in range(3)]
        return weights, biases

    def _extra_kv(self, dtype):
        """torch's extra key and value tokens in heads, ``(1, H, X, D)`` each (bias_kv, then zeros), or None."""
        if self.bias_k is None and not self.add_zero_attn:
            return None
        da, shape = namespace(), (1, self.num_heads, 1, self.head_dim)
        if self.bias_k is None:
            zero = da.zeros(shape, dtype=dtype, split=None)
            return zero, zero
        heads = [ad.permute_dims(ad.reshape(b, (1, 1, self.num_heads, self.head_dim)), (0, 2, 1, 3))
                 for b in (self.bias_k, self.bias_v)]
        if self.add_zero_attn:  # (1, H, 1, D) * [1, 0] over the tokens: the bias token, then a zero one
            keep = da.reshape(da.asarray([1.0, 0.0], dtype=dtype, split=None), (1, 1, 2, 1))
            heads = [x * keep for x in heads]
        return tuple(heads)

    def _check(self, q, k, v):
        name = "MultiheadAttention"
        ndim = getattr(q, "ndim", None)
        for what, x, features in (("query", q, self.embed_dim), ("key", k, self.kdim), ("value", v, self.vdim)):
            if not isinstance(x, DArray) or x.ndim not in (2, 3) or x.ndim != ndim:
                raise ValueError(message(name, f"{what} must be a 3-d (or, unbatched, 2-d) DArray like query",
                                         getattr(x, "shape", type(x).__name__),
                                         "(N, L, E) with batch_first=True, else (L, N, E); or (L, E)"))
            if x.shape[-1] != features:
                raise ValueError(message(name, f"{what} has the wrong feature size", x.shape[-1], features))
        b = 0 if self.batch_first or ndim == 2 else 1
        if ndim == 2:
            q, k, v = ((1, *x.shape) for x in (q, k, v))
        else:
            q, k, v = q.shape, k.shape, v.shape
        if not q[b] == k[b] == v[b] or k[1 - b] != v[1 - b]:
            raise ValueError(message(name, "batch sizes or key/value lengths differ", (q, k, v),
                                     "one batch size; key and value of one length"))

    def _masks(self, attn_mask, key_padding_mask, n, length, s_len, is_causal):
        name = "MultiheadAttention"
        da = namespace()
        masks = []
        if attn_mask is not None and not is_causal:
            m = _take_part(attn_mask, name)
            if m.shape == (length, s_len):
                pass
            elif m.shape == (n * self.num_heads, length, s_len):
                m = da.reshape(m, (n, self.num_heads, length, s_len))
            else:
                raise ValueError(message(name, "attn_mask has the wrong shape", m.shape,
                                         f"{(length, s_len)} or {(n * self.num_heads, length, s_len)}"))
            masks.append(m)
        if key_padding_mask is not None:
            m = _take_part(key_padding_mask, name)
            if m.shape != (n, s_len):
                raise ValueError(message(name, "key_padding_mask has the wrong shape", m.shape, (n, s_len)))
            masks.append(da.reshape(m, (n, 1, 1, s_len)))
        return masks

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        q = data(query)
        self._check(q, data(key), data(value))
        unbatched = q.ndim == 2
        if unbatched or not self.batch_first:  # to (N, L, E); self-attention's one input moves once
            moved = {}
            for x in (query, key, value):
                if id(x) not in moved:
                    moved[id(x)] = ad.expand_dims(x, axis=0) if unbatched else ad.permute_dims(x, (1, 0, 2))
            query, key, value = (moved[id(x)] for x in (query, key, value))
            if unbatched and key_padding_mask is not None:
                key_padding_mask = namespace().reshape(data(key_padding_mask), (1, -1))
        out, attn = self._attend(query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights,
                                 is_causal)
        if unbatched:
            return ad.squeeze(out, axis=0), (ad.squeeze(attn, axis=0) if attn is not None else None)
        return (out if self.batch_first else ad.permute_dims(out, (1, 0, 2))), attn

    def _attend(self, query, key, value, key_padding_mask, need_weights, attn_mask, average_attn_weights,
                is_causal):
        """Batch-first attention: ``(out, weights or None)``."""
        n, length, s_len = data(query).shape[0], data(query).shape[1], data(key).shape[1]
        masks = self._masks(attn_mask, key_padding_mask, n, length, s_len, is_causal)
        weights, biases = self._projections()
        heads = [split_heads(linear(x, w, b), self.num_heads) for x, w, b in zip((query, key, value), weights, biases)]
        dropout = dropout_stream(self.dropout if self.training else 0.0, self.generator, "MultiheadAttention")
        extra = self._extra_kv(data(heads[0]).dtype)
        out = ring_attention(*heads, masks, is_causal, None, dropout, "MultiheadAttention", extra)
        out = self.out_proj(merge_heads(out))
        attn = self._weights(heads[0], heads[1], masks, is_causal, dropout, average_attn_weights, extra) \
            if need_weights else None
        return out, attn

    def _weights(self, qh, kh, masks, is_causal, dropout, average, extra=None):
        """The attention weights, explicitly: ``L/P x S`` scores per rank (keys gathered), on the tape."""
        da = namespace()
        qh = qh * (1.0 / math.sqrt(self.head_dim))
        scores = ad.matmul(qh, ad.permute_dims(kh, (0, 1, 3, 2)))
        sd = data(scores)
        for m in masks:
            scores = ad.where(m, scores, -math.inf) if m.dtype.kind == "b" else scores + m
        if is_causal:
            lay = sd._layout  # an (L, S) mask with its rows cut like the scores'
            causal = da.tril(da.ones(sd.shape[2:], dtype=bool, split=tuple(0 if s == 2 else None for s in lay.split),
                                     grid=lay.dims, sizes={0: lay.sizes[2]}))
            scores = ad.where(causal, scores, -math.inf)
        if extra is not None:  # the extra tokens' columns, seen by every query (torch pads the masks so)
            scores = _concat_keys(scores, ad.matmul(qh, ad.permute_dims(extra[0], (0, 1, 3, 2))))
        w = softmax(scores, axis=-1)
        if dropout is not None:
            w = w * dropout_multipliers(dropout, data(w)._layout.without_halo(), data(w))
        return ad.mean(w, axis=1) if average else w

    def extra_repr(self):
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, batch_first={self.batch_first}"


# ------------------------------------------------------------------ the encoder
_ACTIVATIONS = {"relu": relu, "gelu": gelu}


class TransformerEncoderLayer(Module):
    """torch's ``nn.TransformerEncoderLayer`` (self-attention + feed-forward, post- or pre-norm) on cut tokens.

    Submodules and ``state_dict`` keys are torch's: ``self_attn``
    (:class:`MultiheadAttention`), ``linear1``, ``dropout``, ``linear2``,
    ``norm1``, ``norm2``, ``dropout1``, ``dropout2``; defaults too
    (``dim_feedforward=2048``, ``dropout=0.1``, ``activation='relu'``,
    ``batch_first=False``, ``norm_first=False``). Every dropout is
    reproducible at any rank count.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> from darray import nn
    >>> layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True).eval()
    >>> x = da.asarray(np.random.default_rng(0).standard_normal((1, 10, 8)), split=1)
    >>> layer(x).shape
    (1, 10, 8)
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu", layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(activation, str):
            if activation not in _ACTIVATIONS:
                raise RuntimeError(message("TransformerEncoderLayer", "activation should be relu/gelu",
                                           activation, "'relu', 'gelu' or a callable"))
            activation = _ACTIVATIONS[activation]
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = activation
        self.batch_first = batch_first

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x))


class TransformerEncoder(Module):
    """torch's ``nn.TransformerEncoder``: ``num_layers`` copies of ``encoder_layer`` (``layers.0``, ...), then ``norm``.

    The copies start with the same weights (torch's deepcopy); each gets its
    own dropout generators. ``is_causal=None`` (torch's default) means no
    causal hint: a causal ``mask`` is applied as given (same result, without
    the ring's skipping of future blocks); pass ``is_causal=True`` for that.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> from darray import nn
    >>> layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
    >>> enc = nn.TransformerEncoder(layer, num_layers=2)
    >>> x = da.asarray(np.random.default_rng(0).standard_normal((1, 10, 8)), split=1)
    >>> enc(x, is_causal=True).shape
    (1, 10, 8)
    """

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        _ints("TransformerEncoder", "num_layers", num_layers)
        layers = []
        for _ in range(num_layers):
            layer = copy.deepcopy(encoder_layer)
            for m in layer.modules():
                if hasattr(m, "generator"):
                    m.generator = init.default_generator().spawn(1)[0]
            layers.append(layer)
        self.layers = ModuleList(layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        return self.norm(x) if self.norm is not None else x
