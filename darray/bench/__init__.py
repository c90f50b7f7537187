"""``darray bench``: darray against NumPy, Dask and hand-written mpi4py, in one run.

    python -m darray.bench [--size small|medium|full] [--smoke] [--out DIR]
    darray bench [--size ...] [--smoke] [--out DIR]

One invocation times every workload for

* NumPy on one process (the baseline: every ratio is "time / NumPy time"),
* darray on 1 rank (this process, :class:`~darray._comm.SelfCommunicator`),
* Dask array with 2 threads and 2 chunks (when dask is importable),
* darray on P ranks and hand-written mpi4py + NumPy on P ranks (P = ``--ranks``,
  default 2), in a child job ``mpiexec -n P python -m mpi4py -m darray.bench
  --worker CONFIG`` that this command launches itself. Started under mpiexec
  instead, rank 0 runs the one-process part while the others sleep, then all
  ranks run the P-rank part.

Workloads (sizes per ``--size``; ``full`` is W1 2^26, W2 4096^2 x100, W3 8192^2, W4 4096^3):

* W1 ``a*b + c`` then ``sum``; W2 Jacobi 5-point stencil, periodic; W3 ``mean``
  and ``std`` along axis 0; W4 ``matmul``;
* redistribution: a square matrix split along axis 0 moved to split along axis 1
  (the transpose of the split axis), against a raw ``Alltoallv`` of the same bytes;
* ``sort`` of a 1-d array; 2-d ``fft``; one training step of the surrogate model
  when ``darray.nn.surrogate`` exists.

Every variant gets the same data (built from index formulas), one warm-up
call, then the median over ``--reps`` (on P ranks: of the per-rep maximum over
ranks, each rep fenced by barriers). The variants of a workload that run in
the same processes take turns call by call (NumPy, darray, Dask, NumPy, ...;
darray and mpi4py on P ranks), so that a change in the machine's load hits
them alike (:mod:`darray.bench.harness`). Every result is checked against
NumPy's through a position-weighted checksum (computed outside the timed
region); a mismatch is marked in the table and makes the exit status 1. Peak
RSS per process and variant is the memory resident before the inputs were
built, plus the variant's inputs, plus the largest growth during one of its
calls (``VmHWM``, reset through ``/proc/self/clear_refs`` before each call).

The report goes to ``DIR/<date>-<label>.md`` (default DIR ``darray/bench`` in
the user's cache, :func:`darray.output.default_out_dir`; label
``<size>-<nproc>cpu``) with a description of the machine, the load average,
a table of times and ratios, peak RSS per rank, the raw numbers as JSON next
to it, and a PNG of the ratios when matplotlib is installed.

The package, one concern per module: :mod:`~darray.bench.data` (inputs and
checksums), :mod:`~darray.bench.harness` (timing), :mod:`~darray.bench.workloads`
(the variants and their table), :mod:`~darray.bench.machine`,
:mod:`~darray.bench.report`, :mod:`~darray.bench.plot`,
:mod:`~darray.bench.launch` (the phases and the mpiexec child job) and
:mod:`~darray.bench.command` (the command line).
"""

from __future__ import annotations

from .command import configure, main, run
from .workloads import SIZES, WORKLOADS

__all__ = ["SIZES", "WORKLOADS", "configure", "main", "run"]
