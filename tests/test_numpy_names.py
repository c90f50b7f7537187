"""NumPy's names in darray's namespace (``import darray as np``) against NumPy, on every rank count."""

from __future__ import annotations

import numpy
import pytest

import darray as da
from darray._api.numpy_names import FUNCTION_NAMES, UFUNC_NAMES
from darray.testing import assert_equal

pytestmark = pytest.mark.mpi

#: ufunc name -> (input dtypes, value range) of the operands it is tested on.
INTEGER_UFUNCS = {"bitwise_count", "bitwise_not", "gcd", "invert", "lcm", "left_shift", "right_shift"}
DOMAINS = {"arccosh": (1.0, 3.0), "arccos": (-1.0, 1.0), "arcsin": (-1.0, 1.0), "arctanh": (-0.9, 0.9),
           "float_power": (0.5, 2.0), "power": (0.5, 2.0), "fmod": (0.5, 3.0), "mod": (0.5, 3.0),
           "divmod": (0.5, 3.0), "true_divide": (0.5, 3.0)}


def layouts(n: int) -> list[dict]:
    p = da.default_communicator().size
    out = [dict(split=0), dict(split=None), dict(split=0, sizes=[0] * (p - 1) + [n])]
    if p == 4:
        out.append(dict(split=(0, 1), grid=(2, 2)))
    return out


def operands(name: str, nin: int, shape=(7, 5)) -> list[numpy.ndarray]:
    rng = numpy.random.default_rng(sum(map(ord, name)))
    if name in INTEGER_UFUNCS:
        return [rng.integers(0, 6, shape).astype(numpy.int64) for _ in range(nin)]
    if name == "ldexp":
        return [rng.uniform(-2.0, 2.0, shape), rng.integers(-3, 4, shape)]
    lo, hi = DOMAINS.get(name, (-2.0, 2.0))
    return [rng.uniform(lo, hi, shape) for _ in range(nin)]


def test_every_name_is_exported_and_is_numpy_underneath():
    for name in UFUNC_NAMES + FUNCTION_NAMES:
        assert name in da.__all__, name
        assert getattr(da, name).__name__ == name
        assert f"numpy.{name}" in getattr(da, name).__doc__


@pytest.mark.parametrize("name", UFUNC_NAMES)
def test_ufunc_names_match_numpy(name):
    ufunc = getattr(numpy, name)
    arrays = operands(name, ufunc.nin)
    want = ufunc(*arrays)
    for kw in layouts(arrays[0].shape[0]):
        got = getattr(da, name)(*(da.asarray(a, **kw) for a in arrays))
        pairs = zip(got, want) if ufunc.nout > 1 else [(got, want)]
        for g, w in pairs:
            assert isinstance(g, da.DArray)
            assert_equal(g, w, err_msg=f"{name} {kw}")


def test_ufunc_names_take_out_where_and_scalars():
    a = numpy.linspace(0.5, 2.0, 12).reshape(3, 4)
    for kw in layouts(3):
        x = da.asarray(a, **kw)
        out = da.zeros_like(x)
        assert da.power(x, 2.0, out=out) is out
        assert_equal(out, numpy.power(a, 2.0))
        assert_equal(da.arctan2(x, 1.0, where=x > 1.0, out=da.zeros_like(x)),
                     numpy.arctan2(a, 1.0, where=a > 1.0, out=numpy.zeros_like(a)))
    assert da.arctan2(1.0, 2.0) == numpy.arctan2(1.0, 2.0)  # no DArray: NumPy's result, as before the import change


FUNCTION_CALLS = {  # name -> a call on a 2-d float array (None: the plain call f(a))
    "allclose": lambda m, a: m.allclose(a, a + 1e-12),
    "array_equal": lambda m, a: m.array_equal(a, a),
    "concatenate": lambda m, a: m.concatenate([a, a], axis=1),
    "einsum": lambda m, a: m.einsum("ij,ij->i", a, a),
    "gradient": lambda m, a: m.gradient(a, axis=0),
    "histogram": lambda m, a: m.histogram(a, bins=4, range=(-2.0, 2.0))[0],
    "isclose": lambda m, a: m.isclose(a, a),
    "outer": lambda m, a: m.outer(a[:, 0], a[0]),
    "pad": lambda m, a: m.pad(a, 1, mode="wrap"),
    "percentile": lambda m, a: m.percentile(a, 30, axis=0),
    "quantile": lambda m, a: m.quantile(a, 0.7, axis=1),
}


@pytest.mark.parametrize("name", FUNCTION_NAMES)
def test_function_names_match_numpy(name):
    a = numpy.random.default_rng(3).uniform(-2.0, 2.0, (9, 4))
    call = FUNCTION_CALLS.get(name, lambda m, v: getattr(m, name)(v))
    want = call(numpy, a)
    for kw in layouts(a.shape[0]):
        got = call(da, da.asarray(a, **kw))
        if not isinstance(got, da.DArray):  # small results (histogram counts, shape, allclose) are local values
            got = da.asarray(numpy.asarray(got), split=None)
        assert_equal(got, numpy.asarray(want), check_dtype=False, err_msg=f"{name} {kw}")


def test_unimplemented_numpy_function_is_refused_not_gathered():
    x = da.asarray(numpy.arange(6.0), split=0)
    with pytest.raises(TypeError, match="ediff1d"):
        numpy.ediff1d(x)
