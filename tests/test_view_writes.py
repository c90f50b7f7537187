"""Writes through views reach the base, as in NumPy, on every layout and rank count.

Generated: for every operation that returns a view in NumPy (basic and integer
indexing, chained indexing, iteration over axis 0, transposes, reshape and
ravel, squeeze and expand_dims, real and imag, ``view``), take the view of a
NumPy array and of the same DArray, write through both (a scalar into one
element, an array over the whole view, a mask, an in-place operator), and
compare the bases. ``diagonal`` and ``broadcast_to`` give read-only views in
NumPy: writing through them raises ValueError on every rank, as it does there.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray.testing import assert_equal, assert_raises_everywhere

from _cases import by_ndim, each, layouts, values

pytestmark = pytest.mark.mpi

SHAPES = {2: (9, 7), 3: (5, 4, 6)}
LAYOUTS = {
    2: layouts(SHAPES[2], "split0", "split1", "uneven0", "uneven1", "last0", "first-empty1", "thin0", "halo0",
               "replicated", "grid2x2", "grid2x2-10-uneven", "grid2x2-n0"),
    3: layouts(SHAPES[3], "split0", "uneven1", "split2", "halo2", "grid1x2x2", "grid2x2-20"),
}


def _iterate(a, i):
    for k, row in enumerate(a):
        if k == i:
            return row
    raise AssertionError("iteration ended early")


#: name -> (view of an n-d array, the ndims it applies to). Each takes NumPy's or darray's namespace.
VIEWS = {
    "int": (lambda xp, a: a[3], (2, 3)),
    "negative-int": (lambda xp, a: a[-1], (2, 3)),
    "int-axis1": (lambda xp, a: a[:, 2], (2, 3)),
    "ellipsis-int": (lambda xp, a: a[..., 1], (2, 3)),
    "int-int": (lambda xp, a: a[1, 2], (3,)),
    "slice": (lambda xp, a: a[1:4], (2, 3)),
    "step": (lambda xp, a: a[::2, 1:], (2, 3)),
    "reversed": (lambda xp, a: a[::-1], (2, 3)),
    "reversed-axis1": (lambda xp, a: a[:, ::-2], (2, 3)),
    "newaxis": (lambda xp, a: a[None, 2], (2, 3)),
    "chained-slice-int": (lambda xp, a: a[2:5][1], (2, 3)),
    "chained-int-slice": (lambda xp, a: a[2][1:], (2, 3)),
    "chained-column-int": (lambda xp, a: a[:, 1][2:4], (2, 3)),
    "chained-int-int": (lambda xp, a: a[3][1], (3,)),
    "iteration": (lambda xp, a: _iterate(a, 2), (2, 3)),
    "T": (lambda xp, a: a.T, (2, 3)),
    "transpose-int": (lambda xp, a: a.T[1], (2, 3)),
    "swapaxes": (lambda xp, a: xp.swapaxes(a, 0, 1), (2, 3)),
    "moveaxis": (lambda xp, a: xp.moveaxis(a, 0, -1), (2, 3)),
    "reshape-flat": (lambda xp, a: a.reshape(-1), (2, 3)),
    "ravel": (lambda xp, a: xp.ravel(a), (2, 3)),
    "reshape": (lambda xp, a: a.reshape(a.shape[-1], -1), (2, 3)),
    "reshape-then-int": (lambda xp, a: a.reshape(-1, a.shape[-1])[2], (3,)),
    "expand_dims": (lambda xp, a: xp.expand_dims(a, 1), (2, 3)),
    "squeeze": (lambda xp, a: xp.squeeze(a[None]), (2, 3)),
    "view": (lambda xp, a: a.view(), (2, 3)),
}


def _writes(v_np):
    """(name, write) pairs, each write taking the view and doing the same to NumPy's and darray's."""
    shape = v_np.shape
    first = (0,) * len(shape)
    out = [("scalar", lambda v: v.__setitem__(first, 5)),
           ("array", lambda v: v.__setitem__(..., np.arange(v.size, dtype=np.float64).reshape(shape))),
           ("mask", lambda v: v.__setitem__(v > 0, -3)),
           ("iadd", lambda v: v.__iadd__(2))]
    if len(shape):
        out.append(("row", lambda v: v.__setitem__(0, 7)))
    return out


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_write_through_view_reaches_base(ndim, layout):
    g = values(layout.shape, "float64")
    cases = [(name, view, wname, write) for name, (view, ndims) in VIEWS.items() if ndim in ndims
             for wname, write in _writes(view(np, g.copy()))]

    def check(c):
        name, view, wname, write = c
        expected = g.copy()
        write(view(np, expected))
        a = layout.array(g.copy())  # (asarray may view g where one rank holds every cell)
        write(view(da, a))
        assert_equal(a, expected, err_msg=f"{name} / {wname}")

    each(cases, check, name=lambda c: f"{c[0]} / {c[2]}")


@pytest.mark.parametrize("layout", layouts(SHAPES[2], "split0", "split1", "grid2x2"), ids=str)
def test_write_through_real_and_imag(layout):
    g = values(layout.shape, "complex128")
    for part in ("real", "imag"):
        for index in (..., 3, (slice(None), 2)):
            expected = g.copy()
            getattr(expected, part)[index] = 4.5
            a = layout.array(g.copy())
            getattr(a, part)[index] = 4.5
            assert_equal(a, expected, err_msg=f"{part} [{index}]")
            view = getattr(a[index], part)
            view += 1.0
            getattr(expected[index], part)[...] += 1.0
            assert_equal(a, expected, err_msg=f"{part} of [{index}] +=")


@pytest.mark.parametrize("layout", layouts(SHAPES[2], "split0", "grid2x2"), ids=str)
def test_read_only_views_refuse_writes(layout):
    a = layout.array(values(layout.shape, "float64"))
    for view in (da.diagonal(a), da.broadcast_to(a[0], (3, a.shape[1]))):
        assert_raises_everywhere(ValueError, view.__setitem__, 0, 1.0, match="read-only")


@pytest.mark.parametrize("layout", layouts(SHAPES[2], "split0", "uneven0", "last0", "split1", "halo0"), ids=str)
def test_view_sees_later_writes_to_base(layout):
    """A view taken first shows writes made to its base afterwards, as NumPy's does.

    (On 1-d grids, where every view here is a true view. A row of a 2-d grid is computed: reads show the
    base as it was when taken, or last written through; docs/numpy.md says so.)
    """
    g = values(layout.shape, "float64")
    a = layout.array(g.copy())
    row, col, block = a[3], a[:, 2], a[1:4]
    a[3, 1] = 11.0
    a[:, 2] += 1.0
    g[3, 1] = 11.0
    g[:, 2] += 1.0
    assert_equal(row, g[3])
    assert_equal(col, g[:, 2])
    assert_equal(block, g[1:4])


@pytest.mark.parametrize("layout", layouts(SHAPES[2], "split0", "uneven0", "last0"), ids=str)
def test_row_views_of_a_cut_axis_move_nothing(layout):
    """On a 1-d grid a row is a true view held by its owners: taking it, writing through it and assigning a
    function of it back (``a[i] = a[i] * 2``) send no message."""
    g = values(layout.shape, "float64")
    a = layout.array(g.copy())
    with da.tracing() as t:
        row = a[3]
        row[1] = 5.0
        row += 1.0
        a[3] = a[3] * 2.0
    g[3, 1] = 5.0
    g[3] += 1.0
    g[3] = g[3] * 2.0
    assert_equal(a, g)
    assert t.summary()["bytes_total"] == 0, t.summary()


@pytest.mark.parametrize("layout", layouts((1, 8), "split0", "split1", "uneven1", "grid2x2", "grid2x2-10-uneven"),
                         ids=str)
def test_reshape_dropping_a_cut_length_one_axis(layout):
    """``a.reshape(n)`` of a ``(1, n)`` array cut along its length-1 axis: the row may be broadcast from its
    owner (a 2-d grid); writes through the reshape still reach ``a``."""
    g = values(layout.shape, "float64")
    a = layout.array(g.copy())
    flat = a.reshape(8)
    flat[3] = 50.0
    flat += 1.0
    a.reshape(2, 4)[1, 1] = -1.0
    expected = g.copy()
    view = expected.reshape(8)
    view[3] = 50.0
    view += 1.0
    expected.reshape(2, 4)[1, 1] = -1.0
    assert_equal(a, expected)
