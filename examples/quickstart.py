"""A NumPy script turned distributed: run with ``python`` or ``mpiexec -n 4 python``.

Every rank runs this same file and holds one block of the field. The stencil
moves only one-cell-wide strips between neighbouring ranks (halo exchange);
reductions combine per-block partials. The printed numbers are the same
whatever the number of ranks.

    python examples/quickstart.py
    mpiexec -n 4 python examples/quickstart.py --plot quickstart.png

``--plot PATH`` writes the final field and its change since the start as a PNG
(needs matplotlib), with the edges of the ranks' blocks dashed.
"""

import argparse

import darray as da


def laplacian(b):
    """5-point Laplacian of a block that carries one ghost cell on each side."""
    return b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] - 4 * b[1:-1, 1:-1]


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--plot", metavar="PATH", help="write the initial and final field to PATH (PNG)")
args = parser.parse_args()

n = 512
comm = da.default_communicator()
ys, xs = da.meshgrid(da.linspace(0.0, 1.0, n), da.linspace(0.0, 1.0, n), indexing="ij")
u = da.exp(-50.0 * ((xs - 0.5) ** 2 + (ys - 0.5) ** 2))  # a Gaussian bump, cut into blocks
before = u.gather(root=0) if args.plot else None         # collective; None on ranks other than 0

for _ in range(100):  # explicit diffusion with periodic boundaries
    u = u + 0.2 * da.map_overlap(laplacian, u, depth=1, boundary="periodic", trim=False)

heat, peak = float(da.sum(u)), float(da.max(u))
if comm.rank == 0:
    print(f"ranks={comm.size} grid={u.grid} split={u.split}: heat={heat:.10f} peak={peak:.10f}")

if args.plot:
    after = u.gather(root=0)
    if comm.rank == 0:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt

        change = after - before
        lim = float(abs(change).max()) or 1.0
        fig, axes = plt.subplots(1, 2, figsize=(7.0, 3.2), sharey=True)
        panels = [(after, "magma", 0.0, 1.0, "u after 100 steps"),
                  (change, "RdBu_r", -lim, lim, "change since step 0")]
        for ax, (field, cmap, lo, hi, title) in zip(axes, panels):
            im = ax.imshow(field, cmap=cmap, vmin=lo, vmax=hi, extent=(0, n, n, 0))
            for cut in u.layout.offsets[0][1:-1]:  # block edges: where the rows are cut ...
                ax.axhline(cut, color="0.6", lw=0.8, ls="--")
            for cut in u.layout.offsets[1][1:-1]:  # ... and the columns
                ax.axvline(cut, color="0.6", lw=0.8, ls="--")
            ax.set_title(title, fontsize=9)
            fig.colorbar(im, ax=ax, shrink=0.8)
        fig.suptitle(f"quickstart: {comm.size} rank(s), grid {u.grid}, blocks dashed", fontsize=9)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=72)
        print(f"figure written to {args.plot}")
