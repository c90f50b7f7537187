"""NumPy protocols: ``__array_ufunc__`` and ``__array_function__`` on DArrays, on every rank count.

ufunc calls (any ufunc, mixed layouts, NumPy and scalar operands, ``out=``,
``where=``, ``dtype=``, two-output ufuncs), ``reduce`` / ``accumulate`` /
``outer``, the registered NumPy functions (statistics, nan-reductions,
scans, comparisons, joins) against NumPy on the gathered input; and that
unregistered functions and ufunc methods raise TypeError (nothing is
gathered behind the user's back). Layouts are looped over inside each test
and named in failure messages.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import darray as da
from darray.testing import agree, assert_equal, uneven_sizes as uneven

pytestmark = pytest.mark.mpi

P = da.default_communicator().size
SHAPE = (9, 11)


def comm():
    return da.default_communicator()



def layouts(halo: bool = True) -> dict[str, dict]:
    """The layout matrix; ``halo=False`` leaves out the input carrying a halo (see test_reductions_of_halo_arrays)."""
    out = {"split0": dict(split=0), "split1-uneven": dict(split=1, sizes={1: uneven(11, P)}),
           "replicated": dict(split=None)}
    if halo:
        out["halo"] = dict(split=0, halo=1, boundary="periodic")
    if P == 4:
        out["grid22"] = dict(split=(0, 1), grid=(2, 2))
        out["grid22-copies"] = dict(split=(0, None), grid=(2, 2))  # two ranks hold each block
    return out


#: A second layout for the other operand of binary operations: always different blocks.
OTHER = {"split0": dict(split=1), "split1-uneven": dict(split=0, sizes={0: uneven(9, P)}),
         "replicated": dict(split=0), "halo": dict(split=None), "grid22": dict(split=1),
         "grid22-copies": dict(split=(None, 1), grid=(2, 2))}


def values(shape=SHAPE, dtype="float64", seed=0, positive=False) -> np.ndarray:
    rng = np.random.default_rng([seed, len(shape), sum(shape)])
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(1 if positive else -20, 20, shape).astype(dt)
    real = rng.uniform(0.5, 2.0, shape) if positive else rng.standard_normal(shape)
    if dt.kind == "c":
        return (real + 1j * rng.standard_normal(shape)).astype(dt)
    return real.astype(dt)


def raises_everywhere(exc, func, *args, **kwargs):
    try:
        func(*args, **kwargs)
    except exc as e:
        ok, detail = True, str(e)
    except Exception as e:  # noqa: BLE001 - the wrong type is a failure on this rank
        ok, detail = False, f"{type(e).__name__}: {e}"
    else:
        ok, detail = False, "nothing raised"
    failed = agree(comm(), ok)
    assert not failed, f"expected {exc.__name__} on every rank; ranks {failed} did not (this rank: {detail})"


def same_everywhere(value) -> bool:
    got = np.asarray(comm().allgather(np.asarray([value], dtype=np.float64))).reshape(-1)
    return bool(np.all(got == got[0]))


# ------------------------------------------------------------------ ufunc __call__
UNARY = {
    "float64": [np.sin, np.exp, np.sqrt, np.negative, np.absolute, np.isnan, np.signbit, np.floor, np.square],
    "float32": [np.cos, np.log1p, np.tanh, np.reciprocal],
    "int64": [np.negative, np.absolute, np.invert, np.square, np.sign],
    "complex128": [np.exp, np.conjugate, np.absolute, np.sqrt],
    "bool": [np.logical_not, np.invert],
}


@pytest.mark.parametrize("dtype", list(UNARY))
def test_unary_ufuncs(dtype):
    g = values(dtype=dtype, seed=1, positive=True)
    for name, kw in layouts().items():
        x = da.asarray(g, **kw)
        for uf in UNARY[dtype]:
            got = uf(x)
            want = uf(g)
            assert got.dtype == want.dtype, (uf, got.dtype, want.dtype)
            assert_equal(got, want, err_msg=f"{uf.__name__} {dtype} {name}")
            assert got.layout.blocks_key == x.layout.blocks_key


BINARY = [np.add, np.subtract, np.true_divide, np.power, np.maximum, np.arctan2, np.greater, np.logical_and,
          np.fmod]


@pytest.mark.parametrize("uf", BINARY, ids=lambda u: u.__name__)
def test_binary_ufuncs(uf):
    """DArray with DArray in another layout, NumPy array (broadcast), Python scalar, both orders."""
    g, h = values(seed=2, positive=True), values(seed=3, positive=True)
    row = h[0]
    for name, kw in layouts().items():
        x = da.asarray(g, **kw)
        y = da.asarray(h, **OTHER[name])
        assert_equal(uf(x, y), uf(g, h), err_msg=f"{uf.__name__} DArray/DArray {name}")
        assert_equal(uf(x, row), uf(g, row), err_msg=f"{uf.__name__} DArray/numpy row {name}")
        assert_equal(uf(h, x), uf(h, g), err_msg=f"{uf.__name__} numpy/DArray {name}")
        assert_equal(uf(x, 1.5), uf(g, 1.5), err_msg=f"{uf.__name__} DArray/scalar {name}")
        assert_equal(uf(2.0, x), uf(2.0, g), err_msg=f"{uf.__name__} scalar/DArray {name}")


def test_ufunc_int_and_mixed_dtypes():
    gi, gf = values(dtype="int64", seed=4, positive=True), values(dtype="float32", seed=5)
    for name, kw in layouts().items():
        xi, xf = da.asarray(gi, **kw), da.asarray(gf, **OTHER[name])
        for got, want in [(np.floor_divide(xi, 3), np.floor_divide(gi, 3)), (np.left_shift(xi, 2), np.left_shift(gi, 2)),
                          (np.add(xi, xf), np.add(gi, gf)), (np.multiply(xf, 2), np.multiply(gf, 2)),
                          (np.add(xi, xi, dtype=np.float32), np.add(gi, gi, dtype=np.float32)),
                          (np.sqrt(xi), np.sqrt(gi)), (np.equal(xi, gi), np.equal(gi, gi))]:
            assert got.dtype == want.dtype, (got.dtype, want.dtype)
            assert_equal(got, want, err_msg=name)


def test_two_output_ufuncs():
    g = values(seed=6) * 10
    for name, kw in layouts().items():
        x = da.asarray(g, **kw)
        for uf, args in [(np.divmod, (x, 3.0)), (np.modf, (x,)), (np.frexp, (x,))]:
            got = uf(*args)
            want = uf(*[g if a is x else a for a in args])
            assert isinstance(got, tuple) and len(got) == 2
            for i, (a, b) in enumerate(zip(got, want)):
                assert_equal(a, b, err_msg=f"{uf.__name__} output {i} {name}")


def test_out():
    """``out=`` a DArray in the same or another layout (also with a halo), aliasing an input, ``+=``."""
    g, h = values(seed=7), values(seed=8)
    for name, kw in layouts().items():
        x, y = da.asarray(g, **kw), da.asarray(h, **OTHER[name])
        for out_kw in (kw, OTHER[name], dict(split=1, halo=(2, 1), boundary="nearest")):
            z = da.zeros(SHAPE, **out_kw)
            np.add(x, y, out=z)
            assert_equal(z, g + h, err_msg=f"out= {out_kw} {name}")
            q, r = da.zeros(SHAPE, **out_kw), da.zeros(SHAPE, **kw)
            np.divmod(x, 0.3, out=(q, r))
            assert_equal(q, np.divmod(g, 0.3)[0], err_msg=f"divmod out[0] {out_kw} {name}")
            assert_equal(r, np.divmod(g, 0.3)[1], err_msg=f"divmod out[1] {name}")
        w = da.asarray(g.copy(), **kw)
        np.add(w, 1.0, out=w)  # in place, aliasing an input
        assert_equal(w, g + 1.0, err_msg=f"in place {name}")
        w += da.asarray(h, **OTHER[name])
        assert_equal(w, g + 1.0 + h, err_msg=f"+= {name}")
    w = da.asarray(g, split=0, halo=1, boundary="periodic")
    w.exchange_halos()
    np.add(w, 1.0, out=w)  # the write through out= marks the halo stale: the next exchange refreshes it
    w.exchange_halos()
    lo = w.layout.block_start(w.comm.rank)[0]
    first_ghost = np.asarray(w.block)[0, 1:-1]
    ok = np.array_equal(first_ghost, (g + 1.0)[(lo - 1) % 9])
    assert not agree(comm(), ok), "stale ghost row after np.add(..., out=w)"


def test_where():
    """``where=`` a DArray (another layout) or NumPy mask, with ``out=`` in the same or another layout."""
    g, h = values(seed=7), values(seed=8)
    mask = values(dtype="bool", seed=9)
    for name, kw in layouts().items():
        x, y = da.asarray(g, **kw), da.asarray(h, **OTHER[name])
        for out_kw in (kw, OTHER[name]):
            z2 = da.full(SHAPE, -1.0, **out_kw)
            np.multiply(x, y, out=z2, where=da.asarray(mask, **OTHER[name]))
            assert_equal(z2, np.where(mask, g * h, -1.0), err_msg=f"where=DArray out={out_kw} {name}")
            z3 = da.full(SHAPE, 5.0, **out_kw)
            np.sin(x, out=(z3,), where=mask)
            assert_equal(z3, np.where(mask, np.sin(g), 5.0), err_msg=f"where=numpy out=tuple {out_kw} {name}")


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
def test_ufunc_reduce():
    g = values(seed=10, positive=True)
    gb = values(dtype="bool", seed=11)
    for name, kw in layouts(halo=False).items():
        x, xb = da.asarray(g, **kw), da.asarray(gb, **kw)
        for uf in (np.add, np.multiply, np.maximum, np.minimum):
            for kwargs in (dict(), dict(axis=1), dict(axis=None), dict(axis=(0, 1), keepdims=True),
                           dict(axis=0, keepdims=True)):
                assert_equal(uf.reduce(x, **kwargs), np.asarray(uf.reduce(g, **kwargs)),
                             err_msg=f"{uf.__name__}.reduce {kwargs} {name}")
        assert_equal(np.add.reduce(x, axis=0, dtype=np.float32), np.add.reduce(g, axis=0, dtype=np.float32),
                     err_msg=f"dtype {name}")
        for uf in (np.logical_and, np.logical_or):
            assert_equal(uf.reduce(xb, axis=1), uf.reduce(gb, axis=1), err_msg=f"{uf.__name__} {name}")


def test_ufunc_accumulate_and_outer():
    g = values(seed=12, positive=True)
    a, b = values((7,), seed=13), values((5,), seed=14)
    for name, kw in layouts().items():
        x = da.asarray(g, **kw)
        assert_equal(np.add.accumulate(x), np.add.accumulate(g), err_msg=f"add.accumulate {name}")
        assert_equal(np.multiply.accumulate(x, axis=1), np.multiply.accumulate(g, axis=1), err_msg=name)
        assert_equal(np.add.accumulate(x, axis=0, dtype=np.float32), np.add.accumulate(g, axis=0, dtype=np.float32),
                     err_msg=f"dtype {name}")
        assert_equal(np.multiply.outer(x[:, 0], x[0, :4]), np.multiply.outer(g[:, 0], g[0, :4]), err_msg=name)
    for ka, kb in [(dict(split=0), dict(split=0)), (dict(split=None), dict(split=0, sizes=uneven(5, P))),
                   (dict(split=0, sizes=uneven(7, P)), dict(split=None))]:
        xa, xb = da.asarray(a, **ka), da.asarray(b, **kb)
        assert_equal(np.add.outer(xa, xb), np.add.outer(a, b), err_msg=f"add.outer {ka} {kb}")
        assert_equal(np.subtract.outer(xb, xa), np.subtract.outer(b, a), err_msg=f"subtract.outer {ka} {kb}")
        assert_equal(np.outer(xa, xb), np.outer(a, b), err_msg=f"np.outer {ka} {kb}")


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


@pytest.mark.parametrize("func,kwargs", STATS, ids=[f"{f.__name__}-{k}" for f, k in STATS])
def test_statistics(func, kwargs):
    g = values(seed=15, positive=func is np.prod)
    for name, kw in layouts(halo=False).items():
        x = da.asarray(g, **kw)
        assert_equal(func(x, **kwargs), np.asarray(func(g, **kwargs)), err_msg=f"{name}")
    gi = values(dtype="int64", seed=16)
    assert_equal(func(da.asarray(gi, split=0), **kwargs), np.asarray(func(gi, **kwargs)), err_msg="int64")


@pytest.mark.parametrize("func", [np.nansum, np.nanprod, np.nanmax, np.nanmin, np.nanmean], ids=lambda f: f.__name__)
def test_nan_reductions(func):
    g = values(seed=17, positive=True)
    g[np.random.default_rng(18).random(SHAPE) < 0.2] = np.nan
    g[:, 3] = np.nan  # an all-NaN column
    for name, kw in layouts(halo=False).items():
        x = da.asarray(g, **kw)
        for kwargs in (dict(), dict(axis=0), dict(axis=1, keepdims=True)):
            assert_equal(quiet(func, x, **kwargs), np.asarray(quiet(func, g, **kwargs)),
                         err_msg=f"{func.__name__} {kwargs} {name}")
    g32 = g.astype(np.float32)  # the result stays float32, as in NumPy
    assert_equal(quiet(func, da.asarray(g32, split=0), axis=0), np.asarray(quiet(func, g32, axis=0)), err_msg="float32")
    gi = values(dtype="int64", seed=19)
    assert_equal(func(da.asarray(gi, split=0), axis=0), np.asarray(func(gi, axis=0)), err_msg="int64 (no NaNs)")


def test_comparisons():
    g = values(seed=20)
    for name, kw in layouts(halo=False).items():
        x, y = da.asarray(g, **kw), da.asarray(g + 1e-9, **OTHER[name])
        far = da.asarray(g + 1e-3, **OTHER[name])
        for got, want in [(np.allclose(x, y), True), (np.allclose(x, far), False),
                          (np.allclose(x, far, atol=1e-2), True), (np.array_equal(x, x), True),
                          (np.array_equal(x, y), False), (np.array_equal(x, x[:3]), False)]:
            assert isinstance(got, bool) and got == want, (name, got, want)
            assert same_everywhere(got)
        assert_equal(np.isclose(x, far), np.isclose(g, g + 1e-3), err_msg=name)
        assert_equal(np.isclose(x, far, rtol=0, atol=2e-3), np.isclose(g, g + 1e-3, rtol=0, atol=2e-3), err_msg=name)
        gn = g.copy()
        gn[1, 1] = np.nan
        xn = da.asarray(gn, **kw)
        assert np.allclose(xn, xn, equal_nan=True) and not np.allclose(xn, xn)
        assert_equal(np.isclose(xn, xn, equal_nan=True), np.isclose(gn, gn, equal_nan=True), err_msg=name)


def test_joins_and_shape_functions():
    g, h = values(seed=21), values(seed=22)
    for name, kw in layouts().items():
        x, y = da.asarray(g, **kw), da.asarray(h, **OTHER[name])
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
            assert_equal(got, want, err_msg=name)
        assert np.ndim(x) == 2 and np.shape(x) == SHAPE and np.size(x) == 99 and np.size(x, 1) == 11


def test_reductions_of_halo_arrays():
    """Reducing along an axis of an array that carries a halo (the result has no halo of its own)."""
    g = values(seed=25, positive=True)
    for kw in (dict(split=0, halo=1, boundary="periodic"), dict(split=1, halo=(0, 2)), dict(split=None, halo=1)):
        x = da.asarray(g, **kw)
        for func in (np.sum, np.mean, np.max, np.var, np.all):
            assert_equal(func(x), np.asarray(func(g)), err_msg=f"{func.__name__} {kw}")
            for axis in (0, 1):
                assert_equal(func(x, axis=axis), np.asarray(func(g, axis=axis)),
                             err_msg=f"{func.__name__} axis={axis} {kw}")
        assert_equal(np.add.reduce(x, axis=1), np.add.reduce(g, axis=1), err_msg=f"add.reduce {kw}")


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


@pytest.mark.parametrize("what,call", SIGNATURES, ids=[s[0] for s in SIGNATURES])
def test_numpy_signatures(what, call):
    """Registered functions accept NumPy's own signature (``np.flip(x, 1)``, not only ``axis=``)."""
    g = values(seed=26)
    for name, kw in layouts(halo=False).items():
        assert_equal(call(da.asarray(g, **kw)), np.asarray(call(g)), err_msg=f"np.{what} {name}")


def test_comparing_temporaries_gives_bool():
    """``x * 2 <= x * 3``: a comparison of two unreferenced intermediates is boolean (as ``np.isclose`` needs)."""
    g = values(seed=27)
    for name, kw in layouts().items():
        x = da.asarray(g, **kw)
        for got, want in [(x * 2 <= x * 3, g * 2 <= g * 3), (x + 1 == x + 1, g + 1 == g + 1),
                          (da.abs(x) > da.abs(x * 0.5), np.abs(g) > np.abs(g * 0.5))]:
            assert_equal(got, want, err_msg=name)


UNREGISTERED = [
    ("busday_count", lambda x: np.busday_count(x, x)),
    ("shares_memory", lambda x: np.shares_memory(x, x)),
    ("datetime_as_string", lambda x: np.datetime_as_string(x)), ("savez", lambda x: np.savez("unused.npz", x)),
    ("sum out=", lambda x: np.sum(x, out=np.zeros(()))),
    ("sin out=ndarray", lambda x: np.sin(x, out=np.zeros(SHAPE))),
]


@pytest.mark.parametrize("what,call", UNREGISTERED, ids=[u[0] for u in UNREGISTERED])
def test_unsupported_raise_type_error_everywhere(what, call):
    """Nothing unregistered gathers: NumPy's TypeError on every rank, for every layout."""
    g = values(seed=23)
    for name, kw in layouts().items():
        raises_everywhere(TypeError, call, da.asarray(g, **kw))


def test_ufunc_errors_raise_everywhere():
    g = values(seed=24)
    for name, kw in layouts().items():
        x = da.asarray(g, **kw)
        raises_everywhere(ValueError, np.add, x, da.asarray(g[:, :3], split=0))
        raises_everywhere(ValueError, np.add, x, g[:3])
        raises_everywhere(ValueError, np.add, x, 1.0, out=da.zeros((3, 3)))
