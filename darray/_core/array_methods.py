"""DArray's methods and properties (``x.sum()``, ``x.T``, ``x.real``, ``len(x)``, ``repr(x)``, ...), as functions.

Each function here is installed on :class:`~darray._core.array.DArray` under
its own name by :mod:`darray._core.dispatch`, which lists them in its table
(family ``method`` or ``property``); the operators, indexing and the methods
generated from NumPy's table come from other modules. A method is written as
in a class body (``self`` first); a property is a :class:`property` object.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from types import GenericAlias, ModuleType
from typing import Any

import array_api_compat
from numpy import can_cast as _np_can_cast, integer as _np_integer, ndarray as _ndarray

from .._backend import to_numpy
from .._comm import Communicator
from .._config import config
from .._errors import message
from .._layout import Layout
from . import manipulation as _manipulation, methods as _methods, printing as _printing, protocols as _protocols
from . import reductions as _reductions, redistribute as _redistribute
from .array import DArray
from .dtypes import to_numpy_dtype
from .elementwise import astype as _astype
from .foreign import refuse_foreign_writer, warn_library_gather
from .halo import exchange_halos as _exchange_halos

__all__ = ["DArray"]  # (the functions are installed on DArray, not imported from here)


def _operators():
    return _protocols.OPERATORS


@property
def layout(self) -> Layout:
    """How the global array is cut into blocks (replicated on every rank)."""
    return self._layout


@property
def comm(self) -> Communicator:
    return self._comm


@property
def shape(self) -> tuple[int, ...]:
    return self._layout.shape


@shape.setter
def shape(self, shape) -> None:
    """NumPy's in-place reshape (``x.shape = n``): ``x`` takes the blocks and layout of ``x.reshape(n)``.

    Collective. As in NumPy, a view whose new shape needs its cells copied raises AttributeError.
    """
    new = _methods.targets.reshape(self, shape)
    if new is self:
        return
    if new._link is not None and self._link is not None:
        raise AttributeError(message("shape", "incompatible shape for in-place modification of a view",
                                     shape, "x.reshape(shape), which may copy"))
    self._block, self._layout = new._block, new._layout
    self._local = self._halo_exchange = None
    self._halo_fresh = False


@property
def flags(self):
    """NumPy's flags (:mod:`darray._core.flags`): ``x.flags.writeable = False`` makes ``x`` read-only."""
    from .flags import Flags

    return Flags(self)


def setflags(self, write=None, align=None, uic=None) -> None:
    """NumPy's ``setflags``: ``write=False`` makes every write to ``x`` raise ValueError, on every rank."""
    from .flags import setflags

    setflags(self, write, align, uic)


@property
def ndim(self) -> int:
    return len(self._layout.shape)


@property
def size(self) -> int:
    n = 1
    for s in self._layout.shape:
        n *= s
    return n


@property
def dtype(self):
    """The NumPy dtype equal to the local block's dtype."""
    return to_numpy_dtype(self._block.dtype)


@property
def device(self):
    """The device of the local block."""
    return array_api_compat.device(self._block)


@property
def split(self) -> tuple:
    return self._layout.split


@property
def grid(self) -> tuple[int, ...]:
    return self._layout.dims


@property
def halo(self) -> tuple[int, ...]:
    return self._layout.halo


@property
def local(self) -> Any:
    """This rank's owned cells: a view into the padded block (no copy)."""
    view = self._local
    if view is None:
        layout = self._layout
        view = self._block[layout.interior(self._comm.rank)] if layout.has_halo else self._block
        self._local = view
    return view


@property
def block(self) -> Any:
    """This rank's storage: owned cells plus ghost cells (valid after a halo exchange)."""
    return self._block


def __matmul__(self, other):
    other = _sequence(other)
    if not hasattr(other, "shape"):
        return NotImplemented
    return _operators()["matmul"](self, other)


def __rmatmul__(self, other):
    other = _sequence(other)
    if not hasattr(other, "shape"):
        return NotImplemented
    return _operators()["matmul"](other, self)


def __imatmul__(self, other):
    if not hasattr(other, "shape"):
        return NotImplemented
    result = _operators()["matmul"](self, other)
    if result.shape != self.shape:
        raise ValueError(message("__imatmul__", "in-place result would change the shape", result.shape,
                                 f"{self.shape}"))
    if result.dtype != self.dtype:
        raise TypeError(message("__imatmul__", "in-place result would change the dtype", result.dtype,
                                f"{self.dtype}"))
    plain = self._layout.without_halo()
    self.local[...] = _redistribute.redistribute_to(result, plain).local
    self._halo_fresh = False
    return self


@property
def T(self) -> DArray:
    """The array with its axes reversed, as NumPy's ``x.T`` (0-d and 1-d: the array itself; no communication)."""
    ndim = len(self._layout.shape)
    if ndim < 2:
        return self
    return _manipulation.permuted(self, (1, 0) if ndim == 2 else tuple(range(ndim - 1, -1, -1)))


@property
def mT(self) -> DArray:
    """Transpose of the last two axes (no communication)."""
    if self.ndim < 2:
        raise ValueError(message("mT", "needs at least 2 dimensions", self.shape))
    return _manipulation.permuted(self, (*range(self.ndim - 2), self.ndim - 1, self.ndim - 2))


def __len__(self) -> int:
    if not self.shape:
        raise TypeError(message("__len__", "len() of unsized object (a 0-d array)", self.shape,
                                "an array with dimensions"))
    return self.shape[0]


def gather(self, root: int | None = None) -> Any:
    """The whole array as one local array: on every rank (``root=None``) or on ``root`` only.

    Moves the whole array: use it for results, not inside loops. Other
    ranks get None when ``root`` is given.
    """
    return _redistribute.gather(self, root)


def to_dask(self, *, via_zarr=None):
    """A dask array of this array (:func:`darray.to_dask`).

    Zero-copy on one rank or for a replicated array; distributed over
    several ranks, pass ``via_zarr=path`` (collective: saved with
    :func:`darray.io.save`, then ``dask.array.from_zarr(path)``).
    """
    from ..interop import to_dask  # the public method of an upper layer's function (import-linter: ignored edge)

    return to_dask(self, via_zarr=via_zarr)


def __array__(self, dtype=None, copy=None):
    if self._comm.size > 1:
        refuse_foreign_writer(self._comm.size)  # xarray's own to_zarr / to_netcdf: name the collective writers
        warn_library_gather(self, sys._getframe(1))  # scipy.ndimage.gaussian_filter(x), numpy.vectorize, ...
    if self.size > config.gather_warn_size:
        warnings.warn(f"numpy.asarray: gathering a DArray of {self.size} elements onto every rank "
                      f"(more than darray.config.gather_warn_size={config.gather_warn_size})",
                      stacklevel=2)
    out = to_numpy(self.gather())
    return out.astype(dtype, copy=False) if dtype is not None else out


def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
    return _protocols.array_ufunc(self, ufunc, method, *inputs, **kwargs)


def __array_function__(self, func, types, args, kwargs):
    return _protocols.array_function(self, func, types, args, kwargs)


def __array_namespace__(self, api_version: str | None = None) -> ModuleType:
    if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
        raise ValueError(message("__array_namespace__", "unsupported API version", api_version, "'2024.12'"))
    return importlib.import_module("darray")


def _scalar(self, kind, func: str):
    block = self._block
    if type(block) is _ndarray and not block.ndim:  # (a loop's element: its NumPy scalar converts)
        return kind(block[()])
    if self.ndim != 0:  # NumPy 2.4: size-1 arrays of ndim > 0 no longer convert either
        raise TypeError(message(func, "only 0-dimensional arrays can be converted to Python scalars", self.shape,
                                "shape ()"))
    return kind(to_numpy(self._block)[()])  # a 0-d layout is replicated: every rank holds the value


def __bool__(self) -> bool:
    """Truth value of a size-1 array of any ndim (NumPy's rule); ValueError for more or no elements."""
    block = self._block
    if type(block) is _ndarray and not block.ndim:  # (``if x[i] > 0:`` in a loop)
        return bool(block)
    if self.ndim == 0:
        return bool(to_numpy(block)[()])
    if self.size == 1:
        return bool(_methods.item(self))
    if self.size == 0:
        raise ValueError("The truth value of an empty array is ambiguous. Use `array.size > 0` to check that an "
                         f"array is not empty (__bool__; got shape {self.shape}, expected a size-1 array)")
    raise ValueError("The truth value of an array with more than one element is ambiguous. Use a.any() or "
                     f"a.all() (__bool__; got shape {self.shape}, expected a size-1 array)")


def __int__(self) -> int:
    return self._scalar(int, "__int__")


def __float__(self) -> float:
    return self._scalar(float, "__float__")


def __complex__(self) -> complex:
    return self._scalar(complex, "__complex__")


def __index__(self) -> int:
    if self.dtype.kind not in "iu" or self.ndim != 0:
        raise TypeError(message("__index__", "only integer scalar arrays can be converted to a scalar index",
                                f"{self.dtype} of shape {self.shape}", "a 0-d integer array"))
    return self._scalar(int, "__index__")


def __round__(self, ndigits=None):
    """``round(x)`` of a 0-d array, as of a NumPy scalar (an int; with ``ndigits`` a 0-d array)."""
    if self.ndim != 0:
        raise TypeError(message("__round__", "round() of an array with dimensions", self.shape,
                                "a 0-d array (use x.round(decimals) for arrays)"))
    value = to_numpy(self._block)[()]
    return round(value) if ndigits is None else self.round(ndigits)


def __format__(self, spec: str) -> str:
    """``format(x, spec)``: a 0-d array formats its value; other arrays take only an empty ``spec`` (as NumPy)."""
    if self.ndim == 0:
        return format(to_numpy(self._block)[()], spec)
    if spec:
        raise TypeError(message("__format__", "unsupported format string for an array with dimensions", spec,
                                "'' (format the elements, or x.item())"))
    return str(self)


def __repr__(self) -> str:
    """NumPy's ``repr`` of the same values, spelled ``array(...)`` (a 0-d array: its NumPy scalar's repr).

    A large array fetches only the edge items shown (:mod:`darray._core.printing`);
    the layout is in ``x.layout`` and :func:`darray.explain`.
    """
    if self.ndim == 0:
        return repr(to_numpy(self._block)[()])
    return _printing.array_repr(self)


def __str__(self) -> str:
    """NumPy's ``str`` of the same values (``numpy.set_printoptions`` applies)."""
    return _printing.array_str(self)


def _gathered(self, func: str):
    """The whole array as one local array of this rank's backend: ``gather`` with ``__array__``'s warning."""
    if self.size > config.gather_warn_size:
        warnings.warn(f"{func}: gathering a DArray of {self.size} elements onto every rank "
                      f"(more than darray.config.gather_warn_size={config.gather_warn_size})", stacklevel=3)
    return self.gather()


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """DLPack export of the whole array (the standard's ``max_version`` / ``copy`` / ``dl_device``).

    Held whole on this rank (one rank, or replicated): the owned cells of
    the block, shared unless ``copy=True``. Cut over ranks: a collective
    (every rank calls it, as ``numpy.asarray(x)``) that exports a gathered
    copy, with ``numpy.asarray``'s warning above
    ``darray.config.gather_warn_size``; ``copy=False`` raises
    ``BufferError`` on every rank, since no single buffer holds the array.
    """
    if self._comm.size == 1 or self._layout.is_replicated:
        local = self.local
    elif copy is False:
        raise BufferError(message("__dlpack__", f"copy=False, but a DArray cut over {self._comm.size} ranks "
                                  "has no single buffer", f"split={self._layout.split}",
                                  "copy=None or True (a gathered copy), a replicated array "
                                  "(x.redistribute(split=None)) or x.local, this rank's block"))
    else:
        local = self._gathered("__dlpack__")
    kwargs = {k: v for k, v in (("stream", stream), ("max_version", max_version), ("dl_device", dl_device),
                                ("copy", copy)) if v is not None}
    return local.__dlpack__(**kwargs)


def __dlpack_device__(self):
    """The DLPack device of this rank's block (where ``__dlpack__`` exports from), cut or not."""
    return self._block.__dlpack_device__()


def redistribute(self, split="auto", grid=None, *, sizes=None, halo=None, boundary=None) -> DArray:
    """The same global array in another layout (see :func:`darray.redistribute`)."""
    return _redistribute.redistribute_to(self, _redistribute.target_layout(self, "redistribute", split, grid, sizes,
                                                                           halo, boundary))


def exchange_halos(self, wait: bool = True, force: bool = False):
    """Fill the ghost cells from the neighbours (see :func:`darray._core.halo.exchange_halos`).

    Returns ``self`` (``wait=True``) or a handle whose ``wait()`` completes the exchange.
    """
    return _exchange_halos(self, wait=wait, force=force)


# The reductions NumPy users reach for, written out with NumPy's signatures and calling their engines; the rest
# are generated from the table in darray._core.methods. NumPy's ``where=`` / ``initial=`` go to the masked
# reductions of the layer above (``targets.numpy_reduction``, handed down with register_target).
def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    if kwargs:
        return _methods.targets.numpy_reduction("sum", self, axis, dtype, out, keepdims, **kwargs)
    result = _reductions.sum(self, axis=axis, dtype=dtype, keepdims=keepdims)
    return result if out is None else _methods.into("sum", out, result)


def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    if kwargs:
        return _methods.targets.numpy_reduction("prod", self, axis, dtype, out, keepdims, **kwargs)
    result = _reductions.prod(self, axis=axis, dtype=dtype, keepdims=keepdims)
    return result if out is None else _methods.into("prod", out, result)


def min(self, axis=None, out=None, keepdims=False, **kwargs):
    if kwargs:
        return _methods.targets.numpy_reduction("min", self, axis, None, out, keepdims, **kwargs)
    result = _reductions.min(self, axis=axis, keepdims=keepdims)
    return result if out is None else _methods.into("min", out, result)


def max(self, axis=None, out=None, keepdims=False, **kwargs):
    if kwargs:
        return _methods.targets.numpy_reduction("max", self, axis, None, out, keepdims, **kwargs)
    result = _reductions.max(self, axis=axis, keepdims=keepdims)
    return result if out is None else _methods.into("max", out, result)


def all(self, axis=None, out=None, keepdims=False, *, where=True):
    if where is not True:
        return _methods.targets.numpy_reduction("all", self, axis, None, out, keepdims, where=where)
    result = _reductions.all(self, axis=axis, keepdims=keepdims)
    return result if out is None else _methods.into("all", out, result)


def any(self, axis=None, out=None, keepdims=False, *, where=True):
    if where is not True:
        return _methods.targets.numpy_reduction("any", self, axis, None, out, keepdims, where=where)
    result = _reductions.any(self, axis=axis, keepdims=keepdims)
    return result if out is None else _methods.into("any", out, result)


def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    if kwargs:
        return _methods.targets.numpy_reduction("mean", self, axis, dtype, out, keepdims, **kwargs)
    result = _reductions.mean(self if dtype is None or self.dtype.kind in "biu" else self.astype(dtype),
                              axis=axis, keepdims=keepdims)
    if dtype is not None and result.dtype != dtype:
        result = result.astype(dtype)
    return result if out is None else _methods.into("mean", out, result)


def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    return self._moment("var", axis, dtype, out, ddof, keepdims, kwargs)


def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    return self._moment("std", axis, dtype, out, ddof, keepdims, kwargs)


def _moment(self, name, axis, dtype, out, ddof, keepdims, kwargs):
    correction = kwargs.pop("correction", None)
    if kwargs:
        return _methods.targets.numpy_reduction(name, self, axis, dtype, out, keepdims, ddof=ddof,
                                                correction=correction, **kwargs)
    x = self if dtype is None or self.dtype.kind in "biu" else self.astype(dtype)
    result = getattr(_reductions, name)(x, axis=axis, keepdims=keepdims,
                                        correction=ddof if correction is None else correction)
    if dtype is not None and result.dtype != dtype:
        result = result.astype(dtype)
    return result if out is None else _methods.into(name, out, result)


def reshape(self, *shape, order="C", copy=None) -> DArray:
    """The array in a new shape (``x.reshape(3, 4)``, ``x.reshape((3, 4))``, ``-1``), C or F order as NumPy."""
    if len(shape) == 1 and not isinstance(shape[0], (int, _np_integer)):
        shape = shape[0]
    if order in ("C", "A"):
        return _methods.targets.reshape(self, shape, copy=copy)
    if order != "F":
        raise ValueError(message("reshape", "order must be one of 'C', 'F', 'A'", order))
    shape = (shape,) if isinstance(shape, (int, _np_integer)) else tuple(shape)
    reverse = _manipulation.permute_dims
    flipped = _methods.targets.reshape(reverse(self, tuple(range(self.ndim - 1, -1, -1))), shape[::-1],
                                       copy=copy)
    return reverse(flipped, tuple(range(len(shape) - 1, -1, -1)))


def copy(self, order="C") -> DArray:
    """A copy in the same layout (NumPy's ``x.copy()``; ``order`` only concerns memory: blocks stay C-ordered)."""
    if order == "C" and type(self._block) is _ndarray:  # NumPy blocks: one call
        return DArray._wrap(self._block.copy(), self._layout, self._comm, self._xp)
    if order not in ("C", "F", "A", "K"):
        raise ValueError(message("copy", "order must be one of 'C', 'F', 'A', 'K'", order))
    return _astype(self, self.dtype, copy=True)


def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True) -> DArray:
    """The array cast to ``dtype`` (NumPy's signature; ``order`` and ``subok`` do not change a DArray)."""
    if casting != "unsafe" and not _np_can_cast(self.dtype, dtype, casting):
        raise TypeError(message("astype", f"cannot cast under the rule casting={casting!r}",
                                f"{self.dtype} -> {to_numpy_dtype(dtype) if not isinstance(dtype, str) else dtype}",
                                "a cast that rule allows"))
    return _astype(self, dtype, copy=copy)


def __copy__(self) -> DArray:
    return self.copy()


def __deepcopy__(self, memo) -> DArray:
    result = memo[id(self)] = self.copy()
    return result


@property
def itemsize(self) -> int:
    """Bytes per element."""
    return self.dtype.itemsize


@property
def nbytes(self) -> int:
    """Bytes of the GLOBAL array (``size * itemsize``); this rank's block: ``x.local.nbytes``."""
    return self.size * self.dtype.itemsize


@property
def strides(self) -> tuple[int, ...]:
    """The strides a C-contiguous NumPy array of the global shape would have (blocks are C-ordered).

    A DArray has no single buffer: ``x.local.strides`` are this rank's block's.
    """
    out, step = [], self.dtype.itemsize
    for n in reversed(self.shape):
        out.append(step)
        step *= n
    return tuple(reversed(out))


@property
def real(self) -> DArray:
    """The real part: for complex dtypes a view, as in NumPy (writes through it reach the array); the array
    itself otherwise."""
    if self.dtype.kind != "c":
        return self
    return _part_view(self, "real")


@real.setter
def real(self, value) -> None:
    self[...] = self.imag * 1j + value if self.dtype.kind == "c" else value


@property
def imag(self) -> DArray:
    """The imaginary part: a view for complex dtypes (writes reach the array), zeros otherwise, as NumPy."""
    if self.dtype.kind == "c":
        return _part_view(self, "imag")
    return _methods.targets.zeros_like(self)


@imag.setter
def imag(self, value) -> None:
    if self.dtype.kind != "c":
        raise TypeError(message("imag", "array does not have imaginary part to set", self.dtype,
                                "a complex array"))
    self[...] = self.real + value * 1j


@property
def flat(self) -> _methods.FlatIter:
    """The array as if flattened: ``x.flat[i]``, ``x.flat[i] = v``, iteration, ``len``."""
    return _methods.FlatIter(self)


#: above ndarray (0.0) and numpy.matrix (10.0): legacy priority checks pick DArray
__array_priority__ = 20.0


__class_getitem__ = classmethod(GenericAlias)


def __iter__(self):
    """Iterate over axis 0 (as NumPy): each step is ``x[i]`` (its owner broadcasts it); slow for large arrays."""
    if self.ndim == 0:
        raise TypeError(message("__iter__", "iteration over a 0-d array", self.shape, "an array with dimensions"))
    return (self[i] for i in range(self.shape[0]))


def __contains__(self, value) -> bool:
    """``value in x``: whether any element equals ``value`` (an allreduce)."""
    return bool(_reductions.any(_methods.targets.equal(self, value)))


def __divmod__(self, other):
    return self // other, self % other


def __rdivmod__(self, other):
    return other // self, other % self


def __delitem__(self, key) -> None:
    raise ValueError(message("__delitem__", "cannot delete array elements", key,
                             "assignment (x[key] = value) or a new array (darray.concat of slices)"))


def __sizeof__(self) -> int:
    """Bytes this rank holds: the object and its block (halo included)."""
    return object.__sizeof__(self) + int(getattr(self._block, "nbytes", 0))


def to_device(self, device, /, *, stream=None) -> DArray:
    """The same array with local blocks on ``device`` (a backend device object)."""
    block = self._xp.asarray(self._block, device=device) if stream is None else \
        array_api_compat.to_device(self._block, device, stream=stream)
    return DArray._new(block, self._layout, self._comm)


def _sequence(x):
    """A list or tuple operand as the NumPy array NumPy makes of it (other operands as they are)."""
    if type(x) is list or type(x) is tuple:
        from .elementwise import sequence_operand

        return sequence_operand("matmul", x)
    return x


def _part_view(x: DArray, part: str) -> DArray:
    """``x.real`` or ``x.imag`` of complex ``x``: computed, and linked to ``x`` so that writes reach it."""
    from .views import link, plain

    def take(base: DArray) -> DArray:
        return getattr(_methods.targets, part)(plain(base))

    def put(base: DArray, view: DArray) -> None:
        setattr(base, part, view)

    return link(take(x), x, take, put)
