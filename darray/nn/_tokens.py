"""Fields to tokens and back without moving a cell: patch embedding, flattening, and their inverses.

A vision transformer tokenises a field ``(N, C, *spatial)`` into
``(N, tokens, C)``. Flattening the GLOBAL spatial axes row-major would move
almost every cell of a block-cut field; here the tokens are numbered BLOCK
BY BLOCK instead: the blocks in the order of the ranks' grid coordinates
along the spatial grid dims, each block's cells row-major. Every rank's
tokens are then exactly its own cells, so :func:`flatten_tokens` and
:func:`unflatten_tokens` are local (no message, forward or backward), and
the token axis is cut over the ranks like the spatial axes were.

The token order therefore depends on the field's layout (on one rank, or a
field cut along its first spatial axis only, it is the row-major order).
Everything a transformer does with tokens is indifferent to their order
(attention without a causal mask, per-token layers) as long as the
position embedding is added on the field (see :mod:`darray.nn._position`),
and :func:`unflatten_tokens` puts every token back where it came from.

Requirements on the layout: the grid dims that cut spatial axes are
adjacent in the grid (true for every 1-d grid, and for grids that cut the
batch first and the spatial axes after it); the channel axis is whole.
"""

from __future__ import annotations

import math

from .._errors import message
from .._layout import Layout
from ..autodiff import apply, register
from ._util import data, redistributed, whole_axis_layout, whole_channel_layout, wrap_storage
from ._window import window_plan
from .layers import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d, _ints
from .module import Module

__all__ = ["token_layout", "flatten_tokens", "unflatten_tokens", "PatchEmbed", "PatchUnembed"]

_CONV = {1: Conv1d, 2: Conv2d, 3: Conv3d}
_CONV_T = {1: ConvTranspose1d, 2: ConvTranspose2d, 3: ConvTranspose3d}


# ------------------------------------------------------------------ layouts (pure)
def _spatial_dims(func: str, layout: Layout) -> list[int]:
    """The grid dims that cut spatial axes (adjacent; ValueError otherwise)."""
    dims = [g for g, axis in enumerate(layout.split) if axis is not None and axis >= 2]
    if dims and dims != list(range(dims[0], dims[0] + len(dims))):
        raise ValueError(message(func, "the grid dims cutting the spatial axes must be adjacent in the grid",
                                 f"dims={layout.dims}, split={layout.split}",
                                 "a grid such as (batch dims, spatial dims), e.g. split=(0, 2, 3)"))
    return dims


def token_layout(layout: Layout) -> Layout:
    """The layout of the tokens ``(N, T, C)`` of a field ``(N, C, *spatial)`` laid out like ``layout``.

    The spatial grid dims merge into one grid dim cutting the token axis
    (same ranks, same order); block ``m`` of the token axis holds the cells
    of the spatial block at merged coordinate ``m``. Batch cuts are kept.

    Examples
    --------
    >>> from darray._layout import Layout
    >>> field = Layout.create("example", (1, 4, 6, 5), 4, split=(2, 3), grid=(2, 2))
    >>> token_layout(field).sizes
    ((1,), (9, 6, 9, 6), (4,))
    """
    func = "flatten_tokens"
    if layout.axis_dim[1] is not None:
        raise ValueError(message(func, "the channel axis must be whole", layout.split, "no grid dim on axis 1"))
    spatial = _spatial_dims(func, layout)
    n, c, sp = layout.shape[0], layout.shape[1], layout.shape[2:]
    sub = [layout.dims[g] for g in spatial]
    counts = []
    for m in range(math.prod(sub)):
        coords, rest = {}, m
        for g, size in zip(reversed(spatial), reversed(sub)):
            coords[g], rest = rest % size, rest // size
        block = {layout.split[g]: coords[g] for g in spatial}
        counts.append(math.prod(layout.sizes[a][block.get(a, 0)] for a in range(2, layout.ndim)))
    if spatial:
        g0, g1 = spatial[0], spatial[-1] + 1
        dims = layout.dims[:g0] + (math.prod(sub),) + layout.dims[g1:]
        split = tuple(_token_axis(s) for s in layout.split[:g0]) + (1,) + \
            tuple(_token_axis(s) for s in layout.split[g1:])
    else:
        dims, split = layout.dims, tuple(_token_axis(s) for s in layout.split)
    return Layout((n, math.prod(sp), c), dims, split, (layout.sizes[0], tuple(counts), (c,)))


def _token_axis(axis):
    """A non-spatial field axis's place among the token axes ``(N, T, C)``."""
    return None if axis is None else {0: 0, 1: 2}[axis]


def _field_layout(func: str, layout: Layout, channels: int) -> Layout:
    """``layout`` without halo, with ``channels`` channels, the channel axis whole."""
    layout = whole_axis_layout(func, layout, 1)
    return layout.replace(shape=(layout.shape[0], channels, *layout.shape[2:]),
                          sizes=(layout.sizes[0], (channels,), *layout.sizes[2:]))


# ------------------------------------------------------------------ the local ops
def _to_tokens(xp, block):
    nsp = block.ndim - 2
    moved = xp.permute_dims(block, (0, *range(2, 2 + nsp), 1))
    return xp.reshape(moved, (block.shape[0], math.prod(block.shape[2:]), block.shape[1]))


def _to_field(xp, block, spatial):
    nsp = len(spatial)
    shaped = xp.reshape(block, (block.shape[0], *spatial, block.shape[2]))
    return xp.permute_dims(shaped, (0, nsp + 1, *range(1, nsp + 1)))


def _flatten_forward(ctx, x, layout):
    return wrap_storage(_to_tokens(x._xp, x.local), layout, x)


def _flatten_backward(ctx, g):
    x = ctx.xs[0]
    return (wrap_storage(_to_field(g._xp, g.local, x.local.shape[2:]), x._layout, g),)


def _unflatten_forward(ctx, t, layout):
    spatial = layout.block_shape(t._comm.rank)[2:]
    return wrap_storage(_to_field(t._xp, t.local, spatial), layout, t)


def _unflatten_backward(ctx, g):
    return (wrap_storage(_to_tokens(g._xp, g.local), ctx.xs[0]._layout, g),)


register("flatten_tokens_local", _flatten_forward, _flatten_backward)
register("unflatten_tokens_local", _unflatten_forward, _unflatten_backward)


def flatten_tokens(x):
    """The tokens ``(N, T, C)`` of a field ``x`` ``(N, C, *spatial)``, numbered block by block (no cell moves).

    ``T = prod(spatial)``; the token axis is cut like the spatial axes were
    (:func:`token_layout`). A field with a cut channel axis is first
    redistributed so that the channels are whole. The inverse is
    :func:`unflatten_tokens` with ``x``'s layout.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> x = da.asarray(np.arange(12.0).reshape(1, 2, 3, 2), split=2)
    >>> t = flatten_tokens(x)
    >>> t.shape
    (1, 6, 2)
    >>> bool((unflatten_tokens(t, x.layout).data == x).all())
    True
    """
    xd = data(x)
    if xd.ndim < 3:
        raise ValueError(message("flatten_tokens", "x must be (N, C, *spatial)", tuple(xd.shape),
                                 "at least one spatial axis"))
    layout = whole_channel_layout("flatten_tokens", xd)
    target = token_layout(layout)
    return apply("flatten_tokens_local", redistributed(x, layout), layout=target)


def unflatten_tokens(tokens, layout: Layout):
    """The field ``(N, C, *spatial)`` whose :func:`flatten_tokens` is ``tokens`` ``(N, T, C)``.

    ``layout``: the layout of the field that was flattened (its batch and
    spatial blocks decide where every token goes; its channel count is
    ignored). The result has those blocks and ``C = tokens.shape[2]``
    channels; tokens in another layout than :func:`token_layout` gives are
    redistributed first.
    """
    func = "unflatten_tokens"
    td = data(tokens)
    if not isinstance(layout, Layout):
        raise TypeError(message(func, "layout must be a darray Layout (the flattened field's x.layout)",
                                type(layout).__name__))
    if td.ndim != 3 or layout.ndim < 3 or td.shape[0] != layout.shape[0] \
            or td.shape[1] != math.prod(layout.shape[2:]):
        raise ValueError(message(func, "tokens must be (N, prod(spatial), C) for the field's layout", tuple(td.shape),
                                 f"({layout.shape[0]}, {math.prod(layout.shape[2:])}, C)"))
    field = _field_layout(func, layout, td.shape[2])
    tokens = redistributed(tokens, token_layout(field))
    return apply("unflatten_tokens_local", tokens, layout=field)


# ------------------------------------------------------------------ the layers
def _patch(name, patch_size, spatial_dims):
    _ints(name, "spatial_dims", spatial_dims)
    if spatial_dims > 3:
        raise ValueError(message(name, "spatial_dims must be 1, 2 or 3", spatial_dims))
    _ints(name, "patch_size", patch_size, spatial_dims)
    return (patch_size,) * spatial_dims if isinstance(patch_size, int) else tuple(patch_size)


class PatchEmbed(Module):
    """Patches of a field to embedded tokens: a convolution with ``stride == kernel_size``, then flattening.

    timm's ``PatchEmbed`` on a field cut over the ranks: ``proj`` is a
    ``Conv{spatial_dims}d(in_chans, embed_dim, patch_size, stride=patch_size)``
    (state_dict keys ``proj.weight``, ``proj.bias``); with ``flatten=True``
    the result is the tokens ``(N, T, embed_dim)`` of :func:`flatten_tokens`
    (block by block: no token moves), else the field
    ``(N, embed_dim, *spatial / patch_size)``. Patches that straddle two
    blocks come through the convolution's halo. Spatial sizes not divisible
    by the patch drop the remainder, like torch.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> embed = PatchEmbed(patch_size=2, in_chans=1, embed_dim=4)
    >>> x = da.asarray(np.ones((1, 1, 8, 6)), split=2)
    >>> tokens = embed(x)
    >>> tokens.shape, embed.grid_layout(x.layout).shape
    ((1, 12, 4), (1, 4, 4, 3))
    """

    def __init__(self, patch_size=16, in_chans=3, embed_dim=768, flatten=True, bias=True, spatial_dims=2,
                 dtype=None):
        super().__init__()
        self.patch_size = _patch("PatchEmbed", patch_size, spatial_dims)
        self.flatten, self.embed_dim = bool(flatten), embed_dim
        self.proj = _CONV[spatial_dims](in_chans, embed_dim, self.patch_size, stride=self.patch_size, bias=bias,
                                        dtype=dtype)

    def grid_layout(self, layout: Layout) -> Layout:
        """The layout of the embedded field (before flattening) of an input laid out like ``layout``."""
        nsp = len(self.patch_size)
        field = _field_layout("PatchEmbed", layout, layout.shape[1])
        return window_plan("conv", field, self.embed_dim, self.patch_size, self.patch_size, (1,) * nsp,
                           ((0, 0),) * nsp).out

    def forward(self, x):
        y = self.proj(x)
        return flatten_tokens(y) if self.flatten else y

    def extra_repr(self):
        return f"patch_size={self.patch_size}, embed_dim={self.embed_dim}, flatten={self.flatten}"


class PatchUnembed(Module):
    """The inverse of :class:`PatchEmbed`: tokens (or an embedded field) back to a field of patches.

    ``proj`` is a ``ConvTranspose{spatial_dims}d(embed_dim, out_chans, patch_size, stride=patch_size)``
    (keys ``proj.weight``, ``proj.bias``): each token fills its own patch, so it is local on every block.
    ``forward(tokens, layout)``: ``tokens`` ``(N, T, embed_dim)`` with ``layout`` the embedded field's
    layout (``PatchEmbed.grid_layout(x.layout)``); or ``forward(field)`` on ``(N, embed_dim, *grid)``.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> embed, unembed = PatchEmbed(2, 1, 4), PatchUnembed(2, 1, 4)
    >>> x = da.asarray(np.ones((1, 1, 8, 6)), split=2)
    >>> unembed(embed(x), embed.grid_layout(x.layout)).shape
    (1, 1, 8, 6)
    """

    def __init__(self, patch_size=16, out_chans=3, embed_dim=768, bias=True, spatial_dims=2, dtype=None):
        super().__init__()
        self.patch_size = _patch("PatchUnembed", patch_size, spatial_dims)
        self.embed_dim = embed_dim
        self.proj = _CONV_T[spatial_dims](embed_dim, out_chans, self.patch_size, stride=self.patch_size, bias=bias,
                                          dtype=dtype)

    def forward(self, x, layout: Layout | None = None):
        if data(x).ndim == 3:
            if layout is None:
                raise ValueError(message("PatchUnembed", "tokens (N, T, C) need the embedded field's layout",
                                         None, "forward(tokens, embed.grid_layout(x.layout))"))
            x = unflatten_tokens(x, layout)
        return self.proj(x)

    def extra_repr(self):
        return f"patch_size={self.patch_size}, embed_dim={self.embed_dim}"
