"""Basic indexing (integers, slices with any step, ``...``, ``None``) with global semantics.

Slicing is local: every rank keeps the selected cells of its own block, so the
result is cut like the input with (possibly uneven, possibly empty) blocks and
nothing moves. A negative step reverses block order, which swaps whole blocks
between mirrored ranks (:func:`flip_axis`). An integer on a cut axis is
broadcast from its owner along that grid dim.

Keys with index arrays or masks (alone or mixed with these) go to
:mod:`darray._core.advanced`, which applies their basic part here first.
"""

from __future__ import annotations

import numbers
from functools import lru_cache
from math import ceil, prod
from typing import NamedTuple

import numpy as np

from .._backend import is_numpy_namespace
from .._errors import message
from .._layout import Layout
from .._layout.layout import replicated_layout
from .array import DArray
from .dtypes import is_extra
from .element_reads import count_element_read
from .fields import field, is_field_key, set_field
from .keys import out_of_bounds
from .views import link, plain, write_through

__all__ = ["IndexPlan", "normalize_key", "getitem", "setitem", "flip_axis", "is_basic_key", "sliced_layout",
           "local_key"]


def is_basic_key(key) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, slice)
               or (isinstance(k, (numbers.Integral, np.integer)) and not isinstance(k, (bool, np.bool_)))
               or (isinstance(k, DArray) and k.ndim == 0 and k.dtype.kind in "iu")
               for k in items)


def normalize_key(func: str, key, shape: tuple[int, ...]) -> tuple:
    """Per source axis ``("int", i)`` or ``("slice", start, stop, step, length)``, and ``("new",)`` entries."""
    items = key if isinstance(key, tuple) else (key,)
    items = tuple(int(k) if isinstance(k, DArray) else k for k in items)
    if sum(k is Ellipsis for k in items) > 1:
        raise IndexError(message(func, "an index can only have a single ellipsis ('...')", key))
    used = sum(k is not None and k is not Ellipsis for k in items)
    if used > len(shape):
        raise IndexError(message(func, f"too many indices for array: array is {len(shape)}-dimensional, but {used} "
                                       "were indexed", key))
    if Ellipsis in items:
        i = items.index(Ellipsis)
        items = items[:i] + (slice(None),) * (len(shape) - used) + items[i + 1:]
    else:
        items = items + (slice(None),) * (len(shape) - used)
    out, axis = [], 0
    for k in items:
        if k is None:
            out.append(("new",))
            continue
        n = shape[axis]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            out.append(("slice", start, stop, step, len(range(start, stop, step))))
        else:
            i = int(k)
            if not -n <= i < n:
                raise IndexError(out_of_bounds(func, i, axis, n))
            out.append(("int", i % n))
        axis += 1
    return tuple(out)


def _count(lo: int, hi: int, start: int, step: int, m: int) -> tuple[int, int]:
    """Selected positions k (``start + k*step``, step > 0) that fall into ``[lo, hi)``: ``(k_lo, k_hi)``."""
    k_lo = max(0, ceil((lo - start) / step))
    k_hi = min(m, max(0, ceil((hi - start) / step)))
    return k_lo, max(k_lo, k_hi)


@lru_cache(maxsize=512)
def sliced_layout(layout: Layout, key: tuple) -> tuple[Layout, tuple, tuple]:
    """Layout of ``x[key]`` before any flip, and which result axes need a flip (negative steps).

    Also returns, per source axis, the increasing ``(start, step, length)`` selection.
    """
    shape, sizes, split_of = [], [], {}
    flips, selections = [], []
    axis = 0
    for entry in key:
        if entry[0] == "new":
            shape.append(1)
            sizes.append((1,))
            continue
        if entry[0] == "int":
            selections.append(("int", entry[1]))
            axis += 1
            continue
        _, start, stop, step, m = entry
        if step < 0 and m:
            start, step = start + (m - 1) * step, -step
            flips.append(len(shape))
        elif step < 0:
            start, step = 0, 1
        selections.append(("slice", start, step, m))
        g = layout.axis_dim[axis]
        if g is None:
            sizes.append((m,))
        else:
            offs = layout.offsets[axis]
            sizes.append(tuple(np.diff(_count(offs[i], offs[i + 1], start, step, m)).item()
                               for i in range(len(offs) - 1)))
            split_of[g] = len(shape)
        shape.append(m)
        axis += 1
    split = tuple(split_of.get(g) for g in range(len(layout.dims)))
    out = Layout(tuple(shape), layout.dims, split, tuple(sizes))
    return out, tuple(flips), tuple(selections)


def local_key(layout: Layout, rank: int, selections) -> tuple:
    """Slices into this rank's owned cells selecting its part of the result."""
    starts = layout.block_start(rank)
    shape = layout.block_shape(rank)
    out = []
    for axis, sel in enumerate(selections):
        lo, n = starts[axis], shape[axis]
        if sel[0] == "int":
            i = sel[1] - lo
            out.append(slice(i, i + 1) if 0 <= i < n else slice(0, 0))
            continue
        _, start, step, m = sel
        k_lo, k_hi = _count(lo, lo + n, start, step, m)
        first = start + k_lo * step - lo
        out.append(slice(first, first + (k_hi - k_lo - 1) * step + 1, step) if k_hi > k_lo else slice(0, 0))
    return tuple(out)


class IndexPlan(NamedTuple):
    """What a basic key selects on one rank (:func:`_plan`), remembered on the layout (``Derived.index_plan``)."""

    layout: Layout  #: the result's layout, before any flip
    flips: tuple  #: result axes to flip (negative steps)
    selections: tuple  #: per source axis, ``("int", i)`` or the increasing ``("slice", start, step, length)``
    block_key: tuple  #: the key into this rank's owned cells
    cut_ints: list  #: cut source axes indexed by an int (their owner broadcasts)
    shape: tuple  #: this rank's result block shape
    reshape: bool  #: whether the block's view needs a reshape to ``shape`` (ints or new axes in the key)

    @property
    def is_view(self) -> bool:
        """Whether the result is a view of the block: no flip and no message."""
        return not self.flips and not self.cut_ints


def _plan(func: str, x: DArray, key) -> IndexPlan:
    """What a basic ``key`` selects on this rank, remembered per layout for keys of plain ints and slices.

    Stencil loops index the same arrays with the same keys every sweep: the
    second time costs a dictionary lookup.
    """
    rank = x._comm.rank
    derived = x._layout._derived
    memo = _memo_key(key, x._layout.shape)
    if memo is not None:
        found = derived.index_plan(memo, rank)
        if found is not None:
            return found
    layout, flips, selections = sliced_layout(x._layout, normalize_key(func, key, x.shape))
    cut_ints = [a for a, sel in enumerate(selections) if sel[0] == "int" and x._layout.axis_dim[a] is not None]
    block_key = local_key(x._layout, rank, selections)
    shape = layout.block_shape(rank)  # integer-indexed axes dropped, new axes inserted
    view = tuple(len(range(*k.indices(n))) for k, n in zip(block_key, x._layout.block_shape(rank)))
    plan = IndexPlan(layout, flips, selections, block_key, cut_ints, shape, view != shape)
    if memo is not None:
        derived.remember_index_plan(memo, rank, plan)
    return plan


def _memo_key(key, shape: tuple):
    """A hashable form of a key of Python ints, slices of ints, None and Ellipsis; None for any other key.

    A key of two slices (a 2-d stencil's) on an array of ``shape`` takes the
    form of its slices' ``indices`` on the first two axes (what they select
    there: keys that select alike share a form), tagged with the type
    ``slice``, which the general forms never hold. ``slice.indices`` checks the
    bounds as NumPy does (ints, ``__index__``, not 0 as step).
    """
    if type(key) is tuple and len(key) == 2 and len(shape) > 1:  # (no loop, no attribute lookups)
        first, second = key
        if type(first) is slice and type(second) is slice:
            try:
                return (slice, first.indices(shape[0]), second.indices(shape[1]))
            except (TypeError, ValueError):  # (float bounds, a zero step: the general path raises darray's error)
                return None
    out = []
    for k in key if type(key) is tuple else (key,):
        if type(k) is slice:
            start, stop, step = k.start, k.stop, k.step
            if not ((start is None or type(start) is int) and (stop is None or type(stop) is int)
                    and (step is None or type(step) is int)):
                return None
            out.append((start, stop, step))
        elif type(k) is int or k is None or k is Ellipsis:
            out.append(k)
        else:
            return None
    return tuple(out)


def _remembered(x: DArray, key):
    """The remembered plan of a basic ``key`` that needs no message and no flip (views), or None."""
    memo = _memo_key(key, x._layout.shape)
    if memo is None:
        return None
    plan = x._layout._derived.index_plan(memo, x._comm.rank)
    if plan is None or plan.flips or plan.cut_ints:
        return None
    return plan


# ------------------------------------------------------------ replicated NumPy blocks: NumPy's own indexing
# Every rank holds the whole array, so a basic key means on the block what it means on the array: one
# NumPy call. Keys NumPy refuses fall through to the general path, which raises darray's error.
_BASIC_ITEMS = frozenset({slice, int, type(None), type(Ellipsis)})
_GENERAL = object()  # (what _whole_key says for keys that take the general path)
_wrap = DArray._wrap
_new_object = object.__new__
_ndarray = np.ndarray


def _whole_key(x: DArray, key):
    """``key`` as NumPy takes it on a whole (replicated, NumPy) block of ``x``, or ``_GENERAL``.

    Basic keys (ints, slices, None, Ellipsis) as they are; a DArray key (a mask or indices) with a
    whole NumPy block on ``x``'s communicator: that block. On a whole block such keys mean on the block
    what they mean on the array. Anything else takes the general path.
    """
    kind = type(key)
    if kind is tuple:
        for k in key:
            if type(k) not in _BASIC_ITEMS:
                return _GENERAL
        return key
    if kind in _BASIC_ITEMS:
        return key
    if kind is DArray and key._layout.whole and key._comm is x._comm and type(key._block) is np.ndarray:
        return key._block
    return _GENERAL


def _whole_layout(layout: Layout, shape: tuple) -> Layout:
    """The interned replicated layout of ``shape`` on ``layout``'s grid, remembered on ``layout`` by shape."""
    return layout._derived.remember_whole_layout(shape, replicated_layout(layout.dims, shape))


def getitem(x: DArray, key) -> DArray:
    """``x[key]``: basic keys here; integer arrays and boolean masks in :mod:`darray._core.advanced`."""
    if type(key) is str or type(key) is list and is_field_key(key):  # a record's fields (darray._core.fields)
        return field(x, key)
    if x._link is not None:  # a view of a computed view: computed, and linked to it (darray._core.views)
        return _view_of_linked(x, key)
    layout = x._layout
    block = x._block
    if layout.whole and type(block) is _ndarray:  # NumPy's indexing, on every rank alike
        if type(key) is tuple:  # (the stencil loop's keys, 2-d basic: checked here, without a loop or a call)
            numpy_key = key if len(key) == 2 and type(key[0]) in _BASIC_ITEMS and type(key[1]) in _BASIC_ITEMS \
                else _whole_key(x, key)
        else:
            numpy_key = key if type(key) is slice else _whole_key(x, key)
        if numpy_key is not _GENERAL:
            try:
                part = block[numpy_key]
            except (IndexError, TypeError, ValueError):
                part = None  # the general path raises darray's error
            if type(part) is not _ndarray and isinstance(part, np.generic):  # (every axis taken by an int)
                part = np.asarray(part)  # a 0-d array holding a copy of the element, as the general path makes it
            if type(part) is _ndarray:
                shape = part.shape  # the result's layout: remembered on x's layout by shape (read by _lean.c too)
                found = layout._derived.whole_by_shape.get(shape)  # (Derived.whole_layout, inlined)
                out = _new_object(DArray)  # DArray._wrap, inlined (a call is 5-10% of a slice's instructions)
                out._block = part
                out._layout = found or _whole_layout(layout, shape)
                out._comm = x._comm
                out._xp = x._xp
                out._local = out._halo_exchange = out._link = None
                out._halo_fresh = False
                return out
    memo = _memo_key(key, layout.shape)  # the stencil-loop case: a view of the block, decided once per layout and key
    plan = None if memo is None else layout._derived.index_plans.get((memo, x._comm.rank))  # (index_plan, inlined)
    if plan is not None and not plan.flips and not plan.cut_ints:  # (plan.is_view, inlined)
        part = (x.local if layout.has_halo else block)[plan.block_key or ...]  # (() on a 0-d block: [...] keeps 0-d)
        if plan.reshape:  # (integers or new axes in the key)
            part = x._xp.reshape(part, plan.shape)
        out = _new_object(DArray)  # DArray._wrap, inlined
        out._block = part
        out._layout = plan.layout
        out._comm = x._comm
        out._xp = x._xp
        out._local = out._halo_exchange = out._link = None
        out._halo_fresh = False
        return out
    if not is_basic_key(key):
        from .advanced import getitem_advanced  # advanced keys build on this module: imported when met

        return getitem_advanced(x, key)
    layout, flips, selections, block_key, cut_ints, shape, _ = _plan("__getitem__", x, key)
    xp = x._xp
    part = x.local[block_key or ...]  # () on a 0-d block: [...] keeps a 0-d view (not a NumPy scalar)
    if cut_ints and not flips:
        held = _owner_layout(x._layout, layout, selections, tuple(cut_ints))
        if held is not None:  # a true view: the owners keep their part of the row, the others hold nothing
            return DArray._wrap(xp.reshape(part, held.block_shape(x._comm.rank)), held, x._comm, xp)
    if cut_ints:  # integers on cut axes: the owner broadcasts its row along those grid dims
        if not shape:  # one element: a loop of these is a message round per element
            count_element_read(x.shape, x._comm.rank)
        part = _broadcast_owner(x, part, selections, cut_ints)
    part = xp.reshape(part, shape) if tuple(part.shape) != shape else part
    out = DArray._wrap(part, layout, x._comm, xp)
    for axis in flips:
        out = flip_axis(out, axis)
    if cut_ints or flips:  # computed, where NumPy gives a view: writes through it reach x
        link(out, x, lambda base: getitem(base, key), lambda base, view: setitem(base, key, view))
    return out


def _view_of_linked(x: DArray, key) -> DArray:
    """``x[key]`` for a linked ``x``: a basic key's result is linked to ``x`` (an advanced key's is a copy)."""
    out = getitem(plain(x), key)
    if is_basic_key(key):  # (also over a link getitem made to the alias: writes must reach x's base)
        collective = x._link.collective or out._link is not None  # (see darray._core.views.link)
        link(out, x, lambda base: getitem(plain(base), key), lambda base, view: setitem(base, key, view),
             collective=collective)
    return out


@lru_cache(maxsize=512)
def _owner_layout(source: Layout, layout: Layout, selections: tuple, cut_ints: tuple) -> Layout | None:
    """The layout of ``x[key]`` held by the owners of its integers on cut axes, or None where there is none.

    Each grid dim whose axis an integer took cuts instead an uncut axis of the
    result, which the owning coordinate holds whole and every other coordinate
    holds empty: each block is then a view of the source's block, and writes
    through it (and to the source after) show in both, as in NumPy. None for a
    0-d result (NumPy gives a copied scalar) or when no uncut axis is left.
    """
    free = [b for b in range(layout.ndim) if layout.axis_dim[b] is None]
    if len(free) < len(cut_ints):
        return None
    split, sizes = list(layout.split), list(layout.sizes)
    for a, b in zip(cut_ints, free):
        g = source.axis_dim[a]
        i = selections[a][1]
        offs = source.offsets[a]
        owner = next(c for c in range(len(offs) - 1) if offs[c] <= i < offs[c + 1])
        split[g] = b
        sizes[b] = tuple(layout.shape[b] if c == owner else 0 for c in range(source.dims[g]))
    return Layout(layout.shape, layout.dims, tuple(split), tuple(sizes))


def _broadcast_owner(x: DArray, part, selections, cut_ints):
    layout = x._layout
    dims = layout.dims
    keep = [False] * len(dims)
    owner = {}
    for a in cut_ints:
        g = layout.axis_dim[a]
        keep[g] = True
        i = selections[a][1]
        offs = layout.offsets[a]
        owner[g] = next(b for b in range(len(offs) - 1) if offs[b] <= i < offs[b + 1])
    sub = x._comm.sub(dims, keep)
    root = 0
    for g, d in enumerate(dims):
        if keep[g]:
            root = root * d + owner[g]
    coords = layout.coords(x._comm.rank)
    shape = list(part.shape)
    for a in cut_ints:  # non-owners hold an empty slice there; the row has length 1
        shape[a] = 1
    if any(coords[g] != owner[g] for g in owner):
        part = x._xp.empty(tuple(shape), dtype=x._block.dtype, device=x.device)
    if x.dtype.itemsize * sub.size * prod(tuple(part.shape)) <= _SIGNED_BROADCAST:
        # an element or a short row: gathered, with the key signed (ranks that index other cells raise)
        return sub.allgather(part, sign=("getitem", x.shape, tuple(selections)))[root, ...]
    return sub.bcast(part, root)


#: Largest gathered bytes of an owner's broadcast sent as a signed allgather (ranks that index different
#: cells raise on every rank); a longer row is broadcast (``DARRAY_DEBUG=1`` checks its key).
_SIGNED_BROADCAST = 4096


@lru_cache(maxsize=256)
def _flipped(layout: Layout, axis: int) -> Layout:
    sizes = list(layout.sizes)
    sizes[axis] = tuple(reversed(sizes[axis]))
    return layout.without_halo().replace(sizes=tuple(sizes))


def flip_axis(x: DArray, axis: int) -> DArray:
    """``x`` reversed along ``axis``: block i swaps with its mirror block and is reversed locally.

    The result's block sizes along ``axis`` are the input's in reverse order
    (one message per rank, no rebalancing).
    """
    layout = x._layout
    xp = x._xp
    local = xp.flip(x.local, axis=axis)
    g = layout.axis_dim[axis]
    new = _flipped(layout, axis)
    if g is None:
        return DArray._wrap(local, new, x._comm, xp)
    coords = list(layout.coords(x._comm.rank))
    coords[g] = layout.dims[g] - 1 - coords[g]
    peer = layout.rank(coords)
    rank = x._comm.rank
    out = xp.empty(new.block_shape(rank), dtype=x._block.dtype, device=x.device)
    local = xp.asarray(local, copy=True)
    full_send = tuple(slice(0, n) for n in local.shape)
    full_recv = tuple(slice(0, n) for n in out.shape)
    x._comm.exchange(local, [(peer, full_send)], out, [(peer, full_recv)]).wait()
    return DArray._wrap(out, new, x._comm, xp)


#: Python scalars that NumPy assigns into a block as they are (casting like ``x[mask] = value`` does).
_FILL_SCALARS = frozenset({bool, int, float, complex})


def _fill_aligned_mask(x: DArray, mask: DArray, value) -> bool:
    """``x[mask] = scalar`` with ``mask``'s blocks those of ``x``: one local NumPy assignment, no message.

    The stencil-loop case (``Z[1:-1, 1:-1][birth | survive] = 1``). False, with
    nothing done, for any other mask, which takes the general path.
    """
    if not (type(x._block) is np.ndarray and type(mask._block) is np.ndarray and mask._comm is x._comm
            and mask._block.dtype == np.bool_ and mask.shape == x.shape
            and (mask._layout is x._layout or mask._layout.blocks_key == x._layout.blocks_key)):
        return False
    x.local[mask.local] = value
    x._halo_fresh = False
    return True


def setitem(x: DArray, key, value) -> None:
    """``x[key] = value`` for basic keys; ``value`` is broadcast to the selected region.

    A DArray value is redistributed to the selection's blocks (only cells
    that change owner move); a NumPy value or scalar is sliced locally.
    """
    if type(key) is str or type(key) is list and is_field_key(key):
        return set_field(x, key, value)
    if x._link is not None:  # a computed view: the write reaches its base (darray._core.views)
        return write_through(x, lambda target: setitem(target, key, value))
    block = x._block
    if x._layout.whole and type(block) is _ndarray:  # NumPy's assignment, on every rank alike
        kind = type(value)
        if kind is DArray:
            source = value._block if value._layout.whole and value._comm is x._comm and \
                type(value._block) is _ndarray else None
        else:
            source = value if kind in _FILL_SCALARS else None
        if source is None:
            numpy_key = _GENERAL
        elif type(key) is tuple:  # (checked here, as in getitem)
            numpy_key = key if len(key) == 2 and type(key[0]) in _BASIC_ITEMS and type(key[1]) in _BASIC_ITEMS \
                else _whole_key(x, key)
        else:
            numpy_key = key if type(key) is slice else _whole_key(x, key)
        if numpy_key is not _GENERAL:
            try:
                block[numpy_key] = source
            except (IndexError, TypeError, ValueError):
                pass  # (NumPy checks the key and the shapes before writing) the general path raises darray's error
            else:
                return None  # (a whole layout has no halo to mark stale)
    if type(value) is DArray and type(x._block) is np.ndarray:  # the stencil-loop case: aligned blocks, one copy
        plan = _remembered(x, key)
        if plan is not None and value._comm is x._comm and type(value._block) is np.ndarray and \
                (value._layout is plan.layout or value._layout.blocks_key == plan.layout.blocks_key):
            target, source = x.local[plan.block_key or ...], value.local
            if target.shape == source.shape:  # (new axes in the key make them differ: the general path)
                target[...] = source
                x._halo_fresh = False
                return
    elif type(value) in _FILL_SCALARS and type(x._block) is np.ndarray:
        if type(key) is DArray:
            if _fill_aligned_mask(x, key, value):
                return None
        else:
            plan = _remembered(x, key)
            if plan is not None:  # ``u[0, :] = 1.0``: a view of the block, filled (NumPy casts the scalar)
                x.local[plan.block_key or ...] = value
                x._halo_fresh = False
                return None
    from .elementwise import local_operand

    if not is_basic_key(key):
        from .advanced import setitem_advanced

        return setitem_advanced(x, key, value)
    layout, flips, selections, key_of_block, cut_ints, _, _ = _plan("__setitem__", x, key)
    rank = x._comm.rank
    scalar = isinstance(value, (bool, int, float, complex))
    if not scalar:
        if isinstance(value, DArray):
            if value._comm is not x._comm:
                raise ValueError(message("__setitem__", "value lives on another communicator", None))
        else:
            value = np.asarray(value)
            if value.dtype.kind not in "biufc" and not is_extra(value.dtype):
                raise TypeError(message("__setitem__", "unsupported value", value.dtype,
                                        "numbers, booleans, dates, durations or records"))
        extra = value.ndim - layout.ndim
        if extra > 0 and all(n == 1 for n in value.shape[:extra]):  # NumPy drops leading length-1 axes
            value = value[(0,) * extra]
        try:
            ok = np.broadcast_shapes(value.shape, layout.shape) == layout.shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(message("__setitem__", "value cannot be broadcast to the selection", value.shape,
                                     f"a shape broadcastable to {layout.shape}"))
        lead = layout.ndim - value.ndim
        for axis in flips:  # the selection runs backwards there: so must the value
            if axis >= lead and value.shape[axis - lead] != 1:
                value = flip_axis(value, axis - lead) if isinstance(value, DArray) else np.flip(value, axis - lead)
        if cut_ints and not flips and isinstance(value, DArray) and value._xp is x._xp \
                and value._layout == _owner_layout(x._layout, layout, selections, tuple(cut_ints)):
            value = value.local  # (``a[i] = f(a[i])``: the row's owners hold their part already; nothing moves)
        else:
            value = local_operand("__setitem__", value, layout, x)
    target = x.local[key_of_block] if key_of_block else x.local[...]  # 0-d: block[()] would be a scalar copy
    if 0 in tuple(target.shape):
        x._halo_fresh = False
        return
    if scalar:
        if isinstance(value, (bool, int, float, complex, np.generic)) and not is_numpy_namespace(x._xp):
            value = np.asarray(value).astype(x.dtype).item()  # cast like NumPy: strict namespaces refuse bool -> float
        target[...] = value
    else:
        xp = x._xp
        full = xp.broadcast_to(xp.asarray(value, dtype=x._block.dtype), layout.block_shape(rank))
        target[...] = xp.reshape(full, tuple(target.shape))
    x._halo_fresh = False
