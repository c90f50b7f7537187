"""Rank 0 redistributes while the others reduce; under DARRAY_DEBUG every rank reports the mismatch.

Each rank writes its verdict to ``<argv[1]>/rank<r>.txt`` (mpiexec may interleave the ranks' stdout).
"""
import sys
from pathlib import Path

import darray as da

comm = da.default_communicator()
x = da.zeros((16, 16), split=0)
try:
    if comm.rank == 0:
        da.redistribute(x, split=1)
    else:
        da.sum(x, axis=0)
    verdict = "no error"
except Exception as e:
    verdict = f"{type(e).__name__} {str(e)[:150]}"
Path(sys.argv[1], f"rank{comm.rank}.txt").write_text(verdict)
