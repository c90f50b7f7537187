"""Reductions as local -> combine -> finalize.

Each rank reduces its block over the requested axes (``keepdims`` so partials
line up), the partials are combined by a collective over the grid dims that
cut a reduced axis, and the result takes the layout of the input with the
reduced axes replicated (or removed). Axes that no grid dim cuts need no
communication at all: on one rank every reduction is one backend call.

- sum, prod, min, max, all, any: allreduce with the matching operator;
  empty blocks contribute the neutral element.
- mean: sum / count.
- var, std: two passes over the global array, as NumPy: an allreduce of
  the block sums gives the mean (the same on every rank), then one allreduce
  adds each block's sums of ``|x - mean|**2`` and of ``x - mean`` (the
  corrected two-pass algorithm: the rounding of the mean cancels). NumPy
  blocks are swept in cache-sized chunks, with no temporary the size of the
  block. Reductions over uncut axes of NumPy blocks are ``numpy.var``.
"""

from __future__ import annotations

import builtins
import contextlib
import math
import numbers
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from .._errors import message
from .. import _debug, _recorder
from .._backend import NUMPY as _NUMPY
from .._comm import Communicator
from .._layout import Layout, normalize_axis
from .array import DArray
from .dtypes import CATEGORIES, check_category, to_backend_dtype, to_numpy_dtype

__all__ = ["sum", "prod", "min", "max", "mean", "var", "std", "all", "any", "normalize_axes", "combine", "reduce_over",
           "grid_dims_cutting", "finish_reduction", "lowest_value", "highest_value"]

_ALL_AXES = tuple(tuple(range(n)) for n in range(33))


def normalize_axes(func: str, axis, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, int or tuple) as a sorted tuple of distinct non-negative axes."""
    if axis is None:
        return _ALL_AXES[ndim] if ndim < len(_ALL_AXES) else tuple(range(ndim))
    if isinstance(axis, Sequence) and not isinstance(axis, str):
        axes = tuple(normalize_axis(func, a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(message(func, "repeated axis", tuple(axis), "distinct axes"))
        return tuple(sorted(axes))
    if ndim == 0 and axis in (0, -1):
        raise np.exceptions.AxisError(message(func, "axis out of bounds for a 0-d array", axis, "axis=None"))
    return (normalize_axis(func, axis, ndim),)


def grid_dims_cutting(x: DArray, axes) -> tuple[bool, ...]:
    """Per grid dim: does it cut one of ``axes`` (so partials must be combined along it)?"""
    facts = x._layout._derived.facts
    key = ("cut", axes)
    found = facts.get(key)
    if found is None:
        found = facts[key] = tuple(s is not None and s in axes for s in x._layout.split)
    return found


def finish_reduction(x: DArray, local, axes, keepdims: bool) -> DArray:
    """Wrap a keepdims-shaped result block (dropping the reduced axes unless ``keepdims``)."""
    layout = x._layout.reduced(axes, keepdims)
    if not keepdims and local.ndim:
        shape = layout.block_shape(x._comm.rank)
        local = local.reshape(shape) if type(local) is np.ndarray else x._xp.reshape(local, shape)
    return DArray._wrap(local, layout, x._comm, x._xp)


def combine(partial, op: str, comm: Communicator, layout: Layout, cut: tuple[bool, ...] | None = None):
    """The combine step of a reduction: this rank's ``partial`` reduced with ``op`` over the grid dims ``cut``.

    ``cut`` marks, per grid dim of ``layout``, whether the ranks along it
    hold different blocks of the reduced cells (default: every grid dim that
    cuts an axis, so that copies of a block count once). ``partial`` has the
    same shape on every rank; the result is the same on the ranks combined.
    One allreduce on the ranks sharing the other grid coordinates, none when
    no dim is cut. The global shape and ``cut`` travel as a signature in the
    allreduce itself (checked on every rank at no extra message;
    ``DARRAY_DEBUG=1`` checks every collective before it starts).
    """
    if cut is None:
        cut = tuple(s is not None for s in layout.split)
    if not builtins.any(cut):
        return partial
    return reduce_over(comm.sub(layout.dims, cut), partial, op, (op, layout.shape, cut))


def reduce_over(comm: Communicator, partial, op: str, sign: tuple):
    """``partial`` allreduced with ``op`` over ``comm``; ``sign`` starts with the operator, so that ``any`` on
    one rank and ``all`` on another raise on both. NumPy booleans (``any``, ``all``: ``lor``, ``land``, which
    carry no signature) are counted instead: an int32 sum, signed, compared with zero or the rank count."""
    if type(partial) is np.ndarray:
        kind = partial.dtype.kind
        if kind == "b" and op in ("lor", "land"):
            counts = comm.allreduce(partial.astype(np.int32), "sum", sign=sign)
            return counts > 0 if op == "lor" else counts == comm.size
        if kind in "Mm":  # MPI knows no NaT: NumPy combines the gathered partials (as small)
            return _TIME_COMBINE[op].reduce(comm.allgather(partial, sign=sign), axis=0)
    return comm.allreduce(partial, op, sign=sign)


_TIME_COMBINE = {"min": np.minimum, "max": np.maximum, "sum": np.add}


# NumPy-compatible superset of the standard: booleans sum, multiply and order too (``np.sum(mask)``).
_CATEGORY = {"sum": "any", "prod": "any", "min": "real or boolean", "max": "real or boolean", "all": "any",
             "any": "any"}


def _as_array(xp, out):
    """Backends return NumPy scalars for full reductions; darray blocks are always arrays."""
    if isinstance(out, np.ndarray):
        return out
    return np.asarray(out) if isinstance(out, np.generic) else xp.asarray(out)


_UFUNCS = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}
#: Boolean inputs of these reductions are computed as this integer dtype on libraries other than NumPy.
_BOOL_AS = {"sum": "int64", "prod": "int64", "min": "uint8", "max": "uint8"}


class ReductionPlan(NamedTuple):
    """A validated reduction remembered on its layout (``Derived.reductions``, by ``(func, axis, keepdims)``)."""

    axes: tuple  #: the reduced axes
    layout: Layout  #: the result's layout
    count: int  #: how many cells each result cell reduces (the mean divides by it)
    combined: Any  #: (the array's communicator, the ranks combined, the signature) over cut axes, else None


def _remember(x: DArray, key: tuple, axes, layout, accepted: set, cut: tuple | None = None,
              op: str = "sum") -> None:
    """Remember a validated reduction, with its count of reduced cells (non-empty ones only: empty reductions
    keep their checks and warnings) and, over the grid dims ``cut``, what :func:`combine` would do.

    The plan ``(axes, result layout, count, combine)`` is stored on the
    layout under ``key``, ``(func, axis, keepdims)`` with ``axis`` None or an
    int, so a repeated call on NumPy blocks (no tracing) is one NumPy
    reduction and a wrap, plus for a reduction over a cut axis the allreduce
    of :func:`combine` (``combine``: the array's communicator, the one of the
    ranks combined and the call's signature; None when no grid dim cuts a
    reduced axis. Layouts are shared by arrays on other communicators: those
    take the general path). The reductions look the plan up inline.
    """
    count = 1
    for a in axes:
        count *= x.shape[a]
    if count and (key[1] is None or type(key[1]) is int) and x._xp is _NUMPY:
        combined = None
        if cut is not None and True in cut:
            combined = (x._comm, x._comm.sub(x._layout.dims, cut), (op, x._layout.shape, cut))
        x._layout._derived.remember_reduction_plan(*key, ReductionPlan(axes, layout, count, combined))
        accepted.add(x._block.dtype)


#: NumPy's reductions of dates (``M``) and durations (``m``), on NumPy blocks.
_TIME_KINDS = {"min": frozenset("Mm"), "max": frozenset("Mm"), "sum": frozenset("m")}


#: Reductions whose float16 partials are float32 (NumPy accumulates float16 in float32: rounding once).
_HALF_IN_SINGLE = frozenset({"sum", "prod"})


def _simple(func: str, op: str, neutral) -> Callable[..., DArray]:
    allowed = CATEGORIES[_CATEGORY[func]] | _TIME_KINDS.get(func, frozenset())
    ufunc = _UFUNCS.get(func)
    accepted: set = set()  # NumPy dtypes this reduction has validated

    def reduce(x: DArray, /, *, axis=None, dtype=None, keepdims: bool = False) -> DArray:
        if dtype is None and ufunc is not None and _recorder.active is None and type(x) is DArray \
                and x._xp is _NUMPY:  # a remembered plan (see _remember)
            plan = x._layout._derived.reductions.get((func, axis, keepdims))  # (reduction_plan, inlined)
            if plan is not None:
                block = x.local if x._layout.has_halo else x._block
                combined = plan.combined
                if block.dtype in accepted and (combined is None or combined[0] is x._comm):
                    out = ufunc.reduce(block, axis=plan.axes, keepdims=keepdims)
                    if type(out) is not np.ndarray:
                        out = np.asarray(out)
                    if combined is not None:  # over a cut axis: combine's allreduce
                        out = reduce_over(combined[1], out, op, combined[2])
                    return DArray._wrap(out, plan.layout, x._comm, _NUMPY)
        return traced(x, axis=axis, dtype=dtype, keepdims=keepdims)

    def general(x: DArray, /, *, axis=None, dtype=None, keepdims: bool = False) -> DArray:
        if type(x) is not DArray:
            raise TypeError(message(func, "expected a DArray", type(x).__name__))
        axes = normalize_axes(func, axis, x.ndim)
        xp = x._xp
        block = x.local
        dt = block.dtype
        if dtype is None and func in _HALF_IN_SINGLE and isinstance(dt, np.dtype) and dt == np.float16:
            # NumPy adds halves in float32: so do the partials, rounded once
            out = general(x, axis=axis, dtype=np.float32, keepdims=keepdims)
            return DArray._wrap(xp.astype(out._block, dt), out._layout, out._comm, xp)
        if (dt.kind if isinstance(dt, np.dtype) else to_numpy_dtype(dt).kind) not in allowed:
            check_category(func, x.dtype, _CATEGORY[func])
        if neutral is not None:
            for a in axes:
                if x.shape[a] == 0:
                    raise ValueError(message(func, "zero-size reduction has no identity", x.shape,
                                             f"a non-empty axis {a}"))
        kwargs = {} if dtype is None else {"dtype": to_backend_dtype(xp, dtype)}
        back = None
        if xp is not _NUMPY and x.dtype.kind == "b" and func in _BOOL_AS:
            # the standard sums and orders numbers only (array-api-strict refuses booleans): NumPy's results
            # from integers (sum, prod: int64; min, max: 0/1 back to bool)
            if dtype is None:
                block = xp.astype(block, getattr(xp, _BOOL_AS[func]))
                back = xp.bool if func in ("min", "max") else None
        cut = grid_dims_cutting(x, axes)
        if True not in cut:
            if ufunc is not None and xp is _NUMPY:  # skip NumPy's Python wrapper: microseconds per call
                out = ufunc.reduce(block, axis=axes, keepdims=keepdims, **kwargs)
            else:
                out = getattr(xp, func)(block, axis=axes, keepdims=keepdims, **kwargs)
            out = _as_array(xp, out)
            layout = x._layout.reduced(axes, keepdims)
            if dtype is None and ufunc is not None:
                _remember(x, (func, axis, keepdims), axes, layout, accepted)
            return DArray._wrap(out if back is None else xp.astype(out, back), layout, x._comm, xp)
        if neutral is not None and builtins.any(block.shape[a] == 0 for a in axes):
            shape = tuple(1 if a in axes else n for a, n in enumerate(block.shape))
            partial = xp.full(shape, neutral(x.dtype), dtype=block.dtype, device=x.device)
        elif ufunc is not None and xp is _NUMPY:  # the result's shape at once: no reshape afterwards
            partial = combine(_as_array(xp, ufunc.reduce(block, axis=axes, keepdims=keepdims, **kwargs)), op,
                              x._comm, x._layout, cut)
            layout = x._layout.reduced(axes, keepdims)
            if dtype is None:
                _remember(x, (func, axis, keepdims), axes, layout, accepted, cut, op)
            return DArray._wrap(partial, layout, x._comm, xp)
        else:
            partial = getattr(xp, func)(block, axis=axes, keepdims=True, **kwargs)
        partial = combine(partial, op, x._comm, x._layout, cut)
        return finish_reduction(x, partial if back is None else xp.astype(partial, back), axes, keepdims)

    traced = _traced(general, func)
    reduce.__wrapped__ = general
    reduce.__name__ = reduce.__qualname__ = func
    reduce.__doc__ = f"""{func.capitalize()} over ``axis`` of the global array (combined with an allreduce ``{op}``).

    Same signature and result as the Array API ``{func}``; the result is
    replicated along the grid dims that cut a reduced axis.
    """
    return reduce


def _traced(func, name: str):
    """``func`` recording one compute event per call while tracing (comm events come from the transport)."""

    def traced(x, /, **kwargs):
        if _recorder.active is None:
            return func(x, **kwargs)
        begin, mark = _recorder.now(), len(_recorder.active)
        out = func(x, **kwargs)
        _recorder.record_compute(name, begin, mark, getattr(x, "shape", ()))
        return out

    traced.__wrapped__ = func
    return traced


def lowest_value(dtype):
    dtype = to_numpy_dtype(dtype)
    if dtype.kind == "b":
        return False
    if dtype.kind in "Mm":  # (the lowest int64 is NaT, which wins every comparison)
        return np.array(np.iinfo(np.int64).min + 1).view(dtype)[()]
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def highest_value(dtype):
    dtype = to_numpy_dtype(dtype)
    if dtype.kind == "b":
        return True
    if dtype.kind in "Mm":
        return np.array(np.iinfo(np.int64).max).view(dtype)[()]
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


sum = _simple("sum", "sum", None)
prod = _simple("prod", "prod", None)
min = _simple("min", "min", highest_value)
max = _simple("max", "max", lowest_value)
all = _simple("all", "land", None)
any = _simple("any", "lor", None)


#: NumPy's mean accumulates integers and bools in float64 (``numpy.mean``), without a converted block.
_MEAN_ACCUMULATOR = {**{np.dtype(c): np.float64 for c in "?bBhHiIlLqQ"}, np.dtype(np.float16): np.float32}
#: ... and float16 is accumulated in float32, its mean rounded back to float16 (as NumPy does).
_MEAN_RESULT = {np.dtype(np.float16): np.float16}
_mean_accepted: set = set()


def mean(x: DArray, /, *, axis=None, keepdims: bool = False) -> DArray:
    """Arithmetic mean over ``axis`` (allreduced sum of partials / global count)."""
    plan = x._layout._derived.reductions.get(("mean", axis, keepdims)) if _recorder.active is None \
        and type(x) is DArray \
        and x._xp is _NUMPY else None  # a remembered plan (see _remember)
    if plan is not None:
        block = x.local if x._layout.has_halo else x._block
        combined = plan.combined
        if block.dtype in _mean_accepted and (combined is None or combined[0] is x._comm):
            out = np.add.reduce(block, axis=plan.axes, keepdims=keepdims, dtype=_MEAN_ACCUMULATOR.get(block.dtype))
            if type(out) is not np.ndarray:
                out = np.asarray(out)
            if combined is not None:  # over a cut axis: combine's allreduce
                out = reduce_over(combined[1], out, "sum", combined[2])
            np.divide(out, plan.count, out=out)  # (in place keeps a 0-d result an array)
            if block.dtype in _MEAN_RESULT:
                out = out.astype(_MEAN_RESULT[block.dtype])
            return DArray._wrap(out, plan.layout, x._comm, _NUMPY)
    return _mean(x, axis=axis, keepdims=keepdims)


def _mean(x: DArray, /, *, axis=None, keepdims: bool = False) -> DArray:
    if type(x) is not DArray:
        raise TypeError(message("mean", "expected a DArray", type(x).__name__))
    axes = normalize_axes("mean", axis, x.ndim)
    if x.dtype.kind == "m" and x._xp is _NUMPY:  # durations: NumPy's sum divided by the count (a duration)
        count = math.prod(x.shape[a] for a in axes)
        with _empty_reduction(count):
            return sum(x, axis=axis, keepdims=keepdims) / count
    check_category("mean", x.dtype, "any")
    xp = x._xp
    cut = grid_dims_cutting(x, axes)
    count = 1
    for a in axes:
        count *= x.shape[a]
    block = x.local
    if xp is _NUMPY:  # integers accumulate in float64 (NumPy's mean) without a converted copy of the block
        partial = _as_array(xp, np.add.reduce(block, axis=axes, keepdims=keepdims,
                                              dtype=_MEAN_ACCUMULATOR.get(block.dtype)))
        if builtins.any(cut):
            partial = combine(partial, "sum", x._comm, x._layout, cut)
        with _empty_reduction(count):  # in place keeps a 0-d result an array
            np.divide(partial, count, out=partial)
        if block.dtype in _MEAN_RESULT:
            partial = partial.astype(_MEAN_RESULT[block.dtype])
        layout = x._layout.reduced(axes, keepdims)
        _remember(x, ("mean", axis, keepdims), axes, layout, _mean_accepted, cut)
        return DArray._wrap(partial, layout, x._comm, xp)
    if x.dtype.kind in "iub":  # NumPy's float64 mean (the standard asks for floats)
        block = xp.astype(block, xp.float64)
    if not builtins.any(cut):
        with _empty_reduction(count):
            out = xp.mean(block, axis=axes, keepdims=keepdims)
        return DArray._wrap(_as_array(xp, out), x._layout.reduced(axes, keepdims), x._comm, xp)
    partial = combine(xp.sum(block, axis=axes, keepdims=True), "sum", x._comm, x._layout, cut)
    with _empty_reduction(count):
        return finish_reduction(x, partial / count, axes, keepdims)


#: Bytes of the scratch buffer of the squared-deviation pass: a few row chunks of the block at a time stay
#: in the cache, and no temporary of the block's size is written (or page-faulted) per call.
_CHUNK_BYTES = 1 << 20


def _float_block(x: DArray):
    """The local block as the floating dtype var computes in (NumPy's float64 for integers)."""
    xp = x._xp
    block = x.local
    if x.dtype.kind in "iub":
        block = xp.astype(block, xp.float64)
    return block


def _global_mean(x: DArray, axes, cut):
    """The global mean over ``axes`` (keepdims-shaped): allreduced block sums / global count."""
    count = 1
    for a in axes:
        count *= x.shape[a]
    xp = x._xp
    if xp is _NUMPY:  # integers accumulate in float64 without a converted copy of the block
        block = x.local
        total = np.add.reduce(block, axis=axes, keepdims=True,
                              dtype=np.float64 if block.dtype.kind in "iub" else None)
    else:
        total = xp.sum(_float_block(x), axis=axes, keepdims=True)
    total = combine(total, "sum", x._comm, x._layout, cut)
    with _empty_reduction(count, warn=False):  # (var and std give their own warning)
        return total / count, count


def _empty_reduction(count: int, warn: bool = True):
    """Silence 0/0 for an empty reduction (NumPy's nan, with NumPy's warning) and nothing else."""
    if count:
        return contextlib.nullcontext()
    if warn:
        warnings.warn("Mean of empty slice", RuntimeWarning, stacklevel=4)
    return np.errstate(divide="ignore", invalid="ignore")


def _deviation_sums(x: DArray, axes, mean):
    """This block's sums over ``axes`` of ``|x - mean|**2`` and of ``x - mean``, stacked: ``(2, *mean.shape)``.

    One array in ``mean``'s dtype, so one allreduce adds both (a complex stack holds the real sum of squares
    in the real part of its first row).
    """
    xp = x._xp
    if xp is not _NUMPY:
        d = _float_block(x) - mean
        sq = xp.real(d * xp.conj(d)) if xp.isdtype(d.dtype, "complex floating") else d * d
        return xp.stack([xp.astype(xp.sum(sq, axis=axes, keepdims=True), d.dtype),
                         xp.sum(d, axis=axes, keepdims=True)])
    block = x.local
    acc = np.zeros((2, *mean.shape), dtype=mean.dtype)
    q, s = acc[0, ...].real, acc[1, ...]  # views, also of a 0-d mean
    chunk = builtins.max(1, _CHUNK_BYTES // mean.itemsize)
    if block.size <= chunk:  # small (or empty) blocks: one go, straight into acc
        d = np.subtract(block, mean)
        np.add.reduce(d, axis=axes, keepdims=True, out=s)
        np.add.reduce(_square(d), axis=axes, keepdims=True, out=q)
    else:
        _accumulate(block, mean, axes, q, s, np.empty(chunk, dtype=mean.dtype))
    return acc


def _accumulate(b, m, axes, q, s, buf) -> None:
    """Add ``sum(|b - m|**2, axes)`` into ``q`` and ``sum(b - m, axes)`` into ``s``, in row chunks that fit ``buf``."""
    if b.size <= buf.size:
        _leaf(b, m, axes, q, s, buf)
        return
    n = b.shape[0]
    row = b.size // n
    reduced = 0 in axes
    if row <= buf.size:
        step = buf.size // row
        for i in range(0, n, step):
            j = slice(i, i + step)
            if reduced:
                _leaf(b[j], m, axes, q, s, buf)
            else:
                _leaf(b[j], m[j], axes, q[j], s[j], buf)
        return
    inner = tuple(a - 1 for a in axes if a)  # one row does not fit: recurse into each (b.ndim >= 2 here)
    for i in range(n):
        k = 0 if reduced else i
        _accumulate(b[i], m[k], inner, q[k], s[k], buf)


def _leaf(b, m, axes, q, s, buf) -> None:
    d = buf[:b.size].reshape(b.shape)
    np.subtract(b, m, out=d)
    s += np.add.reduce(d, axis=axes, keepdims=True)
    if d.dtype.kind == "c":
        q += np.add.reduce(_square(d), axis=axes, keepdims=True)
    else:  # einsum squares and sums in one sweep over the chunk
        q += np.einsum(_subscripts(d.ndim, axes), d, d).reshape(q.shape)


_SUBSCRIPTS: dict = {}


def _subscripts(ndim: int, axes) -> str:
    """``einsum`` subscripts of ``sum(d * d, axes)``: ``"ab,ab->b"`` for ``ndim=2, axes=(0,)``."""
    key = (ndim, axes)
    found = _SUBSCRIPTS.get(key)
    if found is None:
        letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[:ndim]
        kept = "".join(c for a, c in enumerate(letters) if a not in axes)
        found = _SUBSCRIPTS[key] = f"{letters},{letters}->{kept}"
    return found


def _square(d):
    """``|d|**2`` in place (NumPy): complex ``d`` holds it in its real part, as NumPy's var does."""
    if d.dtype.kind == "c":
        re, im = d.real, d.imag
        np.multiply(re, re, out=re)
        np.multiply(im, im, out=im)
        return np.add(re, im, out=re)
    return np.multiply(d, d, out=d)


#: The largest finite value per real dtype (``numpy.finfo`` costs a microsecond per call).
_FINITE_MAX = {np.dtype(t): float(np.finfo(t).max) for t in (np.float16, np.float32, np.float64)}


def _corrected_m2(xp, acc, count: int):
    """``sum|d|**2 - |sum d|**2 / count`` from the allreduced stack of ``_deviation_sums``, clamped at 0.

    The correction is computed as ``(|s| / count) * |s|``: no overflow where ``sum|d|**2`` is finite, and
    where that is inf (so is ``s``) the clamp to the largest finite value keeps NumPy's inf rather than
    inf - inf. Rounding may leave -tiny for constant data: clamped to 0 (nan stays nan).
    """
    q, s = acc[0, ...], acc[1, ...]
    if xp is _NUMPY:
        a = np.abs(s) if s.dtype.kind == "c" else s
        c = np.multiply(a / count, a)
        np.minimum(c, _FINITE_MAX[c.dtype], out=c)
        m2 = np.subtract(q.real, c, out=c)
        return np.maximum(m2, 0, out=m2)
    a = xp.abs(s)
    c = xp.clip((a / count) * a, max=_FINITE_MAX[to_numpy_dtype(a.dtype)])
    return xp.clip(xp.real(q) - c, min=0)


def var(x: DArray, /, *, axis=None, correction: numbers.Real = 0.0, keepdims: bool = False, ddof=None,
        _func: str = "var") -> DArray:
    """Variance over ``axis`` with ``correction`` (NumPy's ``ddof``, also accepted); corrected two passes."""
    if ddof is not None:
        correction = ddof
    if type(x) is not DArray:
        raise TypeError(message(_func, "expected a DArray", type(x).__name__))
    if not isinstance(correction, numbers.Real) or isinstance(correction, bool):
        raise TypeError(message(_func, "correction must be a real number", correction))
    _debug.check_arguments(x._comm, _func, correction, axis, keepdims)
    axes = normalize_axes(_func, axis, x.ndim)
    check_category(_func, x.dtype, "numeric")
    xp = x._xp
    cut = grid_dims_cutting(x, axes)
    if True not in cut and xp is _NUMPY:
        out = xp.var(x.local, axis=axes, correction=correction, keepdims=keepdims)
        return DArray._wrap(_as_array(xp, out), x._layout.reduced(axes, keepdims), x._comm, xp)
    # Two passes over the global array, as NumPy: the allreduced block sums give the mean (the same on every
    # rank), then one allreduce adds the blocks' sums of |x - mean|**2 and of x - mean. The second sum is the
    # corrected two-pass algorithm (Chan, Golub & LeVeque 1983): M2 = sum|d|**2 - |sum d|**2 / n is exact for
    # any mean, so the rounding of the mean (sums of large offsets, float32, sequential axis-0 sums) cancels.
    # (Other libraries take this path uncut too: the standard's var takes real floats only, torch's var over
    # axis=() is 0, not 0 / (1 - correction).)
    mean, count = _global_mean(x, axes, cut)
    acc = combine(_deviation_sums(x, axes, mean), "sum", x._comm, x._layout, cut)
    divisor = builtins.max(count - correction, 0)
    if count and divisor:
        out = _corrected_m2(xp, acc, count) / divisor
    else:
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=3)  # (NumPy's, alike)
        with np.errstate(divide="ignore", invalid="ignore"):  # NumPy's nan / inf: empty, count <= correction
            out = _corrected_m2(xp, acc, count) / divisor
    return finish_reduction(x, out, axes, keepdims)


def std(x: DArray, /, *, axis=None, correction: numbers.Real = 0.0, keepdims: bool = False, ddof=None) -> DArray:
    """Standard deviation over ``axis``: ``sqrt(var)`` (``ddof`` is accepted for ``correction``)."""
    if ddof is not None:
        correction = ddof
    v = getattr(var, "__wrapped__", var)(x, axis=axis, correction=correction, keepdims=keepdims, _func="std")
    block = v._block  # a fresh result of var's: NumPy takes the root in place
    block = np.sqrt(block, out=block) if type(block) is np.ndarray else v._xp.sqrt(block)
    return DArray._wrap(block, v._layout, v._comm, v._xp)


_mean = _traced(_mean, "mean")  # mean's remembered path checks that tracing is off
var = _traced(var, "var")
std = _traced(std, "std")
for _f, _name in ((var, "var"), (std, "std")):
    _f.__name__ = _f.__qualname__ = _name
    _f.__doc__ = _f.__wrapped__.__doc__
