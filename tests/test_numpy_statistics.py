"""numpy.quantile / percentile / median, numpy.histogram and numpy.einsum on DArrays, against NumPy.

Parametrized over layouts of the array from ``tests/_cases.py`` (cut along each axis, empty blocks,
replicated, a 2x2 grid and, at 4 ranks, a grid whose ranks hold copies of the blocks), on every rank count.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import darray as da
from darray.testing import assert_equal, assert_raises_everywhere

from _cases import generator, layouts, values

pytestmark = pytest.mark.mpi

SHAPE = (9, 7, 4)
#: Cut along each axis, all on the last rank (empty blocks), replicated, a 2x2 grid, a 2x2 grid holding copies.
LAYOUTS = layouts(SHAPE, "split0", "split1", "replicated", "last0", "grid2x2", "grid2x2-0n")


def field(dtype="float64", seed=0, nans=False) -> np.ndarray:
    """Ten times a standard normal sample of ``SHAPE`` (cast to ``dtype``), with about 5% NaNs if ``nans``."""
    a = (values(SHAPE, "float64", seed) * 10).astype(dtype)
    if nans:
        a[generator(seed, "nans").random(SHAPE) < 0.05] = np.nan
    return a


def agree_value(got, want, err_msg: str) -> None:
    """A DArray or a local (replicated) result equal to NumPy's on every rank."""
    if not isinstance(got, da.DArray):
        got = da.asarray(np.asarray(got), split=None)
    assert_equal(got, np.asarray(want), check_dtype=False, err_msg=err_msg)


QUANTILE_CALLS = [
    ("median all", lambda m, a: m.median(a)),
    ("median axis 0", lambda m, a: m.median(a, axis=0)),
    ("median axis -1 keepdims", lambda m, a: m.median(a, axis=-1, keepdims=True)),
    ("median axes (0, 2)", lambda m, a: m.median(a, axis=(0, 2))),
    ("quantile list axis 1", lambda m, a: m.quantile(a, [0.0, 0.25, 1.0], axis=1)),
    ("quantile axes (2, 0) keepdims", lambda m, a: m.quantile(a, [0.1, 0.9], axis=(2, 0), keepdims=True)),
    ("quantile all keepdims", lambda m, a: m.quantile(a, 0.3, keepdims=True)),
    ("percentile axis 0", lambda m, a: m.percentile(a, 95, axis=0)),
    ("percentile 2-d q", lambda m, a: m.percentile(a, [[10, 20], [30, 40]], axis=2)),
]


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_quantiles_match_numpy(dtype, layout):
    a = field(dtype, seed=1)
    x = layout.array(a)
    for what, call in QUANTILE_CALLS:
        rtol = 1e-5 if dtype == "float32" else 1e-12
        want = np.asarray(call(np, a))
        got = call(np, x)
        assert got.shape == want.shape, (what, got.shape, want.shape)
        assert_equal(got, want, rtol=rtol, check_dtype=False, err_msg=f"{what} {dtype}")


def test_median_of_nothing_is_nan_and_quantile_of_nothing_raises_as_in_numpy():
    for shape, kw in (((0, 3), dict(axis=0)), ((4, 0), dict(axis=1, keepdims=True)), ((2, 0), dict())):
        x = da.zeros(shape, split=0)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = np.median(np.zeros(shape), **kw)
        assert_equal(da.asarray(np.asarray(np.median(x, **kw).gather())), np.asarray(want), check_dtype=False)
        assert_raises_everywhere(IndexError, np.quantile, x, 0.5, match="quantile", **kw)


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_quantiles_with_nans_are_nan_where_numpy_is(layout):
    a = field(nans=True, seed=2)
    x = layout.array(a)
    for what, call in QUANTILE_CALLS:
        assert_equal(call(np, x), np.asarray(call(np, a)), check_dtype=False, err_msg=what)


def test_quantile_bad_input_raises_everywhere():
    x = da.asarray(field(), split=0)
    assert_raises_everywhere(ValueError, np.quantile, x, 1.5, match="quantile")
    assert_raises_everywhere(ValueError, np.percentile, x, 50, method="nearest", match="linear")
    assert_raises_everywhere(np.exceptions.AxisError, np.median, x, axis=3, match="median")
    assert_raises_everywhere(TypeError, np.quantile, x, 0.5, weights=x, match="weights")


HISTOGRAM_CALLS = [
    ("bins=10", lambda m, a, w: m.histogram(a)),
    ("bins=7 range", lambda m, a, w: m.histogram(a, bins=7, range=(-5.0, 5.0))),
    ("edges", lambda m, a, w: m.histogram(a, bins=[-30.0, -1.0, 0.0, 0.5, 30.0])),
    ("weights", lambda m, a, w: m.histogram(a, bins=5, weights=w)),
    ("density", lambda m, a, w: m.histogram(a, bins=6, density=True)),
]


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_histogram_matches_numpy_and_counts_copies_once(layout):
    a = field(seed=3)
    w = np.abs(field(seed=4))
    x, wx = layout.array(a), layout.array(w)
    for what, call in HISTOGRAM_CALLS:
        (counts, edges), (want_counts, want_edges) = call(np, x, wx), call(np, a, w)
        agree_value(counts, want_counts, f"counts {what}")
        agree_value(edges, want_edges, f"edges {what}")


def test_histogram_bad_bins_raise_everywhere():
    x = da.asarray(field(), split=0)
    assert_raises_everywhere(ValueError, np.histogram, x, bins=0, match="positive")
    assert_raises_everywhere(ValueError, np.histogram, x, bins=[3.0, 1.0, 2.0], match="monoton")


EINSUM_CALLS = [
    ("transpose", "ijk->kji", 1), ("sum all", "ijk->", 1), ("sum axis", "ijk->ik", 1), ("implicit", "ijk", 1),
    ("elementwise", "ijk,ijk->ijk", 2), ("contract last", "ijk,ijk->ij", 2), ("batched matmul", "ijk,ikl->ijl", 2),
    ("outer", "ij,kl->ijkl", 2), ("dot", "ijk,ijk->", 2),
]


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@pytest.mark.parametrize("what,subscripts,nops", EINSUM_CALLS, ids=[c[0] for c in EINSUM_CALLS])
def test_einsum_matches_numpy(what, subscripts, nops, layout):
    a, b = field(seed=5), field(seed=6)
    operands = {  # shapes the subscripts need
        "batched matmul": (a, b.transpose(0, 2, 1)), "outer": (a[:, :, 0], b[:3, :2, 0]),
    }.get(what, (a, b)[:nops])
    xs = [layout.array(o) if o.shape[0] == SHAPE[0] and o.ndim == 3 else da.asarray(o, split=0) for o in operands]
    assert_equal(np.einsum(subscripts, *xs), np.asarray(np.einsum(subscripts, *operands)), rtol=1e-10,
                 check_dtype=False, err_msg=what)


def test_einsum_unsupported_forms_raise_everywhere():
    x = da.asarray(field(), split=0)
    assert_raises_everywhere(TypeError, np.einsum, "...k->k", x, match="einsum")
    assert_raises_everywhere(TypeError, np.einsum, "iik->k", x[:7], match="einsum")
    assert_raises_everywhere(ValueError, np.einsum, "ij->i", x, match="einsum")
