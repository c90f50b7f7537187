"""DArray: replicated metadata plus this rank's halo-padded block.

Every rank holds the same :class:`~darray._layout.Layout` (shape, grid,
split, block sizes, halo) and its own block. ``x.local`` is a view of the
owned cells inside the padded block, never a copy.

This module holds the class's data (its slots) and its construction, and
imports no engine: every engine imports it. Every method, property and
operator of DArray is installed by :mod:`darray._core.dispatch`, from one
table, when :mod:`darray._core` is imported.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from .._backend import namespace_of
from .._comm import Communicator
from .._errors import message
from .._layout import Layout
from .dtypes import check_dtype

__all__ = ["DArray"]

_new_object = object.__new__


class DArray:
    """A global n-d array cut into blocks over the ranks of a communicator.

    Do not call ``DArray(...)``: create arrays with :func:`darray.asarray`,
    :func:`darray.zeros`, :func:`darray.arange`, ... or wrap per-rank blocks
    with :func:`darray.from_local`.

    Its methods and operators are not written here: :data:`darray._core.dispatch.TABLE`
    lists them all, each with its family and implementation.
    """

    __slots__ = ("_block", "_layout", "_comm", "_xp", "_local", "_halo_fresh", "_halo_exchange", "_link",
                 "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("DArray: do not construct directly; use darray.asarray, darray.zeros, darray.arange, ... "
                        "or darray.from_local(block, ...) to wrap per-rank blocks")

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

    @staticmethod
    def _wrap(block: Any, layout: Layout, comm: Communicator, xp: ModuleType) -> DArray:
        """Wrap without checks: for engines that derived ``block`` from a valid layout."""
        self = _new_object(DArray)
        self._block = block
        self._layout = layout
        self._comm = comm
        self._xp = xp
        self._local = None
        self._halo_fresh = False
        self._halo_exchange = None  # the bound halo exchange of this block (made on first use)
        self._link = None  # how a computed view writes back to its base (darray._core.views), or None
        return self
