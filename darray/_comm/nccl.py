"""NCCL transport: CuPy's ``cupy.cuda.nccl`` for device arrays, bootstrapped over MPI.

Each rank drives one GPU. The NCCL communicator is created from a unique id
that rank 0 draws and broadcasts over the MPI communicator this transport
wraps; sub-communicators bootstrap their own NCCL communicator the same way
over the matching MPI sub-communicator (``ncclCommSplit`` exists only in
recent NCCL releases).

Device (CuPy) arrays go through NCCL on the current CUDA stream. Everything
else falls back to the wrapped MPI communicator: host arrays (the small
metadata darray exchanges, e.g. block counts), other device libraries, and
reductions NCCL cannot do (``int16``, complex ``prod``, ...), which MPI does
after the stream has been synchronised. Pure data movement (``allgather``,
``bcast``, ``exchange``) is dtype-agnostic: it moves bytes, so every dtype
goes through NCCL.

CuPy is imported when a communicator is created, never when this module is.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import REDUCE_OPS, BoundExchange, BoundStrips, DoneRequest, Region, copy_region, nan_carrying, split_self

__all__ = ["NCCLCommunicator"]

#: NumPy dtype name -> ``cupy.cuda.nccl`` constant for reductions.
_NCCL_TYPES = {
    "int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32", "uint32": "NCCL_UINT32",
    "int64": "NCCL_INT64", "uint64": "NCCL_UINT64", "float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32",
    "float64": "NCCL_FLOAT64",
}
#: Complex dtypes reduce as pairs of their real type (``sum`` only).
_COMPLEX_PARTS = {"complex64": "float32", "complex128": "float64"}
#: On booleans (viewed as uint8 0/1) NumPy's add is logical or and multiply logical and.
_BOOL_OPS = {"sum": "max", "prod": "min", "min": "min", "max": "max", "land": "min", "lor": "max"}


def _cupy():
    import cupy

    return cupy


def _nonempty(region: Region) -> bool:
    return all(s.stop > s.start for s in region)


class _Request:
    """Outstanding NCCL point-to-point messages; ``wait`` unpacks the receives."""

    __slots__ = ("stream", "recv", "unpack", "keep")

    def __init__(self, stream, recv, unpack, keep):
        self.stream, self.recv, self.unpack, self.keep = stream, recv, unpack, keep

    def wait(self) -> None:
        if self.stream is None:
            return
        with self.stream:  # ordered after the NCCL group, whatever stream is current now
            for region, buf in self.unpack:
                self.recv[region] = buf
        self.stream.synchronize()  # the data is there for any consumer (host, other streams, MPI)
        self.stream = self.recv = self.unpack = self.keep = None


class NCCLCommunicator:
    """A communicator over NCCL for CuPy arrays, with ``mpi_comm`` (an ``MPICommunicator``) for the rest.

    The top-level communicator picks this rank's GPU (node-local rank modulo
    the visible devices) and makes it current; sub-communicators reuse it.
    Two ranks on one GPU are refused (NCCL cannot run them), on every rank.
    """

    name = "nccl"
    cuda_aware = True

    def __init__(self, mpi_comm, device=None):
        cp = _cupy()
        from cupy.cuda import nccl

        self._cp, self._nccl_mod = cp, nccl
        self.mpi = mpi_comm
        self.rank = mpi_comm.rank
        self.size = mpi_comm.size
        self.device = self._select_device() if device is None else device
        self._types = {np.dtype(k): getattr(nccl, v) for k, v in _NCCL_TYPES.items()}
        self._ops = {"sum": nccl.NCCL_SUM, "prod": nccl.NCCL_PROD, "min": nccl.NCCL_MIN, "max": nccl.NCCL_MAX}
        self._subs: dict = {}
        self._comm = None
        if self.size > 1:
            uid = nccl.get_unique_id() if self.rank == 0 else None
            uid = mpi_comm.comm.bcast(uid, root=0)
            with self.device:
                self._comm = nccl.NcclCommunicator(self.size, uid, self.rank)

    def _select_device(self):
        """This rank's GPU: node-local rank modulo the visible devices; refuse shared GPUs everywhere."""
        cp = self._cp
        count = cp.cuda.runtime.getDeviceCount()
        if self.size == 1:
            local = 0
        else:
            host = socket.gethostname()
            hosts = self.mpi.comm.allgather(host)
            local = sum(1 for h in hosts[: self.rank] if h == host)
        device = cp.cuda.Device(local % count) if count else None
        if self.size > 1:
            try:
                bus = device.pci_bus_id if device is not None else None
            except Exception:  # pragma: no cover - an old CuPy without the attribute: no check
                bus = f"rank{self.rank}"
            seen: dict = {}
            for r, key in enumerate(self.mpi.comm.allgather((hosts[self.rank], bus, count))):
                if key[2] == 0:
                    raise RuntimeError(f"nccl: no CUDA device visible; got 0 devices on rank {r} ({key[0]}), "
                                       f"expected one GPU per rank")
                if key[:2] in seen:
                    raise RuntimeError(f"nccl: two ranks share one GPU; got ranks {seen[key[:2]]} and {r} on "
                                       f"GPU {key[1]} of {key[0]} ({key[2]} visible), expected one GPU per rank "
                                       f"(start fewer ranks per node, or use DARRAY_TRANSPORT=mpi)")
                seen[key[:2]] = r
        if device is None:
            raise RuntimeError("nccl: no CUDA device visible; got 0 devices, expected one GPU per rank")
        device.use()
        return device

    # ------------------------------------------------------------ helpers
    def _is_device(self, array) -> bool:
        return isinstance(array, self._cp.ndarray)

    def _stream(self):
        return self._cp.cuda.get_current_stream()

    def _contiguous(self, array):
        """``array`` itself when C-contiguous, else a C-ordered copy of the same shape."""
        return array if array.flags.c_contiguous else array.copy(order="C")

    def _raw(self, nbytes: int):
        """(count, NCCL type) that moves ``nbytes`` bytes in the widest unit that divides them."""
        nccl = self._nccl_mod
        for unit, kind in ((8, nccl.NCCL_UINT64), (4, nccl.NCCL_UINT32)):
            if nbytes % unit == 0:
                return nbytes // unit, kind
        return nbytes, nccl.NCCL_UINT8

    def _via_host(self, array, op: str):
        """An allreduce NCCL cannot do, staged through host memory and MPI (``get`` waits for the stream)."""
        out = self.mpi.allreduce(array.get(), op)
        return self._cp.asarray(out).reshape(array.shape)

    # ------------------------------------------------------------ topology
    def sub(self, dims: Sequence[int], keep: Sequence[bool]) -> NCCLCommunicator:
        key = (tuple(dims), tuple(bool(k) for k in keep))
        sub = self._subs.get(key)
        if sub is None:
            mpi_sub = self.mpi.sub(dims, keep)
            sub = self if mpi_sub is self.mpi else NCCLCommunicator(mpi_sub, device=self.device)
            self._subs[key] = sub
        return sub

    # ------------------------------------------------------------ collectives
    def allreduce(self, array: Any, op: str, sign: Any = None) -> Any:
        if op not in REDUCE_OPS:
            raise ValueError(f"allreduce: unknown operator; got {op!r}, expected one of {REDUCE_OPS}")
        if self.size == 1:
            return array
        if not self._is_device(array):
            return self.mpi.allreduce(array, op, sign)
        dtype = array.dtype
        if op in ("land", "lor") or dtype == np.bool_:
            # logical results in the input's dtype (as MPI's LAND / LOR): reduce 0/1 as uint8
            flags = (array != 0).astype(np.uint8)
            out = self._reduce(flags, _BOOL_OPS[op], self._types[np.dtype(np.uint8)], 1)
            return out.view(np.bool_) if dtype == np.bool_ else out.astype(dtype)
        kind, scale = self._types.get(dtype), 1
        if kind is None and op == "sum" and dtype.name in _COMPLEX_PARTS:
            kind, scale = self._types[np.dtype(_COMPLEX_PARTS[dtype.name])], 2
        if kind is None:  # no NCCL type for it (int16, complex prod, ...): MPI is correct, if slower
            return self._via_host(array, op)
        if op in ("min", "max") and dtype.kind == "f":  # NaN must win on every rank, as in NumPy
            buffer, unpack = nan_carrying(array, op)
            return self._cp.asarray(unpack(self._reduce(self._cp.asarray(buffer), op, kind, scale)))
        return self._reduce(array, op, kind, scale)

    def _reduce(self, array, op: str, kind, scale: int):
        send = self._contiguous(array)
        out = self._cp.empty(array.shape, dtype=array.dtype)
        if array.size:
            self._comm.allReduce(send.data.ptr, out.data.ptr, array.size * scale, kind, self._ops[op],
                                 self._stream().ptr)
        return out

    def allgather(self, array: Any, sign: Any = None, op: str = "allgather") -> Any:
        if not self._is_device(array):
            return self.mpi.allgather(array, sign, op)
        out = self._cp.empty((self.size, *array.shape), dtype=array.dtype)
        if self.size == 1:
            out[0] = array
        elif array.size:
            send = self._contiguous(array)
            count, kind = self._raw(send.nbytes)
            self._comm.allGather(send.data.ptr, out.data.ptr, count, kind, self._stream().ptr)
        return out

    def bcast(self, array: Any, root: int) -> Any:
        if not self._is_device(array):
            return self.mpi.bcast(array, root)
        buf = array.copy(order="C")
        if self.size > 1 and buf.size:
            count, kind = self._raw(buf.nbytes)
            self._comm.broadcast(buf.data.ptr, buf.data.ptr, count, kind, root, self._stream().ptr)
        return buf

    def debug_allgather(self, row):
        """``DARRAY_DEBUG``'s fingerprints go over MPI."""
        return self.mpi.debug_allgather(row)

    def barrier(self) -> None:
        """Every rank's queued GPU work (on the current stream) is done, then an MPI barrier."""
        self._stream().synchronize()
        self.mpi.barrier()

    def abort(self, code: int = 1) -> None:
        self.mpi.abort(code)

    # ------------------------------------------------------------ point to point
    def bind_exchange(self, buf, sends: Sequence[tuple[int, Region]], recvs: Sequence[tuple[int, Region]]):
        if not self._is_device(buf):
            return self.mpi.bind_exchange(buf, sends, recvs)
        return BoundExchange(self, buf, sends, recvs)  # NCCL has no persistent sends: one group per start

    def bind_strips(self, buffer, sends: Sequence[tuple[int, Region]], recvs: Sequence[tuple[int, Region]]):
        if not self._is_device(buffer):
            return self.mpi.bind_strips(buffer, sends, recvs)
        return BoundStrips(self, buffer, sends, recvs)

    def exchange(self, send, sends: Sequence[tuple[int, Region]], recv, recvs: Sequence[tuple[int, Region]],
                 key=None):
        on_device = self._is_device(send), self._is_device(recv)
        if not any(on_device):
            return self.mpi.exchange(send, sends, recv, recvs, key=key)
        if not all(on_device):
            raise TypeError(f"exchange: send and receive buffers must both be CuPy arrays; got "
                            f"{type(send).__name__} and {type(recv).__name__}")
        if send.dtype != recv.dtype:
            raise TypeError(f"exchange: send and receive buffers must have one dtype; got {send.dtype} and "
                            f"{recv.dtype}")
        pairs, sends, recvs = split_self(self.rank, sends, recvs)
        for src, dst in pairs:
            copy_region(send, src, recv, dst)
        packed = [(peer, self._contiguous(send[region])) for peer, region in sends if _nonempty(region)]
        unpack = [(peer, region, self._cp.empty(recv[region].shape, dtype=recv.dtype))
                  for peer, region in recvs if _nonempty(region)]
        if not packed and not unpack:
            return DoneRequest()
        if self._comm is None:
            raise ValueError(f"exchange: this communicator has only rank {self.rank}; got a message for another "
                             f"rank, expected messages to rank {self.rank} only")
        stream = self._stream()
        nccl, ptr = self._nccl_mod, stream.ptr
        nccl.groupStart()
        try:  # the k-th send to a peer matches its k-th receive: NCCL keeps per-peer order
            for peer, buf in packed:
                count, kind = self._raw(buf.nbytes)
                self._comm.send(buf.data.ptr, count, kind, peer, ptr)
            for peer, _, buf in unpack:
                count, kind = self._raw(buf.nbytes)
                self._comm.recv(buf.data.ptr, count, kind, peer, ptr)
        finally:
            nccl.groupEnd()
        return _Request(stream, recv, [(region, buf) for _, region, buf in unpack], packed)

    def __repr__(self):
        return f"NCCLCommunicator(rank={self.rank}, size={self.size}, device={getattr(self.device, 'id', None)})"
