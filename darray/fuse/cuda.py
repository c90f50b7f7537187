"""Fused kernels on CuPy blocks: the same traced groups, written in CUDA C and run by CuPy.

A group (:class:`darray.fuse.codegen.Group`) that :mod:`darray.fuse.execute`
would give numba on NumPy blocks becomes, on CuPy blocks, one
``cupy.ElementwiseKernel`` (every root written in one pass), or a reduction
fused into the pass that makes its operand (``sum(a*b + c)`` reads a, b and
c once and writes no block-sized temporary): a ``cupy.RawKernel`` for a
reduction over every axis (:func:`full_source`: a partial per thread block),
a ``cupy.ReductionKernel`` over one axis. The statements come from the same generator as numba's
(:func:`darray.fuse.codegen.node_statements`) in a CUDA C dialect: each
operand is cast to NumPy's loop dtype first and each value to the node's
dtype after it, so integers wrap and float32 stays float32 as in NumPy.

Compiled with ``--fmad=false``: CUDA would otherwise contract ``a*b + c``
into one fused multiply-add, rounding once where NumPy rounds twice. ``/``
and ``sqrt`` are IEEE (NVRTC's defaults); CUDA's ``exp``, ``log``, ``sin``, ...
are within 1-2 ulp of NumPy's, like numba's libm. Reductions add in CuPy's
tree order (as eager darray on CuPy blocks does), then combine over the ranks
as eager darray does.

Stencil groups (shifted windows, map_overlap) run as one ElementwiseKernel
per box (:func:`box_source`): the interior while the halo exchange is in
flight, then the boundary strips, as on the CPU.

Left to eager darray on CuPy blocks: complex and float16 values (CUDA C has
no NumPy semantics for them here) and ``real``/``imag``/``conj``.

Examples
--------
>>> import numpy as np
>>> from darray.fuse.graph import Node
>>> from darray.fuse.codegen import Group
>>> a, b = Node("argument", (), np.dtype("float32"), (4,), (0,)), Node("scalar", (), np.dtype("float64"), (), (1,))
>>> node = Node("multiply", (a, b), np.dtype("float32"), (4,))
>>> print(elementwise_source(Group([node], [node], [a], [], [b]), ["float64"])[2])
const float t0 = ((float)(((float)(x0)) * ((float)(s0))));
out0 = t0;
"""

from __future__ import annotations

import numpy as np

from .codegen import Group, node_statements
from .graph import KERNEL, Node, common_dtype

__all__ = ["cupy_module", "C_TYPES", "C_KERNEL", "on_gpu", "scalar_dtype", "elementwise_source", "reduction_parts",
           "full_source", "box_source", "BLOCK", "OPTIONS", "CudaKernels"]

#: NVRTC options: no contraction into fused multiply-adds (NumPy rounds ``a*b`` before adding ``c``).
OPTIONS = ("--fmad=false",)

#: C type of each dtype a CUDA kernel computes in.
C_TYPES = {"bool": "bool", "int8": "signed char", "uint8": "unsigned char", "int16": "short",
           "uint16": "unsigned short", "int32": "int", "uint32": "unsigned int", "int64": "long long",
           "uint64": "unsigned long long", "float32": "float", "float64": "double"}

#: CUDA C spellings of :data:`darray.fuse.graph.KERNEL`'s ops (operands ``{0}``, ``{1}``, ``{2}`` already cast).
C_KERNEL = {
    "add": "{0} + {1}", "subtract": "{0} - {1}", "multiply": "{0} * {1}", "divide": "{0} / {1}",
    "maximum": "(({0} >= {1} || {0} != {0}) ? {0} : {1})", "minimum": "(({0} <= {1} || {0} != {0}) ? {0} : {1})",
    "pow": "pow({0}, {1})", "negative": "-{0}", "positive": "+{0}", "square": "{0} * {0}",
    "abs": "fabs({0})", "equal": "{0} == {1}", "not_equal": "{0} != {1}", "less": "{0} < {1}",
    "less_equal": "{0} <= {1}", "greater": "{0} > {1}", "greater_equal": "{0} >= {1}",
    "logical_and": "({0} && {1})", "logical_or": "({0} || {1})", "logical_xor": "({0} != {1})",
    "logical_not": "(!{0})", "bitwise_and": "{0} & {1}", "bitwise_or": "{0} | {1}", "bitwise_xor": "{0} ^ {1}",
    **{f: f"{f}({{0}})" for f in ("exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan",
                                  "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
                                  "floor", "ceil", "trunc", "isnan", "isinf", "isfinite")},
    "atan2": "atan2({0}, {1})", "hypot": "hypot({0}, {1})", "copysign": "copysign({0}, {1})",
    "sign": "({0} > 0 ? 1 : ({0} < 0 ? -1 : ({0} == 0 ? 0 : {0})))", "reciprocal": "1.0 / {0}",
    "where": "({0} ? {1} : {2})", "astype": "{0}",
}

#: Overrides by (op, kind of the operand), as :data:`darray.fuse.graph.KIND_TEMPLATES` for numba.
_C_KIND = {("abs", "i"): "({0} < 0 ? -{0} : {0})", ("abs", "u"): "{0}", ("abs", "b"): "{0}",
           **{(f, k): "{0}" for f in ("floor", "ceil", "trunc") for k in "iu"},
           **{(f, k): v for f, v in (("isnan", "false"), ("isinf", "false"), ("isfinite", "true")) for k in "iub"},
           ("square", "b"): "({0} && {0})"}

#: ``pow`` by these constant exponents: NumPy's fast paths (as :func:`darray.fuse.codegen._template`).
_POW_SPECIAL = {2: "{0} * {0}", 0.5: "sqrt({0})", 1: "{0}", -1: "1.0 / {0}"}


def cupy_module():
    """The CuPy module itself (not array-api-compat's wrapper): its kernels and array functions."""
    import cupy

    return cupy


def _c_cast(expr: str, dtype: np.dtype) -> str:
    return f"(({expr}) != 0)" if dtype.kind == "b" else f"(({C_TYPES[dtype.name]})({expr}))"


def _c_template(node: Node) -> str:
    if node.op == "pow" and node.args[1].op == "constant":
        exponent = node.args[1].attrs[-1]
        if type(exponent) in (int, float) and exponent in _POW_SPECIAL:
            return _POW_SPECIAL[exponent]
    kind = node.args[0].dtype.kind if node.args else ""
    template = _C_KIND.get((node.op, kind), C_KERNEL[node.op])
    if KERNEL[node.op].cast is None and node.dtype.kind == "f" and kind != "f" and node.op != "astype":
        template = template.replace("{0}", _c_cast("{0}", node.dtype))  # NumPy's float loop for int operands
    return template


def _c_assign(name: str, expr: str, dtype: np.dtype) -> str:
    return f"const {C_TYPES[dtype.name]} {name} = {expr};"


def _c_dtype(dtype: np.dtype | None) -> bool:
    return dtype is not None and dtype.name in C_TYPES


def on_gpu(nodes: list, leaves: list) -> bool:
    """Whether a CUDA kernel computes these nodes as NumPy does (real and bool dtypes, ops in :data:`C_KERNEL`)."""
    for node in nodes:
        if node.op not in C_KERNEL or not _c_dtype(node.dtype) or not all(_c_dtype(a.dtype) for a in node.args):
            return False
        if KERNEL[node.op].cast == "common" and not _c_dtype(common_dtype(node)):
            return False
    return all(_c_dtype(leaf.dtype) for leaf in leaves)


def scalar_dtype(value) -> np.dtype | None:
    """The C parameter type of a scalar leaf's value (Python scalars as NumPy's defaults), None if none fits."""
    dtype = np.asarray(value).dtype if isinstance(value, (bool, int, float, np.generic)) else None
    if isinstance(value, int) and not isinstance(value, bool) and not -2**63 <= value < 2**63:
        return None
    return dtype if _c_dtype(dtype) else None


def _statements(group: Group, scalars: list[str]) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """``group``'s kernel parameters ``(dtype name, name)``, its statements, and the names of its roots' values."""
    names: dict[int, str] = {}
    params = []
    for prefix, leaves in (("x", group.full), ("y", group.broadcast)):
        for j, leaf in enumerate(leaves):
            names[id(leaf)] = f"{prefix}{j}"
            params.append((leaf.dtype.name, f"{prefix}{j}"))
    for j, (leaf, dtype) in enumerate(zip(group.scalars, scalars)):
        names[id(leaf)] = f"s{j}"
        params.append((dtype, f"s{j}"))
    body, prelude = node_statements(group, names, _c_template, _c_cast, _c_assign)
    return params, prelude + body, [names[id(r)] for r in group.roots]


def elementwise_source(group: Group, scalars: list[str]) -> tuple[str, str, str]:
    """``(in_params, out_params, operation)`` of an ElementwiseKernel computing ``group``'s roots.

    ``scalars``: the dtype name of each scalar leaf's parameter.
    """
    params, lines, values = _statements(group, scalars)
    lines += [f"out{j} = {v};" for j, v in enumerate(values)]
    outs = ", ".join(f"{r.dtype.name} out{j}" for j, r in enumerate(group.roots))
    return ", ".join(f"{t} {n}" for t, n in params), outs, "\n".join(lines)


def box_source(group: Group, scalars: list[str], ndim: int) -> tuple[str, str, str]:
    """``(in_params, out_params, operation)`` of an ElementwiseKernel computing a stencil group over one box.

    Launched with ``reduce_dims=False`` over views of the box (outputs, full operands), so ``_ind.get()`` is the
    cell's index in the box. A window leaf ``z{j}`` reads the C-contiguous padded block ``p{j}`` (raw) at that
    index plus ``q{j}_{d}`` (the box's start plus the window's offset, per axis), with element strides
    ``r{j}_{d}``: one kernel for the interior and every boundary strip, as the numba ``box`` driver.
    """
    names: dict[int, str] = {}
    params, loads = [], ["const ptrdiff_t* at = _ind.get();"]
    for j, leaf in enumerate(group.full):
        names[id(leaf)] = f"x{j}"
        params.append(f"{leaf.dtype.name} x{j}")
    for j, leaf in enumerate(group.shifted):
        names[id(leaf)] = f"z{j}"
        params.append(f"raw {leaf.dtype.name} p{j}")
        params += [f"int64 {v}{j}_{d}" for v in "qr" for d in range(ndim)]
        at = " + ".join(f"(at[{d}] + q{j}_{d}) * r{j}_{d}" for d in range(ndim))
        loads.append(f"const {C_TYPES[leaf.dtype.name]} z{j} = p{j}[{at}];")
    for j, (leaf, dtype) in enumerate(zip(group.scalars, scalars)):
        names[id(leaf)] = f"s{j}"
        params.append(f"{dtype} s{j}")
    body, prelude = node_statements(group, names, _c_template, _c_cast, _c_assign)
    stores = [f"out{j} = {names[id(r)]};" for j, r in enumerate(group.roots)]
    outs = ", ".join(f"{r.dtype.name} out{j}" for j, r in enumerate(group.roots))
    return ", ".join(params), outs, "\n".join(loads + prelude + body + stores)


#: CUDA C bit patterns of the infinities (no header needed): min's and max's identities for floats.
_INF = {"float32": ("__int_as_float(0x7f800000)", "__int_as_float(0xff800000)"),
        "float64": ("__longlong_as_double(0x7ff0000000000000LL)", "__longlong_as_double(0xfff0000000000000ULL)")}


def _identity(reduction: str, acc: np.dtype) -> str:
    if reduction in ("sum", "mean"):
        return "0"
    if reduction == "prod":
        return "1"
    if acc.kind == "f":
        return _INF[acc.name][0 if reduction == "min" else 1]
    if acc.kind == "b":
        return "true" if reduction == "min" else "false"
    info = np.iinfo(acc)
    value = info.max if reduction == "min" else info.min
    return f"({value + 1}LL - 1)" if value == -2**63 else f"{value}{'ULL' if acc.kind == 'u' else 'LL'}"


#: ``reduce_expr`` of each reduction; max and min propagate NaN from either side.
_REDUCE = {"sum": "a + b", "mean": "a + b", "prod": "a * b", "max": "((a != a || a > b) ? a : b)",
           "min": "((a != a || a < b) ? a : b)"}


def _map_function(group: Group, scalars: list[str], acc: np.dtype) -> tuple[list[tuple[str, str]], str]:
    """The kernel parameters and a ``__device__`` function ``darray_map`` of them: the root's value in ``acc``."""
    params, lines, values = _statements(group, scalars)
    typed = ", ".join(f"{C_TYPES[t]} {n}" for t, n in params)
    body = "".join(f"    {line}\n" for line in lines)
    return params, (f"__device__ {C_TYPES[acc.name]} darray_map({typed}) {{\n{body}"
                    f"    return {_c_cast(values[0], acc)};\n}}\n")


def reduction_parts(group: Group, scalars: list[str], reduction: str, acc: np.dtype) -> dict:
    """Keyword arguments of a ``cupy.ReductionKernel`` reducing ``group``'s root with ``reduction`` in ``acc``.

    The root's statements become a ``__device__`` function (the map), its value cast to ``acc``.
    """
    params, preamble = _map_function(group, scalars, acc)
    ctype = C_TYPES[acc.name]
    in_params = ", ".join(f"{t} {n}" for t, n in params)
    return dict(in_params=in_params, out_params=f"{acc.name} out0", map_expr=f"darray_map({', '.join(n for _, n in params)})",
                reduce_expr=_REDUCE[reduction], post_map_expr="out0 = a", identity=_identity(reduction, acc),
                reduce_type=ctype, preamble=preamble)


#: Threads per block of :func:`full_source`'s kernel (a power of two: the block's tree reduction halves it).
BLOCK = 256

_FULL = """{map}
extern "C" __global__ void darray_fused_full(const long long n, {params}{acc}* parts) {{
    __shared__ {acc} buf[{block}];
    {acc} a = {identity};
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {{
{index}        const {acc} b = darray_map({values});
        a = {reduce};
    }}
    buf[threadIdx.x] = a;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half >>= 1) {{
        if (threadIdx.x < half) {{
            {acc} b = buf[threadIdx.x + half];
            a = buf[threadIdx.x];
            buf[threadIdx.x] = {reduce};
        }}
        __syncthreads();
    }}
    if (threadIdx.x == 0) parts[blockIdx.x] = buf[0];
}}
"""


def full_source(group: Group, scalars: list[str], reduction: str, acc: np.dtype, ndim: int) -> str:
    """A ``cupy.RawKernel`` reducing ``group``'s root over a whole block in one pass: one partial per thread block.

    Each thread strides over the flat index (full operands C-contiguous, read at ``i``; broadcast operands at
    the offset of ``i``'s unravelled index, with element strides passed as arguments), then each block reduces
    its threads' values in shared memory. (CuPy's ReductionKernel reduces to one value with one thread block.)
    Parameters: ``n``, the full then broadcast operands' pointers, the scalars, the block's shape and each
    broadcast operand's strides (``ndim`` each, when there are broadcast operands), then ``parts``.
    """
    params, preamble = _map_function(group, scalars, acc)
    values, args, index = [], [], ""
    for t, name in params:
        if name[0] in "xy":
            args.append(f"const {C_TYPES[t]}* p{name}")
            values.append(f"p{name}[i]" if name[0] == "x" else f"p{name}[o{name}]")
        else:
            args.append(f"const {C_TYPES[t]} {name}")
            values.append(name)
    broadcast = [name for _, name in params if name[0] == "y"]
    if broadcast:
        args += [f"const long long shp{d}" for d in range(ndim)]
        args += [f"const long long st{name}_{d}" for name in broadcast for d in range(ndim)]
        index = "        long long r = i, k;\n" + "".join(f"        long long o{name} = 0;\n" for name in broadcast)
        for d in reversed(range(ndim)):
            index += f"        k = r % shp{d};\n        r /= shp{d};\n"
            index += "".join(f"        o{name} += k * st{name}_{d};\n" for name in broadcast)
    return _FULL.format(map=preamble, params="".join(f"{a}, " for a in args), acc=C_TYPES[acc.name], block=BLOCK,
                        identity=_identity(reduction, acc), index=index, values=", ".join(values),
                        reduce=_REDUCE[reduction])


class CudaKernels:
    """CuPy kernels by source, compiled once per process (CuPy also caches their binaries on disk)."""

    def __init__(self):
        self._kernels: dict = {}

    def elementwise(self, in_params: str, out_params: str, operation: str, reduce_dims: bool = True):
        key = ("e", in_params, out_params, operation, reduce_dims)
        found = self._kernels.get(key)
        if found is None:
            import cupy

            found = self._kernels[key] = cupy.ElementwiseKernel(in_params, out_params, operation,
                                                                name="darray_fused", reduce_dims=reduce_dims,
                                                                options=OPTIONS)
        return found

    def reduction(self, parts: dict):
        key = ("r", *sorted(parts.items()))
        found = self._kernels.get(key)
        if found is None:
            import cupy

            found = self._kernels[key] = cupy.ReductionKernel(name="darray_fused_reduction", options=OPTIONS,
                                                              **parts)
        return found

    def full(self, source: str):
        found = self._kernels.get(source)
        if found is None:
            import cupy

            found = self._kernels[source] = cupy.RawKernel(source, "darray_fused_full", options=OPTIONS)
        return found

    def __len__(self) -> int:
        return len(self._kernels)
