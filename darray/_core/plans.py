"""Communication plans between layouts: built once per layout pair, run many times.

A plan is the list of regions this rank sends (in its source storage) and
receives (in its destination storage), each with its peer. Building one is
pure metadata work (no communication), so every rank derives the matching
half of every message on its own. Plans are cached per (layouts, rank).
"""

from __future__ import annotations

from functools import lru_cache
from itertools import product

from .._layout import Layout, locate, volume

__all__ = ["Plan", "redistribution_plan", "placement_plan", "gather_plan"]

Region = tuple[slice, ...]


class Plan:
    """Messages of one rank: ``sends`` and ``recvs`` as ``(peer, region)`` lists."""

    __slots__ = ("sends", "recvs")

    def __init__(self, sends: list[tuple[int, Region]], recvs: list[tuple[int, Region]]):
        self.sends = sends
        self.recvs = recvs

    def volume(self, remote_only: bool = True, rank: int | None = None) -> int:
        """Number of elements this rank sends (to other ranks when ``remote_only``)."""
        total = 0
        for peer, region in self.sends:
            if remote_only and peer == rank:
                continue
            total += volume(region)
        return total

    def __repr__(self):
        return f"Plan(sends={len(self.sends)}, recvs={len(self.recvs)})"


def _shift(global_region, start, halo) -> Region:
    """Global cells -> slices into a halo-padded block starting at ``start``."""
    return tuple(slice(lo - s + h, hi - s + h) for (lo, hi), s, h in zip(global_region, start, halo))


def _intersect(a, b):
    out = []
    for (lo1, hi1), (lo2, hi2) in zip(a, b):
        lo, hi = max(lo1, lo2), min(hi1, hi2)
        if hi <= lo:
            return None
        out.append((lo, hi))
    return tuple(out)


def _bounds(layout: Layout, rank: int):
    return tuple((s.start, s.stop) for s in layout.block_slices(rank))


def _owner(src: Layout, block_index, reader: int) -> int:
    """The rank that serves ``block_index`` of ``src`` to ``reader``.

    Along replicated grid dims every coordinate holds a copy; the reader is
    served by the copy sharing its own coordinates there (itself when it has
    one), which spreads the load over the replicas.
    """
    coords = list(src.coords(reader))
    for axis, g in enumerate(src.axis_dim):
        if g is not None:
            coords[g] = block_index[axis]
    return src.rank(coords)


@lru_cache(maxsize=512)
def redistribution_plan(src: Layout, dst: Layout, rank: int) -> Plan:
    """Messages that move ``rank``'s part of ``src`` into the ``dst`` layout (same shape, same ranks)."""
    full = tuple((0, n) for n in src.shape)
    return placement_plan(src, dst, rank, full, (0,) * src.ndim)


@lru_cache(maxsize=512)
def placement_plan(src: Layout, dst: Layout, rank: int, region: tuple, offset: tuple) -> Plan:
    """Messages that copy the cells of ``src`` inside global ``region`` to ``region + offset`` of ``dst``.

    ``region`` is a ``(lo, hi)`` pair per axis. Concatenation, roll and
    redistribution are all placements.
    """
    ndim = src.ndim
    recvs = []
    want = _intersect(_bounds(dst, rank), tuple((lo + o, hi + o) for (lo, hi), o in zip(region, offset)))
    if want is not None:
        need = tuple((lo - o, hi - o) for (lo, hi), o in zip(want, offset))  # in src coordinates
        ranges = [locate(src.offsets[a], *need[a]) for a in range(ndim)]
        for block in product(*ranges):
            have = tuple((src.offsets[a][i], src.offsets[a][i + 1]) for a, i in enumerate(block))
            cells = _intersect(have, need)
            if cells is not None:
                moved = tuple((lo + o, hi + o) for (lo, hi), o in zip(cells, offset))
                recvs.append((_owner(src, block, rank), _shift(moved, dst.block_start(rank), dst.halo)))
    sends = []
    mine = _intersect(_bounds(src, rank), region)
    my_block = src.block_index(rank)
    if mine is not None:
        moved = tuple((lo + o, hi + o) for (lo, hi), o in zip(mine, offset))
        for reader in range(dst.nprocs):
            if _owner(src, my_block, reader) != rank:
                continue
            cells = _intersect(moved, _bounds(dst, reader))
            if cells is not None:
                back = tuple((lo - o, hi - o) for (lo, hi), o in zip(cells, offset))
                sends.append((reader, _shift(back, src.block_start(rank), src.halo)))
    return Plan(sends, recvs)


@lru_cache(maxsize=128)
def gather_plan(src: Layout, rank: int, root: int) -> Plan:
    """Messages that assemble the whole array on ``root`` (storage without halo)."""
    zeros = (0,) * src.ndim
    sends, recvs = [], []
    mine = _bounds(src, rank)
    if all(hi > lo for lo, hi in mine) and _owner(src, src.block_index(rank), root) == rank:
        sends.append((root, _shift(mine, src.block_start(rank), src.halo)))
    if rank == root:
        ranges = [range(len(s)) for s in src.sizes]
        for block in product(*ranges):
            have = tuple((src.offsets[a][i], src.offsets[a][i + 1]) for a, i in enumerate(block))
            if all(hi > lo for lo, hi in have):
                recvs.append((_owner(src, block, root), _shift(have, zeros, zeros)))
    return Plan(sends, recvs)
