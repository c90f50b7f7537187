"""See the communication: record every message and local operation, per rank.

>>> import darray as da
>>> x = da.arange(100.0)
>>> with da.tracing() as t:
...     y = da.sum(x * 2)
>>> [e["op"] for e in t.events if e["kind"] == "compute"]
['multiply', 'sum']

``DARRAY_TRACE=1`` traces a whole script and prints the summary at exit
(``DARRAY_TRACE=path.json`` also writes a Chrome/Perfetto trace).
"""

from __future__ import annotations

import atexit
import json
import os
from collections import defaultdict

import numpy as np

from . import _recorder
from ._backend import to_numpy
from ._comm import Communicator, default_communicator
from ._files import write_text_safely

__all__ = ["Trace", "tracing"]


class Trace:
    """The events one rank recorded; ``summary()`` and ``to_chrome()`` combine all ranks (collective)."""

    def __init__(self, comm: Communicator | None = None):
        if comm is not None and not all(hasattr(comm, name) for name in ("rank", "size", "allgather", "allreduce")):
            raise TypeError(f"tracing: comm must be a darray Communicator; got {type(comm).__name__}")
        self.comm = comm
        self.events: list[dict] = []
        self._previous = None
        self.started = self.stopped = 0.0

    def __enter__(self) -> Trace:
        self.comm = self.comm or default_communicator()
        self.started = _recorder.now()
        self._previous = _recorder.start(self.events)
        return self

    def __exit__(self, *exc) -> None:
        _recorder.stop(self._previous)
        self.stopped = _recorder.now()

    # ------------------------------------------------------------ per rank
    def totals(self) -> dict:
        """This rank's seconds in compute and communication, bytes sent, and time per op."""
        out = {"compute": 0.0, "comm": 0.0, "nbytes": 0, "messages": 0, "wall": self.stopped - self.started}
        ops = defaultdict(lambda: [0, 0.0, 0])
        for e in self.events:
            out[e["kind"]] += e["seconds"]
            if e["kind"] == "comm":
                out["nbytes"] += e["nbytes"]
                out["messages"] += len(e["peers"])
            ops[(e["kind"], e["op"])][0] += 1
            ops[(e["kind"], e["op"])][1] += e["seconds"]
            ops[(e["kind"], e["op"])][2] += e["nbytes"]
        out["ops"] = dict(ops)
        return out

    # ------------------------------------------------------------ all ranks (collective)
    def summary(self, file=None, top: int = 8) -> dict:
        """Aggregate over ranks and print a table on rank 0 (every rank must call it).

        Reports per rank: compute, communication and waiting (load imbalance:
        wall time minus the rank's own busy time, relative to the busiest rank),
        bytes sent; and the most expensive operations over all ranks.
        """
        comm = self.comm or default_communicator()
        mine = self.totals()
        row = np.array([mine["compute"], mine["comm"], mine["wall"], mine["nbytes"], mine["messages"]])
        table = to_numpy(comm.allgather(row))
        all_ops = _allgather_ops(comm, mine["ops"])
        busiest = float(np.max(table[:, 0] + table[:, 1])) if len(table) else 0.0
        result = {
            "ranks": comm.size,
            "compute_s": table[:, 0].tolist(), "comm_s": table[:, 1].tolist(),
            "wait_s": [max(0.0, busiest - (c + m)) for c, m in zip(table[:, 0], table[:, 1])],
            "bytes_per_rank": table[:, 3].astype(np.int64).tolist(),
            "bytes_total": int(table[:, 3].sum()), "messages_total": int(table[:, 4].sum()),
            "top_ops": sorted(all_ops.items(), key=lambda kv: -kv[1][1])[:top],
        }
        if comm.rank == 0:
            print(_format(result), file=file, flush=True)
        return result

    def to_chrome(self, path: str) -> None:
        """Write a Chrome/Perfetto trace (one track per rank) on rank 0 (collective).

        The file is written atomically and never through a symlink found at
        ``path`` (:func:`darray._files.write_text_safely`).
        """
        comm = self.comm or default_communicator()
        events = _allgather_events(comm, self.events, self.started)
        if comm.rank == 0:
            out = []
            for rank, evs in enumerate(events):
                out.append({"name": "process_name", "ph": "M", "pid": rank, "args": {"name": f"rank {rank}"}})
                for e in evs:
                    out.append({"name": e["op"], "cat": e["kind"], "ph": "X", "pid": rank,
                                "tid": 0 if e["kind"] == "compute" else 1,
                                "ts": e["start"] * 1e6, "dur": max(e["seconds"] * 1e6, 0.01),
                                "args": {"nbytes": e["nbytes"], "peers": list(e["peers"]),
                                         "shape": list(e["shape"])}})
            # a fresh file renamed onto path: a symlink planted at path is replaced, never written through
            write_text_safely(path, json.dumps({"traceEvents": out, "displayTimeUnit": "ms"}))


def _allgather_ops(comm, ops: dict) -> dict:
    """Merge every rank's per-op totals (count, seconds, bytes) with fixed-size collectives."""
    keys = sorted(f"{k}:{o}" for (k, o) in ops)
    encoded = np.frombuffer(json.dumps(keys).encode().ljust(8192)[:8192], dtype=np.uint8).copy()
    every = to_numpy(comm.allgather(encoded))
    merged: dict = {}
    for r in range(every.shape[0]):
        names = json.loads(bytes(every[r]).decode().strip() or "[]")
        for name in names:
            merged.setdefault(name, [0, 0.0, 0])
    names = sorted(merged)
    local = np.zeros((len(names), 3))
    for i, name in enumerate(names):
        kind, op = name.split(":", 1)
        if (kind, op) in ops:
            local[i] = ops[(kind, op)]
    total = to_numpy(comm.allreduce(local, "sum")) if len(names) else local
    return {name: [int(total[i, 0]), float(total[i, 1]), int(total[i, 2])] for i, name in enumerate(names)}


def _allgather_events(comm, events, t0) -> list[list[dict]]:
    """Every rank's events on every rank (small: used for trace files)."""
    text = json.dumps([{**e, "start": e["start"] - t0, "peers": list(e["peers"]), "shape": list(e["shape"])}
                       for e in events]).encode()
    size = to_numpy(comm.allgather(np.asarray([len(text)], dtype=np.int64)))[:, 0]
    width = int(size.max()) if len(size) else 0
    buf = np.frombuffer(text.ljust(width), dtype=np.uint8).copy() if width else np.zeros(0, np.uint8)
    every = to_numpy(comm.allgather(buf))
    return [json.loads(bytes(every[r][: size[r]]).decode() or "[]") for r in range(len(size))]


def _format(result: dict) -> str:
    lines = [f"darray trace: {result['ranks']} rank(s), {result['bytes_total'] / 1e6:.3f} MB sent in "
             f"{result['messages_total']} messages",
             f"{'rank':>4} {'compute s':>10} {'comm s':>10} {'wait s':>10} {'MB sent':>10}"]
    for r in range(result["ranks"]):
        lines.append(f"{r:>4} {result['compute_s'][r]:>10.4f} {result['comm_s'][r]:>10.4f} "
                     f"{result['wait_s'][r]:>10.4f} {result['bytes_per_rank'][r] / 1e6:>10.3f}")
    lines.append(f"{'top operations (all ranks)':<40} {'calls':>7} {'seconds':>10} {'MB':>10}")
    for name, (calls, seconds, nbytes) in result["top_ops"]:
        lines.append(f"{name:<40} {calls:>7} {seconds:>10.4f} {nbytes / 1e6:>10.3f}")
    return "\n".join(lines)


def tracing(comm: Communicator | None = None) -> Trace:
    """Record communication and compute events inside a ``with`` block (see :class:`Trace`).

    ``darray.tracing()`` was called ``darray.trace()`` before 0.2, a name
    that is ``numpy.trace`` in the NumPy namespace; that spelling still works
    (with a :class:`DeprecationWarning`) when no array is passed.
    """
    return Trace(comm)


def _trace_script() -> None:
    """``DARRAY_TRACE=1`` (or a path ending in .json): trace the whole script, summarise at exit."""
    setting = os.environ.get("DARRAY_TRACE", "").strip()
    if not setting or setting == "0":
        return
    t = Trace()
    t.__enter__()

    def finish():
        t.__exit__(None, None, None)
        t.summary()
        if setting.endswith(".json"):
            t.to_chrome(setting)

    atexit.register(finish)
