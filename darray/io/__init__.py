"""Parallel I/O: zarr v3 stores, ``.npy`` files and HDF5 datasets, written and read by every rank.

Every function here is collective (every rank of the array's communicator
calls it with the same path) and moves only each rank's own block:

- :func:`save` / :func:`load`: the format chosen from the path (``.npy``, ``.h5``/``.hdf5``, else a
  zarr store) or, when loading, from what is there (:mod:`darray.io.formats`);
- zarr v3 stores, chunks aligned to the blocks (:mod:`darray.io.zarr_io`);
- :func:`save_npy` / :func:`load_npy`: a standard ``.npy`` file (``os.pwrite`` / MPI-IO);
- :func:`save_hdf5` / :func:`load_hdf5`: an HDF5 dataset (parallel h5py when built with MPI,
  otherwise rank-ordered writes).

Saves are atomic (temporary name, then a rename by rank 0 once every rank
has written; the staging entries a killed save leaves behind are removed by
the next save to the same target, or by :func:`clean_staging`) and store a
SHA-256 digest per block (over the dtype, the shape and the block's bounds
as well as its bytes, so that metadata edited to read the same bytes as
another dtype or shape fails verification); loads read any layout, validate
shape and dtype, verify the digests, and raise the same error on every rank
for a missing, truncated or damaged file
(:class:`FileNotFoundError`, :class:`CorruptFileError`, :class:`ChecksumError`,
:class:`MissingChunkError` for a deleted zarr chunk). A save killed at any
step of its commit, any number of times in a row, leaves the last committed
data loadable and verifiable. Data without checksums (a ``.npy`` file without
its sidecar, a zarr store or HDF5 dataset without its checksum attribute)
loads with a :class:`MissingChecksumWarning` on every rank (an error under
``verify=True``).

Data safety: nothing is ever unpickled (object, string and record dtypes and
object codecs are refused before any data is decoded); save targets are
checked on every rank before anything is written (no ``""``/``"."``/``".."``,
never over a directory that is not a zarr array store, the same path on every
rank) and written through a private staging directory (:mod:`darray.io._atomic`),
so no pre-planted symlink is followed; zarr keys, HDF5 links and external
storage never lead outside the file or store being read; hostile metadata
(negative or huge shapes, zero chunks, more than the machine's memory) raises
the same clear error on every rank.

Checksum verification on load (``verify=``): each rank checks the stored
blocks that lie whole inside its own region, from the data it read anyway
(free when reading with the layout that saved). Stored blocks that no rank
holds whole (reading with another layout) are re-read and checked, spread
over the ranks, when they total at most ``VERIFY_MAX_BYTES`` (64 MiB) with
``verify="auto"``, always with ``verify=True``; ``verify=False`` skips all.
"""

from ._common import VERIFY_MAX_BYTES, ChecksumError, CorruptFileError, MissingChecksumWarning, MissingChunkError
from .formats import load, save
from .hdf5_io import load_hdf5, save_hdf5
from .npy_io import load_npy, save_npy
from .staging import clean_staging

__all__ = ["ChecksumError", "CorruptFileError", "MissingChecksumWarning", "MissingChunkError", "VERIFY_MAX_BYTES",
           "clean_staging", "load", "load_hdf5", "load_npy", "save", "save_hdf5", "save_npy"]
