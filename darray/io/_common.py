"""What every format shares: collective error agreement, layouts, block checksums.

Rules every reader and writer in :mod:`darray.io` follows:

- A step that may fail on some ranks only (opening a file, parsing a header,
  writing a block) runs through :func:`collective`: its outcome is agreed with
  one allgather and, when any rank failed, the SAME exception (type and
  message, naming the first failing rank) is raised on EVERY rank. No rank is
  ever left waiting in a collective the others skipped.
- Only *writer* ranks write: in a layout replicated along some grid dims the
  ranks with coordinate 0 along those dims (every cell is written once).
- Checksums are SHA-256 digests of each written block's bytes (C order,
  little-endian), stored with the block's global bounds. A reader verifies
  the stored blocks that lie inside its own region from memory; stored blocks
  that no reader holds whole (a different layout) are re-read and verified,
  spread over the ranks, when they total at most :data:`VERIFY_MAX_BYTES`
  (``verify="auto"``) or always (``verify=True``).
"""

from __future__ import annotations

import hashlib
import math
import os
import secrets

import numpy as np

import darray

__all__ = ["CorruptFileError", "ChecksumError", "MissingChunkError", "MissingChecksumWarning", "collective",
           "agree", "wrap", "writer_blocks", "is_writer", "digest", "checksum_table",
           "verify_blocks", "host_block", "token", "check_darray", "check_dtype", "check_table", "block_bounds",
           "VERIFY_MAX_BYTES", "mpi_comm", "check_shape", "check_fits", "physical_memory", "MAX_NDIM"]

#: verify="auto" re-reads stored blocks that no rank holds whole only up to this many bytes in total.
VERIFY_MAX_BYTES = 64 << 20
_MESSAGE_BYTES = 4096
CHECKSUM_FORMAT = "darray-checksums"


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
    except Exception as e:  # noqa: BLE001 - every failure is agreed, then re-raised everywhere
        result, exc = None, e
    agree(comm, exc, func)
    return result


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
    """Refuse what darray cannot hold (objects, strings, records) before reading any data."""
    dtype = np.dtype(dtype)
    if dtype.hasobject or dtype.kind not in "biufc" or dtype.fields is not None or dtype.subdtype is not None:
        shown = dtype.descr if dtype.fields is not None else dtype.str
        raise TypeError(f"{func}: unsupported stored dtype; got {shown!r}, expected bool, int, uint, float "
                        f"or complex (object arrays are never unpickled)")
    return dtype


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
def digest(block: np.ndarray) -> str:
    """SHA-256 of the block's bytes in C order, little-endian."""
    a = np.asarray(block, order="C")
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and np.little_endian is False):
        a = a.astype(a.dtype.newbyteorder("<"))
    h = hashlib.sha256()
    if a.size:
        h.update(memoryview(a.reshape(-1)).cast("B"))
    return h.hexdigest()


def checksum_table(x, block: np.ndarray) -> dict:
    """Every written block's bounds and digest, the same dict on every rank (one allgather of 33 bytes)."""
    comm, layout = x.comm, x.layout
    mine = np.zeros(33, dtype=np.uint8)
    if is_writer(layout, comm.rank):
        mine[0] = 1
        mine[1:] = np.frombuffer(bytes.fromhex(digest(block)), dtype=np.uint8)
    table = np.asarray(comm.allgather(mine))
    blocks = []
    for r, start, stop in writer_blocks(layout):
        blocks.append({"start": list(start), "stop": list(stop), "sha256": bytes(table[r, 1:]).hex()})
    return {"format": CHECKSUM_FORMAT, "version": 1, "algorithm": "sha256", "shape": list(layout.shape),
            "dtype": _le(x.dtype).str, "blocks": blocks}


def _le(dtype) -> np.dtype:
    return np.dtype(dtype).newbyteorder("<")


def check_table(func: str, table, shape, dtype) -> list:
    """The validated block list of a stored checksum table, or CorruptFileError."""
    try:
        if table.get("format") != CHECKSUM_FORMAT or table.get("algorithm") != "sha256":
            raise ValueError("unknown checksum format")
        if tuple(table["shape"]) != tuple(shape) or _le(table["dtype"]) != _le(dtype):
            raise ChecksumError(f"{func}: the stored checksums describe another array; got shape "
                                f"{tuple(table['shape'])} dtype {table['dtype']}, expected shape {tuple(shape)} "
                                f"dtype {np.dtype(dtype).str}")
        blocks = [(tuple(int(v) for v in b["start"]), tuple(int(v) for v in b["stop"]), str(b["sha256"]))
                  for b in table["blocks"]]
    except ChecksumError:
        raise
    except Exception as e:  # noqa: BLE001
        raise CorruptFileError(f"{func}: damaged checksum table; got {type(e).__name__}: {e}") from e
    for start, stop, _ in blocks:
        if len(start) != len(shape) or any(not 0 <= a <= b <= n for a, b, n in zip(start, stop, shape)):
            raise CorruptFileError(f"{func}: damaged checksum table; got block {start}..{stop}, expected bounds "
                                   f"inside {tuple(shape)}")
    return blocks


def _inside(start, stop, lo, hi) -> bool:
    return all(l <= a and b <= h for a, b, l, h in zip(start, stop, lo, hi))


def verify_blocks(func: str, comm, layout, block: np.ndarray, blocks: list, read_region, verify,
                  diagnose=None) -> None:
    """Check the stored digests against the data (collective; raises ChecksumError on every rank).

    ``blocks`` is the stored (start, stop, sha256) list; ``block`` is this
    rank's owned cells of ``layout``; ``read_region(slices)`` reads any region
    of the stored array (used for stored blocks no rank holds whole).
    ``diagnose(bad)``, given the (start, stop) bounds of the mismatching
    blocks, may return a more precise error than the checksum mismatch (a
    zarr store's missing chunk files: :class:`MissingChunkError`), or None.
    """
    if verify is False or verify is None or not blocks:
        return  # nothing to check (the same decision on every rank): no communication
    rank = comm.rank
    lo, hi = block_bounds(layout, rank)
    regions = [block_bounds(layout, r) for r in range(layout.nprocs)]
    itemsize = block.dtype.itemsize
    bad = []
    uncovered = []
    try:
        for start, stop, want in blocks:
            if any(a == b for a, b in zip(start, stop)):
                continue  # empty block: nothing to check
            if _inside(start, stop, lo, hi):
                part = block[tuple(slice(a - l, b - l) for a, b, l in zip(start, stop, lo))]
                if digest(part) != want:
                    bad.append((start, stop))
            elif not any(_inside(start, stop, l, h) for l, h in regions):
                uncovered.append((start, stop, want))
        total = sum(math.prod(b - a for a, b in zip(s, e)) for s, e, _ in uncovered) * itemsize
        if verify == "auto" and total > VERIFY_MAX_BYTES:
            uncovered = []
        for i, (start, stop, want) in enumerate(uncovered):
            if i % comm.size == rank:
                part = np.asarray(read_region(tuple(slice(a, b) for a, b in zip(start, stop))))
                if digest(part) != want:
                    bad.append((start, stop))
        exc = diagnose(bad) if bad and diagnose is not None else None
        if bad and exc is None:
            where = ", ".join(f"{tuple(s)}..{tuple(e)}" for s, e in bad[:4])
            exc = ChecksumError(f"{func}: checksum mismatch; got different data in the block(s) {where}, "
                                f"expected the SHA-256 stored when the array was saved (the file is damaged)")
    except Exception as e:  # noqa: BLE001
        exc = e
    agree(comm, exc, func)
