"""darray's ufuncs: the elementwise names as objects with NumPy's ufunc interface.

Every elementwise name of darray's namespace is one :class:`ufunc` object:
the Array API standard's (``add``, ``atan2``, ``pow``, ``bitwise_invert``,
...) and NumPy's (``arctan2``, ``power``, ``fmod``, ``absolute``, ...). Where
NumPy's names are one object (``numpy.atan2 is numpy.arctan2``), darray's are
too, named as NumPy names it (``darray.atan2.__name__ == "arctan2"``; its
errors name both). Each has NumPy's call signature
(``out=``, ``where=``, ``dtype=``, ``casting=``, ``order=``, ``subok=``), its
attributes (``nin``, ``nout``, ``nargs``, ``identity``, ``types``, ``ntypes``,
``signature``) and its methods ``reduce``, ``accumulate``, ``outer``, ``at``
and ``reduceat`` (:mod:`darray._api.ufunc_methods`), all with global
semantics on DArrays and returning DArrays.

Calls:

- without keywords, a standard name runs darray's elementwise engine
  (:func:`darray._core.apply`, the same path as the plain function had:
  Array API dtype categories; integer operands of floating-point functions are
  promoted to a float as NumPy does (int8 to float16, int16 to float32, wider ones to float64),
  so ``sqrt(-1)`` is ``nan`` with NumPy's RuntimeWarning);
- with keywords on NumPy blocks, and for NumPy-only names (``fmod``,
  ``divmod``, ...), NumPy's ufunc runs block by block on aligned blocks
  (:func:`darray._core.protocols.ufunc_call`): ``out=`` is written directly,
  ``np.multiply(A, B, out=A)`` works in place, ``where=`` and ``dtype=`` are
  NumPy's;
- other local libraries (CuPy, torch, array-api-strict) run standard names
  through the engine with ``dtype=`` (inputs cast), ``where=`` (a select) and
  ``out=`` (copied into the out's block); NumPy-only names without a standard
  equivalent raise TypeError there.

Inputs without any DArray (Python scalars, lists, NumPy arrays) are one rule:
they are converted with :func:`darray.asarray` (small arrays replicated) and
the result is a DArray -- 0-d for scalars, which converts with ``float()`` /
``int()`` -- so that an ``import darray as np`` script stays in darray.

Operators (``a + b``) do not go through these objects: they call the engine
directly. ``numpy.add(x, ...)`` and ``numpy.add.reduce(x)`` on DArrays reach
the same code through ``DArray.__array_ufunc__``.

Examples
--------
>>> import darray as np
>>> x = np.asarray([1.0, 2.0, 3.0, 4.0])
>>> float(np.add.reduce(x)), np.add
(10.0, <darray ufunc 'add'>)
>>> np.maximum.accumulate(np.asarray([1, 3, 2, 5])).gather().tolist()
[1, 3, 3, 5]
"""

from __future__ import annotations

import numpy

from numpy import ndarray

from .. import _recorder
from .._backend import NUMPY, is_numpy_namespace
from .._core import DArray, apply
from .._core.elementwise import _accepted, _func
from .._core import protocols as _protocols
from .._core.dtypes import CATEGORIES, to_numpy_dtype
from .._core.table import ELEMENTWISE, Elementwise
from .._errors import message
from . import ufunc_methods as _methods

__all__ = ["ufunc", "UFUNCS", "NUMPY_UFUNC_NAMES", "STANDARD_EQUIVALENTS"]

#: NumPy ufuncs that the standard names differently or lacks.
NUMPY_UFUNC_NAMES = (
    "absolute", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "bitwise_count",
    "bitwise_not", "cbrt", "conjugate", "deg2rad", "degrees", "divmod", "exp2", "fabs", "float_power", "fmax",
    "fmin", "fmod", "frexp", "gcd", "heaviside", "invert", "isnat", "lcm", "ldexp", "left_shift", "logaddexp2", "mod",
    "modf", "power", "rad2deg", "radians", "right_shift", "rint", "spacing", "true_divide",
)

#: NumPy name -> the standard's function of the same meaning (what it runs on non-NumPy blocks).
STANDARD_EQUIVALENTS = {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh", "arctan": "atan",
    "arctan2": "atan2", "arctanh": "atanh", "bitwise_not": "bitwise_invert", "conjugate": "conj",
    "invert": "bitwise_invert", "left_shift": "bitwise_left_shift", "mod": "remainder", "power": "pow",
    "right_shift": "bitwise_right_shift", "true_divide": "divide",
}

_KEYWORDS = frozenset({"out", "where", "dtype", "casting", "order", "subok"})
_FLOATING = frozenset({"floating-point", "real floating-point"})
_CLASS_DOC = """A darray ufunc: an elementwise function with NumPy's ufunc interface (see :mod:`darray._api.ufuncs`).

    Examples
    --------
    >>> import darray as da
    >>> x = da.asarray([[1, 2], [3, 4]])
    >>> da.add.nin, da.add.identity, da.multiply.reduce(x, axis=1).gather().tolist()
    (2, 0, [2, 12])
    >>> da.subtract.outer(da.asarray([10, 20]), da.asarray([1, 2, 3])).gather().tolist()
    [[9, 8, 7], [19, 18, 17]]
    """


class _Doc:
    """``__doc__`` per instance (the class's own docstring on the class)."""

    def __get__(self, obj, cls=None):
        return _CLASS_DOC if obj is None else obj._doc


def _float_for(x: DArray) -> numpy.dtype:
    """The float NumPy computes integer ``x``'s floating-point functions in (float16 for 8-bit integers),
    float16 raised to float32 where the local library has no float16 (array-api-strict)."""
    smallest = numpy.promote_types(x.dtype, numpy.float16)
    if smallest == numpy.float16 and getattr(x._xp, "float16", None) is None:
        return numpy.dtype(numpy.float32)
    return smallest


_wrap = DArray._wrap


class ufunc:  # NumPy's name
    __slots__ = ("__name__", "__qualname__", "_doc", "_row", "_np", "_floating", "_alias", "_said", "nin", "nout", "nargs",
                 "identity", "signature", "_lean", "_unary")
    __doc__ = _Doc()
    __module__ = "darray"

    def __init__(self, name: str, row: Elementwise | None, np_ufunc: numpy.ufunc | None):
        self.__name__ = self.__qualname__ = name
        self._row = row
        self._np = np_ufunc
        self._floating = row is not None and row.category in _FLOATING
        self._alias = row is not None and row.name != name  # errors of the engine name the standard name
        self._said = f"{name} ({row.name})" if self._alias else name  # how errors name it: "arctan2 (atan2)"
        self.nin = np_ufunc.nin if np_ufunc is not None else row.nargs
        self.nout = np_ufunc.nout if np_ufunc is not None else 1
        self.nargs = self.nin + self.nout
        self.identity = np_ufunc.identity if np_ufunc is not None else None
        self.signature = None
        self._doc = _docstring(self)
        self._lean = None  # (NumPy's kernel, the dtypes the engine accepted): made on the first lean call
        self._unary = row is not None and row.nargs == 1  # (a slot: a row's fields are slow attributes on 3.11)

    def _lean_kernel(self) -> tuple:
        self._lean = (_func(NUMPY, self._row.name), _accepted(NUMPY, self._row.name))
        return self._lean

    # ------------------------------------------------------------ calling
    def __call__(self, *args, **kwargs):
        row = self._row
        if not kwargs and row is not None and args and type(args[0]) is DArray:  # the plain function's cost
            first = args[0]
            if self._unary and len(args) == 1 and first._layout.small_whole and type(first._block) is ndarray \
                    and _recorder.active is None:  # the operators' lean path (darray._core.operators), unary
                kernel, accepted = self._lean or self._lean_kernel()
                block = first._block
                if block.dtype in accepted:  # (else the engine checks the dtype, and accepts it for next time)
                    out = kernel(block)
                    if type(out) is not ndarray:  # (a 0-d block: NumPy's kernel gives a scalar)
                        out = numpy.asarray(out)
                    return _wrap(out, first._layout, first._comm, first._xp)
            try:
                out = apply(row, args)
            except (TypeError, ValueError) as error:
                return self._failed(args, error)
            if out is not NotImplemented:
                return out
        return self._call(args, kwargs)

    def _call(self, args: tuple, kwargs: dict):
        name = self._said
        for key in kwargs:
            if key not in _KEYWORDS:
                raise TypeError(message(name, "unexpected keyword argument", repr(key),
                                        "out, where, dtype, casting, order or subok"))
        if len(args) not in (self.nin, self.nargs):
            raise TypeError(message(name, "wrong number of arguments", len(args),
                                    f"{self.nin} inputs (and up to {self.nout} outputs)"))
        out = kwargs.get("out")
        if len(args) > self.nin:
            if out is not None:
                raise TypeError(message(name, "out given both as an argument and as out=", None, "one of them"))
            out = args[self.nin:] if self.nout > 1 else args[self.nin]
            args = args[:self.nin]
        outs = _out_tuple(name, out, self.nout)
        where, dtype = kwargs.get("where", True), kwargs.get("dtype")
        if kwargs.get("order", "K") not in ("K", "A", "C", "F"):
            raise ValueError(message(name, "unknown order", repr(kwargs["order"]), "'K', 'A', 'C' or 'F'"))
        if not any(isinstance(a, DArray) for a in args):
            args = tuple(_methods.as_darray(name, a) for a in args)
        darrays = [a for a in (*args, *outs) if isinstance(a, DArray)]
        numpy_blocks = all(is_numpy_namespace(a._xp) for a in darrays)
        plain = not outs and where is True and dtype is None
        if self._row is not None and plain and (not numpy_blocks or kwargs.keys() <= {"casting", "order", "subok"}):
            try:
                out = apply(self._row, args)
            except (TypeError, ValueError) as error:
                return self._failed(args, error)
            if out is NotImplemented:
                raise TypeError(message(name, "unsupported operand types", tuple(type(a).__name__ for a in args),
                                        "DArrays, arrays or numbers"))
            return out
        if numpy_blocks and self._np is not None:
            keywords = {k: v for k, v in kwargs.items() if k != "out"}
            if outs:
                keywords["out"] = outs
            result = _protocols.ufunc_call(self._np, args, keywords)
            if result is NotImplemented:
                raise TypeError(message(name, "unsupported operand types", tuple(type(a).__name__ for a in args),
                                        "DArrays, NumPy arrays, sequences of numbers or numbers"))
            return result
        if self._row is None:
            raise TypeError(message(name, "a NumPy ufunc without a standard equivalent needs NumPy blocks",
                                    darrays[0]._xp.__name__ if darrays else None, "DArrays of NumPy blocks"))
        return _methods.call_with_keywords(self, args, outs[0] if outs else None, where, dtype,
                                           kwargs.get("casting", "same_kind"))

    def _failed(self, args: tuple, error: Exception):
        """After the engine raised: positional outputs, NumPy's int -> float64 promotion, or the error renamed.

        NumPy promotes integer operands of floating-point functions to the
        smallest float that holds them (``sqrt(-1)`` is nan; int8 and uint8 give
        float16, int16 float32, int32 and int64 float64; float32 for 8-bit integers
        where the local library has no float16). Booleans and other dtype errors stand.
        """
        if len(args) != self.nin:  # positional outputs, or a wrong count: the full call sorts it out
            return self._call(args, {})
        if isinstance(error, TypeError) and self._floating and not any(isinstance(a, bool) for a in args):
            kinds = {to_numpy_dtype(a.dtype).kind for a in args if isinstance(a, DArray)}
            if kinds & {"i", "u"} and kinds <= {"i", "u", "f"}:
                promoted = tuple(a.astype(_float_for(a)) if isinstance(a, DArray) and a.dtype.kind in "iu"
                                 else a for a in args)
                return apply(self._row, promoted)
        raise self._renamed(error) from None

    def _renamed(self, error: Exception) -> Exception:
        """An engine error, which names the standard function, naming NumPy's alias too (``arctan2 (atan2)``)."""
        if self._alias:
            text = str(error)
            prefix = f"{self._row.name}:"
            if text.startswith(prefix):
                error.args = (f"{self._said}:{text[len(prefix):]}",)
        return error

    # ------------------------------------------------------------ methods (darray._api.ufunc_methods)
    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, initial=_methods.NO_VALUE, where=True):
        """``ufunc.reduce`` on the global array (see :func:`darray._api.ufunc_methods.reduce`)."""
        return _methods.reduce(self, array, axis, dtype, out, keepdims, initial, where)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        """``ufunc.accumulate`` on the global array (see :func:`darray._api.ufunc_methods.accumulate`)."""
        return _methods.accumulate(self, array, axis, dtype, out)

    def outer(self, A, B, /, **kwargs):
        """``ufunc.outer``: ``A[..., None, ...] op B`` (see :func:`darray._api.ufunc_methods.outer`)."""
        return _methods.outer(self, A, B, kwargs)

    def at(self, a, indices, b=None, /):
        """``ufunc.at``: unbuffered in place at ``indices`` (see :func:`darray._api.ufunc_methods.at`)."""
        return _methods.at(self, a, indices, b)

    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        """``ufunc.reduceat`` on the global array (see :func:`darray._api.ufunc_methods.reduceat`)."""
        return _methods.reduceat(self, array, indices, axis, dtype, out)

    # ------------------------------------------------------------ attributes
    @property
    def types(self) -> list[str]:
        """The loops, as NumPy lists them (``'dd->d'``); for darray-only names, from the dtype category."""
        if self._np is not None:
            return list(self._np.types)
        allowed = CATEGORIES[self._row.category]
        loops = []
        for char in "?bBhHiIlLqQefdgFDG":
            if numpy.dtype(char).kind in allowed:
                result = getattr(numpy, self._row.name)(numpy.zeros(1, char))
                loops.append(f"{char * self.nin}->{result.dtype.char}")
        return loops

    @property
    def ntypes(self) -> int:
        return len(self.types)

    def __repr__(self) -> str:
        return f"<darray ufunc {self.__name__!r}>"

    def __reduce__(self) -> str:
        return self.__name__  # pickled by name: darray.<name>


def _out_tuple(name: str, out, nout: int) -> tuple:
    if out is None:
        return ()
    outs = out if isinstance(out, tuple) else (out,)
    if len(outs) != nout:
        raise ValueError(message(name, "out= needs one array per output", len(outs), str(nout)))
    if all(o is None for o in outs):
        return ()
    if any(o is None for o in outs):
        raise TypeError(message(name, "out= must give every output", outs, "DArrays"))
    return outs


def _docstring(f: ufunc) -> str:
    standard = f._row.name if f._row is not None else None
    args = ", ".join(f"x{i + 1}" for i in range(f.nin)) if f.nin > 1 else "x"
    also = f" (the standard's ``{standard}``)" if standard and standard != f.__name__ else ""
    doc = (f"``{f.__name__}({args}, /, out=None, *, where=True, dtype=None, ...)``{also}: ``numpy.{f.__name__}`` "
           "elementwise on the global array.\n\n")
    if f._row is not None:
        doc += (f"Accepts {f._row.category} dtypes; the result keeps the layout of the first\n"
                "distributed operand of the result's shape; other operands are aligned to it.\n")
    else:
        doc += "A NumPy ufunc: runs NumPy's loop on aligned NumPy blocks.\n"
    return doc + ("Methods ``reduce``, ``accumulate``, ``outer``, ``at``, ``reduceat`` as NumPy's, distributed "
                  "(see :mod:`darray._api.ufuncs`).\n")


def _build() -> dict[str, ufunc]:
    """One object per NumPy ufunc (aliases share it), plus the standard's names NumPy has no ufunc for."""
    by_numpy: dict[numpy.ufunc, ufunc] = {}
    out: dict[str, ufunc] = {}
    standard_of = {row.name: row for row in ELEMENTWISE}
    for name in [row.name for row in ELEMENTWISE] + list(NUMPY_UFUNC_NAMES):
        np_ufunc = getattr(numpy, name, None)
        np_ufunc = np_ufunc if isinstance(np_ufunc, numpy.ufunc) else None
        if np_ufunc is not None and np_ufunc in by_numpy:
            out[name] = by_numpy[np_ufunc]
            out[name]._doc += f"Also ``darray.{name}`` (``numpy.{name}``).\n"
            continue
        row = standard_of.get(name) or standard_of.get(STANDARD_EQUIVALENTS.get(name, ""))
        obj = ufunc(np_ufunc.__name__ if np_ufunc is not None else name, row, np_ufunc)
        if name != obj.__name__:
            obj._doc += f"Also ``darray.{name}`` (``numpy.{name}``).\n"
        if np_ufunc is not None:
            by_numpy[np_ufunc] = obj
        out[name] = obj
    _protocols.UFUNCS.update(by_numpy)
    return out


#: name -> ufunc, for every elementwise name (standard and NumPy's; aliases map to one object).
UFUNCS: dict[str, ufunc] = _build()
