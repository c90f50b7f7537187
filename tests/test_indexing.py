"""Basic indexing (``x[key]``, ``x[key] = value``) against NumPy on the global array, on every rank count.

Keys: integers (incl. negative), slices with any step (negative ones swap
blocks between mirrored ranks), ``...``, ``None``, empty selections, on cut
and uncut axes. Values for ``__setitem__``: scalars, NumPy arrays (broadcast)
and DArrays laid out differently from the target. Each layout
(``tests/_cases.py``: uneven, empty blocks, replicated, with a halo, 2-d/3-d
grids at 4 ranks) is one test; the keys are looped over inside it, named in
every failure message.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import darray as da
from darray.testing import assert_equal, assert_raises_everywhere, uneven_sizes as uneven

from _cases import P, by_ndim, case, layouts, values

pytestmark = pytest.mark.mpi

SHAPES = {1: (13,), 2: (9, 11), 3: (6, 7, 8)}
LAYOUTS = {
    1: layouts(SHAPES[1], "split0", "uneven0", "replicated")
    + [case("halo0-2", SHAPES[1], "halo", split=0, halo=2, boundary="periodic")],
    2: layouts(SHAPES[2], "split0", "uneven1", "replicated", "grid2x2", "grid2x2-10-uneven")
    + [case("halo1-12", SHAPES[2], "halo", split=1, halo=(1, 2))],
    3: layouts(SHAPES[3], "uneven0", "split1", "split2", "replicated", "grid1x2x2", "grid2x2-20"),
}


S = slice
E = Ellipsis
KEYS = {
    1: [5, -1, S(None, None, -1), S(2, 11, 3), S(11, 2, -4), (None, S(1, -1)), (E,), S(13, 0, -1), S(4, 4),
        S(20, 30), S(-100, 100, 5), (S(None), None), ()],
    2: [(S(1, -1),), (S(None, None, -1), S(None, None, -1)), (3,), (-1, 4), (E, 2), (None, S(2, 6, 3)),
        (S(0, 0),), (S(8, None, -3), None, -2), (S(None), S(10, 0, -4)), (-9, S(None)), (S(3, 7), S(7, 3)),
        (E, None), (S(1, None, 2), S(None, None, -1), None)],
    3: [(S(1, -1),), (S(None, None, -1),), (S(5, 0, -2), S(None), 2), (3,), (-1, 4), (E, 1), (None, S(2, 6, 3)),
        (2, S(None, None, -3), None, 1), (S(None), S(6, None, -1)), (E, S(None, None, -2)), (S(1, None, 3), E, None),
        (0, 0, 0), (S(10, 20),), (S(None), S(3, 3)), (-6, S(None, None, -1), S(None, None, -1)),
        (S(4, 1, -1), 3, S(7, None, -3))],
}


def value_layout(val: np.ndarray, i: int) -> dict:
    """A layout for a DArray value, varied with ``i`` (cut along another axis than most targets)."""
    if val.ndim == 0:
        return dict(split=None)
    choices = [dict(split=val.ndim - 1), dict(split=None),
               dict(split=0, sizes=uneven(val.shape[0], P))]
    return choices[i % len(choices)]


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_getitem_setitem(ndim, layout):
    """``x[key]`` and ``x[key] = v`` for every key of ``KEYS`` and v a NumPy array, a DArray in another layout,
    a scalar (the keys are cheap: looped here, named in the messages)."""
    g = values(SHAPES[ndim])
    x = layout.array(g)
    for i, key in enumerate(KEYS[ndim]):
        want = g[key]
        val = np.arange(want.size, dtype=float).reshape(want.shape) * 1.5 - 3.0
        for attempt in ("first", "again"):  # (again: the plan remembered per layout and key, views without reshape)
            got = x[key]
            assert got.shape == want.shape, (attempt, key)
            assert_equal(got, want, err_msg=f"get {key!r} ({attempt})")
            assert not any(got.halo), key

        y = layout.array(g.copy())
        h = g.copy()
        y[key] = val
        h[key] = val
        assert_equal(y, h, err_msg=f"set numpy {key!r}")
        y[key] = da.asarray(-val, **value_layout(val, i))
        h[key] = -val
        assert_equal(y, h, err_msg=f"set DArray {value_layout(val, i)} into {key!r}")
        y[key] = 7
        h[key] = 7
        assert_equal(y, h, err_msg=f"set scalar {key!r}")
        assert_equal(x, g, err_msg=f"x changed by setting a copy {key!r}")


BROADCAST = [
    ((S(1, 5), S(None, None, -2)), (6,)),
    ((S(1, 5), S(None, None, -2)), (4, 1)),
    ((S(None, None, -1), S(2, 9)), (1, 7)),
    ((E, 3), (1,)),
    ((S(8, 0, -3),), (11,)),
    ((None, S(None, None, -1), 0), (1, 9)),
]


@pytest.mark.parametrize("layout", LAYOUTS[2], ids=str)
def test_setitem_broadcasts(layout):
    """Values of fewer dims or length-1 axes (also along a reversed axis) broadcast to the selection."""
    g = values(SHAPES[2], seed=1)
    for key, vshape in BROADCAST:
        v = np.arange(np.prod(vshape), dtype=float).reshape(vshape) + 0.5
        y = layout.array(g.copy())
        h = g.copy()
        y[key] = v
        h[key] = v
        assert_equal(y, h, err_msg=f"numpy {key!r} <- {vshape}")
        y[key] = da.asarray(v * 2, split=None)
        h[key] = v * 2
        assert_equal(y, h, err_msg=f"DArray {key!r} <- {vshape}")


@pytest.mark.parametrize("layout", LAYOUTS[2], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int64", "complex128", "bool"])
def test_dtypes(dtype, layout):
    g = values(SHAPES[2], dtype, seed=2)
    x = layout.array(g)
    for key in [(S(None, None, -1), 3), (S(2, 8, 2), S(10, 1, -3)), (4, -2), (None, E, S(0, 0))]:
        got = x[key]
        assert got.dtype == np.dtype(dtype)
        assert_equal(got, g[key], err_msg=f"get {key!r}")
    y = layout.array(g.copy())
    h = g.copy()
    for key, v in [((S(None, None, -2), S(1, 4)), g[:5, :3]), ((E, 0), True), ((S(1, 3),), g[-2:])]:
        y[key] = v
        h[key] = v
        assert_equal(y, h, err_msg=f"set {key!r}")
    z = layout.array(g.copy())
    z[1:4, ::-1] = da.asarray(g[5:8], split=0)
    assert_equal(z, np.concatenate([g[:1], g[5:8, ::-1], g[4:]]), err_msg="set DArray")


@pytest.mark.parametrize("ndim,layout", by_ndim({2: LAYOUTS[2], 3: LAYOUTS[3]}))
def test_slicing_stencil(ndim, layout):
    """The NumPy idiom ``u[1:-1, 1:-1] = un[1:-1, 2:] + un[1:-1, :-2] + ...`` and edge assignments."""
    g = values(SHAPES[ndim], seed=3)
    inner = (S(1, -1),) * ndim

    def shifted(a, axis, s):
        key = list(inner)
        key[axis] = S(1 + s, a.shape[axis] - 1 + s)
        return a[tuple(key)]

    def step(u, un):
        lap = -2 * ndim * un[inner]
        for axis in range(ndim):
            lap = lap + shifted(un, axis, 1) + shifted(un, axis, -1)
        u[inner] = un[inner] + 0.1 * lap
        u[(S(None), 0)] = 1.0  # Dirichlet column
        u[0] = u[1]  # Neumann row
        u[-1, ...] = u[-2, ...]

    h, hn = g.copy(), g.copy()
    for _ in range(2):
        hn[...] = h
        step(h, hn)
    u = layout.array(g.copy())
    for _ in range(2):
        un = u * 1.0
        step(u, un)
    assert_equal(u, h)
    v = layout.array(g.copy())
    v[inner] += v[(S(2, None),) + inner[1:]]
    w = g.copy()
    w[inner] += w[(S(2, None),) + inner[1:]]
    assert_equal(v, w, err_msg="+= on a slice")


def test_slicing_stencil_moves_only_boundary_strips():
    """A Jacobi sweep written with shifted views sends only the rows its neighbours need.

    Rows are cut over the ranks; ``un[2:] + un[:-2]`` aligns both views to
    the balanced cut (one row crosses each block boundary per view), which
    ``un[1:-1]`` already has: ``2 * (P - 1)`` rows in all, never a block.
    """
    n = 37
    g = values((n, 8), seed=9)
    u = da.asarray(g.copy(), split=0)
    with da.tracing() as t:
        un = u.astype(u.dtype, copy=True)
        u[1:-1, 1:-1] = 0.25 * (un[2:, 1:-1] + un[:-2, 1:-1] + un[1:-1, 2:] + un[1:-1, :-2])
    h = g.copy()
    h[1:-1, 1:-1] = 0.25 * (g[2:, 1:-1] + g[:-2, 1:-1] + g[1:-1, 2:] + g[1:-1, :-2])
    assert_equal(u, h)
    sent = int(np.asarray(u.comm.allreduce(np.asarray([t.totals()["nbytes"]]), "sum"))[0])
    rows = sent // (6 * g.itemsize)  # one row of the 6 inner columns
    p = u.comm.size
    assert rows <= 2 * (p - 1), f"a sweep sent {rows} rows over {p} ranks, expected at most {2 * (p - 1)}"
    balanced = da.asarray(g[1:-1, 1:-1], split=0).layout
    assert (un[2:, 1:-1] + un[:-2, 1:-1]).layout.blocks_key == balanced.blocks_key


@pytest.mark.parametrize("layout", LAYOUTS[3], ids=str)
def test_transposes_and_scalars(layout):
    g = values(SHAPES[3], seed=4)
    x = layout.array(g)
    assert_equal(x.mT, np.swapaxes(g, -1, -2))
    assert_equal(x[2].T, g[2].T)
    assert float(x[1, -2, 3]) == g[1, -2, 3]
    assert_equal(x[da.asarray(2)], g[2], err_msg="0-d integer DArray key")


BAD_GET = [(13,), (-14,), (0, 0), (E, E), (1.5,), (S(None), 2.0)]
BAD_GET_2D = [(9,), (0, -12), (0, 0, 0), (E, 1, E), (None, 1, 2, 3)]


@pytest.mark.parametrize("ndim,key", [(1, k) for k in BAD_GET] + [(2, k) for k in BAD_GET_2D],
                         ids=[f"1d-{k!r}" for k in BAD_GET] + [f"2d-{k!r}" for k in BAD_GET_2D])
def test_bad_keys_raise_index_error_everywhere(ndim, key):
    """Out-of-bounds integers, too many indices, two ellipses, floats: IndexError on every rank, get and set.

    Every layout in one test: the key, named by the id, decides; the message names the layout.
    """
    g = values(SHAPES[ndim])
    for layout in LAYOUTS[ndim]:
        x = layout.array(g)
        assert_raises_everywhere(IndexError, x.__getitem__, key)
        assert_raises_everywhere(IndexError, x.__setitem__, key, 1.0)


@pytest.mark.parametrize("layout", LAYOUTS[2], ids=str)
def test_bad_values_raise_everywhere(layout):
    g = values(SHAPES[2])
    x = layout.array(g.copy())
    assert_raises_everywhere(ValueError, x.__setitem__, (S(1, 4),), np.ones((2, 11)))
    assert_raises_everywhere(ValueError, x.__setitem__, (S(1, 4),), da.asarray(np.ones((3, 10)), split=0))
    assert_raises_everywhere(ValueError, x.__setitem__, 0, np.ones((2,)))
    assert_raises_everywhere(TypeError, x.__setitem__, 0, np.array(["a"] * 11))
    assert_equal(x, g, err_msg="x changed by a failed assignment")


def _fill_values(dtype: str) -> tuple:
    """Python scalars to assign: every kind with NumPy blocks (NumPy casts), the array's own kind otherwise
    (the standard promotes no Python scalar of another kind: array_api_strict refuses)."""
    if os.environ.get("DARRAY_BACKEND", "numpy") == "numpy":
        return (1, 2.75, True)
    return {"float64": (2.75, 1.0), "int32": (1, 3), "bool": (True, False)}[dtype]


@pytest.mark.parametrize("layout", LAYOUTS[2], ids=str)
def test_repeated_scalar_fills(layout):
    """``x[key] = scalar`` and ``x[mask] = scalar`` twice on one layout (the second time a remembered view or an
    aligned mask: no message) equal NumPy, casting the scalar like NumPy; a mask laid out otherwise moves cells.
    Dtypes float64, int32 and bool."""
    for dtype in ("float64", "int32", "bool"):
        a = (values(SHAPES[2], seed=4, low=0.0, high=1.0) * 10).astype(dtype)
        x = layout.array(a)
        for value in _fill_values(dtype):
            for key in ((0, slice(None)), (slice(1, -1), slice(2, None)), (Ellipsis, -1)):
                for _ in range(2):
                    a[key] = value
                    x[key] = value
                    assert_equal(x, a, err_msg=f"{dtype}: x[{key}] = {value!r}")
            inner = x[1:-1, 1:-1]
            for aligned in (True, False):  # a mask aligned with the view's blocks, and a replicated one
                m = a[1:-1, 1:-1].astype("float64") > 0.5
                mask = inner.astype("float64") > 0.5 if aligned else da.asarray(m, split=None)
                for _ in range(2):
                    a[1:-1, 1:-1][m] = value
                    inner[mask] = value
                    assert_equal(x, a, err_msg=f"{dtype}: x[1:-1, 1:-1][{'aligned' if aligned else 'replicated'} "
                                               f"mask] = {value!r}")


def test_zero_d_keys_twice():
    """``x[()]`` get and set on 0-d arrays, twice (the second time through the remembered plan): 0-d views."""
    for _ in range(2):
        x = da.asarray(5)
        x[()] = da.asarray(6)
        assert_equal(x, np.asarray(6))
        x[...] = 7
        assert_equal(x, np.asarray(7))
        assert type(x[()].local) is not np.int64 and x[()].local.shape == ()


@pytest.mark.parametrize("layout", ["split0", "uneven0", "replicated"])
@pytest.mark.parametrize("shape,mask", [((2,), (0,)), ((1,), (0,)), ((2, 3), (0,)), ((2, 3), (2, 0)),
                                        ((2, 3), (0, 3)), ((13,), (0,))], ids=str)
def test_empty_masks_select_nothing_whatever_their_lengths(shape, mask, layout):
    """NumPy: a boolean index with no element selects nothing, even where its lengths differ from the array's."""
    a = np.arange(np.prod(shape), dtype=float).reshape(shape)
    m = np.zeros(mask, dtype=bool)
    x = layouts(shape, layout)[0].array(a)
    assert_equal(x[m], a[m])
    assert_equal(x[da.asarray(m)], a[m], err_msg="a DArray mask")
    x[m] = 5.0
    assert_equal(x, a, err_msg="set")


def test_remembered_key_forms_never_collide():
    """The hashable forms under which index plans are remembered differ for keys that select differently."""
    from darray._core.indexing import _memo_key

    shape = (10,) * 6
    keys = [(1, 2, 3, 4, 5, 6), (slice(1, 2, 3), slice(4, 5, 6)), ((1, 2, 3), (4, 5, 6)), (slice(1, 2, 3),),
            slice(1, 2, 3), (slice(1, 2), slice(None)), (slice(1, 2, None), slice(None, None, None), None)]
    forms = [_memo_key(k, shape) for k in keys]
    assert None not in forms[:2] and forms[2] is None  # (tuples are no basic key items)
    assert forms[3] == forms[4]  # (a key of one item selects what the item does)
    assert len({f for f in forms if f is not None}) == len(keys) - 2
    for bad in [(slice(1.0, 2), slice(None)), (slice(1, 2), slice(None, None, 0))]:  # (NumPy refuses both)
        assert _memo_key(bad, shape) is None
    # two slices take the form of what they select: alike on the same axes, apart on others
    assert _memo_key((slice(1, -1), slice(2, None)), (10, 8)) == _memo_key((slice(1, 9), slice(2, 8)), (10, 8))
    assert _memo_key((slice(1, -1), slice(None)), (10, 8)) != _memo_key((slice(1, -1), slice(None)), (10, 9))
    assert _memo_key((slice(np.int64(1), None), slice(None)), (4, 4)) == _memo_key((slice(1, None), slice(None)),
                                                                                       (4, 4))


def test_element_loops_on_cut_arrays_warn_once_per_line(monkeypatch):
    """Element reads of a cut array are collectives: after many, the reading line is named once (rank 0)."""
    import warnings

    from darray._core import element_reads

    monkeypatch.setattr(element_reads, "_reads", 0)
    monkeypatch.setattr(element_reads, "_warned", set())
    x = da.asarray(np.arange(40.0), split=0)
    cut = x.layout.split[0] is not None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        total = 0.0
        for _ in range(2 * element_reads.READS_BEFORE_WARNING // 40):
            for i in range(40):
                total += float(x[i])
    named = [w for w in caught if issubclass(w.category, element_reads.PerformanceWarning)]
    assert total == 2 * element_reads.READS_BEFORE_WARNING // 40 * 780.0
    assert len(named) == (1 if cut and x.comm.rank == 0 else 0), [str(w.message) for w in named]
    if named:
        assert named[0].filename == __file__ and "darray.fuse" in str(named[0].message)
