"""darray.io data safety (issue #8): hostile paths, keys, links and metadata never write or read outside the target.

- save targets: names that name nothing new, directories that are not zarr array stores, different paths on
  different ranks, pre-planted symlinks at the staging names, a target that is itself a symlink;
- zarr keys: absolute, ``..``, empty segments, symlinked chunks or metadata leading out of the store;
- HDF5: dataset names, external links, external raw storage, virtual datasets;
- hostile metadata (zarr.json / .zarray / .npy headers): negative, huge, zero-sized, too many dimensions,
  object / string / record dtypes, object codecs (pickle): the same clear error on every rank;
- no loading path unpickles anything (pickle is trapped while every loader runs);
- checkpoints (darray.optim.save_checkpoint / load_checkpoint): the same staging, no pickle.

Errors are expected on EVERY rank with the same message (``assert_raises_everywhere``).
"""

from __future__ import annotations

import itertools
import json
import os
import pickle
import tempfile
from pathlib import Path

import numpy as np
import pytest

import darray as da
from darray.io import CorruptFileError, load, load_hdf5, load_npy, save, save_hdf5, save_npy
from darray.io import _atomic
from darray.io import _common as common
from darray.io.zarr_io import confined_store
from darray.testing import assert_equal, assert_raises_everywhere

from _io_helpers import FORMATS, everywhere, on_rank0

zarr = pytest.importorskip("zarr")
h5py = pytest.importorskip("h5py")

mpi = pytest.mark.mpi
pytestmark = pytest.mark.usefixtures("small_auto_threshold")


def snapshot(directory: Path) -> dict:
    """Every path under ``directory`` (links not followed) with its bytes or link target."""
    out = {}
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            p = Path(root) / name
            if p.is_symlink():
                out[str(p)] = ("link", os.readlink(p))
            elif p.is_file():
                out[str(p)] = ("file", p.read_bytes())
            else:
                out[str(p)] = ("dir", None)
    return out


def sample(shape=(13, 4), seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


# ------------------------------------------------------------------ save targets
@mpi
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("bad", ["", ".", "..", "sub/..", "/", "a\0b", f"sub{os.sep}{os.sep}.."])
def test_targets_that_name_nothing_new_are_refused(fmt, bad, comm, shared):
    save_fn, _, _ = FORMATS[fmt]
    before = snapshot(shared)
    text = assert_raises_everywhere(ValueError, save_fn, bad, da.arange(6.0, split=0))
    assert text.startswith(f"{save_fn.__name__}: invalid target path")
    everywhere(comm, snapshot(shared) == before, "a refused save changed the directory")


@mpi
@pytest.mark.parametrize("fmt", FORMATS)
def test_target_path_type_is_checked(fmt, comm):
    save_fn, _, _ = FORMATS[fmt]
    text = assert_raises_everywhere(TypeError, save_fn, 12, da.arange(6.0, split=0))
    assert "path must be a str or os.PathLike" in text


@mpi
@pytest.mark.parametrize("fmt", FORMATS)
def test_save_never_replaces_a_directory_that_is_not_a_zarr_array(fmt, comm, shared):
    """Saving over an ordinary directory (or a zarr group) would delete it: refused, the directory kept."""
    save_fn, _, _ = FORMATS[fmt]

    def prepare():
        (shared / "notes").mkdir()
        (shared / "notes" / "thesis.tex").write_text("years of work")
        zarr.create_group(store=str(shared / "group.zarr"))
        zarr.create_array(store=str(shared / "group.zarr"), name="a", shape=(3,), dtype="f8")

    on_rank0(comm, prepare)
    before = snapshot(shared)
    for target in ("notes", "group.zarr"):
        text = assert_raises_everywhere(IsADirectoryError, save_fn, shared / target, da.arange(6.0, split=0))
        assert "not a zarr array store" in text and target in text
    everywhere(comm, snapshot(shared) == before, "a refused save changed the directory")
    # the working directory, spelled any way, is never a target
    assert_raises_everywhere(ValueError, save_fn, "./", da.arange(6.0, split=0))


@mpi
def test_every_rank_must_pass_the_same_path(comm, shared):
    if comm.size == 1:
        return
    for save_fn in (save, save_npy, save_hdf5):
        text = assert_raises_everywhere(ValueError, save_fn, shared / f"mine-{comm.rank}", da.arange(6.0, split=0))
        assert "different paths" in text
    everywhere(comm, not any(p.name.startswith("mine-") for p in shared.iterdir()), "something was written")
    # an invalid path on one rank only: still the same error everywhere (nobody is left waiting)
    for bad in ("", 12):
        target = bad if comm.rank == comm.size - 1 else shared / "fine.zarr"
        text = assert_raises_everywhere(ValueError, save, target, da.arange(6.0, split=0))
        assert "different paths" in text


def _planted_names():
    """tempfile candidate names: first one that is pre-planted, then fresh ones."""
    return itertools.chain(["planted"], (f"fresh{i}" for i in itertools.count()))


@mpi
@pytest.mark.parametrize("fmt", FORMATS)
def test_staging_never_follows_a_planted_symlink(fmt, comm, shared, monkeypatch):
    """Symlinks planted at the staging names (and at the old predictable temporary names) are never written through."""
    save_fn, load_fn, name = FORMATS[fmt]
    outside = shared / "outside"
    ref = sample()

    def plant():
        outside.mkdir()
        (outside / "victim.txt").write_text("precious")
        (outside / "victim_dir").mkdir()
        for first in (name, name + ".sha256"):  # the stage is named after the first target
            os.symlink(outside / "victim_dir", shared / f"{first}.tmp-planted")
        os.symlink(outside / "victim.txt", shared / f"{name}.tmp.npz")
        os.symlink(outside / "victim_dir", shared / f"{name}.tmp-0123456789abcdef")

    on_rank0(comm, plant)
    monkeypatch.setattr(tempfile, "_get_candidate_names", _planted_names)
    monkeypatch.setattr(common, "token", lambda comm: "0123456789abcdef")  # as if the old names were guessed
    monkeypatch.setattr(_atomic, "token", common.token, raising=False)
    before = snapshot(outside)
    save_fn(shared / name, da.asarray(ref, split=0))
    save_fn(shared / name, da.asarray(ref * 2, split=0))  # over an existing target too
    everywhere(comm, snapshot(outside) == before, "a save wrote outside its target")
    links = [p for p in shared.iterdir() if p.is_symlink()]
    everywhere(comm, len(links) == 4 and all(os.readlink(p).startswith(str(outside)) for p in links),
               "the planted links were touched")
    assert_equal(load_fn(shared / name, split=0), ref * 2)


@mpi
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_symlinked_target_is_replaced_not_followed(fmt, comm, shared):
    save_fn, load_fn, name = FORMATS[fmt]
    outside = shared / "outside"
    old, new = sample(seed=1), sample(seed=2)
    on_rank0(comm, outside.mkdir)
    save_fn(outside / name, da.asarray(old, split=0))
    on_rank0(comm, os.symlink, outside / name, shared / name)
    before = snapshot(outside)
    save_fn(shared / name, da.asarray(new, split=0))
    everywhere(comm, snapshot(outside) == before, "the save wrote through the symlink")
    everywhere(comm, not (shared / name).is_symlink(), "the link is still there")
    assert_equal(load_fn(shared / name, split=0), new)
    assert_equal(load_fn(outside / name, split=0), old)


@mpi
def test_a_failed_swap_puts_the_previous_store_back(comm, shared, monkeypatch):
    old = sample(seed=3)
    path = shared / "x.zarr"
    save(path, da.asarray(old, split=0))
    replace = os.replace

    def failing(src, dst):
        if os.fspath(dst) == str(path) and ".tmp-" in os.fspath(src) and not os.fspath(src).endswith(".old"):
            raise OSError("rename failed (simulated)")
        return replace(src, dst)

    monkeypatch.setattr(_atomic.os, "replace", failing)
    text = assert_raises_everywhere(OSError, save, path, da.asarray(old * 2, split=0))
    assert "rename failed" in text
    monkeypatch.undo()
    assert_equal(load(path, split=0), old)
    everywhere(comm, not any(".tmp-" in p.name for p in shared.iterdir()), "a stage was left behind")


@mpi
def test_a_swap_killed_midway_loads_the_previous_store(comm, shared):
    """Killed between moving the old store into the stage and the new one into place: load reads the old one."""
    old = sample(seed=4)
    path = shared / "x.zarr"
    save(path, da.asarray(old, split=0))

    def kill_midway():
        stage = Path(tempfile.mkdtemp(prefix="x.zarr.tmp-", dir=shared))
        os.replace(path, stage / "x.zarr.old")
        (stage / "x.zarr").mkdir()  # the new store, never renamed into place

    on_rank0(comm, kill_midway)
    assert_equal(load(path, split=1), old)
    save(path, da.asarray(old + 1, split=0))  # and the next save works
    assert_equal(load(path, split=0), old + 1)


@mpi
def test_recovery_never_reads_a_planted_stage(comm, shared):
    """Only private (0700) stage directories count: a planted world-readable one is not read in place of the target."""
    planted = shared / "x.zarr.tmp-planted"
    save(shared / "other.zarr", da.asarray(sample(seed=5), split=0))

    def plant():
        planted.mkdir(mode=0o755)
        os.chmod(planted, 0o755)
        os.replace(shared / "other.zarr", planted / "x.zarr.old")

    on_rank0(comm, plant)
    assert_raises_everywhere(FileNotFoundError, load, shared / "x.zarr")


# ------------------------------------------------------------------ zarr keys
@pytest.mark.parametrize("key", ["../escape", "/etc/passwd", "c/../../escape", "c//0", "./zarr.json", "c/./0",
                                 "..", "c\\..\\escape", "c/0\0"])
def test_confined_store_refuses_keys_outside(key, tmp_path):
    """Every key-taking operation of the store darray opens zarr with refuses keys leaving the store."""
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.sync import sync

    store_dir = tmp_path / "s.zarr"
    store_dir.mkdir()
    store = confined_store(str(store_dir), read_only=False, func="load")
    value = default_buffer_prototype().buffer.from_bytes(b"x" * 8)
    calls = [lambda: store.get_sync(key), lambda: store.set_sync(key, value), lambda: store.delete_sync(key),
             lambda: sync(store.get(key, default_buffer_prototype())), lambda: sync(store.set(key, value)),
             lambda: sync(store.exists(key)), lambda: sync(store.delete(key)),
             lambda: sync(store.get_partial_values(default_buffer_prototype(), [(key, None)]))]
    for call in calls:
        with pytest.raises(CorruptFileError, match="unsafe zarr key"):
            call()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.zarr"] and not any(store_dir.iterdir())


def test_confined_store_allows_ordinary_keys(tmp_path):
    from zarr.core.buffer import default_buffer_prototype

    store = confined_store(str(tmp_path), read_only=False, func="save")
    store.set_sync("c/0/1", default_buffer_prototype().buffer.from_bytes(b"abc"))
    assert store.get_sync("c/0/1").to_bytes() == b"abc"
    assert (tmp_path / "c" / "0" / "1").read_bytes() == b"abc"


@mpi
@pytest.mark.parametrize("what", ["chunk", "metadata", "chunk directory"])
def test_load_refuses_symlinks_leading_out_of_the_store(what, comm, shared):
    """A store whose chunk (or zarr.json, or chunk directory) is a symlink to a file outside: nothing is read."""
    ref = sample((8, 4))
    path = shared / "x.zarr"
    save(path, da.asarray(ref, split=None), compressors=None)

    def plant():
        outside = shared / "outside"
        outside.mkdir()
        if what == "chunk":
            chunk = next(p for p in path.rglob("*") if p.is_file() and p.name != "zarr.json")
            (outside / "secret.bin").write_bytes(np.arange(32.0).tobytes())  # well-formed bytes for one chunk
            chunk.unlink()
            os.symlink(outside / "secret.bin", chunk)
        elif what == "metadata":
            os.replace(path / "zarr.json", outside / "zarr.json")
            os.symlink(outside / "zarr.json", path / "zarr.json")
        else:
            os.replace(path / "c", outside / "c")
            os.symlink(outside / "c", path / "c")

    on_rank0(comm, plant)
    for spec in (dict(split=0), dict(split=None)):
        text = assert_raises_everywhere(CorruptFileError, load, path, **spec)
        assert text.startswith("load: unsafe zarr key") and "resolves to" in text


@mpi
def test_symlinks_inside_the_store_are_fine(comm, shared):
    ref = sample((8, 4))
    path = shared / "x.zarr"
    save(path, da.asarray(ref, split=None), compressors=None)

    def relink():
        os.replace(path / "c", path / "chunks")
        os.symlink("chunks", path / "c")

    on_rank0(comm, relink)
    assert_equal(load(path, split=0), ref)


# ------------------------------------------------------------------ hostile metadata
V3 = {"zarr_format": 3, "node_type": "array", "shape": [10], "data_type": "float64",
      "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [5]}},
      "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, "fill_value": 0.0,
      "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "attributes": {},
      "storage_transformers": []}
V2 = {"zarr_format": 2, "shape": [4], "chunks": [4], "dtype": "<f8", "compressor": None, "fill_value": 0.0,
      "order": "C", "filters": None}


def _grid(*shape):
    return {"chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shape)}}}


class _Payload:
    """Unpickling this would record the fact (it never must)."""

    def __reduce__(self):
        return (os.makedirs, ("/tmp/darray-test-UNPICKLED",))


PAYLOAD = pickle.dumps(np.array([_Payload()], dtype=object))

HOSTILE_ZARR = {  # name: (format, metadata patch, chunk bytes or None, exception, message fragment)
    "negative shape": (3, {"shape": [-5]}, None, CorruptFileError, "damaged zarr metadata"),
    "float shape": (3, {"shape": [10.5]}, None, CorruptFileError, "damaged zarr metadata"),
    "huge shape": (3, {"shape": [2 ** 62]}, None, CorruptFileError, "fewer than 2**63 bytes"),
    "more than memory": (3, {"shape": [2 ** 34], **_grid(2 ** 20)}, None, MemoryError, "machine's memory"),
    "65 dimensions": (3, {"shape": [1] * 65, **_grid(*[1] * 65)}, None, CorruptFileError, "at most 64"),
    "zero chunk": (3, _grid(0), None, CorruptFileError, "positive lengths"),
    "negative chunk": (3, _grid(-5), None, CorruptFileError, "damaged zarr metadata"),
    "chunk bigger than memory": (3, _grid(2 ** 40), None, MemoryError, "one stored chunk"),
    "object dtype": (3, {"data_type": "object"}, None, CorruptFileError, "damaged zarr metadata"),
    "pickle dtype string": (3, {"data_type": "|O"}, None, CorruptFileError, "damaged zarr metadata"),
    "string dtype": (3, {"data_type": "string", "fill_value": "", "codecs": [{"name": "vlen-utf8"}]}, None,
                     TypeError, "unsupported stored dtype"),
    "pickle codec": (3, {"codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                                    {"name": "numcodecs.pickle"}]}, None, CorruptFileError, "pickle"),
    "dot-dot separator": (3, {"chunk_key_encoding": {"name": "default", "configuration": {"separator": "/../"}}},
                          None, CorruptFileError, "separator"),
    "a group": (3, {"node_type": "group"}, None, CorruptFileError, "damaged zarr metadata"),
    "v2 pickled objects": (2, {"dtype": "|O", "filters": [{"id": "pickle"}], "fill_value": None}, PAYLOAD,
                           CorruptFileError, "damaged zarr metadata"),
    "v2 pickle compressor": (2, {"dtype": "|O", "compressor": {"id": "pickle"}, "fill_value": None}, PAYLOAD,
                             CorruptFileError, "damaged zarr metadata"),
    "v2 record with objects": (2, {"dtype": [["a", "<f8"], ["b", "|O"]]}, None, CorruptFileError,
                               "damaged zarr metadata"),
    "v2 unicode": (2, {"dtype": "<U4", "fill_value": ""}, None, TypeError, "unsupported stored dtype"),
    "v2 void": (2, {"dtype": "|V8", "fill_value": None}, None, TypeError, "unsupported stored dtype"),
    "v2 dot-dot separator": (2, {"dimension_separator": "/../"}, None, CorruptFileError, "separator"),
}


@pytest.fixture
def little_memory(monkeypatch):
    """Pretend the machine has 1 GiB, so that the memory checks do not depend on the host."""
    monkeypatch.setattr(common, "physical_memory", lambda: 2 ** 30)


@mpi
@pytest.mark.parametrize("case", HOSTILE_ZARR)
def test_hostile_zarr_metadata_is_a_clear_error_everywhere(case, comm, shared, little_memory):
    fmt, patch, chunk, kind, fragment = HOSTILE_ZARR[case]
    path = shared / "h.zarr"

    def write():
        path.mkdir()
        meta = {**(V3 if fmt == 3 else V2), **patch}
        (path / ("zarr.json" if fmt == 3 else ".zarray")).write_text(json.dumps(meta))
        if chunk is not None:
            (path / "0").write_bytes(chunk)

    on_rank0(comm, write)
    for spec in (dict(split=0), dict(split=None)):
        text = assert_raises_everywhere(kind, load, path, **spec)
        assert text.startswith("load: ") and fragment in text, text
    everywhere(comm, not os.path.exists("/tmp/darray-test-UNPICKLED"), "a payload was unpickled")


def _npy(path: Path, header: dict, data: bytes = b"\0" * 64) -> None:
    text = repr(header).encode("latin1")
    pad = (64 - (10 + len(text) + 1) % 64) % 64
    body = text + b" " * pad + b"\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(body).to_bytes(2, "little") + body + data)


HOSTILE_NPY = {
    "negative shape": ({"descr": "<f8", "fortran_order": False, "shape": (-4,)}, b"", CorruptFileError,
                       "non-negative integer lengths"),
    "float shape": ({"descr": "<f8", "fortran_order": False, "shape": (4.0,)}, b"", CorruptFileError,
                    "not a readable .npy file"),
    "huge shape": ({"descr": "<f8", "fortran_order": False, "shape": (2 ** 40, 2 ** 40)}, b"", CorruptFileError,
                   "fewer than 2**63 bytes"),
    "65 dimensions": ({"descr": "<f8", "fortran_order": False, "shape": (1,) * 65}, b"", CorruptFileError,
                      "at most 64"),
    "truncated": ({"descr": "<f8", "fortran_order": False, "shape": (2 ** 30,)}, b"", CorruptFileError,
                  "truncated file"),
    "pickled objects": ({"descr": "|O", "fortran_order": False, "shape": (1,)}, PAYLOAD, TypeError,
                        "never unpickled"),
    "record with objects": ({"descr": [("a", "<f8"), ("b", "|O")], "fortran_order": False, "shape": (1,)},
                            PAYLOAD, TypeError, "never unpickled"),
    "bad order flag": ({"descr": "<f8", "fortran_order": "yes", "shape": (4,)}, b"", CorruptFileError,
                       "not a readable .npy file"),
}


@mpi
@pytest.mark.parametrize("case", HOSTILE_NPY)
def test_hostile_npy_header_is_a_clear_error_everywhere(case, comm, shared, little_memory):
    header, data, kind, fragment = HOSTILE_NPY[case]
    path = shared / "h.npy"
    on_rank0(comm, _npy, path, header, data + b"\0" * 64)
    text = assert_raises_everywhere(kind, load_npy, path, split=0)
    assert text.startswith("load_npy: ") and fragment in text, text
    everywhere(comm, not os.path.exists("/tmp/darray-test-UNPICKLED"), "a payload was unpickled")


# ------------------------------------------------------------------ HDF5
@mpi
@pytest.mark.parametrize("name", ["", "/", "..", "a/../b", "a//b", "./x", "x/", "a\0b"])
def test_hdf5_dataset_names_are_checked(name, comm, shared):
    before = snapshot(shared)
    text = assert_raises_everywhere(ValueError, save_hdf5, shared / "d.h5", da.arange(6.0, split=0), name)
    assert text.startswith("save_hdf5: invalid dataset name")
    text = assert_raises_everywhere(ValueError, load_hdf5, shared / "d.h5", name)
    assert text.startswith("load_hdf5: invalid dataset name")
    assert_raises_everywhere(TypeError, load_hdf5, shared / "d.h5", 3)
    everywhere(comm, snapshot(shared) == before, "a refused call changed the directory")


@mpi
def test_hdf5_nested_dataset_names_work(comm, shared):
    ref = sample((7, 3))
    save_hdf5(shared / "d.h5", da.asarray(ref, split=0), "/run1/u")
    assert_equal(load_hdf5(shared / "d.h5", "run1/u", split=1), ref)


@mpi
@pytest.mark.parametrize("case", ["external link", "external storage", "virtual dataset", "soft link outside",
                                  "vlen strings", "object references"])
def test_hdf5_never_reads_another_file(case, comm, shared):
    path = shared / "h.h5"

    def write():
        secret = np.arange(8.0)
        secret.tofile(shared / "secret.bin")
        with h5py.File(shared / "other.h5", "w") as g:
            g["secret"] = secret
        with h5py.File(path, "w") as f:
            if case == "external link":
                f["data"] = h5py.ExternalLink(str(shared / "other.h5"), "/secret")
            elif case == "external storage":
                f.create_dataset("data", shape=(8,), dtype="<f8", external=[(str(shared / "secret.bin"), 0, 64)])
            elif case == "virtual dataset":
                layout = h5py.VirtualLayout(shape=(8,), dtype="<f8")
                layout[:] = h5py.VirtualSource(str(shared / "other.h5"), "secret", shape=(8,))
                f.create_virtual_dataset("data", layout)
            elif case == "soft link outside":
                f["ext"] = h5py.ExternalLink(str(shared / "other.h5"), "/")
                f["data"] = h5py.SoftLink("/ext/secret")
            elif case == "vlen strings":
                f.create_dataset("data", data=np.array(["a", "bc"], dtype=object), dtype=h5py.string_dtype())
            else:
                f.create_dataset("target", data=np.arange(3.0))
                f.create_dataset("data", data=np.array([f["target"].ref], dtype=h5py.ref_dtype))

    on_rank0(comm, write)
    kind = TypeError if case in ("vlen strings", "object references") else CorruptFileError
    text = assert_raises_everywhere(kind, load_hdf5, path, "data", split=0)
    assert text.startswith("load_hdf5: ")
    if kind is CorruptFileError:
        assert "refusing" in text and "expected a dataset stored in" in text, text


# ------------------------------------------------------------------ no pickle anywhere
@pytest.fixture
def trapped_pickle(monkeypatch):
    """Every way NumPy, zarr/numcodecs and h5py could unpickle: recorded and refused."""
    calls = []

    def trap(name):
        def refuse(*args, **kwargs):
            calls.append(name)
            raise AssertionError(f"{name} called while loading")
        return refuse

    monkeypatch.setattr(pickle, "loads", trap("pickle.loads"))
    monkeypatch.setattr(pickle, "load", trap("pickle.load"))
    monkeypatch.setattr(pickle, "Unpickler", trap("pickle.Unpickler"))
    import numcodecs.pickles

    monkeypatch.setattr(numcodecs.pickles.Pickle, "decode", trap("numcodecs.Pickle.decode"))
    original_load = np.load

    def strict_load(*args, **kwargs):
        if kwargs.get("allow_pickle", False):
            calls.append("np.load(allow_pickle=True)")
            raise AssertionError("np.load with allow_pickle=True")
        return original_load(*args, **kwargs)

    monkeypatch.setattr(np, "load", strict_load)
    return calls


@mpi
def test_no_loading_path_unpickles(comm, shared, trapped_pickle):
    from darray import nn, optim

    ref = sample((9, 4))
    for _fmt, (save_fn, load_fn, name) in FORMATS.items():
        save_fn(shared / name, da.asarray(ref, split=0))
        for spec in (dict(split=0), dict(split=1), dict(split=None)):
            assert_equal(load_fn(shared / name, verify=True, **spec), ref)

    def hostile():
        _npy(shared / "o.npy", {"descr": "|O", "fortran_order": False, "shape": (1,)}, PAYLOAD)
        store = shared / "o.zarr"
        store.mkdir()
        (store / ".zarray").write_text(json.dumps({**V2, "shape": [1], "chunks": [1], "dtype": "|O",
                                                   "filters": [{"id": "pickle"}], "fill_value": None}))
        (store / "0").write_bytes(PAYLOAD)
        with h5py.File(shared / "o.h5", "w") as f:
            f.create_dataset("data", data=np.array(["a"], dtype=object), dtype=h5py.string_dtype())
        np.savez(shared / "o.npz", meta=np.asarray(json.dumps({"extra": {}})),
                 **{"model/weight": np.array([_Payload()], dtype=object)})

    on_rank0(comm, hostile)
    assert_raises_everywhere(TypeError, load_npy, shared / "o.npy")
    assert_raises_everywhere(CorruptFileError, load, shared / "o.zarr")
    assert_raises_everywhere(TypeError, load_hdf5, shared / "o.h5")
    text = assert_raises_everywhere(ValueError, optim.load_checkpoint, shared / "o.npz")
    assert "allow_pickle" in text

    model = nn.Linear(3, 2)
    optim.save_checkpoint(shared / "ckpt.npz", model, epoch=1)
    assert optim.load_checkpoint(shared / "ckpt.npz", nn.Linear(3, 2)) == {"epoch": 1}
    everywhere(comm, not trapped_pickle, f"unpickling was attempted: {trapped_pickle}")
    everywhere(comm, not os.path.exists("/tmp/darray-test-UNPICKLED"), "a payload was unpickled")


def test_loaders_never_ask_for_pickle_in_the_source():
    """No loader in darray passes allow_pickle=True or imports pickle (a static check of the source).

    ``allow_pickle`` is judged on the code (a call's keyword that is not the constant False), so
    that documentation and error messages may say that darray refuses ``allow_pickle=True``.
    """
    import ast

    root = Path(da.__file__).parent
    offenders = []
    for path in [*sorted((root / "io").glob("*.py")), root / "interop.py", *sorted((root / "optim").glob("*.py"))]:
        text = path.read_text()
        for needle in ("pickle.load", "import pickle", "from pickle", "numcodecs.Pickle", "cloudpickle",
                       "import dill"):
            if needle in text:
                offenders.append(f"{path.relative_to(root)}: {needle}")
        for node in ast.walk(ast.parse(text)):  # (numpy.load's own default is allow_pickle=False)
            if isinstance(node, ast.keyword) and node.arg == "allow_pickle" and not (
                    isinstance(node.value, ast.Constant) and node.value.value is False):
                where = f"{path.relative_to(root)}:{node.value.lineno}"
                offenders.append(f"{where}: allow_pickle={ast.unparse(node.value)}")
    assert not offenders, offenders


# ------------------------------------------------------------------ checkpoints
@mpi
def test_checkpoint_staging_never_follows_a_planted_symlink(comm, shared, monkeypatch):
    from darray import nn, optim

    outside = shared / "outside"

    def plant():
        outside.mkdir()
        (outside / "victim.txt").write_text("precious")
        (outside / "victim_dir").mkdir()
        os.symlink(outside / "victim.txt", shared / "ckpt.npz.tmp.npz")  # the name save_checkpoint used to use
        os.symlink(outside / "victim_dir", shared / "ckpt.npz.tmp-planted")

    on_rank0(comm, plant)
    monkeypatch.setattr(tempfile, "_get_candidate_names", _planted_names)
    before = snapshot(outside)
    model = nn.Linear(3, 2)
    optim.save_checkpoint(shared / "ckpt.npz", model, step=7)
    everywhere(comm, snapshot(outside) == before, "save_checkpoint wrote outside its target")
    assert optim.load_checkpoint(shared / "ckpt.npz", model) == {"step": 7}


@mpi
def test_checkpoint_targets_are_checked(comm, shared):
    from darray import nn, optim

    model = nn.Linear(3, 2)
    on_rank0(comm, (shared / "run").mkdir)
    assert_raises_everywhere(ValueError, optim.save_checkpoint, ".", model)
    assert_raises_everywhere(IsADirectoryError, optim.save_checkpoint, shared / "run", model)
    assert_raises_everywhere(FileNotFoundError, optim.save_checkpoint, shared / "no" / "c.npz", model)
    everywhere(comm, (shared / "run").is_dir() and not any((shared / "run").iterdir()), "the directory changed")


@mpi
def test_checkpoint_member_names_never_reach_the_file_system(comm, shared):
    """Hostile member names inside a checkpoint (``..``, absolute) are only dictionary keys: nothing is extracted."""
    from darray import nn, optim

    def write():
        np.savez(shared / "evil.npz", meta=np.asarray(json.dumps({"extra": {}})),
                 **{"model/../../escape": np.zeros(3), "model//abs/escape": np.zeros(2)})

    on_rank0(comm, write)
    before = snapshot(shared.parent)
    assert_raises_everywhere(KeyError, optim.load_checkpoint, shared / "evil.npz", nn.Linear(3, 2))
    everywhere(comm, snapshot(shared.parent) == before, "loading a checkpoint created files")
