"""NumPy's legacy polynomials, function application and a few more NumPy functions for DArrays (issue #15).

What moves, per function:

- ``polyval``: Horner's scheme on each block of ``x`` (one local
  ``numpy.polyval``), no communication; the coefficients are held whole by
  every rank (a distributed DArray there is allgathered).
- ``polyfit``: a tall-skinny QR. Each rank factors its rows of the weighted
  ``[vander(x) | y]`` (``numpy.linalg.qr``, ``R`` of at most
  ``(deg + 1 + K)**2`` values); one allgather of the ``R`` factors over the
  ranks that cut the rows; every rank then solves the small stacked system as
  ``numpy.polyfit`` does (``lstsq`` of the column-scaled Vandermonde matrix
  with ``rcond``). ``R``'s Gram matrix is the global one, so the solution, the
  singular values, the rank and the residuals are NumPy's, without squaring
  the condition number as the normal equations would.
- ``polyadd``, ``polysub``, ``polymul``, ``polydiv``, ``polyder``,
  ``polyint``, ``poly``, ``roots``: coefficient vectors are small. DArray
  arguments are gathered whole on every rank, NumPy computes, the result is
  a replicated DArray (``poly`` of a square matrix and ``roots`` solve a small
  eigenvalue problem on every rank). :class:`poly1d` is NumPy's class; DArray
  coefficients are gathered, and evaluating it at a DArray is ``polyval``.
- ``vectorize``: the Python function on every element of each block (a local
  ``numpy.vectorize``); the output dtypes (and new core dimensions) come from
  one call on the global first element, fetched from its owner, as NumPy
  takes them from the first element.
- ``apply_along_axis``: local when ``axis`` is not cut; otherwise the array is
  redistributed once so that the axis is whole (cut along the longest other
  axis); the first 1-d slice is fetched to fix the result's shape and dtype.
  ``apply_over_axes``: the function's own communication.
- ``kron``: an outer product with interleaved axes and a reshape that stays
  local: the result is cut like ``a``; ``b`` (the small factor, usually) is
  held whole by every rank.
- ``unwrap``: ``diff``, elementwise corrections and ``cumsum`` along the axis
  (one halo cell and one scan exchange when the axis is cut).
- ``i0``, ``kaiser``: elementwise / a distributed window, no communication.
- ``emath``: NumPy's ``numpy.emath`` functions; one allreduce of a flag says
  whether any element on any rank is out of the real domain (then the whole
  array is complex, as NumPy's), then elementwise.

A Python function that raises on some rank makes every rank raise (its
verdict is agreed with one small allgather).

Examples
--------
>>> import darray as da
>>> x = da.linspace(0.0, 1.0, 5)
>>> [round(float(c), 6) + 0.0 for c in da.polyfit(x, 2 * x ** 2 + 1, 2).gather()]
[2.0, 0.0, 1.0]
>>> da.polyval([1.0, 0.0, -1.0], da.asarray([0.0, 2.0])).gather().tolist()
[-1.0, 3.0]
"""

from __future__ import annotations

import inspect
import numbers
import types
import warnings
from collections.abc import Callable

import numpy as np

import darray as _da

from .._backend import from_numpy, to_numpy
from .._comm.base import agree
from .._core import DArray, local_operand, redistribute_to, target_layout, wrap_like
from .._core.elementwise import _expand
from .._core.protocols import implements
from .._errors import AxisError, message, names_errors
from .._layout import Layout
from .creation import as_darray, asarray
from .manipulation import expand_dims, reshape
from .numpy_creation import _window
from .numpy_functions import _blocks, _darray
from ._common import first_darray

__all__ = ["apply_along_axis", "apply_over_axes", "emath", "i0", "kaiser", "kron", "poly", "poly1d", "polyadd",
           "polyder", "polydiv", "polyfit", "polyint", "polymul", "polysub", "polyval", "roots", "unwrap",
           "vectorize"]


# ---------------------------------------------------------------- helpers
def _whole(x):
    """A small argument held whole by every rank: a DArray's values (allgathered if distributed), else ``x``."""
    if isinstance(x, DArray):
        return to_numpy(x.local if x.layout.is_replicated else x.gather())
    return x


def _replicated(value, like: DArray | None):
    """A small NumPy result as a DArray held by every rank of ``like`` (a ``poly1d`` or Python number as it is)."""
    if isinstance(value, np.poly1d) or not isinstance(value, (np.ndarray, np.generic)):
        return value
    value = np.asarray(value)
    if like is None:
        return asarray(value, split=None)
    return asarray(value, split=None, comm=like.comm, device=like.device)


def _agreed(comm, func: str, call: Callable):
    """``call()`` on this rank; if it raises on any rank, every rank raises (the failing ones their own error)."""
    try:
        result, error = call(), None
    except Exception as exc:  # noqa: BLE001 - the user's function may raise anything; re-raised below
        result, error = None, exc
    failed = agree(comm, error is None)
    if error is not None:
        raise error
    if failed:
        raise ValueError(message(func, "the function raised on other ranks", failed, "no error on any rank"))
    return result


def _plain(layout: Layout) -> Layout:
    return layout.replace(halo=(0,) * layout.ndim, boundary=("none",) * layout.ndim)


def _with_axes(layout: Layout, at: int, remove: int, lengths: tuple[int, ...]) -> Layout:
    """``layout`` with ``remove`` uncut axes at ``at`` replaced by uncut axes of ``lengths`` (no halo)."""
    shift = len(lengths) - remove
    shape = layout.shape[:at] + tuple(lengths) + layout.shape[at + remove:]
    sizes = layout.sizes[:at] + tuple((n,) for n in lengths) + layout.sizes[at + remove:]
    split = tuple(s if s is None or s < at else s + shift for s in layout.split)
    return Layout(shape, layout.dims, split, sizes, (0,) * len(shape), ("none",) * len(shape))


def _first(x, index: tuple) -> np.ndarray:
    """``x[index]`` (a few cells) as a NumPy array on every rank: fetched from their owner for a DArray."""
    if isinstance(x, DArray):
        return np.asarray(to_numpy(x[index].gather()))
    return np.asarray(x)[index]


# ---------------------------------------------------------------- small polynomial functions
_SMALL = {  # name: example (the function gathers its DArray arguments, NumPy computes, the result is replicated)
    "polyadd": ">>> da.polyadd(da.asarray([1, 2]), [1, 0, 0]).gather().tolist()\n[1, 1, 2]",
    "polysub": ">>> da.polysub(da.asarray([1, 2]), [1, 0, 0]).gather().tolist()\n[-1, 1, 2]",
    "polymul": ">>> da.polymul(da.asarray([1, 1]), [1, -1]).gather().tolist()\n[1, 0, -1]",
    "polydiv": ">>> [q.gather().tolist() for q in da.polydiv(da.asarray([1.0, 0.0, -1.0]), [1.0, 1.0])]\n"
               "[[1.0, -1.0], [0.0]]",
    "polyder": ">>> da.polyder(da.asarray([1, 1, 1]), 1).gather().tolist()\n[2, 1]",
    "polyint": ">>> da.polyint(da.asarray([3.0, 0.0]), k=1.0).gather().tolist()\n[1.5, 0.0, 1.0]",
    "poly": ">>> da.poly(da.asarray([1.0, -1.0])).gather().tolist()\n[1.0, 0.0, -1.0]",
    "roots": ">>> sorted(round(r, 9) for r in da.roots(da.asarray([1.0, 0.0, -4.0])).gather().tolist())\n[-2.0, 2.0]",
}


def _small_function(name: str, example: str) -> Callable:
    numpy_function = getattr(np, name)

    @names_errors(f"numpy.{name}")
    def function(*args, **kwargs):
        like = first_darray(*args, *kwargs.values())
        result = numpy_function(*(_whole(a) for a in args), **{k: _whole(v) for k, v in kwargs.items()})
        if isinstance(result, tuple):
            return tuple(_replicated(r, like) for r in result)
        return _replicated(result, like)

    function.__name__ = function.__qualname__ = name
    function.__module__ = __name__
    function.__signature__ = inspect.signature(numpy_function)
    summary = (numpy_function.__doc__ or "").strip().splitlines()[0].rstrip(".")
    function.__doc__ = (f"{summary} (``numpy.{name}``).\n\n    Coefficient vectors are small: DArray arguments are "
                        f"gathered whole on every\n    rank, NumPy computes, and an array result is a replicated "
                        f"DArray (a\n    ``poly1d`` argument gives a ``poly1d``, as NumPy).\n\n    Examples\n    "
                        f"--------\n    >>> import darray as da\n    " + example.replace("\n", "\n    ") + "\n    ")
    return implements(numpy_function)(function)


for _name, _example in _SMALL.items():
    globals()[_name] = _small_function(_name, _example)
del _name, _example


class poly1d(np.poly1d):
    """NumPy's one-dimensional polynomial class (``numpy.poly1d``); DArray coefficients or roots are gathered.

    The coefficients are held whole by every rank. Evaluating at a DArray is
    :func:`polyval` (blockwise, no communication); arithmetic returns NumPy's
    ``poly1d``.

    Examples
    --------
    >>> import darray as da
    >>> p = da.poly1d(da.asarray([1.0, 0.0, 2.0]))
    >>> p(da.asarray([0.0, 1.0, 2.0])).gather().tolist()
    [2.0, 3.0, 6.0]
    """

    def __init__(self, c_or_r, r: bool = False, variable=None):
        super().__init__(_whole(c_or_r), r=r, variable=variable)


@implements(np.polyval)
def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x`` (``numpy.polyval``).

    Horner's scheme on each block of ``x``: one local ``numpy.polyval``, no
    communication; ``p`` (small) is held whole by every rank. ``x`` a
    ``poly1d`` composes polynomials, as NumPy.

    Examples
    --------
    >>> import darray as da
    >>> polyval(da.asarray([3.0, 0.0, 1.0]), da.asarray([5.0, 1.0])).gather().tolist()
    [76.0, 4.0]
    """
    like = first_darray(p, x)
    p = _whole(p)
    if isinstance(x, np.poly1d) or isinstance(p, np.poly1d):
        return _replicated(np.polyval(p, _whole(x)), like)
    p = np.asarray(p)
    if p.ndim != 1:
        raise (TypeError if p.ndim == 0 else ValueError)(message(
            "numpy.polyval", "p must be a 1-d vector of coefficients", p.shape, "a 1-d array"))
    x = _darray("polyval", x, like)
    return _blocks("polyval", lambda block: np.polyval(p, block), x)


def _fit_rows(func: str, x: DArray, y: DArray, w: DArray | None) -> Layout:
    """The 1-d row layout of the fit: cut like the operand whose rows are cut by the most ranks."""
    def parts(a: DArray) -> int:
        g = a.layout.axis_dim[0]
        return a.layout.dims[g] if g is not None else 1

    base = max((a for a in (x, y, w) if a is not None), key=parts)
    lay = base.layout
    split = tuple(s if s == 0 else None for s in lay.split)
    return Layout((x.shape[0],), lay.dims, split, (lay.sizes[0],), (0,), ("none",))


def _fit_checks(func: str, x: DArray, y: DArray, deg, w):
    try:
        order = int(deg) + 1
    except (TypeError, ValueError):
        raise TypeError(message(func, "deg must be an integer", deg)) from None
    if order < 1:
        raise ValueError(message(func, "expected deg >= 0", deg))
    if x.ndim != 1:
        raise TypeError(message(func, "expected 1D vector for x", x.shape))
    if x.size == 0:
        raise TypeError(message(func, "expected non-empty vector for x", x.shape))
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError(message(func, "expected 1D or 2D array for y", y.shape))
    if x.shape[0] != y.shape[0]:
        raise TypeError(message(func, "expected x and y to have same length", (x.shape, y.shape)))
    if x.dtype.kind == "c":
        raise TypeError(message(func, "complex x is not supported", x.dtype, "real x (y may be complex)"))
    if w is not None:
        if w.ndim != 1:
            raise TypeError(message(func, "expected a 1-d array for weights", w.shape))
        if w.shape[0] != y.shape[0]:
            raise TypeError(message(func, "expected w and y to have the same length", (w.shape, y.shape)))
    return order


@implements(np.polyfit)
def polyfit(x, y, deg, rcond=None, full: bool = False, w=None, cov=False):
    """Least-squares polynomial fit of degree ``deg`` (``numpy.polyfit``), distributed over the samples.

    NumPy solves ``lstsq(V / scale, y, rcond)`` for the Vandermonde matrix
    ``V = vander(x, deg + 1)`` (rows weighted by ``w``) with column scales
    ``scale = sqrt(sum(V**2, axis=0))``. Here every rank QR-factors its rows of
    ``[V | y]``, one allgather brings the small ``R`` factors (at most
    ``(deg + 1 + K)**2`` values per rank, ``K`` columns of ``y``) to every
    rank, and the same scaled ``lstsq`` runs on the stacked factors: they have
    ``[V | y]``'s Gram matrix, so the coefficients, singular values, rank and
    residuals are NumPy's (to rounding) without forming the normal equations.
    Results are replicated DArrays (``rank`` an int, ``rcond`` a float).
    Complex ``x`` is refused (``TypeError``); complex ``y`` is fitted.

    Examples
    --------
    >>> import darray as da
    >>> x = da.arange(6.0)
    >>> [round(float(c), 6) for c in polyfit(x, 3.0 * x - 1.0, 1)]
    [3.0, -1.0]
    """
    func = "numpy.polyfit"
    like = first_darray(x, y, w)
    x, y = _darray("polyfit", x, like), _darray("polyfit", y, like)
    w = None if w is None else _darray("polyfit", w, like)
    order = _fit_checks(func, x, y, deg, w)
    xdt = np.result_type(x.dtype, 0.0)
    dtype = np.result_type(np.promote_types(xdt, np.int64), y.dtype, 0.0)  # numpy.vander promotes with int
    n = x.shape[0]
    rcond = n * np.finfo(xdt).eps if rcond is None else rcond
    rows = _fit_rows(func, x, y, w)
    k = order + (y.shape[1] if y.ndim == 2 else 1)
    xl = to_numpy(local_operand(func, x, rows, x)).astype(xdt)
    y_rows = rows if y.ndim == 1 else _with_axes(rows, 1, 0, (y.shape[1],))
    yl = to_numpy(local_operand(func, y, y_rows, y)).reshape(xl.shape[0], k - order)
    block = np.concatenate([np.vander(xl, order), yl], axis=1).astype(dtype)
    if w is not None:
        block *= to_numpy(local_operand(func, w, rows, w)).astype(xdt)[:, None]
    r = np.zeros((k, k), dtype)
    if block.shape[0]:
        factor = np.linalg.qr(block, mode="r")
        r[:factor.shape[0]] = factor
    cut = tuple(s == 0 for s in rows.split)
    comm = x.comm.sub(rows.dims, cut) if any(cut) else None
    stacked = np.asarray(comm.allgather(r)).reshape(-1, k) if comm is not None else r
    return _fit_solve(func, stacked, order, n, y.ndim, rcond, full, cov, like)


def _fit_solve(func, stacked, order, n, y_ndim, rcond, full, cov, like):
    """NumPy's scaled lstsq on the stacked R factors; NumPy's return values."""
    lhs, rhs = stacked[:, :order], stacked[:, order:]
    scale = np.sqrt(np.sum(np.abs(lhs) ** 2, axis=0))
    lhs = lhs / scale
    c, _, rank, s = np.linalg.lstsq(lhs, rhs, rcond)
    if rank == order and n > order:
        resids = np.sum(np.abs(rhs - lhs @ c) ** 2, axis=0)
    else:
        resids = np.zeros(0, dtype=s.dtype)
    c = (c.T / scale).T
    if y_ndim == 1:
        c = c[:, 0]
    if rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning, stacklevel=3)
    if full:
        return (_replicated(c, like), _replicated(resids, like), int(rank), _replicated(s, like), rcond)
    if not cov:
        return _replicated(c, like)
    base = np.linalg.inv(lhs.T @ lhs) / np.outer(scale, scale)
    if cov == "unscaled":
        fac = 1
    else:
        if n <= order:
            raise ValueError(message(func, "the number of data points must exceed order to scale the covariance "
                                     "matrix", n, f"more than {order}"))
        fac = resids / (n - order)
    covariance = base * fac if y_ndim == 1 else base[:, :, None] * fac
    return _replicated(c, like), _replicated(covariance, like)


# ---------------------------------------------------------------- vectorize
class vectorize:
    """``numpy.vectorize`` for DArrays: the Python function on every element of each block, locally.

    Called with no DArray among its (non-excluded) arguments it is NumPy's
    ``vectorize``. With DArrays, the arguments are aligned (broadcast) as for
    an elementwise function and each rank runs ``numpy.vectorize`` on its
    blocks; NumPy arrays and scalars are sliced to the same blocks. Without
    ``otypes`` the output dtypes come from one call on the global first
    elements (fetched from their owner: one small message), as NumPy's come
    from the first element, so every rank agrees (the function is called once
    more on them, on every rank). One small allgather per call agrees on
    errors (the function raising on one rank raises on all). ``excluded`` arguments are passed as they
    are. ``signature``: the core dimensions of DArray arguments must not be cut
    across ranks (``ValueError`` otherwise: redistribute first); new output
    core dimensions take their lengths from the first call. The outputs must
    be booleans or numbers (a DArray holds nothing else). ``cache`` is
    accepted and has no effect.

    Examples
    --------
    >>> import darray as da
    >>> clip = da.vectorize(lambda a, b: a - b if a > b else a + b)
    >>> clip(da.asarray([1, 4, 2]), 2).gather().tolist()
    [3, 2, 4]
    """

    def __init__(self, pyfunc=np._NoValue, otypes=None, doc=None, excluded=None, cache: bool = False,
                 signature=None):
        self._settings = dict(otypes=otypes, doc=doc, excluded=excluded, cache=cache, signature=signature)
        self._numpy = None
        if pyfunc is not np._NoValue:
            self._setup(pyfunc)

    def _setup(self, pyfunc) -> None:
        try:
            self._numpy = np.vectorize(pyfunc, **self._settings)  # NumPy's validation and attributes
        except (TypeError, ValueError) as error:  # NumPy's type, with the function named
            raise type(error)(message("numpy.vectorize", str(error), self._settings["signature"])) from None
        self.pyfunc = pyfunc
        self.__doc__ = self._numpy.__doc__
        self.otypes, self.excluded = self._numpy.otypes, self._numpy.excluded
        self.signature, self.cache = self._numpy.signature, self._numpy.cache

    def __call__(self, *args, **kwargs):
        if self._numpy is None:  # @vectorize(otypes=...) as a decorator
            self._setup(*args, **kwargs)
            return self
        excluded = self.excluded
        inds = [i for i in range(len(args)) if i not in excluded]
        names = [k for k in kwargs if k not in excluded]
        vargs = [args[i] for i in inds] + [kwargs[k] for k in names]
        like = first_darray(*vargs)
        if like is None:
            return self._numpy(*args, **kwargs)
        the_args, the_kwargs = list(args), dict(kwargs)

        def func(*values):
            for j, i in enumerate(inds):
                the_args[i] = values[j]
            the_kwargs.update(zip(names, values[len(inds):]))
            return self.pyfunc(*the_args, **the_kwargs)

        return _vectorized(self, func, vargs, like)


def _core_dims(vec: vectorize, nargs: int):
    if vec.signature is None:
        return [()] * nargs, None
    ins, outs = vec._numpy._in_and_out_core_dims
    if len(ins) != nargs:
        raise TypeError(message("numpy.vectorize", "wrong number of positional arguments", nargs,
                                f"{len(ins)} (signature {vec.signature!r})"))
    return ins, outs


def _vectorized(vec: vectorize, func: Callable, vargs: list, like: DArray):
    name = "numpy.vectorize"
    ins, outs = _core_dims(vec, len(vargs))
    vargs = [a if isinstance(a, DArray) else np.asarray(a) for a in vargs]
    sizes: dict = {}
    for a, core in zip(vargs, ins):
        if a.ndim < len(core):
            raise ValueError(message(name, "argument has fewer dimensions than its core dimensions", a.shape,
                                     f"at least {len(core)} ({core})"))
        for d, n in zip(core, a.shape[a.ndim - len(core):]):
            if sizes.setdefault(d, n) != n:
                raise ValueError(message(name, f"inconsistent size for core dimension {d!r}", n, sizes[d]))
        if isinstance(a, DArray) and any(a.layout.axis_dim[i] is not None for i in range(a.ndim - len(core), a.ndim)):
            raise ValueError(message(name, "a core dimension is cut across ranks", a.layout.split,
                                     "core dimensions whole on every rank (redistribute first: "
                                     "darray.asarray(x, split=<a loop axis>))"))
    loops = [tuple(a.shape[:a.ndim - len(core)]) for a, core in zip(vargs, ins)]
    try:
        loop_shape = np.broadcast_shapes(*loops)
    except ValueError:
        raise ValueError(message(name, "arguments cannot be broadcast together", tuple(loops))) from None
    otypes = [np.dtype(t) for t in vec.otypes] if vec.otypes else None
    new_dims = [d for core in (outs or ()) for d in core if d not in sizes]
    if otypes is None or new_dims:
        empty = any(a.size == 0 for a in vargs) if outs is None else 0 in loop_shape
        if empty:
            raise ValueError(message(name, "cannot call vectorize on size 0 inputs unless otypes is set (and the "
                                     "signature adds no output dimensions)", loop_shape))
        firsts = [_first(a, (0,) * len(loop)) for a, loop in zip(vargs, loops)]
        if outs is None:
            firsts = [f[()] for f in firsts]
        results = _agreed(like.comm, name, lambda: func(*firsts))
        results = results if isinstance(results, tuple) else (results,)
        nout = len(outs) if outs is not None else (len(otypes) if otypes else len(results))
        if len(results) != nout:
            raise ValueError(message(name, "wrong number of outputs from the function", len(results), nout))
        if otypes is None:
            otypes = [np.asarray(r).dtype for r in results]
        for r, core in zip(results, outs or ()):
            r = np.asarray(r)
            for d, n in zip(core, r.shape[r.ndim - len(core):]):
                sizes.setdefault(d, n)
    bad = [t for t in otypes if t.kind not in "biufc"]
    if bad:
        raise TypeError(message(name, "the function's outputs must be booleans or numbers in a DArray", bad[0]))
    return _run_blocks(vec, func, vargs, loops, loop_shape, ins, outs, otypes, sizes, like)


def _run_blocks(vec, func, vargs, loops, loop_shape, ins, outs, otypes, sizes, like):
    """Each rank runs numpy.vectorize on its aligned blocks; the outputs are cut like the loop dimensions."""
    darrays = [(a, loop) for a, loop in zip(vargs, loops) if isinstance(a, DArray)]
    target, loop_t = max(darrays, key=lambda al: (not al[0].layout.is_replicated, int(np.prod(al[1]))))
    lay = target.layout
    base = Layout(loop_t, lay.dims, lay.split, lay.sizes[:len(loop_t)], (0,) * len(loop_t), ("none",) * len(loop_t))
    out_loop = base if loop_t == loop_shape else _expand(base, loop_shape)
    rank = like.comm.rank
    blocks = []
    for a, loop, core in zip(vargs, loops, ins):
        want = _with_axes(out_loop.broadcast_layout(loop), len(loop), 0, a.shape[len(loop):])
        if isinstance(a, DArray):
            blocks.append(to_numpy(redistribute_to(a, want).local if a.layout.blocks_key != want.blocks_key
                                   else a.local))
        else:
            blocks.append(a[want.block_slices(rank)])
    out_cores = [tuple(sizes[d] for d in core) for core in outs] if outs is not None else [()] * len(otypes)
    mine = out_loop.block_shape(rank)

    def run():
        if 0 in mine:
            return tuple(np.empty(mine + core, t) for core, t in zip(out_cores, otypes))
        local = np.vectorize(func, otypes=otypes, signature=vec.signature)(*blocks)
        local = local if isinstance(local, tuple) else (local,)
        if len(local) != len(otypes) or any(r.shape != mine + c for r, c in zip(local, out_cores)):
            raise ValueError(message("numpy.vectorize", "the function's outputs differ in number or shape from "
                                     "its first call's", [np.shape(r) for r in local]))
        return local

    local = _agreed(like.comm, "numpy.vectorize", run)
    results = tuple(wrap_like(from_numpy(target._xp, np.asarray(r, order="C"), device=target.device),
                              _with_axes(out_loop, len(loop_shape), 0, core), target)
                    for r, core in zip(local, out_cores))
    return results[0] if len(results) == 1 else results


# ---------------------------------------------------------------- applying functions along axes
def _axis(func: str, axis, ndim: int) -> int:
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(message(func, "axis must be an integer", axis))
    if not -ndim <= axis < ndim:
        raise AxisError(message(func, "axis out of bounds", axis, f"an axis in [{-ndim}, {ndim})"))
    return int(axis) % ndim


@implements(np.apply_along_axis)
def apply_along_axis(func1d: Callable, axis, arr, *args, **kwargs) -> DArray:
    """``func1d`` on every 1-d slice of ``arr`` along ``axis`` (``numpy.apply_along_axis``).

    Local when ``axis`` is not cut across ranks; otherwise ``arr`` is
    redistributed once so that it is whole (cut along its longest other axis;
    a 1-d ``arr`` is allgathered: ``func1d`` needs all of it). The first slice
    is fetched by every rank and ``func1d`` called on it to fix the result's
    shape and dtype, as NumPy does (so it runs once more per rank). The
    result's new axes (``func1d``'s output shape) replace ``axis`` and are not
    cut; the other axes keep the layout used. ``func1d`` must return booleans
    or numbers.

    Examples
    --------
    >>> import darray as da
    >>> m = da.asarray([[3, 1, 2], [9, 7, 8]])
    >>> apply_along_axis(sorted, 1, m).gather().tolist()
    [[1, 2, 3], [7, 8, 9]]
    """
    func = "numpy.apply_along_axis"
    arr = as_darray(func, arr)
    axis = _axis(func, axis, arr.ndim)
    if any(n == 0 for d, n in enumerate(arr.shape) if d != axis):
        raise ValueError(message(func, "cannot apply_along_axis when any iteration dimensions are 0", arr.shape))
    first = tuple(slice(None) if d == axis else 0 for d in range(arr.ndim))
    res0 = np.asanyarray(_agreed(arr.comm, func, lambda: func1d(_first(arr, first), *args, **kwargs)))
    if res0.dtype.kind not in "biufc":
        raise TypeError(message(func, "func1d must return booleans or numbers", res0.dtype))
    layout = _plain(arr.layout)
    if layout.axis_dim[axis] is not None:
        others = [d for d in range(arr.ndim) if d != axis]
        split = max(others, key=lambda d: arr.shape[d]) if others else None
        layout = target_layout(arr, func, split=split, halo=0, boundary="none")
    x = redistribute_to(arr, layout) if layout.blocks_key != arr.layout.blocks_key else arr
    block = np.moveaxis(to_numpy(x.local), axis, -1)
    nloop = block.ndim - 1

    def run():
        buff = np.empty(block.shape[:-1] + res0.shape, res0.dtype)
        for ind in np.ndindex(block.shape[:-1]):
            buff[ind] = np.asanyarray(func1d(block[ind], *args, **kwargs))
        return np.moveaxis(buff, list(range(nloop, buff.ndim)), list(range(axis, axis + res0.ndim)))

    local = _agreed(arr.comm, func, run)
    out = _with_axes(layout, axis, 1, res0.shape)
    return wrap_like(from_numpy(arr._xp, np.asarray(local, order="C"), device=arr.device), out, arr)


@implements(np.apply_over_axes)
def apply_over_axes(func: Callable, a, axes) -> DArray:
    """``func(a, axis)`` over each of ``axes`` in turn, keeping the dimensions (``numpy.apply_over_axes``).

    ``func`` is called with the DArray (``darray.sum``, ``numpy.sum``, ...):
    its own communication is all there is.

    Examples
    --------
    >>> import darray as da
    >>> apply_over_axes(da.sum, da.ones((2, 3)), [0, 1]).gather().tolist()
    [[6.0]]
    """
    name = "numpy.apply_over_axes"
    val = as_darray(name, a)
    n = val.ndim
    for axis in (axes,) if np.ndim(axes) == 0 else axes:
        axis = _axis(name, axis, n)
        res = func(val, axis)
        if getattr(res, "ndim", None) == val.ndim:
            val = res
            continue
        res = expand_dims(as_darray(name, res, val), axis=axis)
        if res.ndim != val.ndim:
            raise ValueError(message(name, "function is not returning an array of the correct shape", res.shape,
                                     f"{val.ndim} dimensions"))
        val = res
    return val


# ---------------------------------------------------------------- kron, unwrap, i0, kaiser
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
    a, b = _darray("kron", a, like), _darray("kron", b, like)
    if a.dtype == np.bool_ and b.dtype == np.bool_:  # NumPy's product of booleans is their AND
        a, b = _da.astype(a, np.uint8), _da.astype(b, np.uint8)
        return _da.astype(_kron(a, b), np.bool_)
    dtype = np.result_type(a.dtype, b.dtype)  # one dtype first: standard libraries do not mix kinds
    return _kron(_da.astype(a, dtype, copy=False), _da.astype(b, dtype, copy=False))


def _kron(a: DArray, b: DArray) -> DArray:
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    nd = max(a.ndim, b.ndim)
    as_, bs = (1,) * (nd - a.ndim) + a.shape, (1,) * (nd - b.ndim) + b.shape
    a_arr = reshape(a, tuple(n for m in as_ for n in (m, 1)))
    b_arr = reshape(b, tuple(n for m in bs for n in (1, m)))
    return reshape(a_arr * b_arr, tuple(m * n for m, n in zip(as_, bs)))


@implements(np.unwrap)
def unwrap(p, discont=None, axis: int = -1, *, period=2 * np.pi) -> DArray:
    """Unwrap ``p`` by taking the complement of large deltas modulo ``period`` along ``axis`` (``numpy.unwrap``).

    NumPy's algorithm on darray's distributed pieces: ``diff`` (a halo cell
    when the axis is cut), elementwise corrections, ``cumsum`` (one scan
    exchange when cut).

    Examples
    --------
    >>> import darray as da
    >>> unwrap(da.asarray([0.0, 3.0, 6.5])).gather().tolist()[-1] < 1.0
    True
    """
    func = "numpy.unwrap"
    p = as_darray(func, p)
    if p.ndim == 0:
        raise AxisError(message(func, "axis out of bounds for a 0-d array", axis))
    axis = _axis(func, axis, p.ndim)
    if p.dtype.kind not in "biuf":
        raise TypeError(message(func, "unsupported dtype", p.dtype, "booleans, integers or floats"))
    dd = _da.diff(p, axis=axis)
    discont = period / 2 if discont is None else discont
    dtype = np.result_type(dd.dtype, period)
    dd = _da.astype(dd, dtype, copy=False)  # NumPy's arithmetic below runs in dtype
    if np.issubdtype(dtype, np.integer):
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    ddmod = _da.remainder(dd + high, period) - high
    if ambiguous:
        ddmod = _da.where((ddmod == -high) & (dd > 0), _da.astype(_da.asarray(high, comm=p.comm), ddmod.dtype),
                          ddmod)
    correct = ddmod - dd
    size = _da.abs(dd)
    size = _da.astype(size, np.result_type(size.dtype, discont), copy=False)
    correct = _da.where(size < discont, _da.zeros_like(correct), correct)
    up = _da.astype(p, dtype, copy=True)
    cut = (slice(None),) * axis + (slice(1, None),)
    if p.shape[axis] > 1:
        up[cut] = _da.astype(up[cut] + np.cumsum(correct, axis=axis), dtype, copy=False)
    return up


@implements(np.i0)
def i0(x) -> DArray:
    """The modified Bessel function of the first kind, order 0 (``numpy.i0``), elementwise, no communication.

    Examples
    --------
    >>> import darray as da
    >>> i0(da.asarray([0.0])).gather().tolist()
    [1.0]
    """
    x = as_darray("numpy.i0", x)
    if x.dtype.kind not in "biuf":
        raise TypeError(message("numpy.i0", "i0 not supported for complex values" if x.dtype.kind == "c"
                                else "unsupported dtype", x.dtype, "real numbers"))
    return _blocks("i0", np.i0, x)


def kaiser(M, beta) -> DArray:  # noqa: N803 - NumPy's name
    """The Kaiser window of length ``M`` and shape ``beta`` (``numpy.kaiser``), distributed like ``arange(M)``.

    ``i0(beta * sqrt(1 - t**2)) / i0(beta)`` at ``t = (2n - M + 1) / (M - 1)``,
    elementwise on each block.

    Examples
    --------
    >>> import darray as da
    >>> [round(v, 6) for v in kaiser(3, 0.0).gather().tolist()]
    [1.0, 1.0, 1.0]
    """
    if isinstance(beta, bool) or not isinstance(beta, (numbers.Real, np.floating, np.integer)):
        raise TypeError(message("kaiser", "beta must be a real number", beta))
    norm = float(np.i0(float(beta)))
    return _window("kaiser", M, lambda t: i0(float(beta) * _da.sqrt(_da.maximum(1.0 - t * t, 0.0))) / norm)


# ---------------------------------------------------------------- numpy.emath
def _to_complex(x: DArray) -> DArray:
    small = x.dtype in (np.float32, np.int8, np.int16, np.uint8, np.uint16, np.complex64)
    return _da.astype(x, np.complex64 if small else np.complex128)


def _any(x: DArray) -> bool:
    return bool(_da.any(x))  # one allreduce of a flag (nothing when x is replicated)


def _fix(func: str, x, out_of_domain: Callable[[DArray], DArray], like=None, ufunc=None) -> DArray:
    """``x`` as a DArray, complex if any real element anywhere is out of the real domain (NumPy's rule).

    Else, for ``ufunc``, in the floating dtype NumPy's loop takes (``float32`` for ``int16``, as ``numpy.sqrt``;
    ``float32`` for 8-bit integers, where NumPy's is ``float16``, which darray lacks).
    """
    x = as_darray(func, x, like)
    if x.dtype.kind == "c":
        return x
    if _any(out_of_domain(x)):
        return _to_complex(x)
    loop = x.dtype if ufunc is None else ufunc.resolve_dtypes((x.dtype, None))[0]
    loop = np.dtype(np.float32) if loop == np.float16 else loop  # darray has no float16 (NumPy's for int8)
    return x if loop == x.dtype else _da.astype(x, loop)


def _negative(x: DArray) -> DArray:
    return x < 0


def _beyond_one(x: DArray) -> DArray:
    return _da.abs(x) > 1


def _emath_unary(name: str, darray_name: str, check: Callable, example: str) -> Callable:
    numpy_function = getattr(np.emath, name)

    def function(x):
        return getattr(_da, darray_name)(_fix(f"numpy.emath.{name}", x, check, ufunc=getattr(np, name)))

    function.__name__ = function.__qualname__ = name
    function.__module__ = "darray.emath"
    summary = (numpy_function.__doc__ or "").strip().splitlines()[0].rstrip(".")
    function.__doc__ = (f"{summary} (``numpy.emath.{name}``), elementwise; complex for the whole array if any "
                        f"element\n    is out of the real domain (one allreduce of a flag).\n\n    Examples\n    "
                        f"--------\n    >>> import darray as da\n    {example}\n    ")
    return implements(numpy_function)(function)


def _logn(n, x) -> DArray:
    """The logarithm of ``x`` in base ``n`` (``numpy.emath.logn``), elementwise; complex where NumPy's is.

    Examples
    --------
    >>> import darray as da
    >>> da.emath.logn(2, da.asarray([8.0])).gather().tolist()
    [3.0]
    """
    func = "numpy.emath.logn"
    like = first_darray(n, x)
    x, n = _fix(func, x, _negative, like, np.log), _fix(func, n, _negative, like, np.log)
    lx, ln = _da.log(x), _da.log(n)
    dtype = np.result_type(lx.dtype, ln.dtype)
    return _da.astype(lx, dtype, copy=False) / _da.astype(ln, dtype, copy=False)


def _power(x, p) -> DArray:
    """``x ** p`` (``numpy.emath.power``), complex if any ``x`` is negative; float if any integer ``p`` is.

    Examples
    --------
    >>> import darray as da
    >>> da.emath.power(da.asarray([2, 4]), -1).gather().tolist()
    [0.5, 0.25]
    """
    func = "numpy.emath.power"
    like = first_darray(x, p)
    x, p = _fix(func, x, _negative, like), as_darray(func, p, like)
    if p.dtype.kind in "iu" and _any(p < 0):
        p = _da.astype(p, np.float64)  # NumPy's p * 1.0
    dtype = np.result_type(x.dtype, p.dtype)
    return _da.pow(_da.astype(x, dtype, copy=False), _da.astype(p, dtype, copy=False))


_logn.__name__, _power.__name__ = "logn", "power"
_logn.__module__ = _power.__module__ = "darray.emath"
emath = types.ModuleType("darray.emath", "NumPy's ``numpy.emath`` for DArrays: results complex where the input "
                         "leaves the real domain.\n\nThe whole array is complex when any element on any rank is "
                         "out of the domain (one allreduce of a flag), as NumPy's is; then elementwise.")
for _name, _darray_name, _check, _example in (
        ("sqrt", "sqrt", _negative, ">>> da.emath.sqrt(da.asarray([-4.0, 4.0])).gather().tolist()\n    "
                                    "[2j, (2+0j)]"),
        ("log", "log", _negative, ">>> da.emath.log(da.asarray([1.0])).gather().tolist()\n    [0.0]"),
        ("log2", "log2", _negative, ">>> da.emath.log2(da.asarray([8.0])).gather().tolist()\n    [3.0]"),
        ("log10", "log10", _negative, ">>> da.emath.log10(da.asarray([100.0])).gather().tolist()\n    [2.0]"),
        ("arccos", "acos", _beyond_one, ">>> da.emath.arccos(da.asarray([1.0])).gather().tolist()\n    [0.0]"),
        ("arcsin", "asin", _beyond_one, ">>> da.emath.arcsin(da.asarray([0.0])).gather().tolist()\n    [0.0]"),
        ("arctanh", "atanh", _beyond_one, ">>> da.emath.arctanh(da.asarray([0.0])).gather().tolist()\n    [0.0]")):
    setattr(emath, _name, _emath_unary(_name, _darray_name, _check, _example))
del _name, _darray_name, _check, _example
emath.logn, emath.power = implements(np.emath.logn)(_logn), implements(np.emath.power)(_power)
emath.__all__ = ["arccos", "arcsin", "arctanh", "log", "log10", "log2", "logn", "power", "sqrt"]
