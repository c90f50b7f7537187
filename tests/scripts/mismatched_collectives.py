import darray as da, numpy as np
comm = da.default_communicator()
x = da.zeros((16, 16), split=0)
try:
    if comm.rank == 0:
        da.redistribute(x, split=1)
    else:
        da.sum(x, axis=0)
except Exception as e:
    print(comm.rank, type(e).__name__, str(e)[:150])
