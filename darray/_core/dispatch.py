"""Where ``__add__`` is: every method, property and operator of DArray, from one table, installed in one place.

:class:`~darray._core.array.DArray`'s class body holds its data and its
construction only. :data:`TABLE` lists everything else it has, one
:class:`Row` per name: the name, its family and its implementation;
:func:`install` sets them on the class (once, when :mod:`darray._core` is
imported), checks that the table covers the elementwise table's operators
and that nothing is installed twice, tells the compiled paths where the
slots are and calibrates temporary reuse. No engine imports this module, so
``_core`` has no import circle through DArray's assembly: the engines
import the bare class, this module imports the engines.

The families
------------

==============  ====================================================  ===========================
family          implementation (Python)                               compiled front (_lean.c)
==============  ====================================================  ===========================
``property``    a :class:`property` in :mod:`~darray._core.array_methods`  --
``method``      a function in :mod:`~darray._core.array_methods`      --
``attribute``   a class attribute (``__array_priority__``, ...)        --
``convert``     ``float(x)``, ... :mod:`~darray._core.array_methods`  ``lean_convert`` (CONVERT)
``unary``       ``-x``: :func:`darray._core.operators.unary_operator`  ``lean_unary`` (UNARY)
``binary``      ``a + b``: :func:`darray._core.operators.binary_operators`  ``lean_binary`` (BINARY)
``reflected``   ``2.0 * a``: the same                                 ``lean_binary`` (REFLECTED)
``inplace``     ``a += b``: the same (:func:`~darray._core.elementwise.apply_inplace`)  --
``getitem``     ``x[key]``: :func:`darray._core.indexing.getitem`      ``lean_getitem`` (GETITEM)
``setitem``     ``x[key] = v``: :func:`darray._core.indexing.setitem`  ``lean_setitem`` (SETITEM)
``generated``   NumPy's other methods: the table in :mod:`darray._core.methods`  --
==============  ====================================================  ===========================

From the layer above
--------------------

``_core`` never imports or names the layers above it. Where a method's
implementation is a function of ``_api`` (``x.compress``, ``x.conj``; the
public reshape behind ``x.reshape``, the masked reductions behind
``x.sum(where=...)``), ``_core`` installs the method and ``_api`` hands the
function down when darray is imported (:mod:`darray._api.methods`):
:func:`register_method` for a row of the generated table marked ``ABOVE``,
:func:`register_target` for a function DArray's written-out methods call
(``methods.targets.<name>``). :func:`unregistered` lists what is still
missing.

How an operation travels
------------------------

Each family with a compiled front has one fast path, written twice: in C
(``darray/_core/_lean.c``, where a C compiler was at hand) and in Python
(the reference, and what runs with ``DARRAY_PURE_PYTHON=1``); the two make
the same tests in the same order, and every test that fails hands the call,
with nothing done, to the general path behind it:

- ``lean_binary`` mirrors the operators' Python lean path
  (``operators._lean_method`` where NumPy decides the dtypes,
  ``operators._checked_method`` where the accepted dtypes are checked first:
  ``accepted`` is None or a set in C): a small whole NumPy block, the other
  operand on the very same layout or a Python number, one NumPy call and a
  wrap. Behind it: the short path, the cut path (a remembered
  ``BinaryPlan``, ``layout._derived.aligned_plan``), then the engine
  (:func:`darray._core.elementwise.apply`), all in
  ``operators._general_method``.
- ``lean_unary`` mirrors ``operators._unary_method``'s first test, in front
  of the engine.
- ``lean_getitem`` / ``lean_setitem`` mirror the whole-block tier at the top
  of :func:`~darray._core.indexing.getitem` / ``setitem`` (NumPy's indexing
  on a block every rank holds whole; the part's layout from
  ``layout._derived.whole_by_shape``); behind it the remembered
  ``IndexPlan`` tier (``layout._derived.index_plan``), then the general
  path (:mod:`darray._core.indexing`, :mod:`darray._core.advanced`).
- ``lean_convert`` mirrors the first test of ``array_methods._scalar`` (a
  0-d NumPy block converts its NumPy scalar).

Without the C module the Python function is the method itself (no extra
call). A binary operator's method is written on its first call, when
:func:`darray._core.operators.numpy_decides` (too slow for import) says which
lean form it takes: the one other place that sets an attribute of DArray.
Temporary reuse (:mod:`darray._core.temporaries`) reads the frames of this
layout and checks them when it is calibrated, at the end of :func:`install`.

Examples
--------
>>> from darray._core.dispatch import TABLE, family_of
>>> family_of("__add__"), family_of("sum"), family_of("T")
('binary', 'method', 'property')
>>> len({row.name for row in TABLE}) == len(TABLE)
True
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

from . import array_methods as m, compiled, indexing, methods, operators, temporaries
from .array import DArray
from .methods import register_method, register_target, unregistered
from .table import BINARY_OPERATORS, ELEMENTWISE, UNARY_OPERATORS

__all__ = ["Row", "TABLE", "family_of", "install", "register_method", "register_target", "unregistered"]

PROPERTY, METHOD, ATTRIBUTE, CONVERT = "property", "method", "attribute", "convert"
UNARY, BINARY, REFLECTED, INPLACE = "unary", "binary", "reflected", "inplace"
GETITEM, SETITEM, GENERATED = "getitem", "setitem", "generated"


class Row(NamedTuple):
    """One name of DArray: its family and its implementation (for the operator families: the elementwise
    function's name; for ``convert``: the method and the Python conversion the compiled front applies)."""

    name: str
    family: str
    implementation: Any
    kernel: Any = None


#: Every method, property and operator of DArray (NumPy's generated methods: one row, their own table).
TABLE: tuple[Row, ...] = (
    Row("layout", PROPERTY, m.layout),
    Row("comm", PROPERTY, m.comm),
    Row("shape", PROPERTY, m.shape),
    Row("flags", PROPERTY, m.flags),
    Row("setflags", METHOD, m.setflags),
    Row("ndim", PROPERTY, m.ndim),
    Row("size", PROPERTY, m.size),
    Row("dtype", PROPERTY, m.dtype),
    Row("device", PROPERTY, m.device),
    Row("split", PROPERTY, m.split),
    Row("grid", PROPERTY, m.grid),
    Row("halo", PROPERTY, m.halo),
    Row("local", PROPERTY, m.local),
    Row("block", PROPERTY, m.block),
    Row("__matmul__", METHOD, m.__matmul__),
    Row("__rmatmul__", METHOD, m.__rmatmul__),
    Row("__imatmul__", METHOD, m.__imatmul__),
    Row("T", PROPERTY, m.T),
    Row("mT", PROPERTY, m.mT),
    Row("__len__", METHOD, m.__len__),
    Row("gather", METHOD, m.gather),
    Row("to_dask", METHOD, m.to_dask),
    Row("__array__", METHOD, m.__array__),
    Row("__array_ufunc__", METHOD, m.__array_ufunc__),
    Row("__array_function__", METHOD, m.__array_function__),
    Row("__array_namespace__", METHOD, m.__array_namespace__),
    Row("_scalar", METHOD, m._scalar),
    Row("__bool__", CONVERT, m.__bool__, bool),
    Row("__int__", CONVERT, m.__int__, int),
    Row("__float__", CONVERT, m.__float__, float),
    Row("__complex__", CONVERT, m.__complex__, complex),
    Row("__index__", CONVERT, m.__index__, operator.index),
    Row("__round__", METHOD, m.__round__),
    Row("__format__", METHOD, m.__format__),
    Row("__repr__", METHOD, m.__repr__),
    Row("__str__", METHOD, m.__str__),
    Row("_gathered", METHOD, m._gathered),
    Row("__dlpack__", METHOD, m.__dlpack__),
    Row("__dlpack_device__", METHOD, m.__dlpack_device__),
    Row("redistribute", METHOD, m.redistribute),
    Row("exchange_halos", METHOD, m.exchange_halos),
    Row("sum", METHOD, m.sum),
    Row("prod", METHOD, m.prod),
    Row("min", METHOD, m.min),
    Row("max", METHOD, m.max),
    Row("all", METHOD, m.all),
    Row("any", METHOD, m.any),
    Row("mean", METHOD, m.mean),
    Row("var", METHOD, m.var),
    Row("std", METHOD, m.std),
    Row("_moment", METHOD, m._moment),
    Row("reshape", METHOD, m.reshape),
    Row("copy", METHOD, m.copy),
    Row("astype", METHOD, m.astype),
    Row("__copy__", METHOD, m.__copy__),
    Row("__deepcopy__", METHOD, m.__deepcopy__),
    Row("itemsize", PROPERTY, m.itemsize),
    Row("nbytes", PROPERTY, m.nbytes),
    Row("strides", PROPERTY, m.strides),
    Row("real", PROPERTY, m.real),
    Row("imag", PROPERTY, m.imag),
    Row("flat", PROPERTY, m.flat),
    Row("__array_priority__", ATTRIBUTE, m.__array_priority__),
    Row("__class_getitem__", ATTRIBUTE, m.__class_getitem__),
    Row("__iter__", METHOD, m.__iter__),
    Row("__contains__", METHOD, m.__contains__),
    Row("__divmod__", METHOD, m.__divmod__),
    Row("__rdivmod__", METHOD, m.__rdivmod__),
    Row("__delitem__", METHOD, m.__delitem__),
    Row("__sizeof__", METHOD, m.__sizeof__),
    Row("to_device", METHOD, m.to_device),
    Row("__hash__", ATTRIBUTE, None),  # arrays compare elementwise, so they are unhashable (like NumPy's)
    # the operators, from the elementwise table (darray._core.table)
    Row("__abs__", UNARY, "abs"),
    Row("__invert__", UNARY, "bitwise_invert"),
    Row("__neg__", UNARY, "negative"),
    Row("__pos__", UNARY, "positive"),
    Row("__add__", BINARY, "add"),
    Row("__radd__", REFLECTED, "add"),
    Row("__iadd__", INPLACE, "add"),
    Row("__and__", BINARY, "bitwise_and"),
    Row("__rand__", REFLECTED, "bitwise_and"),
    Row("__iand__", INPLACE, "bitwise_and"),
    Row("__lshift__", BINARY, "bitwise_left_shift"),
    Row("__rlshift__", REFLECTED, "bitwise_left_shift"),
    Row("__ilshift__", INPLACE, "bitwise_left_shift"),
    Row("__or__", BINARY, "bitwise_or"),
    Row("__ror__", REFLECTED, "bitwise_or"),
    Row("__ior__", INPLACE, "bitwise_or"),
    Row("__rshift__", BINARY, "bitwise_right_shift"),
    Row("__rrshift__", REFLECTED, "bitwise_right_shift"),
    Row("__irshift__", INPLACE, "bitwise_right_shift"),
    Row("__xor__", BINARY, "bitwise_xor"),
    Row("__rxor__", REFLECTED, "bitwise_xor"),
    Row("__ixor__", INPLACE, "bitwise_xor"),
    Row("__truediv__", BINARY, "divide"),
    Row("__rtruediv__", REFLECTED, "divide"),
    Row("__itruediv__", INPLACE, "divide"),
    Row("__eq__", BINARY, "equal"),
    Row("__floordiv__", BINARY, "floor_divide"),
    Row("__rfloordiv__", REFLECTED, "floor_divide"),
    Row("__ifloordiv__", INPLACE, "floor_divide"),
    Row("__gt__", BINARY, "greater"),
    Row("__ge__", BINARY, "greater_equal"),
    Row("__lt__", BINARY, "less"),
    Row("__le__", BINARY, "less_equal"),
    Row("__mul__", BINARY, "multiply"),
    Row("__rmul__", REFLECTED, "multiply"),
    Row("__imul__", INPLACE, "multiply"),
    Row("__ne__", BINARY, "not_equal"),
    Row("__pow__", BINARY, "pow"),
    Row("__rpow__", REFLECTED, "pow"),
    Row("__ipow__", INPLACE, "pow"),
    Row("__mod__", BINARY, "remainder"),
    Row("__rmod__", REFLECTED, "remainder"),
    Row("__imod__", INPLACE, "remainder"),
    Row("__sub__", BINARY, "subtract"),
    Row("__rsub__", REFLECTED, "subtract"),
    Row("__isub__", INPLACE, "subtract"),
    # indexing
    Row("__getitem__", GETITEM, indexing.getitem),
    Row("__setitem__", SETITEM, indexing.setitem),
    # NumPy's other ndarray methods, and the names it has that DArray refuses (darray._core.methods)
    Row("*", GENERATED, methods.generated),
)

_FAMILY = {row.name: row.family for row in TABLE}


def family_of(name: str) -> str:
    """The family of DArray's attribute ``name`` (``generated`` for NumPy's other methods)."""
    return _FAMILY.get(name, GENERATED)


def _named(value, name: str):
    """``value`` with the qualified name of a DArray attribute (functions and properties' accessors)."""
    for f in (value.fget, value.fset) if isinstance(value, property) else (value,):
        if hasattr(f, "__code__"):
            f.__qualname__ = f"DArray.{name}"
    return value


def _check_operators() -> None:
    """Every operator of the elementwise table has its rows, and every operator row names its function."""
    by_name = {row.name: row for row in ELEMENTWISE}
    want = {row.operator for row in UNARY_OPERATORS.values()}
    for row in BINARY_OPERATORS.values():
        want.add(row.operator)
        if row.inplace:
            want |= {f"__r{row.operator[2:]}", f"__i{row.operator[2:]}"}
    have = {row.name for row in TABLE if row.family in (UNARY, BINARY, REFLECTED, INPLACE)}
    wrong = [row.name for row in TABLE if row.family in (UNARY, BINARY, REFLECTED, INPLACE)
             and (row.implementation not in by_name or not row.name.endswith(by_name[row.implementation].operator[2:]))]
    if want != have or wrong:
        raise AssertionError(f"darray._core.dispatch.TABLE: operators missing {sorted(want - have)}, "
                             f"not in the elementwise table {sorted(have - want)}, misnamed {wrong}")


def install() -> None:
    """Set every row of :data:`TABLE` on DArray (once), then set up the compiled paths and temporary reuse."""
    if "__add__" in vars(DArray):
        return
    _check_operators()
    lean = compiled.lean
    binary: dict[str, dict] = {}  # elementwise function -> its operator methods (written together: shared kernels)
    installed: dict[str, Any] = {}
    for row in TABLE:
        family = row.family
        if family in (PROPERTY, METHOD):
            values = {row.name: _named(row.implementation, row.name)}
        elif family == ATTRIBUTE:
            values = {row.name: row.implementation}
        elif family == CONVERT:
            values = {row.name: _named(row.implementation, row.name) if lean is None
                      else lean.Lean(lean.CONVERT, _named(row.implementation, row.name), row.kernel)}
        elif family == UNARY:
            values = {row.name: operators.unary_operator(ELEMENTWISE_BY_NAME[row.implementation])}
        elif family in (BINARY, REFLECTED, INPLACE):
            methods_of = binary.get(row.implementation)
            if methods_of is None:
                methods_of = binary[row.implementation] = operators.binary_operators(
                    ELEMENTWISE_BY_NAME[row.implementation])
            values = {row.name: methods_of[row.name]}
        elif family in (GETITEM, SETITEM):  # (pure Python: the functions themselves, no extra call)
            kind = None if lean is None else lean.GETITEM if family == GETITEM else lean.SETITEM
            values = {row.name: row.implementation if lean is None else lean.Lean(kind, row.implementation)}
        elif family == GENERATED:
            values = row.implementation()
        else:
            raise AssertionError(f"darray._core.dispatch.TABLE: unknown family {family!r} of {row.name}")
        for name, value in values.items():
            if name in installed:
                raise AssertionError(f"darray._core.dispatch.TABLE: {name} installed twice")
            installed[name] = value
            setattr(DArray, name, value)
    compiled.setup(DArray)
    # Six operator calls on 2-element arrays (well under a millisecond): the threshold for reusing temporaries
    # must be known before the first operator runs, and measuring it needs the operators installed above.
    temporaries.calibrate_reuse()


ELEMENTWISE_BY_NAME = {row.name: row for row in ELEMENTWISE}
