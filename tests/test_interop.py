"""darray.interop: dask in and out without global materialisation, xarray wrapping DArrays."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import threading
from itertools import product
from pathlib import Path

import numpy as np
import pytest

import darray as da
from darray.interop import from_dask, from_xarray, to_dask, to_xarray
from darray.testing import agree, assert_equal

dask_array = pytest.importorskip("dask.array")
xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")

pytestmark = [pytest.mark.mpi, pytest.mark.usefixtures("small_auto_threshold")]

ROOT = Path(__file__).resolve().parent.parent


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


@pytest.mark.not_on("torch", reason="dask calls NumPy signatures (axis=, keepdims=) on the chunks")
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


def test_top_level_aliases_and_method(comm, shared):
    """darray.from_dask / darray.to_dask are darray.interop's; x.to_dask() delegates to to_dask (1-4 ranks)."""
    assert da.from_dask is from_dask and da.to_dask is to_dask
    assert "from_dask" in da.__all__ and "to_dask" in da.__all__
    ref = (np.arange(13 * 6).reshape(13, 6) * 0.5).astype(np.float64)
    rep = da.asarray(ref, split=None)
    dx = rep.to_dask()  # replicated: zero-copy at every rank count
    (held,) = dict(dx.__dask_graph__()).values()
    assert held is rep.local
    assert np.array_equal(dx.compute(), ref)
    for i, spec in enumerate(specs(comm.size)):
        x = da.asarray(ref, **spec)
        if comm.size > 1 and not x.layout.is_replicated:
            with pytest.raises(ValueError, match="to_dask: the array is distributed"):
                x.to_dask()
        dx = x.to_dask(via_zarr=shared / f"m{i}.zarr")  # the MPI hand-off: collective save, then from_zarr
        assert dx.shape == ref.shape and dx.dtype == ref.dtype
        cells = x.layout.block_slices(comm.rank)
        assert not agree(comm, np.array_equal(dx[cells].compute(scheduler="synchronous"), ref[cells]))
        for back_spec in specs(comm.size):  # and back into any layout, each rank reading only its region
            assert_equal(da.from_dask(dx, **back_spec), ref)
        assert_equal(da.from_dask(dx, split=0, halo=1).exchange_halos(), ref)


def test_to_dask_hand_off_runs_dask_numpy_machinery(comm, shared):
    """After the zarr hand-off dask's own (NumPy) operations run on every rank; results agree with NumPy."""
    ref = np.arange(24 * 5, dtype=np.float64).reshape(24, 5) - 30.0
    x = da.asarray(ref, split=0)
    dx = da.to_dask(x, via_zarr=shared / "h.zarr")
    got = (abs(dx) * 2).sum(axis=0).compute(scheduler="synchronous")
    assert isinstance(got, np.ndarray)
    assert not agree(comm, np.allclose(got, (abs(ref) * 2).sum(axis=0)))
    y = da.from_dask(dx.rechunk((7, 5)) + 1, split=1)  # a dask pipeline on the stored field, back into darray
    assert_equal(y, ref + 1)


def test_to_dask_via_zarr_documented_and_checked(comm, shared):
    """The docstring says how to hand a distributed array to dask; a path that differs between ranks is refused."""
    assert "via_zarr" in to_dask.__doc__ and "from_zarr" in to_dask.__doc__
    ref = np.arange(24 * 5, dtype=np.float32).reshape(24, 5)
    x = da.asarray(ref, split=0)  # 24 rows: even blocks at 1-4 ranks, each one (small) chunk
    dx = to_dask(x, via_zarr=shared / "even.zarr")
    cells = x.layout.block_slices(comm.rank)
    offsets = list(np.cumsum((0,) + dx.chunks[0]))
    assert not agree(comm, offsets == [x.layout.block_slices(r)[0].start for r in range(comm.size)] + [24]), \
        f"rank {comm.rank}: blocks vs chunks {dx.chunks}"
    mine = dx[cells].compute(scheduler="synchronous")  # reads only this rank's chunk
    assert not agree(comm, np.array_equal(mine, ref[cells]))
    if comm.size > 1:
        with pytest.raises(ValueError, match="different paths") as info:
            to_dask(x, via_zarr=shared / f"r{comm.rank}.zarr")
        messages = comm.allgather(np.frombuffer(str(info.value).encode().ljust(512, b"\0")[:512], dtype=np.uint8))
        assert all(np.array_equal(m, messages[0]) for m in messages)
        assert not agree(comm, not any(p.name.startswith("r") for p in shared.iterdir()))  # nothing written


def test_from_dask_lazy_field_each_rank_computes_only_its_chunks(comm):
    """A lazily generated field (no data anywhere): every rank runs exactly the chunk tasks meeting its region, once.

    2-d chunks, a column split and an uneven split with an empty block; the generator records the
    chunk it builds.
    """
    seen = []
    lock = threading.Lock()
    shape, chunks = (12, 10), (5, 3)

    def generate(block, block_info=None):
        loc = tuple(tuple(r) for r in block_info[None]["array-location"])
        with lock:
            seen.append(loc)
        rows, cols = (np.arange(a, b) for a, b in loc)
        return (rows[:, None] * 100 + cols[None, :]).astype(np.float64)

    ref = np.arange(12)[:, None] * 100.0 + np.arange(10)[None, :]
    field = dask_array.zeros(shape, chunks=chunks).map_blocks(generate, dtype=np.float64)
    size = comm.size
    for spec in (dict(split=1), dict(split=0, sizes=[0] + lengths(12, size - 1) if size > 1 else [12])):
        seen.clear()
        x = from_dask(field, **spec)
        assert_equal(x, ref)
        cells = x.layout.block_slices(comm.rank)
        if any(c.start == c.stop for c in cells):
            wanted = set()
        else:
            wanted = {loc for loc in product(*(_chunk_spans(n, c) for n, c in zip(shape, chunks)))
                      if all(a < c.stop and c.start < b for (a, b), c in zip(loc, cells))}
        ok = sorted(seen) == sorted(wanted)
        assert not agree(comm, ok), f"rank {comm.rank} computed {sorted(seen)}, expected {sorted(wanted)}"


def _same_on_every_rank(comm, text: str) -> bool:
    digest = np.frombuffer(hashlib.sha256(text.encode()).digest(), dtype=np.uint8)
    table = np.asarray(comm.allgather(digest))
    return bool((table == table[0]).all())


def _chunk_spans(n: int, c: int) -> list[tuple[int, int]]:
    return [(a, min(n, a + c)) for a in range(0, n, c)]


def lengths(n: int, parts: int) -> list[int]:
    return [len(c) for c in np.array_split(np.arange(n), parts)]


@pytest.mark.parametrize("split", [0, 1, None])
def test_darray_is_a_dask_chunk_source(split, comm, monkeypatch):
    """dask.array.from_array(x) reads through x[region]; chunks and results are DArrays.

    One process: any scheduler. At every rank count: with name= and a NumPy meta= every rank builds
    the same graph (the same keys), which the documented MPI usage needs; computing under MPI is
    tested by test_dask_chunk_source_under_mpi (it needs one PYTHONHASHSEED on every rank).
    """
    ref = np.arange(13 * 6, dtype=np.float64).reshape(13, 6) - 7.0
    x = da.asarray(ref, split=split)
    meta = np.empty((0, 0), ref.dtype)
    dx = dask_array.from_array(x, chunks=(4, 3), name="darray-source-x", meta=meta)
    y = dask_array.from_array(da.asarray(ref.T.copy(), split=split), chunks=3, name="darray-source-y", meta=meta)
    assert dx.shape == ref.shape and dx.dtype == ref.dtype and dx.numblocks == (4, 2)
    exprs = [dx, (dx * 2 - 1).sum(axis=0), dx + y.T, (dx * y.T).sum()]
    keys = repr([sorted(map(str, dict(e.__dask_graph__()))) for e in exprs])
    assert not agree(comm, _same_on_every_rank(comm, keys)), "the ranks built different graphs"
    if comm.size > 1:
        return
    reads = []
    getitem = da.DArray.__getitem__

    def counting(self, key):
        if self.shape == x.shape:  # dask reads from its own reference to x (not always the same object)
            reads.append(key)
        return getitem(self, key)

    monkeypatch.setattr(da.DArray, "__getitem__", counting)
    for scheduler in ("synchronous", "threads"):
        reads.clear()
        got = dx.compute(scheduler=scheduler)
        assert isinstance(got, da.DArray)  # chunks are DArrays: dask's concatenate is darray's
        assert_equal(got, ref)
        assert len(reads) == 8, reads  # one x[region] per chunk
        assert_equal((dx * 2 - 1).sum(axis=0).compute(scheduler=scheduler), (ref * 2 - 1).sum(axis=0))
        assert_equal((dx + y.T).compute(scheduler=scheduler), 2 * ref)
        assert float((dx * y.T).sum().compute(scheduler=scheduler)) == pytest.approx(float((ref * ref).sum()))
    assert_equal(dask_array.from_array(x, chunks=(5, 2)).compute(), ref)  # one process: no name needed


_CHUNK_SOURCE_JOB = """
import numpy as np, dask.array as dsa, darray as da
comm = da.default_communicator()
da.config.min_distributed_size = 4
ref = np.arange(13 * 6, dtype=np.float64).reshape(13, 6) - 7.0
meta = np.empty((0, 0), ref.dtype)
bad = []
for split in (0, 1, None):
    x = da.asarray(ref, split=split)
    dx = dsa.from_array(x, chunks=(4, 3), name="x", meta=meta)
    y = dsa.from_array(da.asarray(ref.T.copy(), split=split), chunks=3, name="y", meta=meta)
    got = dx.compute(scheduler="synchronous")
    checks = {
        "chunks": isinstance(got, da.DArray) and np.array_equal(got.gather(), ref),
        "reduce": np.allclose((dx * 2 - 1).sum(axis=0).compute(scheduler="synchronous").gather(),
                              (ref * 2 - 1).sum(axis=0)),
        "two sources": np.array_equal((dx + y.T).compute(scheduler="synchronous").gather(), 2 * ref),
        "sum": np.isclose(float((dx * y.T).sum().compute(scheduler="synchronous")), (ref * ref).sum()),
    }
    bad += [f"split={split} {k}" for k, v in checks.items() if not v]
verdict = f"rank {comm.rank} of {comm.size}: " + ("OK" if not bad else "MISMATCH " + ", ".join(bad))
with open(f"verdict-{comm.rank}.txt", "w") as f:  # a file per rank: mpiexec may interleave the ranks' stdout
    f.write(verdict)
print(verdict, flush=True)
"""


@pytest.mark.parametrize("nprocs", [2, 3])
def test_dask_chunk_source_under_mpi(nprocs, tmp_path):
    """The documented MPI usage, run as documented: its own mpiexec, one PYTHONHASHSEED, synchronous scheduler."""
    if comm_size() > 1:
        return  # launched from the one-process run only (this test starts its own job)
    mpiexec = Path(sys.executable).parent / "mpiexec"
    if not mpiexec.exists():
        mpiexec = shutil.which("mpiexec")
    if mpiexec is None:
        pytest.skip("mpiexec is not installed")
    script = tmp_path / "job.py"
    script.write_text(_CHUNK_SOURCE_JOB)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI", "PMIX", "OMPI_", "MPI_LOCAL", "HYDRA"))}
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONHASHSEED"] = "0"
    env.pop("DARRAY_TEST_CHILD", None)
    proc = subprocess.run([str(mpiexec), "-n", str(nprocs), sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=180)
    lines = [p.read_text() for p in sorted(tmp_path.glob("verdict-*.txt"))]
    assert proc.returncode == 0 and len(lines) == nprocs and all(line.endswith(": OK") for line in lines), \
        f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


def comm_size() -> int:
    return da.default_communicator().size


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


@pytest.mark.numpy_only(reason="xarray applies np.sin through __array_ufunc__: NumPy ufuncs on a DArray (np.sin(x), "
                               "out=, where=, ndarray <op> DArray) run on NumPy blocks only")
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
