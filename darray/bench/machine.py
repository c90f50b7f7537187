"""What ``darray bench`` reports about the machine: CPU, memory, BLAS and its threads, versions, MPI, load.

Examples
--------
>>> facts = dict(machine({}))
>>> sorted(facts)[:3]
['BLAS', 'CPU', 'MPI library']
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re

import numpy as np

import darray

__all__ = ["loadavg", "machine", "mpi_facts"]


def mpi_facts() -> dict:
    """The mpi4py version and the MPI library's name (needs mpi4py)."""
    import mpi4py
    from mpi4py import MPI

    return {"mpi4py": mpi4py.__version__,
            "mpi_library": " ".join(MPI.Get_library_version().strip().splitlines()[0].split())}


def loadavg() -> str:
    """The load average over 1, 5 and 15 minutes, as text."""
    try:
        return ", ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


def _meminfo_gib() -> str:
    try:
        with open("/proc/meminfo") as fh:
            kb = int(re.search(r"MemTotal:\s+(\d+)", fh.read()).group(1))
        return f"{kb / 2 ** 20:.1f} GiB"
    except (OSError, AttributeError):
        return "unknown"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            m = re.search(r"model name\s*:\s*(.+)", fh.read())
        return m.group(1).strip() if m else platform.processor() or "unknown"
    except OSError:
        return platform.processor() or "unknown"


def _blas() -> str:
    parts = []
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg.get("Build Dependencies", {}).get("blas", {})
        if blas:
            parts.append(f"{blas.get('name', '?')} {blas.get('version', '')}".strip())
            if blas.get("openblas configuration"):
                parts.append(blas["openblas configuration"].strip())
    except Exception:  # older numpy: no mode="dicts"
        pass
    try:
        from threadpoolctl import threadpool_info

        for pool in threadpool_info():
            parts.append(f"{pool.get('internal_api')} {pool.get('version')} threads={pool.get('num_threads')}")
    except ImportError:
        parts.append("(threadpoolctl not installed: BLAS thread count unknown)")
    return "; ".join(parts) or "unknown"


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def machine(mpi_facts: dict) -> list[tuple[str, str]]:
    """The report's machine table: (what, value) rows; ``mpi_facts`` from :func:`mpi_facts` (or empty)."""
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count()
    env = ", ".join(f"{k}={os.environ[k]}" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
                    if k in os.environ) or "none set"
    return [
        ("CPU", f"{_cpu_model()}; nproc={os.cpu_count()} (usable {affinity})"),
        ("memory", _meminfo_gib()),
        ("OS", f"{platform.system()} {platform.release()} {platform.machine()}"),
        ("Python", platform.python_version()),
        ("numpy", np.__version__),
        ("BLAS", _blas()),
        ("thread variables", env),
        ("darray", getattr(darray, "__version__", "?")),
        ("dask", _version("dask")),
        ("mpi4py", mpi_facts.get("mpi4py", _version("mpi4py"))),
        ("MPI library", mpi_facts.get("mpi_library", "n/a")),
    ]

