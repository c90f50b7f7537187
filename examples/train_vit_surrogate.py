"""Train a small vision transformer to forecast one heat-equation step of a field cut over the ranks.

    python examples/train_vit_surrogate.py [--n 64] [--steps 60] [--out vit-out]
    mpiexec -n 4 python examples/train_vit_surrogate.py --n 64 --plot vit.png

The field is the one of ``examples/train_surrogate.py`` (periodic bumps,
rows cut over the ranks; the target is the increment of one heat step in
rms units, so a loss of 1 is the "no change" forecast). The model:

1. :class:`darray.nn.PatchEmbed` cuts the field into ``patch x patch``
   patches and embeds each as a token (a convolution with stride == kernel;
   patches stay on the rank that owns them);
2. sinusoidal position embeddings, computed from global coordinates;
3. :class:`darray.nn.NeighborhoodAttention2d`: each token attends to a
   ``window x window`` neighbourhood of tokens (one halo exchange);
4. :class:`darray.nn.TransformerEncoder`: every token attends to every other
   one through ring attention (key/value blocks travel around the ranks; no
   rank holds the whole score matrix);
5. :class:`darray.nn.PatchUnembed` turns the tokens back into patches.

Tokens never move between ranks: they are numbered block by block
(:func:`darray.nn.functional.flatten_tokens`). Parameters are replicated and
their gradients summed over the ranks, so the loss printed on rank 0 is the
same, to rounding, at 1, 2 or 4 ranks: ``--out`` gets ``losses.txt`` (compare
runs with ``diff`` or NumPy) and, when matplotlib is installed, ``loss.png``
(or the ``--plot`` path): the training field with the ranks' block edges and
the loss curve.
"""

from __future__ import annotations

import argparse
import importlib.util
import os

import numpy as np

import darray as da
from darray import nn
from darray.nn.functional import flatten_tokens
from darray.nn.surrogate import periodic_bumps, train_surrogate
from train_surrogate import plot  # the same figure as examples/train_surrogate.py (its folder is on sys.path)


class ViTSurrogate(nn.Module):
    """Patches -> positions -> neighbourhood attention -> global (ring) attention -> patches back.

    Input and output ``(1, 1, H, W)``; ``H`` and ``W`` multiples of ``patch``.
    """

    def __init__(self, patch: int = 4, dim: int = 16, heads: int = 2, depth: int = 1, window: int = 3):
        super().__init__()
        self.channels = dim  # what train_surrogate's log line reports
        self.embed = nn.PatchEmbed(patch, in_chans=1, embed_dim=dim, flatten=False)
        self.position = nn.SinusoidalPositionEmbedding(dim)
        self.local = nn.NeighborhoodAttention2d(dim, heads, window, boundary="periodic")
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=2 * dim, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth)
        self.unembed = nn.PatchUnembed(patch, out_chans=1, embed_dim=dim)

    def forward(self, u):
        field = self.position(self.embed(u))
        field = field + self.local(field)
        tokens = self.encoder(flatten_tokens(field))  # (1, tokens, dim), cut over the ranks like the patches
        return self.unembed(tokens, field.layout)


def main(argv=None) -> list[float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=64, help="field size n x n, a multiple of --patch (default 64)")
    parser.add_argument("--patch", type=int, default=4, help="patch size (default 4)")
    parser.add_argument("--dim", type=int, default=16, help="embedding width (default 16)")
    parser.add_argument("--steps", type=int, default=60, help="Adam steps (default 60)")
    parser.add_argument("--lr", type=float, default=5e-3, help="learning rate (default 5e-3)")
    parser.add_argument("--seed", type=int, default=0, help="parameter seed (default 0)")
    parser.add_argument("--every", type=int, default=10, help="print the loss every N steps (default 10)")
    parser.add_argument("--out", default="vit-out", help="output folder for losses.txt and loss.png")
    parser.add_argument("--plot", metavar="PATH", help="where to write the figure (default OUT/loss.png)")
    parser.add_argument("--no-progress", action="store_true", help="no tqdm bar")
    args = parser.parse_args(argv)
    if args.n % args.patch:
        parser.error(f"--n ({args.n}) must be a multiple of --patch ({args.patch})")

    comm = da.default_communicator()
    root = comm.rank == 0
    log = print
    if root and not args.no_progress and importlib.util.find_spec("tqdm") is not None:
        from tqdm.auto import tqdm

        log = tqdm.write  # print above the bar instead of through it
    u = periodic_bumps(args.n)  # rows cut over the ranks
    if root:
        print(f"{comm.size} rank(s), field {args.n}x{args.n}, {(args.n // args.patch) ** 2} tokens of "
              f"{args.patch}x{args.patch} cells, grid={u.grid} split={u.split}", flush=True)
    nn.init.manual_seed(args.seed)
    model = ViTSurrogate(args.patch, args.dim)
    losses = train_surrogate(u, steps=args.steps, lr=args.lr, log=log, log_every=args.every,
                             progress=not args.no_progress, max_size=args.n, model=model)
    field = u.gather(root=0) if importlib.util.find_spec("matplotlib") is not None else None  # collective
    if root:
        os.makedirs(args.out, exist_ok=True)
        np.savetxt(os.path.join(args.out, "losses.txt"), np.asarray(losses), fmt="%.17e")
        print(f"final loss {losses[-1]:.12e}; losses written to {args.out}/losses.txt" if losses else "no steps")
        plot(losses, field, u, args, comm.size, title=f"vision transformer, {args.patch}x{args.patch} patches")
    return losses


if __name__ == "__main__":
    main()
