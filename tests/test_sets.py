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

from _cases import P, case, generator, layouts, values as seeded

pytestmark = pytest.mark.mpi


def values(shape, dtype, seed=0, distinct=5) -> np.ndarray:
    """Integers in ``[0, distinct)`` (many repeats); floats with about 10% NaNs and 10% -0.0."""
    if np.dtype(dtype).kind == "b":
        return seeded(shape, dtype, seed)
    a = seeded(shape, "int64", seed, low=0, high=distinct).astype(dtype)
    if a.dtype.kind == "f" and a.size:
        rng = generator(seed, "specials")
        a[rng.random(shape) < 0.1] = np.nan
        a[rng.random(shape) < 0.1] = -0.0
    return a


def named(shape) -> list:
    """1-d: split, replicated, all on the last rank, all on the first (3+ ranks), a 2x2 grid holding copies;
    2-d: split along each axis, replicated, 2x2 grids both ways."""
    if len(shape) == 2:
        return layouts(shape, "split0", "split1", "replicated", "grid2x2", "grid2x2-10")
    out = layouts(shape, "split0", "replicated", "last0")
    if P > 2:
        out.append(case("first0", shape, "uneven", "empty", split=0, sizes={0: [shape[0]] + [0] * (P - 1)}))
    if P == 4:
        out.append(case("grid2x2-0n", shape, "grid", "copies", split=(0, None), grid=(2, 2)))
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


@pytest.mark.parametrize("layout", [pytest.param(c, id=f"{n}-{c}") for n in [0, 1, 7, 13, 100] for c in named((n,))])
@pytest.mark.parametrize("dtype", ["float64", "int64", "uint8", "bool", "float32"])
def test_unique_1d(dtype, layout):
    a = values(layout.shape, dtype)
    check(a, layout.array(a))


@pytest.mark.parametrize("layout", [pytest.param(c, id=f"{'x'.join(map(str, shape))}-{c}")
                                    for shape in [(7, 5), (3, 11)] for c in named(shape)])
@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_unique_2d(dtype, layout):
    a = values(layout.shape, dtype, seed=1)
    check(a, layout.array(a))


SPECIAL = {"int16-constant": np.full(13, 3, dtype=np.int16), "nans": np.full(13, np.nan),
           "decreasing": np.arange(50.0)[::-1].copy(),
           "signed-zeros-infs": np.array([np.nan, 1.0, np.nan, 1.0, -0.0, 0.0, np.inf, -np.inf] * 3)}


@pytest.mark.parametrize("name,layout", [pytest.param(k, c, id=f"{k}-{c}") for k, a in SPECIAL.items()
                                         for c in named(a.shape)])
def test_unique_special(name, layout):
    a = SPECIAL[name]
    check(a, layout.array(a))


def test_unique_result_is_distributed():
    a = values((100,), "int64", distinct=60)
    x = da.asarray(a, split=0)
    got = unique_values(x)
    assert got.ndim == 1
    assert sum(got.layout.sizes[0]) == got.shape[0] == np.unique(a).size
    if P > 1:
        assert not got.layout.is_replicated


def test_bad_input():
    with pytest.raises(TypeError):
        unique_values(np.arange(3))
