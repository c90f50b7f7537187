"""The distributed sample sort: the engine of sorting, ``nonzero``, ``unique`` and boolean-mask indexing.

A parallel sample sort of a 1-d sequence cut in rank-ordered blocks: local
sort, ``P - 1`` regular samples per rank allgathered, ``P - 1`` splitters
chosen, every rank's sorted run cut at the splitters and exchanged
all-to-all (counts first), the received runs merged. Keys are unsigned
integers derived from the values (:func:`sort_keys`). :class:`Routed` sends
items to chosen ranks and their answers back. Pure NumPy on host blocks.
"""

from __future__ import annotations

import numpy as np

from .._backend import to_numpy
from .._errors import message
from .._layout import Layout
from .plans import redistribution_plan

__all__ = ["Routed", "move_1d", "restore_nans", "sample_sort", "sample_sort_values", "sort_keys", "tie_kinds"]


def restore_nans(run: np.ndarray, nan_seen: int, nan_bits: int) -> np.ndarray:
    """``run`` with every NaN set to the bits ``nan_bits`` (in place).

    NumPy's SIMD sorts (x86-simd-sort) write canonical NaNs in place of the
    input's (and, for small arrays, may turn ``-0.0`` into ``0.0`` when both
    occur: :func:`tie_kinds` sends those to the stable path).
    """
    if nan_seen:
        bits = run.view(np.dtype(f"u{run.dtype.itemsize}"))
        bits[np.isnan(run)] = nan_bits
    return run


def tie_kinds(values: np.ndarray) -> tuple[bool, int, int, int]:
    """``(observable, zero signs, NaN seen, NaN bits)`` of ``values``: what a stable sort could show.

    ``zero signs`` has bit 0 set if ``-0.0`` occurs and bit 1 if ``0.0`` does;
    ``NaN bits`` is the bit pattern of one NaN (0 if there is none).
    """
    if values.dtype.kind != "f" or values.size == 0:
        return False, 0, 0, 0
    signs = np.signbit(values[values == 0])
    negative = bool(signs.any())
    zero_signs = int(negative) | (int(not signs.all()) << 1 if signs.size else 0)
    nans = values[np.isnan(values)].view(np.dtype(f"u{values.dtype.itemsize}"))
    if not nans.size:
        return zero_signs == 3, zero_signs, 0, 0
    return zero_signs == 3 or bool((nans != nans[0]).any()), zero_signs, 1, int(nans[0])


def sort_keys(values: np.ndarray, descending: bool = False) -> np.ndarray:
    """Unsigned integer keys whose ascending order is the sort order of ``values``.

    Floats: NaNs (any payload) last, ``-0.0 == 0.0``; ``descending`` reverses
    the order (so NaNs come first).
    """
    v = np.ascontiguousarray(values)
    kind = v.dtype.kind
    if kind == "b":
        keys = v.view(np.uint8)
    elif kind == "u":
        keys = v
    elif kind == "i":
        unsigned = np.dtype(f"u{v.dtype.itemsize}")
        keys = v.view(unsigned) ^ unsigned.type(1 << (8 * v.dtype.itemsize - 1))
    elif kind == "f":
        unsigned = np.dtype(f"u{v.dtype.itemsize}")
        canonical = np.where(np.isnan(v), v.dtype.type(np.nan), v + v.dtype.type(0))  # one NaN, +0.0
        bits = canonical.view(unsigned)
        sign = unsigned.type(1 << (8 * v.dtype.itemsize - 1))
        keys = np.where((bits & sign) != 0, ~bits, bits | sign)
    else:
        raise TypeError(message("sort", "unsupported dtype", v.dtype, "a real numeric or boolean dtype"))
    return ~keys if descending else keys


def sample_sort(comm, values: np.ndarray, offset: int, descending: bool = False, stable: bool = True,
                index: bool = True):
    """Parallel sample sort of the 1-d array whose rank-ordered blocks are ``values`` (collective).

    ``offset`` is the global index of this rank's first element (blocks in
    rank order). Returns this rank's part of the sorted sequence, the global
    indices of those elements (None unless ``index``), and every rank's part
    size (the same tuple on every rank). Ties keep global order.

    Without ``index``, values are sorted by :func:`sample_sort_values` (no keys,
    no indices move) unless some rank holds ties a stable sort would order
    (``-0.0`` and ``0.0``, NaN payloads; :func:`tie_kinds`): then by keys and global indices.
    """
    if not index:
        done = sample_sort_values(comm, values, descending)
        if done is not None:
            return done
    del stable  # both paths are stable
    nprocs, rank = comm.size, comm.rank
    n = values.shape[0]
    all_keys = sort_keys(values, descending)
    perm = np.argsort(all_keys, kind="stable")
    keys = all_keys[perm]
    sorted_values = values[perm]
    gidx = perm.astype(np.int64) + offset
    if nprocs == 1:
        return sorted_values, gidx if index else None, (n,)

    # regular samples: (key, global index, valid) per rank, P - 1 of them
    samples = np.zeros((nprocs - 1, 3), dtype=np.uint64)
    if n:
        pos = (np.arange(1, nprocs) * n) // nprocs
        samples[:, 0] = keys[pos]
        samples[:, 1] = gidx[pos]
        samples[:, 2] = 1
    pool = to_numpy(comm.allgather(samples)).reshape(-1, 3)
    pool = pool[pool[:, 2] == 1]
    pool = pool[np.lexsort((pool[:, 1], pool[:, 0]))]
    bounds = np.zeros(nprocs + 1, dtype=np.int64)
    bounds[nprocs] = n
    if len(pool):
        splitters = pool[(np.arange(1, nprocs) * len(pool)) // nprocs]
        split_keys = splitters[:, 0].astype(keys.dtype)
        lo = np.searchsorted(keys, split_keys, side="left")
        hi = np.searchsorted(keys, split_keys, side="right")
        for j in range(nprocs - 1):  # ties with the splitter's key: cut by global index
            a, b, g = int(lo[j]), int(hi[j]), int(splitters[j, 1])
            bounds[j + 1] = a + np.searchsorted(gidx[a:b], g, side="left") if a < b else a
        bounds = np.maximum.accumulate(bounds)  # already monotone; guards the cut against rounding
    send_counts = np.diff(bounds)
    table = to_numpy(comm.allgather(send_counts))  # table[r, q]: elements r sends to q
    sends, recvs, total = _routes(table, rank, bounds)
    got_values = np.empty(total, dtype=values.dtype)
    requests = [comm.exchange(sorted_values, sends, got_values, recvs)]
    got_gidx = None
    if index:
        got_gidx = np.empty(total, dtype=np.int64)
        requests.append(comm.exchange(gidx, sends, got_gidx, recvs))
    for request in requests:
        request.wait()
    # merge the received runs (sender order = global order among ties)
    perm = np.argsort(sort_keys(got_values, descending), kind="stable")
    merged_gidx = got_gidx[perm] if got_gidx is not None else None
    counts = tuple(int(c) for c in table.sum(axis=0))
    return got_values[perm], merged_gidx, counts


def _routes(table: np.ndarray, rank: int, bounds: np.ndarray, order=None):
    """Send and receive regions of an all-to-all: ``table[r, q]`` elements go from rank r to q.

    This rank sends ``[bounds[b], bounds[b + 1])`` of its run to rank ``order[b]``
    (default ``b``) and receives the pieces in rank order.
    """
    nprocs = table.shape[0]
    order = range(nprocs) if order is None else order
    received = table[:, rank]
    starts = np.concatenate(([0], np.cumsum(received)))
    sends = [(int(q), (slice(int(bounds[b]), int(bounds[b + 1])),))
             for b, q in enumerate(order) if bounds[b + 1] > bounds[b]]
    recvs = [(r, (slice(int(starts[r]), int(starts[r + 1])),)) for r in range(nprocs) if received[r]]
    return sends, recvs, int(starts[-1])


def sample_sort_values(comm, values: np.ndarray, descending: bool = False):
    """Sample sort of values alone (collective); None on every rank if a stable sort would differ.

    Each rank sorts its block with NumPy's fastest sort; one allgather carries
    ``P - 1`` regular samples (value and position) per rank and what ties the
    rank holds (:func:`tie_kinds`); every rank returns None if a rank holds
    observable ties (or, for ``descending``, ranks hold ties between them). Splitters cut equal values by (rank, position), so runs
    of duplicates are spread evenly. The pieces move all-to-all and each rank
    merges its sorted runs (timsort finds them). ``descending`` sends the
    ascending buckets to the ranks in reverse order and flips the merged runs.
    Returns ``(values, None, part sizes)`` as :func:`sample_sort`.
    """
    nprocs, rank = comm.size, comm.rank
    observable, zero_signs, nan_seen, nan_bits = tie_kinds(values)
    run = values if observable else restore_nans(np.sort(values), nan_seen, nan_bits)
    n = run.shape[0]
    if nprocs == 1:
        return None if observable else (run[::-1].copy() if descending else run, None, (n,))
    pos = (np.arange(1, nprocs, dtype=np.int64) * n) // nprocs
    header = np.array([n > 0, observable, zero_signs, nan_seen], dtype=np.int64)
    picked = run[pos] if n else np.zeros(nprocs - 1, dtype=run.dtype)
    packed = np.concatenate([header.view(np.uint8), np.array([nan_bits], dtype=np.uint64).view(np.uint8),
                             pos.view(np.uint8), picked.view(np.uint8)])
    table = to_numpy(comm.allgather(packed))
    headers = table[:, :32].copy().view(np.int64)
    nans = table[:, 32:40].copy().view(np.uint64)[headers[:, 3] == 1]
    if headers[:, 1].any():
        return None
    if descending and (np.bitwise_or.reduce(headers[:, 2]) == 3 or (nans.size and (nans != nans[0]).any())):
        return None  # ties held by different ranks: rank-major tie order is ascending only
    positions = table[:, 40:40 + 8 * (nprocs - 1)].copy().view(np.int64)
    picks = table[:, 40 + 8 * (nprocs - 1):].copy().view(run.dtype)
    owners = np.repeat(np.arange(nprocs, dtype=np.int64), nprocs - 1).reshape(nprocs, nprocs - 1)
    valid = headers[:, 0] == 1
    pool_values, pool_ranks, pool_pos = picks[valid].ravel(), owners[valid].ravel(), positions[valid].ravel()
    bounds = np.zeros(nprocs + 1, dtype=np.int64)
    bounds[nprocs] = n
    if pool_values.size:
        pick = np.lexsort((pool_pos, pool_ranks, pool_values))[(np.arange(1, nprocs) * pool_values.size) // nprocs]
        split_values, split_ranks, split_pos = pool_values[pick], pool_ranks[pick], pool_pos[pick]
        lo = np.searchsorted(run, split_values, side="left")
        hi = np.searchsorted(run, split_values, side="right")
        # equal values are cut by (rank, position): before the splitter's rank all go left, after it none
        cut = np.where(rank < split_ranks, hi, np.where(rank > split_ranks, lo, np.clip(split_pos, lo, hi)))
        bounds[1:nprocs] = cut
        bounds = np.maximum.accumulate(bounds)
    order = np.arange(nprocs)[::-1] if descending else np.arange(nprocs)
    send_counts = np.zeros(nprocs, dtype=np.int64)
    send_counts[order] = np.diff(bounds)
    counts_table = to_numpy(comm.allgather(send_counts))  # counts_table[r, q]: elements r sends to q
    sends, recvs, total = _routes(counts_table, rank, bounds, order)
    got = np.empty(total, dtype=values.dtype)
    comm.exchange(run, sends, got, recvs).wait()
    merged = np.sort(got, kind="stable")  # P sorted runs: timsort merges them
    counts = tuple(int(c) for c in counts_table.sum(axis=0))
    return (merged[::-1].copy() if descending else merged), None, counts


def move_1d(comm, block: np.ndarray, sizes_from, sizes_to) -> np.ndarray:
    """Redistribute a 1-d array between two rank-ordered block size lists (collective)."""
    sizes_from, sizes_to = tuple(int(s) for s in sizes_from), tuple(int(s) for s in sizes_to)
    if sizes_from == sizes_to:
        return block
    n = sum(sizes_to)
    nprocs = comm.size
    src = Layout((n,), (nprocs,), (0,), (sizes_from,))
    dst = Layout((n,), (nprocs,), (0,), (sizes_to,))
    plan = redistribution_plan(src, dst, comm.rank)
    out = np.empty(dst.block_shape(comm.rank), dtype=block.dtype)
    comm.exchange(np.ascontiguousarray(block), plan.sends, out, plan.recvs).wait()
    return out


class Routed:
    """Items sent to chosen ranks (all-to-all, counts first); ``reply`` sends answers back."""

    def __init__(self, comm, dest: np.ndarray, payloads):
        nprocs, rank = comm.size, comm.rank
        self.comm = comm
        self.order = np.argsort(dest, kind="stable")
        counts = np.bincount(dest, minlength=nprocs).astype(np.int64)
        table = to_numpy(comm.allgather(counts))
        self.sends, self.recvs, self.n_in = _routes(table, rank, np.concatenate(([0], np.cumsum(counts))))
        self.n_out = len(dest)
        self.received = []
        for payload in payloads:
            buf = np.empty(self.n_in, dtype=payload.dtype)
            comm.exchange(np.ascontiguousarray(payload[self.order]), self.sends, buf, self.recvs).wait()
            self.received.append(buf)

    def reply(self, answers: np.ndarray) -> np.ndarray:
        """``answers`` (one per received item) delivered back, in the senders' original order."""
        buf = np.empty(self.n_out, dtype=answers.dtype)
        self.comm.exchange(np.ascontiguousarray(answers), self.recvs, buf, self.sends).wait()
        out = np.empty_like(buf)
        out[self.order] = buf
        return out
