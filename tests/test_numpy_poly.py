"""NumPy's polynomials, vectorize, apply_along_axis/apply_over_axes, kron, unwrap, i0, kaiser and emath on DArrays.

Each function is compared with NumPy on the same global data, parametrized over
layouts of ``tests/_cases.py`` (split along an axis, uneven blocks with an empty one, everything on
the last rank, replicated, a 2x2 grid at 4 ranks), called as ``darray.f`` and
as ``numpy.f`` (``__array_function__``) where NumPy dispatches. Bad input
raises NumPy's exception type with one message on every rank (issue #15).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import darray as da
from darray import DArray
from darray.testing import assert_raises_everywhere, assert_results_equal

from _cases import P, case, layouts, values

pytestmark = pytest.mark.mpi


def named(shape) -> dict[str, dict]:
    """Layout id -> keywords for an array of ``shape``: split along the first axis (even, uneven, all on the last
    rank), replicated, along the second axis, a 2x2 grid at 4 ranks (copies along its second axis for 1-d)."""
    cuts = ("uneven0", "last0") if P > 1 else ()
    out = layouts(shape, "split0", "replicated", *cuts, *(("split1", "grid2x2") if len(shape) > 1 else ()))
    if P == 4 and len(shape) == 1:
        out.append(case("grid2x2-0n", shape, "grid", "copies", split=(0, None), grid=(2, 2)))
    return {c.id: c.kw for c in out}


LAYOUTS_1D = named((13,))
LAYOUTS_2D = named((7, 5))


def spell(name: str, spelling: str):
    return getattr(da if spelling == "darray" else np, name)


# ---------------------------------------------------------------- polyval / polyfit
@pytest.mark.parametrize("dtype, spelling", [("float64", "darray"), ("int64", "numpy"), ("bool", "darray"),
                                             ("complex128", "numpy")])
@pytest.mark.parametrize("lname", list(LAYOUTS_2D))
def test_polyval(lname, dtype, spelling):
    g = values((7, 5), dtype)
    x = da.asarray(g, **LAYOUTS_2D[lname])
    for p in ([2.0, -1.0, 0.5], [3, 0, 1], np.array([1.5 + 1j, 2.0]), [7]):
        assert_results_equal(spell("polyval", spelling)(p, x), np.polyval(p, g), f"{spelling}.polyval {p} {lname}")
    assert_results_equal(spell("polyval", spelling)(da.asarray([1.0, 2.0, 3.0], split=0), x), np.polyval([1.0, 2.0, 3.0], g),
          f"distributed coefficients {lname}")


def test_polyval_array_likes_and_poly1d():
    p = da.asarray([1.0, 0.0, -2.0], split=0)
    assert_results_equal(da.polyval(p, [0.0, 1.0, 3.0]), np.polyval([1.0, 0.0, -2.0], [0.0, 1.0, 3.0]), "list x")
    assert_results_equal(da.polyval(p, 2.0), np.polyval([1.0, 0.0, -2.0], 2.0), "scalar x")
    composed = da.polyval(p, np.poly1d([1.0, 1.0]))
    assert isinstance(composed, np.poly1d) and composed == np.polyval([1.0, 0.0, -2.0], np.poly1d([1.0, 1.0]))
    q = np.poly1d([2.0, 0.0, 1.0])
    x = da.asarray(np.arange(13.0), split=0)
    assert_results_equal(q(x), q(np.arange(13.0)), "numpy.poly1d at a DArray")
    dq = da.poly1d(da.asarray([2.0, 0.0, 1.0], split=0))
    assert isinstance(dq, np.poly1d) and dq == q
    assert_results_equal(dq(x), q(np.arange(13.0)), "darray.poly1d at a DArray")
    assert da.poly1d(da.asarray([1.0, 2.0]), r=True) == np.poly1d([1.0, 2.0], r=True)


def test_polyval_bad_input():
    x = da.arange(5.0)
    assert_raises_everywhere(ValueError, da.polyval, [[1.0, 2.0]], x, match="polyval")
    assert_raises_everywhere(TypeError, da.polyval, 1.0, x, match="polyval")
    assert_raises_everywhere(TypeError, da.polyval, [1.0], None, match="polyval")


def _fit_args(n: int, k: int | None, seed: int):
    rng = np.random.default_rng(seed)
    x = np.linspace(-1.0, 2.0, n)
    c = np.array([0.5, -1.0, 2.0, 3.0])
    y = np.polyval(c, x)
    y = y + 0.01 * rng.standard_normal(n) if k is None else \
        y[:, None] * np.arange(1, k + 1) + 0.01 * rng.standard_normal((n, k))
    return x, y, rng.random(n) + 0.5


@pytest.mark.parametrize("ycols, spelling", [(None, "darray"), (2, "numpy")], ids=["y1d-darray", "y2d-numpy"])
@pytest.mark.parametrize("lname", list(LAYOUTS_1D))
def test_polyfit(lname, ycols, spelling):
    xg, yg, wg = _fit_args(13, ycols, 1)
    kw = LAYOUTS_1D[lname]
    x, w = da.asarray(xg, **kw), da.asarray(wg, split=0)
    y = da.asarray(yg, **(kw if ycols is None else dict(split=0)))
    fit = spell("polyfit", spelling)
    for deg in (0, 1, 5):
        assert_results_equal(fit(x, y, deg), np.polyfit(xg, yg, deg), f"{spelling}.polyfit deg {deg} {lname}", rtol=1e-8)
    assert_results_equal(fit(x, y, 3, w=w), np.polyfit(xg, yg, 3, w=wg), f"weights {lname}", rtol=1e-8)
    got, want = fit(x, y, 3, full=True), np.polyfit(xg, yg, 3, full=True)
    for i in (0, 1, 3):
        assert_results_equal(got[i], want[i], f"full[{i}] {lname}", rtol=1e-8)
    assert got[2] == want[2] and got[4] == want[4], (got[2], got[4])
    for cov in (True, "unscaled"):
        assert_results_equal(fit(x, y, 2, cov=cov, w=w), np.polyfit(xg, yg, 2, cov=cov, w=wg), f"cov={cov} {lname}", rtol=1e-7)


def test_polyfit_variants():
    xg, yg, _ = _fit_args(13, None, 2)
    x = da.asarray(xg, split=0)
    assert_results_equal(da.polyfit(list(xg), x * 2.0, 2), np.polyfit(xg, 2.0 * xg, 2), "array-like x", rtol=1e-8, atol=1e-12)
    assert_results_equal(da.polyfit(x, list(yg), 2, rcond=1e-3), np.polyfit(xg, yg, 2, rcond=1e-3), "rcond, list y", rtol=1e-8)
    xi = np.arange(13) % 5
    assert_results_equal(da.polyfit(da.asarray(xi, split=0), da.asarray(xi * 3, split=0), 1), np.polyfit(xi, xi * 3, 1),
          "integers", rtol=1e-8, atol=1e-12)
    yc = yg + 1j * xg
    assert_results_equal(da.polyfit(x, da.asarray(yc, split=0), 3), np.polyfit(xg, yc, 3), "complex y", rtol=1e-8)
    assert_results_equal(da.polyfit(da.asarray(xg.astype(np.float32)), yg.astype(np.float32), 2),
          np.polyfit(xg.astype(np.float32), yg.astype(np.float32), 2), "float32", rtol=1e-3)
    # rank deficient: only 3 distinct x for degree 4 (NumPy warns; full=True reports the rank)
    xd = np.arange(13.0) % 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        da.polyfit(da.asarray(xd, split=0), xd, 4)
    assert any(issubclass(c.category, np.exceptions.RankWarning) for c in caught)
    got, want = da.polyfit(da.asarray(xd, split=0), xd, 4, full=True), np.polyfit(xd, xd, 4, full=True)
    assert got[2] == want[2] and got[1].shape == want[1].shape == (0,)
    assert_results_equal(got[3], want[3], "singular values", rtol=1e-8, atol=1e-12)


def test_polyfit_bad_input():
    x = da.arange(6.0)
    assert_raises_everywhere(ValueError, da.polyfit, x, x, -1, match="deg >= 0")
    assert_raises_everywhere(TypeError, da.polyfit, da.ones((2, 3)), x, 1, match="1D vector")
    assert_raises_everywhere(TypeError, da.polyfit, da.zeros(0), da.zeros(0), 1, match="non-empty")
    assert_raises_everywhere(TypeError, da.polyfit, x, da.ones((6, 2, 2)), 1, match="1D or 2D")
    assert_raises_everywhere(TypeError, da.polyfit, x, da.ones(5), 1, match="same length")
    assert_raises_everywhere(TypeError, da.polyfit, x, x, 1, w=da.ones((6, 1)), match="weights")
    assert_raises_everywhere(TypeError, da.polyfit, x, x, 1, w=da.ones(5), match="same length")
    assert_raises_everywhere(TypeError, da.polyfit, x * 1j, x, 1, match="complex")
    assert_raises_everywhere(TypeError, da.polyfit, x, x, "two", match="deg")
    assert_raises_everywhere(ValueError, np.polyfit, x, x, 5, cov=True, match="exceed order")


# ---------------------------------------------------------------- small polynomial functions
SMALL_CASES = {
    "polyadd": ([1.0, 2.0, 3.0], [4.0, 5.0]),
    "polysub": ([1, 2], [4, 5, 6]),
    "polymul": ([1.0, 2.0, 3.0], [1.0, -1.0]),
    "polydiv": ([1.0, 0.0, -1.0, 2.0], [1.0, 2.0]),
    "polyder": ([1.0, 2.0, 3.0, 4.0], 2),
    "polyint": ([3.0, 2.0, 1.0],),
    "poly": ([1.0, 2.0, -3.0],),
    "roots": ([1.0, -6.0, 11.0, -6.0],),
}


@pytest.mark.parametrize("split, spelling", [(0, "darray"), (None, "numpy")], ids=["split0-darray", "replicated-numpy"])
@pytest.mark.parametrize("name", list(SMALL_CASES))
def test_small_polynomial_functions(name, split, spelling):
    args = SMALL_CASES[name]
    dargs = [da.asarray(a, split=split) if isinstance(a, list) else a for a in args]
    want = getattr(np, name)(*args)
    got = spell(name, spelling)(*dargs)
    if name == "roots":
        got, want = da.sort(got), np.sort(want)
    assert_results_equal(got, want, f"{spelling}.{name}", rtol=1e-10, atol=1e-12)


def test_small_polynomial_variants():
    c = da.asarray([1.0, 2.0, 3.0], split=0)
    assert_results_equal(da.polyint(c, m=2, k=[1.0, 2.0]), np.polyint([1.0, 2.0, 3.0], m=2, k=[1.0, 2.0]), "polyint m, k")
    assert_results_equal(np.polyder(c, m=3), np.polyder([1.0, 2.0, 3.0], m=3), "polyder past the degree")
    assert_results_equal(da.polyadd([1, 2], [3]), np.polyadd([1, 2], [3]), "lists only")
    m = np.array([[2.0, 0.0], [0.0, 3.0]])
    assert_results_equal(da.poly(da.asarray(m, split=0)), np.poly(m), "poly of a square matrix", rtol=1e-10)
    assert isinstance(da.polyadd(np.poly1d([1.0, 2.0]), c), np.poly1d)
    assert da.polyadd(np.poly1d([1.0, 2.0]), c) == np.polyadd(np.poly1d([1.0, 2.0]), [1.0, 2.0, 3.0])
    assert_results_equal(da.roots(da.asarray([0.0, 0.0, 1.0, -2.0])), np.roots([0.0, 0.0, 1.0, -2.0]), "leading zeros")


def test_small_polynomial_bad_input():
    assert_raises_everywhere(ValueError, da.roots, da.ones((2, 2)), match="roots")
    assert_raises_everywhere(ValueError, np.polyder, da.arange(3.0), -1, match="polyder")
    assert_raises_everywhere(ValueError, da.poly, da.ones((2, 3)), match="poly")


# ---------------------------------------------------------------- vectorize
def _piecewise(a, b):
    return a * 2 - b if a > b else a + b


@pytest.mark.parametrize("dtype", ["int64", "bool"])
@pytest.mark.parametrize("lname", list(LAYOUTS_2D))
def test_vectorize(lname, dtype):
    g = values((7, 5), dtype)
    x = da.asarray(g, **LAYOUTS_2D[lname])
    f, nf = da.vectorize(_piecewise), np.vectorize(_piecewise)
    assert_results_equal(f(x, 1), nf(g, 1), f"scalar {lname}")
    row = values((5,), dtype, seed=3)
    assert_results_equal(f(x, row), nf(g, row), f"numpy row {lname}")
    assert_results_equal(f(da.asarray(row), x), nf(row, g), f"DArray row first {lname}")
    col = values((7, 1), dtype, seed=4)
    assert_results_equal(f(x, da.asarray(col, split=0)), nf(g, col), f"distributed column {lname}")
    assert_results_equal(da.vectorize(_piecewise, otypes=[np.float32])(x, 1), np.vectorize(_piecewise, otypes=[np.float32])(g, 1),
          f"otypes {lname}")


def test_vectorize_outputs_and_types():
    g = np.arange(13) - 6
    x = da.asarray(g, split=0)
    # the first element decides the dtype (int here, though later results are floats), as in NumPy
    mixed = lambda v: v if v < 0 else v / 2
    assert_results_equal(da.vectorize(mixed)(x), np.vectorize(mixed)(g), "first element's dtype")
    two = lambda v: (v * 2, v > 0)
    assert_results_equal(da.vectorize(two)(x), np.vectorize(two)(g), "two outputs")
    assert_results_equal(da.vectorize(two, otypes="dd")(x), np.vectorize(two, otypes="dd")(g), "two outputs, otypes")
    assert_results_equal(da.vectorize(lambda v: v + 1)(da.asarray(3.0)), np.vectorize(lambda v: v + 1)(3.0), "0-d")
    assert da.vectorize(lambda v: v + 1)([1, 2]).tolist() == [2, 3]  # no DArray: NumPy's vectorize


def test_vectorize_excluded_kwargs_decorator():
    g = np.arange(13.0)
    x = da.asarray(g, split=0)

    def scaled(v, coeffs, scale=1.0):
        return np.polyval(coeffs, v) * scale

    f = da.vectorize(scaled, excluded=["coeffs", 1])
    nf = np.vectorize(scaled, excluded=["coeffs", 1])
    assert_results_equal(f(x, [1.0, 2.0]), nf(g, [1.0, 2.0]), "excluded positional")
    assert_results_equal(f(x, coeffs=[1.0, 0.0], scale=da.asarray(g[::-1].copy(), split=0)),
          nf(g, coeffs=[1.0, 0.0], scale=g[::-1]), "keyword vectorized")

    @da.vectorize(otypes=[np.int64])
    def double(v):
        return 2 * v

    assert_results_equal(double(x), (2 * g).astype(np.int64), "decorator with arguments")
    assert double.otypes is not None and da.vectorize(abs).pyfunc is abs


ROWS_2D = {c.id: c.kw for c in layouts((7, 5), "split0", "replicated", *(("uneven0", "last0") if P > 1 else ()),
                                         "grid2x2-0n")}  # layouts of a (7, 5) array that do not cut the core axis 1


@pytest.mark.parametrize("lname", list(ROWS_2D))
def test_vectorize_signature(lname):
    g = values((7, 5), "float64")
    x = da.asarray(g, **ROWS_2D[lname])
    norm = da.vectorize(lambda v: float(np.sum(v * v)), signature="(n)->()")
    assert_results_equal(norm(x), np.vectorize(lambda v: float(np.sum(v * v)), signature="(n)->()")(g), f"reduce core {lname}")
    pair = lambda v: np.array([v.min(), v.max()])
    assert_results_equal(da.vectorize(pair, signature="(n)->(k)")(x), np.vectorize(pair, signature="(n)->(k)")(g),
          f"new output dimension {lname}")
    assert_results_equal(da.vectorize(np.dot, signature="(n),(n)->()")(x, g[0]),
          np.vectorize(np.dot, signature="(n),(n)->()")(g, g[0]), f"two inputs {lname}")


def test_vectorize_bad_input():
    x = da.asarray(np.arange(12.0).reshape(3, 4), split=1)
    sig = da.vectorize(lambda v: v.sum(), signature="(n)->()")
    if P > 1:
        assert_raises_everywhere(ValueError, sig, x, match="core dimension is cut")
    assert_raises_everywhere(TypeError, da.vectorize(lambda a, b: a, signature="(n),(n)->()"), x, match="argument")
    assert_raises_everywhere(ValueError, da.vectorize(np.dot, signature="(n),(n)->()"), da.asarray(
        np.ones((3, 4)), split=0), np.ones(3), match="core dimension")
    assert_raises_everywhere(ValueError, da.vectorize(abs), da.zeros(0), match="size 0")
    assert_raises_everywhere(ValueError, da.vectorize(_piecewise), x, np.ones(3), match="broadcast")
    assert_raises_everywhere(TypeError, da.vectorize(str), x, match="booleans or numbers")

    def fails_late(v):
        if v == 11.0:
            raise ZeroDivisionError("only on the rank holding 11")
        return v

    with pytest.raises((ZeroDivisionError, ValueError)):  # every rank raises (the others: ValueError)
        da.vectorize(fails_late)(da.asarray(np.arange(12.0), split=0))
    assert_results_equal(da.vectorize(abs, otypes="d")(da.zeros(0)), np.zeros(0), "empty with otypes")


# ---------------------------------------------------------------- apply_along_axis / apply_over_axes
@pytest.mark.parametrize("axis, spelling", [(0, "darray"), (-1, "numpy")])
@pytest.mark.parametrize("lname", list(LAYOUTS_2D))
def test_apply_along_axis(lname, axis, spelling):
    g = values((7, 5), "int64")
    x = da.asarray(g, **LAYOUTS_2D[lname])
    f = spell("apply_along_axis", spelling)
    assert_results_equal(f(np.sum, axis, x), np.apply_along_axis(np.sum, axis, g), f"sum {lname}")
    assert_results_equal(f(np.sort, axis, x), np.apply_along_axis(np.sort, axis, g), f"sort {lname}")
    assert_results_equal(f(lambda v: np.outer(v[:2], v[:3]), axis, x), np.apply_along_axis(lambda v: np.outer(v[:2], v[:3]), axis, g),
          f"2-d results {lname}")
    assert_results_equal(f(np.percentile, axis, x, 30, method="lower"), np.apply_along_axis(np.percentile, axis, g, 30,
                                                                              method="lower"), f"args {lname}")


def test_apply_along_axis_variants():
    g = values((13,), "float64")
    for lname, kw in LAYOUTS_1D.items():
        assert_results_equal(da.apply_along_axis(np.cumsum, 0, da.asarray(g, **kw)), np.cumsum(g), f"1-d {lname}")
        assert_results_equal(da.apply_along_axis(np.sum, 0, da.asarray(g, **kw)), np.apply_along_axis(np.sum, 0, g),
              f"1-d to 0-d {lname}")
    g3 = values((3, 4, 5), "float64")
    x3 = da.asarray(g3, split=1)
    for axis in range(3):
        assert_results_equal(np.apply_along_axis(np.max, axis, x3), np.apply_along_axis(np.max, axis, g3), f"3-d axis {axis}")
    assert_results_equal(da.apply_along_axis(np.sum, 0, [[1, 2], [3, 4]]), np.apply_along_axis(np.sum, 0, [[1, 2], [3, 4]]),
          "list")
    first_int = lambda v: v[0] if v[0] > 0 else v[0] / 3  # the first slice decides the dtype
    g2 = np.array([[2.0, 1.0], [-1.0, 3.0], [5.0, 0.0]])
    assert_results_equal(da.apply_along_axis(first_int, 1, da.asarray(g2, split=0)), np.apply_along_axis(first_int, 1, g2),
          "first slice's dtype")


def test_apply_along_axis_bad_input():
    x = da.ones((4, 3))
    assert_raises_everywhere(AxisError, da.apply_along_axis, np.sum, 2, x, match="apply_along_axis")
    assert_raises_everywhere(ValueError, da.apply_along_axis, np.sum, 0, da.ones((4, 0)), match="iteration")
    assert_raises_everywhere(TypeError, da.apply_along_axis, lambda v: "s", 0, x, match="booleans or numbers")


AxisError = np.exceptions.AxisError


@pytest.mark.parametrize("lname", list(LAYOUTS_2D))
def test_apply_over_axes(lname):
    g = values((7, 5), "float64")
    x = da.asarray(g, **LAYOUTS_2D[lname])
    f = spell("apply_over_axes", "numpy" if lname == "split0" else "darray")
    for axes in ([0, 1], 1, (-1,), []):
        assert_results_equal(f(np.sum, x, axes), np.apply_over_axes(np.sum, g, axes), f"sum {axes} {lname}")
    assert_results_equal(f(lambda a, ax: da.max(a, axis=ax, keepdims=True), x, [1]), np.apply_over_axes(np.max, g, [1]),
          f"keepdims {lname}")
    assert_raises_everywhere(ValueError, f, lambda a, ax: a[0, 0], x, 0, match="correct shape")
    assert_raises_everywhere(AxisError, f, np.sum, x, 2, match="apply_over_axes")
    assert_results_equal(da.apply_over_axes(np.sum, [[1, 2], [3, 4]], 0), np.apply_over_axes(np.sum, np.array([[1, 2], [3, 4]]), 0),
          "list")


# ---------------------------------------------------------------- kron, unwrap, i0, kaiser
@pytest.mark.parametrize("lname", list(LAYOUTS_2D))
def test_kron(lname):
    g = values((7, 5), "int64")
    x = da.asarray(g, **LAYOUTS_2D[lname])
    f = spell("kron", "numpy" if lname == "split0" else "darray")
    small = np.array([[1, -1], [2, 0], [0, 3]])
    assert_results_equal(f(x, small), np.kron(g, small), f"2-d x 2-d {lname}")
    assert_results_equal(f(small.astype(float), x), np.kron(small.astype(float), g), f"numpy first {lname}")
    assert_results_equal(f(x, np.array([1.5, 2.0])), np.kron(g, [1.5, 2.0]), f"2-d x 1-d {lname}")
    assert_results_equal(f(x, 3), np.kron(g, 3), f"scalar {lname}")
    assert_results_equal(f(da.asarray([True, False]), x > 0), np.kron([True, False], g > 0), f"bool {lname}")
    g1 = values((13,), "complex128")
    assert_results_equal(f(da.asarray(g1, split=0), da.asarray(g1[:3], split=0)), np.kron(g1, g1[:3]), f"1-d complex {lname}")
    assert_raises_everywhere(TypeError, f, x, "ab", match="kron")


@pytest.mark.parametrize("lname", list(LAYOUTS_2D))
def test_unwrap(lname):
    rng = np.random.default_rng(7)
    g = np.cumsum(rng.uniform(-2.5, 2.5, (7, 5)), axis=0)
    wrapped = np.angle(np.exp(1j * g))
    x = da.asarray(wrapped, **LAYOUTS_2D[lname])
    f = spell("unwrap", "numpy" if lname == "split0" else "darray")
    for axis in (0, 1, -1):
        assert_results_equal(f(x, axis=axis), np.unwrap(wrapped, axis=axis), f"axis {axis} {lname}")
    assert_results_equal(f(x, discont=4.0, axis=0), np.unwrap(wrapped, discont=4.0, axis=0), f"discont {lname}")
    gi = (np.arange(35).reshape(7, 5) * 3) % 8
    assert_results_equal(f(da.asarray(gi, **LAYOUTS_2D[lname]), period=8, axis=0), np.unwrap(gi, period=8, axis=0),
          f"integers, even period {lname}")
    assert_results_equal(f(da.asarray(gi, **LAYOUTS_2D[lname]), period=7, axis=1), np.unwrap(gi, period=7, axis=1),
          f"integers, odd period {lname}")
    g32 = wrapped.astype(np.float32)
    assert_results_equal(f(da.asarray(g32, **LAYOUTS_2D[lname]), axis=0), np.unwrap(g32, axis=0), f"float32 {lname}")


def test_unwrap_variants_and_bad_input():
    assert_results_equal(da.unwrap([0.0, 3.0, 6.5, 0.1]), np.unwrap([0.0, 3.0, 6.5, 0.1]), "list")
    assert_results_equal(da.unwrap(da.asarray([1.0])), np.unwrap([1.0]), "one element")
    assert_results_equal(da.unwrap(da.asarray([True, False, True, True], split=0)), np.unwrap([True, False, True, True]), "bool")
    assert_results_equal(da.unwrap(da.asarray([0, 200, 360, 10], split=0), period=360), np.unwrap([0, 200, 360, 10], period=360),
          "degrees")
    assert_raises_everywhere(AxisError, da.unwrap, da.ones((3, 2)), axis=2, match="unwrap")
    assert_raises_everywhere(TypeError, da.unwrap, da.ones(3) * 1j, match="unwrap")


@pytest.mark.parametrize("dtype, spelling", [("float64", "darray"), ("float32", "numpy"), ("int64", "darray"),
                                             ("bool", "numpy")])
def test_i0(dtype, spelling):
    g = values((7, 5), dtype) * (3 if dtype != "bool" else 1)
    for lname, kw in LAYOUTS_2D.items():
        assert_results_equal(spell("i0", spelling)(da.asarray(g, **kw)), np.i0(g), f"{lname}", rtol=1e-6)


def test_i0_variants_and_bad_input():
    assert_results_equal(da.i0([0.0, 1.0, -2.0]), np.i0([0.0, 1.0, -2.0]), "list")
    assert_results_equal(da.i0(2.0), np.i0(2.0), "scalar")
    assert_raises_everywhere(TypeError, da.i0, da.ones(3) * 1j, match="complex")


@pytest.mark.parametrize("M", [0, 1, 2, 13])
def test_kaiser(M):
    for beta in (0.0, 5.0, 14):
        assert_results_equal(da.kaiser(M, beta), np.kaiser(M, beta), f"kaiser({M}, {beta})")


def test_kaiser_bad_input():
    assert_raises_everywhere(TypeError, da.kaiser, 2.5, 1.0, match="kaiser")
    assert_raises_everywhere(TypeError, da.kaiser, 5, "b", match="beta")


# ---------------------------------------------------------------- emath
EMATH_UNARY = ["sqrt", "log", "log2", "log10", "arccos", "arcsin", "arctanh"]


@pytest.mark.parametrize("dtype, spelling", [("float64", "darray"), ("int16", "numpy"), ("int64", "darray"),
                                             ("complex128", "numpy")])
@pytest.mark.parametrize("name", EMATH_UNARY)
def test_emath_unary(name, dtype, spelling):
    kw = LAYOUTS_1D["last0" if P > 1 else "split0"]  # an element out of the domain on one rank only
    lname = "last"
    if dtype[0] in "fc":
        inside = np.linspace(0.1, 0.9, 13)
    else:
        inside = (np.arange(13) % 3 - 1) * (name != "arctanh") if name.startswith("arc") else np.arange(13) % 3 + 1
    outside = inside.copy()
    outside[11] = -3  # out of the domain on one rank only (the last block)
    f = getattr(da.emath if spelling == "darray" else np.emath, name)
    for what, g in (("inside", inside.astype(dtype)), ("outside", outside.astype(dtype))):
        assert_results_equal(f(da.asarray(g, **kw)), getattr(np.emath, name)(g), f"{spelling}.emath.{name} {what} {lname} {dtype}",
              rtol=1e-5)


@pytest.mark.parametrize("lname", list(LAYOUTS_1D))
def test_emath_logn_power(lname):
    g = np.linspace(-2.0, 3.0, 13)
    x = da.asarray(g, **LAYOUTS_1D[lname])
    for n in (2, -2.0, da.asarray(np.full(13, 3.0), split=0)):
        n_np = n.gather() if isinstance(n, DArray) else n
        assert_results_equal(da.emath.logn(n, x), np.emath.logn(n_np, g), f"logn {n_np} {lname}")
        assert_results_equal(np.emath.logn(n, x), np.emath.logn(n_np, g), f"numpy.emath.logn {lname}")
    gi = np.arange(13) - 4
    gi[4] = 7  # no 0 ** -1
    xi = da.asarray(gi, **LAYOUTS_1D[lname])
    for p in (2, -1, 0.5):
        assert_results_equal(da.emath.power(xi, p), np.emath.power(gi, p), f"power {p} {lname}")
    assert_results_equal(np.emath.power(da.asarray(gi + 5, split=0), xi), np.emath.power(gi + 5, gi), f"power array p {lname}")
    assert_results_equal(da.emath.sqrt([-1.0, 4.0]), np.emath.sqrt([-1.0, 4.0]), "list")
    assert_results_equal(da.emath.sqrt(-4.0), np.emath.sqrt(-4.0), "scalar")
    i8 = np.arange(13, dtype=np.int8)  # NumPy's float16 (float32 where the local library has no float16)
    x8 = da.asarray(i8, split=0)
    want = np.emath.sqrt(i8).astype(np.float16 if hasattr(x8._xp, "float16") else np.float32)
    assert_results_equal(da.emath.sqrt(x8), want, "int8", rtol=1e-3)
    assert_results_equal(da.emath.sqrt(da.asarray(i8 - 3, split=0)), np.emath.sqrt(i8 - 3), "negative int8", rtol=1e-3)
    assert da.emath.__name__ == "darray.emath" and sorted(da.emath.__all__) == da.emath.__all__


def test_emath_bad_input():
    assert_raises_everywhere(TypeError, da.emath.sqrt, "x", match="sqrt")
    assert_raises_everywhere(TypeError, da.emath.power, da.ones(3), None, match="power")
