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

Saving: every rank digests its block, rank 0 creates the array metadata once
(with the checksum table in the attributes), barrier, every rank writes its
chunks, then the store is renamed into place (:mod:`darray.io._atomic`).
Loading: each rank reads ``array[its region]``; zarr touches only the chunks
that intersect it, whatever layout wrote the store.
"""

from __future__ import annotations

import math
import os
from itertools import product

import numpy as np

from ._atomic import atomic_targets, recovered
from ._common import (CorruptFileError, block_bounds, check_darray, check_dtype, check_table, checksum_table,
                      collective, comm_of, host_block, is_writer, read_layout, verify_blocks, wrap)

__all__ = ["save", "load", "chunk_plan"]

ATTRIBUTE = "darray"


def _zarr():
    try:
        import zarr
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("darray.io: zarr stores need zarr>=3; install it with pip install 'darray[io]'") from e
    return zarr


def chunk_plan(layout) -> tuple[tuple[int, ...], bool]:
    """(chunk shape, aligned) for ``layout``; aligned means no chunk straddles two blocks."""
    chunks, aligned = [], True
    for axis, n in enumerate(layout.shape):
        sizes = layout.sizes[axis]
        interior = [o for o in layout.offsets[axis][1:-1] if 0 < o < n]
        if len(sizes) <= 1 or not interior:
            chunks.append(max(n, 1))
            continue
        g = 0
        for o in interior:
            g = math.gcd(g, o)
        biggest = max(sizes)
        if 4 * g >= biggest:
            chunks.append(g)
        else:
            chunks.append(biggest)
            aligned = False
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
    zarr = collective(x.comm, _zarr, func=func)
    comm, layout = x.comm, x.layout
    rank = comm.rank
    block = host_block(x)
    table = checksum_table(x, block) if checksum else None
    chunks, aligned = chunk_plan(layout)
    dtype = np.dtype(x.dtype)
    with atomic_targets(func, comm, [path]) as (tmp,):
        def create():
            if rank == 0:
                attrs = {ATTRIBUTE: {"checksums": table}} if table is not None else {}
                zarr.create_array(store=tmp, shape=layout.shape, chunks=chunks, dtype=dtype, fill_value=0,
                                  attributes=attrs, compressors=compressors, zarr_format=3)

        collective(comm, create, func=func)
        writer = is_writer(layout, rank) and block.size > 0
        start, stop = block_bounds(layout, rank)

        def open_rw():
            return zarr.open_array(tmp, mode="r+")

        array = collective(comm, open_rw, func=func)
        if aligned:
            def write_all():
                if writer:
                    array[tuple(slice(a, b) for a, b in zip(start, stop)) or ...] = block

            collective(comm, write_all, func=func)
            return
        # uneven blocks: whole chunks in parallel, then shared chunks in conflict-free rounds
        boxes = list(product(*(_pieces(a, b, c, n) for a, b, c, n in zip(start, stop, chunks, layout.shape))))
        whole = [box for box in boxes if all(p[2] for p in box)] if writer else []
        shared = [box for box in boxes if not all(p[2] for p in box)] if writer else []

        def put(box):
            cells = tuple(slice(s, e) for s, e, _ in box)
            local = tuple(slice(s - a, e - a) for (s, e, _), a in zip(box, start))
            array[cells] = block[local]

        def write_whole():
            for box in whole:
                put(box)

        collective(comm, write_whole, func=func)
        ks = _colors(layout, chunks)
        index = layout.block_index(rank)
        color = tuple(i % k for i, k in zip(index, ks))
        for turn in product(*(range(k) for k in ks)):
            def write_turn():
                if turn == color:
                    for box in shared:
                        put(box)

            collective(comm, write_turn, func=func)  # a barrier between rounds


def load(path, *, split="auto", grid=None, sizes=None, halo=0, boundary="none", comm=None, verify="auto"):
    """Read a zarr v3 array into a DArray in any layout; each rank reads only its region (collective).

    Any zarr array of bool/int/uint/float/complex dtype loads (not only
    stores written by :func:`save`); the digests in the ``"darray"``
    attribute are verified as ``verify`` says (see :mod:`darray.io`). A
    missing store, damaged metadata or a damaged chunk raises the same error
    on every rank.
    """
    func = "load"
    comm = comm_of(comm)
    zarr = collective(comm, _zarr, func=func)
    path = recovered(os.path.abspath(os.fspath(path)))

    def open_meta():
        if not os.path.isdir(path):
            raise FileNotFoundError(f"{func}: no such zarr store; got {path!r}, expected a directory written by "
                                    f"darray.io.save or zarr")
        try:
            array = zarr.open_array(path, mode="r")
            attrs = dict(array.attrs)
        except FileNotFoundError as e:
            raise CorruptFileError(f"{func}: not a zarr array; got {path!r} ({e}), expected a zarr.json with "
                                   f"array metadata") from e
        except Exception as e:  # noqa: BLE001 - damaged metadata shows up as anything
            raise CorruptFileError(f"{func}: damaged zarr metadata in {path!r}; got {type(e).__name__}: {e}") \
                from e
        dtype = check_dtype(func, array.dtype)
        shape = tuple(array.shape)
        blocks = None
        table = (attrs.get(ATTRIBUTE) or {}).get("checksums") if isinstance(attrs.get(ATTRIBUTE), dict) else None
        if verify is not False and table is not None:
            blocks = check_table(func, table, shape, dtype)
        if verify is True and blocks is None:
            raise ValueError(f"{func}: verify=True needs checksums; got a store without the {ATTRIBUTE!r} "
                             f"attribute, expected one written by darray.io.save")
        return array, shape, dtype, blocks

    array, shape, dtype, blocks = collective(comm, open_meta, func=func)
    layout = read_layout(func, shape, comm, split, grid, sizes, halo, boundary)
    start, stop = block_bounds(layout, comm.rank)

    def read_region(cells):
        if math.prod(s.stop - s.start for s in cells) == 0:
            return np.empty(tuple(s.stop - s.start for s in cells), dtype=dtype)
        try:
            return np.asarray(array[cells])
        except Exception as e:  # noqa: BLE001 - a damaged chunk fails in a codec
            raise CorruptFileError(f"{func}: damaged chunk data in {path!r}; got {type(e).__name__}: {e}") from e

    block = collective(comm, read_region, tuple(slice(a, b) for a, b in zip(start, stop)), func=func)
    block = np.asarray(block, dtype=dtype.newbyteorder("="), order="C")
    if blocks:
        verify_blocks(func, comm, layout, block, blocks, read_region, verify)
    return wrap(block, layout, comm)

