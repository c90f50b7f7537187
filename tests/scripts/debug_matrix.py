"""Under DARRAY_DEBUG=1: rank 0 calls one collective-issuing function, the other ranks another, for every pair.

Each pair must raise CollectiveMismatch on every rank (never hang, never an MPI error). Each rank writes
``i j verdict`` lines to ``<argv[1]>/rank<r>.txt``.
"""
import sys
from pathlib import Path

import numpy as np

import darray as da

comm = da.default_communicator()
x = da.asarray(np.arange(13 * 5, dtype=np.float64).reshape(13, 5) % 7, split=0)
v = da.asarray(np.arange(13, dtype=np.float64) % 5, split=0)
h = da.ones((13, 5), split=0, halo=1, boundary="periodic")
CALLS = {
    "sum": lambda: da.sum(x),
    "prod": lambda: da.prod(x, axis=0),
    "max": lambda: da.max(v),
    "mean": lambda: da.mean(x),
    "var": lambda: da.var(x, axis=0),
    "cumulative_sum": lambda: da.cumulative_sum(x, axis=0),
    "sort": lambda: da.sort(v),
    "argmax": lambda: da.argmax(v),
    "unique_values": lambda: da.unique_values(v),
    "nonzero": lambda: da.nonzero(v),
    "gather": lambda: x.gather(),
    "redistribute": lambda: da.redistribute(x, split=1),
    "exchange_halos": lambda: h.exchange_halos(),
    "matmul": lambda: da.matmul(da.matrix_transpose(x), x),
    "take": lambda: da.take(v, da.asarray([3, 0, 12], split=None)),
    "float32 sum": lambda: da.sum(da.astype(x, da.float32)),
}
names = list(CALLS)
lines = []
for i, a in enumerate(names):
    for j, b in enumerate(names):
        if i == j:
            continue
        try:
            CALLS[a if comm.rank == 0 else b]()
            verdict = "no error"
        except Exception as e:  # recorded, judged by the test
            verdict = type(e).__name__
        lines.append(f"{a}|{b}|{verdict}")
        comm.barrier()
Path(sys.argv[1], f"rank{comm.rank}.txt").write_text("\n".join(lines))
