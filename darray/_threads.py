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

The user's choice wins: any of :data:`THREAD_VARIABLES` set in the
environment leaves the pools alone, as does ``DARRAY_THREADS=0``;
``DARRAY_THREADS=<n>`` sets ``n`` threads per rank. ``darray info`` shows what
was applied (:data:`applied`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

__all__ = ["THREAD_VARIABLES", "applied", "cores", "local_ranks", "local_ranks_from_environment", "oversubscribed",
           "plan_threads", "settle_threads"]

#: Environment variables by which users (or batch systems) choose thread counts themselves.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
#: Launcher variables holding the number of ranks on this node (MPICH/Hydra, Open MPI, MVAPICH, Cray PALS).
_LOCAL_SIZE_VARIABLES = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE",
                         "PALS_LOCAL_SIZE", "PMI_LOCAL_SIZE")

#: Threads per rank that darray set (None: it left the pools alone).
applied: int | None = None
#: Ranks of the job on this node, as settle_threads found them (None before it ran).
local_ranks: int | None = None


def local_ranks_from_environment(environ: Mapping[str, str] = os.environ) -> int | None:
    """Ranks on this node according to the MPI launcher's environment, or None when it does not say."""
    for name in _LOCAL_SIZE_VARIABLES:
        value = environ.get(name, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return None


def plan_threads(local_ranks: int, cores: int, environ: Mapping[str, str] = os.environ) -> int | None:
    """Threads per rank darray should set, or None to leave the pools alone.

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
    """
    chosen = environ.get("DARRAY_THREADS", "").strip()
    if chosen:
        if not chosen.isdigit():
            raise ValueError(f"darray: environment variable DARRAY_THREADS must be a non-negative integer; "
                             f"got {chosen!r}")
        return int(chosen) or None
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
    global applied, local_ranks
    local = local_ranks_from_environment()
    if local is None:
        from mpi4py import MPI

        shared = mpi_comm.Split_type(MPI.COMM_TYPE_SHARED)
        local = shared.Get_size()
        shared.Free()
    local_ranks = local
    threads = plan_threads(local, _cores())
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
    return threads
