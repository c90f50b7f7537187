import time

import darray as da
comm = da.default_communicator()
x = da.zeros((16, 16), split=0, halo=1, boundary="periodic")
if comm.rank != 1:
    try:
        x.exchange_halos()
    except TimeoutError as e:
        print(comm.rank, "TimeoutError", e)
        comm.abort(3)
else:
    time.sleep(30)
