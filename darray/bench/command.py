"""``darray bench``: darray against NumPy, Dask and hand-written mpi4py, in one run.

The command line (:func:`configure`, :func:`run`, :func:`main`): the one-process part, the P-rank part
(in this mpiexec job or a child job), then the report, its JSON and its plot.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import re
import sys
import time
from pathlib import Path

from .. import _comm
from .._files import write_text_safely
from ..output import default_out_dir
from .launch import phase_parallel, phase_serial, run_child, worker
from .machine import loadavg, machine, mpi_facts
from .plot import plot
from .report import command_line, report, target, verdicts
from .workloads import SIZES, WORKLOADS

__all__ = ["configure", "main", "run"]


def configure(parser: argparse.ArgumentParser) -> None:
    """Add ``darray bench``'s arguments to ``parser``."""
    parser.add_argument("--size", choices=[k for k in SIZES if k != "smoke"], default="small",
                        help="problem sizes (default small; full = W1 2^26, W2 4096^2 x100, W3 8192^2, W4 4096^3: "
                             "takes many minutes)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one rep: a quick check (CI)")
    parser.add_argument("--out", default=None,
                        help="folder for the Markdown report, JSON and PNG (default: darray/bench in the user's "
                             "cache, e.g. ~/.cache/darray/bench; the path is printed)")
    parser.add_argument("--label", default=None, help="file label (default <size>-<nproc>cpu)")
    parser.add_argument("--reps", type=int, default=None, help="timed repetitions per variant (median)")
    parser.add_argument("--ranks", type=int, default=2, help="ranks of the parallel part (default 2; 1 skips it)")
    parser.add_argument("--only", default=None,
                        help=f"comma-separated workloads to run (default all: {','.join(WORKLOADS)})")
    parser.add_argument("--no-dask", action="store_true", help="skip the Dask column")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds allowed for the parallel job (default: generous, from the serial part)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    """Run the benchmark with parsed arguments; 0 when every result matched NumPy."""
    if getattr(args, "worker", None):
        return worker(args.worker)
    size = "smoke" if args.smoke else args.size
    sz = dict(SIZES[size])
    reps = args.reps if args.reps is not None else sz["reps"]
    if reps < 1:
        print(f"darray bench: --reps must be at least 1; got {reps}", file=sys.stderr)
        return 2
    names = list(WORKLOADS) if not args.only else [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        print(f"darray bench: unknown workload(s) {unknown}; expected some of {list(WORKLOADS)}", file=sys.stderr)
        return 2
    under_mpi = _comm.launched_by_mpi()
    rank, P = 0, max(1, args.ranks)
    world = None
    if under_mpi:
        from mpi4py import MPI

        world = MPI.COMM_WORLD
        rank, P = world.Get_rank(), world.Get_size()
    say = (lambda *a: print(*a, flush=True)) if rank == 0 else (lambda *a: None)
    have = {"dask"} if (not args.no_dask and importlib.util.find_spec("dask") is not None) else set()
    load = {"start": loadavg()}
    say(f"darray bench --size {size}: load average {load['start']} on {os.cpu_count()} CPUs")
    t_start = time.perf_counter()

    # one-process part: NumPy, darray on 1 rank, Dask (rank 0 only; other ranks sleep, not spin)
    serial: dict = {}
    if rank == 0:
        serial = phase_serial(sz, names, reps, "dask" in have, say)
    if world is not None:
        req = world.Ibarrier()
        while not req.Test():
            time.sleep(0.01)
    serial_s = time.perf_counter() - t_start

    parallel, facts, status = None, {}, f"The {P}-rank part was skipped (--ranks {P})."
    load["parallel"] = loadavg()
    if world is not None and P > 1:
        parallel = phase_parallel(sz, names, reps, say)
        facts = mpi_facts()
        status = f"The {P}-rank part ran in this mpiexec job."
    elif world is None and P > 1:
        timeout = args.timeout if args.timeout is not None else 120.0 + 20.0 * serial_s
        parallel, facts, status = run_child(P, {"sizes": sz, "names": names, "reps": reps}, timeout, say)
    elif world is not None:
        facts = mpi_facts()
    if rank != 0:
        return 0

    results = {n: dict(serial.get(n, {})) for n in names}
    for n in names:
        results[n].update((parallel or {}).get(n, {}))
    verdicts(results)
    load["end"] = loadavg()
    date = datetime.date.today().isoformat()
    label = re.sub(r"[^A-Za-z0-9_.-]+", "-", args.label or f"{size}-{os.cpu_count()}cpu")
    out = Path(args.out) if args.out else default_out_dir("bench")
    out.mkdir(parents=True, exist_ok=True)
    path = target(out, date, label)
    dask_status = "not run (--no-dask)" if args.no_dask else "n/a (dask not installed)"
    meta = {"size": size, "sizes": sz, "date": date, "reps": reps, "ranks": P, "have": sorted(have),
            "dask_status": dask_status, "command": command_line(), "parallel_ran": parallel is not None,
            "machine": machine(facts), "loadavg": load, "parallel_status": status,
            "seconds": round(time.perf_counter() - t_start, 1)}
    png = path.with_suffix(".png")
    png_ok = plot(png, meta, results)
    write_text_safely(path, report(meta, results, png.name if png_ok else None))  # never through a symlink
    write_text_safely(path.with_suffix(".json"), json.dumps({"meta": meta, "results": results}, indent=1,
                                                            default=str))
    say(f"wrote {path}" + (f" and {png.name}" if png_ok else "") + f" ({meta['seconds']} s)")
    bad = [f"{n}/{v}" for n, row in results.items() for v, res in row.items()
           if res.get("ok") is False or "error" in res]
    if bad:
        say(f"darray bench: {len(bad)} variant(s) failed or did not match NumPy: {', '.join(bad)}")
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m darray.bench [ARGS]``: parse ``argv`` (default ``sys.argv[1:]``) and :func:`run`."""
    parser = argparse.ArgumentParser(prog="darray bench", description=__doc__.split("\n\n")[0])
    configure(parser)
    return run(parser.parse_args(argv))
