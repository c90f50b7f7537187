"""Rank 0 sorts while the others sum (different collectives: this would hang in MPI); darray raises."""
import darray as da

comm = da.default_communicator()
x = da.arange(100, dtype=da.float64, split=0)
if comm.rank == 0:
    da.sort(x)
else:
    da.sum(x)
