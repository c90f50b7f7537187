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

``sort`` (values, not indices) is bit for bit a stable sort but pays for one
only where stability shows: equal values with different bits (``-0.0`` and
``0.0``, NaN payloads). Without them, NumPy's fastest sort runs locally and the
sample sort moves values alone, cutting runs of equal values by (rank,
position); with them, the keyed path above runs. ``argsort`` always takes it.

The distributed paths compute on host NumPy views of the blocks; the results
go back to the input's backend.
"""

from __future__ import annotations

import numpy as np

from .._backend import NUMPY, to_numpy
from .._core import DArray, redistribute_to, wrap_like
from .._core.sample_sort import move_1d, restore_nans, sample_sort, sort_keys, tie_kinds
from .._errors import message
from .._layout import Layout, balanced_sizes, normalize_axis

__all__ = ["argsort", "from_time_keys", "sort", "time_keys"]


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


_SIGN = np.uint64(1 << 63)
_ONE = np.uint64(1)


def time_keys(x: DArray) -> DArray:
    """uint64 keys of dates or durations in NumPy's order, NaT last: their int64 order, with NaT (the lowest
    int64) moved past the highest.

    >>> import numpy, darray as da
    >>> t = da.asarray(numpy.array(["2001-01-01", "NaT", "1999-12-31"], dtype="M8[D]"))
    >>> int(da.argmax(time_keys(t)))
    1
    """
    return (x.view(np.uint64) ^ _SIGN) - _ONE


def from_time_keys(keys: DArray, dtype) -> DArray:
    """The dates or durations of ``dtype`` whose :func:`time_keys` are ``keys``."""
    return ((keys + _ONE) ^ _SIGN).view(dtype)


def _sort(func: str, x, axis, descending: bool, stable: bool, index: bool) -> DArray:
    if isinstance(x, DArray) and x.dtype.kind in "MmV":
        return _sort_numpy_kinds(func, x, axis, descending, stable, index)
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
        whole = Layout(x.shape, (nprocs,), (longest,), sizes)
        moved = redistribute_to(x, whole)
        out = DArray._wrap(_local_sort(xp, moved.local, axis, descending, stable, index), whole, comm, xp)
        return redistribute_to(out, layout)
    return _sample_sort_lines(x, axis, descending, stable, index)


def _sort_numpy_kinds(func: str, x: DArray, axis, descending: bool, stable: bool, index: bool) -> DArray:
    """Dates and durations by their :func:`time_keys`; records by every field (NumPy's order of records)."""
    if x.dtype.kind in "Mm":
        out = _sort(func, time_keys(x), axis, descending, stable, index)
        return out if index else from_time_keys(out, x.dtype)
    if descending:
        raise TypeError(message(func, "records sort in NumPy's (ascending) order only", "descending=True",
                                "descending=False, then flip the result"))
    from .numpy.records import sort_records  # (NumPy's records: the layer of NumPy's functions)

    return sort_records(func, x, axis, None, index)


def _local_sort(xp, block, axis, descending, stable, index):
    if block.dtype == xp.bool and xp is not NUMPY:
        # the standard sorts real numbers only (array_api_strict refuses booleans): sort False/True as 0/1
        out = _local_sort(xp, xp.astype(block, xp.uint8), axis, descending, stable, index)
        return out if index else xp.astype(out, xp.bool)
    if xp is not NUMPY and xp.isdtype(block.dtype, "real floating") and _ties_in_bits(xp, block):
        order = _float_order(xp, block, axis, descending)
        return (order if order.dtype == xp.int64 else xp.astype(order, xp.int64)) if index else \
            xp.take_along_axis(block, order, axis=axis)
    if index:
        out = xp.argsort(block, axis=axis, descending=descending, stable=stable)
        return out if out.dtype == xp.int64 else xp.astype(out, xp.int64)
    if xp is NUMPY:
        return sort_values(block, axis, descending)
    if descending and stable and xp.isdtype(block.dtype, "real floating"):
        # some namespaces flip an ascending sort, which reverses ties that differ in bits (-0.0, 0.0)
        return xp.take_along_axis(block, xp.argsort(block, axis=axis, descending=True, stable=True), axis=axis)
    return xp.sort(block, axis=axis, descending=descending, stable=stable)


def _ties_in_bits(xp, block) -> bool:
    """Whether ``block`` holds values that compare equal but differ in bits (``-0.0``, NaNs): a library that sorts
    by bits (CuPy's radix sort puts ``-0.0`` before ``0.0`` and orders NaN payloads) would show them."""
    return bool(xp.any(xp.isnan(block))) or bool(xp.any((block == 0) & xp.signbit(block)))


def _float_order(xp, block, axis: int, descending: bool):
    """The stable order of a float block by NumPy's comparison: ``-0.0 == 0.0``, every NaN equal to every other
    and last (first when ``descending``). Two stable sorts: by value with NaNs and zeros as ``0``, then by NaN-ness
    (NaNs keep their input order, which the first sort kept among its zeros)."""
    nan = xp.isnan(block)
    keys = xp.where(nan | (block == 0), xp.zeros_like(block), block)
    order = xp.argsort(keys, axis=axis, descending=descending, stable=True)
    flags = xp.astype(xp.take_along_axis(nan, order, axis=axis), xp.uint8)
    return xp.take_along_axis(order, xp.argsort(flags, axis=axis, descending=descending, stable=True), axis=axis)


def sort_values(block: np.ndarray, axis: int = -1, descending: bool = False) -> np.ndarray:
    """``block`` sorted along ``axis``, bit for bit as a stable sort, at the cost of NumPy's fastest one.

    A stable sort of values differs from an unstable one only where values
    compare equal but differ in bits: ``-0.0`` next to ``0.0``, NaNs with
    different payloads. Unless ``block`` holds such ties (:func:`tie_kinds`),
    NumPy's default sort (SIMD where available) is used; otherwise a stable
    sort by keys. NaNs go last, first when ``descending``.
    """
    observable, _, nan_seen, nan_bits = tie_kinds(block)
    if observable:
        order = np.argsort(sort_keys(block, descending), axis=axis, kind="stable")
        return np.take_along_axis(block, order, axis=axis)
    out = restore_nans(np.sort(block, axis=axis), nan_seen, nan_bits)
    return np.flip(out, axis=axis).copy() if descending else out


def line_layout(x: DArray, axis: int) -> Layout:
    """``x``'s layout if it cuts only ``axis`` over a 1-d grid of all ranks, else such a balanced layout."""
    layout = x._layout
    nprocs = x._comm.size
    if layout.dims == (nprocs,) and layout.split == (axis,):
        return layout.without_halo() if layout.has_halo else layout
    sizes = tuple(balanced_sizes(n, nprocs) if a == axis else (n,) for a, n in enumerate(x.shape))
    return Layout(x.shape, (nprocs,), (axis,), sizes)


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
