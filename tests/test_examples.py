"""The examples run, agree with NumPy (``--check``) and print the same summary at 1, 3 and 4 ranks.

A serial test: each example is launched as a script, once with plain
``python`` and once under the venv's ``mpiexec`` per rank count, at sizes
small enough for a few seconds per run (odd sizes: uneven blocks). Summary
lines are the printed lines that do not start with ``#`` (those name the rank
count and grid).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
MPIEXEC = Path(sys.executable).parent / "mpiexec"
TIMEOUT = 180  # a hang guard; each run takes a few seconds on an idle machine
LAUNCHER_PREFIXES = ("PMI_", "PMIX_", "OMPI_", "HYDRA_", "MPI_LOCALNRANKS", "MPICH_")

CASES = {
    "heat2d": ["--n", "23", "--steps", "12"],
    "wave3d-periodic": ["--n", "11", "--steps", "9"],
    "wave3d-reflect": ["--n", "9", "--steps", "7", "--boundary", "reflect"],
    "cfd_cavity": ["--n", "13", "--steps", "4", "--nit", "6"],
}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(LAUNCHER_PREFIXES)}
    env.pop("DARRAY_TEST_CHILD", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def _run(cmd: list[str]) -> str:
    """Run ``cmd`` in its own process group; fail with its output unless it exits 0 in time."""
    proc = subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"{' '.join(cmd)}: no result after {TIMEOUT} s; output:\n{out[-4000:]}", pytrace=False)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} exited {proc.returncode}; output:\n{out[-4000:]}", pytrace=False)
    return out


def _summary(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("case", sorted(CASES))
def test_example_agrees_across_rank_counts(case):
    script = EXAMPLES / f"{case.split('-')[0]}.py"
    args = [str(script), *CASES[case], "--check"]
    serial = _run([sys.executable, *args])
    lines = _summary(serial)
    assert lines, f"{case}: no summary printed at 1 rank:\n{serial}"
    assert "# check:" in serial, f"{case}: --check printed no verdict:\n{serial}"
    if not MPIEXEC.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"no mpiexec at {MPIEXEC} (fails instead of skipping because CI is set)", pytrace=False)
        pytest.skip(f"no mpiexec next to the interpreter ({MPIEXEC}); ran at 1 rank only")
    for nprocs in (3, 4):
        out = _run([str(MPIEXEC), "-n", str(nprocs), sys.executable, *args])
        assert f"ranks={nprocs}" in out, f"{case}: the run under mpiexec -n {nprocs} was not distributed:\n{out}"
        assert _summary(out) == lines, (f"{case}: summary at {nprocs} ranks differs from 1 rank:\n"
                                        f"{chr(10).join(_summary(out))}\nvs\n{chr(10).join(lines)}")


#: training example -> small arguments; each writes OUT/losses.txt and prints "<P> rank(s)"
TRAINING = {
    "train_vit_surrogate": ["--n", "24", "--patch", "4", "--dim", "8", "--steps", "4", "--every", "2",
                            "--no-progress"],  # patches, neighbourhood and ring attention
    "points_surrogate": ["--n", "240", "--k", "6", "--steps", "4", "--every", "2"],  # RCB, kNN, GhostPlan
}


@pytest.mark.parametrize("example", sorted(TRAINING))
def test_training_example_has_the_same_losses_at_1_2_and_4_ranks(example, tmp_path):
    """The training examples learn, and their losses.txt agree to rounding at 1, 2 and 4 ranks."""
    import numpy as np

    args = [str(EXAMPLES / f"{example}.py"), *TRAINING[example]]
    runs = {1: [sys.executable]}
    if MPIEXEC.is_file():
        runs.update({n: [str(MPIEXEC), "-n", str(n), sys.executable] for n in (2, 4)})
    elif os.environ.get("CI"):
        pytest.fail(f"no mpiexec at {MPIEXEC} (fails instead of skipping because CI is set)", pytrace=False)
    losses = {}
    for nprocs, launcher in runs.items():
        out_dir = tmp_path / f"ranks{nprocs}"
        out = _run([*launcher, *args, "--out", str(out_dir)])
        assert f"{nprocs} rank(s)" in out, out
        losses[nprocs] = np.loadtxt(out_dir / "losses.txt")
    assert losses[1].shape == (4,) and losses[1][-1] < losses[1][0], losses[1]  # it learns
    for nprocs, got in losses.items():
        np.testing.assert_allclose(got, losses[1], rtol=1e-10, err_msg=f"losses at {nprocs} ranks")
