"""Set functions (Array API chapter "Set Functions"), distributed.

The flattened values are sample-sorted (see :mod:`darray._api.sorting`);
duplicates are then dropped where a value equals its predecessor, the
predecessor of a rank's first element being the last element of the nearest
non-empty rank before it (one allgather of one value per rank). Counts are
distances between the global positions where runs start (one more allgather
of two integers per rank). Inverse indices go back to the input's cells in
one all-to-all of (index, unique id) pairs.

Results are 1-d arrays cut over a 1-d grid of all ranks, with the block sizes
that fall out of the sort (known everywhere after the allgather); an input
replicated on every rank gives replicated results computed locally. As in
NumPy 2 (``equal_nan=False``), every NaN is its own unique value.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .._backend import NUMPY, from_numpy, to_numpy
from .._core import DArray, redistribute_to
from .._errors import message
from .._layout import Layout
from .._core.advanced import take
from .creation import full_like
from .elementwise import isnan
from .cumulative import cumulative_sum, diff
from .manipulation import reshape
from .searching import nonzero
from .sorting import argsort, line_layout
from .._core.sample_sort import Routed, sample_sort

__all__ = ["isin", "unique_all", "unique_counts", "unique_inverse", "unique_values"]

UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def unique_all(x, /) -> UniqueAllResult:
    """Unique values, first-occurrence flat indices, inverse indices (x's shape) and counts."""
    return UniqueAllResult(*_unique("unique_all", x, indices=True, inverse=True, counts=True))


def unique_counts(x, /) -> UniqueCountsResult:
    """Unique values and how often each occurs."""
    values, _, _, counts = _unique("unique_counts", x, counts=True)
    return UniqueCountsResult(values, counts)


def unique_inverse(x, /) -> UniqueInverseResult:
    """Unique values and, per element of ``x`` (same shape), the index of its value."""
    values, _, inverse, _ = _unique("unique_inverse", x, inverse=True)
    return UniqueInverseResult(values, inverse)


def unique_values(x, /) -> DArray:
    """The sorted unique values of ``x`` (1-d)."""
    return _unique("unique_values", x)[0]


def _wrap(x: DArray, array: np.ndarray, layout: Layout) -> DArray:
    local = array if x._xp is NUMPY else x._xp.asarray(array, device=x.device)
    return DArray._wrap(local, layout, x._comm, x._xp)


def _unique(func: str, x, indices: bool = False, inverse: bool = False, counts: bool = False):
    if not isinstance(x, DArray):
        raise TypeError(message(func, "expected a DArray", type(x).__name__))
    if x.dtype.kind in "Mm":  # dates and durations: unique sort keys, one NaT as in NumPy
        from .sorting import from_time_keys, time_keys

        found = _unique(func, time_keys(x), indices, inverse, counts)
        return (from_time_keys(found[0], x.dtype), *found[1:])
    if x.dtype.kind not in "biufc":
        raise TypeError(message(func, "unsupported dtype", x.dtype, "a numeric or boolean dtype"))
    comm = x._comm
    if x._layout.is_replicated:
        return _unique_local(x, indices, inverse, counts)
    if x.dtype.kind == "c":
        return _unique_complex(x, indices, inverse, counts)
    rank, nprocs = comm.rank, comm.size
    flat = reshape(x, (-1,))
    canonical = line_layout(flat, 0)
    flat = redistribute_to(flat, canonical)
    sizes = canonical.sizes[0]
    offset = sum(sizes[:rank])
    need_index = indices or inverse
    values, gidx, parts = sample_sort(comm, to_numpy(flat.local), offset, index=need_index)
    n = values.shape[0]
    # predecessor of this rank's first element: the last element of the nearest non-empty rank before
    last = np.zeros(1, dtype=values.dtype)
    if n:
        last[0] = values[-1]
    lasts = to_numpy(comm.allgather(last))[:, 0]
    before = [r for r in range(rank) if parts[r]]
    keep = np.ones(n, dtype=bool)
    if n:
        keep[1:] = values[1:] != values[:-1]  # NaN != NaN: every NaN is distinct
        if before:
            keep[0] = bool(values[0] != lasts[before[-1]])
    position = sum(parts[:rank])  # global position of this rank's first sorted element
    starts = np.flatnonzero(keep) + position
    info = np.asarray([starts.shape[0], starts[0] if starts.shape[0] else -1], dtype=np.int64)
    table = to_numpy(comm.allgather(info))
    ucounts = tuple(int(c) for c in table[:, 0])
    total = sum(ucounts)
    out_layout = Layout((total,), (nprocs,), (0,), (ucounts,))
    result_values = _wrap(x, values[keep], out_layout)
    result_indices = result_inverse = result_counts = None
    if counts:
        later = [int(s) for s in table[rank + 1:, 1] if s >= 0]
        end = later[0] if later else sum(parts)
        result_counts = _wrap(x, np.diff(np.append(starts, end)).astype(np.int64), out_layout)
    if indices:
        result_indices = _wrap(x, gidx[keep].astype(np.int64), out_layout)
    if inverse:
        uid = np.cumsum(keep, dtype=np.int64) - 1 + sum(ucounts[:rank])
        dest = np.searchsorted(np.asarray(canonical.offsets[0]), gidx, side="right") - 1
        routed = Routed(comm, dest.astype(np.int64), [gidx, uid])
        got_index, got_uid = routed.received
        local = np.empty(sizes[rank], dtype=np.int64)
        local[got_index - offset] = got_uid
        inv = reshape(_wrap(x, local, canonical), x.shape)
        target = x._layout.without_halo() if x._layout.has_halo \
            else x._layout
        result_inverse = redistribute_to(inv, target)
    return result_values, result_indices, result_inverse, result_counts


def _unique_complex(x: DArray, indices: bool, inverse: bool, counts: bool):
    """Complex values: runs of equal values in NumPy's complex order (real part, then imaginary part, NaNs last).

    The sample sort keys real numbers, so the order comes from three stable
    distributed argsorts (imaginary part, real part, where the NaNs are); the runs are found
    on the sorted values as for real ones, from darray's own distributed
    operations: a shifted comparison, boolean-mask selection, ``nonzero`` and
    ``diff`` for counts, and a scatter of run ids for the inverse.
    """
    flat = reshape(x, (-1,))
    re, im = flat.real, flat.imag
    nan_kind = isnan(re).astype(np.int8) * 2 + isnan(im).astype(np.int8)  # NumPy: R + Rj < R + nanj < nan + Rj < nan + nanj
    order = argsort(im, stable=True)
    for key in (re, nan_kind):
        order = take(order, argsort(take(key, order), stable=True))
    ordered = take(flat, order)
    keep = full_like(ordered, True, dtype=bool)
    keep[1:] = ordered[1:] != ordered[:-1]  # NaN != NaN: every NaN is distinct
    result_counts = result_inverse = None
    if counts:
        result_counts = diff(nonzero(keep)[0], append=ordered.shape[0])
    if inverse:
        run_ids = cumulative_sum(keep.astype(np.int64)) - 1
        scattered = full_like(order, 0)
        scattered[order] = run_ids
        result_inverse = reshape(scattered, x.shape)
    return ordered[keep], order[keep] if indices else None, result_inverse, result_counts


def _unique_local(x: DArray, indices: bool, inverse: bool, counts: bool):
    """A replicated input: every rank computes the whole answer (replicated results)."""
    xp = x._xp
    block = x.local
    dims = x._layout.dims
    if not (indices or inverse or counts):  # the values alone: one sort (unique_all's argsort costs ~15x more)
        values = xp.unique_values(block)
        n = tuple(values.shape)
        layout = Layout(n, dims, (None,) * len(dims), tuple((s,) for s in n))
        return DArray._wrap(values, layout, x._comm, xp), None, None, None
    try:
        res = xp.unique_all(block)
    except NotImplementedError:  # torch (array-api-compat 1.x) has no unique_all: NumPy's, on a host view
        host = NUMPY.unique_all(to_numpy(block))
        res = type(host)(*(from_numpy(xp, a, device=x.device) for a in host))

    def replicated(array, shape):
        layout = Layout(tuple(shape), dims, (None,) * len(dims), tuple((s,) for s in shape))
        return DArray._wrap(array, layout, x._comm, xp)

    n = tuple(res.values.shape)

    def int64(a):
        return a if a.dtype == xp.int64 else xp.astype(a, xp.int64)

    return (replicated(res.values, n),
            replicated(int64(res.indices), n) if indices else None,
            replicated(xp.reshape(int64(res.inverse_indices), x.shape), x.shape) if inverse else None,
            replicated(int64(res.counts), n) if counts else None)


def isin(x1, x2, /, *, invert: bool = False) -> DArray:
    """Whether each element of ``x1`` occurs in ``x2`` (Array API 2025.12), in ``x1``'s layout.

    ``x2`` is the test set: its distinct values are gathered to every rank
    (usually a short list; its unique values are computed distributed first),
    then each rank tests its own block. Nothing of ``x1`` moves.
    """
    from .._backend import to_numpy
    from .._core.elementwise import wrap_like

    if not isinstance(x1, DArray):
        raise TypeError(message("isin", "x1 must be a DArray", type(x1).__name__))
    if isinstance(x2, (str, bytes)) or not (isinstance(x2, (DArray, list, tuple, np.ndarray, np.generic, int, float,
                                                            complex, bool))):
        raise TypeError(message("isin", "x2 must be an array or numbers", type(x2).__name__))
    if isinstance(x2, DArray):
        values = to_numpy(unique_values(x2).gather())
    else:
        values = np.asarray(x2)
    local = np.isin(to_numpy(x1.local), values, invert=invert)
    plain = x1.layout.without_halo()
    return wrap_like(x1._xp.asarray(local, device=x1.device), plain, x1)
