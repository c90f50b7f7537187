"""Kernel source: one numba function per fused group, evaluated over the flat index of a rank's block.

A group (:class:`Group`) is a set of elementwise nodes computed by one
kernel, with its leaves: operands that are full blocks (read as flat
C-ordered arrays), broadcast operands (n-d views with zero strides, read by
the unravelled index) and Python scalars (kernel arguments, so a new value
needs no new kernel). :func:`value_source` writes the statements of the
group's values at flat index ``i``: one per node, each operand cast first as
NumPy's loop does (:class:`darray.fuse.graph.Kernel`) and the value cast to
the node's dtype, so integers wrap and float32 stays float32 as in NumPy.
They are inlined into one of these loops (:data:`DRIVERS`; one function per
kernel: numba compiles it in about 0.3 s, once per source and machine):

- ``elementwise``: ``out[i] = value`` over a range of indices (one output
  array per root; values live in registers, so no temporary is written);
- ``full``: per tile of :data:`TILE` cells, four interleaved accumulators
  (tile partials are added pairwise by NumPy afterwards);
- ``axis``: the block seen as ``(A, K, B)`` with ``K`` the reduced axis, one
  accumulator per ``(a, b)``, adding along ``k`` in order (as NumPy's
  reduction over a non-last axis does);
- ``box``: nested loops over a box of an n-d block, reading stencil windows
  (``shifted`` leaves) of padded blocks at offsets given as arguments (the
  same kernel for every rank, box and offset: a stencil's interior and its
  boundary strips);
- ``boxreduce``: the same boxes reduced, one partial per row of axis 0 (a
  stencil's values summed, or their max, without writing them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .graph import KERNEL, KIND_TEMPLATES, Node, common_dtype

__all__ = ["Group", "TILE", "DRIVERS", "value_source", "node_statements", "kernel_source", "cast"]

#: Cells per tile of a full reduction (one partial each): small enough to stay in L1 per operand, large
#: enough that the partials are a fraction of a percent of the block.
TILE = 1024


@dataclass(eq=False)
class Group:
    """The nodes one kernel computes (topological order), its ``roots`` (the values it writes: several
    elementwise results of one function share one pass) and its leaves by role."""

    roots: list
    nodes: list
    full: list  # leaves read as flat blocks
    broadcast: list  # leaves read through n-d broadcast views
    scalars: list  # Python scalar leaves (arguments and constants)
    shifted: list = field(default_factory=list)  # stencil leaves: shifted windows of padded blocks (box driver)

    @property
    def root(self) -> Node:
        return self.roots[0]


def cast(expr: str, dtype: np.dtype) -> str:
    """``expr`` converted to ``dtype`` with NumPy's meaning (``x != 0`` for bool, ``np.int8(x)`` wraps)."""
    if dtype.kind == "b":
        return f"(({expr}) != 0)"
    return f"np.{dtype.name}({expr})"


def _operands(node: Node, names: dict, cast=cast) -> list[str]:
    rule = KERNEL[node.op].cast
    args = [names[id(a)] for a in node.args]
    if node.op == "where":
        return [args[0], cast(args[1], node.dtype), cast(args[2], node.dtype)]
    if rule == "result":
        return [cast(a, node.dtype) for a in args]
    if rule == "common":
        common = common_dtype(node)
        return [cast(a, common) for a in args]
    return args


def _template(node: Node) -> str:
    if node.op == "pow" and node.args[1].op == "constant":  # NumPy's operator fast paths for these exponents
        special = {2: "{0} * {0}", 0.5: "np.sqrt({0})", 1: "{0}", -1: "1.0 / {0}"}
        exponent = node.args[1].attrs[-1]
        if type(exponent) in (int, float) and exponent in special:
            return special[exponent]
    kind = node.args[0].dtype.kind if node.args else ""
    return KIND_TEMPLATES.get((node.op, kind), KERNEL[node.op].template)


def value_source(group: Group, indent: str, box: bool = False) -> tuple[str, list[str], list[str], str]:
    """The statements computing ``group``'s roots at flat index ``i`` (or, ``box``, at the n-d index
    ``i0, i1, ...``), each line prefixed by ``indent``; the kernel parameters they read; the names of the
    roots' values; and the statements of the nodes computed from Python scalars only (for the start of the
    kernel, outside its loops)."""
    names: dict[int, str] = {}
    params: list[str] = []
    lines: list[str] = []
    ndim = len(group.root.shape)
    at = ", ".join(f"i{d}" for d in range(ndim)) if box else "i"
    for j, leaf in enumerate(group.full):
        names[id(leaf)] = f"x{j}"
        params.append(f"a{j}")
        lines.append(f"x{j} = a{j}[{at}]")
    for j, leaf in enumerate(group.shifted):  # p{j}: a padded block, o{j}: where the window starts in it
        names[id(leaf)] = f"z{j}"
        params += [f"p{j}", f"o{j}"]
        lines.append(f"z{j} = p{j}[{', '.join(f'i{d} + o{j}_{d}' for d in range(ndim))}]")  # (box driver)
    if group.broadcast:
        params.append("shp")
        lines.append("r = i")
        for d in reversed(range(ndim)):
            lines += [f"j{d} = r % shp[{d}]", f"r = r // shp[{d}]"]
        index = ", ".join(f"j{d}" for d in range(ndim))
        for j, leaf in enumerate(group.broadcast):
            names[id(leaf)] = f"y{j}"
            params.append(f"b{j}")
            lines.append(f"y{j} = b{j}[{index}]")
    for j, leaf in enumerate(group.scalars):
        names[id(leaf)] = f"s{j}"
        params.append(f"s{j}")
    body, prelude = node_statements(group, names)
    lines += body
    return ("\n".join(indent + line for line in lines), params, [names[id(r)] for r in group.roots],
            "".join(f"    {line}\n" for line in prelude))


def node_statements(group: Group, names: dict, template=_template, cast=cast,
                    assign=lambda name, expr, dtype: f"{name} = {expr}") -> tuple[list[str], list[str]]:
    """One statement per node of ``group`` (``t{k}``, its value cast to the node's dtype), reading the leaves
    by ``names`` (which it extends), in a dialect: numba's by default, CUDA C's (:mod:`darray.fuse.cuda`)
    with its own ``template``, ``cast`` and ``assign``. Returns the statements of nodes computed from Python
    scalars only (the prelude) apart."""
    lines: list[str] = []
    prelude: list[str] = []  # arithmetic of Python scalars only: once per call, before the loops
    for k, node in enumerate(group.nodes):
        expr = template(node).format(*_operands(node, names, cast))
        (prelude if node.weak else lines).append(assign(f"t{k}", cast(expr, node.dtype), node.dtype))
        names[id(node)] = f"t{k}"
    return lines, prelude


# (unsigned indices where no broadcast operand needs the unravelled index: no negative-index wraparound, so
# the loop vectorises)
_ELEMENTWISE = """
def kernel(lo, hi, {outs}, {params}):
    for i in range({lo}, {hi}):
{body}
{stores}
"""

# Four accumulators, cell i adding into q[i % 4] (tiles start at multiples of 4: the same sums whatever the
# threads' ranges), then (q0 + q1) + (q2 + q3) per tile. (Written as a tile of values, then the four lanes
# added in step: both loops vectorise.)
# A box of an n-d block (a stencil's interior, or one of its boundary strips): axis 0 from lo0 to hi0 (the
# threads' split), the others from lo[d] to hi[d].
_BOX = """
def kernel(lo0, hi0, lo, hi, {outs}, {params}):
{offsets}
    for i0 in range(np.uint64(lo0), np.uint64(hi0)):
{loops}
{body}
{stores}
"""

# The same boxes reduced: one partial per row of axis 0 (``parts[i0 - base]``), the cells of a row taken in
# order (a stencil's values summed, or their max, without writing them).
_BOX_REDUCE = """
def kernel(lo0, hi0, lo, hi, base, parts, {params}):
{offsets}
    for i0 in range(np.uint64(lo0), np.uint64(hi0)):
        m = {zero}
        first = True
{loops}
{body}
{indent}v = {acc}({value})
{indent}{update}
{indent}first = False
        parts[np.int64(i0) - base] = m
"""

#: How a row's running partial ``m`` takes the next value ``v`` (max and min: NaN propagates).
_UPDATE = {"sum": "m = m + v", "mean": "m = m + v", "prod": "m = m * v",
           "max": "m = v if (first or v > m or v != v) else m", "min": "m = v if (first or v < m or v != v) else m"}

_FULL_ADD = """
def kernel(tlo, thi, n, parts, {outs}{params}):
    buf = np.empty({tile}, dtype=np.{accname})
    for t in range(tlo, thi):
        lo = t * {tile}
        m = min(lo + {tile}, n) - lo
        for i in range({lo}, {hi}):
{body}
{stores}
            buf[i - {lo}] = {acc}({value})
        q0 = q1 = q2 = q3 = {zero}
        k = 0
        while k + 4 <= m:
            q0 {op}= buf[k]
            q1 {op}= buf[k + 1]
            q2 {op}= buf[k + 2]
            q3 {op}= buf[k + 3]
            k += 4
        if k < m:
            q0 {op}= buf[k]
        if k + 1 < m:
            q1 {op}= buf[k + 1]
        if k + 2 < m:
            q2 {op}= buf[k + 2]
        parts[t] = (q0 {op} q1) {op} (q2 {op} q3)
"""

_FULL_ORDER = """
def kernel(tlo, thi, n, parts, {outs}{params}):
    for t in range(tlo, thi):
        lo = t * {tile}
        m = {zero}
        for i in range(lo, min(lo + {tile}, n)):
{body}
{stores}
            v = {acc}({value})
            if i == lo or {better}:
                m = v
        parts[t] = m
"""

_AXIS = """
def kernel(lo, hi, K, B, acc, {params}):
    for a in range(lo, hi):
        for k in range(K):
            base = (a * K + k) * B
            for b in range(B):
                i = base + b
{body}
                v = {acc}({value})
                c = a * B + b
                if {first}:
                    acc[c] = v
                else:
                    acc[c] = {combine}
"""

#: ``v`` replaces the running ``m`` when: (NaN propagates: once m is NaN nothing compares greater)
_BETTER = {"max": "v > m or v != v", "min": "v < m or v != v"}
_COMBINE = {"sum": "acc[c] + v", "mean": "acc[c] + v", "prod": "acc[c] * v",
            "max": "v if (v > acc[c] or v != v) else acc[c]", "min": "v if (v < acc[c] or v != v) else acc[c]"}

#: (``fullstore``: ``full`` that also writes every root's value, the reduced one first: ``y = f(x); sum(y)``
#: with ``y`` returned, in one pass)
DRIVERS = ("elementwise", "full", "fullstore", "axis", "box", "boxreduce")


def _acc(dtype: np.dtype) -> str:
    return "" if dtype.kind == "b" else f"np.{dtype.name}"


def kernel_source(group: Group, driver: str, reduction: str | None = None, acc: np.dtype | None = None) -> str:
    """The module source of one kernel: the ``driver`` named ``kernel`` with ``group``'s statements inlined."""
    ndim = len(group.root.shape)
    depth = {"elementwise": 8, "full": 12, "fullstore": 12, "axis": 16, "box": 4 + 4 * ndim,
             "boxreduce": 4 + 4 * ndim}[driver]
    body, params, values, prelude = value_source(group, " " * depth, box=driver in ("box", "boxreduce"))
    fill = {"params": ", ".join(params), "tile": TILE, "body": body}
    if driver in ("box", "boxreduce"):  # the loops over axes 1.. of the box, the windows' offsets
        fill["loops"] = "\n".join(f"{' ' * (4 + 4 * d)}for i{d} in range(np.uint64(lo[{d}]), np.uint64(hi[{d}])):"
                                  for d in range(1, ndim))
        fill["offsets"] = "\n".join(f"    o{j}_{d} = np.uint64(o{j}[{d}])" for j in range(len(group.shifted))
                                    for d in range(ndim))
    if driver == "boxreduce":
        source = _BOX_REDUCE.format(indent=" " * depth, acc=_acc(acc), value=values[0], update=_UPDATE[reduction],
                                    zero=f"np.{acc.name}({1 if reduction == 'prod' else 0})", **fill)
    elif driver == "box":
        at = ", ".join(f"i{d}" for d in range(ndim))
        stores = "\n".join(f"{' ' * depth}out{j}[{at}] = {v}" for j, v in enumerate(values))
        source = _BOX.format(outs=", ".join(f"out{j}" for j in range(len(values))), stores=stores, **fill)
    elif driver == "elementwise":
        stores = "\n".join(f"        out{j}[i] = {v}" for j, v in enumerate(values))
        lo, hi = ("lo", "hi") if group.broadcast else ("np.uint64(lo)", "np.uint64(hi)")
        source = _ELEMENTWISE.format(outs=", ".join(f"out{j}" for j in range(len(values))), stores=stores, lo=lo,
                                     hi=hi, **fill)
    else:
        fill.update(acc=_acc(acc), value=values[0])
        stored = values if driver == "fullstore" else []
        fill.update(outs="".join(f"out{j}, " for j in range(len(stored))),
                    stores="\n".join(f"{' ' * depth}out{j}[i] = {v}" for j, v in enumerate(stored)))
        zero = f"np.{acc.name}({1 if reduction == 'prod' else 0})"
        if driver in ("full", "fullstore") and reduction in ("min", "max"):
            source = _FULL_ORDER.format(better=_BETTER[reduction], zero=zero, **fill)
        elif driver in ("full", "fullstore"):
            lo, hi = ("lo", "lo + m") if group.broadcast else ("np.uint64(lo)", "np.uint64(lo + m)")
            source = _FULL_ADD.format(accname=acc.name, zero=zero, op="*" if reduction == "prod" else "+", lo=lo,
                                      hi=hi, **fill)
        else:
            first = "k == 0" if reduction in ("min", "max") else "False"
            source = _AXIS.format(first=first, combine=_COMBINE[reduction], **fill)
    head, rest = source.split("\n", 2)[1:]  # (the template starts with a newline, then the def line)
    source = f"\n{head}\n{prelude}{rest}"
    return "import numpy as np\nimport numba\n\n\n@numba.njit(cache=True, nogil=True, error_model='numpy')" + source
