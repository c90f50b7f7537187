"""What the io test files share: the formats' save/load pairs and the rank-0 preparation and agreement helpers.

Imported as a plain module (``from _io_helpers import ...``), like ``_cases``.
"""

from __future__ import annotations

from darray.io import load, load_hdf5, load_npy, save, save_hdf5, save_npy
from darray.testing import agree

__all__ = ["FORMATS", "on_rank0", "everywhere"]

#: format -> (save, load, a file name of that format)
FORMATS = {
    "zarr": (save, load, "x.zarr"),
    "npy": (save_npy, load_npy, "x.npy"),
    "hdf5": (save_hdf5, load_hdf5, "x.h5"),
}


def on_rank0(comm, fn, *args):
    """Run ``fn`` on rank 0 only (preparing files), then a barrier."""
    if comm.rank == 0:
        fn(*args)
    comm.barrier()


def everywhere(comm, ok: bool, what: str) -> None:
    """Assert ``ok`` on every rank with one verdict (the failing ranks named), so no rank runs ahead."""
    failed = agree(comm, ok)
    assert not failed, f"{what} (failed on ranks {failed})"
