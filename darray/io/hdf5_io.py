"""HDF5 datasets written and read in parallel through h5py.

- h5py built with MPI (``h5py.get_config().mpi``) and an MPI communicator:
  every rank opens the file with ``driver="mpio"``, the dataset is created
  collectively and each rank writes its hyperslab.
- otherwise (the pip wheels): rank 0 creates the file and the dataset, then
  the writer ranks write their hyperslabs in rank order, each opening the
  file, writing and closing it before the next one starts (one barrier per
  writer). HDF5 without MPI allows one writer at a time.

The per-block SHA-256 table is the JSON attribute ``darray_checksums`` of the
dataset. Loading: every rank opens the file read-only and reads its hyperslab.

Safety: dataset names are ``/``-separated group paths whose segments are
never empty, ``.`` or ``..``; loading refuses a dataset reached through an
external link, stored in external raw files or assembled from other files (a
virtual dataset), so that a hostile file cannot make a load read anything but
itself; object, string and record dtypes are refused (never unpickled).
"""

from __future__ import annotations

import json
import math
import os

import numpy as np

from ._atomic import atomic_targets
from .._comm import resolve_comm
from .._core import make_layout
from ._common import (CorruptFileError, block_bounds, check_darray, check_dtype, check_fits, check_shape, check_table,
                      checksum_table, collective, has_times, host_block, is_writer, mpi_comm, verify_blocks,
                      warn_unchecked, wrap)

__all__ = ["save_hdf5", "load_hdf5"]

ATTRIBUTE = "darray_checksums"


def _h5py():
    try:
        import h5py
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("darray.io: HDF5 files need h5py; install it with pip install 'darray[io]'") from e
    return h5py


def check_dataset_name(func: str, dataset) -> str:
    """``dataset`` if it is a valid HDF5 path of groups and a dataset; TypeError / ValueError otherwise."""
    if not isinstance(dataset, str):
        raise TypeError(f"{func}: dataset must be a str; got {type(dataset).__name__}, expected e.g. 'data'")
    parts = dataset[1:].split("/") if dataset.startswith("/") else dataset.split("/")
    if "\0" in dataset or any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"{func}: invalid dataset name; got {dataset!r}, expected a non-empty name or "
                         f"'/'-separated path whose parts are not empty, '.' or '..' (e.g. 'data' or 'run1/u')")
    return dataset


def _dataset(func: str, h5py, f, dataset: str, path: str):
    """The dataset ``dataset`` of the open file ``f``, refusing anything that reads another file."""
    node = f
    parts = [p for p in dataset.split("/") if p]
    for i, part in enumerate(parts):
        link = node.get(part, getlink=True) if isinstance(node, h5py.Group) else None
        if link is None:
            where = "/".join(parts[:i]) or "/"
            keys = sorted(node.keys()) if isinstance(node, h5py.Group) else []
            raise ValueError(f"{func}: no such dataset; got {dataset!r} (no {part!r} in {where!r}), expected one "
                             f"of {keys}")
        if isinstance(link, h5py.ExternalLink):
            raise CorruptFileError(f"{func}: refusing an external link; got {dataset!r} linking to "
                                   f"{link.filename!r}:{link.path!r}, expected a dataset stored in {path!r}")
        node = node[part]
    if not isinstance(node, h5py.Dataset):
        keys = sorted(node.keys()) if isinstance(node, h5py.Group) else []
        raise ValueError(f"{func}: no such dataset; got {dataset!r} (a group), expected one of {keys}")
    here = os.path.realpath(path)
    if os.path.realpath(node.file.filename) != here:
        raise CorruptFileError(f"{func}: refusing a dataset of another file; got {dataset!r} in "
                               f"{node.file.filename!r}, expected a dataset stored in {path!r}")
    if node.external:
        raise CorruptFileError(f"{func}: refusing external storage; got {dataset!r} stored in the files "
                               f"{[e[0] for e in node.external]}, expected a dataset stored in {path!r}")
    if node.is_virtual:
        raise CorruptFileError(f"{func}: refusing a virtual dataset; got {dataset!r} assembled from other "
                               f"datasets or files, expected a dataset stored in {path!r}")
    return node


def _parallel(h5py, comm) -> bool:
    return bool(h5py.get_config().mpi) and mpi_comm(comm) is not None and comm.size > 1


def save_hdf5(path, x, dataset: str = "data", *, checksum: bool = True, _func: str = "save_hdf5") -> None:
    """Write ``x`` to the dataset ``dataset`` of a new HDF5 file at ``path`` (collective, atomic).

    Examples
    --------
    >>> import os, tempfile, darray as da
    >>> from darray.io import save_hdf5, load_hdf5
    >>> p = os.path.join(tempfile.mkdtemp(), "x.h5")     # the same path on every rank
    >>> save_hdf5(p, da.arange(4.0), "u")
    >>> float(da.sum(load_hdf5(p, "u")))
    6.0
    """
    func = _func
    check_darray(func, x)
    if has_times(x.dtype):  # (h5py: "No conversion path for dtype"; raised alike on every rank, before any file)
        raise TypeError(f"{func}: HDF5 has no type for datetime64/timedelta64; got {x.dtype}, expected numbers "
                        f"(save dates as .npy or zarr, or as int64 counts: x.astype('int64'))")
    check_dataset_name(func, dataset)
    comm, layout = x.comm, x.layout
    h5py = collective(comm, _h5py, func=func)
    rank = comm.rank
    block = host_block(x)
    table = checksum_table(x, block) if checksum else None
    dtype = np.dtype(x.dtype)
    writer = is_writer(layout, rank) and block.size > 0
    start, stop = block_bounds(layout, rank)
    cells = tuple(slice(a, b) for a, b in zip(start, stop))
    with atomic_targets(func, comm, [path]) as (tmp,):
        if _parallel(h5py, comm):
            def write_parallel():
                with h5py.File(tmp, "w", driver="mpio", comm=mpi_comm(comm)) as f:
                    ds = f.create_dataset(dataset, shape=layout.shape, dtype=dtype)
                    if table is not None:
                        ds.attrs[ATTRIBUTE] = json.dumps(table)
                    if writer:
                        ds[cells or ...] = block

            collective(comm, write_parallel, func=func)
            return

        def create():
            if rank == 0:
                with h5py.File(tmp, "w") as f:
                    ds = f.create_dataset(dataset, shape=layout.shape, dtype=dtype)
                    if table is not None:
                        ds.attrs[ATTRIBUTE] = json.dumps(table)

        collective(comm, create, func=func)
        writers = [r for r in range(comm.size) if is_writer(layout, r) and math.prod(layout.block_shape(r))]
        for turn in writers:
            def write_turn():
                if rank == turn:
                    with h5py.File(tmp, "r+") as f:
                        f[dataset][cells or ...] = block

            collective(comm, write_turn, func=func)  # the barrier that orders the writers


def load_hdf5(path, dataset: str = "data", *, split="auto", grid=None, sizes=None, halo=0, boundary="none",
              comm=None, verify="auto", _func: str = "load_hdf5"):
    """Read the dataset ``dataset`` of the HDF5 file ``path`` into a DArray in any layout (collective).

    Each rank opens the file read-only and reads its own hyperslab. Digests in
    the ``darray_checksums`` attribute are verified as ``verify`` says (see
    :mod:`darray.io`). A missing or damaged file, or a missing dataset, raises
    the same error on every rank.

    A dataset without that attribute (saved with ``checksum=False``, by
    another program, or the attribute was removed) loads with a
    :class:`~darray.io.MissingChecksumWarning` on every rank under
    ``verify="auto"``, raises ``ValueError`` under ``verify=True`` and loads
    silently under ``verify=False``, as a ``.npy`` file without its sidecar.
    """
    func = _func
    check_dataset_name(func, dataset)
    comm = resolve_comm(comm)
    h5py = collective(comm, _h5py, func=func)
    path = os.path.abspath(os.fspath(path))
    files = []  # the open file, closed once this rank has read everything it needs

    def open_meta():
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{func}: no such file; got {path!r}, expected an existing HDF5 file")
        try:
            f = h5py.File(path, "r")
        except OSError as e:
            raise CorruptFileError(f"{func}: not a readable HDF5 file; got {path!r} ({e})") from e
        files.append(f)
        ds = _dataset(func, h5py, f, dataset, path)
        dtype = check_dtype(func, ds.dtype)
        if ds.shape is None:
            raise ValueError(f"{func}: the dataset holds no array; got an empty (null) dataspace")
        shape = check_shape(func, path, ds.shape, dtype)
        blocks = None
        raw = ds.attrs.get(ATTRIBUTE) if verify is not False else None
        if raw is not None:
            try:
                table = json.loads(raw if isinstance(raw, str) else bytes(raw).decode())
            except (ValueError, TypeError) as e:
                raise CorruptFileError(f"{func}: damaged checksum attribute; got {type(e).__name__}: {e}") from e
            blocks = check_table(func, table, shape, dtype)
        if verify is True and blocks is None:
            raise ValueError(f"{func}: verify=True needs checksums; got {missing}, expected one written by "
                             f"darray.io.save_hdf5")
        return ds, shape, dtype, blocks

    missing = f"no {ATTRIBUTE!r} attribute on the dataset {dataset!r} of the HDF5 file {path!r}"
    try:
        ds, shape, dtype, blocks = collective(comm, open_meta, func=func)
        if blocks is None and verify is not False:
            warn_unchecked(func, missing, "the checksums darray.io.save_hdf5 stores in the dataset's attributes")
        layout = make_layout(func, shape, comm.size, split, grid, sizes, halo, boundary)
        start, stop = block_bounds(layout, comm.rank)

        def read_region(cells):
            check_fits(func, f"the region {tuple((s.start, s.stop) for s in cells)} of rank {comm.rank}",
                       tuple(s.stop - s.start for s in cells), dtype)
            out = np.empty(tuple(s.stop - s.start for s in cells), dtype=dtype.newbyteorder("="))
            if out.size:
                try:
                    ds.read_direct(out, source_sel=cells or np.s_[()])
                except Exception as e:  # damaged data fails inside HDF5
                    raise CorruptFileError(f"{func}: damaged data in {path!r}; got {type(e).__name__}: {e}") from e
            return out

        block = collective(comm, read_region, tuple(slice(a, b) for a, b in zip(start, stop)), func=func)
        if blocks:
            verify_blocks(func, comm, layout, block, blocks, read_region, verify)
    finally:
        for f in files:
            f.close()
    return wrap(block, layout, comm)
