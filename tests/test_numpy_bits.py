"""NumPy's bits: every elementwise function and operator of the table gives NumPy's exact result on NumPy blocks.

Generated from darray's one elementwise table (``darray._core.table``): each
function, on every dtype of its category (float16 included), with special
values (signed zeros, infinities, NaN, tiny and huge), in every operand form
(two DArrays, a DArray and a Python scalar either side, a list, a NumPy
array; the function, the operator and its in-place form). The comparison is bitwise: the
same dtype, NaN where NumPy has NaN, and otherwise the same bits (``-0.0``
is not ``0.0``). The only differences are the standard's special cases that
darray keeps on purpose (``darray._core.special_cases``, listed in
:data:`STANDARD_NOT_NUMPY`), and each is checked to differ only there.
"""

from __future__ import annotations

import operator

import numpy
import pytest

import darray as np
from darray._core.dtypes import CATEGORIES
from darray._core.table import ELEMENTWISE

from _cases import layouts

pytestmark = [pytest.mark.mpi, pytest.mark.numpy_only]  # NumPy's bits are NumPy blocks' bits

LAYOUT = layouts((12,), "uneven0")[0] if layouts((12,), "uneven0") else layouts((12,), "replicated")[0]
DTYPES = ["bool", "int8", "int64", "uint8", "uint64", "float16", "float32", "float64", "complex64", "complex128"]
_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.75, numpy.inf, -numpy.inf, numpy.nan, 1e-30, 7.0]
_INTS = [0, 1, -1, 2, 3, -7, 5, 100, -100, 9, 4, -3]


def _values(dtype: str, shift: int = 0) -> numpy.ndarray:
    kind = numpy.dtype(dtype).kind
    if kind == "b":
        return numpy.array([bool((i + shift) % 3) for i in range(12)])
    if kind in "iu":
        ints = numpy.roll(numpy.array(_INTS), shift)
        return (numpy.abs(ints) % 7 if kind == "u" or dtype == "int8" else ints).astype(dtype)
    floats = numpy.roll(numpy.array(_FLOATS), shift)
    with numpy.errstate(over="ignore"):
        if kind == "c":
            return (floats + 1j * numpy.roll(floats, 5)).astype(dtype)
        return floats.astype(dtype)


#: ``(function, what differs)``: the standard's special cases darray computes instead of NumPy's artefacts.
def _none(a) -> numpy.ndarray:
    return numpy.zeros(numpy.shape(a), bool)


STANDARD_NOT_NUMPY = {
    # NumPy's floor_divide goes through divmod: inf // 2 is NaN there, inf (floor(inf / 2)) in the standard
    "floor_divide": lambda a, b: numpy.isinf(a) | numpy.isinf(b) if a.dtype.kind == "f" else _none(a),
    # NumPy's expm1 of a non-finite complex is NaN; the standard's is exp(z) - 1
    "expm1": lambda a, b=None: ~numpy.isfinite(a) if a.dtype.kind == "c" else _none(a),
    # NumPy computes x ** 0.5 as sqrt (numpy/numpy#21213): -inf gives NaN, -0.0 gives -0.0; pow gives inf, +0.0
    "pow": lambda a, b: (numpy.isneginf(a) | (a == 0)) & (b == 0.5) if a.dtype.kind == "f" else _none(a),
}


def _same_bits(got, want, allowed=None) -> list[int]:
    """Positions where ``got`` (gathered) and NumPy's ``want`` differ bitwise (NaN anywhere equals NaN)."""
    got, want = numpy.asarray(got), numpy.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "fc":
        real = want.dtype.kind == "f"
        pairs = [(got, want)] if real else [(got.real, want.real), (got.imag, want.imag)]
        bad = numpy.zeros(want.shape, bool)
        for g, w in pairs:
            both_nan = numpy.isnan(g) & numpy.isnan(w)
            bits = g.view(f"u{g.itemsize}") != w.view(f"u{w.itemsize}")
            bad |= bits & ~both_nan
    else:
        bad = got != want
    if allowed is not None:
        bad &= ~allowed
    return numpy.flatnonzero(bad).tolist()


def _rows(nargs: int):
    return [row for row in ELEMENTWISE if row.nargs == nargs]


def _dtypes_of(row) -> list[str]:
    return [d for d in DTYPES if numpy.dtype(d).kind in CATEGORIES[row.category]]


@pytest.mark.parametrize("row", _rows(1), ids=lambda r: r.name)
def test_unary_functions_give_numpys_bits(row):
    for dtype in _dtypes_of(row):
        g = _values(dtype)
        with numpy.errstate(all="ignore"):
            want = getattr(numpy, row.name)(g)
            got = getattr(np, row.name)(LAYOUT.array(g))
        allowed = STANDARD_NOT_NUMPY[row.name](g) if row.name in STANDARD_NOT_NUMPY else None
        assert not _same_bits(got, want, allowed), f"{row.name}({dtype}) at {_same_bits(got, want, allowed)}"
        if row.operator:  # -x, +x, abs(x), ~x
            with numpy.errstate(all="ignore"):
                got = getattr(operator, row.operator)(LAYOUT.array(g))
            assert not _same_bits(got, want, allowed), f"{row.operator} {dtype}"


def _forms(a: numpy.ndarray, b: numpy.ndarray):
    """(label, darray operands, NumPy operands) of one binary call in every operand form."""
    x, y = LAYOUT.array(a), LAYOUT.array(b)
    yield "DArray, DArray", (x, y), (a, b)
    yield "DArray, list", (x, b.tolist()), (a, b.tolist())
    yield "ndarray, DArray", (a, y), (a, b)
    for scalar in {bool: (True,), int: (2, -1, 3, 0), float: (2.0, 0.5, -1.0, 3.0, -0.0),
                   complex: (2 + 0j, 0.5j)}[type(b.flat[0].item())]:
        if a.dtype.kind in "iu" and isinstance(scalar, int) and scalar < 0 and a.dtype.kind == "u":
            continue
        yield f"DArray, {scalar!r}", (x, scalar), (a, scalar)
        yield f"{scalar!r}, DArray", (scalar, x), (scalar, a)


@pytest.mark.parametrize("row", _rows(2), ids=lambda r: r.name)
def test_binary_functions_and_operators_give_numpys_bits(row):
    f, want_f = getattr(np, row.name), getattr(numpy, row.name)
    op = getattr(operator, row.operator) if row.operator else None
    for dtype in _dtypes_of(row):
        a, b = _values(dtype), _values(dtype, shift=5)
        for label, mine, theirs in _forms(a, b):
            with numpy.errstate(all="ignore"):
                try:
                    want = want_f(*theirs)
                except (TypeError, ValueError):  # NumPy refuses this form itself (a negative int shift, ...)
                    continue
                for how, call, expect in (("function", f, want), ("operator", op, op(*theirs) if op else None)):
                    if call is None:
                        continue
                    got = call(*mine)
                    left = numpy.broadcast_to(numpy.asarray(theirs[0]), want.shape)
                    right = numpy.broadcast_to(numpy.asarray(theirs[1]), want.shape)
                    allowed = STANDARD_NOT_NUMPY[row.name](left, right) if row.name in STANDARD_NOT_NUMPY else None
                    bad = _same_bits(got, expect, allowed)
                    assert not bad, f"{row.name} {how} ({dtype}: {label}) differs from NumPy at {bad}"
                if row.inplace and op is not None and isinstance(mine[0], np.DArray) \
                        and want.dtype == a.dtype:  # x op= y where NumPy keeps x's dtype
                    inplace = getattr(operator, f"__i{row.operator[2:]}")
                    x, g = LAYOUT.array(a.copy()), a.copy()
                    x, g = inplace(x, mine[1]), inplace(g, theirs[1])
                    bad = _same_bits(x, g, allowed)
                    assert not bad, f"{row.name} in place ({dtype}: {label}) differs from NumPy at {bad}"
