"""darray's dtypes are NumPy dtype objects; local blocks use their backend's own."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from .._backend import is_numpy_namespace

__all__ = ["DTYPES", "CATEGORIES", "NUMPY_ONLY_KINDS", "to_numpy_dtype", "to_backend_dtype", "kind_of",
           "check_category", "check_dtype", "is_extra"]

#: The dtypes the Array API standard names, by name.
DTYPES = {name: np.dtype(name) for name in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128")}

#: NumPy's dtypes beyond the standard that darray distributes too, by name: ``float16`` on any local library
#: that has it; ``datetime64``/``timedelta64`` (any unit) and structured dtypes (see :func:`is_extra`) on
#: NumPy blocks. None of them is in a category of the standard: each function says which it takes.
EXTRA = {"float16": np.dtype("float16")}

#: Kinds whose blocks only NumPy holds: dates, durations and records.
NUMPY_ONLY_KINDS = frozenset("MmV")

#: Array API dtype categories as sets of NumPy kind characters.
CATEGORIES = {
    "bool": frozenset("b"),
    "integer": frozenset("iu"),
    "integer or boolean": frozenset("iub"),
    "real numeric": frozenset("iuf"),
    "real or boolean": frozenset("iufb"),
    "numeric": frozenset("iufc"),
    "floating-point": frozenset("fc"),
    "real floating-point": frozenset("f"),
    "complex floating-point": frozenset("c"),
    "any": frozenset("biufc"),
}

_from_backend: dict[Any, np.dtype] = {}


def to_numpy_dtype(dtype: Any) -> np.dtype:
    """The NumPy dtype equal to a backend dtype (``torch.float32`` -> ``float32``)."""
    if isinstance(dtype, np.dtype):
        return dtype
    try:
        found = _from_backend.get(dtype)
    except TypeError:  # unhashable: a record's field list ([("x", float), ("y", "i4")]) or nothing NumPy takes
        try:
            return np.dtype(dtype)
        except TypeError:
            raise TypeError(f"dtype: unsupported dtype; got {dtype!r}, expected one of {sorted(DTYPES)}") from None
    if found is None:
        try:
            found = np.dtype(dtype)
        except TypeError:
            name = str(dtype).rsplit(".", 1)[-1]
            found = DTYPES.get(name, EXTRA.get(name))
            if found is None:
                raise TypeError(f"dtype: unsupported dtype; got {dtype!r}, expected one of {sorted(DTYPES)}") from None
        _from_backend[dtype] = found
    return found


def to_backend_dtype(xp: ModuleType, dtype: Any, func: str = "dtype") -> Any:
    """The backend ``xp``'s dtype object for a dtype of the standard (``TypeError`` for others)."""
    if dtype is None:
        return None
    try:
        return _backend_dtypes[xp, dtype]
    except (KeyError, TypeError):  # not seen yet, or unhashable
        pass
    checked = check_dtype(func, dtype)  # (its message says why: strings, objects, raw bytes, long doubles)
    if checked.kind in NUMPY_ONLY_KINDS:
        if not (is_numpy_namespace(xp) or xp is np):
            raise TypeError(f"{func}: unsupported dtype; got {checked} on {getattr(xp, '__name__', xp)} blocks, "
                            f"expected NumPy blocks (dates, durations and records live in NumPy arrays only)")
        found = checked
    else:
        found = getattr(xp, checked.name, None)
        if found is None:
            raise TypeError(f"{func}: unsupported dtype; got {checked}, which {getattr(xp, '__name__', xp)} "
                            f"(the local library) does not have; expected one of {sorted(DTYPES)}")
    try:
        _backend_dtypes[xp, dtype] = found
    except TypeError:  # (a record's field list is unhashable: not remembered)
        pass
    return found


_backend_dtypes: dict = {}  # (namespace, dtype spec) -> the namespace's dtype object


_STANDARD = frozenset(DTYPES.values())  # native byte order: a set lookup instead of ``dtype.name``


def check_dtype(func: str, dtype: Any) -> np.dtype:
    """The NumPy dtype of ``dtype`` if darray distributes it (the standard's, or :func:`is_extra`), else
    ``TypeError``.

    ``dtype`` is anything ``numpy.dtype`` takes (``numpy.float64``, ``float``,
    ``"f8"``, a ``numpy.dtype``, a record's field list) or a backend's dtype
    (``torch.float32``). NumPy's other names of a standard dtype
    (``numpy.longlong``) give the standard's dtype (``int64``).
    """
    found = to_numpy_dtype(dtype)
    if found in _STANDARD:
        return found
    if is_extra(found):
        return found
    if found.kind == "V" and found.names is None:  # raw bytes, e.g. a row viewed as one item (unique rows)
        raise TypeError(f"{func}: unsupported dtype; got {found} (raw bytes without fields are not distributed), "
                        f"expected a bool, numeric, datetime64, timedelta64 or record dtype of those; for unique "
                        f"rows use numpy.unique(x, axis=0), or view the row as a record dtype with named fields")
    if found.kind in "SUOV":  # (MPI moves numbers; strings and objects have no block form here)
        raise TypeError(f"{func}: unsupported dtype; got {found} (strings and objects are not distributed), "
                        f"expected a bool, numeric, datetime64, timedelta64 or record dtype of those; for text, "
                        f"gather with numpy.asarray(x) and convert there")
    if found.name not in DTYPES:
        raise TypeError(f"{func}: unsupported dtype; got {found}, expected one of {sorted(DTYPES)}")
    return DTYPES[found.name] if found.isnative else found  # numpy.longlong -> int64; '>f8' stays


def is_extra(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is one of NumPy's dtypes beyond the standard that darray distributes.

    ``float16``; ``datetime64`` and ``timedelta64`` of any unit; and structured
    (record) dtypes whose fields, nested records and subarray fields included,
    are all of those or of the standard's dtypes (no text or objects: a block
    must be plain bytes that MPI can move).

    >>> import numpy
    >>> is_extra(numpy.dtype("M8[D]")), is_extra(numpy.dtype([("x", "f8"), ("t", "m8[s]", (2,))]))
    (True, True)
    >>> is_extra(numpy.dtype([("name", "U8")]))
    False
    """
    kind = dtype.kind
    if kind == "f":
        return dtype.itemsize == 2
    if kind in "Mm":
        return True
    if kind != "V" or dtype.names is None:
        return False
    for name in dtype.names:
        field = dtype.fields[name][0].base  # (a subarray field's element dtype)
        if field not in _STANDARD and not is_extra(field) and field.name not in DTYPES:  # ('>f8' is in DTYPES)
            return False
    return True


def kind_of(dtype: Any) -> str:
    return to_numpy_dtype(dtype).kind


def check_category(func: str, dtype: Any, category: str) -> None:
    """Raise ``TypeError`` if ``dtype`` is not in the Array API ``category``."""
    if to_numpy_dtype(dtype).kind not in CATEGORIES[category]:
        raise TypeError(f"{func}: unsupported dtype; got {to_numpy_dtype(dtype)}, expected a {category} dtype")
