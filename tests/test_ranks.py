"""The distributed suite: every ``mpi`` test, once per rank count, one mpiexec each.

(Except where tests/conftest.py selects per rank count: ``mpi(ranks=...)``, and
the (dtype, layout) grids thinned at 3 and 4 ranks, ``THIN_PAIRS_AT``.)

Extra pytest arguments for the distributed runs (e.g. ``-k halo -x``) can be
given in ``DARRAY_TEST_MPI_ARGS``; ``--hypothesis-profile`` is passed on.
"""

import os
import re
import shlex
import time
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
_SUMMARY = re.compile(r"^=*\s*(\d+ \w+(?:, \d+ \w+)*) in [\d.]+s\b", re.MULTILINE)
_WARNINGS = re.compile(r", \d+ warnings?")


@pytest.mark.parametrize("nprocs", [2, 3, 4])
def test_distributed_suite(nprocs, mpiexec_pytest, stage_lines, request):
    args = ["-m", "mpi", *shlex.split(os.environ.get("DARRAY_TEST_MPI_ARGS", ""))]
    profile = request.config.getoption("hypothesis_profile", None)
    if profile:
        args.append(f"--hypothesis-profile={profile}")
    start = time.monotonic()
    rc, out = mpiexec_pytest(nprocs, [*args, str(TESTS_DIR)], cwd=request.config.rootpath)
    # Every rank prints its closing line; with agreed verdicts they are equal.
    # (ranks may count different warnings: the counts of tests, which agree, say it once)
    summaries = [_WARNINGS.sub("", found) for found in _SUMMARY.findall(out)]
    summary = " | ".join(dict.fromkeys(summaries)) or "no summary line found"
    stage_lines.append(f"darray stage  mpiexec -n {nprocs}  {summary} in {time.monotonic() - start:.0f} s"
                       + ("" if rc == 0 else f" (exit status {rc})"))
    if rc != 0:
        pytest.fail(f"mpiexec -n {nprocs} pytest -m mpi exited {rc}; output tail:\n{out[-8000:]}", pytrace=False)
