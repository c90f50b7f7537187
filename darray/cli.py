"""The ``darray`` command: ``darray info``, ``darray run``, ``darray demo``, ``darray bench``.

Each subcommand is one entry in :data:`COMMANDS`: a help line, a function that
adds its arguments to its parser, and a function that runs it and returns the
exit status. mpi4py is imported only inside the commands that need it.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
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


def _threads_per_rank() -> str:
    from darray import _threads

    chosen = [f"{name}={os.environ[name]}" for name in _threads.THREAD_VARIABLES if os.environ.get(name)]
    darray.default_communicator()  # creating it settles the threads (under mpiexec every rank runs info)
    load = f"load average {os.getloadavg()[0]:.1f} on {_threads.cores()} cores" if hasattr(os, "getloadavg") else ""
    if _threads.applied is not None:
        why = {"ranks": f"for the {_threads.local_ranks} ranks sharing this node",
               "load": f"for one process on a loaded machine: {load}",
               "DARRAY_THREADS": "from DARRAY_THREADS"}.get(_threads.reason or "", "")
        return f"{_threads.applied} (set by darray {why}; DARRAY_THREADS to choose)"
    if chosen:
        return ", ".join(chosen)
    return (f"libraries' defaults (one rank on this node; machine not loaded: {load}; darray limits them when the "
            f"load average is {_threads.LOADED} or more)")


#: The optional libraries ``darray info`` reports, each with the distributions that provide it (the extras of
#: ``pip install "darray[...]"``; mpi4py has its own rows).
OPTIONAL_STACK = {"dask": ("dask",), "xarray": ("xarray",), "zarr": ("zarr",), "h5py": ("h5py",),
                  "torch": ("torch",), "cupy": ("cupy", "cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x"),
                  "scipy": ("scipy",), "matplotlib": ("matplotlib",), "tqdm": ("tqdm",),
                  "threadpoolctl": ("threadpoolctl",)}


def _installed_version(distributions: tuple[str, ...]) -> str:
    """The version of the first installed distribution of ``distributions``, or "not installed"."""
    for name in distributions:
        version = _package_version(name)
        if version != "not installed":
            return version
    return "not installed"


def _lean_paths() -> str:
    """Whether the operators' and indexing's lean paths run compiled (darray._core._lean) or in Python, and why."""
    from darray._core import compiled

    if compiled.lean is not None:
        return "compiled (darray._core._lean)"
    if compiled.pure_python_requested():
        return "Python (DARRAY_PURE_PYTHON is set)"
    return "Python (darray._core._lean was not built: no C compiler when darray was installed)"


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
        ("threads per rank", _threads_per_rank()),
        ("lean paths", _lean_paths()),
        *((name, _installed_version(dists)) for name, dists in OPTIONAL_STACK.items()),
    ]
    if rank == 0:  # under mpiexec, one report
        width = max(len(key) for key, _ in rows)
        for key, value in rows:
            print(f"{key + ':':<{width + 1}} {value}")
    return 0


# -------------------------------------------------------------- run / demo --
def _find_mpiexec() -> str | None:
    import shutil
    from pathlib import Path

    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


def _launch(nprocs: int, argv: list[str]) -> int:
    """Run ``python argv...`` on ``nprocs`` ranks through mpi4py's runner; forward signals; return the exit code.

    ``python -m mpi4py`` aborts the whole job when any rank raises, so a
    failure never leaves the other ranks waiting; a rank that leaves early is
    reported by the ranks that wait for it (``RanksLeft``). Ctrl-C reaches
    every rank and ends the job with one line from one rank.
    """
    import os
    import signal
    import subprocess

    mpiexec = _find_mpiexec()
    if mpiexec is None:
        print("darray: no mpiexec found; install MPI with pip install 'darray[mpi]'", file=sys.stderr)
        return 127
    command = [mpiexec, "-n", str(nprocs), sys.executable, "-m", "mpi4py", *argv]
    child = subprocess.Popen(command, start_new_session=True)

    interrupted = []

    def forward(signum, _frame):
        interrupted.append(signum)
        try:
            os.killpg(child.pid, signum)
        except ProcessLookupError:
            pass

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        code = child.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if code != 0 and not interrupted:  # Ctrl-C: the interrupted rank said so in one line already
        print(f"darray: the job on {nprocs} rank(s) exited with status {code} (its report is above)",
              file=sys.stderr)
    return code


def _configure_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-n", "--np", dest="nprocs", type=int, default=2, help="number of ranks (default 2)")
    parser.add_argument("script", help="Python script to run on every rank")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")


def _run(args: argparse.Namespace) -> int:
    if args.nprocs < 1:
        print(f"darray run: -n must be at least 1; got {args.nprocs}", file=sys.stderr)
        return 2
    if args.script not in ("-", "-m", "-c") and not os.path.isfile(args.script):
        # (else every rank's mpi4py runner prints its own traceback for the missing file)
        print(f"darray run: no such script: {args.script}"
              f"{' (a directory)' if os.path.isdir(args.script) else ''}", file=sys.stderr)
        return 2
    return _launch(args.nprocs, [args.script, *args.args])


def _under_mpi() -> bool:
    from darray._comm import launched_by_mpi

    return launched_by_mpi()


def _configure_demo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--ranks", type=int, default=None,
                        help="ranks to launch (default: 2 when MPI is installed, else 1)")
    parser.add_argument("--size", type=int, default=1024, help="field is SIZE x SIZE (default 1024)")
    parser.add_argument("--steps", type=int, default=200, help="simulation steps (default 200)")
    parser.add_argument("--train-steps", type=int, default=100, help="surrogate training steps (default 100)")
    parser.add_argument("--out", default=None,
                        help="folder for the field and the PNGs (default: darray/demo in the user's cache, "
                             "e.g. ~/.cache/darray/demo; the path is printed)")


def _demo(args: argparse.Namespace) -> int:
    from darray._comm import available_transports

    ranks = args.ranks if args.ranks is not None else (2 if available_transports()["mpi"] and _find_mpiexec()
                                                       else 1)
    if ranks > 1 and not _under_mpi():
        return _launch(ranks, ["-m", "darray.cli", "demo", "--ranks", str(ranks), "--size", str(args.size),
                               "--steps", str(args.steps), "--train-steps", str(args.train_steps),
                               *(["--out", args.out] if args.out else [])])
    from darray.demo import run_demo

    run_demo(size=args.size, steps=args.steps, out_dir=args.out, train_steps=args.train_steps)
    return 0


# ---------------------------------------------------------------- explain --
def _configure_explain(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shape", type=int, nargs="+", help="global shape, e.g. 4096 4096")
    parser.add_argument("-n", "--np", dest="nprocs", type=int, default=2, help="number of ranks (default 2)")
    parser.add_argument("--split", default="auto",
                        help="cut axes: 'auto', 'none', an axis or comma-separated axes per grid dim (e.g. 0,1)")
    parser.add_argument("--grid", default=None, help="grid dims, comma-separated (e.g. 2,2)")
    parser.add_argument("--halo", type=int, default=1, help="ghost width on every axis (default 1)")
    parser.add_argument("--boundary", default="none", help="none, periodic, reflect, nearest (default none)")
    parser.add_argument("--itemsize", type=int, default=8, help="bytes per element (default 8, float64)")


def _ints(text: str) -> tuple:
    return tuple(None if t.strip().lower() == "none" else int(t) for t in text.split(","))


def _explain(args: argparse.Namespace) -> int:
    """``--grid`` alone (``--split auto``) cuts the axes that suit the grid; bad options print one line."""
    split = args.split if args.split == "auto" else (None if args.split.lower() == "none" else _ints(args.split))
    if isinstance(split, tuple) and len(split) == 1:
        split = split[0]
    try:
        grid = _ints(args.grid) if args.grid else None
        text = darray.explain(tuple(args.shape), nprocs=args.nprocs, split=split, grid=grid, halo=args.halo,
                              boundary=args.boundary, itemsize=args.itemsize)
    except (ValueError, TypeError) as error:  # bad options: one line, not a traceback
        said = str(error)
        print(f"darray {said if said.startswith('explain') else 'explain: ' + said}", file=sys.stderr)
        return 2
    print(text)
    return 0


COMMANDS: dict[str, Command] = {
    "explain": Command("predict a layout's halo exchange before running (darray.explain)", _configure_explain,
                       _explain),
    "info": Command("show versions, MPI, transports, backends and devices", lambda parser: None, _info),
    "run": Command("run a script on N ranks (mpiexec through mpi4py's runner)", _configure_run, _run),
    "demo": Command("the main job: simulate, check, train and trace a field split over ranks", _configure_demo,
                    _demo),
    "bench": Command("time the workloads against NumPy, Dask and mpi4py on 1 and 2 ranks; write a Markdown table",
                     lambda parser: importlib.import_module("darray.bench").configure(parser),
                     lambda args: importlib.import_module("darray.bench").run(args)),
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
