"""Sorting functions (Array API chapter "Sorting Functions"), distributed.

What moves, per case of ``sort`` / ``argsort`` along ``axis``:

- ``axis`` not cut (or the array replicated): nothing, one local sort per rank.
- ``axis`` cut, and another axis at least as long as the number of ranks: the
  array is redistributed so that ``axis`` is whole on every rank (cut along
  the longest other axis), sorted locally, and redistributed back. Two
  all-to-alls of the array, like a distributed transpose.
- ``axis`` cut otherwise (1-d arrays, thin arrays): a parallel sample sort of
  every line over a 1-d grid of all ranks: local sort, ``P - 1`` regular
  samples per rank are allgathered, ``P - 1`` splitters chosen, every rank's
  sorted run is cut at the splitters and the pieces exchanged all-to-all
  (counts first, by ``allgather``), the received runs merged, and the result
  redistributed back to the input layout.

Ties: elements are ordered by ``(key, global index)``, so ``stable=True`` holds
across ranks, also for ``descending=True`` (equal elements keep their relative
order, as the Array API asks, unlike ``numpy.flip(numpy.sort(x))``). Keys are
unsigned integers derived from the values: NaNs sort last ascending (first
descending, as array-api-compat's NumPy does), ``-0.0`` ties with ``0.0``.

The distributed paths compute on host NumPy views of the blocks; the results
go back to the input's backend.
"""

from __future__ import annotations

import numpy as np

from .._backend import NUMPY, to_numpy
from .._core import DArray, redistribute_to, wrap_like
from .._core.plans import redistribution_plan
from .._errors import message
from .._layout import Layout, balanced_sizes, normalize_axis

__all__ = ["argsort", "sort"]


# ---------------------------------------------------------------- public API
def sort(x, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> DArray:
    """``x`` sorted along ``axis`` (the result has the input's layout)."""
    return _sort("sort", x, axis, descending, stable, index=False)


def argsort(x, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> DArray:
    """Indices (along ``axis``) that sort ``x`` along ``axis``; int64, in the input's layout."""
    return _sort("argsort", x, axis, descending, stable, index=True)


def _check_sortable(func: str, x) -> None:
    if not isinstance(x, DArray):
        raise TypeError(message(func, "expected a DArray", type(x).__name__))
    if x.dtype.kind not in "biuf":
        raise TypeError(message(func, "unsupported dtype", x.dtype, "a real numeric or boolean dtype"))


def _sort(func: str, x, axis, descending: bool, stable: bool, index: bool) -> DArray:
    _check_sortable(func, x)
    axis = normalize_axis(func, axis, x.ndim)
    descending, stable = bool(descending), bool(stable)
    layout = x._layout
    xp = x._xp
    comm = x._comm
    nprocs = comm.size
    if layout.axis_dim[axis] is None:
        return wrap_like(_local_sort(xp, x.local, axis, descending, stable, index), layout, x)
    others = [a for a in range(x.ndim) if a != axis]
    longest = max(others, key=lambda a: x.shape[a]) if others else None
    if longest is not None and x.shape[longest] >= nprocs:
        # a distributed transpose: make ``axis`` whole on every rank, sort locally, move back
        sizes = tuple(balanced_sizes(n, nprocs) if a == longest else (n,) for a, n in enumerate(x.shape))
        whole = Layout(x.shape, (nprocs,), (longest,), sizes, (0,) * x.ndim, ("none",) * x.ndim)
        moved = redistribute_to(x, whole)
        out = DArray._wrap(_local_sort(xp, moved.local, axis, descending, stable, index), whole, comm, xp)
        return redistribute_to(out, layout)
    return _sample_sort_lines(x, axis, descending, stable, index)


def _local_sort(xp, block, axis, descending, stable, index):
    if block.dtype == xp.bool and xp is not NUMPY:
        # the standard sorts real numbers only (array_api_strict refuses booleans): sort False/True as 0/1
        out = _local_sort(xp, xp.astype(block, xp.uint8), axis, descending, stable, index)
        return out if index else xp.astype(out, xp.bool)
    if index:
        out = xp.argsort(block, axis=axis, descending=descending, stable=stable)
        return out if out.dtype == xp.int64 else xp.astype(out, xp.int64)
    return xp.sort(block, axis=axis, descending=descending, stable=stable)


def line_layout(x: DArray, axis: int) -> Layout:
    """``x``'s layout if it cuts only ``axis`` over a 1-d grid of all ranks, else such a balanced layout."""
    layout = x._layout
    nprocs = x._comm.size
    if layout.dims == (nprocs,) and layout.split == (axis,):
        return layout.replace(halo=(0,) * x.ndim, boundary=("none",) * x.ndim) if layout.has_halo else layout
    sizes = tuple(balanced_sizes(n, nprocs) if a == axis else (n,) for a, n in enumerate(x.shape))
    return Layout(x.shape, (nprocs,), (axis,), sizes, (0,) * x.ndim, ("none",) * x.ndim)


def _sample_sort_lines(x: DArray, axis: int, descending: bool, stable: bool, index: bool) -> DArray:
    comm = x._comm
    lines_layout = line_layout(x, axis)
    moved = redistribute_to(x, lines_layout)
    block = np.moveaxis(to_numpy(moved.local), axis, -1)
    sizes = lines_layout.sizes[axis]
    rows = block.reshape(int(np.prod(block.shape[:-1])), block.shape[-1])
    out = np.empty(rows.shape, dtype=np.int64 if index else rows.dtype)
    for line in range(rows.shape[0]):  # one line for a 1-d array; fewer than P**(ndim-1) otherwise
        values, gidx, counts = sample_sort(comm, rows[line], sum(sizes[:comm.rank]), descending, stable,
                                           index=index)
        out[line] = move_1d(comm, gidx if index else values, counts, sizes)
    out = np.moveaxis(out.reshape(block.shape), -1, axis)
    xp = x._xp
    local = out if xp is NUMPY else xp.asarray(out, device=x.device)
    return redistribute_to(DArray._wrap(local, lines_layout, comm, xp), x._layout)


# ---------------------------------------------------------------- sample sort
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
    """
    nprocs, rank = comm.size, comm.rank
    n = values.shape[0]
    fast = not index and not descending
    if fast:  # ascending values only: equal keys are equal values, ties only need a consistent order
        sorted_values = np.sort(values, kind="stable" if stable else None)
        keys = sort_keys(sorted_values)
        gidx = None
    else:
        all_keys = sort_keys(values, descending)
        perm = np.argsort(all_keys, kind="stable")
        keys = all_keys[perm]
        sorted_values = values[perm]
        gidx = perm.astype(np.int64) + offset
    if nprocs == 1:
        return sorted_values, gidx, (n,)

    # regular samples: (key, global index, valid) per rank, P - 1 of them
    samples = np.zeros((nprocs - 1, 3), dtype=np.uint64)
    if n:
        pos = (np.arange(1, nprocs) * n) // nprocs
        samples[:, 0] = keys[pos]
        samples[:, 1] = gidx[pos] if gidx is not None else pos + offset
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
            if a == b:
                bounds[j + 1] = a
            elif gidx is not None:
                bounds[j + 1] = a + np.searchsorted(gidx[a:b], g, side="left")
            else:
                bounds[j + 1] = a + min(max(g - offset - a, 0), b - a)
        bounds = np.maximum.accumulate(bounds)  # already monotone; guards the cut against rounding
    send_counts = np.diff(bounds)
    table = to_numpy(comm.allgather(send_counts))  # table[r, q]: elements r sends to q
    received = table[:, rank]
    starts = np.concatenate(([0], np.cumsum(received)))
    sends = [(q, (slice(int(bounds[q]), int(bounds[q + 1])),)) for q in range(nprocs) if send_counts[q]]
    recvs = [(r, (slice(int(starts[r]), int(starts[r + 1])),)) for r in range(nprocs) if received[r]]
    total = int(starts[-1])
    got_values = np.empty(total, dtype=values.dtype)
    requests = [comm.exchange(sorted_values, sends, got_values, recvs)]
    got_gidx = None
    if gidx is not None:
        got_gidx = np.empty(total, dtype=np.int64)
        requests.append(comm.exchange(gidx, sends, got_gidx, recvs))
    for request in requests:
        request.wait()
    # merge the received runs (sender order = global order among ties)
    if fast:
        merged_values = np.sort(got_values, kind="stable" if stable else None)
        merged_gidx = None
    else:
        perm = np.argsort(sort_keys(got_values, descending), kind="stable")
        merged_values = got_values[perm]
        merged_gidx = got_gidx[perm] if got_gidx is not None else None
    counts = tuple(int(c) for c in table.sum(axis=0))
    return merged_values, merged_gidx, counts


def move_1d(comm, block: np.ndarray, sizes_from, sizes_to) -> np.ndarray:
    """Redistribute a 1-d array between two rank-ordered block size lists (collective)."""
    sizes_from, sizes_to = tuple(int(s) for s in sizes_from), tuple(int(s) for s in sizes_to)
    if sizes_from == sizes_to:
        return block
    n = sum(sizes_to)
    nprocs = comm.size
    src = Layout((n,), (nprocs,), (0,), (sizes_from,), (0,), ("none",))
    dst = Layout((n,), (nprocs,), (0,), (sizes_to,), (0,), ("none",))
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
        received = table[:, rank]
        s_off = np.concatenate(([0], np.cumsum(counts)))
        r_off = np.concatenate(([0], np.cumsum(received)))
        self.sends = [(q, (slice(int(s_off[q]), int(s_off[q + 1])),)) for q in range(nprocs) if counts[q]]
        self.recvs = [(r, (slice(int(r_off[r]), int(r_off[r + 1])),)) for r in range(nprocs) if received[r]]
        self.n_out, self.n_in = len(dest), int(r_off[-1])
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
