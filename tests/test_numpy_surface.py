"""``import darray as np`` against NumPy: NumPy's names, NumPy's positional forms, array-likes, the coverage page.

Every result is compared with NumPy on the same input (``assert_equal``: each
rank checks its own block), one test per layout of ``tests/_cases.py`` (split=0,
replicated, uneven blocks with an empty one, a 2x2 grid at 4 ranks) and sizes
that do not divide evenly (7, 13). Bad input raises NumPy's exception type
with one message on every rank.
"""

from __future__ import annotations

import array
import importlib.util
import io
import os
from pathlib import Path

import numpy
import pytest

import darray as np  # the point of the module: NumPy's names, through darray
from darray._api.numpy import coverage as numpy_coverage
from darray.testing import assert_equal, assert_raises_everywhere, backend_dtypes

from _cases import P, layouts

pytestmark = pytest.mark.mpi

ROOT = Path(__file__).resolve().parent.parent


def named(shape) -> list:
    """Cut along axis 0 (and 1), replicated, uneven0 (more than one rank: the second block empty), grid2x2 (4 ranks,
    2-d)."""
    names = ["split0", "split1"][:len(shape)] + ["replicated"] + ["uneven0"] * (P > 1)
    return layouts(shape, *names, *["grid2x2"] * (len(shape) == 2))


def over(*shapes, prefix=str) -> list:
    """``layout`` parameters over :func:`named` layouts of ``shapes``, ids ``{prefix(shape)}-{layout}``."""
    return [pytest.param(c, id=f"{prefix(shape)}-{c}") for shape in shapes for c in named(shape)]


# ------------------------------------------------------------------ dtype names
STANDARD = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
            "complex64", "complex128"]


def test_dtype_names_are_numpys_scalar_types():
    for name in [*STANDARD, "bool_", "intc", "uintc", "intp", "uint", "longlong", "ulonglong", "single", "double",
                 "csingle", "cdouble", "ubyte", "ushort", "byte", "short", "generic", "number", "integer",
                 "signedinteger", "unsignedinteger", "inexact", "floating", "complexfloating", "dtype"]:
        assert getattr(np, name) is getattr(numpy, name), name
    assert np.float64(3) == 3.0 and type(np.float64(3)) is numpy.float64
    assert isinstance(np.int32(1), np.integer) and isinstance(np.float32(1), np.floating)
    assert np.dtype("f8") == np.float64


@pytest.mark.parametrize("layout", named((7,)), ids=str)
@pytest.mark.parametrize("name", STANDARD)
def test_dtype_names_make_arrays_of_that_dtype(name, layout):
    if name not in backend_dtypes():
        pytest.skip(f"the local library has no {name} arithmetic")  # the loop helper's rule (torch)
    t = getattr(np, name)
    x = np.zeros(7, dtype=t, **layout.kw)
    assert x.dtype == t and x.dtype == numpy.dtype(name) and isinstance(x.dtype, numpy.dtype)
    assert_equal(x, numpy.zeros(7, dtype=name))
    assert_equal(np.astype(np.ones(7, **layout.kw), t), numpy.ones(7, dtype=name))
    assert_equal(np.asarray(numpy.arange(7) % 2, dtype=t, **layout.kw), (numpy.arange(7) % 2).astype(name))
    assert np.__array_namespace_info__().dtypes()[name] == t


def test_issubdtype_and_dtype_functions_take_types():
    x = np.zeros(13, dtype=np.float32)
    assert np.issubdtype(x.dtype, np.floating) and not np.issubdtype(x.dtype, np.integer)
    assert np.issubdtype(np.arange(3).dtype, np.signedinteger)
    assert np.zeros(3, dtype=np.int32).dtype == np.int32
    assert np.isdtype(np.float64, "real floating") and np.isdtype(x.dtype, np.float32)
    assert np.can_cast(np.int32, np.float64) and not np.can_cast(np.float64, np.int32)
    assert np.result_type(np.int32, np.float32) == numpy.float64
    assert np.finfo(np.float32).eps == numpy.finfo(numpy.float32).eps and np.iinfo(np.intc).max == 2 ** 31 - 1
    assert np.promote_types(np.int8, np.uint8) == numpy.int16
    assert np.zeros(3, dtype=np.longlong).dtype == numpy.dtype("int64")  # NumPy's other names: the standard dtype
    assert np.asarray([1, 2], dtype=np.intc).dtype == np.int32


def test_backend_dtype_conversion_takes_types_and_dtypes():
    from darray._core.dtypes import to_backend_dtype

    x = np.zeros(3)
    for spec in (np.float32, numpy.dtype("float32"), "float32", "f4"):
        assert to_backend_dtype(x._xp, spec) == to_backend_dtype(x._xp, numpy.dtype("float32"))
    for spec, want in ((float, "float64"), (int, "int64"), (complex, "complex128"), (bool, "bool")):
        assert np.zeros(2, spec).dtype == numpy.dtype(want)


def test_unsupported_dtypes_raise_everywhere():
    for spec in ("S3", "U3", object, "V8"):
        assert_raises_everywhere(TypeError, np.zeros, 3, spec, match="zeros: unsupported dtype")
    assert_raises_everywhere(TypeError, np.astype, np.zeros(3), numpy.longdouble, match="astype")


# ------------------------------------------------------------------ NumPy's positional forms
POSITIONAL = {
    "zeros(7, float)": (lambda o: np.zeros(7, float, **o), lambda: numpy.zeros(7, float)),
    "zeros((7, 3), int)": (lambda o: np.zeros((7, 3), int, **o), lambda: numpy.zeros((7, 3), int)),
    "ones((13,), np.int32)": (lambda o: np.ones((13,), np.int32, **o), lambda: numpy.ones((13,), numpy.int32)),
    "ones(7, 'f4', 'C')": (lambda o: np.ones(7, "f4", "C", **o), lambda: numpy.ones(7, "f4", "C")),
    "full(7, 7, float)": (lambda o: np.full(7, 7, float, **o), lambda: numpy.full(7, 7, float)),
    "full(13, True, bool)": (lambda o: np.full(13, True, bool, **o), lambda: numpy.full(13, True, bool)),
    "arange(0, 13, 2, float)": (lambda o: np.arange(0, 13, 2, float, **o), lambda: numpy.arange(0, 13, 2, float)),
    "arange(13, None, None)": (lambda o: np.arange(2, 13, None, **o), lambda: numpy.arange(2, 13, None)),
    "linspace(0, 1, 7, False)": (lambda o: np.linspace(0, 1, 7, False, **o), lambda: numpy.linspace(0, 1, 7, False)),
    "linspace(0, 1, 13, True, False, np.float32)": (
        lambda o: np.linspace(0, 1, 13, True, False, np.float32, **o),
        lambda: numpy.linspace(0, 1, 13, True, False, numpy.float32)),
    "linspace(2, 3) (num=50)": (lambda o: np.linspace(2, 3, **o), lambda: numpy.linspace(2, 3)),
    "eye(7, 5, 1, int)": (lambda o: np.eye(7, 5, 1, int, **o), lambda: numpy.eye(7, 5, 1, int)),
    "identity(7, float)": (lambda o: np.identity(7, float, **o), lambda: numpy.identity(7, float)),
    "tril(eye(7)*3+1, -1)": (lambda o: np.tril(np.ones((7, 7), **o), -1), lambda: numpy.tril(numpy.ones((7, 7)), -1)),
    "triu([[1,2],[3,4]], 1)": (lambda o: np.triu([[1, 2], [3, 4]], 1), lambda: numpy.triu([[1, 2], [3, 4]], 1)),
    "asarray([1, 2], 'f8')": (lambda o: np.asarray([1, 2], "f8", **o), lambda: numpy.asarray([1, 2], "f8")),
}


@pytest.mark.parametrize("case,layout", [pytest.param(case, c, id=f"{case}-{c}") for case, (_, theirs) in
                                         POSITIONAL.items() for c in named(theirs().shape[:1])])
def test_positional_forms(case, layout):
    ours, theirs = POSITIONAL[case]
    assert_equal(ours(layout.kw), theirs(), err_msg=case)


@pytest.mark.parametrize("layout", named((7, 3)), ids=str)
def test_like_functions_take_numpys_positionals(layout):
    base = layout.array(numpy.arange(21).reshape(7, 3))
    assert_equal(np.zeros_like(base, float), numpy.zeros((7, 3)))
    assert np.zeros_like(base, np.int8).layout == base.layout
    assert_equal(np.full_like(base, 2.5, float), numpy.full((7, 3), 2.5))
    assert_equal(np.ones_like(base, None, "K", True, (13,)), numpy.ones(13, int))


def test_like_functions_take_array_likes():
    assert_equal(np.zeros_like([[1, 2, 3]]), numpy.zeros_like([[1, 2, 3]]))
    assert_equal(np.full_like(numpy.arange(7.0), 7), numpy.full(7, 7.0))
    x, step = np.linspace(0, 1, 13, True, True)
    want, want_step = numpy.linspace(0, 1, 13, True, True)
    assert_equal(x, want)
    assert step == want_step


# ------------------------------------------------------------------ array-likes in darray's own functions
ARRAY_LIKES = {
    "nonzero([1, 2, 0])": (lambda: np.nonzero([1, 2, 0])[0], lambda: numpy.nonzero([1, 2, 0])[0]),
    "sum([1, 2])": (lambda: np.sum([1, 2]), lambda: numpy.sum([1, 2])),
    "sum(range(5), -1)": (lambda: np.sum(range(5), -1), lambda: numpy.sum(range(5), -1)),  # numpy-100 #26
    "sort(range)": (lambda: np.sort(range(3, 0, -1)), lambda: numpy.sort(range(3, 0, -1))),
    "max(array.array)": (lambda: np.max(array.array("d", [1, 5, 2])), lambda: numpy.max(array.array("d", [1, 5, 2]))),
    "sum(2-d, 0)": (lambda: np.sum([[1, 2], [3, 4]], 0), lambda: numpy.sum([[1, 2], [3, 4]], 0)),
    "sum(2-d, 1, None, None, True)": (lambda: np.sum([[1, 2], [3, 4]], 1, None, None, True),
                                      lambda: numpy.sum([[1, 2], [3, 4]], 1, None, None, True)),
    "prod((1.5, 2))": (lambda: np.prod((1.5, 2)), lambda: numpy.prod((1.5, 2))),
    "mean([1., 2., 4.])": (lambda: np.mean([1.0, 2.0, 4.0]), lambda: numpy.mean([1.0, 2.0, 4.0])),
    "max(2-d, 0)": (lambda: np.max([[1, 5], [2, 3]], 0), lambda: numpy.max([[1, 5], [2, 3]], 0)),
    "min(ndarray)": (lambda: np.min(numpy.arange(13) - 6), lambda: numpy.min(numpy.arange(13) - 6)),
    "std(list, None, None, None, 1)": (lambda: np.std([1.0, 2.0, 4.0], None, None, None, 1),
                                       lambda: numpy.std([1.0, 2.0, 4.0], None, None, None, 1)),
    "var(list)": (lambda: np.var([1.0, 2.0, 4.0]), lambda: numpy.var([1.0, 2.0, 4.0])),
    "all([1, 0])": (lambda: np.all([1, 0]), lambda: numpy.all([1, 0])),
    "any(bools)": (lambda: np.any([False, True]), lambda: numpy.any([False, True])),
    "argmax(list)": (lambda: np.argmax([3, 9, 2]), lambda: numpy.argmax([3, 9, 2])),
    "argmin(2-d, 1)": (lambda: np.argmin([[3, 9], [2, 1]], 1), lambda: numpy.argmin([[3, 9], [2, 1]], 1)),
    "count_nonzero(list)": (lambda: np.count_nonzero([0, 1, 2]), lambda: numpy.count_nonzero([0, 1, 2])),
    "sort([3, 1])": (lambda: np.sort([3, 1]), lambda: numpy.sort([3, 1])),
    "sort(2-d, 0)": (lambda: np.sort([[3, 1], [2, 0]], 0), lambda: numpy.sort([[3, 1], [2, 0]], 0)),
    "argsort(list)": (lambda: np.argsort([3, 1, 2]), lambda: numpy.argsort([3, 1, 2])),
    "where(list, list, list)": (lambda: np.where([True, False, True], [1, 2, 3], [4, 5, 6]),
                                lambda: numpy.where([True, False, True], [1, 2, 3], [4, 5, 6])),
    "where(list, list, 0)": (lambda: np.where([True, False], [1.5, 2.5], 0),
                             lambda: numpy.where([True, False], [1.5, 2.5], 0)),
    "concat([[1], [2]])": (lambda: np.concat([[1], [2]]), lambda: numpy.concatenate([[1], [2]])),
    "stack(lists, 1)": (lambda: np.stack([[1, 2], [3, 4]], 1), lambda: numpy.stack([[1, 2], [3, 4]], 1)),
    "diff(list)": (lambda: np.diff([1, 4, 9, 16]), lambda: numpy.diff([1, 4, 9, 16])),
    "diff(list, 2)": (lambda: np.diff([1, 4, 9, 16], 2), lambda: numpy.diff([1, 4, 9, 16], 2)),
    "searchsorted(list, 3)": (lambda: np.searchsorted([1, 3, 5], 3), lambda: numpy.searchsorted([1, 3, 5], 3)),
    "searchsorted(list, list, 'right')": (lambda: np.searchsorted([1, 3, 5], [3, 4], "right"),
                                          lambda: numpy.searchsorted([1, 3, 5], [3, 4], "right")),
    "isin(list, list)": (lambda: np.isin([1, 2, 3], [2]), lambda: numpy.isin([1, 2, 3], [2])),
    "take(list, list)": (lambda: np.take([4, 5, 6], [0, 2]), lambda: numpy.take([4, 5, 6], [0, 2])),
    "matmul(lists)": (lambda: np.matmul([[1, 2], [3, 4]], [1, 1]), lambda: numpy.matmul([[1, 2], [3, 4]], [1, 1])),
    "reshape(list, shape, 'C')": (lambda: np.reshape([1, 2, 3, 4], (2, 2), "C"),
                                  lambda: numpy.reshape([1, 2, 3, 4], (2, 2), "C")),
    "flip(list)": (lambda: np.flip([1, 2, 3]), lambda: numpy.flip([1, 2, 3])),
    "roll(list, 1)": (lambda: np.roll([1, 2, 3], 1), lambda: numpy.roll([1, 2, 3], 1)),
    "repeat(list, 2)": (lambda: np.repeat([1, 2], 2), lambda: numpy.repeat([1, 2], 2)),
    "expand_dims(list, 0)": (lambda: np.expand_dims([1, 2], 0), lambda: numpy.expand_dims([1, 2], 0)),
    "tile(list, (2,))": (lambda: np.tile([1, 2], (2,)), lambda: numpy.tile([1, 2], (2,))),
    "tile(list, 3)": (lambda: np.tile([[1, 2]], 3), lambda: numpy.tile([[1, 2]], 3)),
    "unique_values(list)": (lambda: np.unique_values([3, 1, 3]), lambda: numpy.unique([3, 1, 3])),
    "squeeze(list)": (lambda: np.squeeze([[[1], [2]]]), lambda: numpy.squeeze([[[1], [2]]])),
    "squeeze(x, 0)": (lambda: np.squeeze(np.zeros((1, 7, 1)), 0), lambda: numpy.squeeze(numpy.zeros((1, 7, 1)), 0)),
    "broadcast_to(list, shape)": (lambda: np.broadcast_to([1, 2], (3, 2)), lambda: numpy.broadcast_to([1, 2], (3, 2))),
}


@pytest.mark.parametrize("case", ARRAY_LIKES)
def test_array_likes(case):
    ours, theirs = ARRAY_LIKES[case]
    assert_equal(ours(), numpy.asarray(theirs()), err_msg=case)


@pytest.mark.parametrize("layout", named((13,)), ids=str)
def test_array_likes_next_to_a_darray_take_its_layout_and_ranks(layout):
    want = numpy.arange(13.0)
    x = layout.array(want)
    mask = (want % 3 == 0).tolist()
    assert_equal(np.where(mask, x, -1.0), numpy.where(mask, want, -1.0))
    assert_equal(np.where(x > 4, want.tolist(), x), numpy.where(want > 4, want, want))
    assert_equal(np.concat([x, [1.0, 2.0]]), numpy.concatenate([want, [1.0, 2.0]]))
    assert_equal(np.matmul(x, want.tolist()), numpy.asarray(want @ want))
    assert_equal(np.sum(x, 0), numpy.asarray(want.sum()))
    parts = np.broadcast_arrays(x, [[1.0], [2.0]])
    assert_equal(parts[1], numpy.broadcast_to([[1.0], [2.0]], (2, 13)))


def test_array_like_bad_input_raises_everywhere():
    assert_raises_everywhere(TypeError, np.sum, "ab", match="sum: expected a DArray or array-like; got str")
    assert_raises_everywhere(TypeError, np.sort, object(), match="sort: expected a DArray or array-like")
    assert_raises_everywhere(TypeError, np.sum, {1, 2}, match="sum: expected a DArray or array-like; got set")
    assert_raises_everywhere(ValueError, np.mean, [[1], [2, 3]], match="mean: expected a DArray or array-like")
    assert_raises_everywhere(TypeError, np.sum, np.zeros(3), 0, None, numpy.zeros(1), match="out must be a DArray")
    assert_raises_everywhere(ValueError, np.sort, np.zeros(3), 0, "bogus", match="sort: sort kind must be one of")
    assert_equal(np.sort(np.asarray([3, 1, 2], split=0), 0, "stable"), numpy.array([1, 2, 3]))
    assert_raises_everywhere(TypeError, np.sum, np.zeros(3), 0, None, None, False, 1,
                             match="sum: too many positional arguments")
    assert_raises_everywhere(TypeError, np.sum, np.zeros(3), 0, axis=0, match="multiple values for argument 'axis'")
    assert_raises_everywhere(ValueError, np.zeros, 3, float, "X", match="zeros: unknown order")
    from numpy.exceptions import AxisError

    assert_raises_everywhere(AxisError, np.linspace, 0, 1, 5, axis=1, match="linspace: axis out of bounds")


# ------------------------------------------------------------------ index tricks
@pytest.mark.parametrize("shape", [(7,), (7, 3), (2, 3, 4)], ids=str)
def test_indices(shape, small_auto_threshold):
    for dtype in (int, np.int32, float):
        assert_equal(np.indices(shape, dtype), numpy.indices(shape, dtype))
        for ours, theirs in zip(np.indices(shape, dtype, True), numpy.indices(shape, dtype, True)):
            assert_equal(ours, theirs)
    assert_equal(np.indices(shape, split=None), numpy.indices(shape))


def test_mgrid_ogrid(small_auto_threshold):
    for key in [numpy.s_[0:7, 0:13], numpy.s_[0:1:5j, 2:4], numpy.s_[-3:3:2, 0:1:4j, 1:2], numpy.s_[0:13]]:
        assert_equal(np.mgrid[key], numpy.mgrid[key], err_msg=str(key))
        ours, theirs = np.ogrid[key], numpy.ogrid[key]
        if isinstance(theirs, tuple):
            for a, b in zip(ours, theirs, strict=True):
                assert_equal(a, b, err_msg=str(key))
        else:
            assert_equal(ours, theirs, err_msg=str(key))
    assert_equal(np.mgrid[0:1:0.25], numpy.mgrid[0:1:0.25])
    assert_raises_everywhere(TypeError, lambda: np.mgrid[0:2, 3], match="mgrid: expected slices")


def test_fromfunction(small_auto_threshold):
    assert_equal(np.fromfunction(lambda i, j: i * 13 + j, (7, 13)),
                 numpy.fromfunction(lambda i, j: i * 13 + j, (7, 13)))
    assert_equal(np.fromfunction(lambda i: i % 3 == 0, (13,), dtype=int),
                 numpy.fromfunction(lambda i: i % 3 == 0, (13,), dtype=int))


@pytest.mark.parametrize("layout", named((7, 13)), ids=str)
def test_ix(layout):
    x = numpy.arange(91).reshape(7, 13)
    d = layout.array(x)
    for rows, cols in (([0, 2, 6], [1, 12]), ([True, False, True, False, False, False, True], [3])):
        got = np.ix_(rows, cols)
        want = numpy.ix_(rows, cols)
        for a, b in zip(got, want, strict=True):
            assert_equal(a, b)
        assert_equal(d[got], x[want])


def test_ix_bad_input():
    assert_raises_everywhere(ValueError, np.ix_, [[0, 1]], match="ix_: cross index must be 1 dimensional")
    assert_raises_everywhere(IndexError, np.ix_, [0.5], match="ix_: arrays used as indices")


@pytest.mark.parametrize("layout", named((91,)), ids=str)
@pytest.mark.parametrize("order", ["C", "F"])
def test_unravel_and_ravel_multi_index(order, layout):
    shape = (7, 13, 3)
    flat = (numpy.arange(91) * 3 + 1) % numpy.prod(shape)
    want = numpy.unravel_index(flat, shape, order=order)
    got = np.unravel_index(layout.array(flat), shape, order)
    for a, b in zip(got, want, strict=True):
        assert_equal(a, b)
    assert_equal(np.ravel_multi_index(got, shape, order=order), flat)


@pytest.mark.parametrize("order", ["C", "F"])
def test_unravel_and_ravel_multi_index_of_scalars_and_lists(order):
    shape = (7, 13, 3)
    assert np.unravel_index(40, shape, order) == numpy.unravel_index(40, shape, order=order)
    coords = ([0, 9, -2], [14, 1, 2], [0, 1, 5])
    for mode in ("wrap", "clip", ("clip", "wrap", "clip")):
        assert_equal(np.ravel_multi_index(coords, shape, mode, order),
                     numpy.ravel_multi_index(coords, shape, mode=mode, order=order), err_msg=str(mode))


def test_index_tricks_bad_input_raises_everywhere():
    assert_raises_everywhere(ValueError, np.unravel_index, [0, 91], (7, 13), match="unravel_index: index out of")
    assert_raises_everywhere(TypeError, np.unravel_index, [0.5], (7, 13), match="unravel_index: only int")
    assert_raises_everywhere(ValueError, np.unravel_index, [1], (7, 13), "K", match="unravel_index: unknown order")
    assert_raises_everywhere(ValueError, np.ravel_multi_index, ([7], [0]), (7, 13),
                             match="ravel_multi_index: invalid entry")
    assert_raises_everywhere(ValueError, np.ravel_multi_index, ([1], [0]), (7, 13), "bounce",
                             match="ravel_multi_index: unknown mode")
    assert_raises_everywhere(ValueError, np.ravel_multi_index, ([1],), (7, 13), match="sequence of length 2")
    assert_raises_everywhere(ValueError, np.indices, (3, -1), match="indices: dimensions must be non-negative")


def test_ndindex():
    assert list(np.ndindex(2, 3)) == list(numpy.ndindex(2, 3))


@pytest.mark.parametrize("layout", named((7, 3)), ids=str)
def test_ndenumerate(layout):
    x = numpy.arange(21).reshape(7, 3)
    assert list(np.ndenumerate(layout.array(x))) == list(numpy.ndenumerate(x))


@pytest.mark.parametrize("layout", named((3, 1)), ids=str)
def test_nditer_allocates_none_operands(layout):
    """numpy-100 #62: a None operand is allocated by nditer and written through; DArray operands are read."""
    a, b = numpy.arange(3).reshape(3, 1), numpy.arange(3).reshape(1, 3)
    it = np.nditer([layout.array(a), b, None])
    for x, y, z in it:
        z[...] = x + y
    want = numpy.nditer([a, b, None])
    for x, y, z in want:
        z[...] = x + y
    assert type(it.operands[2]) is numpy.ndarray
    numpy.testing.assert_array_equal(it.operands[2], want.operands[2])
    assert it.operands[2].dtype == want.operands[2].dtype
    target = numpy.zeros(3)
    for x, z in np.nditer([layout.array(a).reshape(-1), target], op_flags=[["readonly"], ["writeonly"]]):
        z[...] = 2 * x
    numpy.testing.assert_array_equal(target, 2 * a.reshape(-1))
    assert_raises_everywhere(TypeError, np.nditer, [numpy.zeros(3), layout.array(a).reshape(-1)],
                             op_flags=[["readonly"], ["readwrite"]], match="nditer: writing through nditer into a")


# ------------------------------------------------------------------ the rest of NumPy's everyday names
def test_ndarray_is_the_darray_class():
    x = np.arange(7)
    assert isinstance(x, np.ndarray) and np.ndarray is np.DArray
    assert not isinstance(numpy.arange(7), np.ndarray)
    with pytest.raises(TypeError, match="DArray: do not construct directly"):
        np.ndarray((3,))


def test_as_arrays_and_fromiter():
    for f in (np.asanyarray, np.ascontiguousarray, np.asfortranarray):
        assert_equal(f([[1, 2], [3, 4]]), numpy.asarray([[1, 2], [3, 4]]))
        assert_equal(f([1, 2], np.float32), numpy.asarray([1, 2], numpy.float32))
    assert_equal(np.fromiter(iter([1.5, 2.5, 3.5]), float, 2), numpy.array([1.5, 2.5]))


@pytest.mark.parametrize("layout", named((13,)), ids=str)
def test_fromiter(layout):
    assert_equal(np.fromiter((i * i for i in range(13)), np.int64, **layout.kw),
                 numpy.fromiter((i * i for i in range(13)), numpy.int64))


@pytest.mark.parametrize("layout", named((7,)), ids=str)
@pytest.mark.parametrize("dtype", ["float64", "complex128", "int32", "bool"])
def test_type_tests(dtype, layout):
    values = numpy.array([1, 0, 2, 3, 0, 1, 5], dtype=dtype)
    if dtype == "complex128":
        values = values + 1j * (numpy.arange(7) % 2)
    x = layout.array(values)
    assert_equal(np.isreal(x), numpy.isreal(values))
    assert_equal(np.iscomplex(x), numpy.iscomplex(values))
    assert np.iscomplexobj(x) == numpy.iscomplexobj(values) and np.isrealobj(x) == numpy.isrealobj(values)


def test_isscalar():
    assert not np.isscalar(np.asarray(3.0)) and np.isscalar(3.0) and np.isscalar(np.float64(3))


def test_errstate_is_numpys_and_applies_to_numpy_blocks():
    assert np.errstate is numpy.errstate and np.seterr is numpy.seterr and np.geterr is numpy.geterr
    x = np.zeros(7)
    if x._xp is not numpy and x.local.__class__ is not numpy.ndarray:
        return  # other local libraries have no floating-point error state
    with np.errstate(divide="raise"):
        assert_raises_everywhere(FloatingPointError, lambda: (1.0 / x).gather())
    with np.errstate(divide="ignore"):
        assert_equal(1.0 / x, numpy.full(7, numpy.inf))


@pytest.mark.parametrize("layout", named((13,)), ids=str)
def test_elementwise_helpers(layout):
    values = numpy.array([2.5, -2.5, -0.0, 0.0, numpy.inf, -numpy.inf, numpy.nan, 0.5, -3.0, 7.25, 1.0, -1.5, 2.0])
    x = layout.array(values)
    assert_equal(np.fix(x), numpy.fix(values))
    assert_equal(np.isposinf(x), numpy.isposinf(values))
    assert_equal(np.isneginf(x), numpy.isneginf(values))
    finite = numpy.nan_to_num(values, posinf=3.0, neginf=-3.0)
    assert_equal(np.sinc(layout.array(finite)), numpy.sinc(finite), rtol=1e-12, atol=1e-15)


def test_elementwise_helpers_on_array_likes():
    ints = numpy.arange(13) - 6
    assert_equal(np.fix(ints), numpy.fix(ints))
    assert_equal(np.isposinf(ints), numpy.isposinf(ints))
    assert_equal(np.sinc(ints), numpy.sinc(ints), atol=1e-15)
    close = numpy.array([2.1 + 4e-14j, 5.2 + 3e-15j])
    for tol in (100, 1000, 1e-13):
        assert_equal(np.real_if_close(close, tol), numpy.real_if_close(close, tol), err_msg=str(tol))
    assert_raises_everywhere(TypeError, np.isposinf, [1j], match="isposinf: not supported for complex")


def test_checks_and_type_helpers():
    assert_equal(np.asarray_chkfinite([1.0, 2.0]), numpy.asarray_chkfinite([1.0, 2.0]))
    assert_raises_everywhere(ValueError, np.asarray_chkfinite, [1.0, numpy.nan],
                             match="asarray_chkfinite: array must not contain infs or NaNs")
    for dtypes in (("float32", "int64"), ("float32",), ("complex64", "float64"), ("int8", "uint8")):
        arrays = [numpy.zeros(2, d) for d in dtypes]
        assert np.common_type(*[np.asarray(a) for a in arrays]) is numpy.common_type(*arrays), dtypes
    assert_raises_everywhere(TypeError, np.common_type, np.zeros(2, bool), match="common_type: can't get common type")
    assert np.min_scalar_type(np.asarray(300)) == numpy.min_scalar_type(300)
    assert np.min_scalar_type(np.arange(3)) == numpy.min_scalar_type(numpy.arange(3))
    for name in ("s_", "index_exp", "False_", "True_", "euler_gamma", "little_endian", "exceptions", "typename",
                 "mintypecode", "iterable", "base_repr", "binary_repr", "format_float_positional"):
        assert getattr(np, name) is getattr(numpy, name), name
    x = np.arange(13)
    assert_equal(x[np.s_[2:9:3]], numpy.arange(13)[2:9:3])


def by_num(*calls) -> list:
    """``(args, layout)`` parameters: the layouts of ``args[2]`` cells, ids ``{args}-{layout}``."""
    return [pytest.param(args, c, id=f"{args}-{c}") for args in calls for c in named((args[2],))]


@pytest.mark.parametrize("args,layout", by_num((0, 2, 7), (1, 3, 13, False, 2.0), (0, 1, 7, True, 10.0, "float32"),
                                               (2, 0, 1)))
def test_logspace(args, layout):
    assert_equal(np.logspace(*args, **layout.kw), numpy.logspace(*args), rtol=1e-5)


@pytest.mark.parametrize("args,layout", by_num((1, 1000, 7), (-1, -1000, 13), (1, 256, 9, False), (1j, 1000j, 7),
                                               (3, 3, 1), (2.0, 5.0, 13, True, "float32")))
def test_geomspace(args, layout):
    want = numpy.geomspace(*args)
    assert_equal(np.geomspace(*args, **layout.kw), want, rtol=1e-5 if want.dtype == numpy.float32 else 1e-12)


def test_geomspace_bad_input():
    assert_raises_everywhere(ValueError, np.geomspace, 0, 1, 3, match="geomspace: geometric sequence cannot include")


@pytest.mark.parametrize("layout", over((7, 7), (7, 13), (13, 7), prefix=lambda s: "x".join(map(str, s))))
def test_tri(layout):
    n, m = layout.shape
    for k in (-2, 0, 3):
        assert_equal(np.tri(n, m, k, int, **layout.kw), numpy.tri(n, m, k, int), err_msg=f"k={k}")


@pytest.mark.parametrize("shape", [(7, 7), (7, 13), (13, 7)], ids=str)
def test_triangle_indices(shape, small_auto_threshold):
    n, m = shape
    for k in (-2, 0, 3):
        for ours, theirs in ((np.tril_indices(n, k, m), numpy.tril_indices(n, k, m)),
                             (np.triu_indices(n, k, m), numpy.triu_indices(n, k, m)),
                             (np.tril_indices_from(numpy.zeros(shape), k), numpy.tril_indices_from(numpy.zeros(shape), k)),
                             (np.triu_indices_from(np.zeros(shape), k), numpy.triu_indices_from(numpy.zeros(shape), k))):
            for a, b in zip(ours, theirs, strict=True):
                assert_equal(a, b, err_msg=f"k={k}")
    for a, b in zip(np.mask_indices(n, np.triu, 1), numpy.mask_indices(n, numpy.triu, 1), strict=True):
        assert_equal(a, b)
    for a, b in zip(np.diag_indices(n, 3), numpy.diag_indices(n, 3), strict=True):
        assert_equal(a, b)
    assert_raises_everywhere(ValueError, np.diag_indices_from, np.zeros(shape) if n != m else np.zeros((n, n + 1)),
                             match="diag_indices_from: all dimensions of input must be of equal length")
    assert_raises_everywhere(ValueError, np.tril_indices_from, np.zeros(n), match="tril_indices_from: input array")


@pytest.mark.parametrize("layout", named((13,)), ids=str)
@pytest.mark.parametrize("dtype", ["int64", "float64", "complex128", "bool"])
def test_vander(dtype, layout):
    values = (numpy.arange(13) % 5 - 2).astype(dtype)
    x = layout.array(values)
    for n, increasing in ((None, False), (4, True), (0, False), (1, False)):
        assert_equal(np.vander(x, n, increasing), numpy.vander(values, n, increasing), err_msg=str(n))


def test_vander_bad_input():
    assert_raises_everywhere(ValueError, np.vander, np.zeros((2, 2)), match="vander: x must be a one-dimensional")


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
def test_windows(name, small_auto_threshold):
    for m in (0, 1, 2, 7, 13):
        assert_equal(getattr(np, name)(m), getattr(numpy, name)(m), atol=1e-15, err_msg=f"{name}({m})")
    assert_raises_everywhere(TypeError, getattr(np, name), 2.5, match=f"{name}: M must be an integer")


def test_diagflat_and_argwhere_of_scalars():
    for v, k in (([[1, 2], [3, 4]], 0), ([1.5, 2.5, 3.5], -2), ([[1, 2]], 1)):
        assert_equal(np.diagflat(v, k), numpy.diagflat(v, k), err_msg=str((v, k)))
    for v in (0, 3):
        assert_equal(np.argwhere(np.asarray(v)), numpy.argwhere(v))


@pytest.mark.parametrize("layout", named((7, 13)), ids=str)
def test_flatnonzero_argwhere(layout):
    values = (numpy.arange(91).reshape(7, 13) % 4 == 0)
    x = layout.array(values)
    assert_equal(np.flatnonzero(x), numpy.flatnonzero(values))
    assert_equal(np.argwhere(x), numpy.argwhere(values))


# ------------------------------------------------------------------ files
@pytest.mark.parametrize("layout", named((7, 13)), ids=str)
def test_save_load_npy(layout, shared):
    want = numpy.arange(91.0).reshape(7, 13)
    path = str(shared / "a")  # numpy.save's rule: .npy is appended
    np.save(path, layout.array(want))
    assert numpy.array_equal(numpy.load(path + ".npy"), want)
    assert_equal(np.load(path + ".npy"), want)
    assert_equal(np.load(Path(path + ".npy"), split=1), want)


def test_save_load_list_npy(shared):
    np.save(str(shared / "list.npy"), [[1, 2], [3, 4]])
    assert_equal(np.load(str(shared / "list.npy")), numpy.array([[1, 2], [3, 4]]))


def test_load_never_unpickles(shared, comm):
    path = shared / "objects.npy"
    if comm.rank == 0:
        numpy.save(path, numpy.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    comm.barrier()
    assert_raises_everywhere(ValueError, np.load, str(path), allow_pickle=True, match="load: allow_pickle=True")
    assert_raises_everywhere(TypeError, np.load, str(path), match="unsupported stored dtype")
    assert_raises_everywhere(ValueError, np.load, str(shared / "x.npz"), match="load: .npz archives")
    assert_raises_everywhere(TypeError, np.save, 3, np.zeros(2), match="save: file must be a path")


@pytest.mark.parametrize("layout", named((13, 3)), ids=str)
def test_savetxt_loadtxt(layout, shared):
    want = numpy.arange(39.0).reshape(13, 3) / 4
    path = shared / "t.txt"
    np.savetxt(str(path), layout.array(want), fmt="%.6f", delimiter=",", header="h")
    assert numpy.array_equal(numpy.loadtxt(path, delimiter=","), want)
    assert_equal(np.loadtxt(path, delimiter=","), want)
    if layout.id == "split0":  # the columns of one written file
        columns = np.loadtxt(path, delimiter=",", unpack=True)
        for ours, theirs in zip(columns, numpy.loadtxt(path, delimiter=",", unpack=True), strict=True):
            assert_equal(ours, theirs)


def test_savetxt_loadtxt_bad_input(shared):
    assert_raises_everywhere(ValueError, np.savetxt, str(shared / "c.txt"), np.zeros((2, 2, 2)),
                             match="savetxt: expected a 1-d or 2-d array")
    assert_raises_everywhere(FileNotFoundError, np.loadtxt, str(shared / "missing.txt"), match="loadtxt")


def test_fromfile_reads_each_ranks_region(shared, comm, small_auto_threshold):
    want = numpy.arange(91, dtype=numpy.float32)
    path = shared / "raw.bin"
    if comm.rank == 0:
        want.tofile(path)
        with open(shared / "raw.txt", "w") as f:
            f.write(" ".join(str(v) for v in range(13)))
    comm.barrier()
    for split in (0, None):
        assert_equal(np.fromfile(path, np.float32, split=split), want, err_msg=str(split))
        assert_equal(np.fromfile(str(path), np.float32, 13, "", 8, split=split), want[2:15], err_msg=str(split))
    assert_equal(np.fromfile(shared / "raw.txt", int, sep=" "), numpy.arange(13))
    assert_raises_everywhere(ValueError, np.fromfile, path, np.float32, 100, match="fromfile: file too short")
    assert_raises_everywhere(TypeError, np.fromfile, path, "U2", match="fromfile: unsupported dtype")


def test_frombuffer_fromstring_genfromtxt(shared, comm):
    assert_equal(np.frombuffer(bytes(range(13)), numpy.uint8), numpy.frombuffer(bytes(range(13)), numpy.uint8))
    assert_equal(np.fromstring("1 2 3.5", sep=" "), numpy.fromstring("1 2 3.5", sep=" "))
    path = shared / "gaps.txt"
    if comm.rank == 0:
        path.write_text("1,2,3\n4,,6\n7,8,\n")
    comm.barrier()
    assert_equal(np.genfromtxt(path, delimiter=","), numpy.genfromtxt(path, delimiter=","))
    assert_equal(np.genfromtxt(path, delimiter=",", filling_values=-1, dtype=int),
                 numpy.genfromtxt(path, delimiter=",", filling_values=-1, dtype=int))


TEXT = "1, 2, 3, 4, 5\n\n6,  ,  , 7, 8\n\n ,  , 9,10,11\n"  # numpy-100 exercise 54


def test_text_readers_take_open_files_and_lines(shared, comm):
    """NumPy's other sources: an open file (StringIO, BytesIO, open()) and lines, every rank holding its own."""
    for ours, theirs in [(np.genfromtxt, numpy.genfromtxt), (np.loadtxt, numpy.loadtxt)]:
        keywords = dict(delimiter=",", dtype=int) if ours is np.genfromtxt else dict(delimiter=",")
        text = TEXT if ours is np.genfromtxt else "1, 2\n3, 4\n"
        want = theirs(io.StringIO(text), **keywords)
        assert_equal(ours(io.StringIO(text), **keywords), want)
        assert_equal(ours(io.BytesIO(text.encode()), **keywords), want)
        assert_equal(ours(text.splitlines(), **keywords), want)
        assert_equal(ours((line for line in text.splitlines()), **keywords), want)
    path = shared / "opened.txt"
    if comm.rank == 0:
        path.write_text("1 2\n3 4\n")
    comm.barrier()
    with open(path) as f:
        assert_equal(np.loadtxt(f), numpy.loadtxt(path))


def test_text_readers_refuse_ranks_reading_different_text(comm):
    if comm.size > 1:
        mine = io.StringIO("1 2" if comm.rank == 0 else "1 3")
        assert_raises_everywhere(ValueError, np.loadtxt, mine, match="loadtxt: the ranks read different text")
    assert_raises_everywhere(TypeError, np.genfromtxt, [1, 2], match="genfromtxt: lines must be str or bytes")
    assert_raises_everywhere(TypeError, np.loadtxt, 3.5, match="loadtxt: file must be a path, an open file")


def test_savetxt_refuses_big_arrays_before_communicating(shared, monkeypatch):
    from darray.io import numpy_files

    monkeypatch.setattr(numpy_files, "TEXT_MAX_ELEMENTS", 10)
    assert_raises_everywhere(ValueError, np.savetxt, str(shared / "big.txt"), np.zeros(13),
                             match="savetxt: array too large")
    assert not os.path.exists(shared / "big.txt")


# ------------------------------------------------------------------ the coverage table and page
def test_every_public_numpy_name_is_in_darray_or_in_the_table():
    assert numpy_coverage.missing(np) == [], (
        "NumPy names neither in darray nor in darray/_api/numpy/coverage.py EXCLUDED (add them with a reason)")


def test_no_stale_exclusions():
    assert numpy_coverage.stale(np) == [], (
        "names in darray/_api/numpy/coverage.py EXCLUDED that darray now has (or NumPy lacks): remove them")


def test_names_left_out_say_why_when_used():
    """numpy-100 #5 (np.info): a name of the table raises AttributeError with its reason and alternative."""
    for name in ("info", "show_config", "rec", "core"):
        with pytest.raises(AttributeError, match=f"^module 'darray' has no attribute '{name}': .*use "):
            getattr(np, name)
    assert not hasattr(np, "info")
    with pytest.raises(AttributeError, match="^module 'darray' has no attribute 'no_such_name'$"):
        np.no_such_name


def test_local_only_names_exist_and_say_so_in_their_docstrings():
    for key in numpy_coverage.LOCAL_ONLY:
        obj = np
        for part in key.split("."):
            obj = getattr(obj, part)
        doc = (obj.__doc__ or "").lower()
        assert any(word in doc for word in ("gather", "every rank")), key


def test_the_committed_coverage_page_is_up_to_date():
    spec = importlib.util.spec_from_file_location("_numpy_coverage", ROOT / "docs" / "_numpy_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "docs" / "numpy.md").read_text() == module.page(), (
        "docs/numpy.md is out of date: run python docs/_numpy_coverage.py")
