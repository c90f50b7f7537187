"""Ranks enter the same collective with different operations or shapes (``argv[2]``), without DARRAY_DEBUG.

Each rank writes its verdict to ``<argv[1]>/rank<r>.txt``; a hang is the test's timeout.
"""
import sys
from pathlib import Path

import darray as da

comm = da.default_communicator()
r, case = comm.rank, sys.argv[2]
x = da.arange(100, dtype=da.float64, split=0)
try:
    if case == "shape":    # global shapes differ per rank: the sums used to agree on a wrong number
        out = da.sum(da.arange(100 + 10 * r, dtype=da.float64, split=0))
    elif case == "sum-prod":
        out = da.sum(x) if r == 0 else da.prod(x[1:10])
    elif case == "sum-max":
        out = da.sum(x) if r == 0 else da.max(x)
    verdict = f"no error {float(da.sum(out))}"
except Exception as e:
    verdict = f"{type(e).__name__} {str(e)[:300]}"
Path(sys.argv[1], f"rank{r}.txt").write_text(verdict)
