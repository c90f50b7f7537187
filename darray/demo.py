"""``darray demo``: the main job, end to end on a field divided over the ranks.

1. generate a 2-d field (a few Gaussian bumps) cut into blocks over all ranks;
2. simulate it forward with a halo stencil (explicit diffusion, periodic);
3. check the sharded result against a one-process run of the same steps on a
   small field (the numbers must not depend on the rank count);
4. train a small surrogate model, sharded across ranks, when ``darray.nn`` is
   available;
5. save the field with ``darray.io`` when available;
6. print the communication summary and write PNGs when matplotlib is
   installed: ``field.png`` (snapshots on one colour scale, block edges and
   halo strips drawn), ``breakdown.png`` (time per rank: compute,
   communication, waiting), ``scaling.png`` (does dividing pay: time per step
   of NumPy on one process, darray on 1 rank and on all ranks) and
   ``loss.png`` (the surrogate's training loss).

Everything is written under ``out_dir`` (default: :func:`darray.output.default_out_dir`,
a folder in the user's cache, never the current directory), whose path is printed.
"""

from __future__ import annotations

import os
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
    result = {"ranks": comm.size, "heat": heat, "peak": peak, "seconds": seconds, "check": diff}
    result["scaling"] = _scaling(comm, size, say)
    result.update(_train(u, train_steps, say))
    result.update(_save(u, out_dir, say, comm))
    summary = tr.summary(file=None if comm.rank == 0 and not quiet else open(os.devnull, "w"))
    result["bytes_total"] = summary["bytes_total"]
    _plots(shots, layout, summary, result, out_dir, say, comm)
    return result


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
        from darray import nn, optim  # noqa: F401
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
    written.append(_plot_breakdown(plt, summary, out_dir))
    if result.get("scaling", {}).get("NumPy, 1 process"):
        written.append(_plot_scaling(plt, result["scaling"], out_dir))
    if result.get("losses"):
        fig, ax = plt.subplots(figsize=(5, 3))
        ax.semilogy(range(1, len(result["losses"]) + 1), result["losses"])
        ax.set_xlabel("training step")
        ax.set_ylabel("loss (log scale)")
        ax.set_title("surrogate training, sharded over the ranks")
        fig.tight_layout()
        written.append(_save_figure(fig, out_dir, "loss.png"))
    say(f"  plots written to {out_dir}: {', '.join(written)}")


def _save_figure(fig, out_dir: str, name: str) -> str:
    import matplotlib.pyplot as plt

    with replacing(os.path.join(out_dir, name)) as f:  # never through a symlink planted at the name
        fig.savefig(f, dpi=90, format=os.path.splitext(name)[1][1:] or "png")
    plt.close(fig)
    return name


def _plot_field(plt, shots, layout, result, out_dir) -> str:
    """The first and last snapshot on one colour scale and their difference, with the layout drawn on each.

    Block edges are lines; the halo strips exchanged every step are shaded
    (drawn at least 1 % of the field wide, so that a one-cell halo shows).
    """
    (first_step, first), (last_step, last) = shots[0], shots[-1]
    lo, hi = min(float(first.min()), float(last.min())), max(float(first.max()), float(last.max()))
    change = last - first
    bound = float(np.abs(change).max()) or 1.0
    fig, axes = plt.subplots(1, 3, figsize=(12.5, 4.0), constrained_layout=True)
    panels = ((axes[0], first, f"step {first_step}", "inferno", lo, hi),
              (axes[1], last, f"step {last_step}", "inferno", lo, hi),
              (axes[2], change, f"change, step {first_step} -> {last_step}", "RdBu_r", -bound, bound))
    for ax, field, title, cmap, vmin, vmax in panels:
        image = ax.imshow(field, cmap=cmap, vmin=vmin, vmax=vmax)
        ax.set_title(title)
        ax.set_xticks([])
        ax.set_yticks([])
        _draw_layout(ax, layout)
        fig.colorbar(image, ax=ax, shrink=0.8, label="u" if cmap == "inferno" else "u(last) - u(first)")
    fig.suptitle(f"diffusion of a {layout.shape[0]}x{layout.shape[1]} field on {result['ranks']} rank(s); "
                 "cyan: block edges, shaded: halo strips exchanged every step")
    return _save_figure(fig, out_dir, "field.png")


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


def _plot_breakdown(plt, summary, out_dir) -> str:
    """Seconds per rank, stacked: compute, communication, waiting for the slowest rank."""
    ranks = np.arange(summary["ranks"])
    parts = (("compute", summary["compute_s"], "tab:blue"), ("communication", summary["comm_s"], "tab:orange"),
             ("waiting", summary.get("wait_s", [0.0] * len(ranks)), "tab:gray"))
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    bottom = np.zeros(len(ranks))
    for label, values, color in parts:
        values = np.asarray(values, dtype=float)
        ax.bar(ranks, values, bottom=bottom, label=label, color=color, width=0.6)
        bottom += values
    ax.set_xticks(ranks)
    ax.set_xlabel("rank")
    ax.set_ylabel("seconds")
    ax.set_title("where each rank's time went")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    return _save_figure(fig, out_dir, "breakdown.png")


def _plot_scaling(plt, times: dict, out_dir) -> str:
    """Does dividing pay: time per step against NumPy on one process, with the speed-up written on each bar."""
    names = list(times)
    values = np.asarray([times[k] for k in names]) * 1e3
    base = times["NumPy, 1 process"] * 1e3
    fig, ax = plt.subplots(figsize=(5.5, 3.2))
    bars = ax.barh(names, values, color=["tab:gray"] + ["tab:blue"] * (len(names) - 1))
    for bar, value in zip(bars, values):
        ax.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" speed-up {base / value:.2f}x", va="center")
    ax.invert_yaxis()
    ax.set_xlabel("milliseconds per simulation step (lower is better)")
    ax.set_title("does dividing the field pay?")
    ax.set_xlim(0, values.max() * 1.35)
    fig.tight_layout()
    return _save_figure(fig, out_dir, "scaling.png")
