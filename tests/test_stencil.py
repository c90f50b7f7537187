"""darray.stencil against NumPy / scipy.ndimage on the global array, on every rank count.

laplacian (order 2 and 4, spacing), gradient (scalar and coordinate spacing,
edge_order 1 and 2, ``np.gradient`` dispatch), correlate / convolve (odd and
even kernels), uniform_filter, gaussian_filter (vs ``scipy.ndimage``, every
mode) and ``np.pad`` dispatch. Each function/layout is one test (layouts from
``tests/_cases.py``: uneven with empty blocks, one-cell blocks narrower than
the stencil, replicated, an input already carrying another halo, 2-d/3-d grids
at 4 ranks); modes, orders and widths are looped over inside it and named in
failure messages.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray.testing import assert_equal, assert_raises_everywhere, uneven_sizes as uneven

from _cases import P, by_ndim, layouts, values

pytestmark = pytest.mark.mpi

SHAPES = {1: (13,), 2: (9, 11), 3: (6, 7, 8)}
_EVERY = ("split0", "uneven0", "replicated", "halo0")
LAYOUTS = {1: layouts(SHAPES[1], *_EVERY, "thin0"), 2: layouts(SHAPES[2], *_EVERY, "thin1", "grid2x2"),
           3: layouts(SHAPES[3], *_EVERY, "thin2", "grid1x2x2")}
MODES = ["wrap", "reflect", "nearest", "constant"]
#: scipy.ndimage mode -> numpy.pad mode
NP_MODE = {"wrap": "wrap", "reflect": "symmetric", "nearest": "edge", "constant": "constant"}
TOL = dict(rtol=1e-10, atol=1e-12)



def np_pad(g, depth, mode, cval=0.0):
    kw = {"constant_values": cval} if mode == "constant" else {}
    return np.pad(g, depth, mode=NP_MODE[mode], **kw)


# ------------------------------------------------------------------ laplacian
SECOND = {2: [1.0, -2.0, 1.0], 4: [-1 / 12, 4 / 3, -5 / 2, 4 / 3, -1 / 12]}


def laplacian_reference(g, order, mode, spacing, cval):
    w = SECOND[order]
    d = len(w) // 2
    p = np_pad(g, d, mode, cval)
    h = (spacing,) * g.ndim if np.ndim(spacing) == 0 else spacing
    out = np.zeros_like(g)
    for axis in range(g.ndim):
        for k, wk in enumerate(w):
            key = [slice(d, d + n) for n in g.shape]
            key[axis] = slice(k, k + g.shape[axis])
            out = out + wk / h[axis] ** 2 * p[tuple(key)]
    return out


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_laplacian(ndim, layout):
    spacing = {1: 0.5, 2: (0.5, 2.0), 3: 1.0}[ndim]
    g = values(SHAPES[ndim], seed=1)
    x = layout.array(g)
    for order in (2, 4):
        for mode in MODES:
            got = da.stencil.laplacian(x, order=order, spacing=spacing, mode=mode, cval=0.75)
            want = laplacian_reference(g, order, mode, spacing, 0.75)
            assert_equal(got, want, **TOL, err_msg=f"order={order} mode={mode}")
            assert got.layout.blocks_key == x.layout.blocks_key


@pytest.mark.parametrize("layout", LAYOUTS[2], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_laplacian_dtypes(dtype, layout):
    g = values(SHAPES[2], dtype, seed=2)
    got = da.stencil.laplacian(layout.array(g), mode="reflect")
    assert got.dtype == np.dtype(dtype)
    assert_equal(got, laplacian_reference(g.astype(np.complex128 if dtype == "complex128" else np.float64), 2,
                                          "reflect", 1.0, 0.0).astype(dtype),
                 rtol=1e-5 if dtype == "float32" else 1e-10, atol=1e-5, err_msg=dtype)


# ------------------------------------------------------------------ gradient
@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_gradient(ndim, layout):
    """Scalar, per-axis and coordinate spacings; one axis, several axes; also through ``np.gradient``."""
    shape = SHAPES[ndim]
    coords = [np.cumsum(np.linspace(0.5, 1.5, n)) for n in shape]
    g = values(shape, seed=3)
    x = layout.array(g)
    cases = [((), {}), ((0.5,), {}), (tuple(coords), {}), ((coords[0],), dict(axis=0)), ((2.0,), dict(axis=-1))]
    if ndim >= 2:
        cases += [((0.5, coords[1]), dict(axis=(0, 1))), ((), dict(axis=(1, 0)))]
    for edge_order in (1, 2):
        for i, (args, kw) in enumerate(cases):
            want = np.gradient(g, *args, edge_order=edge_order, **kw)
            # every case through darray.stencil.gradient; np.gradient dispatch on alternate cases
            calls = [("stencil", da.stencil.gradient)] + ([("np", np.gradient)] if i % 2 == 0 else [])
            for how, f in calls:
                got = f(x, *args, edge_order=edge_order, **kw)
                msg = f"{how} spacing={[np.ndim(a) for a in args]} {kw} edge_order={edge_order}"
                if isinstance(want, (list, tuple)):
                    assert isinstance(got, (list, tuple)) and len(got) == len(want), msg
                    for j, (a, b) in enumerate(zip(got, want)):
                        assert_equal(a, b, **TOL, err_msg=f"{msg} axis #{j}")
                else:
                    assert_equal(got, want, **TOL, err_msg=msg)


# ------------------------------------------------------------------ scipy.ndimage
KERNELS = {1: [(4,), (5,)], 2: [(3, 3), (2, 3), (1, 4)], 3: [(2, 1, 3)]}


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_correlate_convolve(ndim, layout):
    ndimage = pytest.importorskip("scipy.ndimage")
    g = values(SHAPES[ndim], seed=5)
    x = layout.array(g)
    for mode in MODES:
        rng = np.random.default_rng(4)
        for kshape in KERNELS[ndim]:
            w = rng.standard_normal(kshape)
            w.flat[0] = 0.0  # a zero weight is skipped
            msg = f"kernel {kshape} mode={mode}"
            assert_equal(da.stencil.correlate(x, w, mode=mode, cval=0.5),
                         ndimage.correlate(g, w, mode=mode, cval=0.5), **TOL, err_msg=f"correlate {msg}")
            assert_equal(da.stencil.convolve(x, w, mode=mode, cval=-1.0),
                         ndimage.convolve(g, w, mode=mode, cval=-1.0), **TOL, err_msg=f"convolve {msg}")


@pytest.mark.parametrize("mode", MODES)
def test_correlate_zero_kernel(mode):
    x = da.asarray(values(SHAPES[2]), split=0)
    assert_equal(da.stencil.correlate(x, np.zeros((3, 3)), mode=mode), np.zeros(SHAPES[2]), err_msg="zero kernel")


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_uniform_and_gaussian_filters(ndim, layout):
    ndimage = pytest.importorskip("scipy.ndimage")
    g = values(SHAPES[ndim], seed=6)
    x = layout.array(g)
    for mode in MODES:
        for size in (3, (1, 4, 2)[:ndim] if ndim > 1 else 4):
            assert_equal(da.stencil.uniform_filter(x, size, mode=mode, cval=0.25),
                         ndimage.uniform_filter(g, size, mode=mode, cval=0.25), **TOL,
                         err_msg=f"uniform size={size} mode={mode}")
        for sigma, truncate in [(0.8, 4.0), ((0.5, 0.0, 1.0)[:ndim] if ndim > 1 else 1.2, 2.0)]:
            assert_equal(da.stencil.gaussian_filter(x, sigma, truncate=truncate, mode=mode, cval=0.25),
                         ndimage.gaussian_filter(g, sigma, truncate=truncate, mode=mode, cval=0.25), **TOL,
                         err_msg=f"gaussian sigma={sigma} mode={mode}")


@pytest.mark.parametrize("layout", LAYOUTS[2], ids=str)
def test_filters_float32(layout):
    ndimage = pytest.importorskip("scipy.ndimage")
    g = values(SHAPES[2], "float32", seed=7)
    x = layout.array(g)
    got = da.stencil.gaussian_filter(x, 0.8, mode="nearest")
    assert got.dtype == np.float32
    assert_equal(got, ndimage.gaussian_filter(g, 0.8, mode="nearest"), rtol=1e-5, atol=1e-5)
    got = da.stencil.correlate(x, np.ones((3, 2), dtype=np.float32), mode="wrap")
    assert got.dtype == np.float32
    assert_equal(got, ndimage.correlate(g, np.ones((3, 2), dtype=np.float32), mode="wrap"), rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------ np.pad
PAD_WIDTHS = {1: [2, (3, 0), ((1, 5),)], 2: [((2, 1), (0, 3)), 1, ((0, 0), (4, 4))], 3: [((1, 0), (0, 2), (3, 1))]}


PAD_MODES = ["constant", "edge", "reflect", "symmetric", "wrap"]


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_np_pad(ndim, layout):
    g = values(SHAPES[ndim], seed=8)
    x = layout.array(g)
    for mode in PAD_MODES:
        for width in PAD_WIDTHS[ndim]:
            kw = {"constant_values": 2.5} if mode == "constant" else {}
            assert_equal(np.pad(x, width, mode=mode, **kw), np.pad(g, width, mode=mode, **kw),
                         err_msg=f"width={width} mode={mode}")


@pytest.mark.parametrize("mode", PAD_MODES)
def test_np_pad_int64(mode):
    xi = da.asarray(np.arange(13), split=0, sizes=uneven(13, P))
    assert_equal(np.pad(xi, (2, 3), mode=mode), np.pad(np.arange(13), (2, 3), mode=mode), err_msg="int64")
    assert_equal(da.stencil.pad(xi, 1, mode=mode), np.pad(np.arange(13), 1, mode=mode), err_msg="stencil.pad")


@pytest.mark.parametrize("layout", layouts(SHAPES[2], "split0", "uneven0", "thin1"), ids=str)
def test_errors_raise_everywhere(layout):
    g = values(SHAPES[2])
    x = layout.array(g)
    xi = layout.array(np.arange(99).reshape(9, 11))
    assert_raises_everywhere(TypeError, da.stencil.laplacian, xi)
    assert_raises_everywhere(ValueError, da.stencil.laplacian, x, order=3)
    assert_raises_everywhere(ValueError, da.stencil.laplacian, x, mode="mirror")
    assert_raises_everywhere(ValueError, da.stencil.laplacian, x, spacing=(1.0, 2.0, 3.0))
    assert_raises_everywhere(ValueError, da.stencil.correlate, x, np.ones(3))
    assert_raises_everywhere(TypeError, da.stencil.correlate, g, np.ones((3, 3)))
    assert_raises_everywhere(ValueError, da.stencil.gradient, x, edge_order=3)
    assert_raises_everywhere(ValueError, da.stencil.gradient, x, np.arange(5.0), axis=0)
    assert_raises_everywhere(TypeError, da.stencil.gradient, x, 1.0, 2.0, 3.0)
    assert_raises_everywhere(ValueError, np.pad, x, 1, mode="median")
    assert_raises_everywhere(ValueError, np.pad, x, 12, mode="wrap")
    assert_raises_everywhere(ValueError, np.pad, x, -1)
    assert_raises_everywhere(ValueError, da.stencil.gradient, x[:2], axis=0, edge_order=2)
