"""Files darray writes on a user's behalf: never through a planted symlink, never half-written.

Traces (``DARRAY_TRACE=trace.json``), the PNG, JSON and Markdown outputs of
``darray demo`` and ``darray bench``, and the fuse cache's kernel modules are
written with :func:`write_bytes_safely` / :func:`write_text_safely` (or the
context manager :func:`replacing`): the data goes into a fresh temporary file
created exclusively (``O_CREAT | O_EXCL | O_NOFOLLOW``) in the target's
directory, which is then renamed onto the target with :func:`os.replace`. A
rename replaces a symlink found at the target itself and never follows it,
so a link planted at ``trace.json`` pointing at ``~/.bashrc`` is replaced by
a regular file and ``~/.bashrc`` stays untouched. A reader sees the old file
or the whole new one, never a partial write; a failure removes the
temporary file and leaves the target as it was.

:func:`private_directory` checks (and creates, mode 0700) a directory whose
contents darray later trusts, such as the fuse cache: it must be a directory
owned by the current user and writable by nobody else.

(:mod:`darray.io` has its own staging for collective saves,
:mod:`darray.io._atomic`.)
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

__all__ = ["replacing", "write_bytes_safely", "write_text_safely", "private_directory"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


def _temporary_beside(path: str, mode: int) -> tuple[int, str]:
    """A new file next to ``path``, created exclusively (never an existing name or a symlink): (fd, name)."""
    folder, name = os.path.split(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY
    for _ in range(100):
        tmp = os.path.join(folder, f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"darray: could not create a temporary file next to {path!r}")


@contextmanager
def replacing(path: str | os.PathLike, *, binary: bool = True, mode: int | None = None,
              encoding: str = "utf-8") -> Iterator[IO]:
    """Open a fresh temporary file for writing; on a clean exit it replaces ``path`` atomically.

    Parameters
    ----------
    path : str or os.PathLike
        The file to (re)write. A symlink at ``path`` is replaced by the new
        regular file, never followed; the directory holding ``path`` must exist.
    binary : bool, optional
        Yield a binary file object (default) or a text one.
    mode : int, optional
        Permission bits of the new file. Default: those of the regular file
        being replaced, else ``0o666`` less the umask (what :func:`open` gives).
    encoding : str, optional
        The text encoding when ``binary`` is False.

    Yields
    ------
    IO
        The temporary file, open for writing. An exception inside the block
        removes it and leaves ``path`` untouched.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with replacing(os.path.join(folder, "out.txt"), binary=False) as f:
    ...     _ = f.write("hello")
    >>> with open(os.path.join(folder, "out.txt")) as f:
    ...     f.read()
    'hello'
    >>> import shutil; shutil.rmtree(folder)
    """
    target = os.path.abspath(os.fspath(path))
    keep = None
    if mode is None:
        try:
            st = os.lstat(target)
        except OSError:
            st = None
        if st is not None and stat.S_ISREG(st.st_mode):
            keep = stat.S_IMODE(st.st_mode)
    fd, tmp = _temporary_beside(target, 0o666 if mode is None else mode)
    try:
        if mode is not None or keep is not None:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, mode if mode is not None else keep)
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding=encoding)) as f:
            fd = -1  # owned by f now
            yield f
        os.replace(tmp, target)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


def write_bytes_safely(path: str | os.PathLike, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` atomically, replacing (never following) a symlink there.

    Parameters
    ----------
    path : str or os.PathLike
        The file to (re)write; its directory must exist.
    data : bytes
        The whole new content.
    mode : int, optional
        Permission bits of the new file (default: see :func:`replacing`).
    """
    with replacing(path, binary=True, mode=mode) as f:
        f.write(data)


def write_text_safely(path: str | os.PathLike, text: str, *, mode: int | None = None,
                      encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically, replacing (never following) a symlink there.

    Parameters
    ----------
    path : str or os.PathLike
        The file to (re)write; its directory must exist.
    text : str
        The whole new content.
    mode : int, optional
        Permission bits of the new file (default: see :func:`replacing`).
    encoding : str, optional
        The text encoding (default UTF-8).
    """
    with replacing(path, binary=False, mode=mode, encoding=encoding) as f:
        f.write(text)


def private_directory(path: str | os.PathLike, *, create: bool = True) -> str | None:
    """Why ``path`` is not a private directory of this user, or None when it is one.

    A private directory is a directory (a symlink to one counts, judged by
    its target) owned by the current user and neither group- nor
    world-writable: nobody else can add, replace or rename what is in it.

    Parameters
    ----------
    path : str or os.PathLike
        The directory.
    create : bool, optional
        Create it (and missing parents) when missing; the directory itself
        is created with mode 0700.

    Returns
    -------
    str or None
        None when private; otherwise the problem, in words (including an
        :class:`OSError` met while creating or inspecting it).
    """
    path = os.fspath(path)
    if create and not os.path.lexists(path):
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
        except OSError as e:
            return f"cannot be created ({e.strerror or e})"
    try:
        st = os.stat(path)
    except OSError as e:
        return f"cannot be inspected ({e.strerror or e})"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    if os.name != "posix":  # no POSIX owner and mode bits to judge by (Windows reports 0o777)
        return None
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"is owned by user id {st.st_uid}, not by this user (id {os.getuid()})"
    if st.st_mode & 0o022:
        who = " and ".join(w for w, bit in (("group", 0o020), ("others", 0o002)) if st.st_mode & bit)
        return f"is writable by {who} (mode {stat.S_IMODE(st.st_mode):04o})"
    return None
