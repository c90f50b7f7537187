"""Splitting one axis into blocks: balanced sizes, explicit sizes, offsets."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate

from .._errors import message

__all__ = ["balanced_sizes", "offsets", "check_sizes", "locate"]


def balanced_sizes(n: int, parts: int) -> tuple[int, ...]:
    """Block sizes of ``n`` cells cut into ``parts`` blocks as ``numpy.array_split`` does.

    The first ``n % parts`` blocks get one cell more; blocks may be empty.

    Examples
    --------
    >>> balanced_sizes(10, 4)
    (3, 3, 2, 2)
    >>> balanced_sizes(2, 3)
    (1, 1, 0)
    """
    base, extra = divmod(n, parts)
    return tuple(base + 1 if i < extra else base for i in range(parts))


def offsets(sizes: Sequence[int]) -> tuple[int, ...]:
    """Start of every block and the end of the last: ``len(sizes) + 1`` entries.

    >>> offsets((3, 3, 2))
    (0, 3, 6, 8)
    """
    return (0, *accumulate(sizes))


def check_sizes(func: str, n: int, parts: int, sizes: Sequence[int]) -> tuple[int, ...]:
    """Validate explicit block sizes for an axis of length ``n`` cut into ``parts``."""
    try:
        sizes = tuple(int(s) for s in sizes)
    except TypeError:
        raise TypeError(message(func, "block sizes must be a sequence of integers", sizes)) from None
    if len(sizes) != parts:
        raise ValueError(message(func, "wrong number of block sizes", sizes, f"{parts} sizes, one per block"))
    if any(s < 0 for s in sizes):
        raise ValueError(message(func, "block sizes must be non-negative", sizes))
    if sum(sizes) != n:
        raise ValueError(message(func, "block sizes do not add up to the axis length", sizes, f"sizes summing to {n}"))
    return sizes


def locate(offs: Sequence[int], start: int, stop: int) -> range:
    """Indices of the blocks (given their ``offsets``) that intersect ``[start, stop)``.

    >>> list(locate((0, 3, 6, 8), 2, 7))
    [0, 1, 2]
    >>> list(locate((0, 3, 3, 8), 3, 5))
    [2]
    """
    if stop <= start:
        return range(0)
    from bisect import bisect_right

    first = bisect_right(offs, start) - 1
    last = bisect_right(offs, stop - 1) - 1
    # skip empty blocks sitting exactly at ``start``
    while first < last and offs[first + 1] <= start:
        first += 1
    return range(first, last + 1)
