"""NumPy's array-editing functions on DArrays against NumPy, on every rank count (issue #15).

append, delete, insert, resize, rollaxis, fliplr/flipud, hsplit/vsplit/dsplit,
block, trim_zeros, ediff1d, array_equiv, r_/c_ and row_stack. Each is called
as ``darray.f(...)`` and as ``numpy.f(...)`` on DArrays (``__array_function__``);
results are compared with NumPy on the same data, parametrized over layouts
of ``tests/_cases.py`` (the test id names the layout): split along the first
axis, uneven blocks with an empty one along the last, everything on the last
rank (1-d), replicated, a halo, and a 2x2 grid at 4 ranks. Bad input raises NumPy's
exception type with one message on every rank; what is said not to
communicate does not (``darray.tracing``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import darray as da
from darray import DArray
from darray.testing import agree, assert_equal, assert_raises_everywhere, uneven_sizes as uneven

from _cases import P, layouts, values

pytestmark = pytest.mark.mpi


def named(shape) -> list:
    """Replicated, split along the first axis, uneven with an empty block along the last axis, all on the last
    rank (1-d), a halo (2-d) and a 2x2 grid at 4 ranks."""
    return layouts(shape, "replicated", "split0", *((f"uneven{len(shape) - 1}",) if P > 1 else ()),
                   *(("last0",) if len(shape) == 1 else ("halo0", "grid2x2")))


def over(table: dict, dtypes, shape_of=lambda entry: (7, 5)) -> list:
    """(case, dtype, i, layout): the cases of ``table`` (the dtypes taken in turn) times the layouts of the case's
    array, ``shape_of(table[case])``; ``i`` (the layout's place) alternates the spelling."""
    return [pytest.param(case, dtypes[k % len(dtypes)], i, layout, id=f"{case}-{dtypes[k % len(dtypes)]}-{layout}")
            for k, case in enumerate(table) for i, layout in enumerate(named(shape_of(table[case])))]


def by_dtype(dtypes, shape=(7, 5)) -> list:
    """(dtype, i, layout): the layouts of ``shape`` times ``dtypes``, for a large table (its cases, the dtypes
    taken in turn, are looped in the test: :func:`of_dtype`)."""
    return [pytest.param(dtype, i, layout, id=f"{dtype}-{layout}") for dtype in dtypes
            for i, layout in enumerate(named(shape))]


def of_dtype(table: dict, dtypes, dtype) -> list[str]:
    """The cases of ``table`` that :func:`by_dtype` checks with ``dtype``."""
    return [case for k, case in enumerate(table) if dtypes[k % len(dtypes)] == dtype]


def laid(shape) -> list:
    """``(i, layout)`` parameters over the layouts of ``shape`` (``i`` alternates the spelling), ids the layout's."""
    return [pytest.param(i, layout, id=str(layout)) for i, layout in enumerate(named(shape))]


def check(got, want, err: str) -> None:
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{err}: got {type(got).__name__}"
        for i, (g, w) in enumerate(zip(got, want)):
            check(g, w, f"{err}[{i}]")
        return
    assert isinstance(got, DArray), f"{err}: expected a DArray, got {type(got).__name__}"
    assert_equal(got, np.asarray(want), err_msg=err)


def both(name: str):
    return [("darray", getattr(da, name)), ("numpy", getattr(np, name))]


def spelled(name: str, i: int):
    """``darray.<name>`` or ``numpy.<name>`` (through ``__array_function__``), alternating with ``i``."""
    return both(name)[i % 2]


# ---------------------------------------------------------------- append
APPEND = {
    "flat-list": ((3, 4), [7, 8, 9], None),
    "flat-scalar-float": ((3, 4), 2.5, None),
    "axis0": ((3, 4), np.arange(8).reshape(2, 4), 0),
    "axis1": ((3, 4), np.arange(6).reshape(3, 2) * 1.5, 1),
    "axis-1-empty": ((3, 4), np.zeros((3, 0), dtype=np.int64), -1),
    "1d": ((13,), np.arange(5), 0),
}


@pytest.mark.parametrize("case,dtype,i,layout", over(APPEND, ["int64", "float64", "bool", "complex128"],
                                                     shape_of=lambda entry: entry[0]))
def test_append(case, dtype, i, layout):
    shape, vals, axis = APPEND[case]
    g = values(shape, dtype)
    x = layout.array(g)
    spelling, f = spelled("append", i)
    check(f(x, vals, axis=axis), np.append(g, vals, axis=axis), f"{spelling}.append {case}")
    dvals = da.asarray(np.asarray(vals), split=0 if np.ndim(vals) else None)
    check(np.append(dvals, x, axis=axis), np.append(vals, g, axis=axis), "append(DArray values first)")


# ---------------------------------------------------------------- delete
DELETE = {
    "int": (2, 0),
    "negative-int": (-1, 1),
    "int-flat": (5, None),
    "list-repeats": ([0, 2, 2, -1], 0),
    "list-axis1": ([1, 3], 1),
    "list-flat": ([0, 7, 12, 19], None),
    "empty-list": ([], 0),
    "one-element-array": (np.array([1]), 1),
    "slice": (slice(1, 6, 2), 0),
    "slice-negative-step": (slice(None, None, -3), 1),
    "slice-flat": (slice(3, None, 4), None),
    "slice-empty": (slice(4, 2), 0),
    "bool-mask": (np.array([True, False, False, True, False, True, True]), 0),
    "bool-mask-axis-1": (np.array([False, True, True, False, False]), -1),
}


DELETE_DTYPES = ["int64", "float64", "bool", "complex128"]


@pytest.mark.parametrize("dtype,i,layout", by_dtype(DELETE_DTYPES))
def test_delete(dtype, i, layout):
    g = values((7, 5), dtype)
    x = layout.array(g)
    spelling, f = spelled("delete", i)
    for case in of_dtype(DELETE, DELETE_DTYPES, dtype):
        obj, axis = DELETE[case]
        check(f(x, obj, axis=axis), np.delete(g, obj, axis=axis), f"{spelling}.delete {case}")


@pytest.mark.parametrize("i,layout", laid((13,)))
def test_delete_with_darray_obj(i, layout):
    g = values((13,), "int64")
    x, mask = layout.array(g), g > 0
    for mname, mkw in (("split", dict(split=0)), ("replicated", dict(split=None))):
        check(np.delete(x, da.asarray(mask, **mkw)), np.delete(g, mask), f"delete(bool DArray {mname})")
        check(da.delete(x, da.asarray(np.array([3, 0, 12]), **mkw)), np.delete(g, [3, 0, 12]),
              f"delete(int DArray {mname})")


@pytest.mark.parametrize("i,layout", laid((3, 4, 5)))
def test_delete_3d(i, layout):
    g3 = values((3, 4, 5), "float64")
    check(da.delete(layout.array(g3), [0, 4], axis=2), np.delete(g3, [0, 4], axis=2), "delete 3-d axis 2")


def test_delete_array_likes():
    g = values((13,), "int64")
    check(da.delete(g.tolist(), [1, 2]), np.delete(g, [1, 2]), "delete of a list")
    check(np.delete(g, da.asarray(np.array([4]))), np.delete(g, [4]), "numpy.delete(ndarray, DArray obj)")
    three = values((3, 4, 5), "float64")
    check(da.delete(da.asarray(three), 1, axis=1), np.delete(three, 1, axis=1), "delete 3-d middle axis")


# ---------------------------------------------------------------- insert
INSERT = {
    "scalar-index-scalar": (2, 99, 0),
    "scalar-index-list-axis1": (1, [10, 20, 30, 40, 50, 60, 70], 1),
    "scalar-index-2d-values-axis1": (0, [[1], [2], [3], [4], [5], [6], [7]], 1),
    "scalar-index-rows": (7, [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], 0),
    "scalar-negative": (-2, 5, 1),
    "scalar-end": (5, 0.5, 1),
    "one-element-list-axis1": ([1], [[1], [2], [3], [4], [5], [6], [7]], 1),
    "one-element-list-broadcast": ([3], [1, 2, 3, 4, 5], 0),
    "list-repeats": ([1, 1, 4, 0], 8, 0),
    "list-values": ([3, 0, 5], [[1, 2, 3]], 1),
    "list-negative": ([-1, -7, 2], 4, 0),
    "list-flat": ([0, 35, 10], [7, 8, 9], None),
    "scalar-flat": (12, [1, 2], None),
    "slice": (slice(1, 5, 2), [[-1], [-2]], 0),
    "slice-flat": (slice(None, None, 9), -5, None),
    "bool-mask": (np.array([False, True, True, False, False]), 3, 1),
    "empty-list": ([], 1, 0),
    "values-leading-ones": ([1, 3], [[[9]]], 1),
    "scalar-values-leading-ones": (0, [[[[4]]]], 0),
}


INSERT_DTYPES = ["int64", "float64", "complex128"]


@pytest.mark.parametrize("dtype,i,layout", by_dtype(INSERT_DTYPES))
def test_insert(dtype, i, layout):
    g = values((7, 5), dtype)
    x = layout.array(g)
    spelling, f = spelled("insert", i)
    for case in of_dtype(INSERT, INSERT_DTYPES, dtype):
        obj, vals, axis = INSERT[case]
        check(f(x, obj, vals, axis=axis), np.insert(g, obj, vals, axis=axis), f"{spelling}.insert {case}")


@pytest.mark.parametrize("i,layout", laid((13,)))
def test_insert_bool(i, layout):
    g = values((13,), "bool")
    check(da.insert(layout.array(g), [0, 13, 6], [True, False, True]), np.insert(g, [0, 13, 6], [True, False, True]),
          "insert bool")


@pytest.mark.parametrize("i,layout", laid((7, 5)))
def test_insert_darray_values(i, layout):
    g = values((7, 5), "float64")
    x = layout.array(g)
    vals_np = np.arange(7 * 3).reshape(7, 3) * 1.5
    vname, vkw = (("split0", dict(split=0)), ("split1", dict(split=1)), ("replicated", dict(split=None)))[i % 3]
    vals = da.asarray(vals_np, **vkw)
    check(np.insert(x, [0, 2, 5], vals, axis=1), np.insert(g, [0, 2, 5], vals_np, axis=1),
          f"insert DArray values {vname}")
    check(da.insert(x, 2, vals[:, :1], axis=1), np.insert(g, 2, vals_np[:, :1], axis=1), f"insert DArray slab {vname}")


def test_insert_array_likes():
    g = values((6,), "int64")
    check(np.insert(g, 2, da.asarray(np.array([7, 8]))), np.insert(g, 2, [7, 8]), "numpy.insert(ndarray, DArray)")
    check(da.insert(g.tolist(), [1, 1], 0.9), np.insert(g, [1, 1], 0.9), "insert into a list casts to int")


# ---------------------------------------------------------------- resize
RESIZE = {"3x3": (3, 3), "29": 29, "2x7x4": (2, 7, 4), "5": 5, "0x3": (0, 3), "same": (7, 5), "0-d": ()}


@pytest.mark.parametrize("case,dtype,i,layout", over(RESIZE, ["int64", "float64", "bool"]))
def test_resize(case, dtype, i, layout):
    new_shape = RESIZE[case]
    g = values((7, 5), dtype)
    spelling, f = spelled("resize", i)
    check(f(layout.array(g), new_shape), np.resize(g, new_shape), f"{spelling}.resize")


@pytest.mark.parametrize("case,dtype", [pytest.param(case, ["int64", "float64", "bool"][k % 3],
                                                     id=f"{case}-{['int64', 'float64', 'bool'][k % 3]}")
                                        for k, case in enumerate(RESIZE)])
def test_resize_array_likes(case, dtype):
    new_shape = RESIZE[case]
    empty = np.zeros((0, 4), dtype=dtype)
    check(da.resize(da.asarray(empty), new_shape), np.resize(empty, new_shape), "resize of an empty array")
    check(da.resize([1, 2, 3], new_shape), np.resize([1, 2, 3], new_shape), "resize of a list")


# ---------------------------------------------------------------- rollaxis, flips, splits
@pytest.mark.parametrize("axis,start", [(0, 0), (2, 0), (3, 1), (1, 4), (-1, -3), (0, 3), (1, 2)])
def test_rollaxis(axis, start):
    g = values((2, 3, 4, 5), "float64")
    for i, (lname, kw) in enumerate((("split1", dict(split=1)), ("split3", dict(split=3)))):
        x = da.asarray(g, **kw)
        spelling, f = spelled("rollaxis", i + axis)
        check(f(x, axis, start), np.rollaxis(g, axis, start), f"{spelling}.rollaxis {lname}")


@pytest.mark.parametrize("shape,i,layout", [pytest.param(shape, i, layout, id=f"{'x'.join(map(str, shape))}-{layout}")
                                            for shape in [(7, 5), (13,), (4, 3, 5)]
                                            for i, layout in enumerate(named(shape))])
def test_flips(shape, i, layout):
    g = values(shape, "float64")
    x = layout.array(g)
    spelling, f = spelled("flipud", i)
    check(f(x), np.flipud(g), f"{spelling}.flipud")
    if len(shape) >= 2:
        spelling, f = spelled("fliplr", i + 1)
        check(f(x), np.fliplr(g), f"{spelling}.fliplr")


SPLITS = [("hsplit", (13,), [2, 9]), ("hsplit", (4, 6), 3), ("hsplit", (4, 6, 2), [1, 1, 5]), ("vsplit", (6, 5), 2),
          ("vsplit", (7, 3), [3, 20]), ("dsplit", (2, 3, 4), 2), ("dsplit", (2, 3, 7), [0, 4])]


@pytest.mark.parametrize("name,shape,how,i,layout", [
    pytest.param(name, shape, how, i, layout, id=f"{name}-{'x'.join(map(str, shape))}-{how}-{layout}".replace(" ", ""))
    for name, shape, how in SPLITS for i, layout in enumerate(named(shape))])
def test_splits(name, shape, how, i, layout):
    g = values(shape, "int64")
    spelling, f = spelled(name, i)
    check(f(layout.array(g), how), list(getattr(np, name)(g, how)), f"{spelling}.{name}")


# ---------------------------------------------------------------- block
@pytest.mark.parametrize("i,layout", laid((3, 4)))
def test_block_matrix(i, layout):
    a_np, b_np = values((3, 4), "int64"), values((3, 2), "int64", 1)
    c_np, d_np = values((4, 4), "int64", 2), values((4, 2), "int64", 3)
    a = layout.array(a_np)
    d = da.asarray(d_np, split=0)
    want = np.block([[a_np, b_np], [c_np, d_np]])
    spelling, f = spelled("block", i)
    check(f([[a, b_np], [c_np, d]]), want, f"{spelling}.block 2x2")
    check(da.block([[a, b_np.astype(np.float32)], [c_np, 7 * np.ones((4, 2))]]),
          np.block([[a_np, b_np.astype(np.float32)], [c_np, 7 * np.ones((4, 2))]]), "block mixed dtypes")


@pytest.mark.parametrize("case", ["1d-scalars", "depth-3", "leaf-ndim-above-depth", "single-array", "hstack-like",
                                  "nested-scalars"])
def test_block_shapes(case):
    v = values((13,), "int64")
    x = da.asarray(v, split=0)
    cube = values((2, 3, 4), "float64")
    dc = da.asarray(cube, split=2)
    arrays, want = {
        "1d-scalars": ([x, 1, 2], np.block([v, 1, 2])),
        "depth-3": ([[[dc, dc]], [[dc, dc]]], np.block([[[cube, cube]], [[cube, cube]]])),
        "leaf-ndim-above-depth": ([[dc], [dc[:, :1]]], np.block([[cube], [cube[:, :1]]])),
        "single-array": (x, np.block(v)),
        "hstack-like": ([x, x[:3]], np.block([v, v[:3]])),
        "nested-scalars": ([[1, 2], [3, x[0]]], np.block([[1, 2], [3, v[0]]])),
    }[case]
    check(da.block(arrays), want, f"block {case}")
    check(da.block([[1, 2], [3, 4]]), np.block([[1, 2], [3, 4]]), "block of scalars only")


# ---------------------------------------------------------------- trim_zeros
TRIM = {
    "1d": np.array([0, 0, 3, 0, 1, 2, 0, 0, 0, 5, 0, 0, 0]),
    "1d-no-zeros": np.array([1, 2, 3, 4, 5, 6, 7]),
    "1d-all-zeros": np.zeros(7, dtype=np.int64),
    "1d-empty": np.zeros(0, dtype=np.int64),
    "2d": np.pad(np.array([[1, 0, 0], [0, 0, 2]]), ((3, 2), (1, 4))),
    "2d-all-zeros": np.zeros((4, 5)),
    "bool": np.array([False, True, False, True, False, False, False]),
    "complex": np.array([0, 0, 1j, 0, 2, 0, 0, 0, 0]),
}


@pytest.mark.parametrize("case,i,layout", [pytest.param(case, i, layout, id=f"{case}-{layout}")
                                           for case, g in TRIM.items() for i, layout in enumerate(named(g.shape))])
def test_trim_zeros(case, i, layout):
    g = TRIM[case]
    spelling, f = spelled("trim_zeros", i)
    check(f(layout.array(g)), np.trim_zeros(g), f"{spelling}.trim_zeros {case}")


@pytest.mark.parametrize("case", list(TRIM), ids=list(TRIM))
def test_trim_zeros_trim_and_axis(case):
    g = TRIM[case]
    axes = [0, 1, -1, (0, 1), ()] if g.ndim == 2 else [0, ()]
    cut = named(g.shape)
    for j, axis in enumerate(axes):
        for k, trim in enumerate(("f", "b", "BF")):
            layout = cut[(j + k) % len(cut)]  # the layouts taken in turn
            check(da.trim_zeros(layout.array(g), trim, axis=axis), np.trim_zeros(g, trim, axis=axis),
                  f"trim_zeros {case} trim={trim} axis={axis} {layout}")
    as_list = g.reshape(-1).tolist()
    check(da.trim_zeros(as_list), np.trim_zeros(np.asarray(as_list)), f"trim_zeros of a list {case}")


# ---------------------------------------------------------------- ediff1d
EDGES = {"none": (None, None), "begin": (-99, None), "end": (None, 5), "both": (1, [2, 3]),
         "arrays": (np.array([[4, 5], [6, 7]]), np.arange(3))}


@pytest.mark.parametrize("edges,i,layout", [pytest.param(edges, i, layout, id=f"{edges}-{layout}")
                                            for edges in EDGES for i, layout in enumerate(named((13,)))])
def test_ediff1d(edges, i, layout):
    to_begin, to_end = EDGES[edges]
    g = values((13,), ("int64", "float64", "complex128")[len(edges) % 3])
    spelling, f = spelled("ediff1d", i)
    check(f(layout.array(g), to_end=to_end, to_begin=to_begin), np.ediff1d(g, to_end=to_end, to_begin=to_begin),
          f"{spelling}.ediff1d")


@pytest.mark.parametrize("edges", list(EDGES))
def test_ediff1d_2d_1_cell_and_uint8(edges):
    to_begin, to_end = EDGES[edges]
    runs = [("3x5 split1", da.asarray(values((3, 5), "float64"), split=1), values((3, 5), "float64")),
            ("1 replicated", da.asarray(values((1,), "complex128")), values((1,), "complex128"))]
    for i, (lname, x, g) in enumerate(runs, start=len(named((13,)))):
        spelling, f = spelled("ediff1d", i)
        check(f(x, to_end=to_end, to_begin=to_begin), np.ediff1d(g, to_end=to_end, to_begin=to_begin),
              f"{spelling}.ediff1d {lname}")
    x = da.asarray(values((13,), "uint8"), split=0)
    if edges == "none":
        check(np.ediff1d(x), np.ediff1d(values((13,), "uint8")), "ediff1d uint8 wraps as NumPy")
    else:  # int64 edges do not cast to uint8 under same_kind
        assert_raises_everywhere(TypeError, da.ediff1d, x, to_end=to_end, to_begin=to_begin, match="same_kind")


@pytest.mark.parametrize("i,layout", laid((13,)))
def test_ediff1d_darray_edges(i, layout):
    g = values((13,), "float64")
    check(da.ediff1d(layout.array(g), to_begin=da.asarray(np.arange(4.0), split=0), to_end=da.asarray(np.array([1.5]))),
          np.ediff1d(g, to_begin=np.arange(4.0), to_end=[1.5]), "ediff1d DArray edges")


def test_ediff1d_ndarray_with_darray_edges():
    g = values((13,), "float64")
    check(np.ediff1d(g, to_begin=da.asarray(np.arange(2.0))), np.ediff1d(g, to_begin=np.arange(2.0)),
          "numpy.ediff1d(ndarray, to_begin=DArray)")


# ---------------------------------------------------------------- array_equiv
EQUIV = [("equal", True), ("row", False), ("broadcast-row", True), ("changed", False), ("shape-mismatch", False),
         ("float-equal", True), ("transposed", False)]


@pytest.mark.parametrize("other,same,i,layout", [pytest.param(other, same, i, layout, id=f"{other}-{layout}")
                                                 for other, same in EQUIV for i, layout in enumerate(named((7, 5)))])
def test_array_equiv(other, same, i, layout):
    row = values((5,), "int64")
    g = np.tile(row, (7, 1))
    changed = g.copy()
    changed[6, 4] += 1
    b = {"equal": g, "row": row + 1, "broadcast-row": row, "changed": changed, "shape-mismatch": g[:, :3],
         "float-equal": g.astype(np.float64), "transposed": g.T}[other]
    assert np.array_equiv(g, b) is same
    bname, bb = (("ndarray", b), ("DArray", da.asarray(b, split=0)), ("list", b.tolist()))[i % 3]
    x = layout.array(g)
    spelling, f = spelled("array_equiv", i)
    got = f(x, bb)
    assert type(got) is bool and got is same, f"{spelling}.array_equiv {other} {bname}: {got}"
    assert da.array_equiv(bb, x) is same, f"array_equiv swapped {other} {bname}"


# ---------------------------------------------------------------- r_, c_, row_stack
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # NumPy's oracle of 'r'/'c' builds a numpy.matrix
@pytest.mark.parametrize("i,layout", laid((13,)))
def test_r_and_c_items(i, layout):
    v = values((13,), "int64")
    x = layout.array(v)
    check(da.r_[x, 0:4, 7, [1, 2]], np.r_[v, 0:4, 7, [1, 2]], "r_ mixed")
    check(da.r_[-1:1:5j, x], np.r_[-1:1:5j, v], "r_ linspace")
    check(da.r_[2.5, x, 0:3:0.5], np.r_[2.5, v, 0:3:0.5], "r_ floats")
    check(da.c_[x, v, 5:18], np.c_[v, v, 5:18], "c_ columns")
    check(da.r_["0,2", x, v], np.r_["0,2", v, v], "r_ '0,2'")
    check(da.r_["0,2,0", x, v], np.r_["0,2,0", v, v], "r_ '0,2,0'")
    check(da.r_["1,3,1", x[:4], v[:4]], np.r_["1,3,1", v[:4], v[:4]], "r_ '1,3,1'")
    check(da.r_["r", x, 1], np.asarray(np.r_["r", v, 1]), "r_ 'r'")
    check(da.r_["c", x], np.asarray(np.r_["c", v]), "r_ 'c'")


@pytest.mark.parametrize("i,layout", laid((3, 4)))
def test_r_and_c_2d_items(i, layout):
    m = values((3, 4), "float64")
    y = layout.array(m)
    check(da.r_["-1", y, m], np.r_["-1", m, m], "r_ '-1'")
    check(da.r_[y, m[:1]], np.r_[m, m[:1]], "r_ 2-d rows")
    check(da.c_[y, np.zeros((3, 1))], np.c_[m, np.zeros((3, 1))], "c_ 2-d")


def test_r_and_c_without_darray():
    check(da.r_[1:4, 0, 0, [7, 8]], np.r_[1:4, 0, 0, [7, 8]], "r_ without any DArray")
    check(da.r_[3], np.r_[3], "r_ of one scalar")
    check(da.r_[:5], np.r_[:5], "r_ of one slice")
    check(da.c_[1:4, 0:6:3j], np.c_[1:4, 0:6:3j], "c_ of slices")
    assert len(da.r_) == 0 and len(da.c_) == 0


@pytest.mark.skipif(not hasattr(np, "row_stack"), reason="numpy.row_stack is gone from this NumPy")
@pytest.mark.parametrize("i,layout", laid((3, 4)))
def test_row_stack(i, layout):
    g = values((3, 4), "int64")
    x = layout.array(g)
    with pytest.warns(DeprecationWarning):
        got = da.row_stack([x, g[0], x])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        want = np.row_stack([g, g[0], g])
        check(np.row_stack([x, g[0], x]), want, "numpy.row_stack")
    check(got, want, "row_stack")


def test_row_stack_presence_follows_numpy():
    assert hasattr(da, "row_stack") == hasattr(np, "row_stack")


# ---------------------------------------------------------------- bad input
X2 = values((7, 5), "int64")
BAD = {
    "append-ndim": (lambda x: da.append(x, [1, 2], axis=0), ValueError),
    "append-shape": (lambda x: np.append(x, np.ones((2, 3)), axis=0), ValueError),
    "append-axis": (lambda x: da.append(x, x, axis=2), np.exceptions.AxisError),
    "delete-index": (lambda x: da.delete(x, 7, axis=0), IndexError),
    "delete-list-index": (lambda x: np.delete(x, [1, -9], axis=0), IndexError),
    "delete-float-index": (lambda x: da.delete(x, [1.0, 2.0], axis=0), IndexError),
    "delete-mask-length": (lambda x: da.delete(x, np.array([True, False]), axis=1), ValueError),
    "delete-axis": (lambda x: da.delete(x, 0, axis=-3), np.exceptions.AxisError),
    "insert-index": (lambda x: da.insert(x, 8, 0, axis=0), IndexError),
    "insert-list-index": (lambda x: np.insert(x, [0, 9], 0, axis=0), IndexError),
    "insert-2d-index": (lambda x: da.insert(x, [[0, 1]], 0, axis=0), ValueError),
    "insert-2d-mask": (lambda x: da.insert(x, np.ones((2, 2), bool), 0, axis=0), ValueError),
    "insert-float-index": (lambda x: da.insert(x, 1.5, 0, axis=0), TypeError),
    "insert-float-indices": (lambda x: da.insert(x, [1.5, 2.5], 0, axis=0), IndexError),
    "insert-broadcast": (lambda x: da.insert(x, [0, 1], [1, 2, 3], axis=0), ValueError),
    "insert-nothing-broadcast": (lambda x: np.insert(x, [], [1, 2], axis=0), ValueError),
    "insert-axis": (lambda x: da.insert(x, 0, 0, axis=2), np.exceptions.AxisError),
    "resize-negative": (lambda x: da.resize(x, (2, -1)), ValueError),
    "resize-float": (lambda x: np.resize(x, 2.5), TypeError),
    "rollaxis-start": (lambda x: np.rollaxis(x, 0, 3), np.exceptions.AxisError),
    "rollaxis-axis": (lambda x: da.rollaxis(x, 2), np.exceptions.AxisError),
    "fliplr-1d": (lambda x: np.fliplr(x[0]), ValueError),
    "flipud-0d": (lambda x: da.flipud(x[0, 0]), ValueError),
    "hsplit-0d": (lambda x: da.hsplit(x[0, 0], 2), ValueError),
    "hsplit-unequal": (lambda x: np.hsplit(x, 2), ValueError),
    "vsplit-1d": (lambda x: da.vsplit(x[0], 1), ValueError),
    "dsplit-2d": (lambda x: np.dsplit(x, 1), ValueError),
    "block-depths": (lambda x: da.block([[x], x]), ValueError),
    "block-empty": (lambda x: np.block([[x], []]), ValueError),
    "block-tuple": (lambda x: da.block((x, x)), TypeError),
    "block-shapes": (lambda x: da.block([[x, x[:3]]]), ValueError),
    "trim-mode": (lambda x: da.trim_zeros(x, "x"), ValueError),
    "trim-axis": (lambda x: np.trim_zeros(x, axis=2), np.exceptions.AxisError),
    "ediff1d-bool": (lambda x: da.ediff1d(x > 0), TypeError),
    "ediff1d-cast": (lambda x: np.ediff1d(x, to_begin=1.5), TypeError),
    "r_-directive-position": (lambda x: da.r_[x[0], "0,2"], ValueError),
    "r_-directive": (lambda x: da.r_["a,b", x[0]], ValueError),
    "r_-axis-directive": (lambda x: da.r_["x", x[0]], ValueError),
    "r_-shapes": (lambda x: da.r_[x, x[0]], ValueError),
    "r_-matrix-3d": (lambda x: da.r_["r", x[None]], ValueError),
    "r_-bmat-string": (lambda x: da.r_["a, b"], TypeError),
    "row_stack-shapes": (lambda x: da.row_stack([x, x[0, :3]]), ValueError),
    "array_equiv-arity": (lambda x: np.array_equiv(x), TypeError),
}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # row_stack warns before it raises
@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_bad_input(case):
    call, exc = BAD[case]
    name = case.split("-")[0]
    kw = dict(split=0) if list(BAD).index(case) % 2 else dict(split=None)
    text = assert_raises_everywhere(exc, call, da.asarray(X2, **kw))
    assert name in text, f"{case} {kw}: the message does not name {name}: {text}"
    with pytest.raises(exc):
        call(X2)  # NumPy raises the same type on the same input (darray's functions: on the array-like)


# ---------------------------------------------------------------- what moves
def messages(f) -> list[str]:
    """The communication ops ``f()`` runs on this rank (``darray.tracing``)."""
    with da.tracing() as t:
        f()
    return [e["op"] for e in t.events if e["kind"] == "comm"]


def test_what_communicates():
    g = values((12, 5), "float64")
    rows, ragged = da.asarray(g, split=0), da.asarray(g, split=0, sizes={0: uneven(12, P)})
    local = {  # each rank holds the whole edited axis: no message at all
        "delete along an uncut axis": lambda: da.delete(rows, [1, -1], axis=1),
        "insert one index along an uncut axis": lambda: da.insert(rows, 2, 9.0, axis=1),
        "insert several along an uncut axis": lambda: da.insert(ragged, [0, 5, 5], [1.0, 2.0, 3.0], axis=1),
        "append along an uncut axis": lambda: da.append(ragged, np.ones((12, 1)), axis=1),
        "rollaxis": lambda: da.rollaxis(rows, 1),
        "vsplit": lambda: da.vsplit(rows, [3, 7]),
        "resize of a replicated array": lambda: da.resize(da.asarray(g, split=None), (30, 7)),
    }
    for what, f in local.items():
        ops = messages(f)
        assert not agree(da.default_communicator(), not ops), f"{what}: {ops}"
    ops = messages(lambda: da.trim_zeros(rows))
    assert not agree(da.default_communicator(), len(ops) <= 1), f"trim_zeros: {ops} (one allreduce at most)"
    ops = messages(lambda: da.delete(rows, [0, 3], axis=0))
    assert not agree(da.default_communicator(), len(ops) <= 1), f"delete along the cut axis: {ops}"
