"""NumPy functions outside the standard (darray._api.numpy: stacking, products, statistics, mathematical)
against NumPy, on every rank count.

Every function is called twice, as ``darray_func(...)`` and as ``numpy.func(...)``
on DArrays (``__array_function__``), and both results are compared with NumPy on
the gathered data, over layouts looped inside each test and named in every
failure: each split axis, uneven blocks, an empty block (all cells on the last
rank), replicated, and a 2x2 grid at 4 ranks. Bad input raises NumPy's
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
from darray.testing import assert_equal, assert_raises_everywhere, uneven_sizes as uneven

pytestmark = pytest.mark.mpi

P = da.default_communicator().size
FLOATS = ["float64", "float32", "complex128"]
DTYPES = ["float64", "float32", "int64", "bool", "complex128"]



def layouts(shape) -> dict[str, dict]:
    """Layouts of an array of ``shape``: each split axis (even, uneven, one rank holding all), replicated, 2x2."""
    out = {"replicated": dict(split=None)}
    for ax, n in enumerate(shape):
        out[f"split{ax}"] = dict(split=ax)
        if P > 1:
            out[f"split{ax}-uneven"] = dict(split=ax, sizes={ax: uneven(n, P)})
            out[f"split{ax}-empty"] = dict(split=ax, sizes={ax: [0] * (P - 1) + [n]})
    if P == 4 and shape:
        out["grid22"] = dict(split=(0, None), grid=(2, 2)) if len(shape) == 1 else dict(split=(0, 1), grid=(2, 2))
    return out


def values(shape, dtype="float64", seed=0, special: bool = False) -> np.ndarray:
    rng = np.random.default_rng([seed, len(shape), sum(shape), sum(map(ord, dtype))])
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(-9, 10, shape).astype(dt)
    if dt.kind == "c":
        a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    else:
        a = rng.standard_normal(shape).astype(dt)
    if special and a.size:
        flat = a.reshape(-1)
        for i, v in enumerate([np.nan, np.inf, -np.inf, -0.0]):
            flat[(3 * i) % flat.size] = v if dt.kind == "f" else complex(v, [1.0, np.nan, -np.inf, np.inf][i])
    return a


def cases(shape, dtype="float64", seed=0, special: bool = False):
    """``(layout name, DArray, NumPy array)`` for every layout of one array."""
    g = values(shape, dtype, seed, special)
    return [(name, da.asarray(g, **kw), g) for name, kw in layouts(shape).items()]


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
@pytest.mark.parametrize("shape", [(), (7,), (4, 5), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("func", [atleast_1d, atleast_2d, atleast_3d], ids=lambda f: f.__name__)
def test_atleast(func, shape):
    for dtype in DTYPES:
        for name, x, g in cases(shape, dtype):
            check(func, [x], [g], err=f"{dtype} {name}")
    x, g = da.asarray(values((5,))), values((5,))
    check(func, [x, da.asarray(2.0)], [g, np.asarray(2.0)], err="two inputs")


# ---------------------------------------------------------------- stacking
@pytest.mark.parametrize("dtype", DTYPES)
def test_hstack_vstack_dstack_column_stack_1d(dtype):
    a, b = values((7,), dtype, 1), values((7,), dtype, 2)
    for name, x, g in cases((7,), dtype, 1):
        y = da.asarray(b, split=0)
        for func in (hstack, vstack, dstack, column_stack):
            check(func, [[x, y]], [[g, b]], err=f"{name}")
            check(func, [(y, x, y)], [(b, g, b)], err=f"{name} three")
        check(hstack, [[x, da.asarray(b[:3])]], [[g, b[:3]]], err=f"{name} lengths")
        check(hstack, [[x, b]], [[g, b]], err=f"{name} with a NumPy array")
    assert_equal(hstack([da.asarray(a[0]), da.asarray(a)]), np.hstack([a[0], a]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_stacks_2d(dtype):
    b = values((4, 3), dtype, 3)
    for name, x, g in cases((4, 5), dtype):
        y = da.asarray(b, split=1)
        check(hstack, [[x, y]], [[g, b]], err=name)
        check(column_stack, [[x, y, da.asarray(b[:, 0])]], [[g, b, b[:, 0]]], err=name)
        check(dstack, [[x, x]], [[g, g]], err=name)
        check(vstack, [[x, da.asarray(g[:2])]], [[g, g[:2]]], err=name)
    for name, x, g in cases((2, 3, 4), dtype):
        check(vstack, [[x, x]], [[g, g]], err=name)
        check(dstack, [[x, x]], [[g, g]], err=name)


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
    assert_raises_everywhere(TypeError, hstack, x, match="numpy.hstack")


# ---------------------------------------------------------------- swapaxes / ravel
@pytest.mark.parametrize("dtype", DTYPES)
def test_swapaxes(dtype):
    for name, x, g in cases((3, 4, 5), dtype):
        for a1, a2 in [(0, 1), (0, 2), (1, 2), (-1, 0), (1, 1)]:
            check(swapaxes, [x, a1, a2], [g, a1, a2], err=f"{name} {a1},{a2}")
    x, g = da.asarray(values((3, 4))), values((3, 4))
    raises(np.exceptions.AxisError, swapaxes, [x, 0, 2], [g, 0, 2])


@pytest.mark.parametrize("dtype", DTYPES)
def test_ravel(dtype):
    for shape in [(), (7,), (4, 5), (2, 3, 4)]:
        for name, x, g in cases(shape, dtype):
            for order in ("C", "F", "A", "K"):
                check(ravel, [x], [g], dict(order=order), err=f"{shape} {name} {order}")
    raises(ValueError, ravel, [da.ones(3)], [np.ones(3)], dict(order="Z"))


# ---------------------------------------------------------------- products
PRODUCTS = [((5,), (5,)), ((4, 5), (5,)), ((5,), (5, 3)), ((4, 5), (5, 3)), ((2, 4, 5), (5,)),
            ((2, 4, 5), (5, 3)), ((2, 4, 5), (3, 5, 2)), ((5,), (2, 5, 3)), ((), (4, 3)), ((4, 3), ())]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", PRODUCTS, ids=str)
def test_dot(shapes, dtype):
    sa, sb = shapes
    b = values(sb, dtype, 7)
    for name, x, g in cases(sa, dtype):
        for y in (da.asarray(b, split=0 if sb else None), da.asarray(b, split=None)):
            check(dot, [x, y], [g, b], err=f"{name} {y.split}", atol=_atol(dtype))


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


@pytest.mark.parametrize("dtype", DTYPES)
def test_vdot(dtype):
    b = values((12,), dtype, 5)
    for shape in [(12,), (3, 4), (2, 3, 2)]:
        for name, x, g in cases(shape, dtype):
            for y in (da.asarray(b, split=0), da.asarray(b.reshape(4, 3), split=1)):
                check(vdot, [x, y], [g, np.asarray(y.gather())], err=f"{shape} {name}", atol=1e-12)
    raises(ValueError, vdot, [da.ones(3), da.ones(4)], [np.ones(3), np.ones(4)])


@pytest.mark.parametrize("dtype", DTYPES)
def test_inner(dtype):
    for sa, sb in [((5,), (5,)), ((4, 5), (3, 5)), ((2, 3, 5), (5,)), ((5,), (2, 3, 5)), ((), (3, 5)), ((3, 5), ())]:
        b = values(sb, dtype, 9)
        for name, x, g in cases(sa, dtype):
            y = da.asarray(b, split=len(sb) - 1 if sb else None)
            check(inner, [x, y], [g, b], err=f"{sa}x{sb} {name}", atol=1e-12)
    raises(ValueError, inner, [da.ones((2, 3)), da.ones((2, 4))], [np.ones((2, 3)), np.ones((2, 4))])


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "complex128"])
def test_cross(dtype):
    b = values((3,), dtype, 4)
    for name, x, g in cases((6, 3), dtype):
        y = da.asarray(values((6, 3), dtype, 5), split=0)
        h = np.asarray(y.gather())
        check(cross, [x, y], [g, h], err=name, atol=_atol(dtype))
        check(cross, [x, b], [g, b], err=f"{name} broadcast", atol=_atol(dtype))
        check(cross, [x, da.asarray(b)], [g, b], err=f"{name} broadcast DArray", atol=_atol(dtype))
    for name, x, g in cases((3, 5), dtype):
        y = da.asarray(values((5, 3), dtype, 6), split=0)
        h = np.asarray(y.gather())
        check(cross, [x, y], [g, h], dict(axisa=0), err=name, atol=_atol(dtype))
        check(cross, [x, y], [g, h], dict(axisa=0, axisc=0), err=f"{name} axisc", atol=_atol(dtype))
        check(cross, [x, x], [g, g], dict(axis=0), err=f"{name} axis", atol=_atol(dtype))
        check(cross, [y, x], [h, g], dict(axisb=-2, axisc=-1), err=f"{name} axisb")
    raises(ValueError, cross, [da.ones((4, 4)), da.ones((4, 4))], [np.ones((4, 4)), np.ones((4, 4))])
    assert_raises_everywhere(ValueError, cross, da.ones((4, 2)), da.ones((4, 2)), match="numpy.cross")
    raises(np.exceptions.AxisError, cross, [da.ones((4, 3)), da.ones((4, 3))], [np.ones((4, 3)), np.ones((4, 3))],
           dict(axisc=2))


# ---------------------------------------------------------------- splitting
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool", "complex128"])
def test_array_split_and_split(dtype):
    for name, x, g in cases((7, 6), dtype):
        for axis in (0, 1, -1):
            for sections in (1, 2, 3, 4, 9):
                check(array_split, [x, sections], [g, sections], dict(axis=axis), err=f"{name} {sections} {axis}")
            for points in ([2, 5], [0, 3, 3, 10], [-2], [4, 1], np.array([1, 2]), []):
                for func in (array_split, split):
                    check(func, [x, points], [g, points], dict(axis=axis), err=f"{name} {points} {axis}")
        check(split, [x, 7], [g, 7], err=f"{name} 7")
        check(split, [x, 3], [g, 3], dict(axis=1), err=f"{name} 3 axis 1")
    for name, x, g in cases((10,), dtype):
        check(split, [x, 5], [g, 5], err=name)
        check(array_split, [x, 4], [g, 4], err=name)


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
@pytest.mark.parametrize("dtype", DTYPES)
def test_average(dtype):
    shape = (5, 6)
    for name, x, g in cases(shape, dtype):
        for axis in (None, 0, 1, -1, (0, 1), (1, 0)):
            for keepdims in (False, True):
                for returned in (False, True):
                    kw = dict(axis=axis, keepdims=keepdims, returned=returned)
                    check(average, [x], [g], kw, err=f"{name} {kw}", rtol=1e-5 if dtype == "float32" else 1e-12)
        w = values(shape, "float64", 3) ** 2 + 0.1
        wd = da.asarray(w, split=1)
        for axis in (None, 0, (0, 1)):
            for returned in (False, True):
                kw = dict(axis=axis, weights=wd, returned=returned)
                want = np.average(g, axis=axis, weights=w, returned=returned)
                compare(average(x, **kw), want, f"{name} full weights {axis}", rtol=1e-10)
                compare(np.average(x, **kw), want, f"{name} full weights {axis} (dispatch)", rtol=1e-10)
        for axis, ws in ((0, (5,)), (1, (6,)), (-1, (6,)), ((1, 0), (6, 5))):
            w1 = values(ws, "int64", 4) ** 2 + 1
            for wgt in (w1, da.asarray(w1, split=0)):
                check(average, [x], [g], dict(axis=axis, weights=wgt, keepdims=True), err=f"{name} {axis}",
                      gkwargs=dict(axis=axis, weights=w1, keepdims=True), rtol=1e-10)
                kw = dict(axis=axis, weights=wgt, returned=True)
                want = np.average(g, axis=axis, weights=w1, returned=True)
                compare(average(x, **kw), want, f"{name} axis weights {axis}", rtol=1e-10)


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
@pytest.mark.parametrize("dtype", DTYPES)
def test_cov(dtype):
    for shape in [(3, 11), (11, 3), (11,), (1, 11)]:
        for name, x, g in cases(shape, dtype):
            for kw in COV_KWARGS:
                nobs = shape[-1] if kw.get("rowvar", True) or len(shape) == 1 else shape[0]
                ddof = kw.get("ddof", 0 if kw.get("bias") else 1)
                if dtype == "complex128" and nobs <= ddof:
                    continue  # scaled by 1/0: the sign of each rounding-noise imaginary part decides +-inf
                check(cov, [x], [g], kw, err=f"{shape} {name} {kw}", rtol=1e-10, atol=1e-12)
    for name, x, g in cases((2, 9), dtype):
        b = values((9,), dtype, 3)
        for y in (b, da.asarray(b, split=0)):
            check(cov, [x, y], [g, b], err=name, rtol=1e-10, atol=1e-12)
    c = values((9, 3), dtype, 4)
    for name, x, g in cases((9, 2), dtype):
        for kw in (dict(rowvar=False), dict(rowvar=False, bias=True)):
            check(cov, [x, da.asarray(c, split=0)], [g, c], kw, err=f"{name} y {kw}", rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "complex128", "int64"])
def test_cov_weights(dtype):
    f = np.array([1, 2, 0, 3, 1, 1, 4, 2, 1], dtype=np.int64)
    a = np.abs(values((9,), "float64", 8)) + 0.5
    for name, x, g in cases((3, 9), dtype):
        for kw, dkw in [(dict(fweights=f), dict(fweights=da.asarray(f, split=0))),
                        (dict(aweights=a), dict(aweights=da.asarray(a, split=0))),
                        (dict(fweights=f, aweights=a), dict(fweights=f, aweights=da.asarray(a))),
                        (dict(fweights=f, aweights=a, ddof=0), dict(fweights=f, aweights=a, ddof=0)),
                        (dict(fweights=f, ddof=2), dict(fweights=f, ddof=2))]:
            want = np.cov(g, **kw)
            compare(cov(x, **dkw), want, f"{name} {list(kw)}", rtol=1e-10, atol=1e-12)
            compare(np.cov(x, **dkw), want, f"{name} {list(kw)} (dispatch)", rtol=1e-10, atol=1e-12)


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
@pytest.mark.parametrize("dtype", DTYPES)
def test_corrcoef(dtype):
    for shape in [(3, 11), (11, 4), (11,)]:
        for name, x, g in cases(shape, dtype):
            for kw in (dict(), dict(rowvar=False)):
                with np.errstate(divide="ignore", invalid="ignore"):
                    check(corrcoef, [x], [g], kw, err=f"{shape} {name} {kw}", rtol=1e-10, atol=1e-12)
    b = values((11,), dtype, 2)
    for name, x, g in cases((11,), dtype):
        check(corrcoef, [x, da.asarray(b, split=0)], [g, b], err=name, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- diagonals
@pytest.mark.parametrize("dtype", DTYPES)
def test_trace_and_diagonal(dtype):
    for name, x, g in cases((5, 7), dtype):
        for offset in (0, 1, -2, 6, -5, 9):
            for func in (trace, diagonal):
                check(func, [x, offset], [g, offset], err=f"{name} {offset}",
                      rtol=1e-5 if dtype == "float32" else 1e-12)
            check(diagonal, [x], [g], dict(offset=offset, axis1=1, axis2=0), err=f"{name} {offset} swapped")
    for name, x, g in cases((3, 4, 5), dtype):
        for axis1, axis2 in [(0, 1), (1, 2), (2, 0), (-1, -2)]:
            kw = dict(offset=1, axis1=axis1, axis2=axis2)
            for func in (trace, diagonal):
                check(func, [x], [g], kw, err=f"{name} {kw}", rtol=1e-5 if dtype == "float32" else 1e-12)
    if dtype != "bool":
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


@pytest.mark.parametrize("dtype", DTYPES)
def test_diag(dtype):
    for name, x, g in cases((6,), dtype):
        for k in (0, 1, 3, -1, -4):
            check(diag, [x], [g], dict(k=k), err=f"{name} k={k}")
    for name, x, g in cases((4, 6), dtype):
        for k in (0, 2, -3, 7):
            check(diag, [x, k], [g, k], err=f"{name} k={k}")
    raises(ValueError, diag, [da.ones((2, 2, 2))], [np.ones((2, 2, 2))])


def test_diag_special_values():
    g = np.array([np.inf, np.nan, -1.0, 2.0])
    for name, kw in layouts((4,)).items():
        check(diag, [da.asarray(g, **kw)], [g], dict(k=-1), err=name)


# ---------------------------------------------------------------- elementwise
@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_to_num(dtype):
    for shape in [(), (7,), (4, 5)]:
        for name, x, g in cases(shape, dtype, special=True):
            check(nan_to_num, [x], [g], err=f"{shape} {name}")
            kw = dict(nan=-1.5, posinf=1e30, neginf=-7.0)
            check(nan_to_num, [x], [g], kw, err=f"{shape} {name} values")
            y = da.asarray(x, copy=True)
            got = nan_to_num(y, copy=False, nan=3.0)
            assert got is y
            assert_equal(y, np.nan_to_num(g, nan=3.0), err_msg=f"{shape} {name} copy=False")


@pytest.mark.parametrize("dtype", DTYPES + ["complex64"])
def test_angle(dtype):
    for shape in [(), (9,), (3, 4)]:
        for name, x, g in cases(shape, dtype, special=dtype != "float32"):
            for deg in (False, True):
                check(angle, [x], [g], dict(deg=deg), err=f"{shape} {name} deg={deg}")


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # NumPy's own, rounding inf parts
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "complex128"])
def test_around(dtype):
    for shape in [(), (11,), (3, 5)]:
        g = values(shape, dtype, 1, special=dtype != "int64")
        g = g * 1000 if dtype != "int64" else g * 137
        g = g.astype(dtype)
        for name, kw in layouts(shape).items():
            x = da.asarray(g, **kw)
            for decimals in (0, 1, 2, 5, -1, -2, 12):
                want = np.around(g, decimals)
                compare(around(x, decimals), want, f"{shape} {name} {decimals}", rtol=0)
                compare(np.around(x, decimals), want, f"{shape} {name} {decimals} (np.around)", rtol=0)
                compare(np.round(x, decimals=decimals), want, f"{shape} {name} {decimals} (np.round)", rtol=0)
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 0.125, 0.375, 2.675])
    for name, kw in layouts((8,)).items():
        check(around, [da.asarray(halves, **kw)], [halves], err=name, rtol=0)
        check(around, [da.asarray(halves, **kw), 2], [halves, 2], err=name, rtol=0)


def test_around_bad_input():
    x = da.asarray(np.array([True, False]))
    assert_raises_everywhere(TypeError, around, x, match="numpy.around")
    assert_raises_everywhere(TypeError, np.round, x, 1, match="numpy.around")
    raises(TypeError, around, [da.ones(2), 1.5], [np.ones(2), 1.5])
    assert_raises_everywhere(TypeError, around, da.ones(2), out=np.zeros(2), match="numpy.around")


@pytest.mark.parametrize("fp_dtype", ["float64", "complex128"])
def test_interp(fp_dtype):
    xp = np.array([-1.0, -0.25, 0.0, 0.5, 2.0])
    fp = values((5,), fp_dtype, 2)
    for name, x, g in cases((4, 6), "float64"):
        for xs, fs in ((xp, fp), (list(xp), list(fp)), (da.asarray(xp, split=0), da.asarray(fp))):
            check(interp, [x, xs, fs], [g, xp, fp], err=name)
        check(interp, [x, xp, fp], [g, xp, fp], dict(left=-9.0, right=9.0), err=f"{name} left/right")
        check(interp, [x, xp, fp], [g, xp, fp], dict(period=1.5), err=f"{name} period")
    for name, x, g in cases((7,), "int64"):
        check(interp, [x, xp, fp], [g, xp, fp], err=name)
    g = np.array([np.nan, np.inf, -np.inf, 0.5])
    check(interp, [da.asarray(g, split=0), xp, fp], [g, xp, fp], err="special")


def test_interp_bad_input():
    x, g = da.asarray(values((5,)), split=0), values((5,))
    raises(ValueError, interp, [x, [0.0, 1.0], [1.0]], [g, [0.0, 1.0], [1.0]])
    raises(ValueError, interp, [x, [], []], [g, [], []])
    raises(ValueError, interp, [x, [0.0, 1.0], [0.0, 1.0]], [g, [0.0, 1.0], [0.0, 1.0]], dict(period=0))
    c = values((5,), "complex128")
    raises(TypeError, interp, [da.asarray(c), [0.0, 1.0], [0.0, 1.0]], [c, [0.0, 1.0], [0.0, 1.0]])


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
def test_digitize(dtype):
    for bins in (np.array([-1.0, 0.0, 0.5, 2.0]), np.array([3, 1, 0, -2]), np.array([0.0, 0.0, 1.0])):
        for name, x, g in cases((4, 6), dtype):
            for right in (False, True):
                check(digitize, [x, bins], [g, bins], dict(right=right), err=f"{name} {bins} {right}")
                check(digitize, [x, da.asarray(bins, split=0)], [g, bins], dict(right=right), err=f"{name} D")


def test_digitize_bad_input():
    x, g = da.asarray(values((5,)), split=0), values((5,))
    raises(ValueError, digitize, [x, [0.0, 2.0, 1.0]], [g, [0.0, 2.0, 1.0]])
    c = values((5,), "complex128")
    raises(TypeError, digitize, [da.asarray(c), [0.0, 1.0]], [c, [0.0, 1.0]])


# ---------------------------------------------------------------- bincount
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "uint64", "bool"])
def test_bincount(dtype):
    for n in (0, 1, 13, 40):
        g = np.random.default_rng(n).integers(0, 2 if dtype == "bool" else 9, n).astype(dtype)
        w = np.random.default_rng(n + 1).standard_normal(n)
        for name, kw in layouts((n,)).items():
            x = da.asarray(g, **kw)
            check(bincount, [x], [g], err=f"{n} {name}")
            check(bincount, [x], [g], dict(minlength=12), err=f"{n} {name} minlength")
            for wgt in (w, da.asarray(w, split=0), da.asarray(w, split=None)):
                check(bincount, [x], [g], dict(weights=wgt), err=f"{n} {name} weights", gkwargs=dict(weights=w),
                      rtol=1e-12, atol=1e-12)
                want = np.bincount(g, weights=w, minlength=3)
                compare(bincount(x, wgt, 3), want, f"{n} {name} positional", rtol=1e-12, atol=1e-12)


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
@pytest.mark.parametrize("dtype", DTYPES)
def test_array(dtype):
    for shape in [(), (7,), (4, 5)]:
        for name, x, g in cases(shape, dtype):
            y = array(x)
            assert y is not x
            assert_equal(y, np.array(g), err_msg=f"{shape} {name} copy")
            assert array(x, copy=False) is x and array(x, copy=None) is x
            assert_equal(array(x, dtype=np.complex128), np.array(g, dtype=np.complex128), err_msg=name)
            for ndmin in (0, 1, 3):
                want = np.array(g, ndmin=ndmin)
                assert_equal(array(x, ndmin=ndmin), want, err_msg=f"{name} ndmin={ndmin}")
                for lname, kw in layouts(want.shape).items():
                    got = array(g, ndmin=ndmin, **kw)
                    assert_equal(got, want, err_msg=f"{name} NumPy data ndmin={ndmin} {lname}")
                    assert got.layout == da.asarray(want, **kw).layout
            z = np.array(g.tolist(), like=x)  # numpy.array dispatches through like=
            assert isinstance(z, DArray)
            assert_equal(z, np.array(g.tolist()), err_msg=f"{name} like=")
    g = values((5, 4))
    for name, kw in layouts(g.shape).items():  # a DArray re-laid out
        x = da.asarray(g, split=0)
        got = array(x, **kw)
        assert got.layout == da.asarray(g, **kw).layout
        assert_equal(got, g, err_msg=name)


def test_array_bad_input():
    x = da.asarray(values((5,)), split=0)
    for kw in (dict(dtype=np.float32), dict(split=None), dict(ndmin=2)):
        assert_raises_everywhere(ValueError, array, x, copy=False, match="numpy.array", **kw)
    assert_raises_everywhere(ValueError, array, [1, 2], copy=False, match="numpy.array")
    assert_raises_everywhere(TypeError, array, ["a", "b"], match="numpy.array")
    assert_raises_everywhere(ValueError, array, [1, 2], order="Z", match="numpy.array")
