"""``map_overlap``: run a function on every block together with its neighbours' edges (Dask's semantics)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import _debug, _recorder
from .._backend import from_numpy
from .._comm.base import agree_once
from .._core import DArray, redistribute_to
from .._core.elementwise import align_target, wrap_like
from .._errors import message
from .._layout import normalize_boundary, normalize_halo

__all__ = ["map_overlap", "with_halo"]


def with_halo(x: DArray, depth, boundary) -> DArray:
    """``x`` with (at least) ghost width ``depth`` and ``boundary``, halos exchanged.

    Reuses ``x`` itself when its layout already has them (then a second call
    on unchanged data does not exchange again).
    """
    halo = normalize_halo("map_overlap", depth, x.ndim)
    bnd = normalize_boundary("map_overlap", boundary, x.ndim)
    layout = x._layout
    if layout.halo != halo or layout.boundary != bnd:
        layout = layout.with_halo("map_overlap", halo, bnd)
        x = redistribute_to(x, layout)
    return x.exchange_halos()


def map_overlap(func: Callable, *arrays, depth=1, boundary="none", trim: bool = True, out: DArray | None = None,
                **kwargs) -> DArray:
    """Apply ``func`` to every block extended by ``depth`` cells of its neighbours.

    ``func(*blocks, **kwargs)`` receives each array's block with its ghost
    cells (past the global edges: filled per ``boundary``, or absent for
    ``"none"``, as in :func:`dask.array.map_overlap`) and returns an array of
    the same shape; with ``trim=True`` the ghost part is cut off again. With
    ``trim=False`` ``func`` must return the owned part only. The result has
    the layout of the first array, without halo; or pass ``out=`` (an array
    with the same blocks, e.g. with a halo of its own) to write the owned
    cells in place, so that iterating ``map_overlap(step, u, out=v); u, v = v, u``
    allocates nothing. Arrays that already carry halo ``depth`` and
    ``boundary`` are exchanged in place (and not at all if unchanged).

    Examples
    --------
    >>> import numpy, darray as da
    >>> x = da.arange(10.0)
    >>> smooth = da.map_overlap(lambda b: (b[:-2] + b[1:-1] + b[2:]) / 3 if b.shape[0] > 2 else b[1:-1],
    ...                         x, depth=1, boundary="nearest", trim=False)
    >>> smooth.gather()[:3].tolist()
    [0.3333333333333333, 1.0, 2.0]

    Traced (:func:`darray.tracing`), ``func`` is a compute event named
    ``map_overlap:<func's name>`` (the copy into ``out``: ``map_overlap.out``),
    and the rest of the call that no event holds (checks, layouts) is an
    ``overhead`` event.
    """
    if _recorder.active is None:
        return _map_overlap(func, arrays, depth, boundary, trim, out, kwargs)
    begin, mark = _recorder.now(), len(_recorder.active)
    try:
        return _map_overlap(func, arrays, depth, boundary, trim, out, kwargs)
    finally:
        if _recorder.active is not None:
            _recorder.record_overhead("map_overlap", begin, mark)


def _map_overlap(func, arrays: tuple, depth, boundary, trim: bool, out, kwargs: dict) -> DArray:
    if not callable(func):
        raise TypeError(message("map_overlap", "func must be callable", type(func).__name__))
    if not arrays or not all(isinstance(a, DArray) for a in arrays):
        raise TypeError(message("map_overlap", "expects DArray arguments", tuple(type(a).__name__ for a in arrays)))
    first = arrays[0]
    target, layout = align_target("map_overlap", arrays)
    if layout.shape != first.shape or any(a.shape != first.shape for a in arrays):
        raise ValueError(message("map_overlap", "arrays must have one shape", tuple(a.shape for a in arrays)))
    rank = first._comm.rank
    plain = first._layout.without_halo()
    if out is not None and (not isinstance(out, DArray) or out._layout.blocks_key != plain.blocks_key):
        raise ValueError(message("map_overlap", "out must be a DArray with the same blocks as the first array",
                                 getattr(out, "layout", type(out).__name__), plain))
    _agree_once(first, depth, boundary, trim, len(arrays))
    blocks, cuts = [], None
    for a in arrays:
        if a._layout.blocks_key != plain.blocks_key:
            a = redistribute_to(a, plain.replace(halo=a._layout.halo, boundary=a._layout.boundary))
        a = with_halo(a, depth, boundary)
        cuts = _visible(a._layout, rank)
        blocks.append(a._block[cuts])
    if _recorder.active is None:
        result = func(*blocks, **kwargs)
    else:
        begin, mark = _recorder.now(), len(_recorder.active)
        result = func(*blocks, **kwargs)
        _recorder.record_compute(f"map_overlap:{getattr(func, '__name__', type(func).__name__)}", begin, mark,
                                 tuple(getattr(blocks[0], "shape", ())))
    if isinstance(result, np.ndarray) and type(result) is not type(blocks[0]):  # NumPy code in func, other blocks
        result = from_numpy(first._xp, result, device=first.device)
    given = tuple(blocks[0].shape)
    if trim and tuple(getattr(result, "shape", ())) != given:  # (trimmed, it would come out shifted)
        delta = tuple(int(r) - g for r, g in zip(result.shape, given)) if len(result.shape) == len(given) else None
        raise ValueError(message("map_overlap", "with trim=True func must return a block of the shape it was given "
                                 "(every rank checks its own)", f"a block that differs by {delta} cells per axis"
                                 if delta else f"a {len(result.shape)}-d block", "the same shape, ghost cells "
                                 "included, or trim=False and the owned part only"))
    if trim:  # the owned cells sit at [h - cut.start, h - cut.start + n) of what func saw
        halo = normalize_halo("map_overlap", depth, first.ndim)
        result = result[tuple(slice(h - c.start, h - c.start + n) for h, c, n in zip(halo, cuts, plain.block_shape(rank)))]
    # a wrong shape is a bug in func: checked locally (the abort hook ends an MPI job), and agreed across
    # ranks under DARRAY_DEBUG so that every rank raises one message (no collective in ordinary stencil loops)
    shapes = {rank: tuple(result.shape)}
    if _debug.enabled:
        comm = first._comm
        table = np.asarray(comm.allgather(np.asarray(result.shape, dtype=np.int64).reshape(1, -1)))
        shapes = {r: tuple(int(n) for n in table[r].ravel()) for r in range(comm.size)}
    failed = [r for r, shape in shapes.items() if shape != plain.block_shape(r)]
    if failed:
        r = failed[0]
        where = (f"on ranks {failed}" if _debug.enabled else
                 f"on rank {rank} (checked on this rank only; DARRAY_DEBUG=1 compares every rank's)")
        raise ValueError(message("map_overlap", f"func returned blocks of the wrong shape {where}",
                                 f"{shapes[r]} on rank {r}", f"{plain.block_shape(r)} (after trim={trim})"))
    if out is not None:
        if _recorder.active is None:
            out.local[...] = result
        else:
            with _recorder.span("compute", "map_overlap.out", shape=out.shape):  # the copy into out's block
                out.local[...] = result
        out._halo_fresh = False
        return out
    return wrap_like(result, plain, first)


def _agree_once(first: DArray, depth, boundary, trim: bool, count: int) -> None:
    """Always on, once per layout and arguments: every rank passed the same ``depth``, ``boundary`` and ``trim``
    (they decide which ghost cells move; a rank that differs would exchange other messages, or read other
    boundary values, without an error): :func:`darray._comm.base.agree_once`."""
    agree_once(first._comm, first._layout._derived.agreed, ("map_overlap", repr(depth), repr(boundary), trim, count))


def _visible(layout, rank) -> tuple[slice, ...]:
    """The part of the padded block ``func`` sees: no ghost cells past a global edge with boundary 'none'."""
    start = layout.block_start(rank)
    shape = layout.block_shape(rank)
    cuts = []
    for axis, (h, kind) in enumerate(zip(layout.halo, layout.boundary)):
        lo, hi = 0, shape[axis] + 2 * h
        if kind == "none":  # no ghost cells past a global edge (also for blocks whose neighbours are empty)
            if start[axis] == 0:
                lo = h
            if start[axis] + shape[axis] == layout.shape[axis]:
                hi = shape[axis] + h
        cuts.append(slice(lo, hi))
    return tuple(cuts)
