"""Atomic, collective saves: write into a private staging directory, then rank 0 renames.

Before anything is written, every rank checks the targets identically
(:func:`check_target`): a path that names nothing new (``""``, ``"."``,
``".."``, ``"/"``, a NUL byte), a missing parent directory, a directory that is
not a zarr array store (saving never deletes a directory it did not write),
or different paths on different ranks raise the same error on every rank.

Rank 0 then creates a staging directory next to the targets with
:func:`tempfile.mkdtemp` (``<name>.tmp-<random>``: created exclusively, mode
0700, never an existing name or a pre-planted symlink) and every rank writes
into ``<stage>/<name>``. Every name written is inside that private directory,
so nothing another user planted is ever followed. Same parent directory, so
the rename never crosses a file system. Once every rank has reported success,
rank 0 moves each temporary into place with :func:`os.replace` and removes
the stage:

- a file over a file (or over a symlink: the link is replaced, never
  followed): one atomic ``os.replace``;
- a directory (a zarr store), or anything over a directory: the old target is
  first moved aside into the stage (``<stage>/<name>.old``), the new one
  renamed into place, then the stage removed. A job killed between those two
  renames leaves the previous data in ``<stage>/<name>.old``, which a load of
  ``<path>`` then reads (:func:`recovered`).

Several targets (a ``.npy`` file and its checksum sidecar) are renamed in the
order given (a target whose temporary the body did not create is removed, so
that no stale sidecar outlives its data). ``save_npy`` commits the sidecar
first and the data second; a job killed between the two renames leaves the
new sidecar beside the previous data, which that sidecar also describes
(:mod:`darray.io._sidecar`: by the identity of the file at the path, never
by the table of data that an interrupted save did not commit).

The file-system steps of a commit (each rename and removal, in order) run
through :func:`_step`, so that a test can stop a commit after any number of
steps as a killed job would stop (``_on_step``): every later step, the
clean-up included, then does not happen.

A job killed before the renames leaves the previous file untouched (plus a
stale ``<name>.tmp-*`` directory that nothing reads but :func:`recovered`). A failure on any rank while
writing is raised on every rank and the stage is removed.

Stale stages (:mod:`darray.io._stage_markers`): every stage holds a marker,
``.darray-staging.json`` (a reserved target name), that rank 0 writes and
keeps locked while the save runs. Before creating its stage, a save lets
rank 0 remove the stale stages of ITS targets left by killed jobs -- only
stages with a valid marker, whose lock nobody holds, and whose creator is
provably gone (same machine, process no longer running) or that are older
than :data:`darray.io._stage_markers.STALE_AFTER`. The outcome is broadcast: a
problem while removing is the same :class:`RuntimeWarning` on every rank,
never a failure. A stale stage holding the only copy of the previous target
is kept until this save has committed, then removed.
:func:`darray.io.clean_staging` does the same on request.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from contextlib import contextmanager

import numpy as np

from . import _stage_markers
from ._common import collective

__all__ = ["agree_targets", "atomic_targets", "check_target", "recovered"]

#: Test hook: called on every rank after every write succeeded and before the rename (simulates a crash).
_before_commit = None
#: Test hook: ``_on_step(kind, paths)`` is called on rank 0 before each file-system step of a commit and of its
#: clean-up (``kind``: ``"commit"`` once before the first rename, ``"replace"`` with ``(src, dst)``,
#: ``"remove"`` with ``(path,)``). Returning False skips the step (a job killed there: the hook then skips every
#: later step too); raising makes the step fail (the commit's own recovery runs).
_on_step = None

_PATH_BYTES = 4096
_OLD = _stage_markers.OLD


def check_target(func: str, path) -> str:
    """The absolute path of a save target; TypeError / ValueError for a path that names no new entry.

    Pure (no file system access, no communication): the same verdict on every
    rank that passes the same path.
    """
    try:
        text = os.fspath(path)
    except TypeError:
        raise TypeError(f"{func}: path must be a str or os.PathLike; got {type(path).__name__}, expected e.g. "
                        f"'out.zarr'") from None
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    seps = os.sep + (os.altsep or "")
    last = text.rstrip(seps)
    for sep in seps:
        last = last.rsplit(sep, 1)[-1]
    if not text or "\0" in text or last in ("", ".", ".."):
        raise ValueError(f"{func}: invalid target path; got {text!r}, expected a file or store name (not empty, "
                         f"'.', '..' or a root, no NUL bytes)")
    if last == _stage_markers.MARKER:
        raise ValueError(f"{func}: invalid target path; got {text!r}, expected another name ({last!r} is "
                         f"reserved for the marker of darray's staging directories)")
    full = os.path.abspath(text)
    if len(full.encode("utf-8", "surrogateescape")) > _PATH_BYTES - 64:  # room for the staging suffixes
        raise ValueError(f"{func}: invalid target path; got {len(full)} characters, expected at most "
                         f"{_PATH_BYTES - 64}")
    return full


def _is_zarr_array(path: str) -> bool:
    """True for a directory holding a zarr array (v3 ``zarr.json`` of node_type array, or v2 ``.zarray``)."""
    if os.path.isfile(os.path.join(path, ".zarray")):
        return True
    meta = os.path.join(path, "zarr.json")
    if not os.path.isfile(meta):
        return False
    try:
        with open(meta, "rb") as f:
            doc = json.loads(f.read(1 << 20))
    except (OSError, ValueError):
        return True  # a damaged store (written by a killed save, say) may be replaced
    return not (isinstance(doc, dict) and doc.get("node_type") == "group")


def _check_replaceable(func: str, final: str) -> None:
    parent = os.path.dirname(final)
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"{func}: no such directory; got {parent!r}, expected an existing directory")
    if os.path.isdir(final) and not os.path.islink(final) and not _is_zarr_array(final):
        raise IsADirectoryError(f"{func}: refusing to replace a directory that is not a zarr array store; got "
                                f"{final!r}, expected a new path, a file or a zarr array store (remove the "
                                f"directory yourself to replace it)")


def agree_targets(func: str, comm, paths) -> list[str]:
    """The checked targets, or the same error on every rank, also when the ranks passed different paths.

    :func:`check_target` is pure, so ranks that pass the same paths reach the
    same verdict; one allgather of 32 bytes catches ranks that passed
    different ones (a bad path on one rank only must not leave the others
    waiting).
    """
    try:
        finals, bad = [check_target(func, p) for p in paths], None
    except (TypeError, ValueError) as e:
        finals, bad = None, e
    if comm.size > 1:
        text = "\0".join(finals) if bad is None else f"{type(bad).__name__}: {bad}"
        mine = np.frombuffer(hashlib.sha256(text.encode("utf-8", "surrogateescape")).digest(), dtype=np.uint8)
        table = np.asarray(comm.allgather(mine))
        differ = [r for r in range(comm.size) if not np.array_equal(table[r], table[0])]
        if differ:
            first = _bcast_text(comm, (finals[-1] if bad is None else str(bad)) if comm.rank == 0 else None)
            raise ValueError(f"{func}: the ranks passed different paths; got another path on rank {differ[0]} "
                             f"than rank 0's {first!r}, expected the same path on every rank")
    if bad is not None:
        raise bad
    return finals


def _bcast_text(comm, text: str | None, paths: int = 1) -> str:
    """Rank 0's ``text`` (at most ``paths`` paths that passed :func:`check_target`) on every rank."""
    buf = np.zeros(paths * (_PATH_BYTES + 1), dtype=np.uint8)
    if comm.rank == 0:
        data = text.encode("utf-8", "surrogateescape")[:buf.size - 1]  # (only messages can be longer)
        buf[:len(data)] = np.frombuffer(data, dtype=np.uint8)
    return bytes(np.asarray(comm.bcast(buf, 0))).rstrip(b"\0").decode("utf-8", "surrogateescape")


def _step(kind: str, *paths: str) -> bool:
    """Announce one file-system step of a commit to the test hook; False: skip it (see ``_on_step``)."""
    return _on_step is None or _on_step(kind, paths) is not False


def _replace(src: str, dst: str) -> None:
    """One step: ``os.replace(src, dst)`` (a rename: never follows a symlink at either name)."""
    if _step("replace", src, dst):
        os.replace(src, dst)


def _remove(path: str) -> None:
    """One step: remove a file, link or directory tree (links removed, never followed); errors ignored."""
    if not _step("remove", path):
        return
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        try:
            os.remove(path)
        except OSError:
            pass


def _discard(stage: str, parent: str) -> None:
    """Remove a stage, unless it holds the only copy of a previous target (a failed swap): recovered() reads it."""
    try:
        names = os.listdir(stage)
    except OSError:
        return
    for name in names:
        if name.endswith(_OLD) and not os.path.lexists(os.path.join(parent, name[:-len(_OLD)])):
            return
    _remove(stage)


def _commit(tmp: str, final: str) -> None:
    """Move one temporary into place (rank 0): one rename, or two around a directory (see the module notes)."""
    if not os.path.lexists(tmp):  # the body chose not to write this target: drop a stale old one
        if os.path.lexists(final) and not (os.path.isdir(final) and not os.path.islink(final)):
            if _step("remove", final):
                os.remove(final)
        return
    if (os.path.isdir(final) and not os.path.islink(final)) or (os.path.isdir(tmp) and os.path.lexists(final)):
        aside = tmp + _OLD  # inside the private stage
        _replace(final, aside)
        try:
            _replace(tmp, final)
        except BaseException:
            _replace(aside, final)  # put the previous one back
            raise
        _remove(aside)
    else:
        _replace(tmp, final)


@contextmanager
def atomic_targets(func: str, comm, paths):
    """Yield one temporary path per target in ``paths``; commit them all on success (collective).

    The temporaries lie in a staging directory that rank 0 creates with
    :func:`tempfile.mkdtemp` next to the targets (after removing the stale
    stages of the same targets, see :func:`_sweep_agreed`) and marks as
    live (:func:`darray.io._stage_markers.mark`). The body must be
    collective-safe itself (failures agreed with
    :func:`darray.io._common.collective`), so every rank leaves it the same way.
    """
    finals = agree_targets(func, comm, paths)

    def check():
        for final in finals:
            _check_replaceable(func, final)

    collective(comm, check, func=func)
    parents = list(dict.fromkeys(os.path.dirname(f) for f in finals))
    deferred = _sweep_agreed(func, comm, finals)
    held: list[int] = []  # rank 0: the locked markers of our stages

    def make_stages():
        if comm.rank != 0:
            return None
        made = []
        try:
            for parent in parents:
                mine = [os.path.basename(f) for f in finals if os.path.dirname(f) == parent]
                made.append(tempfile.mkdtemp(prefix=f"{mine[0]}.tmp-", dir=parent))
                held.append(_stage_markers.mark(made[-1], mine))
        except BaseException:
            _stage_markers.release(held)
            for stage in made:
                _remove(stage)
            raise
        return "\0".join(made)

    stages = _bcast_text(comm, collective(comm, make_stages, func=func), len(parents)).split("\0")
    stage_of = dict(zip(parents, stages))
    tmps = [os.path.join(stage_of[os.path.dirname(f)], os.path.basename(f)) for f in finals]

    def discard():
        if comm.rank == 0:
            _stage_markers.release(held)  # before removing: NFS keeps an open, removed file as .nfs*
            for stage in stages:
                _discard(stage, os.path.dirname(stage))

    try:
        try:
            yield tmps
        except BaseException:
            discard()  # every rank left the body at the same agreed failure
            raise
        if _before_commit is not None:
            _before_commit(tmps, finals)
        comm.barrier()  # every rank has closed its files

        def commit():
            if comm.rank == 0 and _step("commit", *finals):
                for tmp, final in zip(tmps, finals):
                    _commit(tmp, final)

        try:
            collective(comm, commit, func=func)
        finally:
            discard()
    finally:
        if comm.rank == 0:
            _stage_markers.release(held)  # left without a commit or a discard (a simulated crash): no longer live
    if deferred:  # the previous data they held is superseded now
        _sweep_agreed(func, comm, finals)


def _sweep_agreed(func: str, comm, finals: list[str]) -> bool:
    """Rank 0 removes the stale stages of the targets ``finals``; every rank gets the same outcome.

    Never raises for a problem while removing: rank 0's report is broadcast
    and issued as the same :class:`RuntimeWarning` on every rank. Returns
    True (on every rank) when stale stages were kept because they hold the
    only copy of a previous target (a commit killed mid-swap): the caller
    sweeps again once its own commit has replaced that target.
    """
    report = None
    if comm.rank == 0:
        kept, problems = False, []
        try:
            for parent in dict.fromkeys(os.path.dirname(f) for f in finals):
                found = _stage_markers.sweep(parent, [os.path.basename(f) for f in finals if os.path.dirname(f) == parent],
                                       _stage_markers.STALE_AFTER)
                kept = kept or bool(found.only_copy)
                problems += found.problems
        except Exception as e:  # cleaning up after other jobs must never fail this save
            problems.append(f"{type(e).__name__}: {e}")
        report = ("1" if kept else "0") + "; ".join(problems)
    report = _bcast_text(comm, report)
    if report[1:]:
        warnings.warn(f"{func}: could not remove stale staging entries of killed saves (the save goes on): "
                      f"{report[1:]}", RuntimeWarning, stacklevel=5)
    return report[:1] == "1"


def recovered(path: str) -> str:
    """``path``, or the previous store set aside by a commit that was killed mid-swap.

    A directory commit moves the old store to ``<stage>/<name>.old`` and then
    the new one into place; a kill between the two leaves nothing at ``path``.
    Loading then reads the set-aside previous store: that of the stage made
    last (by its marker's creation time, so that a store set aside by an
    earlier killed save, superseded since, is never read in place of a later
    one: see :func:`_made_at`). Only stages that are private directories of
    this user, as :func:`tempfile.mkdtemp` makes them, count, so that
    nothing planted is read.
    """
    if os.path.lexists(path):
        return path
    import glob

    name = os.path.basename(path)
    pattern = os.path.join(glob.escape(os.path.dirname(path)), glob.escape(name) + ".tmp-*", glob.escape(name + _OLD))
    aside = sorted((p for p in glob.glob(pattern) if _own_stage(os.path.dirname(p)) and not os.path.islink(p)),
                   key=lambda p: _made_at(os.path.dirname(p)))
    return aside[-1] if aside else path


def _made_at(stage: str) -> tuple[float, int]:
    """When the save that made ``stage`` began: its marker's creation time, else the stage's modification time.

    Saves of one target run one after the other, so the stage made last
    belongs to the save that set the newest previous store aside. The
    modification times of two stages can be equal (file systems keep them
    to a clock tick), the markers' times (:func:`time.time`) hardly; the
    modification time in nanoseconds breaks ties.
    """
    try:
        mtime = os.lstat(stage).st_mtime_ns
    except OSError:
        return (float("-inf"), 0)
    made = mtime / 1e9
    try:
        fd = os.open(os.path.join(stage, _stage_markers.MARKER), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0))
        try:
            doc = json.loads(os.read(fd, 1 << 16).decode("utf-8", "surrogateescape"))
        finally:
            os.close(fd)
        created = doc.get("created") if isinstance(doc, dict) else None
        if type(created) in (int, float) and created == created and abs(created) != float("inf"):
            made = float(created)
    except (OSError, ValueError, UnicodeError):
        pass
    return (made, mtime)


def _own_stage(stage: str) -> bool:
    """A real directory of this user, private like the ones :func:`tempfile.mkdtemp` makes (never a planted one)."""
    try:
        st = os.lstat(stage)
    except OSError:
        return False
    import stat

    return stat.S_ISDIR(st.st_mode) and (not hasattr(os, "getuid") or st.st_uid == os.getuid()) \
        and not st.st_mode & 0o077
