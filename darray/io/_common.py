"""What every format shares: collective error agreement, layouts, block checksums.

Rules every reader and writer in :mod:`darray.io` follows:

- A step that may fail on some ranks only (opening a file, parsing a header,
  writing a block) runs through :func:`collective`: its outcome is agreed with
  one allgather and, when any rank failed, the SAME exception (type and
  message, naming the first failing rank) is raised on EVERY rank. No rank is
  ever left waiting in a collective the others skipped.
- Only *writer* ranks write: in a layout replicated along some grid dims the
  ranks with coordinate 0 along those dims (every cell is written once).
- Checksums are SHA-256 digests of each written block, stored with the
  block's global bounds in a table of version :data:`CHECKSUM_VERSION` (2):
  each digest covers the array's dtype (little-endian spelling), its shape
  and the block's bounds, then the block's bytes (C order, little-endian), so
  that editing the dtype, the shape or the block bounds in the metadata AND
  the table fails verification like damaged data does. Tables of version 1
  (digests of the bytes alone, written by earlier darray versions) are still
  verified as they were written. A reader verifies
  the stored blocks that lie inside its own region from memory; stored blocks
  that no reader holds whole (a different layout) are re-read and verified,
  spread over the ranks, when they total at most :data:`VERIFY_MAX_BYTES`
  (``verify="auto"``) or always (``verify=True``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import secrets
import warnings

import numpy as np

import darray
from .._core.dtypes import is_extra

__all__ = ["CorruptFileError", "ChecksumError", "MissingChunkError", "MissingChecksumWarning", "collective",
           "warn_unchecked", "agree", "wrap", "writer_blocks", "is_writer", "digest", "checksum_table",
           "verify_blocks", "host_block", "token", "check_darray", "check_dtype", "any_field", "has_times",
           "check_table", "block_bounds",
           "VERIFY_MAX_BYTES", "CHECKSUM_VERSION", "mpi_comm", "check_shape", "check_fits", "physical_memory",
           "MAX_NDIM"]

#: verify="auto" re-reads stored blocks that no rank holds whole only up to this many bytes in total.
VERIFY_MAX_BYTES = 64 << 20
_MESSAGE_BYTES = 4096
CHECKSUM_FORMAT = "darray-checksums"
#: Version of the checksum tables written now: digests bound to the dtype, the shape and the block bounds.
CHECKSUM_VERSION = 2
#: Versions :func:`check_table` reads: 1 (digests of the block bytes alone) and :data:`CHECKSUM_VERSION`.
READABLE_VERSIONS = (1, 2)
#: The dtypes a block's bytes are tried as when its version-2 digest fails (:func:`_saved_dtype`).
_DTYPES = ("?", "i1", "u1", "i2", "u2", "f2", "i4", "u4", "f4", "c8", "i8", "u8", "f8", "c16", "g", "G")


class CorruptFileError(ValueError):
    """A file or store exists but cannot be read as the array it claims to hold (truncated, damaged)."""


class ChecksumError(CorruptFileError):
    """The data read back does not match the checksum stored when it was saved."""


class MissingChecksumWarning(UserWarning):
    """A file loads without the checksums darray stores beside it (saved without them, or they were deleted)."""


class MissingChunkError(CorruptFileError):
    """A chunk file of a zarr store is gone: what zarr reads in its place (the fill value) fails the checksum."""


# Exception types that travel between ranks (index = code - 1); anything else arrives as RuntimeError.
_KINDS = (FileNotFoundError, MissingChunkError, ChecksumError, CorruptFileError, FileExistsError, PermissionError,
          IsADirectoryError, NotADirectoryError, OSError, TypeError, ValueError, KeyError, ImportError, MemoryError,
          RuntimeError)


def _code(exc: BaseException | None) -> int:
    if exc is None:
        return 0
    for i, kind in enumerate(_KINDS):
        if type(exc) is kind:
            return i + 1
    for i, kind in enumerate(_KINDS):
        if isinstance(exc, kind):
            return i + 1
    return len(_KINDS)  # RuntimeError


def agree(comm, exc: BaseException | None, func: str | None = None) -> None:
    """Raise the first failing rank's exception on every rank (no-op when every rank is fine).

    ``func`` prefixes messages that do not name a function yet (errors from zarr, h5py, the OS).
    """
    codes = np.asarray(comm.allgather(np.asarray([_code(exc)], dtype=np.int64)))[:, 0]
    failed = np.flatnonzero(codes)
    if failed.size == 0:
        return
    first = int(failed[0])
    buf = np.zeros(_MESSAGE_BYTES, dtype=np.uint8)
    if comm.rank == first:
        text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        if func and not text.startswith(f"{func}:"):
            text = f"{func}: {type(exc).__name__}: {text}"
        data = text.encode("utf-8", "replace")[:_MESSAGE_BYTES]
        buf[:len(data)] = np.frombuffer(data, dtype=np.uint8)
    text = bytes(np.asarray(comm.bcast(buf, first))).rstrip(b"\0").decode("utf-8", "replace")
    if comm.size > 1:
        text += f" [on rank {first}" + (f"; {failed.size} ranks failed]" if failed.size > 1 else "]")
    kind = _KINDS[int(codes[first]) - 1]
    if kind is KeyError:
        kind = ValueError
    raise kind(text) from exc


def collective(comm, step, *args, func: str | None = None):
    """Run ``step(*args)`` on every rank and agree on its outcome (see :func:`agree`); returns its result."""
    try:
        result, exc = step(*args), None
    except Exception as e:  # every failure is agreed, then re-raised everywhere
        result, exc = None, e
    agree(comm, exc, func)
    return result


def warn_unchecked(func: str, missing: str, expected: str) -> None:
    """Issue the :class:`MissingChecksumWarning` of a load without checksums (call it on every rank alike).

    Parameters
    ----------
    func : str
        The public function (the message starts with it).
    missing : str
        What is missing, naming the path (``"no 'darray' attribute in the zarr store '/data/x.zarr'"``).
    expected : str
        What darray writes there.
    """
    warnings.warn(f"{func}: loading without checksums; got {missing}, expected {expected} (the data cannot be "
                  f"verified: it was saved without checksums, by another program, or they were removed; "
                  f"verify=False loads it silently, verify=True refuses it)", MissingChecksumWarning, stacklevel=3)


def token(comm) -> str:
    """A random hex token chosen on rank 0 and known to every rank."""
    buf = np.zeros(16, dtype=np.uint8)
    if comm.rank == 0:
        buf[:] = np.frombuffer(secrets.token_hex(8).encode("ascii"), dtype=np.uint8)
    return bytes(np.asarray(comm.bcast(buf, 0))).decode("ascii")


def mpi_comm(comm):
    """The mpi4py communicator behind a darray communicator, or None."""
    inner = getattr(comm, "comm", None)
    if inner is not None and type(inner).__module__.startswith("mpi4py"):
        return inner
    return None


# ------------------------------------------------------------------ arrays and layouts
def check_darray(func: str, x) -> None:
    if not isinstance(x, darray.DArray):
        raise TypeError(f"{func}: expected a DArray; got {type(x).__name__}")


def check_dtype(func: str, dtype) -> np.dtype:
    """Refuse what darray cannot hold (objects, strings) before reading any data."""
    dtype = np.dtype(dtype)
    if dtype.hasobject or dtype.subdtype is not None or (dtype.kind not in "biufc" and not is_extra(dtype)):
        shown = dtype.descr if dtype.fields is not None else dtype.str
        raise TypeError(f"{func}: unsupported stored dtype; got {shown!r}, expected bool, int, uint, float, "
                        f"complex, datetime64, timedelta64 or records of those (object arrays are never unpickled)")
    return dtype


def any_field(dtype: np.dtype, test) -> bool:
    """Whether ``test`` holds for ``dtype`` or, in a record, for any field's dtype (nested records and subarray
    fields as they are: ``test`` sees a subarray field's own dtype, its element dtype through ``.base``).

    >>> any_field(np.dtype([("x", "f8"), ("p", [("t", "M8[s]")])]), lambda d: d.kind == "M")
    True
    """
    if test(dtype):
        return True
    return dtype.names is not None and any(any_field(dtype.fields[name][0], test) for name in dtype.names)


def has_times(dtype: np.dtype) -> bool:
    """Whether ``dtype`` holds dates or durations, also in a record's fields (HDF5 has no type for them)."""
    return any_field(dtype, lambda d: d.base.kind in "Mm")


#: NumPy's limit on the number of dimensions.
MAX_NDIM = 64


def check_shape(func: str, where: str, shape, dtype) -> tuple[int, ...]:
    """The stored shape as a tuple of ints, or CorruptFileError for a hostile or damaged one.

    Lengths must be non-negative integers, at most :data:`MAX_NDIM` of them,
    and the array's byte size must fit in a signed 64-bit integer.
    """
    try:
        dims = tuple(shape)
    except TypeError:
        dims = None
    if (dims is None or len(dims) > MAX_NDIM
            or not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in dims)):
        raise CorruptFileError(f"{func}: damaged metadata in {where!r}; got shape {shape!r}, expected at most "
                               f"{MAX_NDIM} non-negative integer lengths")
    dims = tuple(int(n) for n in dims)
    if math.prod(dims) * np.dtype(dtype).itemsize >= 2 ** 63:
        raise CorruptFileError(f"{func}: damaged metadata in {where!r}; got shape {dims} of dtype "
                               f"{np.dtype(dtype).str}, expected an array of fewer than 2**63 bytes")
    return dims


def physical_memory() -> int | None:
    """This machine's physical memory in bytes (None where the OS does not say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        return None


def _gib(n: int) -> str:
    return f"{n / 2 ** 30:.3g} GiB"


def check_fits(func: str, what: str, shape, dtype) -> None:
    """MemoryError (raise it inside a :func:`collective` step) when ``what`` cannot fit in this machine's memory.

    A hostile or mistaken shape then fails with a message instead of an
    allocation that the kernel kills the job for.
    """
    nbytes = math.prod(int(n) for n in shape) * np.dtype(dtype).itemsize
    limit = physical_memory()
    if limit is not None and nbytes > limit:
        raise MemoryError(f"{func}: {what} needs {_gib(nbytes)} (shape {tuple(shape)}, dtype "
                          f"{np.dtype(dtype).str}); got more than this machine's memory ({_gib(limit)}), expected "
                          f"a block that fits (load on more ranks, or check the stored shape)")


def wrap(block: np.ndarray, layout, comm):
    """A DArray from this rank's owned block of ``layout`` (ghost cells zero, stale)."""
    return darray.from_local(block, split=layout.split, grid=layout.dims, shape=layout.shape, halo=layout.halo,
                             boundary=layout.boundary, comm=comm)


def host_block(x) -> np.ndarray:
    """This rank's owned cells as a C-contiguous NumPy array (a view when already one)."""
    local = x.local
    if isinstance(local, np.generic):  # a 0-d block stored as a NumPy scalar
        local = np.asarray(local)
    elif not isinstance(local, np.ndarray):
        local = np.asarray(local.get() if hasattr(local, "get") else np.from_dlpack(local))
    return np.asarray(local, order="C")  # (ascontiguousarray would make 0-d arrays 1-d)


def block_bounds(layout, rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    cells = layout.block_slices(rank)
    return tuple(s.start for s in cells), tuple(s.stop for s in cells)


def is_writer(layout, rank: int) -> bool:
    """True for the one rank that writes each block (coordinate 0 along replicated grid dims)."""
    coords = layout.coords(rank)
    return all(c == 0 for c, s in zip(coords, layout.split) if s is None)


def writer_blocks(layout) -> list[tuple[int, tuple, tuple]]:
    """(rank, start, stop) of every block that is written, one per distinct block."""
    return [(r, *block_bounds(layout, r)) for r in range(layout.nprocs) if is_writer(layout, r)]


# ------------------------------------------------------------------ checksums
def _little(block) -> np.ndarray:
    """The block in C order with little-endian items (its bytes as the digests see them)."""
    a = np.asarray(block, order="C")
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and np.little_endian is False):
        a = a.astype(a.dtype.newbyteorder("<"))
    return a


def _binding(dtype, shape, start, stop) -> bytes:
    """What a version-2 digest covers before the block's bytes: the dtype, the array's shape, the block's bounds."""
    doc = {"dtype": dtype_text(dtype), "shape": [int(n) for n in shape], "start": [int(a) for a in start],
           "stop": [int(b) for b in stop]}
    return b"darray-block\0" + json.dumps(doc, sort_keys=True, separators=(",", ":")).encode("ascii") + b"\0"


def _sha256(prefix: bytes, a: np.ndarray) -> str:
    h = hashlib.sha256(prefix)
    if a.size:
        h.update(memoryview(a.reshape(-1).view(np.uint8)))  # (a byte view: dates and records export no buffer format)
    return h.hexdigest()


def digest(block: np.ndarray, where=None) -> str:
    """SHA-256 of a block, as a hex string.

    Parameters
    ----------
    block : numpy.ndarray
        The block's cells (any memory order and byte order).
    where : tuple, optional
        ``(shape, start, stop)``: the whole array's shape and the block's
        global bounds. Given, the digest covers the dtype, the shape and the
        bounds, then the bytes (checksum tables of version 2); omitted, the
        bytes alone (version 1).

    Returns
    -------
    str
        64 hex digits. The bytes are taken in C order, little-endian, so that
        the digest does not depend on the machine or the memory order.
    """
    a = _little(block)
    return _sha256(b"" if where is None else _binding(a.dtype, *where), a)


def _saved_dtype(block: np.ndarray, where, want: str) -> str | None:
    """The dtype (of the block's item size) whose version-2 digest of ``block`` is ``want``, or None.

    Called for a block whose digest failed: when its bytes match the digest
    under another dtype, the data is intact and the dtype in the metadata was
    changed since the save.
    """
    a = _little(block)
    for name in _DTYPES:
        other = _le(name)
        if other.itemsize == a.dtype.itemsize and other != _le(a.dtype) and _sha256(_binding(other, *where), a) == want:
            return other.str
    return None


def checksum_table(x, block: np.ndarray) -> dict:
    """Every written block's bounds and digest, the same dict on every rank (one allgather of 33 bytes).

    The digests are of version :data:`CHECKSUM_VERSION` (see :func:`digest`).
    """
    comm, layout = x.comm, x.layout
    mine = np.zeros(33, dtype=np.uint8)
    if is_writer(layout, comm.rank):
        mine[0] = 1
        start, stop = block_bounds(layout, comm.rank)
        mine[1:] = np.frombuffer(bytes.fromhex(digest(block, (layout.shape, start, stop))), dtype=np.uint8)
    table = np.asarray(comm.allgather(mine))
    blocks = []
    for r, start, stop in writer_blocks(layout):
        blocks.append({"start": list(start), "stop": list(stop), "sha256": bytes(table[r, 1:]).hex()})
    return {"format": CHECKSUM_FORMAT, "version": CHECKSUM_VERSION, "algorithm": "sha256", "shape": list(layout.shape),
            "dtype": dtype_text(x.dtype), "blocks": blocks}


def _le(dtype) -> np.dtype:
    return np.dtype(dtype).newbyteorder("<")


def dtype_text(dtype) -> str | list:
    """``dtype`` (little-endian) as JSON holds it: its string, or a record's field list (``descr``).

    >>> stored_dtype(dtype_text(np.dtype([("x", "f8"), ("p", [("a", "u1")], (2,))]))) == np.dtype(
    ...     [("x", "<f8"), ("p", [("a", "u1")], (2,))])
    True
    """
    dtype = _le(dtype)
    return dtype.str if dtype.names is None else dtype.descr


def stored_dtype(text) -> np.dtype:
    """The dtype :func:`dtype_text` wrote (plain data only: a string, or nested lists of names and formats)."""
    def field(entry):
        name, form, *shape = entry
        form = [field(f) for f in form] if isinstance(form, list) else str(form)
        return (str(name), form, *(tuple(int(n) for n in s) for s in shape))

    return _le(np.dtype([field(f) for f in text]) if isinstance(text, list) else np.dtype(str(text)))


def check_table(func: str, table, shape, dtype) -> list:
    """The validated block list of a stored checksum table, or CorruptFileError.

    Returns
    -------
    list of tuple
        ``(start, stop, sha256, bound)`` per stored block; ``bound`` is True
        for a table of version 2 (digests that cover dtype, shape and bounds).

    Raises
    ------
    ChecksumError
        The table describes an array of another shape or dtype.
    CorruptFileError
        The table is damaged, or of a version this darray does not read.
    """
    try:
        if table.get("format") != CHECKSUM_FORMAT or table.get("algorithm") != "sha256":
            raise ValueError("unknown checksum format")
        version = table.get("version", 1)
        if type(version) is not int or version not in READABLE_VERSIONS:
            raise CorruptFileError(f"{func}: unsupported checksum table version; got {version!r}, expected one of "
                                   f"{list(READABLE_VERSIONS)} (written by a newer darray, or damaged)")
        if tuple(table["shape"]) != tuple(shape) or stored_dtype(table["dtype"]) != _le(dtype):
            raise ChecksumError(f"{func}: the stored checksums describe another array; got shape "
                                f"{tuple(table['shape'])} dtype {table['dtype']}, expected shape {tuple(shape)} "
                                f"dtype {np.dtype(dtype).str}")
        blocks = [(tuple(int(v) for v in b["start"]), tuple(int(v) for v in b["stop"]), str(b["sha256"]),
                   version >= 2) for b in table["blocks"]]
    except (ChecksumError, CorruptFileError):
        raise
    except Exception as e:
        raise CorruptFileError(f"{func}: damaged checksum table; got {type(e).__name__}: {e}") from e
    for start, stop, _, _ in blocks:
        if len(start) != len(shape) or any(not 0 <= a <= b <= n for a, b, n in zip(start, stop, shape)):
            raise CorruptFileError(f"{func}: damaged checksum table; got block {start}..{stop}, expected bounds "
                                   f"inside {tuple(shape)}")
    return blocks


def _inside(start, stop, lo, hi) -> bool:
    return all(low <= a and b <= h for a, b, low, h in zip(start, stop, lo, hi))


def verify_blocks(func: str, comm, layout, block: np.ndarray, blocks: list, read_region, verify,
                  diagnose=None) -> None:
    """Check the stored digests against the data (collective; raises ChecksumError on every rank).

    Parameters
    ----------
    func : str
        The public function, for messages.
    comm : Communicator
        The ranks that load (every rank calls this).
    layout : Layout
        The layout being loaded (its shape is the stored array's shape).
    block : numpy.ndarray
        This rank's owned cells of ``layout``, of the stored dtype.
    blocks : list of tuple
        The stored ``(start, stop, sha256, bound)`` entries (:func:`check_table`).
    read_region : callable
        ``read_region(slices)`` reads any region of the stored array (used for
        stored blocks that no rank holds whole).
    verify : {"auto", True, False}
        ``"auto"`` re-reads such blocks only up to :data:`VERIFY_MAX_BYTES`.
    diagnose : callable, optional
        ``diagnose(bad)``, given the (start, stop) bounds of the mismatching
        blocks, may return a more precise error than the checksum mismatch (a
        zarr store's missing chunk files: :class:`MissingChunkError`), or None.

    Raises
    ------
    ChecksumError
        On every rank, when any block's digest differs; the message says so
        when the bytes match the digest under another dtype (the dtype in the
        metadata was changed since the save).
    """
    if verify is False or verify is None or not blocks:
        return  # nothing to check (the same decision on every rank): no communication
    rank = comm.rank
    shape = tuple(layout.shape)
    lo, hi = block_bounds(layout, rank)
    regions = [block_bounds(layout, r) for r in range(layout.nprocs)]
    itemsize = block.dtype.itemsize
    bad = []
    saved_as = []  # dtypes under which a failing block's bytes match its digest
    uncovered = []

    def check(part, start, stop, want, bound):
        where = (shape, start, stop) if bound else None
        if digest(part, where) != want:
            bad.append((start, stop))
            if bound and not saved_as:
                saved_as.append(_saved_dtype(part, where, want))

    try:
        for start, stop, want, bound in blocks:
            if any(a == b for a, b in zip(start, stop)):
                continue  # empty block: nothing to check
            if _inside(start, stop, lo, hi):
                check(block[tuple(slice(a - low, b - low) for a, b, low in zip(start, stop, lo))], start, stop, want, bound)
            elif not any(_inside(start, stop, low, h) for low, h in regions):
                uncovered.append((start, stop, want, bound))
        total = sum(math.prod(b - a for a, b in zip(s, e)) for s, e, _, _ in uncovered) * itemsize
        if verify == "auto" and total > VERIFY_MAX_BYTES:
            uncovered = []
        for i, (start, stop, want, bound) in enumerate(uncovered):
            if i % comm.size == rank:
                check(np.asarray(read_region(tuple(slice(a, b) for a, b in zip(start, stop)))), start, stop, want,
                      bound)
        exc = diagnose(bad) if bad and diagnose is not None else None
        if bad and exc is None:
            exc = _mismatch(func, bad, block.dtype, shape, saved_as[0] if saved_as else None,
                            any(b for _, _, _, b in blocks))
    except Exception as e:
        exc = e
    agree(comm, exc, func)


def _mismatch(func: str, bad, dtype, shape, saved_as: str | None, bound: bool) -> ChecksumError:
    where = ", ".join(f"{tuple(s)}..{tuple(e)}" for s, e in bad[:4])
    if saved_as is not None:
        return ChecksumError(f"{func}: checksum mismatch; got the dtype {_le(dtype).str} in the metadata, expected "
                             f"{saved_as}: the bytes of the block(s) {where} match the SHA-256 stored when the array "
                             f"was saved with dtype {saved_as} (the dtype was changed in the metadata and the "
                             f"checksum table since the save)")
    covers = (f" over the dtype {_le(dtype).str}, the shape {shape}, the block bounds and the bytes (the file is "
              f"damaged, or its data, dtype, shape or block bounds were changed since the save)") if bound else \
        " (the file is damaged)"
    return ChecksumError(f"{func}: checksum mismatch; got different data in the block(s) {where}, expected the "
                         f"SHA-256 stored when the array was saved{covers}")
