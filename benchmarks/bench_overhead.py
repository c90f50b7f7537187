"""Per-call overhead of darray against NumPy on small arrays, and NumPy teaching codes.

    python benchmarks/bench_overhead.py [--n 41] [--number 2000]
    mpiexec -n 3 python benchmarks/bench_overhead.py

Part 1 times single calls on an ``n x n`` float64 array (``a + b``, a
shifted-slice sum, slice assignment, ``copy``, ``sum``, ...) with NumPy and
with darray (``import darray as np``, the same source), best of 7 repeats of
``--number`` calls, and prints microseconds per call and the difference.
Under mpiexec the arrays stay below ``darray.config.min_distributed_size``
(replicated: every rank computes alone) unless ``--distributed`` cuts them.

Part 2 runs four NumPy teaching codes unchanged with both modules: a
Laplace/Jacobi solver, a 2-d linear convection CFD step and the cavity flow
(the "12 steps to Navier-Stokes" style, the flow with 5 pressure sweeps per
step) and Conway's Game of Life, checks that both give the same fields, and
prints the time ratio; then step 1 of the 12 steps in its loop form (a
Python loop over the cells of a 1-d field: every operand is one element).

Both parts also run a third module, ``thin``: the thinnest Python class that
can wrap an ndarray (one slot, each operator one NumPy call and a wrap, no
checks). No array library written in Python can do less per call, so its
column is the floor for darray's.

With ``--distributed`` at several ranks, part 1 also times the shifted-slice
sum written by hand with mpi4py (one ``Sendrecv`` of the boundary row, then
NumPy on the block): darray's cost above that is its overhead per call for a
stencil on a cut array.

Timings are per process; check the load first (``uptime``): other work on
the cores inflates every number. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import timeit
from types import SimpleNamespace

import numpy

import darray

#: call -> its source, with ``np`` the module and ``a``, ``b`` two n x n float64 arrays.
CALLS = {
    "a + b": "a + b",
    "a * b + a": "a * b + a",
    "a[1:-1, 1:-1]": "a[1:-1, 1:-1]",
    "a[1:-1, 1:-1] + a[2:, 1:-1]": "a[1:-1, 1:-1] + a[2:, 1:-1]",
    "a[1:-1, 1:-1] = b[1:-1, 1:-1]": "a[1:-1, 1:-1] = b[1:-1, 1:-1]",
    "a.copy()": "a.copy()",
    "np.sum(a)": "np.sum(a)",
    "np.mean(a)": "np.mean(a)",
    "np.sqrt(a)": "np.sqrt(a)",
    "a.sum(axis=0)": "a.sum(axis=0)",
}

LAPLACE = """
u = np.zeros((n, n))
u[0, :] = 1.0
for _ in range(steps):
    u[1:-1, 1:-1] = 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2])
"""

CONVECTION = """
u = np.ones((n, n))
u[n // 4:n // 2, n // 4:n // 2] = 2.0
c, dt, dx = 1.0, 0.2 * 2.0 / (n - 1), 2.0 / (n - 1)
for _ in range(steps):
    un = u.copy()
    u[1:, 1:] = un[1:, 1:] - c * dt / dx * (un[1:, 1:] - un[:-1, 1:]) - c * dt / dx * (un[1:, 1:] - un[1:, :-1])
    u[0, :] = 1.0
    u[-1, :] = 1.0
    u[:, 0] = 1.0
    u[:, -1] = 1.0
"""

LIFE = """
Z = np.zeros((n, n), dtype=int)
Z[1:4, 1:4] = np.asarray([[0, 1, 0], [0, 0, 1], [1, 1, 1]])
for _ in range(steps):
    N = (Z[0:-2, 0:-2] + Z[0:-2, 1:-1] + Z[0:-2, 2:] + Z[1:-1, 0:-2] + Z[1:-1, 2:]
         + Z[2:, 0:-2] + Z[2:, 1:-1] + Z[2:, 2:])
    birth = (N == 3) & (Z[1:-1, 1:-1] == 0)
    survive = ((N == 2) | (N == 3)) & (Z[1:-1, 1:-1] == 1)
    Z[...] = 0
    Z[1:-1, 1:-1][birth | survive] = 1
"""

CAVITY = """
u, v, p = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
dx = dy = 2.0 / (n - 1)
dt, rho, nu = 0.001, 1.0, 0.1
for _ in range(steps):
    b = np.zeros((n, n))
    b[1:-1, 1:-1] = rho * (1 / dt * ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx) + (v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy))
                           - ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx)) ** 2
                           - 2 * ((u[2:, 1:-1] - u[0:-2, 1:-1]) / (2 * dy) * (v[1:-1, 2:] - v[1:-1, 0:-2]) / (2 * dx))
                           - ((v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy)) ** 2)
    for _ in range(5):
        pn = p.copy()
        p[1:-1, 1:-1] = (((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy ** 2 + (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx ** 2)
                         / (2 * (dx ** 2 + dy ** 2)) - dx ** 2 * dy ** 2 / (2 * (dx ** 2 + dy ** 2)) * b[1:-1, 1:-1])
        p[:, -1] = p[:, -2]
        p[0, :] = p[1, :]
        p[:, 0] = p[:, 1]
        p[-1, :] = 0.0
    un, vn = u.copy(), v.copy()
    u[1:-1, 1:-1] = (un[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx * (un[1:-1, 1:-1] - un[1:-1, 0:-2])
                     - vn[1:-1, 1:-1] * dt / dy * (un[1:-1, 1:-1] - un[0:-2, 1:-1])
                     - dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, 0:-2])
                     + nu * (dt / dx ** 2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, 0:-2])
                             + dt / dy ** 2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[0:-2, 1:-1])))
    v[1:-1, 1:-1] = (vn[1:-1, 1:-1] - un[1:-1, 1:-1] * dt / dx * (vn[1:-1, 1:-1] - vn[1:-1, 0:-2])
                     - vn[1:-1, 1:-1] * dt / dy * (vn[1:-1, 1:-1] - vn[0:-2, 1:-1])
                     - dt / (2 * rho * dy) * (p[2:, 1:-1] - p[0:-2, 1:-1])
                     + nu * (dt / dx ** 2 * (vn[1:-1, 2:] - 2 * vn[1:-1, 1:-1] + vn[1:-1, 0:-2])
                             + dt / dy ** 2 * (vn[2:, 1:-1] - 2 * vn[1:-1, 1:-1] + vn[0:-2, 1:-1])))
    u[0, :], u[:, 0], u[:, -1], u[-1, :] = 0.0, 0.0, 0.0, 1.0
    v[0, :], v[-1, :], v[:, 0], v[:, -1] = 0.0, 0.0, 0.0, 0.0
"""

CELL_LOOP = """
u = np.ones(n)
u[n // 4:n // 2] = 2.0
c, dt, dx = 1.0, 0.5 * 2.0 / (n - 1), 2.0 / (n - 1)
for _ in range(steps // 8):
    un = u.copy()
    for i in range(1, n):
        u[i] = un[i] - c * dt / dx * (un[i] - un[i - 1])
"""

PROGRAMS = {"Laplace (Jacobi)": LAPLACE, "linear convection": CONVECTION, "Game of Life": LIFE,
            "cavity flow (5 Poisson sweeps)": CAVITY, "1-d convection, loop over cells": CELL_LOOP}


class Thin:
    """The floor: an ndarray in one slot; every operator is one NumPy call and a wrap."""

    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a

    def __getitem__(self, key):
        return Thin(self.a[key.a if type(key) is Thin else key])

    def __setitem__(self, key, value):
        self.a[key.a if type(key) is Thin else key] = value.a if type(value) is Thin else value

    def copy(self):
        return Thin(self.a.copy())

    def sum(self, axis=None):
        return Thin(numpy.asarray(self.a.sum(axis)))


def _thin_operator(ufunc, reflected=False):
    def method(self, other):
        other = other.a if type(other) is Thin else other
        return Thin(ufunc(other, self.a) if reflected else ufunc(self.a, other))
    return method


for _name, _ufunc in {"add": numpy.add, "sub": numpy.subtract, "mul": numpy.multiply, "and": numpy.bitwise_and,
                      "or": numpy.bitwise_or, "truediv": numpy.divide, "pow": numpy.power}.items():
    setattr(Thin, f"__{_name}__", _thin_operator(_ufunc))
    setattr(Thin, f"__r{_name}__", _thin_operator(_ufunc, reflected=True))
Thin.__eq__ = _thin_operator(numpy.equal)

#: the module ``thin`` the sources see as ``np``
thin = SimpleNamespace(
    zeros=lambda shape, dtype=float: Thin(numpy.zeros(shape, dtype)),
    ones=lambda shape: Thin(numpy.ones(shape)), asarray=lambda a: Thin(numpy.asarray(a)),
    sum=lambda a: Thin(numpy.asarray(numpy.sum(a.a))), mean=lambda a: Thin(numpy.asarray(numpy.mean(a.a))),
    sqrt=lambda a: Thin(numpy.sqrt(a.a)))
MODULES = {"numpy": numpy, "thin": thin, "darray": darray}


def _field(source: str, np, args) -> numpy.ndarray:
    """The field a teaching code computes with module ``np`` (``u``, or ``Z`` for the Game of Life), in NumPy."""
    scope = {"np": np, "n": args.n, "steps": args.steps}
    exec(source, scope)
    field = scope["Z"] if "Z" in scope else scope["u"]
    return field.a if type(field) is Thin else numpy.asarray(field)


def _best(stmt: str, scope: dict, number: int, repeat: int = 7) -> float:
    return min(timeit.repeat(stmt, globals=scope, number=number, repeat=repeat)) / number


def _arrays(np, n: int, distributed: bool):
    rng = numpy.random.default_rng(0)
    a, b = rng.random((n, n)), rng.random((n, n))
    if np is numpy:
        return a, b
    if np is thin:
        return Thin(a), Thin(b)
    kw = dict(split=0) if distributed else {}
    return np.asarray(a, **kw), np.asarray(b, **kw)


def _hand_written_shifted_sum(a) -> callable:
    """``a[1:-1, 1:-1] + a[2:, 1:-1]`` on row blocks of ``a`` (a cut DArray), written with mpi4py and NumPy.

    Each rank receives the next rank's first row (``Sendrecv``: the strip
    exchange) and adds its rows to the rows below them; the result's blocks are
    the rows of ``a[1:-1]`` each rank holds.
    """
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
    block = numpy.ascontiguousarray(a.local)
    n = a.shape[0]
    lo = int(a.layout.offsets[0][rank])
    hi = lo + block.shape[0]
    first, last = max(lo, 1), min(hi, n - 1)  # this rank's rows of a[1:-1]
    up = rank - 1 if rank > 0 else MPI.PROC_NULL
    down = rank + 1 if rank < size - 1 else MPI.PROC_NULL
    ghost = numpy.empty(block.shape[1])

    def step():
        comm.Sendrecv(block[0], dest=up, recvbuf=ghost, source=down)
        out = numpy.empty((max(last - first, 0), block.shape[1] - 2))
        if last > first:
            inside = min(last, hi - 1)  # rows whose lower neighbour this rank holds
            out[:inside - first] = block[first - lo:inside - lo, 1:-1] + block[first - lo + 1:inside - lo + 1, 1:-1]
            if last > inside:
                out[-1] = block[last - 1 - lo, 1:-1] + ghost[1:-1]
        return out

    return step


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=41, help="side of the square arrays (default 41)")
    parser.add_argument("--number", type=int, default=2000, help="calls per timing repeat (default 2000)")
    parser.add_argument("--steps", type=int, default=200, help="steps of each teaching code (default 200)")
    parser.add_argument("--rounds", type=int, default=9, help="runs of each teaching code per module, taking "
                        "turns; the best counts (default 9)")
    parser.add_argument("--distributed", action="store_true", help="cut the arrays over the ranks (split=0)")
    args = parser.parse_args(argv)
    comm = darray.default_communicator()
    say = print if comm.rank == 0 else (lambda *a, **k: None)
    say(f"# bench_overhead: n={args.n}, {comm.size} rank(s), "
        f"{'distributed' if args.distributed else 'replicated below the threshold'}, load {os.getloadavg()[0]:.2f}")
    say(f"{'call':34s} {'NumPy us':>9s} {'thin us':>8s} {'darray us':>10s} {'darray - NumPy':>15s} {'ratio':>6s}")
    for name, stmt in CALLS.items():
        t = {}
        for label, np in MODULES.items():
            a, b = _arrays(np, args.n, args.distributed)
            t[label] = _best(stmt, {"np": np, "a": a, "b": b}, args.number) * 1e6
        say(f"{name:34s} {t['numpy']:9.2f} {t['thin']:8.2f} {t['darray']:10.2f} {t['darray'] - t['numpy']:15.2f} "
            f"{t['darray'] / t['numpy']:6.2f}")
    if args.distributed and comm.size > 1:
        a, _ = _arrays(darray, args.n, True)
        step = _hand_written_shifted_sum(a)
        same = numpy.isclose(comm.allreduce(numpy.array([step().sum()]), "sum")[0],
                             float(darray.sum(a[1:-1, 1:-1] + a[2:, 1:-1])))
        hand = ours = float("inf")
        for _ in range(args.rounds * 4):  # taking turns; a round counts as its slowest rank's time
            hand = min(hand, comm.allreduce(numpy.array([_best("step()", {"step": step}, args.number // 5, 1)]),
                                            "max")[0] * 1e6)
            ours = min(ours, comm.allreduce(numpy.array([_best("a[1:-1, 1:-1] + a[2:, 1:-1]", {"a": a},
                                                               args.number // 5, 1)]), "max")[0] * 1e6)
        say(f"{'a[1:-1, 1:-1] + a[2:, 1:-1]':34s} hand-written mpi4py {hand:.2f} us, darray {ours:.2f} us: "
            f"{ours - hand:+.2f} us per call{'' if same else ' (RESULTS DIFFER)'}")
    say(f"\n{'program':34s} {'NumPy ms':>9s} {'thin ms':>8s} {'darray ms':>10s} {'thin ratio':>11s} {'ratio':>6s}")
    for name, source in PROGRAMS.items():  # the modules take turns, so that a burst of load hits them alike
        t = dict.fromkeys(MODULES, float("inf"))
        for _ in range(args.rounds):
            for label, np in MODULES.items():
                t[label] = min(t[label], _best(source, {"np": np, "n": args.n, "steps": args.steps}, 1, 1) * 1e3)
        fields = [_field(source, np, args) for np in MODULES.values()]
        same = all(numpy.allclose(fields[0], field) for field in fields)
        say(f"{name:34s} {t['numpy']:9.2f} {t['thin']:8.2f} {t['darray']:10.2f} {t['thin'] / t['numpy']:11.2f} "
            f"{t['darray'] / t['numpy']:6.2f}{'' if same else ' (RESULTS DIFFER)'}")

if __name__ == "__main__":
    main()
