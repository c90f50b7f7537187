"""darray on GPUs: correctness with CuPy blocks, and timings against plain CuPy, NCCL against MPI.

One prepared script for a GPU machine::

    mpiexec -n 1 python benchmarks/gpu.py
    DARRAY_TRANSPORT=nccl mpiexec -n 2 python benchmarks/gpu.py    # one GPU per rank

1. Correctness: darray with CuPy local blocks (creation, elementwise, sum /
   max / mean / var, redistribute, gather) against NumPy on the same data.
2. Timings (median of repeats, slowest rank): ``a*b + c`` and ``sum`` on darray
   with CuPy blocks against plain CuPy on the same local blocks; ``allreduce``
   and a ring ``exchange`` of CuPy buffers through the NCCL transport and
   through the MPI transport (host-staged unless the MPI is CUDA-aware).

Prints a table on rank 0. Exit status: 0 all correct, 1 a wrong result on
some rank, 2 cannot run here (no CuPy or no CUDA device). A watchdog ends the
run after ``DARRAY_BENCH_TIMEOUT`` seconds (default 170). Sizes: ``--elements``
(global, default 2**26 float64 = 512 MiB per array) and ``--repeats``.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import statistics
import sys
import time
import traceback

import numpy as np


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--elements", type=int, default=1 << 26, help="global elements of the timed arrays")
    p.add_argument("--repeats", type=int, default=20, help="timed repeats per measurement")
    return p.parse_args(argv)


def _gpu_problem() -> str | None:
    try:
        import cupy
    except Exception as exc:
        return f"CuPy is not importable ({type(exc).__name__}: {exc})"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "no CUDA device visible"
    except Exception as exc:
        return f"no CUDA device ({type(exc).__name__}: {exc})"
    return None


def _communicators():
    """(communicator for darray arrays, NCCL transport or None, MPI-or-self transport, note)."""
    from darray._comm import default_communicator, make_communicator, set_default_communicator
    from darray._comm.nccl import NCCLCommunicator

    try:
        base = default_communicator()
    except RuntimeError as exc:  # DARRAY_TRANSPORT=nccl where NCCL cannot run (the same on every rank)
        base = make_communicator("mpi")
        set_default_communicator(base)
        return base, None, base, f"NCCL transport unavailable: {exc}"
    if base.name == "nccl":
        return base, base, base.mpi, ""
    try:
        nccl = NCCLCommunicator(base)
    except RuntimeError as exc:  # raised on every rank alike (e.g. more ranks than GPUs)
        return base, None, base, f"NCCL transport unavailable: {exc}"
    return nccl, nccl, base, ""


class Bench:
    def __init__(self, cp, host, repeats: int):
        self.cp, self.host, self.repeats = cp, host, repeats
        self.rows: list[tuple[str, str, float | None, str]] = []

    def sync(self):
        self.cp.cuda.get_current_stream().synchronize()
        self.host.barrier()

    def time(self, fn) -> float:
        """Median seconds of ``fn`` (after 3 warm-ups), the slowest rank's."""
        for _ in range(3):
            fn()
        self.sync()
        times = []
        for _ in range(self.repeats):
            self.sync()
            t0 = time.perf_counter()
            fn()
            self.cp.cuda.get_current_stream().synchronize()
            times.append(time.perf_counter() - t0)
        t = np.asarray([statistics.median(times)])
        return float(self.host.allreduce(t, "max")[0])

    def row(self, group: str, what: str, fn, note: str = ""):
        try:
            seconds = self.time(fn)
        except Exception as exc:  # a failing path is reported, not fatal (the same on every rank)
            seconds, note = None, f"error: {type(exc).__name__}: {exc}"[:70]
        self.rows.append((group, what, seconds, note))
        return seconds


def _check_correctness(da, cp, comm) -> list[str]:
    """darray with CuPy blocks against NumPy; returns the failures (agreed across ranks)."""
    from darray.testing import assert_equal

    failures = []

    def check(name, fn):
        try:
            fn()
        except Exception as exc:  # assert_equal agrees on its verdict; other errors are local
            failures.append(f"{name}: {type(exc).__name__}: {str(exc)[:300]}")

    rng = np.random.default_rng(0)
    for shape, split in [((1001, 513), 0), ((37, 29), 1), ((4, 3, 50), (0,)), ((7,), 0)]:
        a_np, b_np, c_np = (rng.standard_normal(shape) for _ in range(3))
        a = da.asarray(a_np, device="cupy", split=split, comm=comm)
        b = da.asarray(b_np, device="cupy", split=split, comm=comm)
        c = da.asarray(c_np, device="cupy", split=split, comm=comm)
        tag = f"{shape} split={split}"
        def on_device():
            if not isinstance(a.local, cp.ndarray):
                raise TypeError(f"local block is a {type(a.local).__name__}, expected a cupy.ndarray")
        check(f"cupy blocks {tag}", on_device)
        check(f"a*b+c {tag}", lambda: assert_equal(a * b + c, a_np * b_np + c_np))
        check(f"sqrt(abs(a)) {tag}", lambda: assert_equal(da.sqrt(da.abs(a)), np.sqrt(np.abs(a_np))))
        check(f"a > b {tag}", lambda: assert_equal(a > b, a_np > b_np))
        check(f"sum {tag}", lambda: assert_equal(da.sum(a), np.asarray(np.sum(a_np)), rtol=1e-10))
        check(f"sum axis 0 {tag}", lambda: assert_equal(da.sum(a, axis=0), np.sum(a_np, axis=0), rtol=1e-10))
        check(f"max {tag}", lambda: assert_equal(da.max(a), np.asarray(np.max(a_np))))
        check(f"mean {tag}", lambda: assert_equal(da.mean(a), np.asarray(np.mean(a_np)), rtol=1e-10))
        check(f"var {tag}", lambda: assert_equal(da.var(a), np.asarray(np.var(a_np)), rtol=1e-10))
        check(f"redistribute {tag}", lambda: assert_equal(a.redistribute(split=None), a_np))

        def gathered():
            full = a.gather()
            if not (isinstance(full, cp.ndarray) and np.array_equal(cp.asnumpy(full), a_np)):
                raise AssertionError("gather differs")
        check(f"gather {tag}", gathered)
    shape = (300, 200)
    check("zeros + 1 (float32)", lambda: assert_equal(
        da.zeros(shape, dtype="float32", device="cupy", split=0, comm=comm) + 1, np.ones(shape, np.float32)))
    check("sum of ones (int64)", lambda: assert_equal(
        da.sum(da.ones(shape, dtype="int64", device="cupy", split=1, comm=comm)), np.asarray(60000)))
    return failures


def _check_transport(cp, nccl, host) -> list[str]:
    """The NCCL transport's collectives and exchange against the MPI transport on the same data."""
    failures = []
    rank, size = host.rank, host.size
    rng = np.random.default_rng(10 + rank)
    for dtype in ("float64", "float32", "int32", "bool", "complex128"):
        mine = (rng.integers(0, 2, (257, 3)) if dtype == "bool" else rng.integers(1, 4, (257, 3))).astype(dtype)
        for op in ("sum", "max", "land"):
            if op == "max" and dtype == "complex128":
                continue
            got = cp.asnumpy(nccl.allreduce(cp.asarray(mine), op))
            want = host.allgather(mine)
            want = {"sum": lambda w: np.add.reduce(w, axis=0, dtype=w.dtype),
                    "max": lambda w: np.maximum.reduce(w, axis=0),
                    "land": lambda w: np.logical_and.reduce(w != 0, axis=0).astype(w.dtype)}[op](want)
            if size > 1 and not np.array_equal(got, want):
                failures.append(f"nccl allreduce {op} {dtype}")
    send = rng.standard_normal((64, 48))
    sends, recvs = _ring(rank, size, 64, 48, 8)
    want, got = np.zeros((80, 48)), cp.zeros((80, 48))
    host.exchange(send, sends, want, recvs).wait()
    nccl.exchange(cp.asarray(send), sends, got, recvs).wait()
    if not np.array_equal(cp.asnumpy(got), want):
        failures.append("nccl exchange")
    return failures


def _ring(rank, size, rows, cols, width):
    """Halo-like ring: my last ``width`` rows to the next rank, my first to the previous one."""
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    sends = [(nxt, (slice(rows - width, rows), slice(0, cols))), (prv, (slice(0, width), slice(0, cols)))]
    recvs = [(prv, (slice(0, width), slice(0, cols))), (nxt, (slice(rows + width, rows + 2 * width),
                                                              slice(0, cols)))]
    return sends, recvs


def _agree(host, failures: list[str]) -> list[tuple[int, str]]:
    every = host.comm.allgather(failures) if hasattr(host, "comm") else [failures]
    return [(r, f) for r, fs in enumerate(every) for f in fs]


def main(argv=None) -> int:
    args = _parse(argv)
    faulthandler.dump_traceback_later(float(os.environ.get("DARRAY_BENCH_TIMEOUT", "170")), exit=True)
    problem = _gpu_problem()
    if problem:
        print(f"benchmarks/gpu.py: cannot run here: {problem}", flush=True)
        return 2
    import cupy as cp

    import darray as da

    comm, nccl, host, note = _communicators()
    rank, size = comm.rank, comm.size
    if rank == 0:
        dev = cp.cuda.Device()
        props = cp.cuda.runtime.getDeviceProperties(dev.id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        print(f"darray GPU benchmark: {size} rank(s), arrays on {comm.name!r}, GPU {dev.id} {name}, "
              f"CuPy {cp.__version__}, NCCL {'yes' if nccl is not None else 'no'}", flush=True)
        if nccl is None:
            print(f"  note: {note}", flush=True)

    t0 = time.perf_counter()
    failures = _check_correctness(da, cp, comm)
    if nccl is not None:
        failures += _check_transport(cp, nccl, host)
    wrong = _agree(host, failures)
    if rank == 0:
        print(f"correctness: {'all correct' if not wrong else f'{len(wrong)} WRONG'} "
              f"({time.perf_counter() - t0:.1f} s)", flush=True)
        for r, f in wrong[:40]:
            print(f"  WRONG on rank {r}: {f}", flush=True)

    # ------------------------------------------------------------ timings
    bench = Bench(cp, host, args.repeats)
    rows_total = args.elements // 4096 or 1
    local_rows = rows_total // size + (rank < rows_total % size)
    cp.random.seed(rank)
    blocks = [cp.random.standard_normal((local_rows, 4096)) for _ in range(3)]
    x, y, z = (da.from_local(b, split=0, comm=comm) for b in blocks)
    xl, yl, zl = blocks
    gib = 4 * xl.nbytes / 2**30  # three reads and one write
    t_cp = bench.row("elementwise", "a*b+c  plain CuPy", lambda: xl * yl + zl, f"{gib:.2f} GiB moved per rank")
    t_da = bench.row("elementwise", "a*b+c  darray (CuPy blocks)", lambda: x * y + z)
    s_cp = bench.row("reduction", "sum    plain CuPy (local only)", lambda: float(cp.sum(xl)))
    s_da = bench.row("reduction", "sum    darray (local + allreduce)", lambda: float(da.sum(x).local))
    for size_bytes in (8, 1 << 20, 64 << 20):
        buf = cp.ones(size_bytes // 8, dtype=cp.float64)
        label = f"{size_bytes} B" if size_bytes < 1024 else f"{size_bytes >> 20} MiB"
        if nccl is not None:
            bench.row("allreduce", f"sum {label:>7}  NCCL", lambda b=buf: nccl.allreduce(b, "sum"))
        kind = "CUDA-aware" if getattr(host, "cuda_aware", False) else "staged"
        bench.row("allreduce", f"sum {label:>7}  MPI ({kind})", lambda b=buf: host.allreduce(b, "sum"))
    for cols in (4096, 1 << 17):
        rows, width = 64, 8
        send = cp.random.standard_normal((rows, cols))
        recv = cp.zeros((rows + 2 * width, cols))
        sends, recvs = _ring(rank, size, rows, cols, width)
        label = f"ring 2x{width * cols * 8 >> 10} KiB"
        if nccl is not None:
            bench.row("exchange", f"{label}  NCCL",
                      lambda s=send, r=recv, a=sends, b=recvs: nccl.exchange(s, a, r, b).wait())
        bench.row("exchange", f"{label}  MPI",
                  lambda s=send, r=recv, a=sends, b=recvs: host.exchange(s, a, r, b).wait())

    if rank == 0:
        print(f"\n{'group':<12} {'measurement':<40} {'median':>12}  note")
        for group, what, seconds, extra in bench.rows:
            shown = "-" if seconds is None else (f"{seconds * 1e3:9.3f} ms" if seconds >= 1e-3
                                                 else f"{seconds * 1e6:9.1f} us")
            print(f"{group:<12} {what:<40} {shown:>12}  {extra}")
        if t_cp and t_da:
            print(f"\nratio darray / CuPy: a*b+c {t_da / t_cp:.2f}x", end="")
        if s_cp and s_da:
            print(f", sum {s_da / s_cp:.2f}x", end="")
        print(f"   (total {time.perf_counter() - t0:.1f} s)")
        if size == 1:
            print("note: one rank: collectives are local no-ops on both transports; run with mpiexec -n 2+ "
                  "(one GPU per rank for NCCL) to time communication.")
        sys.stdout.flush()
    faulthandler.cancel_dump_traceback_later()
    return 1 if wrong else 0


if __name__ == "__main__":
    try:
        code = main()
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        code = 1
    sys.exit(code)
