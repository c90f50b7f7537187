"""An uncaught exception prints the user's frames and darray's folded into a line (``darray._excepthook``).

Each test runs tests/scripts/folded_frames.py in a fresh process: at one
process (``python script.py``) and under ``mpiexec -n 2``, where the MPI
report (``darray._comm.failure``) formats the traceback the same way.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.numpy_only(reason="runs scripts in their own processes to test how an uncaught error "
                                           "prints, which the local block library plays no part in")

SCRIPT = Path(__file__).parent / "scripts" / "folded_frames.py"
ROOT = Path(__file__).parent.parent
PACKAGE = str(ROOT / "darray") + os.sep
FOLD = re.compile(r"^  \[\d+ frames? inside darray hidden(, and [a-z ]+)?; DARRAY_DEBUG=1 shows them\]$", re.M)


def _run(case: str, nprocs: int = 1, env: dict | None = None, launcher: tuple = ()) -> str:
    environ = {k: v for k, v in os.environ.items() if k not in ("DARRAY_TEST_CHILD", "DARRAY_DEBUG")}
    environ["PYTHONPATH"] = str(ROOT) + os.pathsep + environ.get("PYTHONPATH", "")
    environ.update(env or {})
    command = [sys.executable, *launcher, str(SCRIPT), case]
    if nprocs > 1:
        pytest.importorskip("mpi4py")
        here = Path(sys.executable).parent / "mpiexec"
        mpiexec = str(here) if here.exists() else shutil.which("mpiexec")
        if mpiexec is None:
            pytest.skip("no mpiexec on PATH")
        command = [mpiexec, "-n", str(nprocs), *command]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, env=environ)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    return proc.stderr


def _user_frames(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("  File ")]


@pytest.mark.parametrize("nprocs", [1, 2])
def test_darray_frames_fold_into_a_line(nprocs):
    out = _run("shape", nprocs)
    assert out.count("Traceback (most recent call last)") == 1, out
    assert "    y = x[:, :10] + x\n" in out, out  # the line that called darray
    assert len(FOLD.findall(out)) == 1, out
    assert "ValueError: add: shapes cannot be broadcast together" in out.splitlines()[-1], out
    assert PACKAGE not in out and all("folded_frames.py" in line for line in _user_frames(out)), out
    if nprocs > 1:
        assert "(the same error on rank 1)" in out, out


@pytest.mark.parametrize("nprocs", [1, 2])
def test_debug_shows_python_s_full_traceback(nprocs):
    out = _run("shape", nprocs, env={"DARRAY_DEBUG": "1"})
    assert os.path.join("darray", "_core", "elementwise.py") in out and "hidden" not in out, out
    assert "    y = x[:, :10] + x\n" in out, out


@pytest.mark.parametrize("nprocs", [1, 2])
def test_user_code_darray_called_back_stays(nprocs):
    """A ``map_overlap`` function: the line calling darray, a fold, the function's frame, the error."""
    out = _run("callback", nprocs)
    lines = out.splitlines()
    called = lines.index("    da.map_overlap(stencil, x, depth=1)")
    assert FOLD.match(lines[called + 1]) and "in stencil" in lines[called + 2], out
    assert "NameError: name 'missing_name' is not defined" in out and PACKAGE not in out, out


def test_a_fused_function_s_body_stays():
    out = _run("fused")
    assert "    step(x)\n" in out and "    return u[:, :10] + u\n" in out, out
    assert "in step" in out and PACKAGE not in out and FOLD.search(out), out
    assert out.splitlines()[-1].startswith("ValueError: add: shapes cannot be broadcast together"), out


@pytest.mark.parametrize("nprocs", [1, 2])
def test_chained_exceptions_fold_each_traceback(nprocs):
    out = _run("chained", nprocs)
    assert out.count("Traceback (most recent call last)") == 2, out
    assert "The above exception was the direct cause of the following exception" in out, out
    assert "    x[:, :10] + x\n" in out and 'raise RuntimeError("my step failed") from err' in out, out
    assert len(FOLD.findall(out)) == 1 and PACKAGE not in out, out
    assert "RuntimeError: my step failed" in out, out


def test_the_launcher_s_frames_are_left_out():
    """``python -m mpi4py`` (what ``darray run`` launches): runpy's and mpi4py's frames go without a line."""
    pytest.importorskip("mpi4py")
    out = _run("shape", launcher=("-m", "mpi4py"))
    assert "runpy" not in out and "mpi4py" not in out and len(FOLD.findall(out)) == 1, out
    assert _user_frames(out)[0].startswith(f'  File "{SCRIPT}"'), out


def test_keyboard_interrupt_is_left_as_python_prints_it():
    out = _run("interrupt")
    assert "KeyboardInterrupt" in out and PACKAGE in out and "hidden" not in out, out


def test_an_error_outside_darray_is_python_s_own_traceback():
    out = _run("plain")
    assert "KeyError: \"not darray's\"" in out and "hidden" not in out, out
    assert len(_user_frames(out)) == 1, out


def test_a_hook_installed_before_darray_gets_the_error():
    assert _run("previous") == "my hook: ValueError\n"


def test_without_the_job_report_a_rank_folds_its_own():
    """``DARRAY_ABORT_ON_ERROR=0``: no report for the job; the rank that raised prints as on one process."""
    out = _run("rank1", 2, env={"DARRAY_ABORT_ON_ERROR": "0"})
    assert out.count("Traceback (most recent call last)") == 1 and len(FOLD.findall(out)) == 1, out
    assert "aborting the job" not in out and PACKAGE not in out, out
