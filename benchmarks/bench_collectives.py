"""What darray adds to a small collective: the always-on signature and the watched wait.

    mpiexec -n 2 python benchmarks/bench_collectives.py [--number 20000]

Times, per call and per rank, an ``allreduce`` of a few float64 values
(the size a reduction's partials have) three ways in the same run:

- ``mpi4py``: ``comm.Allreduce`` on a preallocated buffer, the floor;
- ``darray, no signature``: darray's communicator with the signature fold
  switched off (``darray._comm.signature.fold`` replaced for the run);
- ``darray``: darray's communicator as it ships, where every allreduce also
  carries the call's signature (:mod:`darray._comm.signature`) so that ranks
  that entered it with different operations or shapes raise
  ``CollectiveMismatch`` instead of returning wrong numbers.

The "signature" column is the difference of the last two: the cost of the
always-on check. Best of 7 repeats; check the load first (``uptime``):
``mpiexec -n 4`` on 2 cores oversubscribes them and times nothing useful.
Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import timeit

import numpy as np

import darray
from darray._comm import signature


def _best(call, number: int) -> float:
    return min(timeit.repeat(call, number=number, repeat=7)) / number


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--number", type=int, default=20000, help="calls per timing repeat (default 20000)")
    args = parser.parse_args(argv)
    comm = darray.default_communicator()
    say = print if comm.rank == 0 else (lambda *a, **k: None)
    if comm.size == 1:
        say("bench_collectives: run it under mpiexec -n 2 (one rank sends nothing)")
        return
    from mpi4py import MPI

    raw = MPI.COMM_WORLD
    say(f"# bench_collectives: {comm.size} ranks, load {os.getloadavg()[0]:.2f}")
    say(f"{'allreduce sum of':18s} {'mpi4py us':>10s} {'no sign us':>11s} {'darray us':>10s} {'signature us':>13s}")
    sign = ((41, 41), (True, False))  # what a reduction over the cut axis of a 41 x 41 array passes
    for n in (1, 8, 1000):
        send, out = np.ones(n), np.empty(n)
        floor = _best(lambda: raw.Allreduce(send, out), args.number)
        fold = signature.fold
        signature.fold = lambda buffer, op, size, sign=None: (buffer, None)
        try:
            plain = _best(lambda: comm.allreduce(send, "sum", sign=sign), args.number)
        finally:
            signature.fold = fold
        signed = _best(lambda: comm.allreduce(send, "sum", sign=sign), args.number)
        say(f"{n:>6d} float64     {floor * 1e6:10.2f} {plain * 1e6:11.2f} {signed * 1e6:10.2f} "
            f"{(signed - plain) * 1e6:13.2f}")


if __name__ == "__main__":
    main()
