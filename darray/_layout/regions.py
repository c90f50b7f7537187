"""Regions of a block (one unit-step slice per axis) and where a ghost cell past a global edge reads from."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["volume", "mirror_source"]


def volume(region: Sequence[slice]) -> int:
    """Number of cells in ``region`` (an empty slice on any axis makes it 0).

    Examples
    --------
    >>> volume((slice(2, 5), slice(0, 4)))
    12
    >>> volume((slice(3, 3), slice(0, 4)))
    0
    """
    n = 1
    for s in region:
        n *= max(0, s.stop - s.start)
    return n


def mirror_source(kind: str, index: int, n: int) -> int:
    """The global cell a ghost at global ``index`` (outside ``[0, n)``) copies under boundary ``kind``.

    ``"nearest"`` copies the edge cell (``numpy.pad``'s ``edge``);
    ``"reflect"`` mirrors including the edge cell (``numpy.pad``'s
    ``symmetric``, Dask's reflect). The halo fill and its adjoint both use it.

    Examples
    --------
    >>> [mirror_source("reflect", g, 5) for g in (-2, -1, 5, 6)]
    [1, 0, 4, 3]
    >>> [mirror_source("nearest", g, 5) for g in (-2, 5)]
    [0, 4]
    """
    if kind == "nearest":
        return 0 if index < 0 else n - 1
    return -index - 1 if index < 0 else 2 * n - 1 - index
