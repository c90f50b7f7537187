"""Threads per rank: ranks sharing a node must not each start thread pools as wide as the node.

NumPy's BLAS (OpenBLAS, MKL, BLIS), OpenMP code and torch size their thread
pools to every core of the machine. Under ``mpiexec -n P`` with several ranks
on one node, each rank starts such a pool and the pools fight for the same
cores: on the 2-core development machine one training step of the surrogate
model took 330 ms on 2 ranks, against 18 ms with one thread per rank
(``darray bench --only surrogate``).

When darray creates its MPI communicator it counts the ranks on this node
(the launcher's environment, else an MPI shared-memory split) and, unless the
user chose a thread count, limits those pools to ``cores // local ranks``
(at least 1) with threadpoolctl, torch's ``set_num_threads`` when torch is
loaded, and ``OMP_NUM_THREADS`` etc. for libraries loaded later.

On one process (no MPI, or one rank on its node) the same rule holds when
the machine is loaded: the other processes keeping cores busy count as
ranks sharing the node, from the 1-minute load average (rounded). With a
load of at least :data:`LOADED` the pools get ``cores // (1 + load)``
threads (at least 1). On the 2-core development machine at a load average
of 10.5, a training step of the surrogate net at 256² took 930 ms with the
default pools, 221 ms with this rule (``python benchmarks/bench_train.py
--n 256 --steps 5``, with and without ``DARRAY_THREADS=0``). On a quiet
machine the pools stay at their libraries' defaults.

The user's choice wins: any of :data:`THREAD_VARIABLES` set in the
environment leaves the pools alone, as does ``DARRAY_THREADS=0``;
``DARRAY_THREADS=<n>`` sets ``n`` threads per rank. ``darray info`` shows what
was applied (:data:`applied`, :data:`reason`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

__all__ = ["THREAD_VARIABLES", "LOADED", "applied", "cores", "reason", "local_ranks", "local_ranks_from_environment",
           "oversubscribed", "other_load", "plan_threads", "settle_threads", "settle_threads_alone"]

#: Environment variables by which users (or batch systems) choose thread counts themselves.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
#: Launcher variables holding the number of ranks on this node (MPICH/Hydra, Open MPI, MVAPICH, Cray PALS).
_LOCAL_SIZE_VARIABLES = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE",
                         "PALS_LOCAL_SIZE", "PMI_LOCAL_SIZE")

#: Threads per rank that darray set (None: it left the pools alone).
applied: int | None = None
#: Why: ``"ranks"`` (ranks sharing the node), ``"load"`` (one process on a loaded machine), ``"DARRAY_THREADS"``.
reason: str | None = None
#: The 1-minute load average (rounded) from which one process counts as sharing its machine.
LOADED = 1
#: Ranks of the job on this node, as settle_threads found them (None before it ran).
local_ranks: int | None = None


def local_ranks_from_environment(environ: Mapping[str, str] = os.environ) -> int | None:
    """Ranks on this node according to the MPI launcher's environment, or None when it does not say."""
    for name in _LOCAL_SIZE_VARIABLES:
        value = environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return None


def plan_threads(local_ranks: int, cores: int, environ: Mapping[str, str] = os.environ,
                 load: int = 0) -> int | None:
    """Threads per rank darray should set, or None to leave the pools alone.

    ``load``: on one process, the other processes busy on the machine (the
    rounded load average), counted as ranks sharing it.

    Examples
    --------
    >>> plan_threads(2, 16, {})
    8
    >>> plan_threads(4, 2, {})
    1
    >>> plan_threads(1, 16, {}) is None
    True
    >>> plan_threads(4, 16, {"OMP_NUM_THREADS": "2"}) is None
    True
    >>> plan_threads(4, 16, {"DARRAY_THREADS": "3"})
    3
    >>> plan_threads(1, 2, {}, load=2), plan_threads(1, 16, {}, load=1), plan_threads(1, 16, {}, load=0)
    (1, 8, None)
    """
    chosen = environ.get("DARRAY_THREADS", "").strip()
    if chosen:
        if not chosen.isdigit():
            raise ValueError(f"darray: environment variable DARRAY_THREADS must be a non-negative integer; "
                             f"got {chosen!r}")
        return int(chosen) or None
    if local_ranks <= 1 and load >= LOADED:
        local_ranks = 1 + load
    if any(environ.get(name, "").strip() for name in THREAD_VARIABLES) or local_ranks <= 1:
        return None
    return max(1, cores // local_ranks)


def oversubscribed() -> bool:
    """More ranks on this node than cores for them (``mpiexec -n 4`` on 2 cores): waits must yield the core."""
    return local_ranks is not None and local_ranks > _cores()


def cores() -> int:
    """Cores this process may run on (its CPU affinity, else the machine's count)."""
    return _cores()


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def settle_threads(mpi_comm) -> int | None:
    """Limit this rank's thread pools for the ranks sharing its node (see the module docstring).

    ``mpi_comm`` is the mpi4py communicator of all ranks; it is only used
    (collectively) when the launcher's environment does not give the number
    of ranks on this node. Returns the threads per rank set, or None.
    """
    global local_ranks
    local = local_ranks_from_environment()
    if local is None:
        from mpi4py import MPI

        shared = mpi_comm.Split_type(MPI.COMM_TYPE_SHARED)
        local = shared.Get_size()
        shared.Free()
    local_ranks = local
    if local == 1:  # one rank on this node: the rule of one process
        return _apply(plan_threads(1, _cores(), load=other_load()), "load")
    return _apply(plan_threads(local, _cores()), "ranks")


def other_load() -> int:
    """Processes keeping this machine busy besides this one: the 1-minute load average, rounded (0 if unknown)."""
    try:
        return int(round(os.getloadavg()[0]))
    except (AttributeError, OSError):
        return 0


def settle_threads_alone() -> int | None:
    """One process (no MPI): limit the pools when the machine is loaded (see the module docstring)."""
    global local_ranks
    local_ranks = 1
    return _apply(plan_threads(1, _cores(), load=other_load()), "load")


def _apply(threads: int | None, why: str | None) -> int | None:
    global applied, reason
    if threads is None:
        return None
    for name in THREAD_VARIABLES:  # for libraries loaded from now on
        os.environ.setdefault(name, str(threads))
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with darray[mpi]
        pass
    else:
        threadpool_limits(limits=threads)  # BLAS and OpenMP pools already loaded (NumPy's)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
    applied = threads
    reason = "DARRAY_THREADS" if os.environ.get("DARRAY_THREADS", "").strip() else why
    return threads
