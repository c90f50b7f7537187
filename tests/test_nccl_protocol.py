"""The NCCL transport without a GPU: its interface, its lazy import, and its logic against a fake CuPy.

``NCCLCommunicator`` must implement every method of the ``Communicator``
protocol with the same signature, and importing it must not import CuPy.

The fake CuPy below is NumPy arrays that expose a ``data.ptr``, and a fake
``cupy.cuda.nccl`` that carries out each NCCL call on those pointers with
mpi4py (or locally on one rank). It checks the transport's own logic (dtype
mapping, boolean and complex reductions, byte-wise data movement, packing and
unpacking of exchange regions, self messages, NCCL groups, sub-communicators)
against the MPI transport and NumPy at every rank count the suite runs; the
real CuPy/NCCL path is tests/gpu/test_nccl.py.
"""

from __future__ import annotations

import ctypes
import importlib.machinery
import inspect
import os
import subprocess
import sys
import types

import numpy as np
import pytest

from darray._comm import Communicator, launched_by_mpi
from darray._comm.base import REDUCE_OPS
from darray._comm.self_ import SelfCommunicator

# ----------------------------------------------------------- the interface --


def _protocol_methods() -> list[str]:
    return sorted(n for n, v in vars(Communicator).items() if callable(v) and not n.startswith("_"))


def test_protocol_has_the_expected_methods():
    # guards the test below against an empty list
    assert _protocol_methods() == ["abort", "allgather", "allreduce", "barrier", "bcast", "bind_exchange",
                                   "bind_strips", "exchange", "sub"]


@pytest.mark.parametrize("method", _protocol_methods())
def test_nccl_communicator_implements_the_protocol_method(method):
    from darray._comm.nccl import NCCLCommunicator

    impl = getattr(NCCLCommunicator, method, None)
    assert callable(impl), f"NCCLCommunicator lacks {method}"
    want = inspect.signature(getattr(Communicator, method))
    got = inspect.signature(impl)
    simple = [(p.name, p.kind, p.default) for p in want.parameters.values()]
    assert [(p.name, p.kind, p.default) for p in got.parameters.values()] == simple, (method, got, want)


def test_nccl_communicator_names_itself():
    from darray._comm.nccl import NCCLCommunicator

    assert NCCLCommunicator.name == "nccl"
    assert NCCLCommunicator.cuda_aware is True
    assert set(Communicator.__annotations__) == {"name", "rank", "size"}


def test_importing_the_nccl_transport_does_not_import_cupy():
    code = """
import sys

class Block:
    tried = []
    def find_spec(self, name, path=None, target=None):
        if name == "cupy" or name.startswith("cupy."):
            Block.tried.append(name)
            raise ImportError("blocked: " + name)
        return None

sys.meta_path.insert(0, Block())
import darray
import darray._comm
import darray._comm.nccl
from darray._comm.nccl import NCCLCommunicator
assert not Block.tried, Block.tried
assert not any(m == "cupy" or m.startswith("cupy.") for m in sys.modules)
print("ok")
"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for var in ("PMI_SIZE", "PMI_RANK", "PMI_FD", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"):
        env.pop(var, None)  # a plain process, whatever launched this test
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr


# -------------------------------------------------------------- a fake CuPy --


class _Pointer:
    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr


class _FakeDeviceArray(np.ndarray):
    """A NumPy array that answers ``.data.ptr`` and ``.get()`` as a CuPy array does."""

    @property
    def data(self):  # mirrors cupy.ndarray.data (a MemoryPointer)
        return _Pointer(self.__array_interface__["data"][0])

    def get(self):
        return np.array(self)


class _Stream:
    ptr = 0
    synced = 0

    def synchronize(self):
        _Stream.synced += 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Device:
    def __init__(self, index=0):
        self.id = index
        self.pci_bus_id = f"fake-{os.getpid()}-{index}"  # one GPU per process

    def use(self):
        return None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NP_OF = {0: np.int8, 1: np.uint8, 2: np.int32, 3: np.uint32, 4: np.int64, 5: np.uint64, 6: np.float16,
          7: np.float32, 8: np.float64}
_REDUCE = {0: np.add, 1: np.multiply, 2: np.maximum, 3: np.minimum}


def _view(ptr, count, datatype) -> np.ndarray:
    dtype = np.dtype(_NP_OF[datatype])
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(ptr)
    return np.frombuffer(raw, dtype=dtype)


class _Group:
    pending: list | None = None


def _fake_nccl_module():
    nccl = types.ModuleType("cupy.cuda.nccl")
    for name, value in [("NCCL_SUM", 0), ("NCCL_PROD", 1), ("NCCL_MAX", 2), ("NCCL_MIN", 3), ("NCCL_INT8", 0),
                        ("NCCL_UINT8", 1), ("NCCL_INT32", 2), ("NCCL_UINT32", 3), ("NCCL_INT64", 4),
                        ("NCCL_UINT64", 5), ("NCCL_FLOAT16", 6), ("NCCL_FLOAT32", 7), ("NCCL_FLOAT64", 8)]:
        setattr(nccl, name, value)
    nccl.calls = []

    def get_unique_id():
        return tuple(int(b) - 128 for b in os.urandom(128))

    def group_start():
        assert _Group.pending is None, "nested groupStart"
        _Group.pending = []

    def group_end():
        ops, _Group.pending = _Group.pending, None
        assert ops is not None, "groupEnd without groupStart"
        if ops:
            from mpi4py import MPI

            reqs = [(c.Irecv if kind == "recv" else c.Isend)(buf, peer, 77) for kind, c, buf, peer in ops]
            MPI.Request.Waitall(reqs)

    class NcclCommunicator:
        def __init__(self, ndev, uid, rank):
            from mpi4py import MPI

            assert len(uid) == 128
            # every rank of the parent calls this at once (one group per colour): split WORLD by the id
            color = int.from_bytes(bytes(x & 0xFF for x in uid[:4]), "little") % (1 << 30)
            self.comm = MPI.COMM_WORLD.Split(color, rank)
            assert self.comm.Get_size() == ndev and self.comm.Get_rank() == rank
            self.ndev, self.rank = ndev, rank

        def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream):
            nccl.calls.append(("allReduce", datatype, op, count))
            send = _view(sendbuf, count, datatype).copy()
            every = np.empty((self.ndev, count), dtype=send.dtype)
            self.comm.Allgather(send.view(np.uint8), every.view(np.uint8))
            _view(recvbuf, count, datatype)[...] = _REDUCE[op].reduce(every, axis=0, dtype=send.dtype)

        def allGather(self, sendbuf, recvbuf, count, datatype, stream):
            nccl.calls.append(("allGather", datatype, count))
            send = _view(sendbuf, count, datatype).copy()
            self.comm.Allgather(send.view(np.uint8), _view(recvbuf, count * self.ndev, datatype).view(np.uint8))

        def broadcast(self, sendbuff, recvbuff, count, datatype, root, stream):
            nccl.calls.append(("broadcast", datatype, count))
            out = _view(recvbuff, count, datatype)
            if self.rank == root and sendbuff != recvbuff:
                out[...] = _view(sendbuff, count, datatype)
            self.comm.Bcast(out.view(np.uint8), root=root)

        def _p2p(self, kind, ptr, count, datatype, peer):
            nccl.calls.append((kind, datatype, count, peer))
            assert _Group.pending is not None, f"{kind} outside a group would deadlock real NCCL here"
            buf = _view(ptr, count, datatype).view(np.uint8)
            _Group.pending.append((kind, self.comm, buf.copy() if kind == "send" else buf, peer))

        def send(self, sendbuf, count, datatype, peer, stream):
            self._p2p("send", sendbuf, count, datatype, peer)

        def recv(self, recvbuf, count, datatype, peer, stream):
            self._p2p("recv", recvbuf, count, datatype, peer)

    nccl.get_unique_id = get_unique_id
    nccl.groupStart = group_start
    nccl.groupEnd = group_end
    nccl.NcclCommunicator = NcclCommunicator
    return nccl


def _fake_cupy_modules() -> dict[str, types.ModuleType]:
    cp = types.ModuleType("cupy")
    cuda = types.ModuleType("cupy.cuda")
    nccl = _fake_nccl_module()
    stream = _Stream()
    cp.ndarray = _FakeDeviceArray
    cp.empty = lambda shape, dtype=float: np.empty(shape, dtype=dtype).view(_FakeDeviceArray)
    cp.asarray = lambda a: np.array(a).view(_FakeDeviceArray)
    cuda.get_current_stream = lambda: stream
    cuda.runtime = types.SimpleNamespace(getDeviceCount=lambda: 1)
    cuda.Device = _Device
    cuda.nccl = nccl
    cp.cuda = cuda
    modules = {"cupy": cp, "cupy.cuda": cuda, "cupy.cuda.nccl": nccl}
    for name, module in modules.items():  # importlib.util.find_spec("cupy") must keep working meanwhile
        module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    return modules


@pytest.fixture(scope="module")
def fake_cupy():
    saved = {k: v for k, v in sys.modules.items() if k == "cupy" or k.startswith("cupy.")}
    for k in saved:
        del sys.modules[k]
    modules = _fake_cupy_modules()
    sys.modules.update(modules)
    try:
        yield modules["cupy"]
    finally:
        for k in modules:
            sys.modules.pop(k, None)
        sys.modules.update(saved)


@pytest.fixture(scope="module")
def host_comm(fake_cupy):
    """The MPI transport under an MPI launcher; the self transport (no MPI) in a plain run."""
    if launched_by_mpi():
        from darray._comm.mpi import MPICommunicator

        return MPICommunicator()
    return SelfCommunicator()


@pytest.fixture(scope="module")
def comm(fake_cupy, host_comm):
    from darray._comm.nccl import NCCLCommunicator

    return NCCLCommunicator(host_comm)


def dev(a):
    return np.array(a).view(_FakeDeviceArray)


DTYPES = ["bool", "int8", "uint8", "int16", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64",
          "complex64", "complex128"]


def _data(dtype, rank: int, shape=(4, 6)) -> np.ndarray:
    rng = np.random.default_rng(1000 + rank)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    values = rng.integers(1, 4, shape)  # small integers: products over 4 ranks fit int8, float sums are exact
    if dtype.kind == "c":
        return (values + 1j * rng.integers(0, 3, shape)).astype(dtype)
    return values.astype(dtype)


def _oracle(every: np.ndarray, op: str, dtype) -> np.ndarray:
    if op == "land":
        return np.logical_and.reduce(every != 0, axis=0).astype(dtype)
    if op == "lor":
        return np.logical_or.reduce(every != 0, axis=0).astype(dtype)
    ufunc = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}[op]
    return ufunc.reduce(every, axis=0, dtype=every.dtype)


def _check(host_comm, ok: bool, what: str):
    """Agree on a verdict across ranks (a failure on one rank fails all)."""
    flags = host_comm.allgather(np.asarray([int(ok)], dtype=np.int64))[:, 0]
    bad = [r for r, f in enumerate(flags) if not f]
    assert not bad, f"{what}: wrong on ranks {bad}"


# -------------------------------------------------- the logic, on the fake --


@pytest.mark.mpi
def test_fake_communicator_is_a_communicator(comm, host_comm):
    assert isinstance(comm, Communicator)
    assert (comm.rank, comm.size, comm.name) == (host_comm.rank, host_comm.size, "nccl")


@pytest.mark.mpi
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", REDUCE_OPS)
def test_allreduce_matches_numpy(comm, host_comm, dtype, op):
    dtype = np.dtype(dtype)
    if op in ("min", "max") and dtype.kind == "c":
        pytest.skip("no order on complex numbers")
    mine = _data(dtype, comm.rank)
    if op in ("land", "lor"):
        mine = (mine.real != 1).astype(dtype)  # 0/1 values: at one rank the input is returned as is
    every = host_comm.allgather(mine)
    # a strided (non-contiguous) view goes in: the transport packs it
    wide = np.zeros((mine.shape[0], 2 * mine.shape[1]), dtype=dtype)
    wide[:, ::2] = mine
    got = comm.allreduce(dev(wide)[:, ::2], op)
    ok = isinstance(got, _FakeDeviceArray) and got.dtype == dtype and got.shape == mine.shape
    ok = ok and np.array_equal(np.asarray(got), _oracle(every, op, dtype))
    _check(host_comm, ok, f"allreduce {op} {dtype}")


@pytest.mark.mpi
def test_allreduce_zero_d_and_empty_keep_their_shape(comm, host_comm):
    got0 = comm.allreduce(dev(np.float64(comm.rank + 1)), "sum")
    got_e = comm.allreduce(dev(np.zeros((0, 3), dtype=np.int32)), "max")
    want = sum(range(1, comm.size + 1))
    _check(host_comm, got0.shape == () and float(got0) == want and got_e.shape == (0, 3), "0-d / empty allreduce")


@pytest.mark.mpi
def test_allreduce_uses_nccl_types(comm, fake_cupy):
    if comm.size == 1:
        pytest.skip("one rank: nothing to reduce")
    nccl = fake_cupy.cuda.nccl
    nccl.calls.clear()
    comm.allreduce(dev(np.ones(3, np.complex128)), "sum")
    comm.allreduce(dev(np.ones(3, bool)), "sum")
    comm.allreduce(dev(np.ones(3, np.int16)), "sum")  # no NCCL int16: through MPI
    assert nccl.calls == [("allReduce", nccl.NCCL_FLOAT64, nccl.NCCL_SUM, 6),
                          ("allReduce", nccl.NCCL_UINT8, nccl.NCCL_MAX, 3)]


@pytest.mark.mpi
def test_allreduce_rejects_unknown_operators_on_every_rank(comm):
    with pytest.raises(ValueError, match="allreduce: unknown operator"):
        comm.allreduce(dev(np.ones(3)), "mean")


@pytest.mark.mpi
@pytest.mark.parametrize("dtype", ["bool", "int16", "float32", "complex128"])
def test_allgather_and_bcast_match_mpi(comm, host_comm, dtype):
    mine = _data(dtype, comm.rank, shape=(3, 5))
    got = comm.allgather(dev(mine)[:, 1:4])
    ok = isinstance(got, _FakeDeviceArray) and np.array_equal(np.asarray(got), host_comm.allgather(mine[:, 1:4]))
    root = comm.size - 1
    b = comm.bcast(dev(mine), root)
    ok = ok and isinstance(b, _FakeDeviceArray) and np.array_equal(np.asarray(b), host_comm.bcast(mine, root))
    _check(host_comm, ok, f"allgather / bcast {dtype}")


@pytest.mark.mpi
def test_host_arrays_go_through_the_host_transport(comm, host_comm):
    a = np.arange(4.0) + comm.rank
    got = comm.allreduce(a, "sum")
    _check(host_comm, type(got) is np.ndarray and np.array_equal(got, host_comm.allreduce(a, "sum")),
           "host allreduce")


def _ring_messages(rank: int, size: int):
    """Two messages to the next rank, two from the previous, one empty each way, one to self.

    The message to self is a 2 x 1 column received as a 1 x 2 row: regions of one
    volume but different shapes, as the halo adjoint's flat staging buffer has.
    """
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    sends = [(nxt, (slice(1, 3), slice(0, 4))), (nxt, (slice(3, 4), slice(2, 5))),
             (nxt, (slice(2, 2), slice(0, 5))), (rank, (slice(0, 2), slice(1, 2)))]
    recvs = [(prv, (slice(0, 2), slice(1, 5))), (prv, (slice(5, 6), slice(0, 3))),
             (prv, (slice(4, 4), slice(0, 5))), (rank, (slice(6, 7), slice(3, 5)))]
    return sends, recvs


@pytest.mark.mpi
@pytest.mark.parametrize("dtype", ["float64", "bool", "int16", "complex64"])
def test_exchange_matches_the_host_transport(comm, host_comm, fake_cupy, dtype):
    sends, recvs = _ring_messages(comm.rank, comm.size)
    send = _data(dtype, comm.rank, shape=(5, 6))
    want = np.zeros((8, 6), dtype=dtype)
    host_comm.exchange(send, sends, want, recvs).wait()
    recv = dev(np.zeros((8, 6), dtype=dtype))
    before = _Stream.synced
    req = comm.exchange(dev(send), sends, recv, recvs)
    req.wait()
    req.wait()  # a second wait is harmless
    ok = np.array_equal(np.asarray(recv), want) and (comm.size == 1 or _Stream.synced > before)
    _check(host_comm, ok, f"exchange {dtype}")


@pytest.mark.mpi
def test_exchange_of_host_buffers_goes_through_the_host_transport(comm, host_comm):
    sends, recvs = _ring_messages(comm.rank, comm.size)
    send = _data("float64", comm.rank, shape=(5, 6))
    want, got = np.zeros((8, 6)), np.zeros((8, 6))
    host_comm.exchange(send, sends, want, recvs).wait()
    comm.exchange(send, sends, got, recvs).wait()
    _check(host_comm, np.array_equal(got, want), "host exchange")


@pytest.mark.mpi
def test_exchange_rejects_mixed_buffers(comm):
    with pytest.raises(TypeError, match="exchange: send and receive buffers must both be CuPy arrays"):
        comm.exchange(dev(np.zeros(3)), [], np.zeros(3), [])
    with pytest.raises(TypeError, match="one dtype"):
        comm.exchange(dev(np.zeros(3)), [], dev(np.zeros(3, np.float32)), [])


def _grid(size: int) -> tuple[int, int]:
    return (2, size // 2) if size % 2 == 0 else (size, 1)


@pytest.mark.mpi
@pytest.mark.parametrize("keep", [(True, False), (False, True), (True, True)])
def test_sub_communicators_match_mpi(comm, host_comm, keep):
    dims = _grid(comm.size)
    sub, host_sub = comm.sub(dims, keep), host_comm.sub(dims, keep)
    ok = (sub.rank, sub.size) == (host_sub.rank, host_sub.size) and comm.sub(dims, keep) is sub
    ok = ok and (sub is comm) == all(keep)
    mine = _data("int64", comm.rank, shape=(2, 3))
    got = sub.allreduce(dev(mine), "sum")
    ok = ok and np.array_equal(np.asarray(got), np.sum(host_sub.allgather(mine), axis=0))
    _check(host_comm, ok, f"sub {dims} keep={keep}")


@pytest.mark.mpi
def test_barrier_synchronises_the_stream(comm):
    before = _Stream.synced
    comm.barrier()
    assert _Stream.synced == before + 1


@pytest.mark.mpi
def test_two_ranks_on_one_gpu_are_refused_on_every_rank(fake_cupy, host_comm, monkeypatch):
    from darray._comm.nccl import NCCLCommunicator

    def one_gpu(self, index=0):
        self.id, self.pci_bus_id = index, "0000:01:00.0"

    monkeypatch.setattr(_Device, "__init__", one_gpu)
    if host_comm.size == 1:
        assert NCCLCommunicator(host_comm).device.pci_bus_id == "0000:01:00.0"
    else:  # the suite's ranks all run on this one host
        with pytest.raises(RuntimeError, match="nccl: two ranks share one GPU; got ranks 0 and 1"):
            NCCLCommunicator(host_comm)
