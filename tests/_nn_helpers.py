"""Oracles shared by the darray.nn tests (tests/test_nn*.py).

Imported as a plain module (``from _nn_helpers import ...``): pytest's default
``prepend`` import mode puts ``tests/`` (no ``__init__.py``) on ``sys.path``
before importing a test file there, in-process and under ``mpiexec`` alike.
Every helper is collective: all ranks call it with the same arguments.
"""

from __future__ import annotations

import importlib.util

import numpy as np

import darray as da
from darray import autodiff as ad
from darray import nn
from darray._backend import to_numpy
from darray.autodiff import Variable
from darray.nn import functional as F
from darray.testing import agree, assert_equal

from _cases import COMM, P, Case, case, layouts

#: The replicated layout of a field of any shape (the reference every sharded run is compared with).
REPLICATED = case("replicated", (), "replicated", split=None)

#: Whether torch, the cross-checks' oracle, is installed (the tests import it with ``pytest.importorskip``).
HAVE_TORCH = importlib.util.find_spec("torch") is not None


def torch_params(params: list) -> list:
    """The parameters of a cross-check against torch: all where torch is installed, else the first only (its
    test skips), so that a check that cannot run costs one skipped test, not one per case and layout."""
    return params if HAVE_TORCH else params[:1]


def host(x):
    """A DArray's whole value, or a local block, as a NumPy array (any local backend)."""
    return to_numpy(x.gather() if isinstance(x, da.DArray) else x)


def field(shape=(1, 2, 13, 11), seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _balanced(n: int, parts: int) -> list[int]:
    return [len(b) for b in np.array_split(np.arange(n), parts)]


#: nn's own cuts of the first spatial axis (axis 2, ``n`` cells) at more than one rank, where a kernel, a pooling
#: window or a resampling stencil meets blocks the catalogue does not make: name -> (flags, block sizes, or None
#: where the case does not exist for ``n``).
OWN = {
    # blocks of 3 cells and the rest on the last rank: boundaries off a stride-2 pooling grid
    "misaligned2": (("uneven",), lambda n: [3] * (P - 1) + [n - 3 * (P - 1)] if n > 3 * (P - 1) else None),
    # a one-cell block, an empty one, the rest balanced ([0, n] at 2 ranks)
    "thin-empty2": (("uneven", "empty", "thin"), lambda n: [0, n] if P == 2 else [1, 0] + _balanced(n - 1, P - 2)),
    # an empty block, a long one, one-cell blocks and a short last one ([0, n] at 2 ranks)
    "empty-long2": (("uneven", "empty", "thin"),
                    lambda n: [0, n] if P == 2 else [0, n - 3] + [1] * (P - 3) + [3 - (P - 3)]),
    # an empty block, about half, one-cell blocks and the rest ([0, n] at 2 ranks)
    "empty-half2": (("uneven", "empty", "thin"),
                    lambda n: [0, n] if P == 2 else [0, n // 2] + [1] * (P - 3) + [n - n // 2 - (P - 3)]),
}


def spatial(shape, *names: str) -> list[Case]:
    """Layouts ``names`` of an ``(N, C, *spatial)`` field that exist at this rank count, in the order given.

    A name is the catalogue's (``split2``, ``replicated``, ``last2``, ``grid2x2-23``, ...: see
    :func:`_cases.catalogue`) or one of :data:`OWN` (cuts of the first spatial axis, at more than one rank).
    Where the names cut only spatial axes (as everywhere in the nn tests), a case also lays out a field of the
    same spatial shape with other N and C.
    """
    out = []
    for name in names:
        if name not in OWN:
            out += layouts(shape, name)
        elif P > 1 and (sizes := OWN[name][1](shape[2])) is not None:
            out.append(case(name, shape, *OWN[name][0], split=2, sizes={2: sizes}))
    return out


def layouts_1d_3d(shape):
    """Layouts of a 1-d or 3-d field ``(N, C, *spatial)``: first spatial axis cut, replicated, all on the last
    rank (empty blocks elsewhere), and a 2x2 grid of the first and last spatial axes (3-d)."""
    return spatial(shape, "split2", "replicated", "last2", *(("grid2x2-24",) if len(shape) == 5 else ()))


def same_everywhere(value: float) -> bool:
    values = COMM.allgather(np.asarray([value]))[:, 0]
    return bool(np.all(values == values[0]))


#: compare_grads' key -> the replicated run (loss, input gradient, parameter gradients as NumPy arrays).
_REPLICATED_GRADS: dict = {}


def compare_grads(build, x, layout, params=(), rtol=1e-10, atol=1e-13, key=None):
    """Loss and gradients (input and ``params``) on the field laid out like ``layout`` (a
    :class:`_cases.Case`) == on the replicated field.

    The input gradient comes back cut like the input; parameter gradients are
    replicated and bit-identical on every rank. ``key`` (hashable: a test's
    case, whatever fixes ``build``, ``x`` and the parameters' values) makes the
    replicated run once for all the layouts of the case (``build``'s code, which
    names the test and the line, goes with it).
    """
    def run(lay):
        for p in params:
            p.grad = None
        v = Variable(lay.array(x), requires_grad=True)
        loss = build(v)
        loss.backward()
        return float(loss.data), v.grad, [p.grad for p in params]

    ld, gd, pd = run(layout)
    key = None if key is None else (build.__code__, key)
    rep = None if key is None else _REPLICATED_GRADS.get(key)
    if rep is None:
        lr, gr, pr = run(REPLICATED)
        rep = lr, host(gr.local), [host(b.local) for b in pr]
        if key is not None:
            _REPLICATED_GRADS[key] = rep
    lr, gr, pr = rep
    assert not agree(COMM, abs(ld - lr) <= rtol * max(1.0, abs(lr))), (ld, lr)
    assert gd.layout.blocks_key == layout.array(x).layout.blocks_key
    assert_equal(gd, gr, rtol=rtol, atol=atol)
    for a, b in zip(pd, pr):
        assert_equal(a, b, rtol=rtol, atol=atol)
        block = host(a.local)
        assert same_everywhere(float(np.sum(np.abs(block) * np.arange(1, block.size + 1).reshape(a.shape))))


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
    """Losses of ``steps`` SGD steps of ``make_model()`` (parameters from ``seed``), ``x -> t`` laid out like
    ``layout``."""
    nn.init.manual_seed(seed)
    model = make_model()
    x, t = layout.array(x), layout.array(t)
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


#: (make_model, seed, x, t) -> the replicated run's losses, made once for all the layouts of a test.
_REPLICATED_LOSSES: dict = {}


def assert_trains_identically(make_model, x, t, layout, seed):
    """The SGD losses on ``layout`` == the replicated run's, which fall (``make_model`` a module-level function,
    so that the replicated run is made once for all the layouts of a test)."""
    key = (make_model, seed, x.shape, x.tobytes(), t.tobytes())
    if key not in _REPLICATED_LOSSES:
        _REPLICATED_LOSSES[key] = sgd_losses(make_model, x, t, REPLICATED, seed)
    rep = _REPLICATED_LOSSES[key]
    assert rep[-1] < rep[0], rep
    dist = sgd_losses(make_model, x, t, layout, seed)
    assert not agree(COMM, np.allclose(dist, rep, rtol=1e-10, atol=0)), (dist, rep)
