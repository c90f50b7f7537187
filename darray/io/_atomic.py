"""Atomic, collective saves: write under a temporary name, then rank 0 renames.

Every rank writes into ``<path>.tmp-<token>`` (same directory, so the rename
never crosses a file system); once every rank has reported success, rank 0
moves the temporary into place with :func:`os.replace`:

- a file over a file: one atomic ``os.replace``;
- a directory (a zarr store), or anything over a directory: the old target is
  first moved aside to ``<path>.old-<token>``, the new one renamed into
  place, then the old one removed. A job killed between those two renames
  leaves the previous data under ``<path>.old-<token>``.

Several targets (a ``.npy`` file and its checksum sidecar) are renamed in the
order given (a target whose temporary the body did not create is removed, so
that no stale sidecar outlives its data): a crash between the renames leaves the new data with the old
sidecar, which a load reports as a checksum error, never as wrong data.

A job killed before the renames leaves the previous file untouched (plus a
stale ``*.tmp-*`` that nothing reads). A failure on any rank while writing is
raised on every rank and the temporaries are removed.
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager

from ._common import collective, token

__all__ = ["atomic_targets"]

#: Test hook: called on every rank after every write succeeded and before the rename (simulates a crash).
_before_commit = None


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        try:
            os.remove(path)
        except OSError:
            pass


def _commit(tmp: str, final: str, tok: str) -> None:
    if not os.path.lexists(tmp):  # the body chose not to write this target: drop a stale old one
        _remove(final)
        return
    if os.path.isdir(final) or (os.path.isdir(tmp) and os.path.lexists(final)):
        aside = f"{final}.old-{tok}"
        os.replace(final, aside)
        os.replace(tmp, final)
        _remove(aside)
    else:
        os.replace(tmp, final)


@contextmanager
def atomic_targets(func: str, comm, paths):
    """Yield one temporary path per target in ``paths``; commit them all on success (collective).

    The body must be collective-safe itself (failures agreed with
    :func:`darray.io._common.collective`), so every rank leaves it the same way.
    """
    finals = [os.path.abspath(os.fspath(p)) for p in paths]

    def check_dirs():
        for final in finals:
            parent = os.path.dirname(final)
            if not os.path.isdir(parent):
                raise FileNotFoundError(f"{func}: no such directory; got {parent!r}, expected an existing directory")

    collective(comm, check_dirs, func=func)
    tok = token(comm)
    tmps = [f"{final}.tmp-{tok}" for final in finals]
    try:
        yield tmps
    except BaseException:
        if comm.rank == 0:  # every rank left the body at the same agreed failure
            for tmp in tmps:
                _remove(tmp)
        raise
    if _before_commit is not None:
        _before_commit(tmps, finals)
    comm.barrier()  # every rank has closed its files

    def commit():
        if comm.rank == 0:
            for tmp, final in zip(tmps, finals):
                _commit(tmp, final, tok)

    try:
        collective(comm, commit, func=func)
    except BaseException:
        if comm.rank == 0:
            for tmp in tmps:
                _remove(tmp)
        raise



def recovered(path: str) -> str:
    """``path``, or the previous store set aside by a commit that was killed mid-swap.

    A directory commit moves the old store to ``<path>.old-<token>`` and then
    the new one into place; a kill between the two leaves nothing at ``path``.
    Loading then reads the set-aside previous store (the newest one).
    """
    if os.path.lexists(path):
        return path
    import glob

    aside = sorted(glob.glob(glob.escape(path) + ".old-*"), key=os.path.getmtime)
    return aside[-1] if aside else path
