"""Point sets (darray.points): partition and neighbour queries at every rank count.

The oracle is one process on the gathered points: a brute-force distance
matrix (the same formula, ties by global index) for exact indices and
distances, checked itself against scipy's cKDTree. Point sets: uniform,
clustered, duplicated (ties), cut in balanced rows, uneven rows with an
empty part, all rows on one rank, replicated; ``k`` larger than a part and
larger than ``N``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import cKDTree

import darray as da
from darray import points as pts
from darray._backend import to_numpy
from darray.points import _search
from darray.testing import agree, assert_raises_everywhere, uneven_sizes

from _cases import COMM, P

pytestmark = pytest.mark.mpi

N = 41


def cloud(kind: str, n: int = N, d: int = 3, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        return rng.random((n, d))
    if kind == "clustered":
        centres = rng.random((3, d)) * 10
        return centres[rng.integers(0, 3, n)] + 0.05 * rng.standard_normal((n, d))
    return np.round(rng.random((n, d)) * 2) / 2  # duplicates: a 3x3x3 lattice, many ties


CUTS = {"rows": lambda n: dict(split=0), "uneven": lambda n: dict(split=0, sizes=uneven_sizes(n, P)),
        "one-rank": lambda n: dict(split=0, sizes=[0] * (P - 1) + [n]), "replicated": lambda n: dict(split=None)}


def sharded(g: np.ndarray, cut: str) -> da.DArray:
    return da.asarray(g, **CUTS[cut](g.shape[0]))


def host(x: da.DArray) -> np.ndarray:
    return to_numpy(x.gather())


def brute(q: np.ndarray, p: np.ndarray):
    """All distances (formula of darray.points._local) and the order (distance, index) per query."""
    diff = q[:, None, :] - p[None, :, :]
    total = diff[..., 0] ** 2
    for j in range(1, p.shape[1]):
        total = total + diff[..., j] ** 2
    dist = np.sqrt(total)
    order = np.lexsort((np.broadcast_to(np.arange(p.shape[0]), dist.shape), dist), axis=-1)
    return np.take_along_axis(dist, order, axis=1), order


def ref_knn(q, p, k):
    dist, order = brute(q, p)
    d = np.full((q.shape[0], k), np.inf)
    i = np.full((q.shape[0], k), p.shape[0])
    m = min(k, p.shape[0])
    d[:, :m], i[:, :m] = dist[:, :m], order[:, :m]
    if p.shape[0]:  # the oracle agrees with scipy's tree on the distances
        td, _ = cKDTree(p).query(q, k=k)
        assert np.array_equal(td.reshape(d.shape), d)
    return d, i


def ref_radius(q, p, r, most=None):
    dist, order = brute(q, p)
    counts = (dist <= r).sum(axis=1)
    if p.shape[0]:
        assert counts.tolist() == [len(c) for c in cKDTree(p).query_ball_point(q, r)]
    width = most if most is not None else int(counts.max(initial=0))
    d = np.full((q.shape[0], width), np.inf)
    i = np.full((q.shape[0], width), p.shape[0])
    for row, c in enumerate(np.minimum(counts, width)):
        d[row, :c], i[row, :c] = dist[row, :c], order[row, :c]
    return d, i


def check(got, expected) -> None:
    d, i = got
    ok = np.array_equal(host(d), expected[0]) and np.array_equal(host(i), expected[1])
    assert not agree(COMM, ok), f"rank {COMM.rank}: {host(i)} != {expected[1]}"


@pytest.mark.parametrize("cut", list(CUTS))
@pytest.mark.parametrize("kind", ["uniform", "clustered", "duplicates"])
def test_partition(kind, cut):
    g = cloud(kind)
    x = sharded(g, cut)
    feat = sharded(np.arange(N * 2.0).reshape(N, 2), cut)
    part = pts.partition(x, [feat])
    index = host(part.index)
    sizes = part.sizes
    local = to_numpy(part.points.local)
    box = part.boxes[COMM.rank]
    ok = (sorted(index.tolist()) == list(range(N)) and np.array_equal(host(part.points), g[index])
          and np.array_equal(host(part.features[0]), np.arange(N * 2.0).reshape(N, 2)[index])
          and max(sizes) - min(sizes) <= 1
          and bool(((local >= box[0]) & (local <= box[1])).all())
          and np.array_equal(host(part.restore(part.points)), g)
          and np.array_equal(host(part.restore(part.take(feat))), host(feat))
          and np.array_equal(index[host(part.renumber(da.asarray(np.arange(N)[::-1].copy(), split=0)))],
                             np.arange(N)[::-1]))
    assert not agree(COMM, ok)


def test_partition_is_compact():
    """Uniform points in the unit cube: the regions' boxes overlap at most on their cut planes."""
    part = pts.partition(sharded(cloud("uniform", 400), "rows"))
    volumes = np.prod(part.boxes[:, 1] - part.boxes[:, 0], axis=1)
    assert volumes.sum() <= 1.0


@pytest.mark.parametrize("cut", list(CUTS))
@pytest.mark.parametrize("kind", ["uniform", "clustered", "duplicates"])
@pytest.mark.parametrize("k", [1, 6, N // 2, N + 3])
def test_knn(kind, cut, k):
    g = cloud(kind)
    x = sharded(g, cut)
    check(pts.knn(x, x, k), ref_knn(g, g, k))


@pytest.mark.parametrize("kind", ["uniform", "duplicates"])
def test_knn_in_chunks_of_queries(kind, monkeypatch):
    """The tree search and the merge with the ghosts' candidates a few queries at a time: the same answers."""
    monkeypatch.setattr(_search, "QUERY_CHUNK", 4)
    g = cloud(kind)
    x = sharded(g, "uneven")
    for k in (1, 6, N + 3):
        check(pts.knn(x, x, k), ref_knn(g, g, k))


@pytest.mark.parametrize("qcut", ["rows", "uneven"])
def test_knn_other_queries_and_a_reused_partition(qcut):
    g, q = cloud("clustered"), cloud("uniform", 17, seed=3) * 10
    part = pts.partition(sharded(g, "uneven"))
    for k in (1, 4):
        check(pts.knn(sharded(q, qcut), part, k), ref_knn(q, g, k))


def test_knn_empty_points_and_queries():
    g = cloud("uniform")
    empty = sharded(np.zeros((0, 3)), "rows")
    check(pts.knn(empty, sharded(g, "rows"), 3), ref_knn(np.zeros((0, 3)), g, 3))
    check(pts.knn(sharded(g, "rows"), empty, 2), ref_knn(g, np.zeros((0, 3)), 2))


@pytest.mark.parametrize("cut", list(CUTS))
@pytest.mark.parametrize("kind", ["uniform", "clustered", "duplicates"])
@pytest.mark.parametrize("r, most", [(0.3, None), (0.5, 3), (1e-3, None)])
def test_radius(kind, cut, r, most):
    g = cloud(kind)
    x = sharded(g, cut)
    check(pts.radius(x, x, r, max_neighbors=most), ref_radius(g, g, r, most))


@pytest.mark.parametrize("d, dtype", [(2, np.float64), (1, np.float32)])
def test_queries_other_dimensions_and_float32(d, dtype):
    g = cloud("clustered", d=d).astype(dtype)
    x = sharded(g, "uneven")
    g = g.astype(np.float64)  # distances are float64
    check(pts.knn(x, x, 5), ref_knn(g, g, 5))
    check(pts.radius(x, x, 0.1), ref_radius(g, g, 0.1))


def test_ghosts_are_traced():
    x = sharded(cloud("uniform", 200), "rows")
    part = pts.partition(x)
    with da.tracing() as t:
        pts.knn(x, part, 4)
    sent = {}
    for e in t.events:
        if e["kind"] == "comm":
            sent[e["op"]] = sent.get(e["op"], 0) + e["nbytes"]
    ghosts = int(np.asarray(COMM.allreduce(np.array([sent.get("points.ghosts", 0)]), "sum"))[0])
    # ghosts (coordinates and an index, 32 bytes each) near the cut planes, not every point to every other rank
    assert (P == 1 and ghosts == 0) or (P > 1 and 0 < ghosts < 0.75 * 200 * 32 * (P - 1)), ghosts


@pytest.mark.parametrize("call, exc, match", [
    (lambda x: pts.knn(x, x, 0), ValueError, "k must be at least 1"),
    (lambda x: pts.knn(x, x, 2.0), TypeError, "k must be an integer"),
    (lambda x: pts.radius(x, x, 0.0), ValueError, "r must be positive"),
    (lambda x: pts.radius(x, x, -1.0), ValueError, "r must be positive"),
    (lambda x: pts.radius(x, x, float("nan")), ValueError, "r must be positive"),
    (lambda x: pts.radius(x, x, 1.0, max_neighbors=0), ValueError, "max_neighbors"),
    (lambda x: pts.knn(x[:, :2], x, 1), ValueError, "differ in dimension"),
    (lambda x: pts.partition(x, method="kd"), ValueError, "unknown method"),
    (lambda x: pts.partition(x[:, 0]), ValueError, "(N, d)"),
    (lambda x: pts.partition(x.astype(da.int64)), TypeError, "floating"),
    (lambda x: pts.partition(np.zeros((3, 2))), TypeError, "must be a DArray"),
    (lambda x: pts.partition(x, [da.zeros(N - 1, split=0)]), ValueError, "number of rows"),
    *([(lambda x: pts.partition(x, [da.asarray(np.zeros(N), split=0, sizes=[0] * (P - 1) + [N])]), ValueError,
        "cut unlike")] if P > 1 else []),  # one rank has one cut only
])
def test_bad_input(call, exc, match):
    x = sharded(cloud("uniform"), "uneven")
    assert_raises_everywhere(exc, call, x, match=match)


def test_nan_on_one_rank():
    g = cloud("uniform")
    g[N - 1, 1] = np.nan  # on the last rank only
    assert_raises_everywhere(ValueError, pts.knn, sharded(g, "rows"), sharded(cloud("uniform"), "rows"), 2,
                             match="NaN")


@pytest.mark.parametrize("cut", ["rows", "uneven", "one-rank"])
def test_to_edges(cut):
    g = cloud("clustered")
    x = sharded(g, cut)
    _, i = pts.radius(x, x, 0.1, max_neighbors=4)
    src, dst = pts.to_edges(i, N)
    _, ref = ref_radius(g, g, 0.1, 4)
    rows, cols = np.nonzero(ref != N)
    ok = (np.array_equal(host(src), ref[rows, cols]) and np.array_equal(host(dst), rows)
          and src.layout == dst.layout)
    assert not agree(COMM, ok)
    assert_raises_everywhere(TypeError, pts.to_edges, i[:, 0], N, match="to_edges")
