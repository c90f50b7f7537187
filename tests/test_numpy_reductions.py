"""NumPy's where=, initial=, out= and ddof= on reductions (methods, darray's functions, NumPy's), at 1-4 ranks.

The oracle is NumPy on the gathered input with the same keywords. Masks come
as NumPy arrays, as DArrays on the array's layout and on another one, and as
shapes that broadcast; rows with no selected cell give NumPy's NaN.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import darray as da
from darray.testing import assert_equal, assert_raises_everywhere

from _cases import layouts, values as seeded

pytestmark = pytest.mark.mpi

SHAPE = (7, 5)
#: Rows, uneven columns (an empty block), replicated, a 2x2 grid at 4 ranks.
LAYOUTS = layouts(SHAPE, "split0", "uneven1", "replicated", "grid2x2")
DTYPES = ["float64", "int64", "complex128", "bool"]
FUNCS = ["sum", "prod", "min", "max", "all", "any", "mean", "var", "std"]
#: what NumPy needs for a masked min/max (no identity), per dtype
NEEDS_INITIAL = {"min": {"bool": True, "other": 100}, "max": {"bool": False, "other": -100}}


def values(dtype: str) -> np.ndarray:
    """Small integers (positive for True, an integer imaginary part for complex): ties and empty where= rows."""
    a = seeded(SHAPE, "int64", 7, low=-9, high=10)
    if dtype == "bool":
        return a > 0
    if dtype == "complex128":
        return a + 1j * seeded(SHAPE, "int64", 7, low=-3, high=4, key="imag")
    return a.astype(dtype)


def numpy_result(func: str, a, **kw):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(getattr(np, func)(a, **kw))


def darray_result(call, *args, **kw):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return call(*args, **kw)


def applicable(func: str, dtype: str) -> bool:
    if dtype == "complex128" and func in ("min", "max"):
        return False  # darray orders real numbers only (the standard)
    if dtype == "bool" and func in ("min", "max") and os.environ.get("DARRAY_BACKEND", "numpy") != "numpy":
        return False  # the standard orders numbers only: ufunc minimum/maximum of booleans need NumPy's loops
    return not (dtype == "bool" and func in ("var", "std", "mean", "prod"))


def _calls(func: str):
    """The three spellings of one reduction: the method, NumPy's function (dispatched), darray's function."""
    return {"method": lambda x, **kw: getattr(x, func)(**kw), "numpy": getattr(np, func), "darray": getattr(da, func)}


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@pytest.mark.parametrize("func", FUNCS)
def test_where_matches_numpy(func, layout):
    """Every dtype, mask kind, axis and spelling, cycled so that each appears without the full product."""
    rows = np.arange(SHAPE[0])[:, None] % 3 != 0
    masks = ["numpy", "darray-aligned", "broadcast-row", "darray-replicated-column"]
    calls = _calls(func)
    i = 0
    for dtype in [d for d in DTYPES if applicable(func, d)]:
        a = values(dtype)
        x = layout.array(a)
        extra = {"initial": NEEDS_INITIAL[func]["bool" if dtype == "bool" else "other"]} if func in NEEDS_INITIAL \
            else {}
        for mask_kind in masks:
            m_np = {"numpy": np.abs(a) > 2, "darray-aligned": np.abs(a) > 2,
                    "broadcast-row": np.array([True, False, True, True, False]),
                    "darray-replicated-column": rows}[mask_kind]
            m = {"darray-aligned": lambda: layout.array(m_np),
                 "darray-replicated-column": lambda: da.asarray(m_np, split=None)}.get(mask_kind, lambda: m_np)()
            for axis in (None, 0, 1):
                keepdims = bool(i % 2)
                spelling = list(calls)[i % 3]
                i += 1
                kw = dict(axis=axis, keepdims=keepdims, **extra)
                expected = numpy_result(func, a, where=m_np, **kw)
                got = darray_result(calls[spelling], x, where=m, **kw)
                assert_equal(got, expected, err_msg=f"{spelling} {func} {dtype} {layout} mask={mask_kind} axis={axis} "
                                                    f"keepdims={keepdims}")


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@pytest.mark.parametrize("func", ["sum", "prod", "min", "max"])
def test_initial_matches_numpy(func, layout):
    for dtype in ("float64", "int64"):
        a = values(dtype)
        x = layout.array(a)
        for initial in (0, 3, -50):
            for axis in (None, 0, 1, (0, 1)):
                expected = numpy_result(func, a, axis=axis, initial=initial)
                msg = f"{func} {dtype} {layout} initial={initial} axis={axis}"
                assert_equal(getattr(x, func)(axis=axis, initial=initial), expected, err_msg="method " + msg)
                assert_equal(getattr(np, func)(x, axis=axis, initial=initial), expected, err_msg="numpy " + msg)
                assert_equal(getattr(da, func)(x, axis, initial=initial), expected, err_msg="darray " + msg)


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@pytest.mark.parametrize("func", ["var", "std"])
def test_ddof_and_correction(func, layout):
    a = values("float64")
    x = layout.array(a)
    for ddof in (0, 1, 2):
        expected = numpy_result(func, a, axis=0, ddof=ddof)
        assert_equal(getattr(da, func)(x, axis=0, ddof=ddof), expected, err_msg=f"{func} ddof={ddof}")
        assert_equal(getattr(da, func)(x, 0, None, None, ddof), expected, err_msg=f"{func} positional")
        assert_equal(getattr(x, func)(0, ddof=ddof, where=a > -5), numpy_result(func, a, axis=0, ddof=ddof,
                                                                                where=a > -5),
                     err_msg=f"{func} ddof={ddof} where")


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_out_takes_the_result(layout):
    a = values("float64")
    x = layout.array(a)
    out = da.zeros(SHAPE[1])
    got = np.sum(x, axis=0, where=a > 0, out=out)
    assert got is out
    assert_equal(out, np.sum(a, axis=0, where=a > 0))
    got = x.mean(axis=0, where=a > 0, out=out)
    assert got is out
    assert_equal(out, np.mean(a, axis=0, where=a > 0))


def test_empty_rows_give_nan_with_numpy_warning():
    a = values("float64")
    mask = np.zeros(SHAPE, dtype=bool)
    mask[:, 0] = True
    x = da.asarray(a, split=0)
    with pytest.warns(RuntimeWarning):
        got = x.mean(axis=1, where=np.zeros(SHAPE, dtype=bool))
    assert_equal(got, np.full(SHAPE[0], np.nan))
    with pytest.warns(RuntimeWarning):
        got = x.var(axis=0, where=mask)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_equal(got, np.var(a, axis=0, where=mask))


def test_bad_keywords_raise_everywhere():
    x = da.asarray(values("float64"), split=0)
    assert_raises_everywhere(ValueError, x.min, where=np.ones(SHAPE, dtype=bool), match="initial")
    assert_raises_everywhere(TypeError, x.sum, where=np.ones(SHAPE), match="boolean")
    assert_raises_everywhere(ValueError, x.sum, where=np.ones((3, 5), dtype=bool), match="broadcast")
    assert_raises_everywhere(TypeError, x.mean, initial=1.0, match="initial")
    assert_raises_everywhere(TypeError, x.any, where=np.ones(SHAPE, dtype=bool), initial=True)
