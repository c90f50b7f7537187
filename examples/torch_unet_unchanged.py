"""A plain PyTorch UNet, unchanged, trained on a field cut over the ranks (``darray.torch``).

The model below is ordinary PyTorch: circular convolutions, GroupNorm,
max pooling, bilinear upsampling and skip connections. The only darray line
is ``dt.shard(...)``, which cuts the input field (and the target) over the
ranks; every rank then holds its block of every activation, convolutions
exchange halos, GroupNorm statistics and the loss are summed over the
ranks, and the weights' gradients are summed at the end of ``backward()``,
so ``torch.optim`` runs unchanged (SGD with momentum here: Adam works
alike, but it turns the rounding noise of gradients that are zero in exact
arithmetic -- a convolution's bias before a GroupNorm -- into steps of the
learning rate, in one process as much as on many).

Each rank also trains the same model in one process on the whole field
(plain torch) and the script compares: the losses step by step and the
weights at the end (``--check`` fails above 1e-12 relative in float64).
With ``--plot PATH`` (matplotlib) it also trains on every smaller power of
two of ranks (sub-communicators of the same run: 1 and 2 ranks out of 4)
and draws their loss curves against plain torch's, and how far apart they
are, step by step.

    mpiexec -n 4 python examples/torch_unet_unchanged.py --n 32 --steps 5 --check
    mpiexec -n 4 python examples/torch_unet_unchanged.py --n 32 --steps 30 --plot unet.png
"""

from __future__ import annotations

import argparse
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import darray as da
import darray.torch as dt


class Block(nn.Module):
    def __init__(self, cin: int, cout: int, groups: int = 2):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1, padding_mode="circular")
        self.norm1 = nn.GroupNorm(groups, cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, padding_mode="circular")
        self.norm2 = nn.GroupNorm(groups, cout)

    def forward(self, x):
        x = F.gelu(self.norm1(self.conv1(x)))
        return F.gelu(self.norm2(self.conv2(x)))


class UNet(nn.Module):
    """Two levels down, two up, skip connections: plain PyTorch."""

    def __init__(self, cin: int = 1, cout: int = 1, width: int = 8):
        super().__init__()
        self.enc1 = Block(cin, width)
        self.enc2 = Block(width, 2 * width)
        self.mid = Block(2 * width, 4 * width)
        self.pool = nn.MaxPool2d(2)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear")
        self.dec2 = Block(4 * width + 2 * width, 2 * width)
        self.dec1 = Block(2 * width + width, width)
        self.head = nn.Conv2d(width, cout, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        m = self.mid(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up(m), e2], dim=1))
        d1 = self.dec1(torch.cat([self.up(d2), e1], dim=1))
        return self.head(d1)


def data(n: int, batch: int, dtype):
    """A random field and its target: a smoothed, shifted copy (the same on every rank)."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(batch, 1, n, n, generator=g, dtype=dtype)
    y = 0.25 * (torch.roll(x, 1, 2) + torch.roll(x, -1, 3) + torch.roll(x, 2, 3) + x)
    return x, y


def train(model, x, y, steps: int, lr: float):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def layout(p: int):
    """Rows over the ranks; a 2 x (P/2) grid of rows and columns from four ranks on."""
    return ((2, 3), (2, p // 2)) if p >= 4 and p % 2 == 0 else (2, None)


def train_cut(comm, x, y, steps: int, lr: float, width: int, dtype):
    """The UNet (seed 0) trained on ``x`` cut over the ranks of ``comm``: its losses and the model."""
    split, grid = layout(comm.size)
    torch.manual_seed(0)
    model = UNet(width=width).to(dtype)
    cut = {"split": split, "grid": grid, "comm": comm}
    return train(model, dt.shard(x, **cut), dt.shard(y, **cut), steps, lr), model


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=32, help="field size (divisible by 4: two poolings)")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--width", type=int, default=8)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--lr", type=float, default=5e-2)
    ap.add_argument("--float32", action="store_true")
    ap.add_argument("--check", action="store_true", help="fail unless the losses and weights equal plain torch")
    ap.add_argument("--plot", metavar="PATH", help="also train on fewer ranks and draw the loss curves (rank 0)")
    args = ap.parse_args(argv)
    dtype = torch.float32 if args.float32 else torch.float64
    tol = 1e-5 if args.float32 else 1e-12
    comm = da.default_communicator()
    p = comm.size
    x, y = data(args.n, args.batch, dtype)

    losses, model = train_cut(comm, x, y, args.steps, args.lr, args.width, dtype)
    torch.manual_seed(0)
    reference = UNet(width=args.width).to(dtype)
    expected = train(reference, x, y, args.steps, args.lr)

    loss_err = max(abs(a - b) / abs(b) for a, b in zip(losses, expected))
    weight_err = max(((a - b).abs().max() / b.abs().max()).item()
                     for a, b in zip(model.parameters(), reference.parameters()))
    if comm.rank == 0:
        split, grid = layout(p)
        print(f"# {p} rank(s), split {split}, grid {grid}, {dtype}")
        print("losses " + " ".join(f"{v:.6e}" for v in losses))
        print(f"relative difference to one-process torch: losses {loss_err:.1e}, weights {weight_err:.1e}")
    curves = {p: losses}
    if args.plot:
        q = p // 2
        while q >= 1:  # the ranks in groups of q (sub-communicators), each group training on its own
            if p % q == 0:
                sub = comm.sub((p // q, q), (False, True))
                curves[q] = train_cut(sub, x, y, args.steps, args.lr, args.width, dtype)[0]
                if comm.rank == 0:
                    err = max(abs(a - b) / abs(b) for a, b in zip(curves[q], expected))
                    print(f"{q} rank(s): relative difference to one-process torch: losses {err:.1e}")
            q //= 2
        if comm.rank == 0:
            plot(curves, expected, args, dtype)
    ok = loss_err <= tol and weight_err <= tol * 10
    if args.check and not ok:
        print(f"rank {comm.rank}: differs from plain torch beyond {tol}", file=sys.stderr)
        return 1
    return 0


def plot(curves: dict, expected: list, args, dtype) -> None:
    """Loss curves at every rank count over plain torch's, and their relative difference, to ``args.plot``."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        print(f"{args.plot}: skipped (matplotlib is not installed; pip install 'darray[viz]')")
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = range(1, len(expected) + 1)
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.0), layout="constrained")
    left.semilogy(steps, expected, color="0.75", lw=5, label="plain torch, 1 process")
    markers = iter("o^sv")
    for q in sorted(curves):
        left.semilogy(steps, curves[q], ls="none", marker=next(markers), ms=3.5, label=f"darray.torch, {q} rank(s)")
        diff = [max(abs(a - b) / abs(b), 1e-17) for a, b in zip(curves[q], expected)]
        right.semilogy(steps, diff, marker="o", ms=3, label=f"{q} rank(s)")
    left.set(xlabel="SGD step", ylabel="MSE loss", title=f"UNet {args.n}x{args.n}, unchanged")
    left.legend(fontsize=7)
    right.set(xlabel="SGD step", ylabel="|loss - torch's| / torch's", ylim=(1e-17, 1e-10),
              title=f"difference to plain torch ({str(dtype).split('.')[-1]})")
    right.legend(fontsize=7)
    fig.savefig(args.plot, dpi=80)
    print(f"wrote {args.plot}")


if __name__ == "__main__":
    sys.exit(main())
