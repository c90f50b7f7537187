"""NumPy's dtypes beyond the standard: float16, datetime64/timedelta64 and records, against NumPy.

Each check runs a NumPy expression on DArrays and on the gathered NumPy input
(the same lambda given ``darray`` or ``numpy`` as ``m``) over cut layouts
(uneven, an empty block, a 2-d grid at four ranks), so every value crosses
MPI in halo strips, redistributions, allgathers and sample sorts. float16
on a backend without it (array-api-strict), and dates and records on any
backend but NumPy, raise a TypeError that names the library.
"""

from __future__ import annotations

import numpy
import pytest
from numpy.lib.recfunctions import repack_fields

import darray as np
from darray.testing import assert_equal, assert_raises_everywhere, assert_results_equal

from _cases import layouts

pytestmark = pytest.mark.mpi
numpy_only = pytest.mark.numpy_only

SHAPE = (7, 5)
LAYOUTS = layouts(SHAPE, "replicated", "split0", "uneven0", "split1", "first-empty0", "grid2x2")
RNG = numpy.random.default_rng(7)
HALF = (RNG.standard_normal(SHAPE) * 3).astype(numpy.float16)
DATES = numpy.datetime64("2020-01-01T00", "h") + RNG.integers(-500, 500, SHAPE).astype("m8[h]")
DATES[1, 2] = DATES[4, 0] = numpy.datetime64("NaT")
DATES_FINITE = DATES.copy()
DATES_FINITE[numpy.isnat(DATES)] = numpy.datetime64("2019-06-01T00", "h")
RECORD = numpy.dtype([("x", "f8"), ("n", "i4"), ("t", "M8[s]"), ("v", "f4", (2,)), ("p", [("a", "u1"), ("b", "f2")])])


def _records(shape=SHAPE) -> numpy.ndarray:
    r = numpy.zeros(shape, RECORD)
    size = r.size
    r["x"] = (numpy.arange(size) * 7 % 5).reshape(shape) / 2
    r["n"] = (numpy.arange(size) * 3 % 4).reshape(shape)
    r["t"] = numpy.datetime64("2021-03-01") + (numpy.arange(size) % 3).reshape(shape).astype("m8[D]")
    r["v"][..., 1] = (numpy.arange(size) % 2).reshape(shape)
    r["p"]["a"] = numpy.arange(size).reshape(shape)[::-1] % 7
    return r


def _check(cases: dict, inputs: tuple, layout, **tolerances) -> None:
    """Every ``name -> f(m, *arrays)`` of ``cases`` on DArrays of ``layout`` equals NumPy on the inputs."""
    darrays = tuple(layout.array(a) for a in inputs)
    for name, f in cases.items():
        with numpy.errstate(all="ignore"):
            assert_results_equal(f(np, *darrays), f(numpy, *inputs), err_msg=f"{name} on {layout}", **tolerances)


# ---------------------------------------------------------------- float16
HALF_ELEMENTWISE = {
    "x + 1": lambda m, h: h + 1, "x * 0.5": lambda m, h: h * 0.5, "x / x.T.T": lambda m, h: h / (h.T.T + 9),
    "x ** 2": lambda m, h: h ** 2, "sqrt": lambda m, h: m.sqrt(abs(h)), "exp": lambda m, h: m.exp(h / 4),
    "sin": lambda m, h: m.sin(h), "maximum": lambda m, h: m.maximum(h, h[::-1]), "x > 0": lambda m, h: h > 0,
    "with float32": lambda m, h: h * m.ones(SHAPE, dtype=m.float32),
    "with int8": lambda m, h: h + m.ones(SHAPE, dtype=m.int8), "with uint8 array": lambda m, h: m.asarray(h) - 1,
    "stencil": lambda m, h: h[1:, 1:] - h[:-1, :-1], "transpose moves": lambda m, h: (h.T @ m.eye(7, dtype=m.float16)),
    "floor": lambda m, h: m.floor(h), "where": lambda m, h: m.where(h > 0, h, m.float16(0)),
    "sort": lambda m, h: m.sort(h, axis=0), "argsort": lambda m, h: m.argsort(h.ravel(), kind="stable"),
    "max": lambda m, h: m.max(h, axis=0), "argmax": lambda m, h: m.argmax(h), "reshape": lambda m, h: h.reshape(5, 7),
    "astype": lambda m, h: h.astype(m.float64), "from float64": lambda m, h: h.astype(m.float64).astype(m.float16),
    "isclose": lambda m, h: m.isclose(h, h + m.float16(0.001)), "unique": lambda m, h: m.unique(h),
    "concat": lambda m, h: m.concatenate([h, h], axis=1), "fft is complex64": lambda m, h: m.fft.fft(h, axis=0),
}
#: Sums: NumPy and darray both accumulate in float32 and round once, in another order across ranks.
HALF_SUMS = {
    "sum": lambda m, h: m.sum(h), "sum axis 0": lambda m, h: m.sum(h, axis=0), "mean": lambda m, h: m.mean(h),
    "mean axis 1": lambda m, h: m.mean(h, axis=1), "std": lambda m, h: m.std(h, axis=0),
    "cumsum": lambda m, h: m.cumsum(h, axis=0),
}


@numpy_only
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_float16_computes_as_numpy(layout):
    _check(HALF_ELEMENTWISE, (HALF,), layout, rtol=0)  # elementwise and moves: NumPy's bits
    _check(HALF_SUMS, (HALF,), layout, rtol=2e-3, atol=1e-2)


@numpy_only
@pytest.mark.parametrize("names", [("split1", "split0"), ("grid2x2", "grid2x2"), ("split1", "replicated")],
                         ids=str)
def test_float16_products_round_once_as_numpy(names):
    """NumPy's matmul sums float16 products in float32 and rounds once: a contraction cut over ranks sums float32
    partials, so its result is NumPy's but where the partials' order moves a float32 sum across a float16
    rounding boundary (rare: one element in hundreds). Rounded partials would differ in about a quarter."""
    rng = numpy.random.default_rng(3)
    a, b = (rng.random(shape).astype(numpy.float16) for shape in ((12, 300), (300, 8)))
    cases = layouts(a.shape, names[0]) + layouts(b.shape, names[1])
    if len(cases) < 2:
        pytest.skip(f"{names} are not layouts at this rank count")
    x, y = cases[0].array(a), cases[1].array(b)
    got, want = numpy.asarray(x @ y), a @ b
    assert got.dtype == numpy.float16
    assert numpy.mean(got == want) > 0.97, numpy.mean(got == want)
    assert numpy.all(numpy.abs(got.astype(float) - want) <= numpy.spacing(want))


@numpy_only
def test_float16_creation_and_promotion():
    for make in (lambda m: m.zeros(5, dtype=m.float16), lambda m: m.ones((2, 3), m.half),
                 lambda m: m.full(4, 1.5, dtype="float16"), lambda m: m.arange(0, 3, 0.5, dtype=m.float16),
                 lambda m: m.linspace(0, 1, 7, dtype=m.float16), lambda m: m.sqrt(m.arange(9, dtype=m.int8)),
                 lambda m: m.sqrt(m.arange(9, dtype=m.uint8)), lambda m: m.asarray([1, 2], dtype="f2") / 3):
        got, want = make(np), make(numpy)
        assert got.dtype == want.dtype == numpy.float16
        assert_equal(got, want)
    assert np.result_type(np.float16, np.int8) == numpy.float16
    assert np.finfo(np.float16).bits == 16


# ---------------------------------------------------------------- dates and durations
def _days(m, d):
    return d.astype("M8[D]")


DATE_CASES = {
    "date - date": lambda m, d: d - d[::-1], "date + 1": lambda m, d: d + 1,
    "date + duration": lambda m, d: d + m.timedelta64(90, "m"), "duration * 2": lambda m, d: (d - d.T.T[0]) * 2,
    "duration / duration": lambda m, d: (d - d[0]) / m.timedelta64(1, "D"),
    "duration // duration": lambda m, d: (d - d[0]) // m.timedelta64(1, "D"),
    "-duration": lambda m, d: -(d - d[0]), "abs": lambda m, d: abs(d - d[0]),
    "date < date": lambda m, d: d < d[::-1], "date == scalar": lambda m, d: d == d[2, 3],
    "date >= datetime64": lambda m, d: d >= m.datetime64("2020-01-10"),
    "isnat": lambda m, d: m.isnat(d), "astype days": _days, "astype int64": lambda m, d: d.astype(m.int64),
    "min": lambda m, d: m.min(d), "max axis 0": lambda m, d: m.max(d, axis=0), "min axis 1": lambda m, d: m.min(d, axis=1),
    "sum of durations": lambda m, d: m.sum(d - d[0], axis=0), "mean of durations": lambda m, d: m.mean(d[2:] - d[2]),
    "sort": lambda m, d: m.sort(d, axis=0), "sort flat": lambda m, d: m.sort(d.ravel()),
    "argsort": lambda m, d: m.argsort(d.ravel(), kind="stable"), "argmax": lambda m, d: m.argmax(d, axis=0),
    "argmin": lambda m, d: m.argmin(d), "unique": lambda m, d: m.unique(d), "diff": lambda m, d: m.diff(d, axis=0),
    "where": lambda m, d: m.where(d > d[::-1], d, d[::-1]), "mask": lambda m, d: d[d > d[::-1]],
    "concat": lambda m, d: m.concatenate([d, d]), "transpose": lambda m, d: d.T.copy(),
    "reshape": lambda m, d: d.reshape(5, 7), "roll": lambda m, d: m.roll(d, 3, axis=0),
}


@numpy_only
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_dates_compute_as_numpy(layout):
    _check(DATE_CASES, (DATES,), layout)
    _check({"max": lambda m, d: m.max(d), "argmin": lambda m, d: m.argmin(d, axis=1)}, (DATES_FINITE,), layout)


@numpy_only
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_dates_are_written(layout):
    x, g = layout.array(DATES.copy()), DATES.copy()  # (a replicated DArray may share its NumPy input)
    for target in (x, g):
        target[2] = numpy.datetime64("2000-01-01T05")
        target[:, 1] += numpy.timedelta64(1, "D")
        target[target < numpy.datetime64("2019-12-25")] = numpy.datetime64("NaT")
    assert_equal(x, g)


ARANGES = [(("2005-02", "2005-03"), {"dtype": "datetime64[D]"}),
           ((numpy.datetime64("2005-02-01"), numpy.datetime64("2005-02-19"), numpy.timedelta64(2, "D")), {}),
           ((numpy.datetime64("2005-02-01T00"), numpy.datetime64("2005-02-02"), numpy.timedelta64(90, "m")), {}),
           ((0, 10, 3), {"dtype": "timedelta64[h]"}), (("2020-01-01", "2019-12-25", -2), {"dtype": "M8[D]"})]


@numpy_only
@pytest.mark.parametrize("args,kwargs", ARANGES, ids=str)
def test_arange_of_dates(args, kwargs):
    assert_results_equal(np.arange(*args, **kwargs), numpy.arange(*args, **kwargs))
    assert_results_equal(np.zeros(3, "M8[D]"), numpy.zeros(3, "M8[D]"))
    assert_results_equal(np.full(3, numpy.datetime64("2020-02-29")), numpy.full(3, numpy.datetime64("2020-02-29")))


def test_dates_bad_input_raises_everywhere():
    assert_raises_everywhere(ValueError, np.arange, numpy.datetime64("NaT"), numpy.datetime64("2020-01-01"),
                             match="arange")
    if np.config.backend == "numpy":
        d = np.asarray(DATES, split=0)
        assert_raises_everywhere(TypeError, lambda: d + d)  # NumPy's own refusal: no sum of two dates
        assert_raises_everywhere(TypeError, np.prod, d)
    else:
        assert_raises_everywhere(TypeError, np.zeros, 3, "M8[D]", match="NumPy blocks")


# ---------------------------------------------------------------- records
RECORD_CASES = {
    "field": lambda m, r: r["x"], "nested field": lambda m, r: r["p"]["b"], "subarray field": lambda m, r: r["v"],
    "fields": lambda m, r: r[["n", "x"]], "field of a row": lambda m, r: r[3]["n"],
    "field of a reversed view": lambda m, r: r[::-1]["t"], "==": lambda m, r: r == r[::-1], "!=": lambda m, r: r != r,
    "sort": lambda m, r: m.sort(r, axis=0), "sort by x": lambda m, r: m.sort(r.ravel(), order="x"),
    "sort by n, x": lambda m, r: m.sort(r, order=["n", "x"], axis=0), "sort by p": lambda m, r: m.sort(r, order="p"),
    "argsort by t": lambda m, r: m.argsort(r.ravel(), order="t", kind="stable"),
    "transpose": lambda m, r: r.T.copy(), "reshape": lambda m, r: r.reshape(5, 7), "roll": lambda m, r: m.roll(r, 2),
    "concat": lambda m, r: m.concatenate([r, r], axis=1), "take": lambda m, r: m.take(r, [6, 0, 3], axis=0),
    "unique": lambda m, r: m.unique(r), "unique of a column": lambda m, r: m.unique(r[:, 2]),
    "unique with index, inverse, counts": lambda m, r: m.unique(r, return_index=True, return_inverse=True,
                                                                return_counts=True),
}


@numpy_only
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_records_compute_as_numpy(layout):
    _check(RECORD_CASES, (_records(),), layout)


@numpy_only
@pytest.mark.parametrize("layout", layouts((13, 2), "replicated", "split0", "uneven0", "first-empty0"), ids=str)
def test_unique_of_records_viewed_from_pairs(layout):
    """numpy-100 exercise 73: sorted pairs viewed as records, then unique (segments); a NaN field is distinct."""
    pairs = numpy.sort(numpy.random.default_rng(73).integers(0, 6, (13, 2)), axis=1)
    record = [("p0", pairs.dtype), ("p1", pairs.dtype)]
    want = numpy.unique(pairs.view(dtype=record))
    assert_equal(np.unique(layout.array(pairs).view(dtype=record)), want)
    nans = numpy.array([(1, 2.0), (1, numpy.nan), (0, 3.0), (1, numpy.nan), (1, 2.0)], [("a", "i4"), ("b", "f8")])
    values, counts = np.unique(np.asarray(nans, split=0), return_counts=True)
    want_values, want_counts = numpy.unique(nans, return_counts=True)
    assert numpy.asarray(values).tobytes() == want_values.tobytes()  # (NaN != NaN: compared as bytes; gathered)
    assert_equal(counts, want_counts)
    assert_results_equal(np.unique(np.asarray(nans[:0], split=0), return_inverse=True),
                         numpy.unique(nans[:0], return_inverse=True))


@numpy_only
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_fields_are_writable_views(layout):
    g = _records()
    x = layout.array(g)
    for r in (x, g):
        r["x"] = 5.0
        r["n"][2] = -1
        r["n"][r["n"] > 2] = 9
        r["x"][:, 1] += 1.5
        r["v"][..., 0] = 0.25
        r["p"]["a"] += 1
        row = r[4]
        row["x"] = -7.0
        r[::-1]["n"][0, 0] = 42  # through a computed view on cut axes
        r[["x", "n"]] = (0.5, 3) if r is g else numpy.array((0.5, 3), dtype=[("x", "f8"), ("n", "i4")])[()]
    assert_equal(x, g)


@numpy_only
def test_records_creation_and_views():
    plain = numpy.dtype([("x", "f8"), ("y", "f8")])
    z, g = np.zeros(6, [("x", float), ("y", float)]), numpy.zeros(6, [("x", float), ("y", float)])
    assert z.dtype == plain and numpy.asarray(z).tolist() == g.tolist()
    pairs = np.asarray(numpy.arange(12.0).view(plain), split=0)
    assert_equal(pairs.view(numpy.float64), numpy.arange(12.0))  # a record's bytes as its fields' dtype
    floats, want = np.asarray(numpy.arange(12.0), split=0), numpy.arange(12.0)
    assert_equal(floats.view(plain), want.view(plain))  # (at 4 ranks, 3 floats a block: pairs move, linked)
    floats.view(plain)["y"][1] = -5.0
    want.view(plain)["y"][1] = -5.0
    assert_equal(floats, want)
    assert str(z[:2]) == str(g[:2])


def test_strings_objects_and_long_doubles_are_refused():
    x = np.arange(3)
    for spec in ("S3", "U3", object, [("name", "U8")], numpy.longdouble):
        assert_raises_everywhere(TypeError, x.astype, spec, match="astype: unsupported dtype")
        assert_raises_everywhere(TypeError, np.zeros, 3, spec, match="zeros: unsupported dtype")
    assert_raises_everywhere(TypeError, np.asarray, ["a", "b"], match="asarray: unsupported data")
    # PDSH 02.09: a record with a text field is refused saying why (not "expected one of" the standard's dtypes)
    people = {"names": ("name", "age"), "formats": ("U10", "i4")}
    assert_raises_everywhere(TypeError, np.zeros, 4, people, match="zeros: unsupported dtype; got [('name', '<U10')")
    assert_raises_everywhere(TypeError, np.zeros, 4, people, match="(strings and objects are not distributed)")
    if np.config.backend != "numpy":  # float16 where the local library has none; records on NumPy blocks only
        assert_raises_everywhere(TypeError, np.zeros, 3, np.float16, match="does not have")
        assert_raises_everywhere(TypeError, np.zeros, 3, RECORD, match="NumPy blocks")


@numpy_only
@pytest.mark.parametrize("layout", layouts((6, 3), "replicated", "split0", "uneven0"), ids=str)
def test_raw_void_views_are_refused_naming_unique_rows(layout):
    """numpy-100 exercise 96 views each row as one raw void item; the refusal names unique(x, axis=0)."""
    z = layout.array(numpy.arange(18).reshape(6, 3) % 2)
    raw = numpy.dtype((numpy.void, z.dtype.itemsize * z.shape[1]))
    assert_raises_everywhere(TypeError, z.view, raw, match="view: unsupported dtype; got |V24 (raw bytes")
    assert_raises_everywhere(TypeError, z.view, raw, match="for unique rows use numpy.unique(x, axis=0)")


@numpy_only
@pytest.mark.filterwarnings("ignore:The data type")  # (zarr: records have no zarr 3 specification yet)
@pytest.mark.parametrize("ext", [".npy", ".zarr", ".h5"])
def test_files_keep_halves_dates_and_records(shared, ext):
    plain = numpy.zeros(9, [("x", "f8"), ("n", "i4"), ("h", "f2")])
    plain["x"], plain["n"], plain["h"] = numpy.arange(9) / 3, numpy.arange(9)[::-1], numpy.arange(9) / 7
    arrays = {"half": HALF, "records": plain}
    if ext != ".h5":  # (HDF5 has no dates; zarr no subarray fields)
        arrays.update(dates=DATES, records_with_dates=_records((9,))[["x", "t", "p"]] if ext == ".zarr"
                      else _records((9,)))
    for name, g in arrays.items():
        path = str(shared / f"{name}{ext}")
        np.io.save(path, np.asarray(g, split=0))
        assert_equal(np.io.load(path), repack_fields(g), err_msg=f"{name}{ext}")  # (files keep fields, no gaps)
    if ext == ".zarr":
        assert_raises_everywhere(TypeError, np.io.save, str(shared / "sub.zarr"), np.asarray(_records(), split=0),
                                 match="zarr keeps no subarray fields")
    if ext == ".h5":  # HDF5 has no type for dates: refused before any file is made, on every rank
        assert_raises_everywhere(TypeError, np.io.save, str(shared / "dates.h5"), np.asarray(DATES, split=0),
                                 match="HDF5 has no type for datetime64")
