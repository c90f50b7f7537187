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
  (a blocking ``MPI_Allreduce`` would keep ``KeyboardInterrupt`` out until it returned);
* ranks that wait for each other in different darray calls (one rank sums
  over a cut axis while the other, which summed locally, gathers): after
  :data:`TELL_AFTER` seconds a slow wait tells the ranks it waits for where
  it is (:class:`Departures` carries these statuses too); when one of them
  waits, for this rank, in another call, neither can ever finish, and both
  raise :class:`~darray._debug.CollectiveMismatch` naming both calls;
* and a wait that is still slow after ``DARRAY_WAIT_NOTICE`` seconds (default
  :data:`NOTICE_AFTER`; ``0``: never) prints one line to stderr, naming the
  call, the ranks not arrived and where they were last seen, and goes on.

An MPI error in a wait (a message longer than its receive buffer: the ranks
passed buffers of different sizes) becomes a
:class:`~darray._debug.CollectiveMismatch`.

>>> where()[0]  # the darray function a wait belongs to ('' outside darray)
''
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import time

import numpy as np

from .. import _debug

__all__ = ["Departures", "wait", "mismatch", "share_cores", "where", "describe", "SPIN", "GRACE", "BYE_TAG",
           "WHERE_TAG", "TELL_AFTER", "NOTICE_AFTER"]

#: Seconds a wait spins on ``Test`` before it polls for departures and sleeps between tests.
SPIN = 2e-3
#: Seconds a wait still tests its requests after a departure was seen: messages the rank
#: sent before it left may still be on their way.
GRACE = 0.2
#: Tag of the exit announcement on the private communicator.
BYE_TAG = 1
#: Tag of a slow wait's status (where a rank waits, for whom) on the private communicator.
WHERE_TAG = 2
#: Seconds a wait is slow before it tells the ranks it waits for where it is.
TELL_AFTER = 0.5


def _notice_after() -> float | None:
    value = os.environ.get("DARRAY_WAIT_NOTICE", "").strip()
    seconds = float(value) if value else 30.0
    return seconds if seconds > 0 else None


#: Seconds after which a still-slow wait prints its one-line notice (``DARRAY_WAIT_NOTICE``; None: never).
NOTICE_AFTER: float | None = _notice_after()
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
        self.seen: dict[int, dict] = {}  # job rank -> its last status (a slow wait's, or that it ended)
        self._told: list = []  # status sends in flight, with their buffers
        self.serial = 0  # this rank's slow waits that told, counted
        atexit.register(self.announce)

    def poll(self) -> set[int]:
        """Receive the announcements (and slow waits' statuses) that arrived; return every rank that left so far."""
        MPI, status = self.MPI, self.MPI.Status()
        while self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=BYE_TAG, status=status):
            source = status.Get_source()
            self.comm.Recv(self._buf, source=source, tag=BYE_TAG)
            self.left.add(source)
        while self.comm.Iprobe(source=MPI.ANY_SOURCE, tag=WHERE_TAG, status=status):
            source = status.Get_source()
            data = bytearray(status.Get_count(MPI.BYTE))
            self.comm.Recv([data, MPI.BYTE], source=source, tag=WHERE_TAG)
            try:
                told = json.loads(data.decode())  # (JSON: a status is text, never unpickled)
            except ValueError:
                continue
            if told.get("raised"):  # (a wait that raised stays known, for the message of a rank that left after it)
                told["was"] = self.seen.get(source, {}).get("id") and self.seen[source]
            self.seen[source] = told
        return self.left

    def tell(self, status: dict, ranks) -> None:
        """Send this rank's ``status`` (where it waits, for whom; or that it stopped) to job ``ranks``."""
        data = bytearray(json.dumps(status).encode())
        MPI = self.MPI
        for r in ranks:
            if r != self.rank and r not in self.left:
                self._told.append((self.comm.Isend([data, MPI.BYTE], dest=r, tag=WHERE_TAG), data))
        self._told = [(q, d) for q, d in self._told if not q.Test()]  # (sent ones end; the rest keep their data)

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
        except Exception:  # the job is ending anyway: an announcement that fails is only lost
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
        mismatch(what, error)


def mismatch(what: str, error: BaseException):
    """Raise darray's :class:`~darray._debug.CollectiveMismatch` for an MPI ``error`` in a wait for ``what``."""
    raise _debug.CollectiveMismatch(
        f"{describe(what)}: MPI failed in the wait ({str(error).splitlines()[0][:160]}); the ranks passed "
        f"buffers of different sizes: they called different operations or passed different dtypes or "
        f"shapes; rerun with DARRAY_DEBUG=1 to name them") from None


def _slow(test, what, departures, expected, pending, start) -> None:
    timeout = _debug.wait_timeout
    if callable(expected):  # point-to-point waits name their peers only when slow
        expected = expected()
    status = _Status(what, departures, expected, pending, start) if departures is not None else None
    try:
        _slow_loop(test, what, departures, expected, pending, start, timeout, status)
    except BaseException:
        if status is not None:
            status.end(raised=True)
        raise
    if status is not None:
        status.end(raised=False)


def _slow_loop(test, what, departures, expected, pending, start, timeout, status) -> None:
    delay = 1e-5
    while not test():
        if status is not None:
            status.check()
        left = departures.poll() if departures is not None else set()
        if left and (expected is None or left & expected):
            end = time.monotonic() + GRACE
            while time.monotonic() < end:
                if test():
                    return
                time.sleep(1e-3)
            left = departures.poll()  # the others that left meanwhile (a script's end reaches all at once)
            gone = sorted(left if expected is None else left & expected)
            if status is not None:
                status.check(ended=True)  # (they left after waiting for this rank in another call: say so)
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


class _Status:
    """What one slow wait tells the ranks it waits for, and what it concludes from what they tell it."""

    def __init__(self, what: str, departures: Departures, expected, pending, start: float) -> None:
        self.what, self.departures, self.pending, self.start = what, departures, pending, start
        everyone = set(range(departures.size)) - {departures.rank}
        self.waits_for = everyone if expected is None else set(expected) - {departures.rank}
        self.told = False
        self.noticed = NOTICE_AFTER is None
        self.identity = ""

    def check(self, ended: bool = False) -> None:
        """Tell once the wait is :data:`TELL_AFTER` old; raise on a mutual wait in another call; notice once.

        ``ended``: ranks this one waits for left the job; if one of them last waited for this rank in
        another call, that is the reason to give.
        """
        waited = time.perf_counter() - self.start
        if ended:
            self._mutual(lambda status: status.get("was") or status)
            return
        if waited < TELL_AFTER or not self.waits_for:
            return
        departures = self.departures
        if not self.told:
            self.identity = f"{where()[0]}|{self.what}"  # (the call, not its line: ranks may branch to one call)
            departures.serial += 1
            departures.tell({"id": self.identity, "at": describe(self.what), "waits": sorted(self.waits_for),
                             "serial": departures.serial}, self.waits_for)
            self.told = True
        departures.poll()
        self._mutual(lambda status: status)
        self._notice(waited)

    def _mutual(self, last) -> None:
        """Raise if a rank this one waits for waits (or ``last`` waited) for this rank in another call."""
        departures = self.departures
        me = departures.rank
        if not self.identity:
            self.identity = f"{where()[0]}|{self.what}"
        for rank in sorted(self.waits_for):
            other = last(departures.seen.get(rank) or {})
            if other and "id" in other and me in other["waits"] and other["id"] != self.identity:
                raise _debug.CollectiveMismatch(
                    f"{describe(self.what)}: rank {rank} waits for this rank in {other['at']} while this rank waits "
                    f"for it here: neither can finish; every rank must make the same darray calls in the same "
                    f"order with the same arguments (axis, shapes, boundary, ...)")

    def _notice(self, waited: float) -> None:
        departures = self.departures
        me = departures.rank
        if not self.noticed and waited > NOTICE_AFTER:
            self.noticed = True
            missing = sorted(self.pending()) if self.pending is not None else sorted(self.waits_for)
            seen = "; ".join(f"rank {r} waits in {departures.seen[r]['at']}" if "at" in departures.seen.get(r, {})
                             else f"rank {r} is in no darray wait" for r in missing[:8])
            sys.stderr.write(f"darray: rank {me} has waited {waited:.0f} s in {describe(self.what)} for ranks "
                             f"{missing[:8]}{' ...' if len(missing) > 8 else ''} ({seen}); still waiting\n")
            sys.stderr.flush()

    def end(self, raised: bool) -> None:
        """The wait ended (``raised``: with an error): the ranks told must not take it for waiting any longer."""
        if self.told:
            self.departures.tell({"ended": self.departures.serial, "raised": raised}, self.waits_for)
