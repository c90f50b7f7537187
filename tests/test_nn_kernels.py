"""The local kernels of darray.nn, one set per backend, against a loop reference in float64.

Local computations (no communication): every kernel set available here
(the generic Array-API set on NumPy and on array_api_strict, NumPy's, torch's)
computes the same convolution, its two gradients and the transposed
convolution as a direct loop over output cells, including strides,
dilations, groups, 1-3 spatial axes and the banded im2col (a budget small
enough to need several bands).
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from darray._backend import to_numpy
from darray.nn import _kernels
from darray.nn._kernels import CupyKernels, Kernels, NumpyKernels, TorchKernels, kernels_for


def _sets():
    out = [("generic-numpy", lambda: Kernels(importlib.import_module("array_api_compat.numpy"))),
           ("numpy", lambda: kernels_for(importlib.import_module("array_api_compat.numpy")))]
    for name, module in (("generic-strict", "array_api_strict"), ("torch", "array_api_compat.torch")):
        out.append((name, (lambda module=module: kernels_for(importlib.import_module(module)))))
    out.append(("torch-native", _torch_native))
    return out


def _torch_native():
    """torch's own convolutions for every operand (the set picks them only where they are faster)."""
    k = TorchKernels(importlib.import_module("array_api_compat.torch"))
    k.native = lambda *args: True
    return k


def _get(make):
    try:
        return make()
    except ImportError as e:
        pytest.skip(f"backend not installed: {e}")


def _to(k, a):
    return k.xp.asarray(np.ascontiguousarray(a))


def ref_conv(x, w, stride, dilation, groups):
    nsp = w.ndim - 2
    n, c = x.shape[:2]
    co, k = w.shape[0], w.shape[2:]
    outs = [(x.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nsp)]
    y = np.zeros((n, co, *outs))
    cg, og = c // groups, co // groups
    axes = [1] + list(range(2, 2 + nsp))
    for o in np.ndindex(*outs):
        window = tuple(slice(o[i] * stride[i], o[i] * stride[i] + dilation[i] * (k[i] - 1) + 1, dilation[i])
                       for i in range(nsp))
        patch = x[(slice(None), slice(None)) + window]
        for g in range(groups):
            y[(slice(None), slice(g * og, (g + 1) * og)) + o] = np.tensordot(
                patch[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og], axes=(axes, axes))
    return y


CASES = [  # input shape, weight shape, stride, dilation, groups
    ((2, 4, 11, 9), (6, 2, 3, 3), (1, 1), (1, 1), 2), ((1, 3, 12, 10), (2, 3, 3, 2), (2, 3), (2, 1), 1),
    ((1, 2, 9, 8), (4, 2, 1, 1), (1, 1), (1, 1), 1), ((1, 2, 9, 8), (3, 2, 1, 1), (2, 2), (1, 1), 1),
    ((2, 3, 17), (6, 1, 5), (2,), (3,), 3), ((1, 2, 6, 5, 7), (2, 2, 2, 3, 2), (1, 2, 1), (2, 1, 3), 1),
]


@pytest.mark.parametrize("budget", [1 << 20, 40])
@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("which", [name for name, _ in _sets()])
def test_conv_kernels_match_the_loop_reference(which, case, budget, monkeypatch):
    k = _get(dict(_sets())[which])
    monkeypatch.setattr(_kernels, "IM2COL_BUDGET", budget)  # 40 elements: one band per output row
    xs, ws, stride, dilation, groups = case
    r = np.random.default_rng(0)
    x, w = r.standard_normal(xs), r.standard_normal(ws)
    y = ref_conv(x, w, stride, dilation, groups)
    got = to_numpy(k.conv(_to(k, x), _to(k, w), stride, dilation, groups))
    np.testing.assert_allclose(got, y, rtol=1e-12, atol=1e-12)
    # gradients: <g, conv(x + e dx, w + e dw)> is linear in (dx, dw); compare with the loop reference
    g = r.standard_normal(y.shape)
    gx, gw = (to_numpy(a) for a in k.conv_backward(_to(k, x), _to(k, w), _to(k, g), stride, dilation, groups))
    dx, dw = r.standard_normal(xs), r.standard_normal(ws)
    np.testing.assert_allclose(np.sum(gx * dx), np.sum(g * ref_conv(dx, w, stride, dilation, groups)), rtol=1e-10)
    np.testing.assert_allclose(np.sum(gw * dw), np.sum(g * ref_conv(x, dw, stride, dilation, groups)), rtol=1e-10)
    only_x, none_w = k.conv_backward(_to(k, x), _to(k, w), _to(k, g), stride, dilation, groups, True, False)
    assert none_w is None
    np.testing.assert_allclose(to_numpy(only_x), gx, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("which", [name for name, _ in _sets()])
@pytest.mark.parametrize("nsp", [1, 2, 3])
def test_conv_transpose_kernels(which, nsp):
    k = _get(dict(_sets())[which])
    r = np.random.default_rng(1)
    stride = (3, 2, 2)[:nsp]
    groups = 2
    x = r.standard_normal((2, 4) + (5, 4, 3)[:nsp])
    w = r.standard_normal((4, 3) + stride)
    y = np.zeros((2, 6) + tuple(m * s for m, s in zip(x.shape[2:], stride)))
    for cell in np.ndindex(*x.shape[2:]):  # every input cell scatters one weighted kernel (no overlap)
        patch = tuple(slice(c * s, (c + 1) * s) for c, s in zip(cell, stride))
        for gi in range(groups):
            y[(slice(None), slice(3 * gi, 3 * gi + 3)) + patch] = np.tensordot(
                x[(slice(None), slice(2 * gi, 2 * gi + 2)) + cell], w[2 * gi:2 * gi + 2], axes=([1], [0]))
    got = to_numpy(k.conv_transpose(_to(k, x), _to(k, w), stride, groups))
    np.testing.assert_allclose(got, y, rtol=1e-12, atol=1e-12)
    g = r.standard_normal(y.shape)
    gx, gw = (to_numpy(a) for a in k.conv_transpose_backward(_to(k, x), _to(k, w), _to(k, g), stride, groups))
    dx, dw = r.standard_normal(x.shape), r.standard_normal(w.shape)
    lin_x = to_numpy(k.conv_transpose(_to(k, dx), _to(k, w), stride, groups))
    lin_w = to_numpy(k.conv_transpose(_to(k, x), _to(k, dw), stride, groups))
    np.testing.assert_allclose(np.sum(gx * dx), np.sum(g * lin_x), rtol=1e-10)
    np.testing.assert_allclose(np.sum(gw * dw), np.sum(g * lin_w), rtol=1e-10)


@pytest.mark.parametrize("which", [name for name, _ in _sets()])
def test_erf(which):
    import math

    k = _get(dict(_sets())[which])
    z = np.linspace(-4, 4, 33)
    np.testing.assert_allclose(to_numpy(k.erf(_to(k, z))), [math.erf(v) for v in z], rtol=1e-14, atol=1e-16)


def test_kernel_sets_are_chosen_by_backend():
    assert type(kernels_for(importlib.import_module("array_api_compat.numpy"))) is NumpyKernels
    strict = pytest.importorskip("array_api_strict")
    assert type(kernels_for(strict)) is Kernels
    assert _kernels._BY_NAME["cupy"] is CupyKernels and issubclass(CupyKernels, Kernels)
    torch = pytest.importorskip("torch")
    tk = kernels_for(importlib.import_module("array_api_compat.torch"))
    assert type(tk) is TorchKernels
    w3, w1 = torch.zeros((8, 8, 3, 3)), torch.zeros((8, 8, 1, 1))
    assert tk.native(torch.zeros((1, 8, 9, 9)), w3, 8)                              # float32, 8 channels: oneDNN
    assert not tk.native(torch.zeros((1, 8, 9, 9), dtype=torch.float64), w3.double(), 8)  # float64: generic
    assert not tk.native(torch.zeros((1, 1, 9, 9)), w3[:, :1], 1)                  # one input channel
    assert not tk.native(torch.zeros((1, 8, 9, 9)), w1, 8)                         # 1x1
