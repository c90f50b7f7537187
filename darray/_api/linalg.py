"""The Array API ``linalg`` extension, distributed.

What moves, per function (p ranks, sizes in elements):

- ``matmul``, ``tensordot``, ``vecdot``, ``matrix_transpose``: see
  :mod:`darray._api.linear_algebra` (layout-driven; never a gather).
- ``outer``: the smaller-or-replicated vector is allgathered; the result is
  cut like the distributed vector. ``cross``: nothing unless ``axis`` is cut,
  then the operands are redistributed so that it is not.
- ``diagonal``/``trace``: each rank extracts the diagonal cells of its block
  (no messages when at most one of the last two axes is cut; otherwise the
  matrix is first redistributed to a row cut). ``trace`` then allreduces.
- ``vector_norm``, ``matrix_norm`` (``'fro'``, 1, -1, inf, -inf): elementwise
  work plus reductions (allreduce of partials). ``'nuc'``, 2, -2 use
  :func:`svdvals`.
- ``qr`` (``mode="reduced"``), ``svd`` (``full_matrices=False``), ``svdvals``
  of a tall-skinny 2-d matrix (``m >= n * p``, the stacked n x n factors
  within :data:`GATHER_LIMIT`) use TSQR: a local QR per block, an allgather
  of the small R factors (``n * n`` per rank), a QR of the stacked factors on
  every rank; Q stays cut like the rows of the input, R is replicated. A
  matrix not cut along rows only is redistributed to a row cut first (moves
  ``m * n``). Wide matrices (``n >= m * p``) go through the transpose.
- Everything else (``cholesky det eigh eigvalsh inv pinv matrix_rank slogdet
  solve``, ``qr``/``svd`` of other shapes, ``matrix_power`` with a negative
  exponent) gathers the matrix onto every rank (redistribution to replicated,
  ``size * (p - 1)`` moved), computes with the local backend's ``linalg``
  (through array-api-compat) identically on every rank, and returns outputs
  shaped like an input in that input's layout (a local slice, no messages)
  and other outputs replicated (cut by a local slice when they have at least
  ``darray.config.min_distributed_size`` elements). These refuse matrices
  above :data:`GATHER_LIMIT` elements with a ValueError naming the limit,
  raised on every rank before anything moves.
- ``matrix_power`` with ``n >= 0``: repeated squaring with distributed
  :func:`matmul` (no gather, no limit).

NumPy's ``numpy.linalg`` names beyond the standard (also registered, so that
``numpy.linalg.lstsq(x, b)`` on DArrays is ``darray.linalg.lstsq(x, b)``):

- ``lstsq``: TSQR of ``[a | b]`` for tall-skinny ``a`` (``m >= (n + k) * p``):
  only the ``(n + k)**2`` factors are allgathered; x, residuals and singular
  values follow from the small R on every rank. Other shapes gather (limit).
- ``multi_dot``: NumPy's multiplication order (from the shapes), each product
  a distributed :func:`matmul`.
- ``cond``: ``p`` None/2/-2 from :func:`svdvals` (TSQR where tall or wide);
  other norms gather the matrix (limit) and NumPy computes it on the host.
- ``eig``, ``eigvals``: no Array-API eigensolver: gathered (limit), NumPy on
  the host, identical results on every rank.
- ``tensorinv``, ``tensorsolve``: distributed reshapes around :func:`inv` /
  :func:`solve` (which gather, limit).
"""

from __future__ import annotations

import numbers
from math import inf
from typing import NamedTuple

import numpy as np

from .._backend import from_numpy, to_numpy
from .._config import config
from .._core import DArray, redistribute_to, to_backend_dtype
from .._core.dtypes import check_category
from .._core.elementwise import align_target, astype, local_operand
from .._core.protocols import implements
from .._core.reductions import any as _any, max as _max, min as _min, normalize_axes, sum as _sum
from .._errors import message, names_errors
from .._layout import Layout, normalize_axis
from .elementwise import (abs as _abs, isnan, logical_and, logical_not, multiply, not_equal, pow as _pow,
                          sqrt)
from .manipulation import concat, permute_dims as permute_dims_, reshape
from .numpy_functions import _darray as _as_darray, dot as _dot
from .searching import where
from .linear_algebra import _cut_layout, _replicated_layout, matmul, matrix_transpose, tensordot, vecdot

__all__ = ["cholesky", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "lstsq",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "multi_dot", "norm", "outer",
           "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "tensorinv", "tensorsolve", "trace",
           "vecdot", "vector_norm", "GATHER_LIMIT", "EigResult", "EighResult", "QRResult", "SlogdetResult",
           "SVDResult"]

#: Functions that gather a matrix onto every rank refuse matrices with more
#: elements than this (ValueError). 2**24 float64 elements are 128 MiB per rank.
#: Change it (the same on every rank) with ``darray.linalg.GATHER_LIMIT = ...``.
GATHER_LIMIT = 2 ** 24

LinAlgError = np.linalg.LinAlgError


class EighResult(NamedTuple):
    eigenvalues: DArray
    eigenvectors: DArray


class QRResult(NamedTuple):
    Q: DArray
    R: DArray


class SlogdetResult(NamedTuple):
    sign: DArray
    logabsdet: DArray


class SVDResult(NamedTuple):
    U: DArray
    S: DArray
    Vh: DArray


# ------------------------------------------------------------------ helpers
def _check(func: str, x) -> DArray:
    if not isinstance(x, DArray):
        raise TypeError(message(func, "expected a DArray", type(x).__name__))
    return x


def _matrices(func: str, x, square: bool = False) -> DArray:
    """Validate a stack of matrices (..., M, N); ``square`` also needs M == N (LinAlgError otherwise)."""
    _check(func, x)
    if x.ndim < 2:
        raise LinAlgError(message(func, "needs a stack of matrices", x.shape, "ndim >= 2"))
    if square and x.shape[-1] != x.shape[-2]:
        raise LinAlgError(message(func, "last two axes must be square", x.shape, "shape (..., M, M)"))
    check_category(func, x.dtype, "numeric")
    return x


def _limit(func: str, *arrays: DArray) -> None:
    """Refuse to gather arrays above GATHER_LIMIT elements (metadata only: same verdict on every rank)."""
    limit = GATHER_LIMIT
    for x in arrays:
        if x.size > limit:
            raise ValueError(message(func, "gathers the matrix onto every rank and refuses one this large",
                                     f"{x.size} elements (shape {x.shape})",
                                     f"at most GATHER_LIMIT={limit} elements (darray.linalg.GATHER_LIMIT)"))


def _full(x: DArray):
    """The whole of ``x`` on every rank (redistribution to replicated)."""
    return (x if x._layout.is_replicated else redistribute_to(x, x._layout.replicated())).local


def _no_halo(layout: Layout) -> Layout:
    n = layout.ndim
    return layout.replace(halo=(0,) * n, boundary=("none",) * n) if layout.has_halo else layout


def _out(local, like: DArray, layout: Layout | None = None) -> DArray:
    """Wrap a result computed identically on every rank: into ``layout`` (a local slice) when given and of
    the same shape; otherwise replicated, cut by a local slice when large."""
    xp = like._xp
    comm = like._comm
    shape = tuple(local.shape)
    out = DArray._wrap(local, _replicated_layout(shape, comm.size), comm, xp)
    if comm.size == 1:
        return out
    if layout is not None and layout.shape == shape:
        return redistribute_to(out, _no_halo(layout))
    if out.size >= config.min_distributed_size and out.ndim:
        return redistribute_to(out, Layout.create("linalg", shape, comm.size, split="auto",
                                                  min_size=config.min_distributed_size))
    return out


def _transposed(layout: Layout) -> Layout:
    """The layout of the matrix transpose (last two axes swapped)."""
    n = layout.ndim
    order = (*range(n - 2), n - 1, n - 2)
    pos = {a: i for i, a in enumerate(order)}
    return Layout(tuple(layout.shape[a] for a in order), layout.dims,
                  tuple(None if s is None else pos[s] for s in layout.split),
                  tuple(layout.sizes[a] for a in order), (0,) * n, ("none",) * n)


def _xpla(x: DArray):
    return x._xp.linalg


# ------------------------------------------------------------------ gathered factorizations
def cholesky(x, /, *, upper: bool = False) -> DArray:
    """Cholesky factor of a stack of Hermitian positive-definite matrices.

    Gathers the matrix; refuses above GATHER_LIMIT elements with ValueError naming the limit.
    The factor has the input's layout.
    """
    x = _matrices("cholesky", x, square=True)
    _limit("cholesky", x)
    return _out(_xpla(x).cholesky(_full(x), upper=upper), x, x._layout)


def det(x, /) -> DArray:
    """Determinant of a stack of square matrices (replicated result).

    Gathers the matrix; refuses above GATHER_LIMIT elements with ValueError naming the limit.
    """
    x = _matrices("det", x, square=True)
    _limit("det", x)
    return _out(x._xp.asarray(_xpla(x).det(_full(x))), x)


def slogdet(x, /) -> SlogdetResult:
    """Sign and log of the absolute determinant (replicated results).

    Gathers the matrix; refuses above GATHER_LIMIT elements with ValueError naming the limit.
    """
    x = _matrices("slogdet", x, square=True)
    _limit("slogdet", x)
    sign, logabs = _xpla(x).slogdet(_full(x))
    return SlogdetResult(_out(x._xp.asarray(sign), x), _out(x._xp.asarray(logabs), x))


def eigh(x, /) -> EighResult:
    """Eigenvalues (replicated) and eigenvectors (input's layout) of Hermitian matrices.

    Gathers the matrix; refuses above GATHER_LIMIT elements with ValueError naming the limit.
    """
    x = _matrices("eigh", x, square=True)
    _limit("eigh", x)
    w, v = _xpla(x).eigh(_full(x))
    return EighResult(_out(w, x), _out(v, x, x._layout))


def eigvalsh(x, /) -> DArray:
    """Eigenvalues of Hermitian matrices, ascending (replicated).

    Gathers the matrix; refuses above GATHER_LIMIT elements with ValueError naming the limit.
    """
    x = _matrices("eigvalsh", x, square=True)
    _limit("eigvalsh", x)
    return _out(_xpla(x).eigvalsh(_full(x)), x)


def inv(x, /) -> DArray:
    """Inverse of a stack of square matrices, in the input's layout.

    Gathers the matrix; refuses above GATHER_LIMIT elements with ValueError naming the limit.
    Non-square input raises ``numpy.linalg.LinAlgError`` (a ValueError) on every rank.
    """
    x = _matrices("inv", x, square=True)
    _limit("inv", x)
    return _out(_xpla(x).inv(_full(x)), x, x._layout)


def pinv(x, /, *, rtol=None) -> DArray:
    """Moore-Penrose pseudo-inverse, in the layout of the input's matrix transpose.

    Gathers the matrix; refuses above GATHER_LIMIT elements with ValueError naming the limit.
    """
    x = _matrices("pinv", x)
    _limit("pinv", x)
    kwargs = {} if rtol is None else {"rtol": rtol}
    return _out(_xpla(x).pinv(_full(x), **kwargs), x, _transposed(x._layout))


def matrix_rank(x, /, *, rtol=None) -> DArray:
    """Rank of a stack of matrices (SVD based; replicated result).

    Gathers the matrix; refuses above GATHER_LIMIT elements with ValueError naming the limit.
    """
    x = _matrices("matrix_rank", x)
    _limit("matrix_rank", x)
    kwargs = {} if rtol is None else {"rtol": rtol}
    return _out(x._xp.asarray(_xpla(x).matrix_rank(_full(x), **kwargs)), x)


def solve(x1, x2, /) -> DArray:
    """Solution of ``x1 @ result = x2`` (``x2`` of shape (..., M, K), or (M,) for one vector).

    Gathers both operands; refuses above GATHER_LIMIT elements with ValueError naming the limit.
    The result has ``x2``'s layout when it has ``x2``'s shape.
    """
    a = _matrices("solve", x1, square=True)
    b = _check("solve", x2)
    check_category("solve", b.dtype, "numeric")
    m = a.shape[-1]
    if b.ndim == 0 or (b.ndim == 1 and b.shape[0] != m) or (b.ndim > 1 and b.shape[-2] != m):
        raise ValueError(message("solve", "x2 does not match the size of x1", (a.shape, b.shape),
                                 f"x2 of shape ({m},) or (..., {m}, K)"))
    if b.ndim > 1:
        try:
            np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            raise ValueError(message("solve", "batch shapes cannot be broadcast together",
                                     (a.shape, b.shape))) from None
    if a._comm is not b._comm:
        raise ValueError(message("solve", "arrays live on different communicators"))
    _limit("solve", a, b)
    bl = _full(b)
    if b._xp is not a._xp:
        bl = a._xp.asarray(bl, device=a.device)
    return _out(_xpla(a).solve(_full(a), bl), a, b._layout)


def matrix_power(x, n, /) -> DArray:
    """``x`` raised to the integer power ``n`` (stack of square matrices).

    ``n >= 0``: repeated squaring with distributed :func:`matmul` (no gather).
    ``n < 0``: the inverse first, which gathers the matrix; refuses above GATHER_LIMIT
    elements with ValueError naming the limit.
    """
    x = _matrices("matrix_power", x, square=True)
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(message("matrix_power", "the exponent must be an integer", n))
    n = int(n)
    if n == 0:
        return _identity_like(x)
    if n < 0:
        x, n = inv(x), -n
    result, base = None, x
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            return result if result is not x else astype(x, x.dtype, copy=True)
        base = matmul(base, base)


def _identity_like(x: DArray) -> DArray:
    """Identity matrices broadcast over the batch axes, in ``x``'s layout (built locally)."""
    layout = _no_halo(x._layout)
    rank = x._comm.rank
    xp = x._xp
    slices = layout.block_slices(rank)
    rows, cols = slices[-2], slices[-1]
    eye = xp.eye(rows.stop - rows.start, cols.stop - cols.start, k=rows.start - cols.start,
                 dtype=x._block.dtype, device=x.device)
    block = xp.asarray(xp.broadcast_to(eye, layout.block_shape(rank)), copy=True)
    return DArray._wrap(block, layout, x._comm, xp)


# ------------------------------------------------------------------ QR / SVD
def _tall(x: DArray) -> bool:
    """2-d, at least ``n`` rows per rank, and the stacked n x n factors within GATHER_LIMIT."""
    if x.ndim != 2:
        return False
    m, n = x.shape
    p = x._comm.size
    return n > 0 and m >= n * p and n * n * p <= GATHER_LIMIT


def _rows(x: DArray) -> DArray:
    """``x`` (2-d) cut along rows only (redistributed to a 1-d row cut when it is cut otherwise)."""
    cut = [a for a, g in enumerate(x._layout.axis_dim) if g is not None]
    if cut in ([], [0]):
        return x
    return redistribute_to(x, _cut_layout(x.shape, x._comm.size, 0))


def _tsqr(x: DArray, want_q: bool = True):
    """TSQR of a tall-skinny 2-d ``x`` cut along rows only: (local block of Q or None, R on every rank)."""
    xp = x._xp
    la = x._layout
    m, n = x.shape
    g = la.axis_dim[0]
    local = x.local
    if g is None:  # replicated (or one rank): one local QR
        if want_q:
            q, r = xp.linalg.qr(local)
            return q, r
        return None, xp.linalg.qr(local)[1]
    q1, r1 = xp.linalg.qr(local)  # (m_i, k_i), (k_i, n) with k_i = min(m_i, n)
    ks = [min(s, n) for s in la.sizes[0]]
    me = la.block_index(x._comm.rank)[0]
    padded = xp.zeros((n, n), dtype=r1.dtype, device=x.device)
    padded[:ks[me], :] = r1
    sub = x._comm.sub(la.dims, tuple(i == g for i in range(len(la.dims))))
    stacked = sub.allgather(padded)  # (q, n, n): block i's R on rows :ks[i]
    parts = [stacked[i, :k, :] for i, k in enumerate(ks) if k]
    q2, r = xp.linalg.qr(xp.concat(parts, axis=0))  # (sum k, n), (n, n)
    if not want_q:
        return None, r
    start = sum(ks[:me])
    return xp.matmul(q1, q2[start:start + ks[me], :]), r


def _wrap_rows(local, x: DArray, ncols: int) -> DArray:
    """A block of a (m, ncols) matrix cut along rows like ``x`` (2-d, cut along rows only)."""
    la = x._layout
    layout = Layout((x.shape[0], ncols), la.dims, la.split, (la.sizes[0], (ncols,)), (0, 0), ("none", "none"))
    return DArray._wrap(local, layout, x._comm, x._xp)


def qr(x, /, *, mode: str = "reduced") -> QRResult:
    """QR decomposition.

    Tall-skinny 2-d matrices (``m >= n * p``) with ``mode="reduced"`` use TSQR: Q is cut along rows like
    the input (redistributed to a row cut if it was cut otherwise), R is replicated; only n x n factors
    move. Other shapes and ``mode="complete"`` gather the matrix; refuses above GATHER_LIMIT elements
    with ValueError naming the limit.
    """
    x = _matrices("qr", x)
    if mode not in ("reduced", "complete"):
        raise ValueError(message("qr", "unknown mode", repr(mode), "'reduced' or 'complete'"))
    if mode == "reduced" and _tall(x):
        rows = _rows(x)
        q, r = _tsqr(rows)
        return QRResult(_wrap_rows(q, rows, x.shape[1]), _out(r, x))
    _limit("qr", x)
    q, r = _xpla(x).qr(_full(x), mode=mode)
    return QRResult(_out(q, x, x._layout), _out(r, x))


def svd(x, /, full_matrices: bool = True, compute_uv: bool = True) -> SVDResult | DArray:
    """Singular value decomposition ``x = U @ diag(S) @ Vh``.

    ``compute_uv=False`` (NumPy's keyword) returns the singular values alone, as :func:`svdvals`.

    Tall-skinny 2-d matrices with ``full_matrices=False`` use TSQR then the SVD of the small R: U is cut
    along rows, S and Vh are replicated (wide matrices through the transpose: Vh cut along columns).
    Other cases gather the matrix; refuses above GATHER_LIMIT elements with ValueError naming the limit.
    """
    if not compute_uv:
        return svdvals(x)
    x = _matrices("svd", x)
    if not full_matrices and _tall(x):
        rows = _rows(x)
        q, r = _tsqr(rows)
        ur, s, vh = x._xp.linalg.svd(r, full_matrices=False)
        return SVDResult(_wrap_rows(x._xp.matmul(q, ur), rows, x.shape[1]), _out(s, x), _out(vh, x))
    if not full_matrices and x.ndim == 2 and _tall(matrix_transpose(x)):
        rows = _rows(matrix_transpose(x))
        q, r = _tsqr(rows)
        ur, s, vh = x._xp.linalg.svd(r, full_matrices=False)  # x.T = (q ur) s vh
        u = _out(_transpose_local(vh, x), x)
        return SVDResult(u, _out(s, x), matrix_transpose(_wrap_rows(x._xp.matmul(q, ur), rows, x.shape[0])))
    _limit("svd", x)
    u, s, vh = _xpla(x).svd(_full(x), full_matrices=full_matrices)
    like_u = x._layout if u.shape == x.shape else None
    like_vh = x._layout if vh.shape == x.shape else None
    return SVDResult(_out(u, x, like_u), _out(s, x), _out(vh, x, like_vh))


def _transpose_local(a, like: DArray):
    xp = like._xp
    return xp.asarray(xp.permute_dims(a, (*range(a.ndim - 2), a.ndim - 1, a.ndim - 2)), copy=True)


def svdvals(x, /) -> DArray:
    """Singular values, descending (replicated).

    Tall-skinny (or wide) 2-d matrices use TSQR (only n x n factors move); other cases gather the
    matrix; refuses above GATHER_LIMIT elements with ValueError naming the limit.
    """
    x = _matrices("svdvals", x)
    for y in (x, matrix_transpose(x) if x.ndim == 2 else None):
        if y is not None and _tall(y):
            _, r = _tsqr(_rows(y), want_q=False)
            return _out(x._xp.linalg.svdvals(r), x)
    _limit("svdvals", x)
    return _out(_xpla(x).svdvals(_full(x)), x)


# ------------------------------------------------------------------ elementwise-based functions
def outer(x1, x2, /) -> DArray:
    """Outer product of two 1-d arrays: ``x1[:, None] * x2[None, :]`` (the result is cut like the
    distributed vector; the other vector is allgathered)."""
    a, b = _check("outer", x1), _check("outer", x2)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(message("outer", "operands must be 1-d", (a.shape, b.shape)))
    check_category("outer", a.dtype, "numeric")
    check_category("outer", b.dtype, "numeric")
    return multiply(a[:, None], b[None, :])


def cross(x1, x2, /, *, axis: int = -1) -> DArray:
    """Cross product of 3-element vectors along ``axis`` (of the broadcast shape).

    Local when ``axis`` is not cut; otherwise the operands are first redistributed so that it is not.
    """
    a, b = _check("cross", x1), _check("cross", x2)
    check_category("cross", a.dtype, "numeric")
    check_category("cross", b.dtype, "numeric")
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(message("cross", "shapes cannot be broadcast together", (a.shape, b.shape))) from None
    if not shape:
        raise ValueError(message("cross", "operands must be at least 1-d", (a.shape, b.shape)))
    ax = normalize_axis("cross", axis, len(shape))
    end = ax - len(shape)
    if a.ndim < -end or b.ndim < -end or a.shape[end] != 3 or b.shape[end] != 3:
        raise ValueError(message("cross", f"operands must have size 3 along axis {axis}", (a.shape, b.shape)))
    target, layout = align_target("cross", (a, b))
    layout = _no_halo(layout)
    g = layout.axis_dim[ax]
    if g is not None:  # the vector axis is cut: re-cut the target without it
        split = tuple(None if i == g else s for i, s in enumerate(layout.split))
        sizes = tuple((n,) if i == ax else layout.sizes[i] for i, n in enumerate(shape))
        layout = Layout(shape, layout.dims, split, sizes, (0,) * len(shape), ("none",) * len(shape))
    la = local_operand("cross", a, layout, target)
    lb = local_operand("cross", b, layout, target)
    out = target._xp.linalg.cross(la, lb, axis=end)
    return DArray._wrap(out, layout, target._comm, target._xp)


def diagonal(x, /, *, offset: int = 0) -> DArray:
    """Diagonal ``offset`` of the last two axes, shape (..., L).

    Each rank extracts the diagonal cells of its block; the result's last axis is cut like the input's
    row axis (or column axis), with the possibly uneven blocks that falls out (no messages). When both of
    the last two axes are cut, the matrix is first redistributed to a row cut.
    """
    x = _check("diagonal", x)
    if x.ndim < 2:
        raise ValueError(message("diagonal", "needs at least 2 dimensions", x.shape, "ndim >= 2"))
    if not isinstance(offset, numbers.Integral) or isinstance(offset, bool):
        raise TypeError(message("diagonal", "offset must be an integer", offset))
    offset = int(offset)
    nd = x.ndim
    M, N = x.shape[-2:]
    rs, cs = max(-offset, 0), max(offset, 0)
    L = max(0, min(M - rs, N - cs))
    layout = x._layout
    if layout.axis_dim[nd - 2] is not None and layout.axis_dim[nd - 1] is not None:
        layout = layout.replace(split=tuple(None if s == nd - 1 else s for s in layout.split),
                                sizes=tuple((N,) if a == nd - 1 else s for a, s in enumerate(layout.sizes)),
                                halo=(0,) * nd, boundary=("none",) * nd)
        x = redistribute_to(x, layout)
    by_rows = layout.axis_dim[nd - 1] is None  # the cut (if any) of the matrix axes is the row axis
    axis, shift = (nd - 2, rs) if by_rows else (nd - 1, cs)
    offs = layout.offsets[axis]

    def diag_range(b):
        lo = min(max(offs[b] - shift, 0), L)
        return lo, max(lo, min(offs[b + 1] - shift, L))

    ranges = [diag_range(b) for b in range(len(offs) - 1)]
    rank = x._comm.rank
    start = layout.block_start(rank)
    lo, hi = ranges[layout.block_index(rank)[axis]]
    r0, c0 = (start[nd - 2] if by_rows else 0), (0 if by_rows else start[nd - 1])
    if hi > lo:
        local = x._xp.linalg.diagonal(x.local[..., rs + lo - r0:rs + hi - r0, cs + lo - c0:cs + hi - c0])
    else:  # no slicing: out-of-bounds starts are unspecified in the Array API
        local = x._xp.zeros((*x.local.shape[:-2], 0), dtype=x._block.dtype, device=x.device)
    g = layout.axis_dim[axis]
    split = tuple(nd - 2 if s == axis else (None if s in (nd - 2, nd - 1) else s) for s in layout.split)
    sizes = (*layout.sizes[:nd - 2], tuple(h - lo_ for lo_, h in ranges) if g is not None else (L,))
    new = Layout((*x.shape[:-2], L), layout.dims, split, sizes, (0,) * (nd - 1), ("none",) * (nd - 1))
    return DArray._wrap(local, new, x._comm, x._xp)


@names_errors("trace")
def trace(x, /, *, offset: int = 0, dtype=None) -> DArray:
    """Sum along diagonal ``offset`` of the last two axes (:func:`diagonal` then a sum, allreduced)."""
    d = diagonal(x, offset=offset)
    return _sum(d, axis=-1, dtype=dtype)


def _float(x: DArray) -> DArray:
    return astype(x, np.float64) if x.dtype.kind in "iub" else x


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2) -> DArray:
    """Vector p-norm over ``axis`` (all axes by default), built on elementwise ops and reductions.

    ``ord``: 2 (default), 1, inf, -inf, 0 (count of non-zeros) or any other real p.
    """
    x = _check("vector_norm", x)
    check_category("vector_norm", x.dtype, "numeric")
    axes = normalize_axes("vector_norm", axis, x.ndim)
    if isinstance(ord, bool) or not isinstance(ord, numbers.Real):
        raise ValueError(message("vector_norm", "unsupported ord", repr(ord), "a real number or +-inf"))
    x = _float(x)
    if ord == 0:
        return _sum(astype(not_equal(x, 0), _real_dtype(x.dtype)), axis=axes, keepdims=keepdims)
    a = _abs(x)
    if ord == inf:
        return _max(a, axis=axes, keepdims=keepdims)
    if ord == -inf:
        return _min(a, axis=axes, keepdims=keepdims)
    if ord == 1:
        return _sum(a, axis=axes, keepdims=keepdims)
    if ord == 2:
        return sqrt(_sum(multiply(a, a), axis=axes, keepdims=keepdims))
    with np.errstate(divide="ignore"):
        return _pow(_sum(_pow(a, float(ord)), axis=axes, keepdims=keepdims), 1.0 / float(ord))


def norm(x, ord=None, axis=None, keepdims: bool = False) -> DArray:
    """NumPy's ``numpy.linalg.norm``: a vector or matrix norm, from :func:`vector_norm` / :func:`matrix_norm`.

    ``axis=None`` with ``ord=None``: the 2-norm of all elements (Frobenius for
    matrices); ``axis=None`` with ``ord``: ``x`` must be 1-d (vector norm) or
    2-d (matrix norm); an int ``axis``: vector norms; a pair: matrix norms over
    those two axes.

    Examples
    --------
    >>> import darray as da
    >>> float(da.linalg.norm(da.asarray([[3.0, 0.0], [0.0, 4.0]])))
    5.0
    """
    x = _check("norm", x)
    if axis is None:
        if ord is None:
            return vector_norm(x, keepdims=keepdims)
        if x.ndim not in (1, 2):
            raise ValueError(message("norm", "ord= without axis= needs a 1-d or 2-d array", x.shape,
                                     "a 1-d or 2-d array, or axis="))
        axis = tuple(range(x.ndim))
    if isinstance(axis, numbers.Integral) and not isinstance(axis, bool):
        axis = (int(axis),)
    axes = tuple(normalize_axes("norm", axis, x.ndim)) if isinstance(axis, tuple) else None
    if axes is None or len(axes) != len(axis) or len(axes) not in (1, 2):
        raise ValueError(message("norm", "axis must be an int or a pair of distinct axes", axis,
                                 "None, an int or a 2-tuple"))
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ValueError(message("norm", "invalid norm order for vectors", repr(ord),
                                     "None or a real number"))
        return vector_norm(x, axis=axes, keepdims=keepdims, ord=2 if ord is None else ord)
    rows, cols = (normalize_axis("norm", a, x.ndim) for a in axis)
    rest = [a for a in range(x.ndim) if a not in (rows, cols)]
    moved = permute_dims_(x, (*rest, rows, cols))
    out = matrix_norm(moved, keepdims=keepdims, ord="fro" if ord is None else ord)
    if keepdims:  # the two kept axes sit last: put them back where rows and cols were
        order = [0] * x.ndim
        for position, a in enumerate((*rest, rows, cols)):
            order[a] = position
        out = permute_dims_(out, tuple(order))
    return out


def _real_dtype(dtype) -> np.dtype:
    return np.empty(0, dtype=dtype).real.dtype


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro") -> DArray:
    """Matrix norm of the last two axes: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf.

    'fro', +-1 and +-inf are reductions (allreduce of partials); 'nuc' and +-2 use :func:`svdvals`
    (TSQR for tall-skinny or wide matrices, otherwise the matrix is gathered; refuses above
    GATHER_LIMIT elements with ValueError naming the limit).
    """
    x = _matrices("matrix_norm", x)
    x = _float(x)
    last = (x.ndim - 2, x.ndim - 1)
    if isinstance(ord, str):
        if ord == "fro":
            return vector_norm(x, axis=last, keepdims=keepdims, ord=2)
        if ord != "nuc":
            raise ValueError(message("matrix_norm", "unsupported ord", repr(ord),
                                     "'fro', 'nuc', 1, -1, 2, -2, inf or -inf"))
    elif ord in (1, -1, inf, -inf):
        summed = _sum(_abs(x), axis=x.ndim - 2 if abs(ord) == 1 else x.ndim - 1, keepdims=True)
        pick = _max if ord > 0 else _min
        return pick(summed, axis=last, keepdims=keepdims)
    elif ord not in (2, -2):
        raise ValueError(message("matrix_norm", "unsupported ord", repr(ord),
                                 "'fro', 'nuc', 1, -1, 2, -2, inf or -inf"))
    s = svdvals(x)
    out = _sum(s, axis=-1, keepdims=keepdims) if ord == "nuc" else \
        (_max if ord == 2 else _min)(s, axis=-1, keepdims=keepdims)
    if keepdims:
        out = out[..., None]
    return out



# ------------------------------------------------------------------ NumPy's linalg names beyond the standard
class EigResult(NamedTuple):
    eigenvalues: DArray
    eigenvectors: DArray


def _matrix_operand(func: str, x, like: DArray | None = None) -> DArray:
    """A DArray as it is; an array-like (list, NumPy array) replicated on ``like``'s ranks, as NumPy takes it."""
    return x if isinstance(x, DArray) else _as_darray(func.replace("numpy.linalg.", ""), x, like)


def _host(a) -> np.ndarray:
    return to_numpy(a)


def _empty_2d(x: DArray) -> bool:
    return x.size == 0 and x.shape[-1] * x.shape[-2] == 0


_COND_ORDERS = (None, 2, -2, 1, -1, inf, -inf, "fro", "nuc")


@implements(np.linalg.cond)
def cond(x, p=None) -> DArray:
    """Condition number of a (stack of) matrices in the norm ``p`` (``numpy.linalg.cond``).

    ``p`` None, 2 or -2: the ratio of extreme singular values from :func:`svdvals` (TSQR for tall-skinny
    or wide 2-d matrices: only n x n factors move; otherwise the matrix is gathered; refuses above
    GATHER_LIMIT elements with ValueError naming the limit). Other ``p`` (``'fro' 'nuc' 1 -1 inf -inf``)
    need the inverse: the matrix is gathered (same limit) and NumPy computes ``norm(x) * norm(inv(x))``
    on the host, on every rank. As NumPy: a singular matrix gives ``inf``; a 0-d result for one matrix.

    Examples
    --------
    >>> import darray as da
    >>> float(da.linalg.cond(da.asarray([[2.0, 0.0], [0.0, 0.5]])))
    4.0
    """
    x = _matrices("cond", _matrix_operand("cond", x))
    if _empty_2d(x):
        raise LinAlgError(message("cond", "cond is not defined on empty arrays", x.shape))
    if not any(p is q or (not isinstance(p, str) and not isinstance(q, str) and p == q) for q in _COND_ORDERS):
        raise ValueError(message("cond", "invalid norm order for matrices", repr(p), f"one of {_COND_ORDERS}"))
    if p in (None, 2, -2) and not isinstance(p, str):
        s = svdvals(_float(x))
        with np.errstate(all="ignore"):
            r = (s[..., -1] / s[..., 0]) if p == -2 else (s[..., 0] / s[..., -1])
        nan = isnan(r)
        if bool(_any(nan)):  # inf for singular matrices, unless the matrix had NaNs (as NumPy)
            r = where(logical_and(nan, logical_not(_any(isnan(x), axis=(-2, -1)))), inf, r)
        return r
    if x.shape[-1] != x.shape[-2]:
        raise LinAlgError(message("cond", "last 2 dimensions of the array must be square", x.shape,
                                  "shape (..., M, M)"))
    _limit("cond", x)
    return _out(from_numpy(x._xp, np.asarray(np.linalg.cond(_host(_full(x)), p)), device=x.device), x)


@implements(np.linalg.eig)
def eig(a) -> EigResult:
    """Eigenvalues (replicated) and right eigenvectors (input's layout) of square matrices (``numpy.linalg.eig``).

    The Array API has no general eigensolver: the matrix is gathered and NumPy's ``eig`` runs on the host,
    identically on every rank; refuses above GATHER_LIMIT elements with ValueError naming the limit.
    Results are real when every eigenvalue is real, complex otherwise (as NumPy).

    Examples
    --------
    >>> import darray as da
    >>> da.linalg.eig(da.asarray([[2.0, 0.0], [0.0, 3.0]])).eigenvalues.gather().tolist()
    [2.0, 3.0]
    """
    x = _matrices("eig", _matrix_operand("eig", a), square=True)
    _limit("eig", x)
    w, v = np.linalg.eig(_host(_full(x)))
    xp = x._xp
    return EigResult(_out(from_numpy(xp, w, device=x.device), x),
                     _out(from_numpy(xp, v, device=x.device), x, x._layout))


@implements(np.linalg.eigvals)
def eigvals(a) -> DArray:
    """Eigenvalues of square matrices, replicated (``numpy.linalg.eigvals``).

    The matrix is gathered and NumPy's ``eigvals`` runs on the host, identically on every rank; refuses
    above GATHER_LIMIT elements with ValueError naming the limit.

    Examples
    --------
    >>> import darray as da
    >>> da.linalg.eigvals(da.asarray([[0.0, 1.0], [1.0, 0.0]])).gather().tolist()
    [1.0, -1.0]
    """
    x = _matrices("eigvals", _matrix_operand("eigvals", a), square=True)
    _limit("eigvals", x)
    return _out(from_numpy(x._xp, np.linalg.eigvals(_host(_full(x))), device=x.device), x)


def _compute_types(*dtypes) -> tuple[np.dtype, np.dtype]:
    """NumPy's ``_commonType``: computation in (c)double; results single when every input is single."""
    single = all(np.dtype(d) in (np.float32, np.complex64) for d in dtypes)
    complex_ = any(np.dtype(d).kind == "c" for d in dtypes)
    t = np.dtype(np.complex128 if complex_ else np.float64)
    result = np.dtype({(True, True): np.complex64, (True, False): np.float32}.get((single, complex_), t))
    return t, result


@implements(np.linalg.lstsq)
def lstsq(a, b, rcond=None):
    """Least-squares solution of ``a @ x = b`` (``numpy.linalg.lstsq``): ``(x, residuals, rank, s)``.

    ``a`` is (M, N), ``b`` (M,) or (M, K); NumPy's conventions: singular values ``s`` of ``a`` at or below
    ``rcond * s[0]`` count as zero (default ``eps * max(M, N)``) and ``x`` is the minimum-norm solution;
    ``residuals`` holds the squared 2-norm of each column of ``b - a @ x`` when ``rank == N < M``, and is
    empty otherwise; ``rank`` a NumPy int32. Computed in (complex) float64, returned in float32/complex64
    when every input is single precision.

    Tall-skinny ``a`` (``M >= (N + K) * p``) is solved by TSQR of ``[a | b]`` cut along rows: a local QR
    per block, an allgather of the small triangular factors ((N + K)**2 per rank), a QR of the stacked
    factors on every rank; then the SVD of the small ``R`` gives ``s``, the rank and ``x``, and the
    corner of ``R`` gives the residuals. Only the small factors move (``[a | b]`` is first redistributed
    to a row cut when cut otherwise). Other shapes gather ``[a | b]``; refuses above GATHER_LIMIT elements
    with ValueError naming the limit. ``x``, ``residuals`` and ``s`` are replicated.

    Examples
    --------
    >>> import darray as da
    >>> x, res, rank, s = da.linalg.lstsq(da.asarray([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]]),
    ...                                   da.asarray([1.0, 2.0, 3.0]))
    >>> [round(v, 12) for v in x.gather().tolist()], int(rank)
    ([1.0, 1.0], 2)
    """
    A = _matrix_operand("lstsq", a, b if isinstance(b, DArray) else None)
    B = _matrix_operand("lstsq", b, A)
    for arr in (A, B):
        check_category("lstsq", arr.dtype, "numeric")
    if A.ndim != 2 or B.ndim not in (1, 2):
        bad = A.ndim if A.ndim != 2 else B.ndim + (B.ndim == 1)
        raise LinAlgError(message("lstsq", f"{bad}-dimensional array given. Array must be two-dimensional",
                                  (A.shape, B.shape), "a of shape (M, N) and b of shape (M,) or (M, K)"))
    if A._comm is not B._comm or A._xp is not B._xp:
        raise ValueError(message("lstsq", "a and b live on different communicators or backends"))
    (m, n), k = A.shape, 1 if B.ndim == 1 else B.shape[1]
    if B.shape[0] != m:
        raise LinAlgError(message("lstsq", "Incompatible dimensions", (A.shape, B.shape), f"b with {m} rows"))
    t, result_t = _compute_types(A.dtype, B.dtype)
    real_t = _real_dtype(result_t)
    if rcond is None:
        rcond = np.finfo(t).eps * max(n, m)
    xp = A._xp
    if m == 0 or n == 0 or k == 0:  # nothing to factor: NumPy's zeros and empties, on the host
        _limit("lstsq", A, B)
        x, res, rank, s = np.linalg.lstsq(_host(_full(A)), _host(_full(B)), rcond)
        return (_out(from_numpy(xp, x, device=A.device), A), _out(from_numpy(xp, res, device=A.device), A),
                rank, _out(from_numpy(xp, s, device=A.device), A))
    p, cols = A._comm.size, n + k
    tall = m >= cols * p and cols * cols * p <= GATHER_LIMIT  # _tall of [a | b], from the shapes
    if not tall and m * cols > GATHER_LIMIT:  # refused before anything moves
        raise ValueError(message("lstsq", "gathers the matrix onto every rank and refuses one this large",
                                 f"{m * cols} elements ([a | b] of shape {(m, cols)})",
                                 f"at most GATHER_LIMIT={GATHER_LIMIT} elements (darray.linalg.GATHER_LIMIT)"))
    aug = concat([astype(A, t), astype(B[:, None] if B.ndim == 1 else B, t)], axis=1)
    r = _tsqr(_rows(aug), want_q=False)[1] if tall else xp.linalg.qr(_full(aug))[1]
    x, res, rank, s = _lstsq_small(xp, r, n, float(rcond), m, B.ndim == 1)
    x, res, s = xp.astype(x, to_backend_dtype(xp, result_t)), xp.astype(res, to_backend_dtype(xp, real_t)), \
        xp.astype(s, to_backend_dtype(xp, real_t))
    return _out(x, A), _out(res, A), np.int32(rank), _out(s, A)


def _lstsq_small(xp, r, n: int, rcond: float, m: int, vector: bool):
    """From ``R`` of ``[a | b]`` (``a = Q R[:, :n]``, ``Q^H b = R[:, n:]``): NumPy's lstsq outputs."""
    r1, c = r[:, :n], r[:, n:]
    u, s, vh = xp.linalg.svd(r1, full_matrices=False)
    cut = rcond if rcond >= 0 else float(np.finfo(np.float64).eps)
    rank = int(xp.sum(xp.astype(s > cut * s[0], xp.int64))) if s.shape[0] else 0
    complex_ = xp.isdtype(r.dtype, "complex floating")

    def herm(z):
        z = xp.matrix_transpose(z)
        return xp.conj(z) if complex_ else z

    y = xp.matmul(herm(u[:, :rank]), c) / xp.reshape(s[:rank], (rank, 1))
    x = xp.matmul(herm(vh[:rank, :]), y)
    if rank == n and m > n:  # squared norms of the columns of R's lower-right corner
        corner = r[n:, n:]
        res = xp.sum(xp.real(corner * xp.conj(corner)) if complex_ else corner * corner, axis=0)
    else:
        res = xp.zeros((0,), dtype=s.dtype)
    if vector:
        x = x[:, 0]
    return x, res, rank, s


def _chain_order(shapes: list[tuple[int, int]]) -> list[list[int]]:
    """NumPy's ``_multi_dot_matrix_chain_order``: the split table of the cheapest parenthesization."""
    n = len(shapes)
    p = [s[0] for s in shapes] + [shapes[-1][1]]
    cost = [[0.0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = inf
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain(arrays: list[DArray], split, i: int, j: int) -> DArray:
    if i == j:
        return arrays[i]
    return _dot(_chain(arrays, split, i, split[i][j]), _chain(arrays, split, split[i][j] + 1, j))


@implements(np.linalg.multi_dot)
def multi_dot(arrays, *, out=None) -> DArray:
    """The product of two or more arrays in the cheapest order (``numpy.linalg.multi_dot``).

    The order is NumPy's (from the shapes only: the cost rule for three arrays, the matrix-chain dynamic
    programme beyond); each product is a distributed :func:`matmul` (``numpy.dot`` semantics, booleans
    included; what it moves). The first array may be 1-d (a row vector), the last 1-d (a column vector);
    the others must be 2-d. ``out=`` is not supported.

    Examples
    --------
    >>> import darray as da
    >>> da.linalg.multi_dot([da.ones((2, 3)), da.ones((3, 4)), da.ones(4)]).gather().tolist()
    [12.0, 12.0]
    """
    if out is not None:
        raise TypeError(message("multi_dot", "out= is not supported for DArrays", type(out).__name__,
                                "None (assign the result instead)"))
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError(message("multi_dot", "Expecting at least two arrays", len(arrays), "two or more"))
    like = next((x for x in arrays if isinstance(x, DArray)), None)
    arrays = [_matrix_operand("multi_dot", x, like) for x in arrays]
    if len(arrays) == 2:
        return _dot(*arrays)
    first, last = arrays[0].ndim, arrays[-1].ndim
    if first == 1:
        arrays[0] = arrays[0][None, :]
    if last == 1:
        arrays[-1] = arrays[-1][:, None]
    for x in arrays:
        if x.ndim != 2:
            raise LinAlgError(message("multi_dot", f"{x.ndim}-dimensional array given. Array must be "
                                      "two-dimensional", [y.shape for y in arrays]))
    for x, y in zip(arrays, arrays[1:]):
        if x.shape[1] != y.shape[0]:
            raise ValueError(message("multi_dot", f"shapes {x.shape} and {y.shape} not aligned",
                                     [z.shape for z in arrays], "each array's columns matching the next one's rows"))
    if len(arrays) == 3:
        (a0, a1b0), (b1c0, c1) = arrays[0].shape, arrays[2].shape
        if a0 * b1c0 * (a1b0 + c1) < a1b0 * c1 * (a0 + b1c0):
            result = _dot(_dot(arrays[0], arrays[1]), arrays[2])
        else:
            result = _dot(arrays[0], _dot(arrays[1], arrays[2]))
    else:
        result = _chain(arrays, _chain_order([x.shape for x in arrays]), 0, len(arrays) - 1)
    if first == 1 and last == 1:
        return result[0, 0]
    if first == 1:
        return result[0, :]
    if last == 1:
        return result[:, 0]
    return result




@implements(np.linalg.tensorinv)
def tensorinv(a, ind: int = 2) -> DArray:
    """The inverse of ``a`` with respect to :func:`tensordot` over ``ind`` axes (``numpy.linalg.tensorinv``).

    A distributed reshape to the (prod(shape[:ind]), prod(shape[ind:])) matrix, :func:`inv` (which gathers
    the matrix; refuses above GATHER_LIMIT elements with ValueError naming the limit) and a distributed
    reshape to ``shape[ind:] + shape[:ind]``.

    Examples
    --------
    >>> import darray as da
    >>> da.linalg.tensorinv(da.reshape(da.eye(4) * 2.0, (4, 2, 2)), ind=1).shape
    (2, 2, 4)
    """
    x = _matrix_operand("tensorinv", a)
    if isinstance(ind, bool) or not isinstance(ind, numbers.Integral):
        raise TypeError(message("tensorinv", "ind must be an integer", ind, "a positive int"))
    if ind <= 0:
        raise ValueError(message("tensorinv", "Invalid ind argument", ind, "a positive int"))
    shape = x.shape
    rows = int(np.prod(shape[ind:], dtype=np.int64))
    cols = x.size // rows if rows else 0
    if rows != cols or rows * cols != x.size:
        raise LinAlgError(message("tensorinv", "the tensor does not reshape to a square matrix", (shape, ind),
                                  "prod(a.shape[:ind]) == prod(a.shape[ind:])"))
    return reshape(inv(reshape(x, (rows, cols))), (*shape[ind:], *shape[:ind]))


@implements(np.linalg.tensorsolve)
def tensorsolve(a, b, axes=None) -> DArray:
    """Solve ``tensordot(a, x, axes=x.ndim) = b`` for ``x`` (``numpy.linalg.tensorsolve``).

    ``axes`` (moved to the end of ``a`` first), then a distributed reshape of ``a`` to a square matrix and
    of ``b`` to a vector, :func:`solve` (which gathers both; refuses above GATHER_LIMIT elements with
    ValueError naming the limit) and a reshape of the solution to ``a.shape[b.ndim:]``.

    Examples
    --------
    >>> import darray as da
    >>> x = da.linalg.tensorsolve(da.reshape(da.eye(6) * 2.0, (2, 3, 6)), da.ones((2, 3)))
    >>> x.shape, float(x[0])
    ((6,), 0.5)
    """
    x = _matrix_operand("tensorsolve", a, b if isinstance(b, DArray) else None)
    y = _matrix_operand("tensorsolve", b, x)
    an = x.ndim
    if axes is not None:
        order = list(range(an))
        for k in axes:  # as NumPy: each of a's axes (0 <= k < a.ndim) moved to the end, in turn
            if k not in order:
                raise ValueError(message("tensorsolve", "axes must be distinct axes of a, 0 <= axis < a.ndim",
                                         axes))
            order.remove(k)
            order.append(k)
        x = permute_dims_(x, tuple(order))
    old = x.shape[-(an - y.ndim):]  # NumPy's (the whole shape when a and b have as many axes)
    prod = int(np.prod(old, dtype=np.int64))
    if x.size != prod ** 2:
        raise LinAlgError(message("tensorsolve", "Input arrays must satisfy the requirement "
                                  "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])", (x.shape, y.shape)))
    return reshape(solve(reshape(x, (prod, prod)), reshape(y, (prod,))), old)

