"""Ring attention: step time, bytes, peak memory per rank and hidden communication vs dense NumPy attention.

    python benchmarks/bench_attention.py [--tokens 4096 16384] [--dtype float32 float64] [--heads 4]
                                         [--features 64] [--reps 3] [--causal]
    mpiexec -n 4 python benchmarks/bench_attention.py --tokens 4096 16384 --dtype float32 float64
    python benchmarks/bench_attention.py --smoke          # 256 tokens, one rep

Times :func:`darray.nn.functional.scaled_dot_product_attention` on
``(1, heads, tokens, features)`` arrays cut along the tokens over every
rank, for each token count and dtype given: forward alone, and forward +
backward (gradients of q, k and v on the tape). The "NumPy 1p" columns run
dense attention (the whole ``tokens x tokens`` score matrix, analytic
backward) on rank 0 alone while the other ranks wait; above ``--dense-max``
tokens it is skipped (the score matrix would not fit), and so is the check
of the ring against it. Times: one warm-up, then the median over ``--reps``
of the slowest rank's wall time between barriers.

Per rank: the bytes the ring exchanges sent (darray's tracer), forward and
backward; the peak of the memory NumPy and Python allocated during one
forward + backward (``tracemalloc``: the ring's working set, which falls as
1/P; key blocks are processed in chunks, so it never holds a
``tokens/P x tokens/P`` score block); the process's resident-set
high-water mark (meaningful for the first case of a run only: it never
falls); and the communication hidden behind compute: each ring exchange is
started before the held block is processed and waited for after, so the
rank is blocked only for the part of the transfer the compute did not
cover. ``hidden = 1 - wait / transfer``, where ``wait`` is the time this
rank spent inside the exchanges' ``wait()`` in a normal run and
``transfer`` the time from starting to completing the same exchanges in a
run with the attention kernels switched off (communication alone). Only
rank 0 prints.
"""

from __future__ import annotations

import argparse
import math
import resource
import sys
import time
import tracemalloc
from contextlib import contextmanager

import numpy as np

import darray as da
from darray import _recorder
from darray.autodiff import Variable
from darray.nn import _attention
from darray.nn import functional as F


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024.0 if sys.platform != "darwin" else peak / 2 ** 20


def dense(q, k, v, g, causal):
    """Dense attention and its analytic backward: (out, dq, dk, dv)."""
    scale = 1 / np.sqrt(q.shape[-1])
    s = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    out = w @ v
    dp = g @ np.swapaxes(v, -1, -2)
    ds = w * (dp - (g * out).sum(-1, keepdims=True)) * scale
    return out, ds @ k, np.swapaxes(ds, -1, -2) @ q, np.swapaxes(w, -1, -2) @ g


def dense_forward(q, k, v, causal):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v


def timed(comm, f, reps):
    f()
    times = []
    for _ in range(reps):
        comm.barrier()
        t0 = time.perf_counter()
        f()
        elapsed = np.asarray([time.perf_counter() - t0])
        times.append(float(comm.allreduce(elapsed, "max")[0]))
    return float(np.median(times))


# ------------------------------------------------------------------ the ring's waits, and the ring without compute
class _TimedWait:
    """A ring exchange whose ``wait()`` adds its blocked seconds to ``waits[op]`` (op: the tracer's label)."""

    def __init__(self, request, waits: dict):
        self.request, self.waits, self.op = request, waits, _recorder.label

    def wait(self) -> None:
        t0 = time.perf_counter()
        self.request.wait()
        self.waits[self.op] = self.waits.get(self.op, 0.0) + time.perf_counter() - t0


@contextmanager
def ring_waits(compute: bool = True):
    """Collect the seconds the ring's exchanges blocked in ``wait()`` (a dict: op -> seconds, the ops named while
    tracing); ``compute=False`` also switches the attention kernels off (the ring moves the same messages with
    nothing to hide them behind)."""
    waits: dict[str, float] = {}
    saved = {name: getattr(_attention, name) for name in ("_exchange", "_absorb", "_block_grads")}

    def exchange(*args):
        request, received, starts = saved["_exchange"](*args)
        return _TimedWait(request, waits), received, starts

    def no_grads(xp, env, j, kv, q, g, lse, delta, dq):
        kj, vj = kv
        size = math.prod(kj.shape[:-1]) * (kj.shape[-1] + vj.shape[-1])
        return dq, xp.zeros((size,), dtype=kj.dtype)

    _attention._exchange = exchange
    if not compute:
        _attention._absorb = lambda xp, env, state, *rest, **kw: state
        _attention._block_grads = no_grads
    try:
        yield waits
    finally:
        for name, value in saved.items():
            setattr(_attention, name, value)


def _comm_events(run) -> tuple[dict, dict]:
    """``(bytes sent, seconds from start to completion)`` of the ring's exchanges in one ``run()``, per op."""
    with da.tracing() as trace:
        run()
    events = [e for e in trace.events if e["kind"] == "comm" and e["op"].startswith("attention")]
    ops = ("attention", "attention_backward")
    return ({op: sum(e["nbytes"] for e in events if e["op"] == op) for op in ops},
            {op: sum(e["seconds"] for e in events if e["op"] == op) for op in ops})


def hidden_fraction(forward_backward) -> tuple[float, float]:
    """The fraction of the ring's transfer time hidden behind compute, forward and backward (this rank).

    ``1 - wait / transfer``: ``wait``, the seconds blocked in the exchanges' ``wait()`` of one traced forward +
    backward; ``transfer``, the seconds from start to completion of the same exchanges with the kernels off.
    """
    with ring_waits() as waits:
        forward_backward()  # warm
        waits.clear()
        _comm_events(forward_backward)
    with ring_waits(compute=False):
        _, transfer = _comm_events(forward_backward)
    return tuple(float("nan") if transfer[op] <= 0 else max(0.0, 1.0 - waits.get(op, 0.0) / transfer[op])
                 for op in ("attention", "attention_backward"))


def traced_peak_mb(run) -> float:
    """Peak NumPy + Python allocations (MiB) during one ``run()``, above what was live before it."""
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    try:
        run()
        return (tracemalloc.get_traced_memory()[1] - base) / 2 ** 20
    finally:
        tracemalloc.stop()


# ------------------------------------------------------------------ one case
def run_case(comm, args, tokens: int, dtype: str) -> None:
    shape = (1, args.heads, tokens, args.features)
    rng = np.random.default_rng(0)
    q, k, v, g = (rng.standard_normal(shape).astype(dtype) for _ in range(4))
    qd, kd, vd, gd = (da.asarray(x, split=2) for x in (q, k, v, g))

    def forward():
        return F.scaled_dot_product_attention(qd, kd, vd, is_causal=args.causal)

    def forward_backward():
        vs = [Variable(x, requires_grad=True) for x in (qd, kd, vd)]
        (F.scaled_dot_product_attention(*vs, is_causal=args.causal) * gd).sum().backward()
        return vs

    t_fwd = timed(comm, forward, args.reps)
    t_both = timed(comm, forward_backward, args.reps)
    sent, _ = _comm_events(forward_backward)
    peak = traced_peak_mb(forward_backward)
    ring_rss = peak_rss_mb()  # before anything dense runs: the ring's own high-water mark
    hidden = hidden_fraction(forward_backward) if comm.size > 1 else (float("nan"),) * 2
    check = tokens <= args.dense_max
    if check:  # the ring equals dense attention (checked before anything is printed)
        want = dense(*(x.astype(np.float64) for x in (q, k, v, g)), args.causal)
        tol = dict(rtol=1e-9, atol=1e-11) if dtype == "float64" else dict(rtol=1e-3, atol=1e-4)
        for got, ref in zip((forward().data, *(x.grad for x in forward_backward())), want):
            if not np.allclose(np.asarray(got.local), ref[got.layout.block_slices(comm.rank)], **tol):
                raise SystemExit("bench_attention: the ring differs from dense attention")
    dense_fwd = dense_both = float("nan")
    if check:
        def run_dense(both):
            if comm.rank == 0:
                dense(q, k, v, g, args.causal) if both else dense_forward(q, k, v, args.causal)
            comm.barrier()

        dense_fwd = timed(comm, lambda: run_dense(False), args.reps)
        dense_both = timed(comm, lambda: run_dense(True), args.reps)
    rows = comm.allgather(np.asarray([sent["attention"], sent["attention_backward"], peak, ring_rss, *hidden],
                                     dtype=np.float64))
    if comm.rank == 0:
        print(f"ring attention: {tokens} tokens, {args.heads} heads, {args.features} features, "
              f"{'causal' if args.causal else 'full'}, {comm.size} ranks ({dtype}; key chunks of "
              f"{_attention.key_chunk(shape, np.dtype(dtype).itemsize)} keys)")
        print(f"  forward            {t_fwd * 1e3:9.1f} ms   NumPy 1p (dense) {dense_fwd * 1e3:9.1f} ms")
        print(f"  forward + backward {t_both * 1e3:9.1f} ms   NumPy 1p (dense) {dense_both * 1e3:9.1f} ms")
        print("  rank  sent fwd MiB  sent bwd MiB  traced peak MiB  peak RSS MiB  hidden fwd  hidden bwd")
        for r, row in enumerate(rows):
            print(f"  {r:4d}  {row[0] / 2**20:12.2f}  {row[1] / 2**20:12.2f}  {row[2]:15.1f}  {row[3]:12.1f}"
                  f"  {row[4]:10.0%}  {row[5]:10.0%}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=[4096])
    parser.add_argument("--dtype", nargs="+", default=["float64"], choices=["float32", "float64"])
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--dense-max", type=int, default=8192)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    if args.smoke:
        args.tokens, args.reps = [256], 1
    comm = da.default_communicator()
    for tokens in sorted(args.tokens):  # smallest first: the resident-set high-water mark never falls
        for dtype in sorted(args.dtype, key=lambda d: np.dtype(d).itemsize):
            run_case(comm, args, tokens, dtype)


if __name__ == "__main__":
    main()
