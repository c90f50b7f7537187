"""darray.fuse replays its plans: a stencil group is planned once per signature and replayed by later calls.

The plan (layouts, halo widths, boxes, kernel) is made from replicated
metadata, so every rank plans and replays alike; a replay only gathers the
blocks of this call, exchanges halos and runs the kernel. Checked here: the
replay is used (:attr:`darray.fuse.Fused.replay`), its results equal eager
darray bitwise after values, blocks and scalars change between calls, and a
call with another layout plans again.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray._backend import to_numpy

from _cases import values
from test_fuse import FUSING

pytestmark = pytest.mark.mpi


@da.fuse
def jacobi(u, v, w):
    v[1:-1, 1:-1] = (1 - w) * u[1:-1, 1:-1] + w * 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2])


def _block(b):
    return 0.25 * (b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:])


@da.fuse
def periodic(u, v):
    da.map_overlap(_block, u, depth=1, boundary="periodic", trim=False, out=v)


@da.fuse
def laplacian(u):
    return u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]


@da.fuse
def residual(u):
    lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
    return da.sum(lap * lap)


def gathered(x):
    return to_numpy(x.gather())


def _counts(f):
    return f.replay["plans"], f.replay["replays"], f.stats["traces"]


@pytest.mark.parametrize("split", [0, 1, (0, 1)], ids=str)
def test_sweeps_replay_and_equal_eager(split):
    g = values((12, 10), key="u")
    fused = [da.asarray(g, split=split), da.zeros((12, 10), split=split)]
    eager = [da.asarray(g, split=split), da.zeros((12, 10), split=split)]
    before = _counts(jacobi)
    for step in range(5):
        w = 0.5 + 0.1 * step  # a new scalar value: the same plan
        jacobi(*fused, w)
        jacobi.__wrapped__(*eager, w)
        assert np.array_equal(gathered(fused[1]), gathered(eager[1])), step
        fused.reverse()
        eager.reverse()
        if step == 2:  # new values written eagerly between calls, then a new array of the same layout
            fused[0][3:7, 2:5] = 1.5
            eager[0][3:7, 2:5] = 1.5
            fused[0] = da.asarray(gathered(fused[0]), split=split)
    after = _counts(jacobi)
    if FUSING:
        plans, replays, traces = (b - a for a, b in zip(before, after))
        assert plans <= 1 and replays == 5 - plans and traces <= 1, (before, after)


def test_another_layout_plans_again():
    g = values((11, 9), key="u")
    f = da.fuse(laplacian.__wrapped__)
    rows, cols = da.asarray(g, split=0), da.asarray(g, split=0, halo=1)  # (another layout at any rank count)
    first = f(rows)
    assert np.array_equal(gathered(f(rows)), gathered(first))
    assert np.array_equal(gathered(first), gathered(laplacian.__wrapped__(rows)))
    if FUSING:
        assert f.replay == {"plans": 1, "replays": 1} and f.stats["traces"] == 1, (f.replay, f.stats)
    assert np.array_equal(gathered(f(cols)), gathered(laplacian.__wrapped__(cols)))
    if FUSING:
        assert f.replay == {"plans": 2, "replays": 1} and f.stats["traces"] == 2, (f.replay, f.stats)
    again = f(da.asarray(g + 1.0, split=0))  # the first layout again, new values: replayed
    assert np.array_equal(gathered(again), gathered(laplacian.__wrapped__(da.asarray(g + 1.0, split=0))))
    if FUSING:
        assert f.replay == {"plans": 2, "replays": 2}, f.replay


def test_map_overlap_swapped_replays():
    g = values((10, 8), key="u")
    fused = [da.asarray(g, split=0, halo=1, boundary="periodic"), da.zeros((10, 8), split=0, halo=1,
                                                                          boundary="periodic")]
    eager = [da.asarray(g, split=0, halo=1, boundary="periodic"), da.zeros((10, 8), split=0, halo=1,
                                                                          boundary="periodic")]
    f = da.fuse(periodic.__wrapped__)
    for _ in range(4):
        f(*fused)
        periodic.__wrapped__(*eager)
        assert np.array_equal(gathered(fused[1]), gathered(eager[1]))
        fused.reverse()
        eager.reverse()
    if FUSING:
        assert f.replay["plans"] == 1 and f.replay["replays"] == 3, f.replay


def test_reduction_replay_equals_a_fresh_plan():
    """A replayed reduction of stencil values sums as its first plan does (and as eager, within rounding)."""
    u = da.asarray(values((14, 9), key="u"), split=0)
    f = da.fuse(residual.__wrapped__)
    values_seen = []
    for k in range(3):
        u[2:4, 2:4] = float(k)
        got = float(f(u))
        fresh = float(da.fuse(residual.__wrapped__)(u))  # planned for this call only
        assert got == fresh
        assert np.isclose(got, float(residual.__wrapped__(u)), rtol=1e-12, atol=0)
        values_seen.append(got)
    assert len(set(values_seen)) == 3
    if FUSING:
        assert f.replay == {"plans": 1, "replays": 2}, f.replay


@da.fuse
def floor_div(a, b):
    return a // b  # integer floor division: computed by darray eagerly inside the graph


def test_a_plan_that_fuses_nothing_runs_the_plain_function():
    a = da.asarray(np.arange(1, 25, dtype=np.int64), split=0)
    b = da.asarray(np.full(24, 4, dtype=np.int64), split=0)
    f = da.fuse(floor_div.__wrapped__)
    for _ in range(3):
        assert np.array_equal(gathered(f(a, b)), np.arange(1, 25) // 4)
    if FUSING:  # the first call planned it and ran no kernel: the next calls run the plain function
        assert f.stats == {"traces": 1, "fused": 1, "eager": 2}, f.stats
