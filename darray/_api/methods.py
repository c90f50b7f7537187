"""DArray's methods whose implementation lives in ``_api``: handed down to ``_core`` when darray is imported.

``_core`` builds every method of DArray (:mod:`darray._core.dispatch`), but
some of them are functions of this layer: ``x.compress`` is
:func:`~darray._api.numpy.select.ndarray_compress`, ``x.reshape`` the
public :func:`darray.reshape`, ``x.sum(where=m)`` the masked reduction.
``_core`` never imports or names this layer (the import-linter contract
could not see such an edge); this module hands them down instead, once,
when :mod:`darray` is imported:

- :data:`METHODS`: NumPy's methods whose row in
  :data:`darray._core.methods.METHODS` says ``ABOVE``, with
  :func:`darray._core.dispatch.register_method` (the implementation, the
  dotted path its docstring shows, a note);
- :data:`TARGETS`: the functions DArray's written-out methods call, with
  :func:`darray._core.dispatch.register_target`.

Adding such a method: its row in ``darray/_core/methods.py`` says
``Method(ABOVE)``, and its implementation is listed here. Importing this
module checks that nothing ``_core`` expects is left unregistered.

Examples
--------
>>> import darray as np
>>> np.arange(6).compress([0, 1, 1, 0, 0, 1]).tolist()
[1, 2, 5]
>>> np.DArray.conj.__doc__.split(":", 1)[1].split(".")[:3]
[' ``darray', '_api', 'elementwise']
"""

from __future__ import annotations

from collections.abc import Callable

import numpy

from .._core.dispatch import register_method, register_target, unregistered
from .creation import zeros_like
from .elementwise import conj, equal, imag, real
from .manipulation import reshape
from .numpy.reductions import reduction
from .numpy.select import ndarray_compress

__all__ = ["METHODS", "TARGETS"]

#: method name -> (implementation, the dotted path its docstring shows, note).
METHODS: dict[str, tuple[Callable, str, str]] = {
    "compress": (ndarray_compress, "darray._api.numpy.select.ndarray_compress", ""),
    "conj": (conj, "darray._api.elementwise.conj", ""),
    "conjugate": (conj, "darray._api.elementwise.conj", ""),
    "put": (numpy.put, "numpy.put", "In place, like NumPy (``darray._api.numpy.arrange.put``)."),
}

#: name read by DArray's own methods (``darray._core.methods.targets.<name>``) -> the function.
TARGETS: dict[str, Callable] = {
    "reshape": reshape,
    "conj": conj,
    "real": real,
    "imag": imag,
    "zeros_like": zeros_like,
    "equal": equal,
    "numpy_reduction": reduction,
}

for _name, (_implementation, _shown, _note) in METHODS.items():
    register_method(_name, _implementation, _shown, _note)
for _name, _implementation in TARGETS.items():
    register_target(_name, _implementation)
if unregistered():
    raise ImportError(f"darray._api.methods: _core expects these from _api, not registered: {unregistered()}")
