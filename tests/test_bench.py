"""``python -m darray.bench --smoke``: runs end to end and writes a table with every workload row.

A serial test (not marked ``mpi``): the benchmark launches its own ``mpiexec -n 2``
job for the 2-rank columns when MPI is installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from darray.bench import WORKLOADS

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
