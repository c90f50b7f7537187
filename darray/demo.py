"""``darray demo``: the main job, end to end on a field divided over the ranks.

1. generate a 2-d field (a few Gaussian bumps) cut into blocks over all ranks;
2. simulate it forward with a halo stencil (explicit diffusion, periodic);
3. check the sharded result against a one-process run of the same steps on a
   small field (the numbers must not depend on the rank count);
4. train a small surrogate model, sharded across ranks, when ``darray.nn`` is
   available;
5. save the field with ``darray.io`` when available;
6. print the communication summary and write PNGs (field snapshots,
   compute/communication breakdown) when matplotlib is installed.
"""

from __future__ import annotations

import os
import time

import numpy as np

import darray as da

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


def simulate(u: da.DArray, steps: int, snapshots: int = 0) -> tuple[da.DArray, list]:
    """``steps`` explicit diffusion steps; each exchanges one-cell strips with the neighbours."""
    v = da.empty_like(u)
    shots = []
    every = max(1, steps // snapshots) if snapshots else 0
    for step in range(steps):
        da.map_overlap(_diffuse, u, depth=1, boundary="periodic", trim=False, out=v)
        u, v = v, u
        if every and (step + 1) % every == 0:
            shots.append(u.gather(root=0))
    return u, shots


def _check_against_one_process(comm, n: int = 96, steps: int = 20) -> float:
    """Max difference between the sharded run and a one-process run (SelfCommunicator) of the same job."""
    from darray._comm import SelfCommunicator

    sharded, _ = simulate(initial_field(n, comm=comm), steps)
    single, _ = simulate(initial_field(n, comm=SelfCommunicator()), steps)
    mine = sharded.local
    want = single.local[sharded.layout.block_slices(comm.rank)]
    diff = float(np.max(np.abs(np.asarray(mine) - np.asarray(want)))) if mine.size else 0.0
    return float(np.asarray(comm.allreduce(np.asarray([diff]), "max"))[0])


def run_demo(size: int = 1024, steps: int = 200, out_dir: str = "darray-demo", train_steps: int = 100,
             quiet: bool = False) -> dict:
    """Run the demo on the default communicator; returns the key numbers (same on every rank)."""
    comm = da.default_communicator()
    say = (lambda *a: print(*a, flush=True)) if comm.rank == 0 and not quiet else (lambda *a: None)
    say(f"darray demo: {comm.size} rank(s), transport {comm.name}, field {size}x{size}, {steps} steps")
    t0 = time.perf_counter()
    with da.trace() as tr:
        u = initial_field(size, comm=comm)
        say(f"  layout: grid={u.grid} split={u.split} halo={u.halo}; explain:")
        for line in str(da.explain(u)).splitlines()[2:4]:
            say(f"    {line}")
        u, shots = simulate(u, steps, snapshots=4)
        heat, peak = float(da.sum(u)), float(da.max(u))
    seconds = time.perf_counter() - t0
    say(f"  simulated: heat={heat:.6f} peak={peak:.6f} in {seconds:.2f} s")
    diff = _check_against_one_process(comm)
    say(f"  sharded vs one-process run (96x96, 20 steps): max |difference| = {diff:.3e}")
    if diff > 1e-12:
        raise RuntimeError(f"darray demo: sharded result differs from the one-process run by {diff}")
    result = {"ranks": comm.size, "heat": heat, "peak": peak, "seconds": seconds, "check": diff}
    result.update(_train(u, train_steps, say))
    result.update(_save(u, out_dir, say, comm))
    summary = tr.summary(file=None if comm.rank == 0 and not quiet else open(os.devnull, "w"))
    result["bytes_total"] = summary["bytes_total"]
    _plots(shots, summary, result, out_dir, say, comm)
    return result


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


def _plots(shots, summary, result, out_dir, say, comm) -> None:
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
    if shots:
        fig, axes = plt.subplots(1, len(shots), figsize=(3 * len(shots), 3))
        for ax, shot in zip(np.atleast_1d(axes), shots):
            ax.imshow(shot, cmap="inferno")
            ax.set_axis_off()
        fig.suptitle(f"diffusion on {result['ranks']} rank(s)")
        fig.savefig(os.path.join(out_dir, "field.png"), dpi=80)
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(5, 3))
    ranks = range(summary["ranks"])
    ax.bar(ranks, summary["compute_s"], label="compute")
    ax.bar(ranks, summary["comm_s"], bottom=summary["compute_s"], label="communication")
    ax.set_xlabel("rank")
    ax.set_ylabel("seconds")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "breakdown.png"), dpi=80)
    plt.close(fig)
    if result.get("losses"):
        fig, ax = plt.subplots(figsize=(5, 3))
        ax.semilogy(result["losses"])
        ax.set_xlabel("step")
        ax.set_ylabel("loss")
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "loss.png"), dpi=80)
        plt.close(fig)
    say(f"  plots written to {out_dir}/")
