"""Neighbourhood attention through halos (darray.nn._neighborhood) on every rank count.

Forward against a NumPy reference that pads the gathered field and loops
over query cells; gradients of q, k and v against the same computation on
the replicated field (within 1e-10) and against a central finite difference
of the NumPy reference along a random direction. Layouts: cut along each
spatial axis, uneven with an empty block, thin blocks (one cell, narrower
than the halo radius: multi-hop halos), a 2x2 grid at four ranks.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import product

import numpy as np
import pytest

import darray as da
from darray.autodiff import Variable
from darray.nn._neighborhood import (NeighborhoodAttention1d, NeighborhoodAttention2d, NeighborhoodAttention3d,
                                     neighborhood_attention)
from darray.nn import init
from darray.testing import agree, assert_equal

from _nn_helpers import COMM, P, host

pytestmark = pytest.mark.mpi

HEADS = 2


def ref_na(q, k, v, ksize, dil, bnds, scale, heads=HEADS):
    """Pad k and v (zeros or wrap) and loop over query cells and window offsets."""
    n, c = q.shape[:2]
    sp = q.shape[2:]
    r = [d * (kk // 2) for kk, d in zip(ksize, dil)]
    mode = ["wrap" if b == "periodic" else "constant" for b in bnds]
    kp, vp = k, v
    for i, (ri, m) in enumerate(zip(r, mode)):  # axis by axis (corners follow)
        pad = [(0, 0)] * (2 + len(sp))
        pad[2 + i] = (ri, ri)
        kp, vp = np.pad(kp, pad, mode=m), np.pad(vp, pad, mode=m)
    d, dv = c // heads, v.shape[1] // heads
    out = np.zeros((n, v.shape[1], *sp))
    offsets = list(product(*[range(-(kk // 2), kk // 2 + 1) for kk in ksize]))
    for x in np.ndindex(*sp):
        keep = [all(not (b == "masked" and not 0 <= x[i] + dil[i] * j[i] < sp[i]) for i, b in enumerate(bnds))
                for j in offsets]
        cells = [tuple(x[i] + r[i] + dil[i] * j[i] for i in range(len(sp))) for j in offsets]
        for b in range(n):
            for h in range(heads):
                qv = q[(b, slice(h * d, (h + 1) * d)) + x]
                ks = np.array([kp[(b, slice(h * d, (h + 1) * d)) + cc] for cc in cells])
                vs = np.array([vp[(b, slice(h * dv, (h + 1) * dv)) + cc] for cc in cells])
                s = np.where(keep, ks @ qv * scale, -np.inf)
                a = np.exp(s - s.max())
                out[(b, slice(h * dv, (h + 1) * dv)) + x] = (a / a.sum()) @ vs
    return out


def _layouts(sp, ndim):
    """Spatial layouts of an ``(N, C, *sp)`` field by name (the same list on every rank)."""
    out = {"cut2": dict(split=2), "cut-last": dict(split=1 + ndim)}
    if P > 1:
        n = sp[0]
        out["uneven-empty"] = dict(split=2, sizes={2: [0] + [len(b) for b in np.array_split(np.arange(n), P - 1)]})
        out["thin"] = dict(split=2, sizes={2: [1] * (P - 1) + [n - (P - 1)]})
    if P == 4:
        out["grid2x2"] = dict(split=(2, 1 + ndim), grid=(2, 2))
    return out


SHAPES = {2: (1, 2 * HEADS, 7, 6), 3: (1, 2 * HEADS, 5, 4, 5)}
CASES = [  # kernel_size, dilation, boundary
    (3, 1, "masked"), (3, 2, "periodic"), (5, 1, "zeros"), ((3, 5), (2, 1), ("periodic", "masked")),
]
CASES_3D = [(3, 1, "masked"), (3, (2, 1, 1), "periodic"), ((1, 3, 3), 1, ("zeros", "periodic", "masked"))]


def _tuple(value, n):
    return (value,) * n if isinstance(value, (int, str)) else tuple(value)


def _inputs(shape, seed=0):
    rng = np.random.default_rng(seed)
    vshape = (shape[0], 3 * HEADS, *shape[2:])
    return rng.standard_normal(shape), rng.standard_normal(shape), rng.standard_normal(vshape)


def _run(q, k, v, layout, ksize, dil, bnd, weight):
    """Loss ``sum(out * weight)`` and the gathered output and input gradients, on the field cut like ``layout``."""
    vs = [Variable(da.asarray(a, **layout), requires_grad=True) for a in (q, k, v)]
    out = neighborhood_attention(*vs, ksize, dil, bnd, num_heads=HEADS)
    loss = (out * da.asarray(weight, split=None)).sum()
    loss.backward()
    for var in vs:
        assert var.grad.layout.blocks_key == var.data.layout.blocks_key
    return float(loss.data), out, [var.grad for var in vs]


@lru_cache(maxsize=None)
def _reference(shape, case):
    """NumPy's output, the loss weights, a random direction of (q, k, v) and the loss's central difference along it."""
    ksize, dil, bnd = case
    nsp = len(shape) - 2
    q, k, v = _inputs(shape)
    kt, dt, bt = _tuple(ksize, nsp), _tuple(dil, nsp), _tuple(bnd, nsp)
    scale = 1 / math.sqrt(shape[1] // HEADS)
    ref = ref_na(q, k, v, kt, dt, bt, scale)
    weight = np.random.default_rng(1).standard_normal(ref.shape)
    rng = np.random.default_rng(2)
    dirs = [rng.standard_normal(a.shape) for a in (q, k, v)]
    eps = 1e-6

    def f(s):
        return float(np.sum(ref_na(*(a + s * e for a, e in zip((q, k, v), dirs)), kt, dt, bt, scale) * weight))

    return ref, weight, dirs, (f(eps) - f(-eps)) / (2 * eps)


def _check_case(shape, layout, case):
    ksize, dil, bnd = case
    q, k, v = _inputs(shape)
    ref, weight, dirs, fd = _reference(shape, case)
    loss, out, grads = _run(q, k, v, layout, ksize, dil, bnd, weight)
    assert_equal(out.data, ref, rtol=1e-10, atol=1e-12)
    _, _, rep = _run(q, k, v, dict(split=None), ksize, dil, bnd, weight)
    for g, gr in zip(grads, rep):
        assert_equal(g, host(gr.local), rtol=1e-10, atol=1e-12)
    an = sum(float(np.sum(host(g) * e)) for g, e in zip(grads, dirs))
    assert not agree(COMM, abs(fd - an) <= 1e-6 * max(1.0, abs(an))), (fd, an)
    assert not agree(COMM, abs(loss - float(np.sum(ref * weight))) <= 1e-10 * max(1.0, abs(loss)))


@pytest.mark.parametrize("layout", sorted(_layouts(SHAPES[2][2:], 2)))
@pytest.mark.parametrize("case", CASES, ids=str)
def test_forward_and_gradients_2d(case, layout):
    _check_case(SHAPES[2], _layouts(SHAPES[2][2:], 2)[layout], case)


@pytest.mark.parametrize("layout", sorted(_layouts(SHAPES[3][2:], 3)))
@pytest.mark.parametrize("case", CASES_3D, ids=str)
def test_forward_and_gradients_3d(case, layout):
    _check_case(SHAPES[3], _layouts(SHAPES[3][2:], 3)[layout], case)


def test_1d_and_batch_cut():
    shape = (2, 2 * HEADS, 9)
    _check_case(shape, dict(split=2), (3, 2, "masked"))
    if P > 1:
        _check_case(shape, dict(split=(0, 2), grid=(2, P // 2)) if P % 2 == 0 else dict(split=0), (5, 1, "periodic"))


def test_halo_bytes_are_one_exchange_of_k_and_v():
    """Bytes sent per rank == the ghost rows of k and of v its neighbours need (forward), and the same back."""
    n, c, cv, h, w = 1, 2 * HEADS, 3 * HEADS, 12, 5
    radius = 2  # kernel 5
    q, k, v = _inputs((n, c, h, w))
    layout = dict(split=2)
    vs = [Variable(da.asarray(a, **layout), requires_grad=True) for a in (q, k, v)]
    sizes = da.asarray(q, **layout).layout.sizes[2]
    start = sum(sizes[:COMM.rank])
    neighbours = (start > 0) + (start + sizes[COMM.rank] < h)
    rows = neighbours * radius if P > 1 else 0  # every block (>= 3 rows) serves `radius` rows to each neighbour
    expected = rows * n * w * (c + cv) * 8
    with da.tracing() as t:
        out = neighborhood_attention(*vs, 5, boundary="masked", num_heads=HEADS)
    assert not agree(COMM, _moved(t) == expected), (_moved(t), expected)
    loss = out.sum()
    with da.tracing() as t:
        loss.backward()
    assert not agree(COMM, _moved(t) == expected), (_moved(t), expected)


def _moved(trace) -> int:
    """Bytes the trace's messages carried, but the first-use agreement of a stencil's arguments (``agree``)."""
    return sum(e["nbytes"] for e in trace.events if e["kind"] == "comm" and e["op"] != "agree")


@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_layers(nsp):
    cls = {1: NeighborhoodAttention1d, 2: NeighborhoodAttention2d, 3: NeighborhoodAttention3d}[nsp]
    shape = {1: (1, 4, 9), 2: (1, 4, 7, 6), 3: (1, 4, 5, 4, 3)}[nsp]
    init.manual_seed(3)
    layer = cls(4, num_heads=2, kernel_size=3, dilation=1, boundary="periodic")
    assert sorted(layer.state_dict()) == ["proj.bias", "proj.weight", "qkv.bias", "qkv.weight"]
    x = np.random.default_rng(4).standard_normal(shape)
    wq, bq = host(layer.qkv.weight.data), host(layer.qkv.bias.data)
    wp, bp = host(layer.proj.weight.data), host(layer.proj.bias.data)
    qkv = np.moveaxis(np.moveaxis(x, 1, -1) @ wq.T + bq, -1, 1)
    att = ref_na(qkv[:, :4], qkv[:, 4:8], qkv[:, 8:], (3,) * nsp, (1,) * nsp, ("periodic",) * nsp, 2 ** -0.5)
    ref = np.moveaxis(np.moveaxis(att, 1, -1) @ wp.T + bp, -1, 1)
    grads = {}
    for name, layout in (("dist", dict(split=2)), ("rep", dict(split=None))):
        layer.zero_grad()
        xv = Variable(da.asarray(x, **layout), requires_grad=True)
        y = layer(xv)
        if name == "dist":
            assert_equal(y.data, ref, rtol=1e-10, atol=1e-12)
        (y * y).sum().backward()
        grads[name] = [host(xv.grad)] + [host(p.grad) for p in layer.parameters()]
    for a, b in zip(grads["dist"], grads["rep"]):
        assert not agree(COMM, np.allclose(a, b, rtol=1e-10, atol=1e-12))


BAD = [
    (dict(kernel_size=4), ValueError, "odd"),
    (dict(kernel_size=(3, 3, 3)), ValueError, "one entry per spatial axis"),
    (dict(kernel_size=3.0), TypeError, "int"),
    (dict(kernel_size=3, dilation=0), ValueError, "positive"),
    (dict(kernel_size=9), ValueError, "longer than the spatial axes"),
    (dict(kernel_size=3, dilation=4), ValueError, "longer than the spatial axes"),
    (dict(kernel_size=3, boundary="reflect"), ValueError, "unknown boundary"),
    (dict(kernel_size=3, num_heads=3), ValueError, "num_heads"),
]


@pytest.mark.parametrize("kwargs, exc, text", BAD, ids=str)
def test_bad_input_raises_the_same_on_every_rank(kwargs, exc, text):
    x = da.asarray(np.ones((1, 4, 7, 6)), split=2)
    with pytest.raises(exc, match=text):
        neighborhood_attention(x, x, x, **kwargs)


def test_bad_shapes():
    x = da.asarray(np.ones((1, 4, 7, 6)), split=2)
    with pytest.raises(ValueError, match="k must have q's shape"):
        neighborhood_attention(x, da.asarray(np.ones((1, 4, 7, 5)), split=2), x, 3)
    with pytest.raises(ValueError, match="v must be"):
        neighborhood_attention(x, x, da.asarray(np.ones((1, 4, 6, 6)), split=2), 3)
    with pytest.raises(TypeError, match="dtype"):
        neighborhood_attention(x, x, da.asarray(np.ones((1, 4, 7, 6), dtype=np.float32), split=2), 3)
    with pytest.raises(ValueError, match="odd"):
        NeighborhoodAttention2d(4, 2, kernel_size=2)
    with pytest.raises(ValueError, match="divisible"):
        NeighborhoodAttention2d(5, 2, kernel_size=3)
