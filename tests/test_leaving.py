"""No silent hang (issue #17): a rank that leaves early, and Ctrl-C.

Serial tests of the outer run: each launches its own ``mpiexec`` job (scripts in tests/scripts/) and
asserts the error text and that the job ends in seconds.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from darray._comm import signature

pytest.importorskip("mpi4py")

from test_reliability import ROOT, SCRIPTS, _mpiexec, _run

pytestmark = pytest.mark.numpy_only(reason="launches its own jobs to test process-level behaviour, which the "
                                           "local block library plays no part in: run in the NumPy stage")


@pytest.mark.parametrize("mode, nprocs", [("rank0-only", 2), ("rank0-only", 3), ("rank0-only", 4), ("exit0", 2),
                                          ("exit0", 3), ("exit1", 2), ("exit1", 4), ("halo", 3)])
def test_a_rank_that_leaves_is_named_in_seconds(mode, nprocs):
    proc, elapsed = _run("leave_early.py", nprocs, args=(mode,), timeout=60)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-2000:]
    # seconds, not a hang: detection takes ~0.2 s; the rest is starting 4 Python ranks on a shared 2-core machine
    assert elapsed < 30, f"job took {elapsed:.1f} s to end"
    assert "RanksLeft" in out, out[-3000:]
    named = re.findall(r"rank\(s\) \[([\d, ]+)\] left the job", out)
    left = set(range(1, nprocs)) if mode == "rank0-only" else {1}
    assert named and all(set(map(int, n.split(","))) <= left for n in named), out[-3000:]
    what = "(exchange)" if mode == "halo" else "darray.sum (allreduce.sum)"
    assert what in out and "leave_early.py:" in out, out[-3000:]


def test_darray_run_names_the_rank_that_left():
    environ = {k: v for k, v in os.environ.items() if k != "DARRAY_TEST_CHILD"}
    environ["PYTHONPATH"] = str(ROOT) + os.pathsep + environ.get("PYTHONPATH", "")
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "darray.cli", "run", "-n", "3", str(SCRIPTS / "leave_early.py"),
                           "exit0"], capture_output=True, text=True, timeout=60, env=environ)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and time.monotonic() - start < 30, out[-2000:]
    assert "rank(s) [1] left the job" in out, out[-3000:]


def test_different_collectives_end_the_job_without_a_timeout():
    """sort on rank 0 against sum on the others would hang inside MPI: their slow waits tell each other where
    they are, and both raise naming both calls (no DARRAY_WAIT_TIMEOUT needed)."""
    proc, elapsed = _run("sort_vs_sum.py", 3, timeout=60)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and elapsed < 15, out[-2000:]
    assert "CollectiveMismatch" in out and "darray.sort" in out and "darray.sum" in out, out[-3000:]


def _interrupt(command: list[str]):
    environ = {k: v for k, v in os.environ.items() if k != "DARRAY_TEST_CHILD"}
    environ["PYTHONPATH"] = str(ROOT) + os.pathsep + environ.get("PYTHONPATH", "")
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environ,
                            start_new_session=True)
    try:
        assert proc.stdout.readline().startswith("ready")
        time.sleep(0.5)
        start = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does to the job
        out, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, out, time.monotonic() - start


@pytest.mark.parametrize("via", ["mpiexec", "darray run"])
def test_ctrl_c_prints_one_short_message(via):
    script = str(SCRIPTS / "interrupt_me.py")
    command = ([_mpiexec(), "-n", "3", sys.executable, script] if via == "mpiexec" else
               [sys.executable, "-m", "darray.cli", "run", "-n", "3", script])
    code, out, elapsed = _interrupt(command)
    # every rank prints "ready"; two ranks' writes may share a line ("readyready")
    lines = [line for line in out.splitlines() if line.replace("ready", "").strip()]
    assert code != 0 and elapsed < 10, out
    assert out.count("darray: interrupted on rank") == 1, out
    assert "Traceback" not in out and len(lines) <= 3, out  # mpiexec adds its own two lines


# ------------------------------------------------------------------ the signature folded into an allreduce
@pytest.mark.parametrize("op, dtype", [(op, dtype) for op in ("sum", "min", "max", "prod")
                                       for dtype in (np.float64, np.float32, np.int64, np.int32, np.uint64,
                                                     np.complex128)
                                       if op == "sum" or dtype != np.complex128])
def test_folded_signature_agrees_only_when_every_rank_agrees(op, dtype):
    """Reduce the folded buffers of P simulated ranks as MPI would; the verdict is the same on every rank."""
    combine = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}[op]
    for size in (2, 3, 4):
        data = np.arange(5, dtype=dtype)
        same = [signature.fold(data, op, size, ((13,), (True,))) for _ in range(size)]
        if same[0][1] is None:
            assert op == "prod" and np.dtype(dtype).kind in "iu"  # integer products carry none
            continue
        reduced = same[0][0]
        for buffer, _ in same[1:]:
            reduced = combine(reduced, buffer)
        assert all(check(reduced) for _, check in same)
        odd = [signature.fold(data, op, size, ((13 + (r == 1),), (True,))) for r in range(size)]
        reduced = odd[0][0]
        for buffer, _ in odd[1:]:
            reduced = combine(reduced, buffer)
        verdicts = [check(reduced) for _, check in odd]
        if op == "prod":  # per rank, a few bits: a rank whose power of two differs sees it
            assert verdicts[1] == (odd[1][0][-1] == odd[0][0][-1])
        else:
            assert not any(verdicts), (op, dtype, size)
