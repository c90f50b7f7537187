"""xarray's method set on DArray-backed DataArrays, against the same xarray code on the NumPy data.

Every case runs once per layout (``tests/_cases.py``: cut along y, along x,
replicated, uneven with an empty block, a 2x2 grid at 4 ranks) at 1-4 ranks; the
result must still hold a DArray (no silent conversion to NumPy). Also the NumPy
functions xarray reaches for (sliding_window_view, pad, nanmedian,
nanquantile, nancumsum, ...) against NumPy, and what moves between ranks.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import darray as da
from darray.interop import interp
from darray.testing import agree, assert_equal, assert_raises_everywhere

from _cases import layouts, values

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")

pytestmark = [pytest.mark.mpi, pytest.mark.usefixtures("small_auto_threshold")]

SHAPE = (13, 7)
#: Cut along y, along x, replicated, uneven with an empty block, a 2x2 grid (4 ranks).
LAYOUTS = layouts(SHAPE, "split0", "split1", "replicated", "uneven0", "grid2x2")
over_layouts = pytest.mark.parametrize("layout", LAYOUTS, ids=str)


def field(nans: bool = True, dtype="float64") -> np.ndarray:
    """Seeded normal values; with ``nans``, three NaNs and an all-NaN last column."""
    ref = values(SHAPE, dtype, seed=7)
    if nans:
        ref[3, 2] = ref[8, 5] = ref[9, 5] = np.nan
        ref[:, 6] = np.nan  # an all-NaN column
    return ref


def pair(layout, ref: np.ndarray, dims=("y", "x"), coords=None):
    """(DArray-backed DataArray laid out as ``layout``, the same DataArray backed by NumPy)."""
    if coords is None:
        coords = {dims[0]: np.arange(SHAPE[0]) * 0.5, dims[1]: np.arange(SHAPE[1]) * 10.0,
                  "lat": (dims[1], np.linspace(-3.0, 3.0, SHAPE[1]))}
    expected = xr.DataArray(ref, dims=dims, coords=coords, name="t", attrs={"units": "K"})
    return expected.copy(data=layout.array(ref)), expected


def check(comm, got, expected, what: str) -> None:
    """``got`` holds a DArray and equals ``expected`` (xarray.testing.assert_allclose); ranks agree."""
    try:
        assert isinstance(got.data, da.DArray), f"the result holds {type(got.data).__name__}, not a DArray"
        xr.testing.assert_allclose(got.copy(data=np.asarray(got.data)), expected)  # gathered
        ok, detail = True, ""
    except AssertionError as e:
        ok, detail = False, str(e)
    bad = agree(comm, ok)
    assert not bad, f"{what}: ranks {bad} fail (rank {comm.rank}: {detail})"


# ------------------------------------------------------------------ rolling
ROLLING = {  # id -> (rolling keywords, reduction)
    "mean-y5": (dict(y=5), "mean"),
    "sum-y5-center": (dict(y=5, center=True), "sum"),
    "max-y4-min_periods": (dict(y=4, min_periods=2), "max"),
    "min-y3-center-min_periods": (dict(y=3, center=True, min_periods=1), "min"),
    "std-y6": (dict(y=6, min_periods=3), "std"),
    "var-x3-center": (dict(x=3, center=True), "var"),
    "count-y5": (dict(y=5), "count"),
    "median-y5-center": (dict(y=5, center=True, min_periods=2), "median"),
    "mean-x3": (dict(x=3), "mean"),
    "median-x4-center": (dict(x=4, center=True), "median"),
    "sum-y13": (dict(y=13, min_periods=1), "sum"),
    "mean-y3-x2": (dict(y=3, x=2, min_periods=1), "mean"),
}


@over_layouts
@pytest.mark.parametrize("case", ROLLING)
def test_rolling(case, layout, comm):
    kwargs, reduction = ROLLING[case]
    a, expected = pair(layout, field())
    got = getattr(a.rolling(**kwargs), reduction)()
    check(comm, got, getattr(expected.rolling(**kwargs), reduction)(), case)


@over_layouts
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_rolling_dtypes(dtype, layout, comm):
    ref = (np.arange(np.prod(SHAPE)).reshape(SHAPE) % 11).astype(dtype)
    a, expected = pair(layout, ref)
    check(comm, a.rolling(y=4).sum(), expected.rolling(y=4).sum(), f"{dtype} sum")
    check(comm, a.rolling(x=3, center=True).mean(), expected.rolling(x=3, center=True).mean(), f"{dtype} mean")


@over_layouts
def test_rolling_construct(layout, comm):
    a, expected = pair(layout, field())
    check(comm, a.rolling(y=4).construct("w"), expected.rolling(y=4).construct("w"), "construct")
    check(comm, a.rolling(y=3, center=True).construct("w", stride=2),
          expected.rolling(y=3, center=True).construct("w", stride=2), "construct stride")
    check(comm, a.rolling(x=3).construct("w", fill_value=0.0),
          expected.rolling(x=3).construct("w", fill_value=0.0), "construct fill")


@pytest.mark.parametrize("window", [2, 5, 9])
def test_rolling_along_a_cut_axis_moves_only_halo_cells(window, comm):
    """One halo exchange per windowed array (the data, and the validity mask for min_periods); each rank
    receives at most ``2 * ceil((window - 1) / 2)`` rows of its neighbours' cells per exchange."""
    ref = field(nans=False)
    a = xr.DataArray(da.asarray(ref, split=0), dims=("y", "x"))
    depth = window // 2  # ceil((window - 1) / 2)
    with da.tracing() as t:
        got = a.rolling(y=window).mean()
    events = [e for e in t.events if e["kind"] == "comm" and e["op"] != "agree"]  # (first-use agreement)
    row = SHAPE[1] * ref.itemsize
    ok = all(e["op"] == "halo" and e["nbytes"] <= 2 * depth * row for e in events) and len(events) <= 3
    bad = agree(comm, ok)
    assert not bad, f"rank {comm.rank} sent {[(e['op'], e['nbytes']) for e in events]}, rows of {row} bytes"
    check(comm, got, xr.DataArray(ref, dims=("y", "x")).rolling(y=window).mean(), f"window {window}")


# ------------------------------------------------------------------ NaN-skipping reductions and scans
REDUCTIONS = {
    "median-y": lambda z: z.median("y"),
    "median-x": lambda z: z.median("x"),
    "median-all": lambda z: z.median(),
    "median-keep-nan": lambda z: z.median("y", skipna=False),
    "quantile-y": lambda z: z.quantile(0.3, dim="y"),
    "quantile-list-x": lambda z: z.quantile([0.0, 0.25, 0.5, 1.0], dim="x"),
    "quantile-both": lambda z: z.quantile([0.1, 0.9], dim=("y", "x")),
    "cumsum-y": lambda z: z.cumsum("y"),
    "cumsum-x": lambda z: z.cumsum("x"),
    "cumprod-y": lambda z: z.cumprod("y"),
    "cumsum-keep-nan": lambda z: z.cumsum("y", skipna=False),
    "argmax-y": lambda z: z.fillna(-9.0).argmax("y"),
    "idxmin-x": lambda z: z.isel(x=slice(0, 6)).idxmin("x"),
}


@over_layouts
@pytest.mark.parametrize("case", REDUCTIONS)
def test_nan_skipping_methods(case, layout, comm):
    f = REDUCTIONS[case]
    a, expected = pair(layout, field())
    check(comm, f(a), f(expected), case)


NAN_FUNCTIONS = {  # id -> call of a NumPy function on a 2-d array with NaNs
    "nanmedian": lambda a: np.nanmedian(a),
    "nanmedian-axis0": lambda a: np.nanmedian(a, axis=0),
    "nanmedian-axis1-keepdims": lambda a: np.nanmedian(a, axis=1, keepdims=True),
    "nanquantile-axis1": lambda a: np.nanquantile(a, 0.7, axis=1),
    "nanquantile-q-2d": lambda a: np.nanquantile(a, [[0.1, 0.5], [0.9, 1.0]], axis=0),
    "nanquantile-axes": lambda a: np.nanquantile(a, [0.2, 0.8], axis=(0, 1), keepdims=True),
    "nanpercentile-axis0": lambda a: np.nanpercentile(a, 30, axis=0),
    "nancumsum": lambda a: np.nancumsum(a),
    "nancumsum-axis0": lambda a: np.nancumsum(a, axis=0),
    "nancumprod-axis1": lambda a: np.nancumprod(a, axis=1),
    "nanargmax-axis0": lambda a: np.nanargmax(a[:, :6], axis=0),
    "nanargmin": lambda a: np.nanargmin(a),
}


@over_layouts
@pytest.mark.parametrize("case", NAN_FUNCTIONS)
def test_nan_functions_match_numpy(case, layout, comm):
    f = NAN_FUNCTIONS[case]
    for dtype in ("float64", "float32"):
        ref = field(dtype=dtype)
        with warnings.catch_warnings(record=True) as numpy_said:  # the all-NaN column
            warnings.simplefilter("always", RuntimeWarning)
            want = f(ref)
        warned = any("All-NaN slice" in str(w.message) for w in numpy_said)
        with warnings.catch_warnings(record=True) as seen:  # NumPy's warning of an all-NaN slice, too
            warnings.simplefilter("always", RuntimeWarning)
            got = f(layout.array(ref))
        if case.startswith(("nanmedian", "nanquantile", "nanpercentile")):
            assert any("All-NaN slice" in str(w.message) for w in seen) == warned, f"{case} {dtype}: warning"
        if not isinstance(got, da.DArray):
            got = da.asarray(np.asarray(got), split=None)
        assert_equal(got, np.asarray(want), err_msg=f"{case} {dtype}")


@over_layouts
def test_nan_functions_without_nans_are_the_plain_ones(layout, comm):
    ref = np.arange(np.prod(SHAPE)).reshape(SHAPE) % 5
    x = layout.array(ref)
    assert_equal(np.nanmedian(x, axis=0), np.nanmedian(ref, axis=0))
    assert_equal(np.nanquantile(x, 0.4, axis=1), np.nanquantile(ref, 0.4, axis=1))
    assert_equal(np.nancumsum(x, axis=0), np.nancumsum(ref, axis=0))
    assert_equal(da.nanargmax(x, axis=1), np.nanargmax(ref, axis=1))


def test_nan_functions_bad_input(comm):
    x = da.asarray(field())
    assert_raises_everywhere(ValueError, np.nanquantile, x, 1.5, match="numpy.nanquantile")
    assert_raises_everywhere(ValueError, np.nanpercentile, x, 50, method="nearest", match="method")
    assert_raises_everywhere(np.exceptions.AxisError, np.nanmedian, x, axis=2, match="numpy.nanmedian")
    assert_raises_everywhere(ValueError, np.nanargmax, x, axis=0, match="All-NaN slice")
    assert_raises_everywhere(TypeError, np.nancumsum, x, out=da.zeros_like(x), match="out=")
    assert_raises_everywhere(TypeError, np.nanquantile, da.asarray(np.ones(3, np.complex128)), 0.5,
                             match="real numbers")


# ------------------------------------------------------------------ sliding_window_view and pad
WINDOWS = {  # id -> (window_shape, axis)
    "3-axis0": (3, 0),
    "4-axis1": (4, 1),
    "5-axis-2": (5, -2),
    "2x3-both": ((2, 3), (0, 1)),
    "all-axes": ((6, 2), None),
    "repeated-axis": ((2, 3), (0, 0)),
    "whole-axis": (13, 0),
    "one": (1, 1),
    "empty-window": (0, 0),
}


@over_layouts
@pytest.mark.parametrize("case", WINDOWS)
def test_sliding_window_view_matches_numpy(case, layout, comm):
    window, axis = WINDOWS[case]
    ref = np.arange(np.prod(SHAPE), dtype=np.float64).reshape(SHAPE)
    want = np.lib.stride_tricks.sliding_window_view(ref, window, axis)
    x = layout.array(ref)
    got = da.lib.stride_tricks.sliding_window_view(x, window, axis)
    assert_equal(got, want, err_msg=case)
    assert_equal(np.lib.stride_tricks.sliding_window_view(x, window, axis=axis), want, err_msg=case)
    assert got.layout.split == x.layout.split, f"{case}: {x.layout} -> {got.layout}"  # cut as x


def test_sliding_window_view_bad_input(comm):
    x = da.asarray(np.zeros(SHAPE), split=0)
    swv = da.lib.stride_tricks.sliding_window_view
    assert_raises_everywhere(ValueError, swv, x, -1, 0, match="negative")
    assert_raises_everywhere(ValueError, swv, x, 14, 0, match="larger than input")
    assert_raises_everywhere(ValueError, swv, x, (2, 2), 0, match="same length")
    assert_raises_everywhere(ValueError, swv, x, 2, match="axis=None")
    assert_raises_everywhere(np.exceptions.AxisError, swv, x, 2, 2, match="sliding_window_view")
    assert_raises_everywhere(TypeError, swv, x, 2.5, 0, match="integers")
    assert_raises_everywhere(ValueError, swv, x, 2, 0, writeable=True, match="copy")


def test_sliding_window_view_is_read_only(comm):
    """NumPy's windows are read-only: a write raises rather than change a copy only."""
    w = da.lib.stride_tricks.sliding_window_view(da.asarray(np.arange(13.0), split=0), 3)
    assert not w.flags.writeable
    assert_raises_everywhere(ValueError, w.__setitem__, (0, 0), 1.0, match="read-only")


STRIDED = {  # id -> (global array, as_strided keywords from its strides); numpy-100 exercises 76, 81, 84
    "rolling-rows": (np.arange(13), lambda s: dict(shape=(11, 3), strides=(s[0], s[0]))),
    "uint32-bytes": (np.arange(1, 15, dtype=np.uint32), lambda s: dict(shape=(11, 4), strides=(4, 4))),
    "blocks-3x3": (np.arange(91).reshape(13, 7) % 5, lambda s: dict(shape=(11, 5, 3, 3), strides=s + s)),
    "defaults": (np.arange(91.0).reshape(13, 7), lambda s: {}),
    "transpose": (np.arange(91.0).reshape(13, 7), lambda s: dict(shape=(7, 13), strides=(s[1], s[0]))),
    "diagonal": (np.arange(91.0).reshape(13, 7), lambda s: dict(shape=(7,), strides=(s[0] + s[1],))),
    "broadcast-row": (np.arange(91.0).reshape(13, 7), lambda s: dict(shape=(4, 7), strides=(0, s[1]))),
    "empty": (np.arange(91.0).reshape(13, 7), lambda s: dict(shape=(0, 3), strides=s)),
    "0-d": (np.arange(91.0).reshape(13, 7), lambda s: dict(shape=(), strides=())),
}


@pytest.mark.parametrize("case", STRIDED)
@pytest.mark.parametrize("split", [0, None], ids=["split0", "replicated"])
def test_as_strided_reads_numpy_cells(case, split, comm):
    ref, keywords = STRIDED[case]
    x = da.asarray(ref, split=split if ref.ndim else None)
    want = np.lib.stride_tricks.as_strided(ref, **keywords(ref.strides))
    got = da.lib.stride_tricks.as_strided(x, **keywords(x.strides))
    assert_equal(got, want, err_msg=case)
    assert not got.flags.writeable, case  # a copy: writes could not reach x
    assert_equal(da.lib.stride_tricks.as_strided(ref, **keywords(ref.strides)), want, err_msg=case)


def test_as_strided_bad_input(comm):
    x = da.asarray(np.arange(13.0), split=0)
    strided = da.lib.stride_tricks.as_strided
    assert_raises_everywhere(ValueError, strided, x, (14,), (8,), match="as_strided: the strides reach outside")
    assert_raises_everywhere(ValueError, strided, x, (2,), (-8,), match="as_strided: the strides reach outside")
    assert_raises_everywhere(ValueError, strided, x, (2,), (4,), match="as_strided: strides must be whole items")
    assert_raises_everywhere(ValueError, strided, x, (2, 2), (8,), match="as_strided: mismatch in length")
    assert_raises_everywhere(ValueError, strided, x, (-1,), (8,), match="as_strided: negative dimensions")
    assert_raises_everywhere(TypeError, strided, x, (2.5,), (8,), match="as_strided: shape must hold integers")


PADS = {  # id -> numpy.pad keywords (mode constant)
    "nan-y": dict(pad_width=((4, 0), (0, 0)), constant_values=np.nan),
    "both-axes": dict(pad_width=((1, 2), (3, 0))),
    "scalar-width": dict(pad_width=2, constant_values=-1.5),
    "per-axis-values": dict(pad_width=1, constant_values=((1.0, 2.0), (3.0, 4.0))),
    "nothing": dict(pad_width=0),
}


@over_layouts
@pytest.mark.parametrize("case", PADS)
def test_pad_constant_moves_nothing(case, layout, comm):
    kwargs = PADS[case]
    ref = field(nans=False)
    want = np.pad(ref, mode="constant", **kwargs)
    x = layout.array(ref)
    with da.tracing() as t:
        got = np.pad(x, mode="constant", **kwargs)
    assert_equal(got, want, err_msg=case)
    moved = [e["op"] for e in t.events if e["kind"] == "comm"]
    assert not agree(comm, not moved), f"{case}: rank {comm.rank} communicated {moved}"


def test_pad_constant_bad_input(comm):
    x = da.asarray(np.arange(13), split=0)
    assert_raises_everywhere(ValueError, np.pad, x, 1, constant_values=np.nan, match="NaN")
    assert_raises_everywhere(ValueError, np.pad, x, -1, match="non-negative")
    assert_raises_everywhere(TypeError, np.pad, x, 1.5, match="integral")


# ------------------------------------------------------------------ interp
INTERP = {  # id -> targets and method
    "x-linear": dict(x=[5.0, 15.0, 31.0, -4.0, 60.0]),
    "y-linear": dict(y=[0.25, 2.5, 5.9, 6.0, 7.5]),
    "x-nearest": dict(x=[5.0, 14.0, 16.0, 55.0], method="nearest"),
    "y-nearest": dict(y=[0.2, 3.3, 5.75], method="nearest"),
    "scalar-y": dict(y=3.3),
    "both": dict(x=[12.0, 48.0], y=[1.2, 3.4, 4.4]),
}


@over_layouts
@pytest.mark.parametrize("case", INTERP)
def test_interp_distributed(case, layout, comm):
    """darray.interop.interp equals xarray's .interp on NumPy data and keeps a DArray; so does .interp() itself."""
    kwargs = INTERP[case]
    a, expected = pair(layout, field())
    want = expected.interp(**kwargs)
    check(comm, interp(a, **kwargs), want, case)
    if layout.id == "replicated":  # xarray's own .interp() hands the data to SciPy: numpy.asarray gathers
        got = a.interp(**kwargs)
        xr.testing.assert_allclose(got.copy(data=np.asarray(got.data)), want)


@over_layouts
def test_interp_descending_coordinate_and_integers(layout, comm):
    ref = np.arange(np.prod(SHAPE)).reshape(SHAPE) % 9
    a, expected = pair(layout, ref, coords={"y": np.arange(SHAPE[0])[::-1] * 2.0})
    check(comm, interp(a, y=[1.0, 7.5, 20.0]), expected.interp(y=[1.0, 7.5, 20.0]), "y")
    check(comm, interp(a, {"x": [0.5, 5.5]}), expected.interp(x=[0.5, 5.5]), "x")  # no coordinate: positions


def test_interp_along_an_uncut_dim_moves_no_data(comm):
    ref = field()
    a = xr.DataArray(da.asarray(ref, split=0), dims=("y", "x"), coords={"x": np.arange(7.0)})
    with da.tracing() as t:
        got = interp(a, x=[0.5, 2.25, 6.0])
    sent = sum(e["nbytes"] for e in t.events if e["kind"] == "comm")
    assert not agree(comm, sent <= 64 * comm.size), f"rank {comm.rank} sent {sent} bytes"  # index checks only
    check(comm, got, xr.DataArray(ref, dims=("y", "x"), coords={"x": np.arange(7.0)}).interp(x=[0.5, 2.25, 6.0]),
          "uncut")


def test_interp_bad_input(comm):
    a = xr.DataArray(da.asarray(field()), dims=("y", "x"))
    assert_raises_everywhere(ValueError, interp, a, x=[1.0], method="cubic", match="interp: unsupported method")
    assert_raises_everywhere(ValueError, interp, a, z=[1.0], match="not a dimension")
    assert_raises_everywhere(TypeError, interp, a, x=np.ones((2, 2)), match="1-d")
    assert_raises_everywhere(TypeError, interp, xr.DataArray(np.ones(3)), match="backed by a DArray")


# ------------------------------------------------------------------ everything else xarray users reach for
METHODS = {
    "diff": lambda z: z.diff("y"),
    "diff-x-2": lambda z: z.diff("x", n=2),
    "shift-y": lambda z: z.shift(y=2),
    "shift-x-fill": lambda z: z.shift(x=-3, fill_value=0.0),
    "roll-y": lambda z: z.roll(y=4, roll_coords=True),
    "roll-x": lambda z: z.roll(x=-2),
    "pad-y": lambda z: z.pad(y=(1, 2)),
    "pad-x-edge": lambda z: z.pad(x=2, mode="edge"),
    "groupby-mean": lambda z: z.groupby(np.floor(z.y) % 3).mean(),
    "groupby-sum-bins": lambda z: z.groupby_bins("x", [0.0, 25.0, 70.0]).sum(),
    "coarsen-mean": lambda z: z.coarsen(y=3, boundary="trim").mean(),
    "coarsen-max-pad": lambda z: z.coarsen(x=2, boundary="pad").max(),
    "cumsum": lambda z: z.cumsum("y"),
    "where": lambda z: z.where(z > 0),
    "fillna": lambda z: z.fillna(0.0),
    "std": lambda z: z.std("x"),
}


@over_layouts
@pytest.mark.parametrize("case", METHODS)
def test_other_methods(case, layout, comm):
    f = METHODS[case]
    a, expected = pair(layout, field())
    check(comm, f(a), f(expected), case)


@over_layouts
def test_resample_over_a_time_axis(layout, comm):
    coords = {"time": pd.date_range("2000-01-01", periods=SHAPE[0], freq="6h"), "x": np.arange(SHAPE[1]) * 1.0}
    a, expected = pair(layout, field(), dims=("time", "x"), coords=coords)
    check(comm, a.resample(time="1D").mean(), expected.resample(time="1D").mean(), "resample 1D mean")
    check(comm, a.resample(time="12h").max(), expected.resample(time="12h").max(), "resample 12h max")
    check(comm, a.rolling(time=3).sum(), expected.rolling(time=3).sum(), "rolling time")
