"""The tape: Variables record the ops applied to them; ``backward`` sweeps the record in reverse.

micrograd's engine, distributed: a :class:`Variable` holds a DArray
``data``, its gradient ``grad`` (a DArray in the same layout, or None) and
``requires_grad``. Every op on Variables (operators, the functions below,
the layers of :mod:`darray.nn`) goes through :func:`apply`, which runs the
op's rule from :data:`darray.autodiff.rules.RULES` and, when gradients are
wanted, records a node (rule, inputs, saved values). ``loss.backward()``
orders the nodes with an iterative depth-first search (no recursion limit
on deep graphs) and accumulates gradients in reverse.

Every rank records the same nodes in the same order (the metadata is
replicated), so the reverse sweep makes the same collectives everywhere.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence

import numpy as np

from .._core import DArray
from .._core.table import ELEMENTWISE
from .._errors import message
from .rules import RULES, Context, accumulate, namespace, to_layout

__all__ = ["Variable", "apply", "backward", "grad", "value_and_grad", "no_grad", "enable_grad",
           "is_grad_enabled", "FUNCTIONS"]

_SCALARS = (bool, int, float, complex)
_state = threading.local()


def is_grad_enabled() -> bool:
    """Whether ops record onto the tape (False inside :func:`no_grad`)."""
    return getattr(_state, "enabled", True)


@contextlib.contextmanager
def _grad_mode(enabled: bool):
    before = is_grad_enabled()
    _state.enabled = enabled
    try:
        yield
    finally:
        _state.enabled = before


def no_grad():
    """Context manager: ops inside record nothing (optimizer steps, evaluation)."""
    return _grad_mode(False)


def enable_grad():
    """Context manager: record again inside a :func:`no_grad` block."""
    return _grad_mode(True)


class Node:
    """One recorded op: its rule name, inputs (Variables or constants) and context."""

    __slots__ = ("op", "inputs", "ctx")

    def __init__(self, op, inputs, ctx):
        self.op, self.inputs, self.ctx = op, inputs, ctx


def _data(x):
    return x.data if isinstance(x, Variable) else x


def apply(op: str, *inputs, **params) -> Variable:
    """Run rule ``op`` on ``inputs`` (Variables, DArrays or scalars); record it if a gradient is wanted."""
    rule = RULES.get(op)
    if rule is None:
        raise KeyError(message("apply", "no derivative rule for op", op, "a name in darray.autodiff.RULES"))
    xs = tuple(_data(x) for x in inputs)
    needs = tuple(isinstance(x, Variable) and x.requires_grad for x in inputs)
    record = any(needs) and is_grad_enabled()
    ctx = Context(xs, params, needs)
    out = rule.forward(ctx, *xs, **params)
    if not isinstance(out, DArray):
        raise TypeError(message(op, "rule forward must return a DArray", type(out).__name__))
    result = Variable(out)
    if record:
        ctx.out = out
        result.requires_grad = True
        result._node = Node(op, inputs, ctx)
    return result


class Variable:
    """A DArray on the tape: ``data``, ``grad`` and ``requires_grad``.

    Operators (``+ - * / ** @``, comparisons give plain DArrays), indexing,
    reductions and shape methods record onto the tape. ``backward()`` fills
    ``.grad`` of every leaf Variable with ``requires_grad=True`` (gradients
    accumulate over calls, as in torch; zero them with ``x.grad = None``).

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> from darray.autodiff import Variable
    >>> x = Variable(da.asarray([1.0, 2.0, 3.0]), requires_grad=True)
    >>> (x * x).sum().backward()
    >>> np.asarray(x.grad).tolist()
    [2.0, 4.0, 6.0]
    """

    __slots__ = ("data", "grad", "requires_grad", "_node", "__weakref__")
    __array_priority__ = 100
    __array_ufunc__ = None  # NumPy's opt-out: ``ndarray * Variable`` calls Variable.__rmul__

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Variable: not convertible to a NumPy array (use v.data or v.gather()); "
                        "put the Variable first in mixed expressions with a DArray (v * x, not x * v)")

    def __init__(self, data, requires_grad: bool = False):
        if isinstance(data, Variable):
            data = data.data
        if not isinstance(data, DArray):
            data = namespace().asarray(data)
        self.data = data
        self.grad: DArray | None = None
        self.requires_grad = bool(requires_grad)
        self._node: Node | None = None

    # ------------------------------------------------------------ metadata
    @property
    def shape(self):
        return self.data.shape

    @property
    def ndim(self):
        return self.data.ndim

    @property
    def size(self):
        return self.data.size

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def layout(self):
        return self.data.layout

    @property
    def comm(self):
        return self.data.comm

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        flag = ", requires_grad=True" if self.requires_grad else ""
        return f"Variable({self.data!r}{flag})"

    def __float__(self):
        return float(self.data)

    def item(self) -> float:
        return float(self.data)

    def gather(self, root=None):
        return self.data.gather(root)

    def detach(self) -> Variable:
        """The same data, off the tape."""
        return Variable(self.data)

    def requires_grad_(self, requires_grad: bool = True) -> Variable:
        self.requires_grad = bool(requires_grad)
        return self

    def zero_grad(self) -> None:
        self.grad = None

    # ------------------------------------------------------------ autodiff
    def backward(self, grad: DArray | None = None) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (``grad``: the seed, ones by default)."""
        backward(self, grad)

    # ------------------------------------------------------------ methods
    def __getitem__(self, key):
        return apply("getitem", self, key=key)

    def sum(self, axis=None, keepdims=False):
        return apply("sum", self, axis=axis, keepdims=keepdims)

    def mean(self, axis=None, keepdims=False):
        return apply("mean", self, axis=axis, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        return apply("max", self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        return apply("min", self, axis=axis, keepdims=keepdims)

    def prod(self, axis=None, keepdims=False):
        return apply("prod", self, axis=axis, keepdims=keepdims)

    def var(self, axis=None, correction=0.0, keepdims=False):
        return apply("var", self, axis=axis, correction=correction, keepdims=keepdims)

    def std(self, axis=None, correction=0.0, keepdims=False):
        return apply("std", self, axis=axis, correction=correction, keepdims=keepdims)

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return apply("reshape", self, shape=tuple(shape))

    def permute_dims(self, axes):
        return apply("permute_dims", self, axes=tuple(axes))

    def astype(self, dtype):
        return apply("astype", self, dtype=dtype)

    @property
    def T(self):
        return apply("permute_dims", self, axes=tuple(reversed(range(self.ndim))))

    @property
    def mT(self):
        return apply("permute_dims", self, axes=(*range(self.ndim - 2), self.ndim - 1, self.ndim - 2))

    def __matmul__(self, other):
        return apply("matmul", self, other)

    def __rmatmul__(self, other):
        return apply("matmul", other, self)

    # comparisons are not differentiable: plain DArrays
    def __eq__(self, other):
        return self.data == _data(other)

    def __ne__(self, other):
        return self.data != _data(other)

    def __lt__(self, other):
        return self.data < _data(other)

    def __le__(self, other):
        return self.data <= _data(other)

    def __gt__(self, other):
        return self.data > _data(other)

    def __ge__(self, other):
        return self.data >= _data(other)

    __hash__ = object.__hash__


# Operators from the elementwise table: the differentiable ones record, the rest act on data.
def _unary(name):
    def method(self):
        return apply(name, self)

    return method


def _binary(name):
    def forward(self, other):
        return apply(name, self, other)

    def reflected(self, other):
        return apply(name, other, self)

    return forward, reflected


for _row in ELEMENTWISE:
    if not _row.operator or _row.name not in RULES or _row.operator in ("__eq__", "__ne__"):
        continue
    if _row.nargs == 1:
        setattr(Variable, _row.operator, _unary(_row.name))
    else:
        _fwd, _ref = _binary(_row.name)
        setattr(Variable, _row.operator, _fwd)
        if _row.inplace:
            setattr(Variable, f"__r{_row.operator[2:-2]}__", _ref)


# ------------------------------------------------------------------ the reverse sweep
def _topological(root: Variable) -> list[Variable]:
    """Every Variable ``root`` depends on through recorded nodes, inputs before users.

    Iterative depth-first post-order (no recursion limit): a Variable is
    expanded the first time it is popped and emitted once all its inputs are.
    """
    order, expanded = [], set()
    stack = [(root, False)]
    while stack:
        v, done = stack.pop()
        if done:
            order.append(v)
            continue
        if id(v) in expanded:
            continue
        expanded.add(id(v))
        stack.append((v, True))
        if v._node is not None:
            for inp in v._node.inputs:
                if isinstance(inp, Variable) and inp.requires_grad and id(inp) not in expanded:
                    stack.append((inp, False))
    return order


def _seed(root: Variable, grad) -> DArray:
    data = root.data
    if grad is None:
        if data.size != 1:
            raise ValueError(message("backward", "grad can be implied only for single-element outputs",
                                     data.shape, "a scalar loss, or pass grad="))
        return namespace().ones_like(data)
    if isinstance(grad, Variable):
        grad = grad.data
    if not isinstance(grad, DArray) or grad.shape != data.shape:
        raise ValueError(message("backward", "grad must be a DArray of the output's shape",
                                 getattr(grad, "shape", type(grad).__name__), data.shape))
    return to_layout(grad, data._layout)


def backward(root: Variable, grad: DArray | None = None) -> None:
    """Reverse sweep from ``root``: add d(root)/d(leaf) into each leaf's ``.grad``."""
    if not isinstance(root, Variable):
        raise TypeError(message("backward", "expected a Variable", type(root).__name__))
    if not root.requires_grad:
        raise RuntimeError("backward: the output does not require grad (no input had requires_grad=True, "
                           "or it was computed under no_grad())")
    order = _topological(root)
    grads: dict[int, DArray] = {id(root): _seed(root, grad)}
    with no_grad():
        for v in reversed(order):
            g = grads.pop(id(v), None)
            if g is None:
                continue
            node = v._node
            if node is None:
                v.grad = _finish_leaf(v, accumulate(v.grad, g) if v.grad is not None else g)
                continue
            in_grads = RULES[node.op].backward(node.ctx, g)
            for inp, ig in zip(node.inputs, in_grads):
                if ig is None or not isinstance(inp, Variable) or not inp.requires_grad:
                    continue
                if ig.shape != inp.shape:
                    raise RuntimeError(message("backward", f"rule {node.op!r} returned a gradient of the wrong shape",
                                               ig.shape, inp.shape))
                ig = to_layout(ig, inp.data._layout)
                if ig.dtype != inp.data.dtype and inp.data.dtype.kind in "fc":
                    ig = ig.astype(inp.data.dtype)
                key = id(inp)
                grads[key] = accumulate(grads.get(key), ig)


def _finish_leaf(v: Variable, g: DArray) -> DArray:
    """A leaf's gradient: a writable block; a replicated one bit-identical on every rank (rank 0's values)."""
    if g._layout.is_replicated and g._comm.size > 1:
        block = g._comm.bcast(g._xp.asarray(g._block, copy=True), 0)
        return DArray._wrap(block, g._layout, g._comm, g._xp)
    block = g._block
    if isinstance(block, np.ndarray) and not block.flags.writeable:
        g = DArray._wrap(np.array(block), g._layout, g._comm, g._xp)
    return g


# ------------------------------------------------------------------ functional transforms
def _argnums(argnums, n):
    items = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in items:
        if not -n <= a < n:
            raise ValueError(message("grad", "argnums out of range", argnums, f"indices of {n} arguments"))
    return items


def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """``g(*args) -> (f(*args), df/dargs[argnums])``: ``f`` returns a single-element value.

    Arguments at ``argnums`` may be DArrays or Variables; the gradients are
    DArrays in the arguments' layouts (a tuple when ``argnums`` is a tuple).
    """

    def wrapped(*args, **kwargs):
        items = _argnums(argnums, len(args))
        args = list(args)
        leaves = []
        for a in items:
            leaf = Variable(args[a], requires_grad=True)
            args[a] = leaf
            leaves.append(leaf)
        with enable_grad():
            out = f(*args, **kwargs)
        if not isinstance(out, Variable):
            raise TypeError(message("grad", "f must return a Variable computed from its arguments",
                                    type(out).__name__))
        if out.requires_grad:
            backward(out)
        grads = [leaf.grad if leaf.grad is not None else namespace().zeros_like(leaf.data) for leaf in leaves]
        value = out.data
        return value, (grads[0] if isinstance(argnums, int) else tuple(grads))

    return wrapped


def grad(f: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """``g(*args) -> df/dargs[argnums]`` (see :func:`value_and_grad`)."""
    vg = value_and_grad(f, argnums)

    def wrapped(*args, **kwargs):
        return vg(*args, **kwargs)[1]

    return wrapped


# ------------------------------------------------------------------ functional forms
def _function(name, nargs):
    if nargs == 1:
        def f(x, /):
            return apply(name, x)
    else:
        def f(x1, x2, /):
            return apply(name, x1, x2)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"Differentiable :func:`darray.{name}` on Variables (records onto the tape)."
    return f


#: name -> differentiable function of Variables (elementwise ops with a rule).
FUNCTIONS: dict[str, Callable] = {row.name: _function(row.name, row.nargs) for row in ELEMENTWISE
                                   if row.name in RULES}
