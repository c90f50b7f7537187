"""Rank 1 sleeps 2 s before a sum rank 0 is already waiting in: one notice on rank 0, then the right sum."""
import time

import darray as da

comm = da.default_communicator()
x = da.arange(100, dtype=da.float64, split=0)
if comm.rank == 1:
    time.sleep(2)
total = float(da.sum(x))
if comm.rank == 0:
    print("sum", total, flush=True)
