"""darray on GPUs: correctness with CuPy blocks against NumPy, and timings against plain CuPy, NCCL against MPI.

One prepared script for a GPU machine::

    mpiexec -n 1 python benchmarks/gpu.py
    DARRAY_TRANSPORT=nccl mpiexec -n 2 python benchmarks/gpu.py    # one GPU per rank

1. Correctness, against NumPy on the same data (every rank, verdicts agreed):
   creation, elementwise, ``sum`` / ``max`` / ``mean`` / ``var``,
   ``redistribute``, ``gather``; a halo exchange (every rank's padded block
   against ``numpy.pad(..., mode="wrap")``); stencils (``laplacian``,
   ``uniform_filter``) and ``map_overlap``; one training step of
   :class:`darray.nn.surrogate.SurrogateNet` (loss, gradients and Adam update
   against the same step with NumPy blocks); ring attention (causal) and
   neighbourhood attention, output and gradients against NumPy blocks; with
   NCCL, its collectives and exchange against the MPI transport.
2. Timings (median of repeats, slowest rank): ``a*b + c`` and ``sum`` on darray
   against plain CuPy on the same local blocks; ``allreduce`` and a ring
   ``exchange`` of CuPy buffers through NCCL and through MPI (host-staged
   unless the MPI is CUDA-aware); a halo exchange of a 2-d field
   (``exchange_halos``); a 5-point Laplacian with darray (exchange + local
   stencil) against plain CuPy on the local block (no exchange); one
   training step (forward, backward, Adam) of the surrogate net.

Prints a table on rank 0. Exit status: 0 all correct, 1 a wrong result on
some rank, 2 cannot run here (no CuPy or no CUDA device). A watchdog ends the
run after ``DARRAY_BENCH_TIMEOUT`` seconds (default 300: a fresh machine compiles
CuPy's kernels on first use). Sizes:
``--elements`` (global, default 2**26 float64 = 512 MiB per array),
``--field`` (side of the square halo/stencil field, default 8192),
``--train-n`` (side of the training field, default 1024), ``--repeats``.

``--backend numpy`` (or ``torch``) runs every step with that library's local
blocks instead of CuPy, for checking the script itself on a machine without a
GPU (the NCCL parts are left out; the timings then mean nothing)::

    python benchmarks/gpu.py --backend numpy --elements 65536 --field 256 --train-n 64 --repeats 2
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
    p.add_argument("--field", type=int, default=8192, help="side of the square field for halo exchange and stencil")
    p.add_argument("--train-n", type=int, default=1024, help="side of the square field of the training step")
    p.add_argument("--channels", type=int, default=8, help="channels of the surrogate net")
    p.add_argument("--repeats", type=int, default=20, help="timed repeats per measurement")
    p.add_argument("--backend", default="cupy", choices=["cupy", "numpy", "torch"],
                   help="local blocks: cupy (the GPU run), or numpy / torch to check this script without a GPU")
    return p.parse_args(argv)


class Device:
    """The local array library of the run: CuPy on the GPU, or NumPy / torch for a dry run of the script."""

    def __init__(self, name: str):
        self.name = name
        if name == "cupy":
            import cupy

            self.xp = cupy
        elif name == "torch":
            import array_api_compat.torch as xp

            self.xp = xp
        else:
            self.xp = np

    def is_mine(self, a) -> bool:
        import array_api_compat

        return {"cupy": array_api_compat.is_cupy_array, "torch": array_api_compat.is_torch_array,
                "numpy": array_api_compat.is_numpy_array}[self.name](a)

    def sync(self):
        if self.name == "cupy":
            self.xp.cuda.get_current_stream().synchronize()

    def asnumpy(self, a) -> np.ndarray:
        from darray._backend import to_numpy

        return to_numpy(a)

    def asarray(self, a: np.ndarray):
        return self.xp.asarray(a)


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
    def __init__(self, dev: Device, host, repeats: int):
        self.dev, self.host, self.repeats = dev, host, repeats
        self.rows: list[tuple[str, str, float | None, str]] = []

    def sync(self):
        self.dev.sync()
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
            self.dev.sync()
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


#: Names of the correctness checks run (printed as a count).
CHECKS: list[str] = []


def _check_correctness(da, dev: Device, comm) -> list[str]:
    """darray with ``dev``'s blocks against NumPy; returns this rank's failures (gathered by the caller).

    Every check runs its collectives before any local comparison, so a wrong
    result on one rank never leaves the others waiting.
    """
    from darray.testing import assert_equal

    failures = []

    def check(name, fn):
        CHECKS.append(name)
        try:
            fn()
        except Exception as exc:  # assert_equal agrees on its verdict; other errors are local
            failures.append(f"{name}: {type(exc).__name__}: {str(exc)[:300]}")

    rng = np.random.default_rng(0)
    for shape, split in [((1001, 513), 0), ((37, 29), 1), ((4, 3, 50), (0,)), ((7,), 0)]:
        a_np, b_np, c_np = (rng.standard_normal(shape) for _ in range(3))
        a = da.asarray(a_np, device=dev.name, split=split, comm=comm)
        b = da.asarray(b_np, device=dev.name, split=split, comm=comm)
        c = da.asarray(c_np, device=dev.name, split=split, comm=comm)
        tag = f"{shape} split={split}"

        def on_device():
            if not dev.is_mine(a.local):
                raise TypeError(f"local block is a {type(a.local).__name__}, expected a {dev.name} array")
        check(f"{dev.name} blocks {tag}", on_device)
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
            if not (dev.is_mine(full) and np.array_equal(dev.asnumpy(full), a_np)):
                raise AssertionError("gather differs")
        check(f"gather {tag}", gathered)
    shape = (300, 200)
    check("zeros + 1 (float32)", lambda: assert_equal(
        da.zeros(shape, dtype="float32", device=dev.name, split=0, comm=comm) + 1, np.ones(shape, np.float32)))
    check("sum of ones (int64)", lambda: assert_equal(
        da.sum(da.ones(shape, dtype="int64", device=dev.name, split=1, comm=comm)), np.asarray(60000)))
    failures += _check_halo_and_stencils(da, dev, comm, check)
    check("darray.fuse: a*b+c, sum(a*b+c), max(a-b, axis=0)", lambda: _check_fuse(da, dev, comm))
    check("training step", lambda: _check_training(da, dev, comm))
    check("ring attention (causal), forward and gradients", lambda: _check_attention(da, dev, comm, "ring"))
    check("neighbourhood attention, forward and gradients", lambda: _check_attention(da, dev, comm, "window"))
    return failures


def _check_fuse(da, dev: Device, comm) -> None:
    """Fused kernels (CUDA on CuPy blocks) against NumPy, and that they ran fused."""
    from darray.testing import assert_equal

    @da.fuse
    def f(a, b, c):
        return a * b + c, da.sum(a * b + c), da.max(a - b, axis=0)

    rng = np.random.default_rng(3)
    a, b, c = (rng.standard_normal((1001, 33)) for _ in range(3))
    got = f(*(da.asarray(v, device=dev.name, split=0, comm=comm) for v in (a, b, c)))
    assert_equal(got[0], a * b + c, rtol=0)
    assert_equal(got[1], np.asarray(np.sum(a * b + c)), rtol=1e-12)
    assert_equal(got[2], np.max(a - b, axis=0), rtol=0)
    fuses = dev.name in ("cupy", "numpy")  # (torch blocks: darray.fuse runs the function eagerly)
    if fuses and f.stats["fused"] != 1:
        raise AssertionError(f"the call ran eagerly ({f.stats})")
    sweep = da.fuse(_readme_sweep(da))
    u = da.asarray(a, device=dev.name, split=0, comm=comm)
    out = da.zeros(a.shape, device=dev.name, split=0, comm=comm)
    sweep(u, out)
    want = np.zeros_like(a)
    want[1:-1, 1:-1] = a[1:-1, 1:-1] + 0.2 * (a[2:, 1:-1] + a[:-2, 1:-1] - 2 * a[1:-1, 1:-1])
    assert_equal(out, want, rtol=0)
    if fuses and sweep.stats["fused"] != 1:
        raise AssertionError(f"the sweep ran eagerly ({sweep.stats})")


def _readme_sweep(da):
    """The README's stencil sweep, written into ``out`` (``da``: the darray module, read from the closure)."""
    def sweep(u, out):
        out[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (u[2:, 1:-1] + u[:-2, 1:-1] - 2 * u[1:-1, 1:-1])
    return sweep


def _layouts(size: int) -> list[dict]:
    out = [dict(split=0), dict(split=1)]
    if size >= 4 and size % 2 == 0:
        out.append(dict(split=(0, 1), grid=(2, size // 2)))
    return out


def _check_halo_and_stencils(da, dev: Device, comm, check) -> list[str]:
    """Halo exchange against ``numpy.pad``; stencils and ``map_overlap`` against NumPy formulas."""
    from darray.testing import assert_equal

    g = np.random.default_rng(1).standard_normal((61, 47))
    rank = comm.rank
    for spec in _layouts(comm.size):
        tag = f"split={spec['split']}"
        for h in (1, 2):
            x = da.asarray(g, device=dev.name, halo=h, boundary="periodic", comm=comm, **spec)

            def halo_ok(x=x, h=h):
                x.exchange_halos()  # collective first, then the local comparison
                cells = x.layout.block_slices(rank)
                hs = x.layout.halo
                want = np.pad(g, [(w, w) for w in hs], mode="wrap")[
                    tuple(slice(c.start, c.stop + 2 * w) for c, w in zip(cells, hs))]
                got = dev.asnumpy(x.block)
                if got.shape != want.shape or not np.array_equal(got, want):
                    raise AssertionError(f"rank {rank}: padded block {got.shape} differs from numpy.pad "
                                         f"{want.shape} (halo {hs})")
            check(f"halo exchange h={h} {tag}", halo_ok)
        x = da.asarray(g, device=dev.name, comm=comm, **spec)
        lap = sum(np.roll(g, 1, a) + np.roll(g, -1, a) - 2 * g for a in range(2))
        check(f"stencil.laplacian wrap {tag}",
              lambda x=x: assert_equal(da.stencil.laplacian(x, mode="wrap"), lap, rtol=1e-12, atol=1e-12))
        box = np.pad(g, 1, mode="symmetric")  # scipy.ndimage's "reflect"
        mean3 = sum(box[i:i + 61, j:j + 47] for i in range(3) for j in range(3)) / 9.0
        check(f"stencil.uniform_filter reflect {tag}",
              lambda x=x: assert_equal(da.stencil.uniform_filter(x, 3, mode="reflect"), mean3, rtol=1e-12,
                                       atol=1e-12))
        vertical = np.roll(g, 1, 0) + np.roll(g, -1, 0)
        check(f"map_overlap periodic {tag}", lambda x=x: assert_equal(
            da.map_overlap(lambda b: b[:-2, 1:-1] + b[2:, 1:-1], x, depth=1, boundary="periodic", trim=False),
            vertical, rtol=1e-12))
    return []


def _surrogate_step(da, comm, backend: str, n: int, channels: int, steps: int = 1):
    """(losses, parameters as NumPy, gradients as NumPy) after ``steps`` Adam steps, arrays on ``backend``."""
    from darray import nn
    from darray.nn import functional as F
    from darray.nn.surrogate import SurrogateNet, training_pair
    from darray.optim import Adam

    saved = da.config.backend
    da.config.backend = backend  # new arrays (data, parameters, optimizer state) get this library's blocks
    try:
        ys, xs = da.meshgrid(da.linspace(0.0, 1.0, n, comm=comm), da.linspace(0.0, 1.0, n, comm=comm),
                             indexing="ij", split=0)
        u = da.exp(-40.0 * ((xs - 0.4) ** 2 + (ys - 0.6) ** 2)) + 0.1 * da.sin(6.0 * xs)
        x, y, _ = training_pair(u, max_size=n)
        nn.init.manual_seed(0)
        model = SurrogateNet(channels, comm=comm)
        optimizer = Adam(model.parameters(), lr=1e-2)
        losses = []
        for _ in range(steps):
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(float(loss.data))
        params = [p.data for p in model.parameters()]
        grads = [p.grad for p in model.parameters()]
    finally:
        da.config.backend = saved
    return losses, params, grads, (model, optimizer, x, y)


def _check_training(da, dev: Device, comm) -> None:
    """Two Adam steps of the surrogate net with ``dev`` blocks against the same steps with NumPy blocks."""
    from darray.testing import assert_equal

    want_losses, want_params, want_grads, _ = _surrogate_step(da, comm, "numpy", 32, 4, steps=2)
    losses, params, grads, _ = _surrogate_step(da, comm, dev.name, 32, 4, steps=2)
    if not dev.is_mine(params[0].local):
        raise TypeError(f"parameters on {type(params[0].local).__name__}, expected {dev.name} arrays")
    for got, want in zip(params + grads, want_params + want_grads):
        assert_equal(got, dev.asnumpy(want.gather()), rtol=1e-9, atol=1e-12)
    if not np.allclose(losses, want_losses, rtol=1e-10):
        raise AssertionError(f"losses {losses}, with NumPy blocks {want_losses}")


def _attention_run(da, comm, device, kind: str, inputs):
    """(output, [dq, dk, dv]) of ring (``"ring"``) or neighbourhood (``"window"``) attention on ``device`` blocks."""
    from darray.autodiff import Variable
    from darray.nn import functional as F

    split = 2  # the token axis, or the first spatial axis of a field
    vs = [Variable(da.asarray(x, device=device, split=split, comm=comm), requires_grad=True) for x in inputs]
    if kind == "ring":
        out = F.scaled_dot_product_attention(*vs, is_causal=True)
    else:
        out = F.neighborhood_attention(*vs, kernel_size=3, boundary="periodic", num_heads=2)
    (out * out).sum().backward()
    return out.data, [v.grad for v in vs]


def _check_attention(da, dev: Device, comm, kind: str) -> None:
    """Ring or neighbourhood attention with ``dev`` blocks against NumPy blocks: output and dq, dk, dv."""
    from darray.testing import assert_equal

    rng = np.random.default_rng(1)
    shape = (1, 2, 37, 8) if kind == "ring" else (1, 4, 19, 13)  # (N, heads, tokens, d) / (N, 2 heads x 2, H, W)
    inputs = [rng.standard_normal(shape) for _ in range(3)]
    want, want_grads = _attention_run(da, comm, None, kind, inputs)
    got, grads = _attention_run(da, comm, dev.name, kind, inputs)
    if not dev.is_mine(got.local):
        raise TypeError(f"attention output on {type(got.local).__name__}, expected {dev.name} arrays")
    for g, w in zip([got, *grads], [want, *want_grads]):
        assert_equal(g, w.gather(), rtol=1e-9, atol=1e-12)


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
    faulthandler.dump_traceback_later(float(os.environ.get("DARRAY_BENCH_TIMEOUT", "300")), exit=True)
    if args.backend == "cupy":
        problem = _gpu_problem()
        if problem:
            print(f"benchmarks/gpu.py: cannot run here: {problem}", flush=True)
            return 2
    dev = Device(args.backend)
    xp = dev.xp

    import darray as da

    if args.backend == "cupy":
        comm, nccl, host, note = _communicators()
    else:
        comm = host = da.default_communicator()
        nccl, note = None, f"--backend {args.backend}: a dry run of this script without a GPU (no NCCL)"
    rank, size = comm.rank, comm.size
    if rank == 0:
        if args.backend == "cupy":
            cp = dev.xp
            gpu = cp.cuda.Device()
            props = cp.cuda.runtime.getDeviceProperties(gpu.id)
            name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
            where = f"GPU {gpu.id} {name}, CuPy {cp.__version__}"
        else:
            where = f"{args.backend} blocks on the CPU (dry run)"
        print(f"darray GPU benchmark: {size} rank(s), transport {comm.name!r}, {where}, "
              f"NCCL {'yes' if nccl is not None else 'no'}", flush=True)
        if nccl is None:
            print(f"  note: {note}", flush=True)

    t0 = time.perf_counter()
    failures = _check_correctness(da, dev, comm)
    if nccl is not None:
        failures += _check_transport(dev.xp, nccl, host)
    wrong = _agree(host, failures)
    if rank == 0:
        print(f"correctness: {'all correct' if not wrong else f'{len(wrong)} WRONG'} "
              f"({len(CHECKS)} checks against NumPy{' and MPI' if nccl is not None else ''}, "
              f"{time.perf_counter() - t0:.1f} s)", flush=True)
        for r, f in wrong[:40]:
            print(f"  WRONG on rank {r}: {f}", flush=True)

    # ------------------------------------------------------------ timings
    bench = Bench(dev, host, args.repeats)
    rows_total = args.elements // 4096 or 1
    local_rows = rows_total // size + (rank < rows_total % size)
    host_rng = np.random.default_rng(rank)
    blocks = [dev.asarray(host_rng.standard_normal((local_rows, 4096))) for _ in range(3)]
    x, y, z = (da.from_local(b, split=0, comm=comm) for b in blocks)
    xl, yl, zl = blocks
    gib = 4 * xl.nbytes / 2**30 if hasattr(xl, "nbytes") else 4 * local_rows * 4096 * 8 / 2**30
    lib = {"cupy": "CuPy", "numpy": "NumPy", "torch": "torch"}[args.backend]
    t_cp = bench.row("elementwise", f"a*b+c  plain {lib}", lambda: xl * yl + zl, f"{gib:.2f} GiB moved per rank")
    t_da = bench.row("elementwise", f"a*b+c  darray ({lib} blocks)", lambda: x * y + z)
    s_cp = bench.row("reduction", f"sum    plain {lib} (local only)", lambda: float(xp.sum(xl)))
    s_da = bench.row("reduction", "sum    darray (local + allreduce)", lambda: float(da.sum(x)))
    fused_sum = da.fuse(lambda a, b, c: da.sum(a * b + c))
    fused_abc = da.fuse(lambda a, b, c: a * b + c)
    copy = bench.row("fused", f"copy   plain {lib} (bandwidth: 2 arrays moved)", lambda: xp.asarray(xl, copy=True))
    f_cp = bench.row("fused", f"sum(a*b+c)  plain {lib}", lambda: float(xp.sum(xl * yl + zl)))
    f_ea = bench.row("fused", "sum(a*b+c)  darray eager", lambda: float(da.sum(x * y + z)))
    f_fu = bench.row("fused", "sum(a*b+c)  darray.fuse (one pass)", lambda: float(fused_sum(x, y, z)),
                     f"{'CUDA kernel' if args.backend == 'cupy' else 'numba' if args.backend == 'numpy' else 'eager'}")
    e_fu = bench.row("fused", "a*b+c       darray.fuse (one pass)", lambda: fused_abc(x, y, z))
    del x, y, z, xl, yl, zl, blocks
    for size_bytes in (8, 1 << 20, 64 << 20):
        buf = dev.asarray(np.ones(size_bytes // 8))
        label = f"{size_bytes} B" if size_bytes < 1024 else f"{size_bytes >> 20} MiB"
        if nccl is not None:
            bench.row("allreduce", f"sum {label:>7}  NCCL", lambda b=buf: nccl.allreduce(b, "sum"))
        kind = "CUDA-aware" if getattr(host, "cuda_aware", False) else "staged"
        bench.row("allreduce", f"sum {label:>7}  {host.name} ({kind})", lambda b=buf: host.allreduce(b, "sum"))
    for cols in (4096, 1 << 17):
        rows, width = 64, 8
        send = dev.asarray(host_rng.standard_normal((rows, cols)))
        recv = dev.asarray(np.zeros((rows + 2 * width, cols)))
        sends, recvs = _ring(rank, size, rows, cols, width)
        label = f"ring 2x{width * cols * 8 >> 10} KiB"
        if nccl is not None:
            bench.row("exchange", f"{label}  NCCL",
                      lambda s=send, r=recv, a=sends, b=recvs: nccl.exchange(s, a, r, b).wait())
        bench.row("exchange", f"{label}  {host.name}",
                  lambda s=send, r=recv, a=sends, b=recvs: host.exchange(s, a, r, b).wait())

    # halo exchange and stencil on an n x n field (float64), split over the ranks by darray
    n = args.field
    u = da.full((n, n), 1.0, device=args.backend, halo=1, boundary="periodic", comm=comm)
    strip_kib = sum(2 * 8 * np.prod([c.stop - c.start for i, c in enumerate(u.layout.block_slices(rank)) if i != a])
                    for a, d in enumerate(u.layout.axis_dim) if d is not None and u.layout.dims[d] > 1) / 1024
    grid = "x".join(map(str, u.layout.dims))
    bench.row("halo", f"exchange_halos {n}^2 h=1 grid {grid}", lambda: u.exchange_halos(force=True),
              f"{strip_kib:.0f} KiB sent per rank")
    v = da.full((n, n), 1.0, device=args.backend, comm=comm, split=u.layout.split, grid=u.layout.dims)
    local = v.local

    def plain_laplacian():  # the local block alone, periodic within it: no exchange, the compute floor
        return (xp.roll(local, 1, axis=0) + xp.roll(local, -1, axis=0) + xp.roll(local, 1, axis=1)
                + xp.roll(local, -1, axis=1) - 4 * local)
    l_cp = bench.row("stencil", f"laplacian {n}^2  plain {lib} (block only)", plain_laplacian)
    l_da = bench.row("stencil", f"laplacian {n}^2  darray (exchange + stencil)",
                     lambda: da.stencil.laplacian(v, mode="wrap"))
    out = da.zeros_like(v)
    eager_sweep, fused_sweep = _readme_sweep(da), da.fuse(_readme_sweep(da))
    o = out.local

    def plain_sweep():  # the block alone (no exchange): the README's statement on the local arrays
        o[1:-1, 1:-1] = local[1:-1, 1:-1] + 0.2 * (local[2:, 1:-1] + local[:-2, 1:-1] - 2 * local[1:-1, 1:-1])
    w_cp = bench.row("stencil", f"README sweep {n}^2  plain {lib} (block only)", plain_sweep)
    w_ea = bench.row("stencil", f"README sweep {n}^2  darray eager", lambda: eager_sweep(v, out))
    w_fu = bench.row("stencil", f"README sweep {n}^2  darray.fuse", lambda: fused_sweep(v, out),
                     f"copy bound {copy * n * n / size / (local_rows * 4096) * 1e3:.3f} ms" if copy else "")
    del u, v, local, out, o

    # one training step of the surrogate net on a train_n x train_n field
    _, _, _, (model, optimizer, tx, ty) = _surrogate_step(da, comm, args.backend, args.train_n, args.channels)
    from darray.nn import functional as F

    def train_step():
        optimizer.zero_grad()
        loss = F.mse_loss(model(tx), ty)
        loss.backward()
        optimizer.step()
        return loss
    reps, bench.repeats = bench.repeats, max(3, min(bench.repeats, 5))
    bench.row("training", f"surrogate step {args.train_n}^2 c={args.channels} (fwd+bwd+Adam)", train_step)
    bench.repeats = reps

    if rank == 0:
        print(f"\n{'group':<12} {'measurement':<48} {'median':>12}  note")
        for group, what, seconds, extra in bench.rows:
            shown = "-" if seconds is None else (f"{seconds * 1e3:9.3f} ms" if seconds >= 1e-3
                                                 else f"{seconds * 1e6:9.1f} us")
            print(f"{group:<12} {what:<48} {shown:>12}  {extra}")
        ratios = [(label, a / b) for label, a, b in (("a*b+c", t_da, t_cp), ("sum", s_da, s_cp),
                                                    ("laplacian", l_da, l_cp), ("fused sum(a*b+c)", f_fu, f_cp),
                                                    ("fused a*b+c", e_fu, t_cp), ("README sweep eager", w_ea, w_cp),
                                                    ("README sweep fused", w_fu, w_cp)) if a and b]
        bounds = [(label, t / (copy * moved / 2)) for label, t, moved in (("sum(a*b+c)", f_fu, 3), ("a*b+c", e_fu, 4))
                  if t and copy]
        if bounds:  # the STREAM-style bound: the bytes that must move at the copy's bandwidth
            print("fused / bandwidth bound (copy time x arrays moved / 2): "
                  + ", ".join(f"{label} {r:.2f}x" for label, r in bounds)
                  + (f"; eager sum(a*b+c) / fused {f_ea / f_fu:.2f}x" if f_ea and f_fu else ""))
        if ratios:
            print(f"\nratio darray / {lib}: " + ", ".join(f"{label} {r:.2f}x" for label, r in ratios), end="")
        print(f"   (total {time.perf_counter() - t0:.1f} s)")
        if nccl is None and "share one GPU" in note:
            print("note: the ranks share one GPU: processes time-slice it, so the communication and stencil rows "
                  "measure that sharing, not a scaling.")
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
