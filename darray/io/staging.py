"""Stale staging entries of killed saves: list and remove them (:func:`clean_staging`).

Every save in :mod:`darray.io` (and :func:`darray.optim.save_checkpoint`)
writes through a private staging directory ``<name>.tmp-<random>`` next to
its target (:mod:`darray.io._atomic`). A job killed mid-save leaves that
directory behind. The next save to the same target removes the stale ones
itself; :func:`clean_staging` does it on request, with an age threshold of
your choice, or lists them (``dry_run=True``). The rules for what counts as
ours and stale are in :mod:`darray.io._stage_markers`.
"""

from __future__ import annotations

import datetime
import math
import numbers
import os
import warnings

import numpy as np

from .._comm import resolve_comm
from . import _stage_markers
from ._atomic import agree_targets
from ._common import collective

__all__ = ["clean_staging"]


def _seconds(func: str, older_than) -> float:
    if isinstance(older_than, datetime.timedelta):
        older_than = older_than.total_seconds()
    if isinstance(older_than, bool) or not isinstance(older_than, numbers.Real):
        raise TypeError(f"{func}: older_than must be a number of seconds or a datetime.timedelta; got "
                        f"{type(older_than).__name__}, expected e.g. 3600.0")
    value = float(older_than)
    if math.isnan(value) or value < 0:
        raise ValueError(f"{func}: older_than must be at least 0 seconds; got {older_than!r}, expected a number "
                         f">= 0 (math.inf: only stages of processes of this machine that are gone)")
    return value


def _bcast_lines(comm, lines: list[str] | None) -> list[str]:
    """Rank 0's ``lines`` (no NUL bytes) on every rank."""
    data = "\0".join(lines).encode("utf-8", "surrogateescape") if comm.rank == 0 else b""
    size = int(np.asarray(comm.bcast(np.asarray([len(data)], dtype=np.int64), 0))[0])
    if size == 0:
        return []
    buf = np.zeros(size, dtype=np.uint8)
    if comm.rank == 0:
        buf[:] = np.frombuffer(data, dtype=np.uint8)
    return bytes(np.asarray(comm.bcast(buf, 0))).decode("utf-8", "surrogateescape").split("\0")


def clean_staging(path, *, older_than=_stage_markers.STALE_AFTER, dry_run: bool = False, comm=None) -> list[str]:
    """Remove (or list) the stale staging entries that killed saves to ``path`` left behind (collective).

    A save writes into a private directory ``<name>.tmp-<random>`` next to
    ``path`` and renames it into place at the end; a job killed mid-save
    leaves that directory. Every save removes the stale ones of its own target
    before it starts; this function does it on request. Rank 0 inspects the
    directory of ``path``; every rank returns the same list.

    Only entries that darray provably made and that are provably stale are
    touched (see :mod:`darray.io._stage_markers`): a real directory of this user
    with mode 0700, named ``<name>.tmp-*`` (``save_npy`` stages:
    ``<name>.sha256.tmp-*``), holding darray's marker file, whose lock no
    live save holds, and that is either at least ``older_than`` seconds old
    or was made on this machine by a process that no longer runs. Symlinks,
    other users' entries and directories without the marker are never
    touched or followed. A stale stage that holds the only copy of the
    previous ``path`` (a commit killed between its renames, which
    :func:`darray.io.load` recovers) is kept, with a warning.

    Parameters
    ----------
    path : str or os.PathLike
        The save target (a zarr store, ``.npy``, HDF5 or checkpoint file)
        whose staging entries to clean; it need not exist, its directory must.
    older_than : float or datetime.timedelta, optional
        Age in seconds from which a stage whose lock nobody holds counts as
        stale even when its creator cannot be checked (another host).
        Default :data:`darray.io._stage_markers.STALE_AFTER` (24 hours), the
        threshold the saves use. ``0`` removes every such stage, including
        those of saves still running on other hosts on file systems without
        shared locks (NFS ``local_lock=flock``, Lustre ``localflock``); use
        it only when no save to ``path`` runs. ``math.inf`` removes only the
        stages of processes of this machine that are gone.
    dry_run : bool, optional
        List what would be removed, remove nothing.
    comm : Communicator, optional
        Default: :func:`darray.default_communicator`.

    Returns
    -------
    list of str
        The absolute paths of the stale entries removed (``dry_run``: to be
        removed), sorted; the same on every rank. An entry that could not be
        removed is left out and reported in a :class:`RuntimeWarning`.

    Raises
    ------
    TypeError
        ``path`` is not a path, ``older_than`` not a number or timedelta,
        ``dry_run`` not a bool.
    ValueError
        ``path`` names no file (``""``, ``"."``, a root), differs between
        ranks, or ``older_than`` is negative or NaN.
    FileNotFoundError
        The directory of ``path`` does not exist.

    Examples
    --------
    >>> import os, tempfile
    >>> import darray as da
    >>> from darray.io import clean_staging, save
    >>> d = tempfile.mkdtemp()
    >>> save(os.path.join(d, "x.zarr"), da.arange(4.0))
    >>> clean_staging(os.path.join(d, "x.zarr"))      # nothing left behind by a killed save
    []
    >>> clean_staging(os.path.join(d, "x.zarr"), older_than=0, dry_run=True)
    []
    >>> import shutil; shutil.rmtree(d)
    """
    func = "clean_staging"
    comm = resolve_comm(comm)
    final = agree_targets(func, comm, [path])[0]
    seconds = _seconds(func, older_than)
    if not isinstance(dry_run, (bool, np.bool_)):
        raise TypeError(f"{func}: dry_run must be a bool; got {type(dry_run).__name__}, expected True or False")
    parent, name = os.path.split(final)

    def check():
        if not os.path.isdir(parent):
            raise FileNotFoundError(f"{func}: no such directory; got {parent!r}, expected the existing directory "
                                    f"of the save target")

    collective(comm, check, func=func)
    found = None
    if comm.rank == 0:
        try:
            found = _stage_markers.sweep(parent, [name], seconds, dry_run=bool(dry_run))
        except Exception as e:  # reported below, the same on every rank
            found = _stage_markers.Sweep(problems=[f"{type(e).__name__}: {e}"])
    lines = _bcast_lines(comm, [f"R{p}" for p in sorted(found.removed)] + [f"K{p}" for p in found.only_copy]
                         + [f"P{p}" for p in found.problems] if found else None)
    removed, kept, problems = ([line[1:] for line in lines if line[:1] == k] for k in "RKP")
    if kept:
        warnings.warn(f"{func}: kept stale staging entries holding the only copy of the previous {name!r} (a "
                      f"commit killed mid-swap; load reads it, the next save replaces it): {'; '.join(kept)}",
                      RuntimeWarning, stacklevel=2)
    if problems:
        warnings.warn(f"{func}: could not remove stale staging entries: {'; '.join(problems)}", RuntimeWarning,
                      stacklevel=2)
    return removed
