"""Failure containment: a failure on one rank ends the whole job quickly, with the message, never a hang.

These tests launch their own ``mpiexec`` jobs (scripts in tests/scripts/), so they
are serial tests of the outer run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.numpy_only(reason="launches its own jobs to test process-level behaviour, which the "
                                           "local block library plays no part in: run in the NumPy stage")

pytest.importorskip("mpi4py")

SCRIPTS = Path(__file__).parent / "scripts"
ROOT = Path(__file__).parent.parent


def _mpiexec() -> str:
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec")
    if found is None:
        pytest.skip("no mpiexec on PATH")
    return found


def _run(script: str, nprocs: int, env: dict | None = None, timeout: float = 60, args: tuple = ()):
    environ = {k: v for k, v in os.environ.items() if k != "DARRAY_TEST_CHILD"}
    environ["PYTHONPATH"] = str(ROOT) + os.pathsep + environ.get("PYTHONPATH", "")
    environ.update(env or {})
    start = time.monotonic()
    proc = subprocess.run([_mpiexec(), "-n", str(nprocs), sys.executable, str(SCRIPTS / script), *args],
                          capture_output=True, text=True, timeout=timeout, env=environ)
    return proc, time.monotonic() - start


def test_exception_on_one_rank_ends_the_job():
    proc, elapsed = _run("raise_on_rank1.py", 3)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert elapsed < 15, f"job took {elapsed:.1f} s to end"
    assert "uncaught exception on rank 1 of 3; aborting the job" in out
    assert "boom on rank 1" in out and out.count("Traceback") == 1
    assert "ranks 0, 2 raised nothing" in out or ("rank 0 raised nothing" in out and "rank 2 raised nothing" in out)


def test_abort_hook_can_be_disabled(monkeypatch):
    import darray._comm.failure as failure

    class Fake:
        size, rank = 2, 0

    monkeypatch.setenv("DARRAY_ABORT_ON_ERROR", "0")
    before = sys.excepthook
    failure.install_abort_hook(Fake())
    assert sys.excepthook is before


def test_debug_mode_names_mismatched_collectives(tmp_path):
    proc, elapsed = _run("mismatched_collectives.py", 3, env={"DARRAY_DEBUG": "1"}, args=(str(tmp_path),))
    assert proc.returncode == 0, proc.stderr[-2000:]
    verdicts = [(tmp_path / f"rank{r}.txt").read_text() for r in range(3)]
    for verdict in verdicts:
        assert verdict.startswith("CollectiveMismatch"), verdicts
        assert "ranks [0] called redistribute; ranks [1, 2] called sum (allreduce" in verdict, verdicts


def test_wait_timeout_names_the_silent_neighbour():
    proc, elapsed = _run("silent_neighbour.py", 3, env={"DARRAY_WAIT_TIMEOUT": "2"})
    out = proc.stdout + proc.stderr
    assert "no answer from rank(s) [1]" in out
    assert elapsed < 30


@pytest.mark.parametrize("case, nprocs", [("shape", 2), ("shape", 3), ("sum-prod", 3), ("sum-max", 3),
                                          ("sum-max", 4)])
def test_disagreeing_ranks_raise_without_debug(case, nprocs, tmp_path):
    """Always on: the signature folded into the allreduce turns wrong numbers into CollectiveMismatch everywhere."""
    proc, elapsed = _run("disagree.py", nprocs, args=(str(tmp_path), case), timeout=60)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]
    verdicts = [(tmp_path / f"rank{r}.txt").read_text() for r in range(nprocs)]
    for verdict in verdicts:
        assert verdict.startswith("CollectiveMismatch"), verdicts
        assert "the ranks entered this collective with different operations" in verdict, verdicts


def test_debug_mode_checks_every_pair_of_collectives(tmp_path):
    """DARRAY_DEBUG=1: rank 0 in one collective-issuing function, the others in another, for every pair."""
    proc, elapsed = _run("debug_matrix.py", 3, env={"DARRAY_DEBUG": "1"}, args=(str(tmp_path),), timeout=120)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    tables = [(tmp_path / f"rank{r}.txt").read_text().splitlines() for r in range(3)]
    assert len(tables[0]) == 16 * 15 and all(len(t) == len(tables[0]) for t in tables)
    wrong = [line for t in tables for line in t if not line.endswith("|CollectiveMismatch")]
    assert not wrong, wrong[:20]


#: The fault campaign's cases (tests/scripts/campaign.py): one argument varied per rank in a collective entry
#: point. The ranks that took different message plans wait for each other in different calls until their
#: statuses meet (darray._comm.watch), or a signed collective sees different signatures.
CAMPAIGN = ("sum-axis", "mean-axis", "cumsum-axis", "concat-axis", "overlap-boundary", "any-all", "argmax-argmin",
            "cumsum-cumprod", "getitem-int", "gather-shape", "sort-sum")


@pytest.mark.parametrize("case, nprocs, debug", [(case, n, "") for case in CAMPAIGN for n in (2, 3, 4)]
                         + [(case, 2, "1") for case in CAMPAIGN])
def test_ranks_that_disagree_raise_on_every_rank(case, nprocs, debug, tmp_path):
    """Default settings (2-4 ranks) and DARRAY_DEBUG=1: no hang, no raw MPI exception, no silent answer --
    darray's error on every rank (at 4 ranks, ranks 0 and 2 pass one value and ranks 1 and 3 another)."""
    proc, elapsed = _run("campaign.py", nprocs, env={"DARRAY_DEBUG": debug}, args=(str(tmp_path), case), timeout=60)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-2000:]
    verdicts = [(tmp_path / f"rank{r}.txt").read_text() for r in range(nprocs)]
    for r, verdict in enumerate(verdicts):
        assert verdict.startswith(("CollectiveMismatch", "RanksLeft")), (r, verdicts)
        assert "MPI_ERROR field" not in verdict.split(":")[0], verdicts
    assert any(v.startswith("CollectiveMismatch") for v in verdicts), verdicts
    assert elapsed < 20, f"{case}: took {elapsed:.1f} s"


def test_a_slow_rank_gets_one_notice(tmp_path):
    """A wait that lasts prints one line naming the call and the ranks not arrived, and goes on."""
    proc, _ = _run("slow_rank.py", 2, env={"DARRAY_WAIT_NOTICE": "0.5"}, timeout=60)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-2000:]
    assert out.count("darray: rank 0 has waited") == 1, out[-2000:]
    assert "darray.sum (allreduce.sum) called at slow_rank.py" in out and "rank 1 is in no darray wait" in out, out
    assert "sum 4950.0" in out, out


@pytest.mark.parametrize("case", ["quantile-q", "var-ddof", "rng-seed", "asarray-data", "reshape-shape"])
def test_debug_compares_replicated_arguments(case, tmp_path):
    """DARRAY_DEBUG=1: a replicated argument or data that differs per rank raises on every rank (silent without)."""
    proc, _ = _run("campaign.py", 2, env={"DARRAY_DEBUG": "1"}, args=(str(tmp_path), case), timeout=60)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]
    verdicts = [(tmp_path / f"rank{r}.txt").read_text() for r in range(2)]
    assert all(v.startswith("CollectiveMismatch") for v in verdicts), verdicts


def _tracebacks(out: str) -> int:
    return out.count("Traceback (most recent call last)")


@pytest.mark.parametrize("nprocs", [2, 3, 4])
def test_the_same_error_on_every_rank_prints_one_traceback(nprocs):
    """``x[:, :10] + x`` raises on every rank: one traceback, the ranks named, darray's frames hidden."""
    proc, elapsed = _run("same_error.py", nprocs)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert _tracebacks(out) == 1, out
    same = "rank 1" if nprocs == 2 else f"ranks 1-{nprocs - 1}"
    assert f"uncaught exception on rank 0 of {nprocs} (the same error on {same}); aborting the job" in out, out
    assert "y = x[:, :10] + x" in out and "ValueError: add: shapes cannot be broadcast together" in out, out
    assert "darray/_core" not in out and "frames inside darray hidden; DARRAY_DEBUG=1 shows them" in out, out
    assert "MPI_Abort" not in out and "BAD TERMINATION" not in out, out  # one report, no launcher banner
    assert len(out.splitlines()) <= 10, out


def test_debug_shows_darray_frames_of_the_one_traceback():
    proc, elapsed = _run("same_error.py", 2, env={"DARRAY_DEBUG": "1"})
    out = proc.stdout + proc.stderr
    assert _tracebacks(out) == 1 and "darray/_core/elementwise.py" in out and "hidden" not in out, out


def test_different_errors_print_each_traceback_once_with_its_ranks():
    proc, elapsed = _run("same_error.py", 4, args=("different",))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert _tracebacks(out) == 2, out
    assert "uncaught exceptions on 4 of 4 ranks, 2 different errors" in out, out
    assert "darray: on ranks 0, 2:" in out and "darray: on ranks 1, 3:" in out, out
    assert out.count("RuntimeError: odd ranks fail") == 1 and out.count("KeyError: 'even ranks fail'") == 1, out


def test_darray_run_prints_one_traceback_without_launcher_frames():
    proc = subprocess.run([sys.executable, "-m", "darray.cli", "run", "-n", "3", str(SCRIPTS / "same_error.py")],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert _tracebacks(out) == 1 and "the same error on ranks 1-2" in out, out
    assert "mpi4py" not in out and "runpy" not in out and "darray/_core" not in out, out
