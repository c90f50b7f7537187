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
        self._previous: list | None = None
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
        """This rank's seconds per kind of event, bytes sent, and time per op (no communication).

        ``compute``, ``comm`` (waiting for other ranks included: only
        :meth:`summary` can tell the two apart), ``overhead``, ``wall`` (from
        entering the ``with`` block to leaving it) and ``unaccounted`` (wall
        time that no event holds); the first four add up to ``wall`` with
        ``unaccounted``.
        """
        out: dict = {"compute": 0.0, "comm": 0.0, "overhead": 0.0, "nbytes": 0, "messages": 0,
                     "wall": self.stopped - self.started}
        ops: defaultdict[tuple[str, str], list] = defaultdict(lambda: [0, 0.0, 0])
        for e in self.events:
            out[e["kind"]] += e["seconds"]
            if e["kind"] == "comm":
                out["nbytes"] += e["nbytes"]
                out["messages"] += len(e["peers"])
            ops[(e["kind"], e["op"])][0] += 1
            ops[(e["kind"], e["op"])][1] += e["seconds"]
            ops[(e["kind"], e["op"])][2] += e["nbytes"]
        out["unaccounted"] = out["wall"] - out["compute"] - out["comm"] - out["overhead"]
        out["ops"] = dict(ops)
        return out

    # ------------------------------------------------------------ all ranks (collective)
    def accounting(self) -> dict:
        """Where each rank's wall time went, over all ranks (collective, prints nothing).

        Per rank, lists in rank order: ``compute_s`` (local kernels, the
        function of :func:`darray.map_overlap` included), ``comm_s`` (moving
        data: communication calls less their waiting), ``wait_s`` (inside
        communication calls, waiting for later ranks: a call's seconds on this
        rank less the fastest rank's seconds for the same call), ``overhead_s``
        (darray's own Python around the recorded work), ``unaccounted_s``
        (wall time no event holds: the caller's code between darray calls,
        darray calls that record nothing) and ``wall_s``; the first five add
        up to ``wall_s``.
        """
        comm = self.comm or default_communicator()
        mine = self.totals()
        waits = _waits(comm, self.events)
        wait = float(sum(waits))
        row = np.array([mine["compute"], mine["comm"] - wait, wait, mine["overhead"], mine["wall"], mine["nbytes"],
                        mine["messages"]])
        table = to_numpy(comm.allgather(row))
        compute, moving, waiting, overhead, wall = (table[:, i] for i in range(5))
        return {
            "ranks": comm.size,
            "compute_s": compute.tolist(), "comm_s": moving.tolist(), "wait_s": waiting.tolist(),
            "overhead_s": overhead.tolist(), "unaccounted_s": (wall - compute - moving - waiting - overhead).tolist(),
            "wall_s": wall.tolist(),
            "bytes_per_rank": table[:, 5].astype(np.int64).tolist(),
            "bytes_total": int(table[:, 5].sum()), "messages_total": int(table[:, 6].sum()),
            "_waits": waits,
        }

    def summary(self, file=None, top: int = 8) -> dict:
        """Aggregate over ranks and print a table on rank 0 (every rank must call it).

        Reports per rank where the wall time went (:meth:`accounting`:
        compute, communication, waiting, overhead and what is left
        unaccounted, adding up to the wall time), bytes sent; and the most
        expensive operations over all ranks.
        """
        comm = self.comm or default_communicator()
        result = self.accounting()
        del result["_waits"]
        all_ops = _allgather_ops(comm, self.totals()["ops"])
        result["top_ops"] = sorted(all_ops.items(), key=lambda kv: -kv[1][1])[:top]
        if comm.rank == 0:
            print(_format(result), file=file, flush=True)
        return result

    def to_chrome(self, path: str) -> None:
        """Write a Chrome/Perfetto trace (one process per rank) on rank 0 (collective).

        Each rank has four tracks: ``compute`` (compute events, nested as
        they ran), ``communication`` (with a ``wait`` slice inside a call for
        its waiting), ``overhead`` (the darray calls that record their
        overhead, spanning what they did) and ``wall`` (one slice over the
        traced block whose ``args`` hold the rank's :meth:`accounting`).
        Slices span an event's start to end; ``args.self_s`` is its own time.
        The file is written atomically and never through a symlink found at
        ``path`` (:func:`darray._files.write_text_safely`).
        """
        comm = self.comm or default_communicator()
        account = self.accounting()
        events = _allgather_events(comm, self.events, self.started, account.pop("_waits"))
        if comm.rank == 0:
            out = []
            for rank, evs in enumerate(events):
                out.append({"name": "process_name", "ph": "M", "pid": rank, "args": {"name": f"rank {rank}"}})
                for tid, name in enumerate(_TRACKS):
                    out.append({"name": "thread_name", "ph": "M", "pid": rank, "tid": tid, "args": {"name": name}})
                for e in evs:
                    out.extend(_chrome_events(rank, e))
                sums = {k[:-2]: account[k][rank] for k in ("compute_s", "comm_s", "wait_s", "overhead_s",
                                                             "unaccounted_s", "wall_s")}
                out.append({"name": "traced (wall)", "cat": "wall", "ph": "X", "pid": rank, "tid": 3, "ts": 0.0,
                            "dur": sums["wall"] * 1e6, "args": {f"{k}_s": v for k, v in sums.items()}})
            # a fresh file renamed onto path: a symlink planted at path is replaced, never written through
            write_text_safely(path, json.dumps({"traceEvents": out, "displayTimeUnit": "ms"}))


#: The Chrome trace's tracks (thread ids) per rank.
_TRACKS = ("compute", "communication", "overhead", "wall")


def _chrome_events(rank: int, e: dict) -> list[dict]:
    """One event as Chrome slices: its span, and for communication a ``wait`` slice at its end."""
    tid = {"compute": 0, "comm": 1, "overhead": 2}.get(e["kind"], 0)
    span = max(e.get("end", e["start"] + e["seconds"]) - e["start"], e["seconds"])
    out = [{"name": e["op"], "cat": e["kind"], "ph": "X", "pid": rank, "tid": tid, "ts": e["start"] * 1e6,
            "dur": max(span * 1e6, 0.01),
            "args": {"self_s": e["seconds"], "nbytes": e["nbytes"], "peers": list(e["peers"]),
                     "shape": list(e["shape"]), **({"wait_s": e["wait"]} if e.get("wait") else {})}}]
    if e.get("wait"):
        out.append({"name": "wait", "cat": "wait", "ph": "X", "pid": rank, "tid": tid,
                    "ts": (e["start"] + span - e["wait"]) * 1e6, "dur": e["wait"] * 1e6, "args": {"op": e["op"]}})
    return out


def _waits(comm, events: list[dict]) -> list[float]:
    """Seconds each of this rank's communication events waited for other ranks, in order (collective).

    The k-th call of an operation on every rank is the same call (every rank
    makes the same darray calls); its shortest time over the ranks is taken
    as moving the data, the rest of a rank's time as waiting for a later
    rank. An operation that not every rank called equally often is left
    unsplit (all communication).
    """
    events = list(events)  # (a summary inside the traced block records its own collectives: not these)
    mine: dict = defaultdict(list)
    for e in events:
        if e["kind"] == "comm":
            mine[e["op"]].append(e["seconds"])
    every = _allgather_json(comm, mine)
    fastest = {}
    for op, seconds in mine.items():
        lists = [theirs.get(op) for theirs in every]
        if all(other is not None and len(other) == len(seconds) for other in lists):
            fastest[op] = np.min(np.asarray(lists, dtype=float), axis=0)
    out: list[float] = []
    seen: defaultdict[str, int] = defaultdict(int)
    for e in events:
        if e["kind"] == "comm":
            k = seen[e["op"]]
            seen[e["op"]] += 1
            out.append(max(0.0, e["seconds"] - float(fastest[e["op"]][k])) if e["op"] in fastest else 0.0)
    return out


def _allgather_json(comm, value) -> list:
    """Every rank's JSON-able ``value`` on every rank (collective; variable sizes)."""
    text = json.dumps(value).encode()
    size = to_numpy(comm.allgather(np.asarray([len(text)], dtype=np.int64)))[:, 0]
    width = int(size.max()) if len(size) else 0
    buf = np.frombuffer(text.ljust(width), dtype=np.uint8).copy() if width else np.zeros(0, np.uint8)
    every = to_numpy(comm.allgather(buf))
    return [json.loads(bytes(every[r][: size[r]]).decode() or "null") for r in range(len(size))]


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


def _allgather_events(comm, events, t0, waits=()) -> list[list[dict]]:
    """Every rank's events on every rank, times from ``t0``, each comm event with its ``wait`` (for trace files)."""
    waits = iter(waits)
    mine = []
    for e in events:
        row = {**e, "start": e["start"] - t0, "end": e.get("end", e["start"] + e["seconds"]) - t0,
               "peers": list(e["peers"]), "shape": list(e["shape"])}
        if e["kind"] == "comm":
            row["wait"] = next(waits, 0.0)
        mine.append(row)
    return [theirs or [] for theirs in _allgather_json(comm, mine)]


#: The columns of the summary's accounting: (result key, heading).
_COLUMNS = (("compute_s", "compute"), ("comm_s", "comm"), ("wait_s", "wait"), ("overhead_s", "overhead"),
            ("unaccounted_s", "unaccounted"), ("wall_s", "wall"))


def _format(result: dict) -> str:
    lines = [f"darray trace: {result['ranks']} rank(s), {result['bytes_total'] / 1e6:.3f} MB sent in "
             f"{result['messages_total']} messages",
             f"{'rank':>4} " + " ".join(f"{h + ' s':>13}" for _, h in _COLUMNS) + f" {'MB sent':>10}"]
    for r in range(result["ranks"]):
        lines.append(f"{r:>4} " + " ".join(f"{result[k][r]:>13.4f}" for k, _ in _COLUMNS)
                     + f" {result['bytes_per_rank'][r] / 1e6:>10.3f}")
    lines.append("  (compute + comm + wait + overhead + unaccounted = wall; unaccounted: time outside darray's "
                 "traced calls)")
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
