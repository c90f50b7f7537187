"""darray.optim: updates against NumPy transcriptions of torch.optim, schedules, checkpoints; every rank count."""

from __future__ import annotations

import math
import os
import tempfile

import numpy as np
import pytest

import darray as da
from darray import autodiff as ad
from darray import nn, optim
from darray._backend import to_numpy
from darray.nn import functional as F
from darray.testing import agree, assert_equal


def host(x):
    """A DArray's whole value, or a local block, as a NumPy array (any local backend)."""
    return to_numpy(x.gather() if isinstance(x, da.DArray) else x)


pytestmark = pytest.mark.mpi

COMM = da.default_communicator()
P = COMM.size


def _problem(seed=0):
    """A quadratic-ish loss of two replicated parameters against sharded data; returns (params, loss_fn)."""
    r = np.random.default_rng(seed)
    w0, b0 = r.standard_normal((3, 4)), r.standard_normal(3)
    x = da.asarray(r.standard_normal((8, 4)), split=0)
    t = da.asarray(r.standard_normal((8, 3)), split=0)
    w, b = nn.Parameter(da.asarray(w0, split=None)), nn.Parameter(da.asarray(b0, split=None))

    def loss():
        return F.mse_loss(F.linear(x, w, b), t)

    return (w, b), loss, (w0, b0)


def _numpy_grads(params):
    return [host(p.grad).copy() for p in params]


def _run(opt_factory, steps=4):
    params, loss, _ = _problem()
    opt = opt_factory(params)
    history = []
    for _ in range(steps):
        opt.zero_grad()
        loss().backward()
        history.append(([host(p.data).copy() for p in params], _numpy_grads(params)))
        opt.step()
    return params, history


def _replay(history, update):
    """Apply a NumPy transcription of the update to the recorded gradients; compare each step's params."""
    state: dict = {}
    current = [h.copy() for h in history[0][0]]
    for step, (before, grads) in enumerate(history):
        for b, c in zip(before, current):
            np.testing.assert_allclose(b, c, rtol=1e-12, atol=1e-14)
        current = [update(i, c, g, state.setdefault(i, {}), step + 1) for i, (c, g) in enumerate(zip(current, grads))]
    return current


@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_momentum_weight_decay(nesterov):
    lr, mu, wd = 0.1, 0.9, 0.01
    params, history = _run(lambda ps: optim.SGD(ps, lr=lr, momentum=mu, weight_decay=wd, nesterov=nesterov))

    def update(i, p, g, s, t):
        g = g + wd * p
        s["buf"] = g.copy() if "buf" not in s else mu * s["buf"] + g
        g = g + mu * s["buf"] if nesterov else s["buf"]
        return p - lr * g

    final = _replay(history, update)
    for p, want in zip(params, final):
        assert_equal(p.data, want, rtol=1e-12)


@pytest.mark.parametrize("kind", ["Adam", "AdamW"])
def test_adam_and_adamw(kind):
    lr, b1, b2, eps, wd = 0.05, 0.9, 0.99, 1e-8, 0.1
    params, history = _run(lambda ps: getattr(optim, kind)(ps, lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd))

    def update(i, p, g, s, t):
        if kind == "AdamW":
            p = p * (1 - lr * wd)
        else:
            g = g + wd * p
        s["m"] = (1 - b1) * g if "m" not in s else b1 * s["m"] + (1 - b1) * g
        s["v"] = (1 - b2) * g * g if "v" not in s else b2 * s["v"] + (1 - b2) * g * g
        mhat, vhat = s["m"] / (1 - b1 ** t), s["v"] / (1 - b2 ** t)
        return p - lr * mhat / (np.sqrt(vhat) + eps)

    final = _replay(history, update)
    for p, want in zip(params, final):
        assert_equal(p.data, want, rtol=1e-10)


def test_training_reduces_the_loss_and_params_stay_identical_on_every_rank():
    params, loss, _ = _problem(1)
    opt = optim.Adam(params, lr=0.05)
    first = float(loss().data)
    for _ in range(20):
        opt.zero_grad()
        loss().backward()
        opt.step()
    assert float(loss().data) < 0.8 * first
    for p in params:
        blocks = COMM.allgather(host(p.data.local))
        assert not agree(COMM, all(np.array_equal(blocks[0], b) for b in blocks))


def test_schedulers():
    (w, b), _, _ = _problem()
    opt = optim.SGD([w, b], lr=1.0)
    sched = optim.StepLR(opt, step_size=3, gamma=0.5)
    lrs = []
    for _ in range(7):
        lrs.append(sched.get_last_lr()[0])
        sched.step()
    assert lrs == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25]
    opt = optim.SGD([w, b], lr=0.1)
    sched = optim.CosineAnnealingLR(opt, T_max=4, eta_min=0.01)
    lrs = []
    for _ in range(5):
        lrs.append(opt.param_groups[0]["lr"])
        sched.step()
    want = [0.01 + 0.09 * (1 + math.cos(math.pi * e / 4)) / 2 for e in range(5)]
    np.testing.assert_allclose(lrs, want, rtol=1e-15)


def _shared_path(name: str) -> str:
    """A path chosen on rank 0 and broadcast (every rank must open the same file)."""
    buf = np.zeros(1024, dtype=np.uint8)
    if COMM.rank == 0:
        path = os.path.join(tempfile.mkdtemp(prefix="darray-optim-"), name).encode()
        buf[:len(path)] = np.frombuffer(path, dtype=np.uint8)
    buf = COMM.bcast(buf, 0)
    return bytes(buf[buf != 0]).decode()


def test_checkpoint_roundtrip_without_pickle():
    nn.init.manual_seed(3)
    model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU(), nn.Conv2d(2, 1, 1))
    opt = optim.AdamW(model.parameters(), lr=0.01)
    sched = optim.StepLR(opt, step_size=1, gamma=0.9)
    x = da.asarray(np.random.default_rng(4).standard_normal((1, 1, 13, 11)), split=2)

    def step(m, o, s):
        o.zero_grad()
        loss = ad.mean(m(x) ** 2)
        loss.backward()
        o.step()
        s.step()
        return float(loss.data)

    for _ in range(2):
        step(model, opt, sched)
    path = _shared_path("ckpt.npz")
    optim.save_checkpoint(path, model, opt, sched, epoch=2)
    with np.load(path, allow_pickle=False) as f:
        assert "model/0.weight" in f.files and "model/1.running_var" in f.files
    expected = [step(model, opt, sched) for _ in range(2)]

    nn.init.manual_seed(99)  # different initial values: everything must come from the file
    model2 = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU(), nn.Conv2d(2, 1, 1))
    opt2 = optim.AdamW(model2.parameters(), lr=0.5)
    sched2 = optim.StepLR(opt2, step_size=1, gamma=0.9)
    extra = optim.load_checkpoint(path, model2, opt2, sched2)
    assert extra == {"epoch": 2}
    assert opt2.param_groups[0]["lr"] == pytest.approx(0.01 * 0.81)
    got = [step(model2, opt2, sched2) for _ in range(2)]
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    for (k, a), (_, b) in zip(model.state_dict().items(), model2.state_dict().items()):
        assert_equal(a, host(b), rtol=1e-12, err_msg=k)
    COMM.barrier()
    if COMM.rank == 0:
        os.remove(path)
        os.rmdir(os.path.dirname(path))


def test_bad_hyper_parameters():
    (w, b), _, _ = _problem()
    with pytest.raises(ValueError):
        optim.SGD([w], lr=-1.0)
    with pytest.raises(ValueError):
        optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError):
        optim.Adam([w], betas=(1.0, 0.9))
    with pytest.raises(ValueError):
        optim.Adam([])
