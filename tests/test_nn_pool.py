"""Pooling with torch's semantics (stride, padding, dilation, ceil_mode, count_include_pad) on any blocks.

Oracles: a NumPy reference written here (a loop over output cells, float64),
the replicated computation (the single-rank result at any rank count: values
and gradients within 1e-12), central finite differences, and
torch.nn.functional when torch is installed. Fields of 38 rows put block
boundaries off the pooling grid at 3 ranks (13, 13, 12); uneven layouts with
empty blocks and a 2x2 grid at 4 ranks are included.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math

import numpy as np
import pytest

import darray as da
from darray import autodiff as ad
from darray import nn
from darray.autodiff import Variable
from darray.nn import functional as F
from darray.testing import assert_equal

from _cases import by_ndim
from _nn_helpers import P, fd_check, field, host, layouts_1d_3d, spatial, torch_params
from _nn_helpers import compare_grads as _compare_grads

pytestmark = pytest.mark.mpi


def compare_grads(build, x, layout, key):
    """Loss and input gradient on the sharded field == on the replicated field (1e-12), which is made once per
    ``key``."""
    _compare_grads(build, x, layout, rtol=1e-12, atol=1e-14, key=key)


def layouts(shape):
    """Spatial layouts of an (N, C, H, W) field: rows / columns cut, replicated, uneven with empty blocks,
    misaligned (blocks of 3 rows) and a 2x2 grid."""
    return spatial(shape, "split2", "split3", "replicated", "empty-long2", "misaligned2", "grid2x2-23")


# ------------------------------------------------------------------ the NumPy reference
def ref_pool(x, mode, k, s, p, d=1, ceil=False, count_include_pad=True, divisor=None):
    """torch's pooling by a loop over output cells (any number of spatial axes)."""
    nsp = x.ndim - 2
    k, s, p, d = (tuple(v) if isinstance(v, tuple) else (v,) * nsp for v in (k, s, p, d))
    n = x.shape[2:]
    outs = []
    for i in range(nsp):
        room = n[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1
        o = (-(-room // s[i]) if ceil else room // s[i]) + 1
        if ceil and (o - 1) * s[i] >= n[i] + p[i]:
            o -= 1
        outs.append(o)
    y = np.zeros(x.shape[:2] + tuple(outs))
    for o in np.ndindex(*outs):
        cells = [[o[i] * s[i] - p[i] + j * d[i] for j in range(k[i])] for i in range(nsp)]
        inside = [[c for c in cs if 0 <= c < n[i]] for i, cs in enumerate(cells)]
        window = x[(slice(None), slice(None)) + np.ix_(*inside)]
        if mode == "max":
            y[(slice(None), slice(None)) + o] = window.reshape(x.shape[:2] + (-1,)).max(axis=-1)
            continue
        if divisor:
            count = divisor
        elif count_include_pad:
            count = math.prod(min(o[i] * s[i] - p[i] + k[i], n[i] + p[i]) - (o[i] * s[i] - p[i])
                              for i in range(nsp))
        else:
            count = math.prod(len(c) for c in inside)
        y[(slice(None), slice(None)) + o] = window.reshape(x.shape[:2] + (-1,)).sum(axis=-1) / count
    return y


# ------------------------------------------------------------------ 2-d pooling on every layout
CASES = [  # mode, kernel, stride, padding, dilation, ceil_mode, count_include_pad
    ("max", 3, 2, 1, 1, False, True), ("max", 2, 1, 0, 1, False, True), ("max", 3, 2, 1, 2, True, True),
    ("max", (3, 2), (2, 3), (1, 0), (1, 2), True, True), ("avg", 3, 2, 1, 1, False, True),
    ("avg", 3, 2, 1, 1, True, False), ("avg", (2, 3), (3, 1), (1, 1), 1, True, True),
    ("avg", 2, None, 0, 1, False, True),
]


def _call(case, v):
    mode, k, s, p, d, ceil, cip = case
    if mode == "max":
        return F.max_pool2d(v, k, s, p, d, ceil)
    return F.avg_pool2d(v, k, s, p, ceil, cip)


FIELD = (1, 2, 38, 11)


@functools.cache
def reference_2d(case):
    """The field, its pooling by the reference (a loop: made once for all layouts) and output weights."""
    mode, k, s, p, d, ceil, cip = case
    x = field(FIELD, 1)
    ref = ref_pool(x, mode, k, s if s is not None else k, p, d, ceil, cip)
    return x, ref, field(ref.shape, 2)


@pytest.mark.parametrize("layout", layouts(FIELD), ids=str)
@pytest.mark.parametrize("case", CASES, ids=str)
def test_pool2d_matches_the_reference_on_every_layout(case, layout):
    x, ref, w = reference_2d(case)

    def loss(v):
        return ad.sum(_call(case, v) * da.asarray(w, split=None))

    y = _call(case, layout.array(x))
    assert_equal(y.data, ref, rtol=1e-12)
    compare_grads(loss, x, layout, key=case)
    if layout.id == "split2":  # the finite differences use the replicated field: once per case
        fd_check(loss, x)


def test_misaligned_blocks_use_halos_not_a_rebalance():
    """38 rows over the ranks, windows of 2 with stride 2: blocks off the pooling grid exchange a ghost row."""
    x = field((1, 1, 38, 6), 3)
    layout = dict(split=2)
    xd = da.asarray(x, **layout)
    with da.tracing() as t:
        y = F.avg_pool2d(xd, 2)
    assert_equal(y.data, ref_pool(x, "avg", 2, 2, 0), rtol=1e-12)
    ops = {e["op"] for e in t.events if e["kind"] == "comm"} - {"agree"}  # (the stencil's first-use agreement)
    assert "redistribute" not in ops, ops
    starts = [xd.layout.block_start(r)[2] for r in range(P)]
    if any(s % 2 for s in starts):  # a block boundary off the pooling grid: one ghost row from the neighbour
        assert ops == {"halo"}, ops


@functools.cache
def reference_1d_3d(shape, mode, k, s, p, d):
    """The field, its pooling (ceil_mode) by the reference (made once for all layouts) and output weights."""
    x = field(shape, 4)
    ref = ref_pool(x, mode, k, s, p, d, True)
    return x, ref, field(ref.shape, 5)


@pytest.mark.parametrize("nsp,layout", by_ndim({1: layouts_1d_3d((2, 2, 17)), 3: layouts_1d_3d((1, 2, 9, 6, 5))}))
@pytest.mark.parametrize("mode", ["max", "avg"])
def test_pool1d_pool3d(nsp, mode, layout):
    k, s, p = (3, 2, 1) if nsp == 1 else ((3, 2, 2), (2, 1, 2), (1, 1, 0))
    fn = getattr(F, f"{mode}_pool{nsp}d")
    kwargs = dict(ceil_mode=True) if mode == "avg" else dict(dilation=1 if nsp == 3 else 2, ceil_mode=True)
    x, ref, w = reference_1d_3d(layout.shape, mode, k, s, p, kwargs.get("dilation", 1))
    assert_equal(fn(layout.array(x), k, s, p, **kwargs).data, ref, rtol=1e-12)
    compare_grads(lambda v: ad.sum(fn(v, k, s, p, **kwargs) * da.asarray(w, split=None)), x, layout,
                  key=(nsp, mode))


@pytest.mark.parametrize("layout", spatial((1, 2, 13, 10), "split2", "split3"), ids=str)
def test_divisor_override_and_count_include_pad(layout):
    x = field(layout.shape, 6)
    y = F.avg_pool2d(layout.array(x), 3, 2, 1, divisor_override=4)
    assert_equal(y.data, ref_pool(x, "avg", 3, 2, 1, divisor=4), rtol=1e-12)
    y = nn.AvgPool2d(3, 2, 1, count_include_pad=False)(layout.array(x))
    assert_equal(y.data, ref_pool(x, "avg", 3, 2, 1, count_include_pad=False), rtol=1e-12)


def plateau():
    """A 7x6 field of zeros with a 2x2 plateau of ones: overlapping 3x3 windows tie."""
    x = np.zeros((1, 1, 7, 6))
    x[0, 0, 2:4, 2:4] = 1.0
    return x


@pytest.mark.parametrize("layout", layouts((1, 1, 7, 6)), ids=str)
def test_max_pool_ties_and_return_indices(layout):
    """The gradient goes to the first maximum of each window (torch); indices are flat per (N, C) plane."""
    x = plateau()
    v = Variable(layout.array(x), requires_grad=True)
    y, idx = F.max_pool2d(v, 3, 1, 1, return_indices=True)
    ad.sum(y).backward()
    grad = np.zeros(42)
    flat = host(idx).ravel()
    np.add.at(grad, flat, 1.0)
    assert_equal(v.grad, grad.reshape(x.shape))
    assert idx.dtype == da.int64
    for o in np.ndindex(7, 6):  # the first maximum in row-major window order
        window = [(r, c) for r in range(o[0] - 1, o[0] + 2) for c in range(o[1] - 1, o[1] + 2)
                  if 0 <= r < 7 and 0 <= c < 6]
        best = max(window, key=lambda rc: (x[0, 0][rc], -window.index(rc)))
        assert flat.reshape(7, 6)[o] == best[0] * 6 + best[1]


def test_max_pool_module_recomputes_the_indices():
    y, idx = nn.MaxPool2d(2, return_indices=True)(da.asarray(plateau(), split=2))  # not recorded: recomputed
    assert host(idx).shape == (1, 1, 3, 3)


def test_nan_propagates_through_max_pool():
    x = field((1, 1, 6, 6), 7)
    x[0, 0, 1, 1] = np.nan
    y = host(F.max_pool2d(da.asarray(x, split=2), 2).data)
    assert np.isnan(y[0, 0, 0, 0]) and not np.isnan(y[0, 0, 1:, :]).any()


def test_bad_pooling_arguments_raise_on_every_rank():
    x = da.asarray(field((1, 2, 9, 8)), split=2)
    with pytest.raises(ValueError, match="max_pool2d: padding must be non-negative and at most half"):
        F.max_pool2d(x, 3, padding=2)
    with pytest.raises(ValueError, match="avg_pool2d: padding"):
        F.avg_pool2d(x, 2, padding=2)
    with pytest.raises(ValueError, match="max_pool2d: kernel_size, stride and dilation must be positive"):
        F.max_pool2d(x, 2, stride=0)
    with pytest.raises(ValueError, match="max_pool2d: input too small along spatial axis 0"):
        F.max_pool2d(x, (10, 2))
    with pytest.raises(ValueError, match="MaxPool2d: input must be"):
        nn.MaxPool2d(2)(da.asarray(field((2, 9, 8)), split=1))
    with pytest.raises(ValueError, match="kernel_size needs one entry per spatial axis"):
        F.avg_pool2d(x, (2, 2, 2))
    with pytest.raises(ValueError, match="divisor_override must be non-zero"):
        F.avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(TypeError, match="avg_pool2d: pooling needs a real floating-point input"):
        F.avg_pool2d(da.asarray(np.ones((1, 1, 4, 4), dtype=np.int64), split=2), 2)


# ------------------------------------------------------------------ torch cross-checks
def test_constructor_signatures_follow_torch():
    torch = pytest.importorskip("torch")
    for name in ("MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "Upsample"):
        ours = inspect.signature(getattr(nn, name)).parameters
        theirs = inspect.signature(getattr(torch.nn, name)).parameters
        assert [(p.name, p.default) for p in ours.values()] == [(p.name, p.default) for p in theirs.values()], name
    # torch's functional pools are C builtins / dispatch wrappers: their documented signatures
    expected = {"max_pool2d": ["input", "kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"],
                "avg_pool1d": ["input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"],
                "avg_pool2d": ["input", "kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                               "divisor_override"],
                "interpolate": ["input", "size", "scale_factor", "mode", "align_corners", "recompute_scale_factor",
                                "antialias"]}
    for name, params in expected.items():
        assert list(inspect.signature(getattr(F, name)).parameters) == params, name
    assert list(inspect.signature(F.interpolate).parameters) == \
        list(inspect.signature(torch.nn.functional.interpolate).parameters)


@pytest.mark.parametrize("layout", torch_params(layouts((2, 3, 38, 13))), ids=str)
@pytest.mark.parametrize("case", torch_params(CASES + [("max", 2, 2, 1, 1, True, True),
                                                       ("avg", 4, 3, 2, 1, True, False)]), ids=str)
def test_against_torch(case, layout):
    torch = pytest.importorskip("torch")
    mode, k, s, p, d, ceil, cip = case
    x = field(layout.shape, 8)
    xt = torch.tensor(x, requires_grad=True)
    tf = torch.nn.functional
    yt = tf.max_pool2d(xt, k, s, p, d, ceil) if mode == "max" else tf.avg_pool2d(xt, k, s, p, ceil, cip)
    w = field(tuple(yt.shape), 9)
    (yt * torch.tensor(w)).sum().backward()
    v = Variable(layout.array(x), requires_grad=True)
    y = _call(case, v)
    ad.sum(y * da.asarray(w, split=None)).backward()
    assert_equal(y.data, yt.detach().numpy(), rtol=1e-12)
    assert_equal(v.grad, xt.grad.numpy(), rtol=1e-12, atol=1e-14)
    if mode == "max" and layout.id == "split2":  # the indices on one layout: once per case
        _, it = tf.max_pool2d(torch.tensor(x), k, s, p, d, ceil, return_indices=True)
        _, idx = F.max_pool2d(da.asarray(x, split=2), k, s, p, d, ceil, return_indices=True)
        assert_equal(idx, it.numpy())


@pytest.mark.parametrize("layout", torch_params(spatial((1, 2, 11, 7, 6), "split2", "split3", "grid2x2-23")),
                         ids=str)
def test_pool_modules_against_torch_3d(layout):
    torch = pytest.importorskip("torch")
    x = field(layout.shape, 10)
    for ours, theirs in ((nn.MaxPool3d(3, 2, 1, dilation=(1, 2, 1), ceil_mode=True),
                          torch.nn.MaxPool3d(3, 2, 1, dilation=(1, 2, 1), ceil_mode=True)),
                         (nn.AvgPool3d((2, 3, 2), (2, 2, 1), (1, 1, 0), ceil_mode=True, count_include_pad=False),
                          torch.nn.AvgPool3d((2, 3, 2), (2, 2, 1), (1, 1, 0), ceil_mode=True,
                                             count_include_pad=False))):
        xt = torch.tensor(x, requires_grad=True)
        yt = theirs(xt)
        yt.pow(2).sum().backward()
        v = Variable(layout.array(x), requires_grad=True)
        y = ours(v)
        ad.sum(y ** 2).backward()
        assert_equal(y.data, yt.detach().numpy(), rtol=1e-12)
        assert_equal(v.grad, xt.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_every_small_configuration_against_torch():
    """Exhaustive over small kernels/strides/paddings/dilations/ceil_mode on a 13x11 field cut along H."""
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = field((1, 2, 13, 11), 11)
    layout = dict(split=2, sizes={2: [5] * (P - 1) + [13 - 5 * (P - 1)]}) if P < 4 else dict(split=2)
    for mode, k, s, p, d, ceil in itertools.product(("max", "avg"), (1, 2, 3), (1, 2, 3), (0, 1), (1, 2),
                                                    (False, True)):
        if (mode == "avg" and d > 1) or 2 * p > d * (k - 1) + 1:
            continue
        yt = tf.max_pool2d(torch.tensor(x), k, s, p, d, ceil) if mode == "max" else \
            tf.avg_pool2d(torch.tensor(x), k, s, p, ceil)
        y = _call((mode, k, s, p, d, ceil, True), da.asarray(x, **layout))
        assert_equal(y.data, yt.numpy(), rtol=1e-12, err_msg=str((mode, k, s, p, d, ceil)))
