"""The ``fft`` extension against ``numpy.fft``, on every rank count.

Inputs are global NumPy arrays generated identically on every rank (seeded);
each check lays them out in several ways (``tests/_cases.py``: cut along each
axis, uneven with an empty block, replicated, 2x2 grids at 4 ranks; one test
per layout, the id names it) and compares the distributed
transform with NumPy's on the global input through
:func:`darray.testing.assert_equal`, which agrees on the verdict across ranks.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray._api import fft as dfft
from darray.testing import assert_equal

from _cases import P, by_ndim, catalogue, each, layouts, param, values

pytestmark = pytest.mark.mpi

NORMS = ["backward", "ortho", "forward"]
SHAPES = {1: (36,), 2: (13, 10), 3: (6, 7, 8)}
RTOL = 1e-10


#: Each axis cut, replicated, uneven with an empty block along the last axis, 2x2 grids at 4 ranks.
LAYOUTS = {2: layouts(SHAPES[2], "split0", "split1", "replicated", "uneven1", "grid2x2", "grid2x2-10", "grid2x2-n1"),
           3: layouts(SHAPES[3], "split0", "split1", "split2", "replicated", "uneven2", "grid2x2", "grid2x2-12",
                      "grid2x2-20")}
#: The shifts: a 1-d array cut and replicated, and the n-d layouts above.
SHIFT_LAYOUTS = {1: layouts(SHAPES[1], "split0", "replicated"), **LAYOUTS}


def over(shapes, pick) -> list:
    """``(shape, layout)`` parameters over the layouts ``pick(shape)`` names, ids ``{shape}-{layout}``."""
    return [param(c, shape, prefix="x".join(map(str, shape))) for shape in shapes for c in layouts(shape, *pick(shape))]


def signal(shape, dtype="complex128", seed=0) -> np.ndarray:
    """Seeded input (complex by default)."""
    return values(shape, dtype, seed)


# ---------------------------------------------------------------- n-d complex transforms
@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_fftn_ifftn_every_layout(ndim, layout):
    """Every norm; the result and a round trip keep the input's layout, a transposed result comes back to it."""
    a = signal(SHAPES[ndim])
    x = layout.array(a)
    for norm in NORMS:
        y = dfft.fftn(x, norm=norm)
        assert_equal(y, np.fft.fftn(a, norm=norm), rtol=RTOL, atol=1e-12, err_msg=f"fftn {norm}")
        assert y.layout == x.layout
        z = dfft.ifftn(x, norm=norm)
        assert_equal(z, np.fft.ifftn(a, norm=norm), rtol=RTOL, atol=1e-12, err_msg=f"ifftn {norm}")
        assert z.layout == x.layout
    a = signal(SHAPES[ndim], seed=4)
    x = layout.array(a)
    back = dfft.ifftn(dfft.fftn(x))
    assert_equal(back, a, rtol=RTOL, atol=1e-12, err_msg="ifftn(fftn(x))")
    assert back.layout == x.layout
    # transposed out: the forward result stays in the transposed layout, the inverse lands in x's
    t = dfft.fftn(x, layout="transposed")
    assert_equal(t, np.fft.fftn(a), rtol=RTOL, atol=1e-12, err_msg="fftn transposed")
    back = dfft.ifftn(t, layout=x.layout)
    assert_equal(back, a, rtol=RTOL, atol=1e-12, err_msg="ifftn(transposed)")
    assert back.layout == x.layout


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_fftn_axes_subsets(ndim, layout):
    a = signal(SHAPES[ndim], seed=1)
    subsets = [(0,), (-1,), (1, 0)] if ndim == 2 else [(0,), (1,), (2,), (0, 2), (2, 1), (-1, 0, 1), ()]
    x = layout.array(a)
    for axes in subsets:
        assert_equal(dfft.fftn(x, axes=axes), np.fft.fftn(a, axes=axes), rtol=RTOL, atol=1e-12,
                     err_msg=f"fftn axes={axes}")
        assert_equal(dfft.ifftn(x, axes=axes, norm="ortho"), np.fft.ifftn(a, axes=axes, norm="ortho"),
                     rtol=RTOL, atol=1e-12, err_msg=f"ifftn axes={axes}")


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_fft_ifft_each_axis(ndim, layout):
    a = signal(SHAPES[ndim], seed=2)
    x = layout.array(a)
    for axis in range(-ndim, ndim):
        for norm in NORMS:
            assert_equal(dfft.fft(x, axis=axis, norm=norm), np.fft.fft(a, axis=axis, norm=norm), rtol=RTOL,
                         atol=1e-12, err_msg=f"fft axis={axis} {norm}")
        y = dfft.ifft(x, axis=axis)
        assert_equal(y, np.fft.ifft(a, axis=axis), rtol=RTOL, atol=1e-12, err_msg=f"ifft axis={axis}")
        assert y.layout == x.layout


@pytest.mark.parametrize("layout", LAYOUTS[2], ids=str)
def test_n_and_s_pad_and_crop_2d(layout):
    a = signal(SHAPES[2], seed=3)
    x = layout.array(a)
    for axis in (0, 1):
        for n in (1, 5, 13, 20):
            assert_equal(dfft.fft(x, n=n, axis=axis), np.fft.fft(a, n=n, axis=axis), rtol=RTOL, atol=1e-12,
                         err_msg=f"fft n={n} axis={axis}")
        assert_equal(dfft.ifft(x, n=7, axis=axis), np.fft.ifft(a, n=7, axis=axis), rtol=RTOL, atol=1e-12)
    for s in [(4, 17), (20, 3), (-1, 6)]:
        want = np.fft.fftn(a, s=tuple(n if n != -1 else a.shape[0] for n in s), axes=(0, 1))
        assert_equal(dfft.fftn(x, s=s), want, rtol=RTOL, atol=1e-12, err_msg=f"fftn s={s}")
    assert_equal(dfft.ifftn(x, s=(9,)), np.fft.ifftn(a, s=(9,), axes=(1,)), rtol=RTOL, atol=1e-12)


@pytest.mark.parametrize("layout", LAYOUTS[3], ids=str)
def test_n_and_s_pad_and_crop_3d(layout):
    a = signal(SHAPES[3], seed=3)
    x = layout.array(a)
    assert_equal(dfft.fftn(x, s=(3, 9), axes=(2, 0)), np.fft.fftn(a, s=(3, 9), axes=(2, 0)), rtol=RTOL,
                 atol=1e-12, err_msg="fftn 3-d s")
    y = dfft.ifftn(x, s=(11, 2, 5), norm="forward")
    assert_equal(y, np.fft.ifftn(a, s=(11, 2, 5), axes=(0, 1, 2), norm="forward"), rtol=RTOL, atol=1e-12)
    assert y.layout.split == x.layout.split and y.layout.dims == x.layout.dims


def test_halo_input_keeps_its_layout():
    a = signal(SHAPES[2], seed=5)
    x = da.asarray(a, split=0, halo=1)
    y = dfft.fftn(x)
    assert_equal(y, np.fft.fftn(a), rtol=RTOL, atol=1e-12)
    assert y.layout == x.layout
    assert_equal(dfft.fft(x, axis=0, n=20), np.fft.fft(a, axis=0, n=20), rtol=RTOL, atol=1e-12)


# ---------------------------------------------------------------- dtypes
@pytest.mark.parametrize("layout", LAYOUTS[2], ids=str)
def test_complex64(layout):
    a = signal(SHAPES[2], dtype="complex64", seed=6)
    x = layout.array(a)
    y = dfft.fftn(x)
    assert y.dtype == np.complex64
    assert_equal(y, np.fft.fftn(a.astype(np.complex128)).astype(np.complex64), rtol=1e-4, atol=1e-4)
    assert dfft.ifftn(y).dtype == np.complex64
    assert dfft.fft(x, axis=0).dtype == np.complex64


def test_real_and_integer_dtypes():
    r = signal(SHAPES[2], dtype="float32", seed=6)
    x = da.asarray(r, split=0)
    assert dfft.fftn(x).dtype == np.complex64
    assert dfft.rfftn(x).dtype == np.complex64
    assert dfft.irfftn(dfft.rfftn(x)).dtype == np.float32
    assert dfft.fft(da.asarray(r.astype(np.float64), split=1)).dtype == np.complex128
    ints = da.asarray(np.arange(130).reshape(13, 10), split=0)
    assert_equal(dfft.fftn(ints), np.fft.fftn(np.arange(130).reshape(13, 10)), rtol=RTOL, atol=1e-9)


# ---------------------------------------------------------------- real transforms
#: Each axis cut, replicated, a 2x2 grid at 4 ranks (of the last two axes' ends for 3-d).
RFFTN_LAYOUTS = over([(13, 10), (13, 9), (6, 7, 8), (6, 8, 7)], lambda shape: (
    *(f"split{ax}" for ax in range(len(shape))), "replicated", "grid2x2" if len(shape) == 2 else "grid2x2-02"))


@pytest.mark.parametrize("shape,layout", RFFTN_LAYOUTS)
def test_rfftn_irfftn(shape, layout):
    a = signal(shape, dtype="float64", seed=7)
    ndim = len(shape)
    x = layout.array(a)
    for norm in NORMS:
        y = dfft.rfftn(x, norm=norm)
        want = np.fft.rfftn(a, norm=norm)
        assert_equal(y, want, rtol=RTOL, atol=1e-12, err_msg=f"rfftn {norm}")
        assert y.layout.split == x.layout.split and y.layout.dims == x.layout.dims
        back = dfft.irfftn(y, s=shape, norm=norm)
        assert_equal(back, a, rtol=RTOL, atol=1e-12, err_msg=f"irfftn(rfftn) {norm}")
        assert back.layout == x.layout
        assert_equal(dfft.irfftn(y, norm=norm), np.fft.irfftn(want, norm=norm), rtol=RTOL, atol=1e-12)
    axes = (0, -1) if ndim == 2 else (2, 0)
    assert_equal(dfft.rfftn(x, axes=axes, s=(5, 6)), np.fft.rfftn(a, axes=axes, s=(5, 6)), rtol=RTOL,
                 atol=1e-12, err_msg="rfftn s axes")
    c = signal(shape, seed=8)
    xc = layout.array(c)
    assert_equal(dfft.irfftn(xc, axes=axes, s=(7, 5)), np.fft.irfftn(c, axes=axes, s=(7, 5)), rtol=RTOL,
                 atol=1e-12, err_msg="irfftn s axes")


@pytest.mark.parametrize("layout", LAYOUTS[2], ids=str)
def test_rfft_irfft_hfft_ihfft(layout):
    a = signal(SHAPES[2], dtype="float64", seed=9)
    c = signal(SHAPES[2], seed=9)
    x, xc = layout.array(a), layout.array(c)
    for axis in (0, 1):
        for n in (None, 8, 9, 15):
            assert_equal(dfft.rfft(x, n=n, axis=axis), np.fft.rfft(a, n=n, axis=axis), rtol=RTOL, atol=1e-12,
                         err_msg=f"rfft n={n} axis={axis}")
            assert_equal(dfft.irfft(xc, n=n, axis=axis), np.fft.irfft(c, n=n, axis=axis), rtol=RTOL,
                         atol=1e-12, err_msg=f"irfft n={n} axis={axis}")
            assert_equal(dfft.hfft(xc, n=n, axis=axis, norm="ortho"),
                         np.fft.hfft(c, n=n, axis=axis, norm="ortho"), rtol=RTOL, atol=1e-12,
                         err_msg=f"hfft n={n} axis={axis}")
            assert_equal(dfft.ihfft(x, n=n, axis=axis), np.fft.ihfft(a, n=n, axis=axis), rtol=RTOL,
                         atol=1e-12, err_msg=f"ihfft n={n} axis={axis}")


# ---------------------------------------------------------------- 1-d arrays
@pytest.mark.parametrize("shape,layout", over([(36,), (64,), (13,), (97,), (50,), (1,)], lambda shape: (
    "split0", "replicated", *(["uneven0"] if shape[0] >= P else []))))
def test_one_dimensional(shape, layout):
    """Cut 1-d arrays: four-step where n factors (36, 64, 50), replication otherwise (13, 97, 1)."""
    n, = shape
    a = signal(shape, seed=10)
    r = signal(shape, dtype="float64", seed=10)
    x = layout.array(a)
    for norm in NORMS:
        y = dfft.fft(x, norm=norm)
        assert_equal(y, np.fft.fft(a, norm=norm), rtol=RTOL, atol=1e-12, err_msg=f"fft {norm}")
        assert y.layout == x.layout
        assert_equal(dfft.ifftn(x, norm=norm), np.fft.ifftn(a, norm=norm), rtol=RTOL, atol=1e-12)
    assert_equal(dfft.fft(x, n=2 * n + 4), np.fft.fft(a, n=2 * n + 4), rtol=RTOL, atol=1e-12)
    assert_equal(dfft.ifft(x, n=max(1, n - 3)), np.fft.ifft(a, n=max(1, n - 3)), rtol=RTOL, atol=1e-12)
    assert_equal(dfft.ifft(dfft.fft(x)), a, rtol=RTOL, atol=1e-12)
    xr = layout.array(r)
    assert_equal(dfft.rfft(xr), np.fft.rfft(r), rtol=RTOL, atol=1e-12)
    if n > 1:
        assert_equal(dfft.irfft(dfft.rfft(xr), n=n), r, rtol=RTOL, atol=1e-12)


def test_one_dimensional_gather_limit(monkeypatch):
    monkeypatch.setattr(dfft, "GATHER_LIMIT", 40)
    small = da.asarray(signal((37,), seed=11), split=0)  # 37 is prime: replication, allowed
    assert_equal(dfft.fft(small), np.fft.fft(signal((37,), seed=11)), rtol=RTOL, atol=1e-12)
    big = da.asarray(signal((41,), seed=11), split=0)
    if P > 1:
        with pytest.raises(ValueError, match="^fft: a distributed 1-d transform of this length needs a replicated"):
            dfft.fft(big)
        with pytest.raises(ValueError, match="^rfft: a distributed 1-d transform"):
            dfft.rfft(da.asarray(np.ones(41), split=0))
        with pytest.raises(ValueError, match="^fftn: a distributed 1-d transform"):
            dfft.fftn(small, s=(47,))  # 47 is prime
    else:  # one rank: nothing is cut, no replication needed
        assert_equal(dfft.fft(big), np.fft.fft(signal((41,), seed=11)), rtol=RTOL, atol=1e-12)
    sq = signal((64,), seed=12)  # 64 = 8 * 8: four-step, no limit
    assert_equal(dfft.fft(da.asarray(sq, split=0)), np.fft.fft(sq), rtol=RTOL, atol=1e-12)


# ---------------------------------------------------------------- frequencies and shifts
@pytest.mark.parametrize("name", ["split0", "replicated", "uneven0"])
def test_fftfreq_rfftfreq(name):
    """fftfreq(n) laid out as the catalogue's case ``name`` of n cells, rfftfreq(n) as that of its n // 2 + 1 cells
    (uneven only where every rank can hold a cell of the latter)."""

    def check(n):
        kw, rkw = catalogue((n,))[name].kw, catalogue((n // 2 + 1,))[name].kw
        for d in (1.0, 0.1, 3):
            f = dfft.fftfreq(n, d=d, **kw)
            assert_equal(f, np.fft.fftfreq(n, d=d), rtol=1e-15, err_msg=f"fftfreq d={d}")
            assert_equal(dfft.rfftfreq(n, d=d, **rkw), np.fft.rfftfreq(n, d=d), rtol=1e-15, err_msg=f"rfftfreq d={d}")
        f32 = dfft.fftfreq(n, dtype=da.float32, **kw)
        assert_equal(f32, np.fft.fftfreq(n).astype(np.float32))
        assert dfft.rfftfreq(n, dtype=da.float32, **rkw).dtype == np.float32
        if name == "split0":  # cut even where a rank holds no cell (n < P)
            assert f.layout.split == ((0,) if P > 1 else (None,))

    each([n for n in (1, 2, 7, 10, 33) if name != "uneven0" or n // 2 + 1 >= P], check, name=lambda n: f"n={n}")


@pytest.mark.parametrize("ndim,layout", by_ndim(SHIFT_LAYOUTS))
def test_fftshift_ifftshift(ndim, layout):
    a = signal(SHAPES[ndim], seed=13)
    x = layout.array(a)
    for axes in [None, 0, -1, (0, ndim - 1)]:
        assert_equal(dfft.fftshift(x, axes=axes), np.fft.fftshift(a, axes=axes), err_msg=f"fftshift {axes}")
        assert_equal(dfft.ifftshift(x, axes=axes), np.fft.ifftshift(a, axes=axes), err_msg=f"ifftshift {axes}")
    assert_equal(dfft.ifftshift(dfft.fftshift(x)), a)


def test_fftshift_of_fftfreq():
    f = dfft.fftfreq(11, split=0)
    assert_equal(dfft.fftshift(f), np.fft.fftshift(np.fft.fftfreq(11)), rtol=1e-15)


def test_array_api_strict_backend():
    xp = pytest.importorskip("array_api_strict")
    a = signal(SHAPES[2], seed=14)
    x = da.asarray(xp.asarray(a), split=0)
    y = dfft.fftn(x)
    assert_equal(y, np.fft.fftn(a), rtol=RTOL, atol=1e-12)
    r = da.asarray(xp.asarray(a.real), split=1)
    assert_equal(dfft.irfftn(dfft.rfftn(r), s=SHAPES[2]), a.real, rtol=RTOL, atol=1e-12)


# ---------------------------------------------------------------- bad input (same error on every rank)
def test_bad_input():
    x = da.asarray(signal(SHAPES[2], seed=15), split=0)
    r = da.asarray(signal(SHAPES[2], dtype="float64", seed=15), split=1)
    with pytest.raises(IndexError, match="^fft: axis out of bounds"):
        dfft.fft(x, axis=2)
    with pytest.raises(ValueError, match="^fftn: axis out of bounds"):
        dfft.fftn(x, axes=(0, -3))
    with pytest.raises(ValueError, match="^ifftn: repeated axis"):
        dfft.ifftn(x, axes=(1, 1))
    with pytest.raises(ValueError, match="^fftn: s and axes must have the same length"):
        dfft.fftn(x, s=(3, 4), axes=(0,))
    with pytest.raises(ValueError, match="^fftn: s has more entries"):
        dfft.fftn(x, s=(3, 4, 5))
    with pytest.raises(ValueError, match="^fft: invalid norm"):
        dfft.fft(x, norm="bogus")
    with pytest.raises(ValueError, match="^rfftn: invalid norm"):
        dfft.rfftn(r, norm="Ortho")
    with pytest.raises(ValueError, match="^fft: invalid number of data points"):
        dfft.fft(x, n=0)
    with pytest.raises(ValueError, match="^irfft: invalid number of data points"):
        dfft.irfft(da.asarray(np.ones((4, 1), complex), split=0))
    with pytest.raises(TypeError, match="^fft: n must be an integer"):
        dfft.fft(x, n=2.5)
    with pytest.raises(TypeError, match="^rfft: input must be real"):
        dfft.rfft(x)
    with pytest.raises(TypeError, match="fftn: expected a DArray or array-like"):
        dfft.fftn(object())  # (array-likes are taken, as numpy.fft takes them)
    with pytest.raises(ValueError, match="^irfftn: needs at least one axis"):
        dfft.irfftn(x, axes=())
    with pytest.raises(ValueError, match="^fftn: layout does not fit the result"):
        dfft.fftn(x, s=(4, 4), layout=x.layout)
    with pytest.raises(TypeError, match="^fftn: layout must be"):
        dfft.fftn(x, layout="input")
    with pytest.raises(ValueError, match="^fftfreq: n must be positive"):
        dfft.fftfreq(0)
    with pytest.raises(ValueError, match="^rfftfreq: d must be a non-zero real number"):
        dfft.rfftfreq(4, d=0)
    with pytest.raises(ValueError, match="^fftfreq: dtype must be a real floating dtype"):
        dfft.fftfreq(4, dtype=da.int64)
    with pytest.raises(IndexError, match="^fftshift: axis out of bounds"):
        dfft.fftshift(x, axes=(5,))
    # every rank is still in step: a collective after the errors completes
    assert_equal(dfft.fftn(x), np.fft.fftn(signal(SHAPES[2], seed=15)), rtol=RTOL, atol=1e-12)


def test_namespace():
    """``darray.fft`` is this module (wired in darray/__init__.py) and lists the standard's functions."""
    names = {"fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq",
             "rfftfreq", "fftshift", "ifftshift"}
    assert names <= set(dfft.__all__)
    assert da.fft is dfft
