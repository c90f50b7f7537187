"""DArray-backed xarray data to zarr and netCDF at 1-4 ranks: darray.interop.to_zarr / to_netcdf.

Every round trip reads the store back with xarray (NumPy) and compares it with
``numpy.asarray`` of the DArray (the gathered array), on every rank; xarray's
own ``to_zarr`` / ``to_netcdf`` work at one rank and raise an error naming the
collective writers at more.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray.interop import to_netcdf, to_xarray, to_zarr
from darray.io.zarr_io import chunk_plan
from darray.testing import agree, assert_raises_everywhere

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")
pytest.importorskip("dask.array")
pytest.importorskip("scipy")  # xarray's netCDF3 writer (the engine every environment here has)

pytestmark = [pytest.mark.mpi, pytest.mark.usefixtures("small_auto_threshold"),
              pytest.mark.filterwarnings("ignore:Consolidated metadata:UserWarning"),
              pytest.mark.filterwarnings("ignore:Failed to open Zarr store with consolidated:RuntimeWarning")]


def layouts(size: int, ndim: int) -> list[dict]:
    """Layouts of a (7,) or (7, 5) array at ``size`` ranks: even-ish, uneven with an empty block, replicated."""
    out = [dict(split=0), dict(split=None)]
    if ndim == 2:
        out.append(dict(split=1))
    if size > 1:
        out.append(dict(split=0, sizes=[0] + [len(c) for c in np.array_split(np.arange(7), size - 1)]))
    if size == 4 and ndim == 2:
        out.append(dict(split=(0, 1), grid=(2, 2)))
    return out


def _same(comm, ok: bool, what: str) -> None:
    failed = agree(comm, ok)
    assert not failed, f"{what}: ranks {failed} of {comm.size} read back other data"


def one_d(spec: dict) -> dict:
    """The layout of a (7,) array beside a (7, 5) one in ``spec``: cut along its one axis where that is cut."""
    if spec.get("grid") or spec.get("split") == 1:
        return dict(split=0)
    return spec


def _dataset(spec: dict):
    v = np.arange(35.0).reshape(7, 5) * 1.5 - 10.0
    w = (np.arange(7, dtype=np.int32) - 3) * 7
    x = da.asarray(v, **spec)
    y = da.asarray(w, **one_d(spec))
    ds = xr.Dataset({"v": to_xarray(x, dims=("y", "x"), attrs={"units": "m"}),
                     "w": to_xarray(y, dims=("y",), attrs={"long_name": "counts"})},
                    coords={"y": np.arange(7) * 10, "x": np.linspace(0.0, 1.0, 5)}, attrs={"title": "two"})
    return ds, x, y


@pytest.mark.parametrize("index", range(5))
def test_to_zarr_dataset_round_trip(index, comm, shared):
    """Two DArray-backed variables (2-d and 1-d), coords and attrs; uneven (7, 5) in every layout."""
    specs = layouts(comm.size, 2)
    if index >= len(specs):
        return
    ds, x, y = _dataset(specs[index])
    path = shared / f"d{index}.zarr"
    to_zarr(ds, path)
    back = xr.open_zarr(path)
    ok = (np.array_equal(back["v"].values, np.asarray(x)) and back["v"].dtype == np.float64
          and np.array_equal(back["w"].values, np.asarray(y)) and back["w"].dtype == np.int32
          and back.attrs == {"title": "two"} and back["v"].attrs == {"units": "m"}
          and back["w"].attrs == {"long_name": "counts"} and np.array_equal(back["y"].values, np.arange(7) * 10)
          and np.array_equal(back["x"].values, np.linspace(0.0, 1.0, 5)) and back["v"].dims == ("y", "x"))
    _same(comm, ok, f"layout {specs[index]}")
    chunks = zarr.open_array(str(path), path="v", mode="r").chunks
    _same(comm, chunks == chunk_plan(x.layout, 8)[0], f"zarr chunks {chunks} follow the blocks")


@pytest.mark.parametrize("ndim", [1, 2])
def test_to_zarr_dataarray_every_layout(ndim, comm, shared):
    """A named and an unnamed DataArray (open_dataarray gives the unnamed one back), 1-d and 2-d."""
    ref = np.arange(35.0).reshape(7, 5)[(slice(None),) * ndim + (0,) * (2 - ndim)] - 3.25
    dims = ("y", "x")[:ndim]
    for i, spec in enumerate(layouts(comm.size, ndim)):
        x = da.asarray(ref, **spec)
        to_zarr(to_xarray(x, dims=dims, name="t", attrs={"a": 1}), shared / f"n{i}.zarr")
        back = xr.open_zarr(shared / f"n{i}.zarr")["t"]
        _same(comm, np.array_equal(back.values, np.asarray(x)) and back.attrs == {"a": 1}, f"named {spec}")
        to_zarr(to_xarray(x, dims=dims), shared / f"u{i}.zarr")
        back = xr.open_dataarray(shared / f"u{i}.zarr", engine="zarr")
        _same(comm, np.array_equal(back.values, np.asarray(x)) and back.name is None, f"unnamed {spec}")


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_to_zarr_darray_coordinate_and_scalar(zarr_format, comm, shared):
    """A DArray-backed non-index coordinate and a 0-d DArray variable; zarr v2 and v3 stores."""
    ref = np.arange(35.0).reshape(7, 5) - 0.5
    x = da.asarray(ref, split=1)
    total = da.sum(x)
    ds = xr.Dataset({"v": to_xarray(x, dims=("y", "x")), "s": to_xarray(total, dims=())},
                    coords={"c": ("y", da.asarray(np.arange(7.0) * 3, split=0))})
    to_zarr(ds, shared / "s.zarr", zarr_format=zarr_format)
    back = xr.open_zarr(shared / "s.zarr")
    _same(comm, np.array_equal(back["v"].values, np.asarray(x)) and float(back["s"]) == float(total)
          and "c" in back.coords and np.array_equal(back["c"].values, np.arange(7.0) * 3), f"v{zarr_format}")


def test_to_zarr_chunks_across_blocks(comm, shared):
    """encoding chunks that straddle the blocks: ranks sharing a chunk write in turns; the data is exact."""
    ref = np.arange(13 * 6, dtype=np.float32).reshape(13, 6) / 7
    x = da.asarray(ref, split=0)
    ds = xr.Dataset({"v": to_xarray(x, dims=("y", "x"))})
    to_zarr(ds, shared / "c.zarr", encoding={"v": {"chunks": (5, 4)}}, consolidated=False)
    stored = zarr.open_array(str(shared / "c.zarr"), path="v", mode="r")
    _same(comm, stored.chunks == (5, 4) and np.array_equal(stored[...], np.asarray(x)), "chunks (5, 4)")


def test_to_zarr_encoding_is_applied_per_block(comm, shared):
    """xarray encodes each block as the store says (int16 with a scale factor; NaN to _FillValue)."""
    ref = np.round(np.arange(35.0).reshape(7, 5) * 0.3, 1)
    ref[2, 3] = np.nan
    x = da.asarray(ref, split=0)
    ds = xr.Dataset({"v": to_xarray(x, dims=("y", "x"))})
    enc = {"v": {"dtype": "int16", "scale_factor": 0.1, "_FillValue": -999}}
    to_zarr(ds, shared / "e.zarr", encoding=enc)
    raw = zarr.open_array(str(shared / "e.zarr"), path="v", mode="r")[...]
    back = xr.open_zarr(shared / "e.zarr")["v"].values
    expected_raw = np.where(np.isnan(ref), -999, np.round(np.nan_to_num(ref) * 10)).astype(np.int16)
    _same(comm, raw.dtype == np.int16 and np.array_equal(raw, expected_raw)
          and np.allclose(back, ref, equal_nan=True), "encoded")


def test_to_zarr_modes(comm, shared):
    """mode='w-' refuses an existing store (the same error everywhere); 'w' replaces it; others are refused."""
    path = shared / "m.zarr"
    a = to_xarray(da.asarray(np.arange(7.0), split=0), dims=("y",), name="a")
    to_zarr(a, path)
    assert_raises_everywhere(Exception, to_zarr, a * 2, path, match="already contains data")
    to_zarr(a * 2, path, mode="w")
    _same(comm, np.array_equal(xr.open_zarr(path)["a"].values, np.arange(7.0) * 2), "mode w")
    assert_raises_everywhere(ValueError, to_zarr, a, path, mode="a", match="to_zarr: unsupported mode")
    assert_raises_everywhere(TypeError, to_zarr, a, path, mode="w", region="auto", match="region=")
    assert_raises_everywhere(TypeError, to_zarr, np.arange(3), path, match="expected an xarray.Dataset")
    if comm.size > 1:
        assert_raises_everywhere(ValueError, to_zarr, a, shared / f"r{comm.rank}.zarr", match="different paths")
        _same(comm, not any(p.name.startswith("r") for p in shared.iterdir()), "nothing written")


def test_to_netcdf_round_trip_written_by_rank_0_only(comm, shared, monkeypatch):
    """Gathered onto rank 0, which alone calls xarray's writer; the others wait and return; exact data back."""
    calls = []
    original = xr.Dataset.to_netcdf

    def recording(self, *args, **kwargs):
        calls.append(comm.rank)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(xr.Dataset, "to_netcdf", recording)
    for i, spec in enumerate(layouts(comm.size, 2)):
        ds, x, y = _dataset(spec)
        calls.clear()
        to_netcdf(ds, shared / f"d{i}.nc")
        _same(comm, calls == ([0] if comm.rank == 0 else []), f"writers {calls}")
        with xr.open_dataset(shared / f"d{i}.nc") as back:
            ok = (np.array_equal(back["v"].values, np.asarray(x)) and np.array_equal(back["w"].values, np.asarray(y))
                  and back.attrs == {"title": "two"} and back["v"].attrs == {"units": "m"}
                  and np.array_equal(back["x"].values, np.linspace(0.0, 1.0, 5)))
        _same(comm, ok, f"netCDF {spec}")
        a = to_xarray(da.asarray(np.arange(7.0) - 2, **one_d(spec)), dims=("y",))
        to_netcdf(a, shared / f"a{i}.nc")
        with xr.open_dataarray(shared / f"a{i}.nc") as back:
            _same(comm, np.array_equal(back.values, np.arange(7.0) - 2) and back.name is None, "unnamed DataArray")


def test_to_netcdf_errors_agree(comm, shared):
    a = to_xarray(da.asarray(np.arange(7.0), split=0), dims=("y",), name="a")
    assert_raises_everywhere(Exception, to_netcdf, a, shared / "nodir" / "a.nc")
    assert_raises_everywhere(TypeError, to_netcdf, a, None, match="expected a path")


@pytest.mark.numpy_only  # xarray's CF encoder calls .view(), which array-api-strict local blocks do not have
def test_xarrays_own_writers_at_one_rank(comm, shared):
    """One rank: xarray's own to_zarr / to_netcdf write DArray data as they write NumPy data."""
    if comm.size > 1:
        return  # test_xarrays_own_writers_refused
    x = da.asarray(np.arange(35.0).reshape(7, 5), split=0)
    a = to_xarray(x, dims=("y", "x"), name="v")
    a.to_dataset().to_zarr(shared / "own.zarr")
    a.to_netcdf(shared / "own.nc")
    with xr.open_dataset(shared / "own.nc") as back:
        ok = np.array_equal(xr.open_zarr(shared / "own.zarr")["v"].values, np.asarray(x)) and \
            np.array_equal(back["v"].values, np.asarray(x))
    _same(comm, ok, "one rank")


def test_xarrays_own_writers_refused(comm, shared):
    """2+ ranks: xarray's own to_zarr / to_netcdf raise an error naming darray's collective writers."""
    if comm.size == 1:
        return  # test_xarrays_own_writers_at_one_rank
    x = da.asarray(np.arange(35.0).reshape(7, 5), split=0)
    a = to_xarray(x, dims=("y", "x"), name="v")
    mine = shared / f"own{comm.rank}"  # one target per rank: the error, not a race on one path, is tested
    assert_raises_everywhere(ValueError, a.to_dataset().to_zarr, f"{mine}.zarr", match="darray.interop.to_zarr")
    assert_raises_everywhere(ValueError, a.to_netcdf, f"{mine}.nc", match="darray.interop.to_netcdf")
    _same(comm, float(np.asarray(x).sum()) == 595.0, "numpy.asarray elsewhere still gathers")
