"""Cartesian process grids: rank <-> coordinates and choosing grid dims for a shape."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from math import prod

__all__ = ["coords_of", "rank_of", "plan_grid", "plan_axes", "factorizations"]


def coords_of(rank: int, dims: Sequence[int]) -> tuple[int, ...]:
    """Coordinates of ``rank`` in a row-major grid (MPI's Cartesian order).

    >>> coords_of(5, (2, 3))
    (1, 2)
    """
    coords = []
    for d in reversed(dims):
        rank, c = divmod(rank, d)
        coords.append(c)
    return tuple(reversed(coords))


def rank_of(coords: Sequence[int], dims: Sequence[int]) -> int:
    """Inverse of :func:`coords_of`.

    >>> rank_of((1, 2), (2, 3))
    5
    """
    rank = 0
    for c, d in zip(coords, dims):
        rank = rank * d + c
    return rank


@lru_cache(maxsize=256)
def factorizations(n: int, k: int) -> tuple[tuple[int, ...], ...]:
    """Every ordered way to write ``n`` as a product of ``k`` positive integers.

    >>> factorizations(4, 2)
    ((1, 4), (2, 2), (4, 1))
    """
    if k == 1:
        return ((n,),)
    out: list[tuple[int, ...]] = []
    for f in range(1, n + 1):
        if n % f == 0:
            out.extend((f, *rest) for rest in factorizations(n // f, k - 1))
    return tuple(out)


def _cost(shape: Sequence[int], parts: Sequence[int], halo: Sequence[int]) -> tuple:
    # 1. load balance: the largest block; 2. bytes a block exchanges with its
    # neighbours (halo surface); 3. fewer split axes; 4. prefer leading axes
    # (C order: a block cut along axis 0 is contiguous).
    largest = prod(-(-n // p) for n, p in zip(shape, parts))
    block = [-(-n // p) for n, p in zip(shape, parts)]
    surface = 0
    for axis, p in enumerate(parts):
        if p > 1:
            face = prod(b for i, b in enumerate(block) if i != axis)
            surface += 2 * max(halo[axis], 1) * face
    nsplit = sum(p > 1 for p in parts)
    return (largest, surface, nsplit, tuple(-p for p in parts))


def plan_grid(shape: Sequence[int], nprocs: int, halo: Sequence[int] | None = None,
              every_axis: bool = False) -> tuple[int, ...]:
    """Number of blocks along every axis of ``shape`` for ``nprocs`` processes.

    Minimises, in order: the largest block, the halo surface a block exchanges,
    the number of split axes; ties go to leading axes. ``every_axis`` (the user
    named these axes to cut): after the largest block, prefer cutting every
    axis (``split=(0, 1)`` on 4 ranks for 4096 x 4096 gives 2 x 2, not 4 x 1).

    Examples
    --------
    >>> plan_grid((1000, 1000), 4)
    (4, 1)
    >>> plan_grid((1024, 1024), 16, halo=(1, 1))
    (4, 4)
    >>> plan_grid((3, 1000), 4)
    (1, 4)
    >>> plan_grid((4096, 4096), 4), plan_grid((4096, 4096), 4, every_axis=True)
    ((4, 1), (2, 2))
    >>> plan_grid((1, 4096), 4, every_axis=True)  # cutting axis 0 too would make blocks larger
    (1, 4)
    """
    shape = tuple(shape)
    if not isinstance(nprocs, int) or isinstance(nprocs, bool) or nprocs < 1:
        raise ValueError(f"plan_grid: the number of processes must be a positive integer; got {nprocs!r}")
    if any(not isinstance(n, int) or n < 0 for n in shape):
        raise ValueError(f"plan_grid: shape must hold non-negative integers; got {shape!r}")
    if not shape:
        return ()
    halo = tuple(halo) if halo is not None else (0,) * len(shape)

    def cost(parts):
        largest, *rest = _cost(shape, parts, halo)
        return (largest, every_axis and any(p == 1 for p in parts), *rest)

    return min(factorizations(nprocs, len(shape)), key=cost)


def plan_axes(shape: Sequence[int], dims: Sequence[int], halo: Sequence[int] | None = None) -> tuple[int, ...]:
    """The axes of ``shape`` (ascending) that grid dims ``dims`` should cut: the cheapest by :func:`plan_grid`'s costs.

    ``len(dims)`` must not exceed ``len(shape)``.

    >>> plan_axes((4096, 4096), (2, 2))
    (0, 1)
    >>> plan_axes((3, 1000, 1000), (2, 2))
    (1, 2)
    """
    from itertools import combinations

    shape = tuple(shape)
    halo = tuple(halo) if halo is not None else (0,) * len(shape)

    def parts(axes):
        out = [1] * len(shape)
        for axis, d in zip(axes, dims):
            out[axis] = d
        return out

    return min(combinations(range(len(shape)), len(dims)), key=lambda axes: _cost(shape, parts(axes), halo))
