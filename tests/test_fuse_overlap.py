"""darray.fuse: ``map_overlap`` calls inside fused functions, traced into the stencil kernel.

Each fused function calls ``da.map_overlap`` with a NumPy block function and
combines the result with elementwise operations; it is compared with the
same function run eagerly (bitwise, and the same result layout) and with a
NumPy oracle that pads the gathered array with ``numpy.pad`` (axis by axis,
the boundary's mode) and applies the block function once. Over every
boundary kind (periodic, reflect, nearest, constants, none), depths per axis,
1-d, 2-d and 3-d fields, float32/float64/int32/int64, and the catalogue's
layouts (uneven and empty blocks, one-cell blocks narrower than the depth,
2x2 grids, a source with a halo of its own, replicated). The fused calls are
checked to run the stencil path (halo exchange behind the interior); block
functions the tracer cannot follow run eagerly with eager results.
"""

from __future__ import annotations

import numpy as np
import pytest
from array_api_compat import array_namespace

import darray as da
from darray._backend import to_numpy
from darray.fuse import execute as fuse_execute
from darray.testing import assert_equal

from _cases import each, layouts, values
from test_fuse import FUSING, PLANNED
from test_fuse_stencil import logged_steps
from test_halo import _np_pad as np_pad

pytestmark = pytest.mark.mpi

BOUNDARIES = ("periodic", "reflect", "nearest", 0.5, -2, "none")


def padded(g: np.ndarray, depth: tuple, kinds: tuple) -> np.ndarray:
    """``g`` padded as map_overlap pads a block, on the global array: axis by axis, none on ``"none"`` axes."""
    widths = tuple(0 if k == "none" else w for w, k in zip(depth, kinds))
    return np_pad(g, widths, tuple("nearest" if k == "none" else k for k in kinds))  # (no cells on "none" axes)


def reference(func, arrays, depth, kinds, trim):
    """map_overlap on gathered NumPy arrays: the block function applied once to the padded global arrays."""
    ndim = arrays[0].ndim
    depth = depth if isinstance(depth, tuple) else (depth,) * ndim
    kinds = kinds if isinstance(kinds, tuple) else (kinds,) * ndim
    out = func(*(padded(g, depth, kinds) for g in arrays))
    if trim:
        widths = [0 if k == "none" else w for w, k in zip(depth, kinds)]
        out = out[tuple(slice(w, w + n) for w, n in zip(widths, arrays[0].shape))]
    return out


def fused(func, depth, boundary, trim=False, around=True):
    """A fused function calling ``map_overlap(func, *arrays, ...)``, with elementwise operations around it."""
    def f(*arrays):
        r = da.map_overlap(func, *arrays, depth=depth, boundary=boundary, trim=trim)
        return arrays[0] - r * 3 if around else r

    return da.fuse(f)


def numpy_around(func, arrays, depth, boundary, trim, around=True):
    r = reference(func, arrays, depth, boundary, trim)
    return arrays[0] - r * 3 if around else r


@pytest.fixture
def stencil_calls(monkeypatch):
    """The fused groups that ran the stencil path (the exchange behind the interior): a list, one per group."""
    calls = []
    run_stencil = fuse_execute.run_stencil

    def counted(*args, **kwargs):
        found = run_stencil(*args, **kwargs)
        calls.append(found is not None)
        return found

    monkeypatch.setattr(fuse_execute, "run_stencil", counted)
    return calls


def check(f, arrays, want, stencil_calls=None, rtol=1e-12):
    """Fused ``f(*arrays)``: eager darray's result bitwise with its layout, NumPy's ``want`` to ``rtol``; through
    the stencil path when ``stencil_calls`` is given."""
    before = f.stats["fused"], len(stencil_calls or [])
    eager = f.__wrapped__(*arrays)
    got = f(*arrays)
    assert got.layout == eager.layout, (got.layout, eager.layout)
    assert_equal(got, to_numpy(eager.gather()), rtol=0)
    assert_equal(got, want, rtol=rtol)
    if FUSING:
        assert f.stats["fused"] == before[0] + 1, f.stats
        if stencil_calls is not None:
            assert True in stencil_calls[before[1]:], stencil_calls  # (a halo source: the rest eagerly)


def lap2(b):
    return b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] - 4 * b[1:-1, 1:-1]


def wide2(b):
    """Depth (2, 1): two rows up and down, one column left and right."""
    return b[:-4, 1:-1] - b[4:, 1:-1] * 2 + b[2:-2, :-2] - b[2:-2, 2:] + b[1:-3, 1:-1]


def diffuse1(b):
    return b[2:-2] + (b[4:] - 2 * b[2:-2] + b[:-4]) + b[3:-1] * 2


def box3(b):
    return b[2:, 1:-1, 1:-1] - b[:-2, 1:-1, 1:-1] + b[1:-1, 1:-1, 2:] * 2 - b[1:-1, :-2, 1:-1]


def pointwise(b):
    return b * 2 + 1


LAYOUTS_2D = layouts((13, 9), "split0", "uneven0", "last0", "first-empty0", "thin0", "split1", "halo0", "grid2x2",
                     "grid2x2-uneven", "grid2x2-10-uneven", "replicated")
DTYPES = ("float64", "float32", "int32", "int64")


def _rtol(dtype):
    return 1e-5 if dtype == "float32" else 1e-12


@pytest.mark.parametrize("layout", LAYOUTS_2D, ids=str)
def test_2d_every_boundary_and_dtype(layout, stencil_calls):
    def one(case):
        boundary, dtype = case
        g = values((13, 9), dtype, key="u", low=-9, high=9)
        u = layout.array(g)
        if boundary == "none":  # ghost cells: edge blocks see fewer, so only trim=True and pointwise functions
            f = fused(pointwise, 1, "none", trim=True)
            check(f, [u], numpy_around(pointwise, [g], 1, "none", True), stencil_calls, _rtol(dtype))
            return
        f = fused(lap2, 1, boundary)
        check(f, [u], numpy_around(lap2, [g], 1, boundary, False), stencil_calls, _rtol(dtype))

    each([(b, d) for b in BOUNDARIES for d in DTYPES], one, name=lambda c: f"{c[0]}-{c[1]}")


@pytest.mark.parametrize("layout", LAYOUTS_2D, ids=str)
def test_depth_per_axis_and_boundary_per_axis(layout, stencil_calls):
    g = values((13, 9), key="u")
    u = layout.array(g)
    for boundary in ("periodic", ("reflect", 1.5), ("nearest", "periodic")):
        f = fused(wide2, (2, 1), boundary)
        check(f, [u], numpy_around(wide2, [g], (2, 1), boundary, False), stencil_calls)
    f = fused(lambda b: b[2:-2, :] * 3 - b[:-4, :], (2, 0), ("periodic", "none"))  # no ghosts on the "none" axis
    check(f, [u], numpy_around(lambda b: b[2:-2, :] * 3 - b[:-4, :], [g], (2, 0), ("periodic", "none"), False),
          stencil_calls)


@pytest.mark.parametrize("layout", layouts((17,), "split0", "uneven0", "first-empty0", "thin0", "halo0", "replicated"),
                         ids=str)
def test_1d(layout, stencil_calls):
    def one(case):
        boundary, dtype = case
        g = values((17,), dtype, key="u", low=-9, high=9)
        f = fused(diffuse1, 2, boundary)
        check(f, [layout.array(g)], numpy_around(diffuse1, [g], 2, boundary, False), stencil_calls, _rtol(dtype))

    each([(b, d) for b in BOUNDARIES[:-1] for d in ("float64", "int64")], one, name=lambda c: f"{c[0]}-{c[1]}")


@pytest.mark.parametrize("layout", layouts((5, 6, 7), "split0", "split2", "uneven1", "grid2x2", "grid1x2x2"), ids=str)
def test_3d(layout, stencil_calls):
    g = values((5, 6, 7), key="u")
    for boundary in ("periodic", "reflect", -1.0):
        f = fused(box3, 1, boundary)
        check(f, [layout.array(g)], numpy_around(box3, [g], 1, boundary, False), stencil_calls)


@pytest.mark.parametrize("layout", layouts((13, 9), "split0", "uneven0", "grid2x2-uneven", "replicated"), ids=str)
def test_two_arrays_out_and_in_place(layout, stencil_calls):
    g, h = values((13, 9), key="u"), values((13, 9), key="v")
    u, v = layout.array(g), layout.array(h)

    def two(a, b):
        return a[1:-1, 1:-1] * b[2:, 1:-1] - b[:-2, :-2]

    f = fused(two, 1, "nearest")
    check(f, [u, v], numpy_around(two, [g, h], 1, "nearest", False), stencil_calls)

    @da.fuse
    def into(u, out):
        da.map_overlap(lap2, u, depth=1, boundary="periodic", trim=False, out=out)

    want = reference(lap2, [g], 1, "periodic", False)
    for aliased in (False, True):  # into another array (written by the kernel), and in place
        for call in (into, into.__wrapped__):
            x = layout.array(g.copy())
            out = x if aliased else layout.array(np.zeros((13, 9)))
            assert call(x, out) is None
            assert_equal(out, want, rtol=1e-12)
    if FUSING:
        assert into.stats["fused"] == 2, into.stats


def test_reduction_of_a_map_overlap_and_untraceable_block_functions():
    g = values((13, 9), key="u")
    u = da.asarray(g, split=0)

    @da.fuse
    def total(u):  # a reduction: the windows computed as map_overlap computes them, the sum fused
        return da.sum(da.map_overlap(lap2, u, depth=1, boundary="reflect", trim=False) * 2)

    got, eager = total(u), total.__wrapped__(u)
    want = np.sum(reference(lap2, [g], 1, "reflect", False) * 2)
    assert abs(float(got) - float(eager)) <= 1e-12 * np.sum(np.abs(g)) * 20
    assert abs(float(got) - want) <= 1e-12 * np.sum(np.abs(g)) * 20
    assert total.stats["fused"] == (1 if PLANNED else 0)

    def copied(b):  # trim=True with a new array and an assignment: the tracer refuses, eager map_overlap runs
        out = array_namespace(b).zeros_like(b)
        out[1:-1, 1:-1] = lap2(b)
        return out

    def last_row(b):  # a window counted from the end: each block's own last row, not a shifted view
        return b[1:-1, 1:-1] * 2 + b[-1:, 1:-1]

    for func, trim in ((copied, True), (last_row, False), (lambda b: np.pad(b, 0)[1:-1, 1:-1], False)):
        f = fused(func, 1, "periodic", trim=trim, around=False)
        try:
            eager = to_numpy(f.__wrapped__(u).gather())
        except (ValueError, TypeError) as e:  # eager map_overlap refuses (a wrong block shape; np.pad of CuPy
            with pytest.raises(type(e)):   # blocks): so does the fused function
                f(u)
            continue
        assert_equal(f(u), eager, rtol=0)
        assert f.stats["fused"] == 0, f.stats


@pytest.mark.parametrize("layout", layouts((40, 9), "split0", "grid2x2"), ids=str)
def test_interior_before_the_wait(layout, monkeypatch):
    log = logged_steps(monkeypatch)
    g = values((40, 9), key="u")
    f = fused(lap2, 1, "periodic")
    check(f, [layout.array(g)], numpy_around(lap2, [g], 1, "periodic", False))
    if FUSING:
        assert log[:2] == ["box", "wait"], log  # the interior, then the wait, then the strips
        assert log.count("box") >= 2, log


@pytest.mark.parametrize("layout", layouts((17,), "split0", "uneven0", "thin0"), ids=str)
def test_scalar_argument_inside_the_block_function(layout, stencil_calls):
    @da.fuse
    def f(u, c):
        return da.map_overlap(lambda b: b[1:-1] * c + b[2:], u, depth=1, boundary="periodic", trim=False)

    g = values((17,), key="u")
    for c in (2.0, -0.5):  # a new value: the same plan, the value passed to the kernel
        want = reference(lambda b: b[1:-1] * c + b[2:], [g], 1, "periodic", False)
        check(f, [layout.array(g), c], want, stencil_calls)
    if FUSING:
        assert f.stats["traces"] == 1, f.stats
