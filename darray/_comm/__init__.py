"""Transports: ``self`` (one process), ``mpi`` (mpi4py), ``nccl`` (CuPy NCCL over MPI).

:func:`default_communicator` picks one once per process: ``DARRAY_TRANSPORT``
if set, else ``mpi`` when an MPI launcher started this process (or mpi4py is
already initialised), else ``self``. No MPI is imported in the ``self`` case.
"""

from __future__ import annotations

import importlib.util
import os
import sys

from .base import REDUCE_OPS, Communicator, DoneRequest, Region, Request
from .self_ import SelfCommunicator

__all__ = ["Communicator", "DoneRequest", "REDUCE_OPS", "Region", "Request", "SelfCommunicator",
           "available_transports", "default_communicator", "launched_by_mpi", "make_communicator",
           "resolve_comm", "set_default_communicator"]

#: Environment variables that MPI launchers (MPICH/Hydra, Open MPI, PMIx, Slurm) set.
_LAUNCHER_VARS = ("PMI_SIZE", "PMI_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS", "PMI_FD")

_default: Communicator | None = None


def available_transports() -> dict[str, bool]:
    """Which transports could be used here (nothing is imported)."""
    has_mpi = importlib.util.find_spec("mpi4py") is not None
    has_cupy = importlib.util.find_spec("cupy") is not None
    return {"self": True, "mpi": has_mpi, "nccl": has_mpi and has_cupy}


def launched_by_mpi() -> bool:
    """True when an MPI launcher started this process or mpi4py is already initialised."""
    if any(v in os.environ for v in _LAUNCHER_VARS):
        return True
    mpi = sys.modules.get("mpi4py.MPI")
    return bool(mpi is not None and mpi.Is_initialized())


def make_communicator(name: str) -> Communicator:
    """Create a communicator over all processes with transport ``name``."""
    if name == "self":
        from .._threads import settle_threads_alone

        settle_threads_alone()  # one process on a loaded machine: the pools must not fight the other jobs
        return SelfCommunicator()
    if name in ("mpi", "nccl"):
        if importlib.util.find_spec("mpi4py") is None:
            raise ImportError(f"darray: transport {name!r} needs mpi4py; install it with pip install 'darray[mpi]'")
        from .._threads import oversubscribed, settle_threads
        from . import watch
        from .failure import install_abort_hook
        from .mpi import MPICommunicator

        comm = MPICommunicator()
        install_abort_hook(comm)
        settle_threads(comm.comm)  # ranks sharing a node must not each start node-wide thread pools
        watch.share_cores(oversubscribed())
        if name == "nccl":
            from .nccl import NCCLCommunicator

            return NCCLCommunicator(comm)
        return comm
    raise ValueError(f"darray: unknown transport; got {name!r}, expected one of 'self', 'mpi', 'nccl'")


def default_communicator() -> Communicator:
    """The process-wide communicator darray arrays use unless given another."""
    global _default
    if _default is None:
        name = os.environ.get("DARRAY_TRANSPORT", "").strip().lower()
        if not name:
            name = "mpi" if launched_by_mpi() and available_transports()["mpi"] else "self"
        _default = make_communicator(name)
    return _default


def resolve_comm(comm: Communicator | None) -> Communicator:
    """``comm``, or the default communicator when it is None (the ``comm=`` argument of public functions)."""
    return default_communicator() if comm is None else comm


def set_default_communicator(comm: Communicator) -> None:
    """Use ``comm`` for arrays created from now on (e.g. a sub-communicator)."""
    global _default
    _default = comm
