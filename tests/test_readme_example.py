"""The README's example: the text the README shows, and its three runs (NumPy, darray, hand-written) agreeing."""

from __future__ import annotations

import re
from pathlib import Path

import numpy
import pytest

import darray as da
from darray.readme_example import SOURCE, hand_written, run
from darray.testing import assert_equal

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_shows_the_benchmarked_source():
    block = re.search(r"```python\n(import darray as np.*?)```", README.read_text(), re.S).group(1)
    body = "\n".join(line for line in block.splitlines()[1:] if not line.startswith("print("))
    assert body.strip() + "\n" == SOURCE.format(n=4096, iters=100).rstrip("\n").replace("\n\n", "\n") + "\n"


@pytest.mark.mpi
@pytest.mark.parametrize("n", [13, 40])
def test_darray_run_equals_numpy_run(n):
    want = run(numpy, n, 3)
    assert_equal(run(da, n, 3), want, rtol=1e-12)


@pytest.mark.mpi
def test_hand_written_equals_numpy_run(comm):
    if getattr(comm, "comm", None) is None:  # importing mpi4py here would make MPI the in-process default transport
        pytest.skip("the hand-written version runs under mpiexec (an mpi4py communicator)")
    mpi = comm.comm
    n = 40
    rows, where = hand_written(mpi, n, 3)
    numpy.testing.assert_allclose(rows, run(numpy, n, 3)[where], rtol=1e-12)
