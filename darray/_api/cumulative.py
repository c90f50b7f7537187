"""Cumulative sums and products (local scan + exclusive scan of block totals) and ``diff``."""

from __future__ import annotations

import numpy as np

from .._core import DArray, to_backend_dtype
from .._core.dtypes import check_category
from .._core.elementwise import wrap_like
from .._errors import message, names_errors
from .._layout import Layout, normalize_axis

__all__ = ["cumulative_sum", "cumulative_prod", "diff"]


def _scan(func: str, x, axis, dtype, include_initial: bool) -> DArray:
    if not isinstance(x, DArray):
        raise TypeError(message(func, "expected a DArray", type(x).__name__))
    check_category(func, x.dtype, "numeric")
    if axis is None:
        if x.ndim != 1:
            raise ValueError(message(func, "axis is required for arrays with more than one dimension", x.shape))
        axis = 0
    axis = normalize_axis(func, axis, x.ndim)
    xp = x._xp
    kind = "sum" if func == "cumulative_sum" else "prod"
    local_scan = getattr(xp, func)
    kwargs = {} if dtype is None else {"dtype": to_backend_dtype(xp, dtype, func)}
    local = local_scan(x.local, axis=axis, **kwargs)
    layout = x._layout
    g = layout.axis_dim[axis]
    if g is not None:
        # exclusive scan of block totals along the grid dim that cuts ``axis``
        n = local.shape[axis]
        if n:
            total = xp.take(local, xp.asarray([n - 1], device=x.device), axis=axis)
        else:
            shape = tuple(1 if a == axis else s for a, s in enumerate(local.shape))
            total = xp.full(shape, 0 if kind == "sum" else 1, dtype=local.dtype, device=x.device)
        keep = [d == g for d in range(len(layout.dims))]
        sub = x._comm.sub(layout.dims, keep)
        totals = sub.allgather(total, sign=(func, layout.shape, axis))  # (P_g, ...) block totals in grid order
        before = totals[: layout.coords(x._comm.rank)[g], ...]  # strict namespaces need the ellipsis
        if kind == "sum":
            offset = xp.sum(before, axis=0) if before.shape[0] else None
            local = local + offset if offset is not None else local
        else:
            offset = xp.prod(before, axis=0) if before.shape[0] else None
            local = local * offset if offset is not None else local
    new = layout.without_halo()
    if include_initial:
        initial = xp.full(tuple(1 if a == axis else s for a, s in enumerate(local.shape)),
                          0 if kind == "sum" else 1, dtype=local.dtype, device=x.device)
        sizes = list(new.sizes)
        sizes[axis] = (sizes[axis][0] + 1,) + tuple(sizes[axis][1:])
        shape = list(new.shape)
        shape[axis] += 1
        new = Layout(tuple(shape), new.dims, new.split, tuple(sizes), new.halo, new.boundary)
        if layout.block_index(x._comm.rank)[axis] == 0:
            local = xp.concat([initial, local], axis=axis)
    return wrap_like(local, new, x)


def cumulative_sum(x, /, *, axis: int | None = None, dtype=None, include_initial: bool = False) -> DArray:
    """Running sum along ``axis``; a cut axis costs one allgather of the block totals.

    >>> import darray as da
    >>> da.cumulative_sum(da.arange(5)).gather().tolist()
    [0, 1, 3, 6, 10]
    """
    return _scan("cumulative_sum", x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis: int | None = None, dtype=None, include_initial: bool = False) -> DArray:
    """Running product along ``axis``; a cut axis costs one allgather of the block totals.

    >>> import darray as da
    >>> da.cumulative_prod(da.arange(1, 6)).gather().tolist()
    [1, 2, 6, 24, 120]
    """
    return _scan("cumulative_prod", x, axis, dtype, include_initial)


@names_errors("diff")
def diff(x, /, *, axis: int = -1, n: int = 1, prepend=None, append=None) -> DArray:
    """``n``-th discrete difference along ``axis``; on a cut axis only the block edges move.

    >>> import darray as da
    >>> da.diff(da.asarray([1, 4, 9, 16])).gather().tolist()
    [3, 5, 7]
    """
    from .manipulation import concat

    if not isinstance(x, DArray):
        raise TypeError(message("diff", "expected a DArray", type(x).__name__))
    if x.ndim == 0:
        raise ValueError(message("diff", "needs at least one dimension", x.shape))
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(message("diff", "n must be a non-negative integer", n))
    axis = normalize_axis("diff", axis, x.ndim)
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        from .creation import asarray

        parts = [p if isinstance(p, DArray) else _edge(asarray(p, split=None, comm=x._comm), x, axis)
                 for p in parts]
        x = concat(parts, axis=axis)
    lead = (slice(None),) * axis
    for _ in range(n):
        if x.dtype.kind == "b":
            x = x[lead + (slice(1, None),)] != x[lead + (slice(None, -1),)]
        else:
            x = x[lead + (slice(1, None),)] - x[lead + (slice(None, -1),)]
    return x


def _edge(p: DArray, x: DArray, axis: int) -> DArray:
    """A scalar or lower-dim prepend/append value broadcast to x's shape with length 1 along ``axis``."""
    from .manipulation import broadcast_to, expand_dims

    if p.ndim == x.ndim:
        return p
    shape = tuple(1 if a == axis else s for a, s in enumerate(x.shape))
    if p.ndim == x.ndim - 1:
        p = expand_dims(p, axis=axis)
    return broadcast_to(p, shape)
