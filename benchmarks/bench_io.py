"""I/O benchmark: darray zarr save/load and from_dask vs zarr + NumPy and dask on one process.

Measures, in one run, on the same float64 field (``--size``, default 1 GiB):

* zarr write and read: zarr + NumPy from one process (``zarr.create_array`` with
  zarr's default chunks, then ``z[...] = field`` / ``z[...]``; the baseline),
  :func:`darray.io.save` / :func:`darray.io.load` on 1 rank and on P ranks, with
  the default per-block SHA-256 checksums and without (``checksum=False`` /
  ``verify=False``);
* ``from_dask`` of a lazily generated field (``map_blocks`` over 8 chunks of
  rows, nothing stored): ``dx.compute()`` with dask's thread pool on one process
  (the baseline) vs :func:`darray.interop.from_dask` on 1 rank and on P ranks
  (each rank computes only its blocks).

Run it from one process; it launches the P-rank part itself
(``mpiexec -n P python benchmarks/bench_io.py --worker ...``)::

    python benchmarks/bench_io.py [--size 1GiB] [--reps 3] [--ranks 2] [--dir DIR] [--json out.json]
    python benchmarks/bench_io.py --smoke        # 2 MiB, one rep, a few seconds (CI)

Started under ``mpiexec -n P`` instead, rank 0 runs the one-process part while
the others wait, then every rank runs the P-rank part.

Method: ``time.perf_counter``; every timed region is fenced by barriers; one
warm-up, then the median over ``--reps`` of the per-rep maximum over ranks.
Each write goes to a fresh path (the previous one is removed outside the timed
region); reads read the last store written, so they come from the page cache
(no ``fsync``, no cache dropping: this measures the software path, not the
disk). Every read and ``from_dask`` result is checked against the generated
field once, outside the timed regions; a mismatch is marked and the exit
status is 1. GiB/s is the field's size over the time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

COLS = 2048
DASK_CHUNKS = 8


# ------------------------------------------------------------------------------------------ arguments --
def _size(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", text, re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError(f"--size: expected e.g. 1GiB, 256MiB or 4096; got {text!r}")
    scale = {"": 1, "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40}[m.group(2).upper()]
    return int(float(m.group(1)) * scale)


def _parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=_size, default=2 ** 30, help="field size in bytes, e.g. 1GiB (default), 256MiB")
    p.add_argument("--reps", type=int, default=3, help="timed repetitions, median reported (default 3)")
    p.add_argument("--ranks", type=int, default=2, help="ranks of the parallel part (default 2; 1 skips it)")
    p.add_argument("--dir", default=None, help="where the stores go (default: a new temporary directory)")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--smoke", action="store_true", help="2 MiB and one rep, for CI (a few seconds)")
    p.add_argument("--worker", metavar="JSON", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.smoke:
        args.size, args.reps = min(args.size, 2 ** 21), 1
    if args.reps < 1 or args.ranks < 1 or args.size < 8 * COLS * DASK_CHUNKS:
        p.error(f"--reps and --ranks must be >= 1 and --size >= {8 * COLS * DASK_CHUNKS} bytes")
    return args


# ------------------------------------------------------------------------------------------ the field --
def _shape(nbytes: int) -> tuple[int, int]:
    return (max(DASK_CHUNKS, nbytes // (8 * COLS)), COLS)


def _block(rows: slice, cols: int = COLS) -> np.ndarray:
    """Rows ``rows`` of the field: a smooth, position-dependent pattern (compresses like real data, i.e. little)."""
    i = np.arange(rows.start, rows.stop, dtype=np.float64)[:, None]
    j = np.arange(cols, dtype=np.float64)[None, :]
    return np.sin(i * 1e-3) * np.cos(j * 7e-3) + (i * cols + j) * 1e-9


def _rows(n: int, size: int, rank: int) -> slice:
    base, extra = divmod(n, size)
    lo = rank * base + min(rank, extra)
    return slice(lo, lo + base + (1 if rank < extra else 0))


def _lazy_field(shape):
    import dask.array

    rows = -(-shape[0] // DASK_CHUNKS)

    def generate(block, block_info=None):
        (r0, r1), _ = block_info[None]["array-location"]
        return _block(slice(r0, r1), shape[1])

    return dask.array.zeros(shape, chunks=(rows, shape[1])).map_blocks(generate, dtype=np.float64)


# ------------------------------------------------------------------------------------------ timing --
class _Timer:
    def __init__(self, comm):
        self.comm = comm

    def time(self, fn, reps: int, *, setup=None, cleanup=None) -> float:
        """Median over ``reps`` (after one warm-up) of the per-rep maximum over ranks, in seconds."""
        times = []
        for rep in range(reps + 1):
            arg = setup(rep) if setup else None
            self.comm.barrier()
            t0 = time.perf_counter()
            fn(arg) if setup else fn()
            t1 = time.perf_counter()
            self.comm.barrier()
            if cleanup:
                cleanup(arg)
            if rep:
                times.append(t1 - t0)
        worst = np.asarray(self.comm.allreduce(np.asarray(times, dtype=np.float64), "max"))
        return float(np.median(worst))

    def agree(self, ok: bool) -> bool:
        return bool(np.asarray(self.comm.allreduce(np.asarray([0 if ok else 1], dtype=np.int64), "max"))[0] == 0)


def _remove(path) -> None:
    shutil.rmtree(path, ignore_errors=True)


# ------------------------------------------------------------------------------------------ workloads --
def _darray_rows(da, comm, shape, results: dict, prefix: str, workdir: Path, reps: int, timer: _Timer) -> None:
    """save / load (with and without checksums) and from_dask with ``comm``; results[prefix + name] = seconds."""
    from darray.interop import from_dask
    from darray.io import load, save

    mine = _rows(shape[0], comm.size, comm.rank)
    x = da.from_local(_block(mine), split=0, shape=shape, comm=comm)
    expected = _block(mine)

    def fresh(rep):
        return workdir / f"{prefix}-{rep}.zarr"

    for tag, kw in (("", {}), (" nochk", {"checksum": False})):
        results[f"{prefix}write{tag}"] = timer.time(lambda p: save(p, x, **kw), reps, setup=fresh,
                                                    cleanup=lambda p: comm.rank == 0 and _remove(p))
    path = workdir / f"{prefix}-read.zarr"
    save(path, x)
    y = load(path, split=0, comm=comm)
    results[f"{prefix}ok read"] = timer.agree(np.array_equal(np.asarray(y.local), expected))
    del y
    for tag, kw in (("", {}), (" nochk", {"verify": False})):
        results[f"{prefix}read{tag}"] = timer.time(lambda: load(path, split=0, comm=comm, **kw), reps)
    comm.barrier()
    if comm.rank == 0:
        _remove(path)
    del x

    dx = _lazy_field(shape)
    z = from_dask(dx, split=0, comm=comm)
    results[f"{prefix}ok from_dask"] = timer.agree(np.array_equal(np.asarray(z.local), expected))
    del z
    results[f"{prefix}from_dask"] = timer.time(lambda: from_dask(dx, split=0, comm=comm), reps)


def _one_process(args, shape, workdir: Path) -> dict:
    """NumPy + zarr and dask baselines, and darray on 1 rank (this process, SelfCommunicator)."""
    import zarr

    import darray as da
    from darray._comm import SelfCommunicator

    self_comm = SelfCommunicator()
    timer = _Timer(self_comm)
    results: dict = {"load before": _load()}
    field = _block(slice(0, shape[0]))

    def write(path):
        z = zarr.create_array(store=str(path), shape=shape, dtype=field.dtype, fill_value=0)
        z[...] = field

    results["np write"] = timer.time(write, args.reps, setup=lambda rep: workdir / f"np-{rep}.zarr",
                                     cleanup=_remove)
    path = workdir / "np-read.zarr"
    write(path)
    results["np chunks"] = list(zarr.open_array(str(path), mode="r").chunks)
    results["np ok read"] = bool(np.array_equal(zarr.open_array(str(path), mode="r")[...], field))
    results["np read"] = timer.time(lambda: zarr.open_array(str(path), mode="r")[...], args.reps)
    _remove(path)

    dx = _lazy_field(shape)
    results["np ok from_dask"] = bool(np.array_equal(dx.compute(), field))
    results["np from_dask"] = timer.time(lambda: dx.compute(), args.reps)
    del field

    _darray_rows(da, self_comm, shape, results, "da1 ", workdir, args.reps, timer)
    return results


def _parallel(args, shape, workdir: Path, comm) -> dict:
    import darray as da

    results: dict = {}
    _darray_rows(da, comm, shape, results, "daP ", workdir, args.reps, _Timer(comm))
    return results


def _sleeping_barrier(comm) -> None:
    """A barrier whose waiting ranks sleep (an MPI barrier spins, stealing a core from rank 0's timings)."""
    mpi = getattr(comm, "comm", None)
    if comm.size == 1 or mpi is None or not hasattr(mpi, "Ibarrier"):
        comm.barrier()
        return
    request = mpi.Ibarrier()
    while not request.Test():
        time.sleep(0.005)


def _mpiexec() -> str | None:
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


def _launch(args, workdir: Path) -> tuple[dict | None, str]:
    """Run the P-rank part in ``mpiexec -n P``; (results, status line)."""
    mpiexec = _mpiexec()
    if mpiexec is None:
        return None, f"the {args.ranks}-rank part was not run: mpiexec is not installed"
    out = workdir / "worker.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI", "PMIX", "OMPI_", "MPI_LOCAL", "HYDRA"))}
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [mpiexec, "-n", str(args.ranks), sys.executable, os.path.abspath(__file__), "--worker", str(out),
           "--size", str(args.size), "--reps", str(args.reps), "--dir", str(workdir)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0 or not out.exists():
        return None, (f"the {args.ranks}-rank part failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n"
                      f"{proc.stderr[-2000:]}")
    return json.loads(out.read_text()), f"the {args.ranks}-rank part ran in mpiexec -n {args.ranks}"


# ------------------------------------------------------------------------------------------ report --
def _darray_chunks(shape, P: int) -> tuple:
    import darray as da
    from darray.io.zarr_io import chunk_plan

    return chunk_plan(da.Layout.create("bench_io", shape, P, split=0), 8)[0]


def _load() -> str:
    try:
        return " ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:  # pragma: no cover - not POSIX
        return "?"


def _report(args, shape, one: dict, par: dict | None, P: int, status: str) -> tuple[str, bool, list]:
    nbytes = shape[0] * shape[1] * 8
    gib = nbytes / 2 ** 30
    import darray as da
    import zarr

    lines = [f"machine: {platform.node()} nproc={os.cpu_count()} python={platform.python_version()} "
             f"numpy={np.__version__} zarr={zarr.__version__} darray={da.__version__}",
             f"field: {shape[0]} x {shape[1]} float64 = {gib:.3f} GiB; reps={args.reps} (median of per-rep max "
             f"over ranks); zarr default compressor (zstd); reads from the page cache; {status}",
             f"chunks: NumPy+zarr {tuple(one['np chunks'])} (zarr's default); darray {_darray_chunks(shape, 1)} at "
             f"1 rank, {_darray_chunks(shape, P)} at {P} ranks (whole chunks per block, at most 16 MiB)",
             f"load average before / after: {one['load before']} / {_load()}"]
    hdr = (f"{'operation':<26} {'NumPy 1p s':>10} {'da 1 s':>8} {f'da {P} s':>8} {'NumPy GiB/s':>11} "
           f"{'da1 GiB/s':>9} {f'da{P} GiB/s':>9} {'da1/NumPy':>9} {f'da{P}/NumPy':>9}")
    lines += [hdr, "-" * len(hdr)]
    rows = [("zarr write", "write", "write"), ("zarr write, no checksum", "write", "write nochk"),
            ("zarr read", "read", "read"), ("zarr read, verify=False", "read", "read nochk"),
            ("from_dask (lazy field)", "from_dask", "from_dask")]
    ok = all(one.get(f"np ok {k}", True) for k in ("read", "from_dask"))
    ok &= all(one[f"da1 ok {k}"] for k in ("read", "from_dask"))
    if par is not None:
        ok &= all(par[f"daP ok {k}"] for k in ("read", "from_dask"))
    table = []
    for title, base, key in rows:
        t_np, t_1 = one[f"np {base}"], one[f"da1 {key}"]
        t_p = par[f"daP {key}"] if par is not None else float("nan")
        lines.append(f"{title:<26} {t_np:10.3f} {t_1:8.3f} {t_p:8.3f} {gib / t_np:11.2f} {gib / t_1:9.2f} "
                     f"{gib / t_p:9.2f} {t_1 / t_np:9.2f} {t_p / t_np:9.2f}")
        table.append({"operation": title, "numpy_1proc_s": t_np, "darray_1rank_s": t_1, f"darray_{P}ranks_s": t_p,
                      "ratio_darray1_numpy": t_1 / t_np, f"ratio_darray{P}_numpy": t_p / t_np})
    if not ok:
        lines.append("MISMATCH: a result read back differs from the generated field")
    return "\n".join(lines), ok, table


def main(argv=None) -> int:
    args = _parse(argv)
    import darray as da

    shape = _shape(args.size)
    comm = da.default_communicator()
    if args.worker:  # the P-rank part, launched by the one-process run
        par = _parallel(args, shape, Path(args.dir), comm)
        if comm.rank == 0:
            Path(args.worker).write_text(json.dumps(par))
        return 0

    if comm.rank == 0:
        workdir = Path(tempfile.mkdtemp(prefix="darray-bench-io-", dir=args.dir))
        text = str(workdir).encode()
    else:
        workdir, text = None, b""
    buf = np.zeros(4096, dtype=np.uint8)
    buf[:len(text)] = np.frombuffer(text, dtype=np.uint8)
    workdir = Path(bytes(np.asarray(comm.bcast(buf, 0))).rstrip(b"\0").decode())
    try:
        one = _one_process(args, shape, workdir) if comm.rank == 0 else None
        _sleeping_barrier(comm)  # the other ranks wait without spinning a core
        if comm.size > 1:  # started under mpiexec: every rank runs the parallel part here
            par, status, P = _parallel(args, shape, workdir, comm), f"the {comm.size}-rank part ran in this job", \
                comm.size
        elif args.ranks > 1:
            (par, status), P = _launch(args, workdir), args.ranks
        else:
            par, status, P = None, "no parallel part (--ranks 1)", 1
        if comm.rank != 0:
            return 0
        report, ok, table = _report(args, shape, one, par, P, status)
        print(report)
        if args.json:
            Path(args.json).write_text(json.dumps({"report": report, "size_bytes": shape[0] * shape[1] * 8,
                                                   "ranks": P, "reps": args.reps, "rows": table, "raw": {
                                                       "one_process": one, "parallel": par}}, indent=2))
        return 0 if ok and (par is not None or P == 1) else 1
    finally:
        comm.barrier()
        if comm.rank == 0:
            _remove(workdir)


if __name__ == "__main__":
    sys.exit(main())
