"""Oracles shared by the darray.nn tests (tests/test_nn*.py).

Imported as a plain module (``from _nn_helpers import ...``): pytest's default
``prepend`` import mode puts ``tests/`` (no ``__init__.py``) on ``sys.path``
before importing a test file there, in-process and under ``mpiexec`` alike.
Every helper is collective: all ranks call it with the same arguments.
"""

from __future__ import annotations

import numpy as np

import darray as da
from darray import autodiff as ad
from darray._backend import to_numpy
from darray.autodiff import Variable
from darray.nn import functional as F
from darray.testing import agree, assert_equal

COMM = da.default_communicator()
P = COMM.size


def host(x):
    """A DArray's whole value, or a local block, as a NumPy array (any local backend)."""
    return to_numpy(x.gather() if isinstance(x, da.DArray) else x)


def field(shape=(1, 2, 13, 11), seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def layouts_1d_3d(shape):
    """Layouts of a 1-d or 3-d field ``(N, C, *spatial)``: first spatial axis cut, replicated, all on the last
    rank (empty blocks elsewhere), and a 2x2 grid of the first and last spatial axes at 4 ranks (3-d)."""
    out = [dict(split=2), dict(split=None)]
    if P > 1:
        out.append(dict(split=2, sizes={2: [0] * (P - 1) + [shape[2]]}))
    if P == 4 and len(shape) == 5:
        out.append(dict(split=(2, 4), grid=(2, 2)))
    return out


def same_everywhere(value: float) -> bool:
    values = COMM.allgather(np.asarray([value]))[:, 0]
    return bool(np.all(values == values[0]))


def compare_grads(build, x, layout, params=(), rtol=1e-10, atol=1e-13):
    """Loss and gradients (input and ``params``) on the field cut like ``layout`` == on the replicated field.

    The input gradient comes back cut like the input; parameter gradients are
    replicated and bit-identical on every rank.
    """
    out = {}
    for name, kw in (("dist", layout), ("rep", dict(split=None))):
        for p in params:
            p.grad = None
        v = Variable(da.asarray(x, **kw), requires_grad=True)
        loss = build(v)
        loss.backward()
        out[name] = (float(loss.data), v.grad, [p.grad for p in params])
    (ld, gd, pd), (lr, gr, pr) = out["dist"], out["rep"]
    assert not agree(COMM, abs(ld - lr) <= rtol * max(1.0, abs(lr))), (ld, lr)
    assert gd.layout.blocks_key == da.asarray(x, **layout).layout.blocks_key
    assert_equal(gd, host(gr.local), rtol=rtol, atol=atol)
    for a, b in zip(pd, pr):
        assert_equal(a, host(b.local), rtol=rtol, atol=atol)
        block = host(a.local)
        assert same_everywhere(float(np.sum(np.abs(block) * np.arange(1, block.size + 1).reshape(a.shape))))
    return out


def fd_check(build, x, eps=1e-6, rtol=1e-6):
    """Directional central finite difference of ``build`` (replicated, local) against its gradient."""
    v = Variable(da.asarray(x, split=None), requires_grad=True)
    build(v).backward()
    d = np.random.default_rng(99).standard_normal(x.shape)
    plus = float(build(Variable(da.asarray(x + eps * d, split=None))).data)
    minus = float(build(Variable(da.asarray(x - eps * d, split=None))).data)
    fd, an = (plus - minus) / (2 * eps), float(np.sum(host(v.grad.local) * d))
    assert abs(fd - an) <= rtol * max(1.0, abs(an)) + 1e-7, (fd, an)


def sgd_losses(make_model, x, t, layout, seed, steps=3, lr=0.1):
    """Losses of ``steps`` SGD steps of ``make_model()`` (parameters from ``seed``), ``x -> t`` cut like ``layout``."""
    from darray import nn

    nn.init.manual_seed(seed)
    model = make_model()
    x, t = da.asarray(x, **layout), da.asarray(t, **layout)
    losses = []
    for _ in range(steps):
        model.zero_grad()
        loss = F.mse_loss(model(x), t)
        loss.backward()
        with ad.no_grad():
            for p in model.parameters():
                p.data = p.data - p.grad * lr
        losses.append(float(loss.data))
    return losses


def assert_trains_identically(make_model, x, t, layouts, seed):
    """The SGD losses on every layout of ``layouts`` (name -> layout) == the replicated run's, which fall."""
    rep = sgd_losses(make_model, x, t, dict(split=None), seed)
    assert rep[-1] < rep[0], rep
    for name, layout in sorted(layouts.items()):
        dist = sgd_losses(make_model, x, t, layout, seed)
        assert not agree(COMM, np.allclose(dist, rep, rtol=1e-10, atol=0)), (name, dist, rep)
