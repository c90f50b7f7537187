"""histogramdd, histogram2d, histogram_bin_edges, matvec, vecmat and einsum_path on DArrays, against NumPy.

Inputs are global NumPy arrays drawn identically on every rank; each check lays
them out in several ways (cut along rows or columns, replicated, uneven blocks
with an empty block, a 2x2 grid and a grid whose ranks hold copies at 4 ranks)
and compares with NumPy on the global inputs through assert_equal (the verdict
agreed across ranks). Bad input must raise NumPy's exception type on every rank.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import darray as da
from darray._api.numpy import histograms as nh
from darray.testing import assert_equal, assert_raises_everywhere

from _cases import P, catalogue, generator, layouts, values

pytestmark = pytest.mark.mpi

#: Layouts of a 1-d input: cut, replicated, uneven with an empty block.
ONE_D = ("split0", "replicated", "uneven0")
#: Layouts of a 2-d input: rows, columns, replicated, uneven rows; 2x2 grids at four ranks, one with two copies
#: of each block.
TWO_D = ("split0", "split1", "replicated", "uneven0", "grid2x2", "grid2x2-0n")


def check_hist(got, want, what, rtol=1e-12):
    """``(H, edges)`` of darray (replicated DArrays) against NumPy's."""
    h, edges = got
    wh, wedges = want
    assert_equal(h, wh, rtol=rtol, err_msg=f"H {what}")
    assert len(edges) == len(wedges)
    for i, (e, we) in enumerate(zip(edges, wedges)):
        assert_equal(e, we, err_msg=f"edges[{i}] {what}")


SAMPLE = values((13, 3), "float64", 1)
WEIGHTS = np.abs(values((13,), "float64", 2))

HISTDD_CALLS = {
    "bins=10": dict(),
    "bins=4": dict(bins=4),
    "bins tuple": dict(bins=(2, 3, 4)),
    "edge arrays": dict(bins=[[-3.0, 0.0, 3.0], [-1.0, -0.5, 0.0, 0.5, 1.0], [-5.0, 5.0]]),
    "mixed bins": dict(bins=[3, [-1.0, 0.0, 1.0], 2]),
    "range": dict(bins=3, range=[(-1.0, 1.0), (0.0, 2.0), (-2.0, 0.5)]),
    "range with None": dict(bins=3, range=[(-1.0, 1.0), None, (-2.0, 0.5)]),
    "density": dict(bins=(2, 3, 4), density=True),
}


@pytest.mark.parametrize("layout", layouts(SAMPLE.shape, *TWO_D), ids=str)
@pytest.mark.parametrize("call", HISTDD_CALLS)
def test_histogramdd_matches_numpy(layout, call):
    x = layout.array(SAMPLE)
    kw = HISTDD_CALLS[call]
    check_hist(np.histogramdd(x, **kw), np.histogramdd(SAMPLE, **kw), f"{call} {layout}")


@pytest.mark.parametrize("layout", layouts(SAMPLE.shape, *TWO_D), ids=str)
def test_histogramdd_weights(layout):
    x = layout.array(SAMPLE)
    want = np.histogramdd(SAMPLE, bins=3, weights=WEIGHTS)
    check_hist(nh.histogramdd(x, bins=3, weights=da.asarray(WEIGHTS, split=0)), want, f"DArray weights {layout}")
    check_hist(nh.histogramdd(x, bins=3, weights=WEIGHTS), want, f"NumPy weights {layout}")
    dens = np.histogramdd(SAMPLE, bins=3, weights=WEIGHTS, density=True)
    check_hist(nh.histogramdd(x, bins=3, weights=WEIGHTS, density=True), dens, f"density {layout}")


@pytest.mark.parametrize("dtype", ["bool", "int16", "int64", "float32"])
def test_histogramdd_dtypes(dtype):
    sample = values((17, 2), dtype, 3, **({} if dtype == "float32" else dict(low=-4, high=5)))
    x = da.asarray(sample, split=0)
    check_hist(nh.histogramdd(x, bins=3), np.histogramdd(sample, bins=3), dtype, rtol=1e-6)


def test_histogramdd_sequence_and_1d_sample():
    cols = [SAMPLE[:, 0], SAMPLE[:, 1]]
    xs = [catalogue((13,))["uneven0"].array(cols[0]), da.asarray(cols[1], split=None)]
    check_hist(nh.histogramdd(xs, bins=4), np.histogramdd(cols, bins=4), "sequence of DArrays")
    check_hist(nh.histogramdd([xs[0], cols[1]], bins=4), np.histogramdd(cols, bins=4), "DArray + NumPy column")
    mixed = [da.asarray(np.arange(13), split=0), xs[0]]  # int and float columns: one common dtype, as NumPy
    check_hist(nh.histogramdd(mixed, bins=3), np.histogramdd([np.arange(13), cols[0]], bins=3), "int + float")
    check_hist(nh.histogramdd(xs[0], bins=5), np.histogramdd(cols[0], bins=5), "1-d sample")
    rows = SAMPLE[:4].tolist()  # a list of 4 rows is NumPy's sequence of 4 coordinate arrays
    check_hist(nh.histogramdd(rows, bins=2), np.histogramdd(rows, bins=2), "nested lists")


def test_histogramdd_constant_and_empty():
    const = np.full((7, 2), 3.0)
    check_hist(nh.histogramdd(da.asarray(const, split=0), bins=2), np.histogramdd(const, bins=2), "constant")
    empty = np.zeros((0, 2))
    check_hist(nh.histogramdd(da.asarray(empty, split=0), bins=2), np.histogramdd(empty, bins=2), "empty")


def test_histogramdd_bad_input():
    x = da.asarray(SAMPLE, split=0)
    assert_raises_everywhere(ValueError, nh.histogramdd, x, bins=0, match="positive")
    assert_raises_everywhere(ValueError, nh.histogramdd, x, bins=(2, 3), match="dimension")
    assert_raises_everywhere(ValueError, nh.histogramdd, x, bins=[[2.0, 1.0], 2, 2], match="monoton")
    assert_raises_everywhere(ValueError, nh.histogramdd, x, range=[(0, 1)], match="range")
    assert_raises_everywhere(ValueError, nh.histogramdd, x, weights=np.ones(5), match="length")
    assert_raises_everywhere(TypeError, nh.histogramdd, x, weights=np.ones(13, complex), match="cast")
    assert_raises_everywhere(TypeError, nh.histogramdd, da.asarray(SAMPLE + 1j, split=0), match="dtype")
    assert_raises_everywhere(ValueError, nh.histogramdd, da.ones((3, 2, 2)), match="sample")
    nan = SAMPLE.copy()
    nan[5, 1] = np.nan
    assert_raises_everywhere(ValueError, nh.histogramdd, da.asarray(nan, split=0), match="finite")


# ---------------------------------------------------------------- histogram2d
X2, Y2 = values((13,), "float64", 4), values((13,), "float64", 5) * 2

HIST2D_CALLS = {
    "bins=10": dict(),
    "bins=3": dict(bins=3),
    "pair of ints": dict(bins=[2, 5]),
    "one edge array": dict(bins=[-4.0, -1.0, 0.0, 1.0, 4.0]),
    "edges and int": dict(bins=[[-4.0, 0.0, 4.0], 3]),
    "range": dict(bins=4, range=[[-1.0, 1.0], [-2.0, 3.0]]),
    "density": dict(bins=[3, 4], density=True),
    "weights": dict(bins=[3, 4], weights=WEIGHTS),
}


@pytest.mark.parametrize("layout", layouts(X2.shape, *ONE_D), ids=str)
@pytest.mark.parametrize("call", HIST2D_CALLS)
def test_histogram2d_matches_numpy(layout, call):
    x, y = layout.array(X2), da.asarray(Y2, split=0)
    kw = HIST2D_CALLS[call]
    h, xe, ye = np.histogram2d(x, y, **kw)
    wh, wxe, wye = np.histogram2d(X2, Y2, **kw)
    check_hist((h, [xe, ye]), (wh, [wxe, wye]), f"{call} {layout}")


def test_histogram2d_ints_lists_and_bad_input():
    xi = np.arange(13) % 4
    got = nh.histogram2d(da.asarray(xi, split=0), Y2.tolist(), bins=2)
    want = np.histogram2d(xi, Y2, bins=2)
    check_hist((got[0], got[1:]), (want[0], want[1:]), "int x, list y")
    assert_raises_everywhere(ValueError, nh.histogram2d, da.asarray(X2), da.asarray(Y2[:5]), match="length")
    assert_raises_everywhere(ValueError, nh.histogram2d, da.asarray(X2), da.asarray(Y2), bins=-1,
                             match="positive")


# ---------------------------------------------------------------- histogram_bin_edges
DATA = np.concatenate([values((150,), "float64", 6), generator(7).exponential(3.0, 50)])
INTS = values((91,), "int64", 8, low=-20, high=40)
RULE_NAMES = ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]


@pytest.mark.parametrize("layout", layouts(DATA.shape, *ONE_D), ids=str)
@pytest.mark.parametrize("bins", [*RULE_NAMES, 7, "edges"])
def test_histogram_bin_edges_matches_numpy(layout, bins):
    bins = [-3.0, 0.0, 1.0, 9.0] if bins == "edges" else bins
    x = layout.array(DATA)
    assert_equal(np.histogram_bin_edges(x, bins=bins), np.histogram_bin_edges(DATA, bins=bins),
                 rtol=1e-10, err_msg=f"{bins} {layout}")


@pytest.mark.parametrize("bins", ["auto", "doane", "stone", 5])
def test_histogram_bin_edges_range_and_ints(bins):
    x = catalogue(DATA.shape)["uneven0"].array(DATA)
    for rng_ in [(-1.0, 2.0), (0, 4)]:
        assert_equal(nh.histogram_bin_edges(x, bins, range=rng_), np.histogram_bin_edges(DATA, bins, range=rng_),
                     rtol=1e-10, err_msg=f"{bins} range={rng_}")
    assert_equal(nh.histogram_bin_edges(da.asarray(INTS, split=0), bins), np.histogram_bin_edges(INTS, bins),
                 rtol=1e-10, err_msg=f"{bins} ints")


GRID = DATA[:198].reshape(18, 11)


@pytest.mark.parametrize("layout", layouts(GRID.shape, "grid2x2", "grid2x2-0n") if P == 4 else
                         layouts(GRID.shape, "split1"), ids=str)
@pytest.mark.parametrize("bins", ["auto", "doane", "stone", 5])
def test_histogram_bin_edges_2d(bins, layout):
    """A 2-d cut, and ranks holding copies (counted once)."""
    assert_equal(nh.histogram_bin_edges(layout.array(GRID), bins), np.histogram_bin_edges(GRID, bins), rtol=1e-10)


def test_histogram_bin_edges_special_inputs():
    for data in (np.zeros(0), np.full(9, 2.5), np.array([1.0]), np.arange(5, dtype=np.float32),
                 np.array([-128, 127], dtype=np.int8)):
        x = da.asarray(data, split=0)
        for bins in ("auto", "stone", 3):
            assert_equal(nh.histogram_bin_edges(x, bins), np.histogram_bin_edges(data, bins), rtol=1e-6,
                         err_msg=f"{data.dtype}{data.shape} {bins}")
    b = values((11,), "bool", 9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.histogram_bin_edges(b, "sturges")
    with pytest.warns(RuntimeWarning, match="Converting"):
        got = nh.histogram_bin_edges(da.asarray(b, split=0), "sturges")
    assert_equal(got, want, err_msg="bool")
    assert_equal(nh.histogram_bin_edges(DATA.tolist(), 4, weights=np.ones(DATA.size)),
                 np.histogram_bin_edges(DATA, 4), err_msg="list input, weights checked only")


def test_histogram_bin_edges_bad_input():
    x = da.asarray(DATA, split=0)
    assert_raises_everywhere(ValueError, nh.histogram_bin_edges, x, "nonsense", match="estimator")
    assert_raises_everywhere(TypeError, nh.histogram_bin_edges, x, "auto", weights=np.ones(DATA.size),
                             match="weighted")
    assert_raises_everywhere(ValueError, nh.histogram_bin_edges, x, 3, weights=np.ones(4), match="shape")
    assert_raises_everywhere(ValueError, nh.histogram_bin_edges, x, 0, match="positive")
    assert_raises_everywhere(ValueError, nh.histogram_bin_edges, x, [3.0, 1.0], match="monoton")
    assert_raises_everywhere(ValueError, nh.histogram_bin_edges, x, "auto", range=(2.0, 1.0), match="larger")
    assert_raises_everywhere(ValueError, nh.histogram_bin_edges, x, "fd", range=(0.0, np.inf), match="finite")
    assert_raises_everywhere(ValueError, nh.histogram_bin_edges, da.asarray([0.0, np.nan], split=0), "auto",
                             match="finite")
    assert_raises_everywhere(TypeError, nh.histogram_bin_edges, da.asarray(DATA + 1j, split=0), 3, match="dtype")


# ---------------------------------------------------------------- matvec, vecmat
SHAPES = {  # (matrix shape, vector shape) for matvec; vecmat transposes the matrix's core axes
    "2d": ((7, 5), (5,)),
    "batched matrix": ((3, 7, 5), (5,)),
    "batched both": ((3, 7, 5), (3, 5)),
    "broadcast": ((1, 7, 5), (4, 5)),
}


def roles(shape) -> dict:
    """Role -> layout of ``shape`` (a matrix and its transpose take the same roles): first / last axis cut,
    replicated, uneven first axis, and the last two axes on a 2x2 grid at four ranks."""
    here, nd = catalogue(shape), len(shape)
    out = {"split0": here["split0"], "last": here[f"split{nd - 1}"], "replicated": here["replicated"],
           "uneven": here["uneven0"]}
    if P == 4 and nd >= 2:
        out["grid22"] = here["grid2x2" if nd == 2 else f"grid2x2-{nd - 2}{nd - 1}"]
    return out


CASES = [(case, "float64") for case in SHAPES] + [(case, dtype) for case in ("2d", "batched both")
                                                  for dtype in ("int32", "complex128", "bool")]


@pytest.mark.parametrize("case,dtype,i,role", [pytest.param(case, dtype, i, role, id=f"{case}-{dtype}-{role}")
                                              for case, dtype in CASES
                                              for i, role in enumerate(roles(SHAPES[case][0]))])
def test_matvec_vecmat_match_numpy(case, dtype, i, role):
    """Every matrix layout (role), each with two vector layouts taken in turn."""
    ms, vs = SHAPES[case]
    m, v = values(ms, dtype, 10), values(vs, dtype, 11)
    mt = np.swapaxes(m, -1, -2).copy()
    vector = list(roles(vs).values())
    a, at = roles(ms)[role].array(m), roles(mt.shape)[role].array(mt)
    for lv in (vector[i % len(vector)], vector[(i + 1) % len(vector)]):
        b = lv.array(v)
        assert_equal(nh.matvec(a, b), np.matvec(m, v), rtol=1e-12, atol=1e-12, err_msg=f"matvec {lv}")
        assert_equal(nh.vecmat(b, at), np.vecmat(v, mt), rtol=1e-12, atol=1e-12, err_msg=f"vecmat {lv}")


def test_matvec_vecmat_array_likes_and_mixed_dtypes():
    m, v = values((4, 3), "float32", 12), values((3,), "int64", 13)
    assert_equal(da.matvec(da.asarray(m, split=0), v.tolist()), np.matvec(m, v.tolist()), rtol=1e-5,
                 err_msg="list vector")
    assert_equal(da.vecmat(v, da.asarray(m.T.copy(), split=1)), np.vecmat(v, m.T.copy()), rtol=1e-5,
                 err_msg="NumPy vector, int and float32")
    assert_equal(da.matvec(m.tolist(), v.tolist()), np.matvec(m.tolist(), v.tolist()), err_msg="both lists")


def test_numpy_matvec_dispatch():
    """NumPy hands the gufuncs matvec/vecmat to __array_ufunc__, which finds darray's registered functions."""
    m, v = values((4, 3), "float64", 14), values((3,), "float64", 15)
    assert_equal(np.matvec(da.asarray(m, split=0), da.asarray(v)), np.matvec(m, v))
    assert_equal(np.vecmat(da.asarray(v), da.asarray(m.T, split=1)), np.vecmat(v, m.T))


def test_matvec_vecmat_bad_input():
    a, b = da.ones((4, 3)), da.ones(4)
    assert_raises_everywhere(ValueError, nh.matvec, a, b, match="core")
    assert_raises_everywhere(ValueError, nh.vecmat, da.ones(3), a, match="core")
    assert_raises_everywhere(ValueError, nh.matvec, b, b, match="dimensions")
    assert_raises_everywhere(ValueError, nh.matvec, da.ones((2, 4, 3)), da.ones((3, 3)), match="broadcast")
    assert_raises_everywhere(TypeError, nh.matvec, a, da.ones(3), out=da.ones(4), match="operands")
    assert_raises_everywhere(TypeError, nh.vecmat, da.ones(4), a, axes=[(0,), (0, 1), (0,)], match="operands")


# ---------------------------------------------------------------- einsum_path
EINSUM = {
    "chain": ("ij,jk,kl->il", [(2, 30), (30, 40), (40, 3)]),
    "three-way": ("ijk,jl,kl->il", [(5, 6, 7), (6, 8), (7, 8)]),
    "implicit": ("ab,bc,cd,de", [(3, 9), (9, 2), (2, 9), (9, 4)]),
    "pair": ("ij,jk", [(13, 7), (7, 5)]),
}


@pytest.mark.parametrize("optimize", ["greedy", "optimal", True, False])
@pytest.mark.parametrize("case", EINSUM)
def test_einsum_path_matches_numpy(case, optimize, comm):
    subscripts, shapes = EINSUM[case]
    arrays = [values(s, "float64", i) for i, s in enumerate(shapes)]
    xs = [da.asarray(a, split=0) for a in arrays]
    got = np.einsum_path(subscripts, *xs, optimize=optimize)
    want = np.einsum_path(subscripts, *arrays, optimize=optimize)
    assert da.testing.agree(comm, got == want) == []
    mixed = nh.einsum_path(subscripts, arrays[0], *xs[1:], optimize=optimize)
    assert da.testing.agree(comm, mixed == want) == []


def test_einsum_path_bad_input():
    x = da.ones((3, 4))
    assert_raises_everywhere(ValueError, nh.einsum_path, "ij,jk", x, match="einsum")
    assert_raises_everywhere(TypeError, nh.einsum_path, "ij", x, einsum_call=True, match="einsum_call")
