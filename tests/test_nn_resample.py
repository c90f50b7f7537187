"""``interpolate`` / ``Upsample``: nearest and (bi/tri)linear with torch's semantics, through halos.

Oracles: a NumPy reference written here (torch's documented source-index
formulas, a loop per axis, float64), the replicated computation (the
single-rank result at any rank count, values and gradients within 1e-12),
central finite differences, and torch.nn.functional.interpolate when torch is
installed (same values to 1e-12 and the same input gradients).
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray import autodiff as ad
from darray import nn
from darray.autodiff import Variable
from darray.nn import functional as F
from darray.testing import assert_equal

from _cases import by_ndim
from _nn_helpers import P, assert_trains_identically, fd_check, field, layouts_1d_3d, spatial, torch_params
from _nn_helpers import compare_grads as _compare_grads

pytestmark = pytest.mark.mpi


def compare_grads(build, x, layout, key):
    """Loss and input gradient on the sharded field == on the replicated field (1e-12), which is made once per
    ``key``."""
    _compare_grads(build, x, layout, rtol=1e-12, atol=1e-14, key=key)


def layouts(shape):
    """Spatial layouts of an (N, C, 13, W) field: rows / columns cut, replicated, uneven with an empty block,
    a 2x2 grid."""
    return spatial(shape, "split2", "split3", "replicated", "empty-half2", "grid2x2-23")


# ------------------------------------------------------------------ the NumPy reference
def ref_axis(x, axis, n_out, mode, align, scale):
    """Resample one axis with torch's source-index rules (scale: the user's scale_factor, or None)."""
    n_in = x.shape[axis]
    if n_out == n_in:
        return x
    o = np.arange(n_out)
    if mode in ("nearest", "nearest-exact"):
        s = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
        pos = o.astype(np.float32) * s if mode == "nearest" else (o + 0.5) * np.float64(s)
        idx = np.minimum(np.floor(np.float32(pos)).astype(int), n_in - 1)
        return np.take(x, idx, axis=axis)
    if align:
        src = o * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    else:
        src = np.maximum((1.0 / scale if scale else n_in / n_out) * (o + 0.5) - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(int), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = src - i0
    shape = [1] * x.ndim
    shape[axis] = n_out
    lam = lam.reshape(shape)
    return np.take(x, i0, axis=axis) * (1 - lam) + np.take(x, i1, axis=axis) * lam


def ref_interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute=None):
    nsp = x.ndim - 2
    if size is not None:
        sizes, scales = ((size,) * nsp if isinstance(size, int) else tuple(size)), (None,) * nsp
    else:
        scales = (scale_factor,) * nsp if not isinstance(scale_factor, tuple) else scale_factor
        sizes = tuple(int(np.floor(n * s)) for n, s in zip(x.shape[2:], scales))
        if recompute:
            scales = (None,) * nsp
    for i in range(nsp):
        x = ref_axis(x, 2 + i, sizes[i], mode, bool(align_corners), scales[i])
    return x


CASES = [  # size, scale_factor, mode, align_corners, recompute_scale_factor
    (None, 2, "bilinear", False, None), (None, 2, "bilinear", True, None), ((26, 17), None, "bilinear", None, None),
    (None, 1.7, "bilinear", False, None), (None, (0.5, 3.0), "bilinear", True, None),
    (None, 2.5, "bilinear", None, True), ((5, 4), None, "bilinear", False, None),
    (None, 2, "nearest", None, None), (None, 1.5, "nearest", None, None), ((20, 7), None, "nearest-exact", None, None),
]


@pytest.mark.parametrize("layout", layouts((1, 2, 13, 11)), ids=str)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_interpolate2d_on_every_layout(case, layout):
    size, sf, mode, align, rec = case
    x = field(layout.shape, 1)
    ref = ref_interpolate(x, size, sf, mode, align, rec)
    w = field(ref.shape, 2)

    def loss(v):
        return ad.sum(F.interpolate(v, size, sf, mode, align, rec) * da.asarray(w, split=None))

    y = F.interpolate(layout.array(x), size, sf, mode, align, rec)
    assert y.shape == ref.shape
    assert_equal(y.data, ref, rtol=1e-9, atol=1e-12)
    compare_grads(loss, x, layout, key=case)
    if layout.id == "split2":  # the finite differences use the replicated field: once per case
        fd_check(loss, x)


@pytest.mark.parametrize("nsp,layout", by_ndim({1: layouts_1d_3d((2, 2, 17)), 3: layouts_1d_3d((1, 2, 7, 6, 5))}))
def test_linear_and_trilinear(nsp, layout):
    mode = "linear" if nsp == 1 else "trilinear"
    x = field(layout.shape, 3)
    for sf, align in ((2, False), (1.6, True)):
        ref = ref_interpolate(x, None, sf, mode, align)
        w = field(ref.shape, 4)
        up = nn.Upsample(scale_factor=sf, mode=mode, align_corners=align)
        assert_equal(up(layout.array(x)).data, ref, rtol=1e-9, atol=1e-12)
        compare_grads(lambda v: ad.sum(up(v) * da.asarray(w, split=None)), x, layout, key=(mode, sf, align))
        if layout.id == "split2":  # the finite differences use the replicated field: once per scale
            fd_check(lambda v: ad.sum(up(v) * da.asarray(w, split=None)), x)


def test_linear_modes_exchange_one_ghost_cell_nearest_none():
    x = da.asarray(field((1, 1, 16, 6), 5), split=2)
    with da.tracing() as t:
        F.interpolate(x, scale_factor=2, mode="bilinear")
    ops = [e["op"] for e in t.events if e["kind"] == "comm" and e["op"] != "agree"]  # (first-use agreement)
    assert set(ops) <= {"halo"} and (ops if P > 1 else not ops), ops
    with da.tracing() as t:
        F.interpolate(x, scale_factor=3, mode="nearest")
    assert not [e for e in t.events if e["kind"] == "comm"]


def small_unet():
    return nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.AvgPool2d(3, 2, 1), nn.GELU(),
                         nn.Upsample(size=(13, 11), mode="bilinear", align_corners=False), nn.Conv2d(3, 1, 1))


@pytest.mark.parametrize("layout", layouts((1, 1, 13, 11)), ids=str)
def test_upsample_in_a_small_unet_trains_identically_on_any_layout(layout):
    assert_trains_identically(small_unet, field(layout.shape, 6), field(layout.shape, 7), layout, seed=5)


def test_bad_interpolate_arguments_raise_on_every_rank():
    x = da.asarray(field((1, 2, 9, 8)), split=2)
    with pytest.raises(ValueError, match="interpolate: exactly one of size and scale_factor"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="interpolate: exactly one of size and scale_factor"):
        F.interpolate(x, (4, 4), 2)
    with pytest.raises(ValueError, match="Upsample: exactly one of size and scale_factor"):
        nn.Upsample()
    with pytest.raises(ValueError, match="interpolate: mode='linear' needs a 3-d input"):
        F.interpolate(x, scale_factor=2, mode="linear")
    with pytest.raises(ValueError, match="interpolate: unsupported mode"):
        F.interpolate(x, scale_factor=2, mode="bicubic")
    with pytest.raises(ValueError, match="align_corners can only be set with the linear modes"):
        F.interpolate(x, scale_factor=2, align_corners=True)
    with pytest.raises(ValueError, match="size needs one positive int per spatial axis"):
        F.interpolate(x, size=(4, 0))
    with pytest.raises(ValueError, match="scale_factor needs one positive number per spatial axis"):
        F.interpolate(x, scale_factor=(2, 2, 2))
    with pytest.raises(ValueError, match="scale_factor gives an empty output"):
        F.interpolate(x, scale_factor=0.05)
    with pytest.raises(TypeError, match="interpolate: resampling needs a real floating-point input"):
        F.interpolate(da.asarray(np.ones((1, 1, 4, 4), dtype=np.int64), split=2), scale_factor=2)
    with pytest.raises(NotImplementedError, match="antialias"):
        F.interpolate(x, scale_factor=0.5, mode="bilinear", antialias=True)


# ------------------------------------------------------------------ torch cross-checks
TORCH_CASES = CASES + [
    ((7, 20), None, "nearest", None, None), (None, 0.5, "nearest", None, None), (None, 3, "nearest", None, None),
    (None, (1.3, 0.7), "nearest-exact", None, None), ((1, 1), None, "bilinear", True, None),
    ((40, 3), None, "bilinear", True, None), (None, 0.45, "bilinear", False, None),
]


@pytest.mark.parametrize("layout", torch_params(layouts((2, 3, 13, 11))), ids=str)
@pytest.mark.parametrize("case", torch_params(TORCH_CASES), ids=str)
def test_against_torch(case, layout):
    torch = pytest.importorskip("torch")
    size, sf, mode, align, rec = case
    x = field(layout.shape, 8)
    xt = torch.tensor(x, requires_grad=True)
    yt = torch.nn.functional.interpolate(xt, size, sf, mode, align, rec)
    w = field(tuple(yt.shape), 9)
    (yt * torch.tensor(w)).sum().backward()
    v = Variable(layout.array(x), requires_grad=True)
    y = F.interpolate(v, size, sf, mode, align, rec)
    ad.sum(y * da.asarray(w, split=None)).backward()
    assert_equal(y.data, yt.detach().numpy(), rtol=1e-12, atol=1e-14)
    assert_equal(v.grad, xt.grad.numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("nsp,layout", torch_params(by_ndim({1: spatial((2, 2, 19), "split2"),
                                                              3: spatial((1, 2, 7, 6, 5), "split2", "grid2x2-23")})))
def test_against_torch_1d_3d(nsp, layout):
    torch = pytest.importorskip("torch")
    mode = "linear" if nsp == 1 else "trilinear"
    shape = layout.shape
    x = field(shape, 10)
    for kwargs in (dict(scale_factor=2.0), dict(scale_factor=0.7, align_corners=True), dict(size=shape[2:][::-1])):
        xt = torch.tensor(x, requires_grad=True)
        yt = torch.nn.Upsample(mode=mode, **kwargs)(xt)
        yt.pow(2).sum().backward()
        up = nn.Upsample(mode=mode, **kwargs)
        v = Variable(layout.array(x), requires_grad=True)
        y = up(v)
        ad.sum(y ** 2).backward()
        assert_equal(y.data, yt.detach().numpy(), rtol=1e-12, atol=1e-14)
        assert_equal(v.grad, xt.grad.numpy(), rtol=1e-12, atol=1e-13)
