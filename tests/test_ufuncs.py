"""darray's ufunc objects against NumPy's: attributes, calls with keywords, and every method, on every rank count.

``reduce``, ``accumulate``, ``outer``, ``at`` and ``reduceat`` of a representative set of ufuncs, one test per
layout of ``tests/_cases.py`` (cut along axis 0, replicated, uneven blocks with an empty one, cut along axis 1, a
2x2 grid at 4 ranks) and odd sizes; the same methods reached through NumPy (``numpy.add.reduce(x)``); bad input raising
NumPy's exception type identically on every rank.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from numpy.exceptions import AxisError

import darray as da
from darray.testing import assert_equal, assert_raises_everywhere

from _cases import P, each, generator, layouts

pytestmark = pytest.mark.mpi

SHAPE = (7, 13)
numpy_only = pytest.mark.numpy_only

#: The ufuncs every method is checked on; power and arctan2 reduce/accumulate with NumPy's loops only.
STANDARD = ("add", "subtract", "multiply", "maximum", "minimum", "logical_and", "bitwise_or", "divide")
BINARY = STANDARD + ("power", "arctan2")
#: NumPy blocks run every ufunc's methods; other blocks the STANDARD ones (power and arctan2 reduce and
#: accumulate with NumPy's loops only).
NUMPY_BLOCKS = da.config.backend == "numpy"
ALL_BACKENDS = BINARY if NUMPY_BLOCKS else STANDARD
NOT_ASSOCIATIVE = {"power", "arctan2"}


def named(shape=SHAPE) -> list:
    """Cut along axis 0, replicated, uneven blocks (an empty one) along axis 0; 2-d: also along axis 1, and a 2x2
    grid at 4 ranks."""
    return layouts(shape, "split0", "replicated", "uneven0", *(("uneven1", "grid2x2") if len(shape) > 1 else ()))


LAYOUTS = named()


def operand(name: str, shape=SHAPE, seed: int = 0) -> np.ndarray:
    """Values in the ufunc's domain, the same on every rank."""
    rng = generator(seed, len(shape), sum(shape), name)
    if name == "logical_and":
        return rng.random(shape) < 0.7
    if name == "bitwise_or":
        return rng.integers(0, 64, shape)
    if name in ("power", "multiply", "divide"):
        return rng.uniform(0.8, 1.25, shape)
    return rng.uniform(-2.0, 2.0, shape)


def cut(x: da.DArray, axes) -> bool:
    axes = range(x.ndim) if axes is None else (axes,) if isinstance(axes, int) else axes
    return any(x.layout.axis_dim[a % x.ndim] is not None for a in axes)


# ------------------------------------------------------------------ attributes
ATTRIBUTE_NAMES = BINARY + ("sqrt", "negative", "abs", "absolute", "fmod", "divmod", "isnan", "bitwise_invert",
                            "logaddexp", "gcd", "frexp", "ldexp")


@pytest.mark.parametrize("name", ATTRIBUTE_NAMES)
def test_attributes_are_numpy_s(name):
    f, ref = getattr(da, name), getattr(np, name)
    assert isinstance(f, da.ufunc)
    assert (f.nin, f.nout, f.nargs, f.signature) == (ref.nin, ref.nout, ref.nargs, ref.signature)
    assert f.identity == ref.identity and type(f.identity) is type(ref.identity)
    assert f.types == ref.types and f.ntypes == ref.ntypes
    assert f.__name__ == ref.__name__ and repr(f) == f"<darray ufunc {ref.__name__!r}>"
    assert f"numpy.{name}" in f.__doc__
    assert pickle.loads(pickle.dumps(f)) is f


def test_aliases_are_one_object_where_numpy_s_are():
    for a, b in [("atan2", "arctan2"), ("pow", "power"), ("abs", "absolute"), ("bitwise_invert", "invert"),
                 ("bitwise_not", "invert"), ("mod", "remainder"), ("true_divide", "divide"), ("conj", "conjugate"),
                 ("acos", "arccos"), ("bitwise_left_shift", "left_shift")]:
        assert getattr(da, a) is getattr(da, b), (a, b)
        assert getattr(np, a) is getattr(np, b), (a, b)
    assert da.add is not da.subtract
    assert isinstance(da.real, da.ufunc) and da.real.nin == 1 and da.real.identity is None  # no NumPy ufunc
    assert da.add.__doc__ != da.ufunc.__doc__ and "reduce" in da.ufunc.__doc__


# ------------------------------------------------------------------ __call__
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_call_matches_the_plain_function_path(layout):
    g, h = operand("add"), operand("add", seed=1)
    x, y = layout.array(g), layout.array(h)
    assert_equal(da.add(x, y), g + h)
    assert_equal(da.add(2.5, x), 2.5 + g)
    assert_equal(da.subtract(x, h), g - h)
    assert_equal(da.arctan2(x, y), np.arctan2(g, h))
    assert_equal(da.negative(x), -g)


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_out_where_dtype(layout):
    g, h = operand("multiply"), operand("multiply", seed=1)
    a, b = layout.array(g.copy()), layout.array(h)  # copies: a block may be a view of the input
    assert da.multiply(a, b, out=a) is a  # in place
    assert_equal(a, g * h, err_msg="multiply out=a")
    x = layout.array(g.copy())
    assert da.negative(x, out=x) is x
    assert_equal(x, -g, err_msg="negative out=x")
    o = da.zeros(SHAPE, split=None)  # another layout than the operands'
    assert da.add(layout.array(g), h, o) is o  # positional out
    assert_equal(o, g + h, err_msg="positional out")
    o = layout.array(np.full(SHAPE, -1.0))
    mask = g > 1.0
    da.add(layout.array(g), layout.array(h), out=o, where=layout.array(mask))
    assert_equal(o, np.add(g, h, out=np.full(SHAPE, -1.0), where=mask), err_msg="where")
    got = da.add(layout.array(g), 1.0, dtype=np.float32)
    assert_equal(got, np.add(g, 1.0, dtype=np.float32), err_msg="dtype")
    i = layout.array(np.arange(91).reshape(SHAPE))  # a fresh array each time
    assert_equal(da.multiply(i, 3, out=i), np.arange(91).reshape(SHAPE) * 3, err_msg="ints in place")


def test_inputs_without_a_darray_become_darrays():
    for value, ref in [(da.sqrt(4), np.sqrt(4)), (da.add(1, 2), np.add(1, 2)), (da.add([1, 2], 3), np.add([1, 2], 3)),
                       (da.multiply(np.arange(5.0), 2.0), np.arange(5.0) * 2.0),
                       (da.maximum([1.0, 5.0], [3.0, 2.0]), np.maximum([1.0, 5.0], [3.0, 2.0]))]:
        assert isinstance(value, da.DArray)
        assert_equal(value, np.asarray(ref))
    assert float(da.arctan2(1.0, 2.0)) == float(np.arctan2(1.0, 2.0))
    assert int(da.add(1, 2)) == 3
    with pytest.warns(RuntimeWarning):
        nan = da.sqrt(-1)
    assert np.isnan(float(nan))


@pytest.mark.parametrize("layout", named((13,)), ids=str)
def test_integers_in_floating_functions_are_promoted_as_numpy_does(layout):
    g = np.arange(-6, 7).astype(np.int64)
    x = layout.array(g)
    assert_equal(da.sin(x), np.sin(g))
    assert_equal(da.arctan2(x, x + 1), np.arctan2(g, g + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_equal(da.sqrt(x), np.sqrt(g))


def test_booleans_in_floating_functions_are_refused():
    g = np.arange(-6, 7).astype(np.int64)
    assert_raises_everywhere(TypeError, da.sin, da.asarray(g > 0, split=0), match="sin")  # bools stay refused


@pytest.mark.parametrize("dtype,want", [("int8", "float16"), ("uint8", "float16"), ("int16", "float32"),
                                        ("uint16", "float32"), ("int32", "float64"), ("uint64", "float64")])
def test_small_integers_promote_to_numpys_float(dtype, want):
    """NumPy's smallest float that holds the integers (float16 for 8-bit ones; float32 where the local
    library has no float16, as array-api-strict)."""
    g = np.arange(13).astype(dtype)
    x = da.asarray(g, split=0)
    if want == "float16" and not hasattr(x._xp, "float16"):
        want = "float32"
    f = g.astype(want)
    for got, ref in ((da.sqrt(x), np.sqrt(f)), (da.exp(x), np.exp(f)), (da.arctan2(x, x), np.arctan2(f, f))):
        assert got.dtype == np.dtype(want)
        assert_equal(got, ref)
    if want != "float32" or dtype not in ("int8", "uint8"):  # NumPy's own dtype, where the blocks have it
        assert np.sqrt(g).dtype == np.dtype(want)


# ------------------------------------------------------------------ reduce
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_reduce(layout):
    """Every one of :data:`ALL_BACKENDS` on this layout."""
    def check(name):
        f, ref = getattr(da, name), getattr(np, name)
        g = operand(name)
        x = layout.array(g)
        for axis in (0, 1, -1, None, (0, 1)):
            for keepdims in (False, True):
                try:
                    want = ref.reduce(g, axis=axis, keepdims=keepdims)
                except ValueError:  # not reorderable: NumPy refuses several axes
                    assert_raises_everywhere(ValueError, f.reduce, x, axis=axis, keepdims=keepdims, match=name)
                    continue
                if name in NOT_ASSOCIATIVE and cut(x, axis):
                    assert_raises_everywhere(ValueError, f.reduce, x, axis=axis, match="associative")
                    continue
                assert_equal(f.reduce(x, axis=axis, keepdims=keepdims), np.asarray(want),
                             err_msg=f"{name}.reduce axis={axis} keepdims={keepdims}")

    each(ALL_BACKENDS, check)


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_reduce_and_accumulate_dtypes(layout):
    def check(dtype):
        g = (operand("add", seed=7) * 3).astype(dtype)
        x = layout.array(g)
        for name in ("add", "multiply", "maximum", "subtract"):
            f, ref = getattr(da, name), getattr(np, name)
            if (dtype == "complex128" and name == "maximum") or (dtype == "bool" and name == "subtract"):
                continue
            for axis in (0, 1):
                assert_equal(f.reduce(x, axis=axis), ref.reduce(g, axis=axis), err_msg=f"{name} {dtype} {axis}")
            if name in ("add", "multiply") and dtype != "bool":
                assert_equal(f.accumulate(x, axis=0), ref.accumulate(g, axis=0), err_msg=f"{name} {dtype}",
                             atol=1e-5 if dtype == "float32" else 0.0)  # running sums cross zero: rounding order

    each(["int32", "uint8", "float32", "complex128", "bool"], check)


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_reduce_initial_where_dtype_out(layout):
    """add, multiply, maximum, subtract, minimum, bitwise_or on this layout."""
    def check(name):
        f, ref = getattr(da, name), getattr(np, name)
        g = operand(name)
        mask = operand("logical_and", seed=5)
        x, m = layout.array(g), layout.array(mask)
        for axis in (0, 1):
            init = 3 if g.dtype.kind == "i" else 1.5
            assert_equal(f.reduce(x, axis=axis, initial=init), ref.reduce(g, axis=axis, initial=init),
                         err_msg=f"initial {axis}")
            if ref.identity is not None or name in ("maximum", "minimum", "subtract"):
                want = ref.reduce(g, axis=axis, initial=init, where=mask)
                assert_equal(f.reduce(x, axis=axis, initial=init, where=m), want, err_msg=f"where {axis}")
                assert_equal(f.reduce(x, axis=axis, initial=init, where=mask), want,
                             err_msg=f"where numpy mask {axis}")
            if ref.identity is not None:
                assert_equal(f.reduce(x, axis=axis, where=m), ref.reduce(g, axis=axis, where=mask),
                             err_msg=f"where identity {axis}")
            if g.dtype.kind == "f":
                assert_equal(f.reduce(x, axis=axis, dtype=np.float32), ref.reduce(g, axis=axis, dtype=np.float32),
                             err_msg=f"dtype {axis}")
            out = da.zeros(SHAPE[1 - axis], dtype=ref.reduce(g, axis=axis).dtype, split=0)
            assert f.reduce(x, axis=axis, out=out) is out
            assert_equal(out, ref.reduce(g, axis=axis), err_msg=f"out= {axis}")

    each(["add", "multiply", "maximum", "subtract", "minimum", "bitwise_or"], check)


@pytest.mark.parametrize("layout", named((0, 5)), ids=str)
def test_reduce_empty(layout):
    e = np.zeros((0, 5))
    x = layout.array(e)
    assert_equal(da.add.reduce(x, axis=0), np.add.reduce(e, axis=0))
    assert_equal(da.multiply.reduce(x, axis=0, keepdims=True), np.multiply.reduce(e, axis=0, keepdims=True))
    assert_equal(da.maximum.reduce(x, axis=0, initial=-1.0), np.maximum.reduce(e, axis=0, initial=-1.0))
    assert_raises_everywhere(ValueError, da.maximum.reduce, x, axis=0, match="identity")


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_reduce_sequences(layout):
    masks = [operand("logical_and", seed=s) for s in range(3)]
    got = da.logical_and.reduce([layout.array(m) for m in masks])
    assert_equal(got, np.logical_and.reduce(masks))
    got = da.add.reduce([layout.array(m) for m in masks], axis=1)
    assert_equal(got, np.add.reduce(masks, axis=1))


def test_reduce_of_a_list():
    assert_equal(da.add.reduce([1.0, 2.0, 4.0]), np.asarray(7.0))


# ------------------------------------------------------------------ accumulate
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_accumulate(layout):
    """add and multiply on this layout; on NumPy blocks (NumPy's loops) also maximum, subtract, divide, bitwise_or,
    logical_and, power."""
    def check(name):
        f, ref = getattr(da, name), getattr(np, name)
        g = operand(name)
        x = layout.array(g)
        for axis in (0, 1, -1):
            if name in NOT_ASSOCIATIVE and cut(x, axis):
                assert_raises_everywhere(ValueError, f.accumulate, x, axis=axis, match="associative")
                continue
            want = ref.accumulate(g, axis=axis)
            got = f.accumulate(x, axis=axis)
            assert_equal(got, want, err_msg=f"{name}.accumulate axis={axis}")
            assert got.layout.blocks_key == x.layout.blocks_key  # the input's layout
        if g.dtype.kind == "f" and not (name in NOT_ASSOCIATIVE and cut(x, 0)):
            assert_equal(f.accumulate(x, axis=0, dtype=np.float32), ref.accumulate(g, axis=0, dtype=np.float32))
            out = da.zeros(SHAPE, split=None)
            assert f.accumulate(x, axis=0, out=out) is out
            assert_equal(out, ref.accumulate(g, axis=0), err_msg="out=")

    numpy_loops = ["maximum", "subtract", "divide", "bitwise_or", "logical_and", "power"]
    each(["add", "multiply", *(numpy_loops * NUMPY_BLOCKS)], check)


# ------------------------------------------------------------------ outer
@pytest.mark.parametrize("ka,kb", [pytest.param(a, b, id=f"{a}-{b}")
                                   for a, b in zip(named((7,)), reversed(named((13,))))])
def test_outer(ka, kb):
    """Every one of :data:`BINARY` on this pair of layouts."""
    def check(name):
        f, ref = getattr(da, name), getattr(np, name)
        a, b = operand(name, (7,)), operand(name, (13,), seed=1)
        m = operand(name, (3, 5), seed=2)
        xa, xb = ka.array(a), kb.array(b)
        assert_equal(f.outer(xa, xb), ref.outer(a, b), err_msg=f"{name}.outer")
        assert_equal(f.outer(xb, a), ref.outer(b, a), err_msg=f"{name}.outer DArray-numpy")
        assert_equal(f.outer(da.asarray(m, split=0), xa), ref.outer(m, a), err_msg=f"{name}.outer 2-d")

    each(BINARY, check)


@pytest.mark.parametrize("name", BINARY)
def test_outer_of_lists(name):
    f, ref = getattr(da, name), getattr(np, name)
    a, b = operand(name, (7,)), operand(name, (13,), seed=1)
    assert_equal(f.outer(list(a), list(b)), ref.outer(a, b), err_msg=f"{name}.outer of lists")


def test_outer_keeps_the_larger_operand_cut():
    a, b = np.arange(40.0), np.arange(3.0)
    x = da.asarray(a, split=0)
    got = da.subtract.outer(x, da.asarray(b, split=0))
    assert_equal(got, np.subtract.outer(a, b))
    if P > 1:
        assert got.layout.axis_dim[0] is not None


# ------------------------------------------------------------------ at
@numpy_only
@pytest.mark.parametrize("layout", named((13,)), ids=str)
def test_at_with_repeated_indices(layout):
    """add, subtract, multiply, maximum, bitwise_or, power, divide on this layout."""
    def check(name):
        f, ref = getattr(da, name), getattr(np, name)
        base = operand(name, (13,)).astype(np.int64 if name == "bitwise_or" else np.float64)
        idx = [0, 12, 3, 3, 3, -1, 6, 0, 7]
        vals = operand(name, (len(idx),), seed=3).astype(base.dtype)
        for b in (vals, vals[0].item(), "darray"):
            want = base.copy()
            ref.at(want, idx, vals if isinstance(b, str) else b)
            x = layout.array(base.copy())
            assert f.at(x, idx, da.asarray(vals, split=0) if isinstance(b, str) else b) is None
            assert_equal(x, want, err_msg=f"{name}.at b={type(b).__name__}")

    each(["add", "subtract", "multiply", "maximum", "bitwise_or", "power", "divide"], check)


@numpy_only
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_at_multi_axis_unary_and_numpy_path(layout):
    g = operand("add")
    rows, cols = np.array([0, 6, 6, 2, 0]), np.array([1, 12, 12, 4, 1])
    want = g.copy()
    np.add.at(want, (rows, cols), 1.5)
    x = layout.array(g.copy())
    da.add.at(x, (rows, cols), 1.5)
    assert_equal(x, want, err_msg="tuple of arrays")
    want = g.copy()
    np.add.at(want, [1, 1, 5], np.arange(13.0))  # rows, a row of values broadcast
    x = layout.array(g.copy())
    np.add.at(x, [1, 1, 5], np.arange(13.0))  # NumPy's ufunc hands it to darray
    assert_equal(x, want, err_msg="rows, numpy path")
    want = g.copy()
    np.add.at(want, [1, 1, 5], operand("add", (3, 13), seed=9))
    x = layout.array(g.copy())
    da.add.at(x, da.asarray([1, 1, 5], split=0), da.asarray(operand("add", (3, 13), seed=9), split=0))
    assert_equal(x, want, err_msg="rows, routed DArray values")
    want = g.copy()
    np.negative.at(want, [2, 2, 3])
    x = layout.array(g.copy())
    da.negative.at(x, [2, 2, 3])
    assert_equal(x, want, err_msg="unary")
    want = g.copy()
    np.multiply.at(want, (slice(1, 4), 2), 2.0)
    x = layout.array(g.copy())
    da.multiply.at(x, (slice(1, 4), 2), 2.0)
    assert_equal(x, want, err_msg="basic indices")


# ------------------------------------------------------------------ reduceat
@numpy_only
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_reduceat(layout):
    """Every one of :data:`BINARY` on this layout."""
    def check(name):
        f, ref = getattr(da, name), getattr(np, name)
        g = operand(name)
        x = layout.array(g)
        for axis, idx in [(0, [0, 3, 1, 6]), (1, [0, 4, 4, 2, 12]), (1, [5]), (-1, [12, 0, 7, 8, 10])]:
            if name in NOT_ASSOCIATIVE and cut(x, axis):
                assert_raises_everywhere(ValueError, f.reduceat, x, idx, axis=axis, match="associative")
                continue
            assert_equal(f.reduceat(x, idx, axis=axis), ref.reduceat(g, idx, axis=axis),
                         err_msg=f"{name}.reduceat {idx} axis={axis}")

    each(BINARY, check)


@numpy_only
@pytest.mark.parametrize("name", BINARY)
def test_reduceat_out(name):
    f, ref = getattr(da, name), getattr(np, name)
    g = operand(name)
    out = da.zeros((4, 13), dtype=ref.reduceat(g, [0, 3, 1, 6]).dtype, split=0)
    if name not in NOT_ASSOCIATIVE or P == 1:
        assert f.reduceat(da.asarray(g, split=0), [0, 3, 1, 6], out=out) is out
        assert_equal(out, ref.reduceat(g, [0, 3, 1, 6]))


# ------------------------------------------------------------------ NumPy's ufuncs reach the same methods
@numpy_only
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_numpy_methods_on_darrays(layout):
    g, mask = operand("add"), operand("logical_and", seed=4)
    x = layout.array(g)
    assert_equal(np.add.reduce(x, axis=1, where=mask, initial=1.0),
                 np.add.reduce(g, axis=1, where=mask, initial=1.0))
    assert_equal(np.maximum.accumulate(x, axis=0), np.maximum.accumulate(g, axis=0))
    assert_equal(np.subtract.reduce(x, axis=0), np.subtract.reduce(g, axis=0))
    assert_equal(np.minimum.reduceat(x, [0, 2], axis=0), np.minimum.reduceat(g, [0, 2], axis=0))
    out = da.zeros((13,), split=0)
    assert np.add.reduce(x, axis=0, out=out) is out
    assert_equal(out, np.add.reduce(g, axis=0))


# ------------------------------------------------------------------ bad input
def test_bad_input_raises_numpy_s_type_everywhere():
    x = da.asarray(operand("add"), split=0)
    cases = [
        (TypeError, lambda: da.add(x), "add"),
        (TypeError, lambda: da.add(x, x, x, x), "add"),
        (TypeError, lambda: da.add(x, x, bogus=1), "add"),
        (AxisError, lambda: da.add.reduce(x, axis=2), "add.reduce"),
        (AxisError, lambda: da.subtract.reduce(x, axis=-3), "subtract.reduce"),
        (AxisError, lambda: da.add.accumulate(x, axis=5), "add.accumulate"),
        (ValueError, lambda: da.sqrt.reduce(x), "sqrt.reduce"),
        (ValueError, lambda: da.negative.outer(x, x), "negative.outer"),
        (ValueError, lambda: da.sin.accumulate(x), "sin.accumulate"),
        (ValueError, lambda: da.divmod.reduce(x), "divmod.reduce"),
        (ValueError, lambda: da.subtract.reduce(x, axis=(0, 1)), "subtract.reduce"),
        (ValueError, lambda: da.minimum.reduce(x, axis=0, where=x > 0), "minimum.reduce"),
        (ValueError, lambda: da.add.reduce(x, axis=0, where=np.ones((3, 13), bool)), "add.reduce"),
        (TypeError, lambda: da.add.reduce(x, axis=0, where=np.ones(13)), "add.reduce"),
        (TypeError, lambda: da.add(1.0, 2.0, out=np.zeros(())), "add"),
        (ValueError, lambda: da.add.reduce(x, axis=0, out=da.zeros(3)), "add.reduce"),
        (ValueError, lambda: da.add(x, x, out=da.zeros((3, 3))), "add"),
        (ValueError, lambda: da.add(x, da.ones((3, 4))), "add"),
        (ValueError, lambda: da.add.at(x, [0, 1]), "add.at"),
        (TypeError, lambda: da.add(x, object()), "add"),
        (TypeError, lambda: da.arctan2(da.asarray([1j, 2j], split=0), 1.0), "arctan2"),
        (TypeError, lambda: da.add.reduce(object()), "add.reduce"),
    ]
    if da.config.backend == "numpy":
        cases += [
            (IndexError, lambda: da.add.at(x, [0, 7], 1.0), "add.at"),
            (IndexError, lambda: da.add.at(x, ([0], [0], [0]), 1.0), "add.at"),
            (ValueError, lambda: da.add.at(x, [0, 1], np.ones(5)), "add.at"),
            (IndexError, lambda: da.add.reduceat(x, [0, 7]), "add.reduceat"),
            (IndexError, lambda: da.add.reduceat(x, [-1]), "add.reduceat"),
            (TypeError, lambda: da.add.reduceat(x, [0.5]), "add.reduceat"),
        ]
    for kind, call, name in cases:
        assert_raises_everywhere(kind, call, match=name)
    if P > 1:  # along a cut axis the refusal comes before any communication
        assert_raises_everywhere(ValueError, da.power.reduce, x, axis=0, match="associative")
