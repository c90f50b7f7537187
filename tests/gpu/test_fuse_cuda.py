"""``darray.fuse`` on CuPy blocks: CUDA kernels (ElementwiseKernel / ReductionKernel) against NumPy.

Marked ``gpu``: needs CuPy and a CUDA device, else every test skips with the
reason. Each test checks that the fused call ran as CUDA kernels (the plan
compiled some) and that the result equals NumPy on the same data: exactly
for ``+ - * /``, comparisons, casts and integer arithmetic (no fused
multiply-add), within a few ulp for CUDA's transcendental functions. The
whole fuse suite also runs with CuPy blocks: ``DARRAY_TEST_BACKEND=cupy
python -m pytest tests/test_fuse.py`` (benchmarks/gpu.py's device run).
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray.testing import assert_equal

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def cp():
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device (0 visible)")
    except Exception as exc:  # ImportError, or no driver
        pytest.skip(f"CuPy with a CUDA device is needed ({type(exc).__name__}: {exc}); install darray[gpu]")
    return cupy


def _on_gpu(x: np.ndarray, split=0):
    return da.asarray(x, device="cupy", split=split)


def _kernels(f) -> int:
    return sum(len(plan.cuda) for plan in f._plans.values() if plan is not None)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int16", "uint8", "bool"])
def test_elementwise_chain_is_one_kernel(cp, dtype):
    @da.fuse
    def f(a, b, c):
        return a * b + c, a == c

    rng = np.random.default_rng(0)
    a, b, c = (rng.integers(0, 100, (301, 7)).astype(dtype) for _ in range(3))
    got = f(*(_on_gpu(x) for x in (a, b, c)))
    with np.errstate(all="ignore"):
        want = (a * b + c, a == c)  # (bools: and, or; integers wrap)
    assert isinstance(got[0].local, cp.ndarray)
    assert_equal(got[0], want[0])
    assert_equal(got[1], want[1])
    assert _kernels(f) == 1, "the two results should come from one CUDA kernel"


def test_no_fused_multiply_add(cp):
    """``a*b + c`` rounds the product first, as NumPy: values chosen so that an FMA would differ."""
    @da.fuse
    def f(a, b, c):
        return a * b + c

    a = np.full(1000, 1.0 + 2.0 ** -30)
    c = -(a * a)
    got = f(_on_gpu(a), _on_gpu(a), _on_gpu(c))
    assert_equal(got, a * a + c, rtol=0)
    assert _kernels(f) == 1


def test_transcendental_and_where(cp):
    @da.fuse
    def f(a, b):
        return da.where(a > 0.5, da.exp(a) * da.sin(b), da.sqrt(da.abs(b)) / (1.0 + a))

    rng = np.random.default_rng(1)
    a, b = rng.random((517,)), rng.standard_normal((517,))
    assert_equal(f(_on_gpu(a), _on_gpu(b)), np.where(a > 0.5, np.exp(a) * np.sin(b), np.sqrt(np.abs(b)) / (1.0 + a)),
                 rtol=1e-14)
    assert _kernels(f) == 1


@pytest.mark.parametrize("reduction", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions_fuse_into_their_pass(cp, reduction, axis):
    @da.fuse
    def f(a, b):
        return getattr(da, reduction)(a * b + 0.5, axis=axis)

    rng = np.random.default_rng(2)
    a, b = rng.random((203, 9)) + 0.5, rng.random((203, 9)) + 0.5
    a[7, 3] = np.nan if reduction in ("max", "min") else a[7, 3]  # NaN propagates
    want = getattr(np, reduction)(a * b + 0.5, axis=axis)
    assert_equal(f(_on_gpu(a), _on_gpu(b)), np.asarray(want), rtol=1e-12)
    assert _kernels(f) == 1


def test_integer_mean_and_sum_of_bools(cp):
    @da.fuse
    def f(a, b):
        return da.mean(a * 3 - b), da.sum(a > b)

    rng = np.random.default_rng(3)
    a, b = rng.integers(-50, 50, 999), rng.integers(-50, 50, 999)
    m, s = f(_on_gpu(a), _on_gpu(b))
    assert_equal(m, np.asarray(np.mean(a * 3 - b)), rtol=1e-14)
    assert_equal(s, np.asarray(np.sum(a > b)))
    assert _kernels(f) == 2


def test_broadcast_operand(cp):
    @da.fuse
    def f(a, row):
        return da.sum((a - row) ** 2, axis=0)

    rng = np.random.default_rng(4)
    a, row = rng.standard_normal((40, 6)), rng.standard_normal(6)
    got = f(_on_gpu(a), da.asarray(row, device="cupy"))
    assert_equal(got, np.sum((a - row) ** 2, axis=0), rtol=1e-12)
    assert _kernels(f) == 1


def test_optimizer_update_in_place(cp):
    @da.fuse
    def step(p, g, m, lr, b1):
        m1 = b1 * m + (1 - b1) * g
        p[:] = p - lr * m1
        m[:] = m1

    rng = np.random.default_rng(5)
    p0, g0, m0 = (rng.standard_normal(1001) for _ in range(3))
    p, g, m = (_on_gpu(x.copy()) for x in (p0, g0, m0))
    block = p.local
    step(p, g, m, 1e-3, 0.9)
    m1 = 0.9 * m0 + (1 - 0.9) * g0
    assert_equal(p, p0 - 1e-3 * m1, rtol=0)
    assert_equal(m, m1, rtol=0)
    assert p.local is block, "the kernel writes the parameter's own block"
    assert _kernels(step) == 1


def test_stencil_sweep_and_map_overlap(cp):
    """Stencil groups: one box kernel for the interior and each boundary strip, reading padded blocks."""
    @da.fuse
    def sweep(u, out):
        out[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.2 * (u[2:, 1:-1] + u[:-2, 1:-1] - 2 * u[1:-1, 1:-1])

    @da.fuse
    def jacobi(u):
        return da.map_overlap(lambda b: 0.25 * (b[:-2, 1:-1] + b[2:, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:]), u,
                              depth=1, boundary="periodic", trim=False)

    g = np.random.default_rng(6).standard_normal((203, 77))
    u, out = _on_gpu(g), da.zeros(g.shape, device="cupy", split=0)
    sweep(u, out)
    want = np.zeros_like(g)
    want[1:-1, 1:-1] = g[1:-1, 1:-1] + 0.2 * (g[2:, 1:-1] + g[:-2, 1:-1] - 2 * g[1:-1, 1:-1])
    assert_equal(out, want, rtol=0)
    wrap = 0.25 * (np.roll(g, 1, 0) + np.roll(g, -1, 0) + np.roll(g, 1, 1) + np.roll(g, -1, 1))
    assert_equal(jacobi(u), wrap, rtol=1e-15)
    assert _kernels(sweep) == 1 and _kernels(jacobi) == 1
