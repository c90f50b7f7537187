"""The standard's special cases where NumPy's kernels differ (darray/_core/special_cases.py), at 1-4 ranks.

The oracle is the standard's rule written out: ``floor(x1 / x2)`` where an
operand of ``floor_divide`` is infinite (NumPy's value elsewhere), and
``exp(z) - 1`` for a complex ``expm1`` argument with an infinite or NaN part.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import darray as da
from darray.testing import assert_equal

from _cases import layouts

pytestmark = pytest.mark.mpi

INF = np.inf
X1 = [INF, INF, -INF, -INF, 1.0, -1.0, 1.0, -1.0, 0.0, -0.0, 1.0, 7.0, INF, 0.0, np.nan, 5.5]
X2 = [2.0, -2.0, 2.0, -2.0, -INF, INF, INF, -INF, 3.0, 3.0, 0.0, 0.1, INF, 0.0, 1.0, -2.0]
#: floor_divide of X1 by X2 by the standard: inf // 2 is inf, 1 // -inf is -0; 7 // 0.1 stays NumPy's 69.
FLOOR = [INF, -INF, -INF, INF, -0.0, -0.0, 0.0, 0.0, 0.0, -0.0, INF, 69.0, np.nan, np.nan, np.nan, -3.0]
Z = [complex(INF, 0), complex(-INF, INF), complex(INF, INF), complex(-INF, np.nan), complex(INF, np.nan),
     complex(np.nan, 0), 1j, complex(0.5, -0.25)]


#: Cut, replicated, uneven with an empty block.
NAMES = ("split0", "replicated", "uneven0")


def assert_signed(x: da.DArray, expected: np.ndarray, what: str) -> None:
    """Values (NaN equal) and the sign of every zero, on every rank."""
    assert_equal(x, expected, err_msg=what)
    assert_equal(da.signbit(x) & ~da.isnan(x), np.signbit(expected) & ~np.isnan(expected), err_msg=f"{what}: signs")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", layouts((len(X1),), *NAMES), ids=str)
def test_floor_divide_with_infinities(layout, dtype):
    """Function, operator, in place, Python scalars on either side and numpy.floor_divide on DArrays."""
    a, b, want = (np.array(v, dtype=dtype) for v in (X1, X2, FLOOR))
    x, y = layout.array(a), layout.array(b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_signed(da.floor_divide(x, y), want, "floor_divide(x, y)")
        assert_signed(x // y, want, "x // y")
        inplace = layout.array(a.copy())  # asarray shares a NumPy input's buffer
        inplace //= y
        assert inplace.dtype == np.dtype(dtype)
        assert_signed(inplace, want, "x //= y")
        assert_signed(x // 2.0, np.array([INF, INF, -INF, -INF, 0, -1, 0, -1, 0, -0.0, 0, 3, INF, 0, np.nan, 2],
                                         dtype=dtype), "x // 2.0")
        standard = np.where(np.isinf(b), np.floor(np.divide(1.0, b)), np.floor_divide(1.0, b)).astype(dtype)
        assert_signed(1.0 // y, standard, "1.0 // y")
        assert_signed(x // -INF, np.floor(np.divide(a, -INF)).astype(dtype), "x // -inf")


@pytest.mark.numpy_only  # NumPy's ufuncs reach DArrays of NumPy blocks only (other blocks: darray's functions)
def test_numpy_ufuncs_on_darrays_give_darrays_values():
    a, b, want = (np.array(v) for v in (X1, X2, FLOOR))
    z = np.array(Z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_signed(np.floor_divide(da.asarray(a, split=0), da.asarray(b, split=0)), want, "numpy.floor_divide")
        assert_equal(np.expm1(da.asarray(z, split=0)), np.where(np.isfinite(z), np.expm1(z), np.exp(z) - 1))


@pytest.mark.parametrize("dtype", ["int64", "uint8"])
@pytest.mark.parametrize("layout", layouts((16,), *NAMES), ids=str)
def test_floor_divide_of_integers_is_numpy(layout, dtype):
    a = np.arange(-7, 9).astype(dtype)
    b = np.array([3, 2, 5, 7] * 4, dtype=dtype)
    assert_equal(layout.array(a) // layout.array(b), a // b)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("layout", layouts((len(Z),), *NAMES), ids=str)
def test_expm1_of_complex_infinities(layout, dtype):
    z = np.array(Z, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.where(np.isfinite(z), np.expm1(z), np.exp(z) - 1).astype(dtype)
        x = layout.array(z)
        assert_equal(da.expm1(x), want, err_msg="expm1")
    assert want[0] == complex(INF, 0) and want[1] == -1  # the standard's values, spelled out
