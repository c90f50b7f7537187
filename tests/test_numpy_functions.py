"""NumPy functions outside the standard (darray._api.numpy: stacking, products, statistics, mathematical)
against NumPy, on every rank count.

Every function is called twice, as ``darray_func(...)`` and as ``numpy.func(...)``
on DArrays (``__array_function__``), and both results are compared with NumPy on
the gathered data, parametrized over layouts of ``tests/_cases.py`` (the test
id names the layout): each split axis, uneven blocks, an empty block (all cells
on the last rank), replicated, and a 2x2 grid at 4 ranks. Bad input raises NumPy's
exception type, with one message on every rank.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray import DArray
from darray._api.numpy import mathematical, products, stacking, statistics
from darray._api.numpy.creation import array
from darray._api.numpy.mathematical import angle, around, interp, nan_to_num
from darray._api.numpy.products import cross, diag, diagonal, dot, inner, trace, vdot
from darray._api.numpy.stacking import (array_split, atleast_1d, atleast_2d, atleast_3d, column_stack, dstack, hstack,
                                        ravel, split, swapaxes, vstack)
from darray._api.numpy.statistics import average, bincount, corrcoef, cov, digitize
from darray.testing import assert_equal, assert_raises_everywhere

from _cases import P, case, layouts, values

pytestmark = pytest.mark.mpi

FLOATS = ["float64", "float32", "complex128"]
DTYPES = ["float64", "float32", "int64", "bool", "complex128"]



def named(shape) -> list:
    """Layouts of an array of ``shape``: each split axis (even, uneven, one rank holding all), replicated, 2x2."""
    cuts = ("split", "uneven", "last") if P > 1 else ("split",)  # one rank: uneven0 is split0
    out = layouts(shape, "replicated", *(f"{kind}{a}" for a in range(len(shape)) for kind in cuts),
                  *(("grid2x2",) if len(shape) >= 2 else ()))
    if P == 4 and len(shape) == 1:
        out.append(case("grid2x2-0n", shape, "grid", "copies", split=(0, None), grid=(2, 2)))
    return out


def over(*shapes) -> list:
    """``layout`` parameters over the layouts of ``shapes``, ids ``{shape}-{layout}``."""
    return [pytest.param(c, id=f"{'x'.join(map(str, shape)) or '0d'}-{c}") for shape in shapes for c in named(shape)]


def with_specials(a: np.ndarray) -> np.ndarray:
    """``a`` (float or complex) with nan, inf, -inf and -0.0 (in the real or the imaginary part) at cells 0, 3, 6, 9."""
    a = a.copy()
    if a.size and a.dtype.kind in "fc":
        flat = a.reshape(-1)
        for i, v in enumerate([np.nan, np.inf, -np.inf, -0.0]):
            flat[(3 * i) % flat.size] = v if a.dtype.kind == "f" else complex(v, [1.0, np.nan, -np.inf, np.inf][i])
    return a


def compare(got, want, err: str, **tol) -> None:
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want), f"{err}: got {type(got).__name__}"
        for i, (g, w) in enumerate(zip(got, want)):
            compare(g, w, f"{err}[{i}]", **tol)
        return
    assert isinstance(got, DArray), f"{err}: expected a DArray, got {type(got).__name__}"
    assert_equal(got, np.asarray(want), err_msg=err, **tol)


def _atol(dtype) -> float:
    """Absolute tolerance of sums of products: a backend may add in another order (torch does)."""
    return 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


def check(func, dargs, gargs, kwargs=None, err: str = "", gkwargs=None, **tol) -> None:
    """``func(*dargs, **kwargs)`` and its namesake ``numpy.func(*dargs, **kwargs)`` (dispatched) both equal
    ``numpy.func(*gargs, **gkwargs)`` (``gkwargs`` defaults to ``kwargs``)."""
    kwargs = kwargs or {}
    name = func.__name__
    want = getattr(np, name)(*gargs, **(kwargs if gkwargs is None else gkwargs))
    compare(func(*dargs, **kwargs), want, f"{name} {err} (darray)", **tol)
    compare(getattr(np, name)(*dargs, **kwargs), want, f"{name} {err} (numpy dispatch)", **tol)


def raises(exc, func, dargs, gargs, kwargs=None, match: str | None = None) -> None:
    """NumPy raises ``exc`` on the gathered data; ``func`` and the dispatched ``numpy.func`` raise it on every
    rank, with one message naming ``numpy.func``."""
    kwargs = kwargs or {}
    name = func.__name__
    with pytest.raises(exc):
        getattr(np, name)(*gargs, **kwargs)
    for label, f in (("darray", func), ("dispatch", getattr(np, name))):
        text = assert_raises_everywhere(exc, f, *dargs, match=match, **kwargs)
        assert f"numpy.{name}" in text, f"{label}: {text}"


def test_all_is_the_new_functions():
    from darray._core.protocols import HANDLED_FUNCTIONS

    for nf in (mathematical, products, stacking, statistics):
        assert sorted(nf.__all__) == nf.__all__
        assert all(callable(getattr(nf, n)) for n in nf.__all__)
        for name in nf.__all__:
            assert getattr(np, name) in HANDLED_FUNCTIONS, name
    assert np.round in HANDLED_FUNCTIONS and np.array in HANDLED_FUNCTIONS


# ---------------------------------------------------------------- atleast_nd
@pytest.mark.parametrize("layout", over((), (7,), (4, 5), (2, 3, 4)))
@pytest.mark.parametrize("func", [atleast_1d, atleast_2d, atleast_3d], ids=lambda f: f.__name__)
def test_atleast(func, layout):
    for dtype in DTYPES:
        g = values(layout.shape, dtype)
        check(func, [layout.array(g)], [g], err=dtype)
    x, g = da.asarray(values((5,))), values((5,))
    check(func, [x, da.asarray(2.0)], [g, np.asarray(2.0)], err="two inputs")


# ---------------------------------------------------------------- stacking
@pytest.mark.parametrize("layout", over((7,)))
@pytest.mark.parametrize("dtype", DTYPES)
def test_hstack_vstack_dstack_column_stack_1d(dtype, layout):
    g, b = values((7,), dtype, 1), values((7,), dtype, 2)
    x, y = layout.array(g), da.asarray(b, split=0)
    for func in (hstack, vstack, dstack, column_stack):
        check(func, [[x, y]], [[g, b]])
        check(func, [(y, x, y)], [(b, g, b)], err="three")
    check(hstack, [[x, da.asarray(b[:3])]], [[g, b[:3]]], err="lengths")
    check(hstack, [[x, b]], [[g, b]], err="with a NumPy array")
    assert_equal(hstack([da.asarray(g[0]), da.asarray(g)]), np.hstack([g[0], g]))


@pytest.mark.parametrize("layout", over((4, 5), (2, 3, 4)))
@pytest.mark.parametrize("dtype", DTYPES)
def test_stacks_2d_3d(dtype, layout):
    g = values(layout.shape, dtype)
    x = layout.array(g)
    if layout.ndim == 2:
        b = values((4, 3), dtype, 3)
        y = da.asarray(b, split=1)
        check(hstack, [[x, y]], [[g, b]])
        check(column_stack, [[x, y, da.asarray(b[:, 0])]], [[g, b, b[:, 0]]])
        check(dstack, [[x, x]], [[g, g]])
        check(vstack, [[x, da.asarray(g[:2])]], [[g, g[:2]]])
    else:
        check(vstack, [[x, x]], [[g, g]])
        check(dstack, [[x, x]], [[g, g]])


def test_stack_dtype_and_casting():
    a, b = values((5,), "int64"), values((5,), "float32")
    x, y = da.asarray(a, split=0), da.asarray(b, split=0)
    for func in (hstack, vstack):
        check(func, [[x, y]], [[a, b]], err="promotion")
        check(func, [[x, y]], [[a, b]], dict(dtype=np.float32), err="dtype")
        check(func, [[x, x]], [[a, a]], dict(dtype=np.float64, casting="safe"), err="safe")
        check(func, [[y, y]], [[b, b]], dict(dtype=np.int64, casting="unsafe"), err="unsafe")
        raises(TypeError, func, [[x, y]], [[a, b]], dict(dtype=np.int64))
        raises(TypeError, func, [[x, y]], [[a, b]], dict(casting="no"))
        raises(ValueError, func, [[x, y]], [[a, b]], dict(casting="wrong"))


def test_stack_bad_input():
    a = values((2, 3))
    x = da.asarray(a, split=0)
    for func in (hstack, vstack, dstack, column_stack):  # no DArray: numpy.func stays NumPy's
        with pytest.raises(ValueError):
            getattr(np, func.__name__)([])
        assert_raises_everywhere(ValueError, func, [], match=f"numpy.{func.__name__}")
    raises(ValueError, vstack, [[x, da.ones(4)]], [[a, np.ones(4)]])
    raises(ValueError, hstack, [[x, da.ones((3, 3))]], [[a, np.ones((3, 3))]])
    raises(ValueError, dstack, [[x, da.ones((2, 4))]], [[a, np.ones((2, 4))]])
    assert_raises_everywhere(TypeError, hstack, da.asarray(1.0), match="numpy.hstack")  # (0-d: not a sequence)


def test_stacking_an_array_iterates_its_first_axis():
    """NumPy takes an array where it takes a sequence of arrays: its rows (``np.dstack(np.mgrid[0:3, 0:4])``)."""
    a = values((3, 4))
    x = da.asarray(a, split=0)
    for func in (hstack, vstack, dstack, column_stack):
        assert_equal(func(x), getattr(np, func.__name__)(a))


# ---------------------------------------------------------------- swapaxes / ravel
@pytest.mark.parametrize("layout", over((3, 4, 5)))
@pytest.mark.parametrize("dtype", DTYPES)
def test_swapaxes(dtype, layout):
    g = values((3, 4, 5), dtype)
    x = layout.array(g)
    for a1, a2 in [(0, 1), (0, 2), (1, 2), (-1, 0), (1, 1)]:
        check(swapaxes, [x, a1, a2], [g, a1, a2], err=f"{a1},{a2}")


def test_swapaxes_bad_input():
    x, g = da.asarray(values((3, 4))), values((3, 4))
    raises(np.exceptions.AxisError, swapaxes, [x, 0, 2], [g, 0, 2])


@pytest.mark.parametrize("layout", over((), (7,), (4, 5), (2, 3, 4)))
def test_ravel(layout):
    for dtype in DTYPES:
        g = values(layout.shape, dtype)
        x = layout.array(g)
        for order in ("C", "F", "A", "K"):
            check(ravel, [x], [g], dict(order=order), err=f"{dtype} {order}")


def test_ravel_bad_input():
    raises(ValueError, ravel, [da.ones(3)], [np.ones(3)], dict(order="Z"))


# ---------------------------------------------------------------- products
PRODUCTS = [((5,), (5,)), ((4, 5), (5,)), ((5,), (5, 3)), ((4, 5), (5, 3)), ((2, 4, 5), (5,)),
            ((2, 4, 5), (5, 3)), ((2, 4, 5), (3, 5, 2)), ((5,), (2, 5, 3)), ((), (4, 3)), ((4, 3), ())]


@pytest.mark.parametrize("shapes,layout", [pytest.param(shapes, c, id=f"{shapes}-{c}".replace(" ", ""))
                                           for shapes in PRODUCTS for c in named(shapes[0])])
def test_dot(shapes, layout):
    sb = shapes[1]
    for dtype in DTYPES:
        g, b = values(layout.shape, dtype), values(sb, dtype, 7)
        x = layout.array(g)
        for y in (da.asarray(b, split=0 if sb else None), da.asarray(b, split=None)):
            check(dot, [x, y], [g, b], err=f"{dtype} {y.split}", atol=_atol(dtype))


def test_dot_bad_input():
    raises(ValueError, dot, [da.ones((2, 3)), da.ones(4)], [np.ones((2, 3)), np.ones(4)])
    raises(ValueError, dot, [da.ones((2, 3)), da.ones((2, 4, 5))], [np.ones((2, 3)), np.ones((2, 4, 5))])
    for f in (dot, np.dot):  # out= is NumPy's, refused for DArrays
        assert_raises_everywhere(TypeError, f, da.ones(3), da.ones(3), out=np.zeros(()), match="numpy.dot")


def test_dot_mixed_dtypes():
    a, b = values((4, 5), "int64"), values((5,), "float32")
    x, y = da.asarray(a, split=1), da.asarray(b, split=0)
    check(dot, [x, y], [a, b], atol=1e-6)
    c = values((5,), "bool")
    check(dot, [x, da.asarray(c)], [a, c])


@pytest.mark.parametrize("layout", over((12,), (3, 4), (2, 3, 2)))
def test_vdot(layout):
    for dtype in DTYPES:
        g, b = values(layout.shape, dtype), values((12,), dtype, 5)
        x = layout.array(g)
        for y in (da.asarray(b, split=0), da.asarray(b.reshape(4, 3), split=1)):
            check(vdot, [x, y], [g, np.asarray(y.gather())], err=dtype, atol=1e-12)


def test_vdot_bad_input():
    raises(ValueError, vdot, [da.ones(3), da.ones(4)], [np.ones(3), np.ones(4)])


INNER = [((5,), (5,)), ((4, 5), (3, 5)), ((2, 3, 5), (5,)), ((5,), (2, 3, 5)), ((), (3, 5)), ((3, 5), ())]


@pytest.mark.parametrize("shapes,layout", [pytest.param(shapes, c, id=f"{shapes}-{c}".replace(" ", ""))
                                           for shapes in INNER for c in named(shapes[0])])
def test_inner(shapes, layout):
    sb = shapes[1]
    for dtype in DTYPES:
        g, b = values(layout.shape, dtype), values(sb, dtype, 9)
        y = da.asarray(b, split=len(sb) - 1 if sb else None)
        check(inner, [layout.array(g), y], [g, b], err=dtype, atol=1e-12)


def test_inner_bad_input():
    raises(ValueError, inner, [da.ones((2, 3)), da.ones((2, 4))], [np.ones((2, 3)), np.ones((2, 4))])


@pytest.mark.parametrize("layout", over((6, 3), (3, 5)))
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "complex128"])
def test_cross(dtype, layout):
    g = values(layout.shape, dtype)
    x = layout.array(g)
    if layout.shape == (6, 3):
        b = values((3,), dtype, 4)
        y = da.asarray(values((6, 3), dtype, 5), split=0)
        h = np.asarray(y.gather())
        check(cross, [x, y], [g, h], atol=_atol(dtype))
        check(cross, [x, b], [g, b], err="broadcast", atol=_atol(dtype))
        check(cross, [x, da.asarray(b)], [g, b], err="broadcast DArray", atol=_atol(dtype))
    else:
        y = da.asarray(values((5, 3), dtype, 6), split=0)
        h = np.asarray(y.gather())
        check(cross, [x, y], [g, h], dict(axisa=0), atol=_atol(dtype))
        check(cross, [x, y], [g, h], dict(axisa=0, axisc=0), err="axisc", atol=_atol(dtype))
        check(cross, [x, x], [g, g], dict(axis=0), err="axis", atol=_atol(dtype))
        check(cross, [y, x], [h, g], dict(axisb=-2, axisc=-1), err="axisb")


def test_cross_bad_input():
    raises(ValueError, cross, [da.ones((4, 4)), da.ones((4, 4))], [np.ones((4, 4)), np.ones((4, 4))])
    assert_raises_everywhere(ValueError, cross, da.ones((4, 2)), da.ones((4, 2)), match="numpy.cross")
    raises(np.exceptions.AxisError, cross, [da.ones((4, 3)), da.ones((4, 3))], [np.ones((4, 3)), np.ones((4, 3))],
           dict(axisc=2))


# ---------------------------------------------------------------- splitting
@pytest.mark.parametrize("layout", over((7, 6), (10,)))
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool", "complex128"])
def test_array_split_and_split(dtype, layout):
    g = values(layout.shape, dtype)
    x = layout.array(g)
    if layout.ndim == 1:
        check(split, [x, 5], [g, 5])
        check(array_split, [x, 4], [g, 4])
        return
    for axis in (0, 1, -1):
        for sections in (1, 2, 3, 4, 9):
            check(array_split, [x, sections], [g, sections], dict(axis=axis), err=f"{sections} {axis}")
        for points in ([2, 5], [0, 3, 3, 10], [-2], [4, 1], np.array([1, 2]), []):
            for func in (array_split, split):
                check(func, [x, points], [g, points], dict(axis=axis), err=f"{points} {axis}")
    check(split, [x, 7], [g, 7], err="7")
    check(split, [x, 3], [g, 3], dict(axis=1), err="3 axis 1")


def test_split_bad_input():
    g = np.arange(12.0).reshape(3, 4)
    x = da.asarray(g, split=0)
    raises(ValueError, split, [x, 2], [g, 2], match="equal division")
    raises(ZeroDivisionError, split, [x, 0], [g, 0])
    raises(ValueError, array_split, [x, 0], [g, 0])
    raises(ValueError, array_split, [x, -1], [g, -1])
    raises(IndexError, array_split, [x, 2], [g, 2], dict(axis=2))  # NumPy: IndexError; darray: AxisError
    raises(TypeError, split, [x, [1.5]], [g, [1.5]])


# ---------------------------------------------------------------- statistics
@pytest.mark.parametrize("layout", over((5, 6)))
@pytest.mark.parametrize("dtype", DTYPES)
def test_average(dtype, layout):
    shape = (5, 6)
    g = values(shape, dtype)
    x = layout.array(g)
    for axis in (None, 0, 1, -1, (0, 1), (1, 0)):
        for keepdims in (False, True):
            for returned in (False, True):
                kw = dict(axis=axis, keepdims=keepdims, returned=returned)
                check(average, [x], [g], kw, err=f"{kw}", rtol=1e-5 if dtype == "float32" else 1e-12)
    w = values(shape, "float64", 3) ** 2 + 0.1
    wd = da.asarray(w, split=1)
    for axis in (None, 0, (0, 1)):
        for returned in (False, True):
            kw = dict(axis=axis, weights=wd, returned=returned)
            want = np.average(g, axis=axis, weights=w, returned=returned)
            compare(average(x, **kw), want, f"full weights {axis}", rtol=1e-10)
            compare(np.average(x, **kw), want, f"full weights {axis} (dispatch)", rtol=1e-10)
    for axis, ws in ((0, (5,)), (1, (6,)), (-1, (6,)), ((1, 0), (6, 5))):
        w1 = values(ws, "int64", 4) ** 2 + 1
        for wgt in (w1, da.asarray(w1, split=0)):
            check(average, [x], [g], dict(axis=axis, weights=wgt, keepdims=True), err=f"{axis}",
                  gkwargs=dict(axis=axis, weights=w1, keepdims=True), rtol=1e-10)
            kw = dict(axis=axis, weights=wgt, returned=True)
            want = np.average(g, axis=axis, weights=w1, returned=True)
            compare(average(x, **kw), want, f"axis weights {axis}", rtol=1e-10)


def test_average_bad_input():
    g = values((4, 3))
    x = da.asarray(g, split=0)
    raises(TypeError, average, [x], [g], dict(weights=np.ones(4)))
    raises(ValueError, average, [x], [g], dict(axis=1, weights=np.ones(4)))
    raises(ZeroDivisionError, average, [x], [g], dict(axis=0, weights=np.zeros(4)))
    raises(np.exceptions.AxisError, average, [x], [g], dict(axis=2))


pytestmark_cov = pytest.mark.filterwarnings("ignore:.*(egrees of freedom|divide|invalid value).*:RuntimeWarning")
COV_KWARGS = [dict(), dict(rowvar=False), dict(bias=True), dict(ddof=0), dict(ddof=2), dict(rowvar=False, ddof=3)]


@pytestmark_cov
@pytest.mark.parametrize("layout", over((3, 11), (11, 3), (11,), (1, 11)))
@pytest.mark.parametrize("dtype", DTYPES)
def test_cov(dtype, layout):
    shape = layout.shape
    g = values(shape, dtype)
    x = layout.array(g)
    for kw in COV_KWARGS:
        nobs = shape[-1] if kw.get("rowvar", True) or len(shape) == 1 else shape[0]
        ddof = kw.get("ddof", 0 if kw.get("bias") else 1)
        if dtype == "complex128" and nobs <= ddof:
            continue  # scaled by 1/0: the sign of each rounding-noise imaginary part decides +-inf
        check(cov, [x], [g], kw, err=f"{kw}", rtol=1e-10, atol=1e-12)


@pytestmark_cov
@pytest.mark.parametrize("layout", over((2, 9), (9, 2)))
@pytest.mark.parametrize("dtype", DTYPES)
def test_cov_two_arrays(dtype, layout):
    g = values(layout.shape, dtype)
    x = layout.array(g)
    if layout.shape == (2, 9):
        b = values((9,), dtype, 3)
        for y in (b, da.asarray(b, split=0)):
            check(cov, [x, y], [g, b], rtol=1e-10, atol=1e-12)
        return
    c = values((9, 3), dtype, 4)
    for kw in (dict(rowvar=False), dict(rowvar=False, bias=True)):
        check(cov, [x, da.asarray(c, split=0)], [g, c], kw, err=f"y {kw}", rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("layout", over((3, 9)))
@pytest.mark.parametrize("dtype", ["float64", "complex128", "int64"])
def test_cov_weights(dtype, layout):
    f = np.array([1, 2, 0, 3, 1, 1, 4, 2, 1], dtype=np.int64)
    a = np.abs(values((9,), "float64", 8)) + 0.5
    g = values((3, 9), dtype)
    x = layout.array(g)
    for kw, dkw in [(dict(fweights=f), dict(fweights=da.asarray(f, split=0))),
                    (dict(aweights=a), dict(aweights=da.asarray(a, split=0))),
                    (dict(fweights=f, aweights=a), dict(fweights=f, aweights=da.asarray(a))),
                    (dict(fweights=f, aweights=a, ddof=0), dict(fweights=f, aweights=a, ddof=0)),
                    (dict(fweights=f, ddof=2), dict(fweights=f, ddof=2))]:
        want = np.cov(g, **kw)
        compare(cov(x, **dkw), want, f"{list(kw)}", rtol=1e-10, atol=1e-12)
        compare(np.cov(x, **dkw), want, f"{list(kw)} (dispatch)", rtol=1e-10, atol=1e-12)


def test_cov_bad_input():
    g = values((3, 5))
    x = da.asarray(g, split=1)
    raises(ValueError, cov, [da.ones((2, 2, 2))], [np.ones((2, 2, 2))])
    raises(ValueError, cov, [x], [g], dict(ddof=1.5))
    raises(TypeError, cov, [x], [g], dict(fweights=[1, 2, 1.5, 1, 1]))
    raises(ValueError, cov, [x], [g], dict(fweights=[1, 2, -1, 1, 1]))
    raises(RuntimeError, cov, [x], [g], dict(aweights=[1.0, 2.0]))
    raises(RuntimeError, cov, [x], [g], dict(aweights=np.ones((5, 1))))
    raises(ValueError, cov, [x], [g], dict(aweights=[1.0, 2.0, -1.0, 1.0, 1.0]))
    for f in (cov, np.cov):
        with pytest.warns(RuntimeWarning):
            c = f(da.asarray(values((2, 1)), split=1))
        with pytest.warns(RuntimeWarning):
            want = np.cov(values((2, 1)))
        assert_equal(c, want)


@pytestmark_cov
@pytest.mark.parametrize("layout", over((3, 11), (11, 4), (11,)))
@pytest.mark.parametrize("dtype", DTYPES)
def test_corrcoef(dtype, layout):
    g = values(layout.shape, dtype)
    x = layout.array(g)
    for kw in (dict(), dict(rowvar=False)):
        with np.errstate(divide="ignore", invalid="ignore"):
            check(corrcoef, [x], [g], kw, err=f"{kw}", rtol=1e-10, atol=1e-12)
    if layout.shape == (11,):
        b = values((11,), dtype, 2)
        check(corrcoef, [x, da.asarray(b, split=0)], [g, b], err="two", rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- diagonals
@pytest.mark.parametrize("layout", over((5, 7), (3, 4, 5)))
@pytest.mark.parametrize("dtype", DTYPES)
def test_trace_and_diagonal(dtype, layout):
    g = values(layout.shape, dtype)
    x = layout.array(g)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    if layout.ndim == 2:
        for offset in (0, 1, -2, 6, -5, 9):
            for func in (trace, diagonal):
                check(func, [x, offset], [g, offset], err=f"{offset}", rtol=rtol)
            check(diagonal, [x], [g], dict(offset=offset, axis1=1, axis2=0), err=f"{offset} swapped")
    else:
        for axis1, axis2 in [(0, 1), (1, 2), (2, 0), (-1, -2)]:
            kw = dict(offset=1, axis1=axis1, axis2=axis2)
            for func in (trace, diagonal):
                check(func, [x], [g], kw, err=f"{kw}", rtol=rtol)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "complex128"])
def test_trace_dtype(dtype):
    check(trace, [da.asarray(values((4, 4), dtype), split=0)], [values((4, 4), dtype)], dict(dtype=np.complex128))


def test_trace_diagonal_bad_input():
    g = values((3, 4))
    x = da.asarray(g, split=0)
    for func in (trace, diagonal):
        raises(ValueError, func, [da.ones(3)], [np.ones(3)])
        raises(ValueError, func, [x], [g], dict(axis1=1, axis2=1))
        raises(np.exceptions.AxisError, func, [x], [g], dict(axis1=2))
    for f in (trace, np.trace):
        assert_raises_everywhere(TypeError, f, x, out=np.zeros(()), match="numpy.trace")


@pytest.mark.parametrize("layout", over((6,), (4, 6)))
@pytest.mark.parametrize("dtype", DTYPES)
def test_diag(dtype, layout):
    g = values(layout.shape, dtype)
    x = layout.array(g)
    if layout.ndim == 1:
        for k in (0, 1, 3, -1, -4):
            check(diag, [x], [g], dict(k=k), err=f"k={k}")
    else:
        for k in (0, 2, -3, 7):
            check(diag, [x, k], [g, k], err=f"k={k}")


def test_diag_bad_input():
    raises(ValueError, diag, [da.ones((2, 2, 2))], [np.ones((2, 2, 2))])


@pytest.mark.parametrize("layout", over((4,)))
def test_diag_special_values(layout):
    g = np.array([np.inf, np.nan, -1.0, 2.0])
    check(diag, [layout.array(g)], [g], dict(k=-1))


# ---------------------------------------------------------------- elementwise
@pytest.mark.parametrize("layout", over((), (7,), (4, 5)))
@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_to_num(dtype, layout):
    g = with_specials(values(layout.shape, dtype))
    x = layout.array(g)
    check(nan_to_num, [x], [g])
    kw = dict(nan=-1.5, posinf=1e30, neginf=-7.0)
    check(nan_to_num, [x], [g], kw, err="values")
    y = da.asarray(x, copy=True)
    got = nan_to_num(y, copy=False, nan=3.0)
    assert got is y
    assert_equal(y, np.nan_to_num(g, nan=3.0), err_msg="copy=False")


@pytest.mark.parametrize("layout", over((), (9,), (3, 4)))
@pytest.mark.parametrize("dtype", DTYPES + ["complex64"])
def test_angle(dtype, layout):
    g = values(layout.shape, dtype)
    g = g if dtype == "float32" else with_specials(g)
    x = layout.array(g)
    for deg in (False, True):
        check(angle, [x], [g], dict(deg=deg), err=f"deg={deg}")


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # NumPy's own, rounding inf parts
@pytest.mark.parametrize("layout", over((), (11,), (3, 5)))
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "complex128"])
def test_around(dtype, layout):
    g = values(layout.shape, dtype, 1)
    g = (with_specials(g) * 1000 if dtype != "int64" else g * 137).astype(dtype)
    x = layout.array(g)
    for decimals in (0, 1, 2, 5, -1, -2, 12):
        want = np.around(g, decimals)
        compare(around(x, decimals), want, f"{decimals}", rtol=0)
        compare(np.around(x, decimals), want, f"{decimals} (np.around)", rtol=0)
        compare(np.round(x, decimals=decimals), want, f"{decimals} (np.round)", rtol=0)


@pytest.mark.parametrize("layout", over((8,)))
def test_around_halves(layout):
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.125, 0.375, 2.675])
    check(around, [layout.array(halves)], [halves], rtol=0)
    check(around, [layout.array(halves), 2], [halves, 2], rtol=0)


def test_around_bad_input():
    x = da.asarray(np.array([True, False]))
    assert_raises_everywhere(TypeError, around, x, match="numpy.around")
    assert_raises_everywhere(TypeError, np.round, x, 1, match="numpy.around")
    raises(TypeError, around, [da.ones(2), 1.5], [np.ones(2), 1.5])
    assert_raises_everywhere(TypeError, around, da.ones(2), out=np.zeros(2), match="numpy.around")


@pytest.mark.parametrize("layout", over((4, 6), (7,)))
@pytest.mark.parametrize("fp_dtype", ["float64", "complex128"])
def test_interp(fp_dtype, layout):
    xp = np.array([-1.0, -0.25, 0.0, 0.5, 2.0])
    fp = values((5,), fp_dtype, 2)
    g = values(layout.shape, "float64" if layout.ndim == 2 else "int64")
    x = layout.array(g)
    if layout.ndim == 1:
        check(interp, [x, xp, fp], [g, xp, fp])
        return
    for xs, fs in ((xp, fp), (list(xp), list(fp)), (da.asarray(xp, split=0), da.asarray(fp))):
        check(interp, [x, xs, fs], [g, xp, fp])
    check(interp, [x, xp, fp], [g, xp, fp], dict(left=-9.0, right=9.0), err="left/right")
    check(interp, [x, xp, fp], [g, xp, fp], dict(period=1.5), err="period")


@pytest.mark.parametrize("fp_dtype", ["float64", "complex128"])
def test_interp_special_values(fp_dtype):
    xp = np.array([-1.0, -0.25, 0.0, 0.5, 2.0])
    fp = values((5,), fp_dtype, 2)
    g = np.array([np.nan, np.inf, -np.inf, 0.5])
    check(interp, [da.asarray(g, split=0), xp, fp], [g, xp, fp], err="special")


def test_interp_bad_input():
    x, g = da.asarray(values((5,)), split=0), values((5,))
    raises(ValueError, interp, [x, [0.0, 1.0], [1.0]], [g, [0.0, 1.0], [1.0]])
    raises(ValueError, interp, [x, [], []], [g, [], []])
    raises(ValueError, interp, [x, [0.0, 1.0], [0.0, 1.0]], [g, [0.0, 1.0], [0.0, 1.0]], dict(period=0))
    c = values((5,), "complex128")
    raises(TypeError, interp, [da.asarray(c), [0.0, 1.0], [0.0, 1.0]], [c, [0.0, 1.0], [0.0, 1.0]])


@pytest.mark.parametrize("layout", over((4, 6)))
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
def test_digitize(dtype, layout):
    g = values((4, 6), dtype)
    x = layout.array(g)
    for bins in (np.array([-1.0, 0.0, 0.5, 2.0]), np.array([3, 1, 0, -2]), np.array([0.0, 0.0, 1.0])):
        for right in (False, True):
            check(digitize, [x, bins], [g, bins], dict(right=right), err=f"{bins} {right}")
            check(digitize, [x, da.asarray(bins, split=0)], [g, bins], dict(right=right), err=f"{bins} {right} D")


def test_digitize_bad_input():
    x, g = da.asarray(values((5,)), split=0), values((5,))
    raises(ValueError, digitize, [x, [0.0, 2.0, 1.0]], [g, [0.0, 2.0, 1.0]])
    c = values((5,), "complex128")
    raises(TypeError, digitize, [da.asarray(c), [0.0, 1.0]], [c, [0.0, 1.0]])


# ---------------------------------------------------------------- bincount
@pytest.mark.parametrize("layout", over((0,), (1,), (13,), (40,)))
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "uint64", "bool"])
def test_bincount(dtype, layout):
    n = layout.shape[0]
    g = np.random.default_rng(n).integers(0, 2 if dtype == "bool" else 9, n).astype(dtype)
    w = np.random.default_rng(n + 1).standard_normal(n)
    x = layout.array(g)
    check(bincount, [x], [g])
    check(bincount, [x], [g], dict(minlength=12), err="minlength")
    for wgt in (w, da.asarray(w, split=0), da.asarray(w, split=None)):
        check(bincount, [x], [g], dict(weights=wgt), err="weights", gkwargs=dict(weights=w), rtol=1e-12, atol=1e-12)
        want = np.bincount(g, weights=w, minlength=3)
        compare(bincount(x, wgt, 3), want, "positional", rtol=1e-12, atol=1e-12)


@pytest.mark.not_on("torch", reason="torch has no arithmetic kernels for uint16/uint32/uint64 (array-api-compat lists"
                                    " no such dtypes) (its uint64 row)")
def test_bincount_bad_input():
    g = np.array([0, 3, -1, 2])
    x = da.asarray(g, split=0)
    raises(ValueError, bincount, [x], [g])
    f = np.array([0.0, 1.0])
    raises(TypeError, bincount, [da.asarray(f)], [f])
    u = np.array([1, 2**63 + 1], dtype=np.uint64)
    raises(ValueError, bincount, [da.asarray(u, split=0)], [u])
    m = np.ones((2, 2), dtype=np.int64)
    raises(ValueError, bincount, [da.asarray(m, split=0)], [m])
    ok = np.array([0, 1, 1])
    raises(ValueError, bincount, [da.asarray(ok)], [ok], dict(minlength=-1))
    raises(ValueError, bincount, [da.asarray(ok)], [ok], dict(weights=[1.0, 2.0]))
    raises(TypeError, bincount, [da.asarray(ok)], [ok], dict(weights=[1j, 2.0, 1.0]))


# ---------------------------------------------------------------- array
@pytest.mark.parametrize("layout", over((), (7,), (4, 5)))
@pytest.mark.parametrize("dtype", DTYPES)
def test_array(dtype, layout):
    g = values(layout.shape, dtype)
    x = layout.array(g)
    y = array(x)
    assert y is not x
    assert_equal(y, np.array(g), err_msg="copy")
    assert array(x, copy=False) is x and array(x, copy=None) is x
    assert_equal(array(x, dtype=np.complex128), np.array(g, dtype=np.complex128))
    for ndmin in (0, 1, 3):
        want = np.array(g, ndmin=ndmin)
        assert_equal(array(x, ndmin=ndmin), want, err_msg=f"ndmin={ndmin}")
    z = np.array(g.tolist(), like=x)  # numpy.array dispatches through like=
    assert isinstance(z, DArray)
    assert_equal(z, np.array(g.tolist()), err_msg="like=")


def _ndmin_cases() -> list:
    """(shape, ndmin, layout of the result): NumPy data of ``shape`` laid out by ``array(..., ndmin=, **layout)``."""
    out = []
    for shape in [(), (7,), (4, 5)]:
        for ndmin in (0, 1, 3):
            want = (1,) * max(ndmin - len(shape), 0) + shape
            out += [pytest.param(shape, ndmin, c, id=f"{'x'.join(map(str, shape)) or '0d'}-ndmin{ndmin}-{c}")
                    for c in named(want)]
    return out


@pytest.mark.parametrize("shape,ndmin,layout", _ndmin_cases())
def test_array_of_numpy_data(shape, ndmin, layout):
    for dtype in DTYPES:
        g = values(shape, dtype)
        want = np.array(g, ndmin=ndmin)
        got = array(g, ndmin=ndmin, **layout.kw)
        assert_equal(got, want, err_msg=dtype)
        assert got.layout == layout.array(want).layout


@pytest.mark.parametrize("layout", over((5, 4)))
def test_array_relaid(layout):
    g = values((5, 4), "int64")
    got = array(da.asarray(g, split=0), **layout.kw)  # a DArray re-laid out
    assert got.layout == layout.array(g).layout
    assert_equal(got, g)


def test_array_bad_input():
    x = da.asarray(values((5,)), split=0)
    for kw in (dict(dtype=np.float32), dict(split=None), dict(ndmin=2)):
        assert_raises_everywhere(ValueError, array, x, copy=False, match="numpy.array", **kw)
    assert_raises_everywhere(ValueError, array, [1, 2], copy=False, match="numpy.array")
    assert_raises_everywhere(TypeError, array, ["a", "b"], match="numpy.array")
    assert_raises_everywhere(ValueError, array, [1, 2], order="Z", match="numpy.array")
