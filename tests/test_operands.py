"""Operands NumPy takes meet DArrays everywhere: lists, tuples, NumPy arrays and scalars, 0-d arrays.

Every operator (and its reflected and in-place form) and the functions a NumPy
script calls with array-likes, on cut layouts, against NumPy on the gathered
input; ``numpy.f(ndarray, DArray)`` through ``__array_function__`` treats the
NumPy array as replicated input.
"""

from __future__ import annotations

import array
import operator

import numpy as np
import pytest

import darray as da
from darray.testing import assert_equal, assert_results_equal

from _cases import layouts, values

pytestmark = pytest.mark.mpi

LAYOUTS = layouts((6, 2), "split0", "uneven0", "split1", "replicated", "grid2x2")

#: Operand forms of the same two numbers, one per row of a (6, 2) array. (Integers meet floats on NumPy blocks
#: only: the standard's strict libraries refuse to promote across kinds.)
FORMS = {"list": [2.0, -3.0], "tuple": (2, -3) if da.config.backend == "numpy" else (2.0, -3.0),
         "ndarray": np.array([2.5, 0.5]), "nested list": [[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]],
         "array.array": array.array("d", [2.0, -3.0]),
         **({"range": range(2, 4)} if da.config.backend == "numpy" else {})}
OPERATORS = (operator.add, operator.sub, operator.mul, operator.truediv, operator.eq, operator.lt, operator.pow,
             operator.floordiv, operator.mod, operator.ge)


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_operators_with_sequences(layout):
    g = values(layout.shape, "float64") + 5.0
    x = layout.array(g)
    for name, other in FORMS.items():
        for op in OPERATORS:
            with np.errstate(invalid="ignore", divide="ignore"):  # (negative bases to fractional powers: nan)
                assert_results_equal(op(x, other), op(g, np.asarray(other)), err_msg=f"x {op.__name__} {name}")
                assert_results_equal(op(other, x), op(np.asarray(other), g), err_msg=f"{name} {op.__name__} x")
        y, h = layout.array(g.copy()), g.copy()
        y += other
        h += np.asarray(other)
        assert_equal(y, h, err_msg=f"x += {name}")
    assert_results_equal(x[:2] @ [1.0, 2.0], g[:2] @ [1.0, 2.0], err_msg="x @ list")
    assert_results_equal([1.0, 2.0, 3.0, 4.0, 5.0, 6.0] @ x, np.arange(1.0, 7.0) @ g, err_msg="list @ x")


@pytest.mark.parametrize("layout", [*LAYOUTS, *layouts((6, 2), "halo0")], ids=str)
def test_equality_with_objects_is_elementwise(layout):
    """``x == None`` (or a string, or any object): NumPy compares element by element, no element equals it (a
    boolean array, never a lone ``False``); other operators give Python's TypeError."""
    g = values(layout.shape, "float64")
    x = layout.array(g)
    for other in (None, "abc", object()):
        for op in (operator.eq, operator.ne):
            assert_equal(op(x, other), op(g, other))
            assert_equal(op(other, x), op(other, g))
        with pytest.raises(TypeError):
            operator.lt(x, other)
    assert_equal(x[x == None], g[g == None])  # noqa: E711 (NumPy's elementwise meaning is what is tested)


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_functions_with_sequences(layout):
    g = values(layout.shape, "float64")
    x = layout.array(g)
    w = [1.0, -1.0]
    cases = {
        "maximum(list, x)": (lambda m: m.maximum(w, x if m is da else g)),
        "add(list, x)": (lambda m: m.add(w, x if m is da else g)),
        "isclose(list, x)": (lambda m: m.isclose(w, x if m is da else g)),
        "where(list, x, 0)": (lambda m: m.where([True, False], x if m is da else g, 0)),
        "clip(list)": (lambda m: m.clip([1, 5, -2], 0, 2)),
        "linalg.norm(list)": (lambda m: m.linalg.norm([3.0, 4.0])),
        "fft.fft(list)": (lambda m: m.fft.fft([1.0, 0.0, 0.0, 0.0])),
        "take(2-d indices)": (lambda m: m.take(x if m is da else g, [[0, 3], [5, 1]], axis=0)),
        "vstack(array)": (lambda m: m.vstack(x if m is da else g)),
        "hstack(array)": (lambda m: m.hstack(x if m is da else g)),
        "column_stack(array)": (lambda m: m.column_stack(x if m is da else g)),
        "dstack(mgrid)": (lambda m: m.dstack(m.mgrid[0:3, 0:4])),
        "arange(step from an array)": (lambda m: m.arange(0, 9, m.sum(m.asarray([1, 2])))),
        "arange(numpy int)": (lambda m: m.arange(0, 9, np.int64(4))),
    }
    for name, f in cases.items():
        assert_results_equal(f(da), f(np), err_msg=name)
    assert bool(da.allclose(w, x)) == bool(np.allclose(w, g))


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_numpy_functions_take_numpy_arrays_with_darrays(layout):
    g = values(layout.shape, "float64")
    x = layout.array(g)
    other = np.linspace(0.0, 1.0, 2)
    got = np.broadcast_arrays(other, x)
    for a, b in zip(got, np.broadcast_arrays(other, g)):
        assert_results_equal(a, b, err_msg="numpy.broadcast_arrays(ndarray, DArray)")
    assert_results_equal(np.broadcast_arrays(np.float64(2.0), x)[0], np.broadcast_arrays(np.float64(2.0), g)[0])
    assert_results_equal(np.stack([g, x]), np.stack([g, g]), err_msg="numpy.stack([ndarray, DArray])")


@pytest.mark.parametrize("layout", layouts((6, 4), "split0", "split1", "replicated"), ids=str)
def test_shape_assignment_and_read_only_flag(layout):
    g = values(layout.shape, "float64")
    x = layout.array(g.copy())
    x.shape = (4, 6)
    assert_equal(x, g.reshape(4, 6))
    x.shape = -1
    assert_equal(x, g.reshape(-1))
    x.flags.writeable = False
    assert not x.flags.writeable
    writes = [lambda: x.__setitem__(0, 1.0), lambda: x.__iadd__(1.0)]
    if da.config.backend == "numpy":  # (NumPy's ufuncs take DArrays of NumPy blocks)
        writes.append(lambda: np.add(x, 1.0, out=x))
    for write in writes:
        with pytest.raises(ValueError, match="read-only"):
            write()
    x.setflags(write=True)
    x[0] = 1.0
    h = g.reshape(-1).copy()
    h[0] = 1.0
    assert_equal(x, h)


@pytest.mark.numpy_only  # (NumPy's ufuncs take DArrays of NumPy blocks)
def test_object_ufuncs_are_refused_on_every_rank():
    """``numpy.frompyfunc``'s ufuncs return Python objects: refused (not a DArray of objects that breaks later)."""
    from darray.testing import assert_raises_everywhere

    identity = np.frompyfunc(lambda v: v, 1, 1)
    x = da.asarray(np.arange(12.0), split=0)
    assert_raises_everywhere(TypeError, identity, x, match="Python objects")
    assert_raises_everywhere(TypeError, da.fuse(lambda a: identity(a)), x, match="Python objects")


@pytest.mark.parametrize("layout", layouts((6, 2), "split0", "replicated"), ids=str)
def test_numpy_only_functions_take_array_likes(layout):
    """partition, rot90, packbits, the nan-quantiles and the set functions of lists and NumPy arrays (alone or
    beside a DArray), as NumPy."""
    g = values(layout.shape, "float64")
    x = layout.array(g)
    v = [0.5, 0.25, 0.125, 1.0]
    cases = {
        "partition(list)": lambda m: m.partition(v, 1),
        "argpartition(tuple)": lambda m: m.argpartition(tuple(v), 1),
        "rot90(list)": lambda m: m.rot90([[1, 2], [3, 4]]),
        "packbits(list)": lambda m: m.packbits([[True, False, True]]),
        "unpackbits(ndarray)": lambda m: m.unpackbits(np.array([3, 255], dtype=np.uint8)),
        "nanpercentile(list, DArray q)": lambda m: m.nanpercentile(v, m.asarray([25.0, 50.0])),
        "nanquantile(ndarray, DArray q)": lambda m: m.nanquantile(np.array([v, v]), m.asarray(0.5), axis=0),
        "intersect1d(list, list)": lambda m: m.intersect1d(v, [1.0, 0.5]),
        "union1d(ndarray, tuple)": lambda m: m.union1d(np.array(v), (2.0,)),
        "setdiff1d(list, DArray)": lambda m: m.setdiff1d([0.5, 7.0], x if m is da else g),
    }
    for name, f in cases.items():
        assert_results_equal(f(da), f(np), err_msg=name)


@pytest.mark.parametrize("layout", layouts((6, 2), "split0", "replicated"), ids=str)
def test_array_likes_beside_darrays(layout):
    """A list or tuple in an array argument next to a DArray: clip's bounds, meshgrid, einsum, quantiles."""
    g = values(layout.shape, "float64")
    x = layout.array(g)
    q = da.asarray([0.25, 0.75])
    cases = {
        "clip(x, 0, list)": lambda m: m.clip(x if m is da else g, 0.0, [0.5, 1.0]),
        "clip(x, tuple, None)": lambda m: m.clip(x if m is da else g, (-0.5, 0.0), None),
        "meshgrid(DArray, list)": lambda m: tuple(m.meshgrid(m.asarray([1.0, 2.0]), [3.0, 4.0, 5.0])),
        "einsum(list, DArray)": lambda m: m.einsum("ij,j->i", g.tolist(), m.asarray([1.0, -1.0])),
        "quantile(list, DArray q)": lambda m: m.quantile(g.tolist(), q if m is da else np.asarray(q), axis=0),
        "percentile(ndarray, DArray q)": lambda m: m.percentile(g, 100 * q if m is da else 100 * np.asarray(q)),
    }
    for name, f in cases.items():
        assert_results_equal(f(da), f(np), err_msg=name)


def test_zero_dimensional_arrays_where_numpy_takes_numbers():
    """NumPy takes a 0-d array (a DArray too) for a number: repeat's count, logspace's ends, full's fill."""
    x = da.asarray(np.arange(6.0).reshape(3, 2), split=0)
    g = np.arange(6.0).reshape(3, 2)
    assert_results_equal(da.repeat(x, np.asarray(2), axis=0), np.repeat(g, np.asarray(2), axis=0), err_msg="repeat")
    for f in ("logspace", "geomspace"):
        for end in (np.asarray(2.0), da.asarray(np.asarray(2.0))):
            assert_results_equal(getattr(da, f)(np.asarray(1.0), end, 5), getattr(np, f)(1.0, 2.0, 5), err_msg=f)
    for fill in ([1.0, 2.0], (1, 2), np.array([True, False]), da.asarray([1.0, 2.0])):
        assert_results_equal(da.full((3, 2), fill), np.full((3, 2), np.asarray(fill)), err_msg=f"full({fill!r})")


def test_in_place_functions_write_numpy_arrays():
    """copyto, place, put, putmask, put_along_axis, fill_diagonal into a NumPy array (NumPy's target) from a DArray
    or a list: written as NumPy writes it."""
    v = da.asarray([7.0, 8.0, 9.0])
    cases = {
        "copyto(ndarray, DArray)": lambda m, a: m.copyto(a, v if m is da else v.gather()),
        "place(ndarray, list, DArray)": lambda m, a: m.place(a, [[True, False, True]] * 2, v if m is da else
                                                             v.gather()),
        "put(ndarray, list, DArray)": lambda m, a: m.put(a, [0, 4], v[:2] if m is da else v.gather()[:2]),
        "putmask(ndarray, DArray, list)": lambda m, a: m.putmask(a, m.asarray([[True, False, True]] * 2), [1.0, 2.0]),
        "put_along_axis(ndarray, list, DArray)": lambda m, a: m.put_along_axis(a, np.array([[0], [2]]), v[:2].reshape(2, 1)
                                                                               if m is da else [[7.0], [8.0]], 1),
        "fill_diagonal(ndarray, 0-d DArray)": lambda m, a: m.fill_diagonal(a, m.asarray(5.0)),
    }
    for name, f in cases.items():
        ours, theirs = np.zeros((2, 3)), np.zeros((2, 3))
        f(da, ours)
        f(np, theirs)
        np.testing.assert_array_equal(ours, theirs, err_msg=name)
