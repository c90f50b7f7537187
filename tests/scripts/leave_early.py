"""A rank leaves while the others still expect it (``argv[1]`` says how); the others must fail in seconds.

rank0-only: darray call inside ``if rank == 0:``, the other ranks finish the script;
exit0 / exit1: rank 1 calls ``sys.exit(0)`` / ``sys.exit(1)`` mid-script; halo: rank 1 exits while the
others exchange halos (point-to-point).
"""
import sys

import darray as da

comm = da.default_communicator()
mode = sys.argv[1]
x = da.ones((16, 16), split=0, halo=1, boundary="periodic")
print("ready", comm.rank, flush=True)
if mode == "rank0-only":
    if comm.rank == 0:
        print(float(da.sum(x)))
elif mode in ("exit0", "exit1", "halo"):
    if comm.rank == 1:
        sys.exit(0 if mode != "exit1" else 1)
    if mode == "halo":
        x.exchange_halos()
    else:
        print(float(da.sum(x)))
