"""Neighbour queries across shards: ``knn`` and ``radius`` with exact, rank-count-independent answers.

Each query row goes to its *home* rank (the rank whose region box is
nearest; inside it when it lies in one), which answers from its own points.
Then the points of other ranks within reach are sent to it once, as ghosts:
for a ball query the balls of radius ``r`` around its queries, for kNN the
balls its first, local answer bounds; each rank's reach is described by
:data:`LEAVES` boxes around groups of nearby queries, of those queries only
whose balls meet another rank's region box (a rank whose points cannot come
closer sends nothing). Every distance is recomputed with one formula and
neighbours are ordered by ``(distance, global index)``
(:mod:`darray.points._local`), so the answer is the same at any rank count.
The exchanges are labelled ``points.queries``, ``points.ghosts`` and
``points.answers`` in :func:`darray.trace`.
"""

from __future__ import annotations

import numbers
import math

import numpy as np

from .._backend import to_numpy
from .._core import DArray
from .._errors import message
from ._local import SLACK, first_k
from ._search import chunks, merge_nearest, searcher
from ._rows import RowRoute, host_rows, row_sizes, wrap_rows
from .partition import Partition, check_points, partition

__all__ = ["knn", "radius", "to_edges"]


def _box_gaps(boxes: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``(m, P)`` distances from each query to each box (inf to an empty box)."""
    gap = np.maximum(np.maximum(boxes[None, :, 0, :] - q[:, None, :], q[:, None, :] - boxes[None, :, 1, :]), 0.0)
    return np.sqrt((gap * gap).sum(axis=-1))


def _setup(func: str, query, points):
    """Validated ``(query rows, partition)``; the same error on every rank."""
    query = check_points(func, query, "query")
    part = points if isinstance(points, Partition) else partition(check_points(func, points))
    if query.shape[1] != part.points.shape[1]:
        raise ValueError(message(func, "query and points differ in dimension", (query.shape[1], part.points.shape[1]),
                                 "the same number of coordinates"))
    return query, part


class _Search:
    """The queries of this rank moved to their home ranks, with the home's own points and tree."""

    def __init__(self, query: DArray, part: Partition):
        self.query, self.part, self.comm = query, part, query._comm
        q = host_rows(query).astype(np.float64, copy=False)
        home = np.argmin(_box_gaps(part.boxes, q), axis=1) if q.shape[0] else np.zeros(0, dtype=np.int64)
        self.route = RowRoute(self.comm, home)
        self.q = self.route.send(q, "points.queries")
        self.own = host_rows(part.points).astype(np.float64, copy=False)
        self.own_g = host_rows(part.index)[:, 0]
        self.xp, self.device = part.points._xp, part.points.device
        self.local = self.search(self.own, self.own_g)
        self.n = part.points.shape[0]

    def search(self, coords: np.ndarray, gids: np.ndarray):
        """The local search of candidates ``coords`` for this backend (cKDTree on NumPy blocks, brute force else)."""
        return searcher(coords, gids, self.xp, self.device)

    def ghosts(self, reach: np.ndarray):
        """Points of other ranks within ``reach`` (per home query) of this rank's queries: ``(coords, indices)``.

        Each rank's reach is :data:`LEAVES` boxes (:func:`_leaf_boxes`) around its queries whose balls
        meet another rank's box (the others need no ghost); a point is sent to a rank once if it lies in
        one of them.
        """
        d, rank = self.own.shape[1], self.comm.rank
        pad = _pad(self.q, reach)
        others = self.part.boxes.copy()
        others[rank, 0], others[rank, 1] = np.inf, -np.inf
        crossing = (_box_gaps(others, self.q) <= pad[:, None]).any(axis=1)
        mine = _leaf_boxes(self.q[crossing], pad[crossing])
        boxes = to_numpy(self.comm.allgather(mine.ravel())).reshape(self.comm.size, LEAVES, 2, d)
        boxes[rank, :, 0], boxes[rank, :, 1] = np.inf, -np.inf  # own points answered already
        lower, upper = boxes[:, :, 0].min(axis=1), boxes[:, :, 1].max(axis=1)  # (P, d) each rank's whole reach
        near = ((self.own[:, None, :] >= lower[None]) & (self.own[:, None, :] <= upper[None])).all(-1)
        point, dest = np.nonzero(near)
        inside = np.zeros(point.shape[0], dtype=bool)
        for start, stop in chunks(point.shape[0], max(1, (1 << 22) // (LEAVES * d))):
            p = self.own[point[start:stop]][:, None, :]
            leaves = boxes[dest[start:stop]]
            inside[start:stop] = ((p >= leaves[:, :, 0]) & (p <= leaves[:, :, 1])).all(-1).any(-1)
        point, dest = point[inside], dest[inside]
        route = RowRoute(self.comm, dest)
        coords = route.send(self.own[point], "points.ghosts")
        gids = route.send(self.own_g[point], "points.ghosts")[:, 0]
        return coords, gids

    def answer(self, values: np.ndarray, dtype) -> DArray:
        """Per home query ``values`` sent back to the query rows' ranks, as a DArray cut like the queries."""
        back = self.route.back(values, "points.answers").astype(dtype, copy=False)
        return wrap_rows(back, values.shape[1:], row_sizes(self.query), self.query)


#: Boxes describing one rank's reach: its queries near other regions cut by local bisection into this many
#: groups. More boxes hug the balls more closely (ghost bytes / ideal, 10^6 uniform points, k = 16, 2 ranks:
#: 2.10 with 32 boxes around all queries, 1.87 with 256 around those near other regions); the test of each
#: candidate point against them costs ``LEAVES`` comparisons.
LEAVES = 256


def _pad(q: np.ndarray, reach: np.ndarray) -> np.ndarray:
    """Each query's ``reach`` grown by the search slack (relative, and relative to the coordinates' size)."""
    if not q.shape[0]:
        return np.zeros(0)
    return reach * (1 + SLACK) + SLACK * np.abs(q).max(axis=1) + 1e-300


def _leaf_boxes(q: np.ndarray, pad: np.ndarray) -> np.ndarray:
    """``(LEAVES, 2, d)``: the boxes of the balls ``(q, pad)`` of groups of nearby queries, split in halves
    across their longest side; unused boxes are ``[inf, -inf]``."""
    d = q.shape[1]
    boxes = np.empty((LEAVES, 2, d))
    boxes[:, 0], boxes[:, 1] = np.inf, -np.inf
    if not q.shape[0]:
        return boxes
    pad = pad[:, None]
    groups = [np.arange(q.shape[0])]
    while 2 * len(groups) <= LEAVES and any(g.shape[0] > 1 for g in groups):
        halves = []
        for g in groups:
            axis = int(np.argmax(q[g].max(axis=0) - q[g].min(axis=0)))
            order = g[np.argsort(q[g, axis], kind="stable")]
            halves += [order[:order.shape[0] // 2], order[order.shape[0] // 2:]]
        groups = [g for g in halves if g.shape[0]]
    for j, g in enumerate(groups):
        boxes[j, 0], boxes[j, 1] = (q[g] - pad[g]).min(axis=0), (q[g] + pad[g]).max(axis=0)
    return boxes


def knn(query: DArray, points, k: int):
    """The ``k`` nearest points to each query row, across all ranks: ``(distances, indices)``.

    Parameters
    ----------
    query : ``(M, d)`` real floating DArray, rows cut in any way.
    points : ``(N, d)`` DArray (partitioned here) or a :class:`Partition` made once and reused.
    k : neighbours per query, ``k >= 1``.

    Returns
    -------
    distances, indices : ``(M, k)`` DArrays cut like ``query``'s rows: float64 distances and int64 indices
        into the caller's ``points`` (global numbering), nearest first, ties by index. Where ``N < k`` the
        missing neighbours are ``inf`` and ``N`` (scipy's convention).

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> from darray.points import knn
    >>> x = da.asarray(np.array([[0.0], [3.0], [1.0], [1.0]]), split=0)
    >>> d, i = knn(x, x, 2)
    >>> np.asarray(i.gather()).tolist()
    [[0, 2], [1, 2], [2, 3], [2, 3]]
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(message("knn", "k must be an integer", type(k).__name__, "an int >= 1"))
    if k < 1:
        raise ValueError(message("knn", "k must be at least 1", k, "k >= 1"))
    k = int(k)
    search = _Search(*_setup("knn", query, points))
    d0, g0 = search.local.nearest(search.q, k, search.n)
    coords, gids = search.ghosts(d0[:, k - 1])  # (k >= 1) the local k-th distance bounds the search
    if coords.shape[0]:
        merge_nearest(search.search(coords, gids), search.q, k, search.n, d0, g0)
    return search.answer(d0, np.float64), search.answer(g0, np.int64)


def radius(query: DArray, points, r: float, max_neighbors: int | None = None):
    """Every point within distance ``r`` of each query row (a ball query), across all ranks.

    Parameters
    ----------
    query : ``(M, d)`` real floating DArray, rows cut in any way.
    points : ``(N, d)`` DArray (partitioned here) or a :class:`Partition` made once and reused.
    r : the ball's radius, ``r > 0`` (points at distance exactly ``r`` are in).
    max_neighbors : keep at most this many, the nearest (ties by index); None keeps all.

    Returns
    -------
    distances, indices : ``(M, K)`` DArrays cut like ``query``'s rows, nearest first, ties by index,
        padded with ``inf`` and ``N``; ``K`` is ``max_neighbors``, or the largest count of any query.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> from darray.points import radius
    >>> x = da.asarray(np.array([[0.0], [3.0], [1.0], [0.5]]), split=0)
    >>> d, i = radius(x, x, 0.6)
    >>> np.asarray(i.gather()).tolist()  # padded with N = 4
    [[0, 3, 4], [1, 4, 4], [2, 3, 4], [3, 0, 2]]
    """
    if isinstance(r, bool) or not isinstance(r, numbers.Real):
        raise TypeError(message("radius", "r must be a real number", type(r).__name__, "a float > 0"))
    if not r > 0 or not math.isfinite(r):
        raise ValueError(message("radius", "r must be positive and finite", r, "0 < r < inf"))
    if max_neighbors is not None and (isinstance(max_neighbors, bool) or not isinstance(max_neighbors, numbers.Integral)
                                      or max_neighbors < 1):
        raise ValueError(message("radius", "max_neighbors must be None or an int >= 1", max_neighbors, ">= 1"))
    search = _Search(*_setup("radius", query, points))
    r, m = float(r), search.q.shape[0]
    coords, gids = search.ghosts(np.full(m, r))
    found = [search.local.within(search.q, r), search.search(coords, gids).within(search.q, r)]
    qi, g, d = (np.concatenate(parts) for parts in zip(*found))
    most = int(np.bincount(qi, minlength=m).max()) if m else 0
    width = int(max_neighbors) if max_neighbors is not None else \
        int(to_numpy(search.comm.allreduce(np.array([most], dtype=np.int64), "max"))[0])
    d, g = first_k(qi, d, g, m, width, search.n)
    return search.answer(d, np.float64), search.answer(g, np.int64)


def to_edges(indices: DArray, n: int):
    """Neighbour lists as a graph's edges: ``(src, dst)`` with ``src`` a neighbour of query row ``dst``.

    ``indices`` is the ``(M, K)`` result of :func:`knn` or :func:`radius` on
    ``n`` points; padding entries (``== n``) are dropped. Built locally (one
    small allgather of the counts): both are ``(E,)`` int64 DArrays cut like
    ``indices``' rows, edges in row order.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> from darray.points import radius, to_edges
    >>> x = da.asarray(np.array([[0.0], [3.0], [0.5]]), split=0)
    >>> src, dst = to_edges(radius(x, x, 0.6)[1], 3)
    >>> np.asarray(src.gather()).tolist(), np.asarray(dst.gather()).tolist()
    ([0, 2, 1, 2, 0], [0, 0, 1, 2, 2])
    """
    sizes = row_sizes(indices) if isinstance(indices, DArray) else None
    if sizes is None or indices.ndim != 2 or indices.dtype.kind not in "iu":
        raise TypeError(message("to_edges", "indices must be an (M, K) integer DArray cut by rows",
                                getattr(indices, "shape", type(indices).__name__), "the indices of knn or radius"))
    comm = indices._comm
    local = host_rows(indices)
    rows, cols = np.nonzero(local != n)
    dst = rows.astype(np.int64) + int(np.sum(sizes[:comm.rank], dtype=np.int64))
    src = local[rows, cols].astype(np.int64)
    counts = tuple(int(c) for c in np.asarray(comm.allgather(np.array([src.shape[0]], dtype=np.int64)))[:, 0])
    return wrap_rows(src, (), counts, indices), wrap_rows(dst, (), counts, indices)
