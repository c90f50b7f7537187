"""The cost model (darray.explain) predicts what the tracer measures: bytes of a halo exchange per rank."""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray.testing import agree

pytestmark = pytest.mark.mpi

CASES = [
    ((64, 48), dict(split=0), 1, "periodic"),
    ((64, 48), dict(split=1), 2, "reflect"),
    ((33, 17), dict(split=0, sizes=None), {0: 3}, "none"),
    ((20, 21, 22), dict(split="auto"), 1, "periodic"),
]


@pytest.mark.parametrize("shape, layout, halo, boundary", CASES)
def test_explain_matches_the_tracer(shape, layout, halo, boundary):
    comm = da.default_communicator()
    kw = {k: v for k, v in layout.items() if v is not None}
    x = da.zeros(shape, halo=halo, boundary=boundary, **kw)
    predicted = da.explain(x)
    with da.tracing() as t:
        x.exchange_halos(force=True)
    measured = sum(e["nbytes"] for e in t.events if e["kind"] == "comm" and e["op"] == "halo")
    want = predicted.bytes_sent[comm.rank]
    ok = abs(measured - want) <= 0.1 * max(want, 1) if comm.name == "mpi" else measured == 0
    assert not agree(comm, ok), (measured, want)
    total = np.asarray(comm.allreduce(np.asarray([measured], dtype=np.int64), "sum"))[0]
    if comm.name == "mpi":
        assert abs(int(total) - sum(predicted.bytes_sent)) <= 0.1 * max(sum(predicted.bytes_sent), 1)


def test_explain_at_another_rank_count_without_running():
    e = da.explain((1024, 1024), nprocs=8, split=0, halo={0: 1}, boundary="periodic")
    assert e.bytes_sent == [2 * 1024 * 8] * 8
    assert e.messages == [2] * 8
    small = da.explain((16, 16), nprocs=8, split=0, halo={0: 1}, boundary="periodic")
    assert not small.pays_off()  # tiny domains do not pay off
    assert e.pays_off()
    assert "pays off" in str(e)
