"""unique_all / unique_counts / unique_inverse / unique_values against NumPy on every rank count.

NumPy 2's ``unique_values`` may return values unsorted (hash based) and its
``unique_inverse`` orders NaNs arbitrarily; the oracle is ``numpy.unique_all``
(sorted, stable, every NaN distinct), which the Array API results must equal.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray._api.sets import unique_all, unique_counts, unique_inverse, unique_values
from darray.testing import assert_equal

pytestmark = pytest.mark.mpi


def nprocs() -> int:
    return da.default_communicator().size


def values(shape, dtype, seed=0, distinct=5) -> np.ndarray:
    rng = np.random.default_rng([seed, len(shape), sum(map(ord, dtype))])
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    a = rng.integers(0, distinct, shape).astype(dt)
    if dt.kind == "f" and a.size:
        a[rng.random(shape) < 0.1] = np.nan
        a[rng.random(shape) < 0.1] = -0.0
    return a


def layouts(shape) -> list[dict]:
    p = nprocs()
    if len(shape) == 1:
        out = [dict(split=0), dict(split=None), dict(split=0, sizes=[0] * (p - 1) + [shape[0]])]
        if p > 2:
            out.append(dict(split=0, sizes=[shape[0]] + [0] * (p - 1)))
        if p == 4:
            out.append(dict(split=(0, None), grid=(2, 2)))
        return out
    out = [dict(split=0), dict(split=1), dict(split=None)]
    if p == 4:
        out += [dict(split=(0, 1), grid=(2, 2)), dict(split=(1, 0), grid=(2, 2))]
    return out


def check(a, x):
    want = np.unique_all(a)
    got = unique_all(x)
    assert got._fields == ("values", "indices", "inverse_indices", "counts")
    assert_equal(got.values, want.values, err_msg="values")
    assert_equal(got.indices, want.indices.astype(np.int64), err_msg="indices")
    assert_equal(got.inverse_indices, want.inverse_indices.astype(np.int64).reshape(a.shape), err_msg="inverse")
    assert_equal(got.counts, want.counts.astype(np.int64), err_msg="counts")
    assert_equal(unique_values(x), want.values)
    values_, counts = unique_counts(x)
    assert_equal(values_, want.values)
    assert_equal(counts, want.counts.astype(np.int64))
    values_, inverse = unique_inverse(x)
    assert_equal(values_, want.values)
    assert_equal(inverse, want.inverse_indices.astype(np.int64).reshape(a.shape))


@pytest.mark.parametrize("n", [0, 1, 7, 13, 100])
@pytest.mark.parametrize("dtype", ["float64", "int64", "uint8", "bool", "float32"])
def test_unique_1d(n, dtype):
    a = values((n,), dtype)
    for kw in layouts((n,)):
        check(a, da.asarray(a, **kw))


@pytest.mark.parametrize("shape", [(7, 5), (3, 11)])
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_unique_2d(shape, dtype):
    a = values(shape, dtype, seed=1)
    for kw in layouts(shape):
        check(a, da.asarray(a, **kw))


def test_unique_special():
    cases = [np.full(13, 3, dtype=np.int16), np.full(13, np.nan), np.arange(50.0)[::-1].copy(),
             np.array([np.nan, 1.0, np.nan, 1.0, -0.0, 0.0, np.inf, -np.inf] * 3)]
    for a in cases:
        for kw in layouts(a.shape):
            check(a, da.asarray(a, **kw))


def test_unique_result_is_distributed():
    a = values((100,), "int64", distinct=60)
    x = da.asarray(a, split=0)
    got = unique_values(x)
    assert got.ndim == 1
    assert sum(got.layout.sizes[0]) == got.shape[0] == np.unique(a).size
    if nprocs() > 1:
        assert not got.layout.is_replicated


def test_bad_input():
    with pytest.raises(TypeError):
        unique_values(np.arange(3))
