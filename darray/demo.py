"""``darray demo``: the main job, end to end on a field divided over the ranks.

1. generate a 2-d field (a few Gaussian bumps) cut into blocks over all ranks;
2. simulate it forward with a halo stencil (explicit diffusion, periodic);
3. check the sharded result against a one-process run of the same steps on a
   small field (the numbers must not depend on the rank count);
4. train a small surrogate model, sharded across ranks, when ``darray.nn`` is
   available;
5. save the field with ``darray.io`` when available;
6. print the communication summary and write PNGs when matplotlib is
   installed: ``field.png`` (snapshots on one colour scale in cell
   coordinates, block edges and halo strips drawn, and a zoom on a block
   corner where the one-cell ghost rows and columns show), ``breakdown.png``
   (each rank's wall time cut into compute, communication, waiting, overhead
   and what is left unaccounted, which add up to it), ``scaling.png`` (does
   dividing pay: time per step of NumPy on one process, darray on 1 rank and
   on all ranks; warns when the ranks outnumber the cores) and ``loss.png``
   (the surrogate's training loss against the persistence baseline, 1).

Everything is written under ``out_dir`` (default: :func:`darray.output.default_out_dir`,
a folder in the user's cache, never the current directory), whose path is printed.
"""

from __future__ import annotations

import os
import textwrap
import time

import numpy as np

import darray as da
from darray._files import replacing
from darray.output import default_out_dir, progress

__all__ = ["run_demo", "simulate", "initial_field"]


def initial_field(n: int, *, comm=None, split=0) -> da.DArray:
    """A sum of Gaussian bumps on an ``n x n`` grid, built blockwise (nothing global is allocated)."""
    ys, xs = da.meshgrid(da.linspace(0.0, 1.0, n, comm=comm), da.linspace(0.0, 1.0, n, comm=comm),
                         indexing="ij", split=split, comm=comm)
    u = da.zeros_like(xs)
    for cx, cy, w in ((0.3, 0.3, 60.0), (0.7, 0.6, 40.0), (0.5, 0.8, 90.0)):
        u = u + da.exp(-w * ((xs - cx) ** 2 + (ys - cy) ** 2))
    return da.asarray(u, split=split, halo=1, boundary="periodic")


def _diffuse(b, nu=0.2):
    return b[1:-1, 1:-1] + nu * (b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] - 4 * b[1:-1, 1:-1])


def simulate(u: da.DArray, steps: int, snapshots: int = 0, show_progress: bool = False) -> tuple[da.DArray, list]:
    """``steps`` explicit diffusion steps; each exchanges one-cell strips with the neighbours.

    Returns the field and ``snapshots + 1`` pairs ``(step, field on rank 0)``
    (the initial field first) when ``snapshots`` is given; other ranks hold None
    in place of the fields.
    """
    v = da.empty_like(u)
    shots = [(0, _snapshot(u))] if snapshots else []
    every = max(1, steps // snapshots) if snapshots else 0
    for step in progress(range(steps), "simulating", enabled=show_progress):
        da.map_overlap(_diffuse, u, depth=1, boundary="periodic", trim=False, out=v)
        u, v = v, u
        if every and (step + 1) % every == 0:
            shots.append((step + 1, _snapshot(u)))
    return u, shots


def _snapshot(u: da.DArray):
    """The whole field as a NumPy array on rank 0 (None elsewhere), whatever the local backend."""
    from darray._backend import to_numpy

    whole = u.gather(root=0)
    return None if whole is None else to_numpy(whole)


def _check_against_one_process(comm, n: int = 96, steps: int = 20) -> float:
    """Max difference between the sharded run and a one-process run (SelfCommunicator) of the same job."""
    from darray._comm import SelfCommunicator

    sharded, _ = simulate(initial_field(n, comm=comm), steps)
    single, _ = simulate(initial_field(n, comm=SelfCommunicator()), steps)
    mine = sharded.local
    want = single.local[sharded.layout.block_slices(comm.rank)]
    diff = float(np.max(np.abs(np.asarray(mine) - np.asarray(want)))) if mine.size else 0.0
    return float(np.asarray(comm.allreduce(np.asarray([diff]), "max"))[0])


def run_demo(size: int = 1024, steps: int = 200, out_dir: str | None = None, train_steps: int = 100,
             quiet: bool = False) -> dict:
    """Run the demo on the default communicator; returns the key numbers (same on every rank).

    ``out_dir`` defaults to ``default_out_dir("demo")`` (the user's cache).
    """
    comm = da.default_communicator()
    out_dir = str(default_out_dir("demo")) if out_dir is None else out_dir
    say = (lambda *a: print(*a, flush=True)) if comm.rank == 0 and not quiet else (lambda *a: None)
    say(f"darray demo: {comm.size} rank(s), transport {comm.name}, field {size}x{size}, {steps} steps")
    crowded = _crowded(comm)
    if crowded:
        say(f"  warning: {crowded}")
    t0 = time.perf_counter()
    with da.tracing() as tr:
        u = initial_field(size, comm=comm)
        say(f"  layout: grid={u.grid} split={u.split} halo={u.halo}; explain:")
        for line in str(da.explain(u)).splitlines()[2:4]:
            say(f"    {line}")
        layout = u.layout
        u, shots = simulate(u, steps, snapshots=1, show_progress=comm.rank == 0 and not quiet)
        heat, peak = float(da.sum(u)), float(da.max(u))
    seconds = time.perf_counter() - t0
    say(f"  simulated: heat={heat:.6f} peak={peak:.6f} in {seconds:.2f} s")
    diff = _check_against_one_process(comm)
    say(f"  sharded vs one-process run (96x96, 20 steps): max |difference| = {diff:.3e}")
    if diff > 1e-12:
        raise RuntimeError(f"darray demo: sharded result differs from the one-process run by {diff}")
    result = {"ranks": comm.size, "heat": heat, "peak": peak, "seconds": seconds, "check": diff, "size": size,
              "steps": steps, "crowded": crowded}
    result["scaling"] = _scaling(comm, size, say)
    result.update(_train(u, train_steps, say))
    result.update(_save(u, out_dir, say, comm))
    summary = tr.summary(file=None if comm.rank == 0 and not quiet else open(os.devnull, "w"))
    result["bytes_total"] = summary["bytes_total"]
    result["breakdown"] = {k: summary[k] for k in _PARTS_KEYS + ("wall_s",)}
    for r in range(comm.size):
        parts = " + ".join(f"{name} {summary[k][r]:.3f}" for k, name, _ in _PARTS)
        say(f"  rank {r}: {parts} = wall {summary['wall_s'][r]:.3f} s")
    _plots(shots, layout, summary, result, out_dir, say, comm)
    return result


def _crowded(comm) -> str | None:
    """A warning when this node runs more ranks than it has cores (the same text on every rank), else None."""
    from darray import _threads

    cores = np.asarray(comm.allgather(np.asarray([_threads.cores(), _threads.local_ranks or 1], dtype=np.int64)))
    over = [(int(c), int(n)) for c, n in cores if n > c]
    if not over:
        return None
    cores_, ranks = over[0]
    return (f"{ranks} ranks share {cores_} core{'s' if cores_ > 1 else ''}: they take turns on the cores, so the "
            f"times measure the scheduler, not darray (run with --ranks {cores_} or fewer)")


def _scaling(comm, n: int, say, steps: int = 10) -> dict:
    """Seconds per step of the same simulation: NumPy on one process, darray on 1 rank, darray on all ranks.

    The one-process runs happen on rank 0 while the others wait at a barrier.
    """
    from darray._comm import SelfCommunicator

    def per_step(run) -> float:
        run(1)  # warm-up: plans, caches
        t0 = time.perf_counter()
        run(steps)
        return (time.perf_counter() - t0) / steps

    def numpy_run(k: int) -> None:
        b = np.asarray(initial_field(n, comm=SelfCommunicator()).local)
        for _ in range(k):
            b = _diffuse(np.pad(b, 1, mode="wrap"))

    times = {}
    if comm.rank == 0:
        times["NumPy, 1 process"] = per_step(numpy_run)
        one = initial_field(n, comm=SelfCommunicator())
        times["darray, 1 rank"] = per_step(lambda k: simulate(one, k))
    comm.barrier()
    if comm.size > 1:
        u = initial_field(n, comm=comm)
        comm.barrier()
        times[f"darray, {comm.size} ranks"] = per_step(lambda k: simulate(u, k))  # rank 0's clock reports
    base = times.get("NumPy, 1 process")
    if base:
        rows = [f"{k} {v * 1e3:.2f} ms" + ("" if k.startswith("NumPy") else f" (speed-up {base / v:.2f}x)")
                for k, v in times.items()]
        say("  time per step: " + "; ".join(rows))
    return times


def _train(u, train_steps, say) -> dict:
    try:
        from darray import nn, optim
    except ImportError:
        say("  training: skipped (darray.nn is not available in this build)")
        return {}
    try:
        from darray.nn.surrogate import train_surrogate
    except ImportError:
        say("  training: skipped (no surrogate model in this build)")
        return {}
    losses = train_surrogate(u, steps=train_steps, log=say)
    return {"losses": losses}


def _save(u, out_dir, say, comm) -> dict:
    try:
        from darray import io
    except ImportError:
        say("  save: skipped (darray.io is not available in this build)")
        return {}
    if comm.rank == 0:
        os.makedirs(out_dir, exist_ok=True)
    comm.barrier()
    path = os.path.join(out_dir, "field.zarr")
    try:
        io.save(path, u)
    except ImportError as exc:
        say(f"  save: skipped ({exc})")
        return {}
    say(f"  saved the field to {path}")
    return {"saved": path}


def _plots(shots, layout, summary, result, out_dir, say, comm) -> None:
    if comm.rank != 0:
        return
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        say("  plots: skipped (pip install 'darray[viz]' for PNGs)")
        return
    os.makedirs(out_dir, exist_ok=True)
    written = []
    if shots:
        written.append(_plot_field(plt, shots, layout, result, out_dir))
    written.append(_plot_breakdown(plt, summary, result, out_dir))
    if result.get("scaling", {}).get("NumPy, 1 process"):
        written.append(_plot_scaling(plt, result["scaling"], result, out_dir))
    if result.get("losses"):
        written.append(_plot_loss(plt, result["losses"], out_dir))
    say(f"  plots written to {out_dir}: {', '.join(written)}")


def _save_figure(fig, out_dir: str, name: str) -> str:
    import matplotlib.pyplot as plt

    with replacing(os.path.join(out_dir, name)) as f:  # never through a symlink planted at the name
        fig.savefig(f, dpi=90, format=os.path.splitext(name)[1][1:] or "png")
    plt.close(fig)
    return name


def _plot_field(plt, shots, layout, result, out_dir) -> str:
    """The first and last snapshot on one colour scale and their difference, with the layout drawn on each.

    Axes count cells (the domain is the unit square). Block edges are lines;
    the halo strips exchanged every step are shaded (drawn at least 1 % of the
    field wide, so that a one-cell halo shows), and a zoom on a block corner of
    the first snapshot shows each cell, the one-cell ghost strips outlined.
    """
    (first_step, first), (last_step, last) = shots[0], shots[-1]
    lo, hi = min(float(first.min()), float(last.min())), max(float(first.max()), float(last.max()))
    change = last - first
    bound = float(np.abs(change).max()) or 1.0
    fig, axes = plt.subplots(1, 4, figsize=(18.0, 5.0), constrained_layout=True, width_ratios=(1, 0.85, 1, 1))
    panels = ((axes[0], first, f"step {first_step}", "inferno", lo, hi),
              (axes[2], last, f"step {last_step}", "inferno", lo, hi),
              (axes[3], change, f"change, step {first_step} -> {last_step}", "RdBu_r", -bound, bound))
    for ax, field, title, cmap, vmin, vmax in panels:
        image = ax.imshow(field, cmap=cmap, vmin=vmin, vmax=vmax)
        ax.set_title(title)
        ax.set_xlabel("x: column (cells)")
        ax.set_ylabel("y: row (cells)")
        _draw_layout(ax, layout)
        if ax is not axes[0]:
            fig.colorbar(image, ax=ax, shrink=0.8, label=f"u (dimensionless), steps {first_step} and {last_step}"
                         if cmap == "inferno" else "u(last) - u(first)")
    _zoom_on_corner(axes[0], axes[1], first, layout, "inferno")
    fig.suptitle(f"diffusion of a {layout.shape[0]}x{layout.shape[1]} field (the unit square, periodic) on "
                 f"{result['ranks']} rank(s); cyan: block edges, shaded: halo strips exchanged every step "
                 "(widened to show; true size in the zoom)")
    return _save_figure(fig, out_dir, "field.png")


def _corner(layout) -> tuple[int, int]:
    """A block corner to zoom on: the first interior block edge per cut axis (0, the field's edge, elsewhere)."""
    corner = []
    for axis in range(2):
        edges = layout.offsets[axis]
        inner = [int(e) for e in edges[1:-1] if 0 < e < layout.shape[axis]] if layout.axis_dim[axis] is not None \
            else []
        corner.append(inner[0] if inner else 0)
    return corner[0], corner[1]


def _zoom_on_corner(ax, zoom, field, layout, cmap, cells: int = 12) -> None:
    """Draw on ``zoom`` ``cells`` x ``cells`` cells of ``field`` around a block corner, boxed on ``ax``.

    Each cell is drawn; ghost cells are hatched: along a cut axis, the
    neighbouring block's first row (or column); at a periodic field edge, the
    cells wrapped in from the far side (drawn past the field's edge).
    """
    from matplotlib.colors import LogNorm
    from matplotlib.patches import ConnectionPatch, Rectangle
    from matplotlib.ticker import MaxNLocator

    halo = layout.halo[:2]
    corner = _corner(layout)
    starts = [c - cells // 2 if c else -h for c, h in zip(corner, halo)]  # (at the field's edge: its ghost cells)
    rows = np.arange(starts[0], starts[0] + cells)
    cols = np.arange(starts[1], starts[1] + cells)
    view = np.take(np.take(field, rows, axis=0, mode="wrap"), cols, axis=1, mode="wrap")
    extent = (cols[0] - 0.5, cols[-1] + 0.5, rows[-1] + 0.5, rows[0] - 0.5)
    positive = view[view > 0]
    norm = LogNorm(float(positive.min()), float(positive.max())) if positive.size and positive.max() > \
        positive.min() else None  # (log colours: the cells near a corner differ by orders of magnitude)
    image = zoom.imshow(view, cmap=cmap, extent=extent, interpolation="nearest", norm=norm)
    for k in range(cells + 1):  # every cell's outline
        zoom.axhline(rows[0] - 0.5 + k, color="gray", lw=0.4)
        zoom.axvline(cols[0] - 0.5 + k, color="gray", lw=0.4)
    labels = []
    for axis, (c, h) in enumerate(zip(corner, halo)):
        if not h:
            continue
        line = zoom.axhline if axis == 0 else zoom.axvline
        if c:  # a block edge: each side's ghost strip is the other side's first cells
            line(c - 0.5, color="cyan", lw=2.0)
            spans = ((c - h, c), (c, c + h))
            what = "rows" if axis == 0 else "columns"
            labels.append(f"{what} {c - h}-{c + h - 1}: ghost {what} (each block's copy of the other's edge)")
        else:  # the field's periodic edge: the ghost cells wrapped in from the far side
            line(-0.5, color="white", lw=1.2, ls=":")
            spans = ((-h, 0),)
            far = layout.shape[axis] - h
            what = "row" if axis == 0 else "column"
            labels.append(f"{what} -{h}: ghost {what} (a copy of {what} {far}: periodic)")
        for a, b in spans:
            xy = (cols[0] - 0.5, a - 0.5) if axis == 0 else (a - 0.5, rows[0] - 0.5)
            size = (cells, b - a) if axis == 0 else (b - a, cells)
            zoom.add_patch(Rectangle(xy, size[0], size[1], fill=False, edgecolor="cyan", lw=1.5, ls="--",
                                     hatch="//"))
    zoom.set_xlim(extent[0], extent[1])
    zoom.set_ylim(extent[2], extent[3])
    zoom.xaxis.set_major_locator(MaxNLocator(6, integer=True))
    zoom.yaxis.set_major_locator(MaxNLocator(6, integer=True))
    zoom.set_xlabel("x: column (cells)\n" + "\n".join(textwrap.fill(label, 44) for label in labels), fontsize=8)
    zoom.set_title(f"zoom: the box in step 0, {cells}x{cells} cells\nhatched: the {max(halo)}-cell halo",
                   fontsize=10)
    plt_colorbar = zoom.figure.colorbar(image, ax=zoom, shrink=0.8)
    plt_colorbar.set_label("u (log scale)")
    box = Rectangle((extent[0], extent[3]), cells, cells, fill=False, edgecolor="white", lw=1.2)
    ax.add_patch(box)
    for corner_xy in ((extent[1], extent[3]), (extent[1], extent[2])):  # lines from the box to the zoom
        zoom.figure.add_artist(ConnectionPatch(corner_xy, (extent[0], corner_xy[1]), coordsA=ax.transData,
                                               coordsB=zoom.transData, color="gray", lw=0.8))


def _draw_layout(ax, layout) -> None:
    for axis, edges in enumerate(layout.offsets[:2]):
        if layout.axis_dim[axis] is None:
            continue
        line, span = (ax.axhline, ax.axhspan) if axis == 0 else (ax.axvline, ax.axvspan)
        width = max(layout.halo[axis], layout.shape[axis] / 100) if layout.halo[axis] else 0
        for edge in edges[1:-1]:
            line(edge - 0.5, color="cyan", lw=1.0)
            if width:
                span(edge - 0.5 - width, edge - 0.5 + width, color="cyan", alpha=0.3, lw=0)


#: The parts of a rank's wall time in the trace summary: (key, name, colour).
_PARTS = (("compute_s", "compute", "tab:blue"), ("comm_s", "communication", "tab:orange"),
          ("wait_s", "waiting", "tab:gray"), ("overhead_s", "overhead", "tab:purple"),
          ("unaccounted_s", "unaccounted", "white"))
_PARTS_KEYS = tuple(k for k, _, _ in _PARTS)


def _plot_breakdown(plt, summary, result, out_dir) -> str:
    """Each rank's wall time, stacked: compute, communication, waiting, overhead and unaccounted add up to it."""
    ranks = np.arange(summary["ranks"])
    wall = np.asarray(summary["wall_s"], dtype=float)
    fig, ax = plt.subplots(figsize=(7.0, 3.8))
    bottom = np.zeros(len(ranks))
    for key, label, color in _PARTS:
        values = np.asarray(summary[key], dtype=float)
        share = 100 * values.sum() / max(wall.sum(), 1e-300)
        ax.bar(ranks, values, bottom=bottom, label=f"{label} ({share:.0f} %)", color=color, width=0.6,
               edgecolor="black", linewidth=0.6)
        bottom += values
    ax.scatter(ranks, wall, marker="_", s=900, color="black", zorder=3, label="wall time (measured)")
    for r, w in zip(ranks, wall):
        ax.text(r, w, f"{w:.2f} s", ha="center", va="bottom")
    ax.set_xticks(ranks)
    ax.set_xlabel("rank")
    ax.set_ylabel("seconds")
    ax.set_ylim(0, wall.max() * 1.15 if wall.size else 1)
    ax.set_title(f"where each rank's time went: {result['steps']} steps of a {result['size']}x{result['size']} "
                 f"field\n(the parts add up to the wall time; % of all ranks' time)", fontsize=10)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    return _save_figure(fig, out_dir, "breakdown.png")


def _plot_scaling(plt, times: dict, result, out_dir) -> str:
    """Does dividing pay: time per step against NumPy on one process, with the speed-up written on each bar."""
    names = list(times)
    values = np.asarray([times[k] for k in names]) * 1e3
    base = times["NumPy, 1 process"] * 1e3
    fig, ax = plt.subplots(figsize=(6.0, 3.4 if not result.get("crowded") else 4.0))
    bars = ax.barh(names, values, color=["tab:gray"] + ["tab:blue"] * (len(names) - 1))
    for bar, value in zip(bars, values):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" speed-up {base / value:.2f}x", va="center")
    ax.invert_yaxis()
    ax.set_xlabel("milliseconds per simulation step (lower is better)")
    from darray import _threads

    ax.set_title(f"does dividing a {result['size']}x{result['size']} field pay?\n(a diffusion step with its halo "
                 f"exchange; {result['ranks']} rank(s) on {_threads.cores()} cores)", fontsize=10)
    ax.set_xlim(0, values.max() * 1.5)
    if result.get("crowded"):
        fig.text(0.5, 0.01, textwrap.fill("warning: " + result["crowded"], 78), ha="center", va="bottom",
                 color="tab:red", fontsize=8.5)
        fig.tight_layout(rect=(0, 0.16, 1, 1))
    else:
        fig.tight_layout()
    return _save_figure(fig, out_dir, "scaling.png")


def _plot_loss(plt, losses: list, out_dir) -> str:
    """The surrogate's training loss on a log scale, with the persistence baseline (loss 1) drawn."""
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    steps = range(1, len(losses) + 1)
    ax.semilogy(steps, losses, label="training loss")
    ax.axhline(1.0, color="tab:red", linestyle="--", linewidth=1.2,
               label="1 = persistence (predict no change)")
    ax.set_ylim(min(min(losses), 1.0) * 0.7, max(max(losses), 1.0) * 1.5)
    ax.set_xlabel("training step")
    ax.set_ylabel("loss (log scale)")
    ax.set_title("surrogate training, sharded over the ranks\n(loss relative to persistence; 0 = exact)", fontsize=10)
    ax.legend(frameon=False, fontsize=8.5)
    fig.tight_layout()
    return _save_figure(fig, out_dir, "loss.png")
