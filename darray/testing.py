"""Testing helpers: compare a DArray with a NumPy oracle on every rank, agreeing on the verdict."""

from __future__ import annotations

import hashlib

import numpy as np

from ._backend import namespace_named, to_numpy
from ._comm import default_communicator
from ._comm.base import agree
from ._config import config
from ._core import DArray

__all__ = ["assert_equal", "assert_results_equal", "assert_raises_everywhere", "agree", "backend_dtypes",
           "uneven_sizes"]


def backend_dtypes() -> frozenset[str]:
    """Names of the dtypes that darray's default local backend supports (``DARRAY_BACKEND``).

    Read from the library's inspection API, ``__array_namespace_info__().dtypes()``:
    every dtype of the standard for NumPy, CuPy and array-api-strict; torch has no
    arithmetic for ``uint16``, ``uint32``, ``uint64``. Tests that loop over dtypes use
    the ones listed here.

    Examples
    --------
    >>> "float64" in backend_dtypes()
    True
    """
    return frozenset(namespace_named(config.backend).__array_namespace_info__().dtypes())




def uneven_sizes(n: int, parts: int) -> list[int]:
    """Block sizes for ``n`` cells over ``parts`` blocks: uneven, with the second block empty.

    The layout that breaks code assuming balanced, non-empty blocks; pass it
    as ``sizes=`` (``numpy.array_split`` sizes over ``parts - 1`` blocks, an
    empty block inserted second).

    Examples
    --------
    >>> uneven_sizes(10, 3)
    [5, 0, 5]
    >>> uneven_sizes(7, 1)
    [7]
    """
    if parts == 1:
        return [n]
    rest = [len(b) for b in np.array_split(np.arange(n), parts - 1)]
    return rest[:1] + [0] + rest[1:]


_TOLERANCE = {np.dtype(np.float16): 1e-3, np.dtype(np.float32): 1e-5, np.dtype(np.complex64): 1e-5}


def assert_equal(x: DArray, expected, *, rtol: float | None = None, atol: float = 0.0, check_dtype: bool = True,
                 err_msg: str = "") -> None:
    """Assert that the global array ``x`` equals ``expected`` (an array of the global shape, any library).

    Every rank compares its own block with the matching slice of
    ``expected`` (nothing is gathered); the verdict is agreed across ranks so
    a mismatch on one rank fails every rank instead of leaving others waiting.
    Integers, booleans, dates and records compare exactly (NaT equal to NaT);
    floating point with ``rtol`` (default ``1e-12`` for float64, ``1e-5`` for
    float32, ``1e-3`` for float16), NaNs equal.

    Examples
    --------
    >>> import numpy, darray as da
    >>> assert_equal(da.arange(5) * 2, numpy.arange(5) * 2)
    """
    if not isinstance(x, DArray):
        raise TypeError(f"assert_equal: expected a DArray; got {type(x).__name__}")
    expected = to_numpy(expected)  # also a CuPy / torch array, e.g. another DArray's gather()
    problem = ""
    if x.shape != expected.shape:
        problem = f"shape {x.shape} != expected {expected.shape}"
    elif check_dtype and x.dtype != expected.dtype:
        problem = f"dtype {x.dtype} != expected {expected.dtype}"
    if not problem:
        rank = x.comm.rank
        local = to_numpy(x.local)
        want = expected[x.layout.block_slices(rank)] if expected.ndim else expected
        if local.shape != want.shape:
            problem = f"rank {rank}: block shape {local.shape} != expected {want.shape}"
        elif local.dtype.kind in "fc" or want.dtype.kind in "fc":
            tol = rtol if rtol is not None else _TOLERANCE.get(local.dtype, 1e-12)
            if not np.allclose(local, want, rtol=tol, atol=atol, equal_nan=True):
                bad = ~np.isclose(local, want, rtol=tol, atol=atol, equal_nan=True)
                problem = (f"rank {rank}: {int(bad.sum())} of {local.size} elements differ "
                           f"(first got {local[bad][:5]}, expected {want[bad][:5]})")
        elif not np.array_equal(local, want, equal_nan=local.dtype.kind in "Mm"):  # (NaT equal, as NaNs)
            bad = (local != want) & ~(np.isnat(local) & np.isnat(want)) if local.dtype.kind in "Mm" else local != want
            problem = (f"rank {rank}: {int(np.sum(bad))} of {local.size} elements differ "
                       f"(first got {local[bad][:5]}, expected {want[bad][:5]})")
    failed = agree(x.comm, not problem)
    if failed:
        detail = problem or "this rank's block matches"
        raise AssertionError(f"{err_msg + ': ' if err_msg else ''}DArray differs from the expected array on "
                             f"ranks {failed} of {x.comm.size} ({detail}); layout {x.layout}")


def assert_results_equal(got, expected, err_msg: str = "", **tolerances) -> None:
    """Assert that a function's results equal NumPy's: tuples item by item, arrays with :func:`assert_equal`
    (a DArray is expected for each NumPy array), other values (Python scalars, ints) with ``==``.

    Examples
    --------
    >>> import numpy, darray as da
    >>> assert_results_equal((da.arange(3), 3), (numpy.arange(3), 3))
    """
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), f"{err_msg}: got {type(got).__name__}"
        for i, (g, w) in enumerate(zip(got, expected)):
            assert_results_equal(g, w, f"{err_msg}[{i}]", **tolerances)
        return
    if not isinstance(expected, (np.ndarray, np.generic)):
        assert got == expected, f"{err_msg}: {got!r} != {expected!r}"
        return
    assert isinstance(got, DArray), f"{err_msg}: expected a DArray, got {type(got).__name__}"
    assert_equal(got, np.asarray(expected), err_msg=err_msg, **tolerances)


def assert_raises_everywhere(exc: type[BaseException], func, *args, match: str | None = None, **kwargs) -> str:
    """Assert that ``func(*args, **kwargs)`` raises ``exc`` with one message on every rank; return it.

    The ranks of the default communicator agree on the verdict (a rank that
    raised nothing, or another type, or a message without ``match``, fails the
    test on every rank) and compare digests of their messages, so a test of bad
    input can neither hang nor pass while ranks disagree.

    Examples
    --------
    >>> import darray as da
    >>> assert_raises_everywhere(ValueError, da.reshape, da.zeros(6), (4,), match="reshape")[:7]
    'reshape'
    """
    comm = default_communicator()
    try:
        func(*args, **kwargs)
    except exc as e:
        message = str(e)
        ok = match is None or match in message
        detail = message
    except Exception as e:  # the wrong type is a failure on this rank
        message, ok, detail = "", False, f"{type(e).__name__}: {e}"
    else:
        message, ok, detail = "", False, "nothing raised"
    failed = agree(comm, ok)
    if failed:
        wanted = f"{exc.__name__}{f' mentioning {match!r}' if match else ''}"
        raise AssertionError(f"expected {wanted} on every rank; ranks {failed} of {comm.size} did not "
                             f"(rank {comm.rank}: {detail})")
    digest = np.frombuffer(hashlib.sha256(message.encode()).digest(), dtype=np.uint8)
    table = np.asarray(comm.allgather(digest))
    differ = [r for r in range(comm.size) if not np.array_equal(table[r], table[0])]
    if differ:
        raise AssertionError(f"ranks {differ} raised another message than rank 0 (rank {comm.rank}: {message})")
    return message
