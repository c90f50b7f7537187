"""NumPy's calling conventions for darray's own functions: array-like arguments and NumPy's positional tails.

darray's functions follow the Array API standard: arrays are DArrays, and
options after the arrays are keyword-only (``sum(x, /, *, axis=None)``).
NumPy scripts pass lists, tuples, scalars and NumPy arrays, and options by
position (``np.sum([1, 2])``, ``np.sort(a, 0)``, ``np.where(mask, a, 0)``).
One table, :data:`ROWS`, says for each function of the namespace which
parameters hold arrays and which NumPy parameters follow them by position;
:func:`accepting_array_likes` wraps those functions once, when the namespace
is built (``darray/__init__.py``), and :func:`as_darray` is the one place
(in :mod:`darray._api.creation`, beside ``asarray``) is where array-likes
become DArrays:

- an array-like next to a DArray is made on that DArray's communicator and
  backend, replicated (``split=None``: every rank passed the same data, and
  a replicated operand meets any layout by slicing, without communication);
- an array-like alone is laid out as :func:`darray.asarray` lays out data;
- Python scalars stay scalars where the function takes them (the operands of
  ``where``): the standard's promotion rules treat them as weakly typed;
- a NumPy option darray does not have is dropped when it has NumPy's default
  value (``out=None``, ``kind=None``), else refused with ``TypeError``;
- a parameter darray requires and NumPy does not gets NumPy's default
  (``squeeze(x)``: every length-1 axis), and NumPy's other spellings of a
  parameter are turned into darray's (``tile(x, 2)``: ``(2,)``).

A call whose array arguments already are DArrays and that passes nothing by
NumPy's position costs one loop over the table row's positions.

Examples
--------
>>> import darray as np
>>> int(np.sum([1, 2, 3]))
6
>>> np.sort([[3, 1], [2, 0]], 0).gather().tolist()
[[2, 0], [3, 1]]
"""

from __future__ import annotations

import functools
import inspect
import numbers
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .._core import DArray
from .._errors import message
from ._common import first_darray
from .creation import as_darray
from .numpy.reductions import reduction
from .ufunc_methods import NO_VALUE

__all__ = ["ROWS", "Row", "accepting", "accepting_array_likes", "accepting_module", "numpy_sort"]

_SCALARS = (bool, numbers.Number, np.generic)  # stay scalars where a row says so


class Row(NamedTuple):
    """How one function takes NumPy's arguments."""

    #: parameters holding arrays (converted; ``"*name"``: each of the varargs, ``"[name]"``: each item of a sequence)
    arrays: tuple[str, ...]
    #: NumPy's positional parameters after darray's positional ones, as keyword -> NumPy's default
    tail: dict = {}
    #: array parameters where a Python/NumPy scalar stays a scalar (operands with weak scalar promotion)
    operands: tuple[str, ...] = ()
    #: NumPy's defaults for parameters darray requires: keyword -> function of the converted arguments
    defaults: dict = {}
    #: NumPy's spellings darray's parameter does not take: positional name -> function giving darray's
    coerce: dict = {}
    #: NumPy's implementation taking NumPy's options darray's function lacks (``where=``, ``initial=``,
    #: ``out=``, ``ddof=``): called instead when one of them is given a value other than NumPy's default
    numpy: Callable | None = None


_X = ("x",)
_REDUCE = {"axis": None, "dtype": None, "out": None, "keepdims": False}
_LOGICAL = {"axis": None, "out": None, "keepdims": False}
_SORT = {"axis": -1, "kind": None, "order": None}

_SORT_KINDS = frozenset({"quicksort", "quick", "mergesort", "merge", "heapsort", "heap", "stable"})


def numpy_sort(name: str, x, axis=-1, kind=None, order=None, **kwargs):
    """``sort``/``argsort`` with NumPy's ``kind=`` (any is right: darray's sort is stable) or ``order=``
    (records)."""
    if kind is not None and kind not in _SORT_KINDS:
        raise ValueError(message(name, "sort kind must be one of 'quick', 'heap', or 'stable'", kind,
                                 f"one of {sorted(_SORT_KINDS)} or None"))
    if order is not None:
        from .numpy.records import sort_records  # (the NumPy layer imports this module)

        return sort_records(name, x, axis, order, index=name == "argsort")
    from .sorting import argsort, sort

    return (argsort if name == "argsort" else sort)(x, axis=axis, **kwargs)


#: Function of the namespace -> its row. NumPy's names that darray computes through ``__array_function__``
#: (``cumsum``, ``concatenate``, ...) and the NumPy-only functions convert array-likes themselves.
ROWS: dict[str, Row] = {
    **{name: Row(_X, _REDUCE, numpy=functools.partial(reduction, name)) for name in ("sum", "prod", "mean")},
    **{name: Row(_X, _LOGICAL, numpy=functools.partial(reduction, name)) for name in ("all", "any", "max", "min")},
    **{name: Row(_X, {"axis": None, "dtype": None, "out": None, "ddof": 0, "keepdims": False},
                 numpy=functools.partial(reduction, name)) for name in ("std", "var")},
    **{name: Row(_X, {"axis": None, "out": None}) for name in ("argmax", "argmin")},
    "count_nonzero": Row(_X, {"axis": None}),
    **{name: Row(_X, _SORT, numpy=functools.partial(numpy_sort, name)) for name in ("sort", "argsort")},
    "tile": Row(_X, coerce={"repetitions": lambda reps: (reps,) if isinstance(reps, numbers.Integral) else reps}),
    **{name: Row(_X) for name in ("nonzero", "unique_all", "unique_counts", "unique_inverse", "unique_values",
                                  "matrix_transpose", "unstack", "cumulative_sum", "cumulative_prod", "astype",
                                  "moveaxis", "permute_dims", "broadcast_to")},
    **{name: Row(_X, {"axis": None}) for name in ("expand_dims", "flip", "roll", "repeat")},
    "squeeze": Row(_X, defaults={"axis": lambda x, *_: tuple(i for i, n in enumerate(x.shape) if n == 1)}),
    "reshape": Row(_X, {"order": "C"}),
    "diff": Row(_X, {"n": 1, "axis": -1, "prepend": None, "append": None}),
    "where": Row(("condition", "x1", "x2"), operands=("x1", "x2")),
    "searchsorted": Row(("x1", "x2"), {"side": "left", "sorter": None}),
    "isin": Row(("x1", "x2"), {"assume_unique": False, "invert": False}),
    "take": Row(("x", "indices"), {"axis": None, "out": None, "mode": "raise"}),
    "take_along_axis": Row(("x", "indices"), {"axis": -1}),
    "matmul": Row(("x1", "x2")),
    "tensordot": Row(("x1", "x2"), {"axes": 2}),
    "vecdot": Row(("x1", "x2")),
    "concat": Row(("[arrays]",), {"axis": 0, "out": None}),
    "stack": Row(("[arrays]",), {"axis": 0, "out": None}),
    "broadcast_arrays": Row(("*arrays",)),
    "clip": Row(_X),
}

#: Parameter names that hold arrays in the functions of ``darray.linalg`` and ``darray.fft``, wrapped by
#: :func:`accepting_module` (NumPy's ``np.linalg.norm([3, 4])``, ``np.fft.fft([1, 0, 0, 0])``).
_ARRAY_PARAMETERS = ("x", "x1", "x2", "a", "b")


#: NumPy's defaults of the reduction options darray's standard functions lack.
_NUMPY_DEFAULTS = {"where": True, "initial": NO_VALUE, "out": None, "ddof": 0, "dtype": None, "keepdims": False,
                   "correction": None}


def _numpy_default(key: str, value) -> bool:
    default = _NUMPY_DEFAULTS.get(key, NO_VALUE)
    return value is default or (key == "initial" and value is None) or (key == "ddof" and value == 0)


def accepting_array_likes(name: str, func: Callable, row: Row) -> Callable:
    """``func`` taking array-likes in ``row.arrays`` and NumPy's positional ``row.tail`` (see the module)."""
    params = inspect.signature(func).parameters
    positional = [p.name for p in params.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    varargs = any(p.kind == p.VAR_POSITIONAL for p in params.values())
    keywords = frozenset(p.name for p in params.values() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
    plain = tuple(positional.index(a) for a in row.arrays if a in positional)
    each = tuple(positional.index(a[1:-1]) for a in row.arrays if a.startswith("["))
    scalars_pass = {positional.index(a) for a in row.operands}
    n_positional = len(positional)
    coerced = {positional.index(k): f for k, f in row.coerce.items()}

    def convert(args: tuple) -> tuple:
        like = first_darray(*args)
        out = list(args)
        for i in plain:
            if i < len(out) and not isinstance(out[i], DArray):
                if i in scalars_pass and isinstance(out[i], _SCALARS):
                    continue
                out[i] = as_darray(name, out[i], like)
        for i in each:
            if i < len(out) and isinstance(out[i], (list, tuple)):
                out[i] = [a if isinstance(a, DArray) else as_darray(name, a, like) for a in out[i]]
        if varargs:
            out = [a if isinstance(a, DArray) else as_darray(name, a, like) for a in out]
        return tuple(out)

    def numpy_tail(extra: tuple, kwargs: dict) -> dict:
        if len(extra) > len(row.tail):
            raise TypeError(message(name, "too many positional arguments", n_positional + len(extra),
                                    f"at most {n_positional + len(row.tail)}"))
        kwargs = dict(kwargs)
        for key, value in zip(row.tail, extra):
            if key in kwargs:
                raise TypeError(message(name, f"got multiple values for argument {key!r}", value))
            kwargs[key] = value
        return kwargs

    def drop_numpy_defaults(kwargs: dict) -> dict:
        for key in [k for k in kwargs if k not in keywords and k in row.tail]:
            value = kwargs.pop(key)
            default = row.tail[key]
            if not (value is default or (isinstance(value, (str, int)) and value == default)):
                raise TypeError(message(name, f"NumPy's {key}= is not supported", value, f"{default!r}"))
        return kwargs

    @functools.wraps(func)
    def call(*args, **kwargs):
        if not varargs and len(args) > n_positional:
            kwargs = numpy_tail(args[n_positional:], kwargs)
            args = args[:n_positional]
        if kwargs and not keywords.issuperset(kwargs):
            if "ddof" in kwargs and "correction" in keywords and "correction" not in kwargs:
                kwargs = dict(kwargs)  # NumPy's ddof is the standard's correction
                kwargs["correction"] = kwargs.pop("ddof")
            if row.numpy is not None and any(k not in keywords and not _numpy_default(k, v) for k, v in kwargs.items()):
                return row.numpy(*convert(args), **kwargs)
            kwargs = drop_numpy_defaults(kwargs)
        if coerced:
            args = tuple(coerced[i](a) if i in coerced else a for i, a in enumerate(args))
        if row.defaults:
            args = convert(args)
            filled = {k: f(*args) for k, f in row.defaults.items()
                      if k not in kwargs and (k not in positional or positional.index(k) >= len(args))}
            return func(*args, **kwargs, **filled)
        for i in plain:
            if i < len(args) and not isinstance(args[i], DArray):
                break
        else:
            if not each and not varargs:
                return func(*args, **kwargs)
        return func(*convert(args), **kwargs)

    call.__wrapped__ = func
    return call


def accepting(namespace: dict) -> dict:
    """The functions of :data:`ROWS` found in ``namespace``, wrapped (to update the namespace with).

    NumPy's functions that ``__array_function__`` hands to one of them (``numpy.broadcast_arrays(ndarray,
    DArray)``) get the wrapped function too: a NumPy array meeting a DArray there is replicated input.
    """
    wrapped = {name: accepting_array_likes(name, namespace[name], row) for name, row in ROWS.items()
               if name in namespace}
    _repoint(namespace, wrapped)
    return wrapped


def _repoint(namespace: dict, wrapped: dict) -> None:
    """Point ``__array_function__``'s entries for the functions of ``namespace`` at their ``wrapped`` forms."""
    from .._core.protocols import HANDLED_FUNCTIONS

    by_id = {id(namespace[name]): f for name, f in wrapped.items()}
    for numpy_function, impl in list(HANDLED_FUNCTIONS.items()):
        if id(impl) in by_id:
            HANDLED_FUNCTIONS[numpy_function] = by_id[id(impl)]


def accepting_module(module) -> None:
    """Wrap, in place, every public function of ``module`` (``darray.linalg``, ``darray.fft``) whose
    positional parameters include array parameters (:data:`_ARRAY_PARAMETERS`): array-likes become DArrays."""
    namespace = vars(module)
    wrapped = {}
    for name in module.__all__:
        func = namespace.get(name)
        if not inspect.isfunction(func):
            continue
        positional = [p.name for p in inspect.signature(func).parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        arrays = tuple(a for a in positional if a in _ARRAY_PARAMETERS)
        if arrays:
            wrapped[name] = accepting_array_likes(f"{module.__name__.split('.')[-1]}.{name}", func, Row(arrays))
    _repoint(namespace, wrapped)
    namespace.update(wrapped)
