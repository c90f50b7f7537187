"""Linear algebra functions (Array API chapter "Linear Algebra Functions"), distributed.

``matmul`` chooses its algorithm from the operands' layouts (replicated
metadata, so every rank makes the same choice before anything moves). With
``a`` of shape (..., n, k) and ``b`` of shape (..., k, m), ``p`` ranks,
sizes counted in elements (multiply by the itemsize for bytes):

1. **Local** -- one operand is replicated, or small (at most
   :data:`SMALL_OPERAND` elements) and then allgathered by redistributing it
   to replicated, and the other is not cut along its contraction axis (cut
   along rows, columns or batch axes): every rank multiplies its block by the
   matching part of the full operand. The result is cut like the distributed
   operand. Moves: 0 when the small operand is already replicated, else
   ``size(small) * (p - 1)`` in total (each rank receives what it lacks).
2. **Contraction** -- ``a`` cut along k and ``b`` cut along k by the same
   grid dim with the same blocks (or one of them replicated, then sliced
   locally): local partial products, summed with an allreduce over that grid
   dim. The result is replicated (large results are then cut by a local slice,
   no messages). Moves: an allreduce of ``n * m * batch`` elements per rank,
   about ``2 * size(out) * (q - 1) / q`` per rank over a group of q ranks.
   Chosen when the result is no larger than the operands together.
3. **SUMMA** -- 2-d operands on a 2-d grid (``pr x pc``, both > 1, each
   operand cut ``split=(0, 1)``; an operand cut otherwise is first
   redistributed to balanced 2-d blocks on the same grid): for every panel of k, the owner
   column broadcasts its panel of ``a`` along its grid row and the owner row
   broadcasts its panel of ``b`` along its grid column (``comm.sub`` + ``bcast``);
   each rank accumulates ``C_ij += A_panel @ B_panel``. The result is cut
   ``(0, 1)`` like the operands. Moves: ``size(a) * (pc - 1) + size(b) * (pr - 1)``
   in total, never more than one block plus one panel pair of extra memory.
4. **Fallback** -- redistribute ``a`` to a row cut (1-d grid over all ranks,
   along its largest non-broadcast row or batch axis) and ``b`` to
   replicated, then case 1; or ``b`` to a column cut and ``a`` to replicated,
   whichever moves fewer elements (estimated as ``size(x)`` for a re-cut and
   ``size(x) * (p - 1)`` for a replication); or, when one operand is cut
   along k only and the result is small, move the other to the same k blocks
   and use case 2.

1-d operands follow NumPy: a 1-d ``a`` becomes (1, k), a 1-d ``b`` (k, 1), and
the inserted axis is removed from the result.
"""

from __future__ import annotations

import numbers
from bisect import bisect_right
from math import prod

import numpy as np

from .._config import config
from .._core import DArray, make_layout, redistribute_to
from .._core.dtypes import check_category
from .._core.elementwise import astype
from .._core.indexing import getitem
from .._core.manipulation import permute_dims
from .._core.reductions import combine
from .._core.reductions import sum as _sum
from .._errors import message
from .._layout import Layout, balanced_sizes, normalize_axis
from .elementwise import conj, multiply
from .manipulation import reshape

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot", "SMALL_OPERAND"]

#: An operand with at most this many elements is allgathered (redistributed to
#: replicated) by :func:`matmul` rather than moving the other operand.
SMALL_OPERAND = 2 ** 22


# ------------------------------------------------------------------ helpers
def _darray(func: str, x, like: DArray | None = None) -> DArray:
    """``x`` as a DArray: DArrays pass; array-likes become replicated arrays on ``like``'s communicator."""
    if isinstance(x, DArray):
        return x
    if like is None or isinstance(x, (bool, numbers.Number)) or not hasattr(x, "shape"):
        raise TypeError(message(func, "expected a DArray (or an array next to one)", type(x).__name__))
    local = like._xp.asarray(np.asarray(x), device=like.device)
    return DArray._new(local, _replicated_layout(tuple(local.shape), like._comm.size), like._comm, like._xp)


def _pair(func: str, x1, x2) -> tuple[DArray, DArray]:
    if not isinstance(x1, DArray) and not isinstance(x2, DArray):
        raise TypeError(message(func, "expected DArray arguments", (type(x1).__name__, type(x2).__name__)))
    a = _darray(func, x1, x2 if isinstance(x2, DArray) else None)
    b = _darray(func, x2, a)
    if a._comm is not b._comm:
        raise ValueError(message(func, "arrays live on different communicators", None,
                                 "arrays created on the same communicator"))
    if b._xp is not a._xp:
        b = DArray._wrap(a._xp.asarray(b._block, device=a.device), b._layout, b._comm, a._xp)
    return a, b


def _replicated_layout(shape, nprocs: int, dims=None) -> Layout:
    shape = tuple(shape)
    dims = dims if dims is not None else (nprocs,)
    return Layout(shape, dims, (None,) * len(dims), tuple((n,) for n in shape))


def _cut_layout(shape, nprocs: int, axis: int) -> Layout:
    """Balanced blocks along ``axis`` over a 1-d grid of all ranks."""
    shape = tuple(shape)
    sizes = tuple(balanced_sizes(n, nprocs) if a == axis else (n,) for a, n in enumerate(shape))
    return Layout(shape, (nprocs,), (axis,), sizes)


def _replicate(x: DArray) -> DArray:
    return x if x._layout.is_replicated else redistribute_to(x, x._layout.replicated())


def _cut_axes(layout: Layout) -> list[int]:
    return [a for a, g in enumerate(layout.axis_dim) if g is not None]


def _settle(out: DArray) -> DArray:
    """A replicated result, cut by a local slice (no messages) when it is large enough to distribute."""
    if out.size < config.min_distributed_size or out._comm.size == 1 or out.ndim == 0:
        return out
    return redistribute_to(out, make_layout("matmul", out.shape, out._comm.size))


def _insert_axis(x: DArray, position: int) -> DArray:
    """A 1-d ``x`` as (1, k) (``position=0``) or (k, 1) (``position=1``); no communication."""
    layout = x._layout
    g = layout.axis_dim[0]
    shape = (1, x.shape[0]) if position == 0 else (x.shape[0], 1)
    vec_axis = 1 - position
    sizes = [(1,), (1,)]
    sizes[vec_axis] = layout.sizes[0]
    split = tuple(vec_axis if g is not None and i == g else None for i in range(len(layout.dims)))
    new = Layout(shape, layout.dims, split, tuple(sizes))
    local = x.local[None, :] if position == 0 else x.local[:, None]
    return DArray._wrap(local, new, x._comm, x._xp)


# ------------------------------------------------------------------ matmul
def matmul(x1, x2, /) -> DArray:
    """Matrix product with NumPy semantics (1-d operands, broadcast batch axes); see the module docstring.

    The algorithm follows the layouts: local product against a replicated or
    small (<= :data:`SMALL_OPERAND` elements, allgathered) operand; partial
    products + allreduce when both are cut along the contraction axis alike;
    SUMMA on a 2-d grid; otherwise the cheaper of (a row-cut, b replicated) and
    (a replicated, b column-cut). Never gathers both operands on one rank.

    Examples
    --------
    >>> import darray as da
    >>> a = da.ones((6, 4), split=0)
    >>> b = da.ones((4, 3), split=None)
    >>> float(da.sum(da.matmul(a, b)))
    72.0
    """
    a, b = _pair("matmul", x1, x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(message("matmul", "operands must be at least 1-d", (a.shape, b.shape),
                                 "arrays with ndim >= 1"))
    dtype_a, dtype_b = a.dtype, b.dtype
    check_category("matmul", dtype_a, "numeric")
    check_category("matmul", dtype_b, "numeric")
    k_a = a.shape[-1]
    k_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if k_a != k_b:
        raise ValueError(message("matmul", "contraction sizes differ", (a.shape, b.shape),
                                 f"x1.shape[-1] == x2.shape[-2] ({k_a} != {k_b})"))
    if a.ndim > 2 or b.ndim > 2:
        try:
            np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            raise ValueError(message("matmul", "batch shapes cannot be broadcast together", (a.shape, b.shape),
                                     "batch axes equal or 1")) from None
    if dtype_a != dtype_b:
        dtype = np.result_type(dtype_a, dtype_b)
        a = astype(a, dtype, copy=False)
        b = astype(b, dtype, copy=False)
    if a._comm.size == 1 or (a._layout.is_replicated and b._layout.is_replicated):
        return _whole_product(a, b)
    vec_a, vec_b = a.ndim == 1, b.ndim == 1
    if vec_a:
        a = _insert_axis(a, 0)
    if vec_b:
        b = _insert_axis(b, 1)
    out = _matmul_nd(a, b)
    if vec_a and vec_b:
        return getitem(out, (Ellipsis, 0, 0))
    if vec_a:
        return getitem(out, (Ellipsis, 0, slice(None)))
    if vec_b:
        return getitem(out, (Ellipsis, 0))
    return out


def _whole_product(a: DArray, b: DArray) -> DArray:
    """``a @ b`` when every rank holds both operands whole (one rank, or both replicated): one local call."""
    local = a._xp.matmul(a.local, b.local)
    layout = _replicated_layout(tuple(local.shape), a._comm.size, a._layout.dims)
    return DArray._wrap(local, layout, a._comm, a._xp)


def _free(x: DArray, contraction: int, lead: int, out_shape) -> bool:
    """``x`` is not cut along its contraction axis nor along a batch axis it broadcasts."""
    for axis in _cut_axes(x._layout):
        if axis == contraction or x.shape[axis] != out_shape[axis + lead]:
            return False
    return True


def _matmul_nd(a: DArray, b: DArray) -> DArray:
    p = a._comm.size
    nc = max(a.ndim, b.ndim)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    out_shape = (*batch, a.shape[-2], b.shape[-1])
    lead_a, lead_b = nc - a.ndim, nc - b.ndim
    ka, kb = a.ndim - 1, b.ndim - 2
    la, lb = a._layout, b._layout
    free_a = _free(a, ka, lead_a, out_shape)
    free_b = _free(b, kb, lead_b, out_shape)
    # 1. local product against a replicated operand, else against a small one (allgathered)
    if free_a and lb.is_replicated:
        return _local_product(a, b, True, out_shape)
    if free_b and la.is_replicated:
        return _local_product(b, a, False, out_shape)
    if free_a and b.size <= SMALL_OPERAND:
        return _local_product(a, _replicate(b), True, out_shape)
    if free_b and a.size <= SMALL_OPERAND:
        return _local_product(b, _replicate(a), False, out_shape)
    out_size = prod(out_shape)
    # 2. both cut along the contraction axis alike (or one replicated)
    if out_size <= a.size + b.size and _contraction_ready(a, b):
        return _contract(a, b, out_shape)
    # 3. SUMMA on a 2-d grid
    if a.ndim == 2 and b.ndim == 2 and (_block2d(la) or _block2d(lb)):
        dims = la.dims if _block2d(la) else lb.dims
        return _summa(_to_block2d(a, dims), _to_block2d(b, dims))
    # 4. move operands: the cheaper of row-cut a + replicated b, replicated a + column-cut b,
    #    or (small result) matching contraction blocks
    rows = _cut_layout(a.shape, p, _best_axis(a, ka, lead_a, out_shape))
    cols = _cut_layout(b.shape, p, _best_axis(b, kb, lead_b, out_shape))
    options = [(_moved(a, rows) + _replicate_cost(b), 0), (_moved(b, cols) + _replicate_cost(a), 1)]
    contract = _contraction_target(a, b) if out_size <= a.size + b.size else None
    if contract is not None:
        options.append((contract[0] + 2 * out_size * (p - 1), 2))
    _, choice = min(options)
    if choice == 0:
        return _local_product(redistribute_to(a, rows), _replicate(b), True, out_shape)
    if choice == 1:
        return _local_product(redistribute_to(b, cols), _replicate(a), False, out_shape)
    _, which, target = contract
    if which == 0:
        a = redistribute_to(a, target)
    else:
        b = redistribute_to(b, target)
    return _contract(a, b, out_shape)


def _moved(x: DArray, layout: Layout) -> int:
    """Elements that redistributing ``x`` to ``layout`` moves (upper bound; 0 when only slicing)."""
    if x._layout.is_replicated or x._layout.blocks_key == layout.blocks_key:
        return 0
    return x.size


def _replicate_cost(x: DArray) -> int:
    return 0 if x._layout.is_replicated else x.size * (x._comm.size - 1)


def _best_axis(x: DArray, contraction: int, lead: int, out_shape) -> int:
    """The axis to cut ``x`` along in the fallback: its largest non-broadcast row/column or batch axis."""
    row_or_col = x.ndim - 1 if contraction == x.ndim - 2 else x.ndim - 2
    candidates = [row_or_col] + [ax for ax in range(x.ndim - 2) if x.shape[ax] == out_shape[ax + lead]]
    return max(candidates, key=lambda ax: (x.shape[ax], ax == row_or_col))


def _local_product(d: DArray, f: DArray, d_is_a: bool, out_shape) -> DArray:
    """``d @ f`` (or ``f @ d``) with ``f`` replicated: each rank multiplies its block of ``d``."""
    rank = d._comm.rank
    nc = len(out_shape)
    ld = d._layout
    lead_d, lead_f = nc - d.ndim, nc - f.ndim
    key = [slice(None)] * f.ndim
    slices = ld.block_slices(rank)
    for axis in _cut_axes(ld):
        r = axis + lead_d
        fa = r - lead_f
        if r < nc - 2 and fa >= 0 and f.shape[fa] != 1:
            key[fa] = slices[axis]
    xp = d._xp
    fl = f.local[tuple(key)]
    local = xp.matmul(d.local, fl) if d_is_a else xp.matmul(fl, d.local)
    split = tuple(None if s is None else s + lead_d for s in ld.split)
    sizes = tuple(ld.sizes[r - lead_d] if r >= lead_d and ld.axis_dim[r - lead_d] is not None else (n,)
                  for r, n in enumerate(out_shape))
    layout = Layout(out_shape, ld.dims, split, sizes)
    return DArray._wrap(local, layout, d._comm, xp)


def _k_cut(x: DArray, k_axis: int):
    """(grid dim, dims, sizes) if ``x`` is cut along ``k_axis`` only; ``"replicated"``; or None."""
    cut = _cut_axes(x._layout)
    if not cut:
        return "replicated"
    if cut == [k_axis]:
        lay = x._layout
        return lay.axis_dim[k_axis], lay.dims, lay.sizes[k_axis]
    return None


def _contraction_ready(a: DArray, b: DArray) -> bool:
    ca, cb = _k_cut(a, a.ndim - 1), _k_cut(b, b.ndim - 2)
    if ca is None or cb is None or (ca == "replicated" and cb == "replicated"):
        return False
    return ca == "replicated" or cb == "replicated" or ca == cb


def _contraction_target(a: DArray, b: DArray):
    """(elements moved, which operand moves, its target layout) to give both operands the contraction blocks
    of one that is cut along k only; None when neither is."""
    ca, cb = _k_cut(a, a.ndim - 1), _k_cut(b, b.ndim - 2)
    options = []
    if isinstance(ca, tuple):
        target = _k_layout(b.shape, b.ndim - 2, *ca)
        options.append((_moved(b, target), 1, target))
    if isinstance(cb, tuple):
        target = _k_layout(a.shape, a.ndim - 1, *cb)
        options.append((_moved(a, target), 0, target))
    return min(options, key=lambda o: o[:2]) if options else None


def _k_layout(shape, k_axis: int, g: int, dims, sizes) -> Layout:
    split = tuple(k_axis if i == g else None for i in range(len(dims)))
    per_axis = tuple(tuple(sizes) if ax == k_axis else (n,) for ax, n in enumerate(shape))
    return Layout(tuple(shape), dims, split, per_axis)


def _contract(a: DArray, b: DArray, out_shape) -> DArray:
    """Partial products over this rank's contraction block, summed over the grid dim that cuts k."""
    ca, cb = _k_cut(a, a.ndim - 1), _k_cut(b, b.ndim - 2)
    src, k_axis, (_, dims, _) = (a, a.ndim - 1, ca) if isinstance(ca, tuple) else (b, b.ndim - 2, cb)
    block = src._layout.block_slices(a._comm.rank)[k_axis]
    al, bl = a.local, b.local
    if ca == "replicated":  # the replicated operand is sliced to this rank's contraction block
        al = al[..., block]
    if cb == "replicated":
        bl = bl[..., block, :]
    xp, wide = a._xp, _accumulator(al.dtype)
    if wide is not None:  # (float16: the partials in float32, rounded once at the end, as NumPy's kernel does)
        al, bl = xp.astype(al, wide), xp.astype(bl, wide)
    partial = xp.matmul(al, bl)
    partial = combine(partial, "sum", a._comm, src._layout)  # only the grid dim g cuts src
    if wide is not None:
        partial = xp.astype(partial, a.dtype)
    layout = _replicated_layout(out_shape, a._comm.size, dims)
    return _settle(DArray._wrap(partial, layout, a._comm, a._xp))


def _accumulator(dtype):
    """The dtype a product's partial sums are kept in where it is wider than ``dtype``: NumPy's matmul
    accumulates float16 in float32 and rounds once, so a contraction cut over ranks sums float32 partials."""
    return np.float32 if dtype == np.float16 else None


def _block2d(layout: Layout) -> bool:
    return len(layout.dims) == 2 and all(d > 1 for d in layout.dims) and layout.split == (0, 1)


def _to_block2d(x: DArray, dims) -> DArray:
    lay = x._layout
    if lay.dims == tuple(dims) and lay.split == (0, 1):
        return x
    target = Layout(x.shape, tuple(dims), (0, 1), (balanced_sizes(x.shape[0], dims[0]),
                                                   balanced_sizes(x.shape[1], dims[1])))
    return redistribute_to(x, target)


def _owner_block(offs, k: int) -> int:
    """Index of the (non-empty) block of ``offs`` that holds cell ``k``."""
    return bisect_right(offs, k) - 1


def _summa(a: DArray, b: DArray) -> DArray:
    """SUMMA: broadcast panels of a along grid rows and of b along grid columns, accumulate locally."""
    la, lb = a._layout, b._layout
    dims = la.dims
    comm = a._comm
    xp = a._xp
    i, j = la.coords(comm.rank)
    row_comm = comm.sub(dims, (False, True))  # same grid row, ordered by column
    col_comm = comm.sub(dims, (True, False))  # same grid column, ordered by row
    a_off, b_off = la.offsets[1], lb.offsets[0]
    rows, cols = la.sizes[0][i], lb.sizes[1][j]
    al, bl = a.local, b.local
    wide = _accumulator(al.dtype)
    if wide is not None:  # (float16: panels multiplied and summed in float32, rounded once)
        al, bl = xp.astype(al, wide), xp.astype(bl, wide)
    out = None
    breaks = sorted(set(a_off) | set(b_off))
    for k0, k1 in zip(breaks[:-1], breaks[1:]):
        if k1 <= k0:
            continue
        ja, ib = _owner_block(a_off, k0), _owner_block(b_off, k0)
        if j == ja:
            pa = al[:, k0 - a_off[ja]:k1 - a_off[ja]]
        else:
            pa = xp.empty((rows, k1 - k0), dtype=al.dtype, device=a.device)
        if i == ib:
            pb = bl[k0 - b_off[ib]:k1 - b_off[ib], :]
        else:
            pb = xp.empty((k1 - k0, cols), dtype=bl.dtype, device=b.device)
        pa = row_comm.bcast(pa, ja)
        pb = col_comm.bcast(pb, ib)
        part = xp.matmul(pa, pb)
        if out is None:
            out = part
        else:
            out += part
    if out is None:  # k == 0
        out = xp.zeros((rows, cols), dtype=al.dtype, device=a.device)
    if wide is not None:
        out = xp.astype(out, a.dtype)
    layout = Layout((a.shape[0], b.shape[1]), dims, (0, 1), (la.sizes[0], lb.sizes[1]))
    return DArray._wrap(out, layout, comm, xp)


# ------------------------------------------------------------------ the others
def matrix_transpose(x, /) -> DArray:
    """Transpose of the last two axes; each rank transposes its block (no communication)."""
    if not isinstance(x, DArray):
        raise TypeError(message("matrix_transpose", "expected a DArray", type(x).__name__))
    if x.ndim < 2:
        raise ValueError(message("matrix_transpose", "needs at least 2 dimensions", x.shape, "ndim >= 2"))
    return permute_dims(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))


def _axes_list(func, axes, ndim):
    items = (axes,) if isinstance(axes, numbers.Integral) else tuple(axes)
    return tuple(normalize_axis(func, int(a), ndim) for a in items)


def tensordot(x1, x2, /, *, axes=2) -> DArray:
    """Sum of products over ``axes``: both operands are permuted (free) and reshaped to matrices, then
    :func:`matmul` (whose algorithm follows the layouts); reshapes move data only when a block is not a
    run of whole rows of the matrix view.
    """
    a, b = _pair("tensordot", x1, x2)
    if isinstance(axes, numbers.Integral) and not isinstance(axes, bool):
        n = int(axes)
        if n < 0 or n > min(a.ndim, b.ndim):
            raise ValueError(message("tensordot", "axes must be between 0 and the smaller ndim", n,
                                     f"0 <= axes <= {min(a.ndim, b.ndim)}"))
        ax1, ax2 = tuple(range(a.ndim - n, a.ndim)), tuple(range(n))
    else:
        try:
            first, second = axes
        except (TypeError, ValueError):
            raise TypeError(message("tensordot", "axes must be an int or a pair of axis sequences", axes)) from None
        ax1, ax2 = _axes_list("tensordot", first, a.ndim), _axes_list("tensordot", second, b.ndim)
    if len(ax1) != len(ax2) or len(set(ax1)) != len(ax1) or len(set(ax2)) != len(ax2):
        raise ValueError(message("tensordot", "axes must be two sequences of distinct axes of equal length",
                                 (ax1, ax2)))
    for i, j in zip(ax1, ax2):
        if a.shape[i] != b.shape[j]:
            raise ValueError(message("tensordot", f"contracted axes {i} and {j} differ in size",
                                     (a.shape[i], b.shape[j]), "equal sizes"))
    check_category("tensordot", a.dtype, "numeric")
    check_category("tensordot", b.dtype, "numeric")
    free1 = tuple(ax for ax in range(a.ndim) if ax not in ax1)
    free2 = tuple(ax for ax in range(b.ndim) if ax not in ax2)
    shape1 = tuple(a.shape[ax] for ax in free1)
    shape2 = tuple(b.shape[ax] for ax in free2)
    k = prod(a.shape[ax] for ax in ax1)
    a2 = reshape(permute_dims(a, free1 + ax1), (prod(shape1), k))
    b2 = reshape(permute_dims(b, ax2 + free2), (k, prod(shape2)))
    return reshape(matmul(a2, b2), shape1 + shape2)


def vecdot(x1, x2, /, *, axis: int = -1) -> DArray:
    """``sum(conj(x1) * x2, axis)`` over the broadcast shape (an allreduce when ``axis`` is cut).

    The result has the promoted dtype of ``x1`` and ``x2`` (int8 stays int8, as NumPy's).

    Examples
    --------
    >>> import darray as da
    >>> x = da.asarray([1 + 2j, 3 - 1j])
    >>> complex(da.vecdot(x, da.asarray([1j, 2])))  # conj(x1) . x2
    (8+3j)
    """
    a, b = _pair("vecdot", x1, x2)
    check_category("vecdot", a.dtype, "numeric")
    check_category("vecdot", b.dtype, "numeric")
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(message("vecdot", "shapes cannot be broadcast together", (a.shape, b.shape))) from None
    if not shape:
        raise ValueError(message("vecdot", "operands must be at least 1-d", (a.shape, b.shape)))
    ax = normalize_axis("vecdot", axis, len(shape))
    end = ax - len(shape)  # the same axis counted from the end, valid for both operands
    if a.ndim < -end or b.ndim < -end or a.shape[end] != b.shape[end]:
        raise ValueError(message("vecdot", f"operands differ in size along axis {axis}", (a.shape, b.shape),
                                 "equal sizes along the reduced axis"))
    if a.dtype.kind == "c":
        a = conj(a)
    product = multiply(a, b)
    return _sum(product, axis=ax, dtype=product.dtype)  # the promoted dtype, not sum's wider default


def _register_operators():
    from .._core.protocols import OPERATORS

    OPERATORS["matmul"] = matmul
    OPERATORS["vecdot"] = vecdot


_register_operators()
