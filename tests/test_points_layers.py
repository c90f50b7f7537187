"""Message-passing layers (darray.nn.GraphConv, EdgeConv, MeshGraphNetBlock) at every rank count.

Forward against NumPy with the layers' own (gathered) parameters; gradients
of the inputs and parameters of a sharded run against the run with every row
on one rank, within 1e-10.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray._backend import to_numpy
from darray import nn
from darray import points as pts
from darray.autodiff import Variable
from darray.nn._graph import concat_features
from darray.testing import agree, assert_raises_everywhere, uneven_sizes

from _cases import COMM, P

pytestmark = pytest.mark.mpi

N, E, C = 11, 30, 3


def cut(g, how):
    sizes = {"uneven": uneven_sizes(g.shape[0], P), "one-rank": [0] * (P - 1) + [g.shape[0]]}[how]
    return da.asarray(g, split=0, sizes=sizes)


def host(x):
    return to_numpy((x.data if isinstance(x, Variable) else x).gather())


def graph(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((N, C)), rng.integers(0, N, E), rng.integers(0, N, E), rng.standard_normal((E, 2))


def lin(layer, x):
    out = x @ host(layer.weight).T
    return out + host(layer.bias) if layer.bias is not None else out


def mlp(m, x):
    return lin(m.layers[1], np.maximum(lin(m.layers[0], x), 0))


def seq(s, x):
    return lin(s[2], np.maximum(lin(s[0], x), 0))


def make(name):
    nn.init.manual_seed(7)
    if name == "GraphConv":
        return nn.GraphConv(C, 4, aggr="mean")
    if name == "EdgeConv":
        return nn.EdgeConv(nn.Sequential(nn.Linear(2 * C, 5), nn.ReLU(), nn.Linear(5, 4)))
    return nn.MeshGraphNetBlock(C, 2, 6)


def reference(name, layer, x, s, d, e):
    if name == "GraphConv":
        agg = np.zeros_like(x)
        np.add.at(agg, d, x[s])
        agg /= np.maximum(np.bincount(d, minlength=N), 1)[:, None]
        return lin(layer.lin_rel, agg) + lin(layer.lin_root, x)
    if name == "EdgeConv":
        m = seq(layer.nn, np.concatenate([x[d], x[s] - x[d]], axis=1))
        out = np.full((N, m.shape[1]), -np.inf)
        np.maximum.at(out, d, m)
        out[np.bincount(d, minlength=N) == 0] = 0
        return out
    e2 = e + mlp(layer.edge_mlp, np.concatenate([e, x[s], x[d]], axis=1))
    agg = np.zeros((N, e2.shape[1]))
    np.add.at(agg, d, e2)
    return x + mlp(layer.node_mlp, np.concatenate([x, agg], axis=1))


def run(name, how):
    x0, s, d, e0 = graph()
    layer = make(name)
    x = Variable(cut(x0, how), requires_grad=True)
    edges = (cut(s, how), cut(d, how))
    if name == "MeshGraphNetBlock":
        e = Variable(cut(e0, how), requires_grad=True)
        out, eout = layer(x, e, edges)
        loss = (out * out).sum() + (eout * eout).sum()
    else:
        e = None
        out = layer(x, edges)
        loss = (out * out).sum()
    loss.backward()
    grads = [host(x.grad)] + ([host(e.grad)] if e is not None else []) + [host(p.grad) for p in layer.parameters()]
    return layer, host(out), grads, (x0, s, d, e0)


@pytest.mark.parametrize("name", ["GraphConv", "EdgeConv", "MeshGraphNetBlock"])
def test_layer(name):
    layer, out, grads, (x0, s, d, e0) = run(name, "uneven")
    _, out1, grads1, _ = run(name, "one-rank")
    ok = np.allclose(out, reference(name, layer, x0, s, d, e0), rtol=1e-12, atol=1e-12)
    ok = ok and all(np.allclose(g, g1, rtol=1e-10, atol=1e-12) for g, g1 in zip(grads, grads1))
    ok = ok and np.allclose(out, out1, rtol=1e-12, atol=1e-14)  # BLAS may round a row by its block size
    assert not agree(COMM, ok)


@pytest.mark.parametrize("name", ["GraphConv", "EdgeConv"])
def test_layer_on_a_ghost_plan(name):
    """The same layer on a GhostPlan (persistent ghosts, local messages) as by global index."""
    x0, s, d, _ = graph(2)
    layer = make(name)
    values, grads = [], []
    for edge_index in ((cut(s, "uneven"), cut(d, "uneven")),
                       pts.GhostPlan(cut(s, "uneven"), cut(d, "uneven"), cut(x0, "uneven"))):
        x = Variable(cut(x0, "uneven"), requires_grad=True)
        out = layer(x, edge_index)
        (out * out).sum().backward()
        values.append(host(out))
        grads.append(host(x.grad))
    ok = np.allclose(values[0], values[1], rtol=1e-12, atol=1e-14) and np.allclose(grads[0], grads[1], rtol=1e-10)
    assert not agree(COMM, ok)


def test_edge_index_as_one_array():
    x0, s, d, _ = graph(1)
    layer = make("GraphConv")
    a = host(layer(cut(x0, "uneven"), (cut(s, "uneven"), cut(d, "uneven"))))
    b = host(layer(cut(x0, "uneven"), da.asarray(np.stack([s, d]), split=None)))
    assert not agree(COMM, np.array_equal(a, b))


def test_concat_features_redistributes():
    x0 = np.arange(N * 2.0).reshape(N, 2)
    y = concat_features(cut(x0, "uneven"), cut(x0 * 10, "one-rank"), da.asarray(x0, split=None))
    assert not agree(COMM, np.array_equal(host(y), np.concatenate([x0, x0 * 10, x0], axis=1)))


def test_bad_input():
    x0, s, d, _ = graph()
    assert_raises_everywhere(ValueError, nn.GraphConv, C, 2, aggr="min", match="unknown aggregation")
    assert_raises_everywhere(TypeError, make("GraphConv"), cut(x0, "uneven"), cut(s, "uneven"), match="edge_index")
    assert_raises_everywhere(ValueError, concat_features, cut(x0, "uneven"), cut(x0[1:], "one-rank"),
                             match="leading shape")
