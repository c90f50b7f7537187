"""darray.points on blocks that are not NumPy: the brute-force local search (darray.points._brute).

Point sets with array-api-strict blocks (standing in for CuPy; always
installed with the test extra) and with torch blocks where torch is
installed, at every rank count: the same exact oracle as tests/test_points.py
(brute force in NumPy, itself checked against scipy's cKDTree), so indices
and distances are the cKDTree path's bit for bit. Duplicate points (ties),
clustered points, empty parts, ``k`` larger than a part and than ``N``;
the kernel itself against the cKDTree search with chunks of one query.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import darray as da
from darray import points as pts
from darray._backend import namespace_named, namespace_of
from darray.points import _brute, _search
from darray.testing import agree

from _cases import COMM
from test_points import CUTS, N, check, cloud, ref_knn, ref_radius

pytestmark = pytest.mark.mpi

#: The block libraries other than NumPy that are installed here (torch is optional).
BACKENDS = ["array_api_strict"] + (["torch"] if importlib.util.find_spec("torch") else [])


def namespace(backend: str):
    return namespace_named(backend)


def blocks(g: np.ndarray, cut: str, backend: str) -> da.DArray:
    """``g`` cut like ``cut`` with local blocks of ``backend``."""
    return da.asarray(namespace(backend).asarray(g), **CUTS[cut](g.shape[0]))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("cut", ["rows", "uneven", "one-rank"])
@pytest.mark.parametrize("kind", ["uniform", "clustered", "duplicates"])
def test_knn_and_radius(backend, kind, cut):
    g = cloud(kind)
    x = blocks(g, cut, backend)
    for k in (1, 6, N // 2, N + 3):
        d, i = pts.knn(x, x, k)
        assert not agree(COMM, type(i.local) is type(x.local))  # the results stay on the blocks' backend
        check((d, i), ref_knn(g, g, k))
    for r, most in ((0.3, None), (0.5, 3), (1e-3, None)):
        check(pts.radius(x, x, r, max_neighbors=most), ref_radius(g, g, r, most))


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_other_queries_and_empty_sets(backend):
    g = cloud("clustered", d=2).astype(np.float32)
    q = cloud("uniform", 17, d=2, seed=3).astype(np.float32) * 10
    part = pts.partition(blocks(g, "uneven", backend))
    g64, q64 = g.astype(np.float64), q.astype(np.float64)
    check(pts.knn(blocks(q, "rows", backend), part, 4), ref_knn(q64, g64, 4))
    check(pts.radius(blocks(q, "rows", backend), part, 2.0), ref_radius(q64, g64, 2.0))
    empty = blocks(np.zeros((0, 2)), "rows", backend)
    check(pts.knn(empty, part, 3), ref_knn(np.zeros((0, 2)), g64, 3))
    check(pts.knn(blocks(q, "rows", backend), empty, 2), ref_knn(q64, np.zeros((0, 2)), 2))
    check(pts.radius(blocks(q, "rows", backend), empty, 1.0), ref_radius(q64, np.zeros((0, 2)), 1.0))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", ["uniform", "clustered", "duplicates"])
def test_kernel_matches_the_tree_in_chunks_of_one_query(backend, kind, monkeypatch):
    """Every chunk one query (the byte budget below one row): the same arrays as the cKDTree search (7 at a time)."""
    monkeypatch.setattr(_brute, "CHUNK_BYTES", 1)
    monkeypatch.setattr(_search, "QUERY_CHUNK", 7)
    g, q = cloud(kind, 60, seed=1), cloud(kind, 25, seed=2)
    gids = np.random.default_rng(4).permutation(1000)[:60]  # global indices in no order
    brute = _search.searcher(g, gids, namespace(backend))
    tree = _search.searcher(g, gids)
    assert isinstance(brute, _brute.BruteSearch) and isinstance(tree, _search.TreeSearch)
    for k in (1, 5, 70):
        for got, want in zip(brute.nearest(q, k, 1000), tree.nearest(q, k, 1000)):
            assert got.dtype == want.dtype and np.array_equal(got, want)
    for r in (0.05, 0.5):
        for got, want in zip(brute.within(q, r), tree.within(q, r)):
            assert got.dtype == want.dtype and np.array_equal(got, want)


def test_numpy_blocks_use_the_tree():
    g = cloud("uniform")
    assert isinstance(_search.searcher(g, np.arange(N), namespace_of(g)), _search.TreeSearch)


@pytest.mark.parametrize("backend", BACKENDS)
def test_roots_that_tie_from_unequal_sums(backend):
    """``1`` and ``1 + 2**-52`` have the same root: the point with the larger sum but the smaller index comes first,
    though the device selects by sums (the tied queries look again at every candidate that close)."""
    p = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [1.0, 2.0 ** -26], [-1.0, 2.0 ** -25]])  # the last: root 1 + 2**-51
    gids = np.array([9, 8, 7, 1, 0])
    q = np.zeros((1, 2))
    brute, tree = _search.searcher(p, gids, namespace(backend)), _search.searcher(p, gids)
    for k, want in ((1, [1]), (2, [1, 7]), (4, [1, 7, 8, 9])):
        d, g = brute.nearest(q, k, 5)
        assert g[0].tolist() == want and d[0].tolist() == [1.0] * k
        assert all(np.array_equal(a, b) for a, b in zip((d, g), tree.nearest(q, k, 5)))
    assert all(np.array_equal(a, b) for a, b in zip(brute.within(q, 1.0), tree.within(q, 1.0)))
    assert brute.within(q, 1.0)[1].tolist() == [1, 7, 8, 9]
