"""A layer of darray.nn or a fused kernel given only replicated inputs on 2+ ranks says so, once, on rank 0."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import darray as da
from darray import nn
from darray._core import replication
from darray._core.element_reads import PerformanceWarning
from darray.testing import agree

pytestmark = pytest.mark.mpi


@pytest.fixture(autouse=True)
def _fresh():
    replication._warned.clear()  # (once per process: each test starts unwarned)
    yield
    replication._warned.clear()


def _caught(call):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = call()
    return result, [w for w in seen if issubclass(w.category, PerformanceWarning)]


def _batch(split):
    """The issue's batch: four (1, 64, 64) samples stacked; below min_distributed_size each, so not cut."""
    rng = np.random.default_rng(0)
    samples = [da.asarray(rng.standard_normal((1, 64, 64))) for _ in range(4)]
    x = da.stack(samples)
    return x if split is None else da.asarray(x, split=split)


def test_a_stacked_batch_is_replicated_and_the_model_says_so_once(comm):
    model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.Conv2d(2, 1, 3, padding=1))
    x = _batch(None)
    assert x._layout.is_replicated
    _, first = _caught(lambda: model(x))
    _, second = _caught(lambda: model(x))
    expected = 1 if comm.size > 1 and comm.rank == 0 else 0
    assert not agree(comm, len(first) == expected and not second)
    if first:
        text = str(first[0].message)
        assert text.startswith(f"darray.nn: Sequential got a replicated input of shape (4, 1, 64, 64) on {comm.size}")
        assert "darray.asarray(x, split=0)" in text and "min_distributed_size" in text


def test_a_cut_batch_does_not_warn(comm):
    model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU())
    _, seen = _caught(lambda: model(_batch(0)))
    assert not agree(comm, not seen)


def test_a_layer_inside_the_model_may_take_replicated_values(comm):
    """Only the model's own input counts: the features after a global pooling are replicated by design."""

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3, padding=1)
            self.fc = nn.Linear(2, 3)

        def forward(self, x):
            features = self.conv(x).mean(axis=(0, 2, 3)).reshape((1, 2))  # replicated after the reduction
            return self.fc(features)

    _, seen = _caught(lambda: Head()(_batch(0)))
    assert not agree(comm, not seen)


def test_a_fused_kernel_on_replicated_inputs_says_so_once(comm):
    @da.fuse
    def axpy(a, b):
        return 2.0 * a + b

    g = np.arange(12.0)
    small, other = da.asarray(g, split=None), da.asarray(g + 1, split=None)
    out, first = _caught(lambda: axpy(small, other))
    _, second = _caught(lambda: axpy(small, other))
    expected = 1 if comm.size > 1 and comm.rank == 0 else 0
    assert not agree(comm, len(first) == expected and not second)
    assert not agree(comm, np.array_equal(np.asarray(out.local), 2 * g + g + 1))
    if first:
        assert str(first[0].message).startswith("darray.fuse: the fused function axpy got a replicated input")
    replication._warned.clear()
    _, cut = _caught(lambda: axpy(da.asarray(g, split=0), other))  # one input cut: the kernel is shared out
    assert not agree(comm, not cut)
