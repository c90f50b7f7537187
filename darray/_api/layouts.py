"""Changing how an array is laid out over the ranks."""

from __future__ import annotations

from .._core import DArray, redistribute_to, target_layout
from .._errors import message

__all__ = ["redistribute"]


def redistribute(x, /, split="auto", grid=None, *, sizes=None, halo=None, boundary=None) -> DArray:
    """The same global array in another layout: new split axis, grid, block sizes or halo.

    Each rank receives exactly the cells it newly owns from their current
    owners (one message per pair of ranks whose blocks intersect); replicated
    <-> distributed moves need no communication in the replicated -> cut
    direction. Plans are cached per pair of layouts.

    Examples
    --------
    >>> import darray as da
    >>> x = da.arange(12, split=0)
    >>> y = da.redistribute(x, split=None)      # every rank holds everything
    >>> y.layout.is_replicated
    True
    """
    if not isinstance(x, DArray):
        raise TypeError(message("redistribute", "expected a DArray", type(x).__name__))
    return redistribute_to(x, target_layout(x, "redistribute", split, grid, sizes, halo, boundary))
