"""The one-process communicator: no MPI needed, every collective is local."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from .base import REDUCE_OPS, BoundExchange, BoundStrips, DoneRequest, Region, copy_region, split_self

__all__ = ["SelfCommunicator"]


class SelfCommunicator:
    """Rank 0 of 1. The embedded default when no MPI launcher started this process."""

    name = "self"
    rank = 0
    size = 1

    def sub(self, dims: Sequence[int], keep: Sequence[bool]) -> SelfCommunicator:
        return self

    def allreduce(self, array: Any, op: str, sign: Any = None) -> Any:
        if op not in REDUCE_OPS:
            raise ValueError(f"allreduce: unknown operator; got {op!r}, expected one of {REDUCE_OPS}")
        return array

    def allgather(self, array: Any, sign: Any = None, op: str = "allgather") -> Any:
        return array[None, ...]

    def bcast(self, array: Any, root: int) -> Any:
        return array

    def exchange(self, send, sends: Sequence[tuple[int, Region]], recv, recvs: Sequence[tuple[int, Region]],
                 key=None):
        pairs, others_s, others_r = split_self(0, sends, recvs)
        if others_s or others_r:
            raise ValueError("exchange: the self communicator has only rank 0; got a message for another rank")
        for src, dst in pairs:
            copy_region(send, src, recv, dst)
        return DoneRequest()

    def bind_exchange(self, buf, sends: Sequence[tuple[int, Region]], recvs: Sequence[tuple[int, Region]]):
        return BoundExchange(self, buf, sends, recvs)

    def bind_strips(self, buffer, sends: Sequence[tuple[int, Region]], recvs: Sequence[tuple[int, Region]]):
        return BoundStrips(self, buffer, sends, recvs)

    def barrier(self) -> None:
        return None

    def abort(self, code: int = 1) -> None:
        os._exit(code)

    def __repr__(self):
        return "SelfCommunicator()"
