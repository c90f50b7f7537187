"""The dtype names of the namespace: NumPy's scalar types, as in NumPy (``darray.float64 is numpy.float64``).

NumPy itself answers the Array API standard's dtype objects with its scalar
types: ``numpy.dtype("float64") == numpy.float64`` is True, so
``x.dtype == darray.float64`` holds for a DArray ``x`` whose ``x.dtype`` is a
``numpy.dtype``. darray does the same, so that a NumPy script keeps working
under ``import darray as np``:

- ``np.float64(3)`` makes a NumPy scalar, ``isinstance(v, np.floating)`` and
  ``np.issubdtype(x.dtype, np.floating)`` work (the abstract types
  ``generic``, ``number``, ``integer``, ``signedinteger``, ``unsignedinteger``,
  ``inexact``, ``floating``, ``complexfloating`` are here too);
- every darray function taking ``dtype=`` accepts these types, ``numpy.dtype``
  objects, Python's ``bool``/``int``/``float``/``complex`` and dtype strings
  (``"f8"``), through :func:`darray._core.dtypes.to_numpy_dtype`.

A DArray's ``dtype`` stays a ``numpy.dtype`` (as ``ndarray.dtype``). Note,
as in NumPy, that a type and its dtype compare equal but hash differently:
``x.dtype in {np.float64}`` is False; compare with ``==``.

The Array API dtypes have distributed blocks on every local library:
``bool``, ``int8``..``int64``, ``uint8``..``uint64``, ``float32``, ``float64``,
``complex64``, ``complex128``, and NumPy's other names for them (``double``,
``intc``, ``longlong``, ``bool_``, ...). NumPy's ``float16`` (``half``) has
them on every library that has it; ``datetime64``, ``timedelta64`` and
records (``void``, made with a list of fields) on NumPy blocks (see
:func:`darray._core.dtypes.is_extra`). ``longdouble``, strings and objects
are NumPy names darray does not expose (see :mod:`darray._api.numpy.coverage`).

Examples
--------
>>> import darray as np
>>> np.float64(3)
np.float64(3.0)
>>> x = np.zeros(3, np.int32)
>>> x.dtype == np.int32, np.issubdtype(x.dtype, np.integer)
(True, True)
"""

from __future__ import annotations

import numpy

#: The standard's dtype names (NumPy's scalar types of the same names).
STANDARD = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
            "complex64", "complex128")

#: NumPy's other names for those types (C names and aliases), each the very NumPy type.
ALIASES = ("bool_", "byte", "ubyte", "short", "ushort", "intc", "uintc", "int_", "uint", "intp", "uintp", "long",
           "ulong", "longlong", "ulonglong", "single", "double", "csingle", "cdouble")

#: NumPy's abstract scalar types (for ``issubdtype`` and ``isinstance`` of scalars).
ABSTRACT = ("generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact", "floating",
            "complexfloating")

#: NumPy's types beyond the standard that darray distributes too (dates and records on NumPy blocks only).
NUMPY_EXTRA = ("float16", "half", "datetime64", "timedelta64", "void")

__all__ = sorted({*STANDARD, *ALIASES, *ABSTRACT, *NUMPY_EXTRA, "dtype"})

#: NumPy's dtype class: ``darray.dtype("f8")`` is ``numpy.dtype("float64")``.
dtype = numpy.dtype

bool = numpy.bool  # the standard's name
int8, int16, int32, int64 = numpy.int8, numpy.int16, numpy.int32, numpy.int64
uint8, uint16, uint32, uint64 = numpy.uint8, numpy.uint16, numpy.uint32, numpy.uint64
float32, float64, complex64, complex128 = numpy.float32, numpy.float64, numpy.complex64, numpy.complex128

bool_, byte, ubyte, short, ushort = numpy.bool_, numpy.byte, numpy.ubyte, numpy.short, numpy.ushort
intc, uintc, int_, uint, intp, uintp = numpy.intc, numpy.uintc, numpy.int_, numpy.uint, numpy.intp, numpy.uintp
long, ulong, longlong, ulonglong = numpy.long, numpy.ulong, numpy.longlong, numpy.ulonglong
single, double, csingle, cdouble = numpy.single, numpy.double, numpy.csingle, numpy.cdouble

generic, number, integer, signedinteger = numpy.generic, numpy.number, numpy.integer, numpy.signedinteger
unsignedinteger, inexact, floating, complexfloating = (numpy.unsignedinteger, numpy.inexact, numpy.floating,
                                                       numpy.complexfloating)

float16, half, void = numpy.float16, numpy.half, numpy.void
datetime64, timedelta64 = numpy.datetime64, numpy.timedelta64
