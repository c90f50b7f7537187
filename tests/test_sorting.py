"""sort / argsort against NumPy (array-api-compat's NumPy for ``descending``) on every rank count.

Covers local sorts (axis not cut), the distributed transpose (axis cut, a long
other axis) and the sample sort (1-d and thin arrays), uneven and empty blocks,
2x2 grids at 4 ranks, every real dtype, NaNs, many duplicates (stability is
checked through argsort against a stable NumPy argsort) and descending order;
one test per layout of ``tests/_cases.py`` (its id names it).
"""

from __future__ import annotations

import array_api_compat.numpy as xnp
import numpy as np
import pytest

import darray as da
from darray._backend import to_numpy
from darray._api.sorting import argsort, sort
from darray.testing import assert_equal

from _cases import P, case, each, generator, layouts

pytestmark = pytest.mark.mpi

DTYPES = ["float64", "float32", "int64", "int8", "uint16", "uint8", "bool"]


def values(shape, dtype, seed=0, distinct=4) -> np.ndarray:
    """Few distinct values (``distinct``): many ties; floats with about 15% NaNs and 10% -0.0."""
    rng = generator(seed, len(shape), dtype)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    lo = 0 if dt.kind == "u" else -distinct // 2
    a = rng.integers(lo, lo + distinct, shape).astype(dt)
    if dt.kind == "f" and a.size:
        a[rng.random(shape) < 0.15] = np.nan
        a[rng.random(shape) < 0.1] = -0.0
    return a


def layouts_1d(shape) -> list:
    """1-d ``shape``: balanced, replicated, all on the last rank, all on the first (2+ ranks), two halves with an
    empty block between (3+ ranks), a 2x2 grid holding copies (4 ranks)."""
    n = shape[0]
    out = layouts((n,), "split0", "replicated", "last0")
    if P > 1:
        out.append(case("first0", (n,), "uneven", "empty", split=0, sizes={0: [n] + [0] * (P - 1)}))
    if P > 2:
        out.append(case("halves0", (n,), "uneven", "empty", split=0,
                        sizes={0: [n // 2, 0, n - n // 2] + [0] * (P - 3)}))
    return out + layouts((n,), "grid2x2-0n")


def layouts_2d(shape) -> list:
    """Each axis cut, replicated, all of axis 1 on the last rank, 2x2 grids (one holding copies)."""
    return layouts(shape, "split0", "split1", "replicated", "last1", "grid2x2", "grid2x2-10", "grid2x2-n1")


def over(table, *shapes) -> list:
    """``layout`` parameters over ``table(shape)`` (:func:`layouts_1d`, :func:`layouts_2d`) for each of ``shapes``,
    ids ``{shape}-{layout}``."""
    return [pytest.param(c, id=f"{'x'.join(map(str, s))}-{c}") for s in shapes for c in table(s)]


def check(a: np.ndarray, x, axis=-1):
    for descending in (False, True):
        assert_equal(sort(x, axis=axis, descending=descending), xnp.sort(a, axis=axis, descending=descending),
                     err_msg=f"sort descending={descending}")
        assert_equal(argsort(x, axis=axis, descending=descending),
                     xnp.argsort(a, axis=axis, descending=descending, stable=True).astype(np.int64),
                     err_msg=f"argsort descending={descending}")
    assert_equal(sort(x, axis=axis, stable=False), np.sort(a, axis=axis))


@pytest.mark.parametrize("layout", over(layouts_1d, (0,), (1,), (7,), (13,), (100,)))
def test_sort_1d(layout):
    def run(dtype):
        a = values(layout.shape, dtype)
        check(a, layout.array(a))

    each(DTYPES, run)


@pytest.mark.parametrize("layout", layouts_1d((1000,)), ids=str)
def test_argsort_stable_many_duplicates(layout):
    a = values((1000,), "int64", seed=3, distinct=3)
    x = layout.array(a)
    assert_equal(argsort(x), np.argsort(a, kind="stable"))
    assert_equal(argsort(x, descending=True), xnp.argsort(a, descending=True, stable=True))


SAME = {"sevens": np.full(50, 7, dtype=np.int32), "nans": np.full(50, np.nan),
        "specials": np.array([np.nan, -np.inf, np.inf, 0.0, -0.0] * 9)}


@pytest.mark.parametrize("name,layout", [pytest.param(k, c, id=f"{k}-{c}") for k, a in SAME.items()
                                         for c in layouts_1d(a.shape)])
def test_all_equal_and_all_nan(name, layout):
    check(SAME[name], layout.array(SAME[name]))


@pytest.mark.parametrize("layout", over(layouts_2d, (7, 13), (13, 7), (3, 40), (1, 9)))
def test_sort_2d_every_axis(layout):
    def run(dtype):
        a = values(layout.shape, dtype, seed=1)
        x = layout.array(a)
        for axis in (0, 1, -1):
            check(a, x, axis)

    each(["float64", "int32", "uint8", "bool"], run)


@pytest.mark.parametrize("layout", layouts((4, 5, 6), "split0", "split2", "split1", "grid2x2-20"), ids=str)
def test_sort_3d(layout):
    a = values((4, 5, 6), "float64", seed=2)
    x = layout.array(a)
    for axis in (0, 1, 2):
        check(a, x, axis)


def test_sort_with_halo():
    a = values((4, 5, 6), "float64", seed=2)
    x = da.asarray(a, split=0, halo=1)
    out = sort(x, axis=0)
    assert out.layout.blocks_key == x.layout.blocks_key
    assert_equal(out, np.sort(a, axis=0))


def test_result_keeps_input_layout():
    n = 13
    a = values((n,), "float64")
    x = da.asarray(a, split=0, sizes=[0] * (P - 1) + [n])
    assert sort(x).layout == x.layout
    assert argsort(x).layout == x.layout


def test_bad_input():
    x = da.asarray(np.arange(6.0).reshape(2, 3), split=0)
    with pytest.raises(np.exceptions.AxisError):
        sort(x, axis=2)
    with pytest.raises(np.exceptions.AxisError):
        argsort(x, axis=-3)
    with pytest.raises(TypeError):
        sort(da.asarray(np.ones(4, dtype=np.complex128)))
    with pytest.raises(TypeError):
        sort(np.arange(3))


def assert_same_bits(out, expected: np.ndarray, err_msg: str) -> None:
    """``out`` equals ``expected`` bit for bit (tells ``-0.0`` from ``0.0`` and NaN payloads apart)."""
    got = to_numpy(out.gather())
    unsigned = f"u{got.dtype.itemsize}"
    assert_equal(da.asarray(got.view(unsigned)), expected.view(unsigned), err_msg=err_msg)


def signed_zero_cases(n: int) -> dict[str, np.ndarray]:
    """Ties a stable sort must keep in input order: mixed within blocks, split between blocks, NaN payloads."""
    rng = generator(7)
    quiet_nan, other_nan = np.float64(np.nan), np.uint64(0x7FF8000000000123).view(np.float64)
    mixed = rng.integers(-2, 3, n).astype(np.float64)
    mixed[rng.random(n) < 0.3] = -0.0
    halves = np.where(np.arange(n) < n // 2, -0.0, 0.0)
    reversed_halves = np.where(np.arange(n) < n // 2, 0.0, -0.0)
    payloads = np.where(np.arange(n) % 3 == 0, quiet_nan, other_nan)
    payloads[::5] = 1.5
    plain = rng.standard_normal(n)  # no observable ties: the fast path
    plain[::4] = np.nan
    negative_nans = plain.copy()  # one NaN pattern, not NumPy's canonical one (x86's inf - inf)
    negative_nans[::4] = np.uint64(0xFFF8000000000000).view(np.float64)
    return {"mixed": mixed, "halves": halves, "reversed halves": reversed_halves, "payloads": payloads,
            "plain": plain, "negative NaNs": negative_nans}


@pytest.mark.parametrize("layout", over(layouts_1d, (1,), (12,), (101,)))
def test_sort_is_stable_bit_for_bit(layout):
    for name, a in signed_zero_cases(layout.shape[0]).items():
        ascending = a[np.argsort(a, kind="stable")]
        descending = a[xnp.argsort(a, descending=True, stable=True)]
        x = layout.array(a)
        assert_same_bits(sort(x), ascending, f"{name} ascending")
        assert_same_bits(sort(x, descending=True), descending, f"{name} descending")


@pytest.mark.parametrize("layout", layouts_2d((5, 8)), ids=str)
def test_sort_2d_stable_bit_for_bit(layout):
    a = signed_zero_cases(40)["mixed"].reshape(5, 8)
    x = layout.array(a)
    for axis in (0, 1):
        assert_same_bits(sort(x, axis=axis), np.take_along_axis(a, np.argsort(a, axis=axis, kind="stable"),
                                                                 axis=axis), f"axis {axis}")


def test_sample_sort_spreads_duplicates(comm):
    from darray._core.sample_sort import sample_sort_values

    p = comm.size
    n = 1000 * p
    block = np.full(1000, 3.0)  # all equal: a cut by value alone would send everything to one rank
    values, _, parts = sample_sort_values(comm, block)
    assert sum(parts) == n and len(parts) == p
    assert max(parts) <= 2 * n // p, parts
    assert values.shape == (parts[comm.rank],) and (values == 3.0).all()
