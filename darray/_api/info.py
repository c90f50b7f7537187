"""Inspection API (``__array_namespace_info__``): capabilities, default dtypes, devices."""

from __future__ import annotations

import numpy as np

from .._backend import available_backends
from .._core import DTYPES

__all__ = ["__array_namespace_info__", "Info"]

_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "integral": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
    "numeric": ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
                "complex64", "complex128"),
}


class Info:
    """What this darray namespace supports (Array API inspection object)."""

    __module__ = "darray"

    def capabilities(self) -> dict:
        """Boolean indexing and data-dependent shapes work (results are distributed)."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        return "cpu"

    def devices(self) -> list:
        """Backends usable for local blocks here (``device=`` accepts their names)."""
        return ["cpu"] + [name for name, ok in available_backends().items() if ok and name != "numpy"]

    def _check_device(self, func: str, device) -> None:
        if device is not None and device not in self.devices():
            raise ValueError(f"__array_namespace_info__().{func}: unknown device; got {device!r}, "
                             f"expected None or one of {self.devices()}")

    def default_dtypes(self, *, device=None) -> dict:
        self._check_device("default_dtypes", device)
        return {"real floating": np.dtype("float64"), "complex floating": np.dtype("complex128"),
                "integral": np.dtype("int64"), "indexing": np.dtype("int64")}

    def dtypes(self, *, device=None, kind=None) -> dict:
        self._check_device("dtypes", device)
        if kind is None:
            return dict(DTYPES)
        kinds = kind if isinstance(kind, tuple) else (kind,)
        out = {}
        for k in kinds:
            if isinstance(k, str):
                if k not in _KINDS:
                    raise ValueError(f"dtypes: unknown kind; got {k!r}, expected one of {sorted(_KINDS)}")
                out.update({name: DTYPES[name] for name in _KINDS[k]})
            else:
                dt = np.dtype(k)
                out[dt.name] = dt
        return out


def __array_namespace_info__() -> Info:
    """The namespace's inspection object.

    >>> import darray as da
    >>> da.__array_namespace_info__().default_dtypes()["indexing"]
    dtype('int64')
    """
    return Info()
