"""darray.fuse without its optional compiler: every fuse test again with numba hidden from import.

CI installs numba (the ``test`` extra brings ``darray[jit]``), so this module
is the run "without the compiler": an autouse fixture makes ``import numba``
fail (``sys.modules["numba"] = None``) and forgets whether numba was found,
then the test functions of :mod:`test_fuse`, :mod:`test_fuse_stencil`, :mod:`test_fuse_overlap` and
:mod:`test_fuse_readme` run again (collected here under the same names),
with their ``FUSING`` flag off: every call must run the plain function and
give eager darray's and NumPy's results, and the counters must say so. The
tests below check the fallback itself: it warns once per process, and
``DARRAY_FUSE=jit`` raises ImportError instead.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

import darray as da
import test_fuse
import test_fuse_readme
import test_fuse_overlap
import test_fuse_stencil
from darray.fuse import decorator as fuse_decorator
from darray.testing import assert_equal, assert_raises_everywhere

from _cases import values

# In-process and at 2 ranks only: whether numba imports is the same on every rank and at every rank count,
# and without it a fused function runs its plain body, eager darray, which the other files check at 1-4
# ranks; test_fuse* run the fused paths themselves at every rank count.
pytestmark = pytest.mark.mpi(ranks=(2,))

MODULES = (test_fuse, test_fuse_stencil, test_fuse_overlap, test_fuse_readme)

# the fuse tests (and the fixtures they define), collected again in this module (pytest collects the test
# functions a module holds)
globals().update({name: f for m in MODULES for name, f in vars(m).items()
                  if name.startswith("test_") or name == "stencil_calls"})


@pytest.fixture(autouse=True)
def without_numba(monkeypatch):
    """numba not importable (and not yet looked up); the fuse tests' FUSING and PLANNED flags off; the one warning
    given."""
    monkeypatch.setitem(sys.modules, "numba", None)
    monkeypatch.setattr(fuse_decorator, "_jit", None)
    monkeypatch.setattr(fuse_decorator, "_warned", True)
    for m in MODULES:
        for flag in ("FUSING", "PLANNED"):  # (no numba: NumPy blocks run eagerly, not from a plan)
            if hasattr(m, flag):
                monkeypatch.setattr(m, flag, False)
    assert not fuse_decorator.jit_available()


@da.fuse
def w1(a, b, c):
    return da.sum(a * b + c)


@da.fuse
def sweep(u, out):
    out[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (u[2:, 1:-1] + u[:-2, 1:-1] - 2 * u[1:-1, 1:-1])


def test_the_fallback_warns_once_and_gives_eager_results(monkeypatch):
    monkeypatch.setattr(fuse_decorator, "_warned", False)
    monkeypatch.setenv("DARRAY_FUSE", "auto")
    g = [values((13, 9), key=k) for k in "abc"]
    a, b, c = (da.asarray(x, split=0) for x in g)
    before = dict(w1.stats)
    with pytest.warns(RuntimeWarning, match=r"numba is not installed.*run eagerly") as record:
        total = w1(a, b, c)
        out = da.zeros((13, 9), split=0)
        sweep(a, out)
    assert sum("numba" in str(w.message) for w in record) == 1  # once, for the first fused function called
    assert float(total) == float(w1.__wrapped__(a, b, c))
    want = np.zeros((13, 9))
    want[1:-1, 1:-1] = g[0][1:-1, 1:-1] + 0.2 * (g[0][2:, 1:-1] + g[0][:-2, 1:-1] - 2 * g[0][1:-1, 1:-1])
    assert_equal(out, want, rtol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not again
        w1(a, b, c)
    assert {k: w1.stats[k] - before[k] for k in before} == {"traces": 0, "fused": 0, "eager": 2}, w1.stats


def test_jit_mode_without_numba_raises_import_error(monkeypatch):
    monkeypatch.setenv("DARRAY_FUSE", "jit")
    a = da.asarray(values((13, 9), key="a"), split=0)
    text = assert_raises_everywhere(ImportError, w1, a, a, 1.0)
    assert "DARRAY_FUSE=jit needs numba" in text and "darray[jit]" in text, text
    monkeypatch.setenv("DARRAY_FUSE", "eager")  # eager mode never looks for numba
    assert float(w1(a, a, 1.0)) == float(w1.__wrapped__(a, a, 1.0))
