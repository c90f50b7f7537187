"""The NCCL transport on real GPUs: CuPy arrays through ``cupy.cuda.nccl``, checked against NumPy and MPI.

Marked ``gpu`` (needs CuPy and a CUDA device) and ``mpi`` (runs at 1 rank in
the plain run and at 2, 3, 4 ranks under tests/test_ranks.py). NCCL needs one
GPU per rank: where a node has fewer GPUs than ranks, the transport refuses
on every rank and these tests skip with that reason. Without CuPy or a device
they skip with a clear reason. The same logic runs everywhere against a fake
CuPy in tests/test_nccl_protocol.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from darray._comm import Communicator, launched_by_mpi
from darray._comm.base import REDUCE_OPS

pytestmark = [pytest.mark.gpu, pytest.mark.mpi]


def _no_gpu_reason() -> str | None:
    try:
        import cupy
    except Exception as exc:  # ImportError, or a CuPy built for another CUDA
        return f"CuPy is not importable ({type(exc).__name__}: {exc}); install darray[gpu]"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no driver
        return f"no CUDA device ({type(exc).__name__}: {exc})"
    if count < 1:
        return "no CUDA device (0 visible)"
    try:
        from cupy.cuda import nccl

        if not getattr(nccl, "available", True):
            return "CuPy was built without NCCL"
    except Exception as exc:
        return f"cupy.cuda.nccl is not importable ({type(exc).__name__}: {exc})"
    return None


@pytest.fixture(scope="module")
def host_comm():
    """The MPI transport under an MPI launcher; the self transport in a plain run (no MPI initialised)."""
    if launched_by_mpi():
        from darray._comm.mpi import MPICommunicator

        return MPICommunicator()
    from darray._comm.self_ import SelfCommunicator

    return SelfCommunicator()


@pytest.fixture(scope="module")
def comm(host_comm):
    reason = _no_gpu_reason()
    if host_comm.size > 1:  # every rank skips, or none does
        reasons = [r for r in host_comm.comm.allgather(reason) if r]
        reason = reasons[0] if reasons else None
    if reason:
        pytest.skip(reason)
    from darray._comm.nccl import NCCLCommunicator

    try:
        return NCCLCommunicator(host_comm)
    except RuntimeError as exc:  # raised on every rank alike (e.g. two ranks on one GPU)
        if "nccl:" not in str(exc):
            raise
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def cp(comm):
    import cupy

    return cupy


def _check(host_comm, ok: bool, what: str):
    flags = host_comm.allgather(np.asarray([int(bool(ok))], dtype=np.int64))[:, 0]
    bad = [r for r, f in enumerate(flags) if not f]
    assert not bad, f"{what}: wrong on ranks {bad}"


def _data(dtype, rank: int, shape=(64, 33)) -> np.ndarray:
    rng = np.random.default_rng(7 + rank)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    values = rng.integers(1, 4, shape)  # exact in every dtype, products over 4 ranks fit int8
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


def test_is_a_communicator(comm, host_comm):
    assert isinstance(comm, Communicator)
    assert (comm.name, comm.rank, comm.size, comm.cuda_aware) == ("nccl", host_comm.rank, host_comm.size, True)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "int32", "uint32", "int64", "uint64", "float16",
                                   "float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("op", REDUCE_OPS)
def test_allreduce(comm, host_comm, cp, dtype, op):
    dtype = np.dtype(dtype)
    if op in ("min", "max") and dtype.kind == "c":
        pytest.skip("no order on complex numbers")
    mine = _data(dtype, comm.rank)
    if op in ("land", "lor"):
        mine = (mine.real != 1).astype(dtype)
    every = host_comm.allgather(mine)
    got = comm.allreduce(cp.asarray(mine)[:, ::2], op)  # strided: packed by the transport
    ok = isinstance(got, cp.ndarray) and got.dtype == dtype and got.shape == mine[:, ::2].shape
    ok = ok and np.array_equal(cp.asnumpy(got), _oracle(every[:, :, ::2], op, dtype))
    _check(host_comm, ok, f"allreduce {op} {dtype}")


@pytest.mark.parametrize("dtype", ["bool", "int16", "float32", "complex128"])
def test_allgather_and_bcast(comm, host_comm, cp, dtype):
    mine = _data(dtype, comm.rank, shape=(9, 7))
    got = comm.allgather(cp.asarray(mine)[2:5])
    ok = isinstance(got, cp.ndarray) and np.array_equal(cp.asnumpy(got), host_comm.allgather(mine[2:5]))
    root = comm.size - 1
    b = comm.bcast(cp.asarray(mine), root)
    ok = ok and isinstance(b, cp.ndarray) and np.array_equal(cp.asnumpy(b), host_comm.bcast(mine, root))
    _check(host_comm, ok, f"allgather / bcast {dtype}")


def _ring_messages(rank: int, size: int):
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    sends = [(nxt, (slice(1, 3), slice(0, 4))), (nxt, (slice(3, 4), slice(2, 5))),
             (nxt, (slice(2, 2), slice(0, 5))), (rank, (slice(0, 1), slice(1, 3)))]
    recvs = [(prv, (slice(0, 2), slice(1, 5))), (prv, (slice(5, 6), slice(0, 3))),
             (prv, (slice(4, 4), slice(0, 5))), (rank, (slice(6, 7), slice(3, 5)))]
    return sends, recvs


@pytest.mark.parametrize("dtype", ["float64", "bool", "int16", "complex64"])
def test_exchange(comm, host_comm, cp, dtype):
    sends, recvs = _ring_messages(comm.rank, comm.size)
    send = _data(dtype, comm.rank, shape=(5, 6))
    want = np.zeros((8, 6), dtype=dtype)
    host_comm.exchange(send, sends, want, recvs).wait()
    recv = cp.zeros((8, 6), dtype=dtype)
    comm.exchange(cp.asarray(send), sends, recv, recvs).wait()
    _check(host_comm, np.array_equal(cp.asnumpy(recv), want), f"exchange {dtype}")


@pytest.mark.parametrize("keep", [(True, False), (False, True)])
def test_sub(comm, host_comm, cp, keep):
    dims = (2, comm.size // 2) if comm.size % 2 == 0 else (comm.size, 1)
    sub, host_sub = comm.sub(dims, keep), host_comm.sub(dims, keep)
    mine = _data("float64", comm.rank, shape=(3, 4))
    got = sub.allreduce(cp.asarray(mine), "sum")
    ok = (sub.rank, sub.size) == (host_sub.rank, host_sub.size) and comm.sub(dims, keep) is sub
    ok = ok and np.array_equal(cp.asnumpy(got), np.sum(host_sub.allgather(mine), axis=0))
    _check(host_comm, ok, f"sub {dims} keep={keep}")


# ------------------------------------------------------ darray on the GPU --


def test_darray_with_cupy_blocks(comm, cp):
    import darray as da
    from darray.testing import assert_equal

    shape = (37, 29)  # uneven over every rank count
    a_np = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) / 7.0
    b_np = np.cos(a_np)
    a = da.asarray(a_np, device="cupy", split=0, comm=comm)
    b = da.asarray(b_np, device="cupy", split=0, comm=comm)
    assert isinstance(a.local, cp.ndarray)
    assert_equal(a * b + 1.0, a_np * b_np + 1.0)
    assert_equal(da.sum(a, axis=0), np.sum(a_np, axis=0), rtol=1e-12)
    total = da.sum(a)
    assert_equal(total, np.asarray(np.sum(a_np)), rtol=1e-12)
    z = da.zeros(shape, dtype="float32", device="cupy", split=1, comm=comm)
    assert_equal(z + 2, np.full(shape, 2, dtype=np.float32))
    moved = a.redistribute(split=1)
    assert_equal(moved, a_np)
    full = a.gather()
    assert isinstance(full, cp.ndarray) and np.array_equal(cp.asnumpy(full), a_np)
