"""The CUDA C that ``darray.fuse`` writes for CuPy blocks, compiled by the host's C compiler and run on the CPU.

No GPU here: these tests take the fused executor's CuPy path
(:meth:`darray.fuse.execute._Run._cuda`) with NumPy blocks, and give it
kernels built from the same generated source by ``gcc`` instead of NVRTC:
the ElementwiseKernel's operation and the ReductionKernel's map, reduce
expression and identity, each wrapped in a plain loop. So every op's CUDA C
spelling, its casts (integers wrap, float32 stays float32, no fused
multiply-add), the reductions' identities and NaN rules, the scalars'
parameter types and the executor's calls are checked against NumPy on every
machine with a C compiler. CUDA's own math library (ulp-level) is checked
on a GPU by tests/gpu/test_fuse_cuda.py.
"""

from __future__ import annotations

import ctypes
import hashlib
import shutil
import subprocess

import numpy as np
import pytest

import darray as da
from darray._core.array import DArray
from darray.fuse import cuda, execute, stencil
from darray.testing import assert_equal

COMPILER = shutil.which("gcc") or shutil.which("cc")
pytestmark = [
    pytest.mark.skipif(COMPILER is None, reason="needs a C compiler (gcc) to build the CUDA C on the CPU"),
    pytest.mark.numpy_only(reason="runs fuse's CUDA C, compiled on the host, over NumPy blocks posing as CuPy ones "
                                  "(the GPU itself: tests/gpu/test_fuse_cuda.py)"),
]

# <tgmath.h>: exp(float) is expf, as CUDA's overloads (C compiles several times faster than C++ here)
_SHIM = r"""
#include <tgmath.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
static const ptrdiff_t* darray_at;  /* the cell's index in the launch's shape: CuPy's _ind.get() */
static const ptrdiff_t* darray_get(void) { return darray_at; }
static struct { const ptrdiff_t* (*get)(void); } _ind = { darray_get };
#define __device__
#define __global__
#define __shared__
#define __syncthreads()
struct darray_dim { unsigned int x; };
struct darray_dim blockIdx, threadIdx, blockDim = {1}, gridDim = {1};
static inline float __int_as_float(unsigned int i) { float f; memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(unsigned long long i) { double d; memcpy(&d, &i, 8); return d; }
"""


def _params(text: str) -> list[tuple[str, str]]:
    return [tuple(p.split()) for p in text.split(", ")] if text else []


class _HostKernels:
    """:class:`darray.fuse.cuda.CudaKernels` with gcc for NVRTC: each kernel a loop over flat NumPy buffers."""

    def __init__(self, directory):
        self.dir = directory
        self.sources: list[str] = []

    def _build(self, source: str):
        self.sources.append(source)
        name = hashlib.sha1(source.encode()).hexdigest()[:16]
        lib = self.dir / f"k{name}.so"
        if not lib.exists():  # (kernels repeat between tests: built once per session)
            src = self.dir / f"k{name}.c"
            src.write_text(_SHIM + source)
            # -ffp-contract=off: no fused multiply-adds, as --fmad=false on the GPU
            subprocess.run([COMPILER, "-O0", "-ffp-contract=off", "-fPIC", "-shared", str(src), "-o", str(lib)],
                           check=True, capture_output=True, text=True)
        return ctypes.CDLL(str(lib))

    def elementwise(self, in_params: str, out_params: str, operation: str, reduce_dims: bool = True):
        """Arrays (``x``, ``y``) are read at the flat index of the launch's shape, ``raw`` ones (C-contiguous)
        by the kernel itself, scalars by value; ``_ind.get()`` is the cell's n-d index."""
        ins = [tuple(p.split()[-2:]) + (p.startswith("raw "),) for p in in_params.split(", ")]
        outs = _params(out_params)
        arrays = [(t, n) for t, n, raw in ins if not raw and n[0] in "xy"]
        args = [f"const {cuda.C_TYPES[t]}* {'' if raw else 'p_'}{n}" for t, n, raw in ins if raw or n[0] in "xy"] + \
               [f"{cuda.C_TYPES[t]} {n}" for t, n, raw in ins if not raw and n[0] not in "xy"] + \
               [f"{cuda.C_TYPES[t]}* p_{n}" for t, n in outs]
        loads = "".join(f"const {cuda.C_TYPES[t]} {n} = p_{n}[i];\n" for t, n in arrays)
        decls = "".join(f"{cuda.C_TYPES[t]} {n};\n" for t, n in outs)
        stores = "".join(f"p_{n}[i] = {n};\n" for _, n in outs)
        kernel = self._build(
            f'void kernel(long n, int ndim, const long* shape, {", ".join(args)}) {{\n'
            f"ptrdiff_t at[16];\ndarray_at = at;\n"
            f"for (long i = 0; i < n; ++i) {{\nlong r = i;\n"
            f"for (int d = ndim - 1; d >= 0; --d) {{ at[d] = r % shape[d]; r /= shape[d]; }}\n"
            f"{loads}{decls}{{\n{operation}\n}}\n{stores}}}\n}}\n").kernel

        def call(*values):
            outputs = [np.ascontiguousarray(v) for v in values[len(ins):]]
            shape = outputs[0].shape
            pointers, scalars = [], []
            for (t, n, raw), v in zip(ins, values):
                if raw:
                    assert v.flags.c_contiguous, "a raw argument is read by its C index"
                    pointers.append(v)
                elif n[0] in "xy":
                    pointers.append(np.ascontiguousarray(np.broadcast_to(v, shape)))
                else:
                    scalars.append(_c_scalar(t, v))
            dims = np.asarray(shape if shape else (1,), dtype=np.int64)
            kernel(ctypes.c_long(outputs[0].size), ctypes.c_int(dims.size), dims.ctypes.data_as(ctypes.c_void_p),
                   *(a.ctypes.data_as(ctypes.c_void_p) for a in pointers), *scalars,
                   *(o.ctypes.data_as(ctypes.c_void_p) for o in outputs))
            for o, v in zip(outputs, values[len(ins):]):
                if o is not v:
                    v[...] = o
        return call

    def reduction(self, parts: dict):
        ins = _params(parts["in_params"])
        (acc_name, _), = _params(parts["out_params"])
        acc = cuda.C_TYPES[acc_name]
        arrays = [(t, n) for t, n in ins if not n.startswith("s")]
        args = [f"const {cuda.C_TYPES[t]}* p_{n}" for t, n in arrays] + \
               [f"{cuda.C_TYPES[t]} {n}" for t, n in ins if n.startswith("s")] + [f"{acc}* out"]
        loads = "".join(f"const {cuda.C_TYPES[t]} {n} = p_{n}[o * m + j];\n" for t, n in arrays)
        kernel = self._build(
            f'{parts["preamble"]}\nvoid kernel(long outer, long m, {", ".join(args)}) {{\n'
            f"for (long o = 0; o < outer; ++o) {{\n{acc} a = {parts['identity']};\n"
            f"for (long j = 0; j < m; ++j) {{\n{loads}const {acc} b = {parts['map_expr']};\n"
            f"a = {parts['reduce_expr']};\n}}\n{acc} out0;\n{parts['post_map_expr']};\nout[o] = out0;\n}}\n}}\n").kernel

        def call(*values, axis=None, keepdims=True):
            shape = np.broadcast_shapes(*(v.shape for v in values if isinstance(v, np.ndarray)))
            axes = tuple(range(len(shape))) if axis is None else tuple(axis)
            kept = [a for a in range(len(shape)) if a not in axes]
            outer, m = int(np.prod([shape[a] for a in kept])), int(np.prod([shape[a] for a in axes]))
            inputs = [np.ascontiguousarray(np.transpose(np.broadcast_to(v, shape), kept + list(axes)))
                      if isinstance(v, np.ndarray) else v for v in values]
            out = np.empty(outer, dtype=acc_name)
            scalars = [_c_scalar(t, v) for (t, n), v in zip(ins, inputs) if n.startswith("s")]
            kernel(ctypes.c_long(outer), ctypes.c_long(m),
                   *(v.ctypes.data_as(ctypes.c_void_p) for v in inputs if isinstance(v, np.ndarray)), *scalars,
                   out.ctypes.data_as(ctypes.c_void_p))
            return out.reshape(tuple(1 if a in axes else n for a, n in enumerate(shape)))
        return call

    def full(self, source: str):
        """The RawKernel as a C function; a launch runs its thread blocks one after the other, one thread each."""
        lib = self._build(source.replace('extern "C" ', ""))
        kernel = lib.darray_fused_full

        def launch(grid, block, args):
            ctypes.c_uint.in_dll(lib, "gridDim").value = grid[0]
            converted = [a.ctypes.data_as(ctypes.c_void_p) if isinstance(a, np.ndarray) else
                         np.ctypeslib.as_ctypes_type(a.dtype)(a.item()) for a in args]
            for b in range(grid[0]):
                ctypes.c_uint.in_dll(lib, "blockIdx").value = b
                kernel(*converted)
        return launch

    def __len__(self):
        return len(self.sources)


def _c_scalar(dtype: str, value):
    return np.ctypeslib.as_ctypes_type(np.dtype(dtype))(value)


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cuda-source")


@pytest.fixture
def host_cuda(build_dir, monkeypatch):
    """Route fused calls on NumPy blocks through the CuPy path, with gcc kernels; yields the kernels made."""
    made = _HostKernels(build_dir)
    monkeypatch.setattr(execute, "NUMPY", object())  # every NumPy block now takes _Run._cuda
    monkeypatch.setattr(execute, "is_cupy_array", lambda a: isinstance(a, np.ndarray))
    monkeypatch.setattr(cuda, "cupy_module", lambda: np)
    monkeypatch.setattr(stencil, "_library", lambda x: "cupy" if type(x) is DArray else None)
    original = execute.Plan.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.cuda = made
    monkeypatch.setattr(execute.Plan, "__init__", init)
    return made


def _arrays(dtype, shape=(37, 5), n=3, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return [rng.integers(0, 2, shape).astype(bool) for _ in range(n)]
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return [rng.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True).astype(dtype)
                for _ in range(n)]
    return [(rng.standard_normal(shape) * 3).astype(dtype) for _ in range(n)]


DTYPES = ["bool", "int8", "uint8", "int16", "uint32", "int64", "uint64", "float32", "float64"]

#: Elementwise functions of three arrays, each with the dtype kinds it applies to and its tolerance (0: exact;
#: None: assert_equal's default, for libm functions, which may differ from NumPy's by an ulp).
CHAINS = {
    "a*b+c": (lambda m, a, b, c: a * b + c, "biuf", 0),
    "a-b*c": (lambda m, a, b, c: a - b * c, "iuf", 0),
    "compare": (lambda m, a, b, c: (a < b) | (b >= c) & (a != c), "biuf", 0),
    "bitwise": (lambda m, a, b, c: (a & b) ^ (c | a), "biu", 0),
    "minmax": (lambda m, a, b, c: m.maximum(a, b) - m.minimum(b, c), "iuf", 0),
    "where": (lambda m, a, b, c: m.where(a > b, c, a * 2), "iuf", 0),
    "divide": (lambda m, a, b, c: a / (m.abs(b) + 1), "iuf", 0),
    "scalars": (lambda m, a, b, c: 2.5 * a + 3 - c * 0.5, "f", 0),
    "int scalars": (lambda m, a, b, c: 3 * a + 7 - c, "iu", 0),
    "square, negative": (lambda m, a, b, c: m.square(a) - (-b), "if", 0),
    "transcendental": (lambda m, a, b, c: m.exp(m.sin(a)) + m.log1p(m.abs(b)) * m.tanh(c), "f", None),
    "sqrt, floor, sign": (lambda m, a, b, c: m.sqrt(m.abs(a)) + m.floor(b) * m.sign(c), "f", 0),
    "atan2, hypot, copysign": (lambda m, a, b, c: m.atan2(a, b) + m.hypot(b, c) - m.copysign(a, c), "f", None),
    "isnan, isfinite": (lambda m, a, b, c: m.isnan(a / b) | m.isfinite(c), "f", 0),
    "pow": (lambda m, a, b, c: m.abs(a) ** 0.5 + b ** 2 + m.abs(c) ** 1.5, "f", None),
    "astype": (lambda m, a, b, c: m.astype(a, m.float64) * 0.5 + m.astype(c > b, m.int32), "biuf", 0),
}


def _numpy_names(name):
    return {"atan2": np.arctan2, "astype": lambda x, t: x.astype(t)}.get(name, getattr(np, name))


class _NumPyNames:
    def __getattr__(self, name):
        return _numpy_names(name)

    float64, int32 = np.float64, np.int32


@pytest.mark.parametrize("chain, dtype", [(c, d) for c in CHAINS for d in DTYPES if np.dtype(d).kind in CHAINS[c][1]])
def test_elementwise_chains(host_cuda, chain, dtype):
    f, _, rtol = CHAINS[chain]
    fused = da.fuse(lambda a, b, c: f(da, a, b, c))
    arrays = _arrays(dtype)
    with np.errstate(all="ignore"):
        want = f(_NumPyNames(), *arrays)
        got = fused(*(da.asarray(x, split=0) for x in arrays))
    assert_equal(got, want, rtol=rtol)
    assert len(host_cuda) >= 1, "the call should have run the generated CUDA C"


def test_no_fused_multiply_add(host_cuda):
    a = np.full(64, 1.0 + 2.0 ** -30)
    c = -(a * a)
    got = da.fuse(lambda a, b, c: a * b + c)(*(da.asarray(x, split=0) for x in (a, a, c)))
    assert_equal(got, a * a + c, rtol=0)


@pytest.mark.parametrize("reduction", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int16", "uint8", "bool"])
def test_reductions(host_cuda, reduction, axis, dtype):
    a, b = _arrays(dtype, shape=(203, 6), n=2, seed=1)  # 1218 cells: five thread blocks of a full reduction
    if np.dtype(dtype).kind == "f":
        a = np.abs(a) * 0.2 + 0.9
        if reduction == "prod":  # a * b + a near 1: the product of 1218 stays far from overflow in float32
            a, b = 1 + a * 1e-3, b * 1e-3
        a[150, 2] = np.nan if reduction in ("max", "min") else a[150, 2]
    if reduction == "prod" and np.dtype(dtype).kind in "iu":
        a, b = a % 3, b % 2  # small products, wrapping as NumPy's
    fused = da.fuse(lambda a, b: getattr(da, reduction)(a * b + a if dtype != "bool" else a & b, axis=axis))
    with np.errstate(all="ignore"):
        want = np.asarray(getattr(np, reduction)(a * b + a if dtype != "bool" else a & b, axis=axis))
    got = fused(da.asarray(a, split=0), da.asarray(b, split=0))
    assert_equal(got, want, rtol=1e-5 if dtype == "float32" else 1e-12)
    assert len(host_cuda) == 1


def test_broadcast_operand_and_empty_block(host_cuda):
    rng = np.random.default_rng(2)
    a, row = rng.standard_normal((0, 4)), rng.standard_normal(4)
    f = da.fuse(lambda a, row: (a - row) * 2.0)
    assert_equal(f(da.asarray(a, split=0), da.asarray(row)), (a - row) * 2.0)
    g = da.fuse(lambda a: da.sum(a * 2.0, axis=0))
    assert_equal(g(da.asarray(a, split=0)), np.zeros(4))  # an empty block: the neutral partial, no kernel
    a = rng.standard_normal((9, 4))
    assert_equal(f(da.asarray(a, split=0), da.asarray(row)), (a - row) * 2.0)


def test_in_place_update_writes_the_blocks(host_cuda):
    @da.fuse
    def step(p, g, m, lr, b1):
        m1 = b1 * m + (1 - b1) * g
        p[:] = p - lr * m1
        m[:] = m1

    rng = np.random.default_rng(3)
    p0, g0, m0 = (rng.standard_normal(101) for _ in range(3))
    p, g, m = (da.asarray(x.copy(), split=0) for x in (p0, g0, m0))
    block = p.local
    step(p, g, m, 1e-3, 0.9)
    m1 = 0.9 * m0 + (1 - 0.9) * g0
    assert_equal(p, p0 - 1e-3 * m1, rtol=0)
    assert_equal(m, m1, rtol=0)
    assert p.local is block


def test_identities_are_the_dtypes_extremes():
    assert cuda._identity("min", np.dtype("int64")) == "9223372036854775807LL"
    assert cuda._identity("max", np.dtype("int64")) == "(-9223372036854775807LL - 1)"
    assert cuda._identity("max", np.dtype("uint8")) == "0ULL"
    assert cuda._identity("min", np.dtype("uint64")) == "18446744073709551615ULL"
    assert cuda.OPTIONS == ("--fmad=false",)


def _boxes(host_cuda) -> int:
    return sum("_ind.get()" in source for source in host_cuda.sources)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_stencil_sweep_into_its_target(host_cuda, dtype):
    """The README's sweep: shifted slices of ``u`` into ``out``'s interior, one box kernel per box."""
    @da.fuse
    def sweep(u, out):
        out[1:-1, 1:-1] = u[1:-1, 1:-1] + 2 * (u[2:, 1:-1] + u[:-2, 1:-1] - 2 * u[1:-1, 1:-1]) - u[1:-1, 2:]

    g = _arrays(dtype, shape=(19, 13), n=1, seed=4)[0]
    u, out = da.asarray(g, split=0), da.zeros((19, 13), dtype=dtype, split=0)
    sweep(u, out)
    want = np.zeros_like(g)
    want[1:-1, 1:-1] = g[1:-1, 1:-1] + 2 * (g[2:, 1:-1] + g[:-2, 1:-1] - 2 * g[1:-1, 1:-1]) - g[1:-1, 2:]
    assert_equal(out, want, rtol=0)
    assert _boxes(host_cuda) == 1 and sweep.stats["fused"] == 1


def test_stencil_in_place_and_two_results(host_cuda):
    @da.fuse
    def step(u):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (u[2:, 1:-1] + u[:-2, 1:-1] - 2 * u[1:-1, 1:-1])

    @da.fuse
    def pair(u):
        return u[2:, 1:-1] - u[:-2, 1:-1], u[1:-1, 2:] * u[1:-1, :-2]

    g = _arrays("float64", shape=(17, 11), n=1, seed=5)[0]
    u = da.asarray(g.copy(), split=0)
    step(u)
    want = g.copy()
    want[1:-1, 1:-1] = g[1:-1, 1:-1] + 0.2 * (g[2:, 1:-1] + g[:-2, 1:-1] - 2 * g[1:-1, 1:-1])
    assert_equal(u, want, rtol=0)
    a, b = pair(da.asarray(g, split=0))
    assert_equal(a, g[2:, 1:-1] - g[:-2, 1:-1], rtol=0)
    assert_equal(b, g[1:-1, 2:] * g[1:-1, :-2], rtol=0)
    assert _boxes(host_cuda) == 2


@pytest.mark.parametrize("boundary", ["periodic", "reflect", "nearest"])
def test_map_overlap_3d(host_cuda, boundary):
    def lap(b):
        return (b[:-2, 1:-1, 1:-1] + b[2:, 1:-1, 1:-1] + b[1:-1, :-2, 1:-1] + b[1:-1, 2:, 1:-1]
                + b[1:-1, 1:-1, :-2] + b[1:-1, 1:-1, 2:] - 6 * b[1:-1, 1:-1, 1:-1])

    @da.fuse
    def f(u):
        return u - 0.1 * da.map_overlap(lap, u, depth=1, boundary=boundary, trim=False)

    g = _arrays("float64", shape=(9, 7, 5), n=1, seed=6)[0]
    u = da.asarray(g, split=0)
    assert_equal(f(u), f.__wrapped__(u).gather(), rtol=0)
    assert _boxes(host_cuda) == 1
