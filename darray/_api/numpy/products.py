"""NumPy's products and diagonals outside the standard: ``dot``, ``vdot``, ``inner``, ``cross``, ``kron``, ``diag``...

Each has NumPy's signature and semantics and is registered with
``__array_function__``. They run as darray's distributed ``matmul``,
``tensordot``, ``vecdot`` and ``linalg`` functions, so they move what those
move: a contraction over a cut axis is a local product and an allreduce of
the small result; ``vdot`` of arrays cut along a later axis first ravels
them (a C-order reshape that redistributes). Booleans give NumPy's boolean
products (an OR of ANDs).

Examples
--------
>>> import darray as da
>>> from darray._api.numpy.products import dot, trace
>>> float(dot(da.arange(3.0), da.arange(3.0))), float(trace(da.eye(3)))
(5.0, 3.0)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..._core import DArray
from ..._core.views import read_only
from ..._errors import message
from .. import linalg as _linalg
from .._common import first_darray
from ..creation import eye, zeros
from ..data_types import astype
from ..linear_algebra import matmul, tensordot, vecdot
from ..manipulation import concat, moveaxis, permute_dims, reshape
from ..searching import where
from ..._core.protocols import implements
from ._common import axis_of, darray_of, integer, no_out, numpy_function, numpy_name, unsupported
from .stacking import ravel

__all__ = ["cross", "diag", "diagonal", "dot", "inner", "kron", "trace", "vdot"]


def numpy_product(a: DArray, b: DArray, product: Callable[[DArray, DArray], DArray]) -> DArray:
    """``product(a, b)`` with NumPy's dtypes: operands cast to their result type; two boolean operands give
    NumPy's OR of ANDs (counted in int64, then ``!= 0``)."""
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        return product(astype(a, np.int64), astype(b, np.int64)) != 0
    dtype = np.result_type(a.dtype, b.dtype)
    return product(a if a.dtype == dtype else astype(a, dtype), b if b.dtype == dtype else astype(b, dtype))


def _multiply(a: DArray, b: DArray) -> DArray:
    return numpy_product(a, b, lambda p, q: p * q) if np.bool_ in (a.dtype, b.dtype) else a * b


def _pair(func: str, a, b) -> tuple[DArray, DArray]:
    like = first_darray(a, b)
    return darray_of(func, a, like), darray_of(func, b, like)


@numpy_function(np.dot)
def dot(a, b, out=None) -> DArray:
    """Dot product (``numpy.dot``): a product with 0-d operands, the inner product of 1-d arrays,
    a matrix product of 2-d ones, and a sum over ``a``'s last and ``b``'s second-to-last axis otherwise.

    Runs as :func:`darray.matmul` (``b`` up to 2-d) or :func:`darray.tensordot`; no conjugation.
    Booleans give NumPy's boolean result (an OR of ANDs).

    Examples
    --------
    >>> import darray as da
    >>> float(dot(da.arange(3.0), da.arange(3.0)))
    5.0
    """
    no_out("dot", out)
    x, y = _pair("dot", a, b)
    if x.ndim == 0 or y.ndim == 0:
        return _multiply(x, y)
    k_axis = 0 if y.ndim == 1 else y.ndim - 2
    if x.shape[-1] != y.shape[k_axis]:
        raise ValueError(message(numpy_name("dot"), f"shapes {x.shape} and {y.shape} not aligned: {x.shape[-1]} "
                                 f"(dim {x.ndim - 1}) != {y.shape[k_axis]} (dim {k_axis})", (x.shape, y.shape),
                                 "a's last axis as long as b's second-to-last (or only) axis"))
    if y.ndim <= 2:
        product = matmul
    else:
        def product(p, q):
            return tensordot(p, q, axes=([p.ndim - 1], [q.ndim - 2]))
    return numpy_product(x, y, product) if np.bool_ in (x.dtype, y.dtype) else product(x, y)


@numpy_function(np.vdot)
def vdot(a, b, /) -> DArray:
    """``sum(conj(ravel(a)) * ravel(b))`` (``numpy.vdot``): a 0-d DArray; the arrays are flattened first.

    Runs as :func:`darray.vecdot` of the raveled arrays (a sum reduction with one allreduce).

    Examples
    --------
    >>> import darray as da
    >>> complex(vdot(da.asarray([1j, 2.0]), da.asarray([1j, 1.0])))
    (3+0j)
    """
    x, y = _pair("vdot", a, b)
    if x.size != y.size:
        raise ValueError(message(numpy_name("vdot"), "vectors have different lengths", (x.size, y.size),
                                 "arrays with the same number of elements"))
    x, y = ravel(x), ravel(y)
    if np.bool_ in (x.dtype, y.dtype):
        return numpy_product(x, y, lambda p, q: vecdot(p, q))
    return vecdot(x, y)


@numpy_function(np.inner)
def inner(a, b, /) -> DArray:
    """Inner product over the last axes (``numpy.inner``): ``tensordot(a, b, axes=([-1], [-1]))``, no conjugation.

    Examples
    --------
    >>> import darray as da
    >>> inner(da.ones((2, 3)), da.ones((4, 3))).shape
    (2, 4)
    """
    x, y = _pair("inner", a, b)
    if x.ndim == 0 or y.ndim == 0:
        return _multiply(x, y)
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(message(numpy_name("inner"), f"shapes {x.shape} and {y.shape} not aligned: {x.shape[-1]} "
                                 f"(dim {x.ndim - 1}) != {y.shape[-1]} (dim {y.ndim - 1})", (x.shape, y.shape),
                                 "last axes of one length"))

    def product(p, q):
        return tensordot(p, q, axes=([p.ndim - 1], [q.ndim - 1]))

    return numpy_product(x, y, product) if np.bool_ in (x.dtype, y.dtype) else product(x, y)


@numpy_function(np.cross)
def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> DArray:
    """Cross product of 3-element vectors (``numpy.cross``), vectors along ``axisa``/``axisb``, result along ``axisc``.

    ``axis`` overrides all three. Computed by :func:`darray.linalg.cross`
    (local when the vector axis is not cut, else the operands are re-cut first).
    2-element vectors (deprecated since NumPy 2.0) are not supported.

    Examples
    --------
    >>> import darray as da
    >>> cross(da.asarray([1.0, 0.0, 0.0]), da.asarray([0.0, 1.0, 0.0])).gather().tolist()
    [0.0, 0.0, 1.0]
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = _pair("cross", a, b)
    x = moveaxis(x, axis_of("cross", axisa, x.ndim), -1)
    y = moveaxis(y, axis_of("cross", axisb, y.ndim), -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError(message(numpy_name("cross"), "incompatible dimensions for cross product (dimension must be "
                                 "2 or 3)", (x.shape[-1], y.shape[-1]), "vectors of 3 elements"))
    if x.shape[-1] == 2 or y.shape[-1] == 2:
        raise unsupported("cross", "2-element vectors (deprecated in NumPy 2.0)", (x.shape[-1], y.shape[-1]),
                           "vectors of 3 elements", ValueError)
    try:
        shape = np.broadcast_shapes(x.shape[:-1], y.shape[:-1]) + (3,)
    except ValueError:
        raise ValueError(message(numpy_name("cross"), "shape mismatch: objects cannot be broadcast to a single shape",
                                 (x.shape, y.shape), "vector arrays that broadcast")) from None
    c = axis_of("cross", axisc, len(shape))
    out = _linalg.cross(x, y, axis=-1)
    return moveaxis(out, -1, c) if c != len(shape) - 1 else out


# ---------------------------------------------------------------- diagonals
def _last_two(func: str, a, axis1, axis2) -> DArray:
    """``a`` with axes ``axis1``, ``axis2`` moved to the end (in that order)."""
    x = darray_of(func, a)
    if x.ndim < 2:
        raise ValueError(message(numpy_name(func), "diag requires an array of at least two dimensions", x.shape,
                                 "an array with ndim >= 2"))
    i, j = axis_of(func, axis1, x.ndim), axis_of(func, axis2, x.ndim)
    if i == j:
        raise ValueError(message(numpy_name(func), "axis1 and axis2 cannot be the same", (axis1, axis2),
                                 "two different axes"))
    perm = tuple(k for k in range(x.ndim) if k not in (i, j)) + (i, j)
    return permute_dims(x, perm) if perm != tuple(range(x.ndim)) else x


@numpy_function(np.trace)
def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None, out=None) -> DArray:
    """Sum along diagonal ``offset`` of the 2-d sub-arrays over ``axis1``/``axis2`` (``numpy.trace``).

    Runs as :func:`darray.linalg.trace` (each rank sums its diagonal cells, one allreduce).

    Examples
    --------
    >>> import darray as da
    >>> float(trace(da.eye(3)))
    3.0
    """
    no_out("trace", out)
    offset = integer("trace", "offset", offset)
    return _linalg.trace(_last_two("trace", a, axis1, axis2), offset=offset, dtype=dtype)


@numpy_function(np.diagonal)
def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1) -> DArray:
    """Diagonal ``offset`` of the 2-d sub-arrays over ``axis1``/``axis2``, as the last axis (``numpy.diagonal``).

    Read-only, as NumPy's view is (writes raise ValueError); :func:`darray.linalg.diagonal` gives a
    writable copy.

    Examples
    --------
    >>> import darray as da
    >>> diagonal(da.reshape(da.arange(9), (3, 3)), 1).gather().tolist()
    [1, 5]
    """
    offset = integer("diagonal", "offset", offset)
    return read_only(_linalg.diagonal(_last_two("diagonal", a, axis1, axis2), offset=offset), "diagonal")


@numpy_function(np.diag)
def diag(v, k: int = 0) -> DArray:
    """A 2-d array with the 1-d ``v`` on diagonal ``k``, or the diagonal ``k`` of a 2-d ``v`` (``numpy.diag``).

    For 1-d ``v`` the (n+|k|) x (n+|k|) result is cut along its rows (``k >= 0``)
    or columns (``k < 0``) when ``v`` is distributed (only ``v`` moves);
    for a replicated ``v`` it is laid out as :func:`darray.eye` would be.

    Examples
    --------
    >>> import darray as da
    >>> diag(da.asarray([1, 2]), k=1).gather().tolist()
    [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    """
    x = darray_of("diag", v)
    k = integer("diag", "k", k)
    if x.ndim == 2:
        return _linalg.diagonal(x, offset=k)
    if x.ndim != 1:
        raise ValueError(message(numpy_name("diag"), "input must be 1- or 2-d", x.shape, "a 1-d or 2-d array"))
    n = x.shape[0] + abs(k)
    if k:
        pad = zeros(abs(k), dtype=x.dtype, comm=x.comm, device=x.device, split=None)
        x = concat([x, pad])
    split = "auto" if x.layout.is_replicated else (0 if k >= 0 else 1)
    mask = eye(n, k=k, dtype=np.bool_, comm=x.comm, device=x.device, split=split)
    values = x[:, None] if k >= 0 else x[None, :]  # row i holds v[i] (k >= 0); column j holds v[j] (k < 0)
    return where(mask, values, False if x.dtype == np.bool_ else 0)


@implements(np.kron)
def kron(a, b) -> DArray:
    """The Kronecker product of ``a`` and ``b`` (``numpy.kron``), cut like ``a``.

    An outer product with interleaved axes ``(a0, b0, a1, b1, ...)`` and a
    reshape merging each pair, which stays local: ``b`` (usually the small
    factor) is held whole by every rank, allgathered if distributed.

    Examples
    --------
    >>> import darray as da
    >>> kron(da.asarray([1, 10]), [1, 2, 3]).gather().tolist()
    [1, 2, 3, 10, 20, 30]
    """
    like = first_darray(a, b)
    a, b = darray_of("kron", a, like), darray_of("kron", b, like)
    if a.dtype == np.bool_ and b.dtype == np.bool_:  # NumPy's product of booleans is their AND
        a, b = astype(a, np.uint8), astype(b, np.uint8)
        return astype(_kron(a, b), np.bool_)
    dtype = np.result_type(a.dtype, b.dtype)  # one dtype first: standard libraries do not mix kinds
    return _kron(astype(a, dtype, copy=False), astype(b, dtype, copy=False))


def _kron(a: DArray, b: DArray) -> DArray:
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    nd = max(a.ndim, b.ndim)
    as_, bs = (1,) * (nd - a.ndim) + a.shape, (1,) * (nd - b.ndim) + b.shape
    a_arr = reshape(a, tuple(n for m in as_ for n in (m, 1)))
    b_arr = reshape(b, tuple(n for m in bs for n in (1, m)))
    return reshape(a_arr * b_arr, tuple(m * n for m, n in zip(as_, bs)))
