"""Fused kernels: ``@darray.fuse`` runs a function of DArrays as one pass over each rank's block.

Eager darray, like NumPy, runs ``da.sum(a * b + c)`` as three passes over
memory with two block-sized temporaries. Decorated with :func:`fuse`, the
function is traced once per signature (each DArray argument's layout, dtype
and shape; each scalar argument's Python type; other arguments by value) into
a small graph (:mod:`~darray.fuse.tracing`, :mod:`~darray.fuse.graph`), the
graph is cached (:mod:`~darray.fuse.cache`) and every call runs it
(:mod:`~darray.fuse.execute`; what the first call decides per group -- layouts,
halo widths, boxes, kernels -- is kept and replayed by the next ones): each group of elementwise operations becomes
one compiled kernel (:mod:`~darray.fuse.codegen`) that reads each operand
once and writes the result once, and a reduction at the end runs inside the
same kernel, keeping per-tile partials only (``sum(a*b + c)`` reads a, b and
c once and writes nothing block-sized).

What is traced: the arithmetic, comparison, bitwise and logical operators;
the functions of darray's elementwise table as ``da.exp(x)`` or
``numpy.exp(x)``; ``where``; ``astype``; broadcasting against replicated
arrays and Python scalars; and ``sum``, ``mean``, ``max``, ``min``, ``prod``
over all axes or one axis (as functions, methods or ``numpy.sum``); slices of
step 1 of an argument (``u[1:-1, 2:]``: a stencil's windows,
:mod:`~darray.fuse.stencil`: the halo exchange starts, the interior is
computed, the exchange is waited for, the boundary strips are computed), and
assignment to such slices of arguments (``out[1:-1] = ...``, done by darray
after every value is computed); ``map_overlap(func, u, depth=..., boundary=...)``
of arguments, its NumPy block function traced on windows of the padded block
(:mod:`~darray.fuse.overlap`) into the same stencil kernels, every boundary
kind read past the edges (``out=`` an assignment). Anything else -- another darray function,
other indexing, ``if`` on a traced value, arrays captured from outside the
arguments, reading an argument after assigning to it -- makes that signature
run eagerly: the plain function, with eager darray's results and its errors
at the call.
Operations inside the graph that a kernel does not compute exactly as NumPy
(integer ``//``, ``%`` and powers, shifts, ``round``, complex special
functions) run eagerly between the fused groups around them.

Which compiler. Measured on this development machine (2 shared cores, one
thread, 2**24 float64, best of 5; ``python benchmarks/bench_fuse.py`` repeats
it): ``a*b + c`` took 36 ms with NumPy, 32 ms with numexpr and 23 ms with a
numba loop; ``sum(a*b + c)`` 45 ms with NumPy, 45 ms with numexpr (its
reductions are not fused into the pass that feeds them, and run on one thread)
and 28 ms with numba. numba is also the one that can follow NumPy's dtype
rules exactly: numexpr computes int8/int16 in int32, has no unsigned
integers and promotes float32 with scalars its own way. So kernels are numba
functions (``nogil``, NumPy's error model), compiled from generated source and
cached on disk by numba (:func:`darray.fuse.cache.cache_dir`).

Dtypes. Every node's dtype is darray's eager result dtype by construction:
darray's dtype-category check, then NumPy's promotion on empty operands
(Python scalars weak, NEP 50). In the kernel each operand is cast to NumPy's
loop dtype before the operation and the value to the node's dtype after it,
so integers wrap, float32 stays float32 and bools add as NumPy's do.

How results compare with eager darray. Elementwise results are the same
operation on the same values cell by cell, so they do not depend on the rank
count at all (bitwise the same at 1 and P ranks); against eager darray they
are equal for ``+ - * /``, comparisons, casts, bitwise and logical operations,
and within a few ulp per operation for the transcendental functions (numba's
libm against NumPy's vectorised loops). Reductions: integer and bool sums and
products and every min/max are exact and rank-count independent; floating
sums add per-tile partials of :data:`~darray.fuse.codegen.TILE` cells (four
interleaved accumulators each), then the tiles pairwise (NumPy), then the
ranks' partials as eager darray does (one allreduce), so the result differs
from eager darray -- which itself differs between rank counts by the same
kind of rounding -- by at most about ``(TILE/4 + log2(n)) * eps * sum(|x_i|)``.
Warnings (division by zero, invalid values) are not raised from kernels.

Modes (environment variable ``DARRAY_FUSE``, read at each call): ``auto``
(default), ``eager`` (the plain function: to compare, or to rule fusion out),
``jit`` (fuse, and raise instead of falling back when a kernel fails to
compile). Without numba (``pip install 'darray[jit]'``) fused functions run
eagerly and warn once. NumPy blocks are fused by numba; CuPy blocks by CUDA
kernels written from the same graph (:mod:`~darray.fuse.cuda`: CuPy's
ElementwiseKernel, ReductionKernel and RawKernel, no numba needed; complex
and float16 values run eagerly there); other local libraries run the
function eagerly.

Threads: each rank's kernels split their cells over the rank's share of the
node's cores (:func:`darray.fuse.execute.rank_threads`, the rule of
:mod:`darray._threads`).
"""

from __future__ import annotations

import sys
import types

from .decorator import MODES, Fused, fuse, jit_available, mode

__all__ = ["fuse", "Fused", "MODES", "mode", "jit_available"]


class _CallableModule(types.ModuleType):
    """``darray.fuse``, this package, is also the decorator: calling it calls :func:`fuse` (``@da.fuse``), and
    ``import darray.fuse.execute`` still finds the package's modules."""

    def __call__(self, f=None):
        return fuse(f)


sys.modules[__name__].__class__ = _CallableModule
