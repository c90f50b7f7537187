"""Kernel source: one numba function per fused group, evaluated over the flat index of a rank's block.

A group (:class:`Group`) is a set of elementwise nodes computed by one
kernel, with its leaves: operands that are full blocks (read as flat
C-ordered arrays), broadcast operands (n-d views with zero strides, read by
the unravelled index) and Python scalars (kernel arguments, so a new value
needs no new kernel). :func:`value_source` writes ``_val(i, ...)``, the
group's value at flat index ``i``: one statement per node, each operand cast
first as NumPy's loop does (:class:`darray.fuse.graph.Kernel`) and the value
cast to the node's dtype, so integers wrap and float32 stays float32 as in
NumPy. Three drivers call it (:data:`DRIVERS`):

- ``elementwise``: ``out[i] = _val(i)`` over a range of indices (one output array per root);
- ``full``: per tile of :data:`TILE` cells, four interleaved accumulators
  (tile partials are added pairwise by NumPy afterwards);
- ``axis``: the block seen as ``(A, K, B)`` with ``K`` the reduced axis, one
  accumulator per ``(a, b)``, adding along ``k`` in order (as NumPy's
  reduction over a non-last axis does).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .graph import KERNEL, KIND_TEMPLATES, Node, common_dtype

__all__ = ["Group", "TILE", "DRIVERS", "value_source", "kernel_source", "cast"]

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

    @property
    def root(self) -> Node:
        return self.roots[0]


def cast(expr: str, dtype: np.dtype) -> str:
    """``expr`` converted to ``dtype`` with NumPy's meaning (``x != 0`` for bool, ``np.int8(x)`` wraps)."""
    if dtype.kind == "b":
        return f"(({expr}) != 0)"
    return f"np.{dtype.name}({expr})"


def _operands(node: Node, names: dict) -> list[str]:
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


def value_source(group: Group) -> tuple[str, list[str]]:
    """The source of ``_val`` for ``group`` and its parameter names (after ``i``)."""
    names: dict[int, str] = {}
    params: list[str] = []
    lines: list[str] = []
    for j, leaf in enumerate(group.full):
        names[id(leaf)] = f"x{j}"
        params.append(f"a{j}")
        lines.append(f"    x{j} = a{j}[i]")
    if group.broadcast:
        ndim = len(group.root.shape)
        params.append("shp")
        lines.append("    r = i")
        for d in reversed(range(ndim)):
            lines.append(f"    j{d} = r % shp[{d}]")
            lines.append(f"    r = r // shp[{d}]")
        index = ", ".join(f"j{d}" for d in range(ndim))
        for j, leaf in enumerate(group.broadcast):
            names[id(leaf)] = f"y{j}"
            params.append(f"b{j}")
            lines.append(f"    y{j} = b{j}[{index}]")
    for j, leaf in enumerate(group.scalars):
        names[id(leaf)] = f"s{j}"
        params.append(f"s{j}")
    for k, node in enumerate(group.nodes):
        expr = _template(node).format(*_operands(node, names))
        lines.append(f"    t{k} = {cast(expr, node.dtype)}")
        names[id(node)] = f"t{k}"
    lines.append(f"    return {', '.join(names[id(r)] for r in group.roots)}")
    signature = ", ".join(["i", *params])
    return "\n".join([f"def _val({signature}):", *lines]), params


_ELEMENTWISE = """
def kernel(lo, hi, {outs}, {params}):
    for i in range(lo, hi):
        {values} = _val(i, {params})
{stores}
"""

_FULL_ADD = """
def kernel(t0, t1, n, parts, {params}):
    for t in range(t0, t1):
        lo = t * {tile}
        hi = min(lo + {tile}, n)
        q0 = {zero}
        q1 = {zero}
        q2 = {zero}
        q3 = {zero}
        i = lo
        while i + 4 <= hi:
            q0 {op}= {acc}(_val(i, {params}))
            q1 {op}= {acc}(_val(i + 1, {params}))
            q2 {op}= {acc}(_val(i + 2, {params}))
            q3 {op}= {acc}(_val(i + 3, {params}))
            i += 4
        while i < hi:
            q0 {op}= {acc}(_val(i, {params}))
            i += 1
        parts[t] = (q0 {op} q1) {op} (q2 {op} q3)
"""

_FULL_ORDER = """
def kernel(t0, t1, n, parts, {params}):
    for t in range(t0, t1):
        lo = t * {tile}
        hi = min(lo + {tile}, n)
        m = {acc}(_val(lo, {params}))
        for i in range(lo + 1, hi):
            v = {acc}(_val(i, {params}))
            if {better}:
                m = v
        parts[t] = m
"""

_AXIS = """
def kernel(lo, hi, K, B, acc, {params}):
    for a in range(lo, hi):
        for k in range(K):
            base = (a * K + k) * B
            for b in range(B):
                v = {acc}(_val(base + b, {params}))
                j = a * B + b
                if {first}:
                    acc[j] = v
                else:
                    acc[j] = {combine}
"""

#: ``v`` replaces the running ``m`` when: (NaN propagates: once m is NaN nothing compares greater)
_BETTER = {"max": "v > m or v != v", "min": "v < m or v != v"}
_COMBINE = {"sum": "acc[j] + v", "mean": "acc[j] + v", "prod": "acc[j] * v",
            "max": "v if (v > acc[j] or v != v) else acc[j]", "min": "v if (v < acc[j] or v != v) else acc[j]"}

DRIVERS = ("elementwise", "full", "axis")


def _acc(dtype: np.dtype) -> str:
    return "" if dtype.kind == "b" else f"np.{dtype.name}"


def kernel_source(group: Group, driver: str, reduction: str | None = None, acc: np.dtype | None = None) -> str:
    """The module source of one kernel: numba's import, ``_val`` and the ``driver`` named ``kernel``."""
    body, params = value_source(group)
    fill = {"params": ", ".join(params), "tile": TILE}
    if driver == "elementwise":
        k = range(len(group.roots))
        driver_source = _ELEMENTWISE.format(outs=", ".join(f"out{j}" for j in k),
                                            values=", ".join(f"v{j}" for j in k),
                                            stores="\n".join(f"        out{j}[i] = v{j}" for j in k), **fill)
    elif driver == "full":
        if reduction in ("min", "max"):
            driver_source = _FULL_ORDER.format(acc=_acc(acc), better=_BETTER[reduction], **fill)
        else:
            op = "*" if reduction == "prod" else "+"
            zero = f"np.{acc.name}({1 if reduction == 'prod' else 0})"
            driver_source = _FULL_ADD.format(acc=_acc(acc), zero=zero, op=op, **fill)
    else:
        first = "k == 0" if reduction in ("min", "max") else "False"
        driver_source = _AXIS.format(acc=_acc(acc), first=first, combine=_COMBINE[reduction], **fill)
    return "\n".join([
        "import numpy as np",
        "import numba",
        "",
        "_jit = numba.njit(cache=True, nogil=True, error_model='numpy')",
        "",
        "",
        "@_jit",
        body,
        "",
        "",
        "@_jit" + driver_source,
    ]) + "\n"
