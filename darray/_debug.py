"""``DARRAY_DEBUG=1``: ranks check that they enter the same collective with the same metadata.

A rank that calls a different operation, or the same one on a differently
shaped or laid-out array, would otherwise leave the others waiting forever
(or return wrong numbers). With debugging on, every collective the transport
issues (allreduce, allgather, bcast, barrier, every exchange) and the engines
that know more (redistribute, gather, halo exchange) first allgather a
fingerprint of (public function, operation, dtype, shape, replicated
metadata) over the job's communicator and raise the same
:class:`CollectiveMismatch` on every rank if they differ. Off (the default), a
check costs one global lookup; the cheap cases are checked anyway by
signatures folded into the messages (``darray._comm.signature``).

``DARRAY_WAIT_TIMEOUT=<seconds>`` bounds every wait, point-to-point and
collective: a ``TimeoutError`` instead of a silent hang. A rank that left the
job (its script ended or called ``sys.exit``) is reported without it, as
:class:`RanksLeft` (``darray._comm.watch``).
"""

from __future__ import annotations

import hashlib
import os

import numpy as np

__all__ = ["enabled", "check_collective", "check_arguments", "wait_timeout", "CollectiveMismatch", "RanksLeft"]

enabled: bool = os.environ.get("DARRAY_DEBUG", "0") not in ("", "0")


def _timeout() -> float | None:
    value = os.environ.get("DARRAY_WAIT_TIMEOUT", "").strip()
    return float(value) if value else None


wait_timeout: float | None = _timeout()


class CollectiveMismatch(RuntimeError):
    """Ranks entered different collectives (or the same one with different metadata)."""


class RanksLeft(RuntimeError):
    """Ranks this rank waits for have left the job (their script ended or called ``sys.exit``)."""


def check_collective(comm, op: str, *meta) -> None:
    """Raise :class:`CollectiveMismatch` on every rank unless all ranks call ``op`` with equal ``meta``."""
    if not enabled or comm.size == 1:
        return
    text = f"{op}|{meta!r}"
    groups = _disagreeing(comm, op, text)
    if groups:
        detail = "; ".join(f"ranks {ranks} called {name}" for (name, _), ranks in groups.items())
        raise CollectiveMismatch(f"{op}: ranks disagree on the collective they entered ({detail}); "
                                 f"this rank passed {text[:300]}")


def _disagreeing(comm, op: str, text: str) -> dict | None:
    """Every rank's (``op``, digest of ``text``), allgathered: None when all agree, else ranks by what they sent."""
    digest = np.frombuffer(hashlib.sha256(text.encode()).digest()[:16], dtype=np.uint8).copy()
    label = np.frombuffer(op.encode()[:48].ljust(48), dtype=np.uint8).copy()
    row = np.concatenate([digest, label])
    every = np.asarray(comm.debug_allgather(row) if hasattr(comm, "debug_allgather") else comm.allgather(row))
    if (every[:, :16] == every[0, :16]).all():
        return None
    groups: dict = {}
    for rank, row in enumerate(every):
        groups.setdefault((bytes(row[16:]).decode(errors="replace").strip(), bytes(row[:16])), []).append(rank)
    return groups


def check_arguments(comm, func: str, *values) -> None:
    """``DARRAY_DEBUG=1``: raise :class:`CollectiveMismatch` on every rank unless all ranks passed equal
    replicated ``values`` to ``func`` (a quantile's ``q``, a ``ddof``, a seed, the data given to ``asarray``:
    NumPy arrays by a digest of their bytes, dtype and shape). Off, it costs one global lookup."""
    if not enabled or comm.size == 1:
        return
    text = repr(tuple(_digest(v) for v in values))
    groups = _disagreeing(comm, func, text)
    if groups:
        raise CollectiveMismatch(f"{func}: ranks passed different arguments that must be the same on every rank "
                                 f"(the groups {list(groups.values())} differ); this rank passed {text[:300]}")


def _digest(value) -> str:
    """A replicated argument as text to compare: NumPy arrays by a SHA-256 of their bytes (repr elides them)."""
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        return f"ndarray {data.dtype.str} {data.shape} {hashlib.sha256(data.view(np.uint8)).hexdigest()[:32]}"
    if isinstance(value, (list, tuple)) and any(isinstance(v, np.ndarray) for v in value):
        return repr([_digest(v) for v in value])
    return repr(value)
