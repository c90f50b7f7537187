"""Reductions as local -> combine -> finalize.

Each rank reduces its block over the requested axes (``keepdims`` so partials
line up), the partials are combined by a collective over the grid dims that
cut a reduced axis, and the result takes the layout of the input with the
reduced axes replicated (or removed). Axes that no grid dim cuts need no
communication at all: on one rank every reduction is one backend call.

- sum, prod, min, max, all, any: allreduce with the matching operator;
  empty blocks contribute the neutral element.
- mean: sum / count.
- var, std: per-block (count, mean, M2) are allgathered and combined with
  Chan et al.'s pairwise update in a fixed order, identical on every rank.
"""

from __future__ import annotations

import builtins
import numbers
from collections.abc import Sequence

import numpy as np

from .._errors import message
from .. import _debug, _tracing
from .._backend import NUMPY as _NUMPY
from .._layout import normalize_axis
from .array import DArray
from .dtypes import CATEGORIES, check_category, to_backend_dtype, to_numpy_dtype

__all__ = ["sum", "prod", "min", "max", "mean", "var", "std", "all", "any", "normalize_axes"]

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


def _cut(x: DArray, axes) -> tuple[bool, ...]:
    """Per grid dim: does it cut one of ``axes`` (so partials must be combined along it)?"""
    derived = x._layout._derived
    key = ("cut", axes)
    found = derived.get(key)
    if found is None:
        found = derived[key] = tuple(s is not None and s in axes for s in x._layout.split)
    return found


def _finish(x: DArray, local, axes, keepdims: bool) -> DArray:
    layout = x._layout.reduced(axes, keepdims)
    if not keepdims:
        local = x._xp.reshape(local, layout.block_shape(x._comm.rank)) if local.ndim else local
    return DArray._wrap(local, layout, x._comm, x._xp)


def _allreduce_over(x: DArray, cut, local, op: str):
    if not builtins.any(cut):
        return local
    if _debug.enabled:
        _debug.check_collective(x._comm, f"allreduce.{op}", x._layout, cut)
    return x._comm.sub(x._layout.dims, cut).allreduce(local, op)


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


def _simple(func: str, op: str, neutral):
    allowed = CATEGORIES[_CATEGORY[func]]
    ufunc = _UFUNCS.get(func)

    def reduce(x: DArray, /, *, axis=None, dtype=None, keepdims: bool = False) -> DArray:
        if type(x) is not DArray:
            raise TypeError(message(func, "expected a DArray", type(x).__name__))
        axes = normalize_axes(func, axis, x.ndim)
        xp = x._xp
        block = x.local
        dt = block.dtype
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
        cut = _cut(x, axes)
        if True not in cut:
            if ufunc is not None and xp is _NUMPY:  # skip NumPy's Python wrapper: microseconds per call
                out = ufunc.reduce(block, axis=axes, keepdims=keepdims, **kwargs)
            else:
                out = getattr(xp, func)(block, axis=axes, keepdims=keepdims, **kwargs)
            out = _as_array(xp, out)
            return DArray._wrap(out if back is None else xp.astype(out, back), x._layout.reduced(axes, keepdims),
                                x._comm, xp)
        if neutral is not None and builtins.any(block.shape[a] == 0 for a in axes):
            shape = tuple(1 if a in axes else n for a, n in enumerate(block.shape))
            partial = xp.full(shape, neutral(x.dtype), dtype=block.dtype, device=x.device)
        else:
            partial = getattr(xp, func)(block, axis=axes, keepdims=True, **kwargs)
        partial = _allreduce_over(x, cut, partial, op)
        return _finish(x, partial if back is None else xp.astype(partial, back), axes, keepdims)

    reduce = _traced(reduce, func)
    reduce.__name__ = reduce.__qualname__ = func
    reduce.__doc__ = f"""{func.capitalize()} over ``axis`` of the global array (combined with an allreduce ``{op}``).

    Same signature and result as the Array API ``{func}``; the result is
    replicated along the grid dims that cut a reduced axis.
    """
    return reduce


def _traced(func, name: str):
    """``func`` recording one compute event per call while tracing (comm events come from the transport)."""

    def traced(x, /, **kwargs):
        if _tracing.active is None:
            return func(x, **kwargs)
        begin, mark = _tracing.now(), len(_tracing.active)
        out = func(x, **kwargs)
        _tracing.record_compute(name, begin, mark, getattr(x, "shape", ()))
        return out

    traced.__wrapped__ = func
    return traced


def _lowest(dtype):
    dtype = to_numpy_dtype(dtype)
    if dtype.kind == "b":
        return False
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    dtype = to_numpy_dtype(dtype)
    if dtype.kind == "b":
        return True
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


sum = _simple("sum", "sum", None)
prod = _simple("prod", "prod", None)
min = _simple("min", "min", _highest)
max = _simple("max", "max", _lowest)
all = _simple("all", "land", None)
any = _simple("any", "lor", None)


def mean(x: DArray, /, *, axis=None, keepdims: bool = False) -> DArray:
    """Arithmetic mean over ``axis`` (allreduced sum of partials / global count)."""
    if type(x) is not DArray:
        raise TypeError(message("mean", "expected a DArray", type(x).__name__))
    axes = normalize_axes("mean", axis, x.ndim)
    check_category("mean", x.dtype, "any")
    xp = x._xp
    cut = _cut(x, axes)
    if not builtins.any(cut):
        block = x.local
        if xp is not _NUMPY and x.dtype.kind in "iub":  # NumPy's float64 mean (the standard asks for floats)
            block = xp.astype(block, xp.float64)
        out = xp.mean(block, axis=axes, keepdims=keepdims)
        return DArray._wrap(_as_array(xp, out), x._layout.reduced(axes, keepdims), x._comm, xp)
    count = 1
    for a in axes:
        count *= x.shape[a]
    block = x.local
    if x.dtype.kind in "iub":
        block = xp.astype(block, xp.float64)
    partial = _allreduce_over(x, cut, xp.sum(block, axis=axes, keepdims=True), "sum")
    with np.errstate(divide="ignore", invalid="ignore"):
        return _finish(x, partial / count, axes, keepdims)


def _moments(x: DArray, axes):
    """Per-block count, mean and M2 (sum of squared deviations), keepdims-shaped."""
    xp = x._xp
    block = x.local
    if x.dtype.kind in "iub":
        block = xp.astype(block, xp.float64)
    n = 1
    for a in axes:
        n *= block.shape[a]
    if n == 0:
        shape = tuple(1 if a in axes else s for a, s in enumerate(block.shape))
        zero = xp.zeros(shape, dtype=block.dtype, device=x.device)
        return 0, zero, xp.real(zero) if xp.isdtype(zero.dtype, "complex floating") else zero
    m = xp.mean(block, axis=axes, keepdims=True)
    d = block - m
    if xp.isdtype(d.dtype, "complex floating"):
        m2 = xp.sum(xp.real(d * xp.conj(d)), axis=axes, keepdims=True)
    else:
        m2 = xp.sum(d * d, axis=axes, keepdims=True)
    return n, m, m2


def _combine(xp, parts):
    """Chan et al.: merge (n, mean, M2) pairwise in a balanced tree (fixed order on every rank)."""
    while len(parts) > 1:
        merged = []
        for i in range(0, len(parts) - 1, 2):
            (na, ma, qa), (nb, mb, qb) = parts[i], parts[i + 1]
            n = na + nb
            if na == 0:
                merged.append((nb, mb, qb))
                continue
            if nb == 0:
                merged.append((na, ma, qa))
                continue
            delta = mb - ma
            mean_ = ma + delta * (nb / n)
            sq = xp.real(delta * xp.conj(delta)) if xp.isdtype(delta.dtype, "complex floating") else delta * delta
            merged.append((n, mean_, qa + qb + sq * (na * nb / n)))
        if len(parts) % 2:
            merged.append(parts[-1])
        parts = merged
    return parts[0]


def var(x: DArray, /, *, axis=None, correction: numbers.Real = 0.0, keepdims: bool = False, ddof=None,
        _func: str = "var") -> DArray:
    """Variance over ``axis`` with ``correction`` (NumPy's ``ddof``, also accepted); stable parallel combine."""
    if ddof is not None:
        correction = ddof
    if type(x) is not DArray:
        raise TypeError(message(_func, "expected a DArray", type(x).__name__))
    if not isinstance(correction, numbers.Real) or isinstance(correction, bool):
        raise TypeError(message(_func, "correction must be a real number", correction))
    axes = normalize_axes(_func, axis, x.ndim)
    check_category(_func, x.dtype, "numeric")
    xp = x._xp
    if not builtins.any(_cut(x, axes)):
        if xp is _NUMPY:
            out = xp.var(x.local, axis=axes, correction=correction, keepdims=keepdims)
            return DArray._wrap(_as_array(xp, out), x._layout.reduced(axes, keepdims), x._comm, xp)
        # other libraries: the standard's var takes real floats only, torch's var over axis=() is 0, not
        # 0 / (1 - correction): the same two passes as NumPy, on float64 for integers, |d|**2 for complex
        n, _, m2 = _moments(x, axes)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = m2 / builtins.max(n - correction, 0)
        return _finish(x, out, axes, keepdims)
    n, m, m2 = _moments(x, axes)
    sub = x._comm.sub(x._layout.dims, _cut(x, axes))
    counts = sub.allgather(np.asarray([n], dtype=np.int64))[:, 0]
    means, m2s = sub.allgather(m), sub.allgather(m2)
    _, _, total_m2 = _combine(xp, [(int(counts[i]), means[i, ...], m2s[i, ...]) for i in range(sub.size)])
    count = int(np.sum(counts))
    with np.errstate(divide="ignore", invalid="ignore"):  # NumPy's inf / nan for count <= correction
        out = total_m2 / builtins.max(count - correction, 0)
    return _finish(x, out, axes, keepdims)


def std(x: DArray, /, *, axis=None, correction: numbers.Real = 0.0, keepdims: bool = False, ddof=None) -> DArray:
    """Standard deviation over ``axis``: ``sqrt(var)`` (``ddof`` is accepted for ``correction``)."""
    if ddof is not None:
        correction = ddof
    v = getattr(var, "__wrapped__", var)(x, axis=axis, correction=correction, keepdims=keepdims, _func="std")
    return DArray._wrap(v._xp.sqrt(v._block), v._layout, v._comm, v._xp)


mean = _traced(mean, "mean")
var = _traced(var, "var")
std = _traced(std, "std")
for _f, _name in ((mean, "mean"), (var, "var"), (std, "std")):
    _f.__name__ = _f.__qualname__ = _name
    _f.__doc__ = _f.__wrapped__.__doc__
