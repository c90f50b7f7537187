"""``darray demo`` (the README's first command) at every rank count, small, into a given folder."""

from __future__ import annotations

import importlib.util

import numpy
import pytest

import darray as da
from darray.demo import run_demo
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
    if comm.rank == 0 and importlib.util.find_spec("matplotlib"):
        names = {"field.png", "breakdown.png", "scaling.png"} | ({"loss.png"} if result.get("losses") else set())
        assert names <= {p.name for p in out.iterdir()}


def test_default_out_dir_is_in_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_out_dir("demo") == tmp_path / "darray" / "demo"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert ".cache" in default_out_dir("bench").parts
