"""The workloads of ``darray bench``: each one a NumPy, darray, hand-written mpi4py and Dask variant.

A variant is a factory: given a :class:`~darray.bench.harness.Ctx` (the sizes
and where it runs) it builds its inputs from the index formulas of
:mod:`darray.bench.data` and returns a :class:`~darray.bench.harness.Case`
(the call to time, and how to checksum its result). :data:`WORKLOADS` is the
table of them, :data:`SIZES` their sizes per ``--size``.

The Jacobi sweep (W2) is also public, kernel by kernel, for
``benchmarks/bench_stencil.py``: :func:`jacobi_block`, :func:`jacobi_numpy`,
:func:`jacobi_darray`, :func:`jacobi_hand`, :func:`jacobi_dask`.

Examples
--------
>>> u = jacobi_numpy(dense("field8", (8, 8)), 2)
>>> u.shape
(8, 8)
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

import darray as da

from .. import readme_example
from .data import balanced_rows, checksum, dense, row_block, whole
from .harness import Case, Ctx

__all__ = ["SIZES", "WORKLOADS", "Workload", "jacobi_block", "jacobi_darray", "jacobi_dask", "jacobi_hand",
           "jacobi_numpy", "labels"]

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


def labels(P: int) -> dict[str, str]:
    """The column titles of the variants, with ``P`` ranks in the parallel part."""
    ranks = f"{P} rank" + ("s" if P != 1 else "")
    return {"numpy": "NumPy, 1 process", "darray1": "darray, 1 rank", "darrayP": f"darray, {ranks}",
            "handP": f"mpi4py + NumPy, {ranks}", "dask": "Dask, 2 threads"}


# ------------------------------------------------------------------------------------------ inputs --
def _darray_sums(ctx: Ctx, **named) -> dict:
    """Checksums of darray results (gathered on rank 0; other ranks return {})."""
    out = {}
    for key, value in named.items():
        full = value.gather(root=0)
        if ctx.rank == 0:
            out[key] = checksum(full, whole(full.shape))
    return out


def _local(ctx: Ctx, kind: str, shape) -> tuple[np.ndarray, tuple[slice, ...]]:
    """This rank's block of input ``kind`` cut along axis 0 (the hand-written cut), and where it is."""
    sl = row_block(shape, ctx.size, ctx.rank)
    return dense(kind, shape, sl), sl


def _from_rows(ctx: Ctx, kind: str, shape, **kw):
    """A darray input split along axis 0 in the hand-written cut (``from_local``: no copy)."""
    return da.from_local(_local(ctx, kind, shape)[0], split=0, shape=tuple(shape), comm=ctx.comm, **kw)


def _dask():
    import dask
    import dask.array as dsk

    return dask, dsk


def _chunks2(n: int) -> int:
    return max(1, (n + 1) // 2)


# ----------------------------------------------------------------------------------------- W1 a*b+c, sum --
def _w1_numpy(ctx):
    n = ctx.sz["w1"]
    a, b, c = (dense(k, (n,)) for k in ("w1a", "w1b", "w1c"))

    def run():
        r = a * b + c
        return r, float(np.sum(r))

    return Case(run, lambda out: {"r": checksum(out[0], whole((n,))), "s": [out[1]]})


def _w1_darray(ctx):
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

    return Case(run, lambda out: {"r": ctx.allsum(checksum(out[0], sl)), "s": [out[1]]})


def _w1_dask(ctx):
    dask, dsk = _dask()
    n = ctx.sz["w1"]
    a, b, c = (dsk.from_array(dense(k, (n,)), chunks=_chunks2(n)) for k in ("w1a", "w1b", "w1c"))
    return Case(lambda: float((a * b + c).sum().compute()), lambda s: {"s": [s]},
                note="Dask: the sum only (a*b+c is fused into it, never materialised)")


# ------------------------------------------------------------------------------------------- W2 Jacobi --
def jacobi_block(b: Any) -> Any:
    """One Jacobi sweep of a block with one ghost cell on each side (the owned cells of the result)."""
    return 0.25 * (b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:])


def jacobi_numpy(field: np.ndarray, iters: int) -> np.ndarray:
    """``iters`` periodic Jacobi sweeps of ``field`` with NumPy: pad by wrapping, sweep."""
    u = field
    for _ in range(iters):
        u = jacobi_block(np.pad(u, 1, mode="wrap"))
    return u


def jacobi_darray(u0: da.DArray, iters: int, bufs: tuple[da.DArray, da.DArray] | None = None) -> da.DArray:
    """``iters`` periodic Jacobi sweeps of ``u0`` (only read): ``map_overlap(..., out=)`` into two buffers in turn.

    ``bufs``: two arrays like ``u0`` with halo 1 (allocated here when omitted); the result is one of them.
    """
    bufs = bufs if bufs is not None else (da.empty_like(u0), da.empty_like(u0))
    u = u0
    for i in range(iters):
        v = bufs[i % 2]
        da.map_overlap(jacobi_block, u, depth=1, boundary="periodic", trim=False, out=v)
        u = v
    return u


def jacobi_hand(local: np.ndarray, iters: int, comm: Any) -> np.ndarray:
    """``iters`` periodic Jacobi sweeps by hand with mpi4py: ``local`` is this rank's rows of the field.

    Two padded buffers, swapped; ghost rows by two ``Sendrecv`` of edge rows per sweep, ghost columns by a
    local copy. Returns this rank's rows of the result.
    """
    rank, size = comm.Get_rank(), comm.Get_size()
    up, down = (rank - 1) % size, (rank + 1) % size
    n = local.shape[1]
    p, q = np.empty((local.shape[0] + 2, n + 2)), np.empty((local.shape[0] + 2, n + 2))
    p[1:-1, 1:-1] = local
    for _ in range(iters):
        comm.Sendrecv(p[1], dest=up, recvbuf=p[-1], source=down)
        comm.Sendrecv(p[-2], dest=down, recvbuf=p[0], source=up)
        p[:, 0], p[:, -1] = p[:, -2], p[:, 1]
        q[1:-1, 1:-1] = jacobi_block(p)
        p, q = q, p
    return p[1:-1, 1:-1]


def jacobi_dask(d0: Any, iters: int) -> Any:
    """``iters`` periodic Jacobi sweeps of the dask array ``d0``: one lazy graph, ``map_overlap`` per sweep."""
    u = d0
    for _ in range(iters):
        u = u.map_overlap(lambda b: np.pad(jacobi_block(b), 1), depth=1, boundary="periodic")
    return u


def _w2_numpy(ctx):
    n, iters = ctx.sz["w2"]
    field = dense(f"field{n}", (n, n))
    return Case(lambda: jacobi_numpy(field, iters), lambda u: {"u": checksum(u, whole((n, n)))})


def _w2_darray(ctx):
    n, iters = ctx.sz["w2"]
    u0 = _from_rows(ctx, f"field{n}", (n, n), halo=1, boundary="periodic")
    bufs = (da.empty_like(u0), da.empty_like(u0))  # u0 is only read, so every rep starts from the same field
    return Case(lambda: jacobi_darray(u0, iters, bufs), lambda u: _darray_sums(ctx, u=u),
                note="darray: map_overlap(depth=1, periodic, out=) per sweep, two buffers with halo 1")


def _w2_hand(ctx):
    n, iters = ctx.sz["w2"]
    local, sl = _local(ctx, f"field{n}", (n, n))
    return Case(lambda: jacobi_hand(local, iters, ctx.mpi), lambda u: {"u": ctx.allsum(checksum(u, sl))},
                note="hand: rows cut, two padded buffers, two Sendrecv of edge rows per sweep")


def _w2_dask(ctx):
    dask, dsk = _dask()
    n, iters = ctx.sz["w2"]
    d0 = dsk.from_array(dense(f"field{n}", (n, n)), chunks=(_chunks2(n), n))
    return Case(lambda: jacobi_dask(d0, iters).persist(), lambda u: {"u": checksum(u.compute(), whole((n, n)))},
                note="Dask: map_overlap(depth=1, periodic) per sweep, one graph, persisted")


# ------------------------------------------------------------------------------------ W3 mean+std axis 0 --
def _w3_numpy(ctx):
    m = ctx.sz["w3"]
    x = dense("mat", (m, m))
    return Case(lambda: (np.mean(x, axis=0), np.std(x, axis=0)),
                lambda out: {"mean": checksum(out[0], whole((m,))), "std": checksum(out[1], whole((m,)))})


def _w3_darray(ctx):
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
        return {"mean": checksum(out[0], whole((m,))), "std": checksum(out[1], whole((m,)))}

    return Case(run, summarize, note="hand: local column sums + Allreduce, two passes (as NumPy)")


def _w3_dask(ctx):
    dask, dsk = _dask()
    m = ctx.sz["w3"]
    x = dsk.from_array(dense("mat", (m, m)), chunks=(_chunks2(m), m))
    return Case(lambda: dask.compute(x.mean(axis=0), x.std(axis=0)),
                lambda out: {"mean": checksum(out[0], whole((m,))), "std": checksum(out[1], whole((m,)))})


# ------------------------------------------------------------------------------------------- W4 matmul --
def _w4_numpy(ctx):
    k = ctx.sz["w4"]
    a, b = dense("matA", (k, k)), dense("matB", (k, k))
    return Case(lambda: a @ b, lambda c: {"c": checksum(c, whole((k, k)))})


def _w4_darray(ctx):
    k = ctx.sz["w4"]
    a, b = _from_rows(ctx, "matA", (k, k)), _from_rows(ctx, "matB", (k, k))
    return Case(lambda: da.matmul(a, b), lambda c: _darray_sums(ctx, c=c),
                note="darray: both operands split along axis 0; matmul picks the algorithm")


def _w4_hand(ctx):
    k = ctx.sz["w4"]
    (a, sl), (b, _) = _local(ctx, "matA", (k, k)), _local(ctx, "matB", (k, k))
    counts = [(balanced_rows(k, ctx.size, r).stop - balanced_rows(k, ctx.size, r).start) * k for r in range(ctx.size)]
    displs = list(np.cumsum([0] + counts[:-1]))
    from mpi4py import MPI

    full_b = np.empty((k, k))

    def run():
        ctx.mpi.Allgatherv(b, [full_b, counts, displs, MPI.DOUBLE])
        return a @ full_b

    return Case(run, lambda c: {"c": ctx.allsum(checksum(c, sl))},
                note="hand: both split along axis 0; Allgatherv of B, then local A_rows @ B")


def _w4_dask(ctx):
    dask, dsk = _dask()
    k = ctx.sz["w4"]
    a = dsk.from_array(dense("matA", (k, k)), chunks=(_chunks2(k), k))
    b = dsk.from_array(dense("matB", (k, k)), chunks=(_chunks2(k), k))
    return Case(lambda: (a @ b).persist(), lambda c: {"c": checksum(c.compute(), whole((k, k)))})


# --------------------------------------------------------------------------- redistribution (transpose) --
def _rd_numpy(ctx):
    m = ctx.sz["redist"]
    x = dense("mat", (m, m))
    return Case(lambda: x.copy(), lambda y: {"y": checksum(y, whole((m, m)))},
                note="NumPy: one copy of the array (a process holds everything; the reference cost of moving "
                     "the bytes once)")


def _rd_darray(ctx):
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
    mine = balanced_rows(m, P, r)
    nrows = mine.stop - mine.start
    cols = [balanced_rows(m, P, q) for q in range(P)]
    scounts = [nrows * (c.stop - c.start) for c in cols]
    rcounts = [(c.stop - c.start) * (cols[r].stop - cols[r].start) for c in cols]  # q's rows x my columns
    sdispl = list(np.cumsum([0] + scounts[:-1]))
    rdispl = list(np.cumsum([0] + rcounts[:-1]))
    send = np.ascontiguousarray(np.concatenate([x[:, c].ravel() for c in cols]))  # packed once, untimed
    recv = np.empty(sum(rcounts))

    def run():
        ctx.mpi.Alltoallv([send, scounts, sdispl, MPI.DOUBLE], [recv, rcounts, rdispl, MPI.DOUBLE])
        return recv

    def summarize(buf):
        y = buf.reshape(m, cols[r].stop - cols[r].start)
        return {"y": ctx.allsum(checksum(y, (slice(0, m), cols[r])))}

    return Case(run, summarize, note="hand: raw Alltoallv of the same bytes (send buffer packed outside the timing)")


def _rd_dask(ctx):
    dask, dsk = _dask()
    m = ctx.sz["redist"]
    x = dsk.from_array(dense("mat", (m, m)), chunks=(_chunks2(m), m))
    return Case(lambda: x.rechunk((m, _chunks2(m))).persist(), lambda y: {"y": checksum(y.compute(),
                                                                                         whole((m, m)))},
                note="Dask: rechunk from row chunks to column chunks, persisted")


# ------------------------------------------------------------------------------------------------ sort --
def _sort_numpy(ctx):
    n = ctx.sz["sort"]
    x = dense("keys", (n,))
    return Case(lambda: np.sort(x), lambda y: {"y": checksum(y, whole((n,)))})


def _sort_darray(ctx):
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
        return {"y": ctx.allsum(checksum(y, (slice(offset, offset + y.size),)))}

    return Case(run, summarize, note="hand: sample sort (local sort, splitters by Allgather, Alltoallv, merge); "
                                     "blocks not rebalanced afterwards")


# ------------------------------------------------------------------------------------------------- fft --
def _fft_numpy(ctx):
    m = ctx.sz["fft"]
    x = dense("cplx", (m, m))
    return Case(lambda: np.fft.fft2(x), lambda y: {"y": checksum(y, whole((m, m)))})


def _fft_darray(ctx):
    m = ctx.sz["fft"]
    x = _from_rows(ctx, "cplx", (m, m))
    return Case(lambda: da.fft.fftn(x), lambda y: _darray_sums(ctx, y=y),
                note="darray: fftn(x), result back in x's layout (split along axis 0)")


def _fft_hand(ctx):
    m = ctx.sz["fft"]
    x, sl = _local(ctx, "cplx", (m, m))
    from mpi4py import MPI

    P, r = ctx.size, ctx.rank
    blocks = [balanced_rows(m, P, q) for q in range(P)]
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

    return Case(run, lambda y: {"y": ctx.allsum(checksum(y, sl))},
                note="hand: slab FFT, fft along rows, Alltoallv transpose, fft along columns, transpose back")


def _fft_dask(ctx):
    dask, dsk = _dask()
    m = ctx.sz["fft"]
    x = dsk.from_array(dense("cplx", (m, m)), chunks=(_chunks2(m), m))

    def run():
        y = dsk.fft.fft(x, axis=1).rechunk((m, _chunks2(m)))
        return dsk.fft.fft(y, axis=0).rechunk((_chunks2(m), m)).persist()

    return Case(run, lambda y: {"y": checksum(y.compute(), whole((m, m)))},
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
    n, iters = ctx.sz["readme"]
    return Case(lambda: readme_example.run(np, n, iters), lambda u: {"u": checksum(u, whole((n, n)))})


def _readme_darray(ctx):
    n, iters = ctx.sz["readme"]
    return Case(lambda: readme_example.run(da, n, iters), lambda u: _darray_sums(ctx, u=u),
                note="darray: the README's source unchanged (`import darray as np`), setup included")


def _readme_hand(ctx):
    n, iters = ctx.sz["readme"]

    def summarize(out):
        rows, sl = out
        return {"u": ctx.allsum(checksum(rows, (sl, slice(0, n))))}

    return Case(lambda: readme_example.hand_written(ctx.mpi, n, iters), summarize,
                note="hand: rows cut, one ghost row each side, two Sendrecv per sweep, setup included")


# ------------------------------------------------------------------------------------------- the table --
class Workload(NamedTuple):
    """One row of the report: its title, its size from the sizes, and a factory per variant (None: no such)."""

    title: str
    size: Callable[[dict], str]
    numpy: Callable[[Ctx], Case] | None
    darray: Callable[[Ctx], Case] | None
    hand: Callable[[Ctx], Case] | None
    dask: Callable[[Ctx], Case] | None
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
