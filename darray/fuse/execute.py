"""Execution of a traced graph: fused groups as compiled kernels over each rank's block, the rest eagerly.

:func:`run` evaluates the outputs of a :class:`Plan`. An elementwise node
that a kernel can compute (:func:`darray.fuse.graph.in_kernel`) is the root of
a group: it and the kernel-computable nodes it depends on, up to leaves
(arguments, constants, reductions and nodes darray computes eagerly). The
group runs as ONE kernel over the rank's block when its full-shaped leaves
share one layout without halo on NumPy blocks and its other leaves are
replicated (broadcast) or scalars; otherwise each of its nodes runs eagerly.
A reduction whose operand is such a group runs fused into it: the kernel
reads each operand once and keeps only per-tile partials (full reductions)
or the reduced block (one axis). Partials are then combined exactly as
darray's eager reductions combine theirs (:func:`darray._core.reductions.combine`:
one allreduce over the grid dims that cut a reduced axis, neutral elements
for empty blocks, the mean divided by the global count).

Kernels run on :func:`rank_threads` threads (numba kernels release the GIL):
the rank's share of the node's cores, as :mod:`darray._threads` sizes BLAS
pools, split into contiguous index ranges.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from array_api_compat import is_cupy_array

from .. import _threads
from .._api import elementwise, statistical
from .._api.data_types import astype
from .._api.searching import where
from .._backend import NUMPY
from .._core.array import DArray
from .._core.elementwise import local_operand
from .._core.reductions import grid_dims_cutting, finish_reduction, highest_value, lowest_value, combine
from . import cuda
from .cache import compiled
from .codegen import TILE, Group, kernel_source
from .overlap import halo_value
from .stencil import WRITTEN, run_stencil
from .graph import KERNEL, REDUCTIONS, Node, common_dtype, in_kernel, numpy_function, topological

__all__ = ["Plan", "run", "rank_threads", "MIN_CELLS_PER_THREAD"]

#: A kernel splits its work over threads only when each gets at least this many cells.
MIN_CELLS_PER_THREAD = 1 << 16
#: Thread blocks of a full reduction on the GPU (each strides over the block; about 8 per multiprocessor).
FULL_BLOCKS = 1024


class Plan:
    """A traced graph ready to run: its input and output nodes, and per scalar argument the integer ranges that
    its value must fit (NumPy raises OverflowError otherwise: such a call runs eagerly)."""

    def __init__(self, inputs: list, outputs: list, container, writes: list):
        self.inputs = inputs
        self.outputs = outputs
        self.container = container
        self.writes = writes
        # values of assignments whose target nothing reads (and nothing else writes): the kernel may write them
        # (True: the target is also read, through stencil windows of the one assignment of the function -- then
        # only where those windows read a padded copy of it, made before the kernel runs)
        nodes = topological([*outputs, *(value for _, _, value in writes)])
        read = {id(n) for n in nodes}
        plain = {id(a) for n in nodes if n.op not in ("shift", "halo") for a in n.args} | {id(n) for n in outputs}
        plain |= {id(value) for _, _, value in writes}
        targets = [id(t) for t, _, _ in writes]
        self.direct = {id(value): (target, bounds, id(target) in read) for target, bounds, value in writes
                       if targets.count(id(target)) == 1 and in_kernel(value) and (
                           id(target) not in read or not outputs and len(writes) == 1 and id(target) not in plain)}
        # a function of whole-array assignments only (``m[:] = b1 * m + g``), elementwise, no windows: one
        # kernel computes every value, each cell's reads before its writes, so it may write the targets' blocks
        values = [value for _, _, value in writes]
        self.inplace = {id(value): target for target, bounds, value in writes
                        if not outputs and len(set(map(id, values))) == len(values) == len(set(targets))
                        and all(in_kernel(v) and v.shape == t.shape and b == tuple((0, n) for n in t.shape)
                                for t, b, v in writes)
                        and not any(n.op in ("shift", "halo") for n in nodes)}
        self.kernels: dict = {}
        self.cuda = cuda.CudaKernels()  # CuPy kernels of the calls on CuPy blocks
        self.buffers: dict = {}  # padded copies of stencil sources, reused by every call (darray.fuse.stencil)
        # per call, what a group's evaluation decides from replicated metadata only, made once and replayed:
        # a group's nodes and leaves (by its roots), a stencil group's Stencil (by roots and kinds of leaf values)
        self.groups: dict = {}
        self.steps: dict = {}
        self.stats = {"plans": 0, "replays": 0}  # Stencil plans made, and calls that replayed one
        self.fusable: dict = {}  # in_kernel(node) by id(node), asked once per node
        self.together: list | None = None  # the outputs computed together (:meth:`_Run.outputs`), once
        self.ran = False  # whether a call has run (and so made every decision once)
        self.fuses = False  # whether a call ran a group as a kernel (else every node ran eagerly)
        self.ranges: list[tuple[object, int, int]] = []
        for node in topological([*outputs, *(value for _, _, value in writes)]):
            if not in_kernel(node):
                continue
            rule = KERNEL[node.op].cast
            target = common_dtype(node) if rule == "common" else node.dtype
            for a in node.args:
                if a.op == "scalar" and target is not None and target.kind in "iu" and type(a.attrs[-1]) is int:
                    info = np.iinfo(target)
                    self.ranges.append((a.attrs[0], int(info.min), int(info.max)))

    def accepts(self, args: tuple, kwargs: dict) -> bool:
        """Whether the scalar arguments of this call fit the integer dtypes the kernels cast them to."""
        for position, lo, hi in self.ranges:
            value = args[position] if type(position) is int else kwargs[position]
            if not lo <= value <= hi:
                return False
        return True


def rank_threads() -> int:
    """Threads for this rank's kernels: darray's per-rank thread budget, else the cores over the local ranks."""
    if _threads.applied:
        return _threads.applied
    try:
        cores = len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    return max(1, cores // (_threads.local_ranks or 1))


_pool: ThreadPoolExecutor | None = None


def _spread(kernel, total: int, cells_per_unit: int, *args) -> None:
    """``kernel(lo, hi, *args)`` over ``[0, total)`` split into one contiguous range per thread."""
    threads = min(max(1, total * cells_per_unit // MIN_CELLS_PER_THREAD), total)
    if threads > 1:  # (else one thread whatever the rank's share of the cores: not asked)
        threads = min(rank_threads(), threads)
    if threads <= 1:
        if total:
            kernel(0, total, *args)
        return
    global _pool
    if _pool is None or _pool._max_workers < threads:
        _pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="darray-fuse")
    bounds = [total * t // threads for t in range(threads + 1)]
    futures = [_pool.submit(kernel, lo, hi, *args) for lo, hi in zip(bounds[:-1], bounds[1:])]
    for f in futures:
        f.result()


def _collect(roots: list) -> tuple[list, list]:
    """The kernel-computable nodes ``roots`` depend on (topological order) and the group's leaves."""
    nodes: list = []
    leaves: list = []
    seen: set = set()

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        if not in_kernel(node):
            leaves.append(node)
            return
        for a in node.args:
            visit(a)
        nodes.append(node)

    for root in roots:
        visit(root)
    return nodes, leaves


class _Run:
    """One call's evaluation: node values memoised by identity."""

    def __init__(self, plan: Plan, args: tuple, kwargs: dict):
        self.plan = plan
        self.values: dict[int, object] = {}
        for node in plan.inputs:
            if node is not None:
                position = node.attrs[0]
                self.values[id(node)] = args[position] if type(position) is int else kwargs[position]

    def value(self, node: Node):
        found = self.values.get(id(node), self)
        if found is self:
            found = self.values[id(node)] = self._evaluate(node)
        return found

    def _in_kernel(self, node: Node) -> bool:
        found = self.plan.fusable.get(id(node))
        if found is None:  # (the plan keeps its graph alive: an id stays its node's)
            found = self.plan.fusable[id(node)] = in_kernel(node)
        return found

    def _evaluate(self, node: Node):
        if node.op == "constant":
            return node.attrs[-1]
        if node.op in REDUCTIONS:
            fused = self._fused([node.args[0]], node)
            if fused is not None:
                return fused
        elif self._in_kernel(node):
            fused = self._fused([node], None)
            if fused is not None:
                return fused[0]
        return self._eager(node)

    def outputs(self, outputs: list) -> list:
        """The values of ``outputs``: the fusable elementwise ones of one shape together, in one kernel."""
        if not outputs:
            return []
        together = self.plan.together
        if together is None:  # (outputs: always the plan's outputs and assignments' values)
            together = self.plan.together = [n for n in outputs if self._in_kernel(n) and n.shape == outputs[0].shape
                                             and id(n) not in self.plan.direct]
        inplace = self.plan.inplace and len(together) == len(outputs)
        reduced = None if inplace else self._reduced_beside(together, outputs)
        if reduced is not None:  # (``y = f(x); return y, sum(y)``: y written and summed in one pass)
            roots = [reduced.args[0], *(n for n in together if n is not reduced.args[0])]
            fused = self._fused(roots, reduced, store=True)
            if fused is not None:
                stored, total = fused
                self.values.update((id(n), v) for n, v in zip(roots, stored))
                self.values[id(reduced)] = total
                return [self.value(n) for n in outputs]
        if len(together) > 1 or inplace:
            into = [self.value(self.plan.inplace[id(n)]) for n in together] if inplace else None
            fused = self._fused(together, None, into)
            if fused is not None:
                self.values.update((id(n), v) for n, v in zip(together, fused))
        return [self.value(n) for n in outputs]

    @staticmethod
    def _reduced_beside(together: list, outputs: list) -> Node | None:
        """An output that reduces one of the ``together`` outputs over every axis (its value is then summed, or
        reduced, as the kernel writes it), or None."""
        ids = {id(n) for n in together}
        return next((n for n in outputs if n.op in REDUCTIONS and id(n.args[0]) in ids
                     and len(n.attrs[0]) == len(n.args[0].shape)), None)

    def _eager(self, node: Node):
        args = [self.value(a) for a in node.args]
        if node.op in REDUCTIONS:
            axes, keepdims = node.attrs
            return getattr(statistical, node.op)(args[0], axis=axes, keepdims=keepdims)
        if node.weak:  # Python scalars only: a Python scalar, as eagerly
            with np.errstate(all="ignore"):
                return numpy_function(node.op)(*args).item()
        if node.op == "astype":
            return astype(args[0], node.attrs[0])
        if node.op == "where":
            return where(*args)
        if node.op == "shift":  # a stencil's window, as darray's shifted view
            return args[0][tuple(slice(a, b) for a, b in node.attrs)]
        if node.op == "halo":  # a window of a map_overlap block, as map_overlap reads it
            return halo_value(args[0], *node.attrs)
        return getattr(elementwise, node.op)(*args)

    def _fused(self, roots: list, reduction: Node | None, into: list | None = None, store: bool = False):
        found = self._group(roots, reduction, into, store)
        if found is not None:
            self.plan.fuses = True
        return found

    def _group(self, roots: list, reduction: Node | None, into: list | None = None, store: bool = False):
        """``roots`` (or ``roots[0]`` reduced by ``reduction``) computed by one kernel: the list of values, or the
        reduction's; None when the leaves do not allow it. ``into``: DArrays the kernel may write the roots into
        (whole-array assignments, :attr:`Plan.inplace`) where they have the blocks and dtypes of the roots.
        ``store``: the roots' values written too, and ``(values, reduction)`` returned (NumPy blocks, no
        windows: else None)."""
        root = roots[0]
        if reduction is not None and reduction.attrs[0] and len(reduction.attrs[0]) not in (1, len(root.shape)):
            return None
        key = tuple(map(id, roots))
        found = self.plan.groups.get(key)
        if found is None:  # (the plan keeps the graph alive: the ids stay its nodes')
            nodes, leaves = _collect(roots) if self._in_kernel(root) else ([], [root])
            found = self.plan.groups[key] = nodes, leaves, any(leaf.op in ("shift", "halo") for leaf in leaves)
        nodes, leaves, windows = found
        if store and (windows or not nodes):
            return None
        if reduction is None and windows:
            direct = self.plan.direct.get(id(root)) if len(roots) == 1 else None
            target = None if direct is None else (self.value(direct[0]), *direct[1:])
            found = run_stencil(self, roots, nodes, leaves, lambda group, roles: self._kernel(group, roles, "box"),
                                _spread, target)
            if found is not None:
                return found
        elif windows and len(reduction.attrs[0]) == len(root.shape) and nodes:
            found = self._stencil_reduction(roots, nodes, leaves, reduction)
            if found is not None:
                return found
        values = [self.value(leaf) for leaf in leaves]
        main = next((v for v in values if type(v) is DArray and v.shape == root.shape), None)
        if main is None or main._layout.has_halo:
            return None
        if main._xp is not NUMPY:
            return None if store else self._cuda(roots, reduction, nodes, leaves, values, main, into)
        layout = main._layout
        full, broadcast, scalars, fv, bv, sv = [], [], [], [], [], []
        for leaf, v in zip(leaves, values):
            if type(v) is not DArray:
                scalars.append(leaf)
                sv.append(v)
            elif v.shape == root.shape:
                if v._layout != layout or v._xp is not NUMPY:
                    return None
                fv.append(np.ascontiguousarray(v.local).reshape(-1))  # a view of C-ordered blocks
                full.append(leaf)
            elif v._layout.is_replicated and v._xp is NUMPY and root.shape:
                broadcast.append(leaf)
                bv.append(np.broadcast_to(local_operand("fuse", v, layout, main), layout.block_shape(main._comm.rank)))
            else:
                return None
        group = Group(roots, nodes, full, broadcast, scalars)  # no nodes: a reduction of a leaf itself
        shape = layout.block_shape(main._comm.rank)
        params = [*fv, *([np.array(shape, dtype=np.int64)] if broadcast else []), *bv, *sv]
        roles = (tuple(id(x) for x in full), tuple(id(x) for x in broadcast), tuple(id(x) for x in scalars))
        if reduction is None:
            return self._elementwise(group, roles, main, shape, params, into)
        return self._reduce(group, roles, reduction, main, shape, params, store)

    def _cuda(self, roots: list, reduction: Node | None, nodes: list, leaves: list, values: list, main: DArray,
              into: list | None):
        """The GPU twin of the rest of :meth:`_fused`: one CuPy kernel when every block is a CuPy array and every
        node has a CUDA C spelling (:mod:`darray.fuse.cuda`); else None (eager)."""
        if not is_cupy_array(main.local) or not cuda.on_gpu(nodes, leaves):
            return None
        layout, xp = main._layout, cuda.cupy_module()
        shape = layout.block_shape(main._comm.rank)
        full, broadcast, scalars, fv, bv, kinds = [], [], [], [], [], []
        for leaf, v in zip(leaves, values):
            if type(v) is not DArray:
                kind = cuda.scalar_dtype(v)
                if kind is None:
                    return None
                scalars.append(leaf)
                kinds.append(kind.name)
            elif v.shape == main.shape and v._layout == layout and is_cupy_array(v.local):
                full.append(leaf)
                fv.append(v.local)
            elif v._layout.is_replicated and is_cupy_array(v.local) and roots[0].shape:
                broadcast.append(leaf)
                bv.append(xp.broadcast_to(local_operand("fuse", v, layout, main), shape))
            else:
                return None
        group = Group(roots, nodes, full, broadcast, scalars)
        sv = [v for v in values if type(v) is not DArray]
        if reduction is None:
            kernel = self.plan.cuda.elementwise(*cuda.elementwise_source(group, kinds))
            written = into is not None and all(t._layout == layout and is_cupy_array(t._block) and t.dtype == r.dtype
                                               for t, r in zip(into, roots))
            outs = [t._block for t in into] if written else [xp.empty(shape, dtype=r.dtype) for r in roots]
            kernel(*fv, *bv, *sv, *outs)
            return [WRITTEN] * len(outs) if written else [DArray._wrap(o, layout, main._comm, main._xp) for o in outs]
        name = reduction.op
        axes, _ = reduction.attrs
        acc = np.dtype(np.float64) if name == "mean" and group.root.dtype.kind in "biu" else reduction.dtype
        if acc.name not in cuda.C_TYPES:
            return None
        kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
        if 0 in shape:
            partial = xp.full(kept, _neutral(name, group.root.dtype, acc), dtype=acc)
        elif len(axes) < len(shape):
            kernel = self.plan.cuda.reduction(cuda.reduction_parts(group, kinds, name, acc))
            partial = kernel(*fv, *bv, *sv, axis=axes, keepdims=True)
        else:  # every axis: one pass, a partial per thread block, then those few combined by CuPy
            n = math.prod(shape)
            blocks = min(-(-n // cuda.BLOCK), FULL_BLOCKS)
            parts = xp.empty(blocks, dtype=acc)
            strides = [s // b.itemsize for b in bv for s in b.strides]
            kernel = self.plan.cuda.full(cuda.full_source(group, kinds, name, acc, len(shape)))
            kernel((blocks,), (cuda.BLOCK,), (np.int64(n), *(xp.ascontiguousarray(v) for v in fv), *bv,
                                              *(np.dtype(k).type(v) for k, v in zip(kinds, sv)),
                                              *(map(np.int64, shape) if bv else ()), *map(np.int64, strides), parts))
            if name in ("max", "min"):  # (CuPy's max and min propagate NaN as NumPy's)
                partial = getattr(xp, name)(parts)
            else:
                partial = (xp.prod if name == "prod" else xp.sum)(parts, dtype=acc)
            partial = xp.reshape(partial, kept)
        return self._finish(reduction, main, partial)

    def _stencil_reduction(self, roots: list, nodes: list, leaves: list, reduction: Node):
        """A reduction over every axis of a stencil group's values, fused into the box kernels' pass (the windows
        read as :func:`~darray.fuse.stencil.run_stencil` reads them, nothing block-sized written), or None."""
        name = reduction.op
        acc = np.dtype(np.float64) if name == "mean" and roots[0].dtype.kind in "biu" else reduction.dtype
        found = run_stencil(self, roots, nodes, leaves,
                            lambda group, roles: self._kernel(group, roles, "boxreduce", name, acc), _spread,
                            reduced=acc)
        if found is None:
            return None
        layout, comm, parts = found
        values = np.concatenate(parts) if parts else np.zeros(0, dtype=acc)
        ufunc = REDUCTIONS[name] or np.add
        partial = ufunc.reduce(values) if values.size else _neutral(name, roots[0].dtype, acc)
        stub = DArray._wrap(None, layout, comm, NUMPY)  # the eager result's layout: how the ranks combine
        return self._finish(reduction, stub, np.full((1,) * len(layout.shape), partial, dtype=acc))

    def _finish(self, reduction: Node, main: DArray, partial) -> DArray:
        """A reduction's per-rank ``partial`` (keepdims-shaped) combined over the ranks as eager darray does."""
        name = reduction.op
        axes, keepdims = reduction.attrs
        cut = grid_dims_cutting(main, axes)
        partial = combine(partial, "sum" if name == "mean" else name, main._comm, main._layout, cut)
        if name == "mean":
            count = math.prod(main.shape[i] for i in axes)
            with np.errstate(divide="ignore", invalid="ignore"):
                partial = partial / count if type(partial) is not np.ndarray else np.divide(partial, count,
                                                                                             out=partial)
        return finish_reduction(main, partial, axes, keepdims)

    def _kernel(self, group: Group, roles, driver: str, reduction: str | None = None, acc=None):
        key = (tuple(id(r) for r in group.roots), roles, driver, reduction)
        found = self.plan.kernels.get(key)
        if found is None:
            found = self.plan.kernels[key] = compiled(kernel_source(group, driver, reduction, acc))
        return found

    def _elementwise(self, group: Group, roles, main: DArray, shape, params, into=None) -> list:
        kernel = self._kernel(group, roles, "elementwise")
        written = into is not None and all(t._layout == main._layout and t._xp is NUMPY and t.dtype == r.dtype
                                           and t._block.flags.c_contiguous for t, r in zip(into, group.roots))
        outs = [t._block for t in into] if written else [np.empty(shape, dtype=r.dtype) for r in group.roots]
        _spread(kernel, math.prod(shape), 1, *(o.reshape(-1) for o in outs), *params)
        if written:
            return [WRITTEN] * len(outs)
        return [DArray._wrap(o, main._layout, main._comm, NUMPY) for o in outs]

    def _reduce(self, group: Group, roles, reduction: Node, main: DArray, shape, params, store: bool = False):
        """The reduction of ``group``'s root: a DArray; with ``store`` (every axis), also the roots' values written
        in the same pass: ``(values, reduction)``."""
        name = reduction.op
        axes = reduction.attrs[0]
        acc = np.dtype(np.float64) if name == "mean" and group.root.dtype.kind in "biu" else reduction.dtype
        ufunc = REDUCTIONS[name] or np.add
        n = math.prod(shape)
        outs = [np.empty(shape, dtype=r.dtype) for r in group.roots] if store else []
        if len(axes) == len(shape):  # every axis: tile partials, added pairwise by NumPy
            kernel = self._kernel(group, roles, "fullstore" if store else "full", name, acc)
            parts = np.empty(-(-n // TILE), dtype=acc)
            _spread(kernel, parts.size, TILE, n, parts, *(o.reshape(-1) for o in outs), *params)
            if parts.size:
                partial = ufunc.reduce(parts, keepdims=False)
            else:
                partial = _neutral(name, group.root.dtype, acc)
            partial = np.full((1,) * len(shape), partial, dtype=acc)
        else:
            (axis,) = axes
            a, k, b = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])
            kept = tuple(1 if i == axis else s for i, s in enumerate(shape))
            if k == 0:
                partial = np.full(kept, _neutral(name, group.root.dtype, acc), dtype=acc)
            else:
                partial = np.zeros(a * b, dtype=acc) if name != "prod" else np.ones(a * b, dtype=acc)
                kernel = self._kernel(group, roles, "axis", name, acc)
                _spread(kernel, a, k * b, k, b, partial, *params)
                partial = partial.reshape(kept)
        result = self._finish(reduction, main, partial)
        if store:
            return [DArray._wrap(o, main._layout, main._comm, NUMPY) for o in outs], result
        return result


def _neutral(name: str, dtype: np.dtype, acc: np.dtype):
    """The partial of an empty block (darray's eager neutral elements)."""
    if name == "min":
        return highest_value(dtype)
    if name == "max":
        return lowest_value(dtype)
    return acc.type(1 if name == "prod" else 0)


def run(plan: Plan, args: tuple, kwargs: dict):
    """The traced function's result for this call (a DArray, or the traced container of DArrays)."""
    state = _Run(plan, args, kwargs)
    results = state.outputs([*plan.outputs, *(value for _, _, value in plan.writes)])
    for (target, bounds, _), value in zip(plan.writes, results[len(plan.outputs):]):  # in program order
        if value is not WRITTEN:  # (else the kernel wrote it into the target's block)
            state.value(target)[tuple(slice(a, b) for a, b in bounds)] = value  # darray's assignment
    results = results[:len(plan.outputs)]
    if plan.container is type(None):
        return None
    return results[0] if plan.container is None else plan.container(results)
