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
The answers are checked against cKDTree's. Only rank 0 prints.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.spatial import cKDTree

import darray as da
from bench_attention import timed  # the same timing rule (this folder is on sys.path)
from darray import points


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
    comm.barrier()


if __name__ == "__main__":
    main()
