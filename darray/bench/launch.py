"""Where ``darray bench`` runs its variants: in this process, and on P ranks.

* :func:`phase_serial`: NumPy, darray on 1 rank and Dask, in this process;
* :func:`phase_parallel`: darray and hand-written mpi4py on every rank of ``COMM_WORLD`` (collective);
* :func:`run_child`: the P-rank part as a child job ``mpiexec -n P python -m mpi4py -m darray.bench
  --worker CONFIG`` (:func:`worker` is that job's body), when ``darray bench`` was not itself started
  under mpiexec.

Within a phase, the variants of one workload are timed together, taking turns call by call
(:func:`~darray.bench.harness.measure`).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import darray as da
from darray import _comm
from darray._files import write_text_safely

from .harness import Case, Ctx, fmt_time, measure
from .machine import mpi_facts
from .workloads import WORKLOADS

__all__ = ["phase_parallel", "phase_serial", "run_child", "worker"]

Say = Callable[..., None]


Variant = tuple[str, str, Callable[[Ctx], Case], Ctx]  # result key, name printed, factory, context


def _row(name: str, variants: list[Variant], reps: int, say: Say) -> dict:
    """One workload's variants measured together (interleaved): key -> result, each reported by ``say``."""
    results = measure([(factory, ctx) for _, _, factory, ctx in variants], reps) if variants else []
    for (_, shown, _, _), res in zip(variants, results):
        if "error" in res:
            say(f"  {name:<13} {shown:<8} FAILED {res['error']}")
        else:
            say(f"  {name:<13} {shown:<8} {fmt_time(res['time']):>10}  peak RSS {max(res['rss_mb']):7.0f} MB")
    return {key: res for (key, _, _, _), res in zip(variants, results)}


def phase_serial(sz: dict, names: list[str], reps: int, with_dask: bool, say: Say) -> dict:
    """NumPy, darray on 1 rank, Dask (2 threads): in this process; workload -> variant -> result."""
    ctx_np = Ctx(sz)
    ctx_da = Ctx(sz, comm=_comm.SelfCommunicator())
    # arrays made without comm= (e.g. nn parameters) must land on the 1-rank communicator too: under mpiexec
    # this part runs on rank 0 alone, where creating the MPI default communicator would wait for the others
    previous = _comm._default
    _comm.set_default_communicator(ctx_da.comm)
    dask_cfg = None
    if with_dask:
        try:
            import dask

            dask_cfg = dask.config.set(scheduler="threads", num_workers=2)
        except ImportError:
            dask_cfg = None
    try:
        results: dict[str, dict] = {}
        for name in names:
            w = WORKLOADS[name]
            candidates = (("numpy", w.numpy, ctx_np), ("darray1", w.darray, ctx_da),
                          ("dask", w.dask if dask_cfg is not None else None, ctx_np))
            variants = [(key, key, factory, ctx) for key, factory, ctx in candidates
                        if factory is not None] if w.available() else []
            results[name] = _row(name, variants, reps, say)
        return results
    finally:
        if dask_cfg is not None:
            dask_cfg.__exit__(None, None, None)
        _comm._default = previous


def phase_parallel(sz: dict, names: list[str], reps: int, say: Say) -> dict:
    """darray and hand-written mpi4py on every rank of COMM_WORLD. Collective; results on every rank."""
    from mpi4py import MPI

    mpi = MPI.COMM_WORLD.Dup()
    ctx = Ctx(sz, comm=da.default_communicator(), mpi=mpi)
    results: dict[str, dict] = {}
    for name in names:
        w = WORKLOADS[name]
        candidates = (("darrayP", f"darray{ctx.size}", w.darray), ("handP", f"hand{ctx.size}", w.hand))
        variants = [(key, shown, factory, ctx) for key, shown, factory in candidates
                    if factory is not None] if w.available() else []
        results[name] = _row(name, variants, reps, say)
    mpi.Free()
    return results


# ---------------------------------------------------------------------------------------- the child job --
def _find_mpiexec() -> str | None:
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


def run_child(P: int, config: dict, timeout: float | None, say: Say) -> tuple[dict | None, dict, str]:
    """Run the P-rank part in ``mpiexec -n P``; (results, mpi facts, status line)."""
    mpiexec = _find_mpiexec()
    if mpiexec is None or importlib.util.find_spec("mpi4py") is None:
        return None, {}, f"The {P}-rank part was not run: mpiexec or mpi4py is missing."
    with tempfile.TemporaryDirectory(prefix="darray-bench-") as tmp:
        cfg_path, res_path = Path(tmp) / "config.json", Path(tmp) / "result.json"
        config = {**config, "result": str(res_path)}
        cfg_path.write_text(json.dumps(config))
        env = dict(os.environ)
        root = str(Path(da.__file__).resolve().parent.parent)  # the folder holding this darray
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        cmd = [mpiexec, "-n", str(P), sys.executable, "-m", "mpi4py", "-m", "darray.bench", "--worker",
               str(cfg_path)]
        say(f"launching: mpiexec -n {P} python -m mpi4py -m darray.bench --worker ...")
        try:
            proc = subprocess.run(cmd, env=env, timeout=timeout, start_new_session=False)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            return None, {}, f"The {P}-rank part was not completed: the job ran past {timeout:.0f} s and was killed."
        if not res_path.exists():
            return None, {}, f"The {P}-rank part failed: the job exited with status {code} and wrote no results."
        data = json.loads(res_path.read_text())
        return data["results"], data["mpi"], f"The {P}-rank part ran in a job launched with mpiexec -n {P}."


def worker(config_path: str) -> int:
    """The child job's body on every rank: :func:`phase_parallel`, results written by rank 0."""
    config = json.loads(Path(config_path).read_text())
    from mpi4py import MPI

    rank = MPI.COMM_WORLD.Get_rank()
    say = (lambda *a: print(*a, flush=True)) if rank == 0 else (lambda *a: None)
    results = phase_parallel(config["sizes"], config["names"], config["reps"], say)
    facts = mpi_facts()
    if rank == 0:
        write_text_safely(config["result"], json.dumps({"results": results, "mpi": facts}))
    return 0
