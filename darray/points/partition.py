"""Partitioning a point set over the ranks by recursive coordinate bisection.

:func:`partition` takes an ``(N, d)`` coordinate DArray (rows cut in any
way, empty parts allowed; any other layout is first cut into balanced rows)
and any number of ``(N, ...)`` feature DArrays cut like it, and moves every
point to the rank of its region (:mod:`darray.points._rcb`: balanced counts,
compact regions) with one all-to-all. The :class:`Partition` it returns
keeps that route: :meth:`Partition.take` moves more features the same way
and :meth:`Partition.restore` puts per-point results back in the caller's
order.
"""

from __future__ import annotations

import numpy as np

from .. import _recorder
from .._backend import to_numpy
from .._comm.base import agree
from .._core import DArray
from .._errors import message
from ._rcb import assign
from ._rows import RowRoute, check_rows, host_rows, offsets_of, row_sizes, rows_of, wrap_rows
from .message import gather

__all__ = ["Partition", "partition", "check_points", "METHODS"]

#: Partitioning methods by name.
METHODS = ("rcb",)


def check_points(func: str, points, name: str = "points") -> DArray:
    """``points`` as a row-cut ``(N, d)`` real floating DArray without NaN; the same error on every rank."""
    if not isinstance(points, DArray):
        raise TypeError(message(func, f"{name} must be a DArray", type(points).__name__, "an (N, d) DArray"))
    if points.ndim != 2 or points.shape[1] < 1:
        raise ValueError(message(func, f"{name} must be an (N, d) array of coordinates", points.shape,
                                 "2 dimensions, d >= 1"))
    if points.dtype.kind != "f":
        raise TypeError(message(func, f"{name} must have a real floating dtype", points.dtype,
                                "float32 or float64"))
    points = rows_of(func, points)
    bad = agree(points._comm, not np.isnan(to_numpy(points.local)).any())
    if bad:
        raise ValueError(message(func, f"{name} hold NaN coordinates", f"NaN on ranks {bad}", "finite coordinates"))
    return points


class Partition:
    """A point set partitioned over the ranks, and the route that got it there.

    Attributes
    ----------
    points : the ``(N, d)`` coordinates, each rank's region in its rows (in global order).
    features : the features given to :func:`partition`, moved with the points.
    index : ``(N,)`` int64, cut like ``points``: the caller's (global) index of each row.
    boxes : ``(P, 2, d)`` NumPy array, the same on every rank: each rank's bounding box (lower, upper
        corner) of its points; an empty part has the box ``[inf, -inf]`` that meets nothing.
    """

    def __init__(self, points: DArray, features: tuple, index: DArray, boxes: np.ndarray, route: RowRoute,
                 source_sizes: tuple, caller_sizes: tuple | None):
        self.points, self.features, self.index, self.boxes = points, features, index, boxes
        self._route, self._source_sizes, self._caller_sizes = route, source_sizes, caller_sizes

    @property
    def sizes(self) -> tuple[int, ...]:
        """Points per rank."""
        return row_sizes(self.points)

    def take(self, features: DArray, name: str = "features") -> DArray:
        """``features`` (rows cut like the caller's points) moved with the points (collective)."""
        check_rows("Partition.take", name, features, self.points.shape[0], self._caller_sizes)
        features = rows_of("Partition.take", features)
        moved = self._route.send(host_rows(features), "points.partition")
        return wrap_rows(moved, features.shape[1:], self.sizes, features)

    def restore(self, values: DArray) -> DArray:
        """Per-point ``values`` (rows cut like :attr:`points`) back in the caller's order (collective).

        The rows come back cut like the caller's points (in balanced rows if those were not cut by rows).
        """
        check_rows("Partition.restore", "values", values, self.points.shape[0], self.sizes)
        back = self._route.back(host_rows(values), "points.partition")
        return wrap_rows(back, values.shape[1:], self._source_sizes, values)

    def renumber(self, indices: DArray) -> DArray:
        """Point indices in the caller's numbering (a 1-d integer DArray, e.g. edges from :func:`to_edges`)
        as row numbers of :attr:`points` (collective; each index is looked up on the rank holding it).

        Examples
        --------
        >>> import numpy as np, darray as da
        >>> from darray.points import partition
        >>> part = partition(da.asarray(np.array([[3.0], [0.0], [2.0], [1.0]]), split=0))
        >>> caller = da.asarray(np.array([1, 3]), split=0)
        >>> rows = part.renumber(caller)
        >>> bool((np.asarray(part.index.gather())[np.asarray(rows.gather())] == [1, 3]).all())
        True
        """
        rank = self.points._comm.rank
        start = int(offsets_of(self.sizes)[rank])
        rows = wrap_rows(np.arange(start, start + self.sizes[rank], dtype=np.int64)[:, None], (1,), self.sizes,
                         self.index)
        return gather(self.restore(rows), indices).data[:, 0]

    def __repr__(self):
        return f"Partition(N={self.points.shape[0]}, d={self.points.shape[1]}, sizes={self.sizes})"


def partition(points: DArray, features=(), method: str = "rcb") -> Partition:
    """Move each point (and its features) to the rank of its region: recursive coordinate bisection.

    Parameters
    ----------
    points : ``(N, d)`` real floating DArray, rows cut in any way (other layouts are cut into balanced rows).
    features : DArrays of ``N`` rows cut like ``points``.
    method : ``"rcb"``: the ranks are halved recursively, each half taking its share of the points
        below (or above) an exact cut across the longest side of the group's bounding box; counts
        differ by at most one point per rank and duplicates are cut by global index.

    Returns
    -------
    Partition : the partitioned points, features, permutation (``index``) and region boxes.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> from darray.points import partition
    >>> x = da.asarray(np.array([[0.0, 0.0], [5.0, 0.0], [1.0, 0.0], [4.0, 0.0]]), split=0)
    >>> part = partition(x)
    >>> sorted(np.asarray(part.index.gather()).tolist())
    [0, 1, 2, 3]
    >>> np.asarray(part.restore(part.points).gather()).tolist() == np.asarray(x.gather()).tolist()
    True
    """
    if method not in METHODS:
        raise ValueError(message("partition", "unknown method", repr(method), f"one of {METHODS}"))
    features = tuple(features) if isinstance(features, (tuple, list)) else (features,)
    if not isinstance(points, DArray):
        check_points("partition", points)
    caller = row_sizes(points)
    for i, f in enumerate(features):
        check_rows("partition", f"features[{i}]", f, points.shape[0], caller)
    points = check_points("partition", points)
    comm, rank = points._comm, points._comm.rank
    source = row_sizes(points)
    coords = host_rows(points)
    gidx = np.arange(*offsets_of(source)[rank:rank + 2], dtype=np.int64)
    with _recorder.span("compute", "points.rcb", shape=points.shape):
        dest = assign(comm, coords, gidx)
    route = RowRoute(comm, dest)
    counts = tuple(int(c) for c in to_numpy(comm.allreduce(np.bincount(dest, minlength=comm.size), "sum")))
    moved = route.send(coords, "points.partition")
    index = route.send(gidx, "points.partition")[:, 0]
    box = np.stack([moved.min(axis=0), moved.max(axis=0)]) if moved.shape[0] else \
        np.stack([np.full(coords.shape[1], np.inf), np.full(coords.shape[1], -np.inf)])
    boxes = to_numpy(comm.allgather(box.astype(np.float64)))
    part = Partition(wrap_rows(moved, points.shape[1:], counts, points), (),
                     wrap_rows(index, (), counts, points), boxes, route, source, caller)
    part.features = tuple(part.take(f, f"features[{i}]") for i, f in enumerate(features))
    return part
