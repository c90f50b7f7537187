"""Train a U-Net surrogate of one heat-equation step on a field cut over the ranks.

    python examples/train_surrogate.py [--n 256] [--steps 200] [--every 20] [--out surrogate-out]
    mpiexec -n 4 python examples/train_surrogate.py --n 256 --plot surrogate.png

Every rank builds its block of the field (periodic Gaussian-like bumps,
nothing global is allocated), computes the target ``u_{t+1}`` with a halo stencil and trains
:class:`darray.nn.surrogate.SurrogateNet` with Adam on its part of the field;
parameters are replicated and their gradients summed over the ranks. The loss
(1 = the "no change" forecast) is printed on rank 0 and is the same, to
rounding, on any number of ranks: ``--out`` gets ``losses.txt`` (compare runs
with ``diff`` or NumPy) and, when matplotlib is installed, ``loss.png`` (or
the ``--plot`` path): the training field with the edges of the ranks' blocks
dashed, and the loss curve. Fields wider than 256 cells are average-pooled to
at most 256 before training.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import darray as da
from darray.nn.surrogate import periodic_bumps, train_surrogate


def main(argv=None) -> list[float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=256, help="field size n x n (default 256)")
    parser.add_argument("--steps", type=int, default=200, help="Adam steps (default 200)")
    parser.add_argument("--lr", type=float, default=1e-2, help="learning rate (default 1e-2)")
    parser.add_argument("--seed", type=int, default=0, help="parameter seed (default 0)")
    parser.add_argument("--every", type=int, default=20, help="print the loss every N steps (default 20)")
    parser.add_argument("--out", default="surrogate-out", help="output folder for losses.txt and loss.png")
    parser.add_argument("--plot", metavar="PATH", help="where to write the figure (default OUT/loss.png)")
    parser.add_argument("--no-progress", action="store_true", help="no tqdm bar")
    args = parser.parse_args(argv)

    comm = da.default_communicator()
    root = comm.rank == 0
    log = print
    if root and not args.no_progress:
        try:
            from tqdm.auto import tqdm

            log = tqdm.write  # print above the bar instead of through it
        except ImportError:
            pass
    u = periodic_bumps(args.n)  # rows cut over the ranks
    if root:
        print(f"{comm.size} rank(s), field {args.n}x{args.n}, grid={u.grid} split={u.split}", flush=True)
    losses = train_surrogate(u, steps=args.steps, lr=args.lr, seed=args.seed, log=log, log_every=args.every,
                             progress=not args.no_progress)
    k = max(1, -(-args.n // 256))  # the picture: every k-th cell, at most 256 per axis (a strided slice is local)
    field = u[::k, ::k].gather(root=0) if _have_matplotlib() else None  # collective; None on ranks other than 0
    if root:
        os.makedirs(args.out, exist_ok=True)
        np.savetxt(os.path.join(args.out, "losses.txt"), np.asarray(losses), fmt="%.17e")
        print(f"final loss {losses[-1]:.12e}; losses written to {args.out}/losses.txt" if losses else "no steps")
        plot(losses, field, u, args, comm.size)
    return losses


def _have_matplotlib() -> bool:
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None  # the same answer on every rank


def plot(losses, field, u, args, ranks, title: str = "surrogate training") -> None:
    """The training field (block edges dashed) and the loss curve, to ``--plot`` or OUT/loss.png (rank 0).

    Also used by ``examples/train_vit_surrogate.py``.
    """
    if field is None:
        print("loss.png: skipped (matplotlib is not installed; pip install 'darray[viz]')")
        return
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.0), layout="constrained",
                                      gridspec_kw={"width_ratios": [1.2, 1.6]})
    image = left.imshow(field, cmap="viridis", extent=(0, 1, 1, 0))
    fig.colorbar(image, ax=left, shrink=0.8)
    for cut in u.layout.offsets[0][1:-1]:  # rows cut over the ranks
        left.axhline(cut / args.n, color="w", lw=0.8, ls="--")
    for cut in u.layout.offsets[1][1:-1]:
        left.axvline(cut / args.n, color="w", lw=0.8, ls="--")
    left.set_title(f"field {args.n}x{args.n}, grid {u.grid}", fontsize=9)
    left.set_xticks([])
    left.set_yticks([])
    right.semilogy(np.arange(1, len(losses) + 1), losses)
    right.axhline(1.0, color="gray", lw=0.8, ls="--", label="persistence")
    right.set_xlabel("Adam step")
    right.set_ylabel("loss (1 = persistence)")
    right.set_title(f"{title}, {ranks} rank(s)", fontsize=9)
    right.legend()
    path = args.plot or os.path.join(args.out, "loss.png")
    fig.savefig(path, dpi=72)
    plt.close(fig)
    print(f"figure written to {path}")


if __name__ == "__main__":
    main()
