"""Exact neighbour search by brute force in the blocks' own namespace (CuPy, torch, array-api-strict, ...).

The local search for blocks that are not NumPy (:func:`darray.points._search.searcher`
picks it): no scipy, and the work stays on the blocks' device. Queries are
taken a chunk at a time against every candidate point, the chunk sized so
that its temporaries stay within :data:`CHUNK_BYTES`.

Exactly the cKDTree path's answers: the device computes the squared
distances of :func:`darray.points._local.distances` (differences squared and
summed axis by axis in float64: each operation correctly rounded on every
backend) and selects by them; the square root is taken on the host by NumPy
for the selected candidates only (a device's ``sqrt`` may be off by an ulp:
torch's on CPU is). As the root is monotone, selecting the ``k + 1`` smallest
sums by ``(sum, global index)`` (a stable sort over candidates kept in index
order) and reordering them by ``(distance, global index)`` is exact unless
the ``k``-th and ``(k + 1)``-th distances are equal; those queries take every
candidate whose sum is within :data:`SUM_SLACK` of theirs.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from .._backend import from_numpy, to_numpy
from ._local import first_k, ranges, sorted_rows

__all__ = ["BruteSearch", "CHUNK_BYTES", "SUM_SLACK"]

#: Bytes of device temporaries one chunk of queries may take (differences, sums, the sort's indices).
CHUNK_BYTES = 1 << 27
#: float64/int64 temporaries of one chunk's size alive at once (differences, their squares, sums, the sort's order).
_TEMPORARIES = 5
#: Relative slack on squared distances: sums whose (correctly rounded) roots are equal differ by far less.
SUM_SLACK = 1e-12


class BruteSearch:
    """Candidate ``points`` (host float64 ``(n, d)``, global indices ``gids``) on namespace ``xp``'s ``device``.

    Examples
    --------
    >>> import numpy as np, array_api_strict as xp
    >>> s = BruteSearch(np.array([[0.0], [2.0], [1.0]]), np.array([7, 5, 6]), xp)
    >>> d, g = s.nearest(np.array([[1.5]]), 2, 9)
    >>> d.tolist(), g.tolist()  # 2.0 (index 5) and 1.0 (index 6) tie at 0.5: by index
    ([[0.5, 0.5]], [[5, 6]])
    >>> [a.tolist() for a in s.within(np.array([[0.0], [2.0]]), 1.0)]
    [[0, 0, 1, 1], [7, 6, 5, 6], [0.0, 1.0, 0.0, 1.0]]
    """

    def __init__(self, points: np.ndarray, gids: np.ndarray, xp: ModuleType, device=None):
        order = np.argsort(gids, kind="stable")
        self.xp, self.device = xp, device
        self.gids = np.ascontiguousarray(gids[order])
        self.points = from_numpy(xp, np.ascontiguousarray(points[order], dtype=np.float64), device)
        self.n, self.d = points.shape

    def _chunks(self, m: int):
        """Query row ranges whose ``(rows, n)`` temporaries fit :data:`CHUNK_BYTES`."""
        return ranges(m, max(1, CHUNK_BYTES // (8 * _TEMPORARIES * max(self.n, 1))))

    def _sums(self, queries: np.ndarray):
        """``(c, n)`` squared distances (device) from a chunk of host queries to every candidate."""
        xp, n = self.xp, self.n
        q = from_numpy(xp, np.ascontiguousarray(queries, dtype=np.float64), self.device)
        total = None
        for j in range(self.d):
            diff = q[:, j:j + 1] - xp.reshape(self.points[:, j], (1, n))
            total = diff * diff if total is None else total + diff * diff
        return total

    def _below(self, sums, limits: np.ndarray):
        """Host ``(row, candidate column, sum)`` of every device sum ``<= limits[row]``, row-major."""
        xp = self.xp
        inside = sums <= from_numpy(xp, np.ascontiguousarray(limits[:, None]), self.device)
        rows, cols = (to_numpy(a).astype(np.int64) for a in xp.nonzero(inside))
        return rows, cols, to_numpy(sums[inside]).astype(np.float64)

    def nearest(self, queries: np.ndarray, k: int, pad: int):
        """The ``k`` nearest candidates per query (host ``(m, k)`` distances and indices, padded ``(inf, pad)``)."""
        m = queries.shape[0]
        out_d, out_g = np.full((m, k), np.inf), np.full((m, k), pad, dtype=np.int64)
        take = min(k + 1, self.n)
        if m == 0 or take == 0:
            return out_d, out_g
        xp = self.xp
        for start, stop in self._chunks(m):
            sums = self._sums(queries[start:stop])
            order = xp.argsort(sums, axis=1, stable=True)[:, :take]
            best = to_numpy(xp.take_along_axis(sums, order, axis=1))
            d, g = sorted_rows(np.sqrt(best), self.gids[to_numpy(order)], k + 1, pad)
            out_d[start:stop], out_g[start:stop] = d[:, :k], g[:, :k]
            tied = np.flatnonzero(d[:, k] == d[:, k - 1]) if take > k else np.zeros(0, dtype=np.int64)
            if tied.size:
                some = xp.take(sums, from_numpy(xp, tied, self.device), axis=0)
                rows, cols, s = self._below(some, best[tied, k] * (1 + SUM_SLACK))
                out_d[start + tied], out_g[start + tied] = first_k(rows, np.sqrt(s), self.gids[cols], tied.size, k, pad)
        return out_d, out_g

    def within(self, queries: np.ndarray, r: float):
        """Every ``(query, global index, distance)`` with distance ``<= r``, flat, sorted by query, distance, index."""
        found = [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))]
        for start, stop in self._chunks(queries.shape[0] if self.n else 0):
            rows, cols, s = self._below(self._sums(queries[start:stop]), np.full(stop - start, r * r * (1 + SUM_SLACK)))
            d = np.sqrt(s)
            keep = d <= r
            found.append((rows[keep] + start, self.gids[cols[keep]], d[keep]))
        qi, g, d = (np.concatenate(parts) for parts in zip(*found))
        order = np.lexsort((g, d, qi))
        return qi[order], g[order], d[order]
