"""Tokens of a field cut over the ranks (darray.nn._tokens) and position embeddings (darray.nn._position).

Flattening numbers the tokens block by block, so the reference is built from
the gathered field and the layout's blocks (in rank order); round trips and
layout-independent losses are compared with the replicated run. Nothing may
move: the tracer counts zero bytes for flatten, unflatten and the
embeddings.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import darray as da
from darray import autodiff as ad
from darray._layout import Layout
from darray.autodiff import Variable
from darray.nn import functional as F
from darray.nn import Sequential, init
from darray.nn._neighborhood import NeighborhoodAttention2d
from darray.nn._position import (LearnedPositionEmbedding, SinusoidalPositionEmbedding, position_layout,
                                 sincos_position_embedding)
from darray.nn._tokens import PatchEmbed, PatchUnembed, flatten_tokens, token_layout, unflatten_tokens
from darray.testing import agree, assert_equal

from _cases import case
from _nn_helpers import COMM, P, assert_trains_identically, compare_grads, host

pytestmark = pytest.mark.mpi

SHAPE = (2, 3, 7, 6)


def _layouts():
    out = {"H": dict(split=2), "W": dict(split=3), "replicated": dict(split=None), "channels": dict(split=1)}
    if P > 1:
        out["uneven-empty"] = dict(split=2, sizes={2: [0] + [len(b) for b in np.array_split(np.arange(7), P - 1)]})
        out["thin"] = dict(split=3, sizes={3: [1] * (P - 1) + [6 - (P - 1)]})
    if P == 4:
        out["grid2x2"] = dict(split=(2, 3), grid=(2, 2))
        out["batch-x-H"] = dict(split=(0, 2), grid=(2, 2))
    return out


LAYOUTS = {name: case(name, SHAPE, **kw) for name, kw in _layouts().items()}


def ref_tokens(x, layout):
    """The gathered tokens: the spatial blocks of ``layout`` in rank order (each once), each row-major."""
    pieces, seen = [], set()
    for r in range(P):
        spatial = layout.block_slices(r)[2:]
        key = tuple((s.start, s.stop) for s in spatial)
        if key in seen:
            continue
        seen.add(key)
        block = x[(slice(None), slice(None)) + spatial]
        pieces.append(block.reshape(x.shape[0], x.shape[1], -1).transpose(0, 2, 1))
    return np.concatenate(pieces, axis=1)


def _no_bytes(f):
    with da.tracing() as t:
        out = f()
    assert not agree(COMM, t.totals()["nbytes"] == 0), t.totals()
    return out


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_flatten_and_unflatten_move_nothing(name):
    x = np.random.default_rng(0).standard_normal(SHAPE)
    xd = LAYOUTS[name].array(x)
    moves = name == "channels"  # the channel axis is made whole first (a redistribution; the tokens replicated)
    t = flatten_tokens(xd) if moves else _no_bytes(lambda: flatten_tokens(xd))
    assert t.shape == (2, 42, 3)
    assert_equal(t.data, ref_tokens(x, da.asarray(x, split=None).layout if moves else xd.layout))
    back = unflatten_tokens(t, xd.layout) if moves else _no_bytes(lambda: unflatten_tokens(t, xd.layout))
    assert moves or back.data.layout.blocks_key == xd.layout.blocks_key
    assert_equal(back.data, x)
    # gradients: order-independent loss on the tokens, field-weighted loss through the round trip
    w = np.random.default_rng(1).standard_normal(SHAPE)
    for build in (lambda v: ad.sum(flatten_tokens(v) ** 3),
                  lambda v: ad.sum(unflatten_tokens(flatten_tokens(v), v.data.layout) * da.asarray(w, split=None))):
        compare_grads(build, x, LAYOUTS[name])
    v = Variable(xd, requires_grad=True)
    ad.sum(unflatten_tokens(flatten_tokens(v) * 2.0, xd.layout) * da.asarray(w, split=None)).backward()
    assert_equal(v.grad, 2 * w)


def test_token_layout_is_pure_and_checks_the_grid():
    field = Layout.create("t", (1, 4, 6, 5), 4, split=(0, 2, 3), grid=(1, 2, 2))
    tl = token_layout(field)
    assert tl.dims == (1, 4) and tl.split[1] == 1 and tl.sizes[1] == (9, 6, 9, 6)
    apart = Layout.create("t", (2, 4, 6, 5), 4, split=(2, 0, 3), grid=(2, 1, 2))
    with pytest.raises(ValueError, match="adjacent"):
        token_layout(apart)
    x = da.asarray(np.ones(SHAPE), split=2)
    with pytest.raises(ValueError, match="prod"):
        unflatten_tokens(flatten_tokens(x)[:, :41], x.layout)
    with pytest.raises(TypeError, match="Layout"):
        unflatten_tokens(flatten_tokens(x), x)
    with pytest.raises(ValueError, match="spatial"):
        flatten_tokens(da.asarray(np.ones((2, 3)), split=None))


def ref_patch_embed(x, w, b, p):
    n, c, h, wd = x.shape
    hp, wp = h // p, wd // p
    patches = x[:, :, :hp * p, :wp * p].reshape(n, c, hp, p, wp, p)
    return np.einsum("nciajb,ecab->neij", patches, w) + b[None, :, None, None]


def ref_patch_unembed(f, w, b, p):
    n, e, hp, wp = f.shape
    out = np.einsum("neij,eoab->noiajb", f, w).reshape(n, w.shape[1], hp * p, wp * p)
    return out + b[None, :, None, None]


PATCH_SHAPE = (1, 2, 9, 8)
PATCH_LAYOUTS = {"H": case("H", PATCH_SHAPE, split=2), "W": case("W", PATCH_SHAPE, split=3)}
if P > 1:
    PATCH_LAYOUTS["misaligned"] = case("misaligned", PATCH_SHAPE, "uneven", split=2,
                                       sizes={2: [3] + [len(b) for b in np.array_split(np.arange(6), P - 1)]})
if P == 4:
    PATCH_LAYOUTS["grid2x2"] = case("grid2x2", PATCH_SHAPE, "grid", split=(2, 3), grid=(2, 2))


@pytest.mark.parametrize("name", sorted(PATCH_LAYOUTS))
def test_patch_embed_and_unembed(name):
    init.manual_seed(4)
    embed, unembed = PatchEmbed(2, in_chans=2, embed_dim=4), PatchUnembed(2, out_chans=2, embed_dim=4)
    x = np.random.default_rng(5).standard_normal(PATCH_SHAPE)
    xd = PATCH_LAYOUTS[name].array(x)
    grid = embed.grid_layout(xd.layout)
    ref = ref_patch_embed(x, host(embed.proj.weight.data), host(embed.proj.bias.data), 2)
    tokens = embed(xd)
    assert_equal(tokens.data, ref_tokens(ref, grid), rtol=1e-12, atol=1e-13)
    out = unembed(tokens, grid)
    assert_equal(out.data, ref_patch_unembed(ref, host(unembed.proj.weight.data), host(unembed.proj.bias.data), 2),
                 rtol=1e-12, atol=1e-13)
    target = da.asarray(np.random.default_rng(6).standard_normal((1, 2, 8, 8)), split=None)

    def loss(v):
        return F.mse_loss(unembed(embed(v), embed.grid_layout(v.data.layout)), target)

    compare_grads(loss, x, PATCH_LAYOUTS[name], list(embed.parameters()) + list(unembed.parameters()))
    assert sorted(embed.state_dict()) == ["proj.bias", "proj.weight"]


def test_patch_embed_3d_and_unflattened():
    init.manual_seed(7)
    embed = PatchEmbed((2, 1, 2), in_chans=1, embed_dim=2, spatial_dims=3, flatten=False)
    x = np.random.default_rng(8).standard_normal((1, 1, 4, 3, 4))
    y = embed(da.asarray(x, split=2))
    w, b = host(embed.proj.weight.data), host(embed.proj.bias.data)
    ref = np.einsum("ncxaybzd,ecabd->nexyz", x.reshape(1, 1, 2, 2, 3, 1, 2, 2), w) \
        + b[None, :, None, None, None]
    assert_equal(y.data, ref, rtol=1e-12, atol=1e-13)
    unembed = PatchUnembed((2, 1, 2), out_chans=1, embed_dim=2, spatial_dims=3)
    assert unembed(y).shape == x.shape
    with pytest.raises(ValueError, match="layout"):
        PatchUnembed(2, 1, 2)(flatten_tokens(da.asarray(np.ones((1, 2, 4, 4)), split=2)))
    with pytest.raises(ValueError, match="patch_size"):
        PatchEmbed((2, 2), 1, 2, spatial_dims=3)


def ref_sincos(shape, channels, temperature=10000.0):
    nsp = len(shape)
    per, half = channels // nsp, channels // nsp // 2
    out = np.zeros((1, channels, *shape))
    for i in range(nsp):
        for j in range(half):
            w = temperature ** (-j / half)
            pos = np.arange(shape[i]).reshape([-1 if a == i else 1 for a in range(nsp)])
            out[0, i * per + j] = np.broadcast_to(np.sin(pos * w), shape)
            out[0, i * per + half + j] = np.broadcast_to(np.cos(pos * w), shape)
    return out


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_sinusoidal_embedding_is_global(name):
    x = np.random.default_rng(9).standard_normal((2, 4, 7, 6))
    xd = LAYOUTS[name].array(x)
    emb = _no_bytes(lambda: sincos_position_embedding(xd))
    assert emb.layout == position_layout(xd.layout, 4)
    assert_equal(emb, ref_sincos((7, 6), 4), rtol=1e-13, atol=1e-14)
    pe = SinusoidalPositionEmbedding(4)
    assert_equal(pe(xd).data, x + ref_sincos((7, 6), 4), rtol=1e-13, atol=1e-14)
    assert_equal(sincos_position_embedding(da.asarray(np.ones((1, 6, 3, 2, 5)), split=4)),
                 ref_sincos((3, 2, 5), 6), rtol=1e-13, atol=1e-14)
    with pytest.raises(ValueError, match="multiple of 4"):
        sincos_position_embedding(xd, channels=6)


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_learned_embedding_lives_in_the_field_blocks(name):
    x = np.random.default_rng(10).standard_normal((2, 4, 7, 6))
    xd = LAYOUTS[name].array(x)
    init.manual_seed(11)
    pe = LearnedPositionEmbedding(4, (7, 6), like=xd)
    init.manual_seed(11)
    moved = LearnedPositionEmbedding(4, (7, 6))  # cut along H, then moved to the field's blocks once
    w = host(pe.weight.data)
    assert_equal(moved.weight.data, w)
    init.manual_seed(11)
    assert_equal(LearnedPositionEmbedding(4, (7, 6), like=da.asarray(x, split=None)).weight.data, w)
    assert not agree(COMM, abs(float(np.std(w)) - 0.02) < 0.01)
    assert pe.weight.data.layout == position_layout(xd.layout, 4)
    g = np.random.default_rng(12).standard_normal(x.shape)
    if name != "channels":  # (a channel-cut field is redistributed by nothing here: the add aligns it)
        y = _no_bytes(lambda: pe(Variable(xd)))
    else:
        y = pe(Variable(xd))
    assert_equal(y.data, x + w)
    ad.sum(y * da.asarray(g, split=None)).backward()
    assert_equal(pe.weight.grad, g.sum(axis=0, keepdims=True), rtol=1e-12, atol=1e-13)
    moved(Variable(xd))
    assert moved.weight.data.layout == pe.weight.data.layout
    assert sorted(pe.state_dict()) == ["weight"]
    with pytest.raises(ValueError, match="spatial"):
        LearnedPositionEmbedding(4, (7, 5), like=xd)
    with pytest.raises(ValueError, match="embed_dim"):
        pe(da.asarray(np.ones((2, 3, 7, 6)), split=2))
    assert math.isfinite(float(ad.sum(pe(Variable(xd))).data))


def _vit_surrogate():
    """Patches -> sin-cos + learned positions -> neighbourhood attention -> patches back (no token moves)."""
    return Sequential(PatchEmbed(2, in_chans=1, embed_dim=4, flatten=False), SinusoidalPositionEmbedding(4),
                      LearnedPositionEmbedding(4, (4, 3)), NeighborhoodAttention2d(4, 2, 3, boundary="periodic"),
                      PatchUnembed(2, out_chans=1, embed_dim=4))


@pytest.mark.parametrize("name", sorted(PATCH_LAYOUTS))
def test_a_small_vision_transformer_trains_identically(name):
    x = np.random.default_rng(13).standard_normal((1, 1, 8, 6))
    t = np.roll(x, 1, axis=2)  # one step of advection
    kw = dict(PATCH_LAYOUTS[name].kw)
    if name == "misaligned":  # blocks of 3 rows and the rest: patches straddle the cuts
        kw["sizes"] = {2: [3] + [len(b) for b in np.array_split(np.arange(5), P - 1)]}
    layout = case(name, x.shape, **kw)
    assert_trains_identically(_vit_surrogate, x, t, layout, seed=14)
