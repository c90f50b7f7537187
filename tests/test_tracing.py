"""``darray.tracing()`` records what moves; ``darray.trace`` is ``numpy.trace`` (the tracer's old name warns)."""

import numpy as np
import pytest

import darray as da
from darray.tracer import Trace

pytestmark = pytest.mark.mpi


def test_tracing_records_compute_and_communication(comm):
    x = da.asarray(np.arange(100.0), split=0)
    with da.tracing() as t:
        total = float(da.sum(x * 2))
    assert total == 9900.0
    ops = [e["op"] for e in t.events if e["kind"] == "compute"]
    assert ops == ["multiply", "sum"]
    comms = [e for e in t.events if e["kind"] == "comm"]
    assert bool(comms) == (comm.size > 1)  # a distributed sum combines its partial sums; one rank does not
    assert "tracing" in da.__all__ and "trace" in da.__all__


@pytest.mark.parametrize("offset", [0, 1, -2])
def test_trace_of_an_array_is_numpys(offset):
    g = np.arange(30.0).reshape(5, 6)
    assert float(da.trace(da.asarray(g), offset=offset)) == np.trace(g, offset=offset)
    assert float(da.trace(a=da.asarray(g), offset=offset)) == np.trace(g, offset=offset)


def test_trace_without_an_array_is_the_tracer_under_its_deprecated_name(comm):
    with pytest.warns(DeprecationWarning, match=r"use darray\.tracing\(\)"):
        recorder = da.trace()
    assert isinstance(recorder, Trace)
    with recorder as t:
        float(da.sum(da.ones(8)))
    assert [e["op"] for e in t.events if e["kind"] == "compute"] == ["sum"]
    with pytest.warns(DeprecationWarning):
        assert isinstance(da.trace(da.default_communicator()), Trace)
