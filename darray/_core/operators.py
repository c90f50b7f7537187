"""DArray's operator methods (``+``, ``-x``, ``a < b``, ``x += y``, ...), generated from the elementwise table.

Every operator goes through :func:`darray._core.elementwise.apply`, the one
engine. In front of it sits the case a NumPy script meets in every line of a
loop: NumPy blocks below NumPy's temporary-elision size, no halo, no tracing,
and the other operand either on the very same layout or a Python ``int`` /
``float``. That case is one NumPy call and a wrap, with the checks ordered so
that anything else falls through to the engine after a few attribute tests
(the engine then decides everything again, so both paths give the same
result and raise the same errors). Larger blocks go to the engine, which
reuses the buffers of temporary operands the way NumPy does.
"""

from __future__ import annotations

from numpy import ndarray

from .. import _recorder
from .array import DArray
from .elementwise import SMALL_BLOCK_BYTES, _accepted, _func, apply, apply_inplace, temporaries
from .table import BINARY_OPERATORS, UNARY_OPERATORS, Elementwise

__all__ = ["install"]

_wrap = DArray._wrap


def _foreign(other) -> bool:
    """An operand that is neither a number nor array-like: Python should try its own operator."""
    return not isinstance(other, (DArray, bool, int, float, complex)) and not hasattr(other, "__array__") \
        and not hasattr(other, "__array_namespace__") and not isinstance(other, (list, tuple))


def _kernels(name: str) -> dict:
    """Per local namespace: (``name``'s kernel, the block dtypes it accepted): one dict lookup per call."""
    class Kernels(dict):
        def __missing__(self, xp):
            entry = self[xp] = (_func(xp, name), _accepted(xp, name))
            return entry

    return Kernels()


def _unary_method(row: Elementwise):
    kernels = _kernels(row.name)

    def method(self):
        block = self._block
        if type(block) is ndarray and not self._layout.has_halo and _recorder.active is None:
            f, accepted = kernels[self._xp]
            if block.dtype in accepted:
                out = f(block)
                if type(out) is ndarray:  # (a 0-d block gives a NumPy scalar: the engine wraps it)
                    return _wrap(out, self._layout, self._comm, self._xp)
        return apply(row, (self,))

    method.__name__ = row.operator
    method.__doc__ = f"``{row.operator[2:-2]}`` of every element: :func:`darray.{row.name}`."
    return method


def _binary_method(row: Elementwise, kernels: dict, reflected: bool):
    """``a op b`` (or, reflected, ``b op a`` for ``b`` not a DArray)."""
    scalars_fast = row.name != "pow"  # ``x ** 0.5`` takes the engine's exact square root

    def method(self, other):
        block = self._block
        layout = self._layout
        if type(block) is ndarray and block.nbytes < SMALL_BLOCK_BYTES and not layout.has_halo \
                and _recorder.active is None:
            xp = self._xp
            f, accepted = kernels[xp]
            kind = type(other)
            if block.dtype not in accepted:
                pass
            elif kind is DArray:
                if other._layout is layout or other._layout == layout:
                    operand = other._block
                    if type(operand) is ndarray and operand.dtype in accepted:
                        out = f(operand, block) if reflected else f(block, operand)
                        if type(out) is ndarray:
                            return _wrap(out, layout, self._comm, xp)
            elif (kind is float or kind is int) and scalars_fast:
                out = f(other, block) if reflected else f(block, other)
                if type(out) is ndarray:
                    return _wrap(out, layout, self._comm, xp)
        block = operand = None  # the engine may reuse a temporary operand's buffer: hold no reference to it
        try:
            if reflected:
                return apply(row, (other, self), temporaries(other, self) & 2)
            return apply(row, (self, other), temporaries(self, other))
        except TypeError:
            if _foreign(other):  # an object NumPy cannot take: let it try the reflected operator
                return NotImplemented
            raise

    return method


def _binary_methods(row: Elementwise) -> dict:
    kernels = _kernels(row.name)
    out = {row.operator: _binary_method(row, kernels, False)}
    if row.inplace:
        out[f"__r{row.operator[2:]}"] = _binary_method(row, kernels, True)

        def inplace(self, other):
            return apply_inplace(row, self, other)

        out[f"__i{row.operator[2:]}"] = inplace
    for dunder, method in out.items():
        method.__name__ = dunder
        method.__doc__ = f"Operator form of :func:`darray.{row.name}`."
    return out


def install(cls: type) -> None:
    """Set every operator method of the elementwise table on ``cls`` (DArray)."""
    for row in UNARY_OPERATORS.values():
        setattr(cls, row.operator, _unary_method(row))
    for row in BINARY_OPERATORS.values():
        for dunder, method in _binary_methods(row).items():
            setattr(cls, dunder, method)
