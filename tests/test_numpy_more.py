"""More NumPy functions on DArrays against NumPy, on every rank count (issue #15).

Set routines, partition/argpartition, convolve/correlate, rot90, put,
put_along_axis, take_along_axis (NumPy arguments), packbits/unpackbits,
einsum with three or more operands, where(cond), unique(axis=k) and the 2-d
FFTs. Each is called as ``darray.f(...)`` and as ``numpy.f(...)`` on DArrays
(``__array_function__``); the results are compared with NumPy on the same
data, parametrized over layouts of ``tests/_cases.py`` (the test id names the
layout): split along each axis, uneven blocks with an empty one, everything on
the last rank, replicated, and a 2x2 grid at 4 ranks. Bad input raises NumPy's
exception type with one message on every rank.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray import DArray
from darray._backend import to_numpy
from darray.testing import agree, assert_raises_everywhere, assert_results_equal

from _cases import P, case, layouts, values as seeded

pytestmark = pytest.mark.mpi


def named(shape) -> list:
    """Layouts of ``shape``: each split axis (even, uneven with an empty block, all on the last rank), replicated,
    and a 2x2 grid at 4 ranks."""
    cuts = ("split", "uneven", "last") if P > 1 else ("split",)  # one rank: uneven0 is split0
    out = layouts(shape, "replicated", *(f"{kind}{a}" for a in range(len(shape)) for kind in cuts),
                  *(("grid2x2",) if len(shape) >= 2 else ()))
    if P == 4 and len(shape) == 1:
        out.append(case("grid2x2-0n", shape, "grid", "copies", split=(0, None), grid=(2, 2)))
    return out


def over(*shapes, first: int | None = None) -> list:
    """``layout`` parameters over the layouts of ``shapes`` (the ``first`` few of each), ids ``{shape}-{layout}``."""
    return [pytest.param(c, id=f"{'x'.join(map(str, shape))}-{c}") for shape in shapes for c in named(shape)[:first]]


def values(shape, dtype="float64", seed=0, low=-9, high=10) -> np.ndarray:
    """Integers in ``[low, high)`` (halves for floats: repeats on purpose, for sets and ties)."""
    kind = np.dtype(dtype).kind
    if kind == "f":
        return (seeded(shape, "int64", seed, low=low, high=high) / 2).astype(dtype)
    if kind == "c":
        imag = seeded(shape, "int64", seed, low=low, high=high, key="imag")
        return (seeded(shape, "int64", seed, low=low, high=high) + 1j * imag).astype(dtype)
    return seeded(shape, dtype, seed, low=low, high=high)


def both(name: str):
    """``darray.<name>`` and ``numpy.<name>`` (through ``__array_function__``)."""
    return [("darray", getattr(da, name)), ("numpy", getattr(np, name))]


# ---------------------------------------------------------------- set routines
SET_DTYPES = ["int64", "float64", "float32", "bool", "uint8"]


@pytest.mark.parametrize("layout", over((13,)))
@pytest.mark.parametrize("dtype", SET_DTYPES)
@pytest.mark.parametrize("name", ["intersect1d", "union1d", "setdiff1d", "setxor1d"])
def test_set_routines(name, dtype, layout):
    other = da.asarray(values((7,), dtype, seed=1, low=-4, high=6))
    other_np = other.gather()
    g = values((13,), dtype, low=-4, high=6)
    x = layout.array(g)
    for spelling, f in both(name):
        assert_results_equal(f(x, other), getattr(np, name)(g, other_np), f"{spelling}.{name}")
        assert_results_equal(f(other, x), getattr(np, name)(other_np, g), f"{spelling}.{name} swapped")


@pytest.mark.parametrize("dtype", SET_DTYPES)
@pytest.mark.parametrize("name", ["intersect1d", "union1d", "setdiff1d", "setxor1d"])
def test_set_routines_2d(name, dtype):
    other_np = values((7,), dtype, seed=1, low=-4, high=6)
    two_d = da.asarray(values((3, 5), dtype, seed=2, low=-4, high=6), split=1)
    assert_results_equal(getattr(np, name)(two_d, da.asarray(other_np)), getattr(np, name)(two_d.gather(), other_np),
                         f"{name} of a 2-d array")


@pytest.mark.parametrize("layout", over((13,)))
@pytest.mark.parametrize("name", ["intersect1d", "setdiff1d", "setxor1d"])
def test_set_routines_assume_unique(name, layout):
    rng = np.random.default_rng(5)
    a_np, b_np = rng.permutation(20)[:13].astype(np.float64), rng.permutation(20)[:7].astype(np.float64)
    a, b = layout.array(a_np), da.asarray(b_np)
    for spelling, f in both(name):
        assert_results_equal(f(a, b, assume_unique=True), getattr(np, name)(a_np, b_np, assume_unique=True),
                             f"{spelling}.{name} assume_unique")


@pytest.mark.parametrize("layout", over((7,)))
def test_set_routines_nan_and_mixed_dtypes(layout):
    a_np = np.array([1.0, np.nan, 2.0, np.nan, -0.0, 3.0, 7.0])
    b_np = np.array([np.nan, 2.0, 0.0, 5.0, 7.0])
    b_int = np.array([2, 0, 5, 7, 2], dtype=np.int64)
    a = layout.array(a_np)
    for name in ("intersect1d", "union1d", "setdiff1d", "setxor1d"):
        assert_results_equal(getattr(np, name)(a, da.asarray(b_np)), getattr(np, name)(a_np, b_np), f"{name} NaN")
        assert_results_equal(getattr(np, name)(a, b_int), getattr(np, name)(a_np, b_int), f"{name} with ints")


@pytest.mark.parametrize("layout", over((13,)))
def test_intersect1d_return_indices(layout):
    g = values((13,), "int64", low=0, high=8)
    x = layout.array(g)
    for other_np in (np.array([5, 1, 1, 7, 3, 3, 12]), np.arange(20) % 6):
        other = da.asarray(other_np, split=0)
        for spelling, f in both("intersect1d"):
            assert_results_equal(f(x, other, return_indices=True), np.intersect1d(g, other_np, return_indices=True),
                                 f"{spelling}.intersect1d return_indices")


@pytest.mark.parametrize("layout", over((7,)))
def test_intersect1d_assume_unique_return_indices(layout):
    unique_np = np.array([9, 2, 5, 0, 7, 3, 11])
    u = layout.array(unique_np)
    assert_results_equal(np.intersect1d(u, da.asarray(np.array([3, 4, 9, 1])), assume_unique=True, return_indices=True),
                         np.intersect1d(unique_np, [3, 4, 9, 1], assume_unique=True, return_indices=True),
                         "intersect1d assume_unique return_indices")


def test_set_routines_empty_operands():
    empty = da.asarray(np.zeros(0, dtype=np.int64))
    x = da.asarray(np.array([3, 1, 3, 2]))
    for name in ("intersect1d", "union1d", "setdiff1d", "setxor1d"):
        assert_results_equal(getattr(np, name)(x, empty), getattr(np, name)(np.array([3, 1, 3, 2]), np.zeros(0, np.int64)),
              f"{name} with an empty operand")
        assert_results_equal(getattr(np, name)(empty, empty), getattr(np, name)(np.zeros(0, np.int64), np.zeros(0, np.int64)),
              f"{name} of two empty operands")


@pytest.mark.parametrize("layout", over((4, 7)))
def test_numpy_isin(layout):
    test = [1, 4, -3]
    g = values((4, 7), "int64", low=-4, high=6)
    x = layout.array(g)
    assert_results_equal(np.isin(x, test), np.isin(g, test), "numpy.isin")
    assert_results_equal(np.isin(x, da.asarray(np.array(test)), invert=True), np.isin(g, test, invert=True),
                         "numpy.isin invert")


def test_in1d_is_gone():
    assert not hasattr(np, "in1d")  # gone from NumPy 2.4: nothing to mirror


# ---------------------------------------------------------------- partition / argpartition
def _partition_ok(got: np.ndarray, source: np.ndarray, kth, axis) -> str:
    """'' if ``got`` is a partition of ``source`` along ``axis`` for every ``kth`` (NumPy's kth values)."""
    want = np.sort(source, axis=axis)
    if not np.array_equal(np.sort(got, axis=axis), want, equal_nan=True):
        return "not a permutation of the input"
    moved, sorted_moved = np.moveaxis(got, axis, -1), np.moveaxis(want, axis, -1)
    for k in np.atleast_1d(kth):
        k = int(k) % moved.shape[-1]
        pivot = moved[..., k:k + 1]
        if not np.array_equal(pivot[..., 0], sorted_moved[..., k], equal_nan=True):
            return f"kth={k}: value differs from NumPy's"
        if np.any(moved[..., :k] > pivot) or np.any(moved[..., k + 1:] < pivot):
            return f"kth={k}: partition property broken"
    return ""


PARTITIONS = [((13,), -1, (0, 6, -1, (2, 9))), ((7, 13), 0, (3, (0, 6))), ((7, 13), 1, (12, (1, 5))),
              ((7, 13), None, (40,))]


@pytest.mark.parametrize("axis,kths,layout", [pytest.param(axis, kths, c, id=f"{'x'.join(map(str, shape))}-{axis}-{c}")
                                              for shape, axis, kths in PARTITIONS for c in named(shape)])
@pytest.mark.parametrize("dtype", ["float64", "int64", "uint8", "bool"])
def test_partition_and_argpartition(dtype, axis, kths, layout):
    g = values(layout.shape, dtype, low=-5, high=5)
    x = layout.array(g)
    for kth in kths:
        flat = g.reshape(-1) if axis is None else g
        ax = -1 if axis is None else axis
        for spelling, f in both("partition"):
            got = f(x, kth, axis=axis)
            problem = _partition_ok(to_numpy(got.gather()), flat, kth, ax)
            assert not agree(x.comm, not problem), f"{spelling}.partition kth={kth}: {problem}"
            if axis is not None:
                assert got.layout.blocks_key == x.layout.blocks_key or x.layout.has_halo
        for spelling, f in both("argpartition"):
            idx = f(x, kth, axis=axis)
            assert str(idx.dtype).endswith("int64"), idx.dtype
            taken = np.take_along_axis(flat, to_numpy(idx.gather()), axis=ax)
            ok_perm = np.array_equal(np.sort(to_numpy(idx.gather()), axis=ax),
                                     np.broadcast_to(np.arange(flat.shape[ax]).reshape(
                                         [-1 if d == ax % flat.ndim else 1 for d in range(flat.ndim)]),
                                         flat.shape))
            problem = _partition_ok(taken, flat, kth, ax) or ("" if ok_perm else "not a permutation")
            assert not agree(x.comm, not problem), f"{spelling}.argpartition kth={kth}: {problem}"


@pytest.mark.parametrize("layout", over((7,)))
def test_partition_with_nans(layout):
    g = np.array([3.0, np.nan, -1.0, 2.0, np.nan, 0.5, 7.0])
    x = layout.array(g)
    for kth in (0, 3, 5, 6):
        got = to_numpy(np.partition(x, kth).gather())
        assert not agree(x.comm, not _partition_ok(got, g, kth, -1) if kth < 5 else
                         np.isnan(got[kth])), f"partition with NaNs kth={kth}"


# ---------------------------------------------------------------- convolve / correlate
@pytest.mark.parametrize("layout", over((13,)))
@pytest.mark.parametrize("dtype", ["float64", "int64", "complex128", "float32", "bool"])
@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_convolve_correlate(name, dtype, layout):
    g = values((13,), dtype)
    x = layout.array(g)
    for m in (1, 2, 4, 20):
        v = values((m,), dtype, seed=m)
        for i, mode in enumerate(("full", "same", "valid")):
            want = getattr(np, name)(g, v, mode)
            spelling, f = both(name)[(i + m) % 2]
            assert_results_equal(f(x, v, mode), want, f"{spelling}.{name} m={m} {mode}")
            assert_results_equal(getattr(np, name)(v, x, mode), getattr(np, name)(v, g, mode),
                                 f"{name}(v, x) m={m} {mode}")
            if m in (4, 20):  # a distributed kernel (or signal, when longer)
                vd = da.asarray(v, split=0)
                assert_results_equal(getattr(np, name)(x, vd, mode), want, f"{name} of two DArrays m={m} {mode}")


@pytest.mark.parametrize("dtype", ["float64", "int64", "complex128", "float32", "bool"])
def test_convolve_default_mode_longer_v(dtype):
    assert_results_equal(np.convolve(da.asarray(values((7,), dtype)), values((13,), dtype, seed=4)),
                         np.convolve(values((7,), dtype), values((13,), dtype, seed=4)),
                         "convolve default mode, longer v")


@pytest.mark.parametrize("layout", over((13,)))
def test_convolve_mixed_dtypes_and_default_modes(layout):
    g, v = values((13,), "int64"), np.array([0.5, -1.0, 2.0])
    x = layout.array(g)
    assert_results_equal(np.convolve(x, v), np.convolve(g, v), "convolve int with float")
    assert_results_equal(np.correlate(x, v), np.correlate(g, v), "correlate default 'valid'")
    assert_results_equal(da.convolve(x, [1, 1]), np.convolve(g, [1, 1]), "convolve with a list")


# ---------------------------------------------------------------- rot90, put, put_along_axis, take_along_axis
@pytest.mark.parametrize("layout", over((7, 13), (3, 5, 4)))
def test_rot90(layout):
    g = values(layout.shape, "int64")
    x = layout.array(g)
    for k in (-1, 0, 1, 2, 5):
        for axes in ((0, 1), (-1, 0)):
            spelling, f = both("rot90")[k % 2]
            assert_results_equal(f(x, k, axes), np.rot90(g, k, axes), f"{spelling}.rot90 k={k} axes={axes}")


def test_rot90_defaults():
    assert_results_equal(np.rot90(da.asarray(np.arange(6).reshape(2, 3))), np.rot90(np.arange(6).reshape(2, 3)),
                         "rot90 defaults")


@pytest.mark.parametrize("layout", over((13,), (7, 5)))
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
def test_put(dtype, layout):
    shape = layout.shape
    n = int(np.prod(shape))
    for mode, ind in (("raise", [0, n - 1, -2, 3, 3]), ("wrap", [n + 2, -n - 1, 7]), ("clip", [-5, n + 9, 1])):
        for spelling, f in both("put"):
            g = values(shape, dtype)
            x = layout.array(g)
            v = values((2,), dtype, seed=7)
            assert f(x, ind, v, mode=mode) is None
            np.put(g, ind, v, mode=mode)
            assert_results_equal(x, g, f"{spelling}.put mode={mode}")
    g = values(shape, dtype)
    x = layout.array(g)
    ind = np.arange(0, n, 3)
    v = values(ind.shape, dtype, seed=8)
    np.put(x, da.asarray(ind), da.asarray(v, split=0))
    np.put(g, ind, v)
    assert_results_equal(x, g, "numpy.put with DArray indices and values")


@pytest.mark.parametrize("layout", over((7, 13)))
def test_put_along_axis_and_take_along_axis(layout):
    g0 = values((7, 13), "float64")
    for axis in (0, 1):
        idx = np.argsort(g0, axis=axis, kind="stable")
        idx = idx[:3] if axis == 0 else idx[:, :3]
        for spelling, f in both("put_along_axis"):
            g = g0.copy()
            x = layout.array(g)
            f(x, da.asarray(idx, split=0), -1.0, axis=axis)
            np.put_along_axis(g, idx, -1.0, axis=axis)
            assert_results_equal(x, g, f"{spelling}.put_along_axis axis={axis}")
        g = g0.copy()
        x = layout.array(g)
        vals = values(idx.shape, "float64", seed=3)
        np.put_along_axis(x, idx, da.asarray(vals), axis=axis)  # NumPy indices, DArray values
        np.put_along_axis(g, idx, vals, axis=axis)
        assert_results_equal(x, g, f"put_along_axis NumPy indices axis={axis}")
        x = layout.array(g0)
        for spelling, f in both("take_along_axis"):
            assert_results_equal(f(x, idx, axis=axis), np.take_along_axis(g0, idx, axis=axis),
                                 f"{spelling}.take_along_axis NumPy indices axis={axis}")
            assert_results_equal(f(x, da.asarray(idx), axis=axis), np.take_along_axis(g0, idx, axis=axis),
                                 f"{spelling}.take_along_axis DArray indices axis={axis}")
    x = layout.array(g0)
    flat_idx = np.array([0, 90, 17, 5])
    assert_results_equal(np.take_along_axis(x, flat_idx, axis=None), np.take_along_axis(g0, flat_idx, axis=None),
                         "take_along_axis axis=None")
    g = g0.copy()
    np.put_along_axis(x, flat_idx, 2.5, axis=None)
    np.put_along_axis(g, flat_idx, 2.5, axis=None)
    assert_results_equal(x, g, "put_along_axis axis=None")


def test_put_along_axis_broadcast_values():
    g = values((7, 13), "float64")
    x = da.asarray(g, split=0)
    row_idx = np.array([[1], [2], [0], [4], [3], [12], [6]])  # broadcast values along the other axis
    np.put_along_axis(x, row_idx, np.arange(7.0).reshape(7, 1), axis=1)
    np.put_along_axis(g, row_idx, np.arange(7.0).reshape(7, 1), axis=1)
    assert_results_equal(x, g, "put_along_axis with broadcast values")


# ---------------------------------------------------------------- packbits / unpackbits
@pytest.mark.parametrize("layout", over((13,), (7, 13), (3, 17)))
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int64"])
def test_packbits_unpackbits(dtype, layout):
    shape = layout.shape
    g = values(shape, dtype, low=0, high=3)
    x = layout.array(g)
    for i, axis in enumerate((None, *range(len(shape)))):
        bitorder = ("big", "little")[i % 2]
        want = np.packbits(g, axis=axis, bitorder=bitorder)
        for spelling, f in both("packbits"):
            assert_results_equal(f(x, axis=axis, bitorder=bitorder), want,
                                 f"{spelling}.packbits axis={axis} {bitorder}")
        same = [c for c in named(want.shape) if c.id == layout.id]  # the packed array laid out the same way
        packed = (same[0].array(want) if same else da.asarray(want, split=0))
        for j, count in enumerate((None, 3, -2, 0, 40)):
            spelling, f = both("unpackbits")[j % 2]
            assert_results_equal(f(packed, axis=axis, count=count, bitorder=bitorder),
                                 np.unpackbits(want, axis=axis, count=count, bitorder=bitorder),
                                 f"{spelling}.unpackbits axis={axis} count={count} {bitorder}")


# ---------------------------------------------------------------- einsum with three or more operands
EINSUMS = [
    ("ij,jk,kl->il", [(7, 5), (5, 6), (6, 4)]),
    ("i,ij,j->", [(7,), (7, 5), (5,)]),
    ("ij,ik,il->jkl", [(7, 3), (7, 2), (7, 4)]),
    ("ab,bc,cd,de->ae", [(4, 7), (7, 3), (3, 5), (5, 2)]),
    ("ij,jk,k", [(3, 4), (4, 5), (5,)]),
    ("bi,bj,bk->b", [(13, 2), (13, 3), (13, 2)]),
]


@pytest.mark.parametrize("subscripts,shapes,layout", [
    pytest.param(subscripts, shapes, c, id=f"{subscripts}-{c}") for subscripts, shapes in EINSUMS
    for c in named(shapes[0])])
def test_einsum_many_operands_greedy(subscripts, shapes, layout):
    """Every layout of the first operand, optimize='greedy'."""
    for dtype in ("float64", "complex128", "int64"):
        arrays = [values(s, dtype, seed=i) for i, s in enumerate(shapes)]
        want = np.einsum(subscripts, *arrays, optimize="greedy")
        operands = [layout.array(arrays[0])] + [da.asarray(a, split=0) for a in arrays[1:]]
        for spelling, f in both("einsum"):
            got = f(subscripts, *operands, optimize="greedy")
            assert_results_equal(got, want, f"{spelling}.einsum {dtype}", rtol=1e-10)


@pytest.mark.parametrize("optimize", [False, True, "optimal"])
def test_einsum_many_operands(optimize):
    """The other optimize choices, operands split along their first axis."""
    for subscripts, shapes in EINSUMS:
        arrays = [values(s, "float64", seed=i) for i, s in enumerate(shapes)]
        want = np.einsum(subscripts, *arrays, optimize=optimize)
        operands = [da.asarray(a, split=0) for a in arrays]
        for spelling, f in both("einsum"):
            got = f(subscripts, *operands, optimize=optimize)
            assert_results_equal(got, want, f"{spelling}.einsum {subscripts} optimize={optimize}", rtol=1e-10)


def test_einsum_explicit_path():
    arrays = [values(s, "float64", seed=i) for i, s in enumerate([(7, 5), (5, 6), (6, 4)])]
    path = ["einsum_path", (1, 2), (0, 1)]
    operands = [da.asarray(a, split=0) for a in arrays]
    assert_results_equal(np.einsum("ij,jk,kl->il", *operands, optimize=path), np.einsum("ij,jk,kl->il", *arrays, optimize=path),
          "einsum with an explicit path", rtol=1e-10)


# ---------------------------------------------------------------- where(cond), unique(axis)
@pytest.mark.parametrize("layout", over((13,), (7, 13)))
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
def test_where_one_argument(dtype, layout):
    g = values(layout.shape, dtype, low=-1, high=2)
    x = layout.array(g)
    for spelling, f in both("where"):
        assert_results_equal(f(x), np.where(g), f"{spelling}.where(cond)")
        cond = da.astype(x, da.bool)
        assert_results_equal(f(cond, x, da.flip(x)), np.where(g != 0, g, np.flip(g)), f"{spelling}.where(c, x, y)")


@pytest.mark.parametrize("layout", over((13, 3)) + over((7, 4, 2), first=2))  # 2 sample sorts per call: a few 3-d
@pytest.mark.parametrize("dtype", ["int64", "float64", "bool"])
def test_unique_axis(dtype, layout):
    g = values(layout.shape, dtype, low=0, high=2)
    x = layout.array(g)
    for axis in range(-1, layout.ndim):
        flags = ((True, True, True), (False, False, False), (True, False, True))[axis % 3]
        spelling, f = both("unique")[axis % 2]
        assert_results_equal(f(x, *flags, axis=axis), np.unique(g, *flags, axis=axis),
                             f"{spelling}.unique axis={axis} flags={flags}")


UNIQUE_EDGES = {"3x0": np.zeros((3, 0)), "0x3": np.zeros((0, 3)),
                "nan-zeros": np.array([[np.nan, 1.0], [np.nan, 1.0], [-0.0, 2.0], [0.0, 2.0]])}


@pytest.mark.parametrize("case,layout", [pytest.param(k, c, id=f"{k}-{c}") for k, g in UNIQUE_EDGES.items()
                                         for c in named(g.shape)])
def test_unique_axis_edges(case, layout):
    g = UNIQUE_EDGES[case]
    x = layout.array(g)
    assert_results_equal(np.unique(x, True, True, True, axis=0), np.unique(g, True, True, True, axis=0),
                         f"unique axis=0 of {g.shape}")


# ---------------------------------------------------------------- 2-d FFTs
@pytest.mark.parametrize("layout", over((7, 13)) + over((4, 6, 5), first=5))
@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "fftn", "rfftn", "fft", "rfft", "fftshift"])
def test_fft2_family(name, layout):
    g = values(layout.shape, "float64")
    x = layout.array(g)
    for kwargs in ({}, {"axes": (0, 1)} if name not in ("fft", "rfft") else {"axis": 0},
                   {"norm": "ortho"} if name != "fftshift" else {"axes": -1}):
        want = getattr(np.fft, name)(g, **kwargs)
        assert_results_equal(getattr(np.fft, name)(x, **kwargs), want, f"numpy.fft.{name} {kwargs}", rtol=1e-9,
                             atol=1e-9)
        assert_results_equal(getattr(da.fft, name)(x, **kwargs), want, f"darray.fft.{name} {kwargs}", rtol=1e-9,
                             atol=1e-9)


@pytest.mark.parametrize("layout", over((7, 12)))
def test_inverse_2d_ffts_round_trip(layout):
    g = values((7, 12), "float64")
    x = layout.array(g)
    assert_results_equal(np.fft.ifft2(np.fft.fft2(x)), np.fft.ifft2(np.fft.fft2(g)), "ifft2(fft2)", rtol=1e-9,
                         atol=1e-9)
    assert_results_equal(np.fft.irfft2(np.fft.rfft2(x), s=g.shape), np.fft.irfft2(np.fft.rfft2(g), s=g.shape),
                         "irfft2(rfft2)", rtol=1e-9, atol=1e-9)
    assert_results_equal(da.fft.irfft2(da.fft.rfft2(x, s=(8, 12)), s=(8, 12), norm="forward"),
                         np.fft.irfft2(np.fft.rfft2(g, s=(8, 12)), s=(8, 12), norm="forward"), "irfft2 with s",
                         rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------- bad input
def _bad_rows():
    x = da.asarray(np.arange(13.0), split=0)
    m = da.asarray(np.arange(35.0).reshape(7, 5), split=0)
    c = da.asarray(np.arange(4.0) + 1j, split=0)
    u8 = da.asarray(np.arange(13, dtype=np.uint8), split=0)
    # (what, exception, function, args, kwargs, whether NumPy refuses it too)
    return [
        ("intersect1d complex", TypeError, np.intersect1d, (c, c), {}, False),
        ("union1d of strings", TypeError, da.union1d, (["a"], [2]), {}, False),
        ("partition kth out of bounds", ValueError, np.partition, (x, 13), {}, True),
        ("partition kth float", TypeError, np.partition, (x, 1.5), {}, True),
        ("partition complex", TypeError, np.partition, (c, 1), {}, False),
        ("partition bad axis", ValueError, np.partition, (m, 1), {"axis": 2}, True),
        ("argpartition bad kind", ValueError, np.argpartition, (x, 1), {"kind": "quick"}, True),
        ("convolve empty v", ValueError, np.convolve, (x, []), {}, True),
        ("convolve 2-d", ValueError, np.convolve, (m, [1.0]), {}, True),
        ("convolve bad mode", ValueError, np.convolve, (x, [1.0]), {"mode": "middle"}, True),
        ("correlate a string", ValueError, np.correlate, (x, "ab"), {}, True),
        ("rot90 same axes", ValueError, np.rot90, (m, 1, (0, 0)), {}, True),
        ("rot90 three axes", ValueError, np.rot90, (m, 1, (0, 1, 0)), {}, True),
        ("rot90 axes out of range", ValueError, np.rot90, (m, 1, (0, 2)), {}, True),
        ("put out of bounds", IndexError, np.put, (x, [13], [1.0]), {}, True),
        ("put bad mode", ValueError, np.put, (x, [1], [1.0]), {"mode": "reflect"}, True),
        ("put float indices", TypeError, np.put, (x, np.array([1.5]), [1.0]), {}, True),
        ("put_along_axis out of bounds", IndexError, np.put_along_axis, (m, np.array([[5]]), 0.0, 1), {}, True),
        ("put_along_axis ndim", ValueError, np.put_along_axis, (m, np.array([1]), 0.0, 1), {}, True),
        ("take_along_axis float indices", IndexError, np.take_along_axis, (m, np.array([[0.5]]), 1), {}, True),
        ("packbits floats", TypeError, np.packbits, (x,), {}, True),
        ("packbits bad bitorder", ValueError, np.packbits, (u8,), {"bitorder": "middle"}, True),
        ("packbits bad axis", ValueError, np.packbits, (u8,), {"axis": 1}, True),
        ("unpackbits int64", TypeError, np.unpackbits, (da.asarray(np.arange(3)),), {}, True),
        ("einsum operand count", ValueError, np.einsum, ("ij,jk,kl->il", m, m), {}, True),
        ("einsum subscripts mismatch", ValueError, np.einsum, ("ij,jk,k->i", m, m.T, x), {}, True),
        ("where one of two", ValueError, np.where, (x > 1, x), {}, True),
        ("darray.where one of two", ValueError, da.where, (x > 1, x), {}, False),
        ("unique bad axis", ValueError, np.unique, (m,), {"axis": 2}, True),
        ("unique complex axis", TypeError, np.unique, (da.asarray(np.ones((2, 2)) + 1j),), {"axis": 0}, False),
        ("fft2 bad norm", ValueError, np.fft.fft2, (m,), {"norm": "twice"}, True),
        ("rfft2 complex", TypeError, np.fft.rfft2, (da.asarray(np.ones((2, 2)) + 1j),), {}, True),
        ("fft out=", TypeError, np.fft.fft, (x,), {"out": np.zeros(13, complex)}, False),
    ]


@pytest.mark.parametrize("row", range(len(_bad_rows())))
def test_bad_input_raises_numpy_types_everywhere(row):
    what, exc, func, args, kwargs, numpy_too = _bad_rows()[row]
    text = assert_raises_everywhere(exc, func, *args, **kwargs)
    assert func.__name__ in text.split(":")[0], f"{what}: the message names another function: {text}"
    if numpy_too:  # NumPy raises the same type for the same mistake (the other rows are darray's limits)
        with pytest.raises(exc):
            func(*[to_numpy(a.gather()) if isinstance(a, DArray) else a for a in args], **kwargs)
