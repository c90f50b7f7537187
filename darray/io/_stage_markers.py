"""Staging directories of atomic saves: who owns one, whether it is stale, and removing the stale ones.

Every staging directory that :mod:`darray.io._atomic` creates is
``<first target>.tmp-<random>`` (:func:`tempfile.mkdtemp`: a fresh name,
mode 0700, this user's) and holds a *marker*, :data:`MARKER`, that rank 0
creates right after the directory (``O_EXCL``, mode 0600) and keeps open,
with an exclusive :func:`fcntl.flock` on it, until the stage is gone. The
marker records the targets, the creating process (host name, boot id, PID
namespace, PID and start time) and the creation time.

A staging entry is *ours* only when all of these hold; anything else is
never touched (a name that merely looks like a stage, a symlink, another
user's or a group/world-accessible directory, a stage without a valid
marker -- e.g. one left by a darray version that wrote none):

- its name is ``<t>.tmp-<letters, digits, _>`` for a target name ``t``;
- it is a real directory (``lstat``, never followed) of this user, mode 0700;
- it holds a regular-file marker (opened with ``O_NOFOLLOW``) in darray's
  format whose first target is ``t``.

An entry of ours is *stale* (the save that made it is over) when nobody
holds the marker's lock AND one of:

- it is at least ``older_than`` seconds old (measured from the youngest of
  the recorded creation time and the marker's and the directory's
  modification times, so clock skew errs on the side of keeping it); or
- it was created on THIS machine (same host name, boot id and PID namespace;
  Linux only) by a process that no longer runs (its PID is free, a zombie,
  or now belongs to a process started at another time).

The sweeper takes the marker's lock (non-blocking) while it judges; a lock
it cannot take means a live saver and the stage is kept, whatever else holds.

Locks only ever prove a stage *live*, never dead: ``flock`` is not seen
across hosts on some NFS / Lustre mounts (``local_lock=flock``,
``localflock``) and unsupported on others, so a lock we can take proves
nothing about a saver on another host. A stage of a saver on another host
is therefore removed by age alone: a save still writing after
:data:`STALE_AFTER` (24 hours) on a file system without shared locks can lose
its stage to another job's save of the same target. (NFS emulates ``flock``
with POSIX locks, which a process drops when it closes any descriptor of the
file; the creator's own PID always counts as running, so a process never
judges its own stages stale.)

A stale stage that holds the only copy of a previous target (a commit
killed between its two renames leaves ``<stage>/<t>.old`` and nothing at
``t``; :func:`darray.io._atomic.recovered` loads it) is kept until ``t``
exists again.

Removal works through directory file descriptors (``openat`` / ``unlinkat``
with ``O_NOFOLLOW``, the identity of each directory checked against its
``lstat``), so a symlink planted at any name inside or at the stage is
removed as a link, never followed.
"""

from __future__ import annotations

import errno
import json
import os
import re
import socket
import stat
import time
from dataclasses import dataclass, field

__all__ = ["MARKER", "OLD", "STALE_AFTER", "Sweep", "mark", "release", "sweep"]

#: The marker file inside every staging directory (a reserved target name).
MARKER = ".darray-staging.json"
#: Suffix of a previous target set aside inside a stage during a directory commit.
OLD = ".old"
#: Default age (seconds) after which a stage of ours whose lock nobody holds counts as stale: 24 hours.
STALE_AFTER = 24 * 3600.0
#: Seconds after which a stage that is empty or holds only an unwritten (empty or cut) marker is abandoned.
PARTIAL_GRACE = 10.0

_FORMAT = "darray-staging"
_VERSION = 1
_TAIL = re.compile(r"\.tmp-[A-Za-z0-9_]+\Z")
_MARKER_BYTES = 1 << 16
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NO_LOCKS = {errno.ENOLCK, errno.EINVAL, errno.EBADF, errno.ENOSYS, getattr(errno, "EOPNOTSUPP", -1),
             getattr(errno, "ENOTSUP", -1)}


def supported() -> bool:
    """Stages are swept only where directory file descriptors are (every POSIX system)."""
    return ({os.open, os.stat, os.unlink, os.rmdir} <= os.supports_dir_fd and os.stat in os.supports_follow_symlinks
            and os.listdir in os.supports_fd and bool(_NOFOLLOW) and bool(_DIRECTORY))


# ------------------------------------------------------------------ who we are
def _read_small(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(4096).decode("ascii", "replace").strip()
    except OSError:
        return ""


def _proc_stat(pid: int) -> list[str]:
    """Fields 3.. of ``/proc/<pid>/stat`` (state, ppid, ...), or [] (no such process, no /proc)."""
    text = _read_small(f"/proc/{pid}/stat")
    return text[text.rfind(")") + 1:].split()  # (the command name may hold spaces and parentheses)


def _start_ticks(pid: int) -> str:
    """The start time of process ``pid`` (``/proc/<pid>/stat`` field 22, clock ticks since boot), or ''."""
    fields = _proc_stat(pid)
    return fields[19] if len(fields) > 19 else ""


def _machine() -> dict:
    """Host name, boot id and PID namespace: equal on two processes that see the same PIDs (Linux)."""
    try:
        pid_ns = os.readlink("/proc/self/ns/pid")
    except OSError:
        pid_ns = ""
    return {"host": socket.gethostname(), "boot_id": _read_small("/proc/sys/kernel/random/boot_id"),
            "pid_ns": pid_ns}


def _try_lock(fd: int) -> bool | None:
    """Take an exclusive flock without waiting: True taken, False held by someone, None: no locks here."""
    try:
        import fcntl
    except ImportError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as e:
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        if e.errno in _NO_LOCKS:
            return None
        raise
    return True


# ------------------------------------------------------------------ the live saver's side
def mark(stage: str, targets: list[str]) -> int:
    """Create the marker of a fresh ``stage`` (whose targets are the names ``targets``) and lock it.

    Returns the marker's file descriptor: keep it open while the stage lives
    (closing it releases the lock), and :func:`release` it before removing
    the stage (NFS keeps open files of a removed directory as ``.nfs*``).
    """
    fd = os.open(os.path.join(stage, MARKER), os.O_RDWR | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600)
    try:
        locked = _try_lock(fd)
        doc = {"format": _FORMAT, "version": _VERSION, "targets": list(targets), "pid": os.getpid(),
               "start": _start_ticks(os.getpid()), "created": time.time(), "locked": bool(locked),
               **_machine()}
        data = json.dumps(doc).encode("utf-8", "surrogateescape")
        while data:
            data = data[os.write(fd, data):]
    except BaseException:
        os.close(fd)
        raise
    return fd


def release(fds: list[int]) -> None:
    """Close marker descriptors from :func:`mark` (releases their locks); empties ``fds``."""
    while fds:
        try:
            os.close(fds.pop())
        except OSError:
            pass


# ------------------------------------------------------------------ the sweeper's side
@dataclass
class Sweep:
    """What :func:`sweep` found in one directory (absolute paths)."""

    removed: list[str] = field(default_factory=list)  # stale, removed (or, dry run, to be removed)
    only_copy: list[str] = field(default_factory=list)  # stale, but kept: the only copy of a previous target
    problems: list[str] = field(default_factory=list)  # stale entries that could not be (fully) removed


def _pid_gone(doc: dict) -> bool:
    """True when the marker's process provably no longer exists (same machine and PID namespace only)."""
    here = _machine()
    if not here["boot_id"] or not here["pid_ns"] or any(doc.get(k) != here[k] for k in ("host", "boot_id", "pid_ns")):
        return False  # another machine, container or boot: its PIDs are not ours to check
    pid = doc["pid"]
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # EPERM: a process of another user has that PID now -- or ours; keep it
        pass
    fields = _proc_stat(pid)
    if fields[:1] in (["Z"], ["X"]):
        return True  # exited, not yet reaped by its parent
    now = fields[19] if len(fields) > 19 else ""
    return bool(doc.get("start")) and bool(now) and now != doc["start"]  # the PID was reused


def _read_marker(dir_fd: int, prefix: str, wanted: set[str]) -> tuple[int, dict, os.stat_result] | None:
    """The open (read-write) marker of a stage, its content and stat; None when it is not a valid marker of ours."""
    try:
        fd = os.open(MARKER, os.O_RDWR | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            raise ValueError
        doc = json.loads(os.read(fd, _MARKER_BYTES).decode("utf-8", "surrogateescape"))
        if not (isinstance(doc, dict) and doc.get("format") == _FORMAT and doc.get("version") == _VERSION):
            raise ValueError
        targets, pid, created = doc.get("targets"), doc.get("pid"), doc.get("created")
        if not (isinstance(targets, list) and targets and all(isinstance(t, str) for t in targets)
                and targets[0] == prefix and wanted & set(targets)):
            raise ValueError  # the stage of another target
        if not (type(pid) is int and 0 < pid < 2**31 and type(created) in (int, float) and created == created
                and all(isinstance(doc.get(k), str) for k in ("start", "host", "boot_id", "pid_ns"))):
            raise ValueError
    except (OSError, ValueError, UnicodeError):
        os.close(fd)
        return None
    return fd, doc, st


def _only_copy(stage_fd: int, parent_fd: int, targets: list[str]) -> bool:
    """True when the stage holds ``<t>.old`` while nothing is at ``t``: the previous data lives only here."""
    for t in targets:
        try:
            os.lstat(t + OLD, dir_fd=stage_fd)
        except OSError:
            continue
        try:
            os.lstat(t, dir_fd=parent_fd)
        except FileNotFoundError:
            return True
        except OSError:
            return True  # cannot tell: keep it
    return False


def _remove_tree(dir_fd: int, name: str, problems: list[str], where: str, expect=None) -> None:
    """Remove ``name`` inside ``dir_fd`` and everything under it; links are removed, never followed.

    ``expect``: the stat the entry must still have (the stage judged stale), else it is left alone.
    """
    try:
        st = os.lstat(name, dir_fd=dir_fd)
        if expect is not None and not os.path.samestat(st, expect):
            raise OSError(errno.ESTALE, "replaced since it was judged stale; left alone")
        if stat.S_ISDIR(st.st_mode):
            fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
            try:
                if not os.path.samestat(st, os.fstat(fd)):
                    raise OSError(errno.ESTALE, "replaced while being removed")
                for entry in os.listdir(fd):
                    _remove_tree(fd, entry, problems, os.path.join(where, entry))
            finally:
                os.close(fd)
            os.rmdir(name, dir_fd=dir_fd)
        else:
            os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass  # removed meanwhile (another sweeper)
    except OSError as e:
        problems.append(f"{where}: {e.strerror or e}")


def _inspect(parent_fd: int, parent: str, name: str, prefix: str, wanted: set[str], older_than: float,
             now: float, dry_run: bool, out: Sweep) -> None:
    """Judge one candidate entry (see the module docstring) and remove it when it is ours and stale."""
    try:
        st = os.lstat(name, dir_fd=parent_fd)
    except OSError:
        return
    if not stat.S_ISDIR(st.st_mode) or st.st_mode & 0o077 or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
        return  # a symlink, a file, another user's or a shared directory: not one of our stages
    try:
        stage_fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=parent_fd)
    except OSError:
        return
    path = os.path.join(parent, name)
    try:
        if not os.path.samestat(st, os.fstat(stage_fd)) or not _stale(stage_fd, parent_fd, prefix, wanted,
                                                                      older_than, now, st, path, out):
            return
    finally:
        os.close(stage_fd)
    if dry_run:
        out.removed.append(path)
        return
    problems: list[str] = []
    _remove_tree(parent_fd, name, problems, path, expect=st)
    if problems:
        out.problems.append(problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    else:
        out.removed.append(path)


def _stale(stage_fd: int, parent_fd: int, prefix: str, wanted: set[str], older_than: float, now: float,
           st: os.stat_result, path: str, out: Sweep) -> bool:
    """Is the open stage ours and stale, and not the only copy of a previous target (then noted in ``out``)?"""
    found = _read_marker(stage_fd, prefix, wanted)
    if found is None:
        return _abandoned_partial(stage_fd, now, st)
    marker_fd, doc, marker_st = found
    try:  # closed before removing: NFS would keep an open, removed file as .nfs*
        try:
            lock = _try_lock(marker_fd)
        except OSError:
            return False
        if lock is False:
            return False  # a live saver holds it
        age = now - max(doc["created"], marker_st.st_mtime, st.st_mtime)
        if not (age >= older_than or _pid_gone(doc)):
            return False
        if _only_copy(stage_fd, parent_fd, doc["targets"]):
            out.only_copy.append(path)
            return False
        return True
    finally:
        os.close(marker_fd)


def _abandoned_partial(stage_fd: int, now: float, st: os.stat_result) -> bool:
    """A stage whose marker was never written (its creator died between making the stage and filling it).

    Empty, or nothing in it but an unlocked marker that is not valid JSON,
    and older than :data:`PARTIAL_GRACE`: it holds no data, and a live saver
    creates and fills its marker microseconds after the stage, holding its lock.
    """
    try:
        names = os.listdir(stage_fd)
        if not names:
            return now - st.st_mtime >= PARTIAL_GRACE
        if names != [MARKER]:
            return False
        fd = os.open(MARKER, os.O_RDWR | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=stage_fd)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid())
                or st.st_size >= _MARKER_BYTES or now - st.st_mtime < PARTIAL_GRACE):
            return False
        try:
            json.loads(os.read(fd, _MARKER_BYTES).decode("utf-8", "surrogateescape"))
            return False  # complete: judged by _read_marker (another target's, another version's)
        except (ValueError, UnicodeError):
            pass
        return _try_lock(fd) is not False
    except OSError:
        return False
    finally:
        os.close(fd)


def sweep(parent: str, targets, older_than: float = STALE_AFTER, *, dry_run: bool = False,
          now: float | None = None) -> Sweep:
    """Find (and unless ``dry_run`` remove) the stale staging entries of ours for ``targets`` in ``parent``.

    ``targets`` are names in ``parent``; a stage counts when its marker lists
    any of them (``save_npy`` stages are named after the ``.sha256`` sidecar).
    OSErrors listing ``parent`` are reported in ``problems``, never raised.
    """
    out = Sweep()
    wanted = {t for t in targets if t and os.sep not in t}
    if not wanted or not supported():
        return out
    now = time.time() if now is None else now
    try:
        parent_fd = os.open(parent, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except OSError as e:
        out.problems.append(f"{parent}: {e.strerror or e}")
        return out
    try:
        names = os.listdir(parent_fd)
        for name in sorted(names):
            m = _TAIL.search(name)
            if m is None or not any(name.startswith(t) for t in wanted):
                continue
            _inspect(parent_fd, parent, name, name[:m.start()], wanted, older_than, now, dry_run, out)
    except OSError as e:
        out.problems.append(f"{parent}: {e.strerror or e}")
    finally:
        os.close(parent_fd)
    return out
