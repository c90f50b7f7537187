"""The ``darray`` command: ``darray info`` (and later ``run``, ``demo``, ``bench``).

Each subcommand is one entry in :data:`COMMANDS`: a help line, a function that
adds its arguments to its parser, and a function that runs it and returns the
exit status. mpi4py is imported only inside the commands that need it.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import platform
import sys
from collections.abc import Callable
from typing import NamedTuple

import darray


class Command(NamedTuple):
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# ------------------------------------------------------------------- info --
def _package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _mpi_facts() -> tuple[list[tuple[str, str]], int]:
    """(rows about the MPI library, this process's rank); rank 0 without MPI."""
    try:
        from mpi4py import MPI
    except ImportError:
        return [("mpi4py", "not installed")], 0
    import mpi4py

    library = " ".join(MPI.Get_library_version().strip().splitlines()[0].split())
    return [
        ("mpi4py", mpi4py.__version__),
        ("MPI library", library),
        ("MPI CUDA-aware", _cuda_aware(MPI)),
        ("ranks", str(MPI.COMM_WORLD.Get_size())),
    ], MPI.COMM_WORLD.Get_rank()


def _cuda_aware(MPI) -> str:
    """``yes`` / ``no`` / ``unknown``: whether MPI takes CUDA device buffers."""
    query = getattr(MPI, "Query_cuda_support", None)  # MPIX_Query_cuda_support where mpi4py exposes it
    if query is not None:
        try:
            return "yes" if query() else "no"
        except NotImplementedError:
            pass
    # MPI 4.1 memory allocation kinds, e.g. "mpi,system,cuda:device"
    kinds = MPI.COMM_WORLD.Get_info().get("mpi_memory_alloc_kinds")
    if kinds is not None:
        return "yes" if "cuda" in kinds else "no"
    return "unknown"


def _cuda_devices() -> str:
    try:
        import cupy
    except ImportError:
        return "0 (cupy not installed)"
    try:
        return str(cupy.cuda.runtime.getDeviceCount())
    except cupy.cuda.runtime.CUDARuntimeError as error:
        return f"0 ({error})"


def _available(module: str, function: str) -> str:
    """``a, b (missing: c)`` from ``darray.<module>.<function>() -> dict[str, bool]``."""
    try:
        found = getattr(importlib.import_module(f"darray.{module}"), function)()
    except (ImportError, AttributeError) as error:
        return f"unknown ({error})"
    yes = [name for name, ok in found.items() if ok]
    no = [name for name, ok in found.items() if not ok]
    return ", ".join(yes) + (f" (not installed: {', '.join(no)})" if no else "")


def _info(args: argparse.Namespace) -> int:
    mpi_rows, rank = _mpi_facts()
    rows = [
        ("darray", darray.__version__),
        ("Python", f"{platform.python_version()} ({sys.executable})"),
        ("numpy", _package_version("numpy")),
        ("array-api-compat", _package_version("array-api-compat")),
        *mpi_rows,
        ("transports", _available("_comm", "available_transports")),
        ("local backends", _available("_backend", "available_backends")),
        ("CUDA devices", _cuda_devices()),
    ]
    if rank == 0:  # under mpiexec, one report
        width = max(len(key) for key, _ in rows)
        for key, value in rows:
            print(f"{key + ':':<{width + 1}} {value}")
    return 0


COMMANDS: dict[str, Command] = {
    "info": Command("show versions, MPI, transports, backends and devices", lambda parser: None, _info),
}


# ------------------------------------------------------------------- main --
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="darray", description="darray: distributed n-d arrays over MPI ranks.")
    parser.add_argument("--version", action="version", version=f"darray {darray.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, command in COMMANDS.items():
        command.configure(sub.add_parser(name, help=command.help, description=command.help))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return COMMANDS[args.command].run(args)


if __name__ == "__main__":
    sys.exit(main())
