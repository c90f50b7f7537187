"""Operators on shifted slices of cut arrays: the remembered alignment plan equals NumPy, call after call.

``u[1:] + u[:-1]`` on a cut array aligns one operand with the other by moving
boundary strips (darray._core.alignment). The plan is worked out on the first
call per pair of layouts and replayed after; these tests run every expression
twice (the second call replays) on every layout of the catalogue, 1-d to 3-d,
every dtype category, mixed dtypes, halos, and in temporary chains, against
NumPy on the gathered input.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest
from _cases import P, by_ndim, dtypes, layouts, values

import darray as da
from darray.testing import assert_equal

pytestmark = pytest.mark.mpi

SHAPES = {1: (13,), 2: (11, 7), 3: (7, 5, 4)}
CASES = by_ndim({n: layouts(shape) for n, shape in SHAPES.items()})


def _shifts(ndim: int) -> list[tuple[tuple, tuple]]:
    """Pairs of keys selecting equal shapes shifted by one cell along each axis in turn."""
    out = []
    for a in range(ndim):
        lo = tuple(slice(0, -1) if b == a else slice(None) for b in range(ndim))
        hi = tuple(slice(1, None) if b == a else slice(None) for b in range(ndim))
        out += [(lo, hi), (hi, lo)]
    return out


@pytest.mark.parametrize("ndim, layout", CASES)
def test_shifted_operands_equal_numpy_twice(ndim, layout):
    ref = values(layout.shape, "float64")
    u = layout.array(ref)
    for lo, hi in _shifts(ndim):
        for op in (operator.add, operator.sub, operator.mul, operator.lt):
            for _ in range(2):  # the second call replays the remembered plan
                assert_equal(op(u[lo], u[hi]), op(ref[lo], ref[hi]))


@pytest.mark.parametrize("dtype", dtypes("bool", "int", "uint", "float", "complex"))
@pytest.mark.parametrize("layout", layouts((17, 6), "split0", "uneven0", "first-empty0", "thin0", "grid2x2",
                                           "grid2x2-uneven", "halo0"), ids=str)
def test_every_dtype_category(layout, dtype):
    ref = values(layout.shape, dtype)
    u = layout.array(ref)
    op = operator.xor if dtype == "bool" else operator.add
    for _ in range(2):
        assert_equal(op(u[1:], u[:-1]), op(ref[1:], ref[:-1]))
        assert_equal(u[2:] == u[:-2], ref[2:] == ref[:-2])
        if dtype == "bool":  # refused on the first call and on the replay alike, with darray's message
            with pytest.raises(TypeError, match="subtract: unsupported dtype"):
                u[1:] - u[:-1]


@pytest.mark.parametrize("layout", layouts((19, 5), "split0", "uneven0", "last0", "grid2x2"), ids=str)
def test_mixed_dtypes_promote_like_numpy(layout):
    for small, large in (("int8", "int32"), ("float32", "float64")):  # (promotions every backend has)
        ref_s, ref_l = values(layout.shape, small), values(layout.shape, large, key=1)
        s, big = layout.array(ref_s), layout.array(ref_l)
        for _ in range(2):
            assert_equal(s[1:] + big[:-1], ref_s[1:] + ref_l[:-1])
            assert_equal(big[:-1] * s[1:], ref_l[:-1] * ref_s[1:])


@pytest.mark.parametrize("layout", layouts((37, 9), "split0", "uneven0", "thin0", "grid2x2"), ids=str)
def test_stencil_chain_with_temporaries(layout):
    """The README's sweep: the temporaries of the chain may take results in place; named operands never."""
    ref = values(layout.shape, "float64")
    u = layout.array(ref)
    expected = ref.copy()
    for _ in range(3):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                              - 4 * u[1:-1, 1:-1])
        expected[1:-1, 1:-1] = expected[1:-1, 1:-1] + 0.2 * (
            expected[2:, 1:-1] + expected[:-2, 1:-1] + expected[1:-1, 2:] + expected[1:-1, :-2]
            - 4 * expected[1:-1, 1:-1])
        assert_equal(u, expected, rtol=1e-14)
    named = u[2:, 1:-1]
    kept = named.copy()
    (named + u[:-2, 1:-1]) + u[1:-1, 1:-1]
    assert_equal(named, kept)  # a named operand's block is never a result's buffer


def test_moves_only_the_strips():
    """``u[1:] + u[:-1]`` on a row cut moves at most a row per block boundary each way (traced as ``align``)."""
    u = da.asarray(values((40, 8), "float64"), split=0)
    u[1:] + u[:-1]  # the plan
    with da.tracing() as t:
        u[1:] + u[:-1]
    sent = sum(e["nbytes"] for e in t.events if e["op"] == "align")
    total = int(u.comm.allreduce(np.array([sent]), "sum")[0])
    assert 0 < total <= 2 * (P - 1) * 8 * 8 if P > 1 else total == 0, total  # rows of 8 float64


@pytest.mark.parametrize("layout", layouts((13, 6), "split0", "uneven0", "grid2x2"), ids=str)
def test_replays_share_a_buffer_but_never_a_result(layout):
    """The strips of one plan land in one buffer (bound per dtype): earlier results and other arrays keep theirs."""
    refs = [values(layout.shape, dtype, key=k) for k, dtype in enumerate(("float64", "float64", "float32"))]
    arrays = [layout.array(ref) for ref in refs]
    results = [u[1:] + u[:-1] for u in arrays] + [u[:-1] * u[1:] for u in arrays]
    for result, expected in zip(results, [r[1:] + r[:-1] for r in refs] + [r[:-1] * r[1:] for r in refs]):
        assert_equal(result, expected)


@pytest.mark.parametrize("layout", layouts((13, 6), "split0", "uneven0", "grid2x2"), ids=str)
def test_a_call_that_raised_leaves_no_message_behind(layout):
    """A ufunc error between the strips' start and their wait: the next replay still gets its own strips."""
    ref = values(layout.shape, "float64")
    u, zeros = layout.array(ref), layout.array(np.zeros(layout.shape))
    u[1:] / u[:-1]  # the plan
    raised = 0
    with np.errstate(divide="raise", invalid="raise"):
        try:
            u[1:] / zeros[:-1]  # raises on the ranks that hold cells of the result; they skip the wait
        except FloatingPointError:
            raised = 1
    assert u.comm.allreduce(np.array([raised]), "sum")[0] > 0
    for _ in range(2):
        assert_equal(u[1:] / u[:-1], ref[1:] / ref[:-1])
