"""var and std along cut axes: NumPy's two passes, chunked sweeps, the same result on every rank.

A reduction over an axis that the grid cuts takes the global mean from an
allreduce of block sums, then allreduces each block's sum of squared
deviations from it; NumPy blocks are swept in chunks of ``_CHUNK_BYTES``.
These tests shrink the chunk so that tiny arrays take every branch of the
sweep (row chunks, one row per leaf, rows that do not fit), compare with
NumPy on the global input, and check that offsets far larger than the spread
(where ``E[x**2] - E[x]**2`` loses every digit) still resolve.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import darray as da
from darray._core import reductions
from darray.testing import agree, assert_equal, backend_dtypes, uneven_sizes as uneven

from _cases import P, layouts, values as seeded

pytestmark = pytest.mark.mpi

#: Scratch sizes in bytes: 16 holds one complex128 (every row recurses), 200 a few rows, then the default.
CHUNKS = [16, 200, reductions._CHUNK_BYTES]
DTYPES = [d for d in ("float64", "float32", "complex128", "complex64", "int32") if d in backend_dtypes()]


def values(dtype: str, shape, seed: int = 0, offset: float = 100.0) -> np.ndarray:
    """``offset`` plus a spread of 3 (an imaginary part near ``offset / 2``); integers in [-20, 20)."""
    if dtype.startswith("int"):
        return seeded(shape, dtype, seed, low=-20, high=20)
    a = offset + 3 * seeded(shape, "float64", seed)
    if dtype.startswith("complex"):
        a = a + 1j * (offset / 2 + seeded(shape, "float64", seed, key="imag"))
    return a.astype(dtype)


SHAPES = {1: (41,), 2: (9, 6), 3: (5, 7, 4)}


def cut(ndim: int) -> list:
    """``(ndim, i, layout)``: layouts that cut some axis: balanced along each axis, uneven with an empty block
    along the last, 2-d grids at 4 ranks; ``i`` (the layout's place) picks dtypes, correction and keepdims."""
    shape = SHAPES[ndim]
    grids = ("grid2x2", f"grid2x2-{ndim - 1}0") if ndim >= 2 else ()
    chosen = layouts(shape, *(f"split{a}" for a in range(ndim)), f"uneven{ndim - 1}", *grids)
    return [pytest.param(ndim, i, c, id=f"{ndim}d-{c}") for i, c in enumerate(chosen)]


def quiet(func, *args, **kwargs):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return func(*args, **kwargs)


@pytest.fixture(params=CHUNKS, ids=lambda b: f"chunk{b}")
def chunk(request, monkeypatch):
    monkeypatch.setattr(reductions, "_CHUNK_BYTES", request.param)
    return request.param


# ---------------------------------------------------------------- the sweep on its own (any rank count)
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "int64"])
def test_chunked_sweep_matches_numpy(dtype):
    """``_accumulate``: sums over axes of ``|b - m|**2`` and ``b - m``, scratch from 1 element to the whole block."""
    for shape in [(13,), (7, 5), (3, 7, 4), (2, 3, 2, 5)]:
        b = values(dtype, shape)
        ftype = np.float64 if dtype.startswith("int") else b.dtype
        for k in range(1, len(shape) + 1):
            for axes in itertools.combinations(range(len(shape)), k):
                m = np.mean(b, axis=axes, keepdims=True, dtype=ftype)
                want = np.sum(np.abs(b - m) ** 2, axis=axes, keepdims=True)
                want_d = np.sum(b - m, axis=axes, keepdims=True)
                for size in (1, 2, 3, 5, 8, 29, b.size):
                    acc = np.zeros((2, *m.shape), dtype=m.dtype)
                    reductions._accumulate(b, m, axes, acc[0].real, acc[1], np.empty(size, dtype=m.dtype))
                    tol = 1e-5 if acc.dtype == np.float32 else 1e-12
                    msg = f"{shape} {axes} buffer {size}"
                    np.testing.assert_allclose(acc[0].real, want, rtol=tol, err_msg=msg)
                    np.testing.assert_array_equal(acc[0].imag, 0, err_msg=msg)
                    np.testing.assert_allclose(acc[1], want_d, rtol=0, atol=tol * np.sum(np.abs(b - m)), err_msg=msg)


# ---------------------------------------------------------------- against NumPy
@pytest.mark.parametrize("ndim,i,layout", cut(1) + cut(2) + cut(3))
def test_cut_var_std_match_numpy(ndim, i, layout, chunk):
    """Every axis combination that reduces a cut axis, dtype, correction and keepdims."""
    for dtype in DTYPES if i < 2 else DTYPES[:1]:
        a = values(dtype, SHAPES[ndim], seed=i)
        x = layout.array(a)
        for k in range(1, ndim + 1):
            for axis in itertools.combinations(range(ndim), k):
                for func in ("var", "std"):
                    correction = (k + i) % 2
                    keepdims = bool((k + i) % 3 == 1)
                    got = quiet(getattr(da, func), x, axis=axis, correction=correction, keepdims=keepdims)
                    want = quiet(getattr(np, func), a, axis=axis, ddof=correction, keepdims=keepdims)
                    assert_equal(got, want, err_msg=f"{func}({dtype}, axis={axis}, correction={correction}, "
                                                    f"keepdims={keepdims})")


@pytest.mark.parametrize("layout", layouts((301, 257), "split0", "split1", "uneven0"), ids=str)
def test_blocks_larger_than_the_chunk(monkeypatch, layout):
    """A 64 KiB scratch: 2-d blocks of many chunks of whole rows at 1-4 ranks, reduced along either axis."""
    monkeypatch.setattr(reductions, "_CHUNK_BYTES", 1 << 16)
    a = values("float64", (301, 257), seed=1)
    x = layout.array(a)
    for axis in (None, 0, 1):
        assert_equal(da.std(x, axis=axis), np.std(a, axis=axis), err_msg=f"axis={axis}")
        assert_equal(da.var(x, axis=axis, correction=1), np.var(a, axis=axis, ddof=1), err_msg=f"{axis}")


def test_complex_blocks_larger_than_the_chunk(monkeypatch):
    monkeypatch.setattr(reductions, "_CHUNK_BYTES", 1 << 16)
    z = values("complex128", (120, 300), seed=2)
    assert_equal(da.var(da.asarray(z, split=0), axis=0), np.var(z, axis=0))


@pytest.mark.parametrize("layout", layouts((7, 5), "uneven0", "last0"), ids=str)
def test_empty_blocks(chunk, layout):
    a = values("float64", (7, 5), seed=3)
    x = layout.array(a)
    for axis in (None, 0, (0, 1)):
        for correction in (0, 1, 7, 9):  # correction >= count: NumPy's inf / nan
            assert_equal(quiet(da.var, x, axis=axis, correction=correction),
                         quiet(np.var, a, axis=axis, ddof=correction), err_msg=f"{axis} {correction}")


def test_empty_axes(chunk):
    e = np.zeros((0, 4))
    x = da.asarray(e, split=0)
    for axis in (None, 0):  # an empty reduction: NumPy's nan
        assert_equal(quiet(da.std, x, axis=axis), quiet(np.std, e, axis=axis))
    assert_equal(quiet(da.std, x, axis=1), quiet(np.std, e, axis=1))


# ---------------------------------------------------------------- numerics and agreement
@pytest.mark.skipif(P == 1, reason="one rank cuts no axis: var is numpy.var there")
@pytest.mark.parametrize("layout", layouts((1003,), "split0", "uneven0"), ids=str)
@pytest.mark.parametrize("offset", [1e9, -3e12])
def test_offset_far_above_the_spread(offset, layout, chunk):
    """offset + U(0, 1): the naive ``E[x**2] - E[x]**2`` loses every digit (the ulp of 1e18 is 128).

    The truth is the variance of ``x - offset``, an exact subtraction. (NumPy's own two passes are off by
    3e-6 at -3e12, the rounding of the mean squared; the corrected two passes cancel it.)
    """
    a = offset + np.random.default_rng(7).random(1003)
    x = layout.array(a)
    for correction in (0, 1):
        assert_equal(da.var(x, correction=correction), np.var(a - offset, ddof=correction), rtol=1e-10)
        assert_equal(da.std(x, correction=correction), np.std(a - offset, ddof=correction), rtol=1e-10)


@pytest.mark.skipif(P == 1, reason="one rank cuts no axis: var is numpy.var there")
@pytest.mark.parametrize("offset", [1e9, -3e12])
def test_offsets_and_trend_along_the_cut_axis(offset, chunk):
    """Columns at different offsets, blocks of different means (a trend along the cut axis); float32."""
    n = 1003
    rng = np.random.default_rng(7)
    rng.random(n)  # the draws of test_offset_far_above_the_spread
    shift = np.arange(6)[None, :] * offset
    b = shift + rng.random((n, 6)) + np.linspace(0, 1e3, n)[:, None]
    y = da.asarray(b, split=0, sizes={0: uneven(n, P)})
    assert_equal(da.std(y, axis=0), np.std(b - shift, axis=0), rtol=1e-10)
    assert_equal(da.var(y, axis=0, keepdims=True), np.var(b - shift, axis=0, keepdims=True), rtol=1e-10)
    # float32, offset 1e4: a mean rounded to float32 would cost 1e-4 (NumPy's axis-0 sums: 3e-4 on 4096 rows)
    f32 = np.float32(1e4) + rng.standard_normal((n, 3)).astype(np.float32)
    truth = np.var(f32.astype(np.float64), axis=0).astype(np.float32)
    z = da.asarray(f32, split=0, sizes={0: uneven(n, P)})
    got = da.var(z, axis=0)
    assert got.dtype == np.float32
    assert_equal(got, truth, rtol=2e-5)
    assert_equal(da.var(z), np.var(f32.astype(np.float64)).astype(np.float32), rtol=2e-5)


@pytest.mark.parametrize("layout", layouts((37, 5), "split0", "uneven0"), ids=str)
def test_identical_on_every_rank(chunk, comm, layout):
    """Results replicated by the reduction hold the same bits on every rank (uneven and empty blocks)."""
    a = 1e6 + np.random.default_rng(11).standard_normal((37, 5))
    x = layout.array(a)
    for func in (da.var, da.std, da.mean):
        for axis in (None, 0):
            local = np.ascontiguousarray(np.asarray(func(x, axis=axis).local), dtype=np.float64)
            bits = comm.allgather(local.reshape(-1).view(np.uint64))
            same = bool(np.all(np.asarray(bits) == np.asarray(bits)[0]))
            assert agree(comm, same) == [], f"{func.__name__} axis={axis}"
