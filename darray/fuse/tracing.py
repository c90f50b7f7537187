"""Tracing: run a function once on :class:`Tracer` objects that record a graph instead of computing.

A tracer stands for a DArray argument (or a value computed from them). Its
operators, NumPy's ufuncs (``np.exp(t)``, through ``__array_ufunc__``), the
functions ``numpy.where/sum/mean/min/max/prod`` (``__array_function__``) and
the methods ``sum``, ``mean``, ``min``, ``max``, ``prod``, ``astype`` add
nodes (:mod:`darray.fuse.graph`). While the function runs, the names of its
globals bound to the ``darray`` module, or to darray functions the graph
knows, resolve to :data:`NAMESPACE`, which records the same operations
(``da.exp(t)``, ``da.sum(t, axis=0)``); any other darray function raises
:class:`~darray.fuse.graph.Untraceable`. So does everything that needs a value:
``bool(t)`` (data-dependent control flow), indexing, ``len``, conversion to
NumPy, and DArrays or NumPy arrays captured from outside the arguments. The
call then runs eagerly. Indexing is traced in one form: slices of step 1 of
an argument (``u[1:-1, 2:]``), the shifted views of a stencil; and so is
assignment to such a slice of an argument (``out[1:-1] = ...``), as long as
the function does not read that argument again afterwards.
"""

from __future__ import annotations

import sys
import types

import numpy as np

from .._core.array import DArray
from .._core.reductions import normalize_axes
from .._core.table import BY_NAME, ELEMENTWISE
from .._core.dtypes import check_dtype
from .graph import REDUCTIONS, Node, Untraceable, check_reduction, elementwise_node, reduction_dtype
from .cache import SCALARS
from .overlap import check_call, padded, translate, window

__all__ = ["Tracer", "NAMESPACE", "trace", "tracing_function", "shifted"]

#: NumPy ufunc names that darray's table spells otherwise.
_NUMPY_NAMES = {"absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
                "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh", "bitwise_not": "bitwise_invert",
                "conjugate": "conj", "invert": "bitwise_invert", "left_shift": "bitwise_left_shift",
                "mod": "remainder", "power": "pow", "right_shift": "bitwise_right_shift", "true_divide": "divide"}


#: The slice assignments of the trace running now, in program order: ``(argument node, bounds, value node)``.
_writes: list = []
#: The DArray arguments of the trace running now, by the id of their node (map_overlap checks their blocks).
_arguments: dict = {}


def _read(node: Node) -> Node:
    """``node``, refused if it is an argument written by a slice assignment before (or a window of one): eager
    darray would read the new values through that view, the graph holds the values from before."""
    source = node.args[0] if node.op in ("shift", "halo") else node
    if source.op == "input" and any(w[0] is source for w in _writes):
        raise Untraceable("a read of an argument after a slice assignment to it")
    return node


def _node(x) -> Node:
    """The node of an operand: a tracer's own, or a constant for a Python / NumPy scalar."""
    if type(x) is Tracer:
        return _read(x.node)
    if type(x) in SCALARS or isinstance(x, np.generic) and x.dtype.kind in "biufc":
        dtype = x.dtype if isinstance(x, np.generic) else np.asarray(x).dtype
        return Node("constant", (), dtype, (), (x,))
    raise Untraceable(f"an operand of type {type(x).__name__} that is not an argument")


def apply(name: str, *args) -> Tracer:
    """Record ``name(*args)`` (an elementwise function of darray's table, ``where``)."""
    name = _NUMPY_NAMES.get(name, name)
    return Tracer(elementwise_node(name, tuple(_node(a) for a in args)))


def astype(x, dtype, /, *, copy: bool = True, device=None) -> Tracer:
    """Record ``x.astype(dtype)`` (a copy, as eager darray by default; ``device`` is not traced)."""
    if device is not None or type(x) is not Tracer:
        raise Untraceable("astype")
    return Tracer(elementwise_node("astype", (_read(x.node), check_dtype("astype", dtype))))


def _reduction(name: str):
    def reduce(x, /, *, axis=None, keepdims: bool = False, dtype=None, out=None):
        if type(x) is not Tracer or dtype is not None or out is not None or type(keepdims) is not bool:
            raise Untraceable(name)
        node = _read(x.node)
        check_reduction(name, node)
        axes = normalize_axes(name, axis, len(node.shape))
        if name in ("min", "max") and any(node.shape[a] == 0 for a in axes):
            raise Untraceable(f"{name}: zero-size reduction")
        shape = tuple(1 if a in axes else n for a, n in enumerate(node.shape) if keepdims or a not in axes)
        return Tracer(Node(name, (node,), reduction_dtype(name, node.dtype), shape, (axes, keepdims)))

    reduce.__name__ = name
    return reduce


def map_overlap(func, *arrays, depth=1, boundary="none", trim=True, out=None, **kwargs):
    """Record ``da.map_overlap(func, *arrays, ...)``: ``func`` traced on the padded blocks
    (:mod:`darray.fuse.overlap`); ``out=`` an assignment to that argument, as a slice assignment."""
    given = [*arrays, *([] if out is None else [out])]
    if not arrays or any(type(a) is not Tracer or a.node.op != "input" for a in given):
        raise Untraceable("map_overlap of values that are not arguments of the fused function")
    nodes = [_read(a.node) for a in arrays]
    halo, kinds = check_call(func, [_arguments[id(n)] for n in nodes], depth, boundary, trim,
                             None if out is None else _arguments[id(out.node)], kwargs)
    result = func(*(Tracer(padded(n, halo, kinds)) for n in nodes), **kwargs)
    if type(result) is not Tracer:
        raise Untraceable("map_overlap: func returned something else than an expression of its blocks")
    value = translate(result.node, trim)
    if out is None:
        return Tracer(value)
    if out.node.dtype != value.dtype:
        raise Untraceable("map_overlap: out= of another dtype (a cast on assignment)")
    _writes.append((out.node, tuple((0, n) for n in out.node.shape), value))
    return out  # reading it again runs the function eagerly (a read after an assignment)


_REDUCE = {name: _reduction(name) for name in REDUCTIONS}
_FUNCTIONS = {"where": lambda c, a, b, /: apply("where", c, a, b), "astype": astype, "map_overlap": map_overlap,
              **_REDUCE}


def shifted(node: Node, key) -> Node:
    """The node of ``argument[key]`` for basic slices of step 1 (a stencil's shifted view of an argument)."""
    if node.op == "padded":  # a window of a map_overlap block
        return window(node, key)
    key = key if isinstance(key, tuple) else (key,)
    if node.op != "input" or len(key) > len(node.shape) or any(type(k) is not slice for k in key):
        raise Untraceable("only slices of step 1 of an argument are traced")
    key = key + (slice(None),) * (len(node.shape) - len(key))
    bounds = []
    for k, n in zip(key, node.shape):
        start, stop, step = k.indices(n)
        if step != 1:
            raise Untraceable("only slices of step 1 of an argument are traced")
        bounds.append((start, max(start, stop)))
    shape = tuple(b - a for a, b in bounds)
    return Node("shift", (node,), node.dtype, shape, tuple(bounds))


class _Namespace:
    """The darray namespace as a traced function sees it while it is traced."""

    def __getattr__(self, name: str):
        found = _FUNCTIONS.get(name)
        if found is not None:
            return found
        standard = _NUMPY_NAMES.get(name, name)
        if standard in BY_NAME:
            return lambda *args: apply(standard, *args)
        value = getattr(sys.modules["darray"], name)
        if isinstance(value, type) or not callable(value):  # dtypes, constants (da.float32, da.pi)
            return value
        raise Untraceable(f"darray.{name} is not traced")


NAMESPACE = _Namespace()


def _binary(name: str, reflected: bool):
    if reflected:
        return lambda self, other: apply(name, other, self)
    return lambda self, other: apply(name, self, other)


def _refuse(what: str):
    def refuse(self, *args, **kwargs):
        raise Untraceable(f"{what} of a traced value")
    return refuse


class Tracer:
    """A traced value: a :class:`~darray.fuse.graph.Node` with the DArray interface that fusion records."""

    __slots__ = ("node",)
    __array_priority__ = 1000
    __hash__ = None

    def __init__(self, node: Node):
        self.node = node

    shape = property(lambda self: self.node.shape)
    dtype = property(lambda self: self.node.dtype)
    ndim = property(lambda self: len(self.node.shape))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method != "__call__" or kwargs:
            raise Untraceable(f"numpy.{ufunc.__name__}.{method} with {sorted(kwargs)}")
        return apply(ufunc.__name__, *inputs)

    def __array_function__(self, func, types, args, kwargs):
        found = _FUNCTIONS.get(func.__name__)
        if found is None or func.__name__ == "astype":
            raise Untraceable(f"numpy.{func.__name__}")
        return found(*args, **kwargs)

    def astype(self, dtype, copy: bool = True):
        return astype(self, dtype, copy=copy)

    for _name, _f in _REDUCE.items():
        locals()[_name] = lambda self, axis=None, dtype=None, out=None, keepdims=False, _f=_f: _f(
            self, axis=axis, dtype=dtype, out=out, keepdims=keepdims)
    for _row in ELEMENTWISE:
        if _row.operator and _row.nargs == 1:
            locals()[_row.operator] = lambda self, _n=_row.name: apply(_n, self)
        elif _row.operator:
            locals()[_row.operator] = _binary(_row.name, False)
            if _row.inplace:
                locals()["__r" + _row.operator[2:]] = _binary(_row.name, True)
    def __getitem__(self, key):
        return Tracer(shifted(_read(self.node), key))

    def __setitem__(self, key, value):
        if self.node.op != "input":
            raise Untraceable("an assignment to something else than an argument")
        target = shifted(_read(self.node), key)
        node = _node(value)
        if np.broadcast_shapes(node.shape, target.shape) != target.shape:
            raise Untraceable("a slice assignment of another shape")
        _writes.append((self.node, target.attrs, node))

    for _what in ("__bool__", "__len__", "__iter__", "__int__", "__float__",
                  "__complex__", "__index__", "__array__", "__dlpack__"):
        locals()[_what] = _refuse(_what)
    del _name, _f, _row, _what


def tracing_function(f):
    """``f`` with its globals and closure variables bound to darray (the module or traced functions) replaced by
    :data:`NAMESPACE` (a function defined inside another that imported darray reads it from a closure cell)."""
    darray = sys.modules["darray"]
    known = {id(getattr(darray, n)): getattr(NAMESPACE, n) for n in (*_FUNCTIONS, *BY_NAME, *_NUMPY_NAMES)
             if hasattr(darray, n)}

    def traced(value):
        if value is darray:
            return NAMESPACE
        return known[id(value)] if id(value) in known and callable(value) else value

    scope = {name: traced(value) for name, value in f.__globals__.items()}
    closure = f.__closure__
    if closure:
        cells = []
        for cell in closure:
            try:
                value = cell.cell_contents
            except ValueError:  # not bound yet
                cells.append(cell)
                continue
            cells.append(types.CellType(traced(value)) if traced(value) is not value else cell)
        closure = tuple(cells)
    g = types.FunctionType(f.__code__, scope, f.__name__, f.__defaults__, closure)
    g.__kwdefaults__ = f.__kwdefaults__
    return g


def trace(f, args: tuple, kwargs: dict):
    """Run ``f`` on tracers for the DArray and scalar arguments: ``(inputs, outputs, container, writes)``.

    ``inputs`` are the argument nodes in order (None for other arguments); ``outputs`` the result nodes
    (``container``: the result's tuple or list type, None for one value, ``type(None)`` for no result);
    ``writes`` the slice assignments to arguments, in program order. Raises
    :class:`~darray.fuse.graph.Untraceable` (or whatever ``f`` raises) when the graph cannot hold it.
    """
    inputs: list = []
    same: dict[int, Node] = {}  # one node per DArray object (an argument passed twice, e.g. in and out)

    def wrap(position, a):
        if type(a) is DArray:
            node = same.setdefault(id(a), Node("input", (), a._block.dtype, a.shape, (position,)))
            _arguments[id(node)] = a
        elif type(a) in SCALARS:
            node = Node("scalar", (), np.asarray(a).dtype, (), (position, a))
        else:
            inputs.append(None)
            return a
        inputs.append(node)
        return Tracer(node)

    _writes.clear()
    _arguments.clear()
    targs = tuple(wrap(i, a) for i, a in enumerate(args))
    tkwargs = {k: wrap(k, a) for k, a in kwargs.items()}
    try:
        result = tracing_function(f)(*targs, **tkwargs)
        writes = list(_writes)
    finally:
        _writes.clear()
        _arguments.clear()
    if result is None and writes:
        return inputs, [], type(None), writes
    many = isinstance(result, (tuple, list))
    results = tuple(result) if many else (result,)
    if not results or any(type(r) is not Tracer or r.node.op in ("input", "scalar", "constant") for r in results):
        raise Untraceable("the result must be computed from the arguments (traced values)")
    return inputs, [_read(r.node) for r in results], type(result) if many else None, writes
