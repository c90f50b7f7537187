"""unique_* of complex arrays (darray/_api/sets.py ``_unique_complex``) against NumPy, at 1-4 ranks."""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray.testing import assert_equal, uneven_sizes

pytestmark = pytest.mark.mpi


def values(shape: tuple[int, ...], dtype: str, seed: int = 7) -> np.ndarray:
    """Small integer parts (many repeats), a NaN in each part, and a signed zero."""
    rng = np.random.default_rng(seed)
    z = (rng.integers(-2, 3, shape) + 1j * rng.integers(0, 2, shape)).astype(dtype)
    flat = z.reshape(-1)
    if flat.size > 5:
        flat[[1, 3, 4]] = [complex(np.nan, 1), complex(1, np.nan), complex(-0.0, 0)]
    return z


def layouts(shape: tuple[int, ...]) -> list[tuple[str, dict]]:
    p = da.default_communicator().size
    out = [("split0", dict(split=0)), ("uneven-empty", dict(split=0, sizes={0: uneven_sizes(shape[0], p)}))]
    if len(shape) == 2:
        out.append(("split1", dict(split=1)))
        if p == 4:
            out.append(("grid2x2", dict(split=(0, 1), grid=(2, 2))))
    return out


CASES = [((13,), "complex128"), ((7, 5), "complex64"), ((0,), "complex128"), ((1,), "complex64")]


@pytest.mark.parametrize("shape,dtype", CASES, ids=[f"{s}-{d}" for s, d in CASES])
def test_unique_all_of_complex(shape, dtype):
    z = values(shape, dtype)
    want = np.unique_all(z)
    for name, kw in layouts(shape):
        got = da.unique_all(da.asarray(z, **kw))
        assert_equal(got.values, want.values, err_msg=f"values {name}")
        assert_equal(got.counts, want.counts, err_msg=f"counts {name}")
        assert_equal(got.indices, want.indices, err_msg=f"indices {name}")
        assert_equal(got.inverse_indices, want.inverse_indices, err_msg=f"inverse {name}")
        assert got.values.dtype == np.dtype(dtype)


def test_unique_values_counts_inverse_of_complex():
    """Sorted results (darray's documented order; NumPy's unique_values no longer sorts): numpy.unique is the oracle."""
    z = values((17,), "complex128", seed=3)
    x = da.asarray(z, split=0)
    uniq, inverse, counts = np.unique(z, return_inverse=True, return_counts=True, equal_nan=False)
    assert_equal(da.unique_values(x), uniq)
    got = da.unique_counts(x)
    assert_equal(got.values, uniq)
    assert_equal(got.counts, counts)
    got = da.unique_inverse(x)
    assert_equal(got.values, uniq)
    assert_equal(got.inverse_indices, inverse)
