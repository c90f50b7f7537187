"""unique_* of complex arrays (darray/_api/sets.py ``_unique_complex``) against NumPy, at 1-4 ranks."""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray.testing import assert_equal

from _cases import layouts, param, values as seeded

pytestmark = pytest.mark.mpi


def values(shape: tuple[int, ...], dtype: str, seed: int = 7) -> np.ndarray:
    """Small integer parts (many repeats), a NaN in each part, and a signed zero."""
    z = (seeded(shape, "int64", seed, low=-2, high=3, key="real")
         + 1j * seeded(shape, "int64", seed, low=0, high=2, key="imag")).astype(dtype)
    flat = z.reshape(-1)
    if flat.size > 5:
        flat[[1, 3, 4]] = [complex(np.nan, 1), complex(1, np.nan), complex(-0.0, 0)]
    return z


CASES = [((13,), "complex128"), ((7, 5), "complex64"), ((0,), "complex128"), ((1,), "complex64")]


#: Layouts by ndim: cut along axis 0, balanced and uneven with an empty block; 2-d: along axis 1 and a 2x2 grid
#: (4 ranks).
CUTS = {1: ("split0", "uneven0"), 2: ("split0", "uneven0", "split1", "grid2x2")}


@pytest.mark.parametrize("shape,dtype,layout", [param(c, shape, dtype, prefix=f"{'x'.join(map(str, shape))}-{dtype}")
                                                for shape, dtype in CASES for c in layouts(shape, *CUTS[len(shape)])])
def test_unique_all_of_complex(shape, dtype, layout):
    z = values(shape, dtype)
    want = np.unique_all(z)
    got = da.unique_all(layout.array(z))
    assert_equal(got.values, want.values, err_msg="values")
    assert_equal(got.counts, want.counts, err_msg="counts")
    assert_equal(got.indices, want.indices, err_msg="indices")
    assert_equal(got.inverse_indices, want.inverse_indices, err_msg="inverse")
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
