"""What each rank prints: darray.print, darray.rank0, DARRAY_PRINT=rank0."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import darray as da

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.mpi
def test_print_writes_on_rank_zero_only(capsys, comm):
    da.print("total", float(da.sum(da.ones(7))), sep="=")  # the sum is collective: every rank evaluates it
    out = capsys.readouterr().out
    assert out == ("total=7.0\n" if comm.rank == 0 else "")


@pytest.mark.mpi
def test_print_on_another_root(capsys, comm):
    root = comm.size - 1
    da.print("last", root=root)
    assert capsys.readouterr().out == ("last\n" if comm.rank == root else "")


@pytest.mark.mpi
def test_rank0_block_silences_stdout_of_other_ranks_only(capsys, comm):
    with da.rank0():
        print("inside")
        print("to stderr", file=sys.stderr)
    print("after")
    captured = capsys.readouterr()
    assert captured.out == ("inside\nafter\n" if comm.rank == 0 else "after\n")
    assert captured.err == "to stderr\n"


def test_print_is_not_star_exported():
    assert "print" not in da.__all__  # `from darray import *` keeps the builtin
    assert da.print is da.output.print


def _mpiexec() -> str:
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec")
    if found is None:
        pytest.skip("no mpiexec")
    return found


SCRIPT = textwrap.dedent("""
    import sys
    import darray as np
    total = float(np.sum(np.arange(10.0)))
    print(f"total {total}", flush=True)  # one string: the ranks' lines may interleave, not their words
    print("rank note", file=sys.stderr)
""")


@pytest.mark.parametrize("mode, lines", [("rank0", 1), ("", 3), ("all", 3)])
def test_darray_print_env_at_three_ranks(tmp_path, mode, lines):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "DARRAY_TEST_CHILD"}
    env.update(PYTHONPATH=str(ROOT), DARRAY_PRINT=mode, OMP_NUM_THREADS="1")
    proc = subprocess.run([_mpiexec(), "-n", "3", sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("total 45.0") == lines, proc.stdout
    assert proc.stderr.count("rank note") == 3  # standard error is never silenced


def test_darray_print_env_rejects_unknown_values(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DARRAY_TEST_CHILD"}
    env.update(PYTHONPATH=str(ROOT), DARRAY_PRINT="everyone")
    proc = subprocess.run([sys.executable, "-c", "import darray"], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode != 0
    assert "DARRAY_PRINT must be 'rank0' or 'all'; got 'everyone'" in proc.stderr
