"""Inspection API (``__array_namespace_info__``): capabilities, default dtypes, devices."""

from __future__ import annotations

import array_api_compat
import numpy as np

from .._backend import available_backends, namespace_named
from .._config import config
from .._core import DTYPES
from ._common import resolve_device

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
        """The device of a block of the default backend (``darray.config.backend``): ``"cpu"`` for NumPy."""
        return self.devices()[0]

    def devices(self) -> list:
        """The devices of the local blocks here, as ``x.device`` reports them: the default backend's first
        (``"cpu"`` for NumPy), then the default device of each other backend that works here
        (``torch.device("cpu")``, ...) and that ``device=`` reaches.

        ``device=`` takes each of them, and a backend's name.
        """
        found = []
        names = [config.backend] + [name for name in available_backends() if name != config.backend]
        for name in names:
            if not available_backends().get(name):
                continue
            try:
                xp = namespace_named(name)
                device = array_api_compat.device(xp.empty(0))
            except Exception:  # (importable but unusable here: CuPy without a GPU)
                continue
            if resolve_device(device)[0] is xp and device not in found:
                found.append(device)
        return found

    def _check_device(self, func: str, device) -> None:
        if device is not None and device not in self.devices() and device not in available_backends():
            raise ValueError(f"__array_namespace_info__().{func}: unknown device; got {device!r}, "
                             f"expected None, a backend name or one of {self.devices()}")

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
