"""Integer-array and boolean-mask indexing (alone or mixed with basic keys), ``take``, ``take_along_axis``.

- ``x[key]`` for any key NumPy takes (:mod:`darray._core.keys` splits it):
  the basic part is a cached view (:mod:`darray._core.indexing`), the index
  arrays then pick cells of whole axes of it. The picked cells are fetched
  from their owners (:mod:`darray._core.cells`); only they move. A leading
  mask on a row-cut view is compressed by every rank on its own block; the
  only collective is an allgather of the per-rank counts.
- ``x[key] = v``: ``v`` is cut like the selection and sent to the owners of
  the cells (repeated cells keep the last value, as in NumPy); ``x[mask] = v``
  writes every rank's own rows.
- ``take``: requested rows are fetched from their owners
  (:mod:`darray._core.fetch`), never gathered.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._backend import from_numpy, is_numpy_namespace, to_numpy
from .._comm.base import agree
from .._errors import message
from .._layout import Layout, normalize_axis
from .array import DArray
from .dtypes import is_extra
from .cells import cells_layout, fetch_cells, first_cut, index_share, scatter_cells, without_axes
from .elementwise import local_operand
from .fetch import as_rows, fetch_rows, rows_layout
from .indexing import getitem, local_key, normalize_key, setitem, sliced_layout
from .keys import Advanced, out_of_bounds, resolve, split_key
from .manipulation import permute_dims
from .redistribute import redistribute_to
from .reshape import reshape

__all__ = ["take", "take_along_axis", "getitem_advanced", "setitem_advanced"]


def _index_array(func: str, indices, n: int) -> np.ndarray:
    """NumPy indices as an int64 array, bounds-checked (negative wrap) identically on every rank."""
    idx = np.asarray(indices)
    if idx.dtype.kind not in "iu" and idx.size:
        raise IndexError(message(func, "indices must be integers", idx.dtype))
    idx = idx.astype(np.int64)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx[(idx < -n) | (idx >= n)][0]
        raise IndexError(message(func, f"index out of bounds for an axis of size {n}", int(bad),
                                 f"indices in [{-n}, {n})"))
    return np.where(idx < 0, idx + n, idx)


def take(x: DArray, indices, /, *, axis: int | None = None) -> DArray:
    """Elements (or slabs) of ``x`` at ``indices`` along ``axis``; only the requested cells move.

    ``indices`` is 1-d: NumPy (replicated) or a DArray (it stays distributed;
    every rank fetches its share of the result from the owners). The result
    is ``x[:, ..., indices]``: cut along ``axis`` in balanced blocks if ``x``
    is cut there, replicated there otherwise; the other axes keep their cut.
    """
    if axis is None:
        if x.ndim != 1:
            raise ValueError(message("take", "axis is required for arrays with more than one dimension", x.shape))
        axis = 0
    axis = normalize_axis("take", axis, x.ndim)
    if isinstance(indices, DArray):
        if indices.dtype.kind not in "iu":
            raise IndexError(message("take", "indices must be integers", indices.dtype))
        idx = indices
    else:
        idx = _index_array("take", indices, x.shape[axis])
    if idx.ndim != 1:  # NumPy's n-d indices: their shape takes axis's place (a 0-d index removes the axis)
        flat = _pick("take", x, split_key("take", (slice(None),) * axis + (idx.reshape(-1),), x.shape))
        return flat.reshape(x.shape[:axis] + tuple(idx.shape) + x.shape[axis + 1:])
    return _pick("take", x, split_key("take", (slice(None),) * axis + (idx,), x.shape))


def take_along_axis(x: DArray, indices, /, *, axis: int = -1) -> DArray:
    """``numpy.take_along_axis``: pick along ``axis`` with an index array shaped like ``x`` elsewhere."""
    if not isinstance(indices, DArray):
        raise TypeError(message("take_along_axis", "indices must be a DArray", type(indices).__name__))
    axis = normalize_axis("take_along_axis", axis, x.ndim)
    if indices.ndim != x.ndim or any(a != axis and indices.shape[a] != x.shape[a] for a in range(x.ndim)):
        raise ValueError(message("take_along_axis", "indices must match x except along axis", indices.shape,
                                 f"{x.shape} with any length on axis {axis}"))
    if indices.dtype.kind not in "iu":
        raise IndexError(message("take_along_axis", "indices must be integers", indices.dtype))
    n = x.shape[axis]
    xp = x._xp
    comm = x._comm
    rank = comm.rank
    local_idx = to_numpy(indices.local).astype(np.int64)
    bad = (local_idx < -n) | (local_idx >= n)
    if agree(comm, not bad.any()):
        raise IndexError(message("take_along_axis", f"index out of bounds for axis {axis} of size {n}", None,
                                 f"indices in [{-n}, {n})"))
    local_idx = np.where(local_idx < 0, local_idx + n, local_idx)
    # global flat index of every requested element
    starts = indices.layout.block_start(rank)
    grids = list(np.meshgrid(*[np.arange(s, s + m) for s, m in zip(starts, local_idx.shape)], indexing="ij"))
    grids[axis] = local_idx
    flat_ids = np.ravel_multi_index(tuple(grids), x.shape) if local_idx.size else np.zeros(0, np.int64)
    flat = as_rows(reshape(x, (-1,)))
    values = fetch_rows(flat, flat_ids.reshape(-1))
    out_layout = indices.layout.without_halo()
    return DArray._wrap(xp.reshape(values, local_idx.shape), out_layout, comm, xp)


def _mask_and_rows(func: str, x: DArray, mask):
    if isinstance(mask, np.ndarray):
        mask = DArray._wrap(from_numpy(x._xp, mask, device=x.device), Layout(mask.shape, x._layout.dims, (None,) * len(x._layout.dims),
                                                     tuple((n,) for n in mask.shape)), x._comm, x._xp)
    if mask.ndim == 0 or mask.ndim > x.ndim or mask.shape != x.shape[:mask.ndim]:
        raise IndexError(message(func, "boolean index does not match the indexed array", mask.shape,
                                 f"the leading dims of {x.shape}"))
    rows = as_rows(x)
    want = Layout(mask.shape, rows._layout.dims, rows._layout.split, rows._layout.sizes[:mask.ndim])
    mask = redistribute_to(mask, want) if mask._layout.blocks_key != want.blocks_key else mask
    return rows, mask


def getitem_advanced(x: DArray, key) -> DArray:
    """``x[key]`` for any key NumPy takes: basic items, integer arrays, boolean masks, mixed.

    The basic part is applied first (a cached plan, see :mod:`darray._core.indexing`);
    the index arrays then pick cells of whole axes of that view: a leading mask
    on a row-cut view compresses every block locally, anything else is
    fetched from the cells' owners (:func:`darray._core.cells.fetch_cells`).

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> g = np.arange(12).reshape(3, 4)
    >>> x = da.asarray(g, split=0)
    >>> bool(np.array_equal(x[:, [0, -1]].gather(), g[:, [0, -1]]))
    True
    >>> x[[0, 2], :, None].shape  # B in place of the array
    (2, 4, 1)
    """
    func = "__getitem__"
    adv = split_key(func, key, x.shape)
    if not isinstance(adv, Advanced):
        return getitem(x, adv)
    if adv.leading_mask:
        y = getitem(x, adv.basic)
        if _row_cut(y):
            return _compress(y, _mask_of(key))
    return _pick(func, x, adv)


def _pick(func: str, x: DArray, adv: Advanced) -> DArray:
    """``x[key]`` through the cells engine: ``x[basic]``, then the picked cells fetched from their owners."""
    adv = resolve(func, adv, x)
    y = getitem(x, adv.basic)
    axes, nb = adv.axes, len(adv.bshape)
    layout = cells_layout(without_axes(y._layout, axes), first_cut(y._layout, axes), adv.bshape)
    coords = _coords(func, adv, layout, x, [y.shape[a] for a in axes], adv.index)
    local = fetch_cells(y, axes, coords)
    rank = x._comm.rank
    out = DArray._wrap(x._xp.reshape(local, layout.block_shape(rank)), layout, x._comm, x._xp)
    p = axes[0]
    if adv.adjacent and p:  # B takes the arrays' place: rest[:p] + B + rest[p:]
        out = permute_dims(out, (*range(nb, nb + p), *range(nb), *range(nb + p, out.ndim)))
    return out


def _mask_of(key):
    return key[0] if isinstance(key, tuple) else key


def _row_cut(y: DArray) -> bool:
    """Whether ``y`` is cut along axis 0 only (or replicated): a leading mask then compresses in place."""
    layout = y._layout
    return len(layout.dims) == 1 and layout.split in ((0,), (None,)) and not layout.has_halo


def _compress(y: DArray, mask) -> DArray:
    """``y[mask]``, mask on leading axes of a row-cut ``y``: every rank keeps its own selected rows."""
    mask = mask if isinstance(mask, DArray) else np.asarray(mask, dtype=bool)
    rows, mask = _mask_and_rows("__getitem__", y, mask)
    xp = y._xp
    local = rows.local[mask.local]
    counts = to_numpy(y._comm.allgather(np.asarray([local.shape[0]], dtype=np.int64)))[:, 0]
    shape = (int(counts.sum()), *y.shape[mask.ndim:])
    layout = rows_layout(shape, y._comm.size, sizes=counts.tolist())
    return DArray._wrap(xp.asarray(local), layout, y._comm, xp)


def _coords(func: str, adv: Advanced, layout: Layout, x: DArray, lengths, index) -> list[np.ndarray]:
    """This rank's share of every index array (broadcast to B), wrapped; DArray indices bounds-checked together."""
    nb = len(adv.bshape)
    coords = [index_share(i, layout, nb, x) for i in index]
    dist = [k for k, i in enumerate(index) if isinstance(i, DArray)]
    if dist:  # the indices' owners know the bounds: one allreduce, then every rank raises alike
        ext = np.zeros(2 * len(dist), dtype=np.int64)
        for j, k in enumerate(dist):
            c = coords[k]
            ext[2 * j:2 * j + 2] = (c.max(initial=-1), -c.min(initial=0))
        ext = to_numpy(x._comm.allreduce(ext, "max"))
        for j, k in enumerate(dist):
            n = lengths[k]
            if ext[2 * j] >= n or -ext[2 * j + 1] < -n:
                bad = int(ext[2 * j]) if ext[2 * j] >= n else -int(ext[2 * j + 1])
                raise IndexError(out_of_bounds(func, bad, adv.sources[k], n))
            coords[k] = np.where(coords[k] < 0, coords[k] + n, coords[k])
    return coords


def setitem_advanced(x: DArray, key, value) -> None:
    """``x[key] = value`` for any key NumPy takes; ``value`` broadcasts to the selection ``x[key]``.

    Values are cut like the selection and sent to the owners of the cells
    (:func:`darray._core.cells.scatter_cells`); repeated cells keep the last
    value, as in NumPy. A mask alone compresses in place on row-cut blocks.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> x = da.zeros((3, 4), split=1)
    >>> x[[0, 2], 1:] = np.array([1.0, 2.0, 3.0])
    >>> x[x > 2] += 10
    >>> np.asarray(x.gather()).tolist()
    [[0.0, 1.0, 2.0, 13.0], [0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 2.0, 13.0]]
    """
    func = "__setitem__"
    adv = split_key(func, key, x.shape)
    if not isinstance(adv, Advanced):
        return setitem(x, adv, value)
    scalar = isinstance(value, (bool, int, float, complex, numbers.Number))
    if not scalar:
        value = _value(func, x, value)
    if adv.leading_mask and all(k == slice(None) for k in adv.basic) and x._layout.split == (0,):
        return _set_mask(x, _mask_of(key), value, scalar)  # rows cut over the ranks: each writes its own
    adv = resolve(func, adv, x)
    entries = normalize_key(func, adv.basic, x.shape)
    y_shape = sliced_layout(x._layout, entries)[0].shape
    nb = len(adv.bshape)
    rest_y = [a for a in range(len(y_shape)) if a not in adv.axes]
    p = adv.axes[0] if adv.adjacent else 0
    result = tuple(y_shape[a] for a in rest_y[:p]) + adv.bshape + tuple(y_shape[a] for a in rest_y[p:])
    if not scalar:
        extra = value.ndim - len(result)
        if extra > 0 and all(n == 1 for n in value.shape[:extra]):  # NumPy drops leading length-1 axes
            value = _index(value, (0,) * extra)
        _check_broadcast(func, value.shape, result)
    # the selection in x: integers and arrays pick cells, slices keep (increasing) ranges, new axes vanish
    y_entries = [e for e in entries if e[0] != "int"]
    picked = sorted({a for a in adv.sources if a is not None} | {a for a, _ in adv.ints})
    selection = []
    for a, e in enumerate(e for e in entries if e[0] != "new"):
        selection.append(("int", 0) if a in picked else e)
    if not picked:  # only 0-d booleans: B (of length 1 or 0) names x[basic] once or not at all
        if math.prod(adv.bshape):
            if not scalar:
                value = _index(value, (None,) * (len(result) - value.ndim)) if value.ndim < len(result) else value
                value = _index(value, (slice(None),) * p + (-1,) * nb)
            setitem(x, _without(adv.basic, adv.axes), value)
        return None
    rest, flips, selections = sliced_layout(x._layout, tuple(selection))
    if not scalar:
        value = _canonical(value, result, nb, p, [y_entries[a][0] == "new" for a in rest_y], flips)
    layout = cells_layout(rest, first_cut(x._layout, picked), adv.bshape)
    rank = x._comm.rank
    coords = _coords(func, adv, layout, x, [x.shape[a] if a is not None else 1 for a in adv.sources], adv.index)
    by_axis = dict(zip(adv.sources, coords))
    n = coords[0].shape[0]
    g0 = first_cut(x._layout, picked)
    here = x._layout.coords(rank)
    sender = all(here[x._layout.axis_dim[a]] == 0 for a in picked
                 if x._layout.axis_dim[a] not in (None, g0))  # copies along other dims of B send nothing
    if not sender:
        n = 0
    cells = [by_axis[a][:n] if a in by_axis else np.full(n, i, dtype=np.int64)
             for a, i in [(a, dict(adv.ints).get(a)) for a in picked]]
    rest_shape = rest.block_shape(rank)
    xp = x._xp
    if scalar:
        if not is_numpy_namespace(xp):
            value = np.asarray(value).astype(x.dtype).item()  # cast like NumPy: strict namespaces refuse bool -> float
        values = xp.full((n, *rest_shape), value, dtype=x._block.dtype, device=x.device)
    else:
        block = layout.block_shape(rank)
        values = xp.reshape(_values_in(value, layout, x, func), (math.prod(block[:nb]), *rest_shape))[:n, ...]
    local = local_key(x._layout, rank, selections)
    others = [a for a in range(x.ndim) if a not in picked]
    scatter_cells(x, tuple(picked), cells, values, dict(zip(others, (local[a] for a in others))))
    return None


def _without(basic: tuple, axes) -> tuple:
    """``basic`` without the items that make the result axes ``axes`` (ints make none)."""
    out, y = [], 0
    for k in basic:
        if isinstance(k, int):
            out.append(k)
            continue
        if y not in axes:
            out.append(k)
        y += 1
    return tuple(out)


def _value(func: str, x: DArray, value):
    if isinstance(value, DArray):
        if value._comm is not x._comm:
            raise ValueError(message(func, "value lives on another communicator", None))
        return value
    value = np.asarray(value)
    if value.dtype.kind not in "biufc" and not is_extra(value.dtype):
        raise TypeError(message(func, "unsupported value", value.dtype,
                                "numbers, booleans, dates, durations or records"))
    return value


def _check_broadcast(func: str, vshape, shape) -> None:
    try:
        ok = np.broadcast_shapes(tuple(vshape), shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(message(func, f"shape mismatch: value array of shape {tuple(vshape)} could not be broadcast "
                                       f"to indexing result of shape {shape}", tuple(vshape),
                                 f"a shape broadcastable to {shape}"))


def _canonical(value, result: tuple, nb: int, p: int, new: list[bool], flips):
    """``value`` (broadcastable to NumPy's ``result``) in the engine's order: B, then x's sliced axes increasing."""
    if value.ndim < len(result):
        value = _index(value, (None,) * (len(result) - value.ndim))
    if p:
        order = (*range(p, p + nb), *range(p), *range(p + nb, len(result)))
        value = permute_dims(value, order) if isinstance(value, DArray) else np.transpose(value, order)
    key, r = [slice(None)] * nb, 0
    for a, is_new in enumerate(new):
        if is_new:
            key.append(0)
            continue
        key.append(slice(None, None, -1) if r in flips and value.shape[nb + a] != 1 else slice(None))
        r += 1
    return _index(value, tuple(key))


def _index(value, key):
    """``value[key]`` (basic key) for a DArray or a NumPy value."""
    return getitem(value, key) if isinstance(value, DArray) else value[key]


def _set_mask(x: DArray, mask, value, scalar: bool) -> None:
    """``x[mask] = value``: every rank writes its own selected rows (row-cut blocks; others are moved first)."""
    comm = x._comm
    xp = x._xp
    mask = mask if isinstance(mask, DArray) else np.asarray(mask, dtype=bool)
    rows, mask = _mask_and_rows("__setitem__", x, mask)
    local_mask = mask.local
    if scalar:
        rows.local[local_mask] = value
    else:
        count = int(to_numpy(xp.sum(xp.astype(local_mask, xp.int64))))
        counts = to_numpy(comm.allgather(np.asarray([count], dtype=np.int64)))[:, 0]
        shape = (int(counts.sum()), *x.shape[mask.ndim:])
        layout = rows_layout(shape, comm.size, sizes=counts.tolist())
        rows.local[local_mask] = _values_in(value, layout, x, "__setitem__")
    if rows is not x:
        x.local[...] = redistribute_to(rows, x._layout.without_halo()).local
    x._halo_fresh = False


def _values_in(value, layout: Layout, x: DArray, func: str):
    """This rank's block of ``value`` broadcast to ``layout``'s shape and cut like it."""
    shape = layout.shape
    vshape = value.shape if hasattr(value, "shape") else np.shape(value)
    extra = len(vshape) - len(shape)
    if extra > 0 and all(n == 1 for n in vshape[:extra]):  # NumPy drops leading length-1 axes
        value = _index(value if isinstance(value, DArray) else np.asarray(value), (0,) * extra)
        vshape = tuple(vshape[extra:])
    try:
        ok = np.broadcast_shapes(tuple(vshape), shape) == shape
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(message(func, "value cannot be broadcast to the selection", tuple(vshape),
                                 f"a shape broadcastable to {shape}"))
    local = local_operand(func, value if isinstance(value, DArray) else np.asarray(value), layout, x)
    xp = x._xp
    return xp.astype(xp.broadcast_to(xp.asarray(local), layout.block_shape(x._comm.rank)), x._block.dtype)

