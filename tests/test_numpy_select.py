"""NumPy's selection and masked-assignment functions on DArrays against NumPy, on every rank count (issue #15).

``select``, ``choose``, ``compress``, ``extract``, ``place``, ``putmask``,
``copyto``, ``piecewise``, ``fill_diagonal``, ``lexsort``, ``sort_complex``:
each called as ``darray.f(...)`` and as ``numpy.f(...)`` on DArrays
(``__array_function__``) over layouts of ``tests/_cases.py`` named in the test ids (split along each
axis, uneven blocks with an empty one, replicated, a 2x2 grid at 4 ranks), for
sizes that do not divide evenly (7, 13) and several dtypes. In-place
functions are compared with NumPy's in-place result. Bad input raises
NumPy's exception type with one message on every rank.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray import DArray
from darray._api.numpy.select import ndarray_compress
from darray.testing import assert_equal, assert_raises_everywhere, uneven_sizes as uneven

from _cases import P, layouts, values as seeded

pytestmark = pytest.mark.mpi

V = (13,)  # a vector that divides evenly over no rank count
M = (7, 5)  # a matrix


def values(shape, dtype="float64", seed=0) -> np.ndarray:
    """Small integers (halves for floats, integer parts for complex): repeats on purpose (ties)."""
    kind = np.dtype(dtype).kind
    if kind == "f":
        return (seeded(shape, "int64", seed, low=-6, high=7) / 2).astype(dtype)
    if kind == "c":
        imag = seeded(shape, "int64", seed, low=-3, high=4, key="imag")
        return (seeded(shape, "int64", seed, low=-3, high=4) + 1j * imag).astype(dtype)
    return seeded(shape, dtype, seed, low=-5, high=6)


def via(name: str, case: str):
    """``darray.<name>`` or ``numpy.<name>`` (``__array_function__``), alternating with the case, so that
    both paths run over the parameter grid without doubling it."""
    return getattr(np if sum(map(ord, case)) % 2 else da, name)


def params(shape):
    """Replicated, each split axis, axis 0 uneven with an empty block (2+ ranks), a 2x2 grid at 4 ranks."""
    cuts = [f"split{a}" for a in range(len(shape))] + (["uneven0"] if P > 1 else [])
    return [pytest.param(c, id=c.id) for c in layouts(shape, "replicated", *cuts,
                                                      *(("grid2x2",) if len(shape) == 2 else ()))]


def arr(g, layout) -> DArray:
    return layout.array(g)


# ---------------------------------------------------------------- select
@pytest.mark.parametrize("dtype", ["bool", "complex128"])
@pytest.mark.parametrize("layout", params(M))
def test_select(dtype, layout):
    g, g2 = values(M, dtype), values(M, dtype, seed=5)
    h = values(M, "float64", seed=1)
    x, y = arr(g, layout), da.asarray(h, split=None)  # y replicated: aligned to x's blocks
    conds_g, conds = [h > 1, h < -1], [y > 1, y < -1]
    want = np.select(conds_g, [g, g2], default=g[0])  # default broadcast from one row (numpy)
    assert_equal(da.select(conds, [x, da.asarray(g2)], default=g[0]), want, err_msg=f"select {dtype} {layout}")
    # Python scalars stay weak, numpy choices broadcast, default an array
    want = np.select(conds_g, [3, h[0]], default=g)
    assert_equal(np.select(conds, [3, h[0]], default=x), want, err_msg=f"select scalars {dtype} {layout}")


def test_select_array_likes_and_first_wins():
    g = np.arange(13)
    x = da.asarray(g)
    got = da.select([x > 2, x > 5, [True] * 13], [x, -x, 0.5])
    assert_equal(got, np.select([g > 2, g > 5, [True] * 13], [g, -g, 0.5]), err_msg="select first true wins")
    assert_equal(da.select([False, x > 5], [x, 1]), np.select([False, g > 5], [g, 1]), err_msg="select bool")
    for dtype in ("int64", "float64"):
        h = g.astype(dtype)
        y = da.asarray(h, split=0, sizes=uneven(13, P))
        assert_equal(da.select([y < 3, y > 9], [y, 2], default=h[::-1]), np.select([h < 3, h > 9], [h, 2], h[::-1]),
                     err_msg=f"select {dtype}")
    plain = da.select([g > 4], [g])  # no DArray: NumPy's result as a DArray
    assert isinstance(plain, DArray)
    assert_equal(plain, np.select([g > 4], [g]), err_msg="select without DArray")


def test_select_bad_input():
    x = da.arange(13)
    assert_raises_everywhere(ValueError, da.select, [x > 1], [x, x], match="select")
    assert_raises_everywhere(ValueError, da.select, [], [], match="select")
    assert_raises_everywhere(TypeError, da.select, [x], [x], match="invalid entry 0")
    assert_raises_everywhere(ValueError, np.select, [x > 1], [da.arange(5)], match="select")


# ---------------------------------------------------------------- choose
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
@pytest.mark.parametrize("layout", params(M))
def test_choose(mode, layout):
    f = via("choose", mode + str(layout))
    idx_g = values(M, "int64") % 3 if mode == "raise" else values(M, "int64")
    c0, c1 = values(M, "float64", seed=2), values((5,), "float64", seed=3)
    a = arr(idx_g, layout)
    choices = [da.asarray(c0, split=None if layout.kw.get("split") is None else 1), c1, -7]
    want = np.choose(idx_g, [c0, c1, -7], mode=mode)
    assert_equal(f(a, choices, mode=mode), want, err_msg=f"choose {mode} {layout}")


@pytest.mark.parametrize("dtype", ["bool", "int32", "complex128"])
def test_choose_dtypes_out_and_method(dtype):
    g = values(V, "int64") % 2
    c = [values(V, dtype, seed=4), values(V, dtype, seed=5)]
    a = da.asarray(g, split=0, sizes=uneven(13, P))
    want = np.choose(g, c)
    assert_equal(np.choose(a, [da.asarray(v) for v in c]), want, err_msg=f"choose {dtype}")
    assert_equal(a.choose(c), want, err_msg=f"DArray.choose {dtype}")
    out = da.zeros(13, dtype=np.complex128)
    got = da.choose(a, c, out=out)
    assert got is out
    assert_equal(out, want.astype(np.complex128), err_msg=f"choose out= {dtype}")
    # choices given as one array (its first axis) and an array-like index
    assert_equal(da.choose(list(g), da.asarray(np.stack(c))), want, err_msg=f"choose stacked {dtype}")


def test_choose_bad_input():
    a = da.asarray([0, 1, 2, 1, 0, 1, 0])
    c = [da.arange(7), da.zeros(7, dtype=da.int64)]
    assert_raises_everywhere(ValueError, da.choose, a, c, match="invalid entry in choice array")
    assert_raises_everywhere(ValueError, np.choose, -a, c, match="invalid entry in choice array")
    assert_raises_everywhere(ValueError, da.choose, a, c, mode="nearest", match="clipmode")
    assert_raises_everywhere(TypeError, da.choose, da.astype(a, da.float64), c, mode="wrap", match="choose")
    assert_raises_everywhere(TypeError, da.choose, a, c, out=da.zeros(6), mode="clip", match="output array")
    assert_raises_everywhere(ValueError, da.choose, a, [], match="0-length")
    index = np.zeros(7, dtype=np.int64)
    index[-1] = 2  # a NumPy index bad only in the last rank's part of the result: every rank raises
    assert_raises_everywhere(ValueError, np.choose, index, c, match="invalid entry in choice array")
    assert_raises_everywhere(ValueError, da.choose, a, [da.arange(5), 1], mode="wrap", match="choose")


# ---------------------------------------------------------------- compress, extract
COMPRESS_CASES = {
    "axis0": (None, 0), "axis-1": (None, -1), "flat": (None, None),
    "short": (3, 0), "long-false": (9, 0), "flat-short": (20, None),
}


@pytest.mark.parametrize("case", list(COMPRESS_CASES))
@pytest.mark.parametrize("layout", params(M))
def test_compress(case, layout):
    f = via("compress", case + str(layout))
    length, axis = COMPRESS_CASES[case]
    g = values(M, "int64")
    n = length if length is not None else (g.size if axis is None else g.shape[axis])
    cond = values((n,), "bool", seed=6)
    if case == "long-false":
        cond[7:] = False
    want = np.compress(cond, g, axis=axis)
    x = arr(g, layout)
    given = cond.astype(int).tolist() if "short" in case else da.asarray(cond)  # a list of 0/1, or a DArray
    assert_equal(f(given, x, axis=axis), want, err_msg=f"compress {case} {layout}")


def test_compress_out_method_and_bad_input():
    g = values(M, "float64")
    x = da.asarray(g, split=1)
    cond = [True, False, True]
    out = da.zeros((2, 5))
    assert da.compress(cond, x, axis=0, out=out) is out
    assert_equal(out, np.compress(cond, g, axis=0), err_msg="compress out=")
    assert_equal(ndarray_compress(x, cond, axis=1), g.compress(cond, axis=1), err_msg="ndarray.compress")
    assert_raises_everywhere(ValueError, da.compress, [[True]], x, match="1-d")
    assert_raises_everywhere(IndexError, da.compress, da.asarray([True] * 7 + [False, True]), x, axis=0,
                             match="index 8 is out of bounds")
    assert_raises_everywhere(np.exceptions.AxisError, np.compress, cond, x, axis=2, match="compress")
    assert_raises_everywhere(ValueError, da.compress, cond, x, axis=0, out=da.zeros(3), match="compress")


@pytest.mark.parametrize("layout", params(M))
def test_extract(layout):
    g = values(M, "float32")
    cond = values(M, "int64", seed=7)  # nonzero entries select
    x = arr(g, layout)
    assert_equal(np.extract(arr(cond, layout), x), np.extract(cond, g), err_msg=f"extract {layout}")
    flat = cond.reshape(-1)[:20]
    assert_equal(da.extract(flat, x), np.extract(flat, g), err_msg=f"extract short condition {layout}")


@pytest.mark.parametrize("dtype", ["bool", "complex64"])
def test_extract_dtypes(dtype):
    g = values(V, dtype)
    cond = values(V, "float64", seed=8)
    assert_equal(da.extract(da.asarray(cond, split=None), da.asarray(g, split=0, sizes=uneven(13, P))),
                 np.extract(cond, g), err_msg=f"extract {dtype}")


def test_extract_bad_input():
    x = da.arange(6)
    assert_raises_everywhere(IndexError, da.extract, [0] * 6 + [1], x, match="out of bounds")


# ---------------------------------------------------------------- place, putmask
@pytest.mark.parametrize("vals", ["short-list", "scalar", "darray-long", "darray-short"])
@pytest.mark.parametrize("layout", params(M))
def test_place(vals, layout):
    f = via("place", vals + str(layout))
    g = values(M, "int64")
    mask = values(M, "bool", seed=8)
    count = int(mask.sum())
    v = {"short-list": [7, 8, 9], "scalar": -1, "darray-long": np.arange(100, 100 + count + 3),
         "darray-short": np.array([5, 6])}[vals]
    want = g.copy()
    np.place(want, mask, v)
    x = arr(g, layout)
    given = da.asarray(v, split=0) if vals.startswith("darray") else v
    assert f(x, arr(mask, layout), given) is None
    assert_equal(x, want, err_msg=f"place {vals} {layout}")


@pytest.mark.parametrize("dtype", ["bool", "float64", "complex128"])
def test_place_dtypes_and_mask_shapes(dtype):
    g = values(V, dtype)
    mask = values(V, "bool", seed=9)
    vals = values((4,), dtype, seed=10)
    want = g.copy()
    np.place(want, mask, vals)
    x = da.asarray(g, split=0, sizes=uneven(13, P))
    da.place(x, mask.astype(np.int8).tolist(), vals)  # a list mask, nonzero entries select
    assert_equal(x, want, err_msg=f"place {dtype}")
    m = values((2, 3), "float64", seed=11)
    want, x = np.arange(6.0).reshape(3, 2), da.asarray(np.arange(6.0).reshape(3, 2), split=0)
    np.place(want, m.reshape(3, 2), [1.5])
    da.place(x, da.asarray(m), [1.5])  # mask of another shape, same size: paired by flat position
    assert_equal(x, want, err_msg="place mask of another shape")


def test_place_bad_input():
    x = da.arange(6)
    assert_raises_everywhere(ValueError, da.place, x, [True] * 5, [1], match="same size")
    assert_raises_everywhere(ValueError, da.place, x, x > 2, [], match="empty array")
    assert_raises_everywhere(TypeError, np.place, x, x > 2, np.array([1.5]), match="place")
    assert_raises_everywhere(TypeError, da.place, list(range(6)), x > 2, [1], match="DArray")  # (NumPy refuses a list too)
    a = np.arange(6)  # a NumPy array (every rank's own) is written as NumPy writes it
    da.place(a, x > 2, [1])
    np.testing.assert_array_equal(a, np.where(np.arange(6) > 2, 1, np.arange(6)))
    y = da.arange(6)
    da.place(y, y > 9, [])  # nothing selected: empty values are fine, as in NumPy
    assert_equal(y, np.arange(6), err_msg="place nothing")


@pytest.mark.parametrize("vals", ["full-darray", "full-numpy", "short", "darray-short"])
@pytest.mark.parametrize("layout", params(M))
def test_putmask(vals, layout):
    f = via("putmask", vals + str(layout))
    g = values(M, "float64")
    mask = values(M, "bool", seed=12)
    full = values(M, "float64", seed=13)
    v = {"full-darray": full, "full-numpy": full, "short": [1.5, -2.5, 3.0],
         "darray-short": np.array([4.0, 5.0, 6.0, 7.0])}[vals]
    want = g.copy()
    np.putmask(want, mask, v)
    x = arr(g, layout)
    given = {"full-darray": lambda: da.asarray(full, split=1), "darray-short": lambda: da.asarray(v)}.get(
        vals, lambda: v)()
    assert f(x, arr(mask, layout), given) is None
    assert_equal(x, want, err_msg=f"putmask {vals} {layout}")


@pytest.mark.parametrize("dtype", ["bool", "int16", "complex64"])
def test_putmask_dtypes_and_shapes(dtype):
    g = values(V, dtype)
    mask = values(V, "bool", seed=14)
    vals = values((5,), dtype, seed=15)
    want = g.copy()
    np.putmask(want, mask, vals)
    x = da.asarray(g, split=0, sizes=uneven(13, P))
    da.putmask(x, da.asarray(mask), vals)
    assert_equal(x, want, err_msg=f"putmask {dtype}")
    g2 = np.arange(12).reshape(3, 4)
    want = g2.copy()
    np.putmask(want, (g2 % 3 == 0).reshape(4, 3), g2[::-1] * 10)
    x = da.asarray(g2, split=1)
    da.putmask(x, da.asarray((g2 % 3 == 0).reshape(4, 3)), da.asarray(g2[::-1] * 10))
    assert_equal(x, want, err_msg="putmask mask of another shape")


def test_putmask_bad_input():
    x = da.arange(6)
    da.putmask(x, x > 3, 9)  # a scalar
    assert_equal(x, np.where(np.arange(6) > 3, 9, np.arange(6)), err_msg="putmask scalar")
    x = da.arange(6)
    assert_raises_everywhere(ValueError, da.putmask, x, [True] * 7, 1, match="same size")
    assert_raises_everywhere(TypeError, np.putmask, x, x > 2, da.arange(6.0), match="safe")
    assert_raises_everywhere(OverflowError, da.putmask, da.zeros(3, dtype=da.int8), [True] * 3, 300)
    assert_raises_everywhere(TypeError, da.putmask, [1, 2], da.asarray([True, False]), 1, match="DArray")
    da.putmask(x, x > 2, [])  # empty values: nothing written, as in NumPy
    assert_equal(x, np.arange(6), err_msg="putmask empty values")


# ---------------------------------------------------------------- copyto
@pytest.mark.parametrize("src", ["darray", "row-scalar", "darray-where", "numpy-where"])
@pytest.mark.parametrize("layout", params(M))
def test_copyto(src, layout):
    f = via("copyto", src + str(layout))
    g = values(M, "float64")
    s = values(M, "float32", seed=16)
    w = values(M, "bool", seed=17)
    kind = {"darray": (s, True), "row-scalar": (s[2], True), "darray-where": (s, w),
            "numpy-where": (s[1:2], w[3])}[src]
    want = g.copy()
    np.copyto(want, kind[0], where=kind[1])
    x = arr(g, layout)
    given_src = da.asarray(s, split=1 if layout.kw.get("split") == 0 else 0) if src.startswith("darray") else kind[0]
    given_where = arr(w, layout) if src == "darray-where" else kind[1]
    assert f(x, given_src, where=given_where) is None
    assert_equal(x, want, err_msg=f"copyto {src} {layout}")
    if src == "row-scalar":  # a Python scalar, and where=False (nothing written)
        f(x, 2.5, where=w)
        f(x, -1.0, where=False)
        np.copyto(want, 2.5, where=w)
        assert_equal(x, want, err_msg=f"copyto scalar {layout}")


@pytest.mark.parametrize("casting,src_dtype,dst_dtype", [
    ("no", "int64", "int64"), ("safe", "int8", "float32"), ("same_kind", "float64", "float32"),
    ("unsafe", "float64", "int16"), ("unsafe", "complex128", "bool"), ("equiv", "bool", "bool"),
])
def test_copyto_castings(casting, src_dtype, dst_dtype):
    s = values(V, "int64").astype(src_dtype)
    want = np.zeros(13, dst_dtype)
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.copyto(want, s, casting=casting)
            x = da.zeros(13, dtype=dst_dtype, split=0, sizes=uneven(13, P))
            da.copyto(x, da.asarray(s), casting=casting)
    assert_equal(x, want, err_msg=f"copyto {casting} {src_dtype}->{dst_dtype}")


def test_copyto_bad_input():
    x = da.zeros(6, dtype=da.float32)
    assert_raises_everywhere(TypeError, da.copyto, x, da.arange(6.0), casting="safe", match="'safe'")
    assert_raises_everywhere(TypeError, np.copyto, da.zeros(6, dtype=da.int64), 1.5, match="same_kind")
    assert_raises_everywhere(TypeError, da.copyto, x, 1j, match="copyto")
    assert_raises_everywhere(OverflowError, da.copyto, da.zeros(3, dtype=da.uint8), -1)
    assert_raises_everywhere(ValueError, da.copyto, x, da.arange(6.0), casting="sometimes", match="casting")
    assert_raises_everywhere(ValueError, da.copyto, x, np.ones(5), match="could not broadcast")
    assert_raises_everywhere(TypeError, da.copyto, x, 1.0, where=da.arange(6), match="bool")
    assert_raises_everywhere(ValueError, da.copyto, x, 1.0, where=[[True, False]], match="where mask")
    assert_raises_everywhere(TypeError, da.copyto, [0.0] * 6, da.arange(6.0), match="DArray")  # (NumPy refuses a list too)
    a = np.zeros(6)  # a NumPy array (every rank's own) is written as NumPy writes it
    da.copyto(a, da.arange(6.0))
    np.testing.assert_array_equal(a, np.arange(6.0))


# ---------------------------------------------------------------- piecewise
def _funcs(kind):
    return {
        "callables": [lambda v: v * 10, lambda v: -v],
        "otherwise": [lambda v: v * 10, 2.5, lambda v: da.sin(v) + 1],
        "scalars": [1.5, -1.0],
    }[kind]


@pytest.mark.parametrize("funcs", ["otherwise", "scalars"])
@pytest.mark.parametrize("layout", params(M))
def test_piecewise(funcs, layout):
    f = via("piecewise", funcs + str(layout))
    g = values(M, "float64")
    x = arr(g, layout)
    want = np.piecewise(g, [g < -1, g > 1], _funcs(funcs))
    assert_equal(f(x, [x < -1, x > 1], _funcs(funcs)), want, err_msg=f"piecewise {funcs} {layout}", rtol=1e-12)


def test_piecewise_forms():
    g = values(V, "int64")
    x = da.asarray(g, split=0, sizes=uneven(13, P))
    want = np.piecewise(g, g > 0, [lambda v, k, scale: v * k * scale, 7], 3, scale=2)
    got = da.piecewise(x, x > 0, [lambda v, k, scale: v * k * scale, 7], 3, scale=2)  # one DArray condition
    assert_equal(got, want, err_msg="piecewise single condition, args and kw")
    assert_equal(da.piecewise(x, [(g > 2).tolist()], [lambda v: v + 1]), np.piecewise(g, [g > 2], [lambda v: v + 1]),
                 err_msg="piecewise list condition")
    want = np.piecewise(g, [g < -1, g > 1], _funcs("callables"))
    assert_equal(np.piecewise(x, [x < -1, x > 1], _funcs("callables")), want, err_msg="piecewise callables")
    zero = da.asarray(2.0, split=None)
    assert_equal(da.piecewise(zero, [True, False], [lambda v: v * 3, 1.0]), np.asarray(6.0),
                 err_msg="piecewise 0-d")
    assert_equal(da.piecewise(x, [x > 100], [lambda v: v * 0 + 99]), np.zeros(13, np.int64),
                 err_msg="piecewise empty selection")


def test_piecewise_bad_input():
    x = da.arange(6.0)
    assert_raises_everywhere(ValueError, da.piecewise, x, [x > 1, x > 2], [1.0], match="either 2 or 3")
    assert_raises_everywhere(ValueError, np.piecewise, x, [x > 1, da.ones((2, 3)) > 0], [1.0, 2.0],
                             match="piecewise")


# ---------------------------------------------------------------- fill_diagonal
FILL_CASES = {  # shape, wrap, val
    "square": ((7, 7), False, "scalar"), "tall": ((13, 4), False, "cycled"), "tall-wrap": ((13, 4), True, "darray"),
    "wide": ((5, 13), True, "cycled"),
}


#: The layouts of a fill_diagonal case; the fifth: a 2x2 grid at 4 ranks, else everything on the last rank (a halo
#: at one rank).
FILL_LAYOUTS = ("replicated", "split0", "split1", "uneven0", "grid2x2" if P == 4 else "last0" if P > 1 else "halo0")


@pytest.mark.parametrize("case,layout", [pytest.param(case, c, id=f"{c}-{case}") for case, (shape, _, _) in
                                         FILL_CASES.items() for c in layouts(shape, *FILL_LAYOUTS)])
def test_fill_diagonal(case, layout):
    shape, wrap, val = FILL_CASES[case]
    f = via("fill_diagonal", case + str(layout))
    g = values(shape, "int64")
    v = {"scalar": 9, "cycled": [1, 2, 3], "darray": np.arange(-1, -6, -1)}[val]
    want = g.copy()
    np.fill_diagonal(want, v, wrap=wrap)
    x = arr(g, layout)
    assert f(x, da.asarray(v) if val == "darray" else v, wrap=wrap) is None
    assert_equal(x, want, err_msg=f"fill_diagonal {val} {case} {layout}")


@pytest.mark.parametrize("dtype", ["bool", "float32", "complex128"])
def test_fill_diagonal_3d(dtype):
    g = values((3, 3, 3), dtype)
    v = values((2,), dtype, seed=18)
    want = g.copy()
    np.fill_diagonal(want, v)
    x = da.asarray(g, split=2)
    np.fill_diagonal(x, v)
    assert_equal(x, want, err_msg=f"fill_diagonal 3-d {dtype}")
    y = da.asarray(np.zeros((4, 4)), split=0)
    da.fill_diagonal(y, 2.5)
    assert_equal(y, np.diag([2.5] * 4), err_msg="fill_diagonal float")


def test_fill_diagonal_bad_input():
    assert_raises_everywhere(ValueError, da.fill_diagonal, da.zeros(5), 1, match="2-d")
    assert_raises_everywhere(ValueError, np.fill_diagonal, da.zeros((3, 3, 4)), 1, match="equal length")
    assert_raises_everywhere(TypeError, da.fill_diagonal, [[0, 0], [0, 0]], 1, match="DArray")  # (NumPy refuses a list too)
    a = np.zeros((3, 3))  # a NumPy array (every rank's own) is written as NumPy writes it
    da.fill_diagonal(a, 1)
    np.testing.assert_array_equal(a, np.eye(3))


# ---------------------------------------------------------------- lexsort
@pytest.mark.parametrize("dtypes", [("int64", "bool"), ("float64", "uint8", "int8"), ("complex128",)],
                         ids=["int64-bool", "float64-uint8-int8", "complex128"])
@pytest.mark.parametrize("layout", params(V))
def test_lexsort_1d(dtypes, layout):
    keys = [values(V, dt, seed=20 + i) for i, dt in enumerate(dtypes)]
    if "float64" in dtypes:
        keys[0][[2, 5]] = np.nan  # NaNs sort last
    if dtypes == ("complex128",):
        keys[0][[1, 4, 9]] = [complex(np.nan, 1), complex(1, np.nan), complex(np.nan, np.nan)]
    want = np.lexsort(keys)
    # a tuple: NumPy's dispatcher looks for DArrays inside a tuple of keys only (a list is converted by NumPy)
    assert_equal(np.lexsort(tuple(arr(k, layout) for k in keys)), want, err_msg=f"lexsort {dtypes} {layout}")
    assert_equal(da.lexsort([arr(k, layout) for k in keys]), want, err_msg=f"lexsort list {dtypes} {layout}")


@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("layout", params(M))
def test_lexsort_2d(axis, layout):
    keys = np.stack([values(M, "int64", seed=30), values(M, "int64", seed=31) % 2])
    want = np.lexsort(keys, axis=axis)
    assert_equal(da.lexsort([arr(k, layout) for k in keys], axis=axis), want, err_msg=f"lexsort axis={axis} {layout}")
    stacked = da.asarray(keys, split=None if layout.kw.get("split") is None else 1)
    assert_equal(np.lexsort(stacked, axis=axis), want, err_msg=f"lexsort stacked axis={axis} {layout}")


def test_lexsort_mixed_layouts():
    keys = [values(M, "float32", seed=32), values(M, "int64", seed=33) % 3, values(M, "bool", seed=34)]
    given = [da.asarray(keys[0], split=1), da.asarray(keys[1], split=0, sizes={0: uneven(7, P)}), keys[2]]
    for axis in (0, 1):
        assert_equal(da.lexsort(given, axis=axis), np.lexsort(keys, axis=axis), err_msg=f"lexsort mixed axis={axis}")


def test_lexsort_bad_input():
    x = da.arange(6)
    assert_raises_everywhere(TypeError, da.lexsort, [], match="len > 0")
    assert_raises_everywhere(ValueError, da.lexsort, [x, da.arange(5)], match="same shape")
    assert_raises_everywhere(np.exceptions.AxisError, np.lexsort, (x,), axis=1, match="lexsort")
    assert_raises_everywhere(TypeError, da.lexsort, [x], axis=None, match="lexsort")


# ---------------------------------------------------------------- sort_complex
@pytest.mark.parametrize("layout", params(M))
def test_sort_complex(layout):
    g = values(M, "complex128")
    g[1, [0, 3]] = [complex(np.nan, 2), complex(-1, np.nan)]
    g[4, [1, 2]] = [complex(np.nan, np.nan), complex(np.nan, -1)]
    assert_equal(via("sort_complex", str(layout))(arr(g, layout)), np.sort_complex(g),
                 err_msg=f"sort_complex {layout}")


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float32", "bool", "complex64"])
def test_sort_complex_dtypes(dtype):
    g = values(M, dtype)
    assert_equal(via("sort_complex", dtype)(da.asarray(g, split=1)), np.sort_complex(g),
                 err_msg=f"sort_complex {dtype}")


def test_sort_complex_1d_and_bad_input():
    g = values(V, "complex128")
    x = da.asarray(g, split=0, sizes=uneven(13, P))
    assert_equal(da.sort_complex(x), np.sort_complex(g), err_msg="sort_complex 1-d")
    assert_raises_everywhere(np.exceptions.AxisError, da.sort_complex, da.asarray(1.0), match="0-d")
