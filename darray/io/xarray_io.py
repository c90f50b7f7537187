"""xarray Datasets and DataArrays backed by DArrays, written to zarr and netCDF by every rank (collective).

:func:`to_zarr` writes in parallel, without gathering:

1. rank 0 alone writes the store's metadata, attributes and NumPy-backed
   variables (the coordinates) with xarray's own ``to_zarr`` (``compute=False``),
   each DArray-backed variable standing in as a lazy dask array of its shape
   and dtype, chunked by :func:`darray.io.zarr_io.chunk_plan` (the zarr chunks
   follow the blocks);
2. every rank then writes its own block of each DArray-backed variable with
   xarray's region writes (``to_zarr(region=..., mode="r+")``, so xarray encodes
   the block exactly as the store says: ``_FillValue``, ``scale_factor``,
   ``dtype``, ...), scheduled by :func:`darray.io.zarr_io.write_regions`: where a
   zarr chunk straddles two blocks (uneven splits), the ranks sharing it write
   in turns, never two at once;
3. a barrier: the store is complete when the call returns on any rank.

Every failure raises the same error on every rank.

:func:`to_netcdf` gathers each DArray-backed variable onto rank 0
(``x.gather(root=0)``) and rank 0 alone writes the file with xarray's
``to_netcdf``; the other ranks hold nothing and wait for it.

Why not xarray's own ``Dataset.to_zarr`` / ``to_netcdf`` on several ranks:
xarray opens and creates the store or file on every process before it looks at
any data (under ``mode="w-"`` the second rank to arrive finds the store the
first one created and fails; under ``mode="w"`` every rank deletes and recreates
it), and a chunk manager (``xarray.namedarray.parallelcompat``) is consulted
only after that, for the data. zarr then reads the DArray on its own I/O
thread, in an order that differs between ranks (each read gathers: the ranks
hang or mismatch). So at 2+ ranks a DArray refuses to be read from there
(:func:`darray._core.foreign.refuse_foreign_writer` raises an error naming these
functions); at 1 rank xarray's own methods work as for NumPy data.
"""

from __future__ import annotations

from typing import Any

import darray

from .._backend import to_numpy
from .._comm import resolve_comm
from ._atomic import agree_targets
from ._common import collective, host_block
from .zarr_io import chunk_plan, write_regions

__all__ = ["to_zarr", "to_netcdf"]

#: Encoding keys that fix the zarr chunk grid: dropped from a DArray-backed variable's own encoding (a store it
#: was read from had another layout), honoured when passed in ``encoding=``.
_GRID_KEYS = ("chunks", "preferred_chunks", "shards")


def _modules(func: str, *names: str):
    import importlib

    out = []
    for name in names:
        try:
            out.append(importlib.import_module(name))
        except ImportError as e:
            raise ImportError(f"{func}: needs {name.split('.')[0]}; install it with pip install "
                              f"'darray[io,xarray]'") from e
    return out


def _dataset(func: str, xarray, obj):
    """``obj`` as a Dataset, named as xarray's ``DataArray.to_zarr`` / ``to_netcdf`` name it.

    An unnamed DataArray, or one named like a coordinate or dim, is stored under
    xarray's reserved variable name (and its name in an attribute), so that
    ``xarray.open_dataarray`` gives it back.
    """
    if isinstance(obj, xarray.Dataset):
        return obj
    if isinstance(obj, xarray.DataArray):
        from xarray.backends.api import DATAARRAY_NAME, DATAARRAY_VARIABLE

        if obj.name is None:
            return obj.to_dataset(name=DATAARRAY_VARIABLE)
        if obj.name in obj.coords or obj.name in obj.dims:
            ds = obj.to_dataset(name=DATAARRAY_VARIABLE)
            ds.attrs[DATAARRAY_NAME] = obj.name
            return ds
        return obj.to_dataset()
    raise TypeError(f"{func}: expected an xarray.Dataset or xarray.DataArray; got {type(obj).__name__}")


def _darrays(ds) -> dict[str, Any]:
    """The DArray-backed variables of ``ds`` (data variables and coordinates), in the Dataset's order."""
    return {name: var for name, var in ds.variables.items() if isinstance(var.data, darray.DArray)}


def _inputs(func: str, obj):
    """``(xarray, the Dataset, its DArray-backed variables, their communicator)`` of a writer's ``obj``."""
    xarray = _modules(func, "xarray")[0]
    ds = _dataset(func, xarray, obj)
    arrays = _darrays(ds)
    return xarray, ds, arrays, _communicator(func, arrays)


def _communicator(func: str, arrays):
    comms = [var.data.comm for var in arrays.values()]
    comm = comms[0] if comms else resolve_comm(None)
    for name, c in zip(arrays, comms):
        if c.size != comm.size or c.rank != comm.rank:
            raise ValueError(f"{func}: the DArrays live on different communicators; got {name!r} on "
                             f"{c.size} ranks, expected every DArray-backed variable on the same {comm.size}")
    return comm


def _replaced(xarray, ds, data: dict[str, Any], drop_grid: bool = False):
    """``ds`` with the variables named in ``data`` holding that data instead (same dims, attrs, encoding)."""
    variables = {}
    for name, var in ds.variables.items():
        if name in data:
            var = var.copy(deep=False, data=data[name])
            if drop_grid:
                var.encoding = {k: v for k, v in var.encoding.items() if k not in _GRID_KEYS}
        variables[name] = var
    out = xarray.Dataset({k: variables[k] for k in ds.data_vars}, coords={k: variables[k] for k in ds.coords},
                         attrs=ds.attrs)
    out.encoding = dict(ds.encoding)
    return out


def to_zarr(obj, store, *, mode: str = "w-", encoding: dict | None = None, consolidated: bool | None = None,
            zarr_format: int | None = None, **kwargs) -> None:
    """``obj.to_zarr(store, ...)`` for DArray-backed xarray data, each rank writing its own blocks (collective).

    Every rank calls it with the same ``obj`` (the same variables, each
    DArray-backed one the same distributed array) and the same ``store`` path,
    on a file system every rank sees. Nothing is gathered: rank 0 writes the
    metadata and the NumPy-backed variables, then every rank writes its block
    of each DArray-backed variable (see :mod:`darray.io.xarray_io`).
    ``xarray.open_zarr(store)`` reads it back (``open_dataarray(store,
    engine="zarr")`` for an unnamed DataArray).

    Parameters
    ----------
    obj : xarray.Dataset or xarray.DataArray
        Variables backed by DArrays, NumPy, or anything xarray writes.
    store : str or os.PathLike
        The zarr store's directory, the same on every rank.
    mode : {"w-", "w"}
        ``"w-"`` (default, as xarray's) refuses an existing store, ``"w"``
        replaces it. Appending and region writes are not supported.
    encoding : dict, optional
        xarray's per-variable encoding. The zarr chunks of a DArray-backed
        variable follow its blocks unless ``encoding[name]["chunks"]`` says
        otherwise (any chunks work: ranks sharing a chunk write in turns).
    consolidated, zarr_format, **kwargs
        Passed on to xarray's ``to_zarr`` (``storage_options``,
        ``write_empty_chunks``, ...).

    Examples
    --------
    >>> import os, tempfile, numpy, xarray, darray as da
    >>> from darray.interop import to_xarray, to_zarr
    >>> p = os.path.join(tempfile.mkdtemp(), "t.zarr")       # the same path on every rank
    >>> a = to_xarray(da.arange(6.0), dims=("x",), coords={"x": numpy.arange(6) * 10}, name="t")
    >>> to_zarr(a, p, consolidated=False)
    >>> xarray.open_zarr(p, consolidated=False)["t"].values.tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    """
    func = "to_zarr"
    if mode not in ("w-", "w"):
        raise ValueError(f"{func}: unsupported mode; got {mode!r}, expected 'w-' or 'w' (a new or replaced store)")
    for key in ("region", "append_dim", "compute"):
        if key in kwargs:
            raise TypeError(f"{func}: {key}= is not supported; got {key}={kwargs[key]!r}, expected a whole new store")
    xarray, ds, arrays, comm = _inputs(func, obj)
    xarray, dask_array, zarr = collective(comm, _modules, func, "xarray", "dask.array", "zarr", func=func)
    path = agree_targets(func, comm, [store])[0]  # (the same error on every rank, also for different paths)
    encoding = dict(encoding or {})
    passed = {k: v for k, v in kwargs.items() if k in ("storage_options", "write_empty_chunks")}  # (the data's)
    grids = {}
    for name, var in arrays.items():
        wanted = (encoding.get(name) or {}).get("chunks")
        grids[name] = tuple(wanted) if wanted is not None else chunk_plan(var.data.layout, var.dtype.itemsize)[0]

    def metadata():
        if comm.rank == 0:
            lazy = {name: dask_array.zeros(var.shape, dtype=var.dtype, chunks=grids[name] or ())
                    for name, var in arrays.items()}  # never computed: stands for the data in the metadata
            template = _replaced(xarray, ds, lazy, drop_grid=True)
            template.to_zarr(path, mode=mode, encoding=encoding, compute=False, consolidated=consolidated,
                             zarr_format=zarr_format, **kwargs)

    collective(comm, metadata, func=func)
    for name, var in arrays.items():
        x = var.data
        block = host_block(x)
        stored = collective(comm, lambda name=name: zarr.open_array(path, path=name, mode="r"), func=func)
        grid = tuple(stored.shards or stored.chunks)

        def put(cells, local, name=name, var=var, block=block):
            piece = xarray.Dataset({name: xarray.Variable(var.dims, block[local])})
            region = {dim: cell for dim, cell in zip(var.dims, cells)}
            piece.to_zarr(path, mode="r+", region=region, consolidated=False, safe_chunks=False,
                          zarr_format=zarr_format, **passed)

        write_regions(comm, x.layout, grid, put, func=func)


def to_netcdf(obj, path, **kwargs) -> None:
    """``obj.to_netcdf(path, ...)`` for DArray-backed xarray data: gathered onto rank 0, which alone writes.

    Collective: every rank calls it with the same ``obj`` and ``path``. Each
    DArray-backed variable is gathered onto rank 0 (``x.gather(root=0)``: rank
    0 must hold the whole data in memory), rank 0 writes the file with
    xarray's ``to_netcdf(path, **kwargs)`` (engine, format, encoding, ...),
    and the other ranks wait for it and return; a failure raises the same
    error on every rank. Read it back with ``xarray.open_dataset(path)``.

    Examples
    --------
    >>> import os, tempfile, xarray, darray as da
    >>> from darray.interop import to_xarray, to_netcdf
    >>> p = os.path.join(tempfile.mkdtemp(), "t.nc")         # the same path on every rank
    >>> to_netcdf(to_xarray(da.arange(4.0), dims=("x",), name="t"), p)
    >>> xarray.open_dataset(p)["t"].values.tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    func = "to_netcdf"
    if path is None:
        raise TypeError(f"{func}: expected a path; got None (the file's bytes are not returned under MPI)")
    xarray, ds, arrays, comm = _inputs(func, obj)
    path = agree_targets(func, comm, [path])[0]
    gathered = {name: var.data.gather(root=0) for name, var in arrays.items()}  # collective, in the same order

    def write():
        if comm.rank == 0:
            data = {name: to_numpy(g) for name, g in gathered.items()}
            _replaced(xarray, ds, data).to_netcdf(path, **kwargs)

    collective(comm, write, func=func)
