"""Process-wide settings, overridable with environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

__all__ = ["Config", "config"]


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"darray: environment variable {name} must be an integer; got {value!r}") from None


@dataclass
class Config:
    """darray's settings. Change them on every rank alike (they steer layouts).

    Attributes
    ----------
    min_distributed_size : arrays with at least this many elements are
        distributed by ``split="auto"``; smaller ones are replicated
        (``DARRAY_MIN_DISTRIBUTED_SIZE``, default 16384).
    gather_warn_size : ``numpy.asarray(x)`` warns when it gathers more
        elements than this (``DARRAY_GATHER_WARN_SIZE``, default 2**26).
    backend : default local backend for new arrays (``DARRAY_BACKEND``,
        default ``"numpy"``).
    """

    min_distributed_size: int = field(default_factory=lambda: _env_int("DARRAY_MIN_DISTRIBUTED_SIZE", 16384))
    gather_warn_size: int = field(default_factory=lambda: _env_int("DARRAY_GATHER_WARN_SIZE", 1 << 26))
    backend: str = field(default_factory=lambda: os.environ.get("DARRAY_BACKEND", "numpy") or "numpy")


config = Config()
