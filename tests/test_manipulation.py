"""Manipulation functions against NumPy on the global array, on every rank count.

reshape (incl. -1 and reshapes that cannot stay local), concat, stack,
unstack, roll, flip, repeat, tile, squeeze, expand_dims, moveaxis,
broadcast_to, broadcast_arrays, permute_dims. Each function/layout is one
test (``tests/_cases.py``: uneven with empty blocks, each split axis,
replicated, with a halo, 2-d/3-d grids at 4 ranks); the arguments are looped
over inside it and named in every failure message. Bad input raises
ValueError on every rank.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray.testing import assert_equal, assert_raises_everywhere, uneven_sizes as uneven

from _cases import P, layouts, values

pytestmark = pytest.mark.mpi

SHAPE = (6, 7, 8)
#: Layouts of the 6x7x8 array; the 1-d ones of a length-13 vector.
LAYOUTS = layouts(SHAPE, "split0", "uneven0", "replicated", "uneven1", "halo2", "grid2x2", "grid1x2x2")
LAYOUTS_1D = layouts((13,), "split0", "uneven0", "replicated")


def made(layout, dtype="float64", seed=0):
    """``(DArray, NumPy array)``: seeded values of the layout's shape, laid out like it."""
    g = values(layout.shape, dtype, seed)
    return layout.array(g), g


# ------------------------------------------------------------------ reshape
RESHAPES = [(336,), (-1,), (42, 8), (6, 56), (8, 42), (7, 48), (2, 3, 7, 8), (336, 1), (1, 336), (4, -1, 6),
            (3, 2, 56), (16, 21), (6, 7, 8)]


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_reshape(layout):
    """Local (whole rows) and non-local (rows split across the new shape) reshapes, from every layout."""
    x, g = made(layout)
    for shape in RESHAPES:
        got = da.reshape(x, shape)
        assert_equal(got, g.reshape(shape), err_msg=f"-> {shape}")
        assert_equal(da.reshape(got, SHAPE), g, err_msg=f"-> {shape} and back")


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_reshape_keeps_whole_cut_axes(layout):
    """Splitting or merging only axes no rank cuts (``(N, L, E) -> (N, L, H, D)`` with ``L`` cut) moves nothing:
    each cut axis stays cut, as the same axis of the new shape, with the same blocks."""
    x, g = made(layout)
    cut = [a for a in range(3) if x.layout.axis_dim[a] is not None]
    #: new shape, where each old axis went, the old axes it splits or merges
    for shape, where, changed in [((6, 7, 2, 4), (0, 1, 2), {2}), ((1, 6, 7, 8), (1, 2, 3), set()),
                                  ((6, 7, 8, 1), (0, 1, 2), set())]:
        with da.tracing() as t:
            got = da.reshape(x, shape)
        assert_equal(got, g.reshape(shape), err_msg=f"-> {shape}")
        if changed.intersection(cut):
            continue  # a cut axis split: the blocks must change (test_reshape)
        assert t.summary()["bytes_total"] == 0, f"-> {shape}: moved {t.summary()['bytes_total']} bytes"
        assert [got.layout.sizes[where[a]] for a in cut] == [x.layout.sizes[a] for a in cut], f"-> {shape}"
    if 2 not in cut:
        with da.tracing() as t:
            merged = da.reshape(da.reshape(x, (6, 7, 2, 4)), SHAPE)
        assert_equal(merged, g)
        assert t.summary()["bytes_total"] == 0


@pytest.mark.parametrize("layout", LAYOUTS_1D, ids=str)
def test_reshape_small_and_empty(layout):
    x, g = made(layout)
    assert_equal(da.reshape(x[:1], ()), g[:1].reshape(()))
    assert_equal(da.reshape(x[:0], (0, 5)), g[:0].reshape(0, 5))
    assert_equal(da.reshape(x[:12], (3, -1)), g[:12].reshape(3, -1))
    assert_equal(da.reshape(x[:12], (2, 2, 3)), g[:12].reshape(2, 2, 3))
    x = da.asarray(np.float64(2.5))
    assert_equal(da.reshape(x, (1, 1)), np.full((1, 1), 2.5))


def test_reshape_errors():
    x = da.asarray(values(SHAPE), split=0)
    assert_raises_everywhere(ValueError, da.reshape, x, (5, -1))
    assert_raises_everywhere(ValueError, da.reshape, x, (-1, -1, 8))
    assert_raises_everywhere(ValueError, da.reshape, x, (6, 7, 9))
    assert_raises_everywhere(ValueError, da.reshape, x, (-2, 168))
    assert_raises_everywhere(ValueError, da.reshape, x, (42, 8), copy=False)


# ------------------------------------------------------------------ roll / flip
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_roll(layout):
    x, g = made(layout, seed=1)
    for axis in [None, 0, 1, 2, -1, (0, 2), (1, 1)]:
        for shift in (1, -3, 10, 0, 336):
            s = shift if not isinstance(axis, tuple) else (shift, 2)
            assert_equal(da.roll(x, s, axis=axis), np.roll(g, s, axis=axis), err_msg=f"shift={s} axis={axis}")


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_flip(layout):
    x, g = made(layout, seed=2)
    for axis in [None, 0, 1, 2, -1, (0, 2)]:
        assert_equal(da.flip(x, axis=axis), np.flip(g, axis=axis), err_msg=f"axis={axis}")


# ------------------------------------------------------------------ joining
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_concat(layout):
    """Arrays in different layouts and dtypes (promoted), one shorter along the axis."""
    x, g = made(layout, seed=3)
    for axis in [0, 1, 2, -1, None]:
        shorter = g[:1] if axis in (0, None) else (g[:, 2:] if axis == 1 else g[..., :3])
        y = da.asarray(shorter.astype(np.int64) * 2, split=None)
        z = da.asarray(g, split=0, sizes=uneven(6, P))
        got = da.concat([x, y, z], axis=axis)
        want = np.concatenate([g, shorter.astype(np.int64) * 2, g], axis=axis)
        assert got.dtype == want.dtype
        assert_equal(got, want, err_msg=f"axis={axis}")
        assert_equal(da.concat([x], axis=axis), np.concatenate([g], axis=axis), err_msg="single")


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_stack_unstack(layout):
    x, g = made(layout, seed=4)
    for axis in [0, 1, 3, -1]:
        got = da.stack([x, x + 1, da.asarray(g * 2, split=None)], axis=axis)
        assert_equal(got, np.stack([g, g + 1, g * 2], axis=axis), err_msg=f"stack axis={axis}")
        if axis < 3:
            parts = da.unstack(x, axis=axis)
            assert len(parts) == g.shape[axis]
            for i, part in enumerate(parts):
                assert_equal(part, np.take(g, i, axis=axis), err_msg=f"unstack axis={axis} part {i}")


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_repeat(layout):
    x, g = made(layout, seed=5)
    for axis in [0, 1, 2, None]:
        assert_equal(da.repeat(x, 2, axis=axis), np.repeat(g, 2, axis=axis), err_msg=f"2 axis={axis}")
        assert_equal(da.repeat(x, 0, axis=axis), np.repeat(g, 0, axis=axis), err_msg=f"0 axis={axis}")
        n = g.size if axis is None else g.shape[axis]
        r = np.arange(n) % 3
        assert_equal(da.repeat(x, r, axis=axis), np.repeat(g, r, axis=axis), err_msg=f"array axis={axis}")
        assert_equal(da.repeat(x, da.asarray(r), axis=axis), np.repeat(g, r, axis=axis), err_msg="DArray")
        assert_equal(da.repeat(x, np.array([3]), axis=axis), np.repeat(g, 3, axis=axis), err_msg="[3]")


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_tile(layout):
    x, g = made(layout, seed=6)
    for reps in [(2, 1, 3), (2,), (1, 2, 1, 1), (0, 1, 1), (1, 1, 1)]:
        assert_equal(da.tile(x, reps), np.tile(g, reps), err_msg=f"reps={reps}")


# ------------------------------------------------------------------ axes
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_expand_dims_squeeze(layout):
    x, g = made(layout, seed=7)
    for axis in (0, 1, 3, -1, -4):
        e = da.expand_dims(x, axis=axis)
        assert_equal(e, np.expand_dims(g, axis), err_msg=f"expand_dims {axis}")
        assert_equal(da.squeeze(e, axis=axis), g, err_msg=f"squeeze back {axis}")
    assert_equal(da.squeeze(x[:, :1], axis=1), g[:, 0], err_msg="squeeze cut axis")
    assert_equal(da.squeeze(x[2:3, :, -1:], axis=(0, 2)), g[2:3, :, -1:].squeeze((0, 2)))
    assert_equal(da.squeeze(x[-1:], axis=0), g[-1], err_msg="squeeze last block")


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_moveaxis_permute_dims(layout):
    x, g = made(layout, seed=8)
    for src, dst in [(0, -1), (2, 0), ((0, 1), (2, 0)), ((0, 1, 2), (1, 2, 0)), (-1, -2)]:
        assert_equal(da.moveaxis(x, src, dst), np.moveaxis(g, src, dst), err_msg=f"{src}->{dst}")
    for perm in [(2, 0, 1), (0, 2, 1), (1, 0, 2), (0, 1, 2)]:
        got = da.permute_dims(x, perm)
        assert_equal(got, g.transpose(perm), err_msg=f"{perm}")
        assert_equal(got + 1.0, g.transpose(perm) + 1.0, err_msg="elementwise after permute")


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_broadcast_to_and_arrays(layout):
    x, g = made(layout, seed=9)
    assert_equal(da.broadcast_to(x[:, :1], SHAPE), np.broadcast_to(g[:, :1], SHAPE))
    assert_equal(da.broadcast_to(x[0], (3, 7, 8)), np.broadcast_to(g[0], (3, 7, 8)))
    assert_equal(da.broadcast_to(x, (2,) + SHAPE), np.broadcast_to(g, (2,) + SHAPE))
    row = da.asarray(g[0, 0], split=0)
    col = da.asarray(g[:, :1, :1] * 2, split=None)
    outs = da.broadcast_arrays(x, row, col)
    wants = np.broadcast_arrays(g, g[0, 0], g[:, :1, :1] * 2)
    assert len(outs) == 3
    for i, (o, w) in enumerate(zip(outs, wants)):
        assert_equal(o, w, err_msg=f"broadcast_arrays output {i}")
        assert o.layout.blocks_key == outs[0].layout.blocks_key
    assert da.broadcast_arrays() == []


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_dtypes(layout):
    for dtype in ["float32", "int64", "complex128", "bool"]:
        x, g = made(layout, dtype=dtype, seed=10)
        for got, want in [(da.reshape(x, (8, 42)), g.reshape(8, 42)), (da.roll(x, 4, axis=0), np.roll(g, 4, axis=0)),
                          (da.flip(x, axis=1), np.flip(g, axis=1)),
                          (da.concat([x, x], axis=2), np.concatenate([g, g], axis=2)),
                          (da.stack([x, x], axis=1), np.stack([g, g], axis=1)),
                          (da.repeat(x, 2, axis=1), np.repeat(g, 2, axis=1)),
                          (da.tile(x, (1, 2, 1)), np.tile(g, (1, 2, 1))),
                          (da.moveaxis(x, 0, 2), np.moveaxis(g, 0, 2))]:
            assert got.dtype == np.dtype(dtype)
            assert_equal(got, want, err_msg=dtype)


@pytest.mark.parametrize("layout", LAYOUTS[:3], ids=str)
def test_errors_raise_everywhere(layout):
    x, g = made(layout)
    y = da.asarray(g[:, :3], split=0)
    assert_raises_everywhere(ValueError, da.concat, [x, y], axis=0)
    assert_raises_everywhere(ValueError, da.concat, [], axis=0)
    assert_raises_everywhere(ValueError, da.stack, [x, y])
    assert_raises_everywhere(ValueError, da.stack, [])
    assert_raises_everywhere(ValueError, da.squeeze, x, axis=0)
    assert_raises_everywhere(ValueError, da.broadcast_to, x, (7, 7, 8))
    assert_raises_everywhere(ValueError, da.broadcast_to, x, (7, 8))
    assert_raises_everywhere(ValueError, da.broadcast_arrays, x, y)
    assert_raises_everywhere(ValueError, da.moveaxis, x, (0, 1), 2)
    assert_raises_everywhere(ValueError, da.moveaxis, x, (0, 0), (1, 2))
    assert_raises_everywhere(ValueError, da.repeat, x, -1, axis=0)
    assert_raises_everywhere(ValueError, da.repeat, x, np.arange(5), axis=0)
    assert_raises_everywhere(ValueError, da.repeat, x, -np.ones(6, dtype=int), axis=0)
    assert_raises_everywhere(ValueError, da.tile, x, (2, -1))
    assert_raises_everywhere(ValueError, da.roll, x, (1, 2), axis=0)
    assert_raises_everywhere(ValueError, da.permute_dims, x, (0, 0, 1))
    assert_raises_everywhere(ValueError, da.permute_dims, x, (0, 1))
    assert_raises_everywhere(ValueError, da.flip, x, axis=(0, 0))
    assert_raises_everywhere(np.exceptions.AxisError, da.flip, x, axis=3)
    assert_raises_everywhere(np.exceptions.AxisError, da.expand_dims, x, axis=4)
    assert_raises_everywhere(TypeError, da.roll, x, 1.5, axis=0)


def test_transposes_remember_their_layout():
    """``x.T`` and ``permute_dims`` give the layout the first call made, with or without a halo."""
    a = np.arange(5 * 13 * 3, dtype=float).reshape(5, 13, 3)
    for halo in (0, 1):
        x = da.asarray(a, split=0, halo=halo)
        first = x.T
        assert x.T.layout is first.layout and not first.layout.has_halo
        assert_equal(x.T, a.T)
        assert_equal(da.permute_dims(x, (1, 0, 2)), a.transpose(1, 0, 2))
        assert da.permute_dims(x, (-2, 0, -1)).layout is da.permute_dims(x, (1, 0, 2)).layout
        assert_equal(x.mT, np.swapaxes(a, -1, -2))
    with pytest.raises(ValueError, match="permutation"):
        da.permute_dims(da.asarray(a), (0, 0, 1))
