"""Timing harness: the variants of a workload take turns, call by call (A B C A B C ...).

A shared machine's speed drifts over seconds: another job starts, the CPU
clock changes, the page cache fills. Timing all of variant A's repetitions in
one window and then all of B's lets such a drift land on one variant and read
as a difference between them. :func:`interleave` runs rounds instead: each
round calls every variant once, in turn (round 0 is the warm-up and is not
counted), so a slow stretch of the machine slows every variant alike and the
ratios between them hold. Under MPI every call is fenced by barriers on both
sides, its time is each rank's own and the maximum over the ranks is kept per
round; the statistic (median or best) is taken over the rounds.

:func:`measure` is ``darray bench``'s use of it: it builds every variant's
:class:`Case` first (all inputs resident at once, so that the calls can
alternate), times them interleaved, checks their results and records each
one's peak memory. ``benchmarks/bench_core.py`` and ``bench_stencil.py`` call
:func:`interleave` directly.

Examples
--------
>>> rounds = interleave([lambda: sum(range(100)), lambda: sorted(range(100))], reps=3)
>>> rounds.times.shape, rounds.outputs[0]
((3, 2), 4950)
>>> fmt_time(0.0123)
'12.3 ms'
"""

from __future__ import annotations

import gc
import re
import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

__all__ = ["Case", "Ctx", "Rounds", "fmt_time", "interleave", "max_over_ranks", "measure"]


class Ctx:
    """Where a variant runs: the sizes, the darray communicator (or None), the mpi4py communicator (or None)."""

    def __init__(self, sz: dict, comm: Any = None, mpi: Any = None) -> None:
        self.sz = sz
        self.comm = comm
        self.mpi = mpi
        self.rank = mpi.Get_rank() if mpi is not None else 0
        self.size = mpi.Get_size() if mpi is not None else 1

    def allsum(self, partial: np.ndarray) -> np.ndarray:
        """``partial`` summed over the ranks (collective under MPI)."""
        partial = np.ascontiguousarray(partial, dtype=np.float64)
        if self.mpi is None:
            return partial
        from mpi4py import MPI

        out = np.empty_like(partial)
        self.mpi.Allreduce(partial, out, op=MPI.SUM)
        return out


class Case(NamedTuple):
    """A variant ready to time: what a workload's factory returns for a :class:`Ctx`."""

    run: Callable[[], Any]                    # the timed call
    summarize: Callable[[Any], dict]          # collective; checksums (on rank 0 at least)
    per: int = 1                              # the time is divided by this (e.g. train steps)
    note: str = ""


class Rounds(NamedTuple):
    """What :func:`interleave` measured."""

    times: np.ndarray               # (reps, variants): seconds per call, maximum over ranks
    outputs: list[Any]              # each variant's result of its last call (None where it did not run)
    errors: list[Exception | None]  # the exception that dropped a variant (keep_going=True), else None
    growth_mb: list[float | None]   # the largest growth of resident memory during one call (None: not known)


def max_over_ranks(values: Any, mpi: Any = None) -> np.ndarray:
    """``values`` as float64, element-wise maximum over the ranks of ``mpi`` (collective; as is without MPI)."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    if mpi is None:
        return values
    from mpi4py import MPI

    out = np.empty_like(values)
    mpi.Allreduce(values, out, op=MPI.MAX)
    return out


def interleave(runs: Sequence[Callable[[], Any]], reps: int, *, mpi: Any = None, calls: int = 1,
               active: Sequence[bool] | None = None, keep_going: bool = False,
               track_rss: bool = False) -> Rounds:
    """Time ``runs`` in turn: ``reps + 1`` rounds, each calling every run once (``calls`` times), round 0 the warm-up.

    Parameters
    ----------
    runs : sequence of callables
        The variants, called without arguments.
    reps : int
        Counted rounds.
    mpi : mpi4py communicator, optional
        Barriers before and after every call; the times are the maximum over its ranks. Collective.
    calls : int
        Calls per variant per round; the time is per call (for calls too short to time one by one).
    active : sequence of bool, optional
        Per variant, whether this rank calls it; an inactive rank joins the barriers only (its time,
        about zero, never sets the maximum): e.g. NumPy on rank 0 against darray on every rank.
    keep_going : bool
        Record a variant's exception in :attr:`Rounds.errors` and drop it from the later rounds instead
        of raising (darray raises alike on every rank, so the ranks stay in step).
    track_rss : bool
        Record the growth of resident memory during each call (``/proc/self`` on Linux; None elsewhere).
    """
    if reps < 1 or calls < 1:
        raise ValueError(f"interleave: reps and calls must be at least 1; got reps={reps}, calls={calls}")
    k_all = len(runs)
    active = [True] * k_all if active is None else list(active)
    times = np.zeros((reps, k_all))
    outputs: list[Any] = [None] * k_all
    errors: list[Exception | None] = [None] * k_all
    growth: list[float | None] = [0.0 if track_rss else None] * k_all
    for rep in range(reps + 1):
        for k, fn in enumerate(runs):
            if errors[k] is not None:
                continue
            outputs[k] = None  # the previous result is freed before the call, not during it
            start = _reset_peak() if track_rss else None
            if mpi is not None:
                mpi.Barrier()
            t0 = time.perf_counter()
            try:
                if active[k]:
                    for _ in range(calls):
                        outputs[k] = fn()
            except Exception as error:  # recorded for the caller, which reports and goes on
                if not keep_going:
                    raise
                errors[k] = error
            t1 = time.perf_counter()
            if mpi is not None:
                mpi.Barrier()
            if rep:
                times[rep - 1, k] = (t1 - t0) / calls
            if track_rss:
                peak = _status_mb("VmHWM")
                known = None not in (start, peak, growth[k])
                growth[k] = max(growth[k], peak - start) if known else None
    return Rounds(max_over_ranks(times, mpi), outputs, errors, growth)


def measure(variants: Sequence[tuple[Callable[[Ctx], Case], Ctx]], reps: int) -> list[dict]:
    """Build every variant's case, time them interleaved, check them: one result per variant. Collective.

    A result has the median ``time`` per call over ``reps`` rounds and the ``times`` of every round,
    ``rss_mb`` (the peak resident memory of each rank over the variant's calls: the memory resident
    before any case was built, plus what building this variant's case added, plus the largest growth
    during one of its calls; the other variants' inputs, resident at the same time, are not counted),
    the checksums ``sums`` of its last result and its ``note``; or ``error`` when building, running or
    checking it raised. The variants' contexts share one mpi4py communicator (or none).
    """
    mpi = variants[0][1].mpi if variants else None
    gc.collect()
    base = _status_mb("VmRSS")
    cases: list[Case | None] = []
    inputs: list[float] = []
    results: list[dict] = []
    for factory, ctx in variants:
        before = _status_mb("VmRSS")
        try:
            cases.append(factory(ctx))
            results.append({})
        except Exception as error:  # a benchmark reports a failing variant and goes on
            cases.append(None)
            results.append(_failed(error))
        gc.collect()
        after = _status_mb("VmRSS")
        inputs.append(after - before if None not in (before, after) else 0.0)
    live = [k for k, case in enumerate(cases) if case is not None]
    rounds = interleave([cases[k].run for k in live], reps, mpi=mpi, keep_going=True, track_rss=True)
    for j, k in enumerate(live):
        case = cases[k]
        if rounds.errors[j] is not None:
            results[k] = _failed(rounds.errors[j])
            continue
        growth = rounds.growth_mb[j]
        rss = base + inputs[k] + growth if None not in (base, growth) else _peak_mb()
        try:
            sums = case.summarize(rounds.outputs[j])
        except Exception as error:
            results[k] = _failed(error)
            continue
        times = rounds.times[:, j] / case.per
        results[k] = {"time": float(np.median(times)), "times": [float(t) for t in times],
                      "rss_mb": mpi.allgather(rss) if mpi is not None else [rss],
                      "sums": {key: np.asarray(v).tolist() for key, v in sums.items()}, "note": case.note}
    del rounds, cases
    gc.collect()
    return results


def fmt_time(t: float) -> str:
    """Seconds as us, ms or s with three significant digits or so."""
    if t < 1e-3:
        return f"{t * 1e6:.1f} us"
    if t < 1.0:
        return f"{t * 1e3:.1f} ms"
    return f"{t:.2f} s"


def _failed(error: Exception) -> dict:
    return {"error": f"{type(error).__name__}: {error}"[:300]}


# ------------------------------------------------------------------------------------------ memory --
def _status_mb(field: str) -> float | None:
    """``field`` (``VmRSS``, ``VmHWM``) of ``/proc/self/status`` in MiB; None where there is no /proc."""
    try:
        with open("/proc/self/status") as fh:
            m = re.search(rf"{field}:\s+(\d+)\s*kB", fh.read())
    except OSError:
        return None
    return int(m.group(1)) / 1024.0 if m else None


def _reset_peak() -> float | None:
    """Reset the peak (``VmHWM``) to the resident memory now, and return that; None where not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return None
    return _status_mb("VmRSS")


def _peak_mb() -> float:
    """The peak resident memory of this process so far, in MiB."""
    peak = _status_mb("VmHWM")
    if peak is not None:
        return peak
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
