"""The event recorder behind :mod:`darray.tracer`: a module-level switch checked by every engine.

When tracing is off (the default) an instrumented call costs one global
lookup. Imports nothing from darray, so every layer may use it.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

__all__ = ["active", "record", "record_compute", "record_overhead", "nested", "start", "stop", "span", "now", "label",
           "labelled"]

#: The list events are appended to while tracing, else None.
active: list | None = None
#: What the running point-to-point exchange is for ("halo", "redistribute", ...).
label: str = "exchange"

now = time.perf_counter


def start(events: list) -> list | None:
    """Begin recording into ``events``; returns the previous recorder (to restore on stop)."""
    global active
    previous, active = active, events
    return previous


def stop(previous: list | None) -> None:
    global active
    active = previous


def nested(mark: int | None) -> float:
    """Seconds of the events recorded after event ``mark`` (0 for None, or when the recorder changed since)."""
    if mark is None or mark > len(active):
        return 0.0
    return sum(e["seconds"] for e in active[mark:])


def record(kind: str, op: str, begin: float, end: float, nbytes: int = 0, peers=(), shape=(),
           overlapped: bool = False, mark: int | None = None) -> None:
    """Append one event (call only when ``active is not None``).

    With ``mark`` (``len(active)`` when the event began), the seconds of the
    events recorded since are left out, so that no second is counted twice:
    the events of a rank are disjoint pieces of its wall time. ``start`` and
    ``end`` are the event's span; ``seconds`` its own time, without the
    events inside it.
    """
    active.append({"kind": kind, "op": op, "start": begin, "end": end,
                   "seconds": max(0.0, end - begin - nested(mark)), "nbytes": int(nbytes), "peers": tuple(peers),
                   "shape": tuple(shape), "overlapped": overlapped})


def record_compute(op: str, begin: float, mark: int, shape=()) -> None:
    """A compute event since ``begin``, minus the events (communication, inner compute) recorded after ``mark``.

    Keeps compute and communication time disjoint when an operation (a
    reduction, say) communicates inside.
    """
    record("compute", op, begin, now(), shape=shape, mark=mark)


def record_overhead(op: str, begin: float, mark: int) -> None:
    """An ``overhead`` event: the seconds of a darray call since ``begin`` that no event after ``mark`` holds.

    That is darray's own Python around the recorded work (argument checks,
    layouts, dispatch), so that compute, communication and overhead of the
    call add up to its duration.
    """
    record("overhead", op, begin, now(), mark=mark)


@contextmanager
def span(kind: str, op: str, nbytes: int = 0, peers=(), shape=()):
    """Time a block as one event (no-op when tracing is off)."""
    if active is None:
        yield
        return
    begin, mark = now(), len(active)
    try:
        yield
    finally:
        if active is not None:
            record(kind, op, begin, now(), nbytes, peers, shape, mark=mark)


class _Labelled:
    """``with labelled(name):`` while tracing: names the exchanges inside, then restores the previous name."""

    __slots__ = ("name", "previous")

    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        global label
        self.previous, label = label, self.name

    def __exit__(self, *exc) -> None:
        global label
        label = self.previous


class _Unlabelled:
    """``with labelled(name):`` while not tracing: nothing (no generator to run on the hot paths)."""

    __slots__ = ()

    def __enter__(self):
        pass

    def __exit__(self, *exc) -> None:
        pass


_UNLABELLED = _Unlabelled()


def labelled(name: str):
    """Name the exchanges made inside the block (no-op when tracing is off)."""
    return _UNLABELLED if active is None else _Labelled(name)
