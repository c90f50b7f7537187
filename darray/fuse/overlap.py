"""``map_overlap`` inside a fused function: the block function traced on windows of the padded block.

``da.map_overlap(func, u, depth=d, boundary=b, trim=...)`` calls ``func`` on
each rank's block of ``u`` padded by ``d`` ghost cells (filled by the halo
exchange and the boundary rule). Traced, ``func`` receives a tracer standing
for the whole padded array ``P`` (``numpy.pad`` of ``u`` by the ghost widths,
:func:`padded`); its step-1 slices (``b[:-2, 1:-1]``) are windows of ``P``
(:func:`window`). A window that starts ``a`` cells after the padded block's
start and stops ``c`` cells before its end reads, for the cell at global index
``g`` of the result, the cell ``g + a - d`` of ``u`` (``trim=False``: ``func``
returns the owned cells, ``a + c == 2d``) or ``g + a`` (``trim=True``: ``func``
returns the padded shape, so ``a == c == 0``), whichever block the rank
holds: :func:`translate` rewrites the traced expression into one over
``halo`` leaves, shifted reads of ``u`` past its edges by the boundary rule.
Those run in the stencil kernel (:mod:`darray.fuse.stencil`) with the halo
exchange behind the interior, and fuse with the operations around the call;
elsewhere a ``halo`` leaf's value is computed as map_overlap computes its
blocks (:func:`halo_value`).

Traced only when that correspondence holds for every block: windows whose
start counts from the block's start and whose stop counts from its end
(``b[1:-1]``, ``b[2:]``; not ``b[-1:]`` or ``b[:3]``), windows of the result's
shape, elementwise operations of the windows with Python scalars, arrays that
are arguments of the fused function with the first one's blocks, and no ghost
cells on an axis with boundary ``"none"`` unless ``trim=True`` (the edge
blocks see fewer of them). Anything else (``b.copy()``, reductions of the
block, ``numpy.pad``, another array) makes the fused function run eagerly.

Examples
--------
>>> import darray as da
>>> @da.fuse
... def smooth(u):
...     return da.map_overlap(lambda b: (b[:-2] + b[1:-1] + b[2:]) / 3, u, depth=1, boundary="nearest", trim=False)
>>> [round(v, 3) for v in smooth(da.arange(6.0)).gather().tolist()]
[0.333, 1.0, 2.0, 3.0, 4.0, 4.667]
"""

from __future__ import annotations

from .._api.overlap import with_halo
from .._core.array import DArray
from .._layout import normalize_boundary, normalize_halo
from .graph import REDUCTIONS, Node, Untraceable

__all__ = ["padded", "window", "translate", "halo_value", "window_bounds", "check_call"]


def check_call(func, arrays: list, depth, boundary, trim, out, kwargs) -> tuple[tuple, tuple]:
    """``(depth, boundary)`` per axis of a map_overlap call that fusion can trace; Untraceable otherwise (eager
    map_overlap then runs, and raises its own errors). ``arrays``/``out``: the DArray arguments (actual)."""
    if not callable(func) or not arrays or any(type(a) is not DArray for a in arrays) or type(trim) is not bool:
        raise Untraceable("map_overlap: arguments that are not DArray arguments of the fused function")
    first = arrays[0]
    halo = normalize_halo("map_overlap", depth, first.ndim)
    kinds = normalize_boundary("map_overlap", boundary, first.ndim)
    plain = first._layout.without_halo()
    for a in arrays:
        if a.shape != first.shape or a._layout.without_halo().blocks_key != plain.blocks_key:
            raise Untraceable("map_overlap of arrays with other blocks (eager map_overlap redistributes them)")
        a._layout.with_halo("map_overlap", halo, kinds)  # a halo darray refuses: eager map_overlap raises it
    if out is not None and (type(out) is not DArray or out._layout.blocks_key != plain.blocks_key):
        raise Untraceable("map_overlap: out= of other blocks")
    if not trim and any(h and k == "none" for h, k in zip(halo, kinds)):
        raise Untraceable("map_overlap: ghost cells on an axis with boundary 'none' (edge blocks see fewer)")
    for v in kwargs.values():
        if not (v is None or type(v) in (bool, int, float, complex, str)):
            raise Untraceable("map_overlap: keyword arguments other than Python scalars")
    return halo, kinds


def padded(source: Node, halo: tuple, kinds: tuple) -> Node:
    """The node a traced ``func`` receives: ``source`` padded by ``halo`` (none on ``"none"`` axes)."""
    widths = tuple(0 if k == "none" else h for h, k in zip(halo, kinds))
    shape = tuple(n + 2 * w for n, w in zip(source.shape, widths))
    return Node("padded", (source,), source.dtype, shape, (widths, kinds))


def window(node: Node, key) -> Node:
    """``node[key]`` of a padded node: step-1 slices counted from the block's start and from its end."""
    key = key if isinstance(key, tuple) else (key,)
    if len(key) > len(node.shape) or any(type(k) is not slice for k in key):
        raise Untraceable("map_overlap: only slices of step 1 of the block are traced")
    key = key + (slice(None),) * (len(node.shape) - len(key))
    bounds = []
    for k, n in zip(key, node.shape):
        start = 0 if k.start is None else k.start
        stop = 0 if k.stop is None else k.stop
        if k.step not in (None, 1) or type(start) is not int or type(stop) is not int or start < 0 or stop > 0 \
                or (k.stop is not None and stop == 0):
            raise Untraceable("map_overlap: a window that is not b[a:-c] (counted from the block's ends)")
        bounds.append((start, max(start, n + stop)))
    return Node("pwin", (node,), node.dtype, tuple(b - a for a, b in bounds), tuple(bounds))


def translate(root: Node, trim: bool) -> Node:
    """The result of a traced ``func`` (``root``) as an expression of ``halo`` leaves, in the global
    coordinates of the result (the shape of the first array)."""
    if root.op in ("scalar", "constant") or not root.shape:
        raise Untraceable("map_overlap: a result that is not computed from the block")
    memo: dict[int, Node] = {}
    shape = None

    def visit(node: Node) -> Node:
        nonlocal shape
        found = memo.get(id(node))
        if found is not None:
            return found
        if node.op in ("scalar", "constant"):
            return node
        if node.op in ("padded", "pwin"):
            pad = node if node.op == "padded" else node.args[0]
            bounds = node.attrs if node.op == "pwin" else tuple((0, n) for n in node.shape)
            widths, kinds = pad.attrs
            if node.shape != root.shape:
                raise Untraceable("map_overlap: windows of another shape than the result")
            source = pad.args[0]
            wanted = pad.shape if trim else source.shape
            if root.shape != wanted:
                raise Untraceable("map_overlap: func returns another shape than map_overlap needs")
            shape = source.shape
            starts = [a - (0 if trim else w) for (a, _), w in zip(bounds, widths)]
            found = Node("halo", (source,), source.dtype, source.shape,
                         (tuple((s, s + n) for s, n in zip(starts, source.shape)), kinds))
        elif not node.args or node.shape not in ((), root.shape) or node.op in (*REDUCTIONS, "shift", "halo"):
            raise Untraceable(f"map_overlap: {node.op} inside the block function")
        else:
            args = tuple(visit(a) for a in node.args)
            found = Node(node.op, args, node.dtype, node.shape and shape, node.attrs)
        memo[id(node)] = found
        return found

    return visit(root)


def window_bounds(node: Node) -> tuple:
    """The ``(start, stop)`` per axis that a ``shift`` or ``halo`` leaf reads of its source."""
    return node.attrs[0] if node.op == "halo" else node.attrs


def halo_value(x: DArray, bounds: tuple, kinds: tuple) -> DArray:
    """A ``halo`` leaf computed as map_overlap computes its blocks: ``x`` with ghost cells (exchanged, the
    edges filled by ``kinds``), the window ``bounds`` read of every rank's padded block; ``x``'s blocks."""
    depth = tuple(max(-a, b - n, 0) for (a, b), n in zip(bounds, x.shape))
    wide = with_halo(x, depth, kinds)
    plain = x._layout.without_halo()
    rank = x._comm.rank
    own = wide._layout.block_shape(rank)
    block = wide._block[tuple(slice(h + a, h + a + n) for h, (a, _), n in zip(wide._layout.halo, bounds, own))]
    return DArray._wrap(wide._xp.asarray(block, copy=True), plain, x._comm, x._xp)
