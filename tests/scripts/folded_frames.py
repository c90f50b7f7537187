"""An uncaught error whose traceback passes through darray: the case named by argv[1] (tests/test_tracebacks.py)."""
import sys

if sys.argv[1] == "previous":  # a hook installed before darray gets every exception, as it was
    def mine(kind, value, tb):
        sys.stderr.write(f"my hook: {kind.__name__}\n")

    sys.excepthook = mine

import numpy as np

import darray as da

case = sys.argv[1]
x = da.asarray(np.ones((64, 64)), split=0)
float(da.sum(x))  # (a collective first: the ranks raise together even on a loaded machine)


def stencil(block):
    return block[1:-1] + missing_name  # noqa: F821 (the user's mistake in a function darray calls back)


def interrupted(block):
    raise KeyboardInterrupt


if case in ("shape", "previous"):
    y = x[:, :10] + x
elif case == "callback":
    da.map_overlap(stencil, x, depth=1)
elif case == "fused":
    @da.fuse
    def step(u):
        return u[:, :10] + u

    step(x)
elif case == "chained":
    try:
        x[:, :10] + x
    except ValueError as err:
        raise RuntimeError("my step failed") from err
elif case == "interrupt":
    da.map_overlap(interrupted, x, depth=1)
elif case == "rank1":  # the others finish the script
    if da.default_communicator().rank == 1:
        x[:, :10] + x
elif case == "plain":
    raise KeyError("not darray's")
