"""kNN graph of a 3-d point cloud across ranks (darray.points) against scipy's cKDTree in one process.

    python benchmarks/bench_points.py [--n 100000] [--k 16] [--reps 1] [--graph-only]
    mpiexec -n 2 python benchmarks/bench_points.py --n 1000000
    mpiexec -n 4 python benchmarks/bench_points.py --n 10000000 --graph-only   # fits 24 GiB
    python benchmarks/bench_points.py --smoke        # 2000 points

``n`` uniform points in the unit cube, in random order, cut in balanced rows
(no locality: the partition has to make it; each rank draws only its own
rows, rank 0 all of them for cKDTree). Timed, each the slowest rank
between barriers (``--reps 1``, the default: the one run each needs, the
kNN's traced; ``--reps R > 1``: a warm-up, then the median of R):

- ``partition``: :func:`darray.points.partition` (recursive coordinate bisection, one all-to-all);
- ``knn``: :func:`darray.points.knn` of every point against the partition (queries homed, ghosts, answers back);
- ``cKDTree``: scipy's tree built and queried for the same kNN on rank 0 alone, in the same run.

Bytes: what all ranks sent in one ``knn`` (darray's tracer), split into the
ghost points and the rest (queries to their home ranks, answers back), and
the ideal ghost bytes: each point that is a neighbour of a query homed on
another rank, sent once to that rank (24 bytes of coordinates + 8 of index).
The ideal is counted from a kNN of the partitioned points themselves (the
same neighbour lists, each rank's queries its own region's points: no
global gather of the neighbour lists; skipped on one rank with
``--graph-only``, where nothing is a ghost). The distances are checked against
cKDTree's on rank 0 (``gather(root=0)``). Then, unless ``--graph-only``, one
message-passing training step on the kNN graph of the partitioned points (a
:class:`darray.points.GhostPlan` built once;
``GraphConv(3, 16) -> ReLU -> GraphConv(16, 1)``, forward + backward + Adam)
is timed. Last, every rank's peak resident memory (the whole run, cKDTree's
on rank 0 included). Only rank 0 prints.

Memory (k = 16): the neighbour lists are 256 bytes a point (distances and
indices); darray's local search takes its queries a chunk at a time, so each
rank holds a few copies of its share of them: about 1 KB a point in all
(10^6 points, one rank, ``--graph-only``: 1.1 GB peak). Rank 0 also holds all
points, cKDTree's tree and answer and the gathered distances: about 4.5 GB
more at 10^7. So 10^7 points with ``--graph-only`` take about 15 GB on one
machine at 1, 2 or 4 ranks. ``--graph-only`` skips the GhostPlan and the
training step (features, activations and their gradients per node and edge).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.spatial import cKDTree

import darray as da
from bench_attention import peak_rss_mb, timed  # the same timing and memory rules (this folder is on sys.path)
from darray import nn, optim, points
from darray.nn import functional as F


#: Rows per random stream: each rank draws its own rows, the same points at every rank count.
STREAM = 1 << 20


def cloud_rows(start: int, stop: int, seed: int = 0) -> np.ndarray:
    """Rows ``start:stop`` of the benchmark's uniform points (``(n, 3)`` in the unit cube, any ``n``)."""
    parts = [np.random.default_rng([seed, c]).random((STREAM, 3))[max(start - c * STREAM, 0):stop - c * STREAM]
             for c in range(start // STREAM, -(-stop // STREAM))]
    return np.concatenate(parts) if parts else np.zeros((0, 3))


def _sent(comm, run):
    """Bytes all ranks send in one ``run()``, per exchange label, and what ``run()`` returned."""
    with da.tracing() as trace:
        result = run()
    labels = sorted({e["op"] for e in trace.events if e["kind"] == "comm"})
    labels = sorted(set().union(*comm_allgather_labels(comm, labels)))
    out = {}
    for label in labels:
        mine = sum(e["nbytes"] for e in trace.events if e["kind"] == "comm" and e["op"] == label)
        out[label] = int(np.asarray(comm.allreduce(np.array([mine], dtype=np.int64), "sum"))[0])
    return out, result


def comm_allgather_labels(comm, labels):
    """Every rank's labels (a fixed-width allgather of a joined string)."""
    text = np.frombuffer(",".join(labels).encode().ljust(4096), dtype=np.uint8)
    return [set(bytes(row).decode().strip().split(",")) - {""} for row in np.asarray(comm.allgather(text))]


def _total(comm, value) -> int:
    return int(np.asarray(comm.allreduce(np.array([value], dtype=np.int64), "sum"))[0])


def ideal_ghost_bytes(comm, part, indices) -> int:
    """Ghost bytes if each rank received, once, every point outside its region that is a neighbour of one of its
    own points (``indices``: the kNN of the partitioned points, caller's numbering): 32 bytes a point."""
    n = part.points.shape[0]
    mine = np.zeros(n + 1, dtype=bool)
    mine[np.asarray(part.index.local)] = True
    mine[n] = True  # padding (fewer than k points)
    neighbours = np.asarray(indices.local).ravel()
    return _total(comm, np.unique(neighbours[~mine[neighbours]]).shape[0]) * 32


def _training(comm, part, indices, reps):
    """Seconds to build the GhostPlan of the kNN graph of the partitioned points, and for one training step."""
    x = part.points
    src, dst = points.to_edges(indices, x.shape[0])
    src = part.renumber(src)  # caller's numbering -> rows of the partitioned points
    comm.barrier()
    t0 = time.perf_counter()
    plan = points.GhostPlan(src, dst, x)
    t_plan = float(np.asarray(comm.allreduce(np.array([time.perf_counter() - t0]), "max"))[0])
    nn.init.manual_seed(0)
    layers = nn.ModuleList([nn.GraphConv(3, 16, aggr="mean"), nn.GraphConv(16, 1, aggr="mean")])
    opt = optim.Adam(layers.parameters(), lr=1e-3)

    def step():
        opt.zero_grad()
        loss = F.mse_loss(layers[1](F.relu(layers[0](x, plan)), plan), 0.0)
        loss.backward()
        opt.step()

    return t_plan, timed(comm, step, reps)


def once(comm, f):
    """``(f(), seconds)``: one run between barriers, the slowest rank's time (large clouds: each run counts)."""
    comm.barrier()
    t0 = time.perf_counter()
    out = f()
    return out, float(np.asarray(comm.allreduce(np.array([time.perf_counter() - t0]), "max"))[0])


def _peaks(comm) -> np.ndarray:
    """Every rank's peak resident memory so far (MB)."""
    return np.asarray(comm.allgather(np.array([peak_rss_mb()])))[:, 0]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--k", type=int, default=16)
    parser.add_argument("--reps", type=int, default=1,
                        help="timed repetitions after a warm-up (1: the one traced run is timed, nothing repeated)")
    parser.add_argument("--graph-only", action="store_true",
                        help="build the kNN graph only: no GhostPlan, no training step")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    n, k = (2000 if args.smoke else args.n), args.k
    comm = da.default_communicator()
    sizes = [n // comm.size + (r < n % comm.size) for r in range(comm.size)]
    start = sum(sizes[:comm.rank])
    x = da.from_local(cloud_rows(start, start + sizes[comm.rank]), split=0)
    part, t_part = once(comm, lambda: points.partition(x))
    if args.reps > 1:  # a warm-up and the median of --reps; then the traced run below is one more
        t_part = timed(comm, lambda: points.partition(x), args.reps)
        t_knn = timed(comm, lambda: points.knn(x, part, k), args.reps)
    (sent, result), t_once = once(comm, lambda: _sent(comm, lambda: points.knn(x, part, k)))
    t_knn = t_knn if args.reps > 1 else t_once  # (one run: the traced one, tracing costs a few events)
    got_d = result[0].gather(root=0)
    del result
    own_i = points.knn(part.points, part, k)[1] if comm.size > 1 or not args.graph_only else None
    ideal = ideal_ghost_bytes(comm, part, own_i) if own_i is not None else 0  # (one rank: no ghosts)
    graph_peaks = _peaks(comm)
    if not args.graph_only:
        t_plan, t_step = _training(comm, part, own_i, args.reps)
    del own_i
    t_tree = same = None
    if comm.rank == 0:
        g = cloud_rows(0, n)
        t0 = time.perf_counter()
        ref_d, _ = cKDTree(g).query(g, k=k)
        t_tree = time.perf_counter() - t0
        same = bool(np.array_equal(np.asarray(got_d), ref_d.reshape(n, k)))
        del ref_d, got_d
    peaks = _peaks(comm)
    if comm.rank == 0:
        ghosts = sent.get("points.ghosts", 0)
        other = sum(v for label, v in sent.items() if label != "points.ghosts")
        print(f"kNN graph, {n} points in 3-d, k={k}, {comm.size} rank(s)")
        print(f"  partition  {t_part:8.3f} s")
        print(f"  knn        {t_knn:8.3f} s   ({t_knn / t_tree:.2f}x cKDTree on one process)")
        print(f"  cKDTree    {t_tree:8.3f} s   (build + query, rank 0 alone)")
        print(f"  distances equal cKDTree's: {same}")
        print(f"  ghost bytes {ghosts:,} vs ideal {ideal:,} ({ghosts / ideal if ideal else 0:.2f}x); "
              f"queries + answers {other:,} bytes")
        print(f"  peak memory per rank after the graph: {', '.join(f'{p:.0f} MB' for p in graph_peaks)}")
        if not args.graph_only:
            print(f"  GhostPlan  {t_plan:8.3f} s   (from the kNN graph's edges, once)")
            print(f"  train step {t_step:8.3f} s   (2 GraphConv layers, forward + backward + Adam)")
        print(f"  peak memory per rank (whole run, rank 0 with cKDTree): {', '.join(f'{p:.0f} MB' for p in peaks)}")
    comm.barrier()


if __name__ == "__main__":
    main()
