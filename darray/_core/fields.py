"""Fields of record (structured) DArrays: ``x["name"]`` is a view, as in NumPy.

A record array's blocks are NumPy structured arrays; a field of each block is
a view of it, so ``x["x"]`` (or ``x[["x", "y"]]``) is a DArray of the same
layout holding those views: nothing moves, and writes through it
(``x["x"][3] = 1``, ``x["x"] += 1``) land in ``x``'s blocks. A subarray
field (``("v", "f8", (3,))``) adds its axes, whole on every rank, after the
array's own. A field of a computed view (``x[::-1]["x"]`` on a cut axis) is
linked to it like every view of a computed view (:mod:`darray._core.views`).
"""

from __future__ import annotations

from .._errors import message
from .._layout import Layout
from .array import DArray
from .views import link, plain, write_through

__all__ = ["is_field_key", "field", "set_field"]


def is_field_key(key) -> bool:
    """Whether ``key`` names fields: a string, or a non-empty list of strings (NumPy's multi-field index)."""
    return type(key) is str or (type(key) is list and bool(key) and all(type(k) is str for k in key))


def _check(func: str, x: DArray, key) -> None:
    names = x.dtype.names
    if names is None:
        raise IndexError(message(func, "a field name indexes record arrays only", key,
                                 f"integers, slices, ellipsis, None or arrays for dtype {x.dtype}"))
    for name in [key] if type(key) is str else key:
        if name not in names:
            raise ValueError(message(func, f"no field of name {name}", name, f"one of {list(names)}"))


def _field_layout(layout: Layout, extra: tuple[int, ...]) -> Layout:
    """``layout`` with a subarray field's axes appended, whole on every rank."""
    k = len(extra)
    return Layout(layout.shape + extra, layout.dims, layout.split + (None,) * k,
                  layout.sizes + tuple((n,) for n in extra), layout.halo + (0,) * k, layout.boundary + ("none",) * k)


def field(x: DArray, key) -> DArray:
    """``x[key]`` for a field name or a list of them: a view of ``x``'s blocks (see the module docstring).

    >>> import numpy, darray as da
    >>> r = da.zeros(4, dtype=[("x", "f8"), ("n", "i4")])
    >>> r["x"][1] = 2.5
    >>> numpy.asarray(r["x"]).tolist(), r["n"].dtype
    ([0.0, 2.5, 0.0, 0.0], dtype('int32'))
    """
    _check("__getitem__", x, key)
    if x._link is not None:  # a field of a computed view: linked to it, writes reach its base
        out = field(plain(x), key)
        return link(out, x, lambda base: field(plain(base), key), lambda base, view: set_field(base, key, view),
                    collective=x._link.collective)
    part = x._block[key]
    extra = tuple(part.shape[x._block.ndim:])
    layout = _field_layout(x._layout, extra) if extra else x._layout
    return DArray._wrap(part, layout, x._comm, x._xp)


def set_field(x: DArray, key, value) -> None:
    """``x[key] = value`` for a field name or a list of them (``value`` broadcast as for any assignment)."""
    _check("__setitem__", x, key)
    if x._link is not None:
        return write_through(x, lambda target: set_field(target, key, value))
    field(x, key)[...] = value  # (a view: the write lands in x's blocks)
    x._halo_fresh = False
    return None
