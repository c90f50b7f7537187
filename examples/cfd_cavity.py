"""Lid-driven cavity flow ("CFD Python" step 11), the NumPy code run distributed: python or mpiexec -n 4 python.

The solver below is Lorena Barba's NumPy program (12 steps to Navier-Stokes,
step 11) as written for NumPy, slicing stencils and all, with
``import darray as np``. Every ``u[1:-1, 0:-2]`` is a distributed slice, every
``u[1:-1, 1:-1] = ...`` a distributed assignment and ``p[0, :] = p[1, :]``
copies a row from the rank that owns it: darray moves the cells that the
shifted slices need (about one strip per slice) and nothing else.

Only one change from the NumPy original: ``p.copy()`` is written
``np.asarray(p, copy=True)`` (the Array API spelling; it means the same in
NumPy). Because the solver touches its arrays only through that, slicing,
arithmetic and assignment, ``--check`` runs the very same functions with
NumPy in place of darray on rank 0 and compares.

    python examples/cfd_cavity.py --n 41 --steps 700
    mpiexec -n 4 python examples/cfd_cavity.py --check
    mpiexec -n 4 python examples/cfd_cavity.py --steps 300 --plot cavity.png

The printed summary is the same whatever the number of ranks (sums to 12
significant digits). ``--plot PATH`` draws the original's figure (pressure
contours and velocity arrows) as a PNG (needs matplotlib), with the edges of
the ranks' blocks dashed.
"""

import argparse
import types

import numpy

import darray as np

# ------------------------------------------------------------ the NumPy program


def build_up_b(b, rho, dt, u, v, dx, dy):
    b[1:-1, 1:-1] = (rho * (1 / dt *
                    ((u[1:-1, 2:] - u[1:-1, 0:-2]) /
                     (2 * dx) + (v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy)) -
                    ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx))**2 -
                      2 * ((u[2:, 1:-1] - u[0:-2, 1:-1]) / (2 * dy) *
                           (v[1:-1, 2:] - v[1:-1, 0:-2]) / (2 * dx)) -
                          ((v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy))**2))
    return b


def pressure_poisson(p, dx, dy, b, nit):
    pn = np.asarray(p, copy=True)
    for _ in range(nit):
        pn = np.asarray(p, copy=True)
        p[1:-1, 1:-1] = (((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy**2 +
                          (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx**2) /
                         (2 * (dx**2 + dy**2)) -
                         dx**2 * dy**2 / (2 * (dx**2 + dy**2)) *
                         b[1:-1, 1:-1])

        p[:, -1] = p[:, -2]  # dp/dx = 0 at x = 2
        p[0, :] = p[1, :]    # dp/dy = 0 at y = 0
        p[:, 0] = p[:, 1]    # dp/dx = 0 at x = 0
        p[-1, :] = 0         # p = 0 at y = 2
    return p


def cavity_flow(nt, u, v, dt, dx, dy, p, rho, nu, nit):
    b = np.zeros((u.shape[0], u.shape[1]))
    for _ in range(nt):
        un = np.asarray(u, copy=True)
        vn = np.asarray(v, copy=True)

        b = build_up_b(b, rho, dt, u, v, dx, dy)
        p = pressure_poisson(p, dx, dy, b, nit)

        u[1:-1, 1:-1] = (un[1:-1, 1:-1] -
                         un[1:-1, 1:-1] * dt / dx *
                        (un[1:-1, 1:-1] - un[1:-1, 0:-2]) -
                         vn[1:-1, 1:-1] * dt / dy *
                        (un[1:-1, 1:-1] - un[0:-2, 1:-1]) -
                         dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, 0:-2]) +
                         nu * (dt / dx**2 *
                        (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, 0:-2]) +
                         dt / dy**2 *
                        (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[0:-2, 1:-1])))

        v[1:-1, 1:-1] = (vn[1:-1, 1:-1] -
                         un[1:-1, 1:-1] * dt / dx *
                        (vn[1:-1, 1:-1] - vn[1:-1, 0:-2]) -
                         vn[1:-1, 1:-1] * dt / dy *
                        (vn[1:-1, 1:-1] - vn[0:-2, 1:-1]) -
                         dt / (2 * rho * dy) * (p[2:, 1:-1] - p[0:-2, 1:-1]) +
                         nu * (dt / dx**2 *
                        (vn[1:-1, 2:] - 2 * vn[1:-1, 1:-1] + vn[1:-1, 0:-2]) +
                         dt / dy**2 *
                        (vn[2:, 1:-1] - 2 * vn[1:-1, 1:-1] + vn[0:-2, 1:-1])))

        u[0, :] = 0
        u[:, 0] = 0
        u[:, -1] = 0
        u[-1, :] = 1    # set velocity on cavity lid equal to 1
        v[0, :] = 0
        v[-1, :] = 0
        v[:, 0] = 0
        v[:, -1] = 0

    return u, v, p


# ------------------------------------------------------------ driver


def with_numpy(*funcs):
    """The same functions with ``np`` meaning NumPy itself (for ``--check``): one source, two array libraries."""
    scope = dict(globals(), np=numpy)
    for f in funcs:
        scope[f.__name__] = types.FunctionType(f.__code__, scope, f.__name__, f.__defaults__, f.__closure__)
    return scope


def summary(u, v, p):
    """Printed numbers; sums of squares (no cancellation), so the digits do not depend on summation order."""
    speed = (u**2 + v**2)**0.5
    return {"sum_u2": (u**2).sum(), "sum_v2": (v**2).sum(), "sum_p2": (p**2).sum(), "max_speed": speed.max(),
            "min_p": p.min(), "max_p": p.max()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=41, help="grid points per axis (default 41, as in the original)")
    parser.add_argument("--steps", type=int, default=50, help="time steps (default 50; the original plots 100 and 700)")
    parser.add_argument("--nit", type=int, default=50, help="pressure-Poisson iterations per step (default 50)")
    parser.add_argument("--check", action="store_true", help="rerun the same code with NumPy on rank 0 and compare")
    parser.add_argument("--plot", metavar="PATH", help="write pressure and velocity to PATH (PNG; needs matplotlib)")
    args = parser.parse_args(argv)

    nx = ny = args.n
    nt, nit = args.steps, args.nit
    dx = 2 / (nx - 1)
    dy = 2 / (ny - 1)
    rho = 1
    nu = .1
    dt = min(.001, .2 * dx**2 / nu)  # the original's .001, reduced on fine grids where it would be unstable

    # The default 41 x 41 grid is far below darray's size threshold for cutting
    # arrays into blocks (config.min_distributed_size); lower it so that this
    # small demonstration really is distributed. Large grids need no such line.
    np.config.min_distributed_size = 0

    u = np.zeros((ny, nx))
    v = np.zeros((ny, nx))
    p = np.zeros((ny, nx))
    u, v, p = cavity_flow(nt, u, v, dt, dx, dy, p, rho, nu, nit)

    comm = u.comm
    numbers = {k: float(s) for k, s in summary(u, v, p).items()}  # collective: every rank calls them
    if comm.rank == 0:
        print(f"# cfd_cavity: ranks={comm.size} grid={u.grid} split={u.split} n={nx} steps={nt} nit={nit}")
        for key, value in numbers.items():
            print(f"{key:>9} = {value:.11e}")

    if args.check:
        fields = [a.gather(root=0) for a in (u, v, p)]  # collective; None on ranks other than 0
        ok = True
        if comm.rank == 0:
            reference = with_numpy(build_up_b, pressure_poisson, cavity_flow)["cavity_flow"]
            ref = reference(nt, numpy.zeros((ny, nx)), numpy.zeros((ny, nx)), dt, dx, dy, numpy.zeros((ny, nx)),
                            rho, nu, nit)
            errs = [float(numpy.max(numpy.abs(numpy.asarray(f) - r)) / max(numpy.max(numpy.abs(r)), 1e-300))
                    for f, r in zip(fields, ref)]
            expected = {k: float(s) for k, s in summary(*ref).items()}
            scale = max(abs(x) for x in expected.values())
            bad = {k: (numbers[k], expected[k]) for k in numbers
                   if abs(numbers[k] - expected[k]) > 1e-10 * max(abs(expected[k]), 1e-6 * scale)}
            ok = max(errs) <= 1e-10 and not bad
            print(f"# check: max relative error vs NumPy u {errs[0]:.2e} v {errs[1]:.2e} p {errs[2]:.2e}; "
                  f"mismatched summaries: {bad or 'none'}")
        ok = comm.bcast(numpy.array(ok), 0)
        if not bool(ok):
            raise SystemExit("cfd_cavity: --check failed: darray and NumPy disagree")

    if args.plot:
        fields = [a.gather(root=0) for a in (u, v, p)]  # collective; None on ranks other than 0
        if comm.rank == 0:
            plot(args.plot, *fields, layout=p.layout, steps=nt, ranks=comm.size)


def plot(path, u, v, p, layout, steps, ranks):
    """The original's figure: pressure contours, velocity arrows; block edges dashed (rank 0)."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    ny, nx = p.shape
    X, Y = numpy.meshgrid(numpy.linspace(0, 2, nx), numpy.linspace(0, 2, ny))
    fig, ax = plt.subplots(figsize=(5.0, 4.0), layout="constrained")
    filled = ax.contourf(X, Y, p, alpha=0.6, levels=20, cmap="viridis")
    fig.colorbar(filled, ax=ax, label="pressure")
    ax.contour(X, Y, p, levels=20, colors="k", linewidths=0.3)
    k = max(1, nx // 20)  # about 20 arrows per axis
    ax.quiver(X[::k, ::k], Y[::k, ::k], u[::k, ::k], v[::k, ::k])
    h = 2 / (nx - 1)
    for cut in layout.offsets[0][1:-1]:  # rows of the arrays are y
        ax.axhline((cut - 0.5) * h, color="tab:red", lw=0.8, ls="--")
    for cut in layout.offsets[1][1:-1]:
        ax.axvline((cut - 0.5) * h, color="tab:red", lw=0.8, ls="--")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title(f"cavity flow after {steps} steps, {ranks} rank(s), grid {layout.dims}", fontsize=9)
    fig.savefig(path, dpi=72)
    plt.close(fig)
    print(f"# figure written to {path}")


if __name__ == "__main__":
    main()
