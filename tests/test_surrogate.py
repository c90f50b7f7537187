"""darray.nn.surrogate: the U-Net heat-step surrogate trains identically on every rank count.

The reference is the same training on SelfCommunicator arrays (a one-process
run inside every rank); the sharded run must reproduce its losses to 1e-10
relative. Fields are small (1x1x24x20) so the 4-rank run stays short.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray import nn
from darray._backend import to_numpy
from darray._comm import SelfCommunicator
from darray.nn.surrogate import SurrogateNet, heat_step, periodic_bumps, train_surrogate, training_pair
from darray.testing import agree, assert_equal


def host(x):
    """A DArray's whole value, or a local block, as a NumPy array (any local backend)."""
    return to_numpy(x.gather() if isinstance(x, da.DArray) else x)


pytestmark = pytest.mark.mpi

COMM = da.default_communicator()
P = COMM.size

LAYOUTS = {"H": dict(split=2), "W": dict(split=3)}
if P > 1:
    LAYOUTS["uneven"] = dict(split=2, sizes={2: [3] + [0] * (P - 2) + [21]})
if P == 4:
    LAYOUTS["grid22"] = dict(split=(2, 3), grid=(2, 2))


def bumps(shape=(24, 20), seed=0) -> np.ndarray:
    """A smooth periodic-ish field: a few Gaussian bumps plus a little noise."""
    rng = np.random.default_rng(seed)
    ys, xs = np.meshgrid(np.linspace(0, 1, shape[0]), np.linspace(0, 1, shape[1]), indexing="ij")
    u = sum(np.exp(-w * ((xs - cx) ** 2 + (ys - cy) ** 2)) for cx, cy, w in ((0.3, 0.4, 30.0), (0.7, 0.6, 20.0)))
    return u + 0.01 * rng.standard_normal(shape)


def everywhere(ok: bool) -> bool:
    """True when ``ok`` holds on every rank (the same verdict everywhere)."""
    return not agree(COMM, bool(ok))


def reference(field: np.ndarray, steps: int, **kw) -> list[float]:
    """The same training on one process (SelfCommunicator), run by every rank."""
    local = da.asarray(field, split=None, comm=SelfCommunicator())
    return train_surrogate(local, steps=steps, log=None, progress=False, **kw)


def close(a, b, rtol=1e-10) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= rtol * np.abs(b)))


@pytest.mark.parametrize("boundary", ["periodic", "nearest"])
@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_losses_match_one_process(name, boundary):
    field = bumps()[None, None]
    x = da.asarray(field, **LAYOUTS[name])
    losses = train_surrogate(x, steps=4, log=None, progress=False, boundary=boundary)
    want = reference(field, 4, boundary=boundary)
    assert everywhere(close(losses, want)), (losses, want)
    # every rank returns the very same history
    mine = np.asarray(losses)
    assert everywhere(bool(np.all(COMM.allgather(mine) == mine)))


def test_two_d_field_and_downsampling():
    field = bumps((37, 42), seed=1)
    x = da.asarray(field, split=1)
    # 42 > max_size=16: pooled by 3 -> 12x14 (37 // 3 = 12 rows, even already)
    logs = []
    losses = train_surrogate(x, steps=3, log=logs.append, progress=False, max_size=16)
    want = reference(field, 3, max_size=16)
    assert everywhere(close(losses, want))
    if COMM.rank == 0:
        assert any("12x14" in line and "downsampled by 3" in line for line in logs), logs
    else:
        assert logs == []


def test_loss_decreases():
    x = da.asarray(bumps()[None, None], split=2)
    losses = train_surrogate(x, steps=30, log=None, progress=False)
    assert everywhere(len(losses) == 30 and losses[-1] < 0.5 * losses[0] and min(losses[-5:]) < min(losses[:5]))


def test_heat_step_is_the_stencil():
    field = bumps()
    x = da.asarray(field, split=0)
    lap = (np.roll(field, 1, 0) + np.roll(field, -1, 0) + np.roll(field, 1, 1) + np.roll(field, -1, 1) - 4 * field)
    assert_equal(heat_step(x, 0.2), field + 0.2 * lap, rtol=1e-12)
    padded = np.pad(field, 1, mode="edge")  # zero-flux walls: ghost cells repeat the edge cells
    lap = padded[:-2, 1:-1] + padded[2:, 1:-1] + padded[1:-1, :-2] + padded[1:-1, 2:] - 4 * field
    assert_equal(heat_step(x, 0.2, boundary="nearest"), field + 0.2 * lap, rtol=1e-12)


@pytest.mark.parametrize("split", [0, 1])
def test_periodic_bumps_have_no_seam(split):
    """The example field is smooth across the edges: the periodic step there is no larger than inside.

    (A field with a seam, e.g. bumps on linspace(0, 1, n), puts most of the
    target on the seam at 256x256 and the training stalls near loss 0.8.)
    """
    n = 256
    u = periodic_bumps(n, split=split)
    t = np.arange(n) / n
    ys, xs = np.meshgrid(t, t, indexing="ij")
    want = sum(np.exp((np.cos(2 * np.pi * (xs - cx)) + np.cos(2 * np.pi * (ys - cy)) - 2) * w / (2 * np.pi ** 2))
               for cx, cy, w in ((0.3, 0.3, 60.0), (0.7, 0.6, 40.0), (0.5, 0.8, 90.0)))
    assert_equal(u, want, rtol=1e-12, atol=1e-15)
    step = np.abs(host(heat_step(u) - u))
    edge = np.zeros((n, n), bool)
    edge[[0, -1]] = edge[:, [0, -1]] = True
    assert everywhere(step[edge].max() <= step[~edge].max())


def test_model_shapes_and_parameters_are_replicated():
    nn.init.manual_seed(3)
    model = SurrogateNet(channels=4)
    x = da.asarray(bumps()[None, None], split=2)
    y = model(x)
    assert y.shape == (1, 1, 24, 20)
    assert sorted(name for name, _ in model.named_parameters()) == [
        "enc.bias", "enc.weight", "head.bias", "head.weight", "mid.bias", "mid.weight"]
    w = host(model.enc.weight.data.local)
    assert everywhere(bool(np.all(COMM.allgather(np.ascontiguousarray(w)) == w)))


def test_errors():
    x = da.asarray(bumps(), split=None)
    with pytest.raises(ValueError, match="steps"):
        train_surrogate(x, steps=-1, log=None)
    with pytest.raises(ValueError, match="expected a 2-d field"):
        train_surrogate(da.zeros((2, 3, 4)), steps=1, log=None)
    with pytest.raises(ValueError, match="too small"):
        train_surrogate(da.zeros((1, 5)), steps=1, log=None)
    with pytest.raises(TypeError, match="DArray"):
        train_surrogate(np.zeros((4, 4)), steps=1, log=None)
    with pytest.raises(ValueError, match="activation"):
        SurrogateNet(activation="tanh")
    with pytest.raises(ValueError, match="unknown boundary"):
        train_surrogate(x, steps=1, log=None, boundary="wrap")


@pytest.mark.parametrize("split", [0, 1])
def test_training_pair_stays_sharded(split):
    """The (1, 1, H, W) training arrays are cut like the 2-d field: no rank gathers the field."""
    field = bumps((40, 36))
    u = da.asarray(field, split=split)
    x, y, factor = training_pair(u, max_size=64)
    assert factor == 1 and x.shape == y.shape == (1, 1, 40, 36)
    assert everywhere(tuple(x.local.shape[2:]) == tuple(u.local.shape) == tuple(y.local.shape[2:]))
    mean, std = field.mean(), field.std()
    assert_equal(x, ((field - mean) / std)[None, None], rtol=1e-12)
