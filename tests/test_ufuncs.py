"""darray's ufunc objects against NumPy's: attributes, calls with keywords, and every method, on every rank count.

``reduce``, ``accumulate``, ``outer``, ``at`` and ``reduceat`` of a representative set of ufuncs, over the
layout matrix (cut along axis 0, replicated, uneven blocks with an empty one, cut along axis 1, a 2x2 grid at
4 ranks) and odd sizes; the same methods reached through NumPy (``numpy.add.reduce(x)``); bad input raising
NumPy's exception type identically on every rank.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from numpy.exceptions import AxisError

import darray as da
from darray.testing import assert_equal, assert_raises_everywhere, uneven_sizes as uneven

pytestmark = pytest.mark.mpi

P = da.default_communicator().size
SHAPE = (7, 13)
numpy_only = pytest.mark.numpy_only

#: The ufuncs every method is checked on; power and arctan2 reduce/accumulate with NumPy's loops only.
STANDARD = ("add", "subtract", "multiply", "maximum", "minimum", "logical_and", "bitwise_or", "divide")
BINARY = STANDARD + ("power", "arctan2")
ALL_BACKENDS = [*STANDARD, *(pytest.param(n, marks=numpy_only) for n in ("power", "arctan2"))]
NOT_ASSOCIATIVE = {"power", "arctan2"}


def layouts(shape=SHAPE) -> dict[str, dict]:
    out = {"split0": dict(split=0), "replicated": dict(split=None), "uneven": dict(split=0, sizes=uneven(shape[0], P))}
    if len(shape) > 1:
        out["split1-uneven"] = dict(split=1, sizes={1: uneven(shape[1], P)})
        if P == 4:
            out["grid22"] = dict(split=(0, 1), grid=(2, 2))
    return out


def operand(name: str, shape=SHAPE, seed: int = 0) -> np.ndarray:
    """Values in the ufunc's domain, the same on every rank."""
    rng = np.random.default_rng([seed, len(shape), sum(shape), sum(map(ord, name))])
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
def test_call_matches_the_plain_function_path():
    g, h = operand("add"), operand("add", seed=1)
    for name, kw in layouts().items():
        x, y = da.asarray(g, **kw), da.asarray(h, **kw)
        assert_equal(da.add(x, y), g + h, err_msg=name)
        assert_equal(da.add(2.5, x), 2.5 + g, err_msg=name)
        assert_equal(da.subtract(x, h), g - h, err_msg=name)
        assert_equal(da.arctan2(x, y), np.arctan2(g, h), err_msg=name)
        assert_equal(da.negative(x), -g, err_msg=name)


def test_out_where_dtype():
    g, h = operand("multiply"), operand("multiply", seed=1)
    for name, kw in layouts().items():
        a, b = da.asarray(g.copy(), **kw), da.asarray(h, **kw)  # copies: a block may be a view of the input
        assert da.multiply(a, b, out=a) is a  # in place
        assert_equal(a, g * h, err_msg=f"multiply out=a {name}")
        x = da.asarray(g.copy(), **kw)
        assert da.negative(x, out=x) is x
        assert_equal(x, -g, err_msg=f"negative out=x {name}")
        o = da.zeros(SHAPE, split=None)  # another layout than the operands'
        assert da.add(da.asarray(g, **kw), h, o) is o  # positional out
        assert_equal(o, g + h, err_msg=f"positional out {name}")
        o = da.asarray(np.full(SHAPE, -1.0), **kw)
        mask = g > 1.0
        da.add(da.asarray(g, **kw), da.asarray(h, **kw), out=o, where=da.asarray(mask, **kw))
        assert_equal(o, np.add(g, h, out=np.full(SHAPE, -1.0), where=mask), err_msg=f"where {name}")
        got = da.add(da.asarray(g, **kw), 1.0, dtype=np.float32)
        assert_equal(got, np.add(g, 1.0, dtype=np.float32), err_msg=f"dtype {name}")
        i = da.asarray(np.arange(91).reshape(SHAPE), **kw)  # a fresh array each time
        assert_equal(da.multiply(i, 3, out=i), np.arange(91).reshape(SHAPE) * 3, err_msg=f"ints in place {name}")


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


def test_integers_in_floating_functions_are_promoted_as_numpy_does():
    g = np.arange(-6, 7).astype(np.int64)
    for name, kw in layouts((13,)).items():
        x = da.asarray(g, **kw)
        assert_equal(da.sin(x), np.sin(g), err_msg=name)
        assert_equal(da.arctan2(x, x + 1), np.arctan2(g, g + 1), err_msg=name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            assert_equal(da.sqrt(x), np.sqrt(g), err_msg=name)
    assert_raises_everywhere(TypeError, da.sin, da.asarray(g > 0, split=0), match="sin")  # bools stay refused


@pytest.mark.parametrize("dtype,want", [("int8", "float32"), ("uint8", "float32"), ("int16", "float32"),
                                        ("uint16", "float32"), ("int32", "float64"), ("uint64", "float64")])
def test_small_integers_promote_to_numpys_float(dtype, want):
    """NumPy's smallest float that holds the integers (its float16 for 8-bit ones is float32: no darray float16)."""
    g = np.arange(13).astype(dtype)
    x, f = da.asarray(g, split=0), g.astype(want)
    for got, ref in ((da.sqrt(x), np.sqrt(f)), (da.exp(x), np.exp(f)), (da.arctan2(x, x), np.arctan2(f, f))):
        assert got.dtype == np.dtype(want)
        assert_equal(got, ref)
    if dtype not in ("int8", "uint8"):  # NumPy's own dtype, where darray has it
        assert np.sqrt(g).dtype == np.dtype(want)


# ------------------------------------------------------------------ reduce
@pytest.mark.parametrize("name", ALL_BACKENDS)
def test_reduce(name):
    f, ref = getattr(da, name), getattr(np, name)
    g = operand(name)
    for lay, kw in layouts().items():
        x = da.asarray(g, **kw)
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
                             err_msg=f"{name}.reduce axis={axis} keepdims={keepdims} {lay}")


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "complex128", "bool"])
def test_reduce_and_accumulate_dtypes(dtype):
    g = (operand("add", seed=7) * 3).astype(dtype)
    for name in ("add", "multiply", "maximum", "subtract"):
        f, ref = getattr(da, name), getattr(np, name)
        if (dtype == "complex128" and name == "maximum") or (dtype == "bool" and name == "subtract"):
            continue
        for lay, kw in layouts().items():
            x = da.asarray(g, **kw)
            for axis in (0, 1):
                assert_equal(f.reduce(x, axis=axis), ref.reduce(g, axis=axis), err_msg=f"{name} {dtype} {axis} {lay}")
            if name in ("add", "multiply") and dtype != "bool":
                assert_equal(f.accumulate(x, axis=0), ref.accumulate(g, axis=0), err_msg=f"{name} {dtype} {lay}",
                             atol=1e-5 if dtype == "float32" else 0.0)  # running sums cross zero: rounding order


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "subtract", "minimum", "bitwise_or"])
def test_reduce_initial_where_dtype_out(name):
    f, ref = getattr(da, name), getattr(np, name)
    g = operand(name)
    mask = operand("logical_and", seed=5)
    for lay, kw in layouts().items():
        x, m = da.asarray(g, **kw), da.asarray(mask, **kw)
        for axis in (0, 1):
            init = 3 if g.dtype.kind == "i" else 1.5
            assert_equal(f.reduce(x, axis=axis, initial=init), ref.reduce(g, axis=axis, initial=init),
                         err_msg=f"initial {axis} {lay}")
            if ref.identity is not None or name in ("maximum", "minimum", "subtract"):
                want = ref.reduce(g, axis=axis, initial=init, where=mask)
                assert_equal(f.reduce(x, axis=axis, initial=init, where=m), want, err_msg=f"where {axis} {lay}")
                assert_equal(f.reduce(x, axis=axis, initial=init, where=mask), want,
                             err_msg=f"where numpy mask {axis} {lay}")
            if ref.identity is not None:
                assert_equal(f.reduce(x, axis=axis, where=m), ref.reduce(g, axis=axis, where=mask),
                             err_msg=f"where identity {axis} {lay}")
            if g.dtype.kind == "f":
                assert_equal(f.reduce(x, axis=axis, dtype=np.float32), ref.reduce(g, axis=axis, dtype=np.float32),
                             err_msg=f"dtype {axis} {lay}")
            out = da.zeros(SHAPE[1 - axis], dtype=ref.reduce(g, axis=axis).dtype, split=0)
            assert f.reduce(x, axis=axis, out=out) is out
            assert_equal(out, ref.reduce(g, axis=axis), err_msg=f"out= {axis} {lay}")


def test_reduce_empty_and_sequences():
    e = np.zeros((0, 5))
    for lay, kw in layouts((0, 5)).items():
        x = da.asarray(e, **kw)
        assert_equal(da.add.reduce(x, axis=0), np.add.reduce(e, axis=0), err_msg=lay)
        assert_equal(da.multiply.reduce(x, axis=0, keepdims=True), np.multiply.reduce(e, axis=0, keepdims=True))
        assert_equal(da.maximum.reduce(x, axis=0, initial=-1.0), np.maximum.reduce(e, axis=0, initial=-1.0))
        assert_raises_everywhere(ValueError, da.maximum.reduce, x, axis=0, match="identity")
    masks = [operand("logical_and", seed=s) for s in range(3)]
    for lay, kw in layouts().items():
        got = da.logical_and.reduce([da.asarray(m, **kw) for m in masks])
        assert_equal(got, np.logical_and.reduce(masks), err_msg=lay)
        got = da.add.reduce([da.asarray(m, **kw) for m in masks], axis=1)
        assert_equal(got, np.add.reduce(masks, axis=1), err_msg=lay)
    assert_equal(da.add.reduce([1.0, 2.0, 4.0]), np.asarray(7.0))


# ------------------------------------------------------------------ accumulate
@pytest.mark.parametrize("name", ["add", "multiply", pytest.param("maximum", marks=numpy_only),
                                  pytest.param("subtract", marks=numpy_only), pytest.param("divide", marks=numpy_only),
                                  pytest.param("bitwise_or", marks=numpy_only),
                                  pytest.param("logical_and", marks=numpy_only),
                                  pytest.param("power", marks=numpy_only)])
def test_accumulate(name):
    f, ref = getattr(da, name), getattr(np, name)
    g = operand(name)
    for lay, kw in layouts().items():
        x = da.asarray(g, **kw)
        for axis in (0, 1, -1):
            if name in NOT_ASSOCIATIVE and cut(x, axis):
                assert_raises_everywhere(ValueError, f.accumulate, x, axis=axis, match="associative")
                continue
            want = ref.accumulate(g, axis=axis)
            got = f.accumulate(x, axis=axis)
            assert_equal(got, want, err_msg=f"{name}.accumulate axis={axis} {lay}")
            assert got.layout.blocks_key == x.layout.blocks_key  # the input's layout
        if g.dtype.kind == "f" and not (name in NOT_ASSOCIATIVE and cut(x, 0)):
            assert_equal(f.accumulate(x, axis=0, dtype=np.float32), ref.accumulate(g, axis=0, dtype=np.float32))
            out = da.zeros(SHAPE, split=None)
            assert f.accumulate(x, axis=0, out=out) is out
            assert_equal(out, ref.accumulate(g, axis=0), err_msg=f"out= {lay}")


# ------------------------------------------------------------------ outer
@pytest.mark.parametrize("name", BINARY)
def test_outer(name):
    f, ref = getattr(da, name), getattr(np, name)
    a, b = operand(name, (7,)), operand(name, (13,), seed=1)
    m = operand(name, (3, 5), seed=2)
    for (la, ka), (lb, kb) in zip(layouts((7,)).items(), reversed(list(layouts((13,)).items()))):
        xa, xb = da.asarray(a, **ka), da.asarray(b, **kb)
        got = f.outer(xa, xb)
        assert_equal(got, ref.outer(a, b), err_msg=f"{name}.outer {la} {lb}")
        assert_equal(f.outer(xb, a), ref.outer(b, a), err_msg=f"{name}.outer DArray-numpy {la} {lb}")
        assert_equal(f.outer(da.asarray(m, split=0), xa), ref.outer(m, a), err_msg=f"{name}.outer 2-d {la}")
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
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "bitwise_or", "power", "divide"])
def test_at_with_repeated_indices(name):
    f, ref = getattr(da, name), getattr(np, name)
    base = operand(name, (13,)).astype(np.int64 if name == "bitwise_or" else np.float64)
    idx = [0, 12, 3, 3, 3, -1, 6, 0, 7]
    vals = operand(name, (len(idx),), seed=3).astype(base.dtype)
    for lay, kw in layouts((13,)).items():
        for b in (vals, vals[0].item(), "darray"):
            want = base.copy()
            ref.at(want, idx, vals if isinstance(b, str) else b)
            x = da.asarray(base.copy(), **kw)
            assert f.at(x, idx, da.asarray(vals, split=0) if isinstance(b, str) else b) is None
            assert_equal(x, want, err_msg=f"{name}.at b={type(b).__name__} {lay}")


@numpy_only
def test_at_multi_axis_unary_and_numpy_path():
    g = operand("add")
    rows, cols = np.array([0, 6, 6, 2, 0]), np.array([1, 12, 12, 4, 1])
    for lay, kw in layouts().items():
        want = g.copy()
        np.add.at(want, (rows, cols), 1.5)
        x = da.asarray(g.copy(), **kw)
        da.add.at(x, (rows, cols), 1.5)
        assert_equal(x, want, err_msg=f"tuple of arrays {lay}")
        want = g.copy()
        np.add.at(want, [1, 1, 5], np.arange(13.0))  # rows, a row of values broadcast
        x = da.asarray(g.copy(), **kw)
        np.add.at(x, [1, 1, 5], np.arange(13.0))  # NumPy's ufunc hands it to darray
        assert_equal(x, want, err_msg=f"rows, numpy path {lay}")
        want = g.copy()
        np.add.at(want, [1, 1, 5], operand("add", (3, 13), seed=9))
        x = da.asarray(g.copy(), **kw)
        da.add.at(x, da.asarray([1, 1, 5], split=0), da.asarray(operand("add", (3, 13), seed=9), split=0))
        assert_equal(x, want, err_msg=f"rows, routed DArray values {lay}")
        want = g.copy()
        np.negative.at(want, [2, 2, 3])
        x = da.asarray(g.copy(), **kw)
        da.negative.at(x, [2, 2, 3])
        assert_equal(x, want, err_msg=f"unary {lay}")
        want = g.copy()
        np.multiply.at(want, (slice(1, 4), 2), 2.0)
        x = da.asarray(g.copy(), **kw)
        da.multiply.at(x, (slice(1, 4), 2), 2.0)
        assert_equal(x, want, err_msg=f"basic indices {lay}")


# ------------------------------------------------------------------ reduceat
@numpy_only
@pytest.mark.parametrize("name", BINARY)
def test_reduceat(name):
    f, ref = getattr(da, name), getattr(np, name)
    g = operand(name)
    for lay, kw in layouts().items():
        x = da.asarray(g, **kw)
        for axis, idx in [(0, [0, 3, 1, 6]), (1, [0, 4, 4, 2, 12]), (1, [5]), (-1, [12, 0, 7, 8, 10])]:
            if name in NOT_ASSOCIATIVE and cut(x, axis):
                assert_raises_everywhere(ValueError, f.reduceat, x, idx, axis=axis, match="associative")
                continue
            assert_equal(f.reduceat(x, idx, axis=axis), ref.reduceat(g, idx, axis=axis),
                         err_msg=f"{name}.reduceat {idx} axis={axis} {lay}")
    out = da.zeros((4, 13), dtype=ref.reduceat(g, [0, 3, 1, 6]).dtype, split=0)
    if name not in NOT_ASSOCIATIVE or P == 1:
        assert f.reduceat(da.asarray(g, split=0), [0, 3, 1, 6], out=out) is out
        assert_equal(out, ref.reduceat(g, [0, 3, 1, 6]))


# ------------------------------------------------------------------ NumPy's ufuncs reach the same methods
@numpy_only
def test_numpy_methods_on_darrays():
    g, mask = operand("add"), operand("logical_and", seed=4)
    for lay, kw in layouts().items():
        x = da.asarray(g, **kw)
        assert_equal(np.add.reduce(x, axis=1, where=mask, initial=1.0),
                     np.add.reduce(g, axis=1, where=mask, initial=1.0), err_msg=lay)
        assert_equal(np.maximum.accumulate(x, axis=0), np.maximum.accumulate(g, axis=0), err_msg=lay)
        assert_equal(np.subtract.reduce(x, axis=0), np.subtract.reduce(g, axis=0), err_msg=lay)
        assert_equal(np.minimum.reduceat(x, [0, 2], axis=0), np.minimum.reduceat(g, [0, 2], axis=0), err_msg=lay)
        out = da.zeros((13,), split=0)
        assert np.add.reduce(x, axis=0, out=out) is out
        assert_equal(out, np.add.reduce(g, axis=0), err_msg=lay)


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
