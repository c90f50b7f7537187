"""Normalising user specs (split, grid, halo, boundary) into per-axis tuples.

Every function validates replicated metadata only, so each rank raises the
same error before any communication happens.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from math import prod

from .._errors import AxisError, message
from .grid import plan_axes, plan_grid

__all__ = ["BOUNDARIES", "normalize_axis", "normalize_halo", "normalize_boundary", "normalize_split"]

#: Dask's boundary vocabulary; any number is a constant boundary.
BOUNDARIES = ("none", "periodic", "reflect", "nearest")


def normalize_axis(func: str, axis: int, ndim: int) -> int:
    """Turn a possibly negative axis into ``0 <= axis < ndim`` or raise ``AxisError``."""
    if not isinstance(axis, numbers.Integral) or isinstance(axis, bool):
        raise TypeError(message(func, "axis must be an integer", axis))
    if not -ndim <= axis < ndim:
        raise AxisError(message(func, "axis out of bounds", axis, f"an axis in [{-ndim}, {ndim})"))
    return int(axis) % ndim


def _per_axis(func: str, what: str, spec, ndim: int, default, check) -> tuple:
    if isinstance(spec, Mapping):
        out = [default] * ndim
        for axis, value in spec.items():
            out[normalize_axis(func, axis, ndim)] = check(value)
        return tuple(out)
    if isinstance(spec, Sequence) and not isinstance(spec, str):
        if len(spec) != ndim:
            raise ValueError(message(func, f"{what} needs one entry per axis", tuple(spec), f"{ndim} entries"))
        return tuple(check(v) for v in spec)
    return (check(spec),) * ndim


def normalize_halo(func: str, halo, ndim: int) -> tuple[int, ...]:
    """Ghost width per axis from an int, a tuple or a dict ``{axis: width}``."""

    def check(width):
        if not isinstance(width, numbers.Integral) or isinstance(width, bool) or width < 0:
            raise ValueError(message(func, "halo widths must be non-negative integers", width))
        return int(width)

    return _per_axis(func, "halo", 0 if halo is None else halo, ndim, 0, check)


def normalize_boundary(func: str, boundary, ndim: int) -> tuple:
    """Boundary per axis: one of :data:`BOUNDARIES` or a constant number."""

    def check(kind):
        if isinstance(kind, str):
            if kind not in BOUNDARIES:
                raise ValueError(message(func, "unknown boundary", kind, f"one of {BOUNDARIES} or a number"))
            return kind
        if isinstance(kind, numbers.Number) and not isinstance(kind, bool):
            return kind
        raise ValueError(message(func, "unknown boundary", kind, f"one of {BOUNDARIES} or a number"))

    return _per_axis(func, "boundary", "none" if boundary is None else boundary, ndim, "none", check)


def normalize_split(func: str, split, grid, shape: tuple[int, ...], nprocs: int,
                    halo: tuple[int, ...], min_size: int) -> tuple[tuple[int, ...], tuple]:
    """Resolve ``split`` and ``grid`` into ``(dims, split)``: one entry per grid dim.

    ``split`` is ``"auto"``, ``None`` (replicated), an axis (1-d grid over all
    ranks) or a tuple with one axis-or-None per grid dimension. ``grid`` is the
    grid dims (their product must be ``nprocs``) or None to choose them.
    ``"auto"`` with a grid cuts the axes that suit the grid best
    (:func:`~darray._layout.grid.plan_axes`); a tuple of axes without a grid
    cuts every axis named where that keeps the blocks as small.
    """
    ndim = len(shape)
    if grid is not None:
        try:
            grid = tuple(int(d) for d in grid)
        except TypeError:
            raise TypeError(message(func, "grid must be a sequence of integers", grid)) from None
        if any(d < 1 for d in grid) or prod(grid) != nprocs:
            raise ValueError(message(func, "grid dims must be positive and multiply to the number of ranks",
                                     grid, f"a product of {nprocs}"))
    if isinstance(split, str):
        if split != "auto":
            raise ValueError(message(func, "unknown split", split, "'auto', None, an axis or a tuple"))
        if grid is not None:  # the grid is given: cut the axes that suit it best
            if ndim == 0:
                return grid, (None,) * len(grid)
            if len(grid) > ndim:
                raise ValueError(message(func, f"a grid of {len(grid)} dims cannot cut a {ndim}-d array", grid,
                                         f"at most {ndim} grid dims, or split= naming the axis of each"))
            return grid, plan_axes(shape, grid, halo)
        if ndim == 0 or prod(shape) < min_size or nprocs == 1:
            return (nprocs,), (None,)
        parts = plan_grid(shape, nprocs, halo)
        axes = [a for a, p in enumerate(parts) if p > 1]
        if not axes:
            return (nprocs,), (None,)
        return tuple(parts[a] for a in axes), tuple(axes)
    if split is None:
        return (grid if grid is not None else (nprocs,)), (None,) * (len(grid) if grid is not None else 1)
    if isinstance(split, numbers.Integral) and not isinstance(split, bool):
        if ndim == 0:
            raise AxisError(message(func, "a 0-d array cannot be split", split, "split=None"))
        axis = normalize_axis(func, split, ndim)
        if grid is not None and len(grid) != 1:
            raise ValueError(message(func, "an integer split needs a 1-d grid", grid, f"grid=({nprocs},)"))
        return (nprocs,), (axis,)
    if isinstance(split, Sequence):
        entries = []
        for s in split:
            if s is None:
                entries.append(None)
            elif isinstance(s, numbers.Integral) and not isinstance(s, bool):
                entries.append(normalize_axis(func, s, ndim))
            else:
                raise TypeError(message(func, "split entries must be axes or None", split))
        axes = [a for a in entries if a is not None]
        if len(set(axes)) != len(axes):
            raise ValueError(message(func, "an axis is split by two grid dims", tuple(split), "distinct axes"))
        if grid is None:
            if len(entries) == 1:
                grid = (nprocs,)
            else:
                grid = _dims_for(func, shape, entries, nprocs, halo)
        if len(grid) != len(entries):
            raise ValueError(message(func, "split needs one entry per grid dimension", tuple(split),
                                     f"{len(grid)} entries for grid {grid}"))
        return grid, tuple(entries)
    raise TypeError(message(func, "unknown split", split, "'auto', None, an axis or a tuple"))


def _dims_for(func, shape, entries, nprocs, halo):
    """Grid dims for an explicit tuple split whose grid was not given."""
    axes = [a for a in entries if a is not None]
    if len(axes) != len(entries):
        raise ValueError(message(func, "a split with None entries needs explicit grid dims", tuple(entries),
                                 "grid=(p0, p1, ...)"))
    sub_shape = tuple(shape[a] for a in axes)
    sub_halo = tuple(halo[a] for a in axes)
    parts = plan_grid(sub_shape, nprocs, sub_halo, every_axis=True)  # the user named them: cut them all
    return tuple(parts)
