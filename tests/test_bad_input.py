"""Bad input to every public function: the same exception on every rank, named after the function, no hang.

One table, :data:`CASES`: (function name, a call with bad arguments, the exception type expected: NumPy's
type for the same mistake). Every callable in ``darray.__all__``, in ``darray.linalg``, ``darray.fft``,
``darray.stencil`` and every method of ``darray.random.Generator`` has at least one row
(:func:`test_every_public_function_has_a_bad_call`). For each row, every rank must

- raise (not return, not hang),
- an instance of the expected type, the SAME type on every rank, with the same message,
- with a message naming the function (``"<function>: ..."`` is the house style; containing the name is
  the minimum asserted here),

and the communicator must still work afterwards: a collective ``darray.sum`` right after the call.
The elementwise rows are generated from ``darray._core.table`` (a non-array argument, a dtype outside
the function's category, non-broadcastable shapes). ``pytest -s`` prints the number of calls tried.
"""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pytest
from numpy.exceptions import AxisError

import darray as da
from darray._api.numpy import mathematical, products, stacking, statistics
from darray._api.numpy.names import FUNCTION_NAMES, UFUNC_NAMES
from darray._core.elementwise import NUMPY_BOOL_ARITHMETIC
from darray._core.table import ELEMENTWISE
from darray.testing import agree

pytestmark = pytest.mark.mpi

COMM = da.default_communicator()
P = COMM.size
COUNT = {"calls": 0, "ok": 0}


@pytest.fixture(autouse=True)
def small_auto_threshold(monkeypatch):
    monkeypatch.setattr(da.config, "min_distributed_size", 4)


# ------------------------------------------------------------------ operands (created inside each call)
def f64(shape=(6, 4)):
    return da.asarray(np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 1.0, split=0)


def c128(shape=(6, 4)):
    return da.asarray((np.arange(np.prod(shape)) + 1j).reshape(shape), split=0)


def i64(shape=(6, 4)):
    return da.asarray(np.arange(np.prod(shape), dtype=np.int64).reshape(shape), split=0)


def b1(shape=(6, 4)):
    return da.asarray((np.arange(np.prod(shape)) % 2 == 0).reshape(shape), split=0)


def vec(n=6, dtype=np.float64):
    values = np.arange(n) % 2 == 0 if dtype is bool else np.arange(n, dtype=dtype)
    return da.asarray(values, split=0)


def sq(n=4):
    return da.asarray(np.eye(n) * 2.0 + 1.0, split=0)


def rng():
    return da.random.default_rng(0)


# ------------------------------------------------------------------ the table
CASES: list[tuple[str, str, object, object]] = []  # (id, function name for the message, call, expected type)


def case(name: str, call, kind, what: str = "", label: str | None = None) -> None:
    CASES.append((f"{label or name}-{what or len([c for c in CASES if c[1] == name])}", name, call, kind))


# elementwise, from THE table
_BAD_DTYPE = {  # category -> an operand outside it
    "numeric": b1, "real numeric": c128, "floating-point": b1, "real floating-point": c128,
    "complex floating-point": f64, "integer": f64, "integer or boolean": f64, "bool": f64,
}
#: With NumPy blocks these take booleans as NumPy does (``mask * 2``): no dtype of darray's is outside them.
_TAKES_BOOL = NUMPY_BOOL_ARITHMETIC if os.environ.get("DARRAY_BACKEND", "numpy") == "numpy" else frozenset()
for row in ELEMENTWISE:
    fn = getattr(da, row.name)
    if row.nargs == 1:
        case(row.name, lambda fn=fn: fn(object()), TypeError, "object")
        if row.category in _BAD_DTYPE and not (row.name in _TAKES_BOOL and _BAD_DTYPE[row.category] is b1):
            case(row.name, lambda fn=fn, mk=_BAD_DTYPE[row.category]: fn(mk()), TypeError, "dtype")
    else:
        case(row.name, lambda fn=fn: fn(object(), vec()), TypeError, "object")
        if row.category in _BAD_DTYPE and not (row.name in _TAKES_BOOL and _BAD_DTYPE[row.category] is b1):
            case(row.name, lambda fn=fn, mk=_BAD_DTYPE[row.category]: fn(mk(), mk()), TypeError, "dtype")
        dt = (bool if row.category in ("bool", "integer or boolean") else np.int64 if row.category == "integer"
              else np.float64)
        case(row.name, lambda fn=fn, dt=dt: fn(vec(6, dt), vec(5, dt)), ValueError, "shapes")

# NumPy's names (darray._api.numpy.names): the NumPy function of that name, handed DArrays
_INT_UFUNCS = {"bitwise_count", "bitwise_not", "gcd", "invert", "lcm", "left_shift", "right_shift"}
def _ufunc_operands(name: str, nin: int, shape=(6, 4)) -> list:
    if name == "ldexp":
        return [f64(shape), i64(shape)]
    return [(i64 if name in _INT_UFUNCS else f64)(shape) for _ in range(nin)]


#: NumPy's aliases (``mod`` is ``remainder``) raise under the ufunc's own name, as in NumPy.
UFUNC_ALIASES = {name for name in UFUNC_NAMES if getattr(np, name).__name__ != name}
for name in UFUNC_NAMES:
    fn, ufunc = getattr(da, name), getattr(np, name)
    said = ufunc.__name__
    if ufunc.nin == 2:
        case(said, lambda fn=fn: fn(f64(), object()), TypeError, "object", label=name)
        case(said, lambda fn=fn, name=name: fn(*_ufunc_operands(name, 1), *_ufunc_operands(name, 2, (6, 5))[1:]),
             ValueError, "shapes", label=name)
    outs = (lambda: da.zeros((2, 2))) if ufunc.nout == 1 else (lambda: (da.zeros((2, 2)), da.zeros((2, 2))))
    case(said, lambda fn=fn, name=name, nin=ufunc.nin, outs=outs: fn(*_ufunc_operands(name, nin), out=outs()),
         ValueError, "out-shape", label=name)
    if name in _INT_UFUNCS:
        case(said, lambda fn=fn, nin=ufunc.nin: fn(*[f64()] * nin), TypeError, "dtype", label=name)
_NUMPY_BAD = {  # NumPy name -> (bad call, NumPy's exception type)
    "allclose": (lambda: da.allclose(f64(), f64((3, 4))), ValueError),
    "amax": (lambda: da.amax(f64(), axis=2), AxisError),
    "amin": (lambda: da.amin(f64(), axis=(0, 0)), ValueError),
    "array_equal": (lambda: da.array_equal(f64()), TypeError),
    "concatenate": (lambda: da.concatenate([f64(), f64((6, 3))], axis=0), ValueError),
    "copy": (lambda: da.copy(f64(), order="Z"), ValueError),
    "cumprod": (lambda: da.cumprod(f64(), axis=3), AxisError),
    "cumsum": (lambda: da.cumsum(f64(), axis=-3), AxisError),
    "einsum": (lambda: da.einsum("ij,jk->ik", f64(), f64()), ValueError),
    "gradient": (lambda: da.gradient(f64(), axis=4), AxisError),
    "histogram": (lambda: da.histogram(f64(), bins=-1), ValueError),
    "isclose": (lambda: da.isclose(f64(), f64((3, 4))), ValueError),
    "median": (lambda: da.median(f64(), axis=7), AxisError),
    "nanargmax": (lambda: da.nanargmax(f64(), axis=2), AxisError),
    "nanargmin": (lambda: da.nanargmin(f64(), axis=-3), AxisError),
    "nancumprod": (lambda: da.nancumprod(f64(), axis=3), AxisError),
    "nancumsum": (lambda: da.nancumsum(f64(), axis=-3), AxisError),
    "nanmax": (lambda: da.nanmax(f64(), axis=2), AxisError),
    "nanmedian": (lambda: da.nanmedian(f64(), axis=7), AxisError),
    "nanmean": (lambda: da.nanmean(f64(), axis=2), AxisError),
    "nanmin": (lambda: da.nanmin(f64(), axis=2), AxisError),
    "nanpercentile": (lambda: da.nanpercentile(f64(), 150), ValueError),
    "nanprod": (lambda: da.nanprod(f64(), axis=2), AxisError),
    "nanquantile": (lambda: da.nanquantile(f64(), 0.5, axis=(0, 0)), ValueError),
    "nanstd": (lambda: da.nanstd(f64(), axis=2), AxisError),
    "nansum": (lambda: da.nansum(f64(), axis=2), AxisError),
    "nanvar": (lambda: da.nanvar(f64(), axis=2), AxisError),
    "ndim": (lambda: da.ndim(f64(), 1), TypeError),
    "outer": (lambda: da.outer(f64(), object()), TypeError),
    "pad": (lambda: da.pad(f64(), -1), ValueError),
    "percentile": (lambda: da.percentile(f64(), 150), ValueError),
    "ptp": (lambda: da.ptp(f64(), axis=2), AxisError),
    "quantile": (lambda: da.quantile(f64(), 0.5, axis=(0, 0)), ValueError),
    "shape": (lambda: da.shape(f64(), 1), TypeError),
    "size": (lambda: da.size(f64(), axis=2), IndexError),
    "transpose": (lambda: da.transpose(f64(), axes=(0, 0)), ValueError),
    "trapezoid": (lambda: da.trapezoid(f64(), da.asarray(np.arange(3.0)), axis=0), ValueError),
    "unique": (lambda: da.unique(f64(), axis=5), ValueError),  # numpy.exceptions.AxisError
}
_NUMPY_BAD.update({  # darray._api.numpy: stacking, products, statistics, mathematical
    "angle": (lambda: da.angle(object()), TypeError),
    "around": (lambda: da.around(b1()), TypeError),
    "array": (lambda: da.array(["a", "b"]), TypeError),
    "array_split": (lambda: da.array_split(f64(), 0), ValueError),
    "atleast_1d": (lambda: da.atleast_1d(object()), TypeError),
    "atleast_2d": (lambda: da.atleast_2d(object()), TypeError),
    "atleast_3d": (lambda: da.atleast_3d(object()), TypeError),
    "average": (lambda: da.average(f64(), axis=0, weights=vec(5)), ValueError),
    "bincount": (lambda: da.bincount(vec(6, np.float64)), TypeError),
    "column_stack": (lambda: da.column_stack([vec(6), vec(5)]), ValueError),
    "cross": (lambda: da.cross(vec(3), vec(4)), ValueError),
    "diagonal": (lambda: da.diagonal(vec()), ValueError),
    "trace": (lambda: da.trace(vec()), ValueError),
    "corrcoef": (lambda: da.corrcoef(f64((2, 3, 4))), ValueError),
    "cov": (lambda: da.cov(f64((2, 3, 4))), ValueError),
    "diag": (lambda: da.diag(f64((2, 3, 4))), ValueError),
    "digitize": (lambda: da.digitize(vec(), [[1.0, 2.0]]), ValueError),
    "dot": (lambda: da.dot(f64(), f64()), ValueError),
    "dstack": (lambda: da.dstack([]), ValueError),
    "hstack": (lambda: da.hstack([]), ValueError),
    "inner": (lambda: da.inner(f64(), f64((3, 5))), ValueError),
    "interp": (lambda: da.interp(vec(), [1.0, 2.0], [1.0]), ValueError),
    "nan_to_num": (lambda: da.nan_to_num(object()), TypeError),
    "ravel": (lambda: da.ravel(f64(), order="Z"), ValueError),
    "split": (lambda: da.split(vec(6), 4), ValueError),
    "swapaxes": (lambda: da.swapaxes(f64(), 0, 2), AxisError),
    "vdot": (lambda: da.vdot(vec(6), vec(5)), ValueError),
    "vstack": (lambda: da.vstack([f64(), f64((6, 3))]), ValueError),
})
NUMPY_ONLY = sorted({*mathematical.__all__, *products.__all__, *stacking.__all__, *statistics.__all__, "array"}
                    - {"i0", "kron", "unwrap"})  # these three have their own cases below
for name in FUNCTION_NAMES + tuple(NUMPY_ONLY):
    call, kind = _NUMPY_BAD[name]
    case(name, call, kind, "numpy")
case("norm", lambda: da.linalg.norm(f64((2, 3, 4)), ord=2), ValueError, "ndim", label="linalg.norm")
case("norm", lambda: da.linalg.norm(f64(), axis=(0, 1, 0)), ValueError, "axis", label="linalg.norm")

# creation
for name in ("zeros", "ones", "empty"):
    fn = getattr(da, name)
    case(name, lambda fn=fn: fn((-1, 3)), ValueError, "negative")
    case(name, lambda fn=fn: fn("abc"), TypeError, "shape-type")
    case(name, lambda fn=fn: fn((4, 3), dtype="object"), TypeError, "dtype")
    case(name, lambda fn=fn: fn((4, 3), split=2), AxisError, "split-axis")
    case(name, lambda fn=fn: fn((4, 3), split="rows"), ValueError, "split-str")
    case(name, lambda fn=fn: fn((4, 3), split=0, grid=(P + 1,)), ValueError, "grid")
    case(name, lambda fn=fn: fn((4, 3), split=0, sizes=[5] + [0] * (P - 1)), ValueError, "sizes")
    case(name, lambda fn=fn: fn((4, 3), halo=-1), ValueError, "halo")
    case(name, lambda fn=fn: fn((4, 3), halo=1, boundary="mirror"), ValueError, "boundary")
case("full", lambda: da.full((3,), "x"), TypeError, "fill")
case("full", lambda: da.full((3,), 1.0, split=(0, 0), grid=(P, 1)), ValueError, "split-twice")
for name in ("zeros_like", "ones_like", "empty_like"):
    fn = getattr(da, name)
    case(name, lambda fn=fn: fn(object()), TypeError, "not-array")  # array-likes are taken, as NumPy takes them
    case(name, lambda fn=fn: fn(f64(), dtype="U3"), TypeError, "dtype")
    case(name, lambda fn=fn: fn(f64(), split=5), AxisError, "split")
case("full_like", lambda: da.full_like("ab", 1.0), TypeError, "not-array")
case("full_like", lambda: da.full_like(f64(), 1.0, halo=-2), ValueError, "halo")
case("full_like", lambda: da.full_like(f64(), "abc"), TypeError, "str-fill")
case("full_like", lambda: da.full_like(vec(6, np.int8), 1000), OverflowError, "fill-overflow")
case("asarray", lambda: da.asarray(["a", "b"]), TypeError, "strings")
case("asarray", lambda: da.asarray([[1, 2], [3]]), ValueError, "ragged")
case("asarray", lambda: da.asarray(np.arange(6), split=1), AxisError, "split")
case("asarray", lambda: da.asarray(np.arange(6), split=0, sizes=[1] * (P + 1)), ValueError, "sizes")
case("asarray", lambda: da.asarray(np.arange(6), halo=7), ValueError, "halo-wide")
case("arange", lambda: da.arange(0, 10, 0), ValueError, "step0")
case("arange", lambda: da.arange("a"), TypeError, "str")
case("linspace", lambda: da.linspace(0, 1, num=-1), ValueError, "num")
case("linspace", lambda: da.linspace(0, 1, num=2.5), TypeError, "num-float")
case("eye", lambda: da.eye(-2), ValueError, "n")
case("eye", lambda: da.eye(3, dtype="object"), TypeError, "dtype")
case("tril", lambda: da.tril(vec()), ValueError, "1d")
case("triu", lambda: da.triu(object()), TypeError, "not-array")
case("meshgrid", lambda: da.meshgrid(vec(), vec(), indexing="zz"), ValueError, "indexing")
case("meshgrid", lambda: da.meshgrid(f64(), vec()), ValueError, "2d")
case("from_local", lambda: da.from_local("abc"), TypeError, "str")
case("from_local", lambda: da.from_local(np.zeros((2, 2)), split=3), AxisError, "split")
case("from_local", lambda: da.from_local(np.zeros((2, 2)), split=0, shape=(2 * P + 5, 2)), ValueError,
     "shape")

# statistical and searching
for name in ("sum", "prod", "min", "max", "mean", "var", "std", "all", "any"):
    fn = getattr(da, name)
    case(name, lambda fn=fn: fn(f64(), axis=2), AxisError, "axis")
    case(name, lambda fn=fn: fn(f64(), axis=(0, 0)), ValueError, "axis-twice")
    case(name, lambda fn=fn: fn(["a", "b"]), TypeError, "strings")
case("sum", lambda: da.sum(f64(), axis=0.5), TypeError, "axis-float")
case("mean", lambda: da.mean(f64(), axis=(0, 3)), AxisError, "axis-tuple")
case("var", lambda: da.var(f64(), correction="a"), TypeError, "correction")
case("std", lambda: da.std(b1(), axis=-3), AxisError, "axis-negative")
case("min", lambda: da.min(da.zeros((0, 3), split=0)), ValueError, "empty")
case("max", lambda: da.max(c128()), TypeError, "complex")
case("argmax", lambda: da.argmax(f64(), axis=2), AxisError, "axis")
case("argmax", lambda: da.argmax(da.zeros((0,), split=0)), ValueError, "empty")
case("argmin", lambda: da.argmin(c128()), TypeError, "complex")
case("argmin", lambda: da.argmin("x"), TypeError, "str")
case("count_nonzero", lambda: da.count_nonzero(f64(), axis=-3), AxisError, "axis")
case("count_nonzero", lambda: da.count_nonzero("3"), TypeError, "str")
case("nonzero", lambda: da.nonzero(da.asarray(1.0)), ValueError, "0d")
case("nonzero", lambda: da.nonzero({1: 0}), TypeError, "dict")
case("where", lambda: da.where(b1((6, 4)), f64((6, 4)), f64((5, 4))), ValueError, "shapes")
case("where", lambda: da.where("cond", f64(), f64()), TypeError, "condition-type")
case("searchsorted", lambda: da.searchsorted(f64(), vec()), ValueError, "2d")
case("searchsorted", lambda: da.searchsorted(vec(), vec(), side="middle"), ValueError, "side")
case("searchsorted", lambda: da.searchsorted(vec(), vec(), sorter=vec(5, np.int64)), ValueError, "sorter")

# sorting, sets, cumulative
case("sort", lambda: da.sort(c128()), TypeError, "complex")
case("sort", lambda: da.sort(f64(), axis=2), AxisError, "axis")
case("argsort", lambda: da.argsort(f64(), axis=-3), AxisError, "axis")
case("argsort", lambda: da.argsort(np.array(["a"])), TypeError, "numpy-strings")
case("array2string", lambda: da.array2string(vec(), floatmode="bogus"), ValueError, "floatmode")
case("array2string", lambda: da.array2string(vec(), precision="x"), TypeError, "precision")
case("array_repr", lambda: da.array_repr(vec(), precision=-2), ValueError, "precision")
case("array_str", lambda: da.array_str(vec(), precision=1.5), TypeError, "precision")
for name in ("unique_all", "unique_counts", "unique_inverse", "unique_values"):
    case(name, lambda fn=getattr(da, name): fn(object()), TypeError, "object")
# NumPy's other names (darray._api.numpy: misc, creation, index_tricks; io.numpy_files)
case("identity", lambda: da.identity(-1), ValueError, "n")
case("tri", lambda: da.tri(3, 3, 0.5), TypeError, "k")
for name in ("asanyarray", "ascontiguousarray", "asfortranarray"):
    case(name, lambda fn=getattr(da, name): fn(["a"]), TypeError, "strings", label=name)
case("asarray_chkfinite", lambda: da.asarray_chkfinite(vec() / 0.0), ValueError, "inf")
case("common_type", lambda: da.common_type(b1()), TypeError, "bool")
case("min_scalar_type", lambda: da.min_scalar_type(object()), TypeError, "object")
case("real_if_close", lambda: da.real_if_close("x"), TypeError, "str")
case("fix", lambda: da.fix(object()), TypeError, "object")
case("sinc", lambda: da.sinc("x"), TypeError, "str")
case("isposinf", lambda: da.isposinf(c128()), TypeError, "complex")
case("isneginf", lambda: da.isneginf(c128()), TypeError, "complex")
case("isreal", lambda: da.isreal(object()), TypeError, "object")
case("iscomplex", lambda: da.iscomplex(object()), TypeError, "object")
case("iscomplexobj", lambda: da.iscomplexobj(object()), TypeError, "object")
case("isrealobj", lambda: da.isrealobj(object()), TypeError, "object")
case("fromiter", lambda: da.fromiter(iter([1.0]), None), TypeError, "dtype")
case("fromfunction", lambda: da.fromfunction(lambda i: i, (-3,)), ValueError, "shape")
case("indices", lambda: da.indices((2, -1)), ValueError, "shape")
case("ix_", lambda: da.ix_([[0, 1]]), ValueError, "2d")
case("unravel_index", lambda: da.unravel_index(vec(6, np.int64), (2, 2)), ValueError, "bounds")
case("ravel_multi_index", lambda: da.ravel_multi_index((vec(6, np.int64),), (2, 2)), ValueError, "length")
case("logspace", lambda: da.logspace("a", 2), TypeError, "start")
case("geomspace", lambda: da.geomspace(0, 2), ValueError, "zero")
case("vander", lambda: da.vander(f64()), ValueError, "2d")
for name in ("bartlett", "blackman", "hamming", "hanning"):
    case(name, lambda fn=getattr(da, name): fn(2.5), TypeError, "M-float", label=name)
case("diagflat", lambda: da.diagflat("ab"), TypeError, "str")
case("flatnonzero", lambda: da.flatnonzero(object()), TypeError, "object")
case("argwhere", lambda: da.argwhere(object()), TypeError, "object")
for name in ("tril_indices", "triu_indices"):
    case(name, lambda fn=getattr(da, name): fn(-2), ValueError, "n", label=name)
for name in ("tril_indices_from", "triu_indices_from"):
    case(name, lambda fn=getattr(da, name): fn(vec()), ValueError, "1d", label=name)
case("mask_indices", lambda: da.mask_indices(-2, da.triu), ValueError, "n")
case("diag_indices", lambda: da.diag_indices(2.5), TypeError, "n-float")
case("diag_indices_from", lambda: da.diag_indices_from(f64()), ValueError, "not-square")
case("fromfile", lambda: da.fromfile(3.5), TypeError, "path")
case("frombuffer", lambda: da.frombuffer(b"abc", dtype="U1"), TypeError, "dtype")
case("fromstring", lambda: da.fromstring("a b", dtype="U1", sep=" "), TypeError, "dtype")
case("genfromtxt", lambda: da.genfromtxt(None), TypeError, "path")
case("loadtxt", lambda: da.loadtxt(None), TypeError, "path")
case("savetxt", lambda: da.savetxt("/nonexistent-dir/x.txt", f64((2, 2, 2))), ValueError, "3d")
case("cumulative_sum", lambda: da.cumulative_sum(f64()), ValueError, "2d-no-axis")
case("cumulative_sum", lambda: da.cumulative_sum(vec(), axis=1), AxisError, "axis")
case("cumulative_sum", lambda: da.cumulative_sum(b1(), axis=0), TypeError, "bool")
case("cumulative_prod", lambda: da.cumulative_prod(f64()), ValueError, "2d-no-axis")
case("cumulative_prod", lambda: da.cumulative_prod(vec(), dtype="U2"), TypeError, "dtype")
case("diff", lambda: da.diff(vec(), n=-1), ValueError, "n")
case("diff", lambda: da.diff(vec(), axis=1), AxisError, "axis")
case("diff", lambda: da.diff(f64(), prepend=vec(3)), ValueError, "prepend")

# manipulation and indexing
case("reshape", lambda: da.reshape(f64(), (5, 5)), ValueError, "size")
case("reshape", lambda: da.reshape(f64(), (-1, -1)), ValueError, "two-minus-one")
case("reshape", lambda: da.reshape(f64(), "ab"), TypeError, "str")
case("concat", lambda: da.concat([f64((6, 4)), f64((6, 3))], axis=0), ValueError, "shapes")
case("concat", lambda: da.concat([f64(), f64()], axis=2), AxisError, "axis")
case("concat", lambda: da.concat([]), ValueError, "empty")
case("stack", lambda: da.stack([vec(6), vec(5)]), ValueError, "shapes")
case("stack", lambda: da.stack([vec(), vec()], axis=3), AxisError, "axis")
case("unstack", lambda: da.unstack(f64(), axis=2), AxisError, "axis")
case("unstack", lambda: da.unstack(da.asarray(1.0)), ValueError, "0d")
case("flip", lambda: da.flip(f64(), axis=2), AxisError, "axis")
case("roll", lambda: da.roll(f64(), 1.5), TypeError, "shift")
case("roll", lambda: da.roll(f64(), (1, 2), axis=(0,)), ValueError, "shift-axis")
case("roll", lambda: da.roll(f64(), 1, axis=4), AxisError, "axis")
case("squeeze", lambda: da.squeeze(f64(), axis=0), ValueError, "not-one")
case("squeeze", lambda: da.squeeze(f64(), axis=5), AxisError, "axis")
case("expand_dims", lambda: da.expand_dims(f64(), axis=4), AxisError, "axis")
case("moveaxis", lambda: da.moveaxis(f64(), 0, 3), AxisError, "axis")
case("moveaxis", lambda: da.moveaxis(f64(), (0, 1), (0,)), ValueError, "lengths")
case("permute_dims", lambda: da.permute_dims(f64(), (0, 0)), ValueError, "repeated")
case("permute_dims", lambda: da.permute_dims(f64(), (0,)), ValueError, "short")
case("broadcast_to", lambda: da.broadcast_to(f64(), (5, 4)), ValueError, "shape")
case("broadcast_to", lambda: da.broadcast_to(f64(), (4,)), ValueError, "fewer-dims")
case("broadcast_shapes", lambda: da.broadcast_shapes((3,), (4,)), ValueError, "shapes")
case("broadcast_shapes", lambda: da.broadcast_shapes((3,), (-1,)), ValueError, "negative")
case("isin", lambda: da.isin("a", vec()), TypeError, "str")
case("isin", lambda: da.isin(vec(), "b"), TypeError, "x2-str")
case("from_dlpack", lambda: da.from_dlpack("abc"), TypeError, "str")
case("from_dlpack", lambda: da.from_dlpack(np.arange(6), split=3), AxisError, "split")
case("broadcast_arrays", lambda: da.broadcast_arrays(vec(6), vec(5)), ValueError, "shapes")
case("repeat", lambda: da.repeat(vec(), -1), ValueError, "negative")
case("repeat", lambda: da.repeat(f64(), 2, axis=3), AxisError, "axis")
case("tile", lambda: da.tile(vec(), (-1,)), ValueError, "negative")
case("tile", lambda: da.tile(vec(), "ab"), TypeError, "str")
case("take", lambda: da.take(vec(), [0, 6]), IndexError, "bounds")
case("take", lambda: da.take(vec(), [0.5]), IndexError, "float-index")
case("take", lambda: da.take(f64(), [0]), ValueError, "2d-no-axis")
case("take", lambda: da.take(f64(), [0], axis=2), AxisError, "axis")
case("take_along_axis", lambda: da.take_along_axis(f64(), vec(3, np.int64), axis=0), ValueError, "ndim")
case("take_along_axis", lambda: da.take_along_axis(vec(), vec(3, np.int64) + 10, axis=0), IndexError,
     "bounds")
case("take_along_axis", lambda: da.take_along_axis(vec(), vec(3), axis=0), IndexError, "float-index")
case("__getitem__", lambda: f64()[7], IndexError, "bounds", label="getitem")
case("__getitem__", lambda: f64()[0, 0, 0], IndexError, "too-many", label="getitem")
case("__getitem__", lambda: f64()[b1((5, 4))], IndexError, "mask-shape", label="getitem")
case("__getitem__", lambda: f64()["a"], IndexError, "str", label="getitem")
case("__setitem__", lambda: f64().__setitem__(slice(None), f64((5, 4))), ValueError, "shape", label="setitem")
case("__setitem__", lambda: f64().__setitem__((9, 0), 1.0), IndexError, "bounds", label="setitem")

# data types
case("astype", lambda: da.astype(f64(), "object"), TypeError, "object")
case("astype", lambda: da.astype(None, da.float32), TypeError, "none")
case("can_cast", lambda: da.can_cast("nonsense", da.float64), TypeError, "from")
case("can_cast", lambda: da.can_cast(da.float64, 3.5), TypeError, "to")
case("result_type", lambda: da.result_type(), ValueError, "none")
case("result_type", lambda: da.result_type("nonsense"), TypeError, "str")
case("isdtype", lambda: da.isdtype(da.float64, "weird kind"), ValueError, "kind")
case("isdtype", lambda: da.isdtype("float64x", "integral"), TypeError, "dtype")
case("finfo", lambda: da.finfo(da.int32), ValueError, "int")
case("iinfo", lambda: da.iinfo(da.float64), ValueError, "float")

# linear algebra (top level and darray.linalg)
case("matmul", lambda: da.matmul(f64((6, 4)), f64((5, 4))), ValueError, "inner")
case("matmul", lambda: da.matmul(da.asarray(1.0), f64()), ValueError, "0d")
case("matmul", lambda: f64((6, 4)) @ f64((5, 4)), ValueError, "operator")
case("matrix_transpose", lambda: da.matrix_transpose(vec()), ValueError, "1d")
case("tensordot", lambda: da.tensordot(f64((6, 4)), f64((5, 4)), axes=1), ValueError, "axes")
case("tensordot", lambda: da.tensordot(f64(), f64(), axes=-1), ValueError, "negative")
case("vecdot", lambda: da.vecdot(vec(6), vec(5)), ValueError, "shapes")
case("vecdot", lambda: da.vecdot(f64(), f64(), axis=3), AxisError, "axis")
LA = da.linalg
for name in ("cholesky", "det", "eigh", "eigvalsh", "inv", "slogdet", "svd", "svdvals", "qr", "pinv",
             "matrix_rank", "diagonal", "trace", "matrix_norm"):
    fn = getattr(LA, name)
    case(name, lambda fn=fn: fn(vec()), ValueError, "1d", label=f"linalg.{name}")
for name in ("cholesky", "det", "eigh", "eigvalsh", "inv", "slogdet"):
    fn = getattr(LA, name)
    case(name, lambda fn=fn: fn(f64((6, 4))), ValueError, "not-square", label=f"linalg.{name}")
for name in ("cholesky", "det", "inv", "svd", "qr"):
    case(name, lambda fn=getattr(LA, name): fn(b1((4, 4))), TypeError, "bool", label=f"linalg.{name}")
case("matmul", lambda: LA.matmul(f64((6, 4)), f64((6, 4))), ValueError, "inner", label="linalg.matmul")
case("matrix_transpose", lambda: LA.matrix_transpose(vec()), ValueError, "1d", label="linalg.matrix_transpose")
case("tensordot", lambda: LA.tensordot(f64(), vec(3), axes=1), ValueError, "axes", label="linalg.tensordot")
case("vecdot", lambda: LA.vecdot(vec(6), vec(4)), ValueError, "shapes", label="linalg.vecdot")
case("solve", lambda: LA.solve(sq(4), vec(5)), ValueError, "shapes", label="linalg.solve")
case("solve", lambda: LA.solve(f64((6, 4)), vec(6)), ValueError, "not-square", label="linalg.solve")
case("cross", lambda: LA.cross(vec(4), vec(4)), ValueError, "dim", label="linalg.cross")
case("cross", lambda: LA.cross(vec(3), vec(3), axis=2), AxisError, "axis", label="linalg.cross")
case("outer", lambda: LA.outer(f64(), vec()), ValueError, "2d", label="linalg.outer")
case("matrix_power", lambda: LA.matrix_power(sq(), 1.5), TypeError, "n", label="linalg.matrix_power")
case("matrix_power", lambda: LA.matrix_power(f64((6, 4)), 2), ValueError, "not-square",
     label="linalg.matrix_power")
case("matrix_norm", lambda: LA.matrix_norm(sq(), ord="bad"), ValueError, "ord", label="linalg.matrix_norm")
case("vector_norm", lambda: LA.vector_norm(vec(), ord="bad"), ValueError, "ord", label="linalg.vector_norm")
case("vector_norm", lambda: LA.vector_norm(vec(), axis=1), AxisError, "axis", label="linalg.vector_norm")
case("qr", lambda: LA.qr(sq(), mode="full"), ValueError, "mode", label="linalg.qr")
case("diagonal", lambda: LA.diagonal(sq(), offset=0.5), TypeError, "offset", label="linalg.diagonal")
case("trace", lambda: LA.trace(sq(), dtype="U1"), TypeError, "dtype", label="linalg.trace")

# fft
FFT = da.fft
for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
    fn = getattr(FFT, name)
    case(name, lambda fn=fn: fn(f64(), axis=2), AxisError, "axis", label=f"fft.{name}")
    case(name, lambda fn=fn: fn(vec(), n=0), ValueError, "n", label=f"fft.{name}")
    case(name, lambda fn=fn: fn(vec(), norm="sideways"), ValueError, "norm", label=f"fft.{name}")
    case(name, lambda fn=fn: fn(object()), TypeError, "object", label=f"fft.{name}")  # (array-likes are taken)
for name in ("fftn", "ifftn", "rfftn", "irfftn"):
    fn = getattr(FFT, name)
    case(name, lambda fn=fn: fn(f64(), axes=(0, 2)), AxisError, "axes", label=f"fft.{name}")
    case(name, lambda fn=fn: fn(f64(), s=(4,), axes=(0, 1)), ValueError, "s-axes", label=f"fft.{name}")
case("rfft", lambda: FFT.rfft(vec(8).astype(da.complex128)), TypeError, "complex", label="fft.rfft")
case("fftshift", lambda: FFT.fftshift(f64(), axes=3), AxisError, "axes", label="fft.fftshift")
case("ifftshift", lambda: FFT.ifftshift(f64(), axes=(0, 5)), AxisError, "axes", label="fft.ifftshift")
case("fftfreq", lambda: FFT.fftfreq(0), ValueError, "n", label="fft.fftfreq")
case("fftfreq", lambda: FFT.fftfreq(4.5), TypeError, "n-float", label="fft.fftfreq")
case("rfftfreq", lambda: FFT.rfftfreq(-3), ValueError, "n", label="fft.rfftfreq")
case("rfftfreq", lambda: FFT.rfftfreq(8, dtype="int64"), (TypeError, ValueError), "dtype", label="fft.rfftfreq")
for name in ("fft2", "ifft2", "rfft2", "irfft2"):  # NumPy's 2-d transforms of a 1-d array: no axis -2
    case(name, lambda fn=getattr(FFT, name): fn(vec()), AxisError, "1-d", label=f"fft.{name}")
# more NumPy functions (darray._api.numpy: sets, partition, arrange, bits)
for name in ("intersect1d", "union1d", "setdiff1d", "setxor1d"):
    case(name, lambda fn=getattr(da, name): fn(vec().astype(da.complex128), vec()), TypeError, "complex")
case("partition", lambda: da.partition(vec(), 6), ValueError, "kth")
case("argpartition", lambda: da.argpartition(vec(), 1.5), TypeError, "kth-float")
case("rot90", lambda: da.rot90(f64(), 1, (0, 0)), ValueError, "axes")
case("put", lambda: da.put(vec(), [6], [1.0]), IndexError, "bounds")
case("put_along_axis", lambda: da.put_along_axis(f64(), np.array([[9]]), 0.0, 1), IndexError, "bounds")
case("packbits", lambda: da.packbits(vec()), TypeError, "float")
case("unpackbits", lambda: da.unpackbits(vec(6, np.int64)), TypeError, "int64")

# random
case("default_rng", lambda: da.random.default_rng("seed"), TypeError, "seed", label="random.default_rng")
case("random", lambda: rng().random((-1,)), ValueError, "size", label="Generator.random")
case("random", lambda: rng().random((3,), dtype="int32"), TypeError, "dtype", label="Generator.random")
case("standard_normal", lambda: rng().standard_normal((3,), dtype="int64"), TypeError, "dtype",
     label="Generator.standard_normal")
case("standard_exponential", lambda: rng().standard_exponential((-2, 2)), ValueError, "size",
     label="Generator.standard_exponential")
case("normal", lambda: rng().normal(0.0, -1.0, size=(4,)), ValueError, "scale", label="Generator.normal")
case("uniform", lambda: rng().uniform(0.0, 1.0, size="ab"), TypeError, "size", label="Generator.uniform")
case("exponential", lambda: rng().exponential(-1.0, size=(4,)), ValueError, "scale",
     label="Generator.exponential")
case("integers", lambda: rng().integers(5, 2, size=(4,)), ValueError, "low-high", label="Generator.integers")
case("integers", lambda: rng().integers(0, 5, size=(4,), dtype="float64"), TypeError, "dtype",
     label="Generator.integers")
case("choice", lambda: rng().choice(5, size=(6,), replace=False), ValueError, "replace",
     label="Generator.choice")
case("choice", lambda: rng().choice(0, size=(2,)), ValueError, "empty", label="Generator.choice")
case("permutation", lambda: rng().permutation(-3), ValueError, "n", label="Generator.permutation")
case("shuffle", lambda: rng().shuffle(np.arange(4)), TypeError, "numpy", label="Generator.shuffle")
case("spawn", lambda: rng().spawn(-1), ValueError, "n", label="Generator.spawn")
case("spawn", lambda: rng().spawn("2"), TypeError, "str", label="Generator.spawn")

# stencils and overlap
ST = da.stencil
case("fuse", lambda: da.fuse(42), TypeError, "not-callable")
case("add", lambda: da.fuse(lambda a, b: a + b)(f64(), vec(5)), ValueError, "shapes", label="fused call")  # as eager
case("laplacian", lambda: ST.laplacian(f64(), order=3), ValueError, "order", label="stencil.laplacian")
case("laplacian", lambda: ST.laplacian(f64(), mode="sideways"), ValueError, "mode", label="stencil.laplacian")
case("laplacian", lambda: ST.laplacian(np.ones((4, 4))), TypeError, "numpy", label="stencil.laplacian")
case("gradient", lambda: ST.gradient(f64(), axis=3), AxisError, "axis", label="stencil.gradient")
case("gradient", lambda: ST.gradient(f64(), edge_order=3), ValueError, "edge_order", label="stencil.gradient")
case("correlate", lambda: ST.correlate(f64(), np.ones(3)), ValueError, "weights-ndim", label="stencil.correlate")
case("correlate", lambda: ST.correlate(f64(), np.ones((3, 3)), mode="sideways"), ValueError, "mode",
     label="stencil.correlate")
case("convolve", lambda: ST.convolve(f64(), np.ones((3, 3, 3))), ValueError, "weights-ndim",
     label="stencil.convolve")
case("convolve", lambda: ST.convolve(f64(), "ab"), TypeError, "weights-str", label="stencil.convolve")
case("uniform_filter", lambda: ST.uniform_filter(f64(), size=0), ValueError, "size",
     label="stencil.uniform_filter")
case("uniform_filter", lambda: ST.uniform_filter(f64(), size=2.5), TypeError, "size-float",
     label="stencil.uniform_filter")
case("gaussian_filter", lambda: ST.gaussian_filter(f64(), sigma=-1.0), ValueError, "sigma",
     label="stencil.gaussian_filter")
case("gaussian_filter", lambda: ST.gaussian_filter(f64(), sigma="a"), TypeError, "sigma-str",
     label="stencil.gaussian_filter")
case("pad", lambda: ST.pad(f64(), -1), ValueError, "width", label="stencil.pad")
case("pad", lambda: ST.pad(f64(), 1, mode="sideways"), ValueError, "mode", label="stencil.pad")
case("rank0", lambda: da.rank0(comm="world").__enter__(), TypeError, "comm")
case("print", lambda: da.print("x", comm="world"), TypeError, "comm")
case("map_overlap", lambda: da.map_overlap("not callable", f64()), TypeError, "func")
case("map_overlap", lambda: da.map_overlap(lambda b: b, f64(), depth=-1), ValueError, "depth")
case("map_overlap", lambda: da.map_overlap(lambda b: b, f64(), boundary="sideways"), ValueError, "boundary")
case("map_overlap", lambda: da.map_overlap(lambda b: b, f64((6, 4)), f64((5, 4))), ValueError, "shapes")

# layouts, utilities
case("redistribute", lambda: da.redistribute(f64(), split=2), AxisError, "split")
case("redistribute", lambda: da.redistribute(f64(), split=0, grid=(P + 1,)), ValueError, "grid")
case("redistribute", lambda: da.redistribute(f64(), split=0, sizes=[1] * P + [1]), ValueError, "sizes")
case("redistribute", lambda: da.redistribute(f64(), halo=-1), ValueError, "halo")
case("redistribute", lambda: da.redistribute(np.ones(3)), TypeError, "numpy")
case("plan_grid", lambda: da.plan_grid((4, 4), 0), ValueError, "nprocs")
case("plan_grid", lambda: da.plan_grid((4, -4), 2), ValueError, "shape")
case("explain", lambda: da.explain("abc"), TypeError, "str")
case("explain", lambda: da.explain((4, 4), nprocs=0), ValueError, "nprocs")
def _tracing_with_bad_comm():
    with da.tracing(comm="world"):
        da.sum(f64())


case("tracing", _tracing_with_bad_comm, TypeError, "comm")
case("default_communicator", lambda: da.default_communicator("mpi"), TypeError, "args")
case("__array_namespace_info__", lambda: da.__array_namespace_info__().default_dtypes(device="tpu:7"), ValueError,
     "device")
case("clip", lambda: da.clip(f64(), min=vec(5)), ValueError, "shapes")
case("clip", lambda: da.clip(c128(), min=0.0), TypeError, "complex")

# io (collective, the functions are documented to raise the same error everywhere)
case("save", lambda: da.io.save("/nonexistent-dir-darray/x.zarr", f64()), FileNotFoundError, "dir",
     label="io.save")
case("save", lambda: da.io.save("/tmp/x.zarr", np.ones(3)), TypeError, "numpy", label="io.save")
case("load", lambda: da.io.load("/nonexistent-dir-darray/x.zarr"), FileNotFoundError, "missing", label="io.load")
case("save_npy", lambda: da.io.save_npy("/tmp/x.npy", [1, 2]), TypeError, "list", label="io.save_npy")
case("load_npy", lambda: da.io.load_npy("/nonexistent-dir-darray/x.npy"), FileNotFoundError, "missing",
     label="io.load_npy")
case("save", lambda: da.io.save("/tmp/x.npz", f64()), ValueError, "npz", label="io.save")
case("load", lambda: da.io.load("/nonexistent-dir-darray/x.npy"), FileNotFoundError, "missing-npy", label="io.load")
case("load", lambda: da.io.load("/nonexistent-dir-darray/x.zarr", dataset="u"), ValueError, "dataset",
     label="io.load")

# nn layer constructors: arguments checked before anything is built, naming the layer and the argument
case("Conv2d", lambda: da.nn.Conv2d(1, 1, -3), ValueError, "kernel_size", label="nn.Conv2d")
case("Conv2d", lambda: da.nn.Conv2d(0, 1, 3), ValueError, "channels", label="nn.Conv2d")
case("Conv1d", lambda: da.nn.Conv1d(1, 1, 3, stride=0), ValueError, "stride", label="nn.Conv1d")
case("Conv3d", lambda: da.nn.Conv3d(1, 1, 3, padding=-1), ValueError, "padding", label="nn.Conv3d")
case("ConvTranspose2d", lambda: da.nn.ConvTranspose2d(1, 1, 2.5), TypeError, "kernel_size",
     label="nn.ConvTranspose2d")
case("MaxPool2d", lambda: da.nn.MaxPool2d(0), ValueError, "kernel_size", label="nn.MaxPool2d")
case("AvgPool1d", lambda: da.nn.AvgPool1d(2, stride=-1), ValueError, "stride", label="nn.AvgPool1d")
case("GroupNorm", lambda: da.nn.GroupNorm(0, 4), ValueError, "num_groups", label="nn.GroupNorm")

# NumPy's array-editing functions (darray/_api/numpy/edit.py)
case("append", lambda: da.append(f64(), vec(3), axis=0), ValueError, "ndim")
case("array_equiv", lambda: da.array_equiv(f64()), TypeError, "arity")
case("block", lambda: da.block([[f64()], f64()]), ValueError, "depths")
case("block", lambda: da.block((f64(), f64())), TypeError, "tuple")
case("delete", lambda: da.delete(f64(), 6, axis=0), IndexError, "bounds")
case("delete", lambda: da.delete(f64(), [True, False], axis=1), ValueError, "mask")
case("dsplit", lambda: da.dsplit(f64(), 2), ValueError, "ndim")
case("ediff1d", lambda: da.ediff1d(vec(), to_begin=1j), TypeError, "cast")
case("fliplr", lambda: da.fliplr(vec()), ValueError, "ndim")
case("flipud", lambda: da.flipud(da.asarray(1.0)), ValueError, "ndim")
case("hsplit", lambda: da.hsplit(f64(), 3), ValueError, "unequal")
case("insert", lambda: da.insert(f64(), 7, 0.0, axis=0), IndexError, "bounds")
case("insert", lambda: da.insert(f64(), [0, 1], vec(3), axis=0), ValueError, "broadcast")
case("resize", lambda: da.resize(f64(), (2, -3)), ValueError, "negative")
case("rollaxis", lambda: da.rollaxis(f64(), 0, 3), AxisError, "start")
case("row_stack", lambda: da.row_stack([f64(), vec(3)]), ValueError, "shapes")
case("trim_zeros", lambda: da.trim_zeros(f64(), "x"), ValueError, "trim")
case("vsplit", lambda: da.vsplit(vec(), 2), ValueError, "ndim")

# NumPy's selection functions (darray/_api/numpy/select.py)
case("choose", lambda: da.choose(da.asarray(np.full((6, 4), 5)), [f64(), f64()]), ValueError, "choice")
case("compress", lambda: da.compress([True] * 9, f64(), axis=0), IndexError, "bounds")
case("copyto", lambda: da.copyto(da.zeros((6, 4), dtype=da.int64), f64()), TypeError, "same_kind")
case("extract", lambda: da.extract(f64() > 1, vec(5)), IndexError, "bounds")
case("fill_diagonal", lambda: da.fill_diagonal(vec(), 1.0), ValueError, "2-d")
case("lexsort", lambda: da.lexsort([vec(6), vec(5)]), ValueError, "shape")
case("piecewise", lambda: da.piecewise(vec(), [vec() > 2, vec() > 3, vec() > 4], [1.0]), ValueError, "functions")
case("place", lambda: da.place(f64(), f64() > 3, []), ValueError, "empty")
case("putmask", lambda: da.putmask(f64(), vec() > 1, 1.0), ValueError, "size")
case("select", lambda: da.select([vec() > 1], [vec(), vec()]), ValueError, "length")
case("sort_complex", lambda: da.sort_complex(da.asarray(1.0)), AxisError, "0-d")

# NumPy's polynomial and function-application helpers (darray/_api/numpy: poly, apply, mathematical, products)
case("apply_along_axis", lambda: da.apply_along_axis(np.sum, 2, f64()), AxisError, "axis")
case("apply_over_axes", lambda: da.apply_over_axes(da.sum, f64(), [3]), AxisError, "axis")
case("i0", lambda: da.i0(c128()), TypeError, "complex")
case("kaiser", lambda: da.kaiser("3", 1.0), TypeError, "integer")
case("kron", lambda: da.kron(f64(), "x"), TypeError, "str")
case("poly", lambda: da.poly(f64()), ValueError, "square")
case("polyadd", lambda: da.polyadd(f64(), vec()), ValueError, "broadcast")
case("polyder", lambda: da.polyder(vec(), -1), ValueError, "positive")
case("polydiv", lambda: da.polydiv(f64(), vec()), ValueError, "1d")
case("polyfit", lambda: da.polyfit(vec(6), vec(5), 1), TypeError, "length")
case("polyint", lambda: da.polyint(vec(), -1), ValueError, "positive")
case("polymul", lambda: da.polymul(f64(), vec()), ValueError, "1d")
case("polysub", lambda: da.polysub(f64(), vec()), ValueError, "broadcast")
case("polyval", lambda: da.polyval(f64(), vec()), ValueError, "1-d")
case("roots", lambda: da.roots(f64()), ValueError, "rank-1")
case("unwrap", lambda: da.unwrap(vec(), axis=3), AxisError, "axis")
case("vectorize", lambda: da.vectorize(lambda a: a, signature="(n)->(")(vec()), ValueError, "signature")

# NumPy's histograms, matrix-vector products and the rest of numpy.linalg (numpy/histograms.py, numpy/linalg.py)
case("histogramdd", lambda: da.histogramdd(f64(), bins=0), ValueError, "bins")
case("histogramdd", lambda: da.histogramdd(c128()), TypeError, "complex")
case("histogram2d", lambda: da.histogram2d(vec(6), vec(5)), ValueError, "length")
case("histogram_bin_edges", lambda: da.histogram_bin_edges(vec(), "nonsense"), ValueError, "rule")
case("histogram_bin_edges", lambda: da.histogram_bin_edges(vec(), "auto", weights=vec()), TypeError, "weights")
case("matvec", lambda: da.matvec(f64(), vec(5)), ValueError, "core")
case("vecmat", lambda: da.vecmat(vec(5), f64()), ValueError, "core")
case("einsum_path", lambda: da.einsum_path("ij,jk", f64()), ValueError, "operands")
case("cond", lambda: LA.cond(vec()), ValueError, "1d", label="linalg.cond")
case("cond", lambda: LA.cond(sq(), 3), ValueError, "ord", label="linalg.cond")
case("eig", lambda: LA.eig(f64()), ValueError, "not-square", label="linalg.eig")
case("eigvals", lambda: LA.eigvals(f64()), ValueError, "not-square", label="linalg.eigvals")
case("lstsq", lambda: LA.lstsq(f64(), vec(5)), ValueError, "rows", label="linalg.lstsq")
case("lstsq", lambda: LA.lstsq(b1(), vec(6)), TypeError, "bool", label="linalg.lstsq")
case("multi_dot", lambda: LA.multi_dot([f64()]), ValueError, "one", label="linalg.multi_dot")
case("multi_dot", lambda: LA.multi_dot([f64(), f64(), sq()]), ValueError, "aligned", label="linalg.multi_dot")
case("tensorinv", lambda: LA.tensorinv(sq(), ind=0), ValueError, "ind", label="linalg.tensorinv")
case("tensorsolve", lambda: LA.tensorsolve(f64(), vec(5)), ValueError, "shapes", label="linalg.tensorsolve")

# the fault campaign's calls that raised different types per rank, or no darray error
case("normal", lambda: rng().normal(size=(2**40, 2**30)), ValueError, "too-big", label="Generator.normal")
case("uniform", lambda: rng().uniform(np.nan, 1.0, size=3), OverflowError, "nan-bound", label="Generator.uniform")
for _dtype in ("S3", "U3", "O"):
    case("astype", lambda d=_dtype: f64().astype(d), TypeError, f"method-{_dtype}", label="DArray.astype")
    case("astype", lambda d=_dtype: da.astype(f64(), d), TypeError, f"function-{_dtype}")
case("arange", lambda: da.arange(np.nan), ValueError, "nan")
case("nditer", lambda: da.nditer(f64(), op_flags=["readwrite"]), TypeError, "write")
case("load", lambda: da.io.load(123), TypeError, "int-path", label="io.load")
case("isfortran", lambda: da.isfortran(object()), TypeError, "object")
case("arange", lambda: da.arange(0, np.inf), ValueError, "inf")
case("Conv2d", lambda: da.nn.Conv2d(1, 1, 3)(np.ones((1, 1, 5, 5))), TypeError, "numpy-input", label="nn.Conv2d")
for _target in (5, 3, -1, -7):
    case("cross_entropy", lambda t=_target: da.nn.CrossEntropyLoss()(f64((4, 3)), da.asarray([0, t, 1, 2], split=0)),
         IndexError, f"target-{_target}", label="nn.CrossEntropyLoss")

# dask hand-off (darray.from_dask / darray.to_dask, also darray.interop.*); without dask: ImportError naming the function
try:
    import dask.array as _dask_array
except ImportError:
    _dask_array = None
case("from_dask", lambda: da.from_dask(np.zeros(3)), TypeError if _dask_array else ImportError, "numpy")
if _dask_array is not None:
    case("from_dask", lambda: da.from_dask(_dask_array.zeros((4, 4), chunks=2), split=2), ValueError, "split")
case("to_dask", lambda: da.to_dask(np.zeros(3)), TypeError, "numpy")
if P > 1 and _dask_array is not None:
    case("to_dask", lambda: da.to_dask(f64()), ValueError, "distributed")


# ------------------------------------------------------------------ checking one call
def _encode(text: str, size: int = 512) -> np.ndarray:
    buf = np.zeros(size, dtype=np.uint8)
    data = text.encode("utf-8", "replace")[:size]
    buf[:len(data)] = np.frombuffer(data, dtype=np.uint8)
    return buf


def _decode(buf) -> str:
    return bytes(np.asarray(buf, dtype=np.uint8)).rstrip(b"\0").decode("utf-8", "replace")


def check_bad_call(name: str, call, kind: type) -> None:
    COUNT["calls"] += 1
    try:
        result = call()
        exc = None
    except Exception as e:  # judged below
        exc = e
    short = name.split(".")[-1].strip("_")
    problem = ""
    if exc is None:
        problem = f"no exception (returned {type(result).__name__})"
    elif not isinstance(exc, kind):
        want = " or ".join(k.__name__ for k in kind) if isinstance(kind, tuple) else kind.__name__
        problem = f"raised {type(exc).__name__}: {exc}, expected {want}"
    elif short not in str(exc):
        problem = f"message does not name {short!r}: {type(exc).__name__}: {exc}"
    # every rank: the same type and message
    mine = f"{type(exc).__name__}" if exc is not None else "none"
    digest = hashlib.sha256(str(exc).encode()).hexdigest()[:16] if exc is not None else ""
    every = [_decode(b) for b in np.asarray(COMM.allgather(_encode(f"{mine}|{digest}")))]
    if len(set(every)) > 1:
        problem += f"; ranks disagree: {every}"
    failed = agree(COMM, not problem)
    # the communicator still works
    total = float(da.sum(da.ones(3 * P, split=0)))
    assert total == 3 * P, f"collective sum after a bad call gave {total}"
    assert not failed, f"{name}: {problem or 'failed on other ranks'} (ranks {failed} of {P})"
    COUNT["ok"] += 1


@pytest.mark.parametrize("name, call, kind", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_call(name, call, kind):
    check_bad_call(name, call, kind)


# ------------------------------------------------------------------ coverage of the table
def public_functions() -> set[str]:
    names = set()
    for n in da.__all__:
        obj = getattr(da, n)
        if callable(obj) and not isinstance(obj, type) and not isinstance(obj, np.dtype) and \
                obj is not getattr(np, n, None):  # NumPy's own helpers (issubdtype, seterr, ...) are NumPy's
            names.add(n)
    for _prefix, mod in (("linalg", da.linalg), ("fft", da.fft), ("stencil", da.stencil)):
        for n in mod.__all__:
            obj = getattr(mod, n)
            if callable(obj) and not isinstance(obj, type):
                names.add(n)
    names.add("default_rng")
    names |= {n for n, v in vars(da.random.Generator).items() if not n.startswith("_") and callable(v)}
    return names


def test_every_public_function_has_a_bad_call():
    covered = {c[1] for c in CASES} | UFUNC_ALIASES
    missing = sorted(public_functions() - covered)
    assert not missing, f"no bad-input row for: {missing}"


def test_zz_count():
    """Runs last: how many bad calls were tried on this rank count."""
    print(f"\ntest_bad_input: {COUNT['calls']} bad calls tried, {COUNT['ok']} behaved, table of {len(CASES)} "
          f"rows, at {P} rank(s)")
    assert COUNT["calls"] > 0
