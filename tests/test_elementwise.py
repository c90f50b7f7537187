"""Elementwise functions, operators, broadcasting and type promotion against NumPy.

Every test is distributed (runs at 1, 2, 3 and 4 ranks). Inputs are global
NumPy arrays generated identically on every rank (seeded); a test takes one
layout of ``tests/_cases.py`` (its id names it), builds DArrays of it and
compares with NumPy on the same global input through
:func:`darray.testing.assert_equal`, which agrees on the verdict across ranks.
"""

from __future__ import annotations

import builtins
import functools
import operator
import warnings

import numpy as np
import pytest

import darray as da
from darray._core.elementwise import NUMPY_BOOL_ARITHMETIC
from darray._core.table import ELEMENTWISE
from darray.testing import agree, assert_equal, assert_raises_everywhere, backend_dtypes, uneven_sizes

from _cases import P, by_ndim, catalogue, each, generator, layouts

pytestmark = pytest.mark.mpi

# The Array API standard 2024.12, chapter "Element-wise Functions", written out.
ARRAY_API_ELEMENTWISE = [
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and", "bitwise_invert",
    "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "ceil", "clip", "conj", "copysign",
    "cos", "cosh", "divide", "equal", "exp", "expm1", "floor", "floor_divide", "greater", "greater_equal", "hypot",
    "imag", "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log10", "log1p", "log2", "logaddexp",
    "logical_and", "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative",
    "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder", "round", "sign", "signbit", "sin",
    "sinh", "sqrt", "square", "subtract", "tan", "tanh", "trunc",
]

# Array API name -> NumPy name where they differ.
NUMPY_NAME = {
    "acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh", "atan": "arctan",
    "atan2": "arctan2", "atanh": "arctanh", "bitwise_invert": "invert", "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift", "pow": "power",
}

# Dtypes tried per category of the table.
CATEGORY_DTYPES = {
    "bool": ["bool"],
    "integer": ["int64", "uint16"],
    "integer or boolean": ["int64", "uint8", "bool"],
    "real numeric": ["int32", "uint8", "float64"],
    "numeric": ["int64", "float64", "complex128"],
    "floating-point": ["float64", "float32", "complex128"],
    "real floating-point": ["float64", "float32"],
    "complex floating-point": ["complex128", "complex64"],
    "any": ["bool", "int64", "float64", "complex128"],
}
CATEGORY_DTYPES = {c: [d for d in ds if d in backend_dtypes()] for c, ds in CATEGORY_DTYPES.items()}  # torch: no uint16

# Real domains (lo, hi) of the first argument where the whole real line is not valid.
DOMAIN = {
    "acos": (-0.95, 0.95), "asin": (-0.95, 0.95), "atanh": (-0.95, 0.95), "acosh": (1.05, 5.0),
    "log": (0.1, 5.0), "log2": (0.1, 5.0), "log10": (0.1, 5.0), "log1p": (-0.9, 5.0), "sqrt": (0.0, 5.0),
    "pow": (0.5, 2.0), "exp": (-5.0, 5.0), "expm1": (-5.0, 5.0), "cosh": (-5.0, 5.0), "sinh": (-5.0, 5.0),
    "tan": (-1.4, 1.4),
}
NONZERO_SECOND = {"divide", "floor_divide", "remainder"}
SHAPE_1D = (13,)
SHAPE_2D = (7, 5)


#: Layouts per dimension: balanced, uneven with an empty block, replicated; 2-d: both axes, and 2x2 grids
#: (4 ranks), one of them holding copies.
LAYOUTS = {1: layouts(SHAPE_1D, "split0", "uneven0", "replicated"),
           2: layouts(SHAPE_2D, "split0", "split1", "uneven0", "uneven1", "replicated", "grid2x2", "grid2x2-10",
                      "grid2x2-0n")}
#: The layouts where every dtype of a category is tried (the others take the category's first dtype only).
FEW = {"1d-uneven0", "2d-split1", "2d-grid2x2"}


def uneven(a, **kw) -> da.DArray:
    """``a`` split unevenly along axis 0 (the second block empty)."""
    return catalogue(np.shape(a))["uneven0"].array(a, **kw)


def values(name: str, dtype: str, shape, seed: int, arg: int = 0) -> np.ndarray:
    """Global input ``arg`` of function ``name``: same values on every rank, valid for its domain."""
    rng = generator(seed, arg, name, dtype)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        lo, hi = (0, 40) if dt.kind == "u" else (-20, 20)
        if name in ("bitwise_left_shift", "bitwise_right_shift") and arg == 1:
            lo, hi = 0, 8
        elif name == "pow":
            lo, hi = (0, 4) if arg == 1 else (max(lo, -5), 6)
        elif name == "sqrt" or name.startswith("log"):
            lo = 1
        out = rng.integers(lo, hi, shape).astype(dt)
        if name in NONZERO_SECOND and arg == 1:
            out[out == 0] = 1
        return out
    lo, hi = DOMAIN.get(name, (-3.0, 3.0)) if arg == 0 else (-3.0, 3.0)
    if name == "pow" and arg == 1:
        lo, hi = -2.0, 2.0
    real = rng.uniform(lo, hi, shape)
    if name in NONZERO_SECOND and arg == 1:
        real = np.where(real < 0, real - 0.5, real + 0.5)
    # special values; not for complex sign, where array-api-compat (x/|x|) and NumPy differ at infinities
    if name in ("isnan", "isinf", "isfinite", "signbit", "sign") and real.size > 3 and not (
            name == "sign" and dt.kind == "c"):
        flat = real.reshape(-1)
        flat[[0, real.size // 2, real.size - 1]] = [np.nan, np.inf, -np.inf] if name != "signbit" else [-0.0, 0.0, -1]
    if dt.kind == "c":
        imag = rng.uniform(-0.5, 0.5, shape)
        return (real + 1j * imag).astype(dt)
    return real.astype(dt)


def numpy_func(name: str):
    return getattr(np, NUMPY_NAME.get(name, name))


# ---------------------------------------------------------------- the table
def test_table_is_the_array_api_list():
    names = sorted([row.name for row in ELEMENTWISE] + ["clip"])
    assert names == ARRAY_API_ELEMENTWISE
    assert len(ARRAY_API_ELEMENTWISE) == 67 == len(set(names))
    for name in ARRAY_API_ELEMENTWISE:
        assert name in da.__all__, name
        assert callable(getattr(da, name)), name


def dtypes_of(row) -> list[str]:
    """The dtypes tried for ``row``; true division of integers has its own test (test_divide_integers)."""
    dtypes = CATEGORY_DTYPES[row.category]
    return [d for d in dtypes if np.dtype(d).kind in "fc"] if row.name == "divide" else dtypes


def check_function(row, ndim: int, layout) -> None:
    """The category's first dtype on every layout; its other dtypes on a few telling layouts (:data:`FEW`)."""
    ref = numpy_func(row.name)
    key = f"{ndim}d-{layout}"
    first, *others = dtypes_of(row)
    for dtype in [first, *others] if key in FEW else [first]:
        args = [values(row.name, dtype, layout.shape, seed=1, arg=i) for i in range(row.nargs)]
        xs = [layout.array(a) for a in args]
        with np.errstate(all="ignore"):
            expected = ref(*args)
            got = getattr(da, row.name)(*xs)
        msg = f"{row.name} {dtype}"
        assert_equal(got, expected, err_msg=msg)
        assert got.layout.blocks_key == xs[0].layout.blocks_key, msg
        if key in ("1d-uneven0", "2d-split1"):
            for x, a in zip(xs, args):  # inputs untouched
                assert_equal(x, a, err_msg=f"{msg}: input modified")


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
@pytest.mark.parametrize("category", sorted({row.category for row in ELEMENTWISE}), ids=lambda c: c.replace(" ", "-"))
def test_function_matches_numpy(category, ndim, layout):
    """:func:`check_function` for every function of ``category`` (one failing function hides no other)."""
    each([row for row in ELEMENTWISE if row.category == category], lambda row: check_function(row, ndim, layout),
         name=lambda row: row.name)


@pytest.mark.parametrize("row", [r for r in ELEMENTWISE if r.nargs == 2], ids=lambda row: row.name)
def test_binary_function_mixed_operands(row):
    """Second operand with another layout, replicated, a NumPy array, a Python scalar."""
    dtype = dtypes_of(row)[0]
    shape = SHAPE_2D
    a, b = (values(row.name, dtype, shape, seed=2, arg=i) for i in range(2))
    ref, func = numpy_func(row.name), getattr(da, row.name)
    x = uneven(a)
    scalar = b.reshape(-1)[0].item()
    with np.errstate(all="ignore"):
        for other, other_np in ((da.asarray(b, split=1), b), (da.asarray(b, split=None), b), (b, b),
                                (scalar, scalar)):
            got = func(x, other)
            assert_equal(got, ref(a, other_np), err_msg=f"{row.name} with {type(other).__name__}")
            # the result takes the layout of one distributed operand: x's, or the other's when that one is
            # cut more evenly (x is uneven here; aligning to the balanced one moves the least)
            keys = [x.layout.blocks_key] + ([other.layout.blocks_key] if isinstance(other, da.DArray)
                                            and not other.layout.is_replicated else [])
            assert got.layout.blocks_key in keys
        # the distributed operand second: the result takes its layout
        y = da.asarray(b, split=1)
        got = func(da.asarray(a, split=None), y)
        assert_equal(got, ref(a, b))
        assert got.layout.blocks_key == y.layout.blocks_key


@pytest.mark.parametrize("row", [r for r in ELEMENTWISE if r.category in ("bool", "integer", "integer or boolean")],
                         ids=lambda row: row.name)
def test_float_operands_are_refused(row):
    x = da.asarray(np.linspace(0, 1, 13), split=0)
    assert_raises_everywhere(TypeError, getattr(da, row.name), *([x] * row.nargs), match=row.name)


def test_wrong_category_examples():
    f = da.asarray(np.linspace(0, 1, 13), split=0)
    i = da.arange(13, split=0)
    assert_raises_everywhere(TypeError, da.bitwise_and, f, f)
    assert_raises_everywhere(TypeError, da.bitwise_and, i, f)
    assert_raises_everywhere(TypeError, da.logical_and, f, f)
    assert_raises_everywhere(TypeError, da.bitwise_invert, f)
    assert_raises_everywhere(TypeError, lambda: f & i)
    assert_raises_everywhere(TypeError, lambda: ~f)
    assert_raises_everywhere(TypeError, lambda: f << 1)
    assert_raises_everywhere(TypeError, da.greater, f.astype(da.complex128), f)


def test_uneven_sizes_list_form_any_rank_count():
    """``sizes=[...]`` for a 1-d split, computed for the current rank count (also one rank)."""
    n = SHAPE_1D[0]
    a = np.arange(n, dtype=np.float64)
    x = da.asarray(a, split=0, sizes=uneven_sizes(n, P))
    assert_equal(da.sin(x) + x, np.sin(a) + a)


# ---------------------------------------------------------------- operators
BINARY_OPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
    "//": lambda a, b: a // b, "%": lambda a, b: a % b, "**": lambda a, b: a ** b,
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}
INT_OPS = {"&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
           "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b}
UNARY_OPS = {"-": lambda a: -a, "+": lambda a: +a, "abs": abs}


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_operators(ndim, layout):
    shape = layout.shape
    a = values("pow", "float64", shape, seed=3, arg=0)  # positive bases
    b = values("divide", "float64", shape, seed=3, arg=1)  # non-zero
    x, y = layout.array(a), layout.array(b)
    for op, f in BINARY_OPS.items():
        assert_equal(f(x, y), f(a, b), err_msg=op)
        assert_equal(f(x, 1.5), f(a, 1.5), err_msg=f"{op} scalar")
        assert_equal(f(1.5, x), f(1.5, a), err_msg=f"reflected {op}")
    for op, f in UNARY_OPS.items():
        assert_equal(f(y), f(b), err_msg=op)
    i = values("remainder", "int64", shape, seed=4, arg=0)
    j = values("bitwise_left_shift", "int64", shape, seed=4, arg=1)  # 0 <= j < 8
    xi, yi = layout.array(i), layout.array(j)
    for op, f in INT_OPS.items():
        assert_equal(f(xi, yi), f(i, j), err_msg=op)
        assert_equal(f(xi, 3), f(i, 3), err_msg=f"{op} scalar")
        assert_equal(f(5, yi), f(5, j), err_msg=f"reflected {op}")
    assert_equal(~xi, ~i)
    assert_equal(-xi, -i)
    assert_equal(abs(xi), np.abs(i))
    assert_equal(xi // (yi + 1), i // (j + 1))
    assert_equal(xi % (yi + 1), i % (j + 1))
    assert_equal(7 // (yi + 1), 7 // (j + 1))
    assert_equal(xi ** 2, i ** 2)
    bx, by = layout.array(i > 0), layout.array(j > 3)
    for op in ("&", "|", "^"):
        assert_equal(INT_OPS[op](bx, by), INT_OPS[op](i > 0, j > 3), err_msg=f"bool {op}")
    assert_equal(~bx, ~(i > 0))


@pytest.mark.numpy_only  # the operators' lean path is for NumPy blocks
def test_operators_decide_as_the_engine_on_every_dtype_pair():
    """On small whole arrays the operators skip the engine (``darray._core.operators``, the lean path, with
    NumPy deciding the dtypes where :func:`numpy_decides` says it refuses what darray refuses): every operator
    on every pair of darray dtypes, and with Python ``int`` / ``float`` scalars on both sides, gives what the
    function form (the engine) gives: the same dtype and values, or the same exception."""
    from darray._core.dtypes import DTYPES
    from darray._core.table import BINARY_OPERATORS

    arrays = [da.asarray(np.array([1, 2, 3]).astype(name)) for name in DTYPES]
    assert all(x.layout.small_whole for x in arrays)
    wrong = []

    def outcome(call):
        try:
            out = call()
        except Exception as error:  # compared below
            return type(error)  # (the messages name the function, the operator's reflected or NumPy's name)
        return out.dtype, np.asarray(out.local).tolist()

    for row in BINARY_OPERATORS.values():
        op, func = getattr(operator, row.operator), getattr(da, row.name)
        for x in arrays:
            for y in arrays + [2, 1.5]:
                for a, b in ((x, y), (y, x)):
                    got, expected = outcome(lambda: op(a, b)), outcome(lambda: func(a, b))
                    if got != expected:
                        wrong.append((row.operator, getattr(a, "dtype", a), getattr(b, "dtype", b), got, expected))
    assert agree(da.default_communicator(), not wrong) == [], wrong[:5]


@pytest.mark.numpy_only  # the lean path is for NumPy blocks
def test_unary_functions_decide_as_the_engine_on_every_dtype():
    """``darray.sqrt(x)`` and every other one-argument function of the table on a small whole array (the
    lean path of ``darray.ufunc``, after the engine accepted the dtype once) gives what the engine gives."""
    from darray._core.dtypes import DTYPES

    wrong = []
    for row in (r for r in ELEMENTWISE if r.nargs == 1 and isinstance(getattr(da, r.name, None), da.ufunc)):
        for name in DTYPES:
            x = da.asarray(np.array([0, 1, 3]).astype(name))
            outcomes = []
            f = getattr(da, row.name)
            for call in (lambda: f(x), lambda: f(x), lambda: f(x, order="K")):  # (a keyword: NumPy's general path)
                try:
                    with np.errstate(all="ignore"):
                        out = call()
                    outcomes.append((out.dtype, np.asarray(out.local).tolist()))
                except TypeError:
                    outcomes.append(TypeError)
            if len({repr(o) for o in outcomes}) != 1:
                wrong.append((row.name, name, outcomes))
    assert agree(da.default_communicator(), not wrong) == [], wrong[:3]


def test_reflected_scalars():
    a = np.arange(1, 14, dtype=np.float64)
    x = uneven(a)
    assert_equal(2 - x, 2 - a)
    assert_equal(2.5 * x, 2.5 * a)
    assert_equal(1 / x, 1 / a)
    assert_equal(2 ** x, 2 ** a)
    assert_equal(7 % x, 7 % a)
    assert_equal(7 // x, 7 // a)
    assert_equal((1 + 2j) * x, (1 + 2j) * a)


@pytest.mark.not_on("array_api_strict", reason="true division of integer arrays is unspecified by the standard")
@pytest.mark.not_on("torch", reason="torch divides integer arrays into its default float32 (NumPy: float64); "
                                    "unspecified by the standard")
def test_divide_integers():
    """NumPy's true division of integer arrays gives float64 (the standard leaves it unspecified)."""
    a, b = values("divide", "int64", SHAPE_2D, seed=3), values("divide", "int64", SHAPE_2D, seed=3, arg=1)
    x = uneven(a)
    y = da.asarray(b, split=1)
    for got, expected in ((x / y, a / b), (da.divide(x, 3), a / 3), (7 / y, 7 / b)):
        assert got.dtype == expected.dtype == np.float64
        assert_equal(got, expected)


@pytest.mark.not_on("array_api_strict", reason="a Python bool scalar with a float array is unspecified by the standard")
def test_reflected_bool_scalar():
    a = np.arange(1, 14, dtype=np.float64)
    x = uneven(a)
    assert_equal(True + x, True + a)


def test_inplace_operators():
    a = np.arange(35, dtype=np.float64).reshape(7, 5) + 1
    b = np.linspace(1, 2, 35).reshape(7, 5)
    x, y = uneven(a), uneven(b)
    layout = x.layout
    ident = id(x)
    x += y
    a += b
    x *= 2
    a *= 2
    x -= 1.5
    a -= 1.5
    x /= y
    a /= b
    x **= 2
    a **= 2
    x //= 0.5
    a //= 0.5
    x %= 7
    a %= 7
    assert id(x) == ident and x.layout == layout
    assert_equal(x, a)
    assert_equal(y, b)  # the other operand is untouched


def test_inplace_other_layout_is_redistributed():
    a = np.arange(35, dtype=np.float64).reshape(7, 5)
    b = np.linspace(-1, 1, 35).reshape(7, 5)
    x = uneven(a)
    layout = x.layout
    y = da.asarray(b, split=1)
    x += y
    a += b
    assert x.layout == layout
    assert_equal(x, a)
    assert_equal(y, b)
    x *= da.asarray(b, split=None)  # replicated operand
    a *= b
    assert_equal(x, a)
    x -= b[0]  # a NumPy operand that broadcasts
    a -= b[0]
    assert_equal(x, a)
    x += da.asarray(b[:, :1], split=0)  # (7, 1) broadcast, distributed differently
    a += b[:, :1]
    assert_equal(x, a)
    xi = da.arange(13, split=0)
    xi <<= 2
    xi |= da.asarray(np.full(13, 1), split=None)
    xi ^= 3
    xi &= 0xFF
    xi >>= 1
    i = np.arange(13)
    i <<= 2
    i |= 1
    i ^= 3
    i &= 0xFF
    i >>= 1
    assert_equal(xi, i)
    if P == 4:
        g = da.asarray(a, split=(0, 1), grid=(2, 2))
        g += da.asarray(b, split=(1, 0), grid=(2, 2))
        assert_equal(g, a + b)


def test_inplace_refusals():
    xi = uneven(np.arange(13))
    xf = da.asarray(np.linspace(0, 1, 13), split=0)

    def iadd(x, y):
        x += y

    def imul(x, y):
        x *= y

    assert_raises_everywhere(Exception, iadd, xi, 2.5)  # int += float: NumPy's same_kind casting refuses
    assert_raises_everywhere(Exception, iadd, xi, xf)
    assert_raises_everywhere(Exception, imul, xf, 1j)
    assert_equal(xi, np.arange(13))  # nothing was written
    col = da.asarray(np.ones((7, 1)), split=0)
    assert_raises_everywhere(ValueError, iadd, col, da.ones((7, 5), split=0))  # would change the shape


# ---------------------------------------------------------------- broadcasting
@pytest.mark.parametrize("layout", LAYOUTS[2], ids=str)
def test_broadcasting(layout):
    n, m = SHAPE_2D
    a = np.arange(n * m, dtype=np.float64).reshape(n, m)
    x = layout.array(a)
    row, col = np.linspace(1, 2, m), np.linspace(-1, 1, n).reshape(n, 1)
    cases = [
        (da.asarray(row, split=None), row),
        (da.asarray(row, split=0), row),
        (da.asarray(col, split=0), col),
        (da.asarray(row.reshape(1, m), split=1), row.reshape(1, m)),
        (da.asarray(np.float64(2.5)), np.float64(2.5)),
        (row, row),  # a NumPy operand: replicated data
        (col, col),
    ]
    for other, other_np in cases:
        got = x + other
        assert_equal(got, a + other_np, err_msg=f"{np.shape(other_np)}")
        assert got.layout.blocks_key == x.layout.blocks_key
        assert_equal(x.__rsub__(other), other_np - a, err_msg=f"reflected {np.shape(other_np)}")
        assert_equal(da.maximum(other, x), np.maximum(other_np, a))
    other = da.asarray(a[::-1].copy(), split=1 if layout.kw.get("split") == 0 else 0)
    assert_equal(x * other, a * a[::-1])


@pytest.mark.numpy_only(reason="NumPy ufuncs on a DArray (np.sin(x), out=, where=, ndarray <op> DArray) run on NumPy "
                               "blocks only")
def test_numpy_array_on_the_left():
    """``ndarray op DArray`` must give a DArray (the DArray's reflected operator), not a gathered ndarray."""
    n, m = SHAPE_2D
    a = np.arange(n * m, dtype=np.float64).reshape(n, m)
    row = np.linspace(1, 2, m)
    x = uneven(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = row - x
        prod = np.float64(2.0) * x  # a NumPy scalar on the left
    assert isinstance(got, da.DArray), type(got)
    assert_equal(got, row - a)
    assert isinstance(prod, da.DArray), type(prod)
    assert_equal(prod, 2.0 * a)


def pairs(first, second) -> list:
    """``(a, b)`` parameters over pairs of catalogue layouts ``(name of a, name of b)`` of shapes ``first`` and
    ``second`` (a ``(shape, names)`` each), ids ``{a}-{b}``."""
    (sa, na), (sb, nb) = first, second
    return [pytest.param(a, b, id=f"{a}-{b}") for a in layouts(sa, *na) for b in layouts(sb, *nb)]


@pytest.mark.parametrize("kc,kr", [
    *pairs(((7, 1), ["split0"]), ((1, 5), ["split1", "replicated"])),
    *pairs(((7, 1), ["replicated"]), ((1, 5), ["split1", "replicated"])),
    *pairs(((7, 1), ["uneven0"]), ((1, 5), ["replicated"]))])
def test_outer_broadcast(kc, kr):
    """A column plus a row: the result has both their lengths."""
    n, m = SHAPE_2D
    c, r = np.arange(n, dtype=np.float64).reshape(n, 1), np.arange(m, dtype=np.float64).reshape(1, m) * 10
    got = kc.array(c) + kr.array(r)
    assert got.shape == (n, m)
    assert_equal(got, c + r)
    assert_equal(da.atan2(kc.array(c), kr.array(r)), np.arctan2(c, r))


@pytest.mark.parametrize("ka,kb", pairs(((4, 7, 5), ["split0", "split1", "uneven2"]),
                                        ((7, 5), ["split0", "split1", "replicated"])))
def test_broadcast_3d(ka, kb):
    a = np.arange(4 * 7 * 5, dtype=np.float64).reshape(4, 7, 5)
    b = np.linspace(0, 1, 7 * 5).reshape(7, 5)
    x, y = ka.array(a), kb.array(b)
    assert_equal(x * y, a * b)
    assert_equal(y - x, b - a)


def test_non_broadcastable_shapes():
    x = da.ones((7, 5), split=0)
    assert_raises_everywhere(ValueError, da.add, x, da.ones((7,), split=0), match="add")
    assert_raises_everywhere(ValueError, lambda: x * da.ones((4, 5), split=None), match="multiply")
    assert_raises_everywhere(ValueError, da.atan2, x, np.ones(3), match="atan2")
    assert_raises_everywhere(ValueError, da.clip, x, np.zeros(3), match="clip")


# ---------------------------------------------------------------- promotion
# bool is not numeric in the Array API: darray (like array-api-strict) refuses it in arithmetic.
PAIRS = [("int8", "int16"), ("float32", "float64"), ("uint8", "int8"), ("int32", "float32"), ("int8", "float32"),
         ("float32", "complex64"), ("float64", "complex64"), ("uint16", "uint32"), ("int64", "uint8"),
         ("uint32", "int32"), ("uint64", "int64")]


@pytest.mark.parametrize("d1,d2", PAIRS)
def test_type_promotion(d1, d2):
    a = values("add", d1, SHAPE_1D, seed=5)
    b = values("add", d2, SHAPE_1D, seed=6)
    x, y = da.asarray(a, split=0), uneven(b)
    with np.errstate(all="ignore"):
        expected = a * b
    got = x * y
    assert got.dtype == expected.dtype == np.result_type(a.dtype, b.dtype)
    assert_equal(got, expected)


@pytest.mark.parametrize("dtype,scalar", [("int32", 2.5), ("float32", 2.5), ("int8", 1), ("uint8", 3),
                                          ("float32", 1j), ("uint16", 2.0), ("int64", 1j), ("int16", True)])
def test_python_scalar_promotion(dtype, scalar):
    """NEP 50: Python scalars are weak; compare with what NumPy gives."""
    a = values("add", dtype, SHAPE_1D, seed=7)
    x = da.asarray(a, split=0)
    for got, expected in ((x + scalar, a + scalar), (scalar * x, scalar * a)):
        assert got.dtype == expected.dtype
        assert_equal(got, expected)


@pytest.mark.not_on("torch", reason="torch wraps a Python int outside the array's dtype (NumPy 2 raises "
                                    "OverflowError); unspecified by the standard")
def test_python_int_out_of_range():
    """NumPy 2 refuses ``uint8_array + 300`` (OverflowError); so does darray, on every rank."""
    x = uneven(np.arange(13, dtype=np.uint8))
    with pytest.raises(OverflowError):
        np.arange(3, dtype=np.uint8) + 300
    assert_raises_everywhere(OverflowError, lambda: x + 300)


def test_data_type_functions():
    dtypes = [np.dtype(d) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                                    "float32", "float64", "complex64", "complex128")]
    for d1 in dtypes:
        for d2 in dtypes:
            assert da.can_cast(d1, d2) == np.can_cast(d1, d2), (d1, d2)
            assert da.result_type(d1, d2) == np.result_type(d1, d2), (d1, d2)
    x = da.zeros((13,), dtype=da.int16, split=0)
    assert da.can_cast(x, da.int32) and not da.can_cast(x, da.int8)
    y = uneven(np.ones(13, dtype=np.float32))
    assert da.result_type(x, y) == np.result_type(np.int16, np.float32)
    assert da.result_type(x, da.int8, np.dtype("uint8")) == np.int16
    for scalar in (2.5, 1, 1j, True):  # NEP 50: Python scalars are weak
        assert da.result_type(y, scalar) == np.result_type(np.float32, scalar), scalar
        assert da.result_type(x, scalar) == np.result_type(np.int16, scalar), scalar
    assert_raises_everywhere(ValueError, da.result_type)
    kinds = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"]
    for d in dtypes:
        for kind in kinds:
            assert da.isdtype(d, kind) == np.isdtype(d, kind), (d, kind)
        assert da.isdtype(d, ("integral", "bool")) == np.isdtype(d, ("integral", "bool"))
        assert da.isdtype(d, d) and not da.isdtype(d, da.float64 if d != np.float64 else da.float32)
    for d in ("float32", "float64", "complex64", "complex128"):
        f, g = da.finfo(np.dtype(d)), np.finfo(np.dtype(d))
        assert (f.bits, f.eps, f.max, f.min, f.smallest_normal, f.dtype) == \
               (g.bits, g.eps, g.max, g.min, g.smallest_normal, g.dtype)
    assert da.finfo(da.ones(3, dtype=da.float32)).eps == np.finfo(np.float32).eps
    for d in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        f, g = da.iinfo(np.dtype(d)), np.iinfo(np.dtype(d))
        assert (f.bits, f.max, f.min, f.dtype) == (g.bits, g.max, g.min, g.dtype)
    assert da.iinfo(x).max == np.iinfo(np.int16).max
    assert_raises_everywhere(ValueError, da.finfo, da.int32)
    assert_raises_everywhere(ValueError, da.iinfo, da.float64)


# ---------------------------------------------------------------- clip, astype
@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_clip(ndim, layout):
    shape = layout.shape
    a = values("add", "float64", shape, seed=8)
    x = layout.array(a)
    assert_equal(da.clip(x, -1.0, 1.5), np.clip(a, -1.0, 1.5))
    assert_equal(da.clip(x, min=0.0), np.clip(a, 0.0, None))
    assert_equal(da.clip(x, max=0.0), np.clip(a, None, 0.0))
    assert_equal(da.clip(x), a)
    lo, hi = values("add", "float64", shape, seed=9) - 1, values("add", "float64", shape, seed=10) + 1
    lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)  # min > max: unspecified by the standard (strict raises)
    other = dict(split=None) if layout.kw.get("split") is not None else dict(split=0)
    got = da.clip(x, da.asarray(lo, **other), hi)  # a DArray of another layout and a NumPy array
    assert_equal(got, np.clip(a, lo, hi))
    assert got.layout.blocks_key == x.layout.blocks_key
    lo_row = lo.reshape(-1, shape[-1])[0]
    assert_equal(da.clip(x, da.asarray(lo_row, split=None), None), np.clip(a, lo_row, None))
    i = values("add", "int32", shape, seed=11)
    xi = layout.array(i)
    got = da.clip(xi, -3, 4)
    assert got.dtype == np.int32
    assert_equal(got, np.clip(i, -3, 4))
    assert_equal(da.clip(xi, layout.array(np.full(shape, -2, dtype=np.int32)), 5), np.clip(i, -2, 5))
    assert_equal(x, a)  # input untouched


@pytest.mark.parametrize("layout", layouts((5,), "split0", "replicated"), ids=str)
def test_clip_broadcasts_to_the_bounds_shape(layout):
    """Bounds with more dimensions than x: the result has the broadcast shape, as NumPy's (and the standard's)."""
    a = values("add", "float64", (5,), seed=12)
    lo = np.minimum(values("add", "float64", (3, 5), seed=13) - 1, 0.5)  # min > max: unspecified (strict raises)
    x = layout.array(a)
    assert_equal(da.clip(x, da.asarray(lo, split=0), 1.0), np.clip(a, lo, 1.0))
    assert_equal(da.clip(x, lo, None), np.clip(a, lo, None))


def test_clip_empty_and_unbroadcastable_bounds():
    a = values("add", "float64", (5,), seed=12)
    empty = da.asarray(np.zeros(0), split=0)
    assert_equal(da.clip(empty, np.zeros((0, 0)), 1.0), np.clip(np.zeros(0), np.zeros((0, 0)), 1.0))
    assert_raises_everywhere(ValueError, da.clip, da.asarray(a, split=0), np.zeros((3, 4)), 1.0)


def test_clip_refusals():
    z = da.asarray(np.ones(13, dtype=np.complex128), split=0)
    assert_raises_everywhere(TypeError, da.clip, z, 0, 1)
    assert_raises_everywhere(TypeError, da.clip, ["a", "b"], 0, 1)


def test_clip_takes_array_likes():
    """NumPy's array-likes as ``x``: a list, a tuple, a NumPy array (replicated input), as ``np.clip`` takes."""
    for x in ([1, 5, -2], (1.5, 0.25), np.arange(7) - 3):
        assert_equal(da.clip(x, 0, 1), np.clip(x, 0, 1))


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_astype(ndim, layout):
    shape = layout.shape
    a = (np.arange(np.prod(shape)).reshape(shape) - 20).astype(np.int64)
    x = layout.array(a)
    for dtype in ("float64", "float32", "int32", "int16", "complex128"):
        y = x.astype(dtype)
        assert y.dtype == np.dtype(dtype) and y.layout == x.layout
        assert_equal(y, a.astype(dtype))
        if dtype != "complex128":  # complex -> integer: test_astype_complex_to_integer
            assert_equal(da.astype(y, da.int64), a)
    assert_equal(x.astype(da.bool), a.astype(bool))
    assert_equal(x.astype(da.uint8), a.astype(np.uint8))
    assert_equal(da.astype(x.astype(da.float32), da.float64), a.astype(np.float64))
    f = da.astype(x, da.float64)
    c = da.astype(f, da.float64, copy=True)
    c += 1  # a copy: f must not change
    assert_equal(f, a.astype(np.float64))
    assert_equal(c, a + 1.0)
    assert da.astype(f, da.float64, copy=False) is f


@pytest.mark.not_on("array_api_strict", reason="complex -> integer casts are forbidden by the standard")
def test_astype_complex_to_integer():
    a = np.arange(13, dtype=np.int64) - 5
    y = uneven(a.astype(np.complex128) + 2j)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's ComplexWarning, torch's UserWarning
        assert_equal(da.astype(y, da.int64), a)  # the imaginary part is dropped


# ---------------------------------------------------------------- temporaries
@pytest.mark.parametrize("layout", layouts(SHAPE_2D, "split0", "uneven0", "replicated"), ids=str)
def test_temporaries_do_not_overwrite_named_arrays(layout):
    a_np = np.linspace(1, 2, 35).reshape(7, 5)
    b_np = np.linspace(-3, 3, 35).reshape(7, 5)
    c_np = np.linspace(0.5, 5, 35).reshape(7, 5)
    a, b, c = (layout.array(v) for v in (a_np, b_np, c_np))
    assert_equal(a * b + c, a_np * b_np + c_np)
    assert_equal(a * b + c * a - b / c, a_np * b_np + c_np * a_np - b_np / c_np)
    assert_equal(da.add(da.multiply(a, b), c), a_np * b_np + c_np)
    assert_equal(-(a + b) * (c - a), -(a_np + b_np) * (c_np - a_np))
    d = a * b
    e = d + c  # d is named now: it must survive
    assert_equal(d, a_np * b_np)
    assert_equal(e, a_np * b_np + c_np)
    assert_equal(((a + 1) * 2 - 3) / 4, ((a_np + 1) * 2 - 3) / 4)
    # Python scalars on either side (reflected operators reuse temporaries too)
    assert_equal(0.25 * (a + b) - 2.0 * c, 0.25 * (a_np + b_np) - 2.0 * c_np)
    assert_equal(1.0 - 3 * (2.0 / (a * c)), 1.0 - 3 * (2.0 / (a_np * c_np)))
    assert_equal(2 ** (a * 0.5) + 1j * b, 2 ** (a_np * 0.5) + 1j * b_np)
    s = a * 2.0
    t = 3.0 * s  # s is named: it must survive
    assert_equal(s, a_np * 2.0)
    assert_equal(t, a_np * 6.0)
    assert_equal(5.0 - a, 5.0 - a_np)
    # operands held by containers, arguments and C callers are not temporaries
    items, named = [a, b, c], {"a": a, "b": b}
    assert_equal(items[0] * items[1] + items[2], a_np * b_np + c_np)
    assert_equal(named["a"] + named["b"] - items[2], a_np + b_np - c_np)

    def f(u, v):
        return u * v + u - v

    assert_equal(f(a, b), a_np * b_np + a_np - b_np)
    assert_equal(f(a + b, c), (a_np + b_np) * c_np + (a_np + b_np) - c_np)
    assert_equal(functools.reduce(operator.add, items), a_np + b_np + c_np)
    assert_equal(builtins.sum(items), a_np + b_np + c_np)
    assert_equal(list(map(operator.mul, items, items))[1], b_np * b_np)
    for x, v in ((a, a_np), (b, b_np), (c, c_np)):
        assert_equal(x, v)


def test_temporaries_do_not_write_user_buffers(comm):
    """Arrays wrapped without a copy (from_local) keep the user's data intact."""
    rank, p = comm.rank, comm.size
    buf = np.arange(5, dtype=np.float64) + 10 * rank + 1
    buf2 = np.linspace(1, 2, 5) + rank
    keep, keep2 = buf.copy(), buf2.copy()
    x = da.from_local(buf, split=0)
    want = np.concatenate([np.arange(5, dtype=np.float64) + 10 * r + 1 for r in range(p)])
    want2 = np.concatenate([np.linspace(1, 2, 5) + r for r in range(p)])
    assert_equal(x * 2.0 + 1.0, want * 2 + 1)
    assert_equal(da.from_local(buf, split=0) * da.from_local(buf2, split=0) + 1.0, want * want2 + 1)
    assert_equal(da.from_local(buf, split=0) + da.from_local(buf2, split=0), want + want2)
    assert_equal(-da.from_local(buf, split=0) * 3.0, -want * 3)
    assert_equal(da.sqrt(da.from_local(buf, split=0)) + da.from_local(buf2, split=0), np.sqrt(want) + want2)
    assert np.array_equal(buf, keep) and np.array_equal(buf2, keep2)


@pytest.mark.parametrize("layout", layouts(SHAPE_2D, "replicated", "split0", "split1"), ids=str)
def test_temporaries_do_not_write_the_buffer_of_asarray_without_copy(comm, layout):
    """``asarray(g, copy=False)`` keeps the user's ``g`` intact."""
    g = np.linspace(1, 3, 35).reshape(7, 5)
    g_keep = g.copy()
    y = layout.array(g, copy=False)
    assert_equal(y * y + y, g_keep * g_keep + g_keep)
    assert_equal(layout.array(g, copy=False) * 2.0 + layout.array(g, copy=False), g_keep * 3)
    assert_equal(da.exp(layout.array(g, copy=False)) - 1.0, np.exp(g_keep) - 1)
    assert agree(comm, np.array_equal(g, g_keep)) == []


def test_zero_d_and_empty():
    s = da.asarray(np.float64(3.0))
    assert_equal(da.sin(s) * 2, np.sin(3.0) * 2)
    assert float(s + 1) == 4.0
    t = s * 2  # a 0-d result: its block must be an array (in-place ops write into it)
    assert getattr(t.local, "ndim", None) == 0, type(t.local)  # not a NumPy scalar
    t += 1
    assert_equal(t, np.float64(7.0))
    u = da.sin(s)
    u *= 2
    assert_equal(u, np.sin(3.0) * 2)
    assert_equal(s * 2.0 + s, np.float64(9.0))  # the temporary s * 2.0 may be reused
    m = da.sum(da.arange(10.0, split=0)) / 10  # a 0-d result of a reduction and a division
    assert_equal(m * 2.0 + m, np.float64(13.5))
    z = np.array(4.0)  # 0-d: the block may be the user's array itself
    assert_equal(da.asarray(z, copy=False) * 2.0 + da.asarray(z, copy=False), np.float64(12.0))
    assert float(z) == 4.0
    e = da.zeros((0, 5), split=0)
    assert_equal(da.exp(e) + 1, np.exp(np.zeros((0, 5))) + 1)
    e1 = da.asarray(np.zeros(0), split=0)
    assert_equal(e1 * 2 + e1, np.zeros(0))


@pytest.mark.numpy_only  # the standard takes no booleans in arithmetic: array_api_strict refuses them
@pytest.mark.parametrize("layout", LAYOUTS[1], ids=str)
@pytest.mark.parametrize("name", sorted(NUMPY_BOOL_ARITHMETIC))
def test_boolean_arithmetic_as_numpy(name, layout):
    """``mask * 2``, ``b + 1.5``, ``b > 0``, ``abs(b)`` on NumPy blocks: NumPy's values and dtypes."""
    rng = np.random.default_rng(21)
    b = rng.random(13) > 0.5
    ints = rng.integers(1, 5, 13)
    f, g = getattr(da, name), getattr(np, "power" if name == "pow" else name)
    x = layout.array(b)
    with np.errstate(all="ignore"):
        if name in ("abs", "conj", "isfinite", "isinf", "isnan", "real", "square"):
            cases = [((x,), (b,))]
        else:
            cases = [((x, x), (b, b)), ((x, 2), (b, 2)), ((x, da.asarray(ints, split=None)), (b, ints))]
            if name not in ("floor_divide", "remainder", "pow"):
                cases.append(((x, 1.5), (b, 1.5)))
        for args, np_args in cases:
            assert_equal(f(*args), g(*np_args), err_msg=f"{name}{tuple(type(a).__name__ for a in np_args)}")


@pytest.mark.numpy_only
def test_complex_powers_are_numpys_bits():
    """``z ** 2``, ``z ** -1``, ``z ** 0.5`` (and in place): NumPy's operator squares, inverts and takes the
    square root there (not ``power``, whose complex algorithm rounds otherwise): the same bits here, on NumPy
    blocks (other local libraries compute their own ``power``)."""
    rng = np.random.default_rng(3)
    for dtype in ("complex64", "complex128"):
        z = (rng.standard_normal(101) + 1j * rng.standard_normal(101)).astype(dtype)
        for p in (2, -1, 0.5, 2.0, -1.0, 3, 1.5, -2, 1, 0):
            with np.errstate(all="ignore"):
                want = z ** p
                got = np.asarray(da.asarray(z, split=0) ** p)
                inplace, expected = da.asarray(z.copy(), split=0), z.copy()
                inplace **= p
                expected **= p
            assert np.array_equal(got, want, equal_nan=True), (dtype, p)
            assert np.array_equal(np.asarray(inplace), expected, equal_nan=True), (dtype, p, "in place")
