"""Every distributed function of docs/numpy.md's table takes the operands NumPy takes, with NumPy's result.

The walk: each function of :func:`darray._api.numpy.coverage.coverage`
(``numpy``, ``numpy.linalg``, ``numpy.fft``) with status ``distributed`` or
``local-only`` has a sample call in :data:`SAMPLES` -- derived by kind where
the kind says it (NumPy's ufuncs by ``nin`` and loop types; reductions,
shape-keeping functions of one array, windows), an explicit row elsewhere --
or a reason in :data:`EXCLUDED` (it takes no array argument; it is not a
function). :func:`test_every_function_is_walked` fails on a function that has
neither, so a new function cannot escape the walk.

Each array argument of a sample (an :class:`A`) is passed, in turn, as a
DArray (split along axis 0 and replicated: the reference forms), a Python
list, a tuple, a NumPy ndarray and, where NumPy takes one there, a Python
scalar and a 0-d NumPy array; the other array arguments stay DArrays (the
mixtures), then all take the same array-like form (no DArray in the call:
darray must still accept it and return a DArray, or the same plain value
NumPy returns). Each result is compared with NumPy's on the same inputs
(``darray.testing.assert_equal``, agreed across ranks).

Integers meet floats on NumPy blocks only (the standard's strict libraries
refuse mixed-kind promotion), so every sample keeps its operands of one kind;
the functions that need NumPy blocks (NumPy's ufuncs without a standard
equivalent) are marked ``numpy_only``.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import darray as da
from darray._api.numpy import names as numpy_names
from darray._api.numpy.coverage import coverage
from darray.testing import assert_equal

from _cases import COMM

pytestmark = pytest.mark.mpi

NUMPY_BLOCKS = da.config.backend == "numpy"


@dataclass
class A:
    """An array argument of a sample: its NumPy value; ``scalar``: the Python scalar NumPy also takes there
    (``None``: NumPy takes none); ``target``: written in place (NumPy takes an ndarray only: no list)."""

    value: Any
    scalar: Any = None
    target: bool = False

    def __post_init__(self):
        self.value = np.asarray(self.value)


@dataclass
class Sample:
    """``f(*args, **kwargs)`` for a function ``f`` of darray and of NumPy; ``call(module, f, *args, **kwargs)``
    replaces the plain call (index objects, classes, in-place functions); ``compare(got, expected, msg)`` the
    plain comparison (factorizations unique up to signs)."""

    args: tuple
    kwargs: dict = field(default_factory=dict)
    call: Callable | None = None
    compare: Callable | None = None
    numpy_only: str = ""
    #: why darray returns NumPy arrays (held whole by every rank) here, as its docstring says
    whole: str = ""


def S(*args, call=None, compare=None, numpy_only="", whole="", **kwargs) -> Sample:
    return Sample(args, kwargs, call, compare, numpy_only, whole)


# ------------------------------------------------------------------ values (one kind per sample)
M = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])  # (2, 3): inside every ufunc's domain but arccosh's
V = np.array([0.7, 0.8, 0.9])  # broadcasts against M
Q = np.array([0.5, 0.25, 0.125, 1.0])  # 1-d, length 4
SQ = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]])  # symmetric positive definite
IM = np.array([[1, 2, 3], [4, 5, 6]])
IV = np.array([1, 2, 3])
B = np.array([[True, False, True], [False, True, True]])
BV = np.array([True, False, True])
IDX = np.array([0, 2])
C = M + 1j * V  # complex  # indices into a length-3 axis

# ------------------------------------------------------------------ samples derived by kind
#: Functions of the namespace that NumPy's ufuncs name.
UFUNCS = sorted(n for n in dir(np) if isinstance(getattr(np, n), np.ufunc) and getattr(np, n).signature is None)


def _ufunc_sample(name: str) -> Sample | None:
    u = getattr(np, name)
    types = {t.split("->")[0] for t in u.types}
    numpy_only = "" if name in numpy_names.STANDARD_EQUIVALENTS else \
        "a NumPy ufunc without a standard equivalent runs on NumPy blocks"
    samples = {"d": (A(M, 0.5), A(V, 2.0)), "l": (A(IM, 3), A(IV, 2)), "?": (A(B, True), A(BV, False))}
    # (the standard's logical functions take booleans only: NumPy's loops of floats are a dtype question)
    for kind in ("?", "d", "l") if name.startswith("logical_") else ("d", "l", "?"):
        if kind * u.nin in types:
            return Sample(samples[kind][:u.nin], numpy_only=numpy_only)
    return None


#: Functions of one array that keep or reduce it, sample ``f(M)``.
ONE_ARRAY = (
    "all any amax amin argmax argmin max min sum prod mean std var median ptp count_nonzero average cumsum cumprod "
    "nanargmax nanargmin nancumprod nancumsum nanmax nanmean nanmedian nanmin nanprod nanstd nansum nanvar "
    "ravel transpose copy flip fliplr flipud rot90 squeeze atleast_1d atleast_2d atleast_3d diagonal trace tril triu "
    "sort argsort nonzero argwhere flatnonzero unique unique_values unique_counts unique_inverse unique_all shape ndim "
    "size angle around round fix isreal iscomplex isrealobj iscomplexobj isneginf isposinf real_if_close "
    "nan_to_num diff ediff1d gradient matrix_transpose asarray asanyarray array ascontiguousarray asfortranarray "
    "asarray_chkfinite array2string array_repr array_str isfortran vstack hstack dstack column_stack row_stack "
    "concatenate stack unstack zeros_like ones_like i0 sinc unwrap corrcoef cov diag diagflat "
    "histogramdd"
).split()

#: Functions of one 1-d array, sample ``f(Q)``.
ONE_VECTOR = "sort_complex trim_zeros vander roots poly polyder polyint histogram histogram_bin_edges".split()

#: Reductions: also along an axis (the NumPy option by keyword).
AXIS = "all any amax amin argmax argmin max min sum prod mean std var median ptp count_nonzero average cumsum " \
       "cumprod nanargmax nanargmin nancumprod nancumsum nanmax nanmean nanmedian nanmin nanprod nanstd nansum " \
       "nanvar cumulative_sum cumulative_prod sort argsort".split()


def _one(name: str) -> Sample:
    return S(A(M)) if name not in AXIS else S(A(M), axis=0)


# ------------------------------------------------------------------ explicit rows
def _in_place(module, f, *args, **kwargs):
    """The in-place functions: the result is the written array (their first argument)."""
    f(*args, **kwargs)
    return args[0]


def _method(attr: str):
    def call(module, f, *args, **kwargs):
        return getattr(f, attr)(*args, **kwargs)
    return call


def _index(module, f, *args, **kwargs):
    return f[args]


def _apply(module, f, *args, **kwargs):  # vectorize, poly1d: a class applied to arrays
    return f(np.square)(*args) if f.__name__ == "vectorize" else f(*args).coeffs


def _abs_equal(got, expected, msg, whole):
    """Factorizations (qr, svd, eig) unique up to the signs of their vectors: compare magnitudes."""
    _compare(abs(got) if not isinstance(got, tuple) else tuple(map(abs, got)),
             abs(expected) if not isinstance(expected, tuple) else tuple(map(abs, expected)), msg, whole)


def _first(got, expected, msg, whole):
    """lstsq: the solution (the residuals and singular values are NumPy's LAPACK details)."""
    _compare(got[0], expected[0], msg, whole)


_SMALL = "the counts and edges of a histogram are small: NumPy arrays held whole by every rank"
EXPLICIT: dict[str, Sample] = {
    # gufuncs and products
    "matmul": S(A(M), A(V.reshape(3, 1))),
    "matvec": S(A(M), A(V)),
    "vecmat": S(A(V[:2]), A(M)),
    "vecdot": S(A(M), A(V)),
    "dot": S(A(M), A(V)),
    "vdot": S(A(V), A(V[::-1])),
    "inner": S(A(M), A(V)),
    "outer": S(A(V), A(Q)),
    "kron": S(A(M), A(V)),
    "tensordot": S(A(M), A(V), axes=1),
    "einsum": S("ij,j->i", A(M), A(V)),
    "einsum_path": S("ij,j->i", A(M), A(V)),
    "cross": S(A(M), A(V)),
    "isnat": S(A(np.array(["2020-01-01", "NaT", "2021-03-04"], dtype="datetime64[D]")),
               numpy_only="datetime64 arrays are held in NumPy blocks only"),
    "real": S(A(C)),
    "imag": S(A(C)),
    "ldexp": S(A(M, 0.5), A(IV, 2), numpy_only="a NumPy ufunc without a standard equivalent, of a float and an int"),
    "convolve": S(A(Q), A(V)),
    "correlate": S(A(Q), A(V)),
    "trapezoid": S(A(M)),
    # reductions and statistics with extra arguments
    "cumulative_sum": S(A(M), axis=0),
    "cumulative_prod": S(A(M), axis=0),
    "percentile": S(A(M), A(50.0, 50.0)),
    "quantile": S(A(M), A(np.array([0.25, 0.5]), 0.5)),
    "nanpercentile": S(A(M), A(50.0, 50.0)),
    "nanquantile": S(A(M), A(np.array([0.25, 0.5]), 0.5)),
    "average": S(A(M), axis=1, weights=A(V)),
    "histogram2d": S(A(Q), A(Q[::-1]), bins=2, whole=_SMALL),
    "histogram": S(A(Q), whole=_SMALL),
    "histogramdd": S(A(M), whole=_SMALL),
    "histogram_bin_edges": S(A(Q), whole=_SMALL),
    "digitize": S(A(M), A(np.array([0.25, 0.5]))),
    "interp": S(A(M, 0.5), A(Q[[2, 1, 0, 3]]), A(V[[0, 1, 2, 2]])),
    "searchsorted": S(A(np.array([0.1, 0.4, 0.7])), A(M, 0.5)),
    "bincount": S(A(IV), weights=A(V)),
    "lexsort": S(A(IM[:, ::-1])),
    "partition": S(A(Q), 1),
    "argpartition": S(A(Q), 1),
    "packbits": S(A(B)),
    "unpackbits": S(A(np.array([3, 255], dtype=np.uint8))),
    "polyval": S(A(V), A(M, 0.5)),
    "polyadd": S(A(V), A(Q)),
    "polysub": S(A(V), A(Q)),
    "polymul": S(A(V), A(Q)),
    "polydiv": S(A(Q), A(V)),
    "polyfit": S(A(Q), A(Q ** 2), 1),
    "poly1d": S(A(V), call=_apply, whole="a poly1d's coefficients are held whole by every rank"),
    "vectorize": S(A(M), call=_apply),
    "apply_along_axis": S(np.sum, 0, A(M)),
    "apply_over_axes": S(np.sum, A(M), [0]),
    "piecewise": S(A(Q), [A(Q < 0.4), A(Q >= 0.4)], [0.0, 1.0]),
    # comparisons of arrays
    "isclose": S(A(M, 0.5), A(V, 0.5)),
    "allclose": S(A(M, 0.5), A(V, 0.5)),
    "array_equal": S(A(M), A(M.copy())),
    "array_equiv": S(A(M), A(V)),
    "isin": S(A(M, 0.5), A(V)),
    "intersect1d": S(A(M), A(np.array([0.3, 0.9, 0.1]))),
    "union1d": S(A(M), A(V)),
    "setdiff1d": S(A(M), A(np.array([0.3, 0.9, 0.1]))),
    "setxor1d": S(A(M), A(np.array([0.3, 0.9, 0.1]))),
    # selection and indexing
    "where": S(A(B, True), A(M, 0.5), A(V, 2.0)),
    "select": S([A(B), A(~B)], [A(M), A(V)]),
    "choose": S(A(np.array([[0, 1, 0], [1, 0, 1]])), [A(M), A(M[::-1])]),
    "compress": S(A(BV[:2]), A(M), axis=0),
    "extract": S(A(B), A(M)),
    "clip": S(A(M, 0.5), A(0.2, 0.2), A(V - 0.4, 0.4)),
    "take": S(A(M), A(IDX, 1), axis=1),
    "take_along_axis": S(A(M), A(np.array([[0, 2, 1], [2, 1, 0]])), axis=1),
    "delete": S(A(M), A(IDX, 1), axis=1),
    "insert": S(A(M), A(IDX, 1), A(V[:2], 9.0), axis=1),
    "append": S(A(M), A(M[::-1]), axis=0),
    "compress_flat": None,
    "place": S(A(M, target=True), A(B), A(V[:2]), call=_in_place),
    "put": S(A(M, target=True), A(IDX, 1), A(V[:2], 9.0), call=_in_place),
    "putmask": S(A(M, target=True), A(B), A(V, 9.0), call=_in_place),
    "copyto": S(A(M, target=True), A(V, 9.0), call=_in_place),
    "fill_diagonal": S(A(SQ, target=True), 9.0, call=_in_place),
    "put_along_axis": S(A(M, target=True), A(np.array([[0], [2]])), A(np.array([[9.0], [8.0]]), 9.0), axis=1,
                        call=_in_place),
    "ravel_multi_index": S((A(IDX), A(IDX[::-1])), (3, 4)),
    "unravel_index": S(A(np.array([1, 5, 7]), 5), (3, 4)),
    "diag_indices_from": S(A(SQ)),
    "tril_indices_from": S(A(SQ)),
    "triu_indices_from": S(A(SQ)),
    "ix_": S(A(IDX), A(IV)),
    "c_": S(A(V), A(V[::-1]), call=_index),
    "r_": S(A(V), A(Q), call=_index),
    # shapes and manipulation
    "reshape": S(A(M), (3, 2)),
    "resize": S(A(M), (4, 2)),
    "repeat": S(A(M), A(np.array([1, 2, 1]), 2), axis=1),
    "tile": S(A(M), 2),
    "pad": S(A(M), 1),
    "roll": S(A(M), 1, axis=1),
    "moveaxis": S(A(M), 0, 1),
    "rollaxis": S(A(M), 1),
    "swapaxes": S(A(M), 0, 1),
    "permute_dims": S(A(M), (1, 0)),
    "expand_dims": S(A(M), 0),
    "broadcast_to": S(A(V, 0.5), (2, 3)),
    "broadcast_arrays": S(A(M), A(V, 0.5)),
    "split": S(A(Q), 2),
    "array_split": S(A(Q), 3),
    "hsplit": S(A(M.T), 2),
    "vsplit": S(A(M), 2),
    "dsplit": S(A(M.reshape(1, 3, 2)), 2),
    "concatenate": S([A(M), A(M[::-1])]),
    "concat": S([A(M), A(M[::-1])]),
    "stack": S([A(V), A(V[::-1])]),
    "vstack": S([A(M), A(V)]),
    "hstack": S([A(M), A(M)]),
    "dstack": S([A(M), A(M)]),
    "column_stack": S([A(V), A(V[::-1])]),
    "row_stack": S([A(M), A(V)]),
    "block": S([A(M), A(M)]),
    "astype": S(A(M), np.float32),
    "full_like": S(A(M), 2.0),
    "empty_like": S(A(M), call=lambda m, f, a: f(a).shape),
    "meshgrid": S(A(V), A(Q)),
    "trim_zeros": S(A(np.array([0.0, 1.0, 0.0, 2.0, 0.0]))),
    # creation from array arguments
    **{n: S(A(np.float64(0.5)), A(np.float64(1.5)), 5) for n in ("linspace", "logspace", "geomspace")},
    "full": S((2, 3), A(V, 2.0)),
    "from_dlpack": S(A(M), call=lambda m, f, a: f(a if isinstance(a, np.ndarray) or hasattr(a, "__dlpack__")
                                                 else np.asarray(a))),
    "min_scalar_type": S(A(IV, 3)),
    "result_type": S(A(M), A(V)),
    "can_cast": S(A(M), np.float32),
    "common_type": S(A(M), A(V)),
    # linalg, fft (``section.name``)
    **{f"linalg.{n}": S(A(SQ)) for n in ("cholesky", "det", "eigh", "eigvalsh", "eigvals", "inv", "matrix_rank",
                                          "pinv", "slogdet", "cond", "matrix_transpose", "svdvals", "norm",
                                          "matrix_norm", "trace", "diagonal", "vector_norm")},
    "linalg.eig": S(A(SQ), compare=_abs_equal),
    "linalg.eigh": S(A(SQ), compare=_abs_equal),
    "linalg.qr": S(A(SQ), compare=_abs_equal),
    "linalg.svd": S(A(SQ), compare=_abs_equal),
    "linalg.solve": S(A(SQ), A(V)),
    "linalg.lstsq": S(A(SQ), A(V), compare=_first),
    "linalg.tensorsolve": S(A(SQ), A(V)),
    "linalg.tensorinv": S(A(SQ), ind=1),
    "linalg.matrix_power": S(A(SQ), 2),
    "linalg.multi_dot": S([A(M), A(SQ), A(V)]),
    "linalg.cross": S(A(M), A(V)),
    "linalg.outer": S(A(V), A(Q)),
    "linalg.matmul": S(A(M), A(SQ)),
    "linalg.tensordot": S(A(M), A(V), axes=1),
    "linalg.vecdot": S(A(M), A(V)),
    **{f"fft.{n}": S(A(Q)) for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fftshift", "ifftshift")},
    **{f"fft.{n}": S(A(M)) for n in ("fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn")},
}
del EXPLICIT["compress_flat"]

_NO_ARRAY = "takes no array argument (sizes, shapes, dtypes, files, callables): nothing to convert"
_NOT_A_FUNCTION = "not a function taking arrays (a constant, a type or a submodule, walked itself)"
#: Distributed (or local-only) names that take no array: name -> why the walk leaves them out.
EXCLUDED: dict[str, str] = {
    **{n: _NO_ARRAY for n in (
        "arange", "empty", "zeros", "ones", "eye", "identity", "tri", "bartlett", "blackman", "hamming", "hanning",
        "kaiser", "frombuffer", "fromfile", "fromstring", "fromfunction", "fromiter", "load", "loadtxt",
        "genfromtxt", "indices", "diag_indices", "tril_indices", "triu_indices", "mask_indices", "broadcast_shapes",
        "isdtype", "finfo", "iinfo", "mgrid", "ogrid", "fft.fftfreq", "fft.rfftfreq")},
    **{n: _NOT_A_FUNCTION for n in ("e", "pi", "nan", "inf", "ndarray", "ufunc", "lib", "linalg", "fft", "random",
                                    "emath")},
    "save": "writes a file (compared by tests/test_io*.py); its array argument is converted like asarray's",
    "savetxt": "writes a file (tests/test_numpy_files.py); its array argument is converted like asarray's",
    "ndenumerate": "a Python iterator over elements, not a computation (tests/test_numpy_functions.py)",
    "nditer": "a Python iterator over elements, not a computation (tests/test_numpy_functions.py)",
}


def _samples() -> dict[str, Sample]:
    out: dict[str, Sample] = {}
    for name in ONE_ARRAY + ONE_VECTOR:
        out[name] = _one(name) if name in ONE_ARRAY else S(A(Q))
    for name in UFUNCS:
        sample = _ufunc_sample(name)
        if sample is not None:
            out[name] = sample
    out.update(EXPLICIT)
    return out


SAMPLES = _samples()


def walked() -> list[str]:
    """The names the walk covers: every distributed or local-only function of the numpy, linalg and fft sections."""
    rows = coverage(da)
    out = []
    for section in ("numpy", "numpy.linalg", "numpy.fft"):
        prefix = "" if section == "numpy" else section.split(".", 1)[1] + "."
        out += [prefix + n for n, (status, _) in rows[section].items() if status in ("distributed", "local-only")]
    return out


def test_every_function_is_walked():
    names = walked()
    missing = [n for n in names if n not in SAMPLES and n not in EXCLUDED]
    assert not missing, f"functions with neither a sample nor a reason in EXCLUDED: {missing}"
    stale = sorted(n for n in (set(SAMPLES) | set(EXCLUDED)) if n not in names)
    assert not stale, f"samples or exclusions of names that are not distributed darray functions: {stale}"
    assert not set(SAMPLES) & set(EXCLUDED), "a name both sampled and excluded"


# ------------------------------------------------------------------ the forms of one array argument
def _tuples(v):
    return tuple(_tuples(i) for i in v) if isinstance(v, list) else v


def forms(a: A) -> dict[str, Any]:
    """The array-like forms of ``a`` (a fresh copy of each) that NumPy takes there."""
    if a.target:
        return {"ndarray": a.value.copy()}
    out = {"list": a.value.tolist(), "tuple": _tuples(a.value.tolist()), "ndarray": a.value.copy()}
    if a.value.ndim == 0:
        out = {"0-d": a.value.copy(), "numpy scalar": a.value[()], "scalar": a.value.item()}
    elif a.scalar is not None:
        out.update({"scalar": a.scalar, "0-d": np.asarray(a.scalar)})
    return out


def _leaves(tree) -> list[A]:
    if isinstance(tree, A):
        return [tree]
    if isinstance(tree, (list, tuple)):
        return [leaf for t in tree for leaf in _leaves(t)]
    if isinstance(tree, dict):
        return [leaf for t in tree.values() for leaf in _leaves(t)]
    return []


def _fill(tree, pick):
    """``tree`` with each :class:`A` replaced by ``pick(a)``."""
    if isinstance(tree, A):
        return pick(tree)
    if isinstance(tree, (list, tuple)):
        return type(tree)(_fill(t, pick) for t in tree)
    if isinstance(tree, dict):
        return {k: _fill(t, pick) for k, t in tree.items()}
    return tree


def _darray(a: A, split):
    return da.asarray(a.value.copy(), split=split if a.value.ndim else None)


def cases(sample: Sample) -> list[tuple[str, dict[int, tuple[Any, Any]]]]:
    """(name, leaf index -> (darray's operand, NumPy's operand)) for one sample: the DArray reference forms, each
    leaf in each array-like form beside DArrays, then all leaves in one form (no DArray in the call)."""
    leaves = _leaves((sample.args, sample.kwargs))
    out = []
    for split in (0, None):
        out.append((f"DArray(split={split})", {i: ("darray", split) for i in range(len(leaves))}))
    for i, leaf in enumerate(leaves):
        for form in forms(leaf):
            out.append((f"arg {i} {form}" + (" with DArrays" if len(leaves) > 1 else ""),
                        {j: ("darray", 0) if j != i else ("form", form) for j in range(len(leaves))}))
    if len(leaves) > 1:
        common = set.intersection(*(set(forms(leaf)) for leaf in leaves))
        for form in ("list", "tuple", "ndarray", "scalar", "0-d"):
            if form in common:
                out.append((f"all {form}", {j: ("form", form) for j in range(len(leaves))}))
    return out


# ------------------------------------------------------------------ calling and comparing
def _flat(tree) -> list:
    if isinstance(tree, (list, tuple)):
        return [v for t in tree for v in _flat(t)]
    if isinstance(tree, dict):
        return [v for t in tree.values() for v in _flat(t)]
    return [tree]


def _resolve(module, name: str):
    for part in name.split("."):
        module = getattr(module, part)
    return module


def _plain(v) -> bool:
    return isinstance(v, (numbers.Number, np.generic, str, type, np.dtype, bool)) or v is None


def _compare(got, expected, msg: str, whole: bool = False) -> None:
    """``got`` (darray's) against ``expected`` (NumPy's): sequences item by item; arrays as DArrays (a 0-d NumPy
    scalar may come back as a Python or NumPy scalar of that value); other values with ``==``. ``whole``: a NumPy
    array equal to NumPy's is right too (no DArray in the call, or darray documents a result held whole)."""
    if isinstance(expected, (list, tuple)) and isinstance(got, da.DArray) and \
            all(isinstance(v, numbers.Number) for v in expected):  # (NumPy's trim_zeros slices a list or tuple)
        expected = np.asarray(expected)
    if isinstance(expected, (tuple, list)) and not isinstance(got, (str, np.ndarray)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected), \
            f"{msg}: got {type(got).__name__} {got!r}, expected {len(expected)} items"
        for i, (g, w) in enumerate(zip(got, expected)):
            _compare(g, w, f"{msg}[{i}]", whole)
        return
    if whole and isinstance(got, np.ndarray) and isinstance(expected, (np.ndarray, np.generic)):
        assert got.shape == np.shape(expected) and got.dtype == expected.dtype and \
            np.allclose(got, expected, equal_nan=True), f"{msg}: {got!r} != {expected!r}"
        return
    if isinstance(expected, np.ndarray) or (isinstance(expected, np.generic) and isinstance(got, da.DArray)):
        assert isinstance(got, da.DArray), f"{msg}: expected a DArray, got {type(got).__name__}"
        assert_equal(got, np.asarray(expected), err_msg=msg)
        return
    if isinstance(expected, np.generic):
        assert _plain(got) and np.asarray(got).dtype == expected.dtype or isinstance(got, (bool, int, float)), \
            f"{msg}: got {type(got).__name__} {got!r}, expected {expected!r}"
        assert np.allclose(got, expected, equal_nan=True), f"{msg}: {got!r} != {expected!r}"
        return
    if isinstance(expected, np.dtype) or isinstance(expected, type):
        assert np.dtype(got) == np.dtype(expected), f"{msg}: {got!r} != {expected!r}"
        return
    if isinstance(expected, str) and "array(" in expected:  # array_repr: darray spells its type
        return
    assert got == expected, f"{msg}: {got!r} != {expected!r}"


def run_sample(name: str, sample: Sample) -> list[str]:
    """Every case of ``name``'s sample; the failures (``AssertionError``s and exceptions), agreed by all ranks."""
    leaves = _leaves((sample.args, sample.kwargs))
    index = {id(leaf): i for i, leaf in enumerate(leaves)}
    ours, theirs = _resolve(da, name), _resolve(np, name)
    failures = []
    for case_name, plan in cases(sample):
        made: dict[int, tuple[Any, Any]] = {}
        for i, leaf in enumerate(leaves):
            kind, which = plan[i]
            if kind == "darray":
                made[i] = (_darray(leaf, which), leaf.value.copy())
            else:
                made[i] = (forms(leaf)[which], forms(leaf)[which])
        d_args = _fill((sample.args, sample.kwargs), lambda a: made[index[id(a)]][0])
        n_args = _fill((sample.args, sample.kwargs), lambda a: made[index[id(a)]][1])
        msg = f"{name}: {case_name}"
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # (row_stack)
                expected = sample.call(np, theirs, *n_args[0], **n_args[1]) if sample.call else \
                    theirs(*n_args[0], **n_args[1])
        except Exception as e:  # NumPy refuses this form: darray need not take it
            if case_name.startswith("DArray"):
                failures.append(f"{msg}: NumPy refuses the sample ({type(e).__name__}: {e}): fix the sample")
            continue
        alone = not _leaves(d_args) and not any(isinstance(v, da.DArray) for v in _flat(d_args))
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                got = sample.call(da, ours, *d_args[0], **d_args[1]) if sample.call else ours(*d_args[0], **d_args[1])
            written = sample.call is _in_place and isinstance(d_args[0][0], np.ndarray)  # NumPy's array, written
            (sample.compare or _compare)(got, expected, msg, alone or written or bool(sample.whole))
        except AssertionError as e:
            failures.append(str(e))
        except Exception as e:  # darray refused what NumPy took: the bug this test is for
            failures.append(f"{msg}: {type(e).__name__}: {e}")
    failed = COMM.allgather(np.array([len(failures)]))  # (each rank's own failures are in its report)
    others = [r for r in range(COMM.size) if int(failed[r][0]) and r != COMM.rank]
    return failures + ([f"{name}: also failed on ranks {others}"] if others else [])


def _params():
    out = []
    for name in walked():
        if name not in SAMPLES:
            continue
        sample = SAMPLES[name]
        marks = [pytest.mark.numpy_only] if sample.numpy_only else []
        out.append(pytest.param(name, marks=marks, id=name))
    return out


@pytest.mark.parametrize("name", _params())
def test_function_takes_numpy_operands(name):
    failures = run_sample(name, SAMPLES[name])
    assert not failures, "\n".join(failures)
