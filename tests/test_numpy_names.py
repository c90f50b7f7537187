"""NumPy's names in darray's namespace (``import darray as np``) against NumPy, on every rank count."""

from __future__ import annotations

import numpy
import pytest

import darray as da
from darray._api.numpy.names import FUNCTION_NAMES, UFUNC_NAMES
from darray.testing import assert_equal

from _cases import P, case, layouts

pytestmark = pytest.mark.mpi

#: ufunc name -> (input dtypes, value range) of the operands it is tested on.
INTEGER_UFUNCS = {"bitwise_count", "bitwise_not", "gcd", "invert", "lcm", "left_shift", "right_shift"}
DOMAINS = {"arccosh": (1.0, 3.0), "arccos": (-1.0, 1.0), "arcsin": (-1.0, 1.0), "arctanh": (-0.9, 0.9),
           "float_power": (0.5, 2.0), "power": (0.5, 2.0), "fmod": (0.5, 3.0), "mod": (0.5, 3.0),
           "divmod": (0.5, 3.0), "true_divide": (0.5, 3.0)}


def named(shape) -> list:
    """Split along the first axis, replicated, all on the last rank, a 2x2 grid at 4 ranks (copies, for 1-d)."""
    out = layouts(shape, "split0", "replicated", "last0", *(("grid2x2",) if len(shape) > 1 else ()))
    if P == 4 and len(shape) == 1:
        out.append(case("grid2x2-0n", shape, "grid", "copies", split=(0, None), grid=(2, 2)))
    return out


def operands(name: str, nin: int, shape=(7, 5)) -> list[numpy.ndarray]:
    rng = numpy.random.default_rng(sum(map(ord, name)))
    if name in INTEGER_UFUNCS:
        return [rng.integers(0, 6, shape).astype(numpy.int64) for _ in range(nin)]
    if name == "isnat":
        t = numpy.datetime64("2020-01-01", "h") + rng.integers(-99, 99, shape).astype("m8[h]")
        t.flat[::4] = numpy.datetime64("NaT")
        return [t]
    if name == "ldexp":
        return [rng.uniform(-2.0, 2.0, shape), rng.integers(-3, 4, shape)]
    lo, hi = DOMAINS.get(name, (-2.0, 2.0))
    return [rng.uniform(lo, hi, shape) for _ in range(nin)]


def test_every_name_is_exported_and_is_numpy_underneath():
    for name in UFUNC_NAMES + FUNCTION_NAMES:
        assert name in da.__all__, name
        assert getattr(da, name).__name__ == getattr(numpy, name).__name__  # NumPy's: da.mod is da.remainder
        assert f"numpy.{name}" in getattr(da, name).__doc__


@pytest.mark.parametrize("name", UFUNC_NAMES)
def test_ufunc_names_match_numpy(name):
    """Every layout looped here: tests/conftest.py deselects these tests by their ids (the ufunc's name)."""
    ufunc = getattr(numpy, name)
    arrays = operands(name, ufunc.nin)
    want = ufunc(*arrays)
    for layout in named(arrays[0].shape):
        got = getattr(da, name)(*(layout.array(a) for a in arrays))
        pairs = zip(got, want) if ufunc.nout > 1 else [(got, want)]
        for g, w in pairs:
            assert isinstance(g, da.DArray)
            assert_equal(g, w, err_msg=f"{name} {layout}")


@pytest.mark.parametrize("layout", named((3, 4)), ids=str)
def test_ufunc_names_take_out_where(layout):
    a = numpy.linspace(0.5, 2.0, 12).reshape(3, 4)
    x = layout.array(a)
    out = da.zeros_like(x)
    assert da.power(x, 2.0, out=out) is out
    assert_equal(out, numpy.power(a, 2.0))
    assert_equal(da.arctan2(x, 1.0, where=x > 1.0, out=da.zeros_like(x)),
                 numpy.arctan2(a, 1.0, where=a > 1.0, out=numpy.zeros_like(a)))


def test_ufunc_names_take_scalars():
    assert da.arctan2(1.0, 2.0) == numpy.arctan2(1.0, 2.0)  # no DArray: NumPy's result, as before the import change


FUNCTION_CALLS = {  # name -> a call on a 2-d float array (None: the plain call f(a))
    "allclose": lambda m, a: m.allclose(a, a + 1e-12),
    "array_equal": lambda m, a: m.array_equal(a, a),
    "concatenate": lambda m, a: m.concatenate([a, a], axis=1),
    "einsum": lambda m, a: m.einsum("ij,ij->i", a, a),
    "gradient": lambda m, a: m.gradient(a, axis=0),
    "histogram": lambda m, a: m.histogram(a, bins=4, range=(-2.0, 2.0))[0],
    "isclose": lambda m, a: m.isclose(a, a),
    "nanpercentile": lambda m, a: m.nanpercentile(a, 30, axis=0),
    "nanquantile": lambda m, a: m.nanquantile(a, 0.7, axis=1),
    "outer": lambda m, a: m.outer(a[:, 0], a[0]),
    "pad": lambda m, a: m.pad(a, 1, mode="wrap"),
    "percentile": lambda m, a: m.percentile(a, 30, axis=0),
    "quantile": lambda m, a: m.quantile(a, 0.7, axis=1),
    "trapezoid": lambda m, a: m.trapezoid(a, a, axis=0),
}


@pytest.mark.parametrize("layout", named((9, 4)), ids=str)
@pytest.mark.parametrize("name", FUNCTION_NAMES)
def test_function_names_match_numpy(name, layout):
    a = numpy.random.default_rng(3).uniform(-2.0, 2.0, (9, 4))
    call = FUNCTION_CALLS.get(name, lambda m, v: getattr(m, name)(v))
    want = call(numpy, a)
    got = call(da, layout.array(a))
    if not isinstance(got, da.DArray):  # small results (histogram counts, shape, allclose) are local values
        got = da.asarray(numpy.asarray(got), split=None)
    assert_equal(got, numpy.asarray(want), check_dtype=False, err_msg=name)


def test_unimplemented_numpy_function_is_refused_not_gathered():
    x = da.asarray(numpy.arange(6.0), split=0)
    with pytest.raises(TypeError, match="shares_memory"):
        numpy.shares_memory(x, x)


@pytest.mark.parametrize("layout", named((13,)), ids=str)
def test_unique_merges_nans_and_returns_what_numpy_returns(layout):
    a = numpy.array([3.0, 1.0, numpy.nan, 2.0, 1.0, numpy.nan, 3.0, numpy.nan, -0.0, 0.0, 7.0, 1.0, numpy.nan])
    flags = dict(return_index=True, return_inverse=True, return_counts=True)
    x = layout.array(a)
    assert_equal(da.unique(x), numpy.unique(a), err_msg="values")
    for got, want in zip(da.unique(x, **flags), numpy.unique(a, **flags)):
        assert_equal(got, want, check_dtype=False, err_msg="flags")
    assert_equal(da.unique(x, equal_nan=False), numpy.unique(a, equal_nan=False), err_msg="equal_nan")
    ints = numpy.array([4, 1, 4, 0, 1, 9, 9, 9, 2, 0, 4, 1, 5])
    for got, want in zip(da.unique(layout.array(ints), return_counts=True), numpy.unique(ints, return_counts=True)):
        assert_equal(got, want, check_dtype=False, err_msg="ints")


NORMS = [dict(), dict(axis=1), dict(axis=-1, ord=3), dict(axis=0, ord=numpy.inf), dict(axis=(0, 2)),
         dict(axis=(2, 0), ord=1), dict(axis=(0, 2), ord=-numpy.inf, keepdims=True), dict(keepdims=True),
         dict(axis=1, ord=0)]


@pytest.mark.parametrize("layout", named((6, 4, 5)), ids=str)
def test_linalg_norm_is_numpys(layout):
    a = numpy.random.default_rng(5).standard_normal((6, 4, 5))
    x = layout.array(a)
    for norm in NORMS:
        assert_equal(da.linalg.norm(x, **norm), numpy.asarray(numpy.linalg.norm(a, **norm)), err_msg=f"{norm}")
        assert_equal(numpy.linalg.norm(x, **norm), numpy.asarray(numpy.linalg.norm(a, **norm)),
                     err_msg=f"dispatch {norm}")
    m = da.asarray(a[:, :, 0], **layout.kw)
    for order in ("fro", "nuc", 1, -1, 2, -2, numpy.inf):
        assert_equal(da.linalg.norm(m, order), numpy.asarray(numpy.linalg.norm(a[:, :, 0], order)),
                     err_msg=f"matrix ord={order}")
    assert_equal(da.linalg.svd(m, compute_uv=False), numpy.linalg.svd(a[:, :, 0], compute_uv=False))


@pytest.mark.parametrize("layout", named((5, 5)), ids=str)
def test_numpy_linalg_functions_take_darrays(layout):
    rng = numpy.random.default_rng(6)
    a = rng.standard_normal((5, 5)) + 5 * numpy.eye(5)
    b = rng.standard_normal(5)
    x, y = layout.array(a), da.asarray(b, split=0)
    assert_equal(numpy.linalg.solve(x, y), numpy.linalg.solve(a, b), rtol=1e-10)
    assert_equal(numpy.linalg.inv(x), numpy.linalg.inv(a), rtol=1e-10)
    assert abs(float(numpy.linalg.det(x)) - numpy.linalg.det(a)) <= 1e-9 * abs(numpy.linalg.det(a))


def test_bad_norm_arguments_raise_everywhere():
    from darray.testing import assert_raises_everywhere

    x = da.asarray(numpy.ones((3, 4, 5)), split=0)
    assert_raises_everywhere(ValueError, da.linalg.norm, x, ord=2, match="1-d or 2-d")
    assert_raises_everywhere(ValueError, da.linalg.norm, x, axis=(0, 1, 2), match="pair")
    assert_raises_everywhere(ValueError, da.linalg.norm, x, axis=1, ord="fro", match="vectors")
    assert_raises_everywhere(ValueError, da.unique, x, axis=3, match="axis")  # axis=0..2 work (unique rows)
