"""The NumPy protocol hooks of DArray and their registries (filled by :mod:`darray._api.numpy.protocols`).

``__array_ufunc__`` runs a ufunc's ``__call__`` on aligned local blocks (any
ufunc, with ``out=``, ``where=``, ``dtype=``; :func:`ufunc_call`, which
darray's own ufuncs use too); ``reduce``, ``accumulate``, ``outer``, ``at``
and ``reduceat`` go to the darray ufunc registered for the NumPy ufunc
(:data:`UFUNCS`, filled by :mod:`darray._api.ufuncs`): one implementation for
``numpy.add.reduce(x)`` and ``darray.add.reduce(x)``. ``__array_function__``
looks functions up in a registry (``implements(np.foo)``); anything
unregistered returns NotImplemented, so NumPy raises instead of gathering.
Functions that do not dispatch and call ``numpy.asarray`` themselves gather
through ``__array__``, with a warning (:mod:`darray._core.foreign`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._backend import is_numpy_namespace
from .._errors import message, naming
from .array import DArray
from .dtypes import is_extra
from .elementwise import align_target, local_operand, numbers_array, wrap_like
from .redistribute import redistribute_to
from .special_cases import FIXED, standard_kernel
from .views import refresh, written

__all__ = ["HANDLED_FUNCTIONS", "OPERATORS", "UFUNCS", "implements", "array_ufunc", "ufunc_call", "array_function"]

#: Operations the public layer provides to DArray's operators (e.g. ``"matmul"`` for ``@``).
OPERATORS: dict[str, Callable] = {}
#: NumPy ufunc -> darray's ufunc object, whose methods (reduce, accumulate, outer, at, reduceat) NumPy's call.
UFUNCS: dict[np.ufunc, object] = {}
HANDLED_FUNCTIONS: dict[Callable, Callable] = {}



def implements(numpy_function: Callable):
    """Register a darray implementation for ``numpy_function`` (used by ``__array_function__``)."""

    def decorator(func):
        HANDLED_FUNCTIONS[numpy_function] = func
        return func

    return decorator


def array_ufunc(self: DArray, ufunc: np.ufunc, method: str, *inputs, **kwargs):
    if method == "__call__":
        out = _call(ufunc, inputs, dict(kwargs))
        own = UFUNCS.get(ufunc) if out is NotImplemented else None
        # blocks of another library (``ndarray + x``): darray's own function of that name, which takes them
        return out if own is None else own(*inputs, **kwargs)
    own = UFUNCS.get(ufunc)
    if own is None or method not in _METHODS:
        return NotImplemented
    if method in ("reduce", "accumulate", "reduceat") and isinstance(kwargs.get("out"), tuple):
        kwargs["out"] = kwargs["out"][0]  # NumPy hands out= as a 1-tuple
    return getattr(own, method)(*inputs, **kwargs)


_METHODS = frozenset({"reduce", "accumulate", "outer", "at", "reduceat"})


def ufunc_call(ufunc: np.ufunc, inputs, kwargs):
    """NumPy's ``ufunc(*inputs, **kwargs)`` on aligned NumPy blocks (NotImplemented for other blocks)."""
    return _call(ufunc, inputs, dict(kwargs))


def _call(ufunc: np.ufunc, inputs, kwargs):
    if ufunc.signature is not None:  # generalized ufuncs are not elementwise
        if ufunc is np.matmul and "matmul" in OPERATORS and not kwargs and len(inputs) == 2:
            return OPERATORS["matmul"](*inputs)
        if getattr(np, "vecdot", None) is ufunc and "vecdot" in OPERATORS and len(inputs) == 2:
            return OPERATORS["vecdot"](*inputs, axis=kwargs.get("axis", -1))
        impl = HANDLED_FUNCTIONS.get(ufunc)  # other gufuncs darray registered (numpy.matvec, numpy.vecmat)
        return NotImplemented if impl is None else impl(*inputs, **kwargs)
    out = kwargs.pop("out", None)
    where = kwargs.pop("where", True)
    inputs = tuple(_operand(ufunc.__name__, x) for x in inputs)
    arrays = [x for x in inputs if isinstance(x, DArray)]
    if not arrays or any(not is_numpy_namespace(x._xp) for x in arrays):
        return NotImplemented  # local blocks of other backends: use darray's own functions
    operands = list(inputs) + ([where] if where is not True else [])
    target, layout = align_target(ufunc.__name__, operands)
    local = [local_operand(ufunc.__name__, x, layout, target) for x in inputs]
    if where is not True:
        kwargs["where"] = local_operand(ufunc.__name__, where, layout, target)
    outs = out if isinstance(out, tuple) else ((out,) if out is not None else ())
    if outs:
        if any(not isinstance(o, DArray) for o in outs):
            return NotImplemented
        for o in outs:
            if o.shape != layout.shape:
                raise ValueError(message(ufunc.__name__, "out= has the wrong shape", o.shape, layout.shape))
        for o in outs:
            if o._link is not None:  # a computed view: fresh from its base first, written back after
                refresh(o)
        plain = layout.without_halo()
        # write straight into each out's owned cells when it has the operands' blocks, else via a copy
        direct = [o._layout.blocks_key == layout.blocks_key for o in outs]
        buffers = tuple(o.local if ok else redistribute_to(o, plain).local for o, ok in zip(outs, direct))
        ufunc(*local, out=buffers, **kwargs)
        for o, ok, buf in zip(outs, direct, buffers):
            if not ok:
                o.local[...] = redistribute_to(wrap_like(buf, plain, target), o._layout.without_halo()).local
            written(o)
        return outs[0] if ufunc.nout == 1 else outs
    if not kwargs and ufunc.__name__ in FIXED:  # the standard's special cases, as darray's own function
        result = standard_kernel(np, ufunc.__name__)(*local)
    else:
        result = ufunc(*local, **kwargs)
    for part in result if isinstance(result, tuple) else (result,):  # (the dtype is the ufunc's: alike everywhere)
        if part.dtype.kind not in "biufc" and not is_extra(part.dtype):  # (numpy.frompyfunc's Python objects)
            raise TypeError(message(ufunc.__name__, "the ufunc returns Python objects, which a DArray cannot hold",
                                    part.dtype, "a numeric ufunc; apply this one to x.local (each rank's "
                                    "block) and wrap the numbers with darray.from_local"))
    if isinstance(result, tuple):
        return tuple(wrap_like(r, layout, target) for r in result)
    return wrap_like(result, layout, target)


_OPERAND_TYPES = (DArray, np.ndarray, np.generic, int, float, complex)


def _operand(name: str, x):
    """A ufunc operand as NumPy takes it (sequences become arrays); ``TypeError`` for anything else."""
    return x if isinstance(x, _OPERAND_TYPES) else numbers_array(name, x)


def array_function(self: DArray, func, types, args, kwargs):
    impl = HANDLED_FUNCTIONS.get(func)
    if impl is None:
        return NotImplemented
    if not all(issubclass(t, (DArray, np.ndarray)) for t in types):
        return NotImplemented
    try:
        return impl(*args, **kwargs)
    except (TypeError, ValueError, IndexError) as error:
        renamed = naming(error, f"numpy.{func.__name__}", mentioned=func.__name__)
        if renamed is error:
            raise
        raise renamed from error


