"""Argument handling shared by the public functions: devices, shapes, the first DArray among arguments."""

from __future__ import annotations

from types import ModuleType

from .._backend import BACKENDS, namespace_named
from .._config import config
from .._core import DArray

__all__ = ["resolve_device", "normalize_shape", "first_darray"]


def resolve_device(device) -> tuple[ModuleType, object]:
    """The local backend namespace and the device argument to pass it.

    ``device`` is None (the default backend, ``darray.config.backend``), a
    backend name (``"numpy"``, ``"torch"``, ``"cupy"``, ``"array_api_strict"``),
    ``"cpu"``, or a device object of a backend (``torch.device``,
    ``cupy.cuda.Device``, ...).
    """
    if device is None or device == "cpu":
        return namespace_named(config.backend), None
    if isinstance(device, str) and device in BACKENDS:
        return namespace_named(device), None
    module = type(device).__module__.split(".")[0]
    if module in BACKENDS:
        return namespace_named(module), device
    if isinstance(device, str) and device.startswith(("cuda", "mps")):
        return namespace_named("torch"), device
    raise ValueError(f"device: unknown device; got {device!r}, expected None, 'cpu', a backend name "
                     f"{sorted(BACKENDS)} or a backend's device object")


def first_darray(*args) -> DArray | None:
    """The first DArray among ``args``, looking into lists and tuples (NumPy's sequences of arrays), or None."""
    for a in args:
        if isinstance(a, DArray):
            return a
        if isinstance(a, (list, tuple)):
            found = first_darray(*a)
            if found is not None:
                return found
    return None


def normalize_shape(func: str, shape) -> tuple[int, ...]:
    """A shape as a tuple of non-negative ints (an int means a 1-d shape)."""
    import numbers

    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (shape,)
    if isinstance(shape, (str, bytes)):
        raise TypeError(f"{func}: shape must be an int or a tuple of ints; got {shape!r}")
    try:
        out = tuple(int(n) for n in shape)
        bad = any(not isinstance(n, numbers.Integral) or isinstance(n, bool) for n in shape)
    except (TypeError, ValueError):
        raise TypeError(f"{func}: shape must be an int or a tuple of ints; got {shape!r}") from None
    if bad:
        raise TypeError(f"{func}: shape must be an int or a tuple of ints; got {shape!r}")
    if any(n < 0 for n in out):
        raise ValueError(f"{func}: negative dimensions are not allowed; got {out}, expected sizes >= 0")
    return out
