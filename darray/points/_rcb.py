"""Recursive coordinate bisection: which rank each point goes to (collective, host NumPy).

Level by level, every group of ranks ``[a, b)`` with more than one rank cuts
its points across the longest side of their bounding box, giving the lower
half of the ranks ``n * (m - a) // (b - a)`` points (``m = a + (b - a) // 2``).
The cut is an exact distributed selection on the keys ``(coordinate, global
index)``, so counts are exact even with duplicate coordinates: every group
gathers ``SAMPLES`` regular samples of its remaining candidates from every
rank, counts what lies below each, and narrows the candidates to the two
samples around the wanted rank, until every rank sends all it has left.
No point moves until the end (one all-to-all, by the caller).
"""

from __future__ import annotations

import numpy as np

from .._backend import to_numpy
from .._core.sample_sort import sort_keys

__all__ = ["assign", "pair_keys", "SAMPLES"]

#: Regular samples per rank and group in one selection round: each round divides the candidates by about this.
SAMPLES = 64
_TOP = np.frombuffer(b"\xff" * 16, dtype="S16")[0]  # above every key


def pair_keys(values: np.ndarray, gidx: np.ndarray) -> np.ndarray:
    """Keys ``(value, global index)`` as 16-byte strings whose byte order is the lexicographic order."""
    pairs = np.empty((values.shape[0], 2), dtype=">u8")
    pairs[:, 0] = sort_keys(values)
    pairs[:, 1] = gidx
    return pairs.view("S16").ravel()


def _select(comm, keys: list[np.ndarray], wanted: np.ndarray) -> list:
    """Per group g: the key with exactly ``wanted[g]`` of the group's keys (over all ranks) below it.

    ``keys[g]`` are this rank's keys of group g, sorted. Returns ``_TOP`` where
    every key is below.
    """
    ngroups, nprocs = len(keys), comm.size
    lo = np.zeros(ngroups, dtype=np.int64)
    hi = np.array([k.shape[0] for k in keys], dtype=np.int64)
    below = np.zeros(ngroups, dtype=np.int64)  # keys of the group below the candidates, all ranks
    upper = [_TOP] * ngroups
    found: list = [None] * ngroups
    while any(f is None for f in found):
        samples = np.zeros((ngroups, SAMPLES), dtype="S16")
        meta = np.zeros((ngroups, 2), dtype=np.int64)  # samples sent, all candidates sent
        for g in range(ngroups):
            cand = keys[g][lo[g]:hi[g]]
            pick = cand if cand.shape[0] <= SAMPLES else cand[(np.arange(SAMPLES) * cand.shape[0]) // SAMPLES]
            samples[g, :pick.shape[0]] = pick
            meta[g] = pick.shape[0], pick.shape[0] == cand.shape[0]
        packed = np.concatenate([meta.view(np.uint8).ravel(), samples.view(np.uint8).ravel()])
        table = to_numpy(comm.allgather(packed))
        metas = table[:, :meta.nbytes].copy().view(np.int64).reshape(nprocs, ngroups, 2)
        pools = table[:, meta.nbytes:].copy().view("S16").reshape(nprocs, ngroups, SAMPLES)
        counts = np.zeros((ngroups, nprocs * SAMPLES), dtype=np.int64)
        sorted_pools = []
        for g in range(ngroups):
            pool = np.sort(np.concatenate([pools[r, g, :metas[r, g, 0]] for r in range(nprocs)]))
            sorted_pools.append(pool)
            if found[g] is None and metas[:, g, 1].all():
                need = int(wanted[g] - below[g])
                found[g] = pool[need] if need < pool.shape[0] else upper[g]
            elif found[g] is None:
                counts[g, :pool.shape[0]] = np.searchsorted(keys[g][lo[g]:hi[g]], pool)
        if all(f is not None for f in found):
            break
        counts = to_numpy(comm.allreduce(counts, "sum"))
        for g in range(ngroups):
            if found[g] is not None:
                continue
            pool, c = sorted_pools[g], counts[g, :sorted_pools[g].shape[0]] + below[g]
            left = np.flatnonzero(c <= wanted[g])
            right = np.flatnonzero(c > wanted[g])
            if left.size:
                below[g] = c[left[-1]]
                lo[g] = np.searchsorted(keys[g], pool[left[-1]])
            if right.size:
                upper[g] = pool[right[0]]
                hi[g] = np.searchsorted(keys[g], upper[g])
    return found


def assign(comm, coords: np.ndarray, gidx: np.ndarray) -> np.ndarray:
    """The rank each local point (rows of ``coords``, global indices ``gidx``) goes to (collective)."""
    nprocs = comm.size
    n, d = coords.shape
    start = np.zeros(n, dtype=np.int64)  # first rank of each point's group
    stop = np.full(n, nprocs, dtype=np.int64)
    groups = [(0, nprocs)] if nprocs > 1 else []
    while groups:
        ngroups = len(groups)
        firsts = np.array([a for a, _ in groups], dtype=np.int64)
        by_first = np.argsort(firsts)
        member = np.full(n, -1, dtype=np.int64)
        active = (stop - start) > 1
        member[active] = by_first[np.searchsorted(firsts[by_first], start[active])]
        stats = np.empty((ngroups, 2 * d + 1))
        for g in range(ngroups):
            mine = coords[member == g]
            stats[g, :d] = -mine.min(axis=0) if mine.shape[0] else -np.inf
            stats[g, d:2 * d] = mine.max(axis=0) if mine.shape[0] else -np.inf
            stats[g, 2 * d] = mine.shape[0]
        maxes = to_numpy(comm.allreduce(stats[:, :2 * d], "max"))
        totals = to_numpy(comm.allreduce(stats[:, 2 * d].astype(np.int64), "sum"))
        extent = maxes[:, d:] + maxes[:, :d]
        dims = np.argmax(np.nan_to_num(extent, nan=-np.inf, neginf=-1.0), axis=1)
        keys, wanted, mids = [], np.empty(ngroups, dtype=np.int64), []
        for g, (a, b) in enumerate(groups):
            m = a + (b - a) // 2
            mids.append(m)
            wanted[g] = totals[g] * (m - a) // (b - a)
            inside = member == g
            keys.append(np.sort(pair_keys(coords[inside, dims[g]], gidx[inside])))
        cuts = _select(comm, keys, wanted)
        for g, _range in enumerate(groups):
            inside = np.flatnonzero(member == g)
            lower = pair_keys(coords[inside, dims[g]], gidx[inside]) < cuts[g]
            stop[inside[lower]] = mids[g]
            start[inside[~lower]] = mids[g]
        groups = [(a, m) for (a, b), m in zip(groups, mids) if m - a > 1] + \
                 [(m, b) for (a, b), m in zip(groups, mids) if b - m > 1]
    return start
