"""A deeper property run of what darray computes itself (issue #41), NumPy as the oracle, at 1-4 ranks.

The public array-api-tests suite runs 20 examples a test; at 200 random
examples it found ``eye`` overflowing on a huge offset and ``from_dlpack``
ignoring ``device=``. This file draws many more examples than darray's other
property tests, for the functions whose values darray builds itself rather
than handing a block to the local library: creation from global indices
(``eye``, ``tril`` / ``triu``, ``arange``, ``linspace``, ``full``), basic
indexing (reads and writes, negative steps, ``None`` and ``...``), the
standard's special cases that darray sets right on top of NumPy's kernels
(``floor_divide``, ``expm1``, ``x ** 0.5``, with every sign of zero and
infinity), and DLPack (export, ``copy=``, ``device=``).

Every array is cut wherever it can be (``min_distributed_size=1``, a split
drawn per example). The examples are derandomized whatever the profile, so a
landing never fails on an example no earlier run drew; :data:`EXAMPLES` per
test (fewer under ``mpiexec``, where every example is a collective), or the
profile's ``max_examples`` with ``--hypothesis-profile long``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import basic_indices

import darray as da
from darray.testing import agree, assert_equal, assert_raises_everywhere, backend_dtypes

from _cases import COMM, P

pytestmark = [pytest.mark.mpi,
              pytest.mark.not_on("array_api_strict", distributed=True,
                                 reason="the strict stage runs it at one rank; the layouts run with NumPy blocks")]

#: Examples per test: most at one rank (values), fewer under mpiexec (layouts; each example is a collective of
#: P processes, and 3-4 ranks share CI's two cores). About 45 s of CI in all its stages.
EXAMPLES = {1: 200, 2: 80}.get(P, 25)
if settings.get_current_profile_name() not in ("default", "mpi", "ci"):
    EXAMPLES = settings().max_examples  # --hypothesis-profile long: the profile's count


def deep(examples: int = EXAMPLES):
    """Fixed examples (the same on every rank and every run), no database, no timing."""
    return settings(max_examples=examples, derandomize=True, database=None, deadline=None, print_blob=False,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@pytest.fixture(autouse=True)
def cut_everything(monkeypatch):
    """split="auto" cuts every array (the suite's DARRAY_MIN_DISTRIBUTED_SIZE=1), the same on every rank."""
    monkeypatch.setattr(da.config, "min_distributed_size", 1)


def splits(ndim: int):
    """A layout request for an array of ``ndim`` dims: replicated, "auto" or one cut axis."""
    return st.sampled_from([None, "auto", *range(ndim)])


REAL = [d for d in ("float32", "float64") if d in backend_dtypes()]
ALL = [d for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                   "float32", "float64", "complex64", "complex128") if d in backend_dtypes()]
DEVICES = da.__array_namespace_info__().devices()
#: Offsets around the corners and far past int64 (the suite's eye(0, None, k=2**63)).
OFFSETS = st.integers(-14, 14) | st.integers(-2**70, 2**70) | st.sampled_from([2**63, -2**63 - 1, 2**63 - 1])


def values(shape, dtype: str, seed: int) -> np.ndarray:
    """Data of ``dtype`` with repeats, negatives and (floats) specials; the same on every rank."""
    rng = np.random.default_rng(seed)
    kind = np.dtype(dtype).kind
    if kind == "b":
        return rng.random(shape) > 0.5
    if kind in "iu":
        return rng.integers(0 if kind == "u" else -50, 50, size=shape).astype(dtype)
    g = rng.choice(np.array([0.0, -0.0, 1.5, -2.25, 7.0, np.inf, -np.inf, np.nan, 3.0e10, -1.0e-3]), size=shape)
    if kind == "c":
        g = np.array([complex(r, i) for r, i in zip(g.ravel(), g.ravel()[::-1])]).reshape(shape)
    return g.astype(dtype)


# ----------------------------------------------------------------- creation from global indices --
@deep()
@given(n_rows=st.integers(0, 9), n_cols=st.none() | st.integers(0, 9), k=OFFSETS, dtype=st.sampled_from(ALL),
       split=splits(2))
def test_eye(n_rows, n_cols, k, dtype, split):
    assert_equal(da.eye(n_rows, n_cols, k=k, dtype=dtype, split=split), np.eye(n_rows, n_cols, k=k, dtype=dtype))


@deep()
@given(shape=st.tuples(st.integers(0, 3), st.integers(0, 7), st.integers(0, 7)), k=OFFSETS, lower=st.booleans(),
       split=splits(3), seed=st.integers(0, 2**16))
def test_tril_triu(shape, k, lower, split, seed):
    g = values(shape, "int32", seed)
    x = da.asarray(g, split=split)
    if lower:
        assert_equal(da.tril(x, k=k), np.tril(g, k=max(min(k, shape[2]), -shape[1] - 1)))
    else:
        assert_equal(da.triu(x, k=k), np.triu(g, k=max(min(k, shape[2]), -shape[1] - 1)))


@deep()
@given(start=st.integers(-40, 40), length=st.integers(0, 30), step=st.integers(-7, 7).filter(bool),
       dtype=st.sampled_from([None, "int8", "int32", "int64", "float32", "float64"]), split=splits(1))
def test_arange_int(start, length, step, dtype, split):
    stop = start + length * step - (1 if step > 0 else -1) * (length > 0)
    want = np.arange(start, stop, step, dtype=dtype)
    assert_equal(da.arange(start, stop, step, dtype=dtype, split=split), want, rtol=0.0)


@deep()
@given(start=st.floats(-1e3, 1e3), span=st.floats(0.0, 1e3), num=st.integers(1, 40), up=st.booleans(),
       dtype=st.sampled_from(REAL), split=splits(1))
def test_arange_float(start, span, num, up, dtype, split):
    step = (span / num or 1.0) * (1 if up else -1)
    stop = start + span * (1 if up else -1)
    want = np.arange(start, stop, step, dtype=dtype)
    x = da.arange(start, stop, step, dtype=dtype, split=split)
    if dtype == "float64":  # NumPy's values bit for bit
        assert_equal(x, want, rtol=0.0)
    else:  # NumPy adds up a float32 step (its last values drift by ~n ulps of the span); darray is nearer
        assert_equal(x, want, rtol=0.0, atol=num * float(np.finfo(np.float32).eps) * max(abs(start), abs(stop), 1.0))


@deep()
@given(start=st.floats(-1e6, 1e6) | st.integers(-2**53, 2**53), stop=st.floats(-1e6, 1e6) | st.integers(-2**53, 2**53),
       num=st.integers(0, 40), endpoint=st.booleans(), dtype=st.sampled_from(REAL), split=splits(1))
def test_linspace(start, stop, num, endpoint, dtype, split):
    want = np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype)
    x = da.linspace(start, stop, num, endpoint=endpoint, dtype=dtype, split=split)
    scale = max(abs(float(start)), abs(float(stop)), 1.0)
    assert_equal(x, want, rtol=0.0, atol=scale * float(np.finfo(dtype).eps) * 4)
    if endpoint and num > 0:  # the standard's endpoint is exact (it is the last value NumPy gives)
        assert_equal(x[-1:], want[-1:], rtol=0.0)


def fills(dtype: str):
    """Python scalars that ``dtype`` holds: the whole integer range, floats of its width, any bool."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return st.booleans()
    if dt.kind in "iu":
        return st.integers(int(np.iinfo(dt).min), int(np.iinfo(dt).max))
    if dt.kind == "f":
        return st.floats(width=dt.itemsize * 8)
    return st.complex_numbers(width=dt.itemsize * 8)


@deep()
@given(shape=st.lists(st.integers(0, 5), max_size=3).map(tuple), dtype=st.sampled_from(ALL), data=st.data())
def test_full(shape, dtype, data):
    fill = data.draw(fills(dtype))
    x = da.full(shape, fill, dtype=dtype, split=data.draw(splits(len(shape))))
    assert_equal(x, np.full(shape, fill, dtype=dtype), rtol=0.0)


# ------------------------------------------------------------------------------ basic indexing --
@st.composite
def indexed(draw):
    shape = draw(st.lists(st.integers(0, 6), min_size=1, max_size=3).map(tuple))
    index = draw(basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    return shape, index, draw(splits(len(shape))), draw(st.integers(0, 2**16))


@deep()
@given(case=indexed(), dtype=st.sampled_from(["int64", "float64", "bool", "complex128"]))
def test_getitem(case, dtype):
    shape, index, split, seed = case
    g = values(shape, dtype, seed)
    got = da.asarray(g, split=split)[index]
    want = g[index]
    if np.ndim(want) == 0:  # a 0-d DArray, replicated
        assert_equal(got, np.asarray(want), rtol=0.0)
    else:
        assert_equal(got, want, rtol=0.0)


@deep()
@given(case=indexed(), scalar=st.booleans())
def test_setitem(case, scalar):
    shape, index, split, seed = case
    g = values(shape, "float64", seed)
    x = da.asarray(g.copy(), split=split)
    new = -7.5 if scalar else values(np.shape(g[index]), "float64", seed + 1)
    x[index] = new if scalar else da.asarray(new)
    g[index] = new
    assert_equal(x, g, rtol=0.0)


# ------------------------------------------------------------------- the standard's special cases --
SPECIAL = st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -3.0, 7.0, 0.1])
FLOATS = SPECIAL | st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=False)


def same(x, want: np.ndarray, what: str) -> None:
    """Values bit for bit (NaNs equal) and the sign of every non-NaN value, on every rank."""
    assert_equal(x, want, rtol=0.0, err_msg=what)
    if want.dtype.kind == "f":
        assert_equal(da.signbit(x) & ~da.isnan(x), np.signbit(want) & ~np.isnan(want), err_msg=f"{what}: signs")


@deep()
@given(a=st.lists(FLOATS, min_size=1, max_size=24), b=st.lists(FLOATS, min_size=1, max_size=24),
       dtype=st.sampled_from(REAL), split=splits(1))
def test_floor_divide(a, b, dtype, split):
    n = min(len(a), len(b))
    with np.errstate(all="ignore"):
        g1, g2 = np.array(a[:n], dtype=dtype), np.array(b[:n], dtype=dtype)  # (float32: overflow to inf)
        # the standard's rule: floor(x1 / x2) where an operand is infinite; NumPy's value elsewhere
        infinite = np.isinf(g1) | np.isinf(g2)
        want = np.where(infinite, np.floor(g1 / g2), np.floor_divide(g1, g2))
    x1, x2 = da.asarray(g1, split=split), da.asarray(g2, split=split)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        same(x1 // x2, want, "x1 // x2")
        same(da.floor_divide(x1, x2), want, "floor_divide")


@deep()
@given(a=st.lists(FLOATS, min_size=1, max_size=24), split=splits(1))
def test_pow_half(a, split):
    g = np.array(a, dtype="float64")
    with np.errstate(all="ignore"):
        # the standard's pow: -inf ** 0.5 is +inf and -0.0 ** 0.5 is +0.0 (NumPy's sqrt gives NaN and -0.0)
        want = np.where(g == -np.inf, np.inf, np.where(g == 0, 0.0, np.sqrt(g)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        same(da.asarray(g, split=split) ** 0.5, want, "x ** 0.5")


@deep()
@given(re=st.lists(FLOATS, min_size=1, max_size=16), im=st.lists(FLOATS, min_size=1, max_size=16),
       split=splits(1))
def test_expm1_complex(re, im, split):
    n = min(len(re), len(im))
    g = np.array([complex(r, i) for r, i in zip(re[:n], im[:n])])  # (no inf * 1j = nan + inf j on the way)
    with np.errstate(all="ignore"):
        finite = np.isfinite(g.real) & np.isfinite(g.imag)
        want = np.where(finite, np.expm1(g), np.exp(g) - 1)  # the standard: the values of exp(z) - 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert_equal(da.expm1(da.asarray(g, split=split)), want, rtol=1e-12)


# ------------------------------------------------------------------------------------------ DLPack --
@deep()
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=2).map(tuple), dtype=st.sampled_from(ALL),
       copy=st.sampled_from([None, True, False]), max_version=st.sampled_from([None, (1, 0), (0, 0), (2, 0)]),
       split=st.data(), seed=st.integers(0, 2**16))
def test_dlpack(shape, dtype, copy, max_version, split, seed):
    g = values(shape, dtype, seed)
    x = da.asarray(g, split=split.draw(splits(len(shape))))
    assert x.__dlpack_device__() == np.asarray(g).__dlpack_device__()
    whole = P == 1 or x.layout.is_replicated
    if copy is False and not whole:  # no single buffer holds a cut array: the same error on every rank
        assert_raises_everywhere(BufferError, x.__dlpack__, copy=False, match="no single buffer")
        return
    assert x.__dlpack__(copy=copy, max_version=max_version, dl_device=x.__dlpack_device__()) is not None
    got = np.from_dlpack(x, copy=copy)
    assert not agree(COMM, got.shape == g.shape and got.dtype == g.dtype and np.array_equal(got, g, equal_nan=True))
    for device in DEVICES:
        if copy is False and device != x.device:
            continue
        y = da.from_dlpack(x, device=device, copy=copy)
        assert y.device == device, (device, y.device)
        assert_equal(da.from_dlpack(y, device=x.device), g, rtol=0.0)
