"""Library functions that gather a cut DArray through ``__array__`` warn (rank 0, once per line); explicit ones don't.

``scipy.ndimage.gaussian_filter(x)``, ``numpy.vectorize(f)(x)`` and
``numpy.lib.stride_tricks.as_strided(x)`` are not darray functions: NumPy's
protocols do not reach them, they call ``numpy.asarray(x)`` themselves, which
gathers the whole array onto every rank. The results are NumPy's on the
gathered array (correct); the warning says that nothing was distributed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import darray as da
from darray._core import foreign
from darray._core.element_reads import PerformanceWarning
from darray.testing import agree

pytestmark = [pytest.mark.mpi, pytest.mark.numpy_only(reason="__array__ of NumPy blocks: what NumPy's own "
                                                              "functions and scipy receive")]


@pytest.fixture(autouse=True)
def _fresh():
    foreign._warned.clear()
    yield
    foreign._warned.clear()


def _gathers(call):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = call()
    return out, [str(w.message) for w in seen if issubclass(w.category, PerformanceWarning)]


def _library_calls():
    ndimage = pytest.importorskip("scipy.ndimage")
    return {
        "scipy.ndimage._filters.gaussian_filter": lambda x: ndimage.gaussian_filter(x, 1.0),
        "numpy.lib._function_base_impl.vectorize.__call__": lambda x: np.vectorize(lambda v: v + 1)(x),
        "numpy.lib._stride_tricks_impl.as_strided": lambda x: np.lib.stride_tricks.as_strided(x, shape=(2, 2)),
    }


@pytest.mark.parametrize("name", ["scipy.ndimage._filters.gaussian_filter",
                                  "numpy.lib._function_base_impl.vectorize.__call__",
                                  "numpy.lib._stride_tricks_impl.as_strided"])
def test_a_library_gather_of_a_cut_array_warns_once_on_rank_0(comm, name):
    call = _library_calls()[name]
    g = np.arange(64.0).reshape(8, 8)
    x = da.asarray(g, split=0)
    out, first = _gathers(lambda: call(x))
    assert not agree(comm, np.array_equal(out, call(g)))  # NumPy's answer on the gathered array
    _, again = _gathers(lambda: call(x))                    # (the same line again: once per line)
    cut = comm.size > 1 and x._layout.split != (None,)
    expected = 1 if cut and comm.rank == 0 else 0
    assert not agree(comm, len(first) == expected and not again), (first, again)
    if first:
        assert first[0].startswith(f"numpy.asarray: {name} gathered a DArray of shape (8, 8) cut over {comm.size}")


def test_explicit_and_replicated_gathers_do_not_warn(comm):
    ndimage = pytest.importorskip("scipy.ndimage")
    g = np.arange(64.0).reshape(8, 8)
    x = da.asarray(g, split=0)
    _, explicit = _gathers(lambda: np.asarray(x))                       # the user's own gather
    _, replicated = _gathers(lambda: ndimage.gaussian_filter(da.asarray(g, split=None), 1.0))
    _, own = _gathers(lambda: x.tolist())                               # darray's method: it gathers by design
    assert not agree(comm, not explicit and not replicated and not own), (explicit, replicated, own)


def test_the_guides_say_what_gathers():
    """concepts.md and numpy-to-darray.md name the library gathers and their warning (they said none happened)."""
    from pathlib import Path

    docs = Path(__file__).resolve().parent.parent / "docs" / "guide"
    concepts, guide = (docs / "concepts.md").read_text(), (docs / "numpy-to-darray.md").read_text()
    for text in (concepts, guide):
        assert "silently gathered" not in text and "gathered silently" not in text
        assert "gaussian_filter" in text and "numpy.vectorize" in text and "as_strided" in text
    assert "PerformanceWarning" in concepts and "gather_warn_size" in concepts
