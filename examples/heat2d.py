"""Explicit heat diffusion on a periodic 2-d field: ``python`` or ``mpiexec -n 4 python``.

The field lives in two arrays that carry one ghost cell per side (``halo=1``,
``boundary="periodic"``). Each step, :func:`darray.map_overlap` refreshes the
ghost cells of ``u`` (one exchange of one-cell strips with the neighbouring
blocks; the periodic wrap is part of it) and writes the new owned cells
straight into ``v`` (``out=v``); then the two swap roles. Nothing global-sized
is allocated inside the loop and nothing but the halo strips moves.

    python examples/heat2d.py --n 256 --steps 500
    mpiexec -n 4 python examples/heat2d.py --check
    mpiexec -n 4 python examples/heat2d.py --plot heat2d.png

The printed summary is the same whatever the number of ranks (the sums are
combined in a different order, so they may differ in the last few bits; they
are printed with 12 significant digits). ``--check`` recomputes the run with
plain NumPy on rank 0 and compares. ``--plot PATH`` writes snapshots of the
field as a PNG (needs matplotlib), with the edges of the ranks' blocks dashed.
"""

import argparse

import numpy

import darray as da

ALPHA = 0.2  # diffusion number D * dt / dx**2; explicit Euler is stable below 0.25 in 2-d


def diffuse(b):
    """One Euler step of ``u_t = D laplacian(u)`` on a block with one ghost cell per side.

    Returns the owned cells only (``trim=False``): ``b[1:-1, 1:-1]`` is the
    block itself, the four shifted views are its neighbours.
    """
    c = b[1:-1, 1:-1]
    return c + ALPHA * (b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] - 4.0 * c)


def initial(np, x, y):
    """Two Gaussian spots, one straddling the periodic corner, plus a weak ripple (any module ``np``)."""
    spot = np.exp(-80.0 * ((x - 0.3) ** 2 + (y - 0.6) ** 2))
    corner = 0.5 * np.exp(-60.0 * (np.sin(np.pi * x) ** 2 + np.sin(np.pi * y) ** 2))
    return spot + corner + 0.1 * np.cos(6.0 * np.pi * x) * np.sin(4.0 * np.pi * y)


def summary(u):
    """The printed numbers: total heat (conserved), extremes, and the squared norm (decays)."""
    return {"sum": u.sum(), "max": u.max(), "min": u.min(), "sum_sq": (u * u).sum()}


def numpy_reference(n, steps):
    """The same computation with plain NumPy: periodic ghost cells from ``numpy.pad(mode="wrap")``."""
    y, x = numpy.meshgrid(numpy.linspace(0.0, 1.0, n, endpoint=False),
                          numpy.linspace(0.0, 1.0, n, endpoint=False), indexing="ij")
    u = initial(numpy, x, y)
    for _ in range(steps):
        u = diffuse(numpy.pad(u, 1, mode="wrap"))
    return u


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=128, help="grid points per axis (default 128)")
    parser.add_argument("--steps", type=int, default=200, help="time steps (default 200)")
    parser.add_argument("--check", action="store_true", help="compare with plain NumPy on rank 0")
    parser.add_argument("--plot", metavar="PATH", help="write field snapshots to PATH (PNG; needs matplotlib)")
    args = parser.parse_args(argv)
    n, steps = args.n, args.steps

    comm = da.default_communicator()
    # Cut both axes if that is cheaper: plan_grid weighs block size and halo surface.
    grid = da.plan_grid((n, n), comm.size, halo=(1, 1))
    layout = dict(split=(0, 1), grid=grid, halo=1, boundary="periodic")

    coords = da.linspace(0.0, 1.0, n, endpoint=False, split=None)  # small: replicated
    y, x = da.meshgrid(coords, coords, indexing="ij", split=(0, 1), grid=grid)
    u = da.zeros((n, n), **layout)
    v = da.empty((n, n), **layout)
    u[...] = initial(da, x, y)  # same blocks: a local copy into the owned cells

    when = sorted({0, steps // 8, steps // 2, steps}) if args.plot else []
    shots = [(0, snapshot(u))] if 0 in when else []
    for step in range(1, steps + 1):
        da.map_overlap(diffuse, u, depth=1, boundary="periodic", trim=False, out=v)
        u, v = v, u
        if step in when:
            shots.append((step, snapshot(u)))

    numbers = {k: float(s) for k, s in summary(u).items()}  # collective reductions: every rank calls them
    if comm.rank == 0:
        print(f"# heat2d: ranks={comm.size} grid={u.grid} n={n} steps={steps}")
        for key, value in numbers.items():
            print(f"{key:>8} = {value:.11e}")

    if args.check:
        field = u.gather(root=0)  # collective; None on ranks other than 0
        ok = True
        if comm.rank == 0:
            ref = numpy_reference(n, steps)
            err = float(numpy.max(numpy.abs(numpy.asarray(field) - ref)) / numpy.max(numpy.abs(ref)))
            expected = {k: float(s) for k, s in summary(ref).items()}
            bad = {k: (numbers[k], expected[k]) for k in numbers
                   if abs(numbers[k] - expected[k]) > 1e-10 * max(abs(expected[k]), 1e-300)}
            ok = err <= 1e-10 and not bad
            print(f"# check: max relative field error vs NumPy {err:.2e}; mismatched summaries: {bad or 'none'}")
        ok = comm.bcast(numpy.array(ok), 0)  # every rank exits with the same verdict
        if not bool(ok):
            raise SystemExit("heat2d: --check failed: darray and NumPy disagree")

    if args.plot and comm.rank == 0:
        plot(args.plot, shots, u)


# ------------------------------------------------------------ pictures (--plot)


def snapshot(u, cells=256):
    """The field on rank 0 (None elsewhere), every k-th cell so that at most ``cells`` per axis move.

    Collective. A strided slice stays on its ranks; only the gather moves data.
    """
    k = max(1, -(-max(u.shape) // cells))
    return u[::k, ::k].gather(root=0)


def plot(path, shots, u):
    """Write the snapshots side by side, the block edges dashed (rank 0; matplotlib imported here)."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    lo = min(float(f.min()) for _, f in shots)
    hi = max(float(f.max()) for _, f in shots)
    n = u.shape[0]
    fig, axes = plt.subplots(1, len(shots), figsize=(2.2 * len(shots) + 0.9, 2.6), squeeze=False,
                             layout="constrained")
    for ax, (step, field) in zip(axes[0], shots):
        im = ax.imshow(field, cmap="inferno", vmin=lo, vmax=hi, extent=(0, 1, 1, 0))
        for cut in u.layout.offsets[0][1:-1]:  # where the rows are cut ...
            ax.axhline(cut / n, color="0.6", lw=0.7, ls="--")
        for cut in u.layout.offsets[1][1:-1]:  # ... and the columns
            ax.axvline(cut / n, color="0.6", lw=0.7, ls="--")
        ax.set_title(f"step {step}", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(im, ax=list(axes[0]), shrink=0.85)
    fig.suptitle(f"heat2d: {n}x{n}, periodic, {u.comm.size} rank(s), grid {u.grid}, blocks dashed", fontsize=9)
    fig.savefig(path, dpi=72)
    plt.close(fig)
    print(f"# figure written to {path}")


if __name__ == "__main__":
    main()
