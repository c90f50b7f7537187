"""``darray bench``: the smoke run end to end, and the timing harness at every rank count.

``test_bench_smoke_writes_every_workload_row`` is serial (not marked ``mpi``): the
benchmark launches its own ``mpiexec -n 2`` job for the 2-rank columns when MPI is
installed. The harness tests are marked ``mpi``: the variants take turns on every rank,
barrier-fenced, and the measured results agree with NumPy's at 1-4 ranks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from darray.bench import SIZES, WORKLOADS
from darray.bench.data import sums_agree
from darray.bench.harness import Ctx, interleave, measure
from darray.testing import agree

pytestmark = pytest.mark.numpy_only(reason="darray bench compares with NumPy / mpi4py programs on NumPy buffers and "
                                           "trains darray.nn")

ROOT = Path(__file__).resolve().parent.parent


def test_bench_smoke_writes_every_workload_row(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for var in ("PMI_SIZE", "PMI_RANK", "PMI_FD", "PMIX_RANK", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS"):
        env.pop(var, None)  # a plain process: the benchmark launches the 2-rank part itself
    proc = subprocess.run([sys.executable, "-m", "darray.bench", "--smoke", "--out", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"

    reports = sorted(tmp_path.glob("*-smoke-*.md"))
    assert len(reports) == 1, sorted(p.name for p in tmp_path.iterdir())
    text = reports[0].read_text()
    assert "## Machine" in text and "load average" in text and "memory" in text and "BLAS" in text
    table = [line for line in text.splitlines() if line.startswith("| ")]
    for name, workload in WORKLOADS.items():
        rows = [line for line in table if line.startswith(f"| {workload.title} |")]
        assert len(rows) >= 1, f"no row for {name} ({workload.title!r}) in\n{text}"
    assert "MISMATCH" not in text and "failed" not in text.lower()

    data = json.loads(reports[0].with_suffix(".json").read_text())
    assert set(data["results"]) == set(WORKLOADS)
    row = data["results"]["W1"]
    assert row["numpy"]["ok"] and row["darray1"]["ok"]
    assert all(t > 0 for t in row["numpy"]["times"])


def _mpi(comm):
    """The mpi4py communicator under ``comm`` (None on one process without MPI)."""
    return comm.comm if comm.name == "mpi" else None


@pytest.mark.mpi
def test_interleave_takes_turns(comm):
    calls = []
    runs = [lambda k=k: calls.append(k) or k for k in range(3)]
    rounds = interleave(runs, reps=4, mpi=_mpi(comm), calls=2)
    ok = (calls == [k for _ in range(5) for k in range(3) for _ in range(2)]  # warm-up + 4 rounds: A A B B C C ...
          and rounds.times.shape == (4, 3) and bool((rounds.times >= 0).all()) and rounds.outputs == [0, 1, 2]
          and rounds.errors == [None] * 3 and rounds.growth_mb == [None] * 3)
    assert not agree(comm, ok), (calls, rounds)


@pytest.mark.mpi
def test_interleave_inactive_ranks_and_failures(comm):
    calls = []

    def flaky():
        calls.append("flaky")
        if calls.count("flaky") > 2:
            raise ValueError("third call")
        return 1

    def steady():
        calls.append("steady")
        return 2

    mpi = _mpi(comm)
    rounds = interleave([flaky, steady], reps=3, mpi=mpi, active=[True, comm.rank == 0], keep_going=True)
    steady_calls = 4 if comm.rank == 0 else 0
    ok = (isinstance(rounds.errors[0], ValueError) and rounds.errors[1] is None
          and calls.count("flaky") == 3 and calls.count("steady") == steady_calls
          and rounds.outputs[1] == (2 if comm.rank == 0 else None))
    assert not agree(comm, ok), (calls, rounds)
    with pytest.raises(ValueError, match="third call"):
        interleave([flaky], reps=1, mpi=mpi)


@pytest.mark.mpi
def test_measure_matches_numpy_at_every_rank_count(comm):
    sz = SIZES["smoke"]
    mpi = _mpi(comm)
    ctx = Ctx(sz, comm=comm, mpi=mpi)

    def broken(ctx):
        raise RuntimeError("no inputs")

    w = WORKLOADS["W2"]
    variants = [(w.darray, ctx), (broken, ctx)] + ([(w.hand, ctx)] if mpi is not None else [])
    results = measure(variants, reps=2)
    reference = w.numpy(Ctx(sz))
    want = reference.summarize(reference.run())
    darray_res, broken_res = results[0], results[1]
    ok = (broken_res == {"error": "RuntimeError: no inputs"} and len(darray_res["times"]) == 2
          and darray_res["time"] > 0 and len(darray_res["rss_mb"]) == comm.size
          and (comm.rank != 0 or all(sums_agree(r["sums"], want) for r in results[:1] + results[2:])))
    assert not agree(comm, ok), results
