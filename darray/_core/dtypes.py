"""darray's dtypes are NumPy dtype objects; local blocks use their backend's own."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["DTYPES", "CATEGORIES", "to_numpy_dtype", "to_backend_dtype", "kind_of", "check_category", "check_dtype"]

#: The dtypes the Array API standard names, by name.
DTYPES = {name: np.dtype(name) for name in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128")}

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
    except TypeError:  # unhashable
        raise TypeError(f"dtype: unsupported dtype; got {dtype!r}, expected one of {sorted(DTYPES)}") from None
    if found is None:
        try:
            found = np.dtype(dtype)
        except TypeError:
            name = str(dtype).rsplit(".", 1)[-1]
            if name not in DTYPES:
                raise TypeError(f"dtype: unsupported dtype; got {dtype!r}, expected one of {sorted(DTYPES)}") from None
            found = DTYPES[name]
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
    try:
        name = check_dtype(func, dtype).name
    except TypeError:
        raise TypeError(f"{func}: unsupported dtype; got {dtype!r}, expected one of {sorted(DTYPES)}") from None
    found = getattr(xp, name)
    _backend_dtypes[xp, dtype] = found
    return found


_backend_dtypes: dict = {}  # (namespace, dtype spec) -> the namespace's dtype object


_STANDARD = frozenset(DTYPES.values())  # native byte order: a set lookup instead of ``dtype.name``


def check_dtype(func: str, dtype: Any) -> np.dtype:
    """The standard's NumPy dtype of ``dtype``, else ``TypeError``.

    ``dtype`` is anything ``numpy.dtype`` takes (``numpy.float64``, ``float``,
    ``"f8"``, a ``numpy.dtype``) or a backend's dtype (``torch.float32``).
    NumPy's other names of a standard dtype (``numpy.longlong``) give the
    standard's dtype (``int64``).
    """
    found = to_numpy_dtype(dtype)
    if found in _STANDARD:
        return found
    if found.kind in "SUOV":  # (MPI moves numbers; strings, objects and records have no block form here)
        raise TypeError(f"{func}: unsupported dtype; got {found} (strings, objects and records are not "
                        f"distributed), expected a bool or numeric dtype; for text, gather with numpy.asarray(x) "
                        f"and convert there")
    if found.name not in DTYPES:
        raise TypeError(f"{func}: unsupported dtype; got {found}, expected one of {sorted(DTYPES)}")
    return DTYPES[found.name] if found.isnative else found  # numpy.longlong -> int64; '>f8' stays


def kind_of(dtype: Any) -> str:
    return to_numpy_dtype(dtype).kind


def check_category(func: str, dtype: Any, category: str) -> None:
    """Raise ``TypeError`` if ``dtype`` is not in the Array API ``category``."""
    if to_numpy_dtype(dtype).kind not in CATEGORIES[category]:
        raise TypeError(f"{func}: unsupported dtype; got {to_numpy_dtype(dtype)}, expected a {category} dtype")
