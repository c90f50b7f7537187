"""Every rank raises the same error (shapes that do not broadcast), or (``different``) ranks raise different ones."""
import sys

import numpy as np

import darray as da

x = da.asarray(np.ones((64, 64)), split=0)
float(da.sum(x))  # (a collective first: the ranks raise together even on a loaded machine)
if sys.argv[1:] == ["different"]:
    rank = da.default_communicator().rank
    if rank % 2:
        raise RuntimeError("odd ranks fail")
    raise KeyError("even ranks fail")
y = x[:, :10] + x
