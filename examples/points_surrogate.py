"""Train a message-passing surrogate of potential flow around a sphere on a point cloud cut over the ranks.

    python examples/points_surrogate.py [--n 1500] [--k 8] [--steps 100] [--out points-out]
    mpiexec -n 4 python examples/points_surrogate.py --plot points.png

Points are drawn (darray.random: the same cloud at every rank count, each
rank drawing only its rows) in the box [-2, 2]^3 outside the unit sphere;
the target is the speed of the potential flow past the sphere, ``|grad phi|``
with ``phi = x (1 + 1 / (2 r^3))``. The cloud is partitioned by recursive
coordinate bisection (:func:`darray.points.partition`), its kNN graph built
across the ranks (:func:`darray.points.knn`, :func:`darray.points.to_edges`)
and turned into a :class:`darray.points.GhostPlan` (owned and ghost nodes, a
persistent exchange), and a small MeshGraphNet (node and edge encoders, two
:class:`darray.nn.MeshGraphNetBlock` steps, a decoder) trained with Adam to
predict the speed from the coordinates. The loss is printed on rank 0 and is
the same, to rounding, at 1, 2 or 4 ranks (``--out`` gets ``losses.txt``);
``--plot`` draws the slice ``|z| < 0.25`` of the target and the prediction,
and the loss curve.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import darray as da
from darray import autodiff as ad
from darray import nn, optim, points
from darray.nn import functional as F


def flow_speed(xyz: np.ndarray) -> np.ndarray:
    """``|grad phi|`` of uniform flow (speed 1 along x) past the unit sphere, at the rows of ``xyz``."""
    r = np.sqrt((xyz * xyz).sum(axis=1))
    grad = -1.5 * xyz[:, :1] * xyz / r[:, None] ** 5
    grad[:, 0] += 1 + 0.5 / r ** 3
    return np.sqrt((grad * grad).sum(axis=1))


def cloud(n: int, seed: int = 0):
    """``n`` points outside the unit sphere (rows cut over the ranks) and their speed, ``(n, 3)`` and ``(n, 1)``."""
    raw = da.random.default_rng(seed).random((2 * n, 3), split=0)  # twice as many: about half fall inside
    xp = raw.local.__array_namespace__()  # the local library (NumPy, CuPy, torch, ...): the model's too
    block = np.asarray(raw.local) * 4 - 2
    keep = (block * block).sum(axis=1) > 1.0
    xyz = da.from_local(xp.asarray(block[keep]), split=0)
    if xyz.shape[0] < n:
        raise SystemExit(f"points_surrogate: drew {xyz.shape[0]} points outside the sphere, fewer than {n}")
    xyz = xyz[:n]  # the first n in global order: the same cloud at every rank count
    speed = da.from_local(xp.asarray(flow_speed(np.asarray(xyz.local))[:, None]), split=0)
    return xyz, speed


class FlowNet(nn.Module):
    """Node and edge encoders, ``depth`` MeshGraphNet steps, a decoder."""

    def __init__(self, hidden: int = 16, depth: int = 2):
        super().__init__()
        self.node_in = nn.Linear(3, hidden)
        self.edge_in = nn.Linear(4, hidden)
        self.blocks = nn.ModuleList([nn.MeshGraphNetBlock(hidden, hidden, 2 * hidden) for _ in range(depth)])
        self.out = nn.Linear(hidden, 1)

    def forward(self, xyz, edge_features, edges):
        x, e = F.relu(self.node_in(xyz)), F.relu(self.edge_in(edge_features))
        for block in self.blocks:
            x, e = block(x, e, edges)
        return self.out(x)


def edge_features(xyz, plan):
    """Per edge (in the plan's order): the offset from the receiving node to the sending one, and its length."""
    rel = (plan.gather(xyz, "src") - plan.gather(xyz, "dst")).data
    length = ad.sqrt((rel * rel).sum(axis=1, keepdims=True)).data
    return da.concat([rel, length], axis=1)


def main(argv=None) -> list[float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1500, help="points (default 1500)")
    parser.add_argument("--k", type=int, default=8, help="neighbours per point (default 8)")
    parser.add_argument("--steps", type=int, default=100, help="Adam steps (default 100)")
    parser.add_argument("--lr", type=float, default=5e-3, help="learning rate (default 5e-3)")
    parser.add_argument("--every", type=int, default=20, help="print the loss every N steps (default 20)")
    parser.add_argument("--out", default="points-out", help="output folder for losses.txt")
    parser.add_argument("--plot", metavar="PATH", help="where to write the figure (default OUT/points.png)")
    args = parser.parse_args(argv)

    comm = da.default_communicator()
    root = comm.rank == 0
    xyz, speed = cloud(args.n)
    part = points.partition(xyz, [speed])  # each rank: a compact region of the cloud
    xyz, speed = part.points, part.features[0]
    _, neighbours = points.knn(xyz, part, args.k)  # the point itself first (distance 0): a self-loop
    src, dst = points.to_edges(neighbours, args.n)  # src numbered in the caller's order
    src = part.renumber(src)  # ... now as rows of the partitioned points
    edges = points.GhostPlan(src, dst, xyz)  # built once: every step is one persistent ghost exchange per layer
    features = edge_features(xyz, edges)
    nn.init.manual_seed(0)
    model = FlowNet()
    opt = optim.Adam(model.parameters(), lr=args.lr)
    target = speed - 1.0  # the disturbance of the free stream
    baseline = float(np.asarray(da.mean(target * target).gather()))
    if root:
        print(f"{comm.size} rank(s), {args.n} points, {args.k} neighbours each, points per rank {part.sizes}, "
              f"ghosts per rank {tuple(e - s for e, s in zip(edges.extended_sizes, edges.sizes))}", flush=True)
    losses = []
    for step in range(1, args.steps + 1):
        opt.zero_grad()
        loss = F.mse_loss(model(xyz, features, edges), target)
        loss.backward()
        opt.step()
        losses.append(float(np.asarray(loss.data.gather())) / baseline)
        if root and (step % args.every == 0 or step == args.steps):
            print(f"step {step:4d}  loss {losses[-1]:.12e}  (1 = predicting the free stream)", flush=True)
    prediction = model(xyz, features, edges).data
    if root:
        os.makedirs(args.out, exist_ok=True)
        np.savetxt(os.path.join(args.out, "losses.txt"), np.asarray(losses), fmt="%.17e")
    plot(args, losses, np.asarray(xyz.gather()), np.asarray(target.gather())[:, 0],
         np.asarray(prediction.gather())[:, 0], root)
    return losses


def plot(args, losses, xyz, target, prediction, root) -> None:
    if not root:
        return
    try:
        import matplotlib
    except ImportError:
        print("points.png: skipped (matplotlib is not installed; pip install 'darray[viz]')")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    near = np.abs(xyz[:, 2]) < 0.25
    fig, axes = plt.subplots(1, 3, figsize=(9.6, 3.0), layout="constrained")
    for ax, values, title in ((axes[0], target, "target speed - 1"), (axes[1], prediction, "prediction")):
        image = ax.scatter(xyz[near, 0], xyz[near, 1], c=values[near], s=6, cmap="viridis",
                           vmin=target.min(), vmax=target.max())
        ax.add_patch(plt.Circle((0, 0), 1, fill=False, color="k", lw=0.8))
        ax.set_aspect("equal")
        ax.set_title(f"{title}, |z| < 0.25", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(image, ax=axes[:2], shrink=0.8)
    curve = axes[2]
    curve.set_title(f"MeshGraphNet, {args.n} points, k = {args.k}", fontsize=9)
    curve.semilogy(np.arange(1, len(losses) + 1), losses)
    curve.set(xlabel="Adam step", ylabel="loss (1 = free stream)")
    fig.savefig(args.plot or os.path.join(args.out, "points.png"), dpi=72)
    plt.close(fig)
    print(f"figure written to {args.plot or os.path.join(args.out, 'points.png')}")


if __name__ == "__main__":
    main()
