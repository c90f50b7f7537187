"""``darray.tracing()`` records what moves; ``darray.trace`` is ``numpy.trace`` (the tracer's old name warns)."""

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest

import darray as da
from darray.testing import agree
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


def _diffuse(b):
    return b[1:-1, 1:-1] + 0.2 * (b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] - 4 * b[1:-1, 1:-1])


#: Seconds by which the categories may miss the wall time: they add up by construction, up to float rounding.
TOLERANCE = 1e-6


def test_map_overlap_compute_is_traced_and_the_accounting_adds_up_to_the_wall_time(comm, shared):
    u = da.asarray(np.random.default_rng(0).random((256, 256)), split=0, halo=1, boundary="periodic")
    v = da.empty_like(u)
    with da.tracing() as t:
        for _ in range(5):
            da.map_overlap(_diffuse, u, depth=1, boundary="periodic", trim=False, out=v)
            u, v = v, u
        float(da.sum(u))
    mine = [e for e in t.events if e["op"] == "map_overlap:_diffuse"]
    ok = len(mine) == 5 and all(e["kind"] == "compute" and e["seconds"] > 0 for e in mine)
    assert not agree(comm, ok), [(e["kind"], e["seconds"]) for e in mine]
    result = t.summary(file=io.StringIO())
    parts = ("compute_s", "comm_s", "wait_s", "overhead_s", "unaccounted_s")
    for r in range(comm.size):
        assert result["compute_s"][r] >= sum(e["seconds"] for e in mine) * (r == comm.rank)
        assert abs(sum(result[k][r] for k in parts) - result["wall_s"][r]) <= TOLERANCE, result
        assert min(result[k][r] for k in parts) >= -TOLERANCE, result  # no second counted twice
        if comm.size == 1:
            assert result["wait_s"][r] == 0.0
    local = t.totals()
    assert abs(local["compute"] + local["comm"] + local["overhead"] + local["unaccounted"] - local["wall"]) <= TOLERANCE
    path = shared / "trace.json"
    t.to_chrome(str(path))
    ok = True
    if comm.rank == 0:
        events = json.loads(path.read_text())["traceEvents"]
        names = {(e.get("cat"), e["name"], e["pid"]) for e in events if e["ph"] == "X"}
        ok = all(("compute", "map_overlap:_diffuse", r) in names and ("wall", "traced (wall)", r) in names
                 for r in range(comm.size))
        walls = [e for e in events if e.get("cat") == "wall"]
        ok = ok and all(abs(e["args"]["wall_s"] - result["wall_s"][e["pid"]]) <= TOLERANCE for e in walls)
    assert not agree(comm, ok)


def test_nested_events_count_each_second_once(comm):
    from darray import _recorder

    with da.tracing() as t:
        with _recorder.span("compute", "outer"):
            with _recorder.span("compute", "inner"):
                sum(range(20000))
            with _recorder.span("comm", "inside"):
                sum(range(20000))
    outer, = [e for e in t.events if e["op"] == "outer"]
    spans = sum(e["end"] - e["start"] for e in t.events if e["op"] != "outer")
    assert outer["seconds"] <= outer["end"] - outer["start"] - spans + TOLERANCE
    assert sum(e["seconds"] for e in t.events) <= t.stopped - t.started + TOLERANCE


def _emitted_names() -> set[str]:
    """Every event name the code gives (``kind:op``), read from darray's sources, compute ops of NumPy's names aside."""
    root = Path(da.__file__).parent
    names = {"comm:exchange", "comm:allgather", "comm:bcast", "comm:barrier", "comm:allreduce.<op>",
             "compute:<function>", "compute:map_overlap:<func>", "overhead:map_overlap", "compute:fuse:<function>"}
    for path in root.rglob("*.py"):
        text = path.read_text()
        names |= {f"comm:{n}" for n in re.findall(r'labelled\("([^"]+)"\)', text)}
        names |= {f"comm:{n}" for n in re.findall(r'\.send\([^()]*(?:\([^()]*\))?[^()]*, "([^"]+)"\)', text)}
        names |= {f"comm:{n}" for n in re.findall(r'allgather\([^()]*op="([^"]+)"', text)}
        names |= {f"{k}:{n}" for k, n in re.findall(r'span\("(\w+)", "([^"]+)"', text)}
        names |= {f"compute:{n}" for n in re.findall(r'record_compute\("([^"]+)"', text)}
    return {n for n in names if n != "comm:example"}  # (a docstring's example label)


def test_the_tracing_guide_names_every_event_the_code_emits():
    guide = (Path(__file__).parent.parent / "docs" / "guide" / "tracing.md").read_text()
    emitted = _emitted_names()
    assert {"comm:halo", "comm:align", "comm:agree", "compute:map_overlap.out"} <= emitted
    missing = sorted(n for n in emitted if f"`{n}`" not in guide)
    assert not missing, f"docs/guide/tracing.md does not name {missing}"
