"""DArray: replicated metadata plus this rank's halo-padded block.

Every rank holds the same :class:`~darray._layout.Layout` (shape, grid,
split, block sizes, halo) and its own block. ``x.local`` is a view of the
owned cells inside the padded block, never a copy.
"""

from __future__ import annotations

import importlib
import warnings
from types import ModuleType
from typing import Any

import array_api_compat

from .._backend import namespace_of, to_numpy
from .._comm import Communicator
from .._config import config
from .._errors import message
from .._layout import Layout
from .dtypes import check_dtype, to_numpy_dtype
from .table import BINARY_OPERATORS, UNARY_OPERATORS

__all__ = ["DArray"]

_MAX_REPR = 1000  # elements shown by repr when this rank holds the whole array


class DArray:
    """A global n-d array cut into blocks over the ranks of a communicator.

    Do not call ``DArray(...)``: create arrays with :func:`darray.asarray`,
    :func:`darray.zeros`, :func:`darray.arange`, ... or wrap per-rank blocks
    with :func:`darray.from_local`.
    """

    __slots__ = ("_block", "_layout", "_comm", "_xp", "_local", "_halo_fresh", "_halo_exchange", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("DArray: do not construct directly; use darray.asarray, darray.zeros, darray.arange, ... "
                        "or darray.from_local(block, ...) to wrap per-rank blocks")

    # ------------------------------------------------------------ construction
    @classmethod
    def _new(cls, block: Any, layout: Layout, comm: Communicator, xp: ModuleType | None = None) -> DArray:
        """Wrap ``block`` (this rank's padded storage), checking every invariant."""
        if layout.nprocs != comm.size:
            raise ValueError(message("DArray", "layout grid does not match the communicator", layout.dims,
                                     f"dims multiplying to {comm.size}"))
        expected = layout.padded_shape(comm.rank)
        if tuple(block.shape) != expected:
            raise ValueError(message("DArray", "block shape does not match the layout", tuple(block.shape),
                                     f"{expected} on rank {comm.rank}"))
        check_dtype("DArray", block.dtype)
        return cls._wrap(block, layout, comm, xp if xp is not None else namespace_of(block))

    @classmethod
    def _wrap(cls, block: Any, layout: Layout, comm: Communicator, xp: ModuleType) -> DArray:
        """Wrap without checks: for engines that derived ``block`` from a valid layout."""
        self = object.__new__(cls)
        self._block = block
        self._layout = layout
        self._comm = comm
        self._xp = xp
        self._local = None
        self._halo_fresh = False
        self._halo_exchange = None  # the bound halo exchange of this block (made on first use)
        return self

    # ------------------------------------------------------------ metadata
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

    def __getitem__(self, key) -> DArray:
        from .indexing import getitem

        return getitem(self, key)

    def __setitem__(self, key, value) -> None:
        from .indexing import setitem

        setitem(self, key, value)

    def __matmul__(self, other):
        if not hasattr(other, "shape"):
            return NotImplemented
        return _operators()["matmul"](self, other)

    def __rmatmul__(self, other):
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
        from .redistribute import redistribute_to

        plain = self._layout.replace(halo=(0,) * self.ndim, boundary=("none",) * self.ndim)
        self.local[...] = redistribute_to(result, plain).local
        self._halo_fresh = False
        return self

    @property
    def T(self) -> DArray:
        """Transpose of a 2-d array (no communication: the layout is permuted)."""
        if self.ndim != 2:
            raise ValueError(message("T", "only defined for 2-d arrays", self.shape, "a 2-d array (use .mT)"))
        from .manipulation import permute_dims

        return permute_dims(self, (1, 0))

    @property
    def mT(self) -> DArray:
        """Transpose of the last two axes (no communication)."""
        if self.ndim < 2:
            raise ValueError(message("mT", "needs at least 2 dimensions", self.shape))
        from .manipulation import permute_dims

        return permute_dims(self, (*range(self.ndim - 2), self.ndim - 1, self.ndim - 2))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len: len() of a 0-d array")
        return self.shape[0]

    # ------------------------------------------------------------ conversion
    def gather(self, root: int | None = None) -> Any:
        """The whole array as one local array: on every rank (``root=None``) or on ``root`` only.

        Moves the whole array: use it for results, not inside loops. Other
        ranks get None when ``root`` is given.
        """
        from .redistribute import gather

        return gather(self, root)

    def to_dask(self, *, via_zarr=None):
        """A dask array of this array (:func:`darray.to_dask`).

        Zero-copy on one rank or for a replicated array; distributed over
        several ranks, pass ``via_zarr=path`` (collective: saved with
        :func:`darray.io.save`, then ``dask.array.from_zarr(path)``).
        """
        from ..interop import to_dask

        return to_dask(self, via_zarr=via_zarr)

    def __array__(self, dtype=None, copy=None):
        if self.size > config.gather_warn_size:
            warnings.warn(f"numpy.asarray: gathering a DArray of {self.size} elements onto every rank "
                          f"(more than darray.config.gather_warn_size={config.gather_warn_size})",
                          stacklevel=2)
        out = to_numpy(self.gather())
        return out.astype(dtype, copy=False) if dtype is not None else out

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from .protocols import array_ufunc

        return array_ufunc(self, ufunc, method, *inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from .protocols import array_function

        return array_function(self, func, types, args, kwargs)

    def __array_namespace__(self, api_version: str | None = None) -> ModuleType:
        if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
            raise ValueError(message("__array_namespace__", "unsupported API version", api_version, "'2024.12'"))
        return importlib.import_module("darray")

    def _scalar(self, kind, func: str):
        if self.ndim != 0:
            raise TypeError(message(func, "only 0-d arrays convert to Python scalars", self.shape, "shape ()"))
        if not self._layout.is_replicated:  # pragma: no cover - 0-d layouts are always replicated
            raise ValueError(message(func, "0-d array is not replicated", self._layout))
        return kind(to_numpy(self._block)[()])

    def __bool__(self) -> bool:
        return self._scalar(bool, "__bool__")

    def __int__(self) -> int:
        return self._scalar(int, "__int__")

    def __float__(self) -> float:
        return self._scalar(float, "__float__")

    def __complex__(self) -> complex:
        return self._scalar(complex, "__complex__")

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError(message("__index__", "only integer arrays are indices", self.dtype, "an integer dtype"))
        return self._scalar(int, "__index__")

    def __repr__(self) -> str:
        layout = self._layout
        if layout.is_replicated and self.size <= _MAX_REPR:
            body = repr(to_numpy(self._block))
            body = body[body.index("(") + 1: body.rindex(")")] if body.startswith("array(") else body
            return f"darray({body})"
        return (f"<DArray shape={self.shape} dtype={self.dtype} split={layout.split} grid={layout.dims} "
                f"halo={layout.halo} rank {self._comm.rank}: cells "
                f"{tuple((s.start, s.stop) for s in layout.block_slices(self._comm.rank))}>")

    __str__ = __repr__

    def __dlpack__(self, *args, **kwargs):
        raise TypeError("__dlpack__: a DArray has no single buffer; use x.local.__dlpack__() for this rank's block")

    def __dlpack_device__(self):
        raise TypeError("__dlpack_device__: a DArray has no single buffer; use x.local")

    # ------------------------------------------------------------ layout changes
    def redistribute(self, split="auto", grid=None, *, sizes=None, halo=None, boundary=None) -> DArray:
        """The same global array in another layout (see :func:`darray.redistribute`)."""
        from .redistribute import redistribute_to, target_layout

        return redistribute_to(self, target_layout(self, "redistribute", split, grid, sizes, halo, boundary))

    def exchange_halos(self, wait: bool = True, force: bool = False):
        """Fill the ghost cells from the neighbours (see :func:`darray._core.halo.exchange_halos`).

        Returns ``self`` (``wait=True``) or a handle whose ``wait()`` completes the exchange.
        """
        return _exchange_halos(self, wait=wait, force=force)

    # ------------------------------------------------------------ methods NumPy users reach for
    def _reduce(self, name, *args, **kwargs):
        from . import reductions

        return getattr(reductions, name)(self, *args, **kwargs)

    def sum(self, axis=None, dtype=None, keepdims=False):
        return self._reduce("sum", axis=axis, dtype=dtype, keepdims=keepdims)

    def prod(self, axis=None, dtype=None, keepdims=False):
        return self._reduce("prod", axis=axis, dtype=dtype, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        return self._reduce("min", axis=axis, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        return self._reduce("max", axis=axis, keepdims=keepdims)

    def mean(self, axis=None, keepdims=False):
        return self._reduce("mean", axis=axis, keepdims=keepdims)

    def var(self, axis=None, correction=0.0, keepdims=False, ddof=None):
        return self._reduce("var", axis=axis, correction=correction if ddof is None else ddof, keepdims=keepdims)

    def std(self, axis=None, correction=0.0, keepdims=False, ddof=None):
        return self._reduce("std", axis=axis, correction=correction if ddof is None else ddof, keepdims=keepdims)

    def all(self, axis=None, keepdims=False):
        return self._reduce("all", axis=axis, keepdims=keepdims)

    def any(self, axis=None, keepdims=False):
        return self._reduce("any", axis=axis, keepdims=keepdims)

    def copy(self) -> DArray:
        """A copy in the same layout (NumPy's ``x.copy()``)."""
        from .elementwise import astype

        return astype(self, self.dtype, copy=True)

    def astype(self, dtype, copy=True):
        from .elementwise import astype

        return astype(self, dtype, copy=copy)

    def to_device(self, device, /, *, stream=None) -> DArray:
        """The same array with local blocks on ``device`` (a backend device object)."""
        block = self._xp.asarray(self._block, device=device) if stream is None else \
            array_api_compat.to_device(self._block, device, stream=stream)
        return DArray._new(block, self._layout, self._comm)


def _foreign(other) -> bool:
    """An operand that is neither a number nor array-like: Python should try its own operator."""
    return not isinstance(other, (DArray, bool, int, float, complex)) and not hasattr(other, "__array__") \
        and not hasattr(other, "__array_namespace__") and not isinstance(other, (list, tuple))


def _operators():
    from .protocols import OPERATORS

    return OPERATORS


# Operator methods are generated from the elementwise table (darray._core.table).
def _unary_method(row):
    def method(self):
        return _apply(row, (self,))

    method.__name__ = row.operator
    method.__doc__ = f"``{row.operator[2:-2]}`` of every element: :func:`darray.{row.name}`."
    return method


def _binary_methods(row):
    name = row.operator[2:-2]

    def forward(self, other):
        try:
            return _apply(row, (self, other), _temporaries(self, other))
        except TypeError:
            if _foreign(other):  # an object NumPy cannot take: let it try the reflected operator
                return NotImplemented
            raise

    def reflected(self, other):
        try:
            return _apply(row, (other, self), _temporaries(other, self) & 2)
        except TypeError:
            if _foreign(other):
                return NotImplemented
            raise

    def inplace(self, other):
        return _apply_inplace(row, self, other)

    out = {row.operator: forward}
    if row.inplace:
        out[f"__r{name}__"] = reflected
        out[f"__i{name}__"] = inplace
    for dunder, method in out.items():
        method.__name__ = dunder
        method.__doc__ = f"Operator form of :func:`darray.{row.name}`."
    return out


for _row in UNARY_OPERATORS.values():
    setattr(DArray, _row.operator, _unary_method(_row))
for _row in BINARY_OPERATORS.values():
    for _dunder, _method in _binary_methods(_row).items():
        setattr(DArray, _dunder, _method)
DArray.__hash__ = None  # arrays compare elementwise, so they are unhashable (like NumPy's)

from .elementwise import apply as _apply, apply_inplace as _apply_inplace  # noqa: E402  (cycle by design)
from .elementwise import temporaries as _temporaries  # noqa: E402
from .halo import exchange_halos as _exchange_halos  # noqa: E402
