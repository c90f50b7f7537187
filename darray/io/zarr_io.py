"""Zarr v3 stores written and read in parallel, with chunks aligned to the blocks.

Chunk grid (:func:`chunk_plan`), per axis:

- an axis no grid dim cuts: one chunk spans it;
- a cut axis: the chunk length is the gcd of the interior block boundaries,
  so every block boundary is a chunk boundary and no two ranks ever write
  one chunk (even splits: the chunk IS the block). That gcd collapses for
  uneven splits (balanced 1000 over 3 ranks: 334, 333, 333 -> gcd 1); when it
  is under a quarter of the largest block, the chunk is the largest block
  instead and the chunks that straddle two blocks are written in rounds:
  first every rank writes the whole chunks only it touches (in parallel), then
  the shared chunks in ``prod(K)`` rounds separated by a barrier, where ranks
  write together only when their block indices differ by a multiple of ``K``
  along each axis (``K`` = the most blocks one chunk touches along it), so
  no chunk is ever written by two ranks at once (zarr rewrites a partial chunk
  by read-modify-write).

Chunks larger than :data:`MAX_CHUNK_BYTES` (16 MiB) are then cut further,
along axis 0 first, into pieces that still tile every block (so one block is
several chunks, encoded on zarr's threads).

Saving: every rank digests its block, rank 0 creates the array metadata once
(with the checksum table in the attributes), barrier, every rank writes its
chunks (all of them, also those holding only the fill value, which zarr
skips by default: a chunk file missing from such a store was lost, and a
load reports it as :class:`~darray.io.MissingChunkError`), then the store
is renamed into place (:mod:`darray.io._atomic`).
Loading: each rank reads ``array[its region]``; zarr touches only the chunks
that intersect it, whatever layout wrote the store.

Safety: every store is opened through :func:`confined_store`, a zarr
``LocalStore`` that refuses any key that is absolute, has an empty, ``.`` or
``..`` segment, or resolves (through symlinks) outside the store's directory,
so neither a hostile ``zarr.json`` nor a symlinked chunk reads or writes
anything outside the store. Loading refuses object, string and record dtypes
and the codecs that deserialize Python objects (``pickle`` and friends), before
any chunk is decoded; hostile shapes and chunk shapes (negative, zero-sized
chunks, more bytes than the machine's memory) raise the same clear error on
every rank.
"""

from __future__ import annotations

import math
import os
from itertools import product

import numpy as np

from ._atomic import atomic_targets, recovered
from .._comm import resolve_comm
from .._core import make_layout
from ._common import (CorruptFileError, MissingChunkError, any_field, block_bounds, check_darray, check_dtype,
                      check_fits, check_shape, check_table, checksum_table, collective, host_block, is_writer, verify_blocks,
                      warn_unchecked, wrap)

__all__ = ["save", "load", "chunk_plan", "confined_store", "write_regions", "aligned_with"]

ATTRIBUTE = "darray"
#: Key of the "darray" attribute saying that every chunk was written, also those holding only the fill value
#: (zarr skips those by default): a missing chunk file is then data lost, reported as :class:`MissingChunkError`.
EVERY_CHUNK = "every_chunk"
#: Codecs that rebuild Python objects from the stored bytes (numcodecs ids, with or without "numcodecs.").
OBJECT_CODECS = frozenset({"pickle", "json2", "msgpack2", "vlen-array", "categorize"})


def _zarr():
    try:
        import zarr
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("darray.io: zarr stores need zarr>=3; install it with pip install 'darray[io]'") from e
    return zarr


_STORE_CLASS = None


def _key_error(func: str, key, root: str, got: str) -> CorruptFileError:
    return CorruptFileError(f"{func}: unsafe zarr key; got {key!r} ({got}), expected a relative key whose "
                            f"segments are not empty, '.' or '..', inside the store {root!r}")


def confined_store(path: str, *, read_only: bool, func: str):
    """A zarr ``LocalStore`` at ``path`` that reads and writes only inside ``path``.

    Every key is checked before the file system is touched: it must be
    relative, without NUL bytes, backslashes or empty / ``.`` / ``..``
    segments, and its real path (symlinks resolved) must lie inside the
    store's real path. A key that fails raises :class:`CorruptFileError`.
    """
    global _STORE_CLASS
    if _STORE_CLASS is None:
        from zarr.storage import LocalStore

        class ConfinedStore(LocalStore):
            """LocalStore whose keys cannot leave its root (see :func:`confined_store`)."""

            def __init__(self, root, *, read_only: bool = False, func: str = "load"):
                super().__init__(root, read_only=read_only)
                self._func = func
                self._real = os.path.realpath(os.fspath(self.root))

            def with_read_only(self, read_only: bool = False):
                return type(self)(self.root, read_only=read_only, func=self._func)

            def _check(self, key, prefix: bool = False) -> None:
                root = self._real
                if not isinstance(key, str):
                    raise _key_error(self._func, key, root, f"a {type(key).__name__}")
                if prefix:
                    key = key.strip("/")
                    if not key:
                        return
                if "\0" in key or "\\" in key or key.startswith("/") or any(
                        part in ("", ".", "..") for part in key.split("/")):
                    raise _key_error(self._func, key, root, "not a plain relative key")
                real = os.path.realpath(os.path.join(root, key))
                if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
                    raise _key_error(self._func, key, root, f"resolves to {real!r}")

            async def get(self, key, prototype=None, byte_range=None):
                self._check(key)
                return await super().get(key, prototype, byte_range)

            async def get_partial_values(self, prototype, key_ranges):
                key_ranges = list(key_ranges)
                for key, _ in key_ranges:
                    self._check(key)
                return await super().get_partial_values(prototype, key_ranges)

            async def _set(self, key, value, exclusive: bool = False):
                self._check(key)
                return await super()._set(key, value, exclusive=exclusive)

            async def delete(self, key):
                self._check(key)
                return await super().delete(key)

            async def delete_dir(self, prefix):
                self._check(prefix, prefix=True)
                return await super().delete_dir(prefix)

            async def exists(self, key):
                self._check(key)
                return await super().exists(key)

            async def list_prefix(self, prefix):
                self._check(prefix, prefix=True)
                async for key in super().list_prefix(prefix):
                    yield key

            async def list_dir(self, prefix):
                self._check(prefix, prefix=True)
                async for key in super().list_dir(prefix):
                    yield key

            def get_sync(self, key, *, prototype=None, byte_range=None):
                self._check(key)
                return super().get_sync(key, prototype=prototype, byte_range=byte_range)

            def set_sync(self, key, value):
                self._check(key)
                return super().set_sync(key, value)

            def delete_sync(self, key):
                self._check(key)
                return super().delete_sync(key)

        _STORE_CLASS = ConfinedStore
    return _STORE_CLASS(path, read_only=read_only, func=func)


def _codec_ids(metadata) -> list[str]:
    """The ids of every codec, filter and compressor of a zarr v2 or v3 array (nested sharding codecs too)."""
    out = []

    def visit(codec):
        if codec is None:
            return
        if isinstance(codec, dict):
            name = codec.get("name", codec.get("id"))
            config = codec.get("configuration") or {}
        else:
            name = getattr(codec, "codec_id", None)
            config = {}
            if name is None:
                try:
                    d = codec.to_dict()
                except Exception:  # an unknown codec object: judge it by its class name
                    d = {"name": type(codec).__name__}
                name, config = d.get("name", d.get("id")), d.get("configuration") or {}
        out.append(str(name))
        for inner in ("codecs", "index_codecs"):
            for c in config.get(inner) or ():
                visit(c)
        for c in getattr(codec, "codecs", ()) or ():
            visit(c)
        for c in getattr(codec, "index_codecs", ()) or ():
            visit(c)

    for c in tuple(getattr(metadata, "codecs", ()) or ()) + tuple(getattr(metadata, "filters", ()) or ()):
        visit(c)
    visit(getattr(metadata, "compressor", None))
    return out


def _check_codecs(func: str, path: str, metadata) -> None:
    for name in _codec_ids(metadata):
        bare = name.lower().removeprefix("numcodecs.")
        if bare in OBJECT_CODECS:
            raise TypeError(f"{func}: refusing codec {name!r} in {path!r}; got a codec that rebuilds Python "
                            f"objects (never unpickled), expected numeric codecs (bytes, zstd, blosc, gzip, ...)")


#: A chunk holds at most this many bytes where the layout allows (see :func:`chunk_plan`).
MAX_CHUNK_BYTES = 16 << 20


def _divisor_at_least(c: int, k: int) -> int:
    """The smallest divisor of ``c`` that is >= ``k`` (``c`` itself at worst)."""
    best = c
    d = 1
    while d * d <= c:
        if c % d == 0:
            for q in (d, c // d):
                if k <= q < best:
                    best = q
        d += 1
    return best


def chunk_plan(layout, itemsize: int = 0) -> tuple[tuple[int, ...], bool]:
    """(chunk shape, aligned) for ``layout``; aligned means no chunk straddles two blocks.

    With ``itemsize``, chunks larger than :data:`MAX_CHUNK_BYTES` are cut
    further, first along axis 0, into pieces that still tile every block (an
    axis no grid dim cuts may be cut anywhere; on an aligned cut axis the new
    length divides the old one): zarr then encodes and decodes the chunks of
    one block on several threads, and a reader with another layout decodes
    less than a whole block per chunk it touches.
    """
    chunks, aligned, kinds = [], True, []
    for axis, n in enumerate(layout.shape):
        sizes = layout.sizes[axis]
        interior = [o for o in layout.offsets[axis][1:-1] if 0 < o < n]
        if len(sizes) <= 1 or not interior:
            chunks.append(max(n, 1))
            kinds.append("free")
            continue
        g = 0
        for o in interior:
            g = math.gcd(g, o)
        biggest = max(sizes)
        if 4 * g >= biggest:
            chunks.append(g)
            kinds.append("divide")
        else:
            chunks.append(biggest)
            kinds.append("fixed")
            aligned = False
    if itemsize:
        for axis, kind in enumerate(kinds):
            nbytes = math.prod(chunks) * itemsize
            if nbytes <= MAX_CHUNK_BYTES:
                break
            c = chunks[axis]
            want = -(-nbytes // MAX_CHUNK_BYTES)  # cut this axis' chunk into at least this many pieces
            if kind == "free":
                chunks[axis] = max(1, -(-c // want))
            elif kind == "divide":
                chunks[axis] = c // _divisor_at_least(c, min(want, c))
    return tuple(chunks), aligned


def _pieces(lo: int, hi: int, c: int, n: int):
    """[lo, hi) cut at chunk boundaries into (start, stop, whole) with whole = covers entire chunks only."""
    if lo >= hi:
        return []
    a = min(hi, -(-lo // c) * c)
    b = hi if hi == n else max(a, (hi // c) * c)
    out = []
    for s, e in ((lo, a), (a, b), (b, hi)):
        if s < e:
            out.append((s, e, s % c == 0 and (e % c == 0 or e == n)))
    return out


def _colors(layout, chunks) -> tuple[int, ...]:
    """Per axis K: the most blocks (by index) one chunk touches; 1 for an aligned axis."""
    ks = []
    for axis, c in enumerate(chunks):
        offs = layout.offsets[axis]
        k = 1
        n = layout.shape[axis]
        for lo in range(0, n, c):
            hi = min(n, lo + c)
            touching = [i for i in range(len(offs) - 1) if offs[i] < hi and lo < offs[i + 1]]
            if touching:
                k = max(k, touching[-1] - touching[0] + 1)
        ks.append(k)
    return tuple(ks)


def save(path, x, *, checksum: bool = True, compressors="auto") -> None:
    """Write ``x`` to a zarr v3 store at ``path`` in parallel (collective).

    Chunks follow the blocks (see :mod:`darray.io.zarr_io`); the store
    appears atomically once every rank has written. ``compressors`` is passed
    to :func:`zarr.create_array` (``None`` stores raw bytes). The per-block
    SHA-256 digests go to the array attribute ``"darray"``.

    Examples
    --------
    >>> import os, tempfile, darray as da, zarr
    >>> from darray.io import save, load
    >>> p = os.path.join(tempfile.mkdtemp(), "x.zarr")     # the same path on every rank
    >>> save(p, da.arange(10.0))
    >>> float(zarr.open_array(p, mode="r")[9]), float(da.sum(load(p)))
    (9.0, 45.0)
    """
    func = "save"
    check_darray(func, x)
    if any_field(np.dtype(x.dtype), lambda d: d.subdtype is not None):  # (zarr 3 stores them as raw bytes)
        raise TypeError(f"{func}: zarr keeps no subarray fields of records; got {x.dtype}, expected fields of "
                        f"one value each (save as .npy, or split the field: x['v'][..., 0], ...)")
    zarr = collective(x.comm, _zarr, func=func)
    comm, layout = x.comm, x.layout
    rank = comm.rank
    block = host_block(x)
    table = checksum_table(x, block) if checksum else None
    chunks, aligned = chunk_plan(layout, np.dtype(x.dtype).itemsize)
    dtype = np.dtype(x.dtype)
    with atomic_targets(func, comm, [path]) as (tmp,):
        def create():
            if rank == 0:
                attrs = {ATTRIBUTE: {"checksums": table, EVERY_CHUNK: True}} if table is not None else {}
                zarr.create_array(store=confined_store(tmp, read_only=False, func=func), shape=layout.shape,
                                  chunks=chunks, dtype=dtype, attributes=attrs,
                                  fill_value=0 if dtype.names is None else np.zeros((), dtype)[()],  # (records)
                                  compressors=compressors, zarr_format=3)

        collective(comm, create, func=func)

        def open_rw():
            array = zarr.open_array(store=confined_store(tmp, read_only=False, func=func), mode="r+")
            return array.with_config({"write_empty_chunks": True})  # every chunk a file: a missing one is lost

        array = collective(comm, open_rw, func=func)

        def put(cells, local):
            array[cells or ...] = block[local or ...]  # (a 0-d array: [...])

        write_regions(comm, layout, chunks, put, func=func, aligned=aligned)


def aligned_with(layout, chunks) -> bool:
    """True when every block boundary of ``layout`` is a chunk boundary of ``chunks`` (no chunk is shared)."""
    for axis, c in enumerate(chunks):
        n = layout.shape[axis]
        if any(0 < o < n and o % c for o in layout.offsets[axis][1:-1]):
            return False
    return True


def write_regions(comm, layout, chunks, put, *, func: str, aligned: bool | None = None) -> None:
    """Write this rank's block into a store whose write grid is ``chunks``, never two ranks in one chunk (collective).

    ``put(cells, local)`` writes ``block[local]`` to the store's ``cells`` (tuples of
    slices, global and block-relative); it runs only on the rank that writes the
    block (:func:`~darray.io._common.is_writer`; none for an empty block). Where no
    chunk straddles two blocks (``aligned``, computed when None) every rank writes
    its whole block at once; else first the whole chunks only it touches (in
    parallel), then the shared chunks in conflict-free rounds separated by a
    barrier (see :mod:`darray.io.zarr_io`). Every failure is agreed: the same error
    on every rank.
    """
    rank = comm.rank
    if aligned is None:
        aligned = aligned_with(layout, chunks)
    start, stop = block_bounds(layout, rank)
    writer = is_writer(layout, rank) and math.prod(b - a for a, b in zip(start, stop)) > 0
    if aligned:
        def write_all():
            if writer:
                put(tuple(slice(a, b) for a, b in zip(start, stop)),
                    tuple(slice(0, b - a) for a, b in zip(start, stop)))

        collective(comm, write_all, func=func)
        return
    boxes = list(product(*(_pieces(a, b, c, n) for a, b, c, n in zip(start, stop, chunks, layout.shape))))
    whole = [box for box in boxes if all(p[2] for p in box)] if writer else []
    shared = [box for box in boxes if not all(p[2] for p in box)] if writer else []

    def put_box(box):
        put(tuple(slice(s, e) for s, e, _ in box), tuple(slice(s - a, e - a) for (s, e, _), a in zip(box, start)))

    def write_whole():
        for box in whole:
            put_box(box)

    collective(comm, write_whole, func=func)
    ks = _colors(layout, chunks)
    index = layout.block_index(rank)
    color = tuple(i % k for i, k in zip(index, ks))
    for turn in product(*(range(k) for k in ks)):
        def write_turn():
            if turn == color:
                for box in shared:
                    put_box(box)

        collective(comm, write_turn, func=func)  # a barrier between rounds


def load(path, *, split="auto", grid=None, sizes=None, halo=0, boundary="none", comm=None, verify="auto"):
    """Read a zarr v3 array into a DArray in any layout; each rank reads only its region (collective).

    Any zarr array of bool/int/uint/float/complex dtype loads (not only
    stores written by :func:`save`); the digests in the ``"darray"``
    attribute are verified as ``verify`` says (see :mod:`darray.io`). A
    missing store, damaged metadata or a damaged chunk raises the same error
    on every rank.

    A store without checksums (saved with ``checksum=False``, by another
    program, or the attribute was removed) loads with a
    :class:`~darray.io.MissingChecksumWarning` on every rank under
    ``verify="auto"``, raises ``ValueError`` under ``verify=True`` and loads
    silently under ``verify=False``, as a ``.npy`` file without its sidecar.
    """
    func = "load"
    comm = resolve_comm(comm)
    zarr = collective(comm, _zarr, func=func)
    path = recovered(os.path.abspath(os.fspath(path)))

    def open_meta():
        if not os.path.isdir(path):
            raise FileNotFoundError(f"{func}: no such zarr store; got {path!r}, expected a directory written by "
                                    f"darray.io.save or zarr")
        try:
            array = zarr.open_array(store=confined_store(path, read_only=True, func=func), mode="r")
            attrs = dict(array.attrs)
        except CorruptFileError:
            raise
        except FileNotFoundError as e:
            raise CorruptFileError(f"{func}: not a zarr array; got {path!r} ({e}), expected a zarr.json with "
                                   f"array metadata") from e
        except Exception as e:  # damaged metadata shows up as anything
            raise CorruptFileError(f"{func}: damaged zarr metadata in {path!r}; got {type(e).__name__}: {e}") \
                from e
        _check_codecs(func, path, array.metadata)
        dtype = check_dtype(func, array.dtype)
        shape = check_shape(func, path, array.shape, dtype)
        for what, grid in (("chunk", array.chunks), ("shard", getattr(array, "shards", None))):
            if grid is None:
                continue
            grid = tuple(grid)
            if len(grid) != len(shape) or not all(isinstance(c, int) and c >= 1 for c in grid):
                raise CorruptFileError(f"{func}: damaged metadata in {path!r}; got {what} shape {grid} for shape "
                                       f"{shape}, expected {len(shape)} positive lengths")
            check_fits(func, f"one stored {what}", grid, dtype)
        blocks = None
        ours = attrs.get(ATTRIBUTE) if isinstance(attrs.get(ATTRIBUTE), dict) else {}
        table, every_chunk = ours.get("checksums"), ours.get(EVERY_CHUNK) is True
        if verify is not False and table is not None:
            blocks = check_table(func, table, shape, dtype)
        if verify is True and blocks is None:
            raise ValueError(f"{func}: verify=True needs checksums; got {_missing(path, attrs)}, expected a store "
                             f"written by darray.io.save")
        return array, shape, dtype, blocks, every_chunk, _missing(path, attrs)

    array, shape, dtype, blocks, every_chunk, missing = collective(comm, open_meta, func=func)
    if blocks is None and verify is not False:
        warn_unchecked(func, missing, "the checksums darray.io.save stores in the array's attributes")
    layout = make_layout(func, shape, comm.size, split, grid, sizes, halo, boundary)
    start, stop = block_bounds(layout, comm.rank)

    def read_region(cells):
        if math.prod(s.stop - s.start for s in cells) == 0:
            return np.empty(tuple(s.stop - s.start for s in cells), dtype=dtype)
        check_fits(func, f"the region {tuple((s.start, s.stop) for s in cells)} of rank {comm.rank}",
                   tuple(s.stop - s.start for s in cells), dtype)
        try:
            return np.asarray(array[cells])
        except CorruptFileError:
            raise
        except Exception as e:  # a damaged chunk fails in a codec
            raise CorruptFileError(f"{func}: damaged chunk data in {path!r}; got {type(e).__name__}: {e}") from e

    block = collective(comm, read_region, tuple(slice(a, b) for a, b in zip(start, stop)), func=func)
    block = np.asarray(block, dtype=dtype.newbyteorder("="), order="C")
    if blocks:
        verify_blocks(func, comm, layout, block, blocks, read_region, verify,
                      diagnose=(lambda bad: missing_chunks(func, path, array, bad)) if every_chunk else None)
    return wrap(block, layout, comm)


def _missing(path: str, attrs: dict) -> str:
    """What is missing from a store without checksums, naming the store."""
    if not isinstance(attrs.get(ATTRIBUTE), dict):
        return f"no {ATTRIBUTE!r} attribute in the zarr store {path!r}"
    return f"no 'checksums' entry in the {ATTRIBUTE!r} attribute of the zarr store {path!r}"


def missing_chunks(func: str, path: str, array, bad) -> MissingChunkError | None:
    """A :class:`MissingChunkError` naming the chunk files of the blocks ``bad`` that are gone, or None.

    zarr reads a missing chunk as the fill value (by default it does not
    write chunks that hold only the fill value); :func:`save` writes every
    chunk and says so in the store's attributes, so in its stores a chunk
    file that is gone was lost. Called (for those stores only) with the
    (start, stop) bounds of the blocks whose checksum failed; looks only at
    the chunks they touch.
    """
    try:
        meta = array.metadata
        grid = tuple(int(c) for c in getattr(getattr(meta, "chunk_grid", None), "chunk_shape", array.chunks))
        missing = []
        for start, stop in bad:
            ranges = [range(a // c, -(-b // c)) for a, b, c in zip(start, stop, grid)]
            for coords in product(*ranges):
                key = meta.encode_chunk_key(coords)
                if not os.path.isfile(os.path.join(path, *key.split("/"))):
                    cells = tuple((i * c, min((i + 1) * c, n)) for i, c, n in zip(coords, grid, array.shape))
                    missing.append(f"{key!r} (cells {cells})")
    except Exception:  # an unusual store: the checksum mismatch stands as it is
        return None
    if not missing:
        return None
    missing = sorted(set(missing))
    shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
    return MissingChunkError(f"{func}: missing chunk file(s) in {path!r}; got none for the chunk(s) {shown}, "
                             f"expected every chunk the save wrote (zarr reads a missing chunk as the fill value, "
                             f"which does not match the stored checksum: the chunk was deleted or lost)")

