"""Threads per rank (darray._threads): ranks sharing a node get cores // local ranks threads, unless the user chose."""

from __future__ import annotations

import os

import pytest

import darray as da
from darray import _threads
from darray.testing import agree

pytestmark = pytest.mark.mpi


@pytest.mark.parametrize("local, cores, env, want", [
    (1, 8, {}, None), (2, 8, {}, 4), (3, 8, {}, 2), (16, 8, {}, 1), (4, 2, {}, 1),
    (4, 8, {"OMP_NUM_THREADS": "8"}, None), (4, 8, {"OPENBLAS_NUM_THREADS": "1"}, None),
    (4, 8, {"OMP_NUM_THREADS": " "}, 2), (4, 8, {"DARRAY_THREADS": "3"}, 3), (4, 8, {"DARRAY_THREADS": "0"}, None),
    (1, 8, {"DARRAY_THREADS": "5"}, 5), (4, 8, {"DARRAY_THREADS": "2", "OMP_NUM_THREADS": "8"}, 2),
])
def test_plan_threads(local, cores, env, want):
    assert _threads.plan_threads(local, cores, env) == want


@pytest.mark.parametrize("cores, load, env, want", [
    (2, 0, {}, None), (16, 0, {}, None),             # a quiet machine: the libraries' defaults
    (2, 1, {}, 1), (2, 5, {}, 1), (16, 1, {}, 8), (16, 3, {}, 4), (64, 1, {}, 32),
    (2, 4, {"OMP_NUM_THREADS": "2"}, None),           # the user's choice wins
    (2, 4, {"DARRAY_THREADS": "2"}, 2), (16, 4, {"DARRAY_THREADS": "0"}, None),
])
def test_one_process_on_a_loaded_machine_counts_the_load_as_ranks(cores, load, env, want):
    assert _threads.plan_threads(1, cores, env, load=load) == want


def test_settle_threads_alone_limits_the_pools_when_loaded(monkeypatch):
    """What a one-process run does when its communicator is made: the pools get cores // (1 + load)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    for name in (*_threads.THREAD_VARIABLES, "DARRAY_THREADS"):
        monkeypatch.delenv(name, raising=False)
    for name in ("applied", "reason", "local_ranks"):
        monkeypatch.setattr(_threads, name, getattr(_threads, name))
    before = [pool["num_threads"] for pool in threadpool_info()]
    monkeypatch.setattr(_threads, "_cores", lambda: 4)
    monkeypatch.setattr(_threads, "other_load", lambda: 1)
    try:
        assert _threads.settle_threads_alone() == 2
        assert (_threads.applied, _threads.reason) == (2, "load")
        assert os.environ["OMP_NUM_THREADS"] == "2"
        assert all(pool["num_threads"] <= 2 for pool in threadpool_info())
        monkeypatch.setattr(_threads, "applied", None)
        monkeypatch.setattr(_threads, "other_load", lambda: 0)
        monkeypatch.delenv("OMP_NUM_THREADS")
        assert _threads.settle_threads_alone() is None and _threads.applied is None
    finally:
        threadpool_limits(limits=max(before, default=1))  # (the pools as they were, for the tests after)


def test_bad_darray_threads_is_refused():
    with pytest.raises(ValueError, match="DARRAY_THREADS"):
        _threads.plan_threads(2, 8, {"DARRAY_THREADS": "many"})


def test_local_ranks_from_the_launchers_environment():
    assert _threads.local_ranks_from_environment({"MPI_LOCALNRANKS": "4"}) == 4
    assert _threads.local_ranks_from_environment({"OMPI_COMM_WORLD_LOCAL_SIZE": "2"}) == 2
    assert _threads.local_ranks_from_environment({"MPI_LOCALNRANKS": "x", "PALS_LOCAL_SIZE": "3"}) == 3
    assert _threads.local_ranks_from_environment({}) is None


def test_ranks_sharing_this_node_got_their_share_of_the_cores():
    """Under mpiexec (every rank of the suite on this machine): BLAS pools hold cores // ranks threads."""
    from threadpoolctl import threadpool_info

    comm = da.default_communicator()
    if comm.size == 1:  # one process: the libraries' defaults, or a share of a loaded machine
        assert _threads.applied is None or _threads.reason in ("load", "DARRAY_THREADS")
        return
    if _threads.applied is None:  # the launch environment chose thread counts itself (OMP_NUM_THREADS, ...)
        assert not agree(comm, any(os.environ.get(name, "").strip() for name in _threads.THREAD_VARIABLES))
        return
    want = _threads.plan_threads(comm.size, _threads._cores(), {})
    pools = [pool["num_threads"] for pool in threadpool_info()]
    ok = _threads.applied == want and all(n <= want for n in pools)
    assert not agree(comm, ok), (_threads.applied, want, pools)
