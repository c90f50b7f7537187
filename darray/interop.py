"""Dask and xarray interoperability, without gathering a field on one process.

- :func:`from_dask`: each rank computes only ``dx[its region]`` (the dask
  graph is the same on every rank; only the tasks feeding that region run).
- :func:`to_dask`: on one process (or for a replicated array) a dask array
  whose single chunk is this rank's block, zero-copy. A dask array is one
  process's view of the whole array, so for an array distributed over
  several ranks it goes through storage: ``to_dask(x, via_zarr=path)`` saves
  with :func:`darray.io.save` and returns ``dask.array.from_zarr(path)``.
- xarray: a DArray is a duck array; ``xarray.DataArray(x, dims=...)`` (or
  :func:`to_xarray`) wraps it without a copy and arithmetic, reductions,
  ``isel``, ``where``, ``rolling``, ``median``, ``quantile``, ``cumsum`` ...
  keep returning DArrays (docs/guide/pipelines.md lists them).
  :func:`from_xarray` turns a DataArray backed by NumPy, dask or a DArray
  into a DArray. xarray's ``.interp()`` hands the data to SciPy, which
  gathers it with ``numpy.asarray``; :func:`interp` is the distributed
  equivalent for methods ``linear`` and ``nearest``.
  :func:`to_zarr` / :func:`to_netcdf` write DArray-backed Datasets and
  DataArrays at any number of ranks (xarray's own ``to_zarr`` /
  ``to_netcdf`` work at 1 rank only; see :mod:`darray.io.xarray_io`):
  ``to_zarr`` writes each rank's blocks in parallel, ``to_netcdf`` gathers
  onto rank 0, which alone writes the file.

A DArray as a dask chunk source: ``dask.array.from_array(x, chunks=...)``
reads each chunk with ``x[region]``. The chunks are DArrays (dask keeps them
as they are, ``asarray=True`` included, since a DArray is array-like), so
dask's operations on them are darray operations and ``compute`` returns a
DArray (``.gather()`` or ``numpy.asarray`` it for NumPy). Supported usage:

- one process: any scheduler, any chunks;
- under MPI: every chunk task is a COLLECTIVE (``x[region]`` and the darray
  operations on the chunks communicate), so every rank must run the same
  tasks in the same order. That holds when every rank builds the same graph,
  gives every ``from_array`` a ``name=`` and a NumPy ``meta=`` that are the
  same on every rank (dask cannot tokenize a distributed array identically on
  every rank), computes with ``scheduler="synchronous"`` (one task at a
  time), and runs with the same ``PYTHONHASHSEED`` (dask orders tasks that
  are equally urgent by iterating over sets of keys, whose order follows
  Python's per-process string hashing)::

      # PYTHONHASHSEED=0 mpiexec -n 4 python job.py
      dx = dask.array.from_array(x, chunks=(1000, 1000), name="x",
                                 meta=numpy.empty((0, 0), x.dtype))
      total = dx.sum().compute(scheduler="synchronous")   # a 0-d DArray

  Every rank runs every task. Without these, or with threaded and
  distributed schedulers, the ranks run the tasks in different orders and
  hang. To hand a large distributed array to dask's own (NumPy) machinery,
  use :func:`to_dask` with ``via_zarr=`` (nothing gathered; each dask task
  reads only its chunk of the store).
"""

from __future__ import annotations

import math

import numpy as np

import darray

from ._comm import resolve_comm
from ._core.redistribute import make_layout
from .io.xarray_io import to_netcdf, to_zarr  # DArray-backed xarray data to files, collectively
from .io.zarr_io import save as save_zarr  # a zarr store whatever the path's extension

__all__ = ["from_dask", "to_dask", "to_xarray", "from_xarray", "interp", "to_zarr", "to_netcdf"]


def _dask_array(func: str):
    try:
        import dask.array
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(f"{func}: needs dask; install it with pip install 'darray[dask]'") from e
    return dask.array


def from_dask(dx, /, *, split="auto", grid=None, sizes=None, halo=0, boundary="none", comm=None,
              scheduler=None):
    """A DArray from a dask array: each rank computes only its own block.

    Every rank passes the same dask array (the same graph). ``scheduler``
    defaults to ``"threads"`` on one rank and ``"synchronous"`` under MPI
    (ranks already occupy the cores).

    Examples
    --------
    >>> import dask.array, darray as da
    >>> from darray.interop import from_dask
    >>> x = from_dask(dask.array.arange(10.0, chunks=3), split=0)
    >>> float(da.sum(x))
    45.0
    """
    func = "from_dask"
    dask_array = _dask_array(func)
    if not isinstance(dx, dask_array.Array):
        raise TypeError(f"{func}: expected a dask array; got {type(dx).__name__}")
    if any(isinstance(n, float) and math.isnan(n) for n in dx.shape):
        raise ValueError(f"{func}: unknown chunk sizes; got shape {dx.shape}, expected known sizes "
                         f"(call dx.compute_chunk_sizes() first)")
    dtype = np.dtype(dx.dtype)
    if dtype.kind not in "biufc" or dtype.fields is not None:
        raise TypeError(f"{func}: unsupported dtype; got {dtype}, expected bool, int, uint, float or complex")
    comm = resolve_comm(comm)
    layout = make_layout(func, dx.shape, comm.size, split=split, grid=grid, sizes=sizes, halo=halo,
                         boundary=boundary)
    cells = layout.block_slices(comm.rank)
    shape = layout.block_shape(comm.rank)
    if math.prod(shape) == 0:
        block = np.empty(shape, dtype=dtype)
    else:
        if scheduler is None:
            scheduler = "threads" if comm.size == 1 else "synchronous"
        block = np.asarray(dx[cells].compute(scheduler=scheduler) if cells else dx.compute(scheduler=scheduler))
        block = np.asarray(block, dtype=dtype, order="C")
    return darray.from_local(block, split=layout.split, grid=layout.dims, shape=layout.shape, halo=layout.halo,
                             boundary=layout.boundary, comm=comm)


def to_dask(x, /, *, via_zarr=None):
    """A dask array of ``x``.

    - one rank, or a replicated layout: the dask array's one chunk is this
      rank's block itself (zero-copy: the graph holds ``x.local``, so later
      writes to ``x`` show through; dask's ``compute`` returns new arrays);
    - distributed over several ranks: pass ``via_zarr=path`` (collective: the
      array is saved with :func:`darray.io.save`, every rank gets
      ``dask.array.from_zarr(path)``); without it this raises ValueError,
      since one process's dask array of the whole field would gather it.
      ``path`` must be the same on every rank and on a file system every
      rank sees. The store's chunks tile the blocks (see
      :mod:`darray.io.zarr_io`: for even splits each block is one chunk, or
      several of at most 16 MiB), and a rank that computes ``dx[region]``
      reads only the chunks it touches.
      The returned array reads the store lazily: keep the store until the
      dask array is computed (a later save to the same path replaces it).

    Examples
    --------
    >>> import darray as da
    >>> from darray.interop import to_dask
    >>> float(to_dask(da.arange(4.0, split=None)).sum().compute())
    6.0
    """
    func = "to_dask"
    if not isinstance(x, darray.DArray):
        raise TypeError(f"{func}: expected a DArray; got {type(x).__name__}")
    dask_array = _dask_array(func)
    if via_zarr is not None:
        save_zarr(via_zarr, x)
        return dask_array.from_zarr(str(via_zarr))
    if x.comm.size > 1 and not x.layout.is_replicated:
        raise ValueError(f"{func}: the array is distributed over {x.comm.size} ranks and a dask array is one "
                         f"process's view of all of it; got layout split={x.layout.split}, expected one rank or a "
                         f"replicated array. Save it with darray.io.save(path, x) and open it with "
                         f"dask.array.from_zarr(path), or call to_dask(x, via_zarr=path) which does both")
    # dask.array.from_array copies NumPy input; a one-task graph holding the block itself does not
    import uuid

    local = x.local
    name = f"darray-{uuid.uuid4().hex}"
    return dask_array.Array({(name, *(0,) * local.ndim): local}, name, chunks=tuple((n,) for n in local.shape),
                            dtype=x.dtype)


def to_xarray(x, /, dims=None, *, coords=None, name=None, attrs=None):
    """``xarray.DataArray(x, dims=..., ...)``: the DataArray's ``.data`` is ``x`` itself (no copy)."""
    try:
        import xarray
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("darray.interop: needs xarray; install it with pip install xarray") from e
    if not isinstance(x, darray.DArray):
        raise TypeError(f"to_xarray: expected a DArray; got {type(x).__name__}")
    return xarray.DataArray(x, dims=dims, coords=coords, name=name, attrs=attrs)


def from_xarray(xa, /, *, split="auto", grid=None, sizes=None, halo=0, boundary="none", comm=None):
    """A DArray from an ``xarray.DataArray`` backed by a DArray (returned as is), dask, or NumPy.

    Dask-backed data is computed blockwise (:func:`from_dask`); NumPy-backed
    data must be the same on every rank (each keeps its block).
    """
    data = getattr(xa, "data", None)
    if data is None:
        raise TypeError(f"from_xarray: expected an xarray.DataArray; got {type(xa).__name__}")
    if isinstance(data, darray.DArray):
        return data
    try:
        import dask.array

        if isinstance(data, dask.array.Array):
            return from_dask(data, split=split, grid=grid, sizes=sizes, halo=halo, boundary=boundary, comm=comm)
    except ImportError:  # pragma: no cover - dask is optional
        pass
    return darray.asarray(np.asarray(data), split=split, grid=grid, sizes=sizes, halo=halo, boundary=boundary,
                          comm=comm)


def _xarray(func: str):
    try:
        import xarray
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(f"{func}: needs xarray; install it with pip install xarray") from e
    return xarray


def _neighbours(func: str, old: np.ndarray, new: np.ndarray, method: str):
    """SciPy ``interp1d``'s neighbours of ``new`` in the (unsorted) coordinate ``old``: indices and weights.

    Returns (lo, hi, slope factor, offset from lo, outside mask); ``nearest`` uses ``lo`` only.
    """
    order = np.argsort(old, kind="stable")
    xs = old[order]
    if xs.shape[0] < 2 or np.any(np.diff(xs) == 0):
        raise ValueError(f"{func}: the coordinate needs at least two distinct values; got {old!r}, "
                         "expected a 1-d coordinate without repeats")
    outside = ~((new >= xs[0]) & (new <= xs[-1]))  # NaN targets too
    if method == "nearest":  # interp1d: the midpoints decide, a tie goes to the lower neighbour
        idx = np.clip(np.searchsorted((xs[1:] + xs[:-1]) / 2.0, new, side="left"), 0, xs.shape[0] - 1)
        return order[idx], None, None, None, outside
    hi = np.clip(np.searchsorted(xs, new, side="left"), 1, xs.shape[0] - 1)
    lo = hi - 1
    return order[lo], order[hi], 1.0 / (xs[hi] - xs[lo]), new - xs[lo], outside


def interp(xa, coords=None, /, *, method: str = "linear", **coords_kwargs):
    """``xa.interp(coords, method=...)`` for a DataArray backed by a DArray, distributed.

    Interpolates along dims with 1-d numeric coordinates (or none: positions
    ``0, 1, ...``) to 1-d or scalar targets, as xarray does with SciPy's
    ``interp1d`` (``method="linear"`` or ``"nearest"``; NaN outside the
    coordinate's range; non-dim coordinates along the dim are interpolated
    too). Only the two neighbouring slabs of each target move: along a cut
    dim they are fetched from their owners (``x[..., idx, ...]``), along an
    uncut dim every rank picks them from its own block. xarray's own
    ``.interp()`` hands the data to SciPy, which gathers it on every rank
    with ``numpy.asarray``; this function never gathers.

    Examples
    --------
    >>> import numpy, xarray, darray as da
    >>> from darray.interop import interp, to_xarray
    >>> a = to_xarray(da.arange(5.0) * 2, dims=("x",), coords={"x": numpy.arange(5.0)})
    >>> [float(v) for v in interp(a, x=[0.5, 3.25]).data.gather()]
    [1.0, 6.5]
    """
    func = "interp"
    xarray = _xarray(func)
    if not isinstance(xa, xarray.DataArray) or not isinstance(xa.data, darray.DArray):
        raise TypeError(f"{func}: expected an xarray.DataArray backed by a DArray; got {type(xa).__name__}")
    if method not in ("linear", "nearest"):
        raise ValueError(f"{func}: unsupported method; got {method!r}, expected 'linear' or 'nearest'")
    targets = dict(coords or {}, **coords_kwargs)
    for dim, new in targets.items():
        if dim not in xa.dims:
            raise ValueError(f"{func}: not a dimension of the array; got {dim!r}, expected one of {xa.dims}")
        if isinstance(new, (xarray.DataArray, darray.DArray)) or np.ndim(new) > 1:
            raise TypeError(f"{func}: targets must be scalars or 1-d sequences of numbers; got "
                            f"{type(new).__name__} for {dim!r}, expected those (advanced interpolation: xarray's "
                            ".interp)")
    if xa.dtype.kind not in "fc":  # SciPy's interp1d interpolates in float64
        xa = xa.astype(np.float64)
    for dim, new in targets.items():
        xa = _interp_dim(func, xarray, xa, dim, new, method)
    return xa


def _interp_dim(func: str, xarray, xa, dim, new, method: str):
    scalar = np.ndim(new) == 0
    new = np.atleast_1d(np.asarray(new, dtype=np.float64))
    old = np.asarray(xa[dim].values if dim in xa.coords else np.arange(xa.sizes[dim]), dtype=np.float64)
    lo, hi, inverse_step, offset, outside = _neighbours(func, old, new, method)
    axis = xa.get_axis_num(dim)
    shape = (-1,) + (1,) * (xa.ndim - axis - 1)  # broadcasts along ``axis``
    below = xa.isel({dim: lo})
    data = below.data
    if method == "linear":  # interp1d's formula: slope * (x_new - x_lo) + y_lo
        above = xa.isel({dim: hi}).data
        data = (above - data) * inverse_step.reshape(shape) * offset.reshape(shape) + data
    if outside.any():
        data = darray.where(darray.asarray(outside.reshape(shape), split=None, comm=data.comm), np.nan, data)
    out = below.copy(data=data)
    along = {name: c for name, c in xa.coords.items() if dim in c.dims and name != dim}
    for name, c in along.items():  # 1-d numeric coordinates along dim: interpolated the same way (NumPy, small)
        if c.ndim == 1 and c.dtype.kind in "iuf":
            v = np.asarray(c.values, dtype=np.float64)
            w = v[lo] if method == "nearest" else (v[hi] - v[lo]) * inverse_step * offset + v[lo]
            out = out.assign_coords({name: (dim, np.where(outside, np.nan, w))})
        else:
            out = out.drop_vars(name)
    out = out.assign_coords({dim: new})
    return out.isel({dim: 0}) if scalar else out
