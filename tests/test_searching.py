"""argmax argmin nonzero where searchsorted count_nonzero against NumPy on every rank count."""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray._api.searching import argmax, argmin, count_nonzero, nonzero, searchsorted, where
from darray._api.sorting import argsort
from darray.testing import assert_equal

pytestmark = pytest.mark.mpi


def nprocs() -> int:
    return da.default_communicator().size


def values(shape, dtype, seed=0) -> np.ndarray:
    rng = np.random.default_rng([seed, len(shape), sum(map(ord, dtype))])
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.3
    a = rng.integers(0, 4, shape).astype(dt)  # few distinct values: many ties
    if dt.kind == "f" and a.size:
        a[rng.random(shape) < 0.1] = np.nan
    return a


def layouts(shape) -> list[dict]:
    p = nprocs()
    if len(shape) == 1:
        out = [dict(split=0), dict(split=None), dict(split=0, sizes=[0] * (p - 1) + [shape[0]])]
        if p == 4:
            out.append(dict(split=(0, None), grid=(2, 2)))
        return out
    out = [dict(split=0), dict(split=1), dict(split=None), dict(split=1, sizes={1: [0] * (p - 1) + [shape[1]]})]
    if p == 4:
        out += [dict(split=(0, 1), grid=(2, 2)), dict(split=(1, None), grid=(2, 2))]
    return out


SHAPES = [(1,), (7,), (13,), (100,), (7, 5), (3, 11)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float64", "int64", "uint8", "bool"])
def test_argmax_argmin(shape, dtype):
    a = values(shape, dtype)
    for kw in layouts(shape):
        x = da.asarray(a, **kw)
        for ours, theirs in ((argmax, np.argmax), (argmin, np.argmin)):
            assert_equal(ours(x), np.asarray(theirs(a)))
            assert_equal(ours(x, keepdims=True), theirs(a, keepdims=True))
            for axis in range(-len(shape), len(shape)):
                assert_equal(ours(x, axis=axis), theirs(a, axis=axis))
                assert_equal(ours(x, axis=axis, keepdims=True), theirs(a, axis=axis, keepdims=True))


def test_argmax_ties_and_nan():
    cases = [np.full(13, 5.0), np.full(13, np.nan), np.array([1.0, 3, 3, np.nan, 3, np.nan, 0] * 2),
             np.array([-np.inf] * 4 + [np.inf] * 4), np.zeros(9, dtype=np.int8)]
    for a in cases:
        for kw in layouts(a.shape):
            x = da.asarray(a, **kw)
            assert_equal(argmax(x), np.asarray(np.argmax(a)))
            assert_equal(argmin(x), np.asarray(np.argmin(a)))
    a = np.full((4, 6), np.nan)
    a[1, 2] = 1.0
    for kw in layouts(a.shape):
        x = da.asarray(a, **kw)
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


@pytest.mark.parametrize("shape", SHAPES + [(0,), (2, 3, 4)])
@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_nonzero_and_count(shape, dtype):
    a = values(shape, dtype, seed=1)
    lays = layouts(shape) if len(shape) < 3 else [dict(split=0), dict(split=2), dict(split=None)]
    for kw in lays:
        x = da.asarray(a, **kw)
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


def test_where_broadcasting():
    a = values((7, 5), "float64", seed=2)
    b = values((5,), "float64", seed=3)
    for kw in layouts((7, 5)):
        x = da.asarray(a, **kw)
        y = da.asarray(b, split=None)
        cond = x > 1
        assert_equal(where(cond, x, y), np.where(a > 1, a, b))
        assert_equal(where(cond, 0.5, x), np.where(a > 1, 0.5, a))
        assert_equal(where(cond, x, -1), np.where(a > 1, a, -1))
        assert_equal(where(da.asarray(b > 1, split=0), y, 7), np.where(b > 1, b, 7))


def test_where_mixed_kinds():
    a = values((7, 5), "float64", seed=2)
    b = values((5,), "int64", seed=3)
    for kw in layouts((7, 5)):
        x = da.asarray(a, **kw)
        y = da.asarray(b, split=None)
        cond = x > 1
        assert_equal(where(cond, x, y), np.where(a > 1, a, b))
        assert_equal(where(cond, 0.5, x), np.where(a > 1, 0.5, a))
        assert_equal(where(cond, x, -1), np.where(a > 1, a, -1))
        assert_equal(where(da.asarray(b > 1, split=0), y, 7), np.where(b > 1, b, 7))


@pytest.mark.parametrize("n1", [0, 1, 7, 40])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(n1, side):
    rng = np.random.default_rng(n1)
    s = np.sort(rng.integers(0, 10, n1)).astype(np.float64)
    if n1 > 3:
        s[-2:] = np.nan  # NaNs sort last
    q = rng.integers(-2, 12, (5, 3)).astype(np.float64)
    q[0, 0] = np.nan
    for kw1 in layouts((n1,)):
        x1 = da.asarray(s, **kw1)
        for kw2 in layouts((5, 3)):
            x2 = da.asarray(q, **kw2)
            got = searchsorted(x1, x2, side=side)
            assert got.layout.blocks_key == x2.layout.blocks_key
            assert_equal(got, np.searchsorted(s, q, side=side))
        qi = da.asarray(np.arange(-1, 12), split=0)
        assert_equal(searchsorted(x1, qi, side=side), np.searchsorted(s, np.arange(-1, 12), side=side))


def test_searchsorted_sorter():
    a = values((30,), "int64", seed=4)
    q = np.arange(-1, 6)
    for kw in layouts((30,)):
        x1 = da.asarray(a, **kw)
        got = searchsorted(x1, da.asarray(q, split=0), side="right", sorter=argsort(x1))
        assert_equal(got, np.searchsorted(a, q, side="right", sorter=np.argsort(a, kind="stable")))


def test_searchsorted_bad_input():
    x1 = da.asarray(np.zeros((2, 3)), split=0)
    with pytest.raises(ValueError):
        searchsorted(x1, da.asarray(np.zeros(3)))
    with pytest.raises(ValueError):
        searchsorted(da.asarray(np.zeros(3)), da.asarray(np.zeros(3)), side="middle")
