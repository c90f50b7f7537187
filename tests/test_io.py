"""darray.io: zarr, .npy and HDF5 round trips, cross-layout reads, atomicity, damage detection.

Every rank uses the same directory (rank 0's ``tmp_path``, broadcast). Layouts
come from ``tests/_cases.py``, one test per layout (and format); dtypes are
looped inside (a test per dtype costs more in the per-test broadcast of the
directory than its check). Data checks go through ``assert_equal`` / ``agree``;
errors are expected on EVERY rank (a rank that did not raise fails the test,
and the ranks agree on that).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

import darray as da
from darray._comm import SelfCommunicator
from darray.io import (ChecksumError, CorruptFileError, load, load_hdf5, load_npy, save, save_hdf5, save_npy)
from darray.io import _atomic
from darray.io.zarr_io import chunk_plan
from darray.testing import agree, assert_equal, assert_raises_everywhere

from _cases import P, Case, case, dtypes, generator, layouts, values

pytest.importorskip("zarr")
pytest.importorskip("h5py")

pytestmark = [pytest.mark.mpi, pytest.mark.usefixtures("small_auto_threshold")]

FORMATS = {
    "zarr": (save, load, "x.zarr"),
    "npy": (save_npy, load_npy, "x.npy"),
    "hdf5": (save_hdf5, load_hdf5, "x.h5"),
}


def sample(shape, dtype, seed=0) -> np.ndarray:
    """``_cases.values``, but integers drawn over their dtype's whole range (every stored byte matters)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        return values(shape, dtype, seed)
    info = np.iinfo(dtype)
    return generator(seed, len(shape), dtype.name).integers(info.min, info.max, size=shape, dtype=dtype,
                                                            endpoint=True)


def io_layouts(shape) -> list[Case]:
    """Replicated, ``split="auto"``, balanced, rank 0 empty, columns, and at 4 ranks a 2x2 grid of uneven blocks
    whose boundaries share zarr chunks (rows ``n - 2, 2``, columns ``1, m - 1``)."""
    out = [*layouts(shape, "replicated"), case("auto", shape, split="auto")]
    if len(shape) >= 1:
        out += layouts(shape, "split0", "first-empty0")
    if len(shape) >= 2:
        out += layouts(shape, "split1")
        if P == 4:
            a, b = min(2, shape[0]), min(1, shape[1])
            out.append(case("grid2x2-shared-chunks", shape, "grid", "uneven", split=(0, 1), grid=(2, 2),
                            sizes={0: (shape[0] - a, a), 1: (b, shape[1] - b)}))
    return out


def over(*shapes) -> list:
    """``layout`` parameters over :func:`io_layouts` of ``shapes``, ids ``{shape}-{layout}``."""
    return [pytest.param(c, id=f"{'x'.join(map(str, shape)) or 'scalar'}-{c}") for shape in shapes
            for c in io_layouts(shape)]


def reference_read(fmt: str, path) -> np.ndarray:
    """The stored array read by the format's own library (one process)."""
    if fmt == "npy":
        return np.load(path, allow_pickle=False)
    if fmt == "zarr":
        import zarr

        return zarr.open_array(str(path), mode="r")[...]
    import h5py

    with h5py.File(path, "r") as f:
        return f["data"][()]


# ------------------------------------------------------------------ round trips
#: The dtypes :func:`test_round_trip_every_dtype` stores: every one in-process and at 2 ranks; at 3 and 4 ranks the
#: first of each item size. Where each rank's bytes go depends on the layout and the item size only; how a format
#: spells a dtype (npy header, zarr and HDF5 types) does not depend on the rank count.
ROUND_TRIP_DTYPES = dtypes() if P <= 2 else list({np.dtype(d).itemsize: d for d in reversed(dtypes())}.values())


@pytest.mark.parametrize("layout", io_layouts((13, 6)), ids=str)
@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_every_dtype(fmt, layout, comm, shared):
    save_fn, load_fn, name = FORMATS[fmt]
    path = shared / name
    for dtype in ROUND_TRIP_DTYPES:
        ref = sample(layout.shape, dtype)
        x = layout.array(ref)
        save_fn(path, x)
        y = load_fn(path, **layout.kw)
        assert y.dtype == ref.dtype and y.shape == ref.shape, dtype
        assert_equal(y, ref, err_msg=dtype)
        assert y.layout == x.layout, dtype
        stored = reference_read(fmt, path)
        assert_equal(da.asarray(stored, split=None), ref, err_msg=dtype)  # a normal file of its format


@pytest.mark.parametrize("write", over((), (0,), (13,), (0, 4), (7, 5), (5, 4, 3)))
@pytest.mark.parametrize("fmt", FORMATS)
def test_cross_layout_reads(fmt, write, comm, shared):
    """Write with one layout, read with the next three in rotation (and on one process as the reference)."""
    save_fn, load_fn, name = FORMATS[fmt]
    shape = write.shape
    ref = sample(shape, "float64", seed=len(shape))
    path = shared / name
    specs = io_layouts(shape)
    i = [c.id for c in specs].index(write.id)
    save_fn(path, write.array(ref))
    for read in [specs[(i + k) % len(specs)] for k in range(1, min(4, len(specs)))]:
        assert_equal(load_fn(path, **read.kw), ref, err_msg=f"read {read}")
    alone = load_fn(path, comm=SelfCommunicator())  # every rank reads the whole file by itself
    same = alone.shape == ref.shape and np.array_equal(alone.local, ref)
    assert not agree(comm, same), "single-process read differs"


@pytest.mark.parametrize("fmt", FORMATS)
def test_halo_and_boundary_on_load(fmt, comm, shared):
    save_fn, load_fn, name = FORMATS[fmt]
    ref = sample((13, 4), "float32")
    path = shared / name
    save_fn(path, da.asarray(ref, split=0))
    y = load_fn(path, split=0, halo=(1, 0), boundary="periodic")
    assert y.halo == (1, 0) and y.layout.boundary[0] == "periodic"
    assert_equal(y, ref)


def test_zarr_chunk_plan_aligned_to_blocks():
    even = da.Layout.create("t", (12, 5), 3, split=0)
    assert chunk_plan(even) == ((4, 5), True)  # the chunk is the block
    uneven = da.Layout.create("t", (12, 5), 3, split=0, sizes=[4, 2, 6])
    assert chunk_plan(uneven) == ((2, 5), True)  # gcd of the boundaries 4, 6
    grid = da.Layout.create("t", (12, 10), 4, split=(0, 1), grid=(2, 2), sizes={0: (6, 6), 1: (4, 6)})
    assert chunk_plan(grid) == ((6, 4), True)  # one interior boundary per axis: 6 and 4
    drifting = da.Layout.create("t", (1000,), 3, split=0)  # 334, 333, 333: gcd 1
    assert chunk_plan(drifting) == ((334,), False)  # largest block, shared chunks written in rounds
    assert chunk_plan(da.Layout.create("t", (7, 3), 3, split=None)) == ((7, 3), True)


def test_zarr_chunk_plan_caps_chunk_bytes(monkeypatch):
    """Big blocks are cut into several chunks that still tile every block (axis 0 first)."""
    import darray.io.zarr_io as zarr_io

    one = da.Layout.create("t", (65536, 2048), 1, split=0)
    assert chunk_plan(one, 8) == ((1024, 2048), True)  # 16 MiB chunks, not one 1 GiB chunk
    two = da.Layout.create("t", (65536, 2048), 2, split=0)
    assert chunk_plan(two, 8) == ((1024, 2048), True)
    cols = da.Layout.create("t", (8, 3 * 2 ** 21), 3, split=1)  # 2**21-column blocks: a divisor of the block
    chunks, aligned = chunk_plan(cols, 8)
    assert aligned and chunks[0] == 1 and 2 ** 21 % chunks[1] == 0 and chunks[1] * 8 <= zarr_io.MAX_CHUNK_BYTES
    small = da.Layout.create("t", (12, 5), 3, split=0)
    assert chunk_plan(small, 8) == chunk_plan(small) == ((4, 5), True)  # small chunks stay as they are
    monkeypatch.setattr(zarr_io, "MAX_CHUNK_BYTES", 80)
    assert chunk_plan(small, 8) == ((2, 5), True)  # 4-row blocks cut into 2 x 2 rows: whole chunks per block
    monkeypatch.setattr(zarr_io, "MAX_CHUNK_BYTES", 16)
    assert chunk_plan(small, 8) == ((1, 2), True)  # then the free axis


@pytest.mark.parametrize("write", io_layouts((13, 6)), ids=str)
def test_zarr_several_chunks_per_block(write, comm, shared, monkeypatch):
    """Tiny chunk cap: every layout writes several chunks per block; every layout reads it back."""
    import zarr

    import darray.io.zarr_io as zarr_io

    monkeypatch.setattr(zarr_io, "MAX_CHUNK_BYTES", 64)
    ref = sample(write.shape, "float64", seed=9)
    path = shared / "c.zarr"
    x = write.array(ref)
    save(path, x)
    stored = zarr.open_array(str(path), mode="r")
    assert math.prod(stored.chunks) * 8 <= 64 or not chunk_plan(x.layout)[1]
    for read in io_layouts(ref.shape):
        assert_equal(load(path, **read.kw), ref, err_msg=f"read {read}")


def test_zarr_uneven_blocks_sharing_chunks(comm, shared):
    """Blocks whose boundaries share no common chunk length: shared chunks are written in rounds."""
    sizes = {1: [13], 2: [1, 12], 3: [5, 7, 6], 4: [5, 7, 6, 9]}[comm.size]
    ref = sample((sum(sizes), 3), "int32")
    x = da.asarray(ref, split=0, sizes=sizes)
    if comm.size > 1:
        assert not chunk_plan(x.layout)[1]
    save(shared / "u.zarr", x)
    assert_equal(load(shared / "u.zarr", split=0), ref)
    assert_equal(load(shared / "u.zarr", split=1), ref)
    if comm.size == 4:
        y = da.asarray(sample((11, 13), "float64"), split=(0, 1), grid=(2, 2), sizes={0: (1, 10), 1: (7, 6)})
        save(shared / "g.zarr", y)
        assert_equal(load(shared / "g.zarr", split=0), sample((11, 13), "float64"))


@pytest.mark.parametrize("layout", io_layouts((9, 7)), ids=str)
def test_npy_reads_foreign_files(layout, comm, shared):
    """Any .npy loads: Fortran order, big-endian, no sidecar."""
    ref = sample(layout.shape, "float64")
    path = shared / "f.npy"
    if comm.rank == 0:
        np.save(path, np.asfortranarray(ref))
        np.save(shared / "b.npy", ref.astype(">i4"))
    comm.barrier()
    assert_equal(load_npy(path, **layout.kw), ref)
    assert_equal(load_npy(shared / "b.npy", **layout.kw), ref.astype("<i4"))


def test_npy_sidecar_written_and_removed(comm, shared):
    path = shared / "s.npy"
    save_npy(path, da.arange(10.0, split=0))
    assert not agree(comm, os.path.exists(str(path) + ".sha256"))
    save_npy(path, da.arange(10.0, split=0), checksum=False)  # no stale sidecar survives
    assert not agree(comm, not os.path.exists(str(path) + ".sha256"))
    assert_equal(load_npy(path, split=0), np.arange(10.0))
    assert_raises_everywhere(ValueError, load_npy, path, verify=True)


# ------------------------------------------------------------------ errors on every rank
@pytest.mark.parametrize("fmt", FORMATS)
def test_missing_file(fmt, comm, shared):
    _, load_fn, _ = FORMATS[fmt]
    text = assert_raises_everywhere(FileNotFoundError, load_fn, shared / "nothing-here")
    assert "nothing-here" in text


@pytest.mark.parametrize("fmt", FORMATS)
def test_save_into_missing_directory(fmt, comm, shared):
    save_fn, _, name = FORMATS[fmt]
    assert_raises_everywhere(FileNotFoundError, save_fn, shared / "no" / "such" / name, da.arange(5, split=0))


def test_npy_refuses_object_arrays(comm, shared):
    path = shared / "o.npy"
    if comm.rank == 0:
        np.save(path, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    comm.barrier()
    text = assert_raises_everywhere(TypeError, load_npy, path)
    assert "object" in text


def test_npy_not_a_npy_file(comm, shared):
    path = shared / "garbage.npy"
    if comm.rank == 0:
        path.write_bytes(b"this is not numpy" * 10)
    comm.barrier()
    assert_raises_everywhere(CorruptFileError, load_npy, path)


def test_hdf5_missing_dataset(comm, shared):
    save_hdf5(shared / "d.h5", da.arange(6, split=0), "u")
    text = assert_raises_everywhere(ValueError, load_hdf5, shared / "d.h5", "v")
    assert "'u'" in text


def _chunk_files(store: Path) -> list[Path]:
    return sorted(p for p in store.rglob("*") if p.is_file() and p.name != "zarr.json")


def _data_offset(fmt: str, path: Path) -> int:
    if fmt == "npy":
        with open(path, "rb") as f:
            np.lib.format.read_magic(f)
            np.lib.format.read_array_header_1_0(f)
            return f.tell()
    import h5py

    with h5py.File(path, "r") as f:
        return f["data"].id.get_offset()


@pytest.mark.parametrize("fmt", FORMATS)
def test_truncated_file(fmt, comm, shared):
    save_fn, load_fn, name = FORMATS[fmt]
    path = shared / name
    ref = sample((40, 5), "float64")
    save_fn(path, da.asarray(ref, split=0))
    if comm.rank == 0:
        target = _chunk_files(path)[0] if fmt == "zarr" else path
        size = target.stat().st_size
        os.truncate(target, size // 2)
    comm.barrier()
    for spec in (dict(split=0), dict(split=None)):
        assert_raises_everywhere(CorruptFileError, load_fn, path, **spec)
    if fmt == "zarr":  # damaged metadata too
        if comm.rank == 0:
            (path / "zarr.json").write_text("{ not json")
        comm.barrier()
        assert_raises_everywhere(CorruptFileError, load, path)


@pytest.mark.parametrize("fmt", FORMATS)
def test_bit_flip_is_a_checksum_error(fmt, comm, shared):
    save_fn, load_fn, name = FORMATS[fmt]
    path = shared / name
    ref = sample((40, 5), "float64")
    if fmt == "zarr":
        save(path, da.asarray(ref, split=0), compressors=None)  # raw chunks: the flip reaches the data
    else:
        save_fn(path, da.asarray(ref, split=0))
    if comm.rank == 0:
        target = _chunk_files(path)[-1] if fmt == "zarr" else path
        offset = 0 if fmt == "zarr" else _data_offset(fmt, path)
        with open(target, "r+b") as f:
            f.seek(offset + 17)
            byte = f.read(1)
            f.seek(offset + 17)
            f.write(bytes([byte[0] ^ 0x10]))
    comm.barrier()
    for spec in (dict(split=0), dict(split=1), dict(split=None)):  # same and other layouts
        text = assert_raises_everywhere(ChecksumError, load_fn, path, **spec)
        assert "checksum" in text
    y = load_fn(path, split=0, verify=False)  # explicitly unchecked: loads
    assert y.shape == ref.shape


def test_checksum_of_other_layout_verified_only_when_small(comm, shared, monkeypatch):
    """verify="auto" skips re-reading blocks no rank holds whole above VERIFY_MAX_BYTES; verify=True does not."""
    import darray.io._common as common

    path = shared / "v.npy"
    ref = sample((40, 5), "float64")
    save_npy(path, da.asarray(ref, split=0))
    if comm.rank == 0:
        off = _data_offset("npy", path)
        with open(path, "r+b") as f:
            f.seek(off + 3)
            f.write(b"\xff")
    comm.barrier()
    monkeypatch.setattr(common, "VERIFY_MAX_BYTES", 0)
    if comm.size > 1:  # split=1 holds no saved row-block whole: nothing cheap to verify
        assert load_npy(path, split=1).shape == ref.shape
    assert_raises_everywhere(ChecksumError, load_npy, path, split=1, verify=True)
    assert_raises_everywhere(ChecksumError, load_npy, path, split=0)


# ------------------------------------------------------------------ atomicity
class SimulatedCrash(RuntimeError):
    pass


@pytest.mark.parametrize("fmt", FORMATS)
def test_crash_before_rename_keeps_previous_file(fmt, comm, shared, monkeypatch):
    save_fn, load_fn, name = FORMATS[fmt]
    path = shared / name
    old = sample((13, 4), "int64", seed=1)
    new = sample((13, 4), "int64", seed=2)
    save_fn(path, da.asarray(old, split=0))

    def crash(tmps, finals):
        assert all(os.path.exists(t) for t in tmps[:1])  # the new data is fully written...
        raise SimulatedCrash("killed between writing the temporary and the rename")

    monkeypatch.setattr(_atomic, "_before_commit", crash)
    assert_raises_everywhere(SimulatedCrash, save_fn, path, da.asarray(new, split=1 if comm.size > 1 else 0))
    monkeypatch.setattr(_atomic, "_before_commit", None)
    assert_equal(load_fn(path, split=0), old)  # ...but the previous file is what loads
    leftovers = [p for p in os.listdir(shared) if ".tmp-" in p]
    assert not agree(comm, len(leftovers) >= 1)
    save_fn(path, da.asarray(new, split=0))  # a later save still works
    assert_equal(load_fn(path, split=1), new)


@pytest.mark.parametrize("fmt", FORMATS)
def test_failed_write_cleans_up_and_keeps_previous(fmt, comm, shared, monkeypatch):
    """A write failing on ONE rank raises on every rank, removes the temporary, keeps the old file."""
    save_fn, load_fn, name = FORMATS[fmt]
    path = shared / name
    old = sample((13, 4), "float32", seed=3)
    save_fn(path, da.asarray(old, split=0))
    def disk_full(*args, **kwargs):
        raise OSError("disk full (simulated)")

    if comm.rank == comm.size - 1:  # the last rank's block write fails
        import h5py
        import zarr

        target = {"npy": "darray.io.npy_io._pwrite_all", "zarr": zarr.Array, "hdf5": h5py.Dataset}[fmt]
        if isinstance(target, str):
            monkeypatch.setattr(target, disk_full)
        else:
            monkeypatch.setattr(target, "__setitem__", disk_full)
    text = assert_raises_everywhere(OSError, save_fn, path, da.asarray(old * 2, split=0))
    assert "disk full" in text
    monkeypatch.undo()
    comm.barrier()
    assert_equal(load_fn(path, split=0), old)
    assert not agree(comm, not any(".tmp-" in p for p in os.listdir(shared)))


def test_overwrite_replaces_store_and_file_kinds(comm, shared):
    path = shared / "kind"
    save(path, da.arange(6, split=0))
    save_npy(path, da.arange(7, split=0))  # a file over a directory
    assert_equal(load_npy(path), np.arange(7))
    save(path, da.arange(8, split=0))  # and back
    assert_equal(load(path), np.arange(8))
    assert not agree(comm, not any(".old-" in p for p in os.listdir(shared)))
