"""The methods of darray's ufuncs -- ``reduce``, ``accumulate``, ``outer``, ``at``, ``reduceat`` -- distributed.

Shared by ``darray.add.reduce(x)`` and ``numpy.add.reduce(x)`` (which
``DArray.__array_ufunc__`` hands to the darray ufunc). Global semantics
always; what moves:

- ``reduce`` along axes no grid dim cuts is local (one backend call). Along a
  cut axis: ``add``/``multiply``/``maximum``/``minimum``/``logical_and``/
  ``logical_or`` are darray's reductions (one allreduce); other associative
  ufuncs reduce each block, then an allgather of one partial per rank is
  folded in rank order (empty blocks are left out, known from the layout).
  ``subtract`` and ``divide`` are NumPy's left fold ``a0 - a1 - a2 ...``
  computed as ``a0 - (a1 + a2 + ...)``: the first block folds with the ufunc,
  the others with ``add`` (``multiply``). Other non-associative ufuncs
  (``power``, ``arctan2``, ...) along a cut axis raise ValueError: redistribute
  so that the axis is whole.
- ``accumulate``: local accumulate, then an allgather of the block totals and
  the fold of those before this block applied to it (as ``cumulative_sum``).
- ``outer``: ``A[..., None, ...] op B`` through the elementwise engine; the
  result is cut like the larger operand, the other is replicated (an
  allgather of it: every block of the result needs all of it).
- ``at``: every rank holds the (replicated) index list; each applies the
  pairs it owns with NumPy's unbuffered ``ufunc.at`` (repeated indices
  accumulate). A DArray of values is routed to the owners, in order.
- ``reduceat``: along an uncut axis NumPy's reduceat per block; along a cut
  axis each block reduces its part of every segment, one allgather of those
  partials, folded in rank order; the result is replicated along that axis.

``at`` and ``reduceat`` need NumPy blocks; so do the methods of ufuncs that
the other libraries have no reduction for (TypeError names the method).
"""

from __future__ import annotations

import builtins
import math
from functools import lru_cache

import numpy

from .._backend import is_numpy_namespace
from .._core import DArray, redistribute_to, to_backend_dtype, to_numpy_dtype
from .._core.advanced import _index_array, _values_in
from .._core.fetch import _route, as_rows, rows_layout
from .._core.reductions import finish_reduction, normalize_axes
from .._errors import message
from .._layout import normalize_axis

__all__ = ["NO_VALUE", "as_darray", "call_with_keywords", "reduce", "accumulate", "outer", "at", "reduceat",
           "where_mask"]

NO_VALUE = numpy._NoValue  # NumPy's "initial not given"

#: Associative ufuncs (NumPy names): per-block partials combine in rank order.
ASSOCIATIVE = frozenset({"add", "multiply", "maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or",
                         "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm", "logaddexp",
                         "logaddexp2", "hypot"})
#: Left folds computed through another ufunc: a0 - a1 - a2 = a0 - (a1 + a2).
INVERSE = {"subtract": "add", "divide": "multiply"}
#: ufunc -> darray's reduction (one allreduce along cut axes).
_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min", "logical_and": "all",
               "logical_or": "any"}
#: ufunc -> the standard's reduction / scan, for local blocks of other libraries.
_XP_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min", "logical_and": "all",
              "logical_or": "any"}
_XP_ACCUMULATE = {"add": "cumulative_sum", "multiply": "cumulative_prod"}


def _ufuncs():
    from .ufuncs import UFUNCS

    return UFUNCS


# ------------------------------------------------------------ operands
def as_darray(name: str, a, sequence: bool = False) -> DArray:
    """``a`` as a DArray: sequences of DArrays stacked, the rest by :func:`darray._api.creation.as_darray`."""
    from .creation import as_darray as convert

    if sequence and isinstance(a, (list, tuple)) and any(isinstance(v, DArray) for v in a):
        from .manipulation import stack

        return stack([convert(name, v) for v in a])
    return convert(name, a)


def where_mask(func: str, x: DArray, where) -> DArray:
    """NumPy's ``where=`` of a reduction over ``x`` as a boolean DArray that broadcasts to ``x`` (checked from
    replicated metadata, before anything moves: TypeError for another dtype, ValueError for another shape)."""
    from .creation import as_darray as convert

    mask = where if isinstance(where, DArray) else convert(func, where, x)
    if mask.dtype != numpy.bool_:
        raise TypeError(message(func, "where= must be a boolean mask", str(mask.dtype), "bool"))
    try:
        fits = numpy.broadcast_shapes(mask.shape, x.shape) == x.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(message(func, "where= must broadcast to the array", mask.shape,
                                 f"a shape broadcastable to {x.shape}"))
    return mask


def _binary(f, method: str) -> str:
    name = f"{f.__name__}.{method}"
    if f.nin != 2 or f.nout != 1:
        raise ValueError(message(name, f"{method} only supported for binary functions",
                                 f"{f.nin} inputs, {f.nout} outputs", "2 inputs, 1 output"))
    return name


def _numpy_blocks(name: str, x: DArray) -> None:
    if not is_numpy_namespace(x._xp):
        raise TypeError(message(name, "needs NumPy local blocks", x._xp.__name__, "DArrays of NumPy blocks"))


def _dtype(dtype):
    return None if dtype is None else numpy.dtype(dtype)


def _sub(x: DArray, g: int):
    dims = x._layout.dims
    return x._comm.sub(dims, [d == g for d in range(len(dims))])


def _allgather(comm, xp, part):
    """(P_g, *part.shape) in grid order; booleans travel as bytes."""
    if isinstance(part, numpy.ndarray) and part.dtype == numpy.bool_:
        return comm.allgather(part.view(numpy.uint8)).view(numpy.bool_)
    return comm.allgather(part)


def _at_axis(ndim: int, axis: int, index):
    return (slice(None),) * axis + (index,) + (slice(None),) * (ndim - axis - 1)


# ------------------------------------------------------------ local kernels
def _local_reduce(f, xp, block, axis: int, dtype):
    """``f.reduce(block, axis, keepdims=True)`` on this rank's block (NumPy's, or the library's)."""
    name = f.__name__
    if is_numpy_namespace(xp):
        return numpy.asarray(f._np.reduce(block, axis=axis, keepdims=True, dtype=dtype))
    if dtype is not None:
        block = xp.astype(block, to_backend_dtype(xp, dtype))
    elif name in ("add", "multiply") and block.dtype == xp.bool:  # NumPy counts booleans in int64
        block = xp.astype(block, xp.int64)
    if block.shape[axis] == 1:
        return block
    if name in _XP_REDUCE:
        kwargs = {"dtype": block.dtype} if dtype is not None and name in ("add", "multiply") else {}
        return getattr(xp, _XP_REDUCE[name])(block, axis=axis, keepdims=True, **kwargs)
    if name in INVERSE:
        first = block[_at_axis(block.ndim, axis, slice(0, 1))]
        rest = _local_reduce(_ufuncs()[INVERSE[name]], xp, block[_at_axis(block.ndim, axis, slice(1, None))], axis,
                             to_numpy_dtype(block.dtype))  # in the block's dtype: the standard's sum promotes
        return getattr(xp, f._row.name)(first, rest)
    if name not in ASSOCIATIVE or f._row is None:
        raise TypeError(message(f"{name}.reduce", "needs NumPy local blocks for this ufunc", xp.__name__,
                                "DArrays of NumPy blocks"))
    func = getattr(xp, f._row.name)
    while block.shape[axis] > 1:  # pairwise, in order: correct for associative ufuncs
        n = block.shape[axis]
        half = n // 2
        paired = func(block[_at_axis(block.ndim, axis, slice(0, 2 * half, 2))],
                      block[_at_axis(block.ndim, axis, slice(1, 2 * half, 2))])
        if n % 2:
            paired = xp.concat([paired, block[_at_axis(block.ndim, axis, slice(n - 1, n))]], axis=axis)
        block = paired
    return block


def _local_accumulate(f, xp, block, axis: int, dtype):
    if is_numpy_namespace(xp):
        return f._np.accumulate(block, axis=axis, dtype=dtype)
    if f.__name__ not in _XP_ACCUMULATE:
        raise TypeError(message(f"{f.__name__}.accumulate", "needs NumPy local blocks for this ufunc", xp.__name__,
                                "DArrays of NumPy blocks"))
    kwargs = {} if dtype is None else {"dtype": to_backend_dtype(xp, dtype)}
    return getattr(xp, _XP_ACCUMULATE[f.__name__])(block, axis=axis, **kwargs)


@lru_cache(maxsize=256)
def _result_dtype(f, xp, dtype_in, dtype):
    """The dtype ``f.reduce`` gives for ``dtype_in`` (and ``dtype=``), from a one-element probe."""
    probe = xp.zeros((1,), dtype=to_backend_dtype(xp, dtype_in))
    return _local_reduce(f, xp, probe, 0, dtype).dtype


def _apply(f, xp, a, b):
    """``f(a, b)`` on local blocks."""
    if is_numpy_namespace(xp):
        return f._np(a, b)
    return getattr(xp, f._row.name)(a, b)


# ------------------------------------------------------------ reduce
def reduce(f, array, axis=0, dtype=None, out=None, keepdims=False, initial=NO_VALUE, where=True) -> DArray:
    """``f.reduce`` over ``axis`` of the global array (NumPy's signature and results; see the module doc).

    Examples
    --------
    >>> import darray as da
    >>> x = da.asarray([[1, 2, 3], [4, 5, 6]])
    >>> da.subtract.reduce(x, axis=1).gather().tolist(), int(da.maximum.reduce(x, axis=None))
    ([-4, -7], 6)
    """
    name = _binary(f, "reduce")
    if (isinstance(array, (list, tuple)) and axis == 0 and dtype is None and out is None and not keepdims
            and initial is NO_VALUE and where is True and len(array) > 1
            and all(isinstance(a, DArray) and a.shape == array[0].shape for a in array)):
        result = array[0]  # np.logical_and.reduce([m1, m2, m3]): a fold of the arrays, no stacking
        for a in array[1:]:
            result = f(result, a)
        return result
    x = as_darray(name, array, sequence=True)
    axes = normalize_axes(name, axis, x.ndim)
    if len(axes) > 1 and not _reorderable(f._np):
        raise ValueError(message(name, f"reduction operation {f.__name__!r} is not reorderable, so at most one "
                                       "axis may be specified", axis, "one axis"))
    dtype = _dtype(dtype)
    initial = NO_VALUE if initial is None else initial
    given = initial is not NO_VALUE
    reducer, fill = f, f.identity
    if given and f.__name__ in INVERSE:  # initial - a0 - a1 ... = initial - (a0 + a1 + ...)
        reducer = _ufuncs()[INVERSE[f.__name__]]
        fill = reducer.identity
    elif fill is None and given:
        fill = initial
    empty = builtins.any(x.shape[a] == 0 for a in axes)
    if empty and not given and f.identity is None:
        raise ValueError(message(name, f"zero-size array to reduction operation {f.__name__} which has no identity",
                                 x.shape, "a non-empty axis or initial="))
    if where is not True:
        if fill is None:
            raise ValueError(message(name, f"reduction operation {f.__name__!r} does not have an identity, so to "
                                           "use a where mask one has to specify 'initial'", None, "initial="))
        from .searching import where as select

        x = select(where_mask(name, x, where), x, numpy.asarray(fill).astype(to_numpy_dtype(x.dtype)).item())  # fill of x's kind
    _associative(f if reducer is f else reducer, x, axes, name)
    rdt = _result_dtype(reducer, x._xp, x.dtype, dtype)
    if empty:
        value = initial if given else f.identity
        layout = x._layout.reduced(axes, keepdims)
        local = x._xp.full(layout.block_shape(x._comm.rank), value, dtype=rdt)
        result = DArray._wrap(local, layout, x._comm, x._xp)
    elif reducer is f and not given and f.__name__ in _REDUCTIONS and (dtype is None or _REDUCTIONS[f.__name__]
                                                                     in ("sum", "prod")):
        from .. import _core

        reduction = getattr(_core.reductions, _REDUCTIONS[f.__name__])
        extra = {} if dtype is None else {"dtype": dtype}
        result = reduction(x, axis=axes, keepdims=keepdims, **extra)
    else:
        result = finish_reduction(x, _reduce_axes(reducer, x, axes, dtype, rdt), axes, keepdims)
        if given:
            result = _post(f, result, initial)
    return _into(name, out, result)


@lru_cache(maxsize=None)
def _reorderable(np_ufunc) -> bool:
    """NumPy's verdict: may the ufunc reduce several axes at once (``subtract`` may not)?"""
    try:
        np_ufunc.reduce(numpy.ones((1, 1), dtype=np_ufunc.types[0][0]), axis=(0, 1))
    except ValueError:
        return False
    return True


def _associative(f, x: DArray, axes, name: str) -> None:
    """Refuse (before any communication) a non-associative fold along a cut axis."""
    if f.__name__ in ASSOCIATIVE or f.__name__ in INVERSE:
        return
    cut = [a for a in axes if x._layout.axis_dim[a] is not None]
    if cut:
        raise ValueError(message(name, f"{f.__name__!r} is not associative: it cannot be folded block by block "
                                       "along a cut axis", f"axis {cut[0]} cut over ranks",
                                 "an axis no grid dim cuts (redistribute first)"))


def _reduce_axes(f, x: DArray, axes, dtype, rdt):
    """The keepdims-shaped block of ``f.reduce`` over ``axes``, global values (one allgather per cut axis)."""
    xp, layout, rank = x._xp, x._layout, x._comm.rank
    block = x.local
    for a in axes:
        g = layout.axis_dim[a]
        if g is None:
            block = _local_reduce(f, xp, block, a, dtype)
            continue
        sizes = layout.sizes[a]
        mine = layout.block_index(rank)[a]
        valid = [i for i, s in enumerate(sizes) if s]
        op = f if mine == valid[0] or f.__name__ not in INVERSE else _ufuncs()[INVERSE[f.__name__]]
        if block.shape[a]:
            partial = _local_reduce(op, xp, block, a, dtype)
            if partial.dtype != rdt:
                partial = xp.astype(partial, rdt)
        else:
            partial = xp.zeros(tuple(1 if i == a else n for i, n in enumerate(block.shape)), dtype=rdt)
        gathered = _allgather(_sub(x, g), xp, partial)
        if len(valid) != len(sizes):
            gathered = xp.take(gathered, xp.asarray(valid), axis=0) if not is_numpy_namespace(xp) \
                else gathered[valid]
        block = _local_reduce(f, xp, gathered, 0, None)[0, ...]
        dtype = None
    return block


def _post(f, result: DArray, initial) -> DArray:
    """``initial`` folded in front: ``f(initial, result)`` in the result's dtype."""
    xp = result._xp
    local = result.local
    start = xp.asarray(initial, dtype=local.dtype) if not is_numpy_namespace(xp) else numpy.asarray(initial).astype(
        local.dtype)
    combined = _apply(f, xp, start, local)
    if combined.dtype != local.dtype:
        combined = xp.astype(combined, local.dtype)
    return DArray._wrap(combined, result._layout, result._comm, xp)


def _into(name: str, out, result: DArray, casting: str = "same_kind"):
    """``result`` written into ``out`` (a DArray of its shape; any layout), or ``result`` itself."""
    if out is None:
        return result
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError(message(name, "out= needs one array", len(out), "1"))
        out = out[0]
        if out is None:
            return result
    if not isinstance(out, DArray):
        raise TypeError(message(name, "out= must be a DArray", type(out).__name__, "a DArray"))
    if out.shape != result.shape:
        raise ValueError(message(name, "out= has the wrong shape", out.shape, result.shape))
    if not numpy.can_cast(result.dtype, out.dtype, casting):
        raise TypeError(message(name, f"cannot cast the result to out's dtype with casting={casting!r}",
                                str(result.dtype), f"a dtype {result.dtype} casts to"))
    plain = out._layout.without_halo()
    src = result if result._layout.blocks_key == plain.blocks_key else redistribute_to(result, plain)
    xp = out._xp
    local = src.local
    if local.dtype != out.local.dtype:
        local = xp.astype(local, out.local.dtype)
    out.local[...] = local
    out._halo_fresh = False
    return out


# ------------------------------------------------------------ accumulate
def accumulate(f, array, axis=0, dtype=None, out=None) -> DArray:
    """``f.accumulate`` along ``axis``: local scans plus one allgather of block totals along a cut axis.

    Examples
    --------
    >>> import darray as da
    >>> da.subtract.accumulate(da.asarray([10, 1, 2, 3])).gather().tolist()
    [10, 9, 7, 4]
    """
    name = _binary(f, "accumulate")
    x = as_darray(name, array, sequence=True)
    if x.ndim == 0:
        raise TypeError(message(name, "cannot accumulate a 0-d array", x.shape, "at least one dimension"))
    if axis is None or isinstance(axis, tuple):
        raise TypeError(message(name, "axis must be an integer", axis, "an int"))
    axis = normalize_axis(name, axis, x.ndim)
    dtype = _dtype(dtype)
    _associative(f, x, (axis,), name)
    xp, layout, rank = x._xp, x._layout, x._comm.rank
    g = layout.axis_dim[axis]
    block = x.local
    if g is None:
        local = _local_accumulate(f, xp, block, axis, dtype)
    else:
        sizes = layout.sizes[axis]
        mine = layout.block_index(rank)[axis]
        valid = [i for i, s in enumerate(sizes) if s]
        op = f if not valid or mine == valid[0] or f.__name__ not in INVERSE else _ufuncs()[INVERSE[f.__name__]]
        rdt = _local_accumulate(f, xp, xp.zeros((1,), dtype=block.dtype), 0, dtype).dtype
        local = _local_accumulate(op, xp, block, axis, dtype)
        if local.dtype != rdt:
            local = xp.astype(local, rdt)
        n = block.shape[axis]
        if n:
            total = local[_at_axis(local.ndim, axis, slice(n - 1, n))]
        else:
            total = xp.zeros(tuple(1 if i == axis else s for i, s in enumerate(local.shape)), dtype=rdt)
        gathered = _allgather(_sub(x, g), xp, total)
        before = [i for i in valid if i < mine]
        if before and n:
            parts = gathered[before] if is_numpy_namespace(xp) else xp.take(gathered, xp.asarray(before), axis=0)
            carry = _local_reduce(f, xp, parts, 0, None)[0, ...]
            local = _apply(f, xp, carry, local)
            if local.dtype != rdt:
                local = xp.astype(local, rdt)
    plain = layout.without_halo()
    return _into(name, out, DArray._wrap(local, plain, x._comm, xp))


# ------------------------------------------------------------ outer
def outer(f, A, B, kwargs: dict) -> DArray:
    """``f(A[..., None, ...], B)``: the result is cut like the larger operand; the other is replicated.

    Examples
    --------
    >>> import darray as da
    >>> da.multiply.outer(da.asarray([1, 2]), da.asarray([1, 10, 100])).gather().tolist()
    [[1, 10, 100], [2, 20, 200]]
    """
    name = _binary(f, "outer")
    if not isinstance(A, DArray) and not isinstance(B, DArray):
        A, B = as_darray(name, A), as_darray(name, B)
    if not isinstance(A, DArray) and not hasattr(A, "shape"):
        A = numpy.asarray(A)
    ndim_b = B.ndim if hasattr(B, "ndim") else numpy.ndim(B)
    return f(A[(Ellipsis,) + (None,) * ndim_b], B, **kwargs)


# ------------------------------------------------------------ at
def at(f, a, indices, b=None) -> None:
    """``f.at(a, indices, b)``: ``a[indices] = f(a[indices], b)`` unbuffered (repeated indices accumulate).

    ``indices`` are integers or integer arrays (one per leading axis), or
    basic indices (ints, slices); they are replicated (a DArray of indices is
    gathered: it is an index list). Each rank applies the pairs it owns.

    Examples
    --------
    >>> import darray as da
    >>> z = da.zeros(5, dtype=da.int64)
    >>> da.add.at(z, [0, 1, 1, 4, 1], 1)
    >>> z.gather().tolist()
    [1, 3, 0, 0, 1]
    """
    name = f"{f.__name__}.at"
    if not isinstance(a, DArray):
        if isinstance(a, numpy.ndarray) and not isinstance(b, DArray) and f._np is not None:
            return f._np.at(a, indices, *(() if b is None else (b,)))
        raise TypeError(message(name, "the first argument must be a DArray", type(a).__name__, "a DArray"))
    if f.nout != 1 or f.nin not in (1, 2):
        raise ValueError(message(name, "only supported for unary and binary ufuncs", f.nin, "1 or 2 inputs"))
    if (f.nin == 2) != (b is not None):
        raise ValueError(message(name, "second operand needed for a binary ufunc" if f.nin == 2 else
                                 "a unary ufunc takes no second operand", b, "b" if f.nin == 2 else "no b"))
    _numpy_blocks(name, a)
    items = indices if isinstance(indices, tuple) else (indices,)
    if all(isinstance(k, (slice, type(Ellipsis))) or (isinstance(k, (int, numpy.integer)) and not isinstance(k, bool))
           for k in items) and any(isinstance(k, (slice, type(Ellipsis))) for k in items):
        selected = a[indices]  # basic indices select every cell once: no repeats
        a[indices] = f(selected) if b is None else f(selected, b)
        return None
    if len(items) > a.ndim:
        raise IndexError(message(name, "too many indices", len(items), f"at most {a.ndim}"))
    arrays = [_index_array(name, k, a.shape[j]) for j, k in enumerate(items)]
    try:
        arrays = numpy.broadcast_arrays(*arrays)
    except ValueError:
        raise IndexError(message(name, "index arrays could not be broadcast together",
                                 tuple(i.shape for i in arrays))) from None
    k = len(arrays)
    selection = arrays[0].shape + a.shape[k:]
    if b is not None and not isinstance(b, DArray):
        b = numpy.asarray(b)
    if b is not None:
        try:
            ok = numpy.broadcast_shapes(numpy.shape(b), selection) == selection
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(message(name, "shape mismatch: value array cannot be broadcast to the selection",
                                     numpy.shape(b), selection))
    flat = numpy.stack([i.reshape(-1) for i in arrays], axis=1)  # (N, k) replicated index tuples
    if isinstance(b, DArray):
        _at_routed(f, a, flat, b, selection, name)
    else:
        _at_local(f, a, flat, b, selection)
    a._halo_fresh = False
    return None


def _at_local(f, a: DArray, flat, b, selection) -> None:
    """Replicated values: every rank applies the pairs it owns; no communication."""
    rank = a._comm.rank
    start, shape = a._layout.block_start(rank), a._layout.block_shape(rank)
    k = flat.shape[1]
    lo = numpy.asarray(start[:k])
    mine = numpy.all((flat >= lo) & (flat < lo + numpy.asarray(shape[:k])), axis=1)
    local_idx = tuple((flat[mine] - lo).T)
    trailing = tuple(slice(s, s + n) for s, n in zip(start[k:], shape[k:]))
    if b is None:
        f._np.at(a.local, local_idx)
        return
    if b.ndim:
        lead = len(selection) - len(trailing)  # the leading size spelled out: -1 is ambiguous with an empty axis
        values = numpy.broadcast_to(b, selection).reshape((math.prod(selection[:lead]),) + selection[lead:])
        values = values[mine][(slice(None),) + trailing]
    else:
        values = b
    f._np.at(a.local, local_idx, values)


def _at_routed(f, a: DArray, flat, b: DArray, selection, name: str) -> None:
    """A DArray of values: each rank sends its share of (index, value) pairs to the owners, in order."""
    from .manipulation import broadcast_to, reshape

    comm, rank = a._comm, a._comm.rank
    k = flat.shape[1]
    trail = selection[len(selection) - (a.ndim - k):] if a.ndim > k else ()
    n = flat.shape[0]
    if b.shape != (n, *trail):
        b = reshape(broadcast_to(b, selection), (n, *trail))
    rows = as_rows(a)
    share = rows_layout((n, *trail), comm.size)
    mine = share.block_slices(rank)[0]
    values = _values_in(b, share, a, name)
    targets = numpy.ascontiguousarray(flat[mine])
    order, counts, matrix = _route(rows, targets[:, 0])
    incoming = matrix[:, rank]
    send_off = numpy.concatenate([[0], numpy.cumsum(counts)])
    recv_off = numpy.concatenate([[0], numpy.cumsum(incoming)])
    cols = (slice(0, k),)
    sends = [(q, (slice(int(send_off[q]), int(send_off[q + 1])),)) for q in range(comm.size) if counts[q]]
    recvs = [(p, (slice(int(recv_off[p]), int(recv_off[p + 1])),)) for p in range(comm.size) if incoming[p]]
    ids = numpy.empty((int(incoming.sum()), k), dtype=numpy.int64)
    comm.exchange(numpy.ascontiguousarray(targets[order]), [(q, r + cols) for q, r in sends], ids,
                  [(p, r + cols) for p, r in recvs]).wait()
    rest = tuple(slice(0, m) for m in trail)
    sent = numpy.ascontiguousarray(values[order])
    got = numpy.empty((ids.shape[0], *trail), dtype=sent.dtype)
    comm.exchange(sent, [(q, r + rest) for q, r in sends], got, [(p, r + rest) for p, r in recvs]).wait()
    if ids.shape[0]:
        ids[:, 0] -= rows._layout.block_start(rank)[0]
        f._np.at(rows.local, tuple(ids.T), got)
    if rows is not a:
        a.local[...] = redistribute_to(rows, a._layout.without_halo()).local


# ------------------------------------------------------------ reduceat
def reduceat(f, array, indices, axis=0, dtype=None, out=None) -> DArray:
    """``f.reduceat``: reductions over the slices ``indices[i]:indices[i+1]`` along ``axis``.

    Along a cut axis every block reduces its part of each segment (one copy of
    the block, padded by one cell), then one allgather of those partials
    (``len(indices)`` per rank) is folded in rank order; the result is
    replicated along ``axis``.

    Examples
    --------
    >>> import darray as da
    >>> da.add.reduceat(da.arange(8), [0, 4, 1, 5]).gather().tolist()
    [6, 4, 10, 18]
    """
    name = _binary(f, "reduceat")
    x = as_darray(name, array)
    if x.ndim == 0:
        raise TypeError(message(name, "cannot reduceat a 0-d array", x.shape, "at least one dimension"))
    axis = normalize_axis(name, axis, x.ndim)
    _numpy_blocks(name, x)
    n = x.shape[axis]
    idx = numpy.asarray(indices.gather() if isinstance(indices, DArray) else indices)
    if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
        raise TypeError(message(name, "indices must be a 1-d sequence of integers", idx.dtype if idx.ndim == 1
                                else idx.shape, "integers"))
    idx = idx.astype(numpy.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx[(idx < 0) | (idx >= n)][0])
        raise IndexError(message(name, f"index {bad} out-of-bounds in {name} [0, {n})", bad, f"0 <= index < {n}"))
    dtype = _dtype(dtype)
    _associative(f, x, (axis,), name)
    layout, rank = x._layout, x._comm.rank
    g = layout.axis_dim[axis]
    K = idx.shape[0]
    result_layout = layout.without_halo().replace(
        shape=tuple(K if i == axis else s for i, s in enumerate(x.shape)),
        split=tuple(None if s == axis else s for s in layout.split),
        sizes=tuple((K,) if i == axis else s for i, s in enumerate(layout.sizes)))
    if g is None:
        local = f._np.reduceat(x.local, idx, axis=axis, dtype=dtype)
        return _into(name, out, DArray._wrap(local, result_layout, x._comm, x._xp))
    ends = numpy.append(idx[1:], n)
    ends = numpy.where(ends > idx, ends, idx + 1)
    offsets = numpy.asarray(layout.offsets[axis])
    lo_all, hi_all = offsets[:-1, None], offsets[1:, None]
    valid_all = numpy.minimum(ends, hi_all) > numpy.maximum(idx, lo_all)  # (blocks, K): segment meets block
    mine = layout.block_index(rank)[axis]
    lo, hi = int(offsets[mine]), int(offsets[mine + 1])
    rdt = _result_dtype(f, x._xp, x.dtype, dtype)
    shape = tuple(K if i == axis else s for i, s in enumerate(x.local.shape))
    partial = numpy.zeros(shape, dtype=rdt)
    valid = valid_all[mine]
    if valid.any():
        block = x.local
        pad = numpy.concatenate([block, block[_at_axis(block.ndim, axis, slice(0, 1))]], axis=axis)
        cs, ce = numpy.maximum(idx[valid], lo) - lo, numpy.minimum(ends[valid], hi) - lo
        pairs = numpy.stack([cs, ce], axis=1).reshape(-1)
        step = _at_axis(block.ndim, axis, slice(None, None, 2))
        part = f._np.reduceat(pad, pairs, axis=axis, dtype=dtype)[step]
        if f.__name__ in INVERSE:  # segments begun on an earlier block continue with add (multiply)
            later = (idx[valid] < lo).reshape(tuple(-1 if i == axis else 1 for i in range(block.ndim)))
            inverse = _ufuncs()[INVERSE[f.__name__]]._np.reduceat(pad, pairs, axis=axis, dtype=dtype)[step]
            part = numpy.where(later, inverse, part)
        partial[_at_axis(block.ndim, axis, numpy.flatnonzero(valid))] = part
    gathered = _allgather(_sub(x, g), x._xp, partial)
    along = tuple(-1 if i == axis else 1 for i in range(x.ndim))
    acc, seen = None, None
    with numpy.errstate(all="ignore"):  # slots a block does not meet hold zeros; they are not selected
        for r in range(valid_all.shape[0]):
            v = valid_all[r]
            if not v.any():
                continue
            part = gathered[r]
            if acc is None:
                acc, seen = part, v.copy()
                continue
            combined = f._np(acc, part).astype(rdt, copy=False)
            acc = numpy.where((seen & v).reshape(along), combined, numpy.where((~seen & v).reshape(along), part, acc))
            seen |= v
    if acc is None:
        acc = partial
    return _into(name, out, DArray._wrap(numpy.ascontiguousarray(acc, dtype=rdt), result_layout, x._comm, x._xp))


# ------------------------------------------------------------ __call__ with keywords, other libraries
def call_with_keywords(f, args: tuple, out, where, dtype, casting: str):
    """``f(*args, out=, where=, dtype=)`` through the engine (blocks of libraries without NumPy's ufuncs)."""
    name = f._said
    if out is not None:  # checked before anything moves, as NumPy does
        try:
            shape = numpy.broadcast_shapes(*(numpy.shape(a) if not isinstance(a, DArray) else a.shape for a in args))
        except ValueError:
            shape = None  # the call below names the operands' shapes
        if not isinstance(out, DArray):
            raise TypeError(message(name, "out= must be a DArray", type(out).__name__, "a DArray"))
        if shape is not None and out.shape != shape:
            raise ValueError(message(name, "out= has the wrong shape", out.shape, shape))
    if dtype is not None:
        args = tuple(a.astype(dtype) if isinstance(a, DArray) else a for a in args)
    result = f(*args)
    if where is not True:
        from .searching import where as select

        base = out if out is not None else result
        result = select(where if isinstance(where, DArray) else as_darray(name, where), result, base)
    if out is None:
        return result
    return _into(name, out, result, casting)

