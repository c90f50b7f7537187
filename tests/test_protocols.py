"""NumPy protocols: ``__array_ufunc__`` and ``__array_function__`` on DArrays, on every rank count.

ufunc calls (any ufunc, mixed layouts, NumPy and scalar operands, ``out=``,
``where=``, ``dtype=``, two-output ufuncs), ``reduce`` / ``accumulate`` /
``outer``, the registered NumPy functions (statistics, nan-reductions,
scans, comparisons, joins) against NumPy on the gathered input; and that
unregistered functions and ufunc methods raise TypeError (nothing is
gathered behind the user's back). One test per layout of ``tests/_cases.py``
(its id names it).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import darray as da
from darray.testing import agree, assert_equal

from _cases import COMM, case, catalogue, each, layouts, values as seeded

pytestmark = pytest.mark.mpi

#: NumPy's ufuncs on a DArray: deselected for other local backends (tests/conftest.py).
numpy_ufuncs = pytest.mark.numpy_only(reason="NumPy ufuncs on a DArray (np.sin(x), out=, where=, "
                                              "ndarray <op> DArray) run on NumPy blocks only")
SHAPE = (9, 11)
#: The layout matrix: balanced, uneven (an empty block), replicated, a halo, 2x2 grids at 4 ranks (one where two
#: ranks hold each block). NO_HALO leaves out the input carrying a halo (see test_reductions_of_halo_arrays).
LAYOUTS = layouts(SHAPE, "split0", "uneven1", "replicated", "halo0", "grid2x2", "grid2x2-0n")
NO_HALO = [c for c in LAYOUTS if c.id != "halo0"]
#: A second layout for the other operand of binary operations: always different blocks.
OTHER = {"split0": "split1", "uneven1": "uneven0", "replicated": "split0", "halo0": "replicated", "grid2x2": "split1",
         "grid2x2-0n": "grid2x2-n1"}


def other(layout):
    """The layout of the other operand beside ``layout`` (:data:`OTHER`)."""
    return catalogue(SHAPE)[OTHER[layout.id]]


def values(shape=SHAPE, dtype="float64", seed=0, positive=False) -> np.ndarray:
    """``_cases.values``: integers in [-20, 20), or [1, 20) when ``positive``, where floats are uniform in [0.5, 2)."""
    if np.dtype(dtype).kind in "iu":
        return seeded(shape, dtype, seed, low=1 if positive else -20, high=20)
    return seeded(shape, dtype, seed, **(dict(low=0.5, high=2.0) if positive else {}))


def raises_everywhere(exc, func, *args, **kwargs):
    try:
        func(*args, **kwargs)
    except exc as e:
        ok, detail = True, str(e)
    except Exception as e:  # the wrong type is a failure on this rank
        ok, detail = False, f"{type(e).__name__}: {e}"
    else:
        ok, detail = False, "nothing raised"
    failed = agree(COMM, ok)
    assert not failed, f"expected {exc.__name__} on every rank; ranks {failed} did not (this rank: {detail})"


def same_everywhere(comm, value) -> bool:
    got = np.asarray(comm.allgather(np.asarray([value], dtype=np.float64))).reshape(-1)
    return bool(np.all(got == got[0]))



# ------------------------------------------------------------------ ufunc __call__
UNARY = {
    "float64": [np.sin, np.exp, np.sqrt, np.negative, np.absolute, np.isnan, np.signbit, np.floor, np.square],
    "float32": [np.cos, np.log1p, np.tanh, np.reciprocal],
    "int64": [np.negative, np.absolute, np.invert, np.square, np.sign],
    "complex128": [np.exp, np.conjugate, np.absolute, np.sqrt],
    "bool": [np.logical_not, np.invert],
}


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@pytest.mark.parametrize("dtype", list(UNARY))
@numpy_ufuncs
def test_unary_ufuncs(dtype, layout):
    g = values(dtype=dtype, seed=1, positive=True)
    x = layout.array(g)
    for uf in UNARY[dtype]:
        got = uf(x)
        want = uf(g)
        assert got.dtype == want.dtype, (uf, got.dtype, want.dtype)
        assert_equal(got, want, err_msg=f"{uf.__name__} {dtype}")
        assert got.layout.blocks_key == x.layout.blocks_key


BINARY = [np.add, np.subtract, np.true_divide, np.power, np.maximum, np.arctan2, np.greater, np.logical_and,
          np.fmod]


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@pytest.mark.parametrize("uf", BINARY, ids=lambda u: u.__name__)
@numpy_ufuncs
def test_binary_ufuncs(uf, layout):
    """DArray with DArray in another layout, NumPy array (broadcast), Python scalar, both orders."""
    g, h = values(seed=2, positive=True), values(seed=3, positive=True)
    row = h[0]
    x = layout.array(g)
    y = other(layout).array(h)
    assert_equal(uf(x, y), uf(g, h), err_msg=f"{uf.__name__} DArray/DArray")
    assert_equal(uf(x, row), uf(g, row), err_msg=f"{uf.__name__} DArray/numpy row")
    assert_equal(uf(h, x), uf(h, g), err_msg=f"{uf.__name__} numpy/DArray")
    assert_equal(uf(x, 1.5), uf(g, 1.5), err_msg=f"{uf.__name__} DArray/scalar")
    assert_equal(uf(2.0, x), uf(2.0, g), err_msg=f"{uf.__name__} scalar/DArray")


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@numpy_ufuncs
def test_ufunc_int_and_mixed_dtypes(layout):
    gi, gf = values(dtype="int64", seed=4, positive=True), values(dtype="float32", seed=5)
    xi, xf = layout.array(gi), other(layout).array(gf)
    for got, want in [(np.floor_divide(xi, 3), np.floor_divide(gi, 3)), (np.left_shift(xi, 2), np.left_shift(gi, 2)),
                      (np.add(xi, xf), np.add(gi, gf)), (np.multiply(xf, 2), np.multiply(gf, 2)),
                      (np.add(xi, xi, dtype=np.float32), np.add(gi, gi, dtype=np.float32)),
                      (np.sqrt(xi), np.sqrt(gi)), (np.equal(xi, gi), np.equal(gi, gi))]:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        assert_equal(got, want)


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@numpy_ufuncs
def test_two_output_ufuncs(layout):
    g = values(seed=6) * 10
    x = layout.array(g)
    for uf, args in [(np.divmod, (x, 3.0)), (np.modf, (x,)), (np.frexp, (x,))]:
        got = uf(*args)
        want = uf(*[g if a is x else a for a in args])
        assert isinstance(got, tuple) and len(got) == 2
        for i, (a, b) in enumerate(zip(got, want)):
            assert_equal(a, b, err_msg=f"{uf.__name__} output {i}")


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@numpy_ufuncs
def test_out(layout):
    """``out=`` a DArray in the same or another layout (also with a halo), aliasing an input, ``+=``."""
    g, h = values(seed=7), values(seed=8)
    x, y = layout.array(g), other(layout).array(h)
    for out_kw in (layout.kw, other(layout).kw, dict(split=1, halo=(2, 1), boundary="nearest")):
        z = da.zeros(SHAPE, **out_kw)
        np.add(x, y, out=z)
        assert_equal(z, g + h, err_msg=f"out= {out_kw}")
        q, r = da.zeros(SHAPE, **out_kw), da.zeros(SHAPE, **layout.kw)
        np.divmod(x, 0.3, out=(q, r))
        assert_equal(q, np.divmod(g, 0.3)[0], err_msg=f"divmod out[0] {out_kw}")
        assert_equal(r, np.divmod(g, 0.3)[1], err_msg="divmod out[1]")
    w = layout.array(g.copy())
    np.add(w, 1.0, out=w)  # in place, aliasing an input
    assert_equal(w, g + 1.0, err_msg="in place")
    w += other(layout).array(h)
    assert_equal(w, g + 1.0 + h, err_msg="+=")


@numpy_ufuncs
def test_out_marks_the_halo_stale(comm):
    g = values(seed=7)
    w = da.asarray(g, split=0, halo=1, boundary="periodic")
    w.exchange_halos()
    np.add(w, 1.0, out=w)  # the write through out= marks the halo stale: the next exchange refreshes it
    w.exchange_halos()
    lo = w.layout.block_start(w.comm.rank)[0]
    first_ghost = np.asarray(w.block)[0, 1:-1]
    ok = np.array_equal(first_ghost, (g + 1.0)[(lo - 1) % 9])
    assert not agree(comm, ok), "stale ghost row after np.add(..., out=w)"


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@numpy_ufuncs
def test_where(layout):
    """``where=`` a DArray (another layout) or NumPy mask, with ``out=`` in the same or another layout."""
    g, h = values(seed=7), values(seed=8)
    mask = values(dtype="bool", seed=9)
    x, y = layout.array(g), other(layout).array(h)
    for out_kw in (layout.kw, other(layout).kw):
        z2 = da.full(SHAPE, -1.0, **out_kw)
        np.multiply(x, y, out=z2, where=other(layout).array(mask))
        assert_equal(z2, np.where(mask, g * h, -1.0), err_msg=f"where=DArray out={out_kw}")
        z3 = da.full(SHAPE, 5.0, **out_kw)
        np.sin(x, out=(z3,), where=mask)
        assert_equal(z3, np.where(mask, np.sin(g), 5.0), err_msg=f"where=numpy out=tuple {out_kw}")


@numpy_ufuncs
def test_out_is_returned():
    """Like NumPy: ``np.add(x, y, out=z)`` returns ``z`` itself; a two-output ufunc returns the ``out`` tuple."""
    g = values(seed=28)
    x = da.asarray(g, split=0)
    z = da.zeros(SHAPE, split=0)
    assert np.add(x, 1.0, out=z) is z
    assert np.sin(x, out=(z,)) is z
    q, r = da.zeros(SHAPE, split=1), da.zeros(SHAPE, split=0)
    got = np.divmod(x, 0.3, out=(q, r))
    assert isinstance(got, tuple) and got[0] is q and got[1] is r
    assert_equal(q, np.divmod(g, 0.3)[0])
    assert_equal(r, np.divmod(g, 0.3)[1])


# ------------------------------------------------------------------ reduce / accumulate / outer
@pytest.mark.parametrize("layout", NO_HALO, ids=str)
def test_ufunc_reduce(layout):
    g = values(seed=10, positive=True)
    gb = values(dtype="bool", seed=11)
    x, xb = layout.array(g), layout.array(gb)
    for uf in (np.add, np.multiply, np.maximum, np.minimum):
        for kwargs in (dict(), dict(axis=1), dict(axis=None), dict(axis=(0, 1), keepdims=True),
                       dict(axis=0, keepdims=True)):
            assert_equal(uf.reduce(x, **kwargs), np.asarray(uf.reduce(g, **kwargs)),
                         err_msg=f"{uf.__name__}.reduce {kwargs}")
    assert_equal(np.add.reduce(x, axis=0, dtype=np.float32), np.add.reduce(g, axis=0, dtype=np.float32),
                 err_msg="dtype")
    for uf in (np.logical_and, np.logical_or):
        assert_equal(uf.reduce(xb, axis=1), uf.reduce(gb, axis=1), err_msg=f"{uf.__name__}")


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@numpy_ufuncs
def test_ufunc_accumulate_and_outer(layout):
    g = values(seed=12, positive=True)
    x = layout.array(g)
    assert_equal(np.add.accumulate(x), np.add.accumulate(g), err_msg="add.accumulate")
    assert_equal(np.multiply.accumulate(x, axis=1), np.multiply.accumulate(g, axis=1))
    assert_equal(np.add.accumulate(x, axis=0, dtype=np.float32), np.add.accumulate(g, axis=0, dtype=np.float32),
                 err_msg="dtype")
    assert_equal(np.multiply.outer(x[:, 0], x[0, :4]), np.multiply.outer(g[:, 0], g[0, :4]))


@pytest.mark.parametrize("ka,kb", [pytest.param(catalogue((7,))[a], catalogue((5,))[b], id=f"{a}-{b}") for a, b in
                                   [("split0", "split0"), ("replicated", "uneven0"), ("uneven0", "replicated")]])
def test_ufunc_outer(ka, kb):
    a, b = values((7,), seed=13), values((5,), seed=14)
    xa, xb = ka.array(a), kb.array(b)
    assert_equal(np.add.outer(xa, xb), np.add.outer(a, b), err_msg="add.outer")
    assert_equal(np.subtract.outer(xb, xa), np.subtract.outer(b, a), err_msg="subtract.outer")
    assert_equal(np.outer(xa, xb), np.outer(a, b), err_msg="np.outer")


# ------------------------------------------------------------------ __array_function__
def quiet(f, *args, **kwargs):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args, **kwargs)


STATS = [
    (np.mean, dict()), (np.mean, dict(axis=0)), (np.mean, dict(axis=1, keepdims=True)),
    (np.var, dict()), (np.var, dict(ddof=1)), (np.var, dict(axis=0, ddof=2)),
    (np.std, dict(axis=1)), (np.std, dict(ddof=1, keepdims=True)), (np.std, dict(axis=(0, 1), ddof=1)),
    (np.sum, dict()), (np.sum, dict(axis=1, dtype=np.float32)), (np.prod, dict(axis=0)),
    (np.max, dict(axis=1)), (np.min, dict()), (np.amax, dict(axis=0)), (np.amin, dict(keepdims=True)),
    (np.ptp, dict(axis=1)), (np.all, dict(axis=0)), (np.any, dict()),
]


@pytest.mark.parametrize("layout", NO_HALO, ids=str)
def test_statistics(layout):
    """Every one of :data:`STATS` on this layout."""
    def check(func, kwargs):
        g = values(seed=15, positive=func is np.prod)
        assert_equal(func(layout.array(g), **kwargs), np.asarray(func(g, **kwargs)), err_msg=str(kwargs))

    each(STATS, lambda c: check(*c), name=lambda c: f"{c[0].__name__} {c[1]}")


@pytest.mark.parametrize("func,kwargs", STATS, ids=[f"{f.__name__}-{k}" for f, k in STATS])
def test_statistics_of_integers(func, kwargs):
    gi = values(dtype="int64", seed=16)
    assert_equal(func(da.asarray(gi, split=0), **kwargs), np.asarray(func(gi, **kwargs)), err_msg="int64")


def with_nans() -> np.ndarray:
    """Positive values, about 20% NaNs and an all-NaN column."""
    g = values(seed=17, positive=True)
    g[np.random.default_rng(18).random(SHAPE) < 0.2] = np.nan
    g[:, 3] = np.nan  # an all-NaN column
    return g


@pytest.mark.parametrize("layout", NO_HALO, ids=str)
@pytest.mark.parametrize("func", [np.nansum, np.nanprod, np.nanmax, np.nanmin, np.nanmean], ids=lambda f: f.__name__)
def test_nan_reductions(func, layout):
    g = with_nans()
    x = layout.array(g)
    for kwargs in (dict(), dict(axis=0), dict(axis=1, keepdims=True)):
        assert_equal(quiet(func, x, **kwargs), np.asarray(quiet(func, g, **kwargs)),
                     err_msg=f"{func.__name__} {kwargs}")


@pytest.mark.parametrize("func", [np.nansum, np.nanprod, np.nanmax, np.nanmin, np.nanmean], ids=lambda f: f.__name__)
def test_nan_reductions_of_float32_and_integers(func):
    g32 = with_nans().astype(np.float32)  # the result stays float32, as in NumPy
    assert_equal(quiet(func, da.asarray(g32, split=0), axis=0), np.asarray(quiet(func, g32, axis=0)), err_msg="float32")
    gi = values(dtype="int64", seed=19)
    assert_equal(func(da.asarray(gi, split=0), axis=0), np.asarray(func(gi, axis=0)), err_msg="int64 (no NaNs)")


@pytest.mark.parametrize("layout", NO_HALO, ids=str)
def test_comparisons(comm, layout):
    g = values(seed=20)
    x, y = layout.array(g), other(layout).array(g + 1e-9)
    far = other(layout).array(g + 1e-3)
    for got, want in [(np.allclose(x, y), True), (np.allclose(x, far), False),
                      (np.allclose(x, far, atol=1e-2), True), (np.array_equal(x, x), True),
                      (np.array_equal(x, y), False), (np.array_equal(x, x[:3]), False)]:
        assert isinstance(got, bool) and got == want, (got, want)
        assert same_everywhere(comm, got)
    assert_equal(np.isclose(x, far), np.isclose(g, g + 1e-3))
    assert_equal(np.isclose(x, far, rtol=0, atol=2e-3), np.isclose(g, g + 1e-3, rtol=0, atol=2e-3))
    gn = g.copy()
    gn[1, 1] = np.nan
    xn = layout.array(gn)
    assert np.allclose(xn, xn, equal_nan=True) and not np.allclose(xn, xn)
    assert_equal(np.isclose(xn, xn, equal_nan=True), np.isclose(gn, gn, equal_nan=True))


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_joins_and_shape_functions(layout):
    g, h = values(seed=21), values(seed=22)
    x, y = layout.array(g), other(layout).array(h)
    for got, want in [
        (np.concatenate([x, y]), np.concatenate([g, h])),
        (np.concatenate([x, y], axis=1), np.concatenate([g, h], axis=1)),
        (np.concatenate([x, y], axis=None), np.concatenate([g, h], axis=None)),
        (np.stack([x, y], axis=2), np.stack([g, h], axis=2)),
        (np.transpose(x), np.transpose(g)), (np.transpose(x, (1, 0)), g.T),
        (np.reshape(x, (11, 9)), np.reshape(g, (11, 9))), (np.where(x > 0, x, y), np.where(g > 0, g, h)),
        (np.clip(x, -0.5, 0.5), np.clip(g, -0.5, 0.5)), (np.copy(x), g.copy()),
        (np.cumsum(x, axis=0), np.cumsum(g, axis=0)), (np.cumprod(x, axis=1), np.cumprod(g, axis=1)),
        (np.diff(x, axis=0), np.diff(g, axis=0)), (np.flip(x, axis=1), np.flip(g, axis=1)),
        (np.roll(x, 3, axis=0), np.roll(g, 3, axis=0)), (np.zeros_like(x), np.zeros_like(g)),
    ]:
        assert_equal(got, want)
    assert np.ndim(x) == 2 and np.shape(x) == SHAPE and np.size(x) == 99 and np.size(x, 1) == 11


@pytest.mark.parametrize("layout", [catalogue(SHAPE)["halo0"], case("halo1-02", SHAPE, "halo", split=1, halo=(0, 2)),
                                    catalogue(SHAPE)["replicated-halo"]], ids=str)
def test_reductions_of_halo_arrays(layout):
    """Reducing along an axis of an array that carries a halo (the result has no halo of its own)."""
    g = values(seed=25, positive=True)
    x = layout.array(g)
    for func in (np.sum, np.mean, np.max, np.var, np.all):
        assert_equal(func(x), np.asarray(func(g)), err_msg=f"{func.__name__}")
        for axis in (0, 1):
            assert_equal(func(x, axis=axis), np.asarray(func(g, axis=axis)), err_msg=f"{func.__name__} axis={axis}")
    assert_equal(np.add.reduce(x, axis=1), np.add.reduce(g, axis=1), err_msg="add.reduce")


#: NumPy call spellings (positional arguments where NumPy allows them): ``f(*args)`` on the DArray and the ndarray.
SIGNATURES = [
    ("flip", lambda a: np.flip(a, 1)), ("expand_dims", lambda a: np.expand_dims(a, 1)),
    ("squeeze", lambda a: np.squeeze(a[:1], 0)), ("stack", lambda a: np.stack([a, a], 1)),
    ("repeat", lambda a: np.repeat(a, 2, 1)), ("roll", lambda a: np.roll(a, 2, 0)),
    ("diff", lambda a: np.diff(a, 2, 0)), ("moveaxis", lambda a: np.moveaxis(a, 0, 1)),
    ("transpose", lambda a: np.transpose(a, (1, 0))), ("reshape", lambda a: np.reshape(a, (11, 9))),
    ("sum", lambda a: np.sum(a, 0)), ("mean", lambda a: np.mean(a, 1)), ("std", lambda a: np.std(a, 0, None, None, 1)),
    ("cumsum", lambda a: np.cumsum(a, 1)), ("tile", lambda a: np.tile(a, (2, 1))),
    ("concatenate", lambda a: np.concatenate((a, a), 1)), ("clip", lambda a: np.clip(a, -0.5, 0.5)),
    ("where", lambda a: np.where(a > 0, a, 0.0)), ("broadcast_to", lambda a: np.broadcast_to(a[:1], (3, 11))),
]


@pytest.mark.parametrize("layout", NO_HALO, ids=str)
def test_numpy_signatures(layout):
    """Registered functions accept NumPy's own signature (``np.flip(x, 1)``, not only ``axis=``): every one of
    :data:`SIGNATURES` on this layout."""
    g = values(seed=26)
    each(SIGNATURES, lambda c: assert_equal(c[1](layout.array(g)), np.asarray(c[1](g))), name=lambda c: f"np.{c[0]}")


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_comparing_temporaries_gives_bool(layout):
    """``x * 2 <= x * 3``: a comparison of two unreferenced intermediates is boolean (as ``np.isclose`` needs)."""
    g = values(seed=27)
    x = layout.array(g)
    for got, want in [(x * 2 <= x * 3, g * 2 <= g * 3), (x + 1 == x + 1, g + 1 == g + 1),
                      (da.abs(x) > da.abs(x * 0.5), np.abs(g) > np.abs(g * 0.5))]:
        assert_equal(got, want)


UNREGISTERED = [
    ("busday_count", lambda x: np.busday_count(x, x)),
    ("shares_memory", lambda x: np.shares_memory(x, x)),
    ("datetime_as_string", lambda x: np.datetime_as_string(x)), ("savez", lambda x: np.savez("unused.npz", x)),
    ("sum out=", lambda x: np.sum(x, out=np.zeros(()))),
    ("sin out=ndarray", lambda x: np.sin(x, out=np.zeros(SHAPE))),
]


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@pytest.mark.parametrize("what,call", UNREGISTERED, ids=[u[0] for u in UNREGISTERED])
def test_unsupported_raise_type_error_everywhere(what, call, layout):
    """Nothing unregistered gathers: NumPy's TypeError on every rank, for every layout."""
    g = values(seed=23)
    raises_everywhere(TypeError, call, layout.array(g))


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@numpy_ufuncs
def test_ufunc_errors_raise_everywhere(layout):
    g = values(seed=24)
    x = layout.array(g)
    raises_everywhere(ValueError, np.add, x, da.asarray(g[:, :3], split=0))
    raises_everywhere(ValueError, np.add, x, g[:3])
    raises_everywhere(ValueError, np.add, x, 1.0, out=da.zeros((3, 3)))
