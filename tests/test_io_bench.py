"""``benchmarks/bench_io.py --smoke``: runs end to end (with its own 2-rank job) and prints every row.

A serial test (not marked ``mpi``): the benchmark launches ``mpiexec -n 2`` itself when MPI is installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.numpy_only(reason="launches its own jobs to test process-level behaviour, which the "
                                           "local block library plays no part in: run in the NumPy stage")

pytest.importorskip("zarr")
pytest.importorskip("dask")

ROOT = Path(__file__).resolve().parent.parent
ROWS = ["zarr write", "zarr write, no checksum", "zarr read", "zarr read, verify=False", "from_dask (lazy field)"]


def test_bench_io_smoke(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI", "PMIX", "OMPI_", "MPI_LOCAL", "HYDRA"))}
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("DARRAY_TEST_CHILD", None)
    out = tmp_path / "io.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_io.py"), "--smoke", "--dir",
                           str(tmp_path), "--json", str(out)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    for row in ROWS:
        assert any(line.startswith(row + " ") for line in proc.stdout.splitlines()), f"no row {row!r}:\n{proc.stdout}"
    assert "MISMATCH" not in proc.stdout and "2-rank part ran" in proc.stdout
    data = json.loads(out.read_text())
    assert [r["operation"] for r in data["rows"]] == ROWS
    assert all(r["numpy_1proc_s"] > 0 and r["darray_1rank_s"] > 0 and r["darray_2ranks_s"] > 0 for r in data["rows"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["io.json"]  # the benchmark cleaned up its stores
