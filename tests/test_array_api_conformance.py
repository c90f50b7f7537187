"""Array API 2024.12 conformance points (issue #15 item 8), at 1-4 ranks.

The rules the official array-api-tests suite checks where darray once differed:
``finfo``'s field types, ``expand_dims``'s signature, ``vecdot``'s dtype and
conjugation, ``unique_all``'s fields, and the special cases (NaN, infinities,
signed zeros) of the arithmetic operators with arrays and Python scalars,
reflected and in place. The oracle is array_api_strict on the same input
(NumPy underneath) and, where NumPy itself departs from the standard
(``x ** 0.5``: numpy/numpy#21213), the standard's rule written out.

``floor_divide`` with an infinite operand follows the standard (``inf // 2`` is
``inf``, ``1.0 // -inf`` is ``-0.0``), where NumPy and Python give NaN and -1.0.
"""

from __future__ import annotations

import inspect
import warnings

import array_api_strict as xs
import numpy as np
import pytest

import darray as da
from darray.testing import assert_equal, assert_raises_everywhere, backend_dtypes

from _cases import each, layouts, param

pytestmark = pytest.mark.mpi

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, -3.0]
OPERATORS = {"add": "__add__", "subtract": "__sub__", "multiply": "__mul__", "divide": "__truediv__",
             "floor_divide": "__floordiv__", "remainder": "__mod__", "pow": "__pow__"}


#: Balanced, replicated, uneven with an empty block and (at 4 ranks) a 2x2 grid of copies along axis 0.
NAMES = ("split0", "replicated", "uneven0", "grid2x2-0n")
#: The arrays of every pair of special values (length len(SPECIAL)**2).
PAIRS_LAYOUTS = layouts((len(SPECIAL) ** 2,), *NAMES)


def pairs(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of special values: x1 and x2 of length len(SPECIAL)**2."""
    a = np.array([u for u in SPECIAL for _ in SPECIAL], dtype=dtype)
    b = np.array([v for _ in SPECIAL for v in SPECIAL], dtype=dtype)
    return a, b


def assert_same_zeros(x: da.DArray, expected: np.ndarray, what: str) -> None:
    """Values (NaN equal) and the sign of every non-NaN result, on every rank."""
    assert_equal(x, expected, err_msg=what)
    assert_equal(da.signbit(x) & ~da.isnan(x), np.signbit(expected) & ~np.isnan(expected), err_msg=f"{what}: signs")


def strict(op: str, a, b):
    """``a op b`` through array_api_strict (arrays of NumPy values or Python scalars)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        left = xs.asarray(a) if isinstance(a, np.ndarray) else a
        right = xs.asarray(b) if isinstance(b, np.ndarray) else b
        if isinstance(left, float):
            result = np.asarray(getattr(right, "__r" + op[2:])(left))
        else:
            result = np.asarray(getattr(left, op)(right))
        if op == "__floordiv__":  # NumPy (under array_api_strict) departs here; the standard is floor(a / b)
            result = np.where(np.isinf(a) | np.isinf(b), np.floor(np.divide(a, b)), result).astype(result.dtype)
        return result


def standard_pow_half(a: np.ndarray) -> np.ndarray:
    """``a ** 0.5`` by the standard's special cases: NumPy's pow with an array of exponents (no sqrt shortcut)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.power(a, np.full(a.shape, 0.5, dtype=a.dtype))


@pytest.mark.parametrize("layout", PAIRS_LAYOUTS, ids=str)
@pytest.mark.parametrize("name", list(OPERATORS))
def test_operator_special_cases(name, layout):
    """x1 op x2 for every pair of special values: array-array, array-scalar, scalar-array, in place; float32 and
    float64."""
    op = OPERATORS[name]
    iop = "__i" + op[2:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for dtype in ["float32", "float64"]:
            a, b = pairs(dtype)
            x, y = layout.array(a), layout.array(b)
            assert_same_zeros(getattr(x, op)(y), strict(op, a, b), f"{name} {dtype}")
            inplace = layout.array(a.copy())  # asarray shares a NumPy input's buffer
            assert getattr(inplace, iop)(y) is inplace
            assert_same_zeros(inplace, strict(op, a, b), f"{iop} {dtype}")
            if layout.id == "split0":
                continue  # scalar forms are local to a block: the replicated and uneven layouts suffice
            for s in SPECIAL[:8] + [2.5]:
                want = standard_pow_half(a) if name == "pow" and s == 0.5 else strict(op, a, s)
                assert_same_zeros(getattr(x, op)(s), want, f"{name}(x, {s}) {dtype}")
                assert_same_zeros(getattr(x, "__r" + op[2:])(s), strict(op, s, a), f"{name}({s}, x) {dtype}")
                inplace = layout.array(a.copy())  # asarray shares a NumPy input's buffer
                getattr(inplace, iop)(s)
                assert inplace.dtype == np.dtype(dtype)
                assert_same_zeros(inplace, want, f"{iop}({s}) {dtype}")


@pytest.mark.parametrize("layout", layouts((8,), *NAMES), ids=str)
def test_pow_half_follows_the_standard(layout):
    """pow(-inf, 0.5) is +inf and pow(-0, 0.5) is +0 for every spelling of the exponent 0.5; float32 and float64."""

    def check(dtype):
        a = np.array([-np.inf, -0.0, 0.0, 4.0, np.inf, -1.0, np.nan, 0.25], dtype=dtype)
        want = np.array([np.inf, 0.0, 0.0, 2.0, np.inf, np.nan, np.nan, 0.5], dtype=dtype)
        x = layout.array(a)
        half = da.asarray(0.5, dtype=dtype)
        for got, what in ((x ** 0.5, "x ** 0.5"), (da.pow(x, 0.5), "pow(x, 0.5)"), (x ** half, "x ** 0-d"),
                          (da.pow(x, da.full(a.shape, 0.5, dtype=dtype, **layout.kw)), "pow(x, full)")):
            assert_same_zeros(got, want, what)
        inplace = layout.array(a.copy())  # asarray shares a NumPy input's buffer
        inplace **= 0.5
        assert_same_zeros(inplace, want, "x **= 0.5")
        inplace = layout.array(a.copy())  # asarray shares a NumPy input's buffer
        inplace **= half
        assert_same_zeros(inplace, want, "x **= 0-d")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        each(["float32", "float64"], check)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_finfo(dtype):
    """The standard's fields and types, equal to array_api_strict's; a dtype or an array as argument."""
    want = xs.finfo(getattr(xs, dtype))
    for arg in (getattr(da, dtype), np.dtype(dtype), da.ones(7, dtype=dtype, split=0)):
        got = da.finfo(arg)
        assert type(got.bits) is int and got.bits == want.bits
        for field in ("eps", "max", "min", "smallest_normal"):
            assert type(getattr(got, field)) is float, field
            assert getattr(got, field) == getattr(want, field), field
        assert got.dtype == np.dtype(str(want.dtype).split(".")[-1])  # the real dtype: float32 for complex64
    assert da.finfo(dtype).tiny == np.finfo(dtype).tiny  # NumPy's other fields stay
    assert da.finfo(dtype).precision == np.finfo(dtype).precision


def test_finfo_and_iinfo_refuse_other_kinds():
    assert_raises_everywhere(ValueError, da.finfo, da.int32, match="finfo")
    assert_raises_everywhere(ValueError, da.iinfo, da.float32, match="iinfo")
    info = da.iinfo(da.int8)
    assert (type(info.bits), type(info.max), type(info.min)) == (int, int, int)


def test_expand_dims_signature():
    """2024.12: ``expand_dims(x, /, axis)``: axis by position or by name."""
    params = inspect.signature(da.expand_dims).parameters
    assert list(params) == ["x", "axis"]
    assert params["x"].kind is inspect.Parameter.POSITIONAL_ONLY
    assert params["axis"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD


EXPAND_SHAPES = [(7,), (13, 3)]


@pytest.mark.parametrize("shape,layout", [param(c, shape, prefix="x".join(map(str, shape)))
                                          for shape in EXPAND_SHAPES for c in layouts(shape, *NAMES)])
def test_expand_dims(shape, layout):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    axes = list(range(-a.ndim - 1, a.ndim + 1)) + [(0, -1), (1, 0)]
    x = layout.array(a)
    for axis in axes:
        assert_equal(da.expand_dims(x, axis), np.expand_dims(a, axis), err_msg=f"axis {axis} by position")
        assert_equal(da.expand_dims(x, axis=axis), np.expand_dims(a, axis), err_msg=f"axis={axis}")
    assert_equal(da.expand_dims(x), np.expand_dims(a, 0))


@pytest.mark.parametrize("shape", EXPAND_SHAPES, ids=lambda shape: "x".join(map(str, shape)))
def test_expand_dims_bad_axis(shape):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    x = da.asarray(a, split=0)
    assert_raises_everywhere(IndexError, da.expand_dims, x, a.ndim + 1, match="expand_dims")
    assert_raises_everywhere(IndexError, da.expand_dims, x, -a.ndim - 2, match="expand_dims")
    assert_raises_everywhere(ValueError, da.expand_dims, x, (0, 0), match="repeated axis")
    assert_raises_everywhere(TypeError, da.expand_dims, x, 1.0, match="expand_dims")


VECDOT_DTYPES = ["int8", "int32", "uint8", "float32", "float64", "complex64", "complex128"]


def vecdot_inputs(dtype: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Small integers (complex: both parts) of shapes (13, 7), (7,), (13, 7), seeded by the dtype."""
    if dtype not in backend_dtypes():
        pytest.fail(f"the local backend lacks {dtype}")
    rng = np.random.default_rng([7, sum(map(ord, dtype))])
    dt = np.dtype(dtype)

    def draw(shape):
        v = rng.integers(-3, 4, shape) if dt.kind != "u" else rng.integers(0, 4, shape)
        if dt.kind == "c":
            v = v + 1j * rng.integers(-3, 4, shape)
        return v.astype(dt)

    return draw((13, 7)), draw((7,)), draw((13, 7))


@pytest.mark.parametrize("layout", layouts((13, 7), *NAMES), ids=str)
def test_vecdot(layout):
    """conj(x1) . x2 over the broadcast shape, in the promoted dtype (as NumPy's vecdot), every dtype."""

    def check(dtype):
        a, b, c = vecdot_inputs(dtype)
        x, z = layout.array(a), layout.array(c)
        y = da.asarray(b, split=None)
        for got, want, what in ((da.vecdot(x, y), np.vecdot(a, b), "broadcast"),
                                (da.vecdot(x, z), np.vecdot(a, c), "axis -1"),
                                (da.vecdot(x, z, axis=0), np.vecdot(a, c, axis=0), "axis 0 (cut)"),
                                (da.vecdot(x, z, axis=-2), np.vecdot(a, c, axis=-2), "axis -2")):
            assert_equal(got, want, err_msg=what)

    each(VECDOT_DTYPES, check)


def test_vecdot_0d_and_bad_input():
    def check(dtype):
        a, b, _ = vecdot_inputs(dtype)
        v = da.asarray(b, split=0)
        assert_equal(da.vecdot(v, v), np.vecdot(b, b))  # 0-d result, reduced over a cut axis
        assert_raises_everywhere(ValueError, da.vecdot, da.asarray(a, split=0), da.asarray(a[:, :3], split=0),
                                 match="vecdot")

    each(VECDOT_DTYPES, check)


@pytest.mark.parametrize("layout", layouts((7,), *NAMES), ids=str)
def test_vecdot_conjugates_the_first_argument(layout):
    a = np.array([1 + 2j, 3 - 1j, -2j, 0.5 + 0j, 4 - 4j, 1j, 2 + 0j])
    b = np.array([1j, 2 + 0j, 1 - 1j, -3 + 0j, 1 + 1j, 1j, 0.5 - 2j])
    want = np.sum(np.conj(a) * b)
    x, y = layout.array(a), layout.array(b)
    assert_equal(da.vecdot(x, y), want)
    assert_equal(da.vecdot(y, x), np.conj(want))
    assert_equal(x @ y, np.sum(a * b))  # matmul does not conjugate


@pytest.mark.parametrize("layout", layouts((13, 3), *NAMES), ids=str)
def test_unique_all(layout):
    """Four named fields as array_api_strict's: sorted values, first occurrences, inverse shaped like x, counts;
    int16, float32 and float64."""

    def check(dtype):
        rng = np.random.default_rng([3, sum(map(ord, dtype))])
        a = rng.integers(0, 5, (13, 3)).astype(dtype)
        if np.dtype(dtype).kind == "f":
            a[0, 0] = a[5, 1] = np.nan
            a[2, 2] = -0.0
        want = xs.unique_all(xs.asarray(a))
        got = da.unique_all(layout.array(a))
        assert got._fields == ("values", "indices", "inverse_indices", "counts")
        assert_equal(got.values, np.asarray(want.values), err_msg="values")
        assert_equal(got.indices, np.asarray(want.indices), err_msg="indices")
        assert_equal(got.inverse_indices, np.asarray(want.inverse_indices), err_msg="inverse")
        assert got.inverse_indices.shape == a.shape
        assert_equal(got.counts, np.asarray(want.counts), err_msg="counts")

    each(["int16", "float32", "float64"], check)
