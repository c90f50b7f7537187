"""MPI transport through mpi4py's buffer-based (uppercase) calls.

Regions move with MPI subarray datatypes straight out of and into the local
blocks: no packing copies in Python. Host arrays of any CPU backend are
viewed through DLPack; device arrays go straight to a CUDA-aware MPI and are
staged through host memory otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._backend import is_host_array, to_numpy
from .. import _debug, _recorder
from .._layout import coords_of, volume
from . import signature, watch
from .base import REDUCE_OPS, BoundExchange, BoundStrips, DoneRequest, Region, copy_region, nan_carrying, split_self

__all__ = ["MPICommunicator"]


def _mpi():
    from mpi4py import MPI

    return MPI


def _cuda_aware(MPI) -> bool:
    query = getattr(MPI, "Query_cuda_support", None)
    try:
        return bool(query()) if query is not None else False
    except Exception:  # pragma: no cover - depends on the MPI build
        return False


def _nonempty(region: Region) -> bool:
    """Whether ``region`` holds any cell (MPI is not asked to move nothing)."""
    return all(s.stop > s.start for s in region)


#: Kinds whose NumPy buffers name no MPI datatype (NumPy exports no buffer format for dates and durations,
#: and mpi4py maps no record format): they move with an explicit one (:func:`_typed`).
_OPAQUE = frozenset("MmV")
_datatypes: dict = {}


def _typed(buf):
    """``buf`` as mpi4py takes it: itself, or ``[buf, datatype]`` for dates and durations (as int64), records
    (their MPI struct type) and unaligned views (fields of packed records)."""
    dtype = buf.dtype
    if dtype.kind not in _OPAQUE and (type(buf) is not np.ndarray or buf.flags.aligned):
        return buf
    datatype = _datatypes.get(dtype)
    if datatype is None:  # (an unaligned view, a field of packed records, exports "=f", which mpi4py does not map)
        from mpi4py.util.dtlib import from_numpy_dtype

        datatype = from_numpy_dtype(np.dtype(np.int64) if dtype.kind in "Mm" else dtype)
        if dtype.kind == "V":
            datatype.Commit()
        _datatypes[dtype] = datatype
    return [buf, datatype]


class _Staged:
    """A host view of a local array, written back on ``finish`` when it is a copy."""

    __slots__ = ("array", "host", "copied")

    def __init__(self, array, device_ok: bool):
        self.array = array
        if isinstance(array, np.ndarray) or (device_ok and hasattr(array, "__cuda_array_interface__")):
            self.host, self.copied = array, False
        else:
            self.host = to_numpy(array)
            # CPU arrays of every backend are viewed through DLPack; device arrays are copied
            self.copied = not is_host_array(array)

    def finish(self):
        if self.copied:
            import array_api_compat

            xp = array_api_compat.array_namespace(self.array)
            self.array[...] = xp.asarray(self.host, device=array_api_compat.device(self.array))


#: Tags of keyed (repeated) exchanges: the k-th message between a pair has tag ``KEYED_TAG + k``,
#: so persistent requests started in any order still match (rotating tags stay below it).
KEYED_TAG = 32000
KEYED_MAX = 700  # messages per pair and keyed exchange; MPI guarantees tags up to 32767
_BOOL_ORDER = {"min": "land", "max": "lor"}


class _PersistentExchange:
    """Persistent requests of one repeated exchange within one buffer (MPI ``Send_init``/``Recv_init``)."""

    __slots__ = ("comm", "buf", "pairs", "requests", "peers", "nbytes", "messages", "active")

    def __init__(self, comm, buf, pairs, requests, peers, nbytes, messages):
        self.comm, self.buf, self.pairs, self.requests = comm, buf, pairs, requests
        self.peers, self.nbytes, self.messages = peers, nbytes, messages
        self.active = False

    def start(self):
        """Start the messages; ``wait()`` on the result completes them."""
        comm = self.comm
        if _debug.enabled and comm.size > 1 and not self.active:
            comm._check("exchange", str(self.buf.dtype), str(self.buf.dtype))
        if self.active:  # started again before its wait: one-shot requests on the same tags
            sends, recvs = self.messages
            return comm.exchange(self.buf, sends, self.buf, recvs, key=True)
        comm._tag = (comm._tag + 1) % KEYED_TAG  # keep the rotating tags of all ranks in step
        buf = self.buf
        begin = _recorder.now() if _recorder.active is not None else 0.0  # (the copies to self count in)
        for src, dst in self.pairs:
            copy_region(buf, src, buf, dst)
        for request in self.requests:  # in order: messages of one pair and tag stay ordered
            request.Start()
        self.active = True
        trace = None
        if _recorder.active is not None:
            trace = (begin, self.nbytes, sorted(set(self.peers)), _recorder.now(), _recorder.label,
                     len(_recorder.active))
        request = _Request(comm.MPI, self.requests, None, trace, self.peers, comm)  # wait() rebinds, never mutates
        request.keep = self
        return request

    def __del__(self):
        try:
            if self.active and not self.comm.MPI.Request.Testall(self.requests):
                for r in self.requests:  # (an exchange a raised wait left: its receives must not land later)
                    if not r.Test():
                        r.Cancel()
            for r in self.requests:  # (an active request is freed once it completes or is cancelled)
                r.Free()
        except Exception:  # MPI finalized at interpreter exit: nothing left to free
            pass


class _StripExchange(BoundStrips):
    """:class:`~.base.BoundStrips` of NumPy blocks: the receives' views of the buffer made once, no request
    object per start (it is its own), untraced (traced and ``DARRAY_DEBUG`` starts take ``exchange``)."""

    __slots__ = ("views", "peers", "requests", "packed")

    def __init__(self, comm, buffer, sends, recvs):
        super().__init__(comm, buffer, [message for message in sends if _nonempty(message[1])],
                         [message for message in recvs if _nonempty(message[1])])
        self.views = [(peer, comm._message(buffer, region)) for peer, region in self.recvs]
        self.peers = [peer for peer, _ in self.views] + [peer for peer, _ in self.sends]  # in request order
        self.requests = []
        self.packed = []  # strided send regions, packed: they live until the wait

    def start(self, send):
        owner = self.comm
        if type(send) is not np.ndarray or _debug.enabled or _recorder.active is not None:
            return owner.exchange(send, self.sends, self.buffer, self.recvs)
        if self.requests:  # (a start whose wait an error skipped: its messages land before the next)
            self.wait()
        comm = owner.comm
        owner._tag = tag = (owner._tag + 1) % KEYED_TAG  # (every rank starts: the tags stay in step)
        requests = []
        for peer, view in self.views:  # (a loop, not a comprehension: no frame of its own on Python 3.11)
            requests.append(comm.Irecv(view, peer, tag))
        for peer, region in self.sends:
            view = send[region]
            if not view.flags.c_contiguous:
                view = np.ascontiguousarray(view)
                self.packed.append(view)
            requests.append(comm.Isend(_typed(view), peer, tag))
        self.requests = requests
        return self

    def wait(self) -> None:
        requests = self.requests
        if requests:
            try:
                done = requests[0].Test() if len(requests) == 1 else self.comm.MPI.Request.Testall(requests)
            except self.comm.MPI.Exception as error:  # (a message longer than its receive buffer)
                watch.mismatch("exchange", error)
            if not done:
                _Request(self.comm.MPI, requests, None, None, self.peers, self.comm).wait()  # the watched wait
            self.requests = []
            if self.packed:
                self.packed = []


class _Request:
    __slots__ = ("requests", "staged", "MPI", "trace", "peers", "keep", "comm")

    def __init__(self, MPI, requests, staged, trace=None, peers=(), comm=None):
        self.MPI, self.requests, self.staged, self.trace, self.peers = MPI, requests, staged, trace, peers
        self.keep = None  # what must live until the wait: packed send buffers, or a _PersistentExchange
        self.comm = comm  # the MPICommunicator: whose departures and ranks a slow wait watches

    def _expected(self) -> set[int]:
        """Job ranks whose departure ends the wait: the peers (asked for only when a wait is slow)."""
        jobs = self.comm.members
        return {jobs[p] for p in self.peers}

    def _pending(self) -> set[int]:
        """Job ranks whose messages have not arrived yet (for a timeout message)."""
        jobs = self.comm.members
        return {jobs[self.peers[i]] for i, r in enumerate(self.requests) if not r.Test()}

    def wait(self) -> None:
        requests = self.requests
        if requests:
            try:  # (the first test outside the watched wait: its MPI error is converted alike)
                if len(requests) == 1:  # (Test of one request: no array of handles to build per test)
                    if not requests[0].Test():  # (already there: no watched wait to set up)
                        watch.wait(requests[0].Test, "exchange", self.comm.departures, self._expected,
                                   self._pending)
                else:
                    testall = self.MPI.Request.Testall
                    if not testall(requests):
                        watch.wait(lambda: testall(requests), "exchange", self.comm.departures, self._expected,
                                   self._pending)
            except self.MPI.Exception as error:
                watch.mismatch("exchange", error)
            self.requests = []
            if type(self.keep) is _PersistentExchange:
                self.keep.active = False
            self.keep = None
        if self.trace is not None and _recorder.active is not None:
            begin, nbytes, peers, posted, label, mark = self.trace
            waited = _recorder.now()
            # overlapped: the caller computed between starting and waiting (those events' seconds are left out)
            _recorder.record("comm", label, begin, waited, nbytes, peers, overlapped=waited - posted > 1e-4,
                             mark=mark)
            self.trace = None
        if self.staged is not None:
            self.staged.finish()
            self.staged = None


class MPICommunicator:
    """A communicator over an ``mpi4py.MPI.Comm`` (by default a duplicate of COMM_WORLD)."""

    name = "mpi"

    def __init__(self, comm=None, root: MPICommunicator | None = None):
        MPI = _mpi()
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD.Dup() if comm is None else comm
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self.cuda_aware = _cuda_aware(MPI) if root is None else root.cuda_aware
        self._ops = {"sum": MPI.SUM, "prod": MPI.PROD, "min": MPI.MIN, "max": MPI.MAX, "land": MPI.LAND,
                     "lor": MPI.LOR}
        self._subs: dict = {}
        self._lean_ops: dict = {}  # (op, dtype) -> what the host allreduce needs (see _lean_op)
        self._types: dict = {}
        self._tag = 0
        #: the communicator this one was cut from (itself for a job-wide one): ranks in messages are its ranks
        self.root = self if root is None else root
        #: job (root) rank of each rank of this communicator
        self.members = (list(range(self.size)) if root is None else
                        list(self.comm.Get_group().Translate_ranks(list(range(self.size)), root.comm.Get_group())))
        self.departures = watch.Departures(MPI, self.comm) if root is None else root.departures
        self._expected = None if root is None else set(self.members)  # whose departure ends a collective's wait

    # ------------------------------------------------------------ topology
    def sub(self, dims: Sequence[int], keep: Sequence[bool]) -> MPICommunicator:
        key = (tuple(dims), tuple(bool(k) for k in keep))
        sub = self._subs.get(key)
        if sub is None:
            coords = coords_of(self.rank, dims)
            color = 0
            for c, d, k in zip(coords, dims, keep):
                if not k:
                    color = color * d + c
            sub = MPICommunicator(self.comm.Split(color, self.rank), self.root) if not all(keep) else self
            self._subs[key] = sub
        return sub

    # ------------------------------------------------------------ collectives
    def _host(self, array):
        return _Staged(array, self.cuda_aware)

    def _back(self, like, host):
        if isinstance(like, np.ndarray) or type(host) is type(like):
            return host
        import array_api_compat

        xp = array_api_compat.array_namespace(like)
        return xp.asarray(host, device=array_api_compat.device(like))

    def _contiguous(self, array):
        """A C-contiguous buffer MPI can read: a host view/copy, or the device array on CUDA-aware MPI."""
        host = self._host(array).host
        if isinstance(host, np.ndarray):
            return host if host.flags.c_contiguous else np.array(host, order="C")  # keeps 0-d arrays 0-d
        import cupy  # a device array handed straight to a CUDA-aware MPI

        cupy.cuda.get_current_stream().synchronize()
        return cupy.ascontiguousarray(host)

    @staticmethod
    def _empty(like, shape):
        if isinstance(like, np.ndarray):
            return np.empty(shape, dtype=like.dtype)
        import cupy

        return cupy.empty(shape, dtype=like.dtype)

    def _wait(self, request, what: str) -> None:
        """Complete one non-blocking collective; a slow wait watches for ranks that left (see :mod:`.watch`)."""
        watch.wait(request.Test, what, self.departures, self._expected)

    def _check(self, kind: str, *meta) -> None:
        """``DARRAY_DEBUG=1``: every rank of the job agrees on this call before it starts (one allgather)."""
        name, _ = watch.where()
        label = f"{kind}, {meta[0]}" if meta else kind
        _debug.check_collective(self.root, f"{name} ({label})" if name else label, name, kind, *meta)

    def debug_allgather(self, row: np.ndarray) -> np.ndarray:
        """The allgather of ``DARRAY_DEBUG``'s fingerprints: unchecked and unsigned, but watched."""
        out = np.empty((self.size, *row.shape), dtype=row.dtype)
        self._wait(self.comm.Iallgather(row, out), "debug check")
        return out

    def allreduce(self, array: Any, op: str, sign: Any = None) -> Any:
        """Elementwise reduction; ``sign`` (replicated metadata of the caller, e.g. a global shape) joins the
        signature every rank's buffer carries (see :mod:`.signature`)."""
        if op not in REDUCE_OPS:
            raise ValueError(f"allreduce: unknown operator; got {op!r}, expected one of {REDUCE_OPS}")
        if self.size == 1:
            return array
        if type(array) is np.ndarray and _recorder.active is None and not _debug.enabled:
            lean = self._lean_ops.get((op, array.dtype))
            if lean is None:
                lean = self._lean_ops[op, array.dtype] = self._lean_op(op, array.dtype)
            if lean is not False:  # a host array, untraced, no NaN to carry: the stencil loop's residual
                mpi_op, what = lean
                send = array if array.flags.c_contiguous else np.array(array, order="C")  # (0-d stays 0-d)
                buffer, check = signature.fold(send, op, self.size, sign)
                out = np.empty(buffer.shape, dtype=buffer.dtype)
                watch.wait(self.comm.Iallreduce(buffer, out, mpi_op).Test, what, self.departures, self._expected)
                return out if check is None else self._unfold(out, send, check, what)
        send = self._contiguous(array)
        if _debug.enabled:
            self._check(f"allreduce.{op}", send.dtype.name, send.size, sign)
        label = op
        if send.dtype == np.bool_ and op in _BOOL_ORDER:  # MPI orders no booleans: min is and, max is or
            op = _BOOL_ORDER[op]
        unpack = None
        if op in ("min", "max") and send.dtype.kind == "f":  # NaN must win on every rank, as in NumPy
            send, unpack = nan_carrying(send, op)
        buffer, check = (send, None) if not isinstance(send, np.ndarray) else signature.fold(send, op, self.size,
                                                                                              sign)
        out = self._empty(buffer, buffer.shape)
        begin = _recorder.now() if _recorder.active is not None else 0.0
        self._wait(self.comm.Iallreduce(buffer, out, self._ops[op]), f"allreduce.{label}")
        if _recorder.active is not None:
            _recorder.record("comm", f"allreduce.{label}", begin, _recorder.now(), send.nbytes, range(self.size))
        if check is not None:
            out = self._unfold(out, send, check, f"allreduce.{label}")
        return self._back(array, out if unpack is None else unpack(out))

    def _unfold(self, out: np.ndarray, send: np.ndarray, check, what: str) -> np.ndarray:
        """The reduced values of a buffer with a folded signature (its head, shaped like ``send``), once
        ``check`` found that every rank passed the same signature; else :class:`CollectiveMismatch`."""
        if not check(out):
            raise _debug.CollectiveMismatch(self._disagree(what))
        ndim = send.ndim  # [0, ...] is a 0-d view in one step
        return out[:send.size] if ndim == 1 else out[0, ...] if ndim == 0 else out[:send.size].reshape(send.shape)

    def _lean_op(self, op: str, dtype: np.dtype):
        """(MPI operator, the wait's name) for an allreduce ``op`` of host ``dtype`` arrays; False where the
        general path must run (booleans ordered as and/or, float min/max carrying NaN)."""
        if dtype == np.bool_ and op in _BOOL_ORDER or op in ("min", "max") and dtype.kind == "f":
            return False
        return self._ops[op], f"allreduce.{op}"

    def _disagree(self, what: str, groups=None) -> str:
        detail = ("" if groups is None else
                  " (" + "; ".join(f"ranks {[self.members[r] for r in g]} agree" for g in groups.values()) + ")")
        return (f"{watch.describe(what)}: the ranks entered this collective with different operations, dtypes or "
                f"shapes{detail}; every rank must make the same darray calls on the same arrays; rerun with "
                f"DARRAY_DEBUG=1 to name what each rank called")

    def allgather(self, array: Any, sign: Any = None, op: str = "allgather") -> Any:
        """Stack every rank's equal-shaped array; ``sign`` (replicated metadata of the caller) joins the 8-byte
        signature a small contribution carries (see :mod:`.signature`)."""
        send = self._contiguous(array)
        if _debug.enabled:
            self._check("allgather", send.dtype.name, send.size, sign)
        buffer, unpack = (send, None) if not isinstance(send, np.ndarray) else signature.gather_fold(send, sign)
        out = self._empty(buffer, (self.size, *buffer.shape))
        begin = _recorder.now() if _recorder.active is not None else 0.0
        self._wait(self.comm.Iallgather(_typed(buffer), _typed(out)), op)
        if _recorder.active is not None:
            _recorder.record("comm", op, begin, _recorder.now(), send.nbytes * (self.size - 1), range(self.size))
        if unpack is not None:
            out, groups = unpack(out)
            if groups is not None:
                raise _debug.CollectiveMismatch(self._disagree("allgather", groups))
        return self._back(array, out)

    def bcast(self, array: Any, root: int) -> Any:
        send = self._contiguous(array)
        if _debug.enabled:
            self._check("bcast", send.dtype.name, send.size, root)
        buf = self._empty(send, send.shape)
        buf[...] = send
        begin = _recorder.now() if _recorder.active is not None else 0.0
        self._wait(self.comm.Ibcast(_typed(buf), root=root), "bcast")
        if _recorder.active is not None:
            sent = buf.nbytes * (self.size - 1) if self.rank == root else 0
            _recorder.record("comm", "bcast", begin, _recorder.now(), sent, (root,))
        return self._back(array, buf)

    def barrier(self) -> None:
        if _debug.enabled:
            self._check("barrier")
        begin = _recorder.now() if _recorder.active is not None else 0.0
        self._wait(self.comm.Ibarrier(), "barrier")
        if _recorder.active is not None:
            _recorder.record("comm", "barrier", begin, _recorder.now(), 0, range(self.size))

    def abort(self, code: int = 1) -> None:
        self.comm.Abort(code)

    # ------------------------------------------------------------ point to point
    def _subarray(self, buf: np.ndarray, region: Region):
        key = (buf.shape, buf.dtype.str, tuple((s.start, s.stop) for s in region))
        dtype = self._types.get(key)
        if dtype is None:
            from mpi4py.util.dtlib import from_numpy_dtype

            base = from_numpy_dtype(np.dtype(np.int64) if buf.dtype.kind in "Mm" else buf.dtype)
            if buf.ndim == 0:
                dtype = base.Dup()
            else:
                dtype = base.Create_subarray(buf.shape, [s.stop - s.start for s in region],
                                             [s.start for s in region])
            dtype.Commit()
            if len(self._types) > 4096:
                self._types.clear()
            self._types[key] = dtype
        return dtype

    def _message(self, buf: np.ndarray, region: Region):
        """What MPI moves for ``buf[region]``: the view itself when contiguous, else a subarray datatype."""
        view = buf[region]
        if view.flags.c_contiguous:  # rows of C-order blocks: no datatype engine, one copy
            return _typed(view)
        return [buf, 1, self._subarray(buf, region)]

    def _exchange_host(self, send: np.ndarray, sends, recv: np.ndarray, recvs):
        """:meth:`exchange` of NumPy arrays with no message to self, untraced: the stencil loop's case, with
        no staging (host arrays), one tag and each region's view sent as it is (packed only when strided)."""
        comm = self.comm
        self._tag = tag = (self._tag + 1) % KEYED_TAG
        reqs, peers, packed = [], [], []
        for peer, region in recvs:
            view = recv[region]
            if view.size:
                reqs.append(comm.Irecv(self._message(recv, region), peer, tag))
                peers.append(peer)
        for peer, region in sends:
            view = send[region]
            if view.size:
                if not view.flags.c_contiguous:
                    view = np.ascontiguousarray(view)
                    packed.append(view)
                reqs.append(comm.Isend(_typed(view), peer, tag))
                peers.append(peer)
        request = _Request(self.MPI, reqs, None, None, peers, self)
        request.keep = packed  # packed send buffers live until the wait
        return request

    def exchange(self, send, sends: Sequence[tuple[int, Region]], recv, recvs: Sequence[tuple[int, Region]],
                 key=None):
        if type(send) is np.ndarray and type(recv) is np.ndarray and key is None and not _debug.enabled \
                and _recorder.active is None and recv.ndim and send.ndim:  # (views of recv may be strided)
            rank = self.rank
            for peer, _ in sends:
                if peer == rank:
                    break
            else:
                for peer, _ in recvs:
                    if peer == rank:
                        break
                else:
                    return self._exchange_host(send, sends, recv, recvs)
        if _debug.enabled and self.size > 1:
            self._check("exchange", str(send.dtype), str(recv.dtype))
        pairs, sends, recvs = split_self(self.rank, sends, recvs)
        begin = _recorder.now() if _recorder.active is not None else 0.0  # (the copies to self count in)
        for src, dst in pairs:
            copy_region(send, src, recv, dst)
        self._tag = (self._tag + 1) % KEYED_TAG
        if not sends and not recvs:
            return DoneRequest()
        staged_send = self._host(send)
        staged_recv = self._host(recv)
        sbuf, rbuf = staged_send.host, staged_recv.host
        if not sbuf.flags.c_contiguous:  # a strided view (a slice of a block): pack only what is sent
            packed = [np.ascontiguousarray(sbuf[region]) for _, region in sends]
        else:
            packed = None
        if not rbuf.flags.c_contiguous:
            raise ValueError("exchange: the receive buffer must be C-contiguous")
        # keyed exchanges may meet persistent requests on the peer: use the same per-pair tags
        recv_tags = _keyed_tags(recvs) if key is not None else [self._tag] * len(recvs)
        send_tags = _keyed_tags(sends) if key is not None else [self._tag] * len(sends)
        reqs, peers = [], []
        for (peer, region), tag in zip(recvs, recv_tags):
            if _nonempty(region):
                reqs.append(self.comm.Irecv(self._message(rbuf, region), source=peer, tag=tag))
                peers.append(peer)
        for k, ((peer, region), tag) in enumerate(zip(sends, send_tags)):
            if _nonempty(region):
                if packed is not None:
                    reqs.append(self.comm.Isend(_typed(packed[k]), dest=peer, tag=tag))
                else:
                    reqs.append(self.comm.Isend(self._message(sbuf, region), dest=peer, tag=tag))
                peers.append(peer)
        trace = None
        if _recorder.active is not None:
            nbytes = sum(volume(r) for _, r in sends) * sbuf.itemsize
            trace = (begin, nbytes, sorted({p for p, _ in sends} | {p for p, _ in recvs}), _recorder.now(),
                     _recorder.label, len(_recorder.active))
        request = _Request(self.MPI, reqs, staged_recv if staged_recv.copied else None, trace, peers, self)
        request.keep = packed  # packed send buffers live until the wait
        return request

    def bind_strips(self, buffer, sends: Sequence[tuple[int, Region]], recvs: Sequence[tuple[int, Region]]):
        if type(buffer) is not np.ndarray or not buffer.flags.c_contiguous:
            return BoundStrips(self, buffer, sends, recvs)
        return _StripExchange(self, buffer, sends, recvs)

    def bind_exchange(self, buf, sends: Sequence[tuple[int, Region]], recvs: Sequence[tuple[int, Region]]):
        """A reusable exchange within ``buf``: MPI persistent requests made once, started per call.

        The caller owns the result (darray keeps it on the array whose block
        it names); its requests are freed when it is garbage collected.
        """
        if type(buf) is not np.ndarray or not buf.flags.c_contiguous:
            return BoundExchange(self, buf, sends, recvs)
        messages = (list(sends), list(recvs))
        pairs, sends, recvs = split_self(self.rank, sends, recvs)
        recv_tags, send_tags = _keyed_tags(recvs), _keyed_tags(sends)
        if max(recv_tags + send_tags, default=KEYED_TAG) >= KEYED_TAG + KEYED_MAX:
            return BoundExchange(self, buf, *messages)
        reqs, peers = [], []
        for (peer, region), tag in zip(recvs, recv_tags):
            if _nonempty(region):
                reqs.append(self.comm.Recv_init(self._message(buf, region), source=peer, tag=tag))
                peers.append(peer)
        for (peer, region), tag in zip(sends, send_tags):
            if _nonempty(region):
                reqs.append(self.comm.Send_init(self._message(buf, region), dest=peer, tag=tag))
                peers.append(peer)
        nbytes = sum(volume(r) for _, r in sends) * buf.itemsize
        return _PersistentExchange(self, buf, pairs, reqs, peers, nbytes, messages)

    def __repr__(self):
        return f"MPICommunicator(rank={self.rank}, size={self.size})"


def _keyed_tags(messages) -> list[int]:
    """``KEYED_TAG + k`` for the k-th message to (or from) each peer, in list order."""
    seen: dict[int, int] = {}
    tags = []
    for peer, _ in messages:
        k = seen.get(peer, 0)
        seen[peer] = k + 1
        tags.append(KEYED_TAG + k)
    return tags
