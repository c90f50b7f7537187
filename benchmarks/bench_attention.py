"""Ring attention: step time, bytes and peak memory per rank vs dense NumPy attention on one process.

    python benchmarks/bench_attention.py [--tokens 4096] [--heads 4] [--features 64] [--reps 3] [--causal]
    mpiexec -n 4 python benchmarks/bench_attention.py --tokens 16384
    python benchmarks/bench_attention.py --smoke          # 256 tokens, one rep

Times :func:`darray.nn.functional.scaled_dot_product_attention` on
``(1, heads, tokens, features)`` float64 arrays cut along the tokens over
every rank: forward alone, and forward + backward (gradients of q, k and v
on the tape). The "NumPy 1p" columns run dense attention (the whole
``tokens x tokens`` score matrix, analytic backward) on rank 0 alone while
the other ranks wait; above ``--dense-max`` tokens it is skipped (the score
matrix would not fit). Times: one warm-up, then the median over ``--reps``
of the slowest rank's wall time between barriers. Bytes: what this rank's
ring exchanges sent (darray's tracer), forward and backward, and how many of
those messages completed while the rank computed (``overlapped``). Peak
memory: each rank's resident-set high-water mark after the ring's runs,
before the check against dense attention (which holds the whole score
matrix on every rank). Only rank 0 prints.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np

import darray as da
from darray.autodiff import Variable
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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=4096)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--dense-max", type=int, default=8192)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    if args.smoke:
        args.tokens, args.reps = 256, 1
    comm = da.default_communicator()
    shape = (1, args.heads, args.tokens, args.features)
    rng = np.random.default_rng(0)
    q, k, v, g = (rng.standard_normal(shape) for _ in range(4))
    qd, kd, vd, gd = (da.asarray(x, split=2) for x in (q, k, v, g))

    def forward():
        return F.scaled_dot_product_attention(qd, kd, vd, is_causal=args.causal)

    def forward_backward():
        vs = [Variable(x, requires_grad=True) for x in (qd, kd, vd)]
        (F.scaled_dot_product_attention(*vs, is_causal=args.causal) * gd).sum().backward()
        return vs

    t_fwd = timed(comm, forward, args.reps)
    t_both = timed(comm, forward_backward, args.reps)
    with da.tracing() as trace:
        forward_backward()
    comm_events = [e for e in trace.events if e["kind"] == "comm" and e["op"].startswith("attention")]
    sent = {op: sum(e["nbytes"] for e in comm_events if e["op"] == op) for op in ("attention", "attention_backward")}
    overlapped = sum(1 for e in comm_events if e["overlapped"] and e["nbytes"])
    messages = sum(1 for e in comm_events if e["nbytes"])
    ring_peak = peak_rss_mb()  # before anything dense runs: the ring's own high-water mark
    out = forward().data
    check = args.tokens <= args.dense_max
    if check:  # the ring equals dense attention (checked before anything is printed)
        want = dense(q, k, v, g, args.causal)
        grads = [x.grad for x in forward_backward()]
        for got, ref in zip((out, *grads), want):
            block = np.asarray(got.local)
            ref_block = ref[got.layout.block_slices(comm.rank)]
            if not np.allclose(block, ref_block, rtol=1e-9, atol=1e-11):
                raise SystemExit("bench_attention: the ring differs from dense attention")
    dense_fwd = dense_both = float("nan")
    if check:
        def run_dense(both):
            if comm.rank == 0:
                dense(q, k, v, g, args.causal) if both else dense_forward(q, k, v, args.causal)
            comm.barrier()

        dense_fwd = timed(comm, lambda: run_dense(False), args.reps)
        dense_both = timed(comm, lambda: run_dense(True), args.reps)
    rows = comm.allgather(np.asarray([sent["attention"], sent["attention_backward"], overlapped, messages,
                                      ring_peak], dtype=np.float64))
    if comm.rank == 0:
        print(f"ring attention: {args.tokens} tokens, {args.heads} heads, {args.features} features, "
              f"{'causal' if args.causal else 'full'}, {comm.size} ranks (float64)")
        print(f"  forward            {t_fwd * 1e3:9.1f} ms   NumPy 1p (dense) {dense_fwd * 1e3:9.1f} ms")
        print(f"  forward + backward {t_both * 1e3:9.1f} ms   NumPy 1p (dense) {dense_both * 1e3:9.1f} ms")
        print("  rank  sent fwd MiB  sent bwd MiB  overlapped/messages  ring peak RSS MiB")
        for r, row in enumerate(rows):
            print(f"  {r:4d}  {row[0] / 2**20:12.2f}  {row[1] / 2**20:12.2f}  {int(row[2]):10d}/{int(row[3]):<8d}"
                  f"  {row[4]:12.1f}")


if __name__ == "__main__":
    main()
