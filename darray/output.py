"""What each rank prints (``darray.print``, ``darray.rank0``, ``DARRAY_PRINT=rank0``), progress, and where commands write.

Under ``mpiexec -n 4 python job.py`` every rank runs the whole script, so a
plain ``print(float(np.sum(u)))`` prints four times, the lines interleaved.
That stays the default: ``print`` is Python's, darray does not change what a
process writes behind the user's back, and per-rank output is what one wants
while debugging a rank that misbehaves. The conventional fixes:

- :func:`print` -- ``darray.print(...)`` prints once, on rank 0 (every rank
  still evaluates the arguments, so collectives inside them stay collective);
- :func:`rank0` -- ``with darray.rank0(): ...`` discards standard output of the
  other ranks inside the block;
- ``DARRAY_PRINT=rank0`` in the environment: ranks other than 0 discard their
  standard output for the whole run, from ``import darray`` on (the rank is
  read from the MPI launcher's environment, so nothing is initialised early).
  Standard error is never silenced: errors and warnings still name their rank.

Examples
--------
>>> import darray as da
>>> da.print("total:", float(da.sum(da.ones(4))))
total: 4.0
>>> with da.rank0():
...     print("once")
once
"""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["print", "rank0", "launcher_rank", "default_out_dir", "progress", "PRINT_ENV"]

#: The environment variable that silences standard output on ranks other than 0 (value ``rank0``).
PRINT_ENV = "DARRAY_PRINT"

#: Variables in which MPI launchers (Hydra/MPICH, Open MPI, PMIx, Slurm) give each process its rank.
_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "MV2_COMM_WORLD_RANK")


def launcher_rank() -> int | None:
    """This process's rank as its MPI launcher set it in the environment, or None when not launched so.

    >>> launcher_rank() is None or launcher_rank() >= 0
    True
    """
    for name in _RANK_VARS:
        value = os.environ.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return None


def _rank(func: str, comm) -> int:
    from ._comm import Communicator, default_communicator
    from ._errors import message

    if comm is None:
        return default_communicator().rank
    if not isinstance(comm, Communicator):
        raise TypeError(message(func, "comm is not a darray communicator", type(comm).__name__,
                                "None or a darray.Communicator"))
    return comm.rank


def print(*args, root: int = 0, comm=None, **kwargs) -> None:  # named after what it replaces
    """``builtins.print(*args, **kwargs)`` on rank ``root`` of ``comm`` only (default: rank 0 of all ranks).

    The arguments are evaluated on every rank before the call (as for any
    Python function), so ``darray.print(float(da.sum(x)))`` keeps the sum
    collective. ``file=`` and the other keywords are :func:`builtins.print`'s.
    """
    if _rank("print", comm) == root:
        builtins.print(*args, **kwargs)


@contextlib.contextmanager
def rank0(comm=None) -> Iterator[None]:
    """Inside the block, ranks other than 0 discard what they write to standard output.

    Standard error is kept. Nested uses and ``DARRAY_PRINT=rank0`` compose.
    """
    if _rank("rank0", comm) == 0:
        yield
        return
    with contextlib.redirect_stdout(io.StringIO()):
        yield


def _silence_if_asked() -> None:
    """Apply ``DARRAY_PRINT=rank0`` at import: a rank > 0 writes its standard output to the null device."""
    mode = os.environ.get(PRINT_ENV, "").strip().lower()
    if mode in ("", "all"):
        return
    if mode != "rank0":
        raise ValueError(f"darray: environment variable {PRINT_ENV} must be 'rank0' or 'all'; got {mode!r}")
    rank = launcher_rank()
    if rank:  # None (not under a launcher) or 0: keep standard output
        sys.stdout.flush()
        sys.stdout = open(os.devnull, "w")  # lives as long as the process


def default_out_dir(command: str) -> Path:
    """Where a darray command writes when not given ``--out``: ``<user cache>/darray/<command>``.

    The user cache is ``$XDG_CACHE_HOME`` or ``~/.cache``; never the current
    directory (a command must not litter the folder it was started in).

    >>> default_out_dir("demo").parts[-2:]
    ('darray', 'demo')
    """
    cache = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "darray" / command


def progress(iterable: Iterable, description: str, *, enabled: bool = True) -> Iterable:
    """``iterable``, showing progress on standard error when ``enabled`` (pass it on one rank only).

    A tqdm bar when tqdm is installed, else a line at every quarter.
    """
    if not enabled:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _quarters(iterable, description)
    return tqdm(iterable, desc=f"  {description}", leave=False, file=sys.stderr)


def _quarters(iterable: Iterable, description: str) -> Iterator:
    items = list(iterable)
    marks = {len(items) * q // 4 for q in (1, 2, 3, 4)}
    for i, item in enumerate(items, 1):
        yield item
        if i in marks:
            builtins.print(f"  {description}: {i}/{len(items)}", file=sys.stderr, flush=True)
