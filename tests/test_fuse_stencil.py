"""darray.fuse stencils: shifted slices of arguments, the halo exchange started before the interior.

Fused against eager darray (the same values bitwise and the same result
layout) and NumPy on the gathered field, over the catalogue's layouts: cuts
along either axis, uneven and empty blocks, one-cell blocks narrower than the
windows' reach (multi-hop halos), 2x2 grids, a source with a halo of its own,
replicated; 1-d, 2-d and 3-d. The order of a fused stencil's steps (interior,
wait, boundary strips) is checked on every rank count.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray._backend import to_numpy
from darray.fuse import execute as fuse_execute, stencil as fuse_stencil
from darray.testing import assert_equal

from _cases import layouts, values
from test_fuse import FUSING, numpy_version

pytestmark = pytest.mark.mpi


@da.fuse
def jacobi(u):
    return 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


@da.fuse
def wave(u, v, c):
    """Two results from two fields, windows two cells wide, a Python scalar."""
    lap = u[2:-2, 1:-1] + u[:-4, 1:-1] + u[4:, 1:-1] - 3 * u[2:-2, 1:-1]
    return v[2:-2, 1:-1] + c * lap, da.where(lap > 0, lap, v[2:-2, :-2])


@da.fuse
def diffuse(u, c):
    return u[1:-1] + c * (u[2:] - 2 * u[1:-1] + u[:-2])


@da.fuse
def box3(u):
    return u[1:, 1:, 1:] - u[:-1, :-1, :-1] + u[1:, :-1, 1:] * 2


def check(f, *args, exact=True):
    """Fused ``f(*args)`` equals eager darray (bitwise unless not ``exact``: a sum's rounding) and NumPy."""
    gathered = [to_numpy(a.gather()) if isinstance(a, da.DArray) else a for a in args]
    want = numpy_version(f)(*gathered)
    eager = f.__wrapped__(*args)
    got = f(*args)
    for g, e, w in zip(*((r if isinstance(r, tuple) else (r,)) for r in (got, eager, want))):
        assert g.layout == e.layout, (g.layout, e.layout)
        assert_equal(g, to_numpy(e.gather()), rtol=0 if exact else 1e-12)
        assert_equal(g, np.asarray(w), rtol=1e-12)


LAYOUTS_2D = layouts((13, 9), "split0", "uneven0", "last0", "first-empty0", "thin0", "split1", "thin1", "halo0",
                     "grid2x2", "grid2x2-uneven", "grid2x2-10-uneven", "replicated")


@pytest.mark.parametrize("layout", LAYOUTS_2D, ids=str)
def test_jacobi_and_wave(layout):
    u = layout.array(values((13, 9), key="u"))
    v = layout.array(values((13, 9), key="v"))
    check(jacobi, u)
    check(wave, u, v, 0.3)
    check(jacobi, u.astype(da.float32))


@pytest.mark.parametrize("layout", layouts((17,), "split0", "uneven0", "thin0", "halo0", "replicated"), ids=str)
def test_1d(layout):
    u = layout.array(values((17,), key="u"))
    check(diffuse, u, 0.1)
    check(diffuse, layout.array(values((17,), "int32", key="u")), 2)


@pytest.mark.parametrize("layout", layouts((5, 6, 7), "split0", "split2", "uneven1", "grid2x2", "grid1x2x2"),
                         ids=str)
def test_3d(layout):
    check(box3, layout.array(values((5, 6, 7), key="u")))


@da.fuse
def residuals(u):
    """Reductions of stencil values over every axis: summed, maxed, averaged in the box kernels' pass."""
    lap = u[2:, 1:-1] + u[:-2, 1:-1] - 2 * u[1:-1, 1:-1]
    return da.sum(lap * lap), da.max(da.abs(u[1:-1, 2:] - u[1:-1, :-2])), da.mean(u[1:-1, 1:-1] * u[2:, 1:-1] + 4)


@da.fuse
def count_rising(u):
    return da.sum(u[1:, :] > u[:-1, :]), da.min(u[1:, 1:] - u[:-1, :-1])


def _kernel_drivers(f) -> set:
    return {key[2] for plan in f._plans.values() if plan is not None for key in plan.kernels}


@pytest.mark.parametrize("layout", LAYOUTS_2D, ids=str)
def test_reductions_of_stencil_values(layout):
    u = layout.array(values((13, 9), key="u"))
    check(residuals, u, exact=False)
    check(count_rising, layout.array(values((13, 9), "int32", key="u")))  # integers: exact, any order
    if FUSING:
        assert _kernel_drivers(residuals) == {"boxreduce"}, _kernel_drivers(residuals)
        assert _kernel_drivers(count_rising) == {"boxreduce"}


@pytest.mark.parametrize("boundary", ["periodic", "reflect", "nearest", 0.5])
def test_reduction_of_map_overlap_values(boundary):
    @da.fuse
    def energy(u):
        return da.sum(da.map_overlap(lambda b: (b[:-2, 1:-1] - b[2:, 1:-1]) ** 2 + b[1:-1, 1:-1] ** 2, u, depth=1,
                                     boundary=boundary, trim=False))

    g = values((13, 9), key="u")
    u = da.asarray(g, split=0)
    mode = {"periodic": "wrap", "reflect": "symmetric", "nearest": "edge"}.get(boundary, "constant")
    p = np.pad(g, 1, mode=mode, **({"constant_values": boundary} if mode == "constant" else {}))
    want = np.sum((p[:-2, 1:-1] - p[2:, 1:-1]) ** 2 + p[1:-1, 1:-1] ** 2)
    eager = energy.__wrapped__(u)
    assert_equal(energy(u), np.asarray(want), rtol=1e-12)
    assert_equal(eager, np.asarray(want), rtol=1e-12)
    if FUSING:
        assert _kernel_drivers(energy) == {"boxreduce"}


def test_windows_of_other_shapes_run_eagerly():
    @da.fuse
    def ragged(u):
        return u[1:, :] + u[:-1, :].sum()  # a reduction of a window: the general path

    u = da.asarray(values((13, 9), key="u"), split=0)
    check(ragged, u, exact=False)


def logged_steps(monkeypatch) -> list:
    """A log that the fused stencil steps append to: ``"box"`` per kernel launch, ``"wait"`` per exchange waited."""
    log = []
    spread, exchange = fuse_execute._spread, fuse_stencil.exchange_halos

    class Handle:
        def __init__(self, handle):
            self.handle = handle

        def wait(self):
            log.append("wait")
            return self.handle.wait()

    def logged_spread(kernel, total, *args):
        log.append("box")
        return spread(kernel, total, *args)

    monkeypatch.setattr(fuse_execute, "_spread", logged_spread)
    monkeypatch.setattr(fuse_stencil, "exchange_halos", lambda x, wait: Handle(exchange(x, wait=wait)))
    return log


def test_interior_before_the_wait(monkeypatch):
    log = logged_steps(monkeypatch)
    u = da.asarray(values((40, 9), key="u"), split=0)
    check(jacobi, u)
    if FUSING:
        assert log[:2] == ["box", "wait"], log  # the interior (every rank has one here), then the wait
        assert log.count("box") >= (2 if da.default_communicator().size > 1 else 1), log  # then the strips


# ------------------------------------------------------------------ slice assignment
@da.fuse
def sweep(u, out, w):
    out[1:-1, 1:-1] = (1 - w) * u[1:-1, 1:-1] + w * 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])


@da.fuse
def write_then_read(u, out):
    out[1:, :] = u[:-1, :] * 2
    return u[:2, :] + 1  # reads u, not the written out: fused (unless u is out: then eager)


@pytest.mark.parametrize("layout", layouts((13, 9), "split0", "uneven0", "thin0", "split1", "grid2x2-uneven",
                                           "halo0", "replicated"), ids=str)
def test_slice_assignment(layout):
    g = values((13, 9), key="u")

    def run(f, *extra, aliased=False):
        """``f`` fused and eagerly on separate copies: the same written arrays and results."""
        results = []
        for call in (f, f.__wrapped__):
            u = layout.array(g.copy())
            out = u if aliased else layout.array(np.zeros((13, 9)))
            results.append((call(u, out, *extra), to_numpy(u.gather()), to_numpy(out.gather())))
        (r1, u1, o1), (r2, u2, o2) = results
        assert np.array_equal(u1, u2) and np.array_equal(o1, o2)
        assert (r1 is None and r2 is None) or np.array_equal(to_numpy(r1.gather()), to_numpy(r2.gather()))

    before = sweep.stats["fused"], write_then_read.stats["fused"], write_then_read.stats["eager"]
    run(sweep, 0.8)
    run(sweep, 0.8, aliased=True)  # in place: the right side is computed before the write, as eagerly
    run(write_then_read)
    run(write_then_read, aliased=True)  # reads what it wrote: eagerly
    after = sweep.stats["fused"], write_then_read.stats["fused"], write_then_read.stats["eager"]
    if FUSING:
        assert tuple(b - a for a, b in zip(before, after)) == (2, 1, 1), (sweep.stats, write_then_read.stats)
