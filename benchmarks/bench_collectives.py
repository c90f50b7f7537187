"""What darray adds to a small collective: the always-on signature and the watched wait.

    mpiexec -n 2 python benchmarks/bench_collectives.py [--number 20000]

Times, per call and per rank, an ``allreduce`` of a few float64 values
(the size a reduction's partials have; 0-d: a reduction to one value)
these ways in the same run:

- ``mpi4py``: ``comm.Allreduce`` on a preallocated buffer, the floor;
- ``mpi4py nb``: ``comm.Iallreduce`` completed by polling ``Test``, the
  floor of darray's own transport (a slow wait watches for ranks that left);
  it also times the buffer with the signature's two extra elements
  (``+2``): MPICH's fast path for one element exists only in the blocking
  call, so the extras cost the non-blocking one nothing;
- ``darray, no signature``: darray's communicator with the signature fold
  switched off (``darray._comm.signature.fold`` replaced for the run);
- ``darray``: darray's communicator as it ships, where every allreduce also
  carries the call's signature (:mod:`darray._comm.signature`) so that ranks
  that entered it with different operations or shapes raise
  ``CollectiveMismatch`` instead of returning wrong numbers.

The "signature" column is the difference of "no sign" and "darray": the
cost of the always-on check. Two ranks that share the cores make it noisy
(and slow every Python step down while the other rank spins in its wait),
so "its Python" times the check's own work alone in one process: fold the
buffer, check the reduced one, slice the result. Best of 7 repeats; check
the load first (``uptime``): ``mpiexec -n 4`` on 2 cores oversubscribes
them and times nothing useful.
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


def _python_cost(shape: tuple, size: int, sign, number: int) -> float:
    """Seconds per call of the signature's own work: fold the buffer, check the reduced one, slice the result."""
    send = np.ones(shape)
    buffer, check = signature.fold(send, "sum", size, sign)
    reduced = buffer * size
    head = (lambda: reduced[0, ...]) if shape == () else (lambda: reduced[:send.size])  # as the communicator

    def signed():
        _, verdict = signature.fold(send, "sum", size, sign)
        verdict(reduced)
        return head()

    return _best(signed, number)


def _polled(raw, send, out) -> None:
    request = raw.Iallreduce(send, out)
    while not request.Test():
        pass


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
    say(f"{'allreduce sum of':18s} {'mpi4py us':>10s} {'mpi4py nb':>10s} {'nb +2':>8s} {'no sign us':>11s} "
        f"{'darray us':>10s} {'signature us':>13s} {'its Python us':>14s}")
    sign = ((41, 41), (True, False))  # what a reduction over the cut axis of a 41 x 41 array passes
    for shape in ((), (8,), (1000,)):
        send, out = np.ones(shape), np.empty(shape)
        n = send.size
        floor = _best(lambda: raw.Allreduce(send, out), args.number)
        polled = _best(lambda: _polled(raw, send, out), args.number)
        wider, wider_out = np.ones(n + 2), np.empty(n + 2)
        polled_wider = _best(lambda: _polled(raw, wider, wider_out), args.number)
        fold = signature.fold
        signature.fold = lambda buffer, op, size, sign=None: (buffer, None)
        try:
            plain = _best(lambda: comm.allreduce(send, "sum", sign=sign), args.number)
        finally:
            signature.fold = fold
        signed = _best(lambda: comm.allreduce(send, "sum", sign=sign), args.number)
        python = _python_cost(shape, comm.size, sign, args.number)
        say(f"{'0-d' if shape == () else n:>6} float64     {floor * 1e6:10.2f} {polled * 1e6:10.2f} {polled_wider * 1e6:8.2f} "
            f"{plain * 1e6:11.2f} {signed * 1e6:10.2f} {(signed - plain) * 1e6:13.2f} {python * 1e6:14.2f}")


if __name__ == "__main__":
    main()
