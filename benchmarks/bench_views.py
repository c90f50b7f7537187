"""The cost of NumPy's view semantics and of the always-on agreement, against NumPy, in one run.

Rows (best of ``--reps`` of ``--calls`` calls, microseconds per call, the maximum over ranks):

- ``a[i][j] = v`` (a true view on 1-d grids: no message) against ``a[i, j] = v``;
- ``row = a[i]; row += 1`` (each rank's part of the row, in place) against ``a[i] += 1``;
- ``a[::-1][0, 0] = v``: a computed view (a negative step on the cut axis), written through;
- ``a.reshape(-1)[k] = v`` where the reshape moves cells (a computed view, written through);
- ``redistribute`` of a small array (its always-on plan agreement: one signed 8-byte allgather);
- the element loop ``u[i] = un[i] - c * (un[i] - un[i - 1])`` over 41 cells, against NumPy's.

NumPy's time for the same statement on the whole array (one process) is printed beside each row.

```bash
PYTHONPATH=. python benchmarks/bench_views.py
PYTHONPATH=. mpiexec -n 2 python benchmarks/bench_views.py --calls 2000
```
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import darray as da


def per_call(fn, calls: int, reps: int, comm) -> float:
    """Best of ``reps`` of the mean time of ``calls`` calls (max over ranks), in microseconds."""
    fn()
    best = float("inf")
    for _ in range(reps):
        comm.barrier()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        elapsed = (time.perf_counter() - start) / calls
        best = min(best, float(np.max(np.asarray(comm.allgather(np.asarray([elapsed]))))))
    return best * 1e6


def element_loop(np_like, n: int = 41, steps: int = 5):
    u = np_like.ones(n)
    u[10:20] = 2.0
    for _ in range(steps):
        un = u.copy()
        for i in range(1, n):
            u[i] = un[i] - 0.5 * (un[i] - un[i - 1])
    return u


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--n", type=int, default=200, help="rows and columns of the 2-d array")
    args = parser.parse_args()
    comm = da.default_communicator()
    n = args.n
    g = np.zeros((n, n))
    a = da.asarray(g.copy(), split=0)
    flat = da.asarray(np.zeros(n * n + 7), split=0)  # (n*n + 7) -> (n*n + 7,) 1-d: reshape below moves cells
    board = da.asarray(np.zeros((n + 1, n)), split=0)
    i, j = n // 2 + 1, 3
    rows = {
        "a[i][j] = v": (lambda: a[i].__setitem__(j, 1.0), lambda: g[i].__setitem__(j, 1.0)),
        "a[i, j] = v": (lambda: a.__setitem__((i, j), 1.0), lambda: g.__setitem__((i, j), 1.0)),
        "row = a[i]; row += 1": (lambda: a[i].__iadd__(1.0), lambda: g[i].__iadd__(1.0)),
        "a[i] += 1": (lambda: a.__setitem__(i, a[i] + 1.0), lambda: g.__setitem__(i, g[i] + 1.0)),
        "a[::-1][0, 0] = v": (lambda: a[::-1].__setitem__((0, 0), 1.0), lambda: g[::-1].__setitem__((0, 0), 1.0)),
        "reshape(moves)[k] = v": (lambda: board.reshape(n, n + 1).__setitem__((1, 2), 1.0),
                                  lambda: g.reshape(-1).__setitem__(5, 1.0)),
        "redistribute (small)": (lambda: da.asarray(flat, split=None), lambda: flat.local.copy()),
    }
    out = []
    for name, (ours, numpys) in rows.items():
        calls = max(args.calls // (50 if "redistribute" in name or "::-1" in name or "reshape" in name else 1), 10)
        out.append((name, per_call(ours, calls, args.reps, comm), per_call(numpys, calls, args.reps, comm)))
    loop_da = per_call(lambda: element_loop(da), 3, args.reps, comm)
    loop_np = per_call(lambda: element_loop(np), 3, args.reps, comm)
    if comm.rank == 0:
        print(f"bench_views: {comm.size} rank(s), {n}x{n} float64 split=0 (us per call; NumPy: one process)")
        print(f"{'row':28s} {'darray':>10s} {'NumPy':>10s}")
        for name, t_da, t_np in out:
            print(f"{name:28s} {t_da:10.2f} {t_np:10.2f}")
        print(f"{'element loop, 41 cells x 5':28s} {loop_da:10.0f} {loop_np:10.0f}   ratio {loop_da / loop_np:.1f}x")


if __name__ == "__main__":
    main()
