"""cumulative_sum / cumulative_prod (include_initial, dtype) and diff (n, prepend, append) against NumPy.

Each function/layout is one test (layouts from ``tests/_cases.py``:
uneven with empty blocks on the scanned axis, each split axis, replicated,
with a halo, 2-d/3-d grids at 4 ranks); axes are looped over inside it and
named in failure messages.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import darray as da
from darray.testing import assert_equal, assert_raises_everywhere

from _cases import by_ndim, layouts, values

pytestmark = pytest.mark.mpi

SHAPES = {1: (13,), 2: (9, 11), 3: (6, 7, 8)}
AXES = {1: [None, 0, -1], 2: [0, 1, -1], 3: [0, 1, 2]}
_EVERY = ("split0", "uneven0", "last0", "replicated")
LAYOUTS = {1: layouts(SHAPES[1], *_EVERY),
           2: layouts(SHAPES[2], *_EVERY, "split1", "halo1", "grid2x2"),
           3: layouts(SHAPES[3], *_EVERY, "split2", "halo1", "grid1x2x2", "grid2x2-21")}


def scan_values(shape, dtype="float64", seed=0, prod=False) -> np.ndarray:
    """Seeded values; for products, magnitudes near 1 (integers in [-2, 3)) so that products stay finite."""
    if not prod:
        return values(shape, dtype, seed)
    return values(shape, dtype, seed, **(dict(low=-2, high=3) if np.dtype(dtype).kind in "iu" else
                                         dict(low=0.6, high=1.4)))


FUNCS = ["cumulative_sum", "cumulative_prod"]


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_cumulative(ndim, layout):
    """Both functions, float64, every axis, include_initial False and True; results keep the input's cuts."""
    for func in FUNCS:
        g = scan_values(SHAPES[ndim], seed=1, prod=func == "cumulative_prod")
        x = layout.array(g)
        for axis in AXES[ndim]:
            for initial in (False, True):
                got = getattr(da, func)(x, axis=axis, include_initial=initial)
                want = getattr(np, func)(g, axis=axis, include_initial=initial)
                assert_equal(got, want, err_msg=f"{func} axis={axis} include_initial={initial}")
                assert got.layout.dims == x.layout.dims and got.layout.split == x.layout.split


DTYPE_PAIRS = [("int64", None), ("int32", "int64"), ("float32", None), ("float32", "float64"), ("complex128", None),
               ("int64", "float64"), ("uint8", "uint64")]


@pytest.mark.parametrize("layout", LAYOUTS[2], ids=str)
def test_cumulative_dtypes(layout):
    """Both functions, every input/result dtype pair (cheap: looped here, named in the message)."""
    for func, (dtype, out_dtype) in itertools.product(FUNCS, DTYPE_PAIRS):
        g = scan_values(SHAPES[2], dtype, seed=2, prod=func == "cumulative_prod")
        x = layout.array(g)
        for axis in (0, 1):
            for initial in (False, True):
                got = getattr(da, func)(x, axis=axis, dtype=out_dtype, include_initial=initial)
                want = getattr(np, func)(g, axis=axis, dtype=out_dtype, include_initial=initial)
                assert got.dtype == want.dtype, (dtype, out_dtype, got.dtype, want.dtype)
                assert_equal(got, want, err_msg=f"{func} {dtype}->{out_dtype} axis={axis} initial={initial}")


@pytest.mark.parametrize("layout", LAYOUTS[2], ids=str)
def test_numpy_scan_spellings(layout):
    """``np.cumsum``/``np.cumprod`` (flattening without axis) and the ufunc ``accumulate`` hooks."""
    g = scan_values(SHAPES[2], seed=3, prod=True)
    x = layout.array(g)
    assert_equal(np.cumsum(x, axis=1), np.cumsum(g, axis=1))
    assert_equal(np.cumsum(x), np.cumsum(g), err_msg="flat")
    assert_equal(np.cumprod(x, axis=0), np.cumprod(g, axis=0))
    assert_equal(np.add.accumulate(x, axis=0), np.add.accumulate(g, axis=0))
    assert_equal(np.multiply.accumulate(x, axis=1), np.multiply.accumulate(g, axis=1))


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_diff(ndim, layout):
    g = values(SHAPES[ndim], seed=4)
    x = layout.array(g)
    for axis in [a for a in AXES[ndim] if a is not None]:
        for n in (0, 1, 2, 3):
            assert_equal(da.diff(x, axis=axis, n=n), np.diff(g, axis=axis, n=n), err_msg=f"axis={axis} n={n}")
    assert_equal(da.diff(x), np.diff(g), err_msg="default axis")
    k = SHAPES[ndim][-1]
    assert_equal(da.diff(x, n=k + 2), np.diff(g, n=k + 2), err_msg="n past the length")


@pytest.mark.parametrize("layout", LAYOUTS[2], ids=str)
def test_diff_dtypes(layout):
    for dtype in ["int64", "bool", "complex128", "float32"]:
        g = values(SHAPES[2], dtype, seed=5)
        x = layout.array(g)
        for axis, n in [(0, 1), (1, 2), (0, 3)]:
            got = da.diff(x, axis=axis, n=n)
            want = np.diff(g, axis=axis, n=n)
            assert got.dtype == want.dtype, dtype
            assert_equal(got, want, err_msg=f"{dtype} axis={axis} n={n}")


@pytest.mark.parametrize("layout", LAYOUTS[2], ids=str)
def test_diff_prepend_append(layout):
    """Scalars, NumPy arrays (length-1 or longer along the axis), DArrays in another layout."""
    g = values(SHAPES[2], seed=6)
    row, col = values((11,), seed=7), values((9, 1), seed=8)
    x = layout.array(g)
    for axis, kwargs in [
        (0, dict(prepend=0.0)), (1, dict(append=2.5)), (0, dict(prepend=1.0, append=-1.0)),
        (0, dict(prepend=row[None])), (1, dict(append=col)), (1, dict(prepend=col, append=col)),
        (0, dict(prepend=g[:3], append=g)), (1, dict(prepend=g[:, :2], n=2)),
    ]:
        assert_equal(da.diff(x, axis=axis, **kwargs), np.diff(g, axis=axis, **kwargs),
                     err_msg=f"axis={axis} {list(kwargs)}")
    got = da.diff(x, axis=0, prepend=da.asarray(g[:2], split=1), append=da.asarray(g, split=None), n=2)
    assert_equal(got, np.diff(g, axis=0, prepend=g[:2], append=g, n=2), err_msg="DArray parts")


@pytest.mark.parametrize("layout", LAYOUTS[2][:3], ids=str)
def test_errors_raise_everywhere(layout):
    g = values(SHAPES[2])
    x = layout.array(g)
    assert_raises_everywhere(ValueError, da.cumulative_sum, x)  # axis required for 2-d
    assert_raises_everywhere(ValueError, da.cumulative_prod, x)
    assert_raises_everywhere(np.exceptions.AxisError, da.cumulative_sum, x, axis=2)
    assert_raises_everywhere(TypeError, da.cumulative_sum, layout.array(g > 0), axis=0)
    assert_raises_everywhere(ValueError, da.diff, x, n=-1)
    assert_raises_everywhere(ValueError, da.diff, da.asarray(np.float64(1.0)))
    assert_raises_everywhere(ValueError, da.diff, x, axis=0, prepend=np.ones((2, 3)))
    assert_raises_everywhere(np.exceptions.AxisError, da.diff, x, axis=-3)
    assert_raises_everywhere(TypeError, da.cumulative_sum, object(), axis=0)  # NumPy arrays are taken
