"""``darray demo`` (the README's first command) at every rank count, small, into a given folder."""

from __future__ import annotations

import importlib.util

import numpy
import pytest

from darray import _threads
from darray.demo import _PARTS_KEYS, _crowded, run_demo
from darray.output import default_out_dir


@pytest.mark.mpi
def test_demo_runs_checks_and_writes_its_pictures(shared, comm):
    out = shared / "demo"
    result = run_demo(size=48, steps=6, out_dir=str(out), train_steps=2, quiet=True)
    assert result["check"] <= 1e-12
    values = numpy.asarray(comm.allgather(numpy.asarray([result["heat"], result["peak"]])))
    assert numpy.all(values == values[0])  # the same numbers on every rank
    if comm.rank == 0:
        assert result["scaling"]["NumPy, 1 process"] > 0
    parts = result["breakdown"]  # the breakdown adds up to each rank's wall time (float rounding aside)
    for r in range(comm.size):
        assert abs(sum(parts[k][r] for k in _PARTS_KEYS) - parts["wall_s"][r]) <= 1e-6, parts
        assert parts["compute_s"][r] > 0, parts  # the stencil's own time is compute
    if comm.rank == 0 and importlib.util.find_spec("matplotlib"):
        names = {"field.png", "breakdown.png", "scaling.png"} | ({"loss.png"} if result.get("losses") else set())
        assert names <= {p.name for p in out.iterdir()}


@pytest.mark.mpi
def test_demo_warns_when_the_ranks_outnumber_the_cores(monkeypatch, comm):
    monkeypatch.setattr(_threads, "cores", lambda: 1)
    monkeypatch.setattr(_threads, "local_ranks", 3)
    assert "3 ranks share 1 core:" in _crowded(comm)
    monkeypatch.setattr(_threads, "local_ranks", 1)
    assert _crowded(comm) is None


def test_default_out_dir_is_in_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_out_dir("demo") == tmp_path / "darray" / "demo"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert ".cache" in default_out_dir("bench").parts
