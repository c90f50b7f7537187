"""The reshape engine: C-order reshapes without a gather.

Nothing moves when the blocks are contiguous C-order ranges that stay whole
rows of the new shape (or only length-1 axes change); otherwise at most two
redistributions through a flat 1-d layout. :func:`darray.reshape` checks its
argument and calls :func:`reshape`; engines of ``_core`` (``take_along_axis``)
call it directly.
"""

from __future__ import annotations

import numbers
from math import prod

from .._errors import message
from .._layout import Layout, balanced_sizes
from .._layout.layout import replicated_layout
from .array import DArray
from .. import _debug
from .._comm.base import agree
from .indexing import getitem, setitem
from .redistribute import redistribute_to
from .views import link, plain, written

__all__ = ["reshape"]


def reshape(x: DArray, shape, copy: bool | None = None) -> DArray:
    """C-order reshape of ``x`` (a DArray); local when every block is a run of whole rows of the new shape.

    As in NumPy, the result is a view of ``x`` when it can be: a write through it
    reaches ``x``. Where blocks are computed (cells move, or a block was not
    contiguous) the result is linked to ``x`` (:mod:`darray._core.views`).
    """
    shape = _resolve_shape(x, shape)
    _debug.check_arguments(x._comm, "reshape", x.shape, shape)  # (a local reshape sends nothing to compare)
    if shape == x.shape:
        return x if not copy else x.astype(x.dtype, copy=True)
    if copy is False:
        raise ValueError(message("reshape", "copy=False but the reshape may need a copy", shape))
    source = plain(x) if x._link is not None else x
    out, local = _reshaped(source, shape)
    if copy:
        return out
    if local and out._link is None:  # a view where each rank's block is one; where a rank copied, it writes
        # back with local copies. (A link here: a cut length-1 axis whose row was broadcast: the general link.)
        collective = x._link is not None and x._link.collective  # (then linked on every rank, as x is)
        if x._link is None and _is_view(out._block, x._block):
            return out
        layout = out._layout
        return link(out, x, lambda base: _local_reshape_of(base, layout), _write_local, collective=collective)
    weak = not agree(x._comm, x._link is None and getattr(x._block, "base", 0) is None)  # (replicated)
    return link(out, x, lambda base: _reshaped(plain(base), shape)[0],
                lambda base, view: setitem(base, ..., _reshaped(plain(view), base.shape)[0]), weak=weak)


def _is_view(block, of) -> bool:
    """Whether ``block`` shares ``of``'s memory (an empty block counts as a view: nothing to write back)."""
    if not block.shape or 0 not in tuple(block.shape):
        base = getattr(block, "base", None)
        return base is not None and (base is of or base is getattr(of, "base", None))
    return True


def _local_reshape_of(base: DArray, layout: Layout) -> DArray:
    """``base``'s owned cells reshaped to this rank's block of ``layout`` (no communication)."""
    return DArray._wrap(base._xp.reshape(base.local, layout.block_shape(base._comm.rank)), layout, base._comm,
                        base._xp)


def _write_local(base: DArray, view: DArray) -> None:
    """Write ``view``'s block, reshaped, over ``base``'s owned cells (no communication)."""
    target = base.local
    target[...] = base._xp.reshape(view.local, tuple(target.shape))
    written(base)


def _reshaped(x: DArray, shape: tuple) -> tuple[DArray, bool]:
    """``x`` reshaped to ``shape`` (resolved, different), and whether only local reshapes made it."""
    comm = x._comm
    nprocs = comm.size
    if x.size == 0 or not shape or x.ndim == 0:
        return _via_replicated_small(x, shape), x._layout.is_replicated
    if x._layout.is_replicated:
        return _via_replicated_small(x, shape), True
    if [n for n in shape if n != 1] == [n for n in x.shape if n != 1]:
        return _insert_remove_ones(x, shape), True  # only length-1 axes change: the cut stays where it is
    done = _cut_axes_kept(x, shape)
    if done is not None:
        return done, True
    rows = _row_split(x)
    if rows is not None:
        done = _local_reshape(rows, shape)
        if done is not None:
            return done, rows is x
    # general path: flat 1-d blocks, rebalanced to whole rows of the new shape
    rows = rows if rows is not None else redistribute_to(x, _rows_layout(x.shape, nprocs, x._layout.dims))
    flat_sizes = [s * prod(x.shape[1:]) for s in rows._layout.sizes[0]]
    flat = _as_flat(rows, flat_sizes)
    inner = prod(shape[1:])
    target_rows = balanced_sizes(shape[0], len(flat_sizes))
    target = Layout((x.size,), flat._layout.dims, flat._layout.split, (tuple(r * inner for r in target_rows),))
    flat = redistribute_to(flat, target)
    return _local_reshape(flat, shape), False


def _insert_remove_ones(x: DArray, shape) -> DArray:
    """Reshape that only adds or drops length-1 axes: indexing with 0 and None, no data moves."""
    drop = tuple(0 if n == 1 else slice(None) for n in x.shape)
    core = getitem(x, drop) if any(n == 1 for n in x.shape) else x
    if core.ndim == len(shape):
        return core
    return getitem(core, tuple(None if n == 1 else slice(None) for n in shape))


def _resolve_shape(x, shape) -> tuple[int, ...]:
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    if isinstance(shape, (str, bytes)) or not all(isinstance(s, numbers.Integral) for s in shape):
        raise TypeError(message("reshape", "shape must be an int or a tuple of ints", shape))
    shape = tuple(int(s) for s in shape)
    if sum(s == -1 for s in shape) > 1 or any(s < -1 for s in shape):
        raise ValueError(message("reshape", "invalid shape", shape, "non-negative sizes and at most one -1"))
    if -1 in shape:
        known = prod(s for s in shape if s != -1)
        if known == 0 or x.size % known:
            raise ValueError(message("reshape", f"cannot reshape an array of size {x.size}", shape))
        shape = tuple(x.size // known if s == -1 else s for s in shape)
    if prod(shape) != x.size:
        raise ValueError(message("reshape", f"cannot reshape an array of size {x.size}", shape,
                                 f"a shape with {x.size} elements"))
    return shape


def _groups(old, new) -> list[tuple[list[int], list[int]]]:
    """The finest pairing of runs of ``old``'s axes with runs of ``new``'s axes of equal products (C order).

    >>> _groups((2, 12, 8), (2, 12, 2, 4))
    [([0], [0]), ([1], [1]), ([2], [2, 3])]
    """
    groups, i, j = [], 0, 0
    while i < len(old) and j < len(new):
        a, b = [i], [j]
        pa, pb = old[i], new[j]
        i, j = i + 1, j + 1
        while pa != pb:
            if pa < pb:
                pa *= old[i]
                a.append(i)
                i += 1
            else:
                pb *= new[j]
                b.append(j)
                j += 1
        groups.append((a, b))
    if groups:  # trailing length-1 axes join the last group
        groups[-1][0].extend(range(i, len(old)))
        groups[-1][1].extend(range(j, len(new)))
    return groups


def _cut_axes_kept(x: DArray, shape):
    """The reshape as a local one when every cut axis stays whole as one axis of ``shape``, or None.

    ``(N, L, E) -> (N, L, H, D)`` with ``L`` cut splits ``E`` on every rank
    and keeps the cut where it is: nothing moves.
    """
    layout = x._layout
    cut = {a for a in range(x.ndim) if layout.axis_dim[a] is not None}
    moved = {}
    for old_axes, new_axes in _groups(x.shape, shape):
        if cut.intersection(old_axes):
            if len(old_axes) != 1 or len(new_axes) != 1:
                return None
            moved[old_axes[0]] = new_axes[0]
    if set(moved) != cut:
        return None
    split = tuple(None if s is None else moved[s] for s in layout.split)
    sizes = [(n,) for n in shape]
    for a, b in moved.items():
        sizes[b] = layout.sizes[a]
    new = Layout(shape, layout.dims, split, tuple(sizes))
    return DArray._wrap(x._xp.reshape(x.local, new.block_shape(x._comm.rank)), new, x._comm, x._xp)


def _rows_layout(shape, nprocs, dims) -> Layout:
    """Balanced blocks of whole leading-axis rows over all ranks (1-d grid)."""
    sizes = (balanced_sizes(shape[0], nprocs),) + tuple((n,) for n in shape[1:])
    return Layout(tuple(shape), (nprocs,), (0,), sizes)


def _row_split(x: DArray):
    """``x`` if it is cut along axis 0 only (or replicated on one rank), else None."""
    layout = x._layout
    cut = [a for a in range(x.ndim) if layout.axis_dim[a] is not None]
    if cut == [0] and len(layout.dims) == 1:
        return x
    if not cut and x._comm.size == 1:
        return x
    return None


def _as_flat(x: DArray, flat_sizes) -> DArray:
    layout = x._layout
    flat = Layout((x.size,), layout.dims, (0,) if x._comm.size > 1 else (None,),
                  (tuple(flat_sizes),) if x._comm.size > 1 else ((x.size,),))
    return DArray._wrap(x._xp.reshape(x.local, (-1,)), flat, x._comm, x._xp)


def _local_reshape(x: DArray, shape):
    """Reshape blocks that are runs of whole rows of ``shape`` (x cut along axis 0 only), or None."""
    layout = x._layout
    inner_old = prod(x.shape[1:])
    inner_new = prod(shape[1:])
    if inner_new == 0:
        return None
    counts = []
    for s in layout.sizes[0]:
        n = s * inner_old
        if n % inner_new:
            return None
        counts.append(n // inner_new)
    if layout.axis_dim[0] is None:
        split, sizes0 = (None,) * len(layout.dims), (shape[0],)
    else:
        split, sizes0 = (0,), tuple(counts)
    new = Layout(shape, layout.dims, split, (sizes0,) + tuple((n,) for n in shape[1:]))
    return DArray._wrap(x._xp.reshape(x.local, new.block_shape(x._comm.rank)), new, x._comm, x._xp)


def _via_replicated_small(x: DArray, shape) -> DArray:
    """Replicated arrays, empty arrays and 0-d shapes: replicate (if needed), then reshape locally."""
    full = redistribute_to(x, x._layout.replicated())
    layout = replicated_layout(x._layout.dims, tuple(shape))
    return DArray._wrap(x._xp.reshape(full.local, shape), layout, x._comm, x._xp)
