"""``benchmarks/gpu.py`` and the CuPy code paths, checked on machines without a GPU.

Not marked ``gpu``: these run everywhere (in the one-process run only; the
script's MPI runs start their own ``mpiexec``).

- the script's dry run (``--backend numpy`` / ``torch``) runs every step of
  the GPU run (correctness against NumPy, halo exchange, stencils, a training
  step, every timing row) with CPU blocks, at 1 and 2 ranks;
- its correctness section reports a wrong result (exit status 1);
- without CuPy the GPU run exits 2 with the reason;
- nothing in darray imports CuPy eagerly: with a ``cupy`` that refuses to be
  imported, ``import darray`` and its submodules, computations, the CLI and
  the dry run all work and never touch it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.numpy_only(reason="launches its own jobs to test process-level behaviour, which the "
                                           "local block library plays no part in: run in the NumPy stage")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu.py"
SMALL = ["--elements", "65536", "--field", "128", "--train-n", "32", "--channels", "4", "--repeats", "2"]


def _env(extra_path: Path | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI", "PMIX", "OMPI_", "MPI_LOCAL", "HYDRA"))}
    paths = [str(p) for p in (extra_path, ROOT) if p is not None]
    env["PYTHONPATH"] = os.pathsep.join(paths + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    for k in ("DARRAY_TEST_CHILD", "DARRAY_BACKEND", "DARRAY_TRANSPORT"):
        env.pop(k, None)
    env["DARRAY_BENCH_TIMEOUT"] = "150"
    return env


def _mpiexec() -> str | None:
    local = Path(sys.executable).parent / "mpiexec"
    return str(local) if local.exists() else shutil.which("mpiexec")


def _in_child_run() -> bool:
    return bool(os.environ.get("DARRAY_TEST_CHILD")) or "PMI_RANK" in os.environ or "OMPI_COMM_WORLD_SIZE" in os.environ


@pytest.fixture
def refusing_cupy(tmp_path) -> Path:
    """A directory whose ``cupy`` package raises on import (put first on PYTHONPATH)."""
    pkg = tmp_path / "fake" / "cupy"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text('raise ImportError("test: cupy imported eagerly")\n')
    return tmp_path / "fake"


def _check_dry_run(proc: subprocess.CompletedProcess, backend: str) -> None:
    out = proc.stdout
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out[-4000:]}\n{proc.stderr[-4000:]}"
    assert "correctness: all correct" in out, out
    for row in ("a*b+c  darray", "sum    darray", "allreduce", "exchange", "exchange_halos", "laplacian",
                "surrogate step"):
        assert row in out, f"no {row!r} row:\n{out}"
    assert "error:" not in out, out  # a timing row that raised
    assert f"{backend} blocks on the CPU (dry run)" in out


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_dry_run_one_rank(backend, refusing_cupy):
    if _in_child_run():
        return
    if backend == "torch" and importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    proc = subprocess.run([sys.executable, str(SCRIPT), "--backend", backend, *SMALL], env=_env(refusing_cupy),
                          capture_output=True, text=True, timeout=240, cwd=ROOT)
    _check_dry_run(proc, backend)


@pytest.mark.parametrize("nprocs", [2, 3])
def test_dry_run_under_mpi(nprocs, refusing_cupy):
    if _in_child_run():
        return
    mpiexec = _mpiexec()
    if mpiexec is None:
        pytest.skip("mpiexec is not installed")
    proc = subprocess.run([mpiexec, "-n", str(nprocs), sys.executable, str(SCRIPT), "--backend", "numpy", *SMALL],
                          env=_env(refusing_cupy), capture_output=True, text=True, timeout=240, cwd=ROOT)
    _check_dry_run(proc, "numpy")
    assert f"{nprocs} rank(s), transport 'mpi'" in proc.stdout


def test_gpu_run_without_cupy_exits_2(refusing_cupy):
    if _in_child_run():
        return
    proc = subprocess.run([sys.executable, str(SCRIPT), *SMALL], env=_env(refusing_cupy), capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "cannot run here: CuPy is not importable" in proc.stdout


def test_correctness_section_reports_a_wrong_result(monkeypatch):
    """A wrong stencil and a wrong halo exchange are named in the failures (the script exits 1 on them)."""
    if _in_child_run():
        return
    import numpy as np

    import darray as da

    spec = importlib.util.spec_from_file_location("darray_gpu_bench", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    good = da.stencil.laplacian
    monkeypatch.setattr(da.stencil, "laplacian", lambda x, **kw: good(x, **kw) + 1e-6)
    exchange = da.DArray.exchange_halos

    def spoiled(self, *args, **kwargs):
        out = exchange(self, *args, **kwargs)
        if self.layout.has_halo:
            self.block[0] = np.nan  # a ghost cell
        return out

    monkeypatch.setattr(da.DArray, "exchange_halos", spoiled)
    failures = bench._check_correctness(da, bench.Device("numpy"), da.default_communicator())
    assert any(f.startswith("stencil.laplacian") for f in failures), failures
    assert any(f.startswith("halo exchange") for f in failures), failures
    # checks that use no halo are unaffected (stencils, map_overlap and the training step use exchange_halos)
    assert not any(f.startswith(("a*b+c", "sum", "max", "mean", "var", "gather", "redistribute")) for f in failures)


_NO_EAGER_CUPY = """
import sys
import numpy as np
import darray as da
import darray.nn, darray.optim, darray.autodiff, darray.io, darray.interop, darray.stencil, darray.random
from darray import cli
from darray._comm import available_transports
from darray._backend import available_backends
x = da.arange(100.0, halo=1, boundary="periodic")
y = da.stencil.laplacian(x) + da.sum(x) + da.real(da.fft.fft(x))
assert available_backends()["cupy"] is True       # the fake is found, never imported
assert available_transports()["nccl"] in (True, False)
assert "cupy" not in sys.modules, "cupy was imported"
print("ok", float(da.sum(y)))
"""


def test_nothing_imports_cupy_eagerly(refusing_cupy):
    if _in_child_run():
        return
    proc = subprocess.run([sys.executable, "-c", _NO_EAGER_CUPY], env=_env(refusing_cupy), capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.startswith("ok"), proc.stdout + proc.stderr
    info = subprocess.run([sys.executable, "-m", "darray.cli", "info"], env=_env(refusing_cupy),
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert info.returncode == 0, info.stdout + info.stderr
