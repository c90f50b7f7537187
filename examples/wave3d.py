"""The 3-d wave equation, leapfrog in time, on a 3-d grid of ranks: ``python`` or ``mpiexec -n 8 python``.

``u_tt = c**2 laplacian(u)`` with the second-order scheme

    u_next = 2 u - u_prev + C2 * (7-point Laplacian of u),   C2 = (c dt / dx)**2 <= 1/3

The field is cut along all three axes (``split=(0, 1, 2)``) over a grid of
ranks as close to a cube as the rank count allows: (2, 2, 1) at 4 ranks,
(2, 2, 2) at 8. (:func:`darray.plan_grid`, ``--grid plan``, weighs block size
and halo surface and often prefers slabs for a cube; both are correct.) The
three time levels carry one ghost cell per side; each step exchanges the
ghost cells of ``u`` (faces, edges and corners: one round of messages) and
writes the new level into the storage of the oldest one (``out=``), so the
loop allocates nothing global-sized. Walls are periodic or reflecting
(``--boundary reflect``: mirror ghost cells, a zero-gradient wall).

    python examples/wave3d.py --n 48 --steps 100
    mpiexec -n 4 python examples/wave3d.py --boundary reflect --check
    mpiexec -n 4 python examples/wave3d.py --plot wave3d.png

The printed summary is the same whatever the number of ranks (sums to 12
significant digits). ``--check`` recomputes the run with plain NumPy on rank 0. ``--plot PATH``
writes two planes of the field at four times as a PNG (needs matplotlib),
with the edges of the ranks' blocks dashed.
"""

import argparse

import numpy

import darray as da

C2 = 0.25  # Courant number squared


def laplacian(b):
    """7-point Laplacian of the owned cells of a block with one ghost cell per side."""
    c = b[1:-1, 1:-1, 1:-1]
    return (b[:-2, 1:-1, 1:-1] + b[2:, 1:-1, 1:-1] + b[1:-1, :-2, 1:-1] + b[1:-1, 2:, 1:-1]
            + b[1:-1, 1:-1, :-2] + b[1:-1, 1:-1, 2:] - 6.0 * c)


def leapfrog(b, prev):
    """The next time level from ``u`` (``b``, with ghost cells) and the previous level's owned cells."""
    return 2.0 * b[1:-1, 1:-1, 1:-1] - prev + C2 * laplacian(b)


def pulse(np, x, y, z):
    """An off-centre Gaussian pulse plus a weaker, elongated one (any module ``np``)."""
    return (np.exp(-150.0 * ((x - 0.35) ** 2 + (y - 0.5) ** 2 + (z - 0.6) ** 2))
            - 0.5 * np.exp(-100.0 * ((x - 0.8) ** 2 + 4.0 * (y - 0.2) ** 2 + (z - 0.25) ** 2)))


def cube_dims(nprocs):
    """Grid dims for 3 axes as equal as possible (like ``MPI_Dims_create``): 4 -> (2, 2, 1), 8 -> (2, 2, 2)."""
    options = [(a, b, nprocs // (a * b)) for a in range(1, nprocs + 1) for b in range(1, nprocs + 1)
               if nprocs % (a * b) == 0]
    return min(options, key=lambda d: (max(d), d != tuple(sorted(d, reverse=True))))


def summary(u, probe):
    return {"sum": u.sum(), "max_abs": abs(u).max(), "sum_sq": (u * u).sum(), "probe": u[probe]}


def numpy_reference(n, steps, boundary):
    mode = {"periodic": "wrap", "reflect": "symmetric"}[boundary]  # darray's "reflect" is numpy.pad's symmetric
    x, y, z = numpy.meshgrid(*[(numpy.arange(n) + 0.5) / n] * 3, indexing="ij")
    u = pulse(numpy, x, y, z)
    prev = u + 0.5 * C2 * laplacian(numpy.pad(u, 1, mode=mode))
    for _ in range(steps):
        prev, u = u, leapfrog(numpy.pad(u, 1, mode=mode), prev)
    return u


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="grid points per axis (default 40)")
    parser.add_argument("--steps", type=int, default=60, help="time steps (default 60)")
    parser.add_argument("--boundary", choices=("periodic", "reflect"), default="periodic")
    parser.add_argument("--grid", choices=("cube", "plan"), default="cube",
                        help="rank grid: as cubic as possible (default) or darray.plan_grid's choice")
    parser.add_argument("--check", action="store_true", help="compare with plain NumPy on rank 0")
    parser.add_argument("--plot", metavar="PATH", help="write planes of the field to PATH (PNG; needs matplotlib)")
    args = parser.parse_args(argv)
    n, steps, bnd = args.n, args.steps, args.boundary

    comm = da.default_communicator()
    shape = (n, n, n)
    grid = cube_dims(comm.size) if args.grid == "cube" else da.plan_grid(shape, comm.size, halo=(1, 1, 1))
    layout = dict(split=(0, 1, 2), grid=grid, halo=1, boundary=bnd)

    coords = (da.arange(n, dtype=da.float64, split=None) + 0.5) / n  # cell centres; small: replicated
    x, y, z = da.meshgrid(coords, coords, coords, indexing="ij", split=(0, 1, 2), grid=grid)
    u = da.zeros(shape, **layout)
    prev = da.zeros(shape, **layout)
    u[...] = pulse(da, x, y, z)
    del x, y, z
    # start at rest, to second order: u(-dt) = u(0) + dt**2/2 u_tt(0)
    prev[...] = u + 0.5 * C2 * da.map_overlap(laplacian, u, depth=1, boundary=bnd, trim=False)

    when = sorted({steps // 4, steps // 2, steps}) if args.plot else []
    shots = [(0, planes(u))] if args.plot else []
    for step in range(1, steps + 1):
        # the new level overwrites the oldest one (func sees prev's owned cells, read before out= is written)
        da.map_overlap(leapfrog, u, depth=1, boundary=bnd, trim=False, out=prev, prev=prev.local)
        prev, u = u, prev
        if step in when:
            shots.append((step, planes(u)))

    probe = (n // 3, n // 2, n // 4)
    numbers = {k: float(s) for k, s in summary(u, probe).items()}  # collective: every rank calls them
    if comm.rank == 0:
        print(f"# wave3d: ranks={comm.size} grid={u.grid} n={n} steps={steps} boundary={bnd}")
        for key, value in numbers.items():
            print(f"{key:>8} = {value:.11e}")

    if args.check:
        field = u.gather(root=0)
        ok = True
        if comm.rank == 0:
            ref = numpy_reference(n, steps, bnd)
            err = float(numpy.max(numpy.abs(numpy.asarray(field) - ref)) / numpy.max(numpy.abs(ref)))
            expected = {k: float(s) for k, s in summary(ref, probe).items()}
            scale = max(abs(v) for v in expected.values())
            bad = {k: (numbers[k], expected[k]) for k in numbers
                   if abs(numbers[k] - expected[k]) > 1e-10 * max(abs(expected[k]), 1e-6 * scale)}
            ok = err <= 1e-10 and not bad
            print(f"# check: max relative field error vs NumPy {err:.2e}; mismatched summaries: {bad or 'none'}")
        ok = comm.bcast(numpy.array(ok), 0)
        if not bool(ok):
            raise SystemExit("wave3d: --check failed: darray and NumPy disagree")

    if args.plot and comm.rank == 0:
        plot(args.plot, shots, u, bnd)


# ------------------------------------------------------------ pictures (--plot)

PLANES = (("z", 2, 0.6), ("y", 1, 0.5))  # the planes shown: z = 0.6 (through the first pulse) and y = 0.5


def planes(u):
    """The planes of :data:`PLANES` on rank 0 (None elsewhere). Collective: the owners broadcast them."""
    n = u.shape[0]
    out = []
    for _, axis, at in PLANES:
        index = [slice(None)] * 3
        index[axis] = int(at * n)
        out.append(u[tuple(index)].gather(root=0))
    return out


def plot(path, shots, u, boundary):
    """One row per plane, one column per snapshot; block edges dashed (rank 0; matplotlib imported here)."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    n = u.shape[0]
    fig, axes = plt.subplots(len(PLANES), len(shots), figsize=(2.3 * len(shots) + 1.0, 2.2 * len(PLANES)),
                             squeeze=False, layout="constrained")
    names = "xyz"
    for col, (step, ps) in enumerate(shots):
        lim = max(float(abs(p).max()) for p in ps) or 1.0  # one colour scale per snapshot: the pulse spreads
        for row, ((name, axis, at), plane) in enumerate(zip(PLANES, ps)):
            ax = axes[row][col]
            a, b = [k for k in range(3) if k != axis]  # the plane's axes: rows a, columns b
            im = ax.imshow(plane, cmap="RdBu_r", vmin=-lim, vmax=lim, extent=(0, 1, 1, 0))
            for cut in u.layout.offsets[a][1:-1]:
                ax.axhline(cut / n, color="0.5", lw=0.7, ls="--")
            for cut in u.layout.offsets[b][1:-1]:
                ax.axvline(cut / n, color="0.5", lw=0.7, ls="--")
            ax.set_title(f"step {step}, {name} = {at}", fontsize=9)
            ax.set_ylabel(names[a], fontsize=8)
            ax.set_xlabel(names[b], fontsize=8)
            ax.set_xticks([])
            ax.set_yticks([])
        fig.colorbar(im, ax=[row[col] for row in axes], location="bottom", shrink=0.8, aspect=15)
    fig.suptitle(f"wave3d: {n}^3, {boundary}, {u.comm.size} rank(s), grid {u.grid}, blocks dashed", fontsize=9)
    fig.savefig(path, dpi=72)
    plt.close(fig)
    print(f"# figure written to {path}")


if __name__ == "__main__":
    main()
