"""darray.interop: dask in and out without global materialisation, xarray wrapping DArrays."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

import darray as da
from darray.interop import from_dask, from_xarray, to_dask, to_xarray
from darray.testing import agree, assert_equal

dask_array = pytest.importorskip("dask.array")
xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")

pytestmark = pytest.mark.mpi


@pytest.fixture(autouse=True)
def small_auto_threshold(monkeypatch):
    monkeypatch.setattr(da.config, "min_distributed_size", 4)


@pytest.fixture
def comm():
    return da.default_communicator()


@pytest.fixture
def shared(tmp_path, comm) -> Path:
    buf = np.zeros(4096, dtype=np.uint8)
    if comm.rank == 0:
        data = str(tmp_path).encode()
        buf[:len(data)] = np.frombuffer(data, dtype=np.uint8)
    path = Path(bytes(np.asarray(comm.bcast(buf, 0))).rstrip(b"\0").decode())
    comm.barrier()
    return path


def specs(size: int) -> list[dict]:
    out = [dict(split=None), dict(split=0), dict(split=1)]
    if size > 1:
        out.append(dict(split=0, sizes=[0] + [len(c) for c in np.array_split(np.arange(13), size - 1)]))
    if size == 4:
        out.append(dict(split=(0, 1), grid=(2, 2)))
    return out


# ------------------------------------------------------------------ dask
@pytest.mark.parametrize("dtype", ["bool", "int32", "float64", "complex64"])
def test_from_dask_every_layout(dtype, comm):
    ref = (np.arange(13 * 6).reshape(13, 6) % 7).astype(dtype)
    dx = dask_array.from_array(ref, chunks=(4, 4))
    for spec in specs(comm.size):
        x = from_dask(dx, **spec)
        assert x.dtype == ref.dtype
        assert_equal(x, ref)


def test_from_dask_computes_only_own_region(comm):
    """Each rank runs only the tasks whose chunks intersect its block (no global materialisation)."""
    seen = []
    lock = threading.Lock()

    def record(block, block_info=None):
        with lock:
            seen.append(tuple(tuple(r) for r in block_info[None]["array-location"]))
        return block

    ref = np.arange(24 * 5, dtype=np.float64).reshape(24, 5)
    dx = dask_array.from_array(ref, chunks=(2, 5)).map_blocks(record, dtype=ref.dtype)
    x = from_dask(dx, split=0)
    assert_equal(x, ref)
    cells = x.layout.block_slices(comm.rank)[0]
    outside = [loc for loc in seen if loc[0][1] <= cells.start or loc[0][0] >= cells.stop]
    assert not agree(comm, not outside), f"rank {comm.rank} computed chunks outside its block: {outside}"
    assert not agree(comm, len(seen) == (cells.stop - cells.start + 1) // 2)


def test_from_dask_checks_input(comm):
    with pytest.raises(TypeError, match="from_dask"):
        from_dask(np.zeros(3))
    unknown = dask_array.from_array(np.arange(6.0), chunks=3)
    unknown = unknown[unknown > 2]
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        from_dask(unknown)


def test_to_dask_one_rank_or_replicated_is_zero_copy(comm):
    x = da.asarray(np.arange(12.0).reshape(3, 4), split=None)
    dx = to_dask(x)
    assert dx.shape == (3, 4) and dx.chunks == ((3,), (4,))
    (held,) = dict(dx.__dask_graph__()).values()
    assert held is x.local  # the graph holds the block itself
    assert float((dx * 2).sum().compute()) == 132.0
    if comm.size == 1:
        y = da.arange(10.0, split=0)
        assert np.array_equal(to_dask(y).compute(), np.arange(10.0))


def test_to_dask_distributed_needs_storage(comm, shared):
    ref = np.arange(13 * 6, dtype=np.int64).reshape(13, 6)
    x = da.asarray(ref, split=0)
    if comm.size > 1:
        with pytest.raises(ValueError, match="via_zarr"):
            to_dask(x)
    dx = to_dask(x, via_zarr=shared / "x.zarr")
    assert dx.shape == ref.shape
    assert not agree(comm, np.array_equal(dx.compute(scheduler="synchronous"), ref))
    back = from_dask(dx, split=1)
    assert_equal(back, ref)


# ------------------------------------------------------------------ xarray
def _wrapped(comm):
    ref = np.arange(13 * 6, dtype=np.float64).reshape(13, 6) - 20.0
    x = da.asarray(ref, split=0)
    return ref, to_xarray(x, dims=("y", "x"), coords={"x": np.arange(6) * 10.0})


def _is_darray(a) -> bool:
    return isinstance(a.data, da.DArray)


def test_xarray_wraps_without_copy(comm):
    ref, a = _wrapped(comm)
    assert _is_darray(a) and a.sizes == {"y": 13, "x": 6}
    assert from_xarray(a) is a.data
    back = from_xarray(xr.DataArray(dask_array.from_array(ref, chunks=5), dims=("y", "x")), split=0)
    assert_equal(back, ref)


def test_xarray_arithmetic_and_isel(comm):
    ref, a = _wrapped(comm)
    b = (a * 2 + 1) / a.sizes["x"]
    assert _is_darray(b)
    assert_equal(b.data, (ref * 2 + 1) / 6)
    c = np.sin(a) - abs(a)
    assert _is_darray(c)
    assert_equal(c.data, np.sin(ref) - abs(ref))
    s = a.isel(y=slice(2, 11), x=slice(1, None, 2))
    assert _is_darray(s)
    assert_equal(s.data, ref[2:11, 1::2])
    t = a.isel(x=3)
    assert _is_darray(t) and t.dims == ("y",)
    assert_equal(t.data, ref[:, 3])
    assert _is_darray(a.sel(x=20.0))
    assert _is_darray(a.astype("float32")) and a.astype("float32").dtype == np.float32
    assert _is_darray(a.transpose("x", "y"))
    assert_equal(a.transpose("x", "y").data, ref.T)


def test_xarray_isel_integer_list_on_trailing_axis(comm):
    """xarray's isel(x=[...]) indexes a trailing axis with an integer array (NumPy semantics)."""
    ref, a = _wrapped(comm)
    s = a.isel(y=slice(2, 11), x=[0, 2, 5])
    assert _is_darray(s)
    assert_equal(s.data, ref[2:11][:, [0, 2, 5]])


def test_xarray_reductions(comm):
    ref, a = _wrapped(comm)
    for dim, axis in (("x", 1), ("y", 0)):
        m = a.mean(dim=dim)
        assert _is_darray(m)
        assert_equal(m.data, ref.mean(axis=axis))
        s = a.sum(dim)
        assert _is_darray(s)
        assert_equal(s.data, ref.sum(axis=axis))
        assert_equal(a.max(dim).data, ref.max(axis=axis))
    assert float(a.mean()) == pytest.approx(ref.mean())


def test_xarray_std_var(comm):
    ref, a = _wrapped(comm)
    assert_equal(a.std("y").data, ref.std(axis=0))
    assert_equal(a.var("x", ddof=1).data, ref.var(axis=1, ddof=1))


def test_xarray_where_with_other(comm):
    ref, a = _wrapped(comm)
    w = a.where(a > 3, 0.0)
    assert _is_darray(w)
    assert_equal(w.data, np.where(ref > 3, ref, 0.0))


def test_xarray_where_default_nan(comm):
    ref, a = _wrapped(comm)
    w = a.where(a > 3)
    assert _is_darray(w)
    assert_equal(w.data, np.where(ref > 3, ref, np.nan))
