"""NumPy's set routines for DArrays: ``intersect1d``, ``union1d``, ``setdiff1d``, ``setxor1d``, ``isin``; ``unique``
along an axis and of records.

Each has NumPy's signature and result and is registered for ``numpy.f(x)``.
They follow NumPy's own algorithms (unique, concatenate, sort, compare each
sorted value with its neighbours), with every step distributed:

- the flattened operands are concatenated and sample-sorted together
  (:func:`darray._api.sorting.sample_sort`: local sort, splitters, one
  all-to-all); the sorted run, with each element's position in the
  concatenation, stays cut over a 1-d grid of all ranks;
- a value's neighbours in the sorted order are local, except at a rank's
  ends: the first and last sorted value of every rank are allgathered
  (``P`` values);
- the kept values stay where they are (uneven blocks; one allgather of the
  per-rank counts); ``return_indices`` and ``setdiff1d(assume_unique=True)``
  route positions to their owners and back (:mod:`darray._core.fetch`).

Nothing is gathered: a rank holds its share of the sorted values and
``O(P)`` neighbour values. ``numpy.in1d`` is gone from NumPy 2.4 (use
``isin``). ``numpy.isin`` is darray's :func:`darray.isin` (whose test set is
held whole by every rank: its distinct values are gathered).

Examples
--------
>>> import darray as da
>>> from darray._api.numpy.sets import intersect1d, setxor1d
>>> intersect1d(da.asarray([1, 3, 4, 3]), da.asarray([3, 1, 2, 1])).gather().tolist()
[1, 3]
>>> setxor1d(da.asarray([1, 2, 3]), da.asarray([2, 3, 4])).gather().tolist()
[1, 4]
"""

from __future__ import annotations

import numpy as np

from ..._backend import from_numpy, to_numpy
from ..._core import DArray, redistribute_to
from ..._core.advanced import take
from ..._core.fetch import as_rows, fetch_rows, scatter_rows
from ..._core.protocols import implements
from ..._errors import AxisError, message
from ..._layout import Layout
from ..manipulation import concat, moveaxis, reshape
from .._common import first_darray
from ..creation import asarray, zeros
from ..sets import isin as _isin, unique_all, unique_inverse
from ..sorting import line_layout, sample_sort
from ._common import darray_of

__all__ = ["intersect1d", "setdiff1d", "setxor1d", "union1d", "unique_along", "unique_records"]


# ---------------------------------------------------------------- helpers
def _operands(func: str, *arrays) -> list[DArray]:
    """The operands as DArrays (non-DArrays replicated on the first DArray's ranks; with none, the first laid out
    as ``asarray`` lays out data and the others replicated on its ranks), real or boolean."""
    like = first_darray(*arrays)
    if like is None:  # NumPy's array-likes alone: the first laid out as asarray lays out data
        like = darray_of(func, arrays[0])
        arrays = (like, *arrays[1:])
    out = [darray_of(func, a, like) for a in arrays]
    for a in out:
        if a.dtype.kind not in "biuf":
            raise TypeError(message(f"numpy.{func}", "unsupported dtype", a.dtype, "a real numeric or boolean dtype"))
    return out


def _flat(x: DArray) -> DArray:
    return reshape(x, (-1,)) if x.ndim != 1 else x


def _unique(x: DArray, return_index: bool = False):
    """``numpy.unique`` of the flattened ``x`` (NaNs merged as NumPy's), with first indices if asked."""
    return np.unique(x, return_index=return_index)


def _line(x: DArray) -> DArray:
    """The 1-d ``x`` cut over a 1-d grid of all ranks (no halo)."""
    return redistribute_to(x, line_layout(x, 0))


def _wrap(like: DArray, local: np.ndarray, counts) -> DArray:
    """A 1-d DArray from every rank's ``local`` part (rank order = global order), ``counts`` known everywhere."""
    counts = tuple(int(c) for c in counts)
    layout = Layout((sum(counts),), (like._comm.size,), (0,), (counts,), (0,), ("none",))
    return DArray._wrap(from_numpy(like._xp, np.ascontiguousarray(local), device=like.device), layout, like._comm,
                        like._xp)


def _counts(comm, n: int) -> tuple[int, ...]:
    return tuple(int(c) for c in to_numpy(comm.allgather(np.asarray([n], dtype=np.int64)))[:, 0])


class _Sorted:
    """The sample-sorted concatenation of 1-d DArrays: this rank's run and its neighbours across ranks.

    ``values``: this rank's sorted values; ``position``: their positions in
    the concatenation (if ``index``); ``next_values``/``prev_values``: every
    value's successor / predecessor in the global order, with
    ``has_next``/``has_prev`` False at the global ends.
    """

    def __init__(self, arrays: list[DArray], index: bool):
        whole = _line(concat(arrays) if len(arrays) > 1 else arrays[0])
        comm = whole._comm
        self.comm, self.like = comm, whole
        sizes = whole._layout.sizes[0]
        self.values, self.position, self.counts = sample_sort(comm, to_numpy(whole.local), sum(sizes[:comm.rank]),
                                                              index=index)
        n = self.values.shape[0]
        ends = np.zeros(2, dtype=self.values.dtype)
        ends_pos = np.zeros(2, dtype=np.int64)
        if n:
            ends[:] = self.values[[0, -1]]
            if index:
                ends_pos[:] = self.position[[0, -1]]
        table = to_numpy(comm.allgather(ends))
        pos_table = to_numpy(comm.allgather(ends_pos)) if index else None
        rank = comm.rank
        later = [r for r in range(rank + 1, comm.size) if self.counts[r]]
        earlier = [r for r in range(rank) if self.counts[r]]
        self.next_values = np.empty_like(self.values)
        self.prev_values = np.empty_like(self.values)
        self.next_position = np.empty(n, dtype=np.int64) if index else None
        self.has_next = np.ones(n, dtype=bool)
        self.has_prev = np.ones(n, dtype=bool)
        if n:
            self.next_values[:-1] = self.values[1:]
            self.prev_values[1:] = self.values[:-1]
            if index:
                self.next_position[:-1] = self.position[1:]
            if later:
                self.next_values[-1] = table[later[0], 0]
                if index:
                    self.next_position[-1] = pos_table[later[0], 0]
            else:
                self.has_next[-1] = False
            if earlier:
                self.prev_values[0] = table[earlier[-1], 1]
            else:
                self.has_prev[0] = False

    def equals_next(self) -> np.ndarray:
        return self.has_next & (self.values == self.next_values)

    def equals_prev(self) -> np.ndarray:
        return self.has_prev & (self.values == self.prev_values)

    def keep(self, mask: np.ndarray, local: np.ndarray | None = None) -> DArray:
        """``(local if given else values)[mask]`` as a 1-d DArray (uneven blocks, global sorted order)."""
        kept = (self.values if local is None else local)[mask]
        return _wrap(self.like, kept, _counts(self.comm, kept.shape[0]))


# ---------------------------------------------------------------- the functions
@implements(np.union1d)
def union1d(ar1, ar2) -> DArray:
    """The sorted unique values in either array (``numpy.union1d``), distributed.

    Examples
    --------
    >>> import darray as da
    >>> union1d(da.asarray([-1, 0, 1]), da.asarray([-2, 0, 2])).gather().tolist()
    [-2, -1, 0, 1, 2]
    """
    a, b = _operands("union1d", ar1, ar2)
    return _unique(concat([_flat(a), _flat(b)]))


@implements(np.intersect1d)
def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False):
    """The sorted values in both arrays (``numpy.intersect1d``), distributed.

    With ``return_indices``, also the (first-occurrence) flat indices of those
    values in ``ar1`` and in ``ar2``.

    Examples
    --------
    >>> import darray as da
    >>> values, i1, i2 = intersect1d(da.asarray([1, 1, 2, 3, 4]), da.asarray([2, 1, 4, 6]), return_indices=True)
    >>> values.gather().tolist(), i1.gather().tolist(), i2.gather().tolist()
    ([1, 2, 4], [0, 2, 4], [1, 0, 2])
    """
    a, b = (_flat(x) for x in _operands("intersect1d", ar1, ar2))
    ind1 = ind2 = None
    if not assume_unique:
        if return_indices:
            a, ind1 = _unique(a, True)
            b, ind2 = _unique(b, True)
        else:
            a, b = _unique(a), _unique(b)
    run = _Sorted([a, b], index=bool(return_indices))
    both = run.equals_next()
    values = run.keep(both)
    if not return_indices:
        return values
    n1 = a.shape[0]
    first = run.position[both]
    second = run.next_position[both] - n1
    if ind1 is not None:  # positions among the unique values -> positions in the input
        first = to_numpy(fetch_rows(as_rows(ind1), first)).astype(np.int64)
        second = to_numpy(fetch_rows(as_rows(ind2), second)).astype(np.int64)
    counts = values._layout.sizes[0]
    return values, _wrap(values, first, counts), _wrap(values, second, counts)


@implements(np.setxor1d)
def setxor1d(ar1, ar2, assume_unique: bool = False) -> DArray:
    """The sorted values in exactly one of the arrays (``numpy.setxor1d``), distributed.

    Examples
    --------
    >>> import darray as da
    >>> setxor1d(da.asarray([1, 2, 3, 2, 4]), da.asarray([2, 3, 5, 7, 5])).gather().tolist()
    [1, 4, 5, 7]
    """
    a, b = (_flat(x) for x in _operands("setxor1d", ar1, ar2))
    if not assume_unique:
        a, b = _unique(a), _unique(b)
    run = _Sorted([a, b], index=False)
    return run.keep(~run.equals_next() & ~run.equals_prev())


@implements(np.setdiff1d)
def setdiff1d(ar1, ar2, assume_unique: bool = False) -> DArray:
    """The values of ``ar1`` not in ``ar2`` (``numpy.setdiff1d``), distributed.

    Sorted and unique (``ar1``'s unique values, in their sorted order); with
    ``assume_unique=True``, in ``ar1``'s order, as NumPy.

    Examples
    --------
    >>> import darray as da
    >>> setdiff1d(da.asarray([1, 2, 3, 2, 4, 1]), da.asarray([3, 4, 5, 6])).gather().tolist()
    [1, 2]
    """
    a, b = (_flat(x) for x in _operands("setdiff1d", ar1, ar2))
    if not assume_unique:
        a, b = _unique(a), _unique(b)
    n1 = a.shape[0]
    run = _Sorted([a, b], index=True)
    # a value of ar1 is in ar2 iff ar2's copy follows it (both unique; the sort is stable); the verdicts go
    # back to ar1's cells, which compress their own blocks (ar1's order and dtype, as NumPy's ar1[mask])
    found = (run.position < n1) & run.equals_next() & (run.next_position >= n1)
    members = _line(zeros(n1, dtype=np.bool_, comm=a.comm, device=a.device))
    scatter_rows(members, run.position[found], from_numpy(a._xp, np.ones(int(found.sum()), dtype=bool),
                                                            device=a.device))
    return redistribute_to(a, members._layout)[~members]


@implements(np.isin)
def _numpy_isin(element, test_elements, assume_unique: bool = False, invert: bool = False, *, kind=None):
    """``numpy.isin``: :func:`darray.isin` (``element``'s layout; the test set is held whole by every rank)."""
    if kind not in (None, "sort", "table"):
        raise ValueError(message("numpy.isin", "unknown kind", repr(kind), "None, 'sort' or 'table'"))
    like = first_darray(element, test_elements)
    return _isin(darray_of("isin", element, like), test_elements, invert=bool(invert))


def unique_along(ar: DArray, axis: int, return_index: bool = False, return_inverse: bool = False,
                 return_counts: bool = False):
    """``numpy.unique(ar, axis=axis, ...)``: the unique slices along ``axis``, in lexicographic order.

    Distributed without ever holding a whole slice list: the slices are
    rows of ``c`` values (``c`` the product of the other lengths); their
    lexicographic rank is refined column by column with the distributed 1-d
    ``unique_inverse`` (rank of the column's value, then rank of the pair
    (rank so far, that rank) as one int64), ``2 c`` sample sorts in all. The
    final ranks are the inverse indices; ``unique_all`` of them gives first
    indices and counts, and the unique slices are fetched from their owners.
    As NumPy's, every NaN is distinct here (``equal_nan`` applies to
    ``axis=None`` only).

    Examples
    --------
    >>> import darray as da
    >>> unique_along(da.asarray([[1, 2], [3, 4], [1, 2]]), 0).gather().tolist()
    [[1, 2], [3, 4]]
    """
    func = "numpy.unique"
    if ar.ndim == 0:
        raise ValueError(message(func, "axis given for a 0-d array", axis, "None"))
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(message(func, "axis must be an integer or None", axis))
    if not -ar.ndim <= axis < ar.ndim:
        raise AxisError(message(func, "axis out of bounds", axis, f"an axis in [{-ar.ndim}, {ar.ndim})"))
    axis = int(axis) % ar.ndim
    if ar.dtype.kind not in "biuf":
        raise TypeError(message(func, "unsupported dtype", ar.dtype, "a real numeric or boolean dtype"))
    n = ar.shape[axis]
    moved = moveaxis(ar, axis, 0)
    rest = moved.shape[1:]
    c = int(np.prod(rest))
    rows = reshape(moved, (n, c))
    empty = np.zeros(0, dtype=np.int64)
    if n == 0 or c == 0:  # no rows, or rows of nothing (all equal)
        keep = min(n, 1)
        values = ar[tuple(slice(0, keep) if d == axis else slice(None) for d in range(ar.ndim))]
        parts = [asarray(np.zeros(keep, dtype=np.int64), split=None, comm=ar.comm, device=ar.device),
                 zeros(n, dtype=np.int64, comm=ar.comm, device=ar.device),
                 asarray(np.full(keep, n, dtype=np.int64) if keep else empty, split=None, comm=ar.comm,
                         device=ar.device)]
    else:
        ranks = None
        for j in range(c):
            column = unique_inverse(rows[:, j])
            r = column.inverse_indices
            ranks = r if ranks is None else unique_inverse(ranks * column.values.shape[0] + r).inverse_indices
        found = unique_all(ranks)
        firsts = found.indices
        table = as_rows(rows)
        got = to_numpy(fetch_rows(table, to_numpy(firsts.local).astype(np.int64)))
        counts = firsts._layout.sizes[0]
        if firsts._layout.is_replicated:
            picked = DArray._wrap(from_numpy(ar._xp, got, device=ar.device), Layout(
                (got.shape[0], c), firsts._layout.dims, (None,) * len(firsts._layout.dims), ((got.shape[0],), (c,)),
                (0, 0), ("none", "none")), ar.comm, ar._xp)
        else:
            picked = DArray._wrap(from_numpy(ar._xp, np.ascontiguousarray(got), device=ar.device), Layout(
                (sum(counts), c), (ar.comm.size,), (0,), (tuple(counts), (c,)), (0, 0), ("none", "none")),
                ar.comm, ar._xp)
        values = moveaxis(reshape(picked, (picked.shape[0], *rest)), 0, axis)
        parts = [firsts, ranks, found.counts]
    out = [values] + [p for p, asked in zip(parts, (return_index, return_inverse, return_counts)) if asked]
    return out[0] if len(out) == 1 else tuple(out)


def unique_records(ar: DArray, return_index: bool = False, return_inverse: bool = False,
                   return_counts: bool = False):
    """``numpy.unique(ar)`` of a record (structured) DArray: its distinct records in NumPy's record order.

    Records order by their fields, the first most significant (nested
    records flattened, a subarray field one key per element: the keys of
    :func:`~darray._api.numpy.records.field_keys`). Each record's
    lexicographic rank is refined key by key with the distributed 1-d
    ``unique_inverse``, as :func:`unique_along` ranks rows; the ranks are the
    inverse indices (in ``ar``'s shape, as NumPy >= 2.0.1), ``unique_all`` of
    them gives the first indices and counts, and the records are taken at the
    first indices. As NumPy's, a record with a NaN field equals no other.

    Examples
    --------
    >>> import numpy, darray as da
    >>> r = numpy.array([(2, 1.0), (1, 5.0), (2, 1.0)], dtype=[("n", "i8"), ("w", "f8")])
    >>> unique_records(da.asarray(r)).gather().tolist()
    [(1, 5.0), (2, 1.0)]
    """
    from .records import field_keys

    flat = reshape(ar, (-1,))
    n = flat.shape[0]
    if n == 0:
        none = asarray(np.zeros(0, dtype=np.int64), split=None, comm=ar.comm, device=ar.device)
        parts = [none, reshape(none, ar.shape), none]
        values = flat
    else:
        ranks = None
        for key in field_keys("numpy.unique", flat):
            column = unique_inverse(key)
            r = column.inverse_indices
            ranks = r if ranks is None else unique_inverse(ranks * column.values.shape[0] + r).inverse_indices
        if ranks is None:  # a record of no fields: all equal
            ranks = zeros(n, dtype=np.int64, comm=ar.comm, device=ar.device)
        found = unique_all(ranks)
        values = take(flat, found.indices)
        parts = [found.indices, reshape(ranks, ar.shape), found.counts]
    out = [values] + [p for p, asked in zip(parts, (return_index, return_inverse, return_counts)) if asked]
    return out[0] if len(out) == 1 else tuple(out)
