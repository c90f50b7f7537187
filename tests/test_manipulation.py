"""Manipulation functions against NumPy on the global array, on every rank count.

reshape (incl. -1 and reshapes that cannot stay local), concat, stack,
unstack, roll, flip, repeat, tile, squeeze, expand_dims, moveaxis,
broadcast_to, broadcast_arrays, permute_dims. Each function/argument is one
test; the layouts (uneven with empty blocks, each split axis, replicated, with
a halo, 2-d/3-d grids at 4 ranks) are looped over inside it and named in
every failure message. Bad input raises ValueError on every rank.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray.testing import assert_equal, assert_raises_everywhere, uneven_sizes as uneven

pytestmark = pytest.mark.mpi

P = da.default_communicator().size
SHAPE = (6, 7, 8)


def comm():
    return da.default_communicator()



def layouts(shape=SHAPE) -> dict[str, dict]:
    ndim = len(shape)
    out = {"split0": dict(split=0), "split0-uneven": dict(split=0, sizes=uneven(shape[0], P)),
           "replicated": dict(split=None)}
    if ndim >= 2:
        out |= {"split1-uneven": dict(split=1, sizes={1: uneven(shape[1], P)}),
                "split-last-halo": dict(split=ndim - 1, halo=1, boundary="periodic")}
    if ndim >= 2 and P == 4:
        out["grid22"] = dict(split=(0, 1), grid=(2, 2))
    if ndim >= 3 and P == 4:
        out["grid122"] = dict(split=(0, 1, 2), grid=(1, 2, 2))
    return out


def values(shape=SHAPE, dtype="float64", seed=0) -> np.ndarray:
    rng = np.random.default_rng([seed, len(shape), sum(shape)])
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(-50, 50, shape).astype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def arrays(shape=SHAPE, dtype="float64", seed=0):
    """``(name, DArray, NumPy array)`` for every layout of the matrix."""
    g = values(shape, dtype, seed)
    return [(name, da.asarray(g, **kw), g) for name, kw in layouts(shape).items()]


# ------------------------------------------------------------------ reshape
RESHAPES = [(336,), (-1,), (42, 8), (6, 56), (8, 42), (7, 48), (2, 3, 7, 8), (336, 1), (1, 336), (4, -1, 6),
            (3, 2, 56), (16, 21), (6, 7, 8)]


@pytest.mark.parametrize("shape", RESHAPES, ids=str)
def test_reshape(shape):
    """Local (whole rows) and non-local (rows split across the new shape) reshapes, from every layout."""
    for name, x, g in arrays():
        got = da.reshape(x, shape)
        assert_equal(got, g.reshape(shape), err_msg=f"{name} -> {shape}")
        assert_equal(da.reshape(got, SHAPE), g, err_msg=f"{name} -> {shape} and back")


def test_reshape_small_and_empty():
    for name, x, g in arrays((13,)):
        assert_equal(da.reshape(x[:1], ()), g[:1].reshape(()), err_msg=name)
        assert_equal(da.reshape(x[:0], (0, 5)), g[:0].reshape(0, 5), err_msg=name)
        assert_equal(da.reshape(x[:12], (3, -1)), g[:12].reshape(3, -1), err_msg=name)
        assert_equal(da.reshape(x[:12], (2, 2, 3)), g[:12].reshape(2, 2, 3), err_msg=name)
    x = da.asarray(np.float64(2.5))
    assert_equal(da.reshape(x, (1, 1)), np.full((1, 1), 2.5))


def test_reshape_errors():
    x = da.asarray(values(), split=0)
    assert_raises_everywhere(ValueError, da.reshape, x, (5, -1))
    assert_raises_everywhere(ValueError, da.reshape, x, (-1, -1, 8))
    assert_raises_everywhere(ValueError, da.reshape, x, (6, 7, 9))
    assert_raises_everywhere(ValueError, da.reshape, x, (-2, 168))
    assert_raises_everywhere(ValueError, da.reshape, x, (42, 8), copy=False)


# ------------------------------------------------------------------ roll / flip
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, (0, 2), (1, 1)], ids=str)
def test_roll(axis):
    for name, x, g in arrays(seed=1):
        for shift in (1, -3, 10, 0, 336):
            s = shift if not isinstance(axis, tuple) else (shift, 2)
            assert_equal(da.roll(x, s, axis=axis), np.roll(g, s, axis=axis), err_msg=f"{name} shift={s} axis={axis}")


@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, (0, 2)], ids=str)
def test_flip(axis):
    for name, x, g in arrays(seed=2):
        assert_equal(da.flip(x, axis=axis), np.flip(g, axis=axis), err_msg=f"{name} axis={axis}")


# ------------------------------------------------------------------ joining
@pytest.mark.parametrize("axis", [0, 1, 2, -1, None], ids=str)
def test_concat(axis):
    """Arrays in different layouts and dtypes (promoted), one shorter along the axis."""
    for name, x, g in arrays(seed=3):
        shorter = g[:1] if axis in (0, None) else (g[:, 2:] if axis == 1 else g[..., :3])
        y = da.asarray(shorter.astype(np.int64) * 2, split=None)
        z = da.asarray(g, split=0, sizes=uneven(6, P))
        got = da.concat([x, y, z], axis=axis)
        want = np.concatenate([g, shorter.astype(np.int64) * 2, g], axis=axis)
        assert got.dtype == want.dtype
        assert_equal(got, want, err_msg=f"{name} axis={axis}")
        assert_equal(da.concat([x], axis=axis), np.concatenate([g], axis=axis), err_msg=f"single {name}")


@pytest.mark.parametrize("axis", [0, 1, 3, -1], ids=str)
def test_stack_unstack(axis):
    for name, x, g in arrays(seed=4):
        got = da.stack([x, x + 1, da.asarray(g * 2, split=None)], axis=axis)
        assert_equal(got, np.stack([g, g + 1, g * 2], axis=axis), err_msg=f"stack {name} axis={axis}")
        if axis < 3:
            parts = da.unstack(x, axis=axis)
            assert len(parts) == g.shape[axis]
            for i, part in enumerate(parts):
                assert_equal(part, np.take(g, i, axis=axis), err_msg=f"unstack {name} axis={axis} part {i}")


@pytest.mark.parametrize("axis", [0, 1, 2, None], ids=str)
def test_repeat(axis):
    for name, x, g in arrays(seed=5):
        assert_equal(da.repeat(x, 2, axis=axis), np.repeat(g, 2, axis=axis), err_msg=f"{name} 2 axis={axis}")
        assert_equal(da.repeat(x, 0, axis=axis), np.repeat(g, 0, axis=axis), err_msg=f"{name} 0 axis={axis}")
        n = g.size if axis is None else g.shape[axis]
        r = np.arange(n) % 3
        assert_equal(da.repeat(x, r, axis=axis), np.repeat(g, r, axis=axis), err_msg=f"{name} array axis={axis}")
        assert_equal(da.repeat(x, da.asarray(r), axis=axis), np.repeat(g, r, axis=axis), err_msg=f"{name} DArray")
        assert_equal(da.repeat(x, np.array([3]), axis=axis), np.repeat(g, 3, axis=axis), err_msg=f"{name} [3]")


@pytest.mark.parametrize("reps", [(2, 1, 3), (2,), (1, 2, 1, 1), (0, 1, 1), (1, 1, 1)], ids=str)
def test_tile(reps):
    for name, x, g in arrays(seed=6):
        assert_equal(da.tile(x, reps), np.tile(g, reps), err_msg=f"{name} reps={reps}")


# ------------------------------------------------------------------ axes
def test_expand_dims_squeeze():
    for name, x, g in arrays(seed=7):
        for axis in (0, 1, 3, -1, -4):
            e = da.expand_dims(x, axis=axis)
            assert_equal(e, np.expand_dims(g, axis), err_msg=f"expand_dims {name} {axis}")
            assert_equal(da.squeeze(e, axis=axis), g, err_msg=f"squeeze back {name} {axis}")
        assert_equal(da.squeeze(x[:, :1], axis=1), g[:, 0], err_msg=f"squeeze cut axis {name}")
        assert_equal(da.squeeze(x[2:3, :, -1:], axis=(0, 2)), g[2:3, :, -1:].squeeze((0, 2)), err_msg=name)
        assert_equal(da.squeeze(x[-1:], axis=0), g[-1], err_msg=f"squeeze last block {name}")


def test_moveaxis_permute_dims():
    for name, x, g in arrays(seed=8):
        for src, dst in [(0, -1), (2, 0), ((0, 1), (2, 0)), ((0, 1, 2), (1, 2, 0)), (-1, -2)]:
            assert_equal(da.moveaxis(x, src, dst), np.moveaxis(g, src, dst), err_msg=f"{name} {src}->{dst}")
        for perm in [(2, 0, 1), (0, 2, 1), (1, 0, 2), (0, 1, 2)]:
            got = da.permute_dims(x, perm)
            assert_equal(got, g.transpose(perm), err_msg=f"{name} {perm}")
            assert_equal(got + 1.0, g.transpose(perm) + 1.0, err_msg=f"elementwise after permute {name}")


def test_broadcast_to_and_arrays():
    for name, x, g in arrays(seed=9):
        assert_equal(da.broadcast_to(x[:, :1], SHAPE), np.broadcast_to(g[:, :1], SHAPE), err_msg=name)
        assert_equal(da.broadcast_to(x[0], (3, 7, 8)), np.broadcast_to(g[0], (3, 7, 8)), err_msg=name)
        assert_equal(da.broadcast_to(x, (2,) + SHAPE), np.broadcast_to(g, (2,) + SHAPE), err_msg=name)
        row = da.asarray(g[0, 0], split=0)
        col = da.asarray(g[:, :1, :1] * 2, split=None)
        outs = da.broadcast_arrays(x, row, col)
        wants = np.broadcast_arrays(g, g[0, 0], g[:, :1, :1] * 2)
        assert len(outs) == 3
        for i, (o, w) in enumerate(zip(outs, wants)):
            assert_equal(o, w, err_msg=f"broadcast_arrays {name} output {i}")
            assert o.layout.blocks_key == outs[0].layout.blocks_key
    assert da.broadcast_arrays() == []


@pytest.mark.parametrize("dtype", ["float32", "int64", "complex128", "bool"])
def test_dtypes(dtype):
    for name, x, g in arrays(dtype=dtype, seed=10):
        for got, want in [(da.reshape(x, (8, 42)), g.reshape(8, 42)), (da.roll(x, 4, axis=0), np.roll(g, 4, axis=0)),
                          (da.flip(x, axis=1), np.flip(g, axis=1)),
                          (da.concat([x, x], axis=2), np.concatenate([g, g], axis=2)),
                          (da.stack([x, x], axis=1), np.stack([g, g], axis=1)),
                          (da.repeat(x, 2, axis=1), np.repeat(g, 2, axis=1)),
                          (da.tile(x, (1, 2, 1)), np.tile(g, (1, 2, 1))),
                          (da.moveaxis(x, 0, 2), np.moveaxis(g, 0, 2))]:
            assert got.dtype == np.dtype(dtype)
            assert_equal(got, want, err_msg=f"{dtype} {name}")


def test_errors_raise_everywhere():
    g = values()
    for name, kw in list(layouts().items())[:3]:
        x = da.asarray(g, **kw)
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
