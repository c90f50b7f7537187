"""Parallel ``.npy`` files: one ordinary NumPy file written and read by every rank at byte offsets.

Saving: rank 0 writes the header (:mod:`numpy.lib.format`, version 1.0, or
2.0 for huge headers) and sizes the file; then every writer rank writes its
block at its byte offset:

- when every block is one contiguous byte range of the C-ordered file (the
  first cut axis is preceded only by length-1 extents: row-cut layouts), with
  ``os.pwrite`` — fully parallel, no MPI-IO needed;
- otherwise (column cuts, 2-d grids) with MPI-IO: a subarray file view and
  one collective ``File.Write_all``; without mpi4py the array is first
  redistributed to rows.

The checksums go to a JSON sidecar ``<path>.sha256`` (one SHA-256 per block,
keyed by block bounds), committed before the data; the sidecar also says
which file its table describes and what describes the file it replaces, so
that a save killed between the two renames (any number of times in a row)
leaves data that verifies (:mod:`darray.io._sidecar`). Loading parses the header with ``read_magic`` /
``read_array_header_*`` (never unpickles: object dtypes are refused), checks
the file length, and each rank reads only its own region (``pread`` for a
contiguous region, a read-only memmap slice otherwise).
"""

from __future__ import annotations

import io
import json
import math
import os
import re

import numpy as np

import darray

from ._atomic import atomic_targets
from .._comm import resolve_comm
from .._core import make_layout
from ._common import (ChecksumError, CorruptFileError, block_bounds, check_darray, check_dtype,
                      check_fits, check_shape, checksum_table, collective, host_block, is_writer, mpi_comm,
                      verify_blocks, warn_unchecked, wrap, writer_blocks)
from ._sidecar import SIDECAR
from ._sidecar import candidates as sidecar_candidates
from ._sidecar import document as sidecar_document
from ._sidecar import previous as sidecar_previous

__all__ = ["save_npy", "load_npy"]


def _header(shape, dtype) -> bytes:
    d = {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": tuple(shape)}
    buf = io.BytesIO()
    try:
        np.lib.format.write_array_header_1_0(buf, d)
    except ValueError:  # header longer than 65535 bytes
        buf = io.BytesIO()
        np.lib.format.write_array_header_2_0(buf, d)
    return buf.getvalue()


def _contiguous(start, stop, shape) -> bool:
    """True when the block [start, stop) is one byte range of the C-ordered array (or empty)."""
    ext = [b - a for a, b in zip(start, stop)]
    if 0 in ext:
        return True
    partial = [a for a, (e, n) in enumerate(zip(ext, shape)) if e != n]
    if not partial:
        return True
    last = partial[-1]
    return all(e == 1 for e in ext[:last])


def _flat_offset(start, shape) -> int:
    off = 0
    for a, n in zip(start, shape):
        off = off * n + a
    return off


def _pwrite_all(fd: int, data: memoryview, offset: int) -> None:
    while len(data):
        n = os.pwrite(fd, data, offset)
        data, offset = data[n:], offset + n


def _pread_into(fd: int, out: memoryview, offset: int) -> None:
    while len(out):
        n = os.preadv(fd, [out], offset)
        if n == 0:
            raise CorruptFileError("load_npy: unexpected end of file")
        out, offset = out[n:], offset + n


def save_npy(path, x, *, checksum: bool = True, _func: str = "save_npy") -> None:
    """Write ``x`` to ``path`` as a standard ``.npy`` file, in parallel (collective).

    Every rank writes its own block at its byte offset; the file appears
    atomically (temporary name + rename) once every rank has written.
    ``checksum=True`` stores per-block SHA-256 digests in ``path + ".sha256"``.

    Examples
    --------
    >>> import os, tempfile, numpy, darray as da
    >>> from darray.io import save_npy, load_npy
    >>> p = os.path.join(tempfile.mkdtemp(), "x.npy")     # the same path on every rank
    >>> save_npy(p, da.arange(10.0))
    >>> numpy.load(p)[-1]
    np.float64(9.0)
    """
    func = _func
    check_darray(func, x)
    comm, layout = x.comm, x.layout
    shape, dtype = x.shape, np.dtype(x.dtype)
    contiguous = all(_contiguous(s, e, shape) for _, s, e in writer_blocks(layout))
    if not contiguous and mpi_comm(comm) is None and comm.size > 1:
        x = darray.redistribute(x, split=0)  # rows are contiguous byte ranges
        layout, contiguous = x.layout, True
    block = host_block(x)
    table = checksum_table(x, block) if checksum else None
    header = _header(shape, dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    # The sidecar is committed FIRST and also says what describes the file it replaces (chosen by that
    # file's identity): a job killed between the two renames leaves the old data, which then verifies.
    side = _sidecar(path)
    with atomic_targets(func, comm, [side, path]) as (tmp_sidecar, tmp):
        def create():
            if comm.rank == 0:
                with open(tmp, "wb") as f:
                    f.write(header)
                    f.truncate(len(header) + nbytes)
                    made = os.fstat(f.fileno())
                if table is not None:
                    final = os.path.abspath(os.fspath(path))  # (atomic_targets has checked the path)
                    doc = sidecar_document(table, made, sidecar_previous(final, final + SIDECAR))
                    with open(tmp_sidecar, "w") as f:
                        json.dump(doc, f)

        collective(comm, create, func=func)
        writer = is_writer(layout, comm.rank)
        if contiguous:
            def write():
                if writer and block.size:
                    start, _ = block_bounds(layout, comm.rank)
                    fd = os.open(tmp, os.O_WRONLY)
                    try:
                        _pwrite_all(fd, memoryview(block.reshape(-1).view(np.uint8)),
                                    len(header) + _flat_offset(start, shape) * dtype.itemsize)
                    finally:
                        os.close(fd)

            collective(comm, write, func=func)
        else:
            collective(comm, _mpi_write, mpi_comm(comm), tmp, len(header), layout, comm.rank, block,
                       writer and block.size > 0, func=func)


def _sidecar(path):
    """``path + ".sha256"``, or ``path`` itself when it is no path at all (the target check then refuses it)."""
    try:
        return os.fspath(path) + (SIDECAR if isinstance(os.fspath(path), str) else SIDECAR.encode())
    except TypeError:
        return path


def _mpi_write(mcomm, path: str, disp: int, layout, rank: int, block: np.ndarray, active: bool) -> None:
    """One collective MPI-IO write of every rank's block through a subarray file view."""
    from mpi4py import MPI
    from mpi4py.util.dtlib import from_numpy_dtype

    etype = from_numpy_dtype(block.dtype)
    fh = MPI.File.Open(mcomm, path, MPI.MODE_WRONLY)
    filetype = None
    try:
        if active:
            start, stop = block_bounds(layout, rank)
            filetype = etype.Create_subarray(list(layout.shape), [b - a for a, b in zip(start, stop)],
                                             list(start)).Commit()
            fh.Set_view(disp, etype, filetype)
            fh.Write_all([block, block.size, etype])
        else:
            fh.Set_view(disp, etype, etype)
            fh.Write_all([np.empty(0, dtype=block.dtype), 0, etype])
    finally:
        fh.Close()
        if filetype is not None:
            filetype.Free()


def read_npy_header(func: str, path: str):
    """(shape, fortran_order, dtype, data offset) of a ``.npy`` file; checks its length. Never unpickles.

    Anything wrong with the header (no magic string, an unknown version, a
    header that is not the dict NumPy writes, however it fails to parse) is a
    :class:`CorruptFileError` naming the file and the problem.
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{func}: no such file; got {path!r}, expected an existing .npy file")
    with open(path, "rb") as f:
        try:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
            else:
                raise ValueError(f"unsupported format version {version}")
        except Exception as e:  # a damaged header fails in the parser with anything (TokenError, ...)
            raise CorruptFileError(f"{func}: not a readable .npy file; got {path!r} ({_header_problem(e)}), "
                                   f"expected a NumPy .npy file of format version 1.0 or 2.0") from e
        offset = f.tell()
        size = os.fstat(f.fileno()).st_size
    dtype = check_dtype(func, dtype)
    shape = check_shape(func, path, shape, dtype)
    expected = offset + math.prod(shape) * dtype.itemsize
    if size < expected:
        raise CorruptFileError(f"{func}: truncated file; got {size} bytes in {path!r}, expected {expected} for "
                               f"shape {tuple(shape)} dtype {dtype.str}")
    return tuple(shape), bool(fortran), dtype, offset


def _header_problem(exc: Exception) -> str:
    """What is wrong with a header, in a few words (the parser's own message, its first line, shortened)."""
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", " ".join(str(exc).split()))  # no addresses: one text on every rank
    if type(exc) is not ValueError:  # NumPy's own ValueErrors say what is wrong; anything else is a parser failure
        text = f"the header is not the dict NumPy writes: {type(exc).__name__}" + (f": {text}" if text else "")
    return text if len(text) <= 300 else text[:297] + "..."


def _unchecked_why(path: str, blocks) -> str:
    """Why no checksums describe ``path``: no sidecar (``blocks`` None), or one of an interrupted save (``[]``)."""
    if blocks is None:
        return f"no {path + SIDECAR!r}"
    return (f"a {path + SIDECAR!r} whose save was interrupted before its data replaced {path!r}, which was saved "
            f"without checksums")


def load_npy(path, *, split="auto", grid=None, sizes=None, halo=0, boundary="none", comm=None,
             verify="auto", _func: str = "load_npy", _unchecked: str = "warn"):
    """Read a ``.npy`` file into a DArray; each rank reads only its own region (collective).

    Any ``.npy`` of bool/int/uint/float/complex dtype (C or Fortran order)
    loads into any layout. Object/structured dtypes are refused, never
    unpickled. A missing, truncated or damaged file raises the same error on
    every rank. ``verify``: ``"auto"`` checks the sidecar's digests that are
    cheap to check (see :mod:`darray.io`), ``True`` all of them, ``False``
    none. Blocks are NumPy arrays (use ``x.to_device`` for another backend).

    A file without its ``.sha256`` sidecar (written by ``numpy.save``, by
    ``save_npy(..., checksum=False)``, or the sidecar was deleted) loads
    with a :class:`~darray.io.MissingChecksumWarning` under
    ``verify="auto"``, raises ``ValueError`` under ``verify=True`` and loads
    silently under ``verify=False``.

    Examples
    --------
    >>> import os, tempfile, darray as da
    >>> from darray.io import save_npy, load_npy
    >>> p = os.path.join(tempfile.mkdtemp(), "x.npy")     # the same path on every rank
    >>> save_npy(p, da.arange(6.0))
    >>> float(da.sum(load_npy(p, verify=True)))
    15.0
    """
    func = _func
    comm = resolve_comm(comm)
    path = os.path.abspath(os.fspath(path))

    def open_meta():
        shape, fortran, dtype, offset = read_npy_header(func, path)
        blocks = sidecar_candidates(func, path, shape, dtype) if verify is not False else None
        if verify is True and not blocks:
            raise ValueError(f"{func}: verify=True needs checksums; got {_unchecked_why(path, blocks)}, expected "
                             f"the sidecar written by save_npy")
        return shape, fortran, dtype, offset, blocks

    shape, fortran, dtype, offset, blocks = collective(comm, open_meta, func=func)
    if not blocks and verify is not False and _unchecked == "warn":
        warn_unchecked(func, _unchecked_why(path, blocks), "the checksum sidecar save_npy writes")
    layout = make_layout(func, shape, comm.size, split, grid, sizes, halo, boundary)
    start, stop = block_bounds(layout, comm.rank)
    region = tuple(slice(a, b) for a, b in zip(start, stop))

    def mapped():
        return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=shape, order="F" if fortran else "C")

    def read_region(cells):
        if math.prod(s.stop - s.start for s in cells) == 0:
            return np.empty(tuple(s.stop - s.start for s in cells), dtype=dtype)
        return np.array(mapped()[cells], order="C")

    def read():
        check_fits(func, f"the block of rank {comm.rank}", tuple(b - a for a, b in zip(start, stop)), dtype)
        out = np.empty(tuple(b - a for a, b in zip(start, stop)), dtype=dtype.newbyteorder("="))
        if out.size == 0:
            return out
        if not fortran and _contiguous(start, stop, shape) and dtype.isnative:
            with open(path, "rb") as f:
                _pread_into(f.fileno(), memoryview(out.reshape(-1).view(np.uint8)),
                            offset + _flat_offset(start, shape) * dtype.itemsize)
            return out
        out[...] = mapped()[region]
        return out

    block = collective(comm, read, func=func)
    first = None
    for candidate in blocks or ():  # the file's own checksums first, then those of an interrupted commit
        try:
            verify_blocks(func, comm, layout, block, candidate, read_region, verify)
            break
        except ChecksumError as e:  # (raised on every rank alike: every rank tries the same candidates)
            first = first or e
    else:
        if first is not None:
            raise first
    return wrap(block, layout, comm)
