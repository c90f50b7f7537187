"""The compiled lean paths (``darray/_core/_lean.c``) compute what NumPy computes and step aside when they must.

Each compiled method stands in front of a Python method (``.general``) and
calls it whenever one of its checks fails. The tests here run whatever is
active (compiled where it was built, the Python paths under
``DARRAY_PURE_PYTHON=1``), so both are held to NumPy; the last test runs the
operator and indexing tests again on the Python paths.
"""

from __future__ import annotations

import operator
import os
import shutil
import subprocess
import sys
import sysconfig
import warnings
from pathlib import Path

import numpy
import pytest

import darray as da
from darray._core import compiled
from darray._core.table import BINARY_OPERATORS
from darray.testing import assert_equal

pytestmark = pytest.mark.numpy_only(reason="the compiled lean paths take NumPy blocks only (other blocks take the "
                                           "general paths, which the whole suite tests)")

#: The operator forms (the interpreter's slots, not a method call).
SYMBOLS = {"__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul, "__truediv__": operator.truediv,
           "__lt__": operator.lt, "__eq__": operator.eq, "__and__": operator.and_, "__pow__": operator.pow}
ROOT = Path(__file__).resolve().parent.parent
DTYPES = ["bool", "int8", "uint8", "int64", "float32", "float64", "complex128"]
OPERATORS = ["__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__", "__lt__",
             "__eq__", "__ne__", "__and__", "__or__", "__xor__", "__lshift__", "__radd__", "__rmul__", "__rsub__",
             "__rtruediv__", "__rpow__"]


def _numpy_or_error(func):
    """``func()``'s value, or the type of the exception it raised; NumPy's warnings silenced."""
    with warnings.catch_warnings(), numpy.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return func()
        except Exception as error:  # the type is what is compared
            return type(error)


def _same(got, want) -> None:
    if isinstance(want, type):  # the same builtin exception type (NumPy raises subclasses of its own)
        builtin = next(kind for kind in want.__mro__ if kind.__module__ == "builtins")
        assert isinstance(got, type) and issubclass(got, builtin), (got, want)
    else:
        assert not isinstance(got, type), (got, want)
        assert_equal(got, want)


def test_built_where_a_compiler_is():
    """``pip install`` builds the compiled paths on a machine with a C compiler (as CI's)."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if compiled.pure_python_requested():
        assert compiled.lean is None
        return
    if shutil.which(compiler) is None:
        return
    assert compiled.lean is not None, "darray._core._lean was not built: reinstall with pip install -e ."
    assert type(da.DArray.__getitem__).__name__ == "Lean"


@pytest.mark.mpi
@pytest.mark.parametrize("shape", [(3, 4), ()], ids=["3x4", "0-d"])
@pytest.mark.parametrize("name", OPERATORS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_operators_agree_with_numpy(name, dtype, shape):
    """Every operator on small whole arrays (and 0-d ones: NumPy's kernels give scalars there), against an array of
    each dtype and Python scalars, as NumPy has it."""
    reflected = name.startswith("__r") and name != "__rshift__"
    row = next(r for r in BINARY_OPERATORS.values() if r.operator == name.replace("__r", "__", reflected))
    function = getattr(da, row.name)  # darray's function: the engine, not the operator
    a = (numpy.arange(12).reshape(3, 4) % 5 + 1).astype(dtype)[(slice(None), slice(None)) if shape else (1, 2)]
    x = da.asarray(a)
    for other in [numpy.full(shape, 2).astype(d) for d in DTYPES] + [2, 3.0, True]:
        y = da.asarray(other) if isinstance(other, numpy.ndarray) else other
        if reflected and isinstance(y, da.DArray):
            continue  # (Python calls a reflected operator for a non-DArray left operand only)
        engine = _numpy_or_error(lambda: function(y, x) if reflected else function(x, y))
        numpy_function = getattr(numpy, row.name)  # (not NumPy's operator: ``bool_array ** 2`` is its square)
        want = engine if isinstance(engine, type) else \
            _numpy_or_error(lambda: numpy_function(other, a) if reflected else numpy_function(a, other))
        got = _numpy_or_error(lambda: getattr(x, name)(y))
        _same(got, want)
        if not isinstance(got, type):
            assert type(got) is da.DArray and got.shape == shape
        if not isinstance(want, type) and name in SYMBOLS:  # the operator form (the interpreter's slot) too
            _same(_numpy_or_error(lambda: SYMBOLS[name](x, y)), want)


@pytest.mark.mpi
@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_operators_agree_with_numpy(dtype):
    a = (numpy.arange(12).reshape(3, 4) - 5).astype(dtype)
    x = da.asarray(a)
    for op in (lambda v: -v, lambda v: +v, lambda v: abs(v), lambda v: ~v):
        _same(_numpy_or_error(lambda: op(x)), _numpy_or_error(lambda: op(a)))


@pytest.mark.mpi
def test_result_is_a_fresh_array_on_the_same_layout():
    x = da.asarray(numpy.arange(20.0).reshape(4, 5))
    for y in (x + x, x * 2.0, 2.0 * x, -x, x[1:, ::2]):
        assert type(y) is da.DArray and y.comm is x.comm
        assert y._local is None and y._halo_fresh is False and y._halo_exchange is None
    assert (x + 1.0).layout is x.layout and (x + 1.0)._block is not x._block
    assert x[1:3, 1:3].layout is x[0:2, 2:4].layout  # (the sliced layout is remembered by shape)


@pytest.mark.mpi
def test_methods_bind_like_functions():
    x = da.asarray(numpy.arange(6.0).reshape(2, 3))
    method = da.DArray.__add__
    assert method.__name__ == "__add__" and "darray.add" in method.__doc__
    assert_equal(x.__add__(x), 2 * numpy.arange(6.0).reshape(2, 3))
    assert_equal(da.DArray.__add__(x, 1.0), numpy.arange(6.0).reshape(2, 3) + 1)
    assert x.__add__.__self__ is x
    assert_equal(da.DArray.__getitem__(x, (1, slice(None))), numpy.arange(3.0, 6.0))
    with pytest.raises(TypeError):
        da.DArray.__add__(x)  # (the general method says what is missing)
    with pytest.raises(TypeError):
        da.DArray.__add__(x, x, x)
    with pytest.raises(TypeError):
        da.DArray.__neg__(x, x)
    assert x.__add__("a") is NotImplemented  # (a foreign operand: Python tries its reflected operator)
    with pytest.raises(TypeError):
        x + "a"


@pytest.mark.mpi
def test_tracing_sees_every_lean_operation():
    """While the recorder is on, the compiled paths step aside: the engine records each operation."""
    x = da.asarray(numpy.ones((4, 4)))
    with da.tracing() as trace:
        y = -(x + x) * 2.0
    ops = [e["op"] for e in trace.events if e["kind"] == "compute"]
    assert ops == ["add", "negative", "multiply"], ops
    assert_equal(y, numpy.full((4, 4), -4.0))


@pytest.mark.mpi
def test_elements_are_0d_arrays_in_loops():
    """``u[i] = un[i] - k * (un[i] - un[i - 1])`` (a loop over cells): 0-d DArrays on one remembered layout, as the
    general path makes them; the loop computes what NumPy's computes."""
    a = numpy.linspace(0.0, 1.0, 9) ** 2
    un, u = da.asarray(a), da.asarray(a.copy())
    element = un[3]
    assert type(element) is da.DArray and element.shape == () and element.layout is un[4].layout
    assert element._block.base is None or element._block.base is not un._block  # (a copy, not a view of the block)
    assert (element - un[2]).layout is element.layout and (-element).shape == ()
    want = a.copy()
    for i in range(1, 9):
        u[i] = un[i] - 0.25 * (un[i] - un[i - 1])
        want[i] = a[i] - 0.25 * (a[i] - a[i - 1])
    assert_equal(u, want)
    assert float(un[-1]) == 1.0 and int(da.asarray(numpy.arange(4))[2] // 2) == 1


#: Items where IEEE arithmetic meets its edges: signed zeros, the smallest normal and subnormal numbers, the
#: largest, infinities, NaN.
EDGE_ITEMS = [0.0, -0.0, 1.0, -2.5, 1 / 3, 1e-310, 2.2250738585072014e-308, 1.5e-45, 1.17549435e-38, 3.4e38,
              1.7e308, float("inf"), -float("inf"), float("nan")]


def _bits(value) -> tuple:
    """A result as its dtype and bytes: NaN payloads, signed zeros and the dtype all count."""
    if isinstance(value, type):
        return (value,)
    block = numpy.asarray(value)
    return block.dtype, block.shape, block.tobytes()


@pytest.mark.mpi
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_0d_arithmetic_gives_numpy_bits(dtype):
    """0-d floats (a loop's elements) against NumPy's kernels on 0-d arrays, bit for bit, with every operand form
    (a 0-d DArray, a Python float, a Python int small and huge) and every edge item; errors where NumPy raises."""
    binary = [operator.add, operator.sub, operator.mul, operator.truediv, operator.lt, operator.le, operator.gt,
              operator.ge, operator.eq, operator.ne]
    with numpy.errstate(all="ignore"):
        items = [numpy.asarray(v, dtype=dtype) for v in EDGE_ITEMS]
    for a in items:
        x = da.asarray(a)
        for op in (operator.neg, operator.pos, abs):
            assert _bits(_numpy_or_error(lambda: op(x))) == _bits(_numpy_or_error(lambda: op(a)))
        for other in [*items, *EDGE_ITEMS, 3, -7, 2**60]:
            y = da.asarray(other) if isinstance(other, numpy.ndarray) else other
            for op in binary:
                want = _bits(_numpy_or_error(lambda: op(a, other)))
                assert _bits(_numpy_or_error(lambda: op(x, y))) == want, (op, a, other)
                if not isinstance(y, da.DArray):  # (the reflected operator)
                    assert _bits(_numpy_or_error(lambda: op(y, x))) == _bits(_numpy_or_error(lambda: op(other, a)))


@pytest.mark.mpi
def test_0d_floating_point_errors_follow_numpy_seterr():
    """An operation that raises a floating-point exception goes to NumPy's kernel: ``numpy.seterr`` decides."""
    one, zero, tiny, huge = (da.asarray(numpy.float64(v)) for v in (1.0, 0.0, 1e-300, 1e300))
    cases = {"divide": lambda: one / zero, "under": lambda: tiny * tiny, "over": lambda: huge * huge,
             "invalid": lambda: zero / zero}
    for kind, compute in cases.items():
        with numpy.errstate(**{kind: "raise"}), pytest.raises(FloatingPointError):
            compute()
        with numpy.errstate(**{kind: "warn"}), pytest.warns(RuntimeWarning):
            compute()
    with numpy.errstate(all="raise"):  # (inexact results are no exception, in NumPy as here)
        assert float(one / da.asarray(numpy.float64(3.0))) == 1 / 3


@pytest.mark.mpi
def test_elements_are_copies_that_later_operations_never_reuse():
    """Elements and 0-d results are copies: a result kept (as a DArray, or its NumPy block) keeps its value however
    many operations follow; a read-only 0-d array stays read-only."""
    a = numpy.arange(10.0)
    un = da.asarray(a)
    kept = [un[3], un[4] - un[2], -un[5], un[6] * 2.0, un[7] > un[1]]
    block = numpy.asarray(un[8] + 0.5)  # (a NumPy block whose DArray is gone)
    frozen = un[9] + 0.0
    frozen.flags.writeable = False
    del frozen
    for i in range(1, 10):
        un[i] = un[i] - 0.5 * (un[i] - un[i - 1])
        un[i] < un[i - 1], -un[i], un[i] / 3.0
    assert [float(v) for v in kept] == [3.0, 2.0, -5.0, 12.0, 1.0] and float(block) == 8.5
    for dtype in ["bool", "int8", "uint16", "int64", "float16", "float32", "complex64", "complex128"]:
        b = (numpy.arange(24).reshape(2, 3, 4) % 7).astype(dtype)
        x = da.asarray(b)
        for key in [(1, 2, 3), (-1, -3, 0), (0, 0, -4)]:
            assert _bits(x[key]) == _bits(b[key]) and type(x[key]) is da.DArray
        for key in [(2, 0, 0), (0, 3, 0), (0, 0, -5)]:
            with pytest.raises(IndexError):
                x[key]


@pytest.mark.mpi
@pytest.mark.parametrize("dtype", [*DTYPES, "float16", "complex64", "datetime64[s]"])
def test_python_conversions_of_0d_arrays_agree_with_numpy(dtype):
    """``float(x)``, ``int(x)``, ``bool(x)``, ``complex(x)`` and ``operator.index(x)`` of a 0-d array: NumPy's value,
    or an error of NumPy's type; arrays of other shapes keep darray's rule (0-d only; ``bool`` of size 1)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (NumPy's ComplexWarning: the imaginary part discarded)
        for value in (0, 1, 3):
            a = numpy.asarray(value).astype(dtype)
            x = da.asarray(a)
            for convert in (float, int, bool, complex, operator.index):
                got, want = _numpy_or_error(lambda: convert(x)), _numpy_or_error(lambda: convert(a[()]))
                if dtype == "bool" and convert is operator.index:  # (NumPy 2 refuses bool as an index too)
                    assert isinstance(got, type) and issubclass(got, TypeError)
                    continue
                if isinstance(want, type):
                    _same(got, want)
                else:
                    assert type(got) is type(want) and got == want, (convert, got, want)
    with pytest.raises(TypeError, match="__float__"):
        float(da.ones(3))
    assert bool(da.ones((1, 1))) is True


@pytest.mark.mpi
def test_keys_agree_with_numpy():
    a = numpy.arange(60.0).reshape(3, 4, 5)
    keys = [(slice(1, None), slice(None, -1)), (0, slice(None), 2), (Ellipsis, 1), (None, 1, slice(None, None, -2)),
            slice(None, None, -1), (), (1, 2, 3), (5, 0), (slice(0, 2.5),), (slice(None, None, 0),), (True,),
            ([0, 2], 1), (-4, 0), (numpy.int64(1), slice(None))]
    x = da.asarray(a)
    for key in keys:
        want = _numpy_or_error(lambda: a[key])
        got = _numpy_or_error(lambda: x[key])
        if isinstance(want, type):
            assert isinstance(got, type) and issubclass(got, (IndexError, TypeError, ValueError)), (key, got)
        else:
            _same(got, want)


@pytest.mark.mpi
def test_assignments_agree_with_numpy():
    values = [1.5, 2, True, 1 + 2j, numpy.float32(3.0), numpy.ones(5), "x"]  # (None: darray refuses object values)
    keys = [(slice(1, None), slice(None, 2)), (0, slice(None), 2), (Ellipsis, 1), (1, 2, 3), (7, 0), slice(None)]
    for value in values:
        for key in keys:
            a = numpy.arange(60.0).reshape(3, 4, 5)
            x = da.asarray(a)
            want = _numpy_or_error(lambda: a.__setitem__(key, value))
            got = _numpy_or_error(lambda: x.__setitem__(key, value))
            if isinstance(want, type):
                assert isinstance(got, type) and issubclass(got, (IndexError, TypeError, ValueError)), (key, value)
            else:
                assert got is None, (key, value, got)
                assert_equal(x, a)
    a = numpy.zeros((4, 6))
    x = da.asarray(a)
    source = da.asarray(numpy.arange(24.0).reshape(4, 6))
    x[1:3, 2:] = source[:2, :4]  # a DArray value on a whole layout: one assignment
    a[1:3, 2:] = numpy.arange(24.0).reshape(4, 6)[:2, :4]
    assert_equal(x, a)
    with pytest.raises(ValueError):
        x[1:3, 2:] = source[:3, :4]  # (the shapes do not broadcast: darray's error, from the general path)


@pytest.mark.mpi
def test_no_reference_is_lost_or_kept():
    """The compiled wrap takes exactly one reference to the layout, communicator and namespace, and drops them."""
    x = da.asarray(numpy.ones((5, 5)))
    y = x * 2.0
    scalar, key = 3.5, (slice(1, None), slice(None, -1))
    watched = (x.layout, x.comm, x._xp, x._block, y._block, scalar, key)

    def run(times):
        for _ in range(times):
            x + y, x * scalar, scalar - x, -x, x[key], x < y
            x[key] = scalar
            x[key] = y[key]

    run(1)  # (what the first calls remember: the sliced layout, the accepted dtypes)
    before = [sys.getrefcount(obj) for obj in watched]
    run(500)
    assert [sys.getrefcount(obj) for obj in watched] == before


@pytest.mark.skipif(compiled.pure_python_requested() or os.environ.get("DARRAY_TEST_CHILD") == "1", reason="(this test starts the Python-path run)")
def test_python_paths_pass_the_operator_and_indexing_tests():
    """The Python lean paths, the fallback where the C module was not built, pass the same tests."""
    env = dict(os.environ, DARRAY_PURE_PYTHON="1")
    files = ["tests/test_compiled.py", "tests/test_elementwise.py", "tests/test_indexing.py",
             "tests/test_indexing_mixed.py", "tests/test_temporaries.py"]
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert " passed" in run.stdout
