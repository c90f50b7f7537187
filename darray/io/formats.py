"""``darray.io.save`` / ``darray.io.load``: the format chosen from the path, or from what is there.

Saving chooses by the path's extension:

=====================  =========================================
``.npy``               a ``.npy`` file (:func:`~darray.io.save_npy`)
``.h5``, ``.hdf5``     an HDF5 dataset (:func:`~darray.io.save_hdf5`)
``.npz``               refused (an archive of several arrays)
anything else          a zarr v3 store (a directory)
=====================  =========================================

Loading looks at what exists at the path: a directory is a zarr store, a
file is read by its leading bytes (the ``.npy`` magic string, the HDF5
signature), else by its extension; a file in no format darray reads is
refused naming the function that reads it. A path that does not exist is
chosen by its extension (and reported missing by that format's reader).
Rank 0 looks and every rank follows its choice (one broadcast), so every
rank runs the same reader.
"""

from __future__ import annotations

import os

import numpy as np
from numpy.lib.recfunctions import repack_fields

from .._comm import resolve_comm
from ._common import collective
from .hdf5_io import load_hdf5, save_hdf5
from .npy_io import load_npy, save_npy
from .zarr_io import load as load_zarr
from .zarr_io import save as save_zarr

__all__ = ["FORMATS", "format_of", "load", "save"]

#: The formats :func:`save` and :func:`load` choose between (index = the code rank 0 broadcasts).
FORMATS = ("zarr", "npy", "hdf5")

_EXTENSIONS = {".npy": "npy", ".h5": "hdf5", ".hdf5": "hdf5"}
_NPY_MAGIC = b"\x93NUMPY"
_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"


def _text(path) -> str | None:
    try:
        text = os.fspath(path)
    except TypeError:
        return None  # the format's own function reports a path that is no path
    return os.fsdecode(text) if isinstance(text, bytes) else text


def _check_path(func: str, path) -> None:
    """TypeError for a path that is neither a path nor a store (run inside the ranks' agreement on the outcome)."""
    if path is None or isinstance(path, (bool, int, float, complex)):
        raise TypeError(f"{func}: path must be a str, bytes or os.PathLike (or a zarr store); got "
                        f"{type(path).__name__} {path!r}")


def format_of(func: str, path) -> str:
    """The format a path names by its extension: ``"npy"``, ``"hdf5"`` or ``"zarr"`` (pure; ValueError for .npz).

    Examples
    --------
    >>> format_of("save", "field.npy"), format_of("save", "field.h5"), format_of("save", "field.zarr")
    ('npy', 'hdf5', 'zarr')
    """
    text = _text(path)
    if text is None:
        return "zarr"
    ext = os.path.splitext(text.rstrip(os.sep))[1].lower()
    if ext == ".npz":
        raise ValueError(f"{func}: .npz archives are not supported; got {text!r}, expected a .npy, .h5/.hdf5 or "
                         f"zarr path (save each array with darray.io.save_npy)")
    return _EXTENSIONS.get(ext, "zarr")


def _inspect(func: str, path) -> str:
    """The format of what exists at ``path`` (see the module notes); ValueError for a file of no known format."""
    _check_path(func, path)
    text = _text(path)
    if text is None or not os.path.exists(text):
        return format_of(func, path)
    if os.path.isdir(text):
        return "zarr"
    try:
        with open(text, "rb") as f:
            head = f.read(len(_HDF5_MAGIC))
    except OSError:
        return format_of(func, path)  # the reader reports why it cannot be read
    if head.startswith(_NPY_MAGIC):
        return "npy"
    if head == _HDF5_MAGIC:
        return "hdf5"
    kind = format_of(func, path)
    if kind != "zarr":
        return kind  # a damaged .npy / .h5: its reader says what is wrong
    raise ValueError(f"{func}: not a file format darray reads; got the file {text!r} (starting with {head!r}), "
                     f"expected a .npy file, an HDF5 file or a zarr store directory (text files: darray.loadtxt; "
                     f"raw binary: darray.fromfile)")


def _check_keywords(func: str, kind: str, path, dataset, compressors) -> None:
    if dataset is not None and kind != "hdf5":
        raise ValueError(f"{func}: dataset= names a dataset of an HDF5 file; got dataset={dataset!r} for the {kind} "
                         f"path {_text(path)!r}, expected no dataset (or a path ending in .h5 / .hdf5)")
    if compressors != "auto" and kind != "zarr":
        raise ValueError(f"{func}: compressors= applies to zarr stores; got compressors={compressors!r} for the "
                         f"{kind} path {_text(path)!r}, expected the default")


def save(path, x, *, checksum: bool = True, compressors="auto", dataset: str | None = None) -> None:
    """Write ``x`` to ``path`` in the format its extension names, in parallel (collective).

    ``.npy`` -> a ``.npy`` file NumPy reads (:func:`~darray.io.save_npy`);
    ``.h5`` / ``.hdf5`` -> the dataset ``dataset`` (default ``"data"``) of an
    HDF5 file (:func:`~darray.io.save_hdf5`); anything else -> a zarr v3
    store with chunks aligned to the blocks (:mod:`darray.io.zarr_io`;
    ``compressors`` is passed to :func:`zarr.create_array`). Every format is
    written atomically with per-block SHA-256 checksums (``checksum=False``:
    none). ``.npz`` is refused.

    Examples
    --------
    >>> import os, tempfile, numpy, darray as da
    >>> from darray.io import save, load
    >>> d = tempfile.mkdtemp()                      # the same directory on every rank
    >>> save(os.path.join(d, "x.npy"), da.arange(4.0))
    >>> numpy.load(os.path.join(d, "x.npy")).tolist()
    [0.0, 1.0, 2.0, 3.0]
    >>> save(os.path.join(d, "x.zarr"), da.arange(4.0))
    >>> float(da.sum(load(os.path.join(d, "x.zarr"))))
    6.0
    """
    kind = format_of("save", path)
    _check_keywords("save", kind, path, dataset, compressors)
    x = _packed(x)
    if kind == "npy":
        save_npy(path, x, checksum=checksum, _func="save")
    elif kind == "hdf5":
        save_hdf5(path, x, "data" if dataset is None else dataset, checksum=checksum, _func="save")
    else:
        save_zarr(path, x, checksum=checksum, compressors=compressors)


def _packed(x):
    """``x``, its records packed where fields leave gaps (``r[["x", "t"]]``): files store the fields only."""
    dtype = getattr(x, "dtype", None)
    if not isinstance(dtype, np.dtype) or dtype.names is None:
        return x
    packed = repack_fields(dtype)
    return x if packed == dtype else x.astype(packed)


def load(path, *, split="auto", grid=None, sizes=None, halo=0, boundary="none", comm=None, verify="auto",
         dataset: str | None = None):
    """Read the array at ``path`` into a DArray, in the format found there (collective).

    A directory is a zarr store (:mod:`darray.io.zarr_io`), a ``.npy`` file
    is read by :func:`~darray.io.load_npy`, an HDF5 file by
    :func:`~darray.io.load_hdf5` (the dataset ``dataset``, default
    ``"data"``); see :mod:`darray.io.formats`. Each rank reads only its own
    region of the layout asked for; ``verify`` checks the stored checksums
    (see :mod:`darray.io`).

    Examples
    --------
    >>> import os, tempfile, numpy, darray as da
    >>> from darray.io import load
    >>> p = os.path.join(tempfile.mkdtemp(), "field.npy")   # the same path on every rank
    >>> numpy.save(p, numpy.arange(5.0))
    >>> load(p, verify=False).shape
    (5,)
    """
    func = "load"
    comm = resolve_comm(comm)
    kind = collective(comm, _inspect, func, path, func=func)
    code = np.asarray([FORMATS.index(kind)], dtype=np.int64)
    kind = FORMATS[int(np.asarray(comm.bcast(code, 0))[0])]  # every rank runs rank 0's choice
    _check_keywords(func, kind, path, dataset, "auto")
    layout = dict(split=split, grid=grid, sizes=sizes, halo=halo, boundary=boundary, comm=comm, verify=verify)
    if kind == "npy":
        return load_npy(path, **layout, _func=func)
    if kind == "hdf5":
        return load_hdf5(path, "data" if dataset is None else dataset, **layout, _func=func)
    return load_zarr(path, **layout)
