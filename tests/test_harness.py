"""Self-checks of the test harness (tests/conftest.py); they use mpi4py only."""

import os
import re
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

pytestmark = pytest.mark.numpy_only(reason="launches its own jobs to test process-level behaviour, which the "
                                           "local block library plays no part in: run in the NumPy stage")


def test_outer_run_is_not_a_child():
    assert "DARRAY_TEST_CHILD" not in os.environ


@pytest.mark.mpi
def test_every_rank_takes_part():
    MPI = pytest.importorskip("mpi4py.MPI")
    comm = MPI.COMM_WORLD
    assert comm.allreduce(1) == comm.size


@pytest.mark.mpi
@given(st.lists(st.integers(), max_size=5))
def test_every_rank_draws_the_same_examples(xs):
    MPI = pytest.importorskip("mpi4py.MPI")
    assert all(drawn == xs for drawn in MPI.COMM_WORLD.allgather(xs))


def test_a_failure_on_one_rank_fails_every_rank(mpiexec_pytest, pytester):
    """Rank 0's report (the only full one) must show a failure on rank 1."""
    pytester.makeini("[pytest]\nmarkers = mpi\n")
    pytester.makeconftest((Path(__file__).parent / "conftest.py").read_text())
    pytester.makepyfile(
        test_serial="def test_serial_is_deselected():\n    pass\n",
        test_distributed=textwrap.dedent("""
            import pytest
            from mpi4py import MPI

            pytestmark = pytest.mark.mpi

            def test_fails_on_the_last_rank():
                comm = MPI.COMM_WORLD
                assert comm.rank != comm.size - 1, "boom on the last rank"

            def test_passes_everywhere():
                MPI.COMM_WORLD.Barrier()
        """),
    )
    rc, out = mpiexec_pytest(2, ["-m", "mpi"], cwd=pytester.path)
    assert rc != 0, out
    assert out.count("1 failed, 1 passed, 1 deselected in") == 2, out  # both ranks agree
    assert "call failed on rank(s) [1] of 2" in out, out
    assert "boom on the last rank" in out, out


@pytest.mark.parametrize("nprocs, ran", [
    (2, ["only_at_two", "grid[f4-a]", "grid[f4-b]", "grid[f8-a]", "grid[f8-b]", "grid[c8-a]", "grid[c8-b]"]),
    (3, ["grid[f4-a]", "grid[f8-b]", "grid[c8-a]"]),  # every dtype and every layout once
])
def test_what_each_rank_count_runs(mpiexec_pytest, pytester, nprocs, ran):
    """``mpi(ranks=(2,))`` runs at 2 ranks only; a (dtype, layout) grid runs whole at 2 ranks, a covering
    subset at 3 and 4 (tests/conftest.py THIN_PAIRS_AT), the same on every rank."""
    pytester.makeini("[pytest]\nmarkers = mpi\n")
    pytester.makeconftest((Path(__file__).parent / "conftest.py").read_text())
    pytester.makepyfile(test_selection=textwrap.dedent("""
        import pytest

        pytestmark = pytest.mark.mpi

        @pytest.mark.mpi(ranks=(2,))
        def test_only_at_two():
            pass

        @pytest.mark.parametrize("layout", ["a", "b"])
        @pytest.mark.parametrize("dtype", ["f4", "f8", "c8"])
        def test_grid(dtype, layout):
            pass
    """))
    rc, out = mpiexec_pytest(nprocs, ["-m", "mpi", "-rA"], cwd=pytester.path)
    assert rc == 0, out
    # (rank 0's report; a quiet rank's progress may end without a newline just before one of its lines)
    assert sorted(re.findall(r"PASSED test_selection\.py::test_(\S+)", out)) == sorted(ran), out
    assert f"{len(ran)} passed{f', {7 - len(ran)} deselected' if len(ran) < 7 else ''} in" in out, out
