"""Waits that cannot hang silently: ranks that left, ``DARRAY_WAIT_TIMEOUT``, Ctrl-C.

Every wait of the MPI transport, point-to-point *and* collective (collectives
are started non-blocking), goes through :func:`wait`. It first spins on MPI's
``Test`` for :data:`SPIN` seconds, as MPI's own blocking calls spin, so a wait
that completes quickly costs what ``MPI_Wait`` costs. Only a longer wait
polls, with short sleeps, for what else can end it:

* a rank of the communicator announced that it left (:class:`Departures`: its
  interpreter is exiting, because the script ended or called ``sys.exit``,
  while this rank still expects it): :class:`~darray._debug.RanksLeft` on this
  rank within a fraction of a second, naming the operation and the ranks;
* ``DARRAY_WAIT_TIMEOUT`` seconds passed: ``TimeoutError``;
* Ctrl-C: Python runs its signal handler between two polls
  (a blocking ``MPI_Allreduce`` would keep ``KeyboardInterrupt`` out until it returned).

An MPI error in a wait (a message longer than its receive buffer: the ranks
passed buffers of different sizes) becomes a
:class:`~darray._debug.CollectiveMismatch`.

>>> where()[0]  # the darray function a wait belongs to ('' outside darray)
''
"""

from __future__ import annotations

import atexit
import os
import sys
import time

import numpy as np

from .. import _debug

__all__ = ["Departures", "wait", "share_cores", "where", "describe", "SPIN", "GRACE", "BYE_TAG"]

#: Seconds a wait spins on ``Test`` before it polls for departures and sleeps between tests.
SPIN = 2e-3
#: Seconds a wait still tests its requests after a departure was seen: messages the rank
#: sent before it left may still be on their way.
GRACE = 0.2
#: Tag of the exit announcement on the private communicator.
BYE_TAG = 1
_HERE = os.path.dirname(os.path.abspath(__file__))  # the transport: never the public function
_PACKAGE = os.path.dirname(_HERE)


class Departures:
    """Ranks of one job that announced their exit, on a private duplicate of the job's communicator.

    At interpreter exit (an ``atexit`` hook: the end of the script or ``sys.exit``)
    a rank sends its rank number to every other rank with a non-blocking send.
    Waiting ranks receive these announcements only while a wait is slow
    (:meth:`poll`), so they cost nothing otherwise. ``left`` holds ranks of the
    job's communicator.
    """

    def __init__(self, MPI, comm):
        self.MPI = MPI
        self.comm = comm.Dup()
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.left: set[int] = set()
        self.announced = False
        self._buf = np.zeros(1, dtype=np.int64)
        self._pid = os.getpid()  # a forked child (multiprocessing) is not a rank: it announces nothing
        atexit.register(self.announce)

    def poll(self) -> set[int]:
        """Receive the announcements that arrived; return every rank that left so far."""
        MPI, status = self.MPI, self.MPI.Status()
        while self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=BYE_TAG, status=status):
            source = status.Get_source()
            self.comm.Recv(self._buf, source=source, tag=BYE_TAG)
            self.left.add(source)
        return self.left

    def announce(self) -> None:
        """Tell every other rank that this one is leaving (once; a few eager 8-byte sends)."""
        if self.announced or self.size == 1 or os.getpid() != self._pid:
            return
        self.announced = True
        MPI = self.MPI
        try:
            if MPI.Is_finalized():
                return
            message = np.asarray([self.rank], dtype=np.int64)
            requests = [self.comm.Isend(message, dest=r, tag=BYE_TAG) for r in range(self.size) if r != self.rank]
            deadline = time.monotonic() + 0.5
            while not MPI.Request.Testall(requests) and time.monotonic() < deadline:
                time.sleep(1e-4)
            for request in requests:
                if request:
                    request.Free()
        except Exception:  # noqa: BLE001 - the job is ending anyway: an announcement that fails is only lost
            pass

    def meet(self, timeout: float) -> bool:
        """Wait, at most ``timeout`` seconds, until every rank called ``meet``; True if they all did.

        Ctrl-C reaches every rank, but not at the same moment. ``mpiexec`` kills
        the other ranks as soon as one exits (and may print a banner for each),
        so interrupted ranks meet here first and then exit within microseconds
        of each other. A rank interrupted alone gives up after ``timeout``.
        """
        if self.size == 1:
            return True
        MPI = self.MPI
        try:
            request = self.comm.Ibarrier()
            deadline = time.monotonic() + timeout
            while not request.Test():
                if time.monotonic() > deadline:
                    return False
                if _yield_core:
                    os.sched_yield()
            return True
        except MPI.Exception:  # the job is ending anyway
            return False


#: Frames that wrap a public function (their ``name`` local says which) or only dispatch to one.
_WRAPPERS = {"call", "traced"}
_DISPATCH = {"array_function", "impl", "wrapper", "inner"}


def where() -> tuple[str, str]:
    """(the public darray function being run, ``file:line`` of the user code calling it).

    The outermost darray frame with a public name (a wrapper's ``name``)
    gives the function; the first frame outside the package (and NumPy's
    dispatch) the call site. Computed only for messages and under
    ``DARRAY_DEBUG``.
    """
    frame = sys._getframe(1)
    name, site = "", ""
    while frame is not None:
        code = frame.f_code
        path = os.path.abspath(code.co_filename)
        if path.startswith(_PACKAGE + os.sep):
            if code.co_name in _WRAPPERS:
                local = frame.f_locals
                wrapped = local.get("name") if isinstance(local.get("name"), str) else getattr(
                    local.get("func"), "__name__", "")
                if wrapped and not wrapped.startswith("_") and wrapped not in _WRAPPERS:
                    name = wrapped
            elif not (code.co_name.startswith("_") or "<" in code.co_name or code.co_name in _DISPATCH
                      or path.startswith(_HERE)):
                name = code.co_name
        elif os.sep + "numpy" + os.sep not in path:
            site = f"{os.path.basename(path)}:{frame.f_lineno}"
            break
        frame = frame.f_back
    return name, site


def describe(what: str) -> str:
    """``what`` with the public function and the call site: ``darray.sum (allreduce.sum) called at job.py:12``."""
    name, site = where()
    text = f"darray.{name} ({what})" if name else what
    return text + (f" called at {site}" if site else "")


#: Whether a spinning wait yields its core after each test (set by :func:`share_cores`).
_yield_core = False


def share_cores(oversubscribed: bool) -> None:
    """Make waits yield the core between tests when this node runs more ranks than it has cores.

    A rank spinning on ``Test`` there takes the core that the rank it waits
    for needs (``mpiexec -n 4`` on 2 cores: CI, laptops); with a core per
    rank the spin answers fastest and stays.
    """
    global _yield_core
    _yield_core = bool(oversubscribed) and hasattr(os, "sched_yield")


def wait(test, what: str, departures: Departures | None, expected=None, pending=None) -> None:
    """Return when ``test()`` is true; raise when the ranks it waits for left, time ran out, or MPI failed.

    ``test`` completes the requests when they are done (``Request.Test`` /
    ``Testall``); ``what`` names the operation (``"allreduce.sum"``);
    ``expected`` holds the job ranks whose departure ends the wait (None:
    any; or a function returning them, called only if the wait is slow);
    ``pending()`` the job ranks still missing, for the timeout message.
    """
    try:
        if test():  # (already there: no clock)
            return
        clock = time.perf_counter
        start = clock()
        while clock() - start < SPIN:
            if test():
                return
            if _yield_core:  # more ranks than cores: the rank this one waits for may need this core
                os.sched_yield()
        _slow(test, what, departures, expected, pending, start)
    except Exception as error:
        if not type(error).__module__.startswith("mpi4py"):
            raise
        raise _debug.CollectiveMismatch(
            f"{describe(what)}: MPI failed in the wait ({str(error).splitlines()[0][:160]}); the ranks passed "
            f"buffers of different sizes: they called different operations or passed different dtypes or "
            f"shapes; rerun with DARRAY_DEBUG=1 to name them") from None


def _slow(test, what, departures, expected, pending, start) -> None:
    timeout = _debug.wait_timeout
    if callable(expected):  # point-to-point waits name their peers only when slow
        expected = expected()
    delay = 1e-5
    while not test():
        left = departures.poll() if departures is not None else set()
        if left and (expected is None or left & expected):
            end = time.monotonic() + GRACE
            while time.monotonic() < end:
                if test():
                    return
                time.sleep(1e-3)
            left = departures.poll()  # the others that left meanwhile (a script's end reaches all at once)
            gone = sorted(left if expected is None else left & expected)
            raise _debug.RanksLeft(
                f"{describe(what)}: rank(s) {gone} left the job (the script ended or called sys.exit there) while "
                f"this rank waited for them; every rank must make the same darray calls (one inside "
                f"`if rank == ...:`?)")
        if timeout is not None and time.perf_counter() - start > timeout:
            who = f"rank(s) {sorted(pending())}" if pending is not None else "the other ranks"
            raise TimeoutError(
                f"{describe(what)}: no answer from {who} after {timeout} s (DARRAY_WAIT_TIMEOUT); they may have "
                f"failed, be busy, or be in another collective")
        time.sleep(delay)
        delay = min(2 * delay, 2e-4)  # a slow wait answers within 0.2 ms of its completion
