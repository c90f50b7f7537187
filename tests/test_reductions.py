"""Reductions (sum prod min max mean var std all any) against NumPy, on every rank count.

Inputs are global NumPy arrays generated identically on every rank (seeded);
a test lays them out in one layout of ``tests/_cases.py`` (balanced, uneven
with empty blocks, 2-d grids at 4 ranks, replicated; its id names it) and
compares the reduction with NumPy on the global input via
:func:`darray.testing.assert_equal`, which agrees on the verdict across ranks.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import darray as da
from darray.testing import agree, assert_equal, assert_raises_everywhere, backend_dtypes

from _cases import P, by_ndim, catalogue, each, generator, layouts

pytestmark = pytest.mark.mpi

FUNCS = ["sum", "prod", "min", "max", "mean", "var", "std", "all", "any"]
SHAPES = {1: (13,), 2: (7, 5), 3: (3, 7, 4)}
AXES = {
    1: [None, 0, -1, (0,)],
    2: [None, 0, 1, -1, (0, 1), (-1, 0), ()],
    3: [None, 1, -1, (0, 2), (1, 2), (2, 0, 1)],
}
# The main dtype of each function (every layout and axis) and further dtypes (fewer layouts).
DTYPES = {
    "sum": ["float64", "int64", "uint8", "int32", "float32", "complex128", "bool"],
    "prod": ["float64", "int64", "complex128", "float32", "bool"],
    "min": ["float64", "int64", "uint16", "float32", "bool"],
    "max": ["int64", "float64", "uint8", "float32", "bool"],
    "mean": ["float64", "float32", "complex128", "int64"],
    "var": ["float64", "float32", "complex128", "int64"],
    "std": ["float64", "float32", "complex128", "int32"],
    "all": ["bool", "int64", "float64"],
    "any": ["bool", "int64", "float64"],
}
_SUPPORTED = backend_dtypes()  # torch: no uint16/32/64 arithmetic
for _func, _dtypes in DTYPES.items():
    # sum and prod of unsigned integers give uint64 (NumPy and the standard)
    DTYPES[_func] = [d for d in _dtypes if d in _SUPPORTED
                     and not (_func in ("sum", "prod") and d.startswith("u") and "uint64" not in _SUPPORTED)]


#: Layouts per dimension: balanced, uneven with an empty block, replicated; 2x2 grids at 4 ranks.
LAYOUTS = {1: layouts(SHAPES[1], "split0", "uneven0", "replicated"),
           2: layouts(SHAPES[2], "split0", "split1", "uneven0", "uneven1", "replicated", "grid2x2", "grid2x2-10",
                      "grid2x2-n1"),
           3: layouts(SHAPES[3], "split0", "uneven1", "split2", "replicated", "grid2x2-12", "grid2x2-20")}


def uneven(a, axis: int = 0) -> da.DArray:
    """``a`` split unevenly along ``axis`` (the second block empty)."""
    return catalogue(np.shape(a))[f"uneven{axis}"].array(a)


def values(func: str, dtype: str, shape, seed: int = 0) -> np.ndarray:
    rng = generator(seed, func, dtype, len(shape))
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) > (0.05 if func == "all" else 0.9)
    if dt.kind in "iu":
        lo, hi = (0, 40) if dt.kind == "u" else (-20, 20)
        if func == "prod":
            lo, hi = -3, 4
        elif func in ("all", "any"):
            lo, hi = (0, 12) if func == "all" else (0, 2)
        return rng.integers(lo, hi, shape).astype(dt)
    real = rng.uniform(0.8, 1.2, shape) if func == "prod" else rng.uniform(-1, 1, shape)
    if func in ("all", "any"):
        real = np.where(rng.random(shape) < (0.05 if func == "all" else 0.85), 0.0, real)
    if dt.kind == "c":
        imag = rng.uniform(-0.2, 0.2, shape) if func == "prod" else rng.uniform(-1, 1, shape)
        return (real + 1j * imag).astype(dt)
    return real.astype(dt)


def oracle(func: str, a: np.ndarray, axis, keepdims: bool, **kwargs):
    kwargs = dict(kwargs)
    if "correction" in kwargs:
        kwargs["ddof"] = kwargs.pop("correction")
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(getattr(np, func)(a, axis=axis, keepdims=keepdims, **kwargs))


def reduce(func: str, x, axis, keepdims: bool, **kwargs):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(da, func)(x, axis=axis, keepdims=keepdims, **kwargs)


def norm_axes(axis, ndim):
    if axis is None:
        return set(range(ndim))
    return {a % ndim for a in ((axis,) if isinstance(axis, int) else axis)}


def check_layout(x, got, axis, keepdims):
    """The result is replicated along grid dims that cut a reduced axis, and cut like x elsewhere."""
    axes = norm_axes(axis, x.ndim)
    kept = [a for a in range(x.ndim) if a not in axes]
    assert got.layout.dims == x.layout.dims
    for s, r in zip(x.layout.split, got.layout.split):
        if s is None or s in axes:
            assert r is None, (x.layout, got.layout, axis)
        else:
            assert r == (s if keepdims else kept.index(s)), (x.layout, got.layout, axis)


def same_on_every_rank(comm, value) -> bool:
    got = comm.allgather(np.asarray([value]))
    return bool(np.all(np.asarray(got).reshape(-1) == np.asarray(got).reshape(-1)[0]))


# ---------------------------------------------------------------- the matrix
def matrix(func: str, ndim: int) -> list[tuple[int, str, str, object]]:
    """The cases ``(i, dtype, layout id, axis)`` of ``func`` on ``ndim`` dimensions: the main dtype over every
    layout and axis, the other dtypes over two layouts (the second and the sixth) and the first three axes;
    ``i`` (the case's number) alternates keepdims, and var/std's correction every second case."""
    ids = [str(c) for c in LAYOUTS[ndim]]
    main, *others = DTYPES[func]
    cases = [(main, name, axis) for name in ids for axis in AXES[ndim]]
    cases += [(d, name, axis) for d in others for name in ids[1:2] + ids[5:6] for axis in AXES[ndim][:3]]
    return [(i, *c) for i, c in enumerate(cases)]


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_reduction_matches_numpy(ndim, layout):
    """The cases of :func:`matrix` on this layout, for every function (one failing function hides no other)."""
    def check(func):
        for i, dtype, name, axis in matrix(func, ndim):
            if name != layout.id:
                continue
            a = values(func, dtype, layout.shape)
            x = layout.array(a)
            keepdims = bool(i % 2)
            extra = {"correction": (i // 2) % 2} if func in ("var", "std") else {}
            got = reduce(func, x, axis, keepdims, **extra)
            expected = oracle(func, a, axis, keepdims, **extra)
            msg = f"{func}({dtype}, axis={axis}, keepdims={keepdims}, {extra})"
            assert_equal(got, expected, err_msg=msg)
            check_layout(x, got, axis, keepdims)

    each(FUNCS, check)


@pytest.mark.parametrize("func", FUNCS)
def test_both_keepdims_on_a_grid(func):
    """keepdims True and False on the same input, for the most cut layout at this rank count."""
    layout = catalogue(SHAPES[2])["grid2x2" if P == 4 else "uneven0"]
    a = values(func, DTYPES[func][0], SHAPES[2], seed=1)
    x = layout.array(a)
    for axis in (None, 0, 1):
        for keepdims in (False, True):
            got = reduce(func, x, axis, keepdims)
            assert_equal(got, oracle(func, a, axis, keepdims), err_msg=f"{func} axis={axis} keepdims={keepdims}")
            check_layout(x, got, axis, keepdims)


@pytest.mark.parametrize("func", FUNCS)
def test_methods(func):
    a = values(func, DTYPES[func][0], SHAPES[2], seed=2)
    x = uneven(a)
    assert_equal(getattr(x, func)(), oracle(func, a, None, False))
    assert_equal(getattr(x, func)(axis=1, keepdims=True), oracle(func, a, 1, True))
    assert_equal(getattr(x, func)(0), oracle(func, a, 0, False))


def test_var_std_ddof_and_correction():
    a = values("var", "float64", SHAPES[2], seed=3)
    x = uneven(a, 1)
    for axis in (None, 0, 1):
        assert_equal(x.var(axis=axis, ddof=1), np.var(a, axis=axis, ddof=1))
        assert_equal(x.std(axis=axis, ddof=1), np.std(a, axis=axis, ddof=1))
        assert_equal(x.var(axis=axis, correction=1), np.var(a, axis=axis, ddof=1))
        assert_equal(da.std(x, axis=axis, correction=2.5), np.std(a, axis=axis, ddof=2.5))
        assert_equal(da.var(x, axis=axis, correction=0.5, keepdims=True),
                     np.var(a, axis=axis, ddof=0.5, keepdims=True))
    # correction >= count: NumPy's inf / nan, on every layout
    one = da.asarray(np.array([2.0]), split=0)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_equal(da.var(one, correction=1), np.var(np.array([2.0]), ddof=1))
        assert_equal(da.var(x, axis=0, correction=7), np.var(a, axis=0, ddof=7))
        assert_equal(da.var(x, axis=0, correction=9), np.var(a, axis=0, ddof=9))


@pytest.mark.parametrize("layout", LAYOUTS[2][:3] + LAYOUTS[2][5:6], ids=str)
@pytest.mark.parametrize("func,src,dtype", [("sum", "int8", "int64"), ("sum", "float32", "float64"),
                                            ("sum", "uint8", "uint16"), ("sum", "int64", "float64"),
                                            ("sum", "float64", "complex128"), ("prod", "int32", "int64"),
                                            ("prod", "float32", "float64"), ("prod", "int64", "float64")])
def test_dtype_argument(func, src, dtype, layout):
    shape = SHAPES[2]
    a = (values(func, "int64", shape, seed=4) * (7 if func == "sum" else 1)).astype(src)
    if func == "sum" and src == "int8":
        a = np.full(shape, 100, dtype=np.int8)  # overflows int8, not int64
    x = layout.array(a)
    for axis in (None, 0, 1):
        got = getattr(da, func)(x, axis=axis, dtype=getattr(da, dtype))
        expected = getattr(np, func)(a, axis=axis, dtype=dtype)
        assert got.dtype == np.dtype(dtype)
        assert_equal(got, expected, err_msg=f"{func}({src}->{dtype}) axis={axis}")
    assert_equal(x.sum(dtype=dtype) if func == "sum" else x.prod(dtype=dtype),
                 getattr(np, func)(a, dtype=dtype))


# ---------------------------------------------------------------- empty blocks and arrays
def test_all_blocks_but_one_empty():
    """Every value on one rank: the others contribute neutral elements."""
    sizes = [0] * P
    sizes[P - 1] = 7
    a = np.linspace(-2, 3, 35).reshape(7, 5)
    x = da.asarray(a, split=0, sizes={0: sizes})
    for func in ("sum", "prod", "min", "max", "mean", "var", "std"):
        for axis in (None, 0, 1):
            assert_equal(reduce(func, x, axis, False), oracle(func, a, axis, False), err_msg=f"{func} {axis}")
    b = a > 0
    xb = da.asarray(b, split=0, sizes={0: sizes})
    for func in ("all", "any"):
        for axis in (None, 0):
            assert_equal(reduce(func, xb, axis, True), oracle(func, b, axis, True), err_msg=f"{func} {axis}")
    xi = da.asarray(np.arange(7, dtype=np.uint8), split=0, sizes=sizes if P > 1 else None)
    assert_equal(da.min(xi), np.uint8(0))
    assert_equal(da.max(xi), np.uint8(6))


@pytest.mark.parametrize("layout", [pytest.param(c, id=f"{'x'.join(map(str, shape))}-{c}")
                                    for shape in [(0,), (0, 5), (4, 0)]
                                    for c in layouts(shape, "split0", "replicated", *(["split1"] * (len(shape) == 2)))])
def test_empty_arrays(layout):
    shape = layout.shape
    a = np.zeros(shape)
    x = layout.array(a)
    for func in ("sum", "prod", "all", "any", "mean", "var"):
        for axis in [None, *range(len(shape))]:
            assert_equal(reduce(func, x, axis, False), oracle(func, a, axis, False), err_msg=f"{func} axis={axis}")
    for func in ("min", "max"):
        for axis in [None, *range(len(shape))]:
            if a.size == 0 and (axis is None or shape[axis] == 0):
                assert_raises_everywhere(ValueError, getattr(da, func), x, axis=axis, match=func)
            else:  # reducing a non-empty axis of an empty array is fine: an empty result
                assert_equal(getattr(da, func)(x, axis=axis), getattr(np, func)(a, axis=axis))


# ---------------------------------------------------------------- numerics
def offset_noise() -> tuple[np.ndarray, np.ndarray]:
    """1e8 + noise (float64) and 1e3 + noise (float32), 1001 values each."""
    rng = np.random.default_rng(0)
    a = 1e8 + rng.standard_normal(1001)
    return a, (1e3 + rng.standard_normal(1001)).astype(np.float32)


@pytest.mark.parametrize("layout", layouts((1001,), "split0", "uneven0", "replicated"), ids=str)
def test_stable_variance(comm, layout):
    """var of 1e8 + noise: the parallel combine must not lose the small spread."""
    a, f32 = offset_noise()
    x = layout.array(a)
    for correction in (0, 1):
        got = da.var(x, correction=correction)
        assert_equal(got, np.var(a, ddof=correction), rtol=1e-8)
        assert_equal(da.std(x, correction=correction), np.std(a, ddof=correction), rtol=1e-8)
        assert agree(comm, same_on_every_rank(comm, float(got))) == []
    if "replicated" not in layout.flags:
        # float32: an offset float32 still resolves (1e3 + noise); compare with the float64 truth
        truth = np.var(f32.astype(np.float64))
        got = da.var(layout.array(f32))
        assert got.dtype == np.float32
        assert_equal(got, truth.astype(np.float32), rtol=1e-4)


def test_stable_variance_along_a_cut_axis():
    b = offset_noise()[0].reshape(7, 143)
    y = uneven(b, 1)
    assert_equal(da.var(y, axis=1), np.var(b, axis=1), rtol=1e-8)
    assert_equal(da.var(y), np.var(b), rtol=1e-8)


def test_mean_of_large_offset():
    a = 1e12 + np.arange(101, dtype=np.float64)
    x = uneven(a)
    assert_equal(da.mean(x), np.mean(a), rtol=1e-14)
    assert_equal(da.sum(x), np.sum(a), rtol=1e-14)


# ---------------------------------------------------------------- scalars
def test_zero_d_results_convert_on_every_rank(comm):
    a = values("sum", "float64", SHAPES[2], seed=5)
    x = uneven(a, 1)
    s = da.sum(x)
    assert s.ndim == 0 and s.layout.is_replicated
    v = float(s)
    ok = abs(v - float(np.sum(a))) <= 1e-12 * abs(float(np.sum(a))) + 1e-15
    assert agree(comm, ok and same_on_every_rank(comm, v)) == []
    i = uneven(np.arange(13))
    assert agree(comm, int(da.sum(i)) == 78 and int(da.max(i)) == 12
                 and same_on_every_rank(comm, int(da.min(i)))) == []
    assert agree(comm, bool(da.all(i >= 0)) and not bool(da.any(i > 12))) == []
    z = da.asarray(a + 1j, split=0)
    assert agree(comm, complex(da.sum(z)) == complex(da.sum(z)) and same_on_every_rank(comm, complex(da.mean(z)))) == []
    scalar = da.asarray(np.float64(2.5))
    assert_equal(da.sum(scalar), np.float64(2.5))
    assert_equal(da.var(scalar), np.float64(0.0))
    assert_raises_everywhere(np.exceptions.AxisError, da.sum, scalar, axis=0)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("func", FUNCS)
def test_bad_axes(func):
    a = values(func, DTYPES[func][0], SHAPES[2])
    x = da.asarray(a, split=0)
    f = getattr(da, func)
    for axis in (2, -3, (0, 2), (5,)):
        assert_raises_everywhere(np.exceptions.AxisError, f, x, axis=axis, match=func)
    for axis in ((0, 0), (1, -1), (0, 1, 0)):
        assert_raises_everywhere(ValueError, f, x, axis=axis, match=func)
    # what NumPy raises for the same calls
    with pytest.raises(np.exceptions.AxisError):
        getattr(np, func)(a, axis=2)
    with pytest.raises(ValueError):
        getattr(np, func)(a, axis=(1, -1))


def test_bad_dtypes():
    f = da.asarray(np.linspace(0, 1, 13), split=0)
    z = da.asarray(np.ones(13, dtype=np.complex128), split=0)
    assert_raises_everywhere(TypeError, da.min, z, match="min")
    assert_raises_everywhere(TypeError, da.max, z, match="max")
    assert_raises_everywhere(TypeError, da.sum, f.astype(da.float32), match=None, dtype=np.dtype("O"))


def test_bool_min_max_across_ranks():
    """min/max of booleans cut over the ranks (MPI orders no booleans: the transport uses and/or)."""
    for g in (np.array([True, False, False, True, False]), np.ones(5, bool), np.zeros(5, bool)):
        x = da.asarray(g, split=0)
        assert_equal(da.max(x), np.max(g))
        assert_equal(da.min(x), np.min(g))


@pytest.mark.parametrize("layout", [LAYOUTS[2][0], LAYOUTS[2][2], LAYOUTS[2][-1]], ids=str)
@pytest.mark.parametrize("func", ["sum", "prod", "min", "max", "mean"])
def test_repeated_calls_take_the_remembered_path(comm, func, layout):
    """A second call on the same layout (NumPy blocks: one NumPy reduction, and over a cut axis the allreduce
    of its partials) gives NumPy's result, for each dtype in turn on that layout, and still records its compute
    event while tracing. Layouts: rows cut over the ranks, evenly and with an empty block (whose rank takes the
    general path for min and max), and the last of :data:`LAYOUTS` (replicated; at 4 ranks a 2x2 grid of
    copies)."""
    for dtype in DTYPES[func]:
        a = values(func, dtype, SHAPES[2], seed=3)
        x = layout.array(a)
        for axis, keepdims in ((None, False), (1, False), (1, True), (0, False), (None, True)):
            for call in range(2):
                assert_equal(reduce(func, x, axis, keepdims), oracle(func, a, axis, keepdims),
                             atol=1e-6 if dtype == "float32" else 0.0,  # float32 means near 0: summation order
                             err_msg=f"{func}({dtype}, axis={axis}, keepdims={keepdims}) call {call}")
    with da.tracing() as t:
        reduce(func, x, 1, False)
    recorded = any(e["kind"] == "compute" and e["op"] == func for e in t.events)
    assert not agree(comm, recorded), f"no compute event for {func} while tracing"


@pytest.mark.parametrize("split", [None, 0])
def test_numpy_runtime_warnings(split):
    """NumPy's RuntimeWarnings, on every rank, replicated and cut: mean of an empty slice, std with ddof >= n,
    nanmax of all-NaN."""
    def made(m, data):
        return np.asarray(data) if m is np else da.asarray(data, split=split)

    calls = [("Mean of empty slice", lambda m: m.mean(made(m, np.zeros(0)))),
             ("Degrees of freedom <= 0", lambda m: m.std(made(m, np.ones(5)), ddof=5)),
             ("All-NaN slice encountered", lambda m: m.nanmax(made(m, [np.nan] * 5))),
             ("Mean of empty slice", lambda m: m.nanmean(made(m, [np.nan] * 5)))]
    for text, call in calls:
        for module in (np, da):
            with pytest.warns(RuntimeWarning, match=text):
                with np.errstate(invalid="ignore", divide="ignore"):
                    got = call(module)
            assert np.isnan(float(got)), (text, module.__name__)
