"""The local-block namespace: NumPy, CuPy, torch or any Array-API library.

Local blocks are plain arrays of one library; darray talks to them through
array-api-compat so the same code runs on all of them. Optional libraries are
imported lazily, only when an array of theirs shows up or is asked for.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType
from typing import Any

import array_api_compat
import numpy as np

__all__ = ["BACKENDS", "available_backends", "contiguous_copy", "namespace_of", "namespace_named", "from_numpy", "to_numpy",
           "is_numpy_namespace", "is_host_array", "name_of"]

#: Backend name -> module that array-api-compat wraps (or that is compliant itself).
BACKENDS = {
    "numpy": "array_api_compat.numpy",
    "cupy": "array_api_compat.cupy",
    "torch": "array_api_compat.torch",
    "array_api_strict": "array_api_strict",
}
_PROBE = {"numpy": "numpy", "cupy": "cupy", "torch": "torch", "array_api_strict": "array_api_strict"}

#: NumPy's lazily loaded submodules that array-api-compat's clone of the ``numpy`` namespace would load (it
#: reads every name of ``numpy.__all__`` and ``dir(numpy)``): 150 ms of import time that no local kernel uses.
_UNUSED_NUMPY_SUBMODULES = frozenset({"char", "ctypeslib", "f2py", "ma", "polynomial", "random", "rec", "strings",
                                      "testing"})


def _import_compat_numpy() -> ModuleType:
    """``array_api_compat.numpy``, cloned without NumPy's unused lazy submodules (unless already loaded)."""
    hidden = {name for name in _UNUSED_NUMPY_SUBMODULES if f"numpy.{name}" not in sys.modules}
    names, listing = np.__all__, np.__dict__.get("__dir__")
    np.__all__ = [name for name in names if name not in hidden]
    np.__dir__ = lambda: [name for name in (listing() if listing else names) if name not in hidden]
    try:
        return importlib.import_module("array_api_compat.numpy")
    finally:
        np.__all__ = names
        if listing is None:
            del np.__dir__
        else:
            np.__dir__ = listing


_by_type: dict[type, ModuleType] = {np.ndarray: _import_compat_numpy()}
NUMPY = _by_type[np.ndarray]


def available_backends() -> dict[str, bool]:
    """Which local backends can be imported here (without importing them)."""
    return {name: importlib.util.find_spec(mod) is not None for name, mod in _PROBE.items()}


def namespace_of(array: Any) -> ModuleType:
    """The (array-api-compat wrapped) namespace of a local array; cached per type."""
    xp = _by_type.get(type(array))
    if xp is None:
        xp = array_api_compat.array_namespace(array)
        _by_type[type(array)] = xp
    return xp


def namespace_named(name: str) -> ModuleType:
    """The namespace of backend ``name`` (``"numpy"``, ``"cupy"``, ``"torch"``, ``"array_api_strict"``)."""
    found = _NAMED.get(name)  # (every creation call asks: one dict lookup, not an import)
    if found is not None:
        return found
    try:
        module = BACKENDS[name]
    except KeyError:
        raise ValueError(f"backend: unknown local backend; got {name!r}, expected one of {sorted(BACKENDS)}") from None
    found = _NAMED[name] = importlib.import_module(module)
    return found


_NAMED: dict[str, ModuleType] = {}


def name_of(xp: ModuleType) -> str:
    """Short name of a namespace: ``"numpy"``, ``"torch"``, ..."""
    name = xp.__name__
    return name.rsplit(".", 1)[-1] if name.startswith("array_api_compat.") else name


def is_numpy_namespace(xp: ModuleType) -> bool:
    return xp is NUMPY


def is_host_array(array: Any) -> bool:
    """True when ``array`` lives in host memory (so :func:`to_numpy` returns a view)."""
    if isinstance(array, np.ndarray):
        return True
    if array_api_compat.is_cupy_array(array):
        return False
    if array_api_compat.is_torch_array(array):
        return array.device.type == "cpu"
    return not hasattr(array, "__cuda_array_interface__")


def from_numpy(xp: ModuleType, array: np.ndarray, device: Any = None) -> Any:
    """A NumPy array (or any array ``xp.asarray`` takes) as an array of namespace ``xp``, a view where possible.

    torch takes no negative strides (``a[::-1]``): such views are copied first.
    """
    if isinstance(array, np.ndarray):
        if xp is NUMPY:
            return array
        if any(s < 0 for s in array.strides):
            array = array.copy()  # not ascontiguousarray: it keeps a size-0/1 view's negative stride as it is
    return xp.asarray(array, device=device)


def contiguous_copy(xp: ModuleType, array: Any) -> Any:
    """A C-ordered copy of ``array`` in namespace ``xp`` (local blocks are row-major unless asked otherwise).

    ``xp.asarray(a, copy=True)`` keeps the memory order of ``a`` (NumPy's
    ``order="K"``), so a copy of a broadcast or transposed view can come out
    column-major, and row-cut stencils on it then run about 3x slower.

    >>> import numpy as np
    >>> contiguous_copy(NUMPY, np.ones((3, 4)).T).flags.c_contiguous
    True
    """
    if isinstance(array, np.ndarray):
        return np.array(array, order="C")
    if array_api_compat.is_cupy_array(array):
        return xp.array(array, order="C")
    if array_api_compat.is_torch_array(array):
        import torch  # already imported: array is a torch tensor

        return array.clone(memory_format=torch.contiguous_format)
    return xp.asarray(array, copy=True)


def to_numpy(array: Any) -> np.ndarray:
    """A NumPy view (CPU) or copy (device memory) of a local array."""
    if isinstance(array, np.ndarray):
        return array
    if array_api_compat.is_cupy_array(array):
        return array.get()
    if array_api_compat.is_torch_array(array):
        # conj()/neg() views carry a lazy bit that numpy() refuses: resolve it (a copy only then)
        return array.detach().cpu().resolve_conj().resolve_neg().numpy()
    try:
        return np.from_dlpack(array)
    except (TypeError, RuntimeError, BufferError, AttributeError):
        return np.asarray(array)
