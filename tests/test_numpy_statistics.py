"""numpy.quantile / percentile / median, numpy.histogram and numpy.einsum on DArrays, against NumPy.

Every layout of the matrix (cut along each axis, uneven and empty blocks, replicated, a 2x2 grid and, at
4 ranks, a grid whose ranks hold copies of the blocks), on every rank count.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import darray as da
from darray.testing import assert_equal, assert_raises_everywhere

pytestmark = pytest.mark.mpi

P = da.default_communicator().size
SHAPE = (9, 7, 4)


def layouts(shape=SHAPE) -> dict[str, dict]:
    out = {"split0": dict(split=0), "split1": dict(split=1), "replicated": dict(split=None),
           "empty-blocks": dict(split=0, sizes={0: [0] * (P - 1) + [shape[0]]})}
    if P == 4:
        out["grid22"] = dict(split=(0, 1), grid=(2, 2))
        out["grid22-copies"] = dict(split=(0, None), grid=(2, 2))
    return out


def values(dtype="float64", seed=0, nans=False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(SHAPE) * 10
    if dtype != "float64":
        a = a.astype(dtype)
    if nans:
        a[rng.random(SHAPE) < 0.05] = np.nan
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


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_quantiles_match_numpy(dtype):
    a = values(dtype, seed=1)
    for name, kw in layouts().items():
        x = da.asarray(a, **kw)
        for what, call in QUANTILE_CALLS:
            rtol = 1e-5 if dtype == "float32" else 1e-12
            want = np.asarray(call(np, a))
            got = call(np, x)
            assert got.shape == want.shape, (what, name, got.shape, want.shape)
            assert_equal(got, want, rtol=rtol, check_dtype=False, err_msg=f"{what} {name} {dtype}")


def test_median_of_nothing_is_nan_and_quantile_of_nothing_raises_as_in_numpy():
    for shape, kw in (((0, 3), dict(axis=0)), ((4, 0), dict(axis=1, keepdims=True)), ((2, 0), dict())):
        x = da.zeros(shape, split=0)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = np.median(np.zeros(shape), **kw)
        assert_equal(da.asarray(np.asarray(np.median(x, **kw).gather())), np.asarray(want), check_dtype=False)
        assert_raises_everywhere(IndexError, np.quantile, x, 0.5, match="quantile", **kw)


def test_quantiles_with_nans_are_nan_where_numpy_is():
    a = values(nans=True, seed=2)
    for name, kw in layouts().items():
        x = da.asarray(a, **kw)
        for what, call in QUANTILE_CALLS:
            assert_equal(call(np, x), np.asarray(call(np, a)), check_dtype=False, err_msg=f"{what} {name}")


def test_quantile_bad_input_raises_everywhere():
    x = da.asarray(values(), split=0)
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


def test_histogram_matches_numpy_and_counts_copies_once():
    a = values(seed=3)
    w = np.abs(values(seed=4))
    for name, kw in layouts().items():
        x, wx = da.asarray(a, **kw), da.asarray(w, **kw)
        for what, call in HISTOGRAM_CALLS:
            (counts, edges), (want_counts, want_edges) = call(np, x, wx), call(np, a, w)
            agree_value(counts, want_counts, f"counts {what} {name}")
            agree_value(edges, want_edges, f"edges {what} {name}")


def test_histogram_bad_bins_raise_everywhere():
    x = da.asarray(values(), split=0)
    assert_raises_everywhere(ValueError, np.histogram, x, bins=0, match="positive")
    assert_raises_everywhere(ValueError, np.histogram, x, bins=[3.0, 1.0, 2.0], match="monoton")


EINSUM_CALLS = [
    ("transpose", "ijk->kji", 1), ("sum all", "ijk->", 1), ("sum axis", "ijk->ik", 1), ("implicit", "ijk", 1),
    ("elementwise", "ijk,ijk->ijk", 2), ("contract last", "ijk,ijk->ij", 2), ("batched matmul", "ijk,ikl->ijl", 2),
    ("outer", "ij,kl->ijkl", 2), ("dot", "ijk,ijk->", 2),
]


@pytest.mark.parametrize("what,subscripts,nops", EINSUM_CALLS, ids=[c[0] for c in EINSUM_CALLS])
def test_einsum_matches_numpy(what, subscripts, nops):
    a, b = values(seed=5), values(seed=6)
    operands = {  # shapes the subscripts need
        "batched matmul": (a, b.transpose(0, 2, 1)), "outer": (a[:, :, 0], b[:3, :2, 0]),
    }.get(what, (a, b)[:nops])
    for name, kw in layouts().items():
        xs = [da.asarray(o, **(kw if o.shape[0] == SHAPE[0] and o.ndim == 3 else dict(split=0))) for o in operands]
        assert_equal(np.einsum(subscripts, *xs), np.asarray(np.einsum(subscripts, *operands)), rtol=1e-10,
                     check_dtype=False, err_msg=f"{what} {name}")


def test_einsum_unsupported_forms_raise_everywhere():
    x = da.asarray(values(), split=0)
    assert_raises_everywhere(TypeError, np.einsum, "...k->k", x, match="einsum")
    assert_raises_everywhere(TypeError, np.einsum, "iik->k", x[:7], match="einsum")
    assert_raises_everywhere(ValueError, np.einsum, "ij->i", x, match="einsum")
