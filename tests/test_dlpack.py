"""DLPack on DArray: a DArray held whole on this rank (one rank, or replicated) exports its owned cells;
an array cut over ranks exports a gathered copy (a collective, as numpy.asarray) and raises BufferError on
every rank for copy=False; __dlpack_device__ is the local block's device, cut or not; darray.from_dlpack
round-trips and honours device=. One test per layout of tests/_cases.py: replicated, replicated with a halo,
each split, uneven with an empty block."""

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
def test_export_whole_or_gathered(layout):
    for dtype in DTYPES:
        g = values(layout.shape, dtype)
        x = layout.array(g)
        got = np.from_dlpack(x)  # a cut array: every rank gathers
        ok = got.shape == g.shape and got.dtype == g.dtype and np.array_equal(got, g)
        assert not agree(COMM, ok), f"{dtype}: exported {got!r}"
        assert x.__dlpack_device__() == np.asarray(g).__dlpack_device__()
        for kwargs in ({"max_version": (1, 0)}, {"max_version": None}, {"copy": True}, {"copy": None},
                       {"dl_device": x.__dlpack_device__()}, {}):
            capsule = x.__dlpack__(**kwargs)
            assert capsule is not None
        if whole_here(x):
            assert x.__dlpack__(copy=False) is not None
        else:
            for call in (lambda a: a.__dlpack__(copy=False), lambda a: np.from_dlpack(a, copy=False)):
                msg = assert_raises_everywhere(BufferError, call, x, match="no single buffer")
                assert "redistribute(split=None)" in msg, dtype


@pytest.mark.parametrize("layout", dlpack_layouts((4, 3)), ids=str)
def test_dlpack_of_an_empty_array(layout):
    """The suite's shrunk example (``array([], dtype=bool)``) and its 2-d kin, cut or not."""
    x = layout.array(values(layout.shape, "bool"))[:0]
    assert x.__dlpack_device__() == np.empty(0).__dlpack_device__()
    got = np.from_dlpack(x)
    assert not agree(COMM, got.shape == (0, 3) and got.dtype == np.bool_)
    for device in da.__array_namespace_info__().devices():
        y = da.from_dlpack(x, device=device)
        assert y.device == device and y.shape == (0, 3)


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
        for target in (dict(), dict(split=1)):  # a cut x: the exporter's __dlpack__ gathers on every rank
            assert_equal(da.from_dlpack(Exporter(x), **target), g, err_msg=f"{dtype} {target}")


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


@pytest.mark.parametrize("layout", dlpack_layouts((5, 3)), ids=str)
def test_from_dlpack_device(layout):
    """``from_dlpack(x, device=d).device == d`` for every device of ``devices()`` (the standard's rule)."""
    g = values(layout.shape, "float64")
    x = layout.array(g)
    for device in da.__array_namespace_info__().devices():
        assert da.empty(2, device=device).device == device
        for copy in (None, True):
            y = da.from_dlpack(x, device=device, copy=copy)
            assert y.device == device, (device, y.device)
            assert y.layout == x.layout
            assert_equal(da.from_dlpack(y, device=x.device), g, err_msg=f"{device!r} copy={copy}")
        if device != x.device:
            assert_raises_everywhere(ValueError, da.from_dlpack, x, device=device, copy=False,
                                     match="copy=False")
    assert da.from_dlpack(x, device=x.device, copy=False) is x
