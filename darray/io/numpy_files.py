"""NumPy's file functions under their NumPy names: ``save``/``load`` (``.npy``), ``savetxt``/``loadtxt`` (text).

These are ``darray.save``, ``darray.load``, ``darray.savetxt`` and
``darray.loadtxt``, so that ``import darray as np`` keeps a NumPy script's
files. (``darray.io.save`` / ``darray.io.load`` choose among zarr stores,
``.npy`` and HDF5 files and verify checksums; these follow NumPy.) Every
function is collective: every rank calls it with the same arguments.

- :func:`save` writes a real ``.npy`` file NumPy reads, in parallel: every
  rank writes its own block at its byte offset (:func:`darray.io.save_npy`;
  per-block checksums go to a ``.sha256`` sidecar).
- :func:`load` reads a ``.npy`` file into a DArray, each rank reading only
  its region (:func:`darray.io.load_npy`). It never unpickles:
  ``allow_pickle=True`` is refused, object dtypes are refused.
- :func:`savetxt` GATHERS the array onto rank 0, which writes the text file:
  text is for small arrays; arrays of more than :data:`TEXT_MAX_ELEMENTS`
  elements are refused (use :func:`save`).
- :func:`loadtxt` and :func:`genfromtxt` parse the text file on EVERY rank
  (``O(file)`` memory per rank; the file must be visible to every rank),
  then each rank keeps its block: for small files, as :func:`savetxt`. They
  also take what NumPy takes besides a path: an open file (``io.StringIO``)
  or a list of lines, which every rank holds and reads whole; the ranks
  check that they read the same text.
- :func:`fromfile` of raw binary data reads only each rank's region (one
  ``numpy.fromfile`` at its byte offset); with a text separator every rank
  parses the whole file.
- :func:`frombuffer` / :func:`fromstring`: every rank holds the data (as for
  :func:`darray.asarray`) and keeps its block.

Examples
--------
>>> import os, tempfile, numpy, darray as np
>>> path = os.path.join(tempfile.mkdtemp(), "x.npy")   # the same path on every rank
>>> np.save(path, np.arange(5.0))
>>> numpy.load(path).tolist()
[0.0, 1.0, 2.0, 3.0, 4.0]
>>> np.load(path).shape
(5,)
"""

from __future__ import annotations

import hashlib
import io
import os

import numpy as np

import darray
from darray._backend import to_numpy
from darray._comm import resolve_comm
from darray._core import make_layout

from ._common import collective
from .npy_io import load_npy, save_npy

__all__ = ["TEXT_MAX_ELEMENTS", "frombuffer", "fromfile", "fromstring", "genfromtxt", "load", "loadtxt", "save",
           "savetxt"]

#: Largest array :func:`savetxt` gathers onto one rank (text files are for small arrays).
TEXT_MAX_ELEMENTS = 1 << 24


def _path(func: str, file, suffix: str | None = None) -> str:
    if not isinstance(file, (str, bytes, os.PathLike)):
        raise TypeError(f"{func}: file must be a path; got {type(file).__name__}, expected a str or os.PathLike "
                        f"(every rank writes/reads its own part of the file, so open file objects cannot be shared)")
    path = os.fsdecode(os.fspath(file))
    if suffix is not None and not path.endswith(suffix):
        path += suffix  # as numpy.save
    return path


def _text(func: str, fname, comm):
    """A text source for NumPy's parsers: a path as it is; an open file or lines, read whole on every rank.

    NumPy's loadtxt and genfromtxt also take an open file (``io.StringIO``,
    ``open(...)``) and a list (or generator) of lines. Every rank holds its
    own (SPMD: each rank ran the same ``open``), reads it whole, and the
    ranks compare a digest of what they read, so that ranks holding
    different text raise ValueError everywhere instead of mixing blocks.
    """
    if isinstance(fname, (str, bytes, os.PathLike)):
        return _path(func, fname)
    source: io.StringIO | io.BytesIO | list
    if hasattr(fname, "read"):
        content = collective(comm, fname.read, func=func)
        raw = content.encode("utf-8", "surrogatepass") if isinstance(content, str) else bytes(content)
        source = io.StringIO(content) if isinstance(content, str) else io.BytesIO(raw)
    elif isinstance(fname, (list, tuple)) or hasattr(fname, "__next__"):
        source = list(fname)
        if not all(isinstance(line, (str, bytes)) for line in source):
            raise TypeError(f"{func}: lines must be str or bytes; got "
                            f"{sorted({type(v).__name__ for v in source})}, expected a list of text lines")
        raw = b"\0".join(v.encode("utf-8", "surrogatepass") if isinstance(v, str) else b"b" + v for v in source)
    else:
        raise TypeError(f"{func}: file must be a path, an open file or a list of lines; got {type(fname).__name__}, "
                        f"expected a str, os.PathLike, a file object (every rank its own) or a list of str")
    digests = np.asarray(comm.allgather(np.frombuffer(hashlib.sha256(raw).digest(), dtype=np.uint8)))
    if not (digests == digests[:1]).all():
        differ = [r for r in range(len(digests)) if (digests[r] != digests[0]).any()]
        raise ValueError(f"{func}: the ranks read different text; got other text than rank 0's on rank(s) "
                         f"{differ}, expected the same file contents on every rank (every rank reads the whole "
                         f"text: open the same file, or build the same lines, on every rank)")
    return source


def _darray(func: str, x):
    if isinstance(x, darray.DArray):
        return x
    try:
        return darray.asarray(x)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{func}: expected a DArray or array-like; got {type(x).__name__} ({exc})") from exc


def save(file, arr, allow_pickle: bool = True) -> None:
    """Write ``arr`` to the ``.npy`` file ``file`` (``numpy.save``), every rank its own block.

    ``.npy`` is appended to a path without it, as NumPy does. ``allow_pickle``
    is accepted for NumPy's signature: darray arrays hold numbers, so nothing
    is ever pickled. ``arr`` may be an array-like (laid out as
    :func:`darray.asarray` would).
    """
    path = _path("save", file, ".npy")
    save_npy(path, _darray("save", arr), _func="save")


def load(file, mmap_mode=None, allow_pickle: bool = False, *, split="auto", grid=None, sizes=None, halo=0,
         boundary="none", comm=None, **kwargs):
    """Read the ``.npy`` file ``file`` into a DArray (``numpy.load``); each rank reads only its region.

    Never unpickles: ``allow_pickle=True`` raises ``ValueError``, object
    dtypes ``TypeError``. ``mmap_mode`` may be None or ``"r"`` (each rank
    reads its region either way; nothing is kept mapped); ``.npz`` archives
    are not read. Layout keywords as :func:`darray.io.load_npy`.
    """
    if allow_pickle:
        raise ValueError(f"load: allow_pickle=True is refused; got {allow_pickle!r}, expected False "
                         f"(darray never unpickles: .npy files of numbers need no pickle)")
    if mmap_mode not in (None, "r"):
        raise ValueError(f"load: unsupported mmap_mode; got {mmap_mode!r}, expected None or 'r'")
    unknown = set(kwargs) - {"fix_imports", "encoding", "max_header_size"}
    if unknown:
        raise TypeError(f"load: unexpected keyword arguments; got {sorted(unknown)}, expected NumPy's load options")
    path = _path("load", file)
    if path.endswith(".npz"):
        raise ValueError(f"load: .npz archives are not supported; got {path!r}, expected a .npy file")
    # numpy.load reads any .npy: checksums are verified when save wrote them, and their absence (a file NumPy
    # wrote) is no reason to warn; errors name load, the function called
    return load_npy(path, split=split, grid=grid, sizes=sizes, halo=halo, boundary=boundary, comm=comm,
                    _func="load", _unchecked="ignore")


def savetxt(fname, X, fmt="%.18e", delimiter=" ", newline="\n", header="", footer="", comments="# ",
            encoding=None) -> None:
    """Write a 1-d or 2-d array to a text file (``numpy.savetxt``) from rank 0.

    GATHERS the whole array onto rank 0 (one gather), which writes the file
    with ``numpy.savetxt``; every rank then raises the same error if the
    write failed. At most :data:`TEXT_MAX_ELEMENTS` elements (``ValueError``
    beyond, before any communication): text is for small arrays, use
    :func:`save` for big ones.
    """
    path = _path("savetxt", fname)
    x = _darray("savetxt", X)
    if x.ndim not in (1, 2):
        raise ValueError(f"savetxt: expected a 1-d or 2-d array; got shape {x.shape}, expected 1 or 2 dimensions")
    if x.size > TEXT_MAX_ELEMENTS:
        raise ValueError(f"savetxt: array too large for a text file; got {x.size} elements, expected at most "
                         f"{TEXT_MAX_ELEMENTS} (darray.io.numpy_files.TEXT_MAX_ELEMENTS); use darray.save")
    data = x.gather(root=0)

    def write():
        if x.comm.rank == 0:
            np.savetxt(path, to_numpy(data), fmt=fmt, delimiter=delimiter, newline=newline,
                       header=header, footer=footer, comments=comments, encoding=encoding)

    collective(x.comm, write, func="savetxt")


def loadtxt(fname, dtype=float, comments="#", delimiter=None, converters=None, skiprows=0, usecols=None,
            unpack: bool = False, ndmin: int = 0, encoding=None, max_rows=None, *, quotechar=None, split="auto",
            comm=None):
    """Read a text file into a DArray (``numpy.loadtxt``).

    EVERY rank parses the whole file with ``numpy.loadtxt`` (``O(file)``
    memory per rank, the file visible to every rank), then keeps its block:
    for small files. Every rank raises the same error for a missing or bad
    file. ``unpack=True`` returns the columns (a tuple of DArrays). ``fname``
    may also be an open file or lines that every rank holds, as NumPy's (read
    whole on every rank; the ranks check that the text is the same).
    """
    comm = resolve_comm(comm)
    path = _text("loadtxt", fname, comm)

    def read():
        return np.loadtxt(path, dtype=dtype, comments=comments, delimiter=delimiter, converters=converters,
                          skiprows=skiprows, usecols=usecols, unpack=False, ndmin=ndmin, encoding=encoding,
                          max_rows=max_rows, quotechar=quotechar)

    data = collective(comm, read, func="loadtxt")
    if unpack:
        columns = data.T if data.ndim > 1 else data
        return tuple(darray.asarray(np.ascontiguousarray(c), split=split, comm=comm) for c in columns) \
            if data.ndim > 1 else darray.asarray(data, split=split, comm=comm)
    return darray.asarray(data, split=split, comm=comm)


def _numbers(func: str, data: np.ndarray) -> np.ndarray:
    if data.dtype.kind not in "biufc" or data.dtype.fields is not None:
        raise TypeError(f"{func}: unsupported dtype; got {data.dtype!r}, expected bool, int, uint, float or complex "
                        f"(darray arrays hold numbers)")
    return data


def genfromtxt(fname, dtype=float, *, split="auto", comm=None, **kwargs):
    """Read a text file with missing values into a DArray (``numpy.genfromtxt``); numeric dtypes only.

    EVERY rank parses the whole file (``O(file)`` memory per rank), then keeps
    its block: for small files. NumPy's keywords pass through
    (``delimiter``, ``skip_header``, ``filling_values``, ``usecols``, ...).
    ``fname`` is a path, or an open file or lines that every rank holds (read
    whole on every rank; the ranks check that the text is the same).

    >>> import io, darray as np
    >>> np.genfromtxt(["1, 2, 3", "4,  , 6"], delimiter=",", filling_values=0, dtype=int).tolist()
    [[1, 2, 3], [4, 0, 6]]
    >>> np.genfromtxt(io.StringIO("7 8 9")).tolist()
    [7.0, 8.0, 9.0]
    """
    comm = resolve_comm(comm)
    path = _text("genfromtxt", fname, comm)
    data = collective(comm, lambda: _numbers("genfromtxt", np.genfromtxt(path, dtype=dtype, **kwargs)),
                      func="genfromtxt")
    return darray.asarray(data, split=split, comm=comm)


def fromfile(file, dtype=float, count: int = -1, sep: str = "", offset: int = 0, *, split="auto", comm=None):
    """A 1-d DArray from a binary or text file (``numpy.fromfile``).

    Binary (``sep=""``): every rank reads only its own region, at its byte
    offset (the file's length is metadata every rank reads). Text
    (``sep`` given): every rank parses the whole file, then keeps its block.

    >>> import os, tempfile, numpy, darray as np
    >>> path = os.path.join(tempfile.mkdtemp(), "raw.bin")
    >>> numpy.arange(5.0).tofile(path)
    >>> np.fromfile(path).gather().tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0]
    """
    path = _path("fromfile", file)
    comm = resolve_comm(comm)
    dtype = np.dtype(dtype)
    _numbers("fromfile", np.empty(0, dtype=dtype))
    if sep:
        data = collective(comm, lambda: np.fromfile(path, dtype=dtype, count=count, sep=sep, offset=offset),
                          func="fromfile")
        return darray.asarray(data, split=split, comm=comm)

    def size() -> int:
        available = (os.path.getsize(path) - offset) // dtype.itemsize
        if count > available or available < 0:
            raise ValueError(f"fromfile: file too short; got {max(available, 0)} items in {path!r} after offset "
                             f"{offset}, expected {count}")
        return available if count < 0 else count

    n = collective(comm, size, func="fromfile")
    layout = make_layout("fromfile", (n,), comm.size, split)
    cells = layout.block_slices(comm.rank)[0]
    block = collective(comm, lambda: np.fromfile(path, dtype=dtype, count=cells.stop - cells.start,
                                                 offset=offset + cells.start * dtype.itemsize), func="fromfile")
    if layout.split[0] is None:  # small: replicated, every rank read it all
        return darray.asarray(block, split=None, comm=comm)
    return darray.from_local(block, split=0, shape=(n,), comm=comm)


def frombuffer(buffer, dtype=float, count: int = -1, offset: int = 0, **layout):
    """A 1-d DArray from a buffer every rank holds (``numpy.frombuffer``); each rank keeps its block."""
    _numbers("frombuffer", np.empty(0, dtype=dtype))
    return darray.asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset), **layout)


def fromstring(string, dtype=float, count: int = -1, *, sep: str, **layout):
    """A 1-d DArray from text every rank holds (``numpy.fromstring`` with a separator); each rank keeps its block."""
    _numbers("fromstring", np.empty(0, dtype=dtype))
    return darray.asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep), **layout)
