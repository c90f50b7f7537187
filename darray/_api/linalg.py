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

NumPy's ``numpy.linalg`` names beyond the standard (``lstsq``, ``multi_dot``, ``cond``, ``eig``,
``eigvals``, ``tensorinv``, ``tensorsolve``) are in :mod:`darray._api.numpy.linalg`.
"""

from __future__ import annotations

import numbers
from math import inf
from typing import NamedTuple

import numpy as np

from .._config import config
from .._core import DArray, make_layout, redistribute_to
from .._core.dtypes import check_category
from .._core.elementwise import align_target, astype, local_operand
from .._core.reductions import max as _max, min as _min, normalize_axes, sum as _sum
from .._errors import message, names_errors
from .._layout import Layout, normalize_axis
from .elementwise import abs as _abs, multiply, not_equal, pow as _pow, sqrt
from .manipulation import permute_dims as permute_dims_
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
        return redistribute_to(out, layout.without_halo() if layout.has_halo else layout)
    if out.size >= config.min_distributed_size and out.ndim:
        return redistribute_to(out, make_layout("linalg", shape, comm.size))
    return out


def _transposed(layout: Layout) -> Layout:
    """The layout of the matrix transpose (last two axes swapped)."""
    n = layout.ndim
    order = (*range(n - 2), n - 1, n - 2)
    pos = {a: i for i, a in enumerate(order)}
    return Layout(tuple(layout.shape[a] for a in order), layout.dims,
                  tuple(None if s is None else pos[s] for s in layout.split),
                  tuple(layout.sizes[a] for a in order))


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
    layout = x._layout.without_halo() if x._layout.has_halo else x._layout
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
    layout = Layout((x.shape[0], ncols), la.dims, la.split, (la.sizes[0], (ncols,)))
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
    layout = layout.without_halo() if layout.has_halo else layout
    g = layout.axis_dim[ax]
    if g is not None:  # the vector axis is cut: re-cut the target without it
        split = tuple(None if i == g else s for i, s in enumerate(layout.split))
        sizes = tuple((n,) if i == ax else layout.sizes[i] for i, n in enumerate(shape))
        layout = Layout(shape, layout.dims, split, sizes)
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
        layout = layout.without_halo().replace(split=tuple(None if s == nd - 1 else s for s in layout.split),
                                               sizes=tuple((N,) if a == nd - 1 else s
                                                           for a, s in enumerate(layout.sizes)))
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
    new = Layout((*x.shape[:-2], L), layout.dims, split, sizes)
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


from .numpy.linalg import EigResult, cond, eig, eigvals, lstsq, multi_dot, tensorinv, tensorsolve
