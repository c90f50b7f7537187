"""Message passing by global index (darray.points.gather / scatter_*) and its gradients, at every rank count.

Oracles: NumPy fancy indexing and ``np.add.at`` / ``np.maximum.at`` on the
gathered arrays (sums in global order: the same bits), and the gradients
written out by hand (gather <-> scatter_add, mean divides by the counts,
max routes to the first maximal value), plus a finite difference.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray._backend import to_numpy
from darray import points as pts
from darray import autodiff as ad
from darray.autodiff import Variable
from darray.testing import agree, assert_raises_everywhere, uneven_sizes

from _cases import COMM, P

pytestmark = pytest.mark.mpi

N, E = 13, 40
CUTS = {"rows": dict(split=0), "uneven": "uneven", "one-rank": "one-rank", "replicated": dict(split=None)}


def cut(g: np.ndarray, how: str) -> da.DArray:
    kw = CUTS[how]
    if kw == "uneven":
        kw = dict(split=0, sizes=uneven_sizes(g.shape[0], P))
    elif kw == "one-rank":
        kw = dict(split=0, sizes=[0] * (P - 1) + [g.shape[0]])
    return da.asarray(g, **kw)


def host(x) -> np.ndarray:
    return to_numpy((x.data if isinstance(x, Variable) else x).gather())


def same(got, expected) -> None:
    ok = got.shape == expected.shape and np.array_equal(got, expected)
    assert not agree(COMM, ok), f"rank {COMM.rank}: {got} != {expected}"


def draw(trailing=(2,), seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((N, *trailing)), rng.integers(0, N, E), rng.standard_normal((E, *trailing))


@pytest.mark.parametrize("xcut", list(CUTS))
@pytest.mark.parametrize("icut", ["rows", "uneven"])
@pytest.mark.parametrize("trailing", [(2,), (2, 3)])
def test_gather(xcut, icut, trailing):
    x0, idx, w0 = draw(trailing)
    x = Variable(cut(x0, xcut), requires_grad=True)
    out = pts.gather(x, cut(idx, icut))
    (out * cut(w0, icut)).sum().backward()
    expected = np.zeros_like(x0)
    np.add.at(expected, idx, w0)
    same(host(out), x0[idx])
    same(host(x.grad), expected)


def ref_scatter(v, idx, n, reduce):
    out = np.zeros((n, *v.shape[1:]))
    count = np.bincount(idx, minlength=n)
    if reduce == "max":
        out[:] = -np.inf
        np.maximum.at(out, idx, v)
        out[count == 0] = 0
    else:
        np.add.at(out, idx, v)
        if reduce == "mean":
            out /= np.maximum(count, 1).reshape((n,) + (1,) * (v.ndim - 1))
    return out, count


def ref_scatter_grad(v, idx, w, reduce, out, count):
    if reduce == "sum":
        return w[idx]
    if reduce == "mean":
        return w[idx] / count[idx].reshape((-1,) + (1,) * (v.ndim - 1))
    grad = np.zeros_like(v)
    flat_v, flat_g = v.reshape(E, -1), grad.reshape(E, -1)
    flat_o, flat_w = out.reshape(out.shape[0], -1), w.reshape(w.shape[0], -1)
    for c in range(flat_v.shape[1]):
        seen = set()
        for e in range(E):  # the first maximal value of each row gets the gradient
            if flat_v[e, c] == flat_o[idx[e], c] and idx[e] not in seen:
                seen.add(idx[e])
                flat_g[e, c] = flat_w[idx[e], c]
    return grad


SCATTERS = {"sum": pts.scatter_add, "mean": pts.scatter_mean, "max": pts.scatter_max}


@pytest.mark.parametrize("reduce", list(SCATTERS))
@pytest.mark.parametrize("icut", ["rows", "uneven", "one-rank"])
@pytest.mark.parametrize("trailing", [(2,), (2, 3)])
def test_scatter(reduce, icut, trailing):
    _, idx, v0 = draw(trailing, seed=1)
    n = N + 2  # the last rows receive nothing
    v0[3] = v0[5]  # a tie for max when idx[3] == idx[5]
    idx[3] = idx[5]
    w0 = np.random.default_rng(2).standard_normal((n, *trailing))
    v = Variable(cut(v0, icut), requires_grad=True)
    out = SCATTERS[reduce](v, cut(idx, icut), n)
    (out * cut(w0, "rows")).sum().backward()
    expected, count = ref_scatter(v0, idx, n, reduce)
    same(host(out), expected)
    grad = host(v.grad)
    reference = ref_scatter_grad(v0, idx, w0, reduce, expected, count)
    assert not agree(COMM, np.allclose(grad, reference, rtol=1e-13, atol=0))


def test_message_passing_finite_difference():
    """One gather -> tanh -> scatter_max round, its gradient against a central difference."""
    x0, idx, _ = draw((2,), seed=3)
    dst = np.random.default_rng(4).integers(0, N, E)
    w0 = np.random.default_rng(5).standard_normal((N, 2))

    def f(x):
        msg = pts.gather(x, cut(idx, "uneven"))
        return (pts.scatter_max(ad.tanh(msg), cut(dst, "uneven"), N)
                * cut(w0, "rows")).sum()

    x = Variable(cut(x0, "uneven"), requires_grad=True)
    f(x).backward()
    direction = np.random.default_rng(6).standard_normal(x0.shape)
    h = 1e-6
    plus = float(host(f(Variable(cut(x0 + h * direction, "uneven")))))
    minus = float(host(f(Variable(cut(x0 - h * direction, "uneven")))))
    analytic = float(np.sum(host(x.grad) * direction))
    assert abs((plus - minus) / (2 * h) - analytic) <= 1e-6 * max(1.0, abs(analytic))


@pytest.mark.parametrize("call, exc, match", [
    (lambda x, i: pts.gather(x, cut(i + N, "rows")), IndexError, "out of range"),
    (lambda x, i: pts.gather(x, cut(i - N, "rows")), IndexError, "out of range"),
    (lambda x, i: pts.gather(x, cut(i * 1.0, "rows")), TypeError, "integer"),
    (lambda x, i: pts.scatter_add(cut(np.zeros((E, 2)), "rows"), cut(i, "rows"), N - 1), IndexError, "out of range"),
    (lambda x, i: pts.scatter_add(cut(np.zeros((E, 2)), "rows"), cut(i, "rows"), -1), ValueError, "dim_size"),
    (lambda x, i: pts.scatter_mean(cut(np.zeros((E - 1, 2)), "rows"), cut(i, "rows"), N), ValueError, "rows"),
])
def test_bad_input(call, exc, match):
    x0, idx, _ = draw()
    idx[0] = N - 1
    assert_raises_everywhere(exc, call, cut(x0, "rows"), idx, match=match)
