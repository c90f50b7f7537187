"""DLPack on DArray: a DArray held whole on this rank (one rank, or replicated) exports its owned cells;
an array cut over ranks raises BufferError on every rank (as the standard allows); darray.from_dlpack
round-trips. One test per layout of tests/_cases.py: replicated, replicated with a halo, each split, uneven
with an empty block."""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray.testing import agree, assert_equal, assert_raises_everywhere

from _cases import COMM, P, layouts, values

pytestmark = pytest.mark.mpi

DTYPES = ["float64", "float32", "int32", "uint8", "bool", "complex128"]


def dlpack_layouts(shape) -> list:
    """Replicated (with and without a halo); per axis cut evenly and, at more than one rank, unevenly."""
    per_axis = [[f"split{ax}", *([f"uneven{ax}"] if P > 1 else [])] for ax in range(len(shape))]
    return layouts(shape, "replicated", "replicated-halo", *sum(per_axis, []))


def whole_here(x) -> bool:
    return P == 1 or x.layout.is_replicated


@pytest.mark.parametrize("layout", dlpack_layouts((7, 5)), ids=str)
def test_export_or_buffer_error(layout):
    for dtype in DTYPES:
        g = values(layout.shape, dtype)
        x = layout.array(g)
        if whole_here(x):
            got = np.from_dlpack(x)
            ok = got.shape == g.shape and got.dtype == g.dtype and np.array_equal(got, g)
            assert not agree(COMM, ok), f"{dtype}: exported {got!r}"
            assert x.__dlpack_device__() == np.asarray(g).__dlpack_device__()
            for kwargs in ({"max_version": (1, 0)}, {"max_version": None}, {"copy": True}, {}):
                capsule = x.__dlpack__(**kwargs)
                assert capsule is not None
        else:
            for call in (np.from_dlpack, lambda a: a.__dlpack__(), lambda a: a.__dlpack_device__(),
                         lambda a: a.__dlpack__(max_version=(1, 0))):
                msg = assert_raises_everywhere(BufferError, call, x, match="no single buffer")
                assert "redistribute(split=None)" in msg, dtype


@pytest.mark.parametrize("layout", dlpack_layouts((13,)), ids=str)
def test_from_dlpack_round_trips(layout):
    for dtype in DTYPES:
        g = values(layout.shape, dtype)
        x = layout.array(g)
        whole = x if whole_here(x) else x.redistribute(split=None)
        for target in (dict(), dict(split=0), dict(split=None)):
            y = da.from_dlpack(whole, **target)
            assert_equal(y, g, err_msg=f"{dtype} -> {target}")


class Exporter:
    """Any DLPack producer: darray.from_dlpack sees only __dlpack__ / __dlpack_device__ (here, a DArray's)."""

    def __init__(self, x):
        self.x = x

    def __dlpack__(self, **kwargs):
        return self.x.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


@pytest.mark.parametrize("layout", dlpack_layouts((7, 5)), ids=str)
def test_from_dlpack_of_an_exporter(layout):
    for dtype in DTYPES:
        g = values(layout.shape, dtype)
        x = layout.array(g)
        if whole_here(x):
            for target in (dict(), dict(split=1)):
                assert_equal(da.from_dlpack(Exporter(x), **target), g, err_msg=f"{dtype} {target}")
        else:
            assert_raises_everywhere(BufferError, da.from_dlpack, Exporter(x), match="no single buffer")


@pytest.mark.numpy_only
@pytest.mark.parametrize("layout", [c for c in dlpack_layouts((6, 4)) if P == 1 or "replicated" in c.flags], ids=str)
def test_export_shares_memory_unless_copy(layout):
    """The layouts whose every rank holds the whole array (the others cannot export)."""
    x = layout.array(values(layout.shape, "float64"))
    view = np.from_dlpack(x)
    assert np.shares_memory(view, x.local)
    copied = np.from_dlpack(x, copy=True)
    assert not np.shares_memory(copied, x.local)
    x[0, 0] = 99.0
    assert view[0, 0] == 99.0 and copied[0, 0] != 99.0
