"""kNN graph of a 3-d point cloud across ranks (darray.points) against scipy's cKDTree in one process.

    python benchmarks/bench_points.py [--n 100000] [--k 16] [--reps 1]
    mpiexec -n 2 python benchmarks/bench_points.py --n 1000000
    python benchmarks/bench_points.py --smoke        # 2000 points

``n`` uniform points in the unit cube, in random order, cut in balanced rows
(no locality: the partition has to make it). Timed, each the slowest rank
between barriers (one warm-up, the median of ``--reps``):

- ``partition``: :func:`darray.points.partition` (recursive coordinate bisection, one all-to-all);
- ``knn``: :func:`darray.points.knn` of every point against the partition (queries homed, ghosts, answers back);
- ``cKDTree``: scipy's tree built and queried for the same kNN on rank 0 alone, in the same run.

Bytes: what all ranks sent in one ``knn`` (darray's tracer), split into the
ghost points and the rest (queries to their home ranks, answers back), and
the ideal ghost bytes: each point that is a neighbour of a query homed on
another rank, sent once to that rank (24 bytes of coordinates + 8 of index).
The answers are checked against cKDTree's. Then one message-passing
training step on the kNN graph of the partitioned points (a
:class:`darray.points.GhostPlan` built once;
``GraphConv(3, 16) -> ReLU -> GraphConv(16, 1)``, forward + backward + Adam):
its time and every rank's peak resident memory. Only rank 0 prints.
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


def _sent(comm, run) -> dict:
    """Bytes all ranks send in one ``run()``, per exchange label."""
    with da.tracing() as trace:
        run()
    labels = sorted({e["op"] for e in trace.events if e["kind"] == "comm"})
    labels = sorted(set().union(*comm_allgather_labels(comm, labels)))
    out = {}
    for label in labels:
        mine = sum(e["nbytes"] for e in trace.events if e["kind"] == "comm" and e["op"] == label)
        out[label] = int(np.asarray(comm.allreduce(np.array([mine], dtype=np.int64), "sum"))[0])
    return out


def comm_allgather_labels(comm, labels):
    """Every rank's labels (a fixed-width allgather of a joined string)."""
    text = np.frombuffer(",".join(labels).encode().ljust(4096), dtype=np.uint8)
    return [set(bytes(row).decode().strip().split(",")) - {""} for row in np.asarray(comm.allgather(text))]


def _training(comm, part, k, reps):
    """Seconds to build the GhostPlan of the kNN graph of the partitioned points, and for one training step."""
    x = part.points
    src, dst = points.to_edges(points.knn(x, part, k)[1], x.shape[0])
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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--k", type=int, default=16)
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    n = 2000 if args.smoke else args.n
    comm = da.default_communicator()
    g = np.random.default_rng(0).random((n, 3))
    x = da.asarray(g, split=0)
    part = points.partition(x)
    t_part = timed(comm, lambda: points.partition(x), args.reps)
    t_knn = timed(comm, lambda: points.knn(x, part, args.k), args.reps)
    sent = _sent(comm, lambda: points.knn(x, part, args.k))
    d, i = points.knn(x, part, args.k)
    index = np.asarray(part.index.gather())
    owner = np.empty(n, dtype=np.int64)
    owner[index] = np.repeat(np.arange(comm.size), part.sizes)
    got_i, got_d = np.asarray(i.gather()), np.asarray(d.gather())
    pairs = np.unique(np.stack([got_i.ravel(), np.repeat(owner, args.k)], axis=1), axis=0)
    ideal = int((owner[pairs[:, 0]] != pairs[:, 1]).sum()) * 32
    t_plan, t_step = _training(comm, part, args.k, args.reps)
    peaks = np.asarray(comm.allgather(np.array([peak_rss_mb()])))[:, 0]
    if comm.rank == 0:
        t0 = time.perf_counter()
        tree = cKDTree(g)
        ref_d, ref_i = tree.query(g, k=args.k)
        t_tree = time.perf_counter() - t0
        same = bool(np.array_equal(got_d, ref_d))
        ghosts = sent.get("points.ghosts", 0)
        other = sum(v for k, v in sent.items() if k != "points.ghosts")
        print(f"kNN graph, {n} points in 3-d, k={args.k}, {comm.size} rank(s)")
        print(f"  partition  {t_part:8.3f} s")
        print(f"  knn        {t_knn:8.3f} s   ({t_knn / t_tree:.2f}x cKDTree on one process)")
        print(f"  cKDTree    {t_tree:8.3f} s   (build + query, rank 0 alone)")
        print(f"  distances equal cKDTree's: {same}")
        print(f"  ghost bytes {ghosts:,} vs ideal {ideal:,} ({ghosts / ideal if ideal else 0:.2f}x); "
              f"queries + answers {other:,} bytes")
        print(f"  GhostPlan  {t_plan:8.3f} s   (from the kNN graph's edges, once)")
        print(f"  train step {t_step:8.3f} s   (2 GraphConv layers, forward + backward + Adam)")
        print(f"  peak memory per rank: {', '.join(f'{p:.0f} MB' for p in peaks)}")
    comm.barrier()


if __name__ == "__main__":
    main()
