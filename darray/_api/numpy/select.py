"""NumPy's selection and masked-assignment functions for DArrays, distributed (issue #15).

What moves, per function (nothing gathers a DArray argument unless said):

- ``select``, ``choose``, ``copyto``: elementwise on aligned blocks. Operands
  cut otherwise than the result are redistributed to it (as in
  :func:`darray.where`); ``choose(mode='raise')`` agrees on the bounds check
  with one small allgather.
- ``compress``, ``extract``: a boolean mask along one axis (:mod:`darray._core.advanced`:
  every rank compresses its own rows; one allgather of the counts). A
  condition longer than the axis is checked with one ``any``.
- ``place``: the ordinal of every selected cell is a distributed cumulative
  sum of the flattened mask; each cell then picks ``vals[ordinal % len(vals)]``
  locally. ``vals`` is held whole by every rank (NumPy cycles it; a DArray
  there is allgathered), except a DArray at least as long as the selection,
  which is written as ``arr[mask] = vals[:count]`` (sent to the owners).
- ``putmask``: ``values`` of ``a``'s size is aligned with ``a`` (a
  redistribution at most); shorter ``values`` repeat by flat position, which
  every rank knows for its own cells: held whole (a DArray allgathered), no
  other message.
- ``fill_diagonal``: every rank finds the diagonal cells of its own block;
  ``val`` is held whole (a DArray allgathered). No other message.
- ``piecewise``: ``x[cond]`` and ``y[cond] = ...`` per condition
  (mask indexing above); the callables see DArray selections.
- ``lexsort``: along an axis no rank cuts, one local lexsort per rank (keys
  cut otherwise are redistributed to the first key's blocks); along a cut
  axis, successive stable ``argsort`` of each key (last key primary) composed
  with ``take_along_axis`` (:mod:`darray._api.sorting`). Complex keys sort by
  (NaN class, real, imaginary) as NumPy does.
- ``sort_complex``: ``sort`` along the last axis (complex input: ``lexsort``
  of its parts and ``take_along_axis``).

Given no DArray at all, the functions that return a result compute it with
NumPy on the (whole, given) data and return a DArray.

Examples
--------
>>> import darray as da
>>> x = da.arange(6)
>>> da.select([x < 2, x > 3], [x, x ** 2], default=-1).gather().tolist()
[0, 1, -1, -1, 16, 25]
>>> a = da.zeros(5, dtype=da.int64)
>>> da.putmask(a, x[:5] % 2 == 1, da.asarray([7, 8]))
>>> a.gather().tolist()
[0, 8, 0, 8, 0]
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

import numpy as np

from ..._backend import from_numpy, is_numpy_namespace, to_numpy
from ..._core import DArray, to_backend_dtype
from ..._core.advanced import take_along_axis
from ..._core.elementwise import align_target, local_operand, wrap_like
from ..._core.protocols import implements
from ..._errors import AxisError, message, names_errors
from ..._comm.base import agree
from .._common import first_darray
from ..creation import as_darray
from ..manipulation import reshape
from ..sorting import argsort, sort, time_keys
from ..cumulative import cumulative_sum
from ..creation import zeros_like
from ..data_types import astype
from ..elementwise import imag, isnan, real
from ..searching import argmax
from ..statistical import any as _any
from ._common import CASTINGS, writes_numpy_arrays

__all__ = ["choose", "compress", "copyto", "extract", "fill_diagonal", "lexsort", "piecewise", "place", "putmask",
           "select", "sort_complex"]

_SCALARS = (bool, int, float, complex)
_MODES = ("raise", "wrap", "clip")


# ---------------------------------------------------------------- helpers
def _target(func: str, x, what: str) -> DArray:
    if not isinstance(x, DArray):
        raise TypeError(message(func, f"{what} must be a DArray (it is changed in place)", type(x).__name__,
                                "a DArray"))
    return x


def _items(x) -> list:
    """A sequence argument (condlist, choices, keys) as a list; a DArray or array along its first axis."""
    if isinstance(x, DArray):
        return [x[i] for i in range(x.shape[0])] if x.ndim else [x]
    return list(x)


def _shape(x) -> tuple:
    return x.shape if isinstance(x, DArray) else np.shape(x)


def _dtype_of(x):
    """What NumPy's ``result_type`` sees: Python scalars stay weak, arrays give their dtype."""
    if isinstance(x, DArray):
        return x.dtype
    return x if type(x) in _SCALARS else np.asarray(x).dtype


def _operand(x):
    """A non-DArray operand as NumPy sees it (Python scalars stay scalars)."""
    return x if isinstance(x, DArray) or type(x) in _SCALARS else np.asarray(x)


def _cast(xp, block, dtype, device):
    """A local block (or a scalar) as the backend's ``dtype``."""
    want = to_backend_dtype(xp, dtype)
    if isinstance(block, _SCALARS) or isinstance(block, np.generic):
        return xp.asarray(np.asarray(block).astype(dtype).item(), dtype=want, device=device)
    if isinstance(block, np.ndarray) and not is_numpy_namespace(xp):
        return from_numpy(xp, block.astype(dtype), device=device)
    if block.dtype == want:
        return block
    if not is_numpy_namespace(xp):  # NumPy's unsafe casts that strict namespaces refuse in astype
        if np.dtype(dtype) == np.bool_:
            return block != 0
        if xp.isdtype(block.dtype, "complex floating") and np.dtype(dtype).kind != "c":
            block = xp.real(block)
    return xp.astype(block, want)


def _store(a: DArray, block) -> None:
    """``block`` (shaped like ``a``'s owned cells) becomes ``a``'s owned cells."""
    a.local[...] = block
    a._halo_fresh = False


def _aligned(func: str, x, a: DArray):
    """``x`` (shape broadcastable to ``a``'s) cut like ``a``'s owned cells."""
    return local_operand(func, x, a._layout.without_halo(), a)


def _bool(func: str, x, like: DArray | None) -> DArray:
    """A condition/mask as a boolean DArray (NumPy's truth value of every element)."""
    x = as_darray(func, x, like)
    return x if x.dtype == np.bool_ else x != 0


def _flat_positions(a: DArray):
    """The global C-order flat index of each owned cell of ``a`` (an int64 block of ``a``'s backend)."""
    xp, rank, layout = a._xp, a._comm.rank, a._layout
    start, shape = layout.block_start(rank), layout.block_shape(rank)
    strides = [math.prod(a.shape[d + 1:]) for d in range(a.ndim)]
    flat = xp.zeros(shape, dtype=xp.int64, device=a.device)
    for d in range(a.ndim):
        line = xp.arange(start[d], start[d] + shape[d], dtype=xp.int64, device=a.device) * strides[d]
        flat = flat + xp.reshape(line, (1,) * d + (shape[d],) + (1,) * (a.ndim - d - 1))
    return flat


def _pick(a: DArray, values: np.ndarray, index):
    """``values[index]`` (values held whole, index a local int64 block of ``a``'s backend) in ``a``'s dtype."""
    xp = a._xp
    vals = from_numpy(xp, np.ascontiguousarray(values.reshape(-1).astype(a.dtype, copy=False)), device=a.device)
    picked = xp.take(vals, xp.reshape(index, (-1,)), axis=0)
    return xp.reshape(picked, tuple(index.shape))


def _values(func: str, values, a: DArray, casting: str = "safe"):
    """NumPy's conversion of ``values`` to ``a``'s dtype: arrays by ``casting``, anything else by ``asarray``."""
    if isinstance(values, (DArray, np.ndarray)):
        if not np.can_cast(values.dtype, a.dtype, casting):
            raise TypeError(message(func, f"cannot cast array data from {values.dtype} to {a.dtype} according to "
                                          f"the rule '{casting}'", values.dtype, f"a dtype that casts to {a.dtype}"))
        return values if isinstance(values, DArray) else values.astype(a.dtype)
    try:
        return np.asarray(values, dtype=a.dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise type(exc)(message(func, f"values do not convert to {a.dtype} ({exc})", type(values).__name__,
                                f"values representable as {a.dtype}")) from exc


def _mask_like(func: str, mask, a: DArray) -> DArray:
    """``mask`` as a boolean DArray of ``a``'s shape (NumPy pairs mask and array by flat position)."""
    size = mask.size if isinstance(mask, DArray) else np.size(mask)
    if size != a.size:
        raise ValueError(message(func, "mask and data must be the same size", size, f"size {a.size}"))
    mask = _bool(func, mask, a)
    return mask if mask.shape == a.shape else reshape(mask, a.shape)


def _no_darray(func: str, numpy_func: Callable, *args, **kwargs) -> DArray:
    """NumPy's result for inputs without a DArray (the data is whole on every rank already), as a DArray."""
    return as_darray(func, numpy_func(*args, **kwargs))


# ---------------------------------------------------------------- select, choose
@implements(np.select)
@names_errors("numpy.select")
def select(condlist, choicelist, default=0) -> DArray:
    """Elements of ``choicelist[i]`` where ``condlist[i]`` is the first true condition, else ``default``.

    Conditions and choices broadcast together; elementwise on the result's
    blocks (operands cut otherwise are redistributed to it).

    Examples
    --------
    >>> import darray as da
    >>> x = da.arange(5)
    >>> select([x < 1, x < 3], [10, x * 2], default=x).gather().tolist()
    [10, 2, 4, 3, 4]
    """
    func = "numpy.select"
    condlist, choicelist = _items(condlist), _items(choicelist)
    if len(condlist) != len(choicelist):
        raise ValueError(message(func, "list of cases must be same length as list of conditions",
                                 (len(condlist), len(choicelist)), "lists of one length"))
    if not condlist:
        raise ValueError(message(func, "select with an empty condition list is not possible", 0,
                                 "at least one condition"))
    like = first_darray(condlist, choicelist, default)
    if like is None:
        return _no_darray(func, np.select, condlist, choicelist, default)
    choices = [_operand(c) for c in [*choicelist, default]]
    try:
        dtype = np.result_type(*[_dtype_of(c) for c in choices])
    except TypeError as exc:
        raise TypeError(message(func, f"choicelist and default value do not have a common dtype ({exc})",
                                tuple(str(_dtype_of(c)) for c in choices))) from None
    conds = [c if isinstance(c, DArray) else np.asarray(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise TypeError(message(func, f"invalid entry {i} in condlist: should be boolean ndarray",
                                    c.dtype, "bool"))
    target, layout = align_target(func, [*conds, *choices])
    xp, device = target._xp, target.device
    local = [local_operand(func, c, layout, target) for c in conds]
    picks = [_cast(xp, local_operand(func, c, layout, target), dtype, device) for c in choices]
    out = picks[-1]
    for cond, pick in zip(reversed(local), reversed(picks[:-1])):
        out = xp.where(_cast(xp, cond, np.bool_, device), pick, out)
    return wrap_like(xp.broadcast_to(out, layout.block_shape(target._comm.rank)), layout, target)


@implements(np.choose)
@names_errors("numpy.choose")
def choose(a, choices, out=None, mode: str = "raise") -> DArray:
    """``choices[a[i]][i]`` for every index ``i`` of the broadcast shape (``numpy.choose``).

    ``mode``: ``'raise'`` (``ValueError`` for an entry of ``a`` outside
    ``[0, len(choices))``), ``'wrap'`` (modulo) or ``'clip'``. Elementwise on
    aligned blocks; ``'raise'`` agrees on the check with one small allgather.
    ``out``: a DArray of the result's shape receiving the result (cast).

    Examples
    --------
    >>> import darray as da
    >>> choose(da.asarray([0, 1, 2, 5]), [[1, 2, 3, 4], 10, [-1, -2, -3, -4]], mode="clip").gather().tolist()
    [1, 10, -3, -4]
    """
    func = "numpy.choose"
    if mode not in _MODES:
        raise ValueError(message(func, "clipmode must be one of 'clip', 'raise', or 'wrap'", repr(mode),
                                 "'raise', 'wrap' or 'clip'"))
    choices = _items(choices)
    if not choices:
        raise ValueError(message(func, "0-length sequence", 0, "at least one choice"))
    like = first_darray(a, choices, out)
    if like is None:
        return _no_darray(func, np.choose, a, choices, mode=mode)
    a = a if isinstance(a, DArray) else np.asarray(a)
    if not np.can_cast(a.dtype, np.intp, "safe"):
        raise TypeError(message(func, f"cannot cast array data from {a.dtype} to int64 according to the "
                                      "rule 'safe'", a.dtype, "an integer array"))
    choices = [_operand(c) for c in choices]
    try:
        dtype = np.result_type(*[_dtype_of(c) for c in choices])
    except TypeError as exc:
        raise TypeError(message(func, f"choices have no common dtype ({exc})", None)) from None
    target, layout = align_target(func, [a, *choices])
    if out is not None and (not isinstance(out, DArray) or out.shape != layout.shape):
        raise TypeError(message(func, "invalid shape for output array", _shape(out), f"a DArray of shape "
                                                                                     f"{layout.shape}"))
    xp, device, n = target._xp, target.device, len(choices)
    index = _cast(xp, local_operand(func, a, layout, target), np.int64, device)
    if mode == "raise":
        if isinstance(a, DArray):  # each rank checks its block; one small allgather of the verdicts
            bad = bool(agree(target._comm, not bool(xp.any((index < 0) | (index >= n)))))
        else:  # the whole index, held by every rank: the same verdict everywhere, no message
            bad = bool(a.size) and (int(a.min()) < 0 or int(a.max()) >= n)
        if bad:
            raise ValueError(message(func, "invalid entry in choice array", f"an entry outside [0, {n})",
                                     f"entries in [0, {n})"))
    elif mode == "wrap":
        index = index % n
    else:
        index = xp.clip(index, 0, n - 1)
    picks = [_cast(xp, local_operand(func, c, layout, target), dtype, device) for c in choices]
    shape = layout.block_shape(target._comm.rank)
    if is_numpy_namespace(xp):
        result = np.choose(np.broadcast_to(index, shape), [np.broadcast_to(p, shape) for p in picks])
    else:
        result = xp.broadcast_to(picks[0], shape)
        for k in range(1, n):
            result = xp.where(index == k, picks[k], result)
        result = xp.broadcast_to(result, shape)
    result = wrap_like(result, layout, target)
    if out is None:
        return result
    out[...] = result
    return out


# ---------------------------------------------------------------- compress, extract
def _compress_axis(func: str, cond: DArray, a: DArray, axis: int) -> DArray:
    """``a`` at the true entries of the 1-d boolean ``cond`` along ``axis`` (NumPy's length rules)."""
    n, m = a.shape[axis], cond.shape[0]
    if m > n:
        beyond = cond[n:]
        if bool(_any(beyond)):
            first = n + int(argmax(beyond))
            raise IndexError(message(func, f"index {first} is out of bounds for axis {axis} with size {n}", first,
                                     f"a condition with no true entry beyond {n}"))
        cond = cond[:n]
    lead = (slice(None),) * axis
    if m < n:
        a = a[lead + (slice(0, m),)]
    return a[lead + (cond,)]


@implements(np.compress)
@names_errors("numpy.compress")
def compress(condition, a, axis=None, out=None) -> DArray:
    """The slices of ``a`` along ``axis`` where the 1-d ``condition`` is true (``numpy.compress``).

    ``axis=None`` works on the flattened ``a``. A condition shorter than the
    axis selects from its first entries; a longer one must be false beyond it
    (``IndexError``). Each rank compresses its own rows (a DArray condition
    cut otherwise is redistributed to them).

    Examples
    --------
    >>> import darray as da
    >>> compress([True, False, True], da.asarray([[1, 2], [3, 4], [5, 6]]), axis=0).gather().tolist()
    [[1, 2], [5, 6]]
    """
    func = "numpy.compress"
    like = first_darray(condition, a, out)
    if like is None:
        return _no_darray(func, np.compress, condition, a, axis=axis)
    a = as_darray(func, a, like)
    cond = _bool(func, condition, like)
    if cond.ndim != 1:
        raise ValueError(message(func, "condition must be a 1-d array", cond.shape, "a 1-d array"))
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(message(func, "axis must be an integer or None", axis))
    if not -a.ndim <= axis < a.ndim:
        raise AxisError(message(func, f"axis {axis} is out of bounds for array of dimension {a.ndim}", axis,
                                f"an axis in [{-a.ndim}, {a.ndim})"))
    result = _compress_axis(func, cond, a, int(axis) % a.ndim)
    if out is None:
        return result
    if not isinstance(out, DArray) or out.shape != result.shape:
        raise ValueError(message(func, "out has the wrong shape", _shape(out), f"a DArray of shape {result.shape}"))
    out[...] = result
    return out


def ndarray_compress(a, condition, axis=None, out=None) -> DArray:
    """``ndarray.compress``: :func:`compress` with the array first (the method table's target).

    Examples
    --------
    >>> import darray as da
    >>> ndarray_compress(da.arange(4), [False, True, True]).gather().tolist()
    [1, 2]
    """
    return compress(condition, a, axis=axis, out=out)


@implements(np.extract)
@names_errors("numpy.extract")
def extract(condition, arr) -> DArray:
    """The elements of the flattened ``arr`` where the flattened ``condition`` is nonzero (``numpy.extract``).

    Examples
    --------
    >>> import darray as da
    >>> x = da.arange(6).reshape((2, 3))
    >>> extract(x % 2 == 0, x).gather().tolist()
    [0, 2, 4]
    """
    func = "numpy.extract"
    like = first_darray(condition, arr)
    if like is None:
        return _no_darray(func, np.extract, condition, arr)
    cond = reshape(_bool(func, condition, like), (-1,))
    return _compress_axis(func, cond, reshape(as_darray(func, arr, like), (-1,)), 0)


# ---------------------------------------------------------------- place, putmask, copyto
@implements(np.place)
@names_errors("numpy.place")
@writes_numpy_arrays(np.place)
def place(arr, mask, vals) -> None:
    """Set the cells of ``arr`` where ``mask`` is true to ``vals`` in turn, cycling them, in place (``numpy.place``).

    ``mask`` has ``arr``'s size (paired by flat position); the first
    ``count(mask)`` values are used, repeated if fewer. Every selected cell
    learns its ordinal from a distributed cumulative sum of the flattened
    mask. ``vals`` is held whole by every rank (a DArray there is allgathered),
    unless it is a DArray at least as long as the selection: then it is sent
    to the owners of the cells (``arr[mask] = vals[:count]``).

    Examples
    --------
    >>> import darray as da
    >>> a = da.arange(6)
    >>> place(a, a > 2, [40, 50])
    >>> a.gather().tolist()
    [0, 1, 2, 40, 50, 40]
    """
    func = "numpy.place"
    a = _target(func, arr, "arr")
    values = _values(func, vals, a)
    mask = _mask_like(func, mask, a)
    counts = cumulative_sum(astype(reshape(mask, (-1,)), np.int64))
    total = int(counts[-1]) if a.size else 0
    nv = values.size
    if total == 0:
        return
    if nv == 0:
        raise ValueError(message(func, "Cannot insert from an empty array!", 0, f"{total} values (or fewer, cycled)"))
    if isinstance(values, DArray):
        if nv >= total:
            a[mask] = reshape(values, (-1,))[:total]
            return
        values = to_numpy(values.gather())  # fewer than the cells: cycled, small by contract
    ordinal = _aligned(func, reshape(counts, a.shape), a)
    picked = _pick(a, values, (ordinal - 1) % nv)
    _store(a, a._xp.where(_aligned(func, mask, a), picked, a.local))


@implements(np.putmask)
@names_errors("numpy.putmask")
@writes_numpy_arrays(np.putmask)
def putmask(a, mask, values) -> None:
    """Set ``a.flat[i] = values.flat[i % values.size]`` where ``mask.flat[i]``, in place (``numpy.putmask``).

    ``values`` of ``a``'s size is aligned with ``a`` (redistributed if cut
    otherwise); shorter ``values`` are held whole by every rank (a DArray
    there is allgathered) and every rank fills its own cells from their flat
    positions. Arrays cast to ``a``'s dtype by the rule ``'safe'`` (else
    ``TypeError``), as in NumPy.

    Examples
    --------
    >>> import darray as da
    >>> a = da.arange(6).reshape((2, 3))
    >>> putmask(a, a > 2, [-1, -2])
    >>> a.gather().tolist()
    [[0, 1, 2], [-2, -1, -2]]
    """
    func = "numpy.putmask"
    a = _target(func, a, "a")
    values = _values(func, values, a)
    mask = _mask_like(func, mask, a)
    if values.size == 0 or a.size == 0:
        return
    if values.size == a.size:
        vals = values if values.shape == a.shape else (reshape(values, a.shape) if isinstance(values, DArray)
                                                      else values.reshape(a.shape))
        picked = _cast(a._xp, _aligned(func, vals, a), a.dtype, a.device)
    else:
        whole = to_numpy(values.gather()) if isinstance(values, DArray) else values  # short: cycled, held whole
        picked = _pick(a, whole, _flat_positions(a) % whole.size)
    _store(a, a._xp.where(_aligned(func, mask, a), picked, a.local))


@implements(np.copyto)
@names_errors("numpy.copyto")
@writes_numpy_arrays(np.copyto)
def copyto(dst, src, casting: str = "same_kind", where=True) -> None:
    """Copy ``src`` (broadcast) into ``dst`` where ``where`` is true, in place (``numpy.copyto``).

    ``casting`` is checked as NumPy does (``TypeError``). Elementwise on
    ``dst``'s blocks: a ``src`` or ``where`` cut otherwise is redistributed
    to them.

    Examples
    --------
    >>> import darray as da
    >>> a = da.zeros(4)
    >>> copyto(a, da.arange(4.0), where=da.asarray([True, False, True, False]))
    >>> a.gather().tolist()
    [0.0, 0.0, 2.0, 0.0]
    """
    func = "numpy.copyto"
    dst = _target(func, dst, "dst")
    if casting not in CASTINGS:
        raise ValueError(message(func, "casting must be one of 'no', 'equiv', 'safe', 'same_kind', 'unsafe'",
                                 repr(casting)))
    if type(src) in _SCALARS:
        try:  # NumPy's own rules for a Python scalar (weak: value-based, OverflowError out of range)
            np.copyto(np.empty((), dst.dtype), src, casting=casting)
        except (TypeError, ValueError, OverflowError) as exc:
            raise type(exc)(message(func, str(exc), src, f"a value that casts to {dst.dtype} by '{casting}'")) \
                from None
    else:
        src = _operand(src)
        if src.dtype.kind not in "biufc":
            raise TypeError(message(func, "unsupported source data", src.dtype, "booleans or numbers"))
        if not np.can_cast(src.dtype, dst.dtype, casting):
            raise TypeError(message(func, f"cannot cast array data from {src.dtype} to {dst.dtype} according to "
                                          f"the rule '{casting}'", src.dtype, f"a dtype that casts to {dst.dtype}"))
        _broadcasts(func, "input array", src.shape, dst.shape)
    if type(where) in _SCALARS:
        if not where:
            return
        where = None
    else:
        where = _operand(where)
        if not np.can_cast(where.dtype, np.bool_, "safe"):
            raise TypeError(message(func, f"cannot cast array data from {where.dtype} to bool according to the "
                                          "rule 'safe'", where.dtype, "a boolean mask"))
        _broadcasts(func, "where mask", where.shape, dst.shape)
    xp = dst._xp
    block = _cast(xp, _aligned(func, src, dst), dst.dtype, dst.device)
    if where is None:
        _store(dst, xp.broadcast_to(block, tuple(dst.local.shape)))
    else:
        _store(dst, xp.where(_aligned(func, where, dst), block, dst.local))


def _broadcasts(func: str, what: str, shape: tuple, into: tuple) -> None:
    try:
        ok = np.broadcast_shapes(tuple(shape), tuple(into)) == tuple(into)
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(message(func, f"could not broadcast {what} from shape {tuple(shape)} into shape "
                                       f"{tuple(into)}", tuple(shape), f"a shape broadcastable to {tuple(into)}"))


# ---------------------------------------------------------------- piecewise, fill_diagonal
@implements(np.piecewise)
@names_errors("numpy.piecewise")
def piecewise(x, condlist, funclist, *args, **kw) -> DArray:
    """``funclist[i]`` applied to ``x`` where ``condlist[i]`` holds (``numpy.piecewise``); zero elsewhere.

    One more function than conditions is the "otherwise" piece. A callable
    gets the DArray ``x[cond]`` (plus ``args``/``kw``) and returns values for
    ``y[cond]``; a non-callable is the value itself. Mask indexing moves only
    the selected cells. The result has ``x``'s dtype and layout.

    Examples
    --------
    >>> import darray as da
    >>> x = da.linspace(-2.0, 2.0, 5)
    >>> piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * 10]).gather().tolist()
    [2.0, 1.0, 0.0, 10.0, 20.0]
    """
    func = "numpy.piecewise"
    like = first_darray(x, condlist)
    x = as_darray(func, x, like)
    funclist = list(funclist)
    # NumPy's rule: a single condition is promoted to a list of one (a DArray is one condition)
    if isinstance(condlist, DArray) or np.isscalar(condlist) or (
            not isinstance(condlist[0], (list, np.ndarray, DArray)) and x.ndim != 0):
        condlist = [condlist]
    conds = [_bool(func, c, x) for c in _items(condlist)]
    if len({c.shape for c in conds}) > 1:
        raise ValueError(message(func, "the conditions have different shapes", tuple(c.shape for c in conds),
                                 "conditions of one shape"))
    n = len(conds)
    if n == len(funclist) - 1:
        rest = conds[0]
        for c in conds[1:]:
            rest = rest | c
        conds.append(~rest)
    elif n != len(funclist):
        raise ValueError(message(func, f"with {n} condition(s), either {n} or {n + 1} functions are expected",
                                 len(funclist), f"{n} or {n + 1} functions"))
    scalar = x.ndim == 0
    if scalar:  # as NumPy's x[cond] of a 0-d array: a selection of length 1 or 0
        x, conds = reshape(x, (1,)), [reshape(c, (1,)) for c in conds]
    y = zeros_like(x)
    for cond, f in zip(conds, funclist):
        if not callable(f):
            y[cond] = f
            continue
        vals = x[cond]
        if vals.size > 0:
            y[cond] = f(vals, *args, **kw)
    return reshape(y, ()) if scalar else y


@implements(np.fill_diagonal)
@names_errors("numpy.fill_diagonal")
@writes_numpy_arrays(np.fill_diagonal)
def fill_diagonal(a, val, wrap: bool = False) -> None:
    """Set the main diagonal of ``a`` to ``val`` (cycled), in place (``numpy.fill_diagonal``).

    ``a`` is at least 2-d, with all lengths equal beyond 2-d. ``wrap=True``
    continues the diagonal of a tall matrix below its first square, as NumPy
    does. Every rank fills the diagonal cells of its own block; ``val`` is
    held whole (a DArray there is allgathered).

    Examples
    --------
    >>> import darray as da
    >>> a = da.zeros((3, 3), dtype=da.int64)
    >>> fill_diagonal(a, [5, 6])
    >>> a.gather().tolist()
    [[5, 0, 0], [0, 6, 0], [0, 0, 5]]
    """
    func = "numpy.fill_diagonal"
    a = _target(func, a, "a")
    if a.ndim < 2:
        raise ValueError(message(func, "array must be at least 2-d", a.ndim, "an array of 2 or more dimensions"))
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = a.size if wrap else a.shape[1] * a.shape[1]
    else:
        if len(set(a.shape)) != 1:
            raise ValueError(message(func, "All dimensions of input must be of equal length", a.shape,
                                     "equal lengths"))
        step = 1 + int(np.cumprod(a.shape[:-1]).sum())
        end = a.size
    values = _values(func, val, a, casting="unsafe")
    values = to_numpy(values.gather()) if isinstance(values, DArray) else values  # the diagonal: held whole
    if values.size == 0 or a.size == 0:
        return
    flat = _flat_positions(a)
    on = (flat % step == 0) & (flat < end)
    _store(a, a._xp.where(on, _pick(a, values, (flat // step) % values.size), a.local))


# ---------------------------------------------------------------- lexsort, sort_complex
def _real_keys(k: DArray) -> list[DArray]:
    """Sort keys of ``k``, least significant first: complex as NumPy orders it (NaN class, real, imaginary);
    dates and durations with NaT last."""
    if k.dtype.kind in "Mm":
        return [time_keys(k)]
    if k.dtype.kind != "c":
        return [k]
    re, im = real(k), imag(k)
    nan_class = astype(isnan(re), np.int8) * 2 + astype(isnan(im), np.int8)
    return [im, re, nan_class]


def _local_lexsort(xp, blocks: list, axis: int):
    """``numpy.lexsort`` of local blocks: NumPy's own, else stable argsorts composed (bool as 0/1)."""
    if is_numpy_namespace(xp):
        return np.lexsort(blocks, axis=axis).astype(np.int64, copy=False)

    def key(b):
        return xp.astype(b, xp.uint8) if b.dtype == xp.bool else b

    index = xp.argsort(key(blocks[0]), axis=axis, stable=True)
    for b in blocks[1:]:
        order = xp.argsort(xp.take_along_axis(key(b), index, axis=axis), axis=axis, stable=True)
        index = xp.take_along_axis(index, order, axis=axis)
    return xp.astype(index, xp.int64)


def _lexsort(keys: list[DArray], axis: int) -> DArray:
    """Stable argsort by ``keys`` (last primary): local where ``axis`` is whole, else stable argsorts composed."""
    first = keys[0]
    if first._layout.axis_dim[axis] is None:  # lines along axis are whole on every rank: no message
        blocks = [_aligned("numpy.lexsort", k, first) for k in keys]
        return wrap_like(_local_lexsort(first._xp, blocks, axis), first._layout.without_halo(), first)
    index = argsort(keys[0], axis=axis, stable=True)
    for k in keys[1:]:
        order = argsort(take_along_axis(k, index, axis=axis), axis=axis, stable=True)
        index = take_along_axis(index, order, axis=axis)
    return index


@implements(np.lexsort)
@names_errors("numpy.lexsort")
def lexsort(keys, axis: int = -1) -> DArray:
    """Indices that sort by several keys along ``axis``, the last key primary (``numpy.lexsort``).

    ``keys``: a sequence of arrays of one shape, or an array whose first axis
    lists them. One stable distributed ``argsort`` per key (see
    :mod:`darray._api.sorting` for what moves) and ``take_along_axis`` to
    compose them. Complex keys order as NumPy's (NaNs last).

    Examples
    --------
    >>> import darray as da
    >>> lexsort([da.asarray([3, 1, 2, 0]), da.asarray([1, 0, 1, 0])]).gather().tolist()
    [3, 1, 2, 0]
    """
    func = "numpy.lexsort"
    like = first_darray(keys)
    if like is None:
        return _no_darray(func, np.lexsort, keys, axis=axis)
    items = _items(keys) if not isinstance(keys, DArray) or keys.ndim else []
    if not items:
        raise TypeError(message(func, "need sequence of keys with len > 0 in lexsort", _shape(keys),
                                "one key or more"))
    items = [as_darray(func, k, like) for k in items]
    if len({k.shape for k in items}) > 1:
        raise ValueError(message(func, "all keys need to be the same shape", tuple(k.shape for k in items),
                                 "keys of one shape"))
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(message(func, "axis must be an integer", axis))
    ndim = items[0].ndim
    if ndim == 0:
        return as_darray(func, np.int64(0), like)
    if not -ndim <= axis < ndim:
        raise AxisError(message(func, f"axis {axis} is out of bounds for array of dimension {ndim}", axis,
                                f"an axis in [{-ndim}, {ndim})"))
    for k in items:
        if k.dtype.kind not in "biufcMm":
            raise TypeError(message(func, "unsupported key dtype", k.dtype, "booleans, numbers, dates or durations"))
    return _lexsort([part for k in items for part in _real_keys(k)], int(axis) % ndim)


_COMPLEX64_FROM = frozenset("bhBH")  # NumPy's sort_complex: small integers become complex64, the rest complex128


@implements(np.sort_complex)
@names_errors("numpy.sort_complex")
def sort_complex(a) -> DArray:
    """``a`` sorted along its last axis, real part first, then imaginary, as a complex array (``numpy.sort_complex``).

    Examples
    --------
    >>> import darray as da
    >>> sort_complex(da.asarray([1 + 2j, 2 - 1j, 1 - 1j])).gather().tolist()
    [(1-1j), (1+2j), (2-1j)]
    """
    func = "numpy.sort_complex"
    if not isinstance(a, DArray):
        return _no_darray(func, np.sort_complex, a)
    if a.ndim == 0:
        raise AxisError(message(func, "cannot sort a 0-d array", a.shape, "an array of 1 or more dimensions"))
    if a.dtype.kind == "c":
        return take_along_axis(a, _lexsort(_real_keys(a), a.ndim - 1), axis=-1)
    if a.dtype.kind not in "biuf":
        raise TypeError(message(func, "unsupported dtype", a.dtype, "booleans or numbers"))
    dtype = np.complex64 if a.dtype.char in _COMPLEX64_FROM else np.complex128
    return astype(sort(a, axis=-1), dtype)
