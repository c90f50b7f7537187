"""The Communicator protocol: only what darray's algorithms need.

A communicator speaks in local buffers (arrays of any backend) and never sees
a DArray. ``exchange`` is the one point-to-point primitive: it moves regions
(tuples of unit-step slices) of one local array to regions of another, on any
set of peers, non-blocking. Halo exchanges and redistributions are both
built from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = ["Communicator", "Request", "Region", "REDUCE_OPS", "DoneRequest", "BoundExchange", "BoundStrips",
           "split_self", "copy_region", "agree", "agree_once"]

#: A region of a local array: one unit-step slice per axis.
Region = tuple[slice, ...]

#: Reduction operators every transport supports in ``allreduce``.
REDUCE_OPS = ("sum", "prod", "min", "max", "land", "lor")


@runtime_checkable
class Request(Protocol):
    """A started communication; ``wait()`` completes it."""

    def wait(self) -> None: ...


class DoneRequest:
    """A request that completed when it was started."""

    __slots__ = ()

    def wait(self) -> None:
        return None


class BoundExchange:
    """An exchange within one buffer that repeats (a halo exchange): ``start()`` runs it once more.

    The generic form calls ``comm.exchange`` each time; transports that can
    do better (MPI persistent requests) return their own from
    ``comm.bind_exchange``. Every rank binds and starts together.
    """

    __slots__ = ("comm", "buf", "sends", "recvs")

    def __init__(self, comm, buf, sends, recvs):
        self.comm, self.buf, self.sends, self.recvs = comm, buf, list(sends), list(recvs)

    def start(self) -> Request:
        return self.comm.exchange(self.buf, self.sends, self.buf, self.recvs, key=True)


class BoundStrips:
    """Strips that move again and again from blocks of one layout into ``buffer`` (shifted-slice alignment).

    ``start(send)`` moves them once more out of ``send`` (the operand's block
    this time) and returns the request to wait on; ``buffer`` holds them after
    the wait, until the next start. The generic form calls ``comm.exchange``;
    transports that can do better return their own from ``comm.bind_strips``.
    Not for two threads at once: the buffer is shared by every start.
    """

    __slots__ = ("comm", "buffer", "sends", "recvs")

    def __init__(self, comm, buffer, sends, recvs):
        self.comm, self.buffer, self.sends, self.recvs = comm, buffer, list(sends), list(recvs)

    def start(self, send) -> Request:
        return self.comm.exchange(send, self.sends, self.buffer, self.recvs)


@runtime_checkable
class Communicator(Protocol):
    """What a transport provides. Collective methods must be called by every rank."""

    name: str
    rank: int
    size: int

    def sub(self, dims: Sequence[int], keep: Sequence[bool]) -> Communicator:
        """Ranks that share the coordinates of the grid dims not kept (MPI ``Cart_sub``)."""

    def allreduce(self, array: Any, op: str, sign: Any = None) -> Any:
        """Elementwise reduction of equal-shaped arrays; every rank gets the result.

        ``sign``: replicated metadata of the caller (a global shape, axes) that
        every rank must agree on; a transport may carry it in the message and
        raise ``CollectiveMismatch`` on every rank when the ranks disagree.
        """

    def allgather(self, array: Any, sign: Any = None, op: str = "allgather") -> Any:
        """Stack every rank's equal-shaped array along a new leading axis (``sign``: as for :meth:`allreduce`;
        ``op``: the name the trace gives it)."""

    def bcast(self, array: Any, root: int) -> Any:
        """``root``'s array on every rank (others pass an array of the same shape and dtype)."""

    def exchange(self, send: Any, sends: Sequence[tuple[int, Region]], recv: Any,
                 recvs: Sequence[tuple[int, Region]], key: Any = None) -> Request:
        """Start moving ``send[region]`` to each peer and receiving into ``recv[region]`` from each peer.

        The k-th send to peer q matches the k-th receive from this rank on q;
        matching regions hold the same number of elements (their shapes may
        differ: an n-d region may arrive in a 1-d staging slice, C order).
        Every rank of the communicator calls ``exchange`` together.

        ``key=True`` marks a repeated exchange (see :meth:`bind_exchange`):
        a transport may then match its messages with persistent requests.
        """

    def bind_exchange(self, buf: Any, sends: Sequence[tuple[int, Region]],
                      recvs: Sequence[tuple[int, Region]]) -> BoundExchange:
        """An exchange within ``buf`` to run many times (``start()``); the caller keeps it with ``buf``."""

    def bind_strips(self, buffer: Any, sends: Sequence[tuple[int, Region]],
                    recvs: Sequence[tuple[int, Region]]) -> BoundStrips:
        """Exchanges to run many times from blocks that change (``start(send)``) into one ``buffer``.

        ``sends`` and ``recvs`` name no message to self. Every rank binds and starts together.
        """

    def barrier(self) -> None: ...

    def abort(self, code: int = 1) -> None:
        """End the whole job (every rank) now."""


def nan_carrying(array, op: str):
    """``(buffer, unpack)`` for a ``min``/``max`` allreduce of floats that propagates NaN, as NumPy's does.

    MPI's and NCCL's MIN/MAX compare with ``<``/``>``, so a NaN survives or
    vanishes depending on the reduction order (different ranks may even end
    with different results). The buffer holds the values with NaNs replaced by
    the operator's neutral element, then a flag per value (1 for a NaN under
    ``max``, -1 under ``min``, so that the same operator combines the flags);
    ``unpack`` turns the reduced buffer back into values with NaN wherever a
    rank had one. Twice the bytes of a plain reduction.
    """
    import array_api_compat

    xp = array_api_compat.array_namespace(array)
    flat = xp.reshape(array, (-1,))
    n = flat.shape[0]
    nan = xp.isnan(flat)
    sign = 1.0 if op == "max" else -1.0
    neutral = xp.asarray(-sign * float("inf"), dtype=flat.dtype)
    buffer = xp.concat([xp.where(nan, neutral, flat), xp.astype(nan, flat.dtype) * sign])

    def unpack(reduced):
        values = xp.where(reduced[n:] != 0, xp.asarray(float("nan"), dtype=flat.dtype), reduced[:n])
        return xp.reshape(values, tuple(array.shape))

    return buffer, unpack


def split_self(rank: int, sends, recvs):
    """Separate the messages a rank sends to itself (copied locally) from the rest."""
    own_sends = [r for p, r in sends if p == rank]
    own_recvs = [r for p, r in recvs if p == rank]
    if len(own_sends) != len(own_recvs):
        raise ValueError(f"exchange: unmatched self messages; got {len(own_sends)} sends and "
                         f"{len(own_recvs)} receives, expected equal counts")
    others_s = [(p, r) for p, r in sends if p != rank]
    others_r = [(p, r) for p, r in recvs if p != rank]
    return list(zip(own_sends, own_recvs)), others_s, others_r


def copy_region(send, src: Region, recv, dst: Region) -> None:
    """``recv[dst] = send[src]`` in C order, also when the two regions differ in shape."""
    part = send[src]
    target = recv[dst]
    if tuple(part.shape) != tuple(target.shape):
        import array_api_compat

        part = array_api_compat.array_namespace(part).reshape(part, tuple(target.shape))
    recv[dst] = part


_NO_DATA = None


def agree_once(comm, memo: dict, key) -> None:
    """Always on, once per ``key`` remembered in ``memo`` (a layout's ``_derived.agreed``): every rank of ``comm``
    passed the same replicated ``key``, or every rank raises :class:`~darray._debug.CollectiveMismatch`.

    One signed 8-byte allgather, traced as ``agree``: for the arguments that decide which messages move
    (a redistribution's target, a stencil's depth and boundary), which a rank that differs would otherwise
    send without an error. Later calls with the same key cost a dict lookup; a rank that later differs waits
    in another call than the others, which the slow waits see (:mod:`darray._comm.watch`).
    """
    global _NO_DATA
    if comm.size == 1:
        return
    mark = ("agreed", id(comm), key)
    if mark in memo:
        return
    import numpy as np

    if _NO_DATA is None:
        _NO_DATA = np.zeros(1, dtype=np.int64)
    comm.allgather(_NO_DATA, sign=key, op="agree")
    memo[mark] = True


def agree(comm: Communicator, ok: bool) -> list[int]:
    """Ranks of ``comm`` where ``ok`` is False: the same list on every rank (one small allgather).

    Call it before raising on a rank-local condition, so that every rank raises
    together instead of the others waiting in the next collective.
    """
    import numpy as np

    flags = np.asarray(comm.allgather(np.asarray([0 if ok else 1], dtype=np.int64)))[:, 0]
    return [int(r) for r in np.flatnonzero(flags)]
