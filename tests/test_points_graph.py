"""Unstructured halos (darray.points.GhostPlan) at every rank count.

The oracle is the gathered graph: each rank's extended block must be the
global node rows of its owned nodes then its ghosts, its edges those whose
``dst`` it owns (in global edge order); the exchange is reused across calls
and feature widths; the tape's adjoint satisfies <u, A v> = <A^T u, v>.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray._backend import to_numpy
from darray import points as pts
from darray.autodiff import Variable
from darray.testing import agree, assert_raises_everywhere, uneven_sizes

from _cases import COMM, P

pytestmark = pytest.mark.mpi

N, E = 23, 60
CUTS = {"rows": None, "uneven": uneven_sizes, "one-rank": lambda n, p: [0] * (p - 1) + [n]}


def cut(g: np.ndarray, how: str) -> da.DArray:
    sizes = CUTS[how]
    return da.asarray(g, split=0, **({} if sizes is None else {"sizes": sizes(g.shape[0], P)}))


def edges(seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, N, E), rng.integers(0, N, E)


def offsets(sizes):
    return np.concatenate(([0], np.cumsum(sizes)))


@pytest.mark.parametrize("ncut", list(CUTS))
@pytest.mark.parametrize("ecut", ["rows", "uneven"])
def test_plan_matches_the_gathered_graph(ncut, ecut):
    s, d = edges()
    x0 = np.random.default_rng(1).standard_normal((N, 3))
    x = cut(x0, ncut)
    plan = pts.GhostPlan(cut(s, ecut), cut(d, ecut), x)
    off = offsets(plan.sizes)
    lo, hi = off[COMM.rank], off[COMM.rank + 1]
    ids = np.concatenate([np.arange(lo, hi), plan.ghosts])
    mine = (d >= lo) & (d < hi)
    ok = (np.array_equal(ids[plan.src], s[mine]) and np.array_equal(plan.dst + lo, d[mine])
          and set(plan.ghosts.tolist()) == set(s[mine].tolist()) - set(range(lo, hi)))
    for width in (3, 1, 3):  # buffers made once per width, reused
        values = x0[:, :width] * width
        ext = plan.exchange(cut(values, ncut)).data
        ok = ok and np.array_equal(to_numpy(ext.local), values[ids])
    wide = np.arange(N * 4.0).reshape(N, 2, 2)
    ok = ok and np.array_equal(to_numpy(plan.exchange(cut(wide, ncut)).data.local), wide[ids])
    assert not agree(COMM, ok)


def test_start_wait():
    s, d = edges(2)
    x0 = np.random.default_rng(3).standard_normal((N, 2))
    plan = pts.GhostPlan(cut(s, "rows"), cut(d, "rows"), cut(x0, "uneven"))
    own = to_numpy(cut(x0, "uneven").local)
    pending = plan.start(own)
    ghosts = pending.wait()
    assert not agree(COMM, np.array_equal(ghosts, x0[plan.ghosts]))


@pytest.mark.parametrize("ncut", list(CUTS))
def test_adjoint(ncut):
    """<u, A v> = <A^T u, v>: the adjoint adds each ghost's gradient onto its owner."""
    s, d = edges(4)
    rng = np.random.default_rng(5)
    v0 = rng.standard_normal((N, 2))
    plan = pts.GhostPlan(cut(s, "uneven"), cut(d, "uneven"), cut(v0, ncut))
    u = da.asarray(rng.standard_normal((sum(plan.extended_sizes), 2)), split=0, sizes=list(plan.extended_sizes))
    v = Variable(cut(v0, ncut), requires_grad=True)
    av = plan.exchange(v)
    lhs = (av * u).sum()
    lhs.backward()
    rhs = float(np.sum(to_numpy(v.grad.gather()) * v0))
    assert abs(float(to_numpy(lhs.data.gather())) - rhs) <= 1e-12 * max(1.0, abs(rhs))


@pytest.mark.parametrize("make, exc, match", [
    (lambda s, d, x: pts.GhostPlan(cut(s + N, "rows"), cut(d, "rows"), x), IndexError, "do not exist"),
    (lambda s, d, x: pts.GhostPlan(cut(s, "rows"), cut(d - N, "rows"), x), IndexError, "do not exist"),
    (lambda s, d, x: pts.GhostPlan(cut(s * 1.0, "rows"), cut(d, "rows"), x), TypeError, "integer"),
    (lambda s, d, x: pts.GhostPlan(cut(s, "rows"), cut(d[:-1], "rows"), x), ValueError, "number of rows"),
    *([(lambda s, d, x: pts.GhostPlan(cut(s, "rows"), cut(d, "one-rank"), x), ValueError, "cut unlike")]
      if P > 1 else []),
    (lambda s, d, x: pts.GhostPlan(cut(s, "rows"), cut(d, "rows"), x).exchange(cut(np.zeros((N + 1, 1)), "rows")),
     ValueError, "number of rows"),
])
def test_bad_edges(make, exc, match):
    s, d = edges()
    x = cut(np.zeros((N, 1)), "uneven")
    assert_raises_everywhere(exc, make, s, d, x, match=match)


def plan_order(d, sizes):
    """The plan's edge order: edges grouped by the rank owning dst, in global order within a rank."""
    return np.argsort(np.searchsorted(offsets(sizes), d, side="right") - 1, kind="stable")


@pytest.mark.parametrize("ncut", list(CUTS))
@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
def test_plan_message_passing(ncut, reduce):
    s, d = edges(6)
    rng = np.random.default_rng(7)
    x0, w0 = rng.standard_normal((N, 2)), rng.standard_normal((E, 2))
    plan = pts.GhostPlan(cut(s, "uneven"), cut(d, "uneven"), cut(x0, ncut))
    order = plan_order(d, plan.sizes)
    w = plan.take_edges(cut(w0, "uneven"))
    x = Variable(cut(x0, ncut), requires_grad=True)
    at_src, at_dst = plan.gather(x, "src"), plan.gather(x, "dst")
    out = plan.scatter(at_src * w, reduce)
    (out.sum() + (at_dst * w).sum()).backward()
    ok = np.array_equal(to_numpy(w.gather()), w0[order])
    ok = ok and np.array_equal(to_numpy(at_src.data.gather()), x0[s[order]])
    ok = ok and np.array_equal(to_numpy(at_dst.data.gather()), x0[d[order]])
    msg = x0[s[order]] * w0[order]
    expected = np.zeros((N, 2))
    count = np.bincount(d, minlength=N)
    if reduce == "max":
        expected[:] = -np.inf
        np.maximum.at(expected, d[order], msg)
        expected[count == 0] = 0
    else:
        np.add.at(expected, d[order], msg)
        if reduce == "mean":
            expected /= np.maximum(count, 1)[:, None]
    ok = ok and np.allclose(to_numpy(out.data.gather()), expected, rtol=1e-14, atol=0)
    if reduce == "sum":  # d/dx of sum(scatter(x[src] * w)) + sum(x[dst] * w)
        grad = np.zeros((N, 2))
        np.add.at(grad, s, w0)
        np.add.at(grad, d, w0)
        ok = ok and np.allclose(to_numpy(x.grad.gather()), grad, rtol=1e-13, atol=1e-15)
    assert not agree(COMM, ok)


def test_plan_message_passing_bad_input():
    s, d = edges()
    x = cut(np.zeros((N, 1)), "uneven")
    plan = pts.GhostPlan(cut(s, "rows"), cut(d, "rows"), x)
    assert_raises_everywhere(ValueError, plan.gather, x, "both", match="end must be")
    assert_raises_everywhere(ValueError, plan.scatter, cut(np.zeros((E, 1)), "rows"), "min", match="unknown reduction")
    assert_raises_everywhere(ValueError, plan.scatter, cut(np.zeros((E + 1, 1)), "rows"), match="number of rows")
