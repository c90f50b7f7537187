"""The local search of one rank's candidate points, by backend: a cKDTree on NumPy blocks, brute force on others.

Both searches answer ``nearest(queries, k, pad)`` and ``within(queries, r)``
on host float64 queries with host NumPy results, identical bit for bit
(:mod:`darray.points._local` for the tree, :mod:`darray.points._brute` for
the kernel in the blocks' own namespace). kNN searches take the queries
:data:`QUERY_CHUNK` at a time, so that their temporaries (``k + 1``
candidates per query, their coordinates, the sorts) stay bounded whatever
the number of queries.
"""

from __future__ import annotations

import numpy as np

from .._backend import is_numpy_namespace
from ._brute import BruteSearch
from ._local import merge, nearest, ranges, tree, within

__all__ = ["QUERY_CHUNK", "TreeSearch", "chunks", "merge_nearest", "searcher"]

#: Queries per chunk of a kNN search.
QUERY_CHUNK = 1 << 16


def chunks(m: int, step: int | None = None):
    """Ranges ``(start, stop)`` covering ``range(m)`` in steps of :data:`QUERY_CHUNK` (or ``step``)."""
    return ranges(m, QUERY_CHUNK if step is None else step)


class TreeSearch:
    """Candidate ``points`` (host float64 ``(n, d)``, global indices ``gids``) searched with a cKDTree built on first use."""

    def __init__(self, points: np.ndarray, gids: np.ndarray):
        self.points, self.gids, self._kd = points, gids, None

    @property
    def kd(self):
        if self._kd is None:
            self._kd = tree(self.points)
        return self._kd

    def nearest(self, queries: np.ndarray, k: int, pad: int):
        """:func:`nearest` of the candidates, :data:`QUERY_CHUNK` queries at a time."""
        if queries.shape[0] == 0 or self.points.shape[0] == 0:
            return nearest(self.points, self.gids, queries, k, pad)
        out_d, out_g = np.empty((queries.shape[0], k)), np.empty((queries.shape[0], k), dtype=np.int64)
        for start, stop in chunks(queries.shape[0]):
            out_d[start:stop], out_g[start:stop] = nearest(self.points, self.gids, queries[start:stop], k, pad, self.kd)
        return out_d, out_g

    def within(self, queries: np.ndarray, r: float):
        """:func:`within` of the candidates."""
        if queries.shape[0] == 0 or self.points.shape[0] == 0:
            return within(self.points, self.gids, queries, r)
        return within(self.points, self.gids, queries, r, self.kd)


def searcher(points: np.ndarray, gids: np.ndarray, xp=None, device=None):
    """The local search of the candidates ``points`` (global indices ``gids``) for blocks of namespace ``xp``.

    NumPy blocks (or ``xp=None``): a :class:`TreeSearch` (scipy's cKDTree);
    any other namespace: a :class:`~darray.points._brute.BruteSearch` on the
    blocks' ``device``. Both answer ``nearest(queries, k, pad)`` and
    ``within(queries, r)`` with the same results.
    """
    if xp is None or is_numpy_namespace(xp):
        return TreeSearch(points, gids)
    return BruteSearch(points, gids, xp, device)


def merge_nearest(search, queries: np.ndarray, k: int, pad: int, d: np.ndarray, g: np.ndarray):
    """Candidate lists ``(d, g)`` ``(m, k)`` merged in place with the ``k`` nearest of ``search``'s candidates to
    ``queries``, :data:`QUERY_CHUNK` queries at a time; returns ``(d, g)``."""
    for start, stop in chunks(queries.shape[0]):
        d[start:stop], g[start:stop] = merge(d[start:stop], g[start:stop],
                                             *search.nearest(queries[start:stop], k, pad), k, pad)
    return d, g
