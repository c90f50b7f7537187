"""One argument varied per rank (``argv[2]``) in a collective entry point, without DARRAY_DEBUG.

Each rank writes its verdict to ``<argv[1]>/rank<r>.txt``: the error it raised, or ``no error`` and what it
got. A hang is the test's timeout. Every case must end on every rank with darray's error, never a hang, a raw
MPI exception or a silent answer.
"""
import sys
from pathlib import Path

import numpy

import darray as da

comm = da.default_communicator()
r, case = comm.rank, sys.argv[2]
flip = r % 2  # (the varied argument: rank 0 passes one value, rank 1 another)
x = da.arange(100, dtype=da.float64, split=0)
m = da.ones((10, 12), split=0)
CASES = {
    "sum-axis": lambda: da.sum(m, axis=flip),
    "mean-axis": lambda: da.mean(m, axis=flip),
    "cumsum-axis": lambda: da.cumsum(m, axis=flip),
    "concat-axis": lambda: da.concat([m, m], axis=flip),
    "overlap-boundary": lambda: da.map_overlap(lambda b: b, x, depth=1, boundary=("periodic", "reflect")[flip]),
    "any-all": lambda: (da.any, da.all)[flip](x > 50),
    "argmax-argmin": lambda: (da.argmax, da.argmin)[flip](x),
    "cumsum-cumprod": lambda: (da.cumulative_sum, da.cumulative_prod)[flip](x),
    "getitem-int": lambda: x[3 + 51 * flip],
    "gather-shape": lambda: da.ones((8, 8 + flip), split=0).gather(),
    "sort-sum": lambda: (da.sort, da.sum)[flip](x),
    # replicated arguments that move nothing themselves: DARRAY_DEBUG=1 compares them
    "quantile-q": lambda: da.quantile(x, 0.25 + 0.5 * flip),
    "var-ddof": lambda: da.var(x, correction=flip),
    "rng-seed": lambda: da.random.default_rng(flip).normal(size=100),
    "asarray-data": lambda: da.asarray(numpy.random.default_rng(flip).random(100)),
    "reshape-shape": lambda: x.reshape((10, 10) if flip else (20, 5)),
}
try:
    out = CASES[case]()
    verdict = f"no error {numpy.asarray(out).ravel()[:3]}"
except Exception as e:  # the verdict is the exception
    verdict = f"{type(e).__name__} {e}"
Path(sys.argv[1], f"rank{r}.txt").write_text(verdict)
