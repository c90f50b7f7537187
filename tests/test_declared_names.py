"""Names that modules set through ``globals()`` are declared for type checkers, and the declarations are exact.

``darray._api.elementwise``, ``darray._api.numpy.names`` and ``darray.autodiff`` make their functions from
tables at import time; each also declares them (``sin: ufunc``) so that mypy and editors know ``darray.sin``. A
row added to a table without its declaration (or a declaration left behind) fails here, not silently in users'
type checks.
"""

from __future__ import annotations

from collections.abc import Callable

import darray as da
from darray._api import elementwise
from darray._api.numpy import names
from darray._api.ufuncs import ufunc
from darray._core.table import ELEMENTWISE


def _declared(module, annotation: str) -> set[str]:
    return {name for name, text in module.__annotations__.items() if text == annotation}


def test_elementwise_declares_the_table():
    assert _declared(elementwise, "ufunc") == {row.name for row in ELEMENTWISE}
    assert all(isinstance(getattr(elementwise, row.name), ufunc) for row in ELEMENTWISE)


def test_numpy_names_declares_its_ufuncs_and_functions():
    assert _declared(names, "ufunc") == set(names.UFUNC_NAMES)
    assert _declared(names, "Callable[..., Any]") == set(names.FUNCTION_NAMES)
    assert all(isinstance(getattr(names, name), ufunc) for name in names.UFUNC_NAMES)
    assert all(isinstance(getattr(names, name), Callable) for name in names.FUNCTION_NAMES)


def test_the_declared_names_reach_the_namespace():
    for name in {row.name for row in ELEMENTWISE} | set(names.UFUNC_NAMES) | set(names.FUNCTION_NAMES):
        assert getattr(da, name) is not None, name


def test_autodiff_declares_its_functions():
    from darray import autodiff
    from darray.autodiff.tape import FUNCTIONS

    assert _declared(autodiff, "Callable[..., Any]") == set(FUNCTIONS)
    assert all(getattr(autodiff, name) is FUNCTIONS[name] for name in FUNCTIONS)
