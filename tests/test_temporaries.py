"""Expressions hold no more block-sized temporaries than NumPy holds for the whole array.

NumPy reuses the buffer of a temporary operand (``a * b + c`` makes one array,
not two) from 256 KiB on; darray does the same per block, also where the
operands of a shifted-slice stencil sit on different block sizes and must be
aligned first (then only the boundary strips are received, into a buffer of
their size). The measure is ``tracemalloc``'s peak (NumPy reports its buffers
to it) during one evaluation, in units of the largest block ("shares").
"""

from __future__ import annotations

import tracemalloc

import numpy
import pytest

import darray as da
from darray.testing import assert_equal

pytestmark = pytest.mark.mpi

ROWS, COLS = 1031, 160  # >= 256 KiB per block at 4 ranks (NumPy's size for reusing temporaries); uneven rows


def _peak_beyond(func) -> int:
    """Bytes allocated at the peak of ``func()`` beyond what was allocated before it, result included."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = func()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del result
    return peak - before


def _field(**kw) -> da.DArray:
    return da.asarray(numpy.random.default_rng(0).random((ROWS, COLS)), **kw)


def _share(x: da.DArray) -> int:
    """Bytes of the largest block of ``x``."""
    return max(x.layout.block_shape(r)[0] for r in range(x.comm.size)) * COLS * x.dtype.itemsize


@pytest.mark.not_on("array_api_strict", reason="buffer reuse needs NumPy's ufuncs (out=): the standard's functions "
                                               "make a new array per call, so array-api-strict blocks hold one per "
                                               "operator")
def test_chain_reuses_its_temporary():
    """``a * b + c``: the product's buffer takes the sum (NumPy: one new array)."""
    a, b, c = _field(split=0), _field(split=0), _field(split=0)
    a * b + c  # warm the plans
    assert _peak_beyond(lambda: a * b + c) < 1.1 * _share(a)


def test_numpy_holds_as_much():
    """The oracle for the next test: NumPy's sweep holds two arrays beyond ``u`` (its result and one temporary)."""
    u = numpy.random.default_rng(0).random((ROWS, COLS))
    peak = _peak_beyond(lambda: u[1:-1, 1:-1] + 0.2 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                                       - 4 * u[1:-1, 1:-1]))
    assert 1.9 * u.nbytes < peak < 2.1 * u.nbytes


@pytest.mark.parametrize("split", [0, None], ids=["rows", "replicated"])
@pytest.mark.not_on("array_api_strict", reason="buffer reuse needs NumPy's ufuncs (out=): the standard's functions "
                                               "make a new array per call, so array-api-strict blocks hold one per "
                                               "operator")
def test_shifted_slice_stencil_holds_two_shares(split):
    """The README's sweep, at every rank count: at most two blocks beyond ``u`` (NumPy: two arrays), however the
    shifted slices' blocks differ from each other (uneven rows, 3 and 4 ranks)."""
    u = _field(split=split)

    def sweep():
        return u[1:-1, 1:-1] + 0.2 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1])

    sweep()
    strips = 4 * COLS * u.dtype.itemsize + (64 << 10)  # received rows and Python objects
    assert _peak_beyond(sweep) <= 2 * _share(u) + strips


@pytest.mark.parametrize("other_split", [0, 1], ids=["same_layout", "other_layout"])
@pytest.mark.parametrize("call", ["x.__sub__(y)", "x.__rsub__(y)", "operator.sub(x, y)", "x.__add__(y + 0)"])
def test_direct_calls_never_reuse_a_named_operand(call, other_split):
    """A named array called directly (one reference fewer than under the ``-`` operator) keeps its values."""
    import operator

    x, y = _field(split=0), _field(split=other_split) + 1.0
    want_x, want_y = numpy.asarray(x.gather()), numpy.asarray(y.gather())
    want = eval(call, {"x": want_x, "y": want_y, "operator": operator})
    got = eval(call, {"x": x, "y": y, "operator": operator})
    assert_equal(got, want)
    assert_equal(x, want_x)
    assert_equal(y, want_y)


@pytest.mark.parametrize("order", ["named_first", "named_second"])
def test_replayed_plans_never_reuse_a_named_operand(order):
    """Operands cut differently (the operators replay the alignment plan remembered from the first call): a named
    operand keeps its values however often the expression runs, whichever operand's layout the result takes."""
    x, y = _field(split=0), _field(split=1) + 1.0
    want_y = numpy.asarray(y.gather())
    want = numpy.asarray(x.gather()) * 2.0
    want = want_y / want if order == "named_first" else want / want_y
    for _ in range(3):
        got = y / (x * 2.0) if order == "named_first" else (x * 2.0) / y
        assert_equal(got, want)
        assert_equal(y, want_y)


@pytest.mark.parametrize("expr", ["2.0 ** x", "2.0 ** (x + 0)", "x ** y", "(x + 0) ** y", "y - x", "x * 2.0 - y",
                                  "3 - x", "3 - (x + 0)"])
def test_named_operands_keep_their_values(expr):
    """Every operator form (the engine-only reflected power among them) leaves named operands as they were."""
    x, y = _field(split=0), _field(split=0) + 1.0
    want_x, want_y = numpy.asarray(x.gather()), numpy.asarray(y.gather())
    want = eval(expr, {"x": want_x, "y": want_y})
    for _ in range(2):
        assert_equal(eval(expr, {"x": x, "y": y}), want)
        assert_equal(x, want_x)
        assert_equal(y, want_y)


@pytest.mark.parametrize("small", [True, False], ids=["lean", "engine"])
def test_first_call_writes_the_method(monkeypatch, small):
    """An operator's first call (which writes its lean method on DArray) computes what later calls compute and
    reuses no named operand."""
    from darray._core import operators
    from darray._core.table import BINARY_OPERATORS

    row = next(r for r in BINARY_OPERATORS.values() if r.name == "subtract")
    first = operators._binary_methods(row)["__sub__"]
    monkeypatch.setattr(da.DArray, "__sub__", first)
    x = da.asarray(numpy.arange(12.0).reshape(3, 4)) if small else _field(split=0)
    y = x * 0.5
    want = numpy.asarray(x.gather()) - numpy.asarray(y.gather())
    want_x = numpy.asarray(x.gather())
    assert_equal((x + 0) - y, want)  # the first call: a temporary on the left
    assert da.DArray.__sub__ is not first and da.DArray.__sub__.__name__ == "__sub__"
    assert_equal(x - y, want)
    assert_equal(x, want_x)
