"""The event recorder behind :mod:`darray.tracer`: a module-level switch checked by every engine.

When tracing is off (the default) an instrumented call costs one global
lookup. Imports nothing from darray, so every layer may use it.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

__all__ = ["active", "record", "record_compute", "start", "stop", "span", "now", "label", "labelled"]

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


def record(kind: str, op: str, begin: float, end: float, nbytes: int = 0, peers=(), shape=(),
           overlapped: bool = False) -> None:
    """Append one event (call only when ``active is not None``)."""
    active.append({"kind": kind, "op": op, "start": begin, "seconds": end - begin, "nbytes": int(nbytes),
                   "peers": tuple(peers), "shape": tuple(shape), "overlapped": overlapped})


def record_compute(op: str, begin: float, mark: int, shape=()) -> None:
    """A compute event since ``begin``, minus the communication recorded after event ``mark``.

    Keeps compute and communication time disjoint when an operation (a
    reduction, say) communicates inside.
    """
    end = now()
    nested = sum(e["seconds"] for e in active[mark:] if e["kind"] == "comm")
    active.append({"kind": "compute", "op": op, "start": begin, "seconds": max(0.0, end - begin - nested),
                   "nbytes": 0, "peers": (), "shape": tuple(shape), "overlapped": False})


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
            if kind == "compute":
                record_compute(op, begin, mark, shape)
            else:
                record(kind, op, begin, now(), nbytes, peers, shape)


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
