"""darray: a distributed n-d array with a block-and-halo layout over MPI ranks.

Write NumPy / Array API code against the global array; darray keeps one
block per rank and moves only what an operation needs::

    import darray as da
    x = da.arange(10**6, dtype=da.float64)      # cut into blocks over all ranks
    print(float(da.sum(x * 2)))                 # same value on every rank

Run it on one process (no MPI needed) or with ``mpiexec -n 4 python job.py``.
"""

from __future__ import annotations

from math import e, inf, nan, pi

from ._api import methods as _api_methods  # first: hands DArray's methods implemented in _api down to _core
from ._api import fft, linalg
from ._api.linear_algebra import matmul, matrix_transpose, tensordot, vecdot
from ._api.creation import (arange, asarray, empty, empty_like, eye, from_dlpack, from_local, full, full_like, identity,
                            linspace, meshgrid, ones, ones_like, tri, tril, triu, zeros, zeros_like)
from ._core.advanced import take, take_along_axis
from ._api.cumulative import cumulative_prod, cumulative_sum, diff
from ._api.data_types import astype, can_cast, finfo, iinfo, isdtype, result_type
from ._api.dtype_objects import *  # NumPy's scalar types: float64, intc, floating, dtype, ...
from ._api.dtype_objects import __all__ as _dtype_names
from ._api.info import __array_namespace_info__
from ._api.elementwise import *  # generated from darray._core.table; listed in __all__ below
from ._api.elementwise import __all__ as _elementwise_names
from ._api.ufuncs import ufunc
from ._api.layouts import redistribute
from ._api.manipulation import (broadcast_arrays, broadcast_shapes, broadcast_to, concat, expand_dims, flip, moveaxis, permute_dims,
                                 repeat, reshape, roll, squeeze, stack, tile, unstack)
from ._api.overlap import map_overlap
from ._api.searching import argmax, argmin, count_nonzero, nonzero, searchsorted, where
from ._api.sets import isin, unique_all, unique_counts, unique_inverse, unique_values
from ._api.sorting import argsort, sort
from ._api.statistical import all, any, max, mean, min, prod, std, sum, var
from ._comm import Communicator, default_communicator
from ._comm import launched_by_mpi as _launched_by_mpi
from ._debug import CollectiveMismatch, RanksLeft
from ._config import config
from ._core import DArray
from ._core.printing import array2string, array_repr, array_str
from ._layout import Layout, plan_grid
from numpy import get_printoptions, printoptions, set_printoptions  # NumPy's print options are darray's

from . import stencil
from . import output
from .output import print, rank0  # darray.print: rank 0 only; kept out of __all__, see below
from .explain import explain
from .tracer import tracing
from . import lib  # darray.lib.stride_tricks.sliding_window_view, as numpy.lib
from ._api.numpy import protocols as _numpy_protocols  # registers np.* implementations
from ._api.numpy import nanfunctions as _numpy_nanfunctions  # nanmedian, nancumsum, ...
from ._api.numpy.names import *  # NumPy's names: arctan2, cumsum, ...; listed in __all__ below
from ._api.numpy.names import __all__ as _numpy_names
from ._api.numpy.misc import *  # ndarray, issubdtype, errstate, fromiter, ...; in __all__ below
from ._api.numpy.misc import __all__ as _numpy_misc_names
from ._api.numpy.index_tricks import *  # indices, mgrid, ogrid, ix_, unravel_index, ...
from ._api.numpy.index_tricks import __all__ as _index_trick_names
from ._api.numpy.creation import *  # logspace, geomspace, tril_indices, vander, ...
from ._api.numpy.creation import __all__ as _numpy_creation_names
from ._api.array_likes import accepting as _accepting, accepting_module as _accepting_module

globals().update(_accepting(globals()))  # array-likes and NumPy's positional options (darray._api.array_likes.ROWS)
_accepting_module(linalg)  # np.linalg.norm([3, 4]), np.fft.fft([1, 0, 0, 0])
_accepting_module(fft)

import importlib as _importlib
import sys as _sys

# `import darray.linalg` / `import darray.fft` as for NumPy (the modules live in darray._api); costs nothing
_sys.modules[__name__ + ".linalg"] = linalg
_sys.modules[__name__ + ".fft"] = fft

__array_api_version__ = "2024.12"
newaxis = None

from ._version import __version__  # pyproject.toml reads it from there

__all__ = sorted({
    "from_dlpack", "broadcast_shapes", "isin",
    "interop", "io", "from_dask", "to_dask", "lib",
    "linalg", "matmul", "matrix_transpose", "tensordot", "vecdot", "autodiff", "nn", "optim", "points", "fuse",
    "fft",
    "argmax", "argmin", "argsort", "count_nonzero", "nonzero", "searchsorted", "sort", "unique_all",
    "unique_counts", "unique_inverse", "unique_values", "where",
    "random",
    "explain", "output", "rank0",
    "array2string", "array_repr", "array_str", "get_printoptions", "printoptions", "set_printoptions",
    "trace", "tracing",
    "take", "take_along_axis",
    "stencil",
    "__array_namespace_info__",
    "cumulative_prod", "cumulative_sum", "diff",
    "broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis", "permute_dims", "repeat",
    "reshape", "roll", "squeeze", "stack", "tile", "unstack",
    "CollectiveMismatch", "RanksLeft",
    "Communicator", "DArray", "Layout", "__array_api_version__", "__version__", "all", "any", "arange", "asarray",
    "astype", "bool", "can_cast", "complex128", "complex64", "config", "default_communicator", "e", "empty",
    "empty_like", "eye", "finfo", "identity", "float32", "float64", "from_local", "full", "full_like", "iinfo", "inf", "int16",
    "int32", "int64", "int8", "isdtype", "linspace", "map_overlap", "max", "mean", "meshgrid", "min", "nan", "newaxis", "ones",
    "ones_like", "pi", "plan_grid", "prod", "redistribute", "result_type", "std", "sum", "tril", "triu", "uint16",
    "uint32", "uint64", "uint8", "var", "zeros", "zeros_like", "ufunc", *_elementwise_names, *_numpy_names,
    *_dtype_names, *_numpy_misc_names, *_index_trick_names, "load", "loadtxt", "save", "savetxt", "tri",
    "frombuffer", "fromfile", "fromstring", "genfromtxt",
    *_numpy_creation_names,
})

#: Submodules imported on first use (``darray.nn``, ``from darray import optim``, ``import darray.autodiff``):
#: a third of ``import darray`` would otherwise go to layers a NumPy script never touches (issue #18).
_ON_FIRST_USE = frozenset({"autodiff", "fuse", "interop", "io", "nn", "optim", "points", "random"})
#: Functions of the namespace that live in those submodules: name -> module, imported on first use.
_FUNCTIONS_ON_FIRST_USE = {
    "from_dask": "interop", "to_dask": "interop",
    **dict.fromkeys(["frombuffer", "fromfile", "fromstring", "genfromtxt", "load", "loadtxt", "save", "savetxt"],
                    "io.numpy_files"),  # NumPy's .npy, text and raw files
}


def __getattr__(name: str):
    if name in _ON_FIRST_USE:
        return _importlib.import_module(f"{__name__}.{name}")  # binds darray.<name>: later lookups skip this
    if name in _FUNCTIONS_ON_FIRST_USE:
        function = getattr(_importlib.import_module(f"{__name__}.{_FUNCTIONS_ON_FIRST_USE[name]}"), name)
        globals()[name] = function
        return function
    from ._api.numpy.coverage import EXCLUDED  # (a miss only: NumPy's names left out say why and what instead)

    if name in EXCLUDED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}: {EXCLUDED[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _ON_FIRST_USE | set(_FUNCTIONS_ON_FIRST_USE))


from .tracer import _trace_script

_trace_script()  # DARRAY_TRACE=1 traces the whole script: recording must start at import
output._silence_if_asked()  # DARRAY_PRINT=rank0
from ._excepthook import install as _install_excepthook

_install_excepthook()  # an uncaught error: darray's frames folded into a line (DARRAY_DEBUG=1 shows them)
if _launched_by_mpi():  # one report for an error raised on several ranks (darray._comm.failure)
    from ._comm.failure import install_error_hook as _install_error_hook

    _install_error_hook()
# `print` is darray.print (rank 0 only) but not in __all__: `from darray import *` must not replace the builtin.
