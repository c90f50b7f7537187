"""DArray's operator methods (``+``, ``-x``, ``a < b``, ``x += y``, ...), generated from the elementwise table.

Every operator goes through :func:`darray._core.elementwise.apply`, the one
engine. In front of it sit three short paths, none of them taken while
tracing. Two are for the case a NumPy script meets in every line of a loop:
NumPy blocks below NumPy's temporary-elision size, no halo, and the other
operand either on the very same layout or a Python ``int`` / ``float``.
That case is one NumPy call and a wrap.

- The lean path: the layout is small and whole (``Layout.small_whole``: every
  rank holds the whole array, as below ``min_distributed_size``), so a block
  type test or two is all that is left to check. Where NumPy's ufunc refuses
  every dtype darray refuses (:func:`numpy_decides`, worked out once per
  function), not even the dtypes are checked: a ``TypeError`` from NumPy
  sends the call to the engine, which raises darray's message.
- The short path: any small NumPy block without halo, with the dtypes checked.
- The cut path (NumPy blocks of any size): the other operand is a DArray of one shape cut otherwise
  (shifted slices of a cut array), and the engine has already worked out
  how the two align (a plan remembered per pair of layouts and rank): the
  plan is replayed, its strip exchange and one ufunc call per cell.

Anything else falls through to the engine after a few attribute tests (the
engine then decides everything again, so every path gives the same result
and raises the same errors). Larger blocks go to the engine, which reuses the
buffers of temporary operands the way NumPy does.

Each operator is two functions: the method on DArray, which is the lean
path alone, and the general path behind it (the short path, the cut path,
the engine), which it calls. The method is written on its first call, when
:func:`numpy_decides` (too slow for import) says which lean form the row
takes, so a call branches on neither the row nor the operand order.

Where the C module ``darray._core._lean`` was built (:mod:`darray._core.compiled`),
the lean path is its compiled form: the same tests, in front of the same
general path. The Python forms below stay the reference and the fallback
(``DARRAY_PURE_PYTHON=1``).
"""

from __future__ import annotations

import numpy as np
from numpy import asarray as _asarray, ndarray, ufunc

from .. import _recorder
from .._backend import NUMPY
from .._layout.layout import SMALL_BLOCK_BYTES
from . import compiled
from .array import DArray
from .dtypes import DTYPES
from .alignment import run_binary
from .elementwise import _accepted, _check, _func, apply, apply_inplace, run_plan
from .table import Elementwise
from .temporaries import temporaries

__all__ = ["binary_operators", "numpy_decides", "unary_operator"]

_wrap = DArray._wrap
_new_object = object.__new__


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


_DTYPE_SET = frozenset(DTYPES.values())


def numpy_decides(row: Elementwise) -> bool:
    """Whether NumPy's own function for ``row`` refuses every operand darray refuses.

    Checked on NumPy blocks of every darray dtype, against each other and
    against Python ``int`` and ``float`` scalars, in both orders: where
    darray's dtype category rule (with NumPy's booleans,
    ``NUMPY_BOOL_ARITHMETIC``) refuses, NumPy must raise ``TypeError``; where
    NumPy computes, it must give a darray dtype. Then the operators' lean
    path calls NumPy without checking dtypes first and sends a ``TypeError``
    to the engine, which raises darray's message (or NumPy's, for operands
    darray accepts and NumPy does not: ``int_array & 1.5``).
    """
    f = _func(NUMPY, row.name)
    if type(f) is not np.ufunc:
        return False
    arrays = [np.ones(1, dtype) for dtype in DTYPES.values()]
    with np.errstate(all="ignore"):
        for a in arrays:
            for b in arrays + [1, 1.5]:
                try:
                    _check(row, a.dtype.kind + (b.dtype.kind if type(b) is ndarray else ""), NUMPY)
                    refused = False
                except TypeError:
                    refused = True
                for args in ((a, b), (b, a)) if type(b) is not ndarray else ((a, b),):  # (pairs come both ways)
                    try:
                        out = f(*args)
                    except TypeError:
                        continue
                    if refused or type(out) is not ndarray or out.dtype not in _DTYPE_SET:
                        return False
    return True


def _unary_method(row: Elementwise):
    kernels = _kernels(row.name)

    def method(self):
        block = self._block
        if type(block) is ndarray and not self._layout.has_halo and _recorder.active is None:
            f, accepted = kernels[self._xp]
            if block.dtype in accepted:
                out = f(block)
                if type(out) is not ndarray and block.ndim == 0:  # (a 0-d block: NumPy's kernel gives a scalar)
                    out = _asarray(out)
                if type(out) is ndarray:
                    return _wrap(out, self._layout, self._comm, self._xp)
        return apply(row, (self,))

    method.__name__ = row.operator
    method.__doc__ = f"``{row.operator[2:-2]}`` of every element: :func:`darray.{row.name}`."
    return method


def _general_method(row: Elementwise, kernels: dict, reflected: bool):
    """``a op b`` past the lean path: the short path, the cut path, then the engine."""
    scalars_fast = row.name != "pow"  # ``x ** 0.5`` takes the engine's exact square root

    def general(self, other):
        layout = self._layout
        if type(self._block) is ndarray and not layout.has_halo and _recorder.active is None \
                and self._block.nbytes < SMALL_BLOCK_BYTES:  # the short path
            block = self._block
            xp = self._xp
            kind = type(other)
            if kind is DArray:
                if other._layout is layout or other._layout._hash == layout._hash and other._layout == layout:
                    # (shifted slices differ, by hash at once: the cut path)
                    kernel, allowed = kernels[xp]
                    operand = other._block
                    if block.dtype in allowed and type(operand) is ndarray and operand.dtype in allowed:
                        out = kernel(operand, block) if reflected else kernel(block, operand)
                        if type(out) is ndarray:
                            return _wrap(out, layout, self._comm, xp)
            elif (kind is float or kind is int) and scalars_fast:
                kernel, allowed = kernels[xp]
                if block.dtype in allowed:
                    out = kernel(other, block) if reflected else kernel(block, other)
                    if type(out) is ndarray:
                        return _wrap(out, layout, self._comm, xp)
        block = operand = None  # the engine may reuse a temporary operand's buffer: hold no reference to it
        if type(other) is DArray and other._layout is not layout and _recorder.active is None \
                and not reflected:  # the cut path: a plan the engine remembered (_aligned_binary)
            plan = layout._derived.aligned.get((other._layout, self._comm.rank))  # (aligned_plan, inlined)
            if plan is not None and type(self._block) is ndarray and type(other._block) is ndarray \
                    and other._comm is self._comm:
                if plan.reuses and (self._block.base is None or other._block.base is None):
                    # (temporaries() counts references: it must run as run_plan's argument, with self and other
                    # on the stack, as the calibration of _TEMPORARY_REFS expects)
                    out = run_plan(row, plan, self, other, temporaries(self, other))
                else:  # a view's buffer is never its own to give: the kernel as the short path has it
                    kernel, allowed = kernels[self._xp]
                    if type(kernel) is ufunc and self._block.dtype in allowed and other._block.dtype in allowed \
                            and not plan.layout.has_halo:
                        return _wrap(run_binary(plan, kernel, self, other, None), plan.layout, self._comm, self._xp)
                    out = run_plan(row, plan, self, other, 0)
                if out is not None:
                    return out
        try:
            if reflected:
                return apply(row, (other, self), temporaries(other, self) & 2)
            return apply(row, (self, other), temporaries(self, other))
        except TypeError:
            if not _foreign(other):
                raise
            if row.name in ("equal", "not_equal"):  # (``x == None``: NumPy compares as objects, no element equals it)
                out = apply(row, (self, self))  # (the result's layout and dtype, then every element set)
                out._block[...] = row.name == "not_equal"
                return out
            return NotImplemented  # an object NumPy cannot take: let it try the reflected operator

    return general


def _lean_method(row: Elementwise, kernels: dict, reflected: bool, general):
    """``a op b`` with the lean path in front of ``general`` (see the module), for a row NumPy decides.

    Written once per (row, order): no branch on either at call time. Every
    test that fails sends the call to ``general``, with nothing done.
    """
    f = kernels[NUMPY][0]
    scalars_fast = row.name != "pow"

    def forward(self, other):
        layout = self._layout
        if layout.small_whole and _recorder.active is None:
            kind = type(other)
            if kind is DArray:
                operand = other._block
                block = self._block
                if other._layout is not layout or type(block) is not ndarray or type(operand) is not ndarray:
                    return general(self, other)
            elif (kind is float or kind is int) and scalars_fast:
                operand = other
                block = self._block
                if type(block) is not ndarray:
                    return general(self, other)
            else:
                return general(self, other)
            try:
                out = f(block, operand)
            except TypeError:  # (a dtype darray refuses too) the engine raises darray's message
                return general(self, other)
            if type(out) is not ndarray:  # (a 0-d block: NumPy's kernel gives a scalar)
                out = _asarray(out)
            result = _new_object(DArray)  # DArray._wrap, inlined (a call is 4% of this path's instructions)
            result._block = out
            result._layout = layout
            result._comm = self._comm
            result._xp = self._xp
            result._local = result._halo_exchange = result._link = None
            result._halo_fresh = False
            return result
        return general(self, other)

    def reflect(self, other):  # ``other op self``, ``other`` a Python number (``2.0 * x``)
        layout = self._layout
        if layout.small_whole and _recorder.active is None:
            kind = type(other)
            block = self._block
            if (kind is float or kind is int) and type(block) is ndarray:
                try:
                    out = f(other, block)
                except TypeError:
                    return general(self, other)
                if type(out) is not ndarray:  # (a 0-d block)
                    out = _asarray(out)
                result = _new_object(DArray)  # DArray._wrap, inlined
                result._block = out
                result._layout = layout
                result._comm = self._comm
                result._xp = self._xp
                result._local = result._halo_exchange = result._link = None
                result._halo_fresh = False
                return result
        return general(self, other)

    def engine_only(self, other):  # (``2 ** x``; a front, as ``temporaries`` counts on)
        return general(self, other)

    if reflected:
        return reflect if scalars_fast else engine_only
    return forward


def _checked_method(row: Elementwise, kernels: dict, reflected: bool, general):
    """``a op b`` with the lean path in front of ``general``, the dtypes checked first (NumPy does not decide)."""
    scalars_fast = row.name != "pow"
    f, accepted = kernels[NUMPY]

    def method(self, other):
        layout = self._layout
        if layout.small_whole and _recorder.active is None:
            block = self._block
            kind = type(other)
            if type(block) is ndarray and block.dtype in accepted:
                if kind is DArray:
                    operand = other._block
                    if other._layout is not layout or type(operand) is not ndarray or operand.dtype not in accepted:
                        return general(self, other)
                elif (kind is float or kind is int) and scalars_fast:
                    operand = other
                else:
                    return general(self, other)
                out = f(operand, block) if reflected else f(block, operand)
                result = _new_object(DArray)  # DArray._wrap, inlined
                result._block = out if type(out) is ndarray else _asarray(out)  # (a 0-d block: a NumPy scalar)
                result._layout = layout
                result._comm = self._comm
                result._xp = self._xp
                result._local = result._halo_exchange = result._link = None
                result._halo_fresh = False
                return result
        return general(self, other)

    return method


def _binary_method(row: Elementwise, kernels: dict, reflected: bool):
    """``a op b`` (or, reflected, ``b op a`` for ``b`` not a DArray).

    The lean path is written on the first call, when :func:`numpy_decides`
    (too slow for import time) says which form it takes: the first call
    sets the method on DArray and calls it.
    """
    general = _general_method(row, kernels, reflected)

    def first(self, other):
        decides = numpy_decides(row)
        if compiled.lean is None:
            lean = (_lean_method if decides else _checked_method)(row, kernels, reflected, general)
            lean.__name__, lean.__doc__ = first.__name__, first.__doc__
        else:  # the same lean path, compiled
            general.__name__, general.__doc__ = first.__name__, first.__doc__
            general.__qualname__ = f"DArray.{first.__name__}"
            f, accepted = kernels[NUMPY]
            c = compiled.lean
            scalars = c.SCALARS_ALL if row.name != "pow" else c.SCALARS_NONE if reflected else c.SCALARS_BUT_HALF
            checked = None if decides else accepted
            if row.name == "pow" and not reflected:  # complex ``z ** 2``: NumPy's operator squares (the engine)
                checked = frozenset(d for d in accepted if d.kind != "c")
            lean = c.Lean(c.REFLECTED if reflected else c.BINARY, general, f, checked, scalars)
        setattr(DArray, first.__name__, lean)
        return lean(self, other)

    return first


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


def unary_operator(row: Elementwise):
    """The method of unary operator ``row`` (``-x``): the Python lean path, or its compiled form in front of it."""
    method = _unary_method(row)
    if compiled.lean is not None:  # the lean path compiled, in front of the method
        method.__qualname__ = f"DArray.{row.operator}"
        method = compiled.lean.Lean(compiled.lean.UNARY, method, *_kernels(row.name)[NUMPY])
    return method


def binary_operators(row: Elementwise) -> dict:
    """The methods of binary operator ``row``: ``a op b``, and where it has them ``b op a`` and ``a op= b``."""
    return _binary_methods(row)
