"""Stencils: fused groups that read shifted slices of arguments, with the halo exchange behind the interior.

A group whose leaves are slices ``u[1:-1, 2:]`` of arguments (``shift``
nodes) computes each rank's block of the result -- the layout eager darray
gives ``u[1:-1, 2:] + u[:-2, 1:-1]`` -- from the source blocks padded by the
ghost cells those windows reach (with the sources' own halo when it is wide
enough, else a padded copy of the same blocks). Per call:

1. the halo exchange of every source starts (non-blocking,
   :func:`darray._core.halo.exchange_halos`);
2. the kernel computes the interior: the cells whose windows lie inside the
   rank's own cells;
3. the exchange is waited for;
4. the kernel computes the boundary strips (at most two per axis).

The value of a slice assignment ``out[1:-1, 1:-1] = ...`` is written straight
into ``out``'s block when nothing else in the function reads ``out``, the
blocks line up and the dtypes agree (no temporary, no copy).

One kernel (:mod:`darray.fuse.codegen`, the ``box`` driver) serves every box
and rank: the window offsets are arguments. Groups with a reduction, broadcast
operands, sources of different layouts, or a result layout on another grid
are left to the general path, which evaluates the slices eagerly (darray's
shifted views and their alignment).
"""

from __future__ import annotations

import numpy as np

from array_api_compat import is_cupy_array

from .._backend import NUMPY
from .._core.array import DArray
from .._core.elementwise import cheapest_layout, align_target
from .._core.halo import exchange_halos
from .._core.redistribute import redistribute_to
from . import cuda
from .codegen import Group
from .overlap import window_bounds

__all__ = ["strips", "run_stencil", "Stencil", "WRITTEN"]

#: What the stencil path returns for a value it wrote straight into its assignment's target.
WRITTEN = object()


def strips(shape, interior) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """The boxes ``(lo, hi)`` that cover ``shape`` outside the box ``interior``: slabs, axis by axis.

    >>> strips((4, 5), ((1, 1), (3, 4)))
    [((0, 0), (1, 5)), ((3, 0), (4, 5)), ((1, 0), (3, 1)), ((1, 4), (3, 5))]
    """
    lo, hi = interior
    boxes = []
    below, above = [0] * len(shape), list(shape)
    for a, n in enumerate(shape):
        for start, stop in ((0, lo[a]), (hi[a], n)):
            if start < stop:
                boxes.append((tuple(below[:a]) + (start,) + tuple(below[a + 1:]),
                              tuple(above[:a]) + (stop,) + tuple(above[a + 1:])))
        below[a], above[a] = lo[a], hi[a]
    return boxes


def _library(x) -> str | None:
    """The kernels a DArray's blocks take: ``"numpy"`` (numba), ``"cupy"`` (CUDA), else None."""
    if type(x) is not DArray:
        return None
    return "numpy" if x._xp is NUMPY else "cupy" if is_cupy_array(x._block) else None


def _windows(shifts, values):
    """Per shift leaf its source DArray (all of one layout, NumPy or all CuPy blocks), or None."""
    sources = [values[id(s.args[0])] for s in shifts]
    layout = sources[0]._layout
    library = _library(sources[0])
    if library is None or any(_library(x) != library or x._layout.without_halo() != layout.without_halo()
                              for x in sources):
        return None
    return sources


def _halo_needed(shifts, source_layout, out_layout) -> tuple[int, ...]:
    """Per axis, the ghost width every rank's windows reach beyond its own cells (replicated metadata)."""
    need = [0] * len(out_layout.shape)
    for rank in range(np.prod(out_layout.dims, dtype=int)):
        own = source_layout.block_slices(rank)
        out = out_layout.block_slices(rank)
        if any(o.start == o.stop for o in out):
            continue
        for s in shifts:
            for a, ((start, _), o, b) in enumerate(zip(window_bounds(s), out, own)):
                need[a] = max(need[a], b.start - (o.start + start), (o.stop + start) - b.stop)
    return tuple(need)


def _eager_layouts(nodes: list, values: dict, comm) -> dict:
    """The layout eager darray gives each of ``nodes`` (by id), evaluated pairwise from the leaves' ``values``
    (the shifted views' layouts): the engine's rules (:mod:`darray._core.elementwise`) on layout-only stubs."""
    stubs = dict(values)
    for node in nodes:
        args = [stubs[id(a)] for a in node.args]
        first = args[0]
        darrays = [a for a in args if type(a) is DArray]
        if not darrays:  # arithmetic of scalar arguments: a Python scalar eagerly
            stubs[id(node)] = 0
            continue
        if len(darrays) == 1 and not darrays[0]._layout.has_halo and node.op != "where":
            layout = darrays[0]._layout  # one array (unary, or with scalars): its layout
        elif len(args) == 2 and type(first) is DArray and type(args[1]) is DArray \
                and first._layout == args[1]._layout and not first._layout.has_halo:
            layout = first._layout
        else:
            layout = align_target(node.op, args)[1]
            if node.op != "where":
                layout = cheapest_layout(darrays, layout)
        stubs[id(node)] = DArray._wrap(None, layout, comm, NUMPY)
    return {key: stub._layout for key, stub in stubs.items() if type(stub) is DArray}


def _aligned(out, target, bounds) -> bool:
    """Whether every rank's block of ``out`` (a value's layout) is, shifted by the slice ``bounds``, exactly the
    cells of that slice that the rank owns in ``target``: then the kernel may write into the target's block."""
    if out.dims != target.dims or out.split != target.split:
        return False
    for rank in range(int(np.prod(out.dims))):
        for o, t, (lo, hi) in zip(out.block_slices(rank), target.block_slices(rank), bounds):
            start, stop = max(t.start, lo), min(t.stop, hi)
            if (o.start + lo, o.stop + lo) != (start, stop) and not (o.start == o.stop and start >= stop):
                return False
    return True


def _padded_layout(layout, need: tuple, kinds: tuple | None):
    """``layout`` itself when its halo is at least ``need`` wide (and, for a map_overlap window, its boundary
    is ``kinds`` where ghost cells are read), else the layout of a padded copy; None when darray refuses it."""
    kinds = kinds if kinds is not None else layout.boundary
    if all(h >= n and (not n or b == k) for h, n, b, k in zip(layout.halo, need, layout.boundary, kinds)):
        return layout
    try:
        return layout.with_halo("fuse", tuple(max(h, n) for h, n in zip(layout.halo, need)), kinds)
    except ValueError:  # a halo darray does not hold: the general path
        return None


def _copy_padded(buffers: dict, key, x: DArray, wide) -> DArray:
    """``x``'s cells in a DArray of the padded layout ``wide``, kept in ``buffers`` between calls (no new block,
    no page faults: the owned cells are copied in, the ghosts marked stale for the exchange)."""
    found = buffers.get(key)
    if found is None or found.dtype != x.dtype or found._comm is not x._comm:
        found = buffers[key] = redistribute_to(x, wide)
    else:
        rank = x._comm.rank
        found._block[wide.interior(rank)] = x._block[x._layout.interior(rank)]
        found._halo_fresh = False
    return found


def _c_strides(shape) -> tuple[int, ...]:
    """Element strides of a C-ordered array of ``shape`` (a raw CuPy argument indexed by its flat C index)."""
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= n
    return tuple(reversed(out))


def _cuda_box(kernels, group: Group, nodes: list, leaves: list, scalars: list, ndim: int):
    """The CUDA box kernel of a stencil group (:func:`darray.fuse.cuda.box_source`), or None when a node or a
    scalar has no CUDA C spelling (the general path runs it)."""
    kinds = [cuda.scalar_dtype(v) for v in scalars]
    if any(k is None for k in kinds) or not cuda.on_gpu(nodes, leaves):
        return None
    return kernels.elementwise(*cuda.box_source(group, [k.name for k in kinds], ndim), reduce_dims=False)


def run_stencil(run, roots: list, nodes: list, leaves: list, kernel_for, spread, into=None, reduced=None):
    """``roots`` computed by the box kernel, or None when the group does not fit the stencil path.

    ``run`` evaluates leaves (``run.value``); ``kernel_for(group, roles)`` compiles the box kernel;
    ``spread(kernel, rows, cells_per_row, *args)`` runs it over rows on the rank's threads. ``into``:
    ``(target DArray, slice bounds, read)`` of an assignment of the one root that nothing else reads (``read``:
    but for this group's windows): when the blocks line up, the dtypes agree (and, ``read``, the windows read a
    padded copy of the target), the kernel writes there (returning ``[WRITTEN]``). ``reduced``: the
    accumulator dtype of a reduction of the one root over every axis (NumPy blocks; ``kernel_for`` then
    compiles the ``boxreduce`` driver): returns the root's eager layout, the communicator and, per box, its
    rows' partials.

    The decisions (layouts, halo widths, boxes, kernel) are made once per group and kept in ``run.plan.steps``
    as a :class:`Stencil`; a call replays it (:meth:`Stencil.__call__`). They depend on replicated metadata
    only, so every rank decides alike: the sources and the assignment's target are arguments (their layouts,
    dtypes and libraries are the plan's signature, :func:`darray.fuse.cache.signature`); the other leaves'
    kinds (a DArray's layout, dtype and library, a scalar's type) are part of the key.
    """
    steps = run.plan.steps
    group = tuple(map(id, roots))
    split = run.plan.groups.get(("stencil", group))
    if split is None:  # (the plan keeps the graph alive: the ids stay its nodes')
        split = run.plan.groups[("stencil", group)] = ([leaf for leaf in leaves if leaf.op in ("shift", "halo")],
                                [leaf for leaf in leaves if leaf.op not in ("shift", "halo")])
    shifts, rest = split
    others = [run.value(leaf) for leaf in rest]
    key = (group, reduced, into is None, *map(_kind, others))
    step = steps.get(key, steps)
    if step is steps:
        run.plan.stats["plans"] += 1
        shape = roots[0].shape
        if not shape or any(s.shape != shape for s in shifts):
            step = None
        else:
            sources = [run.value(s.args[0]) for s in shifts]
            step = _prepare(run, roots, nodes, shifts, rest, sources, others, kernel_for, into, reduced)
        steps[key] = step
    else:
        run.plan.stats["replays"] += 1
    if step is None:
        return None
    return step(run, shifts, others, into, spread)


def _kind(x):
    """What a leaf value's stencil plan depends on: a DArray's layout, dtype and library; a scalar's type."""
    return (x._layout, x._block.dtype, id(x._xp)) if type(x) is DArray else type(x)


def _prepare(run, roots, nodes, shifts, rest, sources, others, kernel_for, into, reduced):
    """The :class:`Stencil` of a group for these kinds of leaf values, or None (the general path)."""
    shape = roots[0].shape
    inputs = {id(s.args[0]): x for s, x in zip(shifts, sources)}
    sources = _windows(shifts, inputs)
    if sources is None:
        return None
    values = {id(s): x[tuple(slice(a, b) for a, b in s.attrs)] if s.op == "shift" else
              DArray._wrap(None, x._layout.without_halo(), x._comm, NUMPY) for x, s in zip(sources, shifts)}
    values.update((id(leaf), v) for leaf, v in zip(rest, others))
    target = sources[0]
    found = _eager_layouts(nodes, values, target._comm)
    layout = found.get(id(roots[0]))
    base = sources[0]._layout
    if layout is None or any(found.get(id(r)) != layout for r in roots) or layout.has_halo or layout.dims != base.dims \
            or layout.split != base.split:
        return None
    full, scalars, full_at, scalar_at = [], [], [], []
    for i, (leaf, v) in enumerate(zip(rest, others)):
        if type(v) is DArray:
            if v.shape != shape or v._layout != layout or v._xp is not target._xp:
                return None
            full.append(leaf)
            full_at.append(i)
        else:
            scalars.append(leaf)
            scalar_at.append(i)
    need = _halo_needed(shifts, base, layout)
    padded = {}  # id of a source -> (its first position, the buffer key or None for itself, the padded layout)
    for i, (x, s) in enumerate(zip(sources, shifts)):
        if id(x) not in padded:
            kinds = {leaf.attrs[1] for leaf, y in zip(shifts, sources) if y is x and leaf.op == "halo"}
            if len(kinds) > 1:  # one source read with two boundary rules: the general path
                return None
            wide = _padded_layout(x._layout, need, kinds.pop() if kinds else None)
            if wide is None:
                return None
            padded[id(x)] = (i, None if x._layout == wide else (id(s.args[0]), wide), wide)
    order = list(padded)
    rank = target._comm.rank
    out_lo = [s.start for s in layout.block_slices(rank)]
    block = layout.block_shape(rank)
    offsets, window_of = [], []
    interior_lo, interior_hi = [0] * len(shape), list(block)
    for x, s in zip(sources, shifts):
        wide = padded[id(x)][2]
        window_of.append(order.index(id(x)))
        own = wide.block_slices(rank)
        offsets.append(np.array([o + a - b.start + w for o, (a, _), b, w in zip(out_lo, window_bounds(s), own,
                                                                                 wide.halo)], dtype=np.int64))
        for d, (o, (a, _), b) in enumerate(zip(out_lo, window_bounds(s), own)):
            interior_lo[d] = max(interior_lo[d], b.start - a - o)
            interior_hi[d] = min(interior_hi[d], b.stop - a - o)
    group = Group(roots, nodes, full, [], scalars, shifts)
    gpu = _library(target) == "cupy"
    if reduced is not None and gpu:  # (a reduction of stencil values on CuPy blocks: the general path)
        return None
    step = Stencil()
    step.layout, step.comm, step.xp, step.block = layout, target._comm, target._xp, block
    step.dtypes = [r.dtype for r in roots]
    step.full_at, step.scalar_at, step.offsets, step.window_of = full_at, scalar_at, offsets, window_of
    step.pads = [padded[k][:2] for k in order]
    step.reduced = reduced
    step.gpu = (group, nodes, [*shifts, *rest], len(shape)) if gpu else None
    step.kernel = None if gpu else kernel_for(group, (tuple(id(x) for x in full), tuple(id(x) for x in scalars),
                                                      tuple(id(x) for x in shifts)))
    # the value goes straight into the assignment's target when the blocks line up (and, when its windows read
    # the target, they read a padded copy of it)
    target_at = next((padded[k][0] for k in order if into is not None and sources[padded[k][0]] is into[0]), None)
    step.into = None
    if into is not None and into[0]._xp is target._xp and into[0].dtype == roots[0].dtype \
            and _aligned(layout, into[0]._layout, into[1]) \
            and (not into[2] or target_at is not None and padded[id(sources[target_at])][1] is not None):
        own = into[0]._layout.block_slices(rank)
        step.into = tuple(slice(o + lo - t.start, o + lo - t.start + n)
                          for o, (lo, _), t, n in zip(out_lo, into[1], own, block))
    lo = tuple(min(a, n) for a, n in zip(interior_lo, block))  # inside the block, possibly empty
    inner = (lo, tuple(min(max(a, b), n) for a, b, n in zip(lo, interior_hi, block)))
    step.boxes = [_box(step.kernel, lo, hi) for lo, hi in [inner, *strips(block, inner)]]
    step.first = 1 if step.boxes[0] is not None else 0  # the interior's box, run before the exchanges end
    step.boxes = [b for b in step.boxes if b is not None]
    return step


def _box(kernel, lo, hi):
    """A box's bounds and how the kernel runs it (rows ``lo[0] + a`` to ``lo[0] + b``), or None when empty."""
    if not all(a < b for a, b in zip(lo, hi)):
        return None
    rows = hi[0] - lo[0]
    cells = int(np.prod([b - a for a, b in zip(lo, hi)])) // rows
    start = lo[0]
    run = kernel if kernel is None or not start else (lambda a, b, *args: kernel(start + a, start + b, *args))
    return lo, hi, rows, cells, (np.array(lo, dtype=np.int64), np.array(hi, dtype=np.int64)), run


class Stencil:
    """A stencil group's plan for one kind of leaf values: every decision of :func:`run_stencil`, so that a call
    only gathers the blocks, copies sources into their padded buffers, starts the halo exchanges (the sources'
    bound persistent exchanges, :func:`darray._core.halo.exchange_halos`), runs the interior box, waits, runs
    the boundary strips and wraps the results."""

    __slots__ = ("layout", "comm", "xp", "block", "dtypes", "full_at", "scalar_at", "offsets", "window_of", "pads",
                 "reduced", "gpu", "kernel", "into", "boxes", "first")

    def __call__(self, run, shifts, others, into, spread):
        fv = [others[i].local for i in self.full_at]
        sv = [others[i] for i in self.scalar_at]
        plan = run.plan
        if self.gpu is not None:
            box_kernel = _cuda_box(plan.cuda, self.gpu[0], *self.gpu[1:3], sv, self.gpu[3])
            if box_kernel is None:  # (decided from the scalars' values, the same on every rank)
                return None
        padded = []
        for i, key in self.pads:
            x = run.value(shifts[i].args[0])
            padded.append(x if key is None else _copy_padded(plan.buffers, key, x, key[1]))
        started = [exchange_halos(x, wait=False) for x in padded]
        windows = [padded[j]._block for j in self.window_of]
        params = [*fv]
        for w, o in zip(windows, self.offsets):
            params += (w, o)
        params += sv
        if self.into is not None:
            outs = [into[0].local[self.into]]
        else:
            outs = [(np if self.gpu is None else cuda.cupy_module()).empty(self.block, dtype=d) for d in self.dtypes]
        parts: list = []  # (reduced) per box, one partial per row
        first = self.first
        for i, (lo, hi, rows, cells, bounds, kernel) in enumerate(self.boxes):
            if i == first:
                for handle in started:
                    handle.wait()
                started = ()
            if self.gpu is not None:
                boxed = tuple(slice(a, b) for a, b in zip(lo, hi))
                windowed = [v for p, o in zip(windows, self.offsets)
                            for v in (p, *(int(a + b) for a, b in zip(lo, o)), *_c_strides(p.shape))]
                box_kernel(*(f[boxed] for f in fv), *windowed, *sv, *(o[boxed] for o in outs))
            elif self.reduced is not None:  # the box's rows' partials (the boxreduce driver)
                parts.append(np.empty(rows, dtype=self.reduced))
                spread(kernel, rows, cells, *bounds, lo[0], parts[-1], *params)
            else:
                spread(kernel, rows, cells, *bounds, *outs, *params)
        for handle in started:
            handle.wait()
        if self.reduced is not None:
            return self.layout, self.comm, parts
        if self.into is not None:
            into[0]._halo_fresh = False  # its owned cells changed: ghosts are stale
            return [WRITTEN]
        return [DArray._wrap(o, self.layout, self.comm, self.xp) for o in outs]
