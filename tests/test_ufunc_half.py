"""NumPy's ufuncs on small-integer DArrays give NumPy's float16, as darray's own functions do.

``numpy.sqrt(int8_array)`` is float16 in NumPy, and on a DArray of NumPy blocks
too, with NumPy's values bit for bit (at 1-4 ranks); ``darray.sqrt`` agrees.
"""

import numpy as np
import pytest

import darray as da
from _cases import layouts

pytestmark = [pytest.mark.mpi, pytest.mark.numpy_only]  # NumPy ufuncs on a DArray run on NumPy blocks only

UFUNCS = [np.sqrt, np.sin, np.exp, np.log1p, np.cbrt, np.modf, np.frexp]


@pytest.mark.parametrize("layout", layouts((13,), "replicated", "split0", "uneven0", "first-empty0"), ids=str)
@pytest.mark.parametrize("dtype", ["int8", "uint8", "bool"])
@pytest.mark.parametrize("ufunc", UFUNCS, ids=lambda f: f.__name__)
def test_small_integers_compute_in_float16(ufunc, dtype, layout):
    g = (np.arange(13) % 7).astype(dtype)
    x = layout.array(g)
    got = ufunc(x)
    want = ufunc(g)
    for r, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert r.dtype == w.dtype
        np.testing.assert_array_equal(r.gather(), w)
    if ufunc.nout == 1 and dtype != "bool":  # darray's own function takes numbers only (the standard)
        assert got.dtype == getattr(da, ufunc.__name__)(x).dtype == np.float16


def test_an_explicit_dtype_is_kept():
    x = da.asarray(np.arange(5, dtype=np.int8))
    assert np.sqrt(x, dtype=np.float64).dtype == np.float64
    assert np.add(x, x).dtype == np.int8
