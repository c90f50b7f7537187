"""``darray bench``: darray against NumPy, Dask and hand-written mpi4py, in one run.

    python -m darray.bench [--size small|medium|full] [--smoke] [--out DIR]
    darray bench [--size ...] [--smoke] [--out DIR]

One invocation times every workload for

* NumPy on one process (the baseline: every ratio is "time / NumPy time"),
* darray on 1 rank (this process, :class:`~darray._comm.SelfCommunicator`),
* Dask array with 2 threads and 2 chunks (when dask is importable),
* darray on P ranks and hand-written mpi4py + NumPy on P ranks (P = ``--ranks``,
  default 2), in a child job ``mpiexec -n P python -m mpi4py -m darray.bench
  --worker CONFIG`` that this command launches itself. Started under mpiexec
  instead, rank 0 runs the one-process part while the others sleep, then all
  ranks run the P-rank part.

Workloads (sizes per ``--size``; ``full`` is W1 2^26, W2 4096^2 x100, W3 8192^2, W4 4096^3):

* W1 ``a*b + c`` then ``sum``; W2 Jacobi 5-point stencil, periodic; W3 ``mean``
  and ``std`` along axis 0; W4 ``matmul``;
* redistribution: a square matrix split along axis 0 moved to split along axis 1
  (the transpose of the split axis), against a raw ``Alltoallv`` of the same bytes;
* ``sort`` of a 1-d array; 2-d ``fft``; one training step of the surrogate model
  when ``darray.nn.surrogate`` exists.

Every variant gets the same data (built from index formulas), one warm-up
call, then the median over ``--reps`` (on P ranks: of the per-rep maximum over
ranks, each rep fenced by barriers). Every result is checked against NumPy's
through a position-weighted checksum (computed outside the timed region); a
mismatch is marked in the table and makes the exit status 1. Peak RSS is the
``VmHWM`` of each process over one variant (reset through
``/proc/self/clear_refs`` before the variant builds its inputs).

The report goes to ``DIR/<date>-<label>.md`` (default DIR
``darray/bench`` in the user's cache, :func:`darray.output.default_out_dir`; label ``<size>-<nproc>cpu``) with a description of the
machine, the load average, a table of times and ratios, peak RSS per rank, the
raw numbers as JSON next to it, and a PNG of the ratios when matplotlib is
installed.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from .output import default_out_dir

__all__ = ["SIZES", "WORKLOADS", "configure", "run", "main"]

# ------------------------------------------------------------------------------------------------ sizes --
#: Problem sizes per ``--size``. ``w2`` is (n, sweeps) of an n x n field; ``surrogate`` is (n, train steps).
SIZES: dict[str, dict[str, Any]] = {
    "smoke": dict(w1=2 ** 12, w2=(64, 3), w3=64, w4=64, redist=64, sort=2 ** 12, fft=64, surrogate=(32, 1),
                  readme=(64, 2), reps=1),
    "small": dict(w1=2 ** 20, w2=(512, 20), w3=1024, w4=512, redist=512, sort=2 ** 18, fft=512,
                  surrogate=(64, 2), readme=(512, 30), reps=3),
    "medium": dict(w1=2 ** 24, w2=(2048, 50), w3=4096, w4=2048, redist=2048, sort=2 ** 22, fft=2048,
                   surrogate=(256, 3), readme=(2048, 30), reps=3),
    "full": dict(w1=2 ** 26, w2=(4096, 100), w3=8192, w4=4096, redist=4096, sort=2 ** 24, fft=4096,
                 surrogate=(512, 3), readme=(4096, 100), reps=3),
}

def _labels(P: int) -> dict[str, str]:
    ranks = f"{P} rank" + ("s" if P != 1 else "")
    return {"numpy": "NumPy, 1 process", "darray1": "darray, 1 rank", "darrayP": f"darray, {ranks}",
            "handP": f"mpi4py + NumPy, {ranks}", "dask": "Dask, 2 threads"}


# ------------------------------------------------------------------------------------------- data + check --
def _rows(n: int, size: int, rank: int) -> slice:
    """Balanced contiguous block of ``range(n)`` for ``rank`` (``numpy.array_split``'s cut)."""
    base, extra = divmod(n, size)
    lo = rank * base + min(rank, extra)
    return slice(lo, lo + base + (1 if rank < extra else 0))


def _ix(slices) -> list[np.ndarray]:
    """Global index vectors of a block, shaped to broadcast (like ``numpy.ix_``)."""
    out = []
    for k, s in enumerate(slices):
        shape = [1] * len(slices)
        shape[k] = s.stop - s.start
        out.append(np.arange(s.start, s.stop, dtype=np.int64).reshape(shape))
    return out


def _data(kind: str, slices) -> np.ndarray:
    """The block at ``slices`` of the global input ``kind``: the same numbers for every peer."""
    idx = _ix(slices)
    if kind == "w1a":
        return (idx[0] % 1024) / 1024.0
    if kind == "w1b":
        return ((idx[0] * 7) % 1000) / 1000.0
    if kind == "w1c":
        return 1.0 + (idx[0] % 3)
    if kind.startswith("field"):  # field<n>: periodic smooth field for Jacobi
        n = int(kind[5:])
        return np.sin(idx[0] * (2 * np.pi / n)) * np.cos(idx[1] * (2 * np.pi / n))
    if kind == "mat":
        return ((idx[0] * 31 + idx[1] * 17) % 1000) / 1000.0
    if kind == "matA":
        return ((idx[0] * 3 + idx[1] * 5) % 17) / 17.0 - 0.5
    if kind == "matB":
        return ((idx[0] * 7 + idx[1] * 11) % 13) / 13.0 - 0.5
    if kind == "keys":  # splitmix64 of the index: no sorted runs, uniform in [0, 1)
        z = idx[0].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        for shift, mult in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
            z ^= z >> np.uint64(shift)
            z *= np.uint64(mult)
        z ^= z >> np.uint64(31)
        return (z >> np.uint64(11)).astype(np.float64) / 2.0 ** 53
    if kind == "cplx":
        re_ = ((idx[0] * 13 + idx[1] * 7) % 101) / 101.0
        im_ = ((idx[0] * 5 + idx[1] * 3) % 37) / 37.0
        return re_ + 1j * im_
    raise KeyError(kind)


def _full(shape) -> tuple[slice, ...]:
    return tuple(slice(0, n) for n in shape)


def _row_block(shape, size: int, rank: int) -> tuple[slice, ...]:
    return (_rows(shape[0], size, rank),) + tuple(slice(0, n) for n in shape[1:])


def _checksum(block, slices) -> np.ndarray:
    """Partial sums of a block at global position ``slices``: [sum re, sum re*w, sum im, sum im*w, sum |x|].

    ``w`` depends on the global position, so a misplaced or reordered value changes the checksum.
    """
    b = np.asarray(block)
    if b.size == 0:
        return np.zeros(5)
    w = sum(i * p for i, p in zip(_ix(slices), (7919, 104729, 1299709)))
    w = (w % 1009) / 1009.0 - 0.5
    re_, im_ = np.real(b), np.imag(b)
    return np.array([re_.sum(), (re_ * w).sum(), im_.sum(), (im_ * w).sum(), np.abs(b).sum()], dtype=np.float64)


def _agree(got: dict, want: dict) -> bool:
    """Checksums equal up to rounding (relative to the sum of magnitudes); only keys both sides have."""
    keys = set(got) & set(want)
    if not keys:
        return False
    for key in keys:
        g, w = np.asarray(got[key], dtype=np.float64), np.asarray(want[key], dtype=np.float64)
        if g.shape != w.shape:
            return False
        tol = 1e-8 * (abs(float(w[-1])) + 1.0) if w.size == 5 else 1e-9 * (np.abs(w) + 1.0)
        if not np.all(np.abs(g - w) <= tol):
            return False
    return True


# -------------------------------------------------------------------------------------------- contexts --
class Ctx:
    """Where a variant runs: the darray communicator (or None), the mpi4py communicator (or None)."""

    def __init__(self, sz: dict, comm=None, mpi=None):
        self.sz = sz
        self.comm = comm
        self.mpi = mpi
        self.rank = mpi.Get_rank() if mpi is not None else 0
        self.size = mpi.Get_size() if mpi is not None else 1

    def allsum(self, partial: np.ndarray) -> np.ndarray:
        partial = np.ascontiguousarray(partial, dtype=np.float64)
        if self.mpi is None:
            return partial
        from mpi4py import MPI

        out = np.empty_like(partial)
        self.mpi.Allreduce(partial, out, op=MPI.SUM)
        return out


class Case(NamedTuple):
    run: Callable[[], Any]                    # the timed call
    summarize: Callable[[Any], dict]          # collective; checksums (on rank 0 at least)
    per: int = 1                              # the time is divided by this (e.g. train steps)
    note: str = ""


def _darray_sums(ctx: Ctx, **named) -> dict:
    """Checksums of darray results (gathered on rank 0; other ranks return {})."""
    out = {}
    for key, value in named.items():
        full = value.gather(root=0)
        if ctx.rank == 0:
            out[key] = _checksum(full, _full(full.shape))
    return out


def _from_rows(ctx: Ctx, kind: str, shape, **kw):
    """A darray input split along axis 0 in the hand-written cut (``from_local``: no copy)."""
    import darray as da

    block = _data(kind, _row_block(shape, ctx.size, ctx.rank))
    block = np.ascontiguousarray(np.broadcast_to(block, tuple(s.stop - s.start for s in
                                                              _row_block(shape, ctx.size, ctx.rank))))
    return da.from_local(block, split=0, shape=tuple(shape), comm=ctx.comm, **kw)


def _dense(kind: str, shape) -> np.ndarray:
    return np.ascontiguousarray(np.broadcast_to(_data(kind, _full(shape)), tuple(shape)))


def _local(ctx: Ctx, kind: str, shape) -> tuple[np.ndarray, tuple[slice, ...]]:
    sl = _row_block(shape, ctx.size, ctx.rank)
    return np.ascontiguousarray(np.broadcast_to(_data(kind, sl), tuple(s.stop - s.start for s in sl))), sl


def _dask():
    import dask
    import dask.array as dsk

    return dask, dsk


def _chunks2(n: int) -> int:
    return max(1, (n + 1) // 2)


# ----------------------------------------------------------------------------------------- W1 a*b+c, sum --
def _w1_numpy(ctx):
    n = ctx.sz["w1"]
    a, b, c = (_dense(k, (n,)) for k in ("w1a", "w1b", "w1c"))

    def run():
        r = a * b + c
        return r, float(np.sum(r))

    return Case(run, lambda out: {"r": _checksum(out[0], _full((n,))), "s": [out[1]]})


def _w1_darray(ctx):
    import darray as da

    n = ctx.sz["w1"]
    a, b, c = (_from_rows(ctx, k, (n,)) for k in ("w1a", "w1b", "w1c"))

    def run():
        r = a * b + c
        return r, float(da.sum(r))

    return Case(run, lambda out: {**_darray_sums(ctx, r=out[0]), "s": [out[1]]})


def _w1_hand(ctx):
    n = ctx.sz["w1"]
    (a, sl), (b, _), (c, _) = (_local(ctx, k, (n,)) for k in ("w1a", "w1b", "w1c"))
    from mpi4py import MPI

    send, recv = np.empty(1), np.empty(1)

    def run():
        r = a * b + c
        send[0] = np.sum(r)
        ctx.mpi.Allreduce(send, recv, op=MPI.SUM)
        return r, float(recv[0])

    return Case(run, lambda out: {"r": ctx.allsum(_checksum(out[0], sl)), "s": [out[1]]})


def _w1_dask(ctx):
    dask, dsk = _dask()
    n = ctx.sz["w1"]
    a, b, c = (dsk.from_array(_dense(k, (n,)), chunks=_chunks2(n)) for k in ("w1a", "w1b", "w1c"))
    return Case(lambda: float((a * b + c).sum().compute()), lambda s: {"s": [s]},
                note="Dask: the sum only (a*b+c is fused into it, never materialised)")


# ------------------------------------------------------------------------------------------- W2 Jacobi --
def _jacobi_block(b):
    """One Jacobi sweep of a block with one ghost cell on each side."""
    return 0.25 * (b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:])


def _w2_numpy(ctx):
    n, iters = ctx.sz["w2"]
    field = _dense(f"field{n}", (n, n))

    def run():
        u = field
        for _ in range(iters):
            u = _jacobi_block(np.pad(u, 1, mode="wrap"))
        return u

    return Case(run, lambda u: {"u": _checksum(u, _full((n, n)))})


def _w2_darray(ctx):
    import darray as da

    n, iters = ctx.sz["w2"]
    u0 = _from_rows(ctx, f"field{n}", (n, n), halo=1, boundary="periodic")
    bufs = (da.empty_like(u0), da.empty_like(u0))

    def run():  # u0 is only read, so every rep starts from the same field
        u = u0
        for i in range(iters):
            v = bufs[i % 2]
            da.map_overlap(_jacobi_block, u, depth=1, boundary="periodic", trim=False, out=v)
            u = v
        return u

    return Case(run, lambda u: _darray_sums(ctx, u=u),
                note="darray: map_overlap(depth=1, periodic, out=) per sweep, two buffers with halo 1")


def _w2_hand(ctx):
    n, iters = ctx.sz["w2"]
    local, sl = _local(ctx, f"field{n}", (n, n))
    comm = ctx.mpi
    rank, size = ctx.rank, ctx.size
    up, down = (rank - 1) % size, (rank + 1) % size

    def run():  # two padded buffers, swapped; ghost rows by Sendrecv, ghost columns by a local copy
        p, q = np.empty((local.shape[0] + 2, n + 2)), np.empty((local.shape[0] + 2, n + 2))
        p[1:-1, 1:-1] = local
        for _ in range(iters):
            comm.Sendrecv(p[1], dest=up, recvbuf=p[-1], source=down)
            comm.Sendrecv(p[-2], dest=down, recvbuf=p[0], source=up)
            p[:, 0], p[:, -1] = p[:, -2], p[:, 1]
            q[1:-1, 1:-1] = _jacobi_block(p)
            p, q = q, p
        return p[1:-1, 1:-1]

    return Case(run, lambda u: {"u": ctx.allsum(_checksum(u, sl))},
                note="hand: rows cut, two padded buffers, two Sendrecv of edge rows per sweep")


def _w2_dask(ctx):
    dask, dsk = _dask()
    n, iters = ctx.sz["w2"]
    d0 = dsk.from_array(_dense(f"field{n}", (n, n)), chunks=(_chunks2(n), n))

    def run():
        u = d0
        for _ in range(iters):
            u = u.map_overlap(lambda b: np.pad(_jacobi_block(b), 1), depth=1, boundary="periodic")
        return u.persist()

    return Case(run, lambda u: {"u": _checksum(u.compute(), _full((n, n)))},
                note="Dask: map_overlap(depth=1, periodic) per sweep, one graph, persisted")


# ------------------------------------------------------------------------------------ W3 mean+std axis 0 --
def _w3_numpy(ctx):
    m = ctx.sz["w3"]
    x = _dense("mat", (m, m))
    return Case(lambda: (np.mean(x, axis=0), np.std(x, axis=0)),
                lambda out: {"mean": _checksum(out[0], _full((m,))), "std": _checksum(out[1], _full((m,)))})


def _w3_darray(ctx):
    import darray as da

    m = ctx.sz["w3"]
    x = _from_rows(ctx, "mat", (m, m))
    return Case(lambda: (da.mean(x, axis=0), da.std(x, axis=0)),
                lambda out: _darray_sums(ctx, mean=out[0], std=out[1]))


def _w3_hand(ctx):
    m = ctx.sz["w3"]
    x, _ = _local(ctx, "mat", (m, m))
    from mpi4py import MPI

    comm = ctx.mpi
    tot, ss = np.empty(m), np.empty(m)

    def run():
        comm.Allreduce(x.sum(axis=0), tot, op=MPI.SUM)
        mean = tot / m
        d = x - mean
        comm.Allreduce(np.einsum("ij,ij->j", d, d), ss, op=MPI.SUM)
        return mean, np.sqrt(ss / m)

    def summarize(out):
        if ctx.rank:
            return {}
        return {"mean": _checksum(out[0], _full((m,))), "std": _checksum(out[1], _full((m,)))}

    return Case(run, summarize, note="hand: local column sums + Allreduce, two passes (as NumPy)")


def _w3_dask(ctx):
    dask, dsk = _dask()
    m = ctx.sz["w3"]
    x = dsk.from_array(_dense("mat", (m, m)), chunks=(_chunks2(m), m))
    return Case(lambda: dask.compute(x.mean(axis=0), x.std(axis=0)),
                lambda out: {"mean": _checksum(out[0], _full((m,))), "std": _checksum(out[1], _full((m,)))})


# ------------------------------------------------------------------------------------------- W4 matmul --
def _w4_numpy(ctx):
    k = ctx.sz["w4"]
    a, b = _dense("matA", (k, k)), _dense("matB", (k, k))
    return Case(lambda: a @ b, lambda c: {"c": _checksum(c, _full((k, k)))})


def _w4_darray(ctx):
    import darray as da

    k = ctx.sz["w4"]
    a, b = _from_rows(ctx, "matA", (k, k)), _from_rows(ctx, "matB", (k, k))
    return Case(lambda: da.matmul(a, b), lambda c: _darray_sums(ctx, c=c),
                note="darray: both operands split along axis 0; matmul picks the algorithm")


def _w4_hand(ctx):
    k = ctx.sz["w4"]
    (a, sl), (b, _) = _local(ctx, "matA", (k, k)), _local(ctx, "matB", (k, k))
    counts = [(_rows(k, ctx.size, r).stop - _rows(k, ctx.size, r).start) * k for r in range(ctx.size)]
    displs = list(np.cumsum([0] + counts[:-1]))
    from mpi4py import MPI

    full_b = np.empty((k, k))

    def run():
        ctx.mpi.Allgatherv(b, [full_b, counts, displs, MPI.DOUBLE])
        return a @ full_b

    return Case(run, lambda c: {"c": ctx.allsum(_checksum(c, sl))},
                note="hand: both split along axis 0; Allgatherv of B, then local A_rows @ B")


def _w4_dask(ctx):
    dask, dsk = _dask()
    k = ctx.sz["w4"]
    a = dsk.from_array(_dense("matA", (k, k)), chunks=(_chunks2(k), k))
    b = dsk.from_array(_dense("matB", (k, k)), chunks=(_chunks2(k), k))
    return Case(lambda: (a @ b).persist(), lambda c: {"c": _checksum(c.compute(), _full((k, k)))})


# --------------------------------------------------------------------------- redistribution (transpose) --
def _rd_numpy(ctx):
    m = ctx.sz["redist"]
    x = _dense("mat", (m, m))
    return Case(lambda: x.copy(), lambda y: {"y": _checksum(y, _full((m, m)))},
                note="NumPy: one copy of the array (a process holds everything; the reference cost of moving "
                     "the bytes once)")


def _rd_darray(ctx):
    import darray as da

    m = ctx.sz["redist"]
    x = _from_rows(ctx, "mat", (m, m))
    note = "darray: redistribute(x, split=1) of x split along axis 0"
    if ctx.size == 1:
        note += " (on 1 rank both layouts are the whole array: nothing moves)"
    return Case(lambda: da.redistribute(x, split=1), lambda y: _darray_sums(ctx, y=y), note=note)


def _rd_hand(ctx):
    m = ctx.sz["redist"]
    x, _ = _local(ctx, "mat", (m, m))
    from mpi4py import MPI

    P, r = ctx.size, ctx.rank
    mine = _rows(m, P, r)
    nrows = mine.stop - mine.start
    cols = [_rows(m, P, q) for q in range(P)]
    scounts = [nrows * (c.stop - c.start) for c in cols]
    rcounts = [(_rows(m, P, q).stop - _rows(m, P, q).start) * (cols[r].stop - cols[r].start) for q in range(P)]
    sdispl = list(np.cumsum([0] + scounts[:-1]))
    rdispl = list(np.cumsum([0] + rcounts[:-1]))
    send = np.ascontiguousarray(np.concatenate([x[:, c].ravel() for c in cols]))  # packed once, untimed
    recv = np.empty(sum(rcounts))

    def run():
        ctx.mpi.Alltoallv([send, scounts, sdispl, MPI.DOUBLE], [recv, rcounts, rdispl, MPI.DOUBLE])
        return recv

    def summarize(buf):
        y = buf.reshape(m, cols[r].stop - cols[r].start)
        return {"y": ctx.allsum(_checksum(y, (slice(0, m), cols[r])))}

    return Case(run, summarize, note="hand: raw Alltoallv of the same bytes (send buffer packed outside the timing)")


def _rd_dask(ctx):
    dask, dsk = _dask()
    m = ctx.sz["redist"]
    x = dsk.from_array(_dense("mat", (m, m)), chunks=(_chunks2(m), m))
    return Case(lambda: x.rechunk((m, _chunks2(m))).persist(), lambda y: {"y": _checksum(y.compute(),
                                                                                         _full((m, m)))},
                note="Dask: rechunk from row chunks to column chunks, persisted")


# ------------------------------------------------------------------------------------------------ sort --
def _sort_numpy(ctx):
    n = ctx.sz["sort"]
    x = _dense("keys", (n,))
    return Case(lambda: np.sort(x), lambda y: {"y": _checksum(y, _full((n,)))})


def _sort_darray(ctx):
    import darray as da

    n = ctx.sz["sort"]
    x = _from_rows(ctx, "keys", (n,))
    return Case(lambda: da.sort(x), lambda y: _darray_sums(ctx, y=y))


def _sort_hand(ctx):
    n = ctx.sz["sort"]
    x, _ = _local(ctx, "keys", (n,))
    from mpi4py import MPI

    comm, P = ctx.mpi, ctx.size

    def run():
        loc = np.sort(x)
        picks = (np.arange(1, P) * loc.size) // P
        samples = np.ascontiguousarray(loc[np.minimum(picks, max(loc.size - 1, 0))] if loc.size else
                                       np.full(P - 1, np.inf))
        every = np.empty((P - 1) * P)
        comm.Allgather(samples, every)
        every.sort()
        splitters = every[(np.arange(1, P) * every.size) // P]
        cuts = np.searchsorted(loc, splitters, side="right")
        scounts = np.diff(np.concatenate(([0], cuts, [loc.size]))).astype(np.int64)
        rcounts = np.empty(P, dtype=np.int64)
        comm.Alltoall(scounts, rcounts)
        out = np.empty(int(rcounts.sum()))
        comm.Alltoallv([loc, scounts, np.concatenate(([0], np.cumsum(scounts)[:-1])), MPI.DOUBLE],
                       [out, rcounts, np.concatenate(([0], np.cumsum(rcounts)[:-1])), MPI.DOUBLE])
        out.sort(kind="stable")  # P sorted runs: timsort merges them
        return out

    def summarize(y):
        offset = comm.exscan(y.size) or 0
        return {"y": ctx.allsum(_checksum(y, (slice(offset, offset + y.size),)))}

    return Case(run, summarize, note="hand: sample sort (local sort, splitters by Allgather, Alltoallv, merge); "
                                     "blocks not rebalanced afterwards")


# ------------------------------------------------------------------------------------------------- fft --
def _fft_numpy(ctx):
    m = ctx.sz["fft"]
    x = _dense("cplx", (m, m))
    return Case(lambda: np.fft.fft2(x), lambda y: {"y": _checksum(y, _full((m, m)))})


def _fft_darray(ctx):
    import darray as da

    m = ctx.sz["fft"]
    x = _from_rows(ctx, "cplx", (m, m))
    return Case(lambda: da.fft.fftn(x), lambda y: _darray_sums(ctx, y=y),
                note="darray: fftn(x), result back in x's layout (split along axis 0)")


def _fft_hand(ctx):
    m = ctx.sz["fft"]
    x, sl = _local(ctx, "cplx", (m, m))
    from mpi4py import MPI

    P, r = ctx.size, ctx.rank
    blocks = [_rows(m, P, q) for q in range(P)]
    width = [b.stop - b.start for b in blocks]
    counts = [width[r] * width[q] for q in range(P)]  # rows_r x cols_q out, rows_q x cols_r in: same sizes
    displ = list(np.cumsum([0] + counts[:-1]))
    T = MPI.C_DOUBLE_COMPLEX

    def transpose(y, inverse=False):
        """Rows cut -> columns cut (or back): pack, Alltoallv, unpack."""
        if not inverse:  # y: (rows_r, m) -> (m, cols_r)
            send = np.concatenate([y[:, b].ravel() for b in blocks])
            recv = np.empty(m * width[r], dtype=complex)
            ctx.mpi.Alltoallv([send, counts, displ, T], [recv, counts, displ, T])
            return recv.reshape(m, width[r])
        send = np.concatenate([y[b, :].ravel() for b in blocks])  # y: (m, cols_r) -> (rows_r, m)
        recv = np.empty(width[r] * m, dtype=complex)
        ctx.mpi.Alltoallv([send, counts, displ, T], [recv, counts, displ, T])
        return np.concatenate([recv[displ[q]:displ[q] + counts[q]].reshape(width[r], width[q])
                               for q in range(P)], axis=1)

    def run():
        y = np.fft.fft(x, axis=1)
        z = np.fft.fft(transpose(y), axis=0)
        return transpose(z, inverse=True)

    return Case(run, lambda y: {"y": ctx.allsum(_checksum(y, sl))},
                note="hand: slab FFT, fft along rows, Alltoallv transpose, fft along columns, transpose back")


def _fft_dask(ctx):
    dask, dsk = _dask()
    m = ctx.sz["fft"]
    x = dsk.from_array(_dense("cplx", (m, m)), chunks=(_chunks2(m), m))

    def run():
        y = dsk.fft.fft(x, axis=1).rechunk((m, _chunks2(m)))
        return dsk.fft.fft(y, axis=0).rechunk((_chunks2(m), m)).persist()

    return Case(run, lambda y: {"y": _checksum(y.compute(), _full((m, m)))},
                note="Dask: fft along rows, rechunk, fft along columns, rechunk back")


# ------------------------------------------------------------------------------------------- surrogate --
def _has_surrogate() -> bool:
    try:
        return importlib.util.find_spec("darray.nn.surrogate") is not None
    except (ImportError, ValueError):
        return False


def _surrogate_darray(ctx):
    from darray.demo import initial_field
    from darray.nn.surrogate import train_surrogate

    n, steps = ctx.sz["surrogate"]
    u = initial_field(n, comm=ctx.comm)

    def run():
        return train_surrogate(u, steps=steps, log=None, max_size=n, progress=False)

    def summarize(losses):
        values = np.asarray([float(v) for v in (losses or [])], dtype=np.float64)
        return {"finite": [float(values.size > 0 and bool(np.all(np.isfinite(values))))]}

    return Case(run, summarize, per=steps, note=f"darray: train_surrogate(u, steps={steps}, max_size={n}) / {steps}: "
                                                  "time per Adam step, setup (target, standardising) included")


# --------------------------------------------------------------------------------- the README example --
def _readme_numpy(ctx):
    from .readme_example import run

    n, iters = ctx.sz["readme"]
    return Case(lambda: run(np, n, iters), lambda u: {"u": _checksum(u, _full((n, n)))})


def _readme_darray(ctx):
    import darray as da

    from .readme_example import run

    n, iters = ctx.sz["readme"]
    return Case(lambda: run(da, n, iters), lambda u: _darray_sums(ctx, u=u),
                note="darray: the README's source unchanged (`import darray as np`), setup included")


def _readme_hand(ctx):
    from .readme_example import hand_written

    n, iters = ctx.sz["readme"]

    def summarize(out):
        rows, sl = out
        return {"u": ctx.allsum(_checksum(rows, (sl, slice(0, n))))}

    return Case(lambda: hand_written(ctx.mpi, n, iters), summarize,
                note="hand: rows cut, one ghost row each side, two Sendrecv per sweep, setup included")


# ------------------------------------------------------------------------------------------- the table --
class Workload(NamedTuple):
    title: str
    size: Callable[[dict], str]
    numpy: Callable | None
    darray: Callable | None
    hand: Callable | None
    dask: Callable | None
    available: Callable[[], bool] = lambda: True


def _pow2(n: int) -> str:
    e = int(np.log2(n)) if n > 0 else 0
    return f"2^{e}" if 2 ** e == n else str(n)


WORKLOADS: dict[str, Workload] = {
    "W1": Workload("W1 `a*b+c`, `sum`", lambda s: f"{_pow2(s['w1'])} float64",
                   _w1_numpy, _w1_darray, _w1_hand, _w1_dask),
    "W2": Workload("W2 Jacobi, periodic", lambda s: f"{s['w2'][0]}^2 x{s['w2'][1]}",
                   _w2_numpy, _w2_darray, _w2_hand, _w2_dask),
    "W3": Workload("W3 mean+std axis 0", lambda s: f"{s['w3']}^2", _w3_numpy, _w3_darray, _w3_hand, _w3_dask),
    "W4": Workload("W4 matmul", lambda s: f"{s['w4']}^3", _w4_numpy, _w4_darray, _w4_hand, _w4_dask),
    "redistribute": Workload("redistribute split 0 -> 1", lambda s: f"{s['redist']}^2 float64",
                             _rd_numpy, _rd_darray, _rd_hand, _rd_dask),
    "sort": Workload("sort 1-d", lambda s: f"{_pow2(s['sort'])} float64", _sort_numpy, _sort_darray, _sort_hand,
                     None),
    "fft": Workload("fft 2-d", lambda s: f"{s['fft']}^2 complex128", _fft_numpy, _fft_darray, _fft_hand,
                    _fft_dask),
    "readme": Workload("README example", lambda s: f"{s['readme'][0]}^2 x{s['readme'][1]}",
                       _readme_numpy, _readme_darray, _readme_hand, None),
    "surrogate": Workload("surrogate training step", lambda s: f"{s['surrogate'][0]}^2 field",
                          None, _surrogate_darray, None, None, _has_surrogate),
}


# ---------------------------------------------------------------------------------------------- timing --
def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _peak_mb() -> float:
    try:
        with open("/proc/self/status") as fh:
            m = re.search(r"VmHWM:\s+(\d+)\s*kB", fh.read())
        if m:
            return int(m.group(1)) / 1024.0
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _measure(factory: Callable[[Ctx], Case], ctx: Ctx, reps: int) -> dict:
    """Build the case, one warm-up + ``reps`` timed calls, checksums, peak RSS. Collective under MPI."""
    gc.collect()
    case = factory(ctx)
    gc.collect()
    _reset_peak()  # the peak of the timed calls: inputs resident + what the operation allocates
    times = []
    out = None
    for rep in range(reps + 1):
        out = None
        if ctx.mpi is not None:
            ctx.mpi.Barrier()
        t0 = time.perf_counter()
        out = case.run()
        if ctx.mpi is not None:
            ctx.mpi.Barrier()
        if rep:
            times.append((time.perf_counter() - t0) / case.per)
    rss = _peak_mb()
    sums = case.summarize(out)
    note = case.note
    times = np.asarray(times, dtype=np.float64)
    if ctx.mpi is not None:
        from mpi4py import MPI

        worst = np.empty_like(times)
        ctx.mpi.Allreduce(times, worst, op=MPI.MAX)
        times = worst
        rss_all = ctx.mpi.allgather(rss)
    else:
        rss_all = [rss]
    del out, case
    gc.collect()
    return {"time": float(np.median(times)), "times": [float(t) for t in times], "rss_mb": rss_all,
            "sums": {k: np.asarray(v).tolist() for k, v in sums.items()}, "note": note}


def _attempt(name: str, variant: str, factory, ctx: Ctx, reps: int, say) -> dict:
    """:func:`_measure`, with an error recorded instead of raised (darray raises alike on every rank)."""
    try:
        res = _measure(factory, ctx, reps)
    except Exception as error:  # noqa: BLE001 - a benchmark reports a failing variant and goes on
        res = {"error": f"{type(error).__name__}: {error}"[:300]}
        say(f"  {name:<13} {variant:<8} FAILED {res['error']}")
        return res
    say(f"  {name:<13} {variant:<8} {_fmt_time(res['time']):>10}  peak RSS {max(res['rss_mb']):7.0f} MB")
    return res


def _phase_serial(sz: dict, names: list[str], reps: int, with_dask: bool, say) -> dict:
    """NumPy, darray on 1 rank, Dask: in this process."""
    from darray import _comm
    from darray._comm import SelfCommunicator

    ctx_np = Ctx(sz)
    ctx_da = Ctx(sz, comm=SelfCommunicator())
    # arrays made without comm= (e.g. nn parameters) must land on the 1-rank communicator too: under mpiexec
    # this part runs on rank 0 alone, where creating the MPI default communicator would wait for the others
    previous = _comm._default
    _comm.set_default_communicator(ctx_da.comm)
    try:
        return _serial_workloads(sz, names, reps, with_dask, say, ctx_np, ctx_da)
    finally:
        _comm._default = previous


def _serial_workloads(sz, names, reps, with_dask, say, ctx_np: Ctx, ctx_da: Ctx) -> dict:
    results: dict[str, dict] = {}
    dask_cfg = None
    if with_dask:
        try:
            import dask

            dask_cfg = dask.config.set(scheduler="threads", num_workers=2)
        except ImportError:
            dask_cfg = None
    for name in names:
        w = WORKLOADS[name]
        row: dict[str, dict] = {}
        if not w.available():
            results[name] = row
            continue
        if w.numpy is not None:
            row["numpy"] = _attempt(name, "numpy", w.numpy, ctx_np, reps, say)
        if w.darray is not None:
            row["darray1"] = _attempt(name, "darray1", w.darray, ctx_da, reps, say)
        if w.dask is not None and dask_cfg is not None:
            row["dask"] = _attempt(name, "dask", w.dask, ctx_np, reps, say)
        results[name] = row
    if dask_cfg is not None:
        dask_cfg.__exit__(None, None, None)
    return results


def _phase_parallel(sz: dict, names: list[str], reps: int, say) -> dict:
    """darray and hand-written mpi4py on every rank of COMM_WORLD. Collective; results on every rank."""
    from mpi4py import MPI

    import darray as da

    comm = da.default_communicator()
    mpi = MPI.COMM_WORLD.Dup()
    ctx = Ctx(sz, comm=comm, mpi=mpi)
    results: dict[str, dict] = {}
    for name in names:
        w = WORKLOADS[name]
        row: dict[str, dict] = {}
        if w.available():
            if w.darray is not None:
                row["darrayP"] = _attempt(name, f"darray{ctx.size}", w.darray, ctx, reps, say)
            if w.hand is not None:
                row["handP"] = _attempt(name, f"hand{ctx.size}", w.hand, ctx, reps, say)
        results[name] = row
    mpi.Free()
    return results


def _mpi_facts() -> dict:
    from mpi4py import MPI
    import mpi4py

    return {"mpi4py": mpi4py.__version__,
            "mpi_library": " ".join(MPI.Get_library_version().strip().splitlines()[0].split())}


# ---------------------------------------------------------------------------------------- the machine --
def _meminfo_gib() -> str:
    try:
        with open("/proc/meminfo") as fh:
            kb = int(re.search(r"MemTotal:\s+(\d+)", fh.read()).group(1))
        return f"{kb / 2 ** 20:.1f} GiB"
    except (OSError, AttributeError):
        return "unknown"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            m = re.search(r"model name\s*:\s*(.+)", fh.read())
        return m.group(1).strip() if m else platform.processor() or "unknown"
    except OSError:
        return platform.processor() or "unknown"


def _blas() -> str:
    parts = []
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg.get("Build Dependencies", {}).get("blas", {})
        if blas:
            parts.append(f"{blas.get('name', '?')} {blas.get('version', '')}".strip())
            if blas.get("openblas configuration"):
                parts.append(blas["openblas configuration"].strip())
    except Exception:  # noqa: BLE001 - older numpy: no mode="dicts"
        pass
    try:
        from threadpoolctl import threadpool_info

        for pool in threadpool_info():
            parts.append(f"{pool.get('internal_api')} {pool.get('version')} threads={pool.get('num_threads')}")
    except ImportError:
        parts.append("(threadpoolctl not installed: BLAS thread count unknown)")
    return "; ".join(parts) or "unknown"


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _machine(mpi_facts: dict) -> list[tuple[str, str]]:
    import darray

    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count()
    env = ", ".join(f"{k}={os.environ[k]}" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
                    if k in os.environ) or "none set"
    return [
        ("CPU", f"{_cpu_model()}; nproc={os.cpu_count()} (usable {affinity})"),
        ("memory", _meminfo_gib()),
        ("OS", f"{platform.system()} {platform.release()} {platform.machine()}"),
        ("Python", platform.python_version()),
        ("numpy", np.__version__),
        ("BLAS", _blas()),
        ("thread variables", env),
        ("darray", getattr(darray, "__version__", "?")),
        ("dask", _version("dask")),
        ("mpi4py", mpi_facts.get("mpi4py", _version("mpi4py"))),
        ("MPI library", mpi_facts.get("mpi_library", "n/a")),
    ]


# ------------------------------------------------------------------------------------------ the report --
def _fmt_time(t: float) -> str:
    if t < 1e-3:
        return f"{t * 1e6:.1f} us"
    if t < 1.0:
        return f"{t * 1e3:.1f} ms"
    return f"{t:.2f} s"


def _verdicts(results: dict) -> None:
    """Mark every variant ok / mismatch against NumPy's checksums (in place)."""
    for name, row in results.items():
        ref = row.get("numpy", {}).get("sums")
        for variant, res in row.items():
            if "sums" not in res:
                continue
            if name == "surrogate":
                res["ok"] = bool(res["sums"].get("finite", [0])[0])
            elif variant == "numpy":
                res["ok"] = True
            else:
                res["ok"] = bool(ref) and _agree(res["sums"], ref)


def _cell(res: dict | None, base: float | None, why: str = "n/a") -> str:
    if not res:
        return why
    if "error" in res:
        return "failed"
    t = res["time"]
    text = f"{t / base:.2f} ({_fmt_time(t)})" if base else _fmt_time(t)
    if not res.get("ok", True):
        text += " MISMATCH"
    return text


def _report(meta: dict, results: dict, png_name: str | None) -> str:
    P = meta["ranks"]
    labels = _labels(P)
    lines = [f"# darray bench: {meta['size']} ({meta['date']})", ""]
    lines += [f"Command: `{meta['command']}`", ""]
    lines += ["## Machine", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in meta["machine"]]
    la = meta["loadavg"]
    middle = f"; before the {P}-rank part {la['parallel']}" if meta["parallel_ran"] else ""
    lines += [f"| load average (1, 5, 15 min) | start {la['start']}{middle}; end {la['end']} |", ""]
    reps = f"{meta['reps']} reps" if meta["reps"] > 1 else "1 rep"
    lines += ["## Results", "",
              f"Time relative to NumPy on one process (below 1 is faster), median of {reps} after one warm-up, "
              "absolute median time in parentheses. "
              + (f"`da{P}/hand{P}`: darray on {P} ranks over the hand-written mpi4py + NumPy code on {P} ranks "
                 "(the bar; 1.00 = as fast). " if meta["parallel_ran"] else "")
              + meta["parallel_status"], ""]
    cols = ["numpy", "darray1", "darrayP", "handP", "dask"]
    lines.append("| workload | size | " + " | ".join(labels[c] for c in cols) + f" | da{P}/hand{P} |")
    lines.append("|---|---|" + "---|" * (len(cols) + 1))
    for name, row in results.items():
        w = WORKLOADS[name]
        base = row.get("numpy", {}).get("time") if row.get("numpy", {}).get("ok", False) else None
        why = {c: "n/a" for c in cols}
        if not w.available():
            why = {c: "n/a (no darray.nn.surrogate)" for c in cols}
        elif w.numpy is None:
            why = {c: "n/a (darray only)" for c in cols}
        elif w.dask is None:
            why["dask"] = "n/a (no dask equivalent)"
        if "dask" not in meta["have"]:
            why["dask"] = meta["dask_status"]
        if not meta["parallel_ran"]:
            why["darrayP"] = why["handP"] = "not run"
        dp, hp = row.get("darrayP"), row.get("handP")
        bar = f"{dp['time'] / hp['time']:.2f}" if dp and hp and "time" in dp and "time" in hp else "n/a"
        cells = [_cell(row.get(c), base, why[c]) for c in cols]
        lines.append(f"| {w.title} | {w.size(meta['sizes'])} | " + " | ".join(cells) + f" | {bar} |")
    lines += ["", "## Peak RSS per rank (MiB)", "",
              "VmHWM of each process over the warm-up and timed calls of one variant (its inputs resident "
              "plus what the operation allocates; building the inputs and the check are excluded), including "
              "the interpreter and imported modules.", ""]
    lines.append("| workload | " + " | ".join(labels[c] for c in cols) + " |")
    lines.append("|---|" + "---|" * len(cols))
    for name, row in results.items():
        cells = []
        for c in cols:
            res = row.get(c)
            cells.append(" / ".join(f"{v:.0f}" for v in res["rss_mb"]) if res and "rss_mb" in res else "-")
        lines.append(f"| {WORKLOADS[name].title} | " + " | ".join(cells) + " |")
    notes = []
    for name, row in results.items():
        seen = []
        for c in cols:
            res = row.get(c) or {}
            if res.get("note") and res["note"] not in seen:
                seen.append(res["note"])
            if res.get("error"):
                seen.append(f"{labels[c]} FAILED: `{res['error']}`")
            if res and "ok" in res and not res["ok"]:
                seen.append(f"{labels[c]}: the result does NOT match NumPy's")
        if seen:
            notes.append(f"- {WORKLOADS[name].title}: " + "; ".join(seen))
    lines += ["", "## Notes", "",
              "- Same data for every peer, built from index formulas; every result checked against NumPy's "
              "by a position-weighted checksum outside the timed region.",
              f"- {P}-rank timings: barriers before and after each call, the per-rep maximum over ranks. "
              "The NumPy, darray-1-rank and Dask columns run in one process, before the "
              f"{P}-rank job, so the runs never overlap.",
              f"- {P}-rank job: darray limits each rank's BLAS/OpenMP threads to cores // ranks per node "
              "(darray._threads; the hand-written code runs in the same processes and shares the limit); "
              "the 1-process columns use the libraries' default threads.",
              "- The machine may be shared: compare the load average above with the core count "
              "before reading small differences (10-15 % noise is usual)."]
    lines += notes
    if png_name:
        lines += ["", f"![ratios vs NumPy]({png_name})"]
    return "\n".join(lines) + "\n"


def _plot(path: Path, meta: dict, results: dict) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    P = meta["ranks"]
    labels = _labels(P)
    cols = ["darray1", "darrayP", "handP", "dask"]
    names = [n for n, row in results.items() if row.get("numpy", {}).get("time")]
    if not names:
        return False
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(names) + 2), 4.2))
    width = 0.8 / len(cols)
    for k, c in enumerate(cols):
        xs, ys = [], []
        for i, n in enumerate(names):
            res, base = results[n].get(c), results[n]["numpy"]["time"]
            if res and "time" in res:
                xs.append(i + (k - (len(cols) - 1) / 2) * width)
                ys.append(res["time"] / base)
        if xs:
            ax.bar(xs, ys, width, label=labels[c])
    ax.axhline(1.0, color="black", linewidth=0.8, label=labels["numpy"])
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([WORKLOADS[n].title.replace("`", "") for n in names], rotation=20, ha="right", fontsize=8)
    ax.set_yscale("log")
    floor = 0.05  # e.g. a redistribution that is a no-op on 1 rank: clip instead of squashing the other bars
    if ax.get_ylim()[0] < floor:
        ax.set_ylim(bottom=floor)
    ax.set_ylabel("time / NumPy (log; below 1 is faster)")
    ax.set_title(f"darray bench, {meta['size']}: 1 vs {P} ranks (load avg {meta['loadavg']['start']})",
                 fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _target(out: Path, date: str, label: str) -> Path:
    stem = f"{date}-{label}"
    path = out / f"{stem}.md"
    k = 2
    while path.exists():
        path = out / f"{stem}-{k}.md"
        k += 1
    return path


def _command_line() -> str:
    head = "python -m darray.bench" if sys.argv[0].endswith("bench.py") else Path(sys.argv[0]).name
    return " ".join([head, *sys.argv[1:]])


def _loadavg() -> str:
    try:
        return ", ".join(f"{v:.2f}" for v in os.getloadavg())
    except OSError:
        return "unknown"


# ---------------------------------------------------------------------------------------- the child job --
def _find_mpiexec() -> str | None:
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


def _run_child(P: int, config: dict, timeout: float | None, say) -> tuple[dict | None, dict, str]:
    """Run the P-rank part in ``mpiexec -n P``; (results, mpi facts, status line)."""
    mpiexec = _find_mpiexec()
    if mpiexec is None or importlib.util.find_spec("mpi4py") is None:
        return None, {}, f"The {P}-rank part was not run: mpiexec or mpi4py is missing."
    with tempfile.TemporaryDirectory(prefix="darray-bench-") as tmp:
        cfg_path, res_path = Path(tmp) / "config.json", Path(tmp) / "result.json"
        config = {**config, "result": str(res_path)}
        cfg_path.write_text(json.dumps(config))
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parent.parent)
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


def _worker(config_path: str) -> int:
    config = json.loads(Path(config_path).read_text())
    from mpi4py import MPI

    rank = MPI.COMM_WORLD.Get_rank()
    say = (lambda *a: print(*a, flush=True)) if rank == 0 else (lambda *a: None)
    results = _phase_parallel(config["sizes"], config["names"], config["reps"], say)
    facts = _mpi_facts()
    if rank == 0:
        Path(config["result"]).write_text(json.dumps({"results": results, "mpi": facts}))
    return 0


# ----------------------------------------------------------------------------------------------- main --
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
        return _worker(args.worker)
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
    from darray._comm import launched_by_mpi

    under_mpi = launched_by_mpi()
    rank, P = 0, max(1, args.ranks)
    world = None
    if under_mpi:
        from mpi4py import MPI

        world = MPI.COMM_WORLD
        rank, P = world.Get_rank(), world.Get_size()
    say = (lambda *a: print(*a, flush=True)) if rank == 0 else (lambda *a: None)
    have = {"dask"} if (not args.no_dask and importlib.util.find_spec("dask") is not None) else set()
    loadavg = {"start": _loadavg()}
    say(f"darray bench --size {size}: load average {loadavg['start']} on {os.cpu_count()} CPUs")
    t_start = time.perf_counter()

    # one-process part: NumPy, darray on 1 rank, Dask (rank 0 only; other ranks sleep, not spin)
    serial: dict = {}
    if rank == 0:
        serial = _phase_serial(sz, names, reps, "dask" in have, say)
    if world is not None:
        req = world.Ibarrier()
        while not req.Test():
            time.sleep(0.01)
    serial_s = time.perf_counter() - t_start

    parallel, facts, status = None, {}, f"The {P}-rank part was skipped (--ranks {P})."
    loadavg["parallel"] = _loadavg()
    if world is not None and P > 1:
        parallel = _phase_parallel(sz, names, reps, say)
        facts = _mpi_facts()
        status = f"The {P}-rank part ran in this mpiexec job."
    elif world is None and P > 1:
        timeout = args.timeout if args.timeout is not None else 120.0 + 20.0 * serial_s
        parallel, facts, status = _run_child(P, {"sizes": sz, "names": names, "reps": reps}, timeout, say)
    elif world is not None:
        facts = _mpi_facts()
    if rank != 0:
        return 0

    results = {n: dict(serial.get(n, {})) for n in names}
    for n in names:
        results[n].update((parallel or {}).get(n, {}))
    _verdicts(results)
    loadavg["end"] = _loadavg()
    date = datetime.date.today().isoformat()
    label = re.sub(r"[^A-Za-z0-9_.-]+", "-", args.label or f"{size}-{os.cpu_count()}cpu")
    out = Path(args.out) if args.out else default_out_dir("bench")
    out.mkdir(parents=True, exist_ok=True)
    path = _target(out, date, label)
    dask_status = "not run (--no-dask)" if args.no_dask else "n/a (dask not installed)"
    meta = {"size": size, "sizes": sz, "date": date, "reps": reps, "ranks": P, "have": sorted(have),
            "dask_status": dask_status, "command": _command_line(), "parallel_ran": parallel is not None,
            "machine": _machine(facts), "loadavg": loadavg, "parallel_status": status,
            "seconds": round(time.perf_counter() - t_start, 1)}
    png = path.with_suffix(".png")
    png_ok = _plot(png, meta, results)
    path.write_text(_report(meta, results, png.name if png_ok else None))
    path.with_suffix(".json").write_text(json.dumps({"meta": meta, "results": results}, indent=1, default=str))
    say(f"wrote {path}" + (f" and {png.name}" if png_ok else "") + f" ({meta['seconds']} s)")
    bad = [f"{n}/{v}" for n, row in results.items() for v, res in row.items()
           if res.get("ok") is False or "error" in res]
    if bad:
        say(f"darray bench: {len(bad)} variant(s) failed or did not match NumPy: {', '.join(bad)}")
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="darray bench", description=__doc__.split("\n\n")[0])
    configure(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
