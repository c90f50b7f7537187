"""A distributed DArray refuses to be written by xarray's own ``to_zarr`` / ``to_netcdf`` (2+ ranks).

xarray's writers open the store or file on every rank and then convert the
data with ``numpy.asarray`` (a gather, collective):

- ``Dataset.to_zarr``: zarr reads the array on its own I/O thread (named
  ``"zarr_io"``), chunk by chunk in an order that differs between ranks, so
  the ranks' gathers do not meet (a hang or a :class:`CollectiveMismatch`),
  and every rank writes every chunk;
- ``to_netcdf``: every rank writes the whole file, all at once, to one path.

:func:`refuse_foreign_writer`, called by ``DArray.__array__`` when the array
lives on more than one rank, recognises both (zarr's thread; xarray's
``ArrayWriter.add`` on the caller's stack, looked for only then, so a plain
``numpy.asarray`` costs nothing more) and raises an error naming
:func:`darray.interop.to_zarr` / :func:`darray.interop.to_netcdf`, the
collective writers. The same check runs on every rank at the same point, so
every rank that gets there raises it (no rank waits for the others).
"""

from __future__ import annotations

import sys
import threading

__all__ = ["refuse_foreign_writer", "ZARR_THREAD"]

#: The name of the thread on which zarr (v3) runs its event loop: every array read of a zarr write happens there.
ZARR_THREAD = "zarr_io"
#: How many frames up the stack to look for xarray's ArrayWriter.
_DEPTH = 40


def _in_xarray_writer() -> bool:
    frame = sys._getframe(2)
    for _ in range(_DEPTH):
        if frame is None:
            return False
        if frame.f_code.co_name == "add" and frame.f_globals.get("__name__") == "xarray.backends.common":
            return True
        frame = frame.f_back
    return False


def refuse_foreign_writer(size: int) -> None:
    """Raise ValueError when xarray's own writers convert a DArray of a ``size``-rank communicator (``size > 1``).

    Examples
    --------
    >>> refuse_foreign_writer(1)  # one rank: xarray's writers work as for NumPy data
    """
    if size <= 1:
        return
    if threading.current_thread().name == ZARR_THREAD:
        raise ValueError(f"numpy.asarray: xarray's to_zarr cannot write a DArray distributed over {size} ranks; got "
                         f"a read on zarr's I/O thread (every rank opens the store, and zarr reads the array in an "
                         f"order that differs between ranks), expected darray.interop.to_zarr(ds, path), which "
                         f"writes each rank's blocks in parallel")
    if _in_xarray_writer():
        raise ValueError(f"numpy.asarray: xarray's to_netcdf cannot write a DArray distributed over {size} ranks; "
                         f"got a write by xarray's backend on every rank (every rank would write the whole file to "
                         f"one path), expected darray.interop.to_netcdf(ds, path), which gathers onto rank 0 and "
                         f"writes there alone (or darray.interop.to_zarr(ds, path), which writes in parallel)")
