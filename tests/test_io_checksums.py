"""darray.io checksums: what the digests cover, old tables, and stores whose checksums are gone.

- The per-block digests (checksum tables of version 2) cover the dtype, the shape and the block bounds as well
  as the bytes: editing the dtype (or the shape and the block bounds) in the metadata AND in the checksum table
  fails verification on every rank, with a message that names the dtype the bytes were saved with; before, the
  same bytes read as another dtype loaded silently.
- Tables of version 1 (digests of the bytes alone, as darray wrote them before) still verify, in every format;
  a table of an unknown version is a clear error.
- A zarr store or HDF5 dataset whose checksum attribute was removed (or saved with ``checksum=False``) loads
  with the ``MissingChecksumWarning`` a ``.npy`` without its sidecar gives, on every rank, naming the path and
  what is missing; ``verify=False`` is silent, ``verify=True`` refuses.

Errors are expected on EVERY rank with the same message (``assert_raises_everywhere``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

import darray as da
from darray.io import ChecksumError, CorruptFileError, MissingChecksumWarning, load
from darray.testing import assert_equal, assert_raises_everywhere

from _io_helpers import FORMATS, everywhere, on_rank0

zarr = pytest.importorskip("zarr")
h5py = pytest.importorskip("h5py")

pytestmark = [pytest.mark.mpi, pytest.mark.usefixtures("small_auto_threshold")]


def sample(shape=(13, 4)) -> np.ndarray:
    return np.random.default_rng(7).standard_normal(shape)


def quiet(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` and the MissingChecksumWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    return out, [w for w in caught if issubclass(w.category, MissingChecksumWarning)]


# ------------------------------------------------------------------ reading and rewriting stored files
def stored(fmt: str, path: Path) -> tuple[np.ndarray, dict]:
    """The stored array and checksum table, read by the format's own library (rank 0)."""
    if fmt == "npy":
        return np.load(path), json.loads(Path(str(path) + ".sha256").read_text())
    if fmt == "zarr":
        array = zarr.open_array(str(path), mode="r")
        return array[...], dict(array.attrs)["darray"]["checksums"]
    with h5py.File(path, "r") as f:
        return f["data"][()], json.loads(f["data"].attrs["darray_checksums"])


def rewrite(fmt: str, path: Path, array: np.ndarray, table: dict | None) -> None:
    """Store ``array`` with the checksum ``table`` (None: none) at ``path`` as the format's own library does.

    This is what editing the metadata amounts to: the same bytes described as ``array.dtype`` /
    ``array.shape``. A ``.npy`` keeps its file (written in place) and its sidecar's other entries.
    """
    if fmt == "npy":
        side = Path(str(path) + ".sha256")
        with open(path, "r+b") as f:
            np.save(f, array)
        if table is None:
            side.unlink()
        else:
            doc = json.loads(side.read_text())
            doc.update(table)
            side.write_text(json.dumps(doc))
    elif fmt == "zarr":
        shutil.rmtree(path)
        attrs = {"darray": {"checksums": table, "every_chunk": True}} if table is not None else {}
        out = zarr.create_array(store=str(path), shape=array.shape, chunks=array.shape, dtype=array.dtype,
                                fill_value=0, attributes=attrs)
        out[...] = array
    else:
        with h5py.File(path, "w") as f:
            ds = f.create_dataset("data", data=array)
            if table is not None:
                ds.attrs["darray_checksums"] = json.dumps(table)


def version1(array: np.ndarray, table: dict) -> dict:
    """``table`` as darray wrote it before: version 1, each digest over the block's bytes alone."""
    blocks = []
    for b in table["blocks"]:
        part = np.ascontiguousarray(array[tuple(slice(s, e) for s, e in zip(b["start"], b["stop"]))])
        blocks.append({**b, "sha256": hashlib.sha256(part.astype(part.dtype.newbyteorder("<")).tobytes()).hexdigest()})
    return {**table, "version": 1, "blocks": blocks}


# ------------------------------------------------------------------ what the digests cover
@pytest.mark.parametrize("fmt", FORMATS)
def test_an_edited_dtype_fails_verification(fmt, comm, shared):
    """float64 data whose dtype is changed to int64 in the metadata and the checksum table: the same bytes, the
    checksums of float64 -- a ChecksumError on every rank that names both dtypes, in every layout."""
    save_fn, load_fn, name = FORMATS[fmt]
    path = shared / name
    save_fn(path, da.asarray(sample(), split=0))

    def edit():
        array, table = stored(fmt, path)
        rewrite(fmt, path, array.view("<i8"), {**table, "dtype": "<i8"})

    on_rank0(comm, edit)
    for spec in (dict(split=0), dict(split=1), dict(split=None)):
        text = assert_raises_everywhere(ChecksumError, load_fn, path, verify=True, **spec)
        assert text.startswith(f"{load_fn.__name__}: checksum mismatch") and "<i8" in text and "<f8" in text, text
        assert "dtype was changed" in text, text
    y = load_fn(path, verify=False, split=0)  # explicitly unchecked: the bytes as int64
    assert_equal(y, sample().view("<i8"))


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_edited_shape_and_layout_fail_verification(fmt, comm, shared):
    """A (13, 4) array described as (52,) in the metadata and the table (each block's bounds mapped to the same
    bytes): every digest still matches the bytes alone, the version-2 digests do not."""
    save_fn, load_fn, name = FORMATS[fmt]
    path = shared / name
    save_fn(path, da.asarray(sample(), split=0))  # row blocks: each is one byte range

    def edit():
        array, table = stored(fmt, path)
        blocks = [{**b, "start": [b["start"][0] * 4], "stop": [b["stop"][0] * 4]} for b in table["blocks"]]
        rewrite(fmt, path, array.reshape(-1), {**table, "shape": [52], "blocks": blocks})

    on_rank0(comm, edit)
    for spec in (dict(split=0), dict(split=None)):
        text = assert_raises_everywhere(ChecksumError, load_fn, path, verify=True, **spec)
        assert "checksum mismatch" in text and "(52,)" in text and "block bounds" in text, text


@pytest.mark.parametrize("fmt", FORMATS)
def test_checksum_tables_of_version_1_still_verify(fmt, comm, shared):
    """Files of the format version before (digests of the bytes alone) load and verify; damage is still found."""
    save_fn, load_fn, name = FORMATS[fmt]
    path = shared / name
    ref = sample()
    save_fn(path, da.asarray(ref, split=0))

    def downgrade():
        array, table = stored(fmt, path)
        old = version1(array, table)
        if fmt == "npy":  # a sidecar as darray wrote it: the table and a bare previous table, no identities
            Path(str(path) + ".sha256").write_text(json.dumps({**old, "previous": old}))
        else:
            rewrite(fmt, path, array, old)

    on_rank0(comm, downgrade)
    for spec in (dict(split=0), dict(split=1), dict(split=None)):
        y, warned = quiet(load_fn, path, verify=True, **spec)
        assert_equal(y, ref)
        everywhere(comm, not warned, f"no warning: the checksums are there ({warned})")

    def damage():
        array, table = stored(fmt, path)
        array = array.copy()
        array[5, 1] += 1.0
        rewrite(fmt, path, array, version1(ref, table) if fmt != "npy" else None)
        if fmt == "npy":
            Path(str(path) + ".sha256").write_text(json.dumps({**version1(ref, table), "previous": None}))

    on_rank0(comm, damage)
    text = assert_raises_everywhere(ChecksumError, load_fn, path, split=0)
    assert "checksum mismatch" in text, text


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_unknown_checksum_version_is_refused(fmt, comm, shared):
    save_fn, load_fn, name = FORMATS[fmt]
    path = shared / name
    save_fn(path, da.asarray(sample(), split=0))

    def bump():
        array, table = stored(fmt, path)
        rewrite(fmt, path, array, {**table, "version": 3})

    on_rank0(comm, bump)
    text = assert_raises_everywhere(CorruptFileError, load_fn, path, split=0)
    assert "unsupported checksum table version; got 3" in text, text


# ------------------------------------------------------------------ checksums that are gone
MISSING = {  # format: (how the checksums went, the function that loads, what the warning names)
    "zarr-attribute": ("zarr", "remove", "load", "no 'darray' attribute"),
    "zarr-entry": ("zarr", "entry", "load", "no 'checksums' entry in the 'darray' attribute"),
    "zarr-unsaved": ("zarr", "unsaved", "load", "no 'darray' attribute"),
    "hdf5-attribute": ("hdf5", "remove", "load_hdf5", "no 'darray_checksums' attribute on the dataset 'data'"),
    "hdf5-unsaved": ("hdf5", "unsaved", "load_hdf5", "no 'darray_checksums' attribute on the dataset 'data'"),
    "npy-sidecar": ("npy", "remove", "load_npy", "x.npy.sha256"),
}


@pytest.mark.parametrize("case", MISSING)
def test_a_store_without_its_checksums_warns_like_a_npy_without_its_sidecar(case, comm, shared):
    fmt, how, func, fragment = MISSING[case]
    save_fn, load_fn, name = FORMATS[fmt]
    path = shared / name
    ref = sample()
    save_fn(path, da.asarray(ref, split=0), checksum=how != "unsaved")

    def remove():
        if fmt == "npy":
            Path(str(path) + ".sha256").unlink()
        elif fmt == "hdf5":
            with h5py.File(path, "r+") as f:
                del f["data"].attrs["darray_checksums"]
        else:
            meta = json.loads((path / "zarr.json").read_text())
            if how == "entry":
                del meta["attributes"]["darray"]["checksums"]
            else:
                del meta["attributes"]["darray"]
            (path / "zarr.json").write_text(json.dumps(meta))

    if how != "unsaved":
        on_rank0(comm, remove)
    for fn in (load_fn, load):  # the format's function and darray.io.load
        for spec in (dict(split=0), dict(split=1), dict(split=None)):
            y, warned = quiet(fn, path, **spec)
            assert_equal(y, ref)
            everywhere(comm, len(warned) == 1, f"{fn.__name__}: one MissingChecksumWarning on every rank, got "
                                               f"{[str(w.message) for w in warned]}")
            text = str(warned[0].message)
            start = f"{'load' if fn is load else func}: loading without checksums; got "
            everywhere(comm, text.startswith(start) and fragment in text and str(path) in text, text)
        y, warned = quiet(fn, path, verify=False, split=0)
        assert_equal(y, ref)
        everywhere(comm, not warned, f"verify=False is silent, got {warned}")
        text = assert_raises_everywhere(ValueError, fn, path, verify=True)
        assert "verify=True needs checksums" in text and fragment in text, text


@pytest.mark.parametrize("fmt", FORMATS)
def test_stores_with_their_checksums_do_not_warn(fmt, comm, shared):
    save_fn, load_fn, name = FORMATS[fmt]
    save_fn(shared / name, da.asarray(sample(), split=0))
    for spec in (dict(split=0), dict(split=1)):
        y, warned = quiet(load_fn, shared / name, **spec)
        assert_equal(y, sample())
        everywhere(comm, not warned, f"warned: {warned}")
