"""argmax argmin nonzero where searchsorted count_nonzero against NumPy on every rank count."""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray._api.searching import argmax, argmin, count_nonzero, nonzero, searchsorted, where
from darray._api.sorting import argsort
from darray.testing import assert_equal

from _cases import P, case, generator, layouts, values as seeded

pytestmark = pytest.mark.mpi


def values(shape, dtype, seed=0) -> np.ndarray:
    """Few distinct values (many ties): integers in [0, 4), floats with about 10% NaNs; 30% True."""
    rng = generator(seed, len(shape), dtype)
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) < 0.3
    a = seeded(shape, "int64", seed, low=0, high=4, key=dtype).astype(dtype)
    if a.dtype.kind == "f" and a.size:
        a[rng.random(shape) < 0.1] = np.nan
    return a


def named(shape) -> list:
    """1-d: split, replicated, all on the last rank, a 2x2 grid holding copies (4 ranks); 2-d: split along each
    axis, replicated, all of axis 1 on the last rank, 2x2 grids (one holding copies)."""
    if len(shape) >= 2:
        return layouts(shape, "split0", "split1", "replicated", "last1", "grid2x2", "grid2x2-1n")
    out = layouts(shape, "split0", "replicated", "last0")
    if P == 4:
        out.append(case("grid2x2-0n", shape, "grid", "copies", split=(0, None), grid=(2, 2)))
    return out


def over(*shapes) -> list:
    """``layout`` parameters over the layouts of ``shapes``, ids ``{shape}-{layout}``."""
    return [pytest.param(c, id=f"{'x'.join(map(str, shape))}-{c}") for shape in shapes for c in named(shape)]


SHAPES = [(1,), (7,), (13,), (100,), (7, 5), (3, 11)]


@pytest.mark.parametrize("layout", over(*SHAPES))
@pytest.mark.parametrize("dtype", ["float64", "int64", "uint8", "bool"])
def test_argmax_argmin(dtype, layout):
    shape = layout.shape
    a = values(shape, dtype)
    x = layout.array(a)
    for ours, theirs in ((argmax, np.argmax), (argmin, np.argmin)):
        assert_equal(ours(x), np.asarray(theirs(a)))
        assert_equal(ours(x, keepdims=True), theirs(a, keepdims=True))
        for axis in range(-len(shape), len(shape)):
            assert_equal(ours(x, axis=axis), theirs(a, axis=axis))
            assert_equal(ours(x, axis=axis, keepdims=True), theirs(a, axis=axis, keepdims=True))


TIES = {"fives": np.full(13, 5.0), "nans": np.full(13, np.nan),
        "threes-nans": np.array([1.0, 3, 3, np.nan, 3, np.nan, 0] * 2), "infs": np.array([-np.inf] * 4 + [np.inf] * 4), "int8-zeros": np.zeros(9, dtype=np.int8)}


@pytest.mark.parametrize("name,layout", [pytest.param(k, c, id=f"{k}-{c}") for k, a in TIES.items()
                                         for c in named(a.shape)])
def test_argmax_ties_and_nan(name, layout):
    a = TIES[name]
    x = layout.array(a)
    assert_equal(argmax(x), np.asarray(np.argmax(a)))
    assert_equal(argmin(x), np.asarray(np.argmin(a)))


@pytest.mark.parametrize("layout", over((4, 6)))
def test_argmax_all_nan_but_one(layout):
    a = np.full((4, 6), np.nan)
    a[1, 2] = 1.0
    x = layout.array(a)
    for axis in (0, 1):
        assert_equal(argmax(x, axis=axis), np.argmax(a, axis=axis))
        assert_equal(argmin(x, axis=axis), np.argmin(a, axis=axis))


def test_argmax_empty_and_bad_axis():
    x = da.asarray(np.zeros((0,)), split=0)
    with pytest.raises(ValueError):
        argmax(x)
    with pytest.raises(ValueError):
        argmin(x, axis=0)
    y = da.asarray(np.zeros((0, 3)), split=1)
    assert_equal(argmax(y, axis=1), np.argmax(np.zeros((0, 3)), axis=1))
    with pytest.raises(ValueError):
        argmax(y, axis=0)
    z = da.asarray(np.zeros((3, 4)), split=0)
    with pytest.raises(np.exceptions.AxisError):
        argmax(z, axis=2)
    with pytest.raises(np.exceptions.AxisError):
        argmin(z, axis=-3)


NONZERO = [pytest.param(c, id=f"{'x'.join(map(str, shape))}-{c}") for shape in SHAPES + [(0,)] for c in named(shape)]
NONZERO += [pytest.param(c, id=f"2x3x4-{c}") for c in layouts((2, 3, 4), "split0", "split2", "replicated")]


@pytest.mark.parametrize("layout", NONZERO)
@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_nonzero_and_count(dtype, layout):
    shape = layout.shape
    a = values(shape, dtype, seed=1)
    x = layout.array(a)
    got = nonzero(x)
    want = np.nonzero(a)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_equal(g, w.astype(np.int64))
    assert_equal(count_nonzero(x), np.asarray(np.count_nonzero(a)))
    for axis in range(len(shape)):
        assert_equal(count_nonzero(x, axis=axis), np.count_nonzero(a, axis=axis).astype(np.int64))
        assert_equal(count_nonzero(x, axis=axis, keepdims=True),
                     np.count_nonzero(a, axis=axis, keepdims=True).astype(np.int64))


def test_nonzero_0d():
    with pytest.raises(ValueError):
        nonzero(da.asarray(np.float64(1.0)))


@pytest.mark.parametrize("layout", over((7, 5)))
@pytest.mark.parametrize("branch", ["float64", "int64"], ids=["same-kind", "mixed-kinds"])
def test_where_broadcasting(branch, layout):
    """A broadcast replicated branch, scalars on either side; ``mixed-kinds``: an int64 branch beside float64."""
    a = values((7, 5), "float64", seed=2)
    b = values((5,), branch, seed=3)
    x = layout.array(a)
    y = da.asarray(b, split=None)
    cond = x > 1
    assert_equal(where(cond, x, y), np.where(a > 1, a, b))
    assert_equal(where(cond, 0.5, x), np.where(a > 1, 0.5, a))
    assert_equal(where(cond, x, -1), np.where(a > 1, a, -1))
    assert_equal(where(da.asarray(b > 1, split=0), y, 7), np.where(b > 1, b, 7))


@pytest.mark.parametrize("layout", over((7, 5)))
@pytest.mark.parametrize("pair", [(0.0, -np.inf), (1, 2), (True, False), (1j, 0.5)], ids=str)
def test_where_two_python_scalars(pair, layout):
    """``where(mask, 0.0, -inf)``: two Python scalars take NumPy's result dtype (the standard takes one at most)."""
    a = values((7, 5), "float64", seed=2)
    assert_equal(where(layout.array(a) > 1, *pair), np.where(a > 1, *pair))


@pytest.mark.parametrize("layout", over((0,), (1,), (7,), (40,)))
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side, layout):
    n1 = layout.shape[0]
    rng = np.random.default_rng(n1)
    s = np.sort(rng.integers(0, 10, n1)).astype(np.float64)
    if n1 > 3:
        s[-2:] = np.nan  # NaNs sort last
    q = rng.integers(-2, 12, (5, 3)).astype(np.float64)
    q[0, 0] = np.nan
    x1 = layout.array(s)
    for layout2 in named((5, 3)):
        x2 = layout2.array(q)
        got = searchsorted(x1, x2, side=side)
        assert got.layout.blocks_key == x2.layout.blocks_key
        assert_equal(got, np.searchsorted(s, q, side=side), err_msg=f"queries {layout2}")
    qi = da.asarray(np.arange(-1, 12), split=0)
    assert_equal(searchsorted(x1, qi, side=side), np.searchsorted(s, np.arange(-1, 12), side=side))


@pytest.mark.parametrize("layout", over((30,)))
def test_searchsorted_sorter(layout):
    a = values((30,), "int64", seed=4)
    q = np.arange(-1, 6)
    x1 = layout.array(a)
    got = searchsorted(x1, da.asarray(q, split=0), side="right", sorter=argsort(x1))
    assert_equal(got, np.searchsorted(a, q, side="right", sorter=np.argsort(a, kind="stable")))


def test_searchsorted_bad_input():
    x1 = da.asarray(np.zeros((2, 3)), split=0)
    with pytest.raises(ValueError):
        searchsorted(x1, da.asarray(np.zeros(3)))
    with pytest.raises(ValueError):
        searchsorted(da.asarray(np.zeros(3)), da.asarray(np.zeros(3)), side="middle")
