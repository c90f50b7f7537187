"""Other libraries converting a DArray with ``numpy.asarray`` (2+ ranks): xarray's writers refused, others warned.

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

Any other library function that converts a cut DArray through
``__array__`` (``scipy.ndimage.gaussian_filter(x, 2)``, ``numpy.vectorize``,
``numpy.lib.stride_tricks.as_strided``, ``matplotlib``'s ``imshow``, ...)
gathers the whole array onto every rank and runs on it there, whole:
correct, but nothing is distributed. :func:`warn_library_gather` says so
(a :class:`~darray._core.element_reads.PerformanceWarning`, once per line of
the user's code, on rank 0), naming the library function. The user's own
``numpy.asarray(x)`` is the documented explicit gather and does not warn (it
warns above ``darray.config.gather_warn_size`` elements, as any gather).
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
import warnings

from .._errors import in_darray
from .element_reads import PerformanceWarning

__all__ = ["refuse_foreign_writer", "warn_library_gather", "library_caller", "ZARR_THREAD"]

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


_LIBRARIES = tuple(sorted({os.path.abspath(path) + os.sep for key in ("stdlib", "platstdlib", "purelib", "platlib")
                           if (path := sysconfig.get_paths().get(key))}))
_warned: set[tuple[str, int]] = set()


def _darray(frame) -> bool:
    return in_darray(frame.f_code.co_filename)


def _library(frame) -> bool:
    filename = frame.f_code.co_filename
    return filename.startswith("<frozen") or os.path.abspath(filename).startswith(_LIBRARIES) or (
        os.sep + "site-packages" + os.sep in filename or os.sep + "dist-packages" + os.sep in filename)


def library_caller(frame):
    """``(library frame, user frame)`` when ``frame`` (the Python caller of ``__array__``) is a library's
    code called from the user's, else None (the user's own ``numpy.asarray(x)``, or darray's own gathers)."""
    if frame is None or _darray(frame) or not _library(frame):
        return None
    outer = frame
    while frame is not None and _library(frame) and not _darray(frame):
        outer, frame = frame, frame.f_back
    if frame is None or _darray(frame):
        return None
    return outer, frame


def warn_library_gather(x, frame) -> None:
    """Warn (rank 0, once per user line) when a library function gathers the cut DArray ``x`` through ``__array__``.

    ``frame`` is the Python frame that called ``__array__`` (NumPy's C calls it from there).

    Examples
    --------
    >>> import darray as da
    >>> warn_library_gather(da.ones(4), sys._getframe())  # one rank, or a replicated array: nothing moves
    """
    if x._comm.size == 1 or x._layout.is_replicated:
        return
    found = library_caller(frame)
    if found is None:
        return
    library, user = found
    site = (user.f_code.co_filename, user.f_lineno)
    if site in _warned:
        return
    _warned.add(site)
    if x._comm.rank != 0:
        return
    module = library.f_globals.get("__name__", "?")
    name = getattr(library.f_code, "co_qualname", library.f_code.co_name)
    warnings.warn_explicit(
        f"numpy.asarray: {module}.{name} gathered a DArray of shape {x.shape} cut over {x._comm.size} ranks "
        f"(through its __array__): every rank now holds the whole array and runs {name} on all of it. Use "
        f"darray's own function if there is one, apply it per block (darray.map_overlap, or x.local), or gather "
        f"in your code first (numpy.asarray(x) or x.gather(), which do not warn)",
        PerformanceWarning, site[0], site[1])
