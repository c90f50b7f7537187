"""An uncaught exception under MPI: one report for the whole job, then the job ends.

Under ``mpiexec -n 4 python job.py`` (or ``darray run``) every rank runs the
script, so an error in replicated metadata (``x[:, :10] + x``) is raised on
every rank at once, and each rank printing its traceback tangles four of them
on the terminal. :func:`install_error_hook` (run by ``import darray`` under an
MPI launcher, and again when the MPI communicator is made) makes
:func:`report` report first in darray's ``sys.excepthook``
(:mod:`darray._excepthook`) on every rank:

1. the rank formats its traceback with darray's internal frames folded
   into a line (:func:`darray._errors.format_error`; ``DARRAY_DEBUG=1``
   keeps them) and
   sends it to every other rank on the job's private communicator
   (:class:`~darray._comm.watch.Departures`, tag :data:`ERROR_TAG`);
2. it collects the others' reports until every other rank has reported,
   left, or waits for it in a darray call (a slow wait tells the ranks it
   waits for where it is, after half a second), or for :data:`GATHER`
   seconds at most;
3. the lowest rank that raised prints one report: each distinct traceback
   once, with the ranks that raised it (``the same error on ranks 1-3``), and
   the ranks that raised nothing (where they wait, when they said);
4. the printing rank calls ``MPI_Abort``, which ends every rank at once
   (status 1), so no rank waits forever for one that failed.

Ctrl-C (``KeyboardInterrupt`` on every rank) prints one line,
``darray: interrupted on rank 0; job aborted``, and every rank exits with
status 130. ``DARRAY_ABORT_ON_ERROR=0`` leaves the report out: every rank
prints its own traceback, darray's frames folded as on one process.

>>> ranges([1, 2, 3, 5])
'ranks 1-3, 5'
"""

from __future__ import annotations

import json
import os
import sys
import time

from .. import _debug
from .. import _excepthook as excepthook
from .._errors import format_error

__all__ = ["install_error_hook", "install_abort_hook", "report", "ranges", "compose", "ERROR_TAG", "GATHER",
           "INTERRUPT_MEET"]

#: Tag of an uncaught exception's report on the private communicator (watch uses 1 and 2).
ERROR_TAG = 3
#: Seconds at most that a failing rank collects the other ranks' reports before one is printed and the job ends
#: (less when every other rank reported, left, or waits for this one: a slow wait says so within 0.5 s).
GATHER = 5.0
#: Seconds a rank that does not print waits for the printing rank to end the job before it ends it itself.
PRINTER_PATIENCE = 10.0
#: Seconds between the report and the abort: MPICH's launcher forwards each rank's output from a pipe, and an
#: abort right after the write can end the job before the report reached the terminal.
FORWARDING = 0.5
#: Seconds an interrupted rank waits for the others to be interrupted too, so that they all exit together.
INTERRUPT_MEET = 2.0

_communicator = None  # the job's MPICommunicator, once made (install_abort_hook)


def ranges(ranks) -> str:
    """``ranks 1-3, 5`` / ``rank 2``: sorted ranks with runs collapsed."""
    ranks = sorted(ranks)
    runs: list[list[int]] = []
    for r in ranks:
        if runs and r == runs[-1][1] + 1:
            runs[-1][1] = r
        else:
            runs.append([r, r])
    text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)
    return ("rank " if len(ranks) == 1 else "ranks ") + text


def compose(reports: dict[int, str], size: int, waiting: dict[int, str] | None = None) -> str:
    """The one report of a job of ``size`` ranks from ``{rank: traceback text}``: each distinct traceback once.

    ``waiting`` says, for ranks that raised nothing, in which darray call they wait.

    Examples
    --------
    >>> text = compose({0: "Traceback...\\nValueError: bad\\n", 1: "Traceback...\\nValueError: bad\\n"}, 3)
    >>> print(text, end="")
    darray: uncaught exception on rank 0 of 3 (the same error on rank 1); aborting the job
    Traceback...
    ValueError: bad
    darray: rank 2 raised nothing (still running, or waiting for the others)
    """
    groups: dict[str, list[int]] = {}
    for rank in sorted(reports):
        groups.setdefault(reports[rank], []).append(rank)
    silent = sorted(set(range(size)) - set(reports))
    lines = []
    if len(groups) == 1:
        (text, ranks), = groups.items()
        same = f" (the same error on {ranges(ranks[1:])})" if len(ranks) > 1 else ""
        lines.append(f"darray: uncaught exception on rank {ranks[0]} of {size}{same}; aborting the job\n{text}")
    else:
        lines.append(f"darray: uncaught exceptions on {len(reports)} of {size} ranks, {len(groups)} different "
                     f"errors; aborting the job\n")
        for text, ranks in groups.items():
            lines.append(f"darray: on {ranges(ranks)}:\n{text}")
    waiting = waiting or {}
    places: dict[str, list[int]] = {}
    for rank in silent:
        if rank in waiting:
            places.setdefault(waiting[rank], []).append(rank)
    for place, ranks in places.items():
        lines.append(f"darray: {ranges(ranks)} raised nothing; {'it waits' if len(ranks) == 1 else 'they wait'} "
                     f"in {place}\n")
    silent = [rank for rank in silent if rank not in waiting]
    if silent:
        lines.append(f"darray: {ranges(silent)} raised nothing (still running, or waiting for the others)\n")
    return "".join(lines)


def install_error_hook() -> None:
    """Make :func:`report` report first in darray's ``sys.excepthook`` (not with ``DARRAY_ABORT_ON_ERROR=0``).

    The hook (:mod:`darray._excepthook`) is the one that folds darray's
    frames on one process and hands what it does not print to the hook it
    replaced.
    """
    if os.environ.get("DARRAY_ABORT_ON_ERROR", "1") == "0":
        return
    excepthook.install(report)


def install_abort_hook(comm) -> None:
    """Record the job's MPICommunicator ``comm`` for the report and install the hook (size > 1 only)."""
    global _communicator
    if os.environ.get("DARRAY_ABORT_ON_ERROR", "1") == "0" or comm.size == 1:
        return
    if comm.root is comm:
        _communicator = comm
    install_error_hook()


def _job():
    """The job's MPICommunicator, made now if no darray array made it yet; None on one rank."""
    if _communicator is None:
        from . import default_communicator

        default_communicator()  # (an MPI one calls install_abort_hook, which records it)
    return _communicator


def report(kind, value, tb) -> bool:
    """``sys.excepthook`` under MPI: one report for the job's ranks, then end the job (module docstring).

    Returns False, having printed nothing, on one rank (:mod:`darray._excepthook` prints there).
    """
    if value is None:
        value = kind()
    if value.__traceback__ is None and tb is not None:
        value = value.with_traceback(tb)
    comm = _job()
    if comm is None:  # one rank: darray's hook for one process prints
        return False
    if issubclass(kind, KeyboardInterrupt) and not _debug.enabled:
        _interrupted(comm)
    departures = comm.departures
    reports, waiting = _gather(departures, format_error(value, _debug.enabled))
    sys.stdout.flush()
    if departures.rank == min(reports):
        sys.stderr.write(compose(reports, departures.size, waiting))
    else:  # the lowest rank that raised prints and aborts the job, which ends this rank too
        time.sleep(PRINTER_PATIENCE)
        sys.stderr.write(f"darray: uncaught exception on rank {departures.rank}; aborting the job\n"
                         f"{reports[departures.rank]}")
    sys.stderr.flush()
    time.sleep(FORWARDING)  # (the launcher forwards what the ranks wrote; an abort at once may drop it)
    _abort(comm)
    return True  # (not reached: the job ends)


def _abort(comm, status: int = 1) -> None:
    """``MPI_Abort`` with ``status``, without MPICH's own line about it (the report said it all).

    One rank's ``MPI_Abort`` ends the job at once and alike under every
    launcher; ranks that each exit by themselves race the launcher, which
    kills the ones still running (with a banner) as soon as one has gone.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
    except OSError:
        pass
    comm.MPI.COMM_WORLD.Abort(status)  # (the job's world: MPICH's abort of a duplicate may race its launcher)


def _gather(departures, text: str) -> tuple[dict[int, str], dict[int, str]]:
    """Send this rank's ``text`` to every other rank; collect theirs: ``({rank: text}, {rank: where it waits})``.

    Collects until every other rank has reported, left, or waits for this rank
    in a darray call (a slow wait tells the ranks it waits for where it is:
    :class:`~darray._comm.watch.Departures`), or for :data:`GATHER` seconds.
    """
    MPI, comm, me = departures.MPI, departures.comm, departures.rank
    data = bytearray(json.dumps({"rank": me, "text": text}).encode())
    sends = [comm.Isend([data, MPI.BYTE], dest=r, tag=ERROR_TAG) for r in range(departures.size) if r != me]
    reports, waiting = {me: text}, {}
    status = MPI.Status()
    deadline = time.monotonic() + GATHER
    while time.monotonic() < deadline:
        while comm.Iprobe(source=MPI.ANY_SOURCE, tag=ERROR_TAG, status=status):
            got = bytearray(status.Get_count(MPI.BYTE))
            comm.Recv([got, MPI.BYTE], source=status.Get_source(), tag=ERROR_TAG)
            try:
                told = json.loads(got.decode())  # (JSON: a report is text, never unpickled)
                reports[int(told["rank"])] = str(told["text"])
            except (ValueError, KeyError, TypeError):
                continue
        left = departures.poll()
        waiting = {r: str(seen["at"]) for r, seen in departures.seen.items()
                   if "id" in seen and me in seen.get("waits", ()) and r not in reports}
        if len(set(reports) | set(waiting) | left) >= departures.size:
            break
        time.sleep(1e-3)
    departures.pending_reports = (sends, data)  # (the buffer must outlive the sends)
    return reports, waiting


def _interrupted(comm) -> None:
    """Ctrl-C: rank 0 prints one line; every rank leaves with status 130 (128 + SIGINT), all at once.

    Ranks that exit one by one race ``mpiexec``, which kills those still running as soon as one has gone (and
    prints a banner for each), so the interrupted ranks first meet (:meth:`~darray._comm.watch.Departures.meet`,
    after rank 0 has printed), then rank 0 ends the job with one ``MPI_Abort`` (status 130, MPICH's own line
    left out, as :func:`report` does). A rank interrupted alone waits :data:`INTERRUPT_MEET` seconds for the
    others, then leaves and the ranks waiting for it raise :class:`~darray._debug.RanksLeft`.
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not interrupt the exit
    if comm.rank == 0:
        sys.stderr.write("darray: interrupted on rank 0; job aborted\n")
    sys.stdout.flush()
    sys.stderr.flush()
    if not comm.departures.meet(INTERRUPT_MEET):
        comm.departures.announce()
        os._exit(130)  # (interrupted alone: the others raise RanksLeft)
    if comm.rank == 0:  # one abort ends the met ranks at once: ranks exiting one by one race the launcher's banner
        time.sleep(FORWARDING)
        _abort(comm, 130)
    time.sleep(INTERRUPT_MEET + 10 * FORWARDING)  # (rank 0's abort ends this rank)
    os._exit(130)
