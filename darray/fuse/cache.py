"""Caches: traced graphs by call signature, compiled kernels by source.

A call's signature (:func:`signature`) is what tracing depends on: per DArray
argument its layout, dtype, local library, communicator and which other
argument is the same object (one node of the trace); per Python scalar
argument its type (the value is a kernel argument); any other argument by
value (it is a constant of the trace). A new signature traces again.

Kernels are numba functions compiled from generated source
(:mod:`darray.fuse.codegen`). The same source gives the same kernel: it is
compiled once per process (:func:`compiled`), and numba's on-disk cache keeps
the machine code between processes and across the ranks of a job when the
source is written to :func:`cache_dir` (``DARRAY_FUSE_CACHE``, default
``~/.cache/darray/fuse``; unwritable: compiled in memory each process).

What the cache holds is code that runs (the modules, and numba's pickled
index and machine code in ``__pycache__``), so it is trusted only when nobody
else can write it: the directory (created 0700) and its ``__pycache__`` must
be owned by this user and neither group- nor world-writable, else they are
not used (a :class:`RuntimeWarning` names the directory and the fix) and
kernels compile in memory. A module file is written atomically (mode 0600)
and never imported as found: its text must equal the source it is named
for, and the verified source is what runs (never the file re-read, nor a
``.pyc``). A file that differs is reported and rewritten.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import stat
import sys
import warnings
from pathlib import Path

from .._core.array import DArray
from .._files import private_directory, write_text_safely

__all__ = ["signature", "compiled", "cache_dir", "SCALARS"]

SCALARS = (bool, int, float, complex)

_kernels: dict[str, object] = {}
_warned: set[tuple[str, str]] = set()  # (directory, problem) already reported in this process


def signature(args: tuple, kwargs: dict):
    """The hashable signature of a call, or None when an argument has none (the call then runs eagerly)."""
    key = []
    first: dict[int, int] = {}  # the same DArray in several places is one node of the trace
    for i, (name, a) in enumerate([(None, a) for a in args] + sorted(kwargs.items())):
        if type(a) is DArray:
            key.append((name, "D", a._layout, a._block.dtype, id(a._xp), id(a._comm), first.setdefault(id(a), i)))
        elif type(a) in SCALARS:
            key.append((name, "S", type(a)))
        else:
            try:
                hash(a)
            except TypeError:
                return None
            key.append((name, "V", type(a), a))
    return tuple(key)


def cache_dir() -> Path | None:
    """Where kernel sources (and numba's cache beside them) live, or None when it cannot be used.

    Returns
    -------
    pathlib.Path or None
        ``DARRAY_FUSE_CACHE`` (default ``~/.cache/darray/fuse``; created with
        mode 0700, as is its ``__pycache__``). None (kernels are compiled in
        memory) when it cannot be created or written, or when it or its
        ``__pycache__`` is not private to this user: owned by another user or
        group- or world-writable. The last case warns once per process
        (:class:`RuntimeWarning`), naming the directory and the fix.
    """
    path = Path(os.environ.get("DARRAY_FUSE_CACHE") or Path.home() / ".cache" / "darray" / "fuse")
    for folder in (path, path / "__pycache__"):  # __pycache__: numba's index and machine code (pickles)
        problem = private_directory(folder)
        if problem is not None:
            if os.path.isdir(folder):  # exists but may be written by others: say so (missing: silently unused)
                _warn_unsafe(folder, problem)
            return None
    return path if os.access(path, os.W_OK) else None


def _warn_unsafe(folder: Path, problem: str) -> None:
    if (str(folder), problem) in _warned:
        return
    _warned.add((str(folder), problem))
    warnings.warn(f"darray.fuse: not using the kernel cache directory {str(folder)!r}: it {problem}, so others "
                  f"could plant code that this process would run; kernels are compiled in memory in each process "
                  f"instead. Fix: make it private (chmod 700 {str(folder)!r}, if it is yours) or set "
                  f"DARRAY_FUSE_CACHE to a directory only you can write", RuntimeWarning, stacklevel=4)


def _cached_text(path: Path, limit: int) -> tuple[bool, str | None]:
    """(whether anything is at ``path``, its text when it is a readable regular UTF-8 file of this user).

    At most ``limit`` bytes are read; a symlink is not followed (present, no text).
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return False, None
    except OSError:
        return True, None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            return True, None
        try:
            return True, f.read(limit).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return True, None


def compiled(source: str):
    """The function ``kernel`` of the module ``source`` (compiled on first call; machine code cached on disk).

    Parameters
    ----------
    source : str
        A module generated by :mod:`darray.fuse.codegen` that defines ``kernel``.

    Returns
    -------
    callable
        The numba dispatcher ``kernel``. With a usable :func:`cache_dir`, the
        module ``darray_fuse_<sha1 of source>.py`` there is checked to hold
        exactly ``source`` (rewritten atomically, with a
        :class:`RuntimeWarning`, when it holds anything else) and ``source``
        itself is executed as that module, so numba's on-disk cache applies
        and nothing else in the file can run.
    """
    found = _kernels.get(source)
    if found is not None:
        return found
    digest = hashlib.sha1(source.encode()).hexdigest()[:20]
    name = f"darray_fuse_{digest}"
    folder = cache_dir()
    path = None if folder is None else folder / f"{name}.py"
    if path is not None:
        present, text = _cached_text(path, len(source.encode()) + 1)
        if text != source:
            if present:  # (another rank may have just written it: that one holds the source)
                warnings.warn(f"darray.fuse: the cached kernel module {str(path)!r} does not hold the source it is "
                              f"named for (changed or planted); rewriting it", RuntimeWarning, stacklevel=3)
            try:  # ranks may race here: each writes a private file and renames it into place
                write_text_safely(path, source, mode=0o600)
            except OSError:
                path = None
    if path is None:
        namespace: dict = {"__name__": name}
        memory_source = source.replace("cache=True", "cache=False")  # numba caches functions of files only
        exec(compile(memory_source, f"<{name}>", "exec"), namespace)  # generated by codegen, no user text
        found = namespace["kernel"]
    else:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # numba's cached code names its module: it must be importable by name
        # the verified source runs, under the file's name (numba's cache is keyed by it); not the file re-read
        exec(compile(source, str(path), "exec"), module.__dict__)  # generated by codegen
        found = module.kernel
    _kernels[source] = found
    return found
