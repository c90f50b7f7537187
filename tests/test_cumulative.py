"""cumulative_sum / cumulative_prod (include_initial, dtype) and diff (n, prepend, append) against NumPy.

Each function/dtype is one test; layouts (uneven with empty blocks on the
scanned axis, each split axis, replicated, with a halo, 2-d/3-d grids at 4
ranks) and axes are looped over inside it and named in failure messages.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray.testing import assert_equal, assert_raises_everywhere, uneven_sizes as uneven

pytestmark = pytest.mark.mpi

P = da.default_communicator().size
SHAPES = {1: (13,), 2: (9, 11), 3: (6, 7, 8)}
AXES = {1: [None, 0, -1], 2: [0, 1, -1], 3: [0, 1, 2]}


def comm():
    return da.default_communicator()



def first_empty(n: int, p: int) -> list[int]:
    return [0] * (p - 1) + [n] if p > 1 else [n]


def layouts(ndim: int) -> dict[str, dict]:
    n = SHAPES[ndim]
    out = {"split0": dict(split=0), "uneven0": dict(split=0, sizes={0: uneven(n[0], P)}),
           "first-empty0": dict(split=0, sizes={0: first_empty(n[0], P)}), "replicated": dict(split=None)}
    if ndim >= 2:
        out |= {"split-last": dict(split=ndim - 1), "halo": dict(split=1, halo=1, boundary="nearest")}
    if ndim == 2 and P == 4:
        out["grid22"] = dict(split=(0, 1), grid=(2, 2))
    if ndim == 3 and P == 4:
        out |= {"grid122": dict(split=(0, 1, 2), grid=(1, 2, 2)), "grid22": dict(split=(2, 1), grid=(2, 2))}
    return out


def values(shape, dtype="float64", seed=0, prod=False) -> np.ndarray:
    rng = np.random.default_rng([seed, len(shape), sum(shape)])
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        lo, hi = (-2, 3) if prod else (-50, 50)
        return rng.integers(max(lo, 0) if dt.kind == "u" else lo, hi, shape).astype(dt)
    real = rng.uniform(0.6, 1.4, shape) if prod else rng.standard_normal(shape)
    if dt.kind == "c":
        return (real + 1j * rng.uniform(-0.3, 0.3, shape)).astype(dt)
    return real.astype(dt)


FUNCS = ["cumulative_sum", "cumulative_prod"]


@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("func", FUNCS)
def test_cumulative(func, ndim):
    """float64, every layout and axis, include_initial False and True; results keep the input's cuts."""
    g = values(SHAPES[ndim], seed=1, prod=func == "cumulative_prod")
    for name, kw in layouts(ndim).items():
        x = da.asarray(g, **kw)
        for axis in AXES[ndim]:
            for initial in (False, True):
                got = getattr(da, func)(x, axis=axis, include_initial=initial)
                want = getattr(np, func)(g, axis=axis, include_initial=initial)
                assert_equal(got, want, err_msg=f"{name} axis={axis} include_initial={initial}")
                assert got.layout.dims == x.layout.dims and got.layout.split == x.layout.split


@pytest.mark.parametrize("dtype,out_dtype", [("int64", None), ("int32", "int64"), ("float32", None),
                                             ("float32", "float64"), ("complex128", None), ("int64", "float64"),
                                             ("uint8", "uint64")], ids=str)
@pytest.mark.parametrize("func", FUNCS)
def test_cumulative_dtypes(func, dtype, out_dtype):
    g = values(SHAPES[2], dtype, seed=2, prod=func == "cumulative_prod")
    for name, kw in layouts(2).items():
        x = da.asarray(g, **kw)
        for axis in (0, 1):
            for initial in (False, True):
                got = getattr(da, func)(x, axis=axis, dtype=out_dtype, include_initial=initial)
                want = getattr(np, func)(g, axis=axis, dtype=out_dtype, include_initial=initial)
                assert got.dtype == want.dtype, (got.dtype, want.dtype)
                assert_equal(got, want, err_msg=f"{name} {dtype}->{out_dtype} axis={axis} initial={initial}")


def test_numpy_scan_spellings():
    """``np.cumsum``/``np.cumprod`` (flattening without axis) and the ufunc ``accumulate`` hooks."""
    g = values(SHAPES[2], seed=3, prod=True)
    for name, kw in layouts(2).items():
        x = da.asarray(g, **kw)
        assert_equal(np.cumsum(x, axis=1), np.cumsum(g, axis=1), err_msg=name)
        assert_equal(np.cumsum(x), np.cumsum(g), err_msg=f"flat {name}")
        assert_equal(np.cumprod(x, axis=0), np.cumprod(g, axis=0), err_msg=name)
        assert_equal(np.add.accumulate(x, axis=0), np.add.accumulate(g, axis=0), err_msg=name)
        assert_equal(np.multiply.accumulate(x, axis=1), np.multiply.accumulate(g, axis=1), err_msg=name)


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_diff(ndim):
    g = values(SHAPES[ndim], seed=4)
    for name, kw in layouts(ndim).items():
        x = da.asarray(g, **kw)
        for axis in [a for a in AXES[ndim] if a is not None]:
            for n in (0, 1, 2, 3):
                assert_equal(da.diff(x, axis=axis, n=n), np.diff(g, axis=axis, n=n), err_msg=f"{name} axis={axis} n={n}")
        assert_equal(da.diff(x), np.diff(g), err_msg=f"default axis {name}")
        k = SHAPES[ndim][-1]
        assert_equal(da.diff(x, n=k + 2), np.diff(g, n=k + 2), err_msg=f"n past the length {name}")


@pytest.mark.parametrize("dtype", ["int64", "bool", "complex128", "float32"])
def test_diff_dtypes(dtype):
    g = values(SHAPES[2], dtype, seed=5)
    for name, kw in layouts(2).items():
        x = da.asarray(g, **kw)
        for axis, n in [(0, 1), (1, 2), (0, 3)]:
            got = da.diff(x, axis=axis, n=n)
            want = np.diff(g, axis=axis, n=n)
            assert got.dtype == want.dtype
            assert_equal(got, want, err_msg=f"{dtype} {name} axis={axis} n={n}")


def test_diff_prepend_append():
    """Scalars, NumPy arrays (length-1 or longer along the axis), DArrays in another layout."""
    g = values(SHAPES[2], seed=6)
    row, col = values((11,), seed=7), values((9, 1), seed=8)
    for name, kw in layouts(2).items():
        x = da.asarray(g, **kw)
        for axis, kwargs in [
            (0, dict(prepend=0.0)), (1, dict(append=2.5)), (0, dict(prepend=1.0, append=-1.0)),
            (0, dict(prepend=row[None])), (1, dict(append=col)), (1, dict(prepend=col, append=col)),
            (0, dict(prepend=g[:3], append=g)), (1, dict(prepend=g[:, :2], n=2)),
        ]:
            assert_equal(da.diff(x, axis=axis, **kwargs), np.diff(g, axis=axis, **kwargs),
                         err_msg=f"{name} axis={axis} {list(kwargs)}")
        got = da.diff(x, axis=0, prepend=da.asarray(g[:2], split=1), append=da.asarray(g, split=None), n=2)
        assert_equal(got, np.diff(g, axis=0, prepend=g[:2], append=g, n=2), err_msg=f"DArray parts {name}")


def test_errors_raise_everywhere():
    g = values(SHAPES[2])
    for name, kw in list(layouts(2).items())[:3]:
        x = da.asarray(g, **kw)
        assert_raises_everywhere(ValueError, da.cumulative_sum, x)  # axis required for 2-d
        assert_raises_everywhere(ValueError, da.cumulative_prod, x)
        assert_raises_everywhere(np.exceptions.AxisError, da.cumulative_sum, x, axis=2)
        assert_raises_everywhere(TypeError, da.cumulative_sum, da.asarray(g > 0, **kw), axis=0)
        assert_raises_everywhere(ValueError, da.diff, x, n=-1)
        assert_raises_everywhere(ValueError, da.diff, da.asarray(np.float64(1.0)))
        assert_raises_everywhere(ValueError, da.diff, x, axis=0, prepend=np.ones((2, 3)))
        assert_raises_everywhere(np.exceptions.AxisError, da.diff, x, axis=-3)
        assert_raises_everywhere(TypeError, da.cumulative_sum, object(), axis=0)  # NumPy arrays are taken
