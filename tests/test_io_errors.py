"""Errors that point the right way (#17 items 11-12): darray.io.save/load choose the format from the path or the
file, a deleted zarr chunk is reported as missing, a .npy without checksums warns, a garbage .npy header is a
CorruptFileError; from_local, nn layer constructors and full_like name the real problem.

Every rank uses the same directory (rank 0's ``tmp_path``, broadcast); files are prepared on rank 0; errors are
expected on EVERY rank with one message (``assert_raises_everywhere``).
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import darray as da
from darray.io import (ChecksumError, CorruptFileError, MissingChecksumWarning, MissingChunkError, load, load_npy,
                       save, save_hdf5, save_npy)
from darray.io import zarr_io
from darray.testing import assert_equal, assert_raises_everywhere

from _cases import COMM, layouts
from _io_helpers import everywhere, on_rank0

pytest.importorskip("zarr")
pytest.importorskip("h5py")

pytestmark = [pytest.mark.mpi, pytest.mark.usefixtures("small_auto_threshold")]


def over(shape) -> list:
    """The layouts a file is read back in: replicated, balanced rows, columns, rows with rank 0 empty, a 2x2 grid."""
    return layouts(shape, "replicated", "split0", "split1", "first-empty0", "grid2x2")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> Path:
    """One directory every rank sees for the module's prepared files (made on rank 0, its name broadcast), so that a
    file is written and damaged once and then read back in every layout, one test per layout."""
    name = np.zeros(4096, dtype=np.uint8)
    if COMM.rank == 0:
        text = str(tmp_path_factory.mktemp("prepared")).encode()
        name[:len(text)] = np.frombuffer(text, dtype=np.uint8)
    path = Path(bytes(np.asarray(COMM.bcast(name, 0))).rstrip(b"\0").decode())
    COMM.barrier()
    return path


def sample(shape=(13, 7), dtype="float64") -> np.ndarray:
    return (np.arange(np.prod(shape)).reshape(shape) * 1.5 + 1).astype(dtype)


def quiet(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` and the MissingChecksumWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    return out, [w for w in caught if issubclass(w.category, MissingChecksumWarning)]


# ------------------------------------------------------------------ the format from the path or the file
@pytest.mark.parametrize("layout", over(sample().shape), ids=str)
@pytest.mark.parametrize("dtype", ["float64", "int32", "complex64"])
def test_save_chooses_the_format_from_the_extension(dtype, layout, comm, shared):
    ref = sample(dtype=dtype)
    x = layout.array(ref)
    save(shared / "a.npy", x)
    save(shared / "a.h5", x)
    save(shared / "a.hdf5", x, dataset="run/u")
    save(shared / "a.zarr", x)
    save(shared / "a", x)  # no extension: a zarr store
    ok = True
    if comm.rank == 0:
        import h5py
        import zarr

        ok &= (shared / "a.npy").is_file() and np.array_equal(np.load(shared / "a.npy"), ref)
        with h5py.File(shared / "a.h5", "r") as f:
            ok &= np.array_equal(f["data"][...], ref)
        with h5py.File(shared / "a.hdf5", "r") as f:
            ok &= np.array_equal(f["run/u"][...], ref)
        for name in ("a.zarr", "a"):
            ok &= (shared / name).is_dir() and np.array_equal(zarr.open_array(shared / name, mode="r")[...], ref)
    everywhere(comm, ok, f"save wrote the format the extension names ({layout})")
    for name in ("a.npy", "a.h5", "a.zarr", "a"):
        assert_equal(load(shared / name, **layout.kw), ref, err_msg=name)
    assert_equal(load(shared / "a.hdf5", dataset="run/u", split=0), ref)


@pytest.fixture(scope="module")
def misnamed(prepared) -> Path:
    """A .npy under another name (field.dat), an HDF5 file named field.bin, a zarr store named legacy.npy."""
    ref = sample()
    save_npy(prepared / "f.npy", da.asarray(ref, split=0))
    save_hdf5(prepared / "f.h5", da.asarray(ref, split=0))
    zarr_io.save(prepared / "legacy.npy", da.asarray(ref, split=0))  # what darray.io.save("legacy.npy") used to write

    def rename():
        os.replace(prepared / "f.npy", prepared / "field.dat")
        os.replace(prepared / "f.npy.sha256", prepared / "field.dat.sha256")
        os.replace(prepared / "f.h5", prepared / "field.bin")

    on_rank0(COMM, rename)
    return prepared


@pytest.mark.parametrize("layout", over(sample().shape), ids=str)
def test_load_looks_at_the_file(layout, comm, misnamed):
    """What is there decides, not the name: a .npy under another name, a zarr store named .npy, an HDF5 file."""
    ref = sample()
    for name in ("field.dat", "field.bin", "legacy.npy"):
        y, warned = quiet(load, misnamed / name, verify=True, **layout.kw)
        assert_equal(y, ref, err_msg=name)
        everywhere(comm, not warned, f"{name}: no warning, the checksums are there")


@pytest.fixture(scope="module")
def numpy_file(prepared) -> Path:
    """field.npy as numpy.save wrote it (no checksums)."""
    on_rank0(COMM, np.save, prepared / "field.npy", sample((7, 5), "int64"))
    return prepared / "field.npy"


@pytest.mark.parametrize("layout", over((7, 5)), ids=str)
def test_load_of_a_numpy_file(layout, comm, numpy_file):
    """io.load("field.npy") of a file numpy.save wrote: it loads (with a warning that nothing can be verified)."""
    ref = sample((7, 5), "int64")
    y, warned = quiet(load, numpy_file, **layout.kw)
    assert_equal(y, ref)
    everywhere(comm, len(warned) == 1 and "without checksums" in str(warned[0].message), f"warned: {warned}")
    y, warned = quiet(load, numpy_file, verify=False, **layout.kw)
    assert_equal(y, ref)
    everywhere(comm, not warned, f"verify=False: no warning, got {warned}")
    y, warned = quiet(da.load, str(numpy_file), **layout.kw)  # NumPy's np.load: never warns
    assert_equal(y, ref)
    everywhere(comm, not warned, f"darray.load: no warning, got {warned}")


@pytest.mark.parametrize("case", ["npz save", "npz load", "text file", "dataset for zarr", "dataset for npy",
                                  "compressors for npy", "missing npy", "missing h5"])
def test_refusals_name_the_right_function(case, comm, shared):
    x = da.arange(13.0, split=0)
    on_rank0(comm, lambda: (shared / "t.txt").write_text("1 2 3\n4 5 6\n"))
    kind, call, args, kwargs, fragments = {
        "npz save": (ValueError, save, (shared / "x.npz", x), {}, [".npz archives", "save_npy"]),
        "npz load": (ValueError, load, (shared / "x.npz",), {}, [".npz archives"]),
        "text file": (ValueError, load, (shared / "t.txt",), {}, ["not a file format", "loadtxt", "t.txt"]),
        "dataset for zarr": (ValueError, save, (shared / "x.zarr", x), {"dataset": "u"}, ["dataset", "HDF5"]),
        "dataset for npy": (ValueError, save, (shared / "x.npy", x), {"dataset": "u"}, ["dataset", "HDF5"]),
        "compressors for npy": (ValueError, save, (shared / "x.npy", x), {"compressors": None}, ["zarr"]),
        "missing npy": (FileNotFoundError, load, (shared / "none.npy",), {}, ["no such file", "none.npy"]),
        "missing h5": (FileNotFoundError, load, (shared / "none.h5",), {}, ["no such file", "HDF5"]),
    }[case]
    text = assert_raises_everywhere(kind, call, *args, **kwargs)
    func = "save" if call is save else "load"
    assert text.startswith(f"{func}: ") and all(f in text for f in fragments), text
    everywhere(comm, not any(p.name.startswith("x.") for p in Path(shared).iterdir()), "nothing was written")


# ------------------------------------------------------------------ damage named for what it is
def _chunks(store: Path) -> list[Path]:
    return sorted(p for p in store.rglob("*") if p.is_file() and p.name != "zarr.json")


@pytest.fixture(scope="module", params=["float64", "int16"])
def missing_chunk(request, prepared) -> tuple[Path, Path, np.ndarray]:
    """A zarr store of dtype ``request.param`` whose last chunk was deleted: (store, the deleted chunk, the data)."""
    ref = sample((40, 5), request.param)
    path = prepared / f"x-{request.param}.zarr"
    save(path, da.asarray(ref, split=0))
    victim = _chunks(path)[-1]  # every rank sees the store
    COMM.barrier()
    on_rank0(COMM, victim.unlink)
    return path, victim, ref


@pytest.mark.parametrize("layout", over((40, 5)), ids=str)
def test_deleted_zarr_chunk_is_a_missing_chunk(layout, missing_chunk):
    path, victim, ref = missing_chunk
    text = assert_raises_everywhere(MissingChunkError, load, path, **layout.kw)
    assert text.startswith("load: missing chunk") and "checksum mismatch" not in text, text
    assert repr(victim.relative_to(path).as_posix()) in text, (victim, text)
    assert load(path, verify=False, **layout.kw).shape == ref.shape  # explicitly unchecked: the fill value


def half_zeros() -> np.ndarray:
    ref = sample((40, 5))
    ref[:20] = 0
    return ref


def skipped_chunks(path: Path) -> Path:
    """A store of :func:`half_zeros` without save's every-chunk promise: its chunks of zeros are absent, as zarr's
    default (and darray's stores before) skips chunks of only the fill value."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(zarr_io, "MAX_CHUNK_BYTES", 80)  # chunks of 2 rows: 10 of the 20 hold only zeros
        save(path, da.asarray(half_zeros(), split=None), compressors=None)
    everywhere(COMM, len(_chunks(path)) == 20, f"save wrote every chunk: {_chunks(path)}")

    def forget_the_promise():
        meta = json.loads((path / "zarr.json").read_text())
        del meta["attributes"]["darray"][zarr_io.EVERY_CHUNK]
        (path / "zarr.json").write_text(json.dumps(meta))
        for chunk in _chunks(path):
            if not np.frombuffer(chunk.read_bytes(), dtype="<f8").any():
                chunk.unlink()

    on_rank0(COMM, forget_the_promise)
    everywhere(COMM, len(_chunks(path)) == 10, f"the zero chunks are gone: {_chunks(path)}")
    return path


@pytest.fixture(scope="module")
def sparse_store(prepared) -> Path:
    """:func:`skipped_chunks`, undamaged."""
    return skipped_chunks(prepared / "z.zarr")


@pytest.fixture(scope="module")
def flipped_store(prepared) -> Path:
    """:func:`skipped_chunks` with one bit of its last chunk flipped."""
    path = skipped_chunks(prepared / "flipped.zarr")

    def flip():
        chunk = _chunks(path)[-1]
        data = bytearray(chunk.read_bytes())
        data[3] ^= 0x10
        chunk.write_bytes(bytes(data))

    on_rank0(COMM, flip)
    return path


@pytest.mark.parametrize("layout", over((40, 5)), ids=str)
def test_skipped_chunks_are_not_missing(layout, sparse_store):
    """save writes every chunk; a store without that promise loads with its absent chunks as the fill value."""
    assert_equal(load(sparse_store, verify=True, **layout.kw), half_zeros())


@pytest.mark.parametrize("layout", over((40, 5)), ids=str)
def test_bit_flip_stays_a_checksum_error(layout, flipped_store):
    """A damaged chunk of a store with absent chunks stays a checksum mismatch (not a missing chunk)."""
    text = assert_raises_everywhere(ChecksumError, load, flipped_store, **layout.kw)
    assert "checksum mismatch" in text and "missing chunk" not in text, text


@pytest.fixture(scope="module")
def no_sidecar(prepared) -> Path:
    """s.npy saved by darray, its checksum sidecar s.npy.sha256 removed."""
    path = prepared / "s.npy"
    save_npy(path, da.asarray(sample(), split=0))
    on_rank0(COMM, os.remove, str(path) + ".sha256")
    return path


@pytest.mark.parametrize("layout", over(sample().shape), ids=str)
def test_npy_without_its_sidecar_warns(layout, comm, no_sidecar):
    y, warned = quiet(load_npy, no_sidecar, **layout.kw)
    assert_equal(y, sample())
    everywhere(comm, len(warned) == 1, f"one MissingChecksumWarning on every rank, got {warned}")
    text = str(warned[0].message)
    everywhere(comm, text.startswith("load_npy: loading without checksums") and "s.npy.sha256" in text, text)
    y, warned = quiet(load_npy, no_sidecar, verify=False, **layout.kw)
    everywhere(comm, not warned, f"verify=False is silent, got {warned}")


def test_npy_without_its_sidecar_refuses_verify(no_sidecar):
    text = assert_raises_everywhere(ValueError, load_npy, no_sidecar, verify=True)
    assert "verify=True needs checksums" in text, text
    text = assert_raises_everywhere(ValueError, load, no_sidecar, verify=True)
    assert text.startswith("load: verify=True needs checksums"), text


def _npy(path: Path, header: bytes) -> None:
    pad = (64 - (10 + len(header) + 1) % 64) % 64
    body = header + b" " * pad + b"\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(body).to_bytes(2, "little") + body + b"\0" * 64)


GARBAGE_HEADERS = {
    "unterminated dict": (b"{'descr': '<f8', 'fortran_order': False, 'shape': (", "TokenError"),
    "not a literal": (b"garbage", "malformed node"),
    "wrong keys": (b"{'descr': '<f8'}", "correct keys"),
    "not a dict": (b"[1, 2, 3]", "not a dict"),
    "binary": (b"\xff\xfe\x00\x01", ""),
}


@pytest.mark.parametrize("case", GARBAGE_HEADERS)
@pytest.mark.parametrize("via", ["load_npy", "load"])
def test_garbage_npy_header_is_a_corrupt_file_error(case, via, comm, shared):
    header, fragment = GARBAGE_HEADERS[case]
    path = shared / "g.npy"
    on_rank0(comm, _npy, path, header)
    text = assert_raises_everywhere(CorruptFileError, load_npy if via == "load_npy" else load, path, split=0)
    assert text.startswith(f"{via}: not a readable .npy file") and str(path) in text and fragment in text, text
    assert " at 0x" not in text, text  # no object addresses: the same text on every rank


# ------------------------------------------------------------------ messages that name the real problem
@pytest.mark.parametrize("other", ["float64", "int32", "complex128"])
def test_from_local_names_the_dtype_of_each_rank(other, comm):
    if comm.size == 1:
        pytest.skip("blocks of different dtypes need 2 ranks")
    block = np.zeros(3, dtype="int64" if comm.rank == 0 else other)
    text = assert_raises_everywhere(ValueError, da.from_local, block, split=0)
    want = ", ".join(f"rank {r}: {'int64' if r == 0 else other} (1-d)" for r in range(comm.size))
    assert text == f"from_local: blocks differ in ndim or dtype across ranks; got {want}, expected the same ndim " \
                   f"and dtype on every rank", text


def test_from_local_names_the_ndim_of_each_rank(comm):
    if comm.size == 1:
        pytest.skip("blocks of different ndim need 2 ranks")
    block = np.zeros((2, 2) if comm.rank == comm.size - 1 else (4,))
    text = assert_raises_everywhere(ValueError, da.from_local, block, split=0)
    assert f"rank {comm.size - 1}: float64 (2-d)" in text and "rank 0: float64 (1-d)" in text, text


NN_BAD = [
    ("Conv2d", (1, 1, -3), {}, ValueError, "Conv2d: kernel_size must be positive; got -3"),
    ("Conv1d", (0, 4, 3), {}, ValueError, "Conv1d: in_channels must be positive; got 0"),
    ("Conv3d", (2, -1, 3), {}, ValueError, "Conv3d: out_channels must be positive; got -1"),
    ("Conv2d", (1, 1, 3), {"stride": 0}, ValueError, "Conv2d: stride must be positive; got 0"),
    ("Conv2d", (1, 1, 3), {"stride": (1, -2)}, ValueError, "Conv2d: stride must be positive; got (1, -2)"),
    ("Conv2d", (1, 1, 3), {"padding": -1}, ValueError, "Conv2d: padding must be non-negative; got -1"),
    ("Conv2d", (1, 1, 3), {"dilation": 0}, ValueError, "Conv2d: dilation must be positive; got 0"),
    ("Conv2d", (2, 2, 3), {"groups": 0}, ValueError, "Conv2d: groups must be positive; got 0"),
    ("Conv1d", (1, 1, (3, 3)), {}, ValueError, "Conv1d: kernel_size has the wrong length; got (3, 3)"),
    ("Conv2d", (1, 1, 2.5), {}, TypeError, "Conv2d: kernel_size must be an int or a tuple of ints; got 2.5"),
    ("Conv2d", (1.0, 1, 3), {}, TypeError, "Conv2d: in_channels must be an int; got 1.0"),
    ("ConvTranspose2d", (1, 1, -2), {}, ValueError, "ConvTranspose2d: kernel_size must be positive; got -2"),
    ("ConvTranspose1d", (1, 1, 2), {"stride": 2, "output_padding": -1}, ValueError,
     "ConvTranspose1d: output_padding must be non-negative"),
    ("MaxPool2d", (0,), {}, ValueError, "MaxPool2d: kernel_size must be positive; got 0"),
    ("MaxPool1d", (2,), {"padding": -1}, ValueError, "MaxPool1d: padding must be non-negative; got -1"),
    ("AvgPool2d", (2,), {"stride": -1}, ValueError, "AvgPool2d: stride must be positive; got -1"),
    ("AvgPool3d", ((2, 2),), {}, ValueError, "AvgPool3d: kernel_size has the wrong length"),
    ("Linear", (-1, 3), {}, ValueError, "Linear: in_features must be positive; got -1"),
    ("BatchNorm2d", (0,), {}, ValueError, "BatchNorm2d: num_features must be positive; got 0"),
    ("GroupNorm", (0, 4), {}, ValueError, "GroupNorm: num_groups must be positive; got 0"),
]


@pytest.mark.parametrize("layer, args, kwargs, kind, start", NN_BAD,
                         ids=[f"{row[0]}-{i}" for i, row in enumerate(NN_BAD)])
def test_nn_constructors_name_the_layer_and_argument(layer, args, kwargs, kind, start, comm):
    text = assert_raises_everywhere(kind, getattr(da.nn, layer), *args, **kwargs)
    assert text.startswith(start), text


def test_nn_constructors_still_take_what_torch_takes():
    nn = da.nn
    assert nn.Conv2d(1, 2, (3, 1), stride=(2, 1), padding=(1, 0), dilation=1).kernel_size == (3, 1)
    assert nn.Conv1d(2, 4, np.int64(3), groups=2, padding="valid").padding == "valid"
    assert nn.MaxPool2d(2).kernel_size == 2 and nn.AvgPool1d(3, stride=None).stride is None
    assert nn.Linear(2, 3).in_features == 2 and nn.GroupNorm(2, 4).num_groups == 2


@pytest.mark.parametrize("dtype", ["float64", "int8", "int64", "bool"])
def test_full_like_names_itself_and_the_fill_value(dtype, comm):
    m = da.zeros((7, 3), dtype=dtype, split=0)
    for bad in ("abc", None, [1, 2], {"a": 1}):
        text = assert_raises_everywhere(TypeError, da.full_like, m, bad)
        assert text.startswith(f"full_like: fill_value must be a scalar; got {bad!r}"), text
    if dtype == "int8":
        text = assert_raises_everywhere(OverflowError, da.full_like, m, 1000)
        assert text.startswith("full_like: fill_value does not fit the dtype; got 1000"), text
    value = np.ones((), dtype=dtype)[()]
    assert_equal(da.full_like(m, value), np.full_like(np.zeros((7, 3), dtype=dtype), value))
    assert_equal(da.full_like(m, da.asarray(value)), np.full_like(np.zeros((7, 3), dtype=dtype), value))
