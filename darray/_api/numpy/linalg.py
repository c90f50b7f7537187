"""NumPy's ``numpy.linalg`` names beyond the standard (also registered, so that
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

from ..._backend import from_numpy, to_numpy
from ..._core import DArray, to_backend_dtype
from ..._core.dtypes import check_category
from ..._core.elementwise import astype
from ..._core.protocols import implements
from ..._core.reductions import any as _any
from ..._errors import message
from .. import linalg as _linalg
from ..elementwise import isnan, logical_and, logical_not
from ..linalg import LinAlgError, _float, _full, _limit, _matrices, _out, _real_dtype, _rows, _tsqr, inv, solve, svdvals
from ..manipulation import concat, permute_dims as permute_dims_, reshape
from ..searching import where
from ._common import darray_of as _as_darray
from .products import dot as _dot

__all__ = ["EigResult", "cond", "eig", "eigvals", "lstsq", "multi_dot", "tensorinv", "tensorsolve"]


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
    _linalg.GATHER_LIMIT elements with ValueError naming the limit). Other ``p`` (``'fro' 'nuc' 1 -1 inf -inf``)
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
    identically on every rank; refuses above _linalg.GATHER_LIMIT elements with ValueError naming the limit.
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
    above _linalg.GATHER_LIMIT elements with ValueError naming the limit.

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
    to a row cut when cut otherwise). Other shapes gather ``[a | b]``; refuses above _linalg.GATHER_LIMIT elements
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
    tall = m >= cols * p and cols * cols * p <= _linalg.GATHER_LIMIT  # _tall of [a | b], from the shapes
    if not tall and m * cols > _linalg.GATHER_LIMIT:  # refused before anything moves
        raise ValueError(message("lstsq", "gathers the matrix onto every rank and refuses one this large",
                                 f"{m * cols} elements ([a | b] of shape {(m, cols)})",
                                 f"at most _linalg.GATHER_LIMIT={_linalg.GATHER_LIMIT} elements (darray.linalg._linalg.GATHER_LIMIT)"))
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
    the matrix; refuses above _linalg.GATHER_LIMIT elements with ValueError naming the limit) and a distributed
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
    of ``b`` to a vector, :func:`solve` (which gathers both; refuses above _linalg.GATHER_LIMIT elements with
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

