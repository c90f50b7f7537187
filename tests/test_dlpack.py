"""DLPack on DArray: a DArray held whole on this rank (one rank, or replicated) exports its owned cells;
an array cut over ranks raises BufferError on every rank (as the standard allows); darray.from_dlpack
round-trips. Layouts: replicated, replicated with a halo, each split, uneven with an empty block."""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray.testing import agree, assert_equal, assert_raises_everywhere, uneven_sizes as uneven

pytestmark = pytest.mark.mpi

P = da.default_communicator().size
COMM = da.default_communicator()
DTYPES = ["float64", "float32", "int32", "uint8", "bool", "complex128"]


def values(shape, dtype) -> np.ndarray:
    a = np.arange(int(np.prod(shape))).reshape(shape) % 7 - 3
    return (a > 0) if dtype == "bool" else (a * (1 + 1j) if dtype == "complex128" else a).astype(dtype)


def layouts(shape) -> dict[str, dict]:
    out = {"replicated": dict(split=None), "replicated-halo": dict(split=None, halo=1)}
    for ax, n in enumerate(shape):
        out[f"split{ax}"] = dict(split=ax)
        if P > 1:
            out[f"split{ax}-uneven"] = dict(split=ax, sizes={ax: uneven(n, P)})
    return out


def whole_here(x) -> bool:
    return P == 1 or x.layout.is_replicated


def test_export_or_buffer_error():
    for dtype in DTYPES:
        g = values((7, 5), dtype)
        for name, kw in layouts(g.shape).items():
            x = da.asarray(g, **kw)
            if whole_here(x):
                got = np.from_dlpack(x)
                ok = got.shape == g.shape and got.dtype == g.dtype and np.array_equal(got, g)
                assert not agree(COMM, ok), f"{dtype} {name}: exported {got!r}"
                assert x.__dlpack_device__() == np.asarray(g).__dlpack_device__()
                for kwargs in ({"max_version": (1, 0)}, {"max_version": None}, {"copy": True}, {}):
                    capsule = x.__dlpack__(**kwargs)
                    assert capsule is not None
            else:
                for call in (np.from_dlpack, lambda a: a.__dlpack__(), lambda a: a.__dlpack_device__(),
                             lambda a: a.__dlpack__(max_version=(1, 0))):
                    msg = assert_raises_everywhere(BufferError, call, x, match="no single buffer")
                    assert "redistribute(split=None)" in msg


def test_from_dlpack_round_trips():
    for dtype in DTYPES:
        g = values((13,), dtype)
        for name, kw in layouts(g.shape).items():
            x = da.asarray(g, **kw)
            whole = x if whole_here(x) else x.redistribute(split=None)
            for target in (dict(), dict(split=0), dict(split=None)):
                y = da.from_dlpack(whole, **target)
                assert_equal(y, g, err_msg=f"{dtype} {name} -> {target}")


class Exporter:
    """Any DLPack producer: darray.from_dlpack sees only __dlpack__ / __dlpack_device__ (here, a DArray's)."""

    def __init__(self, x):
        self.x = x

    def __dlpack__(self, **kwargs):
        return self.x.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


def test_from_dlpack_of_an_exporter():
    for dtype in DTYPES:
        g = values((7, 5), dtype)
        for name, kw in layouts(g.shape).items():
            x = da.asarray(g, **kw)
            if whole_here(x):
                for target in (dict(), dict(split=1)):
                    assert_equal(da.from_dlpack(Exporter(x), **target), g, err_msg=f"{dtype} {name} {target}")
            else:
                assert_raises_everywhere(BufferError, da.from_dlpack, Exporter(x), match="no single buffer")


@pytest.mark.numpy_only
def test_export_shares_memory_unless_copy():
    for name, kw in layouts((6, 4)).items():
        x = da.asarray(values((6, 4), "float64"), **kw)
        if not whole_here(x):
            continue
        view = np.from_dlpack(x)
        assert np.shares_memory(view, x.local), name
        copied = np.from_dlpack(x, copy=True)
        assert not np.shares_memory(copied, x.local), name
        x[0, 0] = 99.0
        assert view[0, 0] == 99.0 and copied[0, 0] != 99.0, name
