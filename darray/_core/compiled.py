"""The compiled lean paths of DArray's operators and indexing (``darray/_core/_lean.c``), where they were built.

``pip install`` compiles them where a C compiler is at hand; without one, or
with ``DARRAY_PURE_PYTHON=1`` in the environment, :data:`lean` is None and
darray runs the same paths in Python (:mod:`darray._core.operators`,
:mod:`darray._core.indexing`), which stay the reference: every compiled
path calls the Python method it stands in front of whenever a check fails.

>>> from darray._core import compiled
>>> compiled.lean is None or compiled.lean.Lean.__name__ == "Lean"
True
"""

from __future__ import annotations

import os
from types import ModuleType

__all__ = ["lean", "pure_python_requested", "setup"]


def pure_python_requested() -> bool:
    """Whether ``DARRAY_PURE_PYTHON`` asks for the Python paths (set, and neither empty nor ``0``)."""
    return os.environ.get("DARRAY_PURE_PYTHON", "").strip() not in ("", "0")


def _load() -> ModuleType | None:
    if pure_python_requested():
        return None
    try:
        from . import _lean
    except ImportError:  # (not built: no C compiler when darray was installed)
        return None
    return _lean


#: The compiled module ``darray._core._lean``, or None (the Python paths run).
lean: ModuleType | None = _load()


def setup(darray_type: type) -> None:
    """Tell the compiled paths where DArray's and Layout's slots are (once, when DArray is complete)."""
    if lean is None:
        return
    import numpy

    from .. import _recorder
    from .._backend import NUMPY
    from .._layout import Layout
    from .._layout.derived import Derived

    lean.setup(darray_type, Layout, Derived, numpy.ndarray, numpy.generic, numpy.asarray, vars(_recorder), NUMPY)
