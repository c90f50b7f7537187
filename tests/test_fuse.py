"""darray.fuse: fused functions against eager darray and NumPy, on every rank count.

Each fused function is also run as the plain function (eager darray) and,
with ``da`` rebound to NumPy, on the gathered inputs (the oracle). Layouts
from the case catalogue: balanced and uneven cuts, empty and one-cell blocks,
2x2 grids, replicated arrays; a halo layout takes the eager path. Dtypes: every
category (bool, int, uint, float32/64, complex). Also: the signature cache
(re-tracing on a new dtype, layout or scalar type, not on a new scalar value),
the eager fallback (untraceable code, DARRAY_FUSE=eager, no numba), errors
at the call identical to eager darray's, and results that do not depend on
the kernels' thread count.
"""

from __future__ import annotations

import os
import types
import warnings

import numpy as np
import pytest

import darray as da
from darray._backend import to_numpy
from darray.fuse import cache as fuse_cache, decorator as fuse_decorator, execute as fuse_execute
from darray.testing import assert_equal, assert_raises_everywhere

from _cases import dtypes, each, layouts, values

pytestmark = pytest.mark.mpi

#: The fused path runs on NumPy blocks (other libraries run the function eagerly: same results, no kernel).
NUMPY_BLOCKS = os.environ.get("DARRAY_BACKEND", "numpy") == "numpy"
CUPY_BLOCKS = os.environ.get("DARRAY_BACKEND") == "cupy"
#: numba fuses (its kernels, stencils and stats are checked); PLANNED: calls run from a plan (numba or CUDA)
FUSING = NUMPY_BLOCKS and os.environ.get("DARRAY_FUSE", "auto") != "eager"
PLANNED = (NUMPY_BLOCKS or CUPY_BLOCKS) and os.environ.get("DARRAY_FUSE", "auto") != "eager"

#: One or two dtypes per category (each dtype costs a kernel compilation per function on first use).
DTYPES = ("bool", "int8", "int64", "uint16", "uint64", "float32", "float64", "complex64", "complex128")
SHAPE = (13, 6)
LAYOUTS = layouts(SHAPE, "split0", "uneven0", "last0", "first-empty0", "thin0", "split1", "grid2x2",
                  "grid2x2-uneven", "replicated", "halo0")


def numpy_version(f):
    """``f`` (a fused function) with ``da`` meaning NumPy: the oracle on gathered arrays."""
    plain = f.__wrapped__
    return types.FunctionType(plain.__code__, {**plain.__globals__, "da": np}, plain.__name__, plain.__defaults__,
                              plain.__closure__)


def check(f, *args, rtol=None, atol=0.0, exact_eager=False):
    """``f(*args)`` fused, eagerly and in NumPy agree (results compared with NumPy's dtypes): within ``rtol``,
    ``atol`` (default: darray.testing's), and bitwise with eager darray if ``exact_eager``."""
    gathered = [to_numpy(a.gather()) if isinstance(a, da.DArray) else a for a in args]
    with np.errstate(all="ignore"):
        want = numpy_version(f)(*gathered)
        eager = f.__wrapped__(*args)
    with np.errstate(all="ignore"):  # the eager parts of a fused function warn as eager darray does
        got = f(*args)
    wants, eagers, gots = ((r if isinstance(r, tuple) else (r,)) for r in (want, eager, got))
    assert len(gots) == len(wants)
    for g, e, w in zip(gots, eagers, wants):
        assert_equal(g, np.asarray(w), rtol=rtol, atol=atol)
        assert_equal(g, to_numpy(e.gather()), rtol=0 if exact_eager else rtol, atol=0 if exact_eager else atol)


# ------------------------------------------------------------------ elementwise chains, every dtype category
@da.fuse
def arithmetic(a, b):
    return a * b + a, da.where(a == b, a, b * 2), (a != b) | (a == a)


@da.fuse
def floating(a, b):
    return da.exp(a) * b - a / (b * b + 1), da.sqrt(da.abs(a)) + da.sin(b) * 0.5, da.astype(a * 2.5, da.complex128)


@da.fuse
def ordered(a, b):
    return da.maximum(a, b) - da.minimum(a, 3), da.where(a > b, a, b) * 2, da.where(a <= 1, a, b) != b


@da.fuse
def integers(a, b):
    return (a & b) + (a | 3) * 2, (a ^ b) + a // 3, -a + da.abs(b)  # // runs eagerly between fused groups


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_elementwise_every_dtype(layout):
    def one(dtype):
        a, b = (layout.array(values(SHAPE, dtype, key=k)) for k in ("a", "b"))
        if NUMPY_BLOCKS or dtype != "bool":  # the standard has no arithmetic on booleans (NumPy has)
            check(arithmetic, a, b, exact_eager=np.dtype(dtype).kind != "c")  # NumPy multiplies complex with FMA
        if np.dtype(dtype).kind in "fc":  # transcendental functions: numba's libm against NumPy's loops
            single = np.dtype(dtype) in (np.float32, np.complex64)
            check(floating, a, b, rtol=1e-4 if single else 1e-10, atol=1e-5 if single else 1e-12)
        if np.dtype(dtype).kind in "iuf":
            check(ordered, a, b, exact_eager=True)
        if np.dtype(dtype).kind in "iu":
            check(integers, a, b, exact_eager=True)

    each([d for d in dtypes() if d in DTYPES], one)


@da.fuse
def mixed(a, b, s, t):
    return a * s + b, (a + t) / b, b / (a * s + 2)


@pytest.mark.parametrize("layout", layouts(SHAPE, "split0", "uneven0", "grid2x2", "replicated"), ids=str)
def test_mixed_dtypes_and_python_scalars(layout):
    # every pair of kinds once, and each Python scalar type against one array dtype (a kernel each)
    cases = [(("int8", "int16"), (2, 3)), (("uint8", "int8"), (2, 3)), (("uint64", "int64"), (2, 3)),
             (("int32", "float32"), (2.5, -1.5)), (("float32", "float64"), (2, 3)), (("bool", "int8"), (True, False)),
             (("float32", "complex64"), (1j, 2)), (("int64", "complex128"), (2.5, -1.5)),
             (("float32", "float32"), (True, 2.5)), (("uint16", "uint16"), (1j, True))]
    if not NUMPY_BLOCKS:  # the standard leaves mixed kinds, bools in arithmetic and integer true division open
        cases = [(("float32", "float64"), (2.5, -1.5)), (("complex64", "complex128"), (1j, 2.5))]

    def one(case):
        (da_, db), (s, t) = case
        a = layout.array(values(SHAPE, da_, key="a"))
        b = layout.array(values(SHAPE, db, key="b", low=1, high=9))
        check(mixed, a, b, s, t, exact_eager=np.dtype(da_).kind not in "fc" and np.dtype(db).kind not in "fc")

    each(cases, one, name=lambda c: f"{c[0]}-{c[1]}")


@da.fuse
def broadcasting(a, row, col, z):
    return a * row + col - z, da.where(row > 0, a, col)


@pytest.mark.parametrize("layout", layouts(SHAPE, "split0", "uneven0", "split1", "grid2x2", "grid2x2-uneven"),
                         ids=str)
def test_broadcasting_against_replicated_arrays(layout):
    a = layout.array(values(SHAPE, key="a"))
    row = da.asarray(values((6,), key="row"), split=None)
    col = da.asarray(values((13, 1), key="col"), split=None)
    z = da.asarray(np.float64(0.25), split=None)
    check(broadcasting, a, row, col, z, exact_eager=True)


# ------------------------------------------------------------------ reductions at the end
def reductions(name):
    def all_axes(a, b):
        return getattr(da, name)(a * b + a)

    def each_axis(a, b, axis, keepdims):
        return getattr(da, name)(a - b * 2, axis=axis, keepdims=keepdims)

    return da.fuse(all_axes), da.fuse(each_axis)


REDUCTIONS = {name: reductions(name) for name in ("sum", "mean", "max", "min", "prod")}


@da.fuse
def methods(a, b):
    return (a * b).sum(), (a + b).max(axis=1), np.mean(a - b, axis=0), (a * 2).astype(np.float32)


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_reductions(layout):
    def one(case):
        name, dtype = case
        ranges = ((None, None), (None, None))  # products of 13 or 78 values: keep them finite (exact in integers)
        if name == "prod":
            ranges = ((1, 3), (0, 2)) if np.dtype(dtype).kind in "iu" else ((0.9, 1.1), (0.0, 0.2))
        a, b = (layout.array(values(SHAPE, dtype, key=k, low=lo, high=hi)) for k, (lo, hi) in zip("ab", ranges))
        all_axes, each_axis = REDUCTIONS[name]
        rtol = 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10
        exact = np.dtype(dtype).kind in "biu" or name in ("max", "min")
        if dtype != "bool" or NUMPY_BLOCKS and name != "prod":  # (bool arithmetic: NumPy's, not the standard's)
            check(all_axes, a, b, rtol=rtol, exact_eager=exact)
        if dtype != "bool":
            for axis in (0, 1, -1):
                check(each_axis, a, b, axis, axis == 0, rtol=rtol, exact_eager=exact)

    # every category for sum; three dtypes for the others (a kernel each, over all axes and over one)
    cases = [("sum", d) for d in ("bool", "int8", "uint16", "int64", "float32", "float64", "complex128")]
    cases += [(n, d) for n, ds in (("mean", ("int8", "float32", "complex128")), ("max", ("bool", "uint16", "float64")),
                                   ("min", ("int64", "float32", "float64")), ("prod", ("int8", "float64", "complex128")))
              for d in ds]
    each(cases, one, name=lambda c: f"{c[0]}-{c[1]}")
    if NUMPY_BLOCKS:  # the NumPy methods of DArrays (x.sum(), x.astype) call methods of NumPy blocks
        a, b = (layout.array(values(SHAPE, key=k)) for k in "ab")
        check(methods, a, b, rtol=1e-10)


@pytest.mark.parametrize("layout", layouts((0, 4), "split0", "split1", "replicated"), ids=str)
def test_empty_arrays(layout):
    a = layout.array(np.zeros((0, 4)))
    all_axes, each_axis = REDUCTIONS["sum"]
    check(all_axes, a, a, exact_eager=True)
    check(each_axis, a, a, 1, False, exact_eager=True)
    check(arithmetic, a, a, exact_eager=True)
    _, each_max = REDUCTIONS["max"]
    check(each_max, a, a, 1, True, exact_eager=True)  # max over a non-empty axis of an empty array


def values_and_reduction(name):
    def returned(a, b, c):
        y = a * b + c
        return y, getattr(da, name)(y)

    def two_returned(a, b, c):
        y = a * b + c
        return y * 2, getattr(da, name)(y), y

    return da.fuse(returned), da.fuse(two_returned)


@pytest.mark.parametrize("layout", [*LAYOUTS, *layouts((0, 4), "split0", "replicated")], ids=str)
def test_values_returned_beside_their_reduction_take_one_pass(layout):
    """``y = a*b + c; return y, sum(y)``: one kernel writes y and reduces it (no second pass over a, b, c or y);
    y is eager darray's bits, the reduction the plain fused reduction's."""
    shape = layout.shape

    def one(case):
        name, dtype = case
        if name == "max" and 0 in shape:
            return  # (no identity: fused raises eager's ValueError, test_empty_arrays' concern)
        a, b, c = (layout.array(values(shape, dtype, key=k, low=0.5 if name == "prod" else None,
                                       high=1.5 if name == "prod" else None)) for k in "abc")
        rtol = 1e-4 if np.dtype(dtype) == np.float32 else 1e-10
        for f in values_and_reduction(name):
            got = f(a, b, c)
            check(f, a, b, c, rtol=rtol)
            eager = f.__wrapped__(a, b, c)
            for g, e in zip(got, eager):  # (the written values: eager's bits)
                if g.shape == shape:
                    assert_equal(g, to_numpy(e.gather()), rtol=0, atol=0)
            if FUSING and not a._layout.has_halo:  # (a halo layout takes the eager path)
                drivers = {key[2] for key in next(iter(f._plans.values())).kernels}
                assert drivers == {"fullstore"}, drivers

    each([(n, d) for n, ds in (("sum", ("float64", "int64", "float32")), ("mean", ("float64",)),
                               ("max", ("float64", "int8")), ("prod", ("float64",))) for d in ds],
         one, name=lambda c: f"{c[0]}-{c[1]}")


def test_w1_reads_each_operand_once_and_matches_numpy():
    g = [values((1000,), key=k) for k in "abc"]
    a, b, c = (da.asarray(x) for x in g)

    @da.fuse
    def w1(a, b, c):
        return da.sum(a * b + c)

    assert abs(float(w1(a, b, c)) - float(np.sum(g[0] * g[1] + g[2]))) <= 1e-12 * float(np.sum(np.abs(g[0] * g[1]) +
                                                                                              np.abs(g[2])))
    assert w1.stats["fused"] == (1 if PLANNED else 0)


# ------------------------------------------------------------------ the cache
def test_cache_hits_and_retraces_on_a_new_signature():
    @da.fuse
    def f(a, s):
        return a * s + 1

    x = da.asarray(values(SHAPE, key="x"), split=0)
    calls = [(x, 2.0), (x, -3.5), (x.astype(da.float32), 2.0), (x, 2),  # a new value of a type: the same plan
             (da.asarray(values(SHAPE, key="x"), split=1), 2), (da.asarray(values((4,), key="y"), split=0), 2)]
    for args in calls:
        check(f, *args)
    if FUSING:  # one trace per signature: 5 (4 at one rank, where the split0 and split1 layouts are the same)
        signatures = {fuse_cache.signature(args, {}) for args in calls}
        assert 4 <= len(signatures) == f.stats["traces"] and f.stats["fused"] == 6, f.stats


def test_darray_read_from_a_closure_is_traced():
    """A fused function defined where darray is a local name (``import darray`` inside a function) fuses too."""
    def build():
        import darray as local_da

        @local_da.fuse
        def f(a, b):
            return local_da.sum(a * b + 1.0), local_da.max(a - b, axis=0)
        return f

    f = build()
    a, b = (da.asarray(values(SHAPE, key=k), split=0) for k in "ab")
    check(f, a, b)
    if FUSING:
        assert f.stats["fused"] == 1, f.stats


def test_scalar_outside_the_dtype_range_runs_eagerly_and_raises_like_eager():
    @da.fuse
    def f(a, s):
        return a + s

    x = da.asarray(values(SHAPE, "int8", key="x"), split=0)
    check(f, x, 100, exact_eager=True)
    eager = assert_raises_everywhere(OverflowError, f.__wrapped__, x, 300)
    assert assert_raises_everywhere(OverflowError, f, x, 300) == eager


# ------------------------------------------------------------------ the eager fallback
@da.fuse
def branchy(a, b):
    if da.sum(a) > 0:  # data-dependent control flow: not traceable
        return a * b
    return a - b


@da.fuse
def reshaping(a, b):
    return da.reshape(a * b, (-1,)) + 1  # a darray function the graph does not hold


@da.fuse
def indexing(a, b):
    return a[::2, :] * b[::2, :]  # slices of step 2: only step-1 windows are traced


@pytest.mark.parametrize("f", [branchy, reshaping, indexing], ids=lambda f: f.__name__)
def test_untraceable_code_runs_eagerly(f):
    a, b = (da.asarray(values(SHAPE, key=k), split=0) for k in "ab")
    check(f, a, b, exact_eager=True)
    check(f, a, b, exact_eager=True)
    if FUSING:
        assert f.stats["fused"] == 0 and f.stats["traces"] == 1 and f.stats["eager"] == 2, f.stats


def test_eager_mode(monkeypatch):
    @da.fuse
    def f(a, b):
        return da.sum(a * b + a)

    a, b = (da.asarray(values(SHAPE, key=k), split=0) for k in "ab")
    monkeypatch.setenv("DARRAY_FUSE", "eager")
    check(f, a, b, exact_eager=True)
    assert f.stats == {"traces": 0, "fused": 0, "eager": 1}
    monkeypatch.setenv("DARRAY_FUSE", "sometimes")
    with pytest.raises(ValueError, match="DARRAY_FUSE"):
        f(a, b)


def test_without_numba_runs_eagerly_and_warns_once(monkeypatch):
    monkeypatch.setattr(fuse_decorator, "_jit", False)
    monkeypatch.setattr(fuse_decorator, "_warned", False)
    monkeypatch.setenv("DARRAY_FUSE", "auto")  # (the eager mode never looks for numba)

    @da.fuse
    def f(a, b):
        return a * b - 1

    a, b = (da.asarray(values(SHAPE, key=k), split=0) for k in "ab")
    if CUPY_BLOCKS:  # CUDA kernels need no numba: fused, and nothing to warn about
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check(f, a, b)
        assert f.stats["fused"] == 1
        return
    with pytest.warns(RuntimeWarning, match="numba is not installed"):
        check(f, a, b, exact_eager=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(f, a, b, exact_eager=True)
    assert f.stats["fused"] == 0


# ------------------------------------------------------------------ errors at the call
@da.fuse
def shifted(a, b):
    return a << b


@da.fuse
def bitwise_float(a, b):
    return (a & b) + 1


@da.fuse
def plus(a, b):
    return a + b


@da.fuse
def bad_axis(a, b):
    return da.sum(a * b, axis=2)


@da.fuse
def empty_max(a, b):
    return da.max(a * b, axis=0)


@pytest.mark.parametrize("f, exc, shapes", [
    (bitwise_float, TypeError, ((13, 6), (13, 6))),
    (shifted, TypeError, ((13, 6), (13, 6))),
    (bad_axis, np.exceptions.AxisError, ((13, 6), (13, 6))),
    (empty_max, ValueError, ((0, 6), (0, 6))),
    (plus, ValueError, ((13, 6), (5,))),
], ids=["category", "shift-float", "axis", "empty-max", "shapes"])
def test_errors_at_the_call_match_eager(f, exc, shapes):
    a, b = (da.asarray(values(s, key=k), split=0 if s[0] else None) for s, k in zip(shapes, "ab"))
    eager = assert_raises_everywhere(exc, f.__wrapped__, a, b)
    assert assert_raises_everywhere(exc, f, a, b) == eager
    assert assert_raises_everywhere(exc, f, a, b) == eager  # the cached verdict


# ------------------------------------------------------------------ threads
@pytest.mark.parametrize("layout", layouts((4099, 3), "split0", "uneven0"), ids=str)
def test_results_do_not_depend_on_the_thread_count(layout, monkeypatch):
    @da.fuse
    def f(a, b):
        return da.sum(a * b + 1), da.max(a - b, axis=0), da.exp(a) * b

    a, b = (layout.array(values((4099, 3), key=k)) for k in "ab")
    one = [r.gather() for r in f(a, b)]
    monkeypatch.setattr(fuse_execute, "MIN_CELLS_PER_THREAD", 1)
    monkeypatch.setattr(fuse_execute, "rank_threads", lambda: 3)
    for r, s in zip(f(a, b), one):
        assert_equal(r, s, rtol=0)


# ------------------------------------------------------------------ whole-array assignments (an optimizer's update)
@da.fuse
def adam(p, g, m, v, lr, b1, b2, eps, t):
    m1 = b1 * m + (1 - b1) * g
    v1 = b2 * v + (1 - b2) * (g * g)
    p[:] = p - lr * (m1 / (1 - b1 ** t)) / (da.sqrt(v1 / (1 - b2 ** t)) + eps)
    m[:] = m1
    v[:] = v1


@pytest.mark.parametrize("layout", layouts((37,), "split0", "uneven0", "first-empty0", "halo0", "replicated"),
                         ids=str)
def test_optimizer_update_in_place(layout):
    """Three arrays updated from each other: one kernel writes them in place (no temporaries), as eagerly."""
    def one(dtype):
        start = [values((37,), dtype, key=k) for k in "pgmv"]
        start[3] = np.abs(start[3])
        got, eager = [layout.array(x.copy()) for x in start], [layout.array(x.copy()) for x in start]
        want = [x.copy() for x in start]
        blocks = [x._block for x in got]
        for t in (1, 2):
            assert adam(*got, 1e-3, 0.9, 0.999, 1e-8, t) is None
            adam.__wrapped__(*eager, 1e-3, 0.9, 0.999, 1e-8, t)
            numpy_version(adam)(*want, 1e-3, 0.9, 0.999, 1e-8, t)
        for x, e, w, b in zip(got, eager, want, blocks):
            assert x._block is b  # the same arrays, written in place
            assert_equal(x, to_numpy(e.gather()), rtol=0)
            assert_equal(x, w, rtol=1e-6 if dtype == "float32" else 1e-12)

    each(["float64", "float32"], one)


@da.fuse
def scalar_floats(a, s, t):
    return a * (1 - s) + (s * t) ** 2 / (a + 2)  # Python floats eagerly: weak, float32 stays float32


@da.fuse
def scalar_ints(a, n):
    return a + (n + 1)  # a Python int eagerly: its value, not int64, meets the array (runs eagerly)


def test_arithmetic_of_python_scalars_stays_weak():
    a = da.asarray(values(SHAPE, "float32", key="a"), split=0)
    check(scalar_floats, a, 0.9, 3, exact_eager=True)
    assert scalar_floats(a, 0.9, 3).dtype == np.float32
    i = da.asarray(values(SHAPE, "int8", key="i"), split=0)
    check(scalar_ints, i, 5, exact_eager=True)
    assert scalar_ints(i, 5).dtype == np.int8
    if FUSING:
        assert scalar_floats.stats["fused"] == 2 and scalar_ints.stats["fused"] == 0, scalar_ints.stats
