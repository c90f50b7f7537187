"""Helpers shared by the modules of :mod:`darray._api.numpy`: registering, argument checks, block-local work.

One registering decorator, :func:`numpy_function`, makes a function darray's
implementation of a NumPy function (``numpy.f(x)`` on DArrays dispatches to
it through ``__array_function__``) and makes every error it raises name
``numpy.<f>``. The checks raise NumPy's exception types with darray's
message format (``"numpy.<f>: <what>; got <value>, expected <...>"``), the
same on every rank: they look only at replicated metadata or at arguments
every rank passes alike.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable, Sequence

import numpy as np

from ..._backend import from_numpy, to_numpy
from ..._comm.base import agree
from ..._core import DArray
from ..._core.dtypes import is_extra
from ..._core.elementwise import local_operand, wrap_like
from ..._core.protocols import implements
from ..._errors import message, names_errors
from ..._layout import Layout, normalize_axis
from ..creation import asarray
from ..data_types import astype
from ..manipulation import concat

__all__ = ["CASTINGS", "agreed", "axis_of", "blocks", "concat_axis", "concatenate", "darray_of", "first_cells",
           "integer", "no_out", "numpy_function", "numpy_name", "owner", "small", "split_along", "unsupported",
           "whole", "with_axes", "writes_numpy_arrays"]

#: NumPy's casting rules (``concatenate(..., casting=)``, ``copyto``).
CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def numpy_name(func: str) -> str:
    """The name errors carry: ``numpy.<func>``."""
    return f"numpy.{func}"


def numpy_function(numpy_func: Callable) -> Callable[[Callable], Callable]:
    """Register the decorated function as darray's ``numpy_func``; its errors name ``numpy.<name>``.

    ``@numpy_function(np.bincount)`` is ``@implements(np.bincount)`` (the
    ``__array_function__`` registry) over ``@names_errors("numpy.bincount")``.
    """
    def register(f: Callable) -> Callable:
        return implements(numpy_func)(names_errors(numpy_name(numpy_func.__name__))(f))

    return register


# ---------------------------------------------------------------- arguments
def darray_of(func: str, x, like: DArray | None = None) -> DArray:
    """``x`` as a DArray: a DArray as it is; other data replicated on ``like``'s ranks (every rank passes it)."""
    if isinstance(x, DArray):
        return x
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(message(numpy_name(func), "expected an array or a number", type(x).__name__,
                                "a DArray, a NumPy array, a nested sequence or a number"))
    array = np.asarray(x)
    if array.dtype.kind not in "biufc" and not is_extra(array.dtype):
        raise TypeError(message(numpy_name(func), "unsupported data", array.dtype,
                                "booleans, numbers, dates, durations or records of those"))
    if like is None:
        return asarray(array)
    return asarray(array, split=None, comm=like.comm, device=like.device)


def axis_of(func: str, axis, ndim: int) -> int:
    """``axis`` in ``[0, ndim)``; NumPy's AxisError (a ValueError and IndexError) otherwise."""
    return normalize_axis(numpy_name(func), axis, ndim)


def integer(func: str, what: str, value) -> int:
    """``value`` as an int; TypeError for anything else (booleans included)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(message(numpy_name(func), f"{what} must be an integer", value))
    return int(value)


def no_out(func: str, out) -> None:
    """Refuse NumPy's ``out=`` (darray returns a new array; assign it instead)."""
    if out is not None:
        raise TypeError(message(numpy_name(func), "out= is not supported for DArrays", f"out={type(out).__name__}",
                                "None (assign the result instead)"))


def unsupported(func: str, what: str, got, expected: str, exc: type[Exception] = TypeError) -> Exception:
    """The error for a NumPy feature darray does not have for DArrays."""
    return exc(message(numpy_name(func), f"{what} is not supported for DArrays", got, expected))


def whole(x):
    """A small argument held whole by every rank: a DArray's values (allgathered if distributed), else ``x``."""
    if isinstance(x, DArray):
        return to_numpy(x.local if x.layout.is_replicated else x.gather())
    return x


def writes_numpy_arrays(numpy_func: Callable) -> Callable[[Callable], Callable]:
    """For a function that writes its first argument in place (``copyto``, ``place``, ``put``): a NumPy array there
    (every rank's own whole array, which NumPy takes) is written by ``numpy_func`` itself, the DArrays among the
    other arguments held whole (:func:`whole`; every rank passes the NumPy array, so every rank gathers)."""
    def decorate(f: Callable) -> Callable:
        @functools.wraps(f)
        def write(target, *args, **kwargs):
            if isinstance(target, np.ndarray):
                return numpy_func(target, *map(whole, args), **{k: whole(v) for k, v in kwargs.items()})
            return f(target, *args, **kwargs)

        return write

    return decorate


def small(func: str, what: str, v) -> np.ndarray:
    """A small argument (``xp``, ``fp``, ``bins``) as a NumPy array held whole by every rank."""
    if isinstance(v, DArray):
        return to_numpy(v.gather())  # small by contract: allgathered once
    return np.asarray(v)


def concat_axis(func: str, arrays: Sequence[DArray], axis) -> int:
    """NumPy's checks of ``concatenate(arrays, axis)``: the axis, normalised (a ValueError for mismatched arrays)."""
    if not arrays:
        raise ValueError(message(numpy_name(func), "need at least one array to concatenate", 0, "one or more arrays"))
    ndim = arrays[0].ndim
    if any(a.ndim != ndim for a in arrays):
        raise ValueError(message(numpy_name(func), "all the input arrays must have the same number of dimensions",
                                 tuple(a.shape for a in arrays), f"{ndim}-d arrays"))
    axis = axis_of(func, axis, ndim)
    first = arrays[0].shape
    if any(n != m for a in arrays for i, (n, m) in enumerate(zip(a.shape, first)) if i != axis):
        raise ValueError(message(numpy_name(func), f"all the input array dimensions except for axis {axis} must "
                                 "match exactly", tuple(a.shape for a in arrays), "matching shapes"))
    return axis


def concatenate(func: str, arrays: Sequence[DArray], axis) -> DArray:
    """``numpy.concatenate(arrays, axis)`` of DArrays after NumPy's checks (:func:`concat_axis`); one array: a copy."""
    axis = concat_axis(func, arrays, axis)
    return concat(arrays, axis=axis) if len(arrays) > 1 else astype(arrays[0], arrays[0].dtype, copy=True)


def split_along(func: str, ary, indices_or_sections, axis, equal: bool) -> list[DArray]:
    """``numpy.array_split`` (``equal=False``) or ``numpy.split``: slices of ``ary`` along ``axis`` (no moves)."""
    x = darray_of(func, ary)
    if x.ndim == 0:
        raise ValueError(message(numpy_name(func), "cannot split a 0-d array", x.shape, "an array with ndim >= 1"))
    axis = axis_of(func, axis, x.ndim)
    n = x.shape[axis]
    if isinstance(indices_or_sections, DArray):
        raise TypeError(message(numpy_name(func), "indices_or_sections must be an int or a sequence of ints",
                                "a DArray", "a list, tuple or NumPy array of split points"))
    try:
        count = len(indices_or_sections)
    except TypeError:
        count = None
    if count is not None:
        points = [0] + [integer(func, "each split index", i) for i in indices_or_sections] + [n]
    else:
        sections = integer(func, "indices_or_sections", indices_or_sections)
        if equal:
            if sections == 0:
                raise ZeroDivisionError(message(numpy_name(func), "integer modulo by zero", sections,
                                                "a positive number of sections"))
            if n % sections:
                raise ValueError(message(numpy_name(func), "array split does not result in an equal division",
                                         f"{n} elements along axis {axis} into {sections} sections",
                                         f"a number of sections dividing {n}"))
        if sections <= 0:
            raise ValueError(message(numpy_name(func), "number sections must be larger than 0.", sections,
                                     "a positive number of sections"))
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        points = [0]
        for s in sizes:
            points.append(points[-1] + s)
    before = (slice(None),) * axis
    return [x[before + (slice(points[i], points[i + 1]),)] for i in range(len(points) - 1)]


# ---------------------------------------------------------------- work on each rank's block
def blocks(func: str, f: Callable[..., np.ndarray], x: DArray, *others) -> DArray:
    """Apply the elementwise NumPy function ``f`` to this rank's owned block of ``x`` (no communication).

    ``others`` (DArrays or arrays of ``x``'s shape) are aligned to ``x``'s
    layout first. Blocks of other backends go through NumPy and back. ``f``
    must not raise on data (callers validate first), so that ranks agree.
    """
    layout = x.layout.without_halo()
    local = [to_numpy(x.local)] + [to_numpy(local_operand(numpy_name(func), o, layout, x)) for o in others]
    out = np.asarray(f(*local))
    return wrap_like(from_numpy(x._xp, out, device=x.device), layout, x)


def owner(x: DArray) -> bool:
    """Does this rank count its block (coordinate 0 on every grid dim that replicates it)?"""
    layout = x.layout
    coords = layout.coords(x.comm.rank)
    return all(c == 0 for g, c in enumerate(coords) if layout.split[g] is None)


def agreed(comm, func: str, call: Callable):
    """``call()`` on this rank; if it raises on any rank, every rank raises (the failing ones their own error)."""
    try:
        result, error = call(), None
    except Exception as exc:  # the user's function may raise anything; re-raised below
        result, error = None, exc
    failed = agree(comm, error is None)
    if error is not None:
        raise error
    if failed:
        raise ValueError(message(func, "the function raised on other ranks", failed, "no error on any rank"))
    return result


def with_axes(layout: Layout, at: int, remove: int, lengths: tuple[int, ...]) -> Layout:
    """``layout`` with ``remove`` uncut axes at ``at`` replaced by uncut axes of ``lengths`` (no halo)."""
    shift = len(lengths) - remove
    shape = layout.shape[:at] + tuple(lengths) + layout.shape[at + remove:]
    sizes = layout.sizes[:at] + tuple((n,) for n in lengths) + layout.sizes[at + remove:]
    split = tuple(s if s is None or s < at else s + shift for s in layout.split)
    return Layout(shape, layout.dims, split, sizes)


def first_cells(x, index: tuple) -> np.ndarray:
    """``x[index]`` (a few cells) as a NumPy array on every rank: fetched from their owner for a DArray."""
    if isinstance(x, DArray):
        return np.asarray(to_numpy(x[index].gather()))
    return np.asarray(x)[index]
