"""Exact neighbour search within one rank's points: scipy's cKDTree finds candidates, NumPy decides.

(That is the search for NumPy blocks; :func:`darray.points._search.searcher`
gives the other backends :class:`~darray.points._brute.BruteSearch`, a
brute-force kernel in their own namespace with the same answers.)

Distances are always recomputed here with one fixed formula
(:func:`distances`: squares summed axis by axis, then the square root), and
neighbours are ordered by ``(distance, global index)``: the answer does not
depend on the tree, on which rank held a point, or on how many ranks there
were. scipy is imported on first use (the ``points`` extra).
"""

from __future__ import annotations

import numpy as np

from .._errors import message

__all__ = ["distances", "first_k", "merge", "nearest", "ranges", "sorted_rows", "within", "tree"]


def ranges(m: int, step: int):
    """Ranges ``(start, stop)`` covering ``range(m)`` in steps of ``step`` (the chunks of a search)."""
    return ((start, min(start + step, m)) for start in range(0, m, step))


#: Relative slack of the tree's searches: a candidate the tree's own rounding might miss is still found.
SLACK = 1e-9


def tree(points: np.ndarray):
    """A cKDTree of ``points`` (scipy is imported here, on first use)."""
    try:
        from scipy.spatial import cKDTree
    except ImportError:  # pragma: no cover - scipy is in the points extra
        raise ImportError(message("darray.points", "neighbour search needs scipy", None,
                                  "pip install 'darray[points]'")) from None
    return cKDTree(points)


def distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Euclidean distances between rows of ``a`` and ``b`` (broadcast), summed axis by axis in a fixed order."""
    diff = a - b
    total = diff[..., 0] * diff[..., 0]
    for j in range(1, diff.shape[-1]):
        total = total + diff[..., j] * diff[..., j]
    return np.sqrt(total)


def first_k(qi: np.ndarray, d: np.ndarray, g: np.ndarray, m: int, k: int, pad: int):
    """Per query ``0 <= qi < m``, the ``k`` candidates first by ``(distance, global index)``, padded with ``(inf, pad)``."""
    order = np.lexsort((g, d, qi))
    qi, d, g = qi[order], d[order], g[order]
    starts = np.searchsorted(qi, np.arange(m))
    rank = np.arange(qi.shape[0]) - starts[qi]
    keep = rank < k
    out_d = np.full((m, k), np.inf)
    out_g = np.full((m, k), pad, dtype=np.int64)
    out_d[qi[keep], rank[keep]] = d[keep]
    out_g[qi[keep], rank[keep]] = g[keep]
    return out_d, out_g


def sorted_rows(d: np.ndarray, g: np.ndarray, k: int, pad: int):
    """Each row of candidates ``(m, c)`` ordered by ``(distance, global index)``, cut or padded to ``k`` columns."""
    by_index = np.argsort(g, axis=1, kind="stable")
    d, g = np.take_along_axis(d, by_index, 1), np.take_along_axis(g, by_index, 1)
    by_distance = np.argsort(d, axis=1, kind="stable")
    d, g = np.take_along_axis(d, by_distance, 1), np.take_along_axis(g, by_distance, 1)
    if d.shape[1] < k:
        m, c = d.shape
        d = np.concatenate([d, np.full((m, k - c), np.inf)], axis=1)
        g = np.concatenate([g, np.full((m, k - c), pad, dtype=np.int64)], axis=1)
    return d, g


def merge(d0: np.ndarray, g0: np.ndarray, d1: np.ndarray, g1: np.ndarray, k: int, pad: int):
    """The first ``k`` of two candidate lists per query, by ``(distance, global index)``."""
    d, g = sorted_rows(np.concatenate([d0, d1], axis=1), np.concatenate([g0, g1], axis=1), k, pad)
    return d[:, :k], g[:, :k]


def nearest(points: np.ndarray, gids: np.ndarray, queries: np.ndarray, k: int, pad: int, kd=None):
    """The ``k`` nearest of ``points`` (global indices ``gids``) to each query: ``(distances, indices)`` ``(m, k)``.

    Ordered by ``(distance, global index)``; missing neighbours (fewer than
    ``k`` points) are ``(inf, pad)``. The tree proposes ``k + 1`` candidates;
    only queries whose ``k``-th and ``(k + 1)``-th candidates are nearly tied
    ask the tree for every point within the ``k``-th distance.
    """
    m, n = queries.shape[0], points.shape[0]
    if m == 0 or n == 0:
        return np.full((m, k), np.inf), np.full((m, k), pad, dtype=np.int64)
    kd = tree(points) if kd is None else kd
    kk = min(k + 1, n)
    _, idx = kd.query(queries, k=kk)
    idx = idx.reshape(m, kk)
    d, g = sorted_rows(distances(queries[:, None, :], points[idx]), gids[idx], k + 1, pad)
    out_d, out_g = d[:, :k].copy(), g[:, :k].copy()
    tied = np.flatnonzero(d[:, k] <= d[:, k - 1] * (1 + SLACK) + 1e-300) if kk > k else np.zeros(0, dtype=np.int64)
    if tied.size:
        near = kd.query_ball_point(queries[tied], d[tied, k - 1] * (1 + SLACK) + 1e-300)
        lengths = np.fromiter((len(c) for c in near), dtype=np.int64, count=tied.size)
        pi = np.concatenate([np.asarray(c, dtype=np.int64) for c in near])
        qi = np.repeat(np.arange(tied.size), lengths)
        out_d[tied], out_g[tied] = first_k(qi, distances(queries[tied][qi], points[pi]), gids[pi], tied.size, k, pad)
    return out_d, out_g


def within(points: np.ndarray, gids: np.ndarray, queries: np.ndarray, r: float, kd=None):
    """Every ``(query, global index, distance)`` with distance ``<= r``, flat, sorted by query, distance, index."""
    if queries.shape[0] == 0 or points.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
    kd = tree(points) if kd is None else kd
    pairs = tree(queries).sparse_distance_matrix(kd, r * (1 + SLACK) + 1e-300, output_type="ndarray")
    qi, pi = pairs["i"].astype(np.int64), pairs["j"].astype(np.int64)
    d = distances(queries[qi], points[pi])
    keep = d <= r
    qi, pi, d = qi[keep], pi[keep], d[keep]
    g = gids[pi]
    order = np.lexsort((g, d, qi))
    return qi[order], g[order], d[order]

