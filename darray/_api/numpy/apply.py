"""Python functions applied to DArrays: ``vectorize``, ``apply_along_axis``, ``apply_over_axes``.

What moves:

- ``vectorize``: the Python function on every element of each block (a local
  ``numpy.vectorize``); the output dtypes (and new core dimensions) come from
  one call on the global first element, fetched from its owner, as NumPy
  takes them from the first element.
- ``apply_along_axis``: local when ``axis`` is not cut; otherwise the array is
  redistributed once so that the axis is whole (cut along the longest other
  axis); the first 1-d slice is fetched to fix the result's shape and dtype.
  ``apply_over_axes``: the function's own communication.

A Python function that raises on some rank makes every rank raise (its
verdict is agreed with one small allgather).

Examples
--------
>>> import darray as da
>>> da.vectorize(lambda v: v * 2)(da.arange(3)).gather().tolist()
[0, 2, 4]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..._backend import from_numpy, to_numpy
from ..._core import DArray, redistribute_to, target_layout, wrap_like
from ..._core.elementwise import _expand
from ..._core.protocols import implements
from ..._errors import message
from ..._layout import Layout, normalize_axis
from .._common import first_darray
from ..creation import as_darray
from ..manipulation import expand_dims
from ._common import agreed, first_cells, with_axes

__all__ = ["apply_along_axis", "apply_over_axes", "vectorize"]


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
        firsts = [first_cells(a, (0,) * len(loop)) for a, loop in zip(vargs, loops)]
        if outs is None:
            firsts = [f[()] for f in firsts]
        results = agreed(like.comm, name, lambda: func(*firsts))
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
    base = Layout(loop_t, lay.dims, lay.split, lay.sizes[:len(loop_t)])
    out_loop = base if loop_t == loop_shape else _expand(base, loop_shape)
    rank = like.comm.rank
    blocks = []
    for a, loop, _core in zip(vargs, loops, ins):
        want = with_axes(out_loop.broadcast_layout(loop), len(loop), 0, a.shape[len(loop):])
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

    local = agreed(like.comm, "numpy.vectorize", run)
    results = tuple(wrap_like(from_numpy(target._xp, np.asarray(r, order="C"), device=target.device),
                              with_axes(out_loop, len(loop_shape), 0, core), target)
                    for r, core in zip(local, out_cores))
    return results[0] if len(results) == 1 else results


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
    axis = normalize_axis(func, axis, arr.ndim)
    if any(n == 0 for d, n in enumerate(arr.shape) if d != axis):
        raise ValueError(message(func, "cannot apply_along_axis when any iteration dimensions are 0", arr.shape))
    first = tuple(slice(None) if d == axis else 0 for d in range(arr.ndim))
    res0 = np.asanyarray(agreed(arr.comm, func, lambda: func1d(first_cells(arr, first), *args, **kwargs)))
    if res0.dtype.kind not in "biufc":
        raise TypeError(message(func, "func1d must return booleans or numbers", res0.dtype))
    layout = arr.layout.without_halo()
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

    local = agreed(arr.comm, func, run)
    out = with_axes(layout, axis, 1, res0.shape)
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
        axis = normalize_axis(name, axis, n)
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
