"""darray.nn on spatially sharded fields, on every rank count.

Forward passes against NumPy references written here (direct loops, no
im2col); gradients against the replicated computation (the single-rank
result at any rank count, within 1e-10) and finite differences. Small
fields such as 1x2x13x11 keep the 4-rank run short.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import darray as da
from darray import autodiff as ad
from darray import nn
from darray.autodiff import Variable
from darray.nn import functional as F
from darray.testing import agree, assert_equal

from _cases import by_ndim
from _nn_helpers import (assert_trains_identically, compare_grads, fd_check, field, host, same_everywhere, spatial,
                         torch_params)

pytestmark = pytest.mark.mpi

#: The default field of the tests: (N, C, H, W) = (1, 2, 13, 11); its layouts also lay out fields of 13 x 11
#: cells with other N and C.
FIELD = (1, 2, 13, 11)
#: Spatial layouts: H cut, W cut, replicated, uneven with a one-row and an empty block, a 2x2 grid.
LAYOUTS = spatial(FIELD, "split2", "split3", "replicated", "thin-empty2", "grid2x2-23")
#: H cut, W cut.
H, W = spatial(FIELD, "split2", "split3")


def ref_conv(x, w, b, stride, pads, dil, groups, mode="zeros"):
    """Cross-correlation by a loop over output positions (NumPy's pad for the boundary)."""
    nsp = w.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + list(pads), mode={"zeros": "constant", "circular": "wrap",
                                                          "replicate": "edge"}[mode])
    n, c = x.shape[:2]
    co, k = w.shape[0], w.shape[2:]
    span = [d * (kk - 1) + 1 for kk, d in zip(k, dil)]
    outs = [(xp.shape[2 + i] - span[i]) // stride[i] + 1 for i in range(nsp)]
    y = np.zeros((n, co, *outs))
    cg, og = c // groups, co // groups
    axes = [1] + list(range(2, 2 + nsp))
    for o in np.ndindex(*outs):
        window = tuple(slice(o[i] * stride[i], o[i] * stride[i] + span[i], dil[i]) for i in range(nsp))
        patch = xp[(slice(None), slice(None)) + window]
        for g in range(groups):
            y[(slice(None), slice(g * og, (g + 1) * og)) + o] = np.tensordot(
                patch[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og], axes=(axes, axes))
    return y + b.reshape((1, co) + (1,) * nsp) if b is not None else y


CONV_CASES = [  # stride, padding, dilation, groups, padding_mode
    (1, 1, 1, 1, "zeros"), (2, 1, 1, 2, "zeros"), (1, "same", 2, 1, "circular"), (1, "valid", 1, 1, "zeros"),
    (2, 3, 1, 1, "zeros"), (1, 2, 1, 2, "replicate"), (3, 0, 2, 1, "zeros"), (1, "same", 1, 1, "replicate"),
]


def _pads(padding, k, dil, nsp):
    if padding == "same":
        return [((dil * (k - 1)) // 2, dil * (k - 1) - (dil * (k - 1)) // 2)] * nsp
    if padding == "valid":
        return [(0, 0)] * nsp
    return [(padding, padding)] * nsp


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@pytest.mark.parametrize("case", CONV_CASES, ids=str)
def test_conv2d_forward_and_backward(case, layout):
    stride, padding, dil, groups, mode = case
    nn.init.manual_seed(1)
    conv = nn.Conv2d(2, 4, 3, stride=stride, padding=padding, dilation=dil, groups=groups, padding_mode=mode)
    x = field()
    w, b = host(conv.weight.data), host(conv.bias.data)
    y = conv(layout.array(x))
    ref = ref_conv(x, w, b, (stride,) * 2, _pads(padding, 3, dil, 2), (dil,) * 2, groups, mode)
    assert_equal(y.data, ref, rtol=1e-10, atol=1e-12)
    target = np.random.default_rng(3).standard_normal(ref.shape)

    def loss(v):
        return F.mse_loss(conv(v), da.asarray(target, split=None))

    compare_grads(loss, x, layout, [conv.weight, conv.bias], key=case)
    if layout is H:  # the finite differences use the replicated field: once per case
        fd_check(loss, x)


def test_conv2d_weight_gradient_finite_differences():
    nn.init.manual_seed(2)
    x = da.asarray(field(), split=2)
    conv = nn.Conv2d(2, 3, (3, 2), padding=1, stride=(1, 2))

    def loss_of(wv, bv):
        return ad.sum(ad.tanh(F.conv2d(x, wv, bv, (1, 2), 1)))

    w0, b0 = host(conv.weight.data), host(conv.bias.data)
    gw, gb = ad.grad(loss_of, (0, 1))(conv.weight.data, conv.bias.data)
    d = np.random.default_rng(4).standard_normal(w0.shape)
    e = 1e-6
    fd = (float(loss_of(Variable(da.asarray(w0 + e * d, split=None)), conv.bias).data)
          - float(loss_of(Variable(da.asarray(w0 - e * d, split=None)), conv.bias).data)) / (2 * e)
    assert abs(fd - np.sum(host(gw.local) * d)) < 1e-6 * max(1, abs(fd))
    assert gb.shape == b0.shape


@pytest.mark.parametrize("nsp", [1, 3])
def test_conv1d_conv3d(nsp):
    shape = (1, 2, 13) if nsp == 1 else (1, 2, 7, 6, 5)
    nn.init.manual_seed(5)
    conv = (nn.Conv1d if nsp == 1 else nn.Conv3d)(2, 3, 3, padding=1, bias=True)
    x = field(shape)
    layout, = spatial(shape, "split2")
    y = conv(layout.array(x))
    ref = ref_conv(x, host(conv.weight.data), host(conv.bias.data), (1,) * nsp, [(1, 1)] * nsp, (1,) * nsp, 1)
    assert_equal(y.data, ref, rtol=1e-10, atol=1e-12)
    compare_grads(lambda v: ad.sum(conv(v) ** 2), x, layout, [conv.weight, conv.bias])


def test_conv_on_a_split_channel_axis_redistributes():
    nn.init.manual_seed(6)
    conv = nn.Conv2d(4, 2, 3, padding=1)
    x = field((1, 4, 9, 7))
    y = conv(da.asarray(x, split=1))
    assert_equal(y.data, ref_conv(x, host(conv.weight.data), host(conv.bias.data), (1, 1), [(1, 1)] * 2,
                                  (1, 1), 1), rtol=1e-10, atol=1e-12)
    compare_grads(lambda v: ad.sum(conv(v) ** 2), x, *spatial(x.shape, "split1"), [conv.weight])


def ref_pool(x, k, mode):
    n, c, h, w = x.shape
    ho, wo = h // k, w // k
    win = x[:, :, :ho * k, :wo * k].reshape(n, c, ho, k, wo, k)
    return win.mean(axis=(3, 5)) if mode == "avg" else win.max(axis=(3, 5))


#: LAYOUTS and blocks of 3 rows (odd: off the pooling grid of windows of 2).
POOL_LAYOUTS = LAYOUTS + spatial(FIELD, "misaligned2")


@pytest.mark.parametrize("layout", POOL_LAYOUTS, ids=str)
@pytest.mark.parametrize("kind", ["avg", "max"])
def test_pool2d(kind, layout):
    x = field()
    pool = nn.AvgPool2d(2) if kind == "avg" else nn.MaxPool2d(2)
    y = pool(layout.array(x))
    assert_equal(y.data, ref_pool(x, 2, kind), rtol=1e-12)
    w = np.random.default_rng(7).standard_normal(y.shape)
    compare_grads(lambda v: ad.sum(pool(v) * da.asarray(w, split=None)), x, layout, key=kind)
    fd_check(lambda v: ad.sum(pool(v) * da.asarray(w, split=None)), x)


def test_pool3():
    x = field()
    y = F.max_pool2d(da.asarray(x, split=3), 3)
    assert_equal(y.data, ref_pool(x, 3, "max"))


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_upsample(layout):
    x = field()
    up = nn.Upsample(scale_factor=2)
    u = up(layout.array(x))
    assert_equal(u.data, x.repeat(2, axis=2).repeat(2, axis=3))
    w = np.random.default_rng(8).standard_normal(u.shape)
    compare_grads(lambda v: ad.sum(up(v) * da.asarray(w, split=None)), x, layout, key=())


@pytest.mark.parametrize("layout", [H, W], ids=str)
@pytest.mark.parametrize("axis", [1, -1])
def test_linear(axis, layout):
    nn.init.manual_seed(9)
    x = field((2, 3, 13, 11))
    features = x.shape[axis]
    lin = nn.Linear(features, 4, axis=axis)
    w, b = host(lin.weight.data), host(lin.bias.data)
    y = lin(layout.array(x))
    ref = np.moveaxis(np.moveaxis(x, axis, -1) @ w.T + b, -1, axis)
    assert_equal(y.data, ref, rtol=1e-10)
    compare_grads(lambda v: ad.sum(ad.sin(lin(v))), x, layout, [lin.weight, lin.bias], key=axis)


def _erf(z):
    return np.vectorize(math.erf)(z)


ACTIVATIONS = {
    "ReLU": (nn.ReLU(), lambda z: np.maximum(z, 0)),
    "LeakyReLU": (nn.LeakyReLU(0.2), lambda z: np.where(z > 0, z, 0.2 * z)),
    "GELU": (nn.GELU(), lambda z: 0.5 * z * (1 + _erf(z / math.sqrt(2)))),
    "GELUtanh": (nn.GELU("tanh"), lambda z: 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))),
    "SiLU": (nn.SiLU(), lambda z: z / (1 + np.exp(-z))),
    "Tanh": (nn.Tanh(), np.tanh),
    "Sigmoid": (nn.Sigmoid(), lambda z: 1 / (1 + np.exp(-z))),
    "Softplus": (nn.Softplus(beta=2.0, threshold=3.0), lambda z: np.where(2 * z > 3, z, np.log1p(np.exp(2 * z)) / 2)),
}


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations(name):
    module, ref = ACTIVATIONS[name]
    x = field() * 2
    x[np.abs(x) < 1e-3] += 0.01  # keep away from kinks
    y = module(da.asarray(x, split=2))
    assert_equal(y.data, ref(x), rtol=1e-12, atol=1e-15)
    compare_grads(lambda v: ad.sum(module(v) * 1.5), x, W)
    if name != "Softplus":  # the threshold switch is a (tiny) jump
        fd_check(lambda v: ad.sum(module(v) ** 2), x)


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_batchnorm2d_training_and_eval(layout):
    x = field((2, 3, 13, 11)) * 2 + 1
    bn = nn.BatchNorm2d(3)
    bn.weight.data = da.asarray(np.array([1.0, 2.0, 0.5]), split=None)
    bn.bias.data = da.asarray(np.array([0.0, 1.0, -1.0]), split=None)
    y = bn(layout.array(x))
    mean, var = x.mean(axis=(0, 2, 3), keepdims=True), x.var(axis=(0, 2, 3), keepdims=True)
    ref = (x - mean) / np.sqrt(var + 1e-5) * np.array([1, 2, 0.5]).reshape(1, 3, 1, 1) + \
        np.array([0, 1, -1.0]).reshape(1, 3, 1, 1)
    assert_equal(y.data, ref, rtol=1e-10)
    n = x.size // 3
    assert_equal(bn.running_mean, 0.1 * mean.ravel(), rtol=1e-10)
    assert_equal(bn.running_var, 0.9 + 0.1 * var.ravel() * n / (n - 1), rtol=1e-10)
    bn.eval()
    y = bn(layout.array(x))
    ref = (x - 0.1 * mean) / np.sqrt(0.9 + 0.1 * var * n / (n - 1) + 1e-5) * np.array([1, 2, 0.5]).reshape(1, 3, 1, 1) \
        + np.array([0, 1, -1.0]).reshape(1, 3, 1, 1)
    assert_equal(y.data, ref, rtol=1e-10)
    bn.train()
    w = np.random.default_rng(10).standard_normal(x.shape)
    compare_grads(lambda v: ad.sum(bn(v) * da.asarray(w, split=None)), x, layout, [bn.weight, bn.bias])
    if layout is H:  # the finite differences use the replicated field: once
        fd_check(lambda v: ad.sum(bn(v) * da.asarray(w, split=None)), x)


def test_groupnorm_and_layernorm():
    x = field((2, 4, 9, 7))
    gn = nn.GroupNorm(2, 4)
    y = gn(da.asarray(x, split=2))
    g = x.reshape(2, 2, 2, 9, 7)
    ref = ((g - g.mean(axis=(2, 3, 4), keepdims=True)) / np.sqrt(g.var(axis=(2, 3, 4), keepdims=True) + 1e-5))
    assert_equal(y.data, ref.reshape(x.shape), rtol=1e-10)
    w = np.random.default_rng(11).standard_normal(x.shape)
    h, w_cut = spatial(x.shape, "split2", "split3")
    compare_grads(lambda v: ad.sum(gn(v) * da.asarray(w, split=None)), x, h, [gn.weight, gn.bias])
    fd_check(lambda v: ad.sum(gn(v) * da.asarray(w, split=None)), x)
    ln = nn.LayerNorm((9, 7))
    y = ln(da.asarray(x, split=3))
    ref = (x - x.mean(axis=(2, 3), keepdims=True)) / np.sqrt(x.var(axis=(2, 3), keepdims=True) + 1e-5)
    assert_equal(y.data, ref, rtol=1e-10)
    compare_grads(lambda v: ad.sum(ln(v) * da.asarray(w, split=None)), x, w_cut, [ln.weight, ln.bias])


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_dropout_mask_does_not_depend_on_the_layout(layout):
    x = field((1, 2, 13, 11))
    out = host(nn.Dropout(0.3, seed=42)(layout.array(x)).data)
    np.testing.assert_array_equal(out, host(nn.Dropout(0.3, seed=42)(da.asarray(x, split=None)).data))
    kept = out != 0
    np.testing.assert_allclose(out[kept], x[kept] / 0.7)
    assert 0.5 < kept.mean() < 0.9


def test_dropout_in_eval_mode_is_the_identity():
    x = field((1, 2, 13, 11))
    drop = nn.Dropout(0.3, seed=42)
    drop.eval()
    out = drop(da.asarray(x, split=2))  # eval: the input itself
    assert host(out).tolist() == x.tolist()


@pytest.mark.parametrize("layout", [H, W], ids=str)
def test_losses(layout, comm):
    a, b = field((2, 3, 13, 11), 1), field((2, 3, 13, 11), 2)
    xa, xb = layout.array(a), layout.array(b)
    assert abs(float(F.mse_loss(Variable(xa), xb).data) - np.mean((a - b) ** 2)) < 1e-12
    assert abs(float(F.l1_loss(Variable(xa), xb).data) - np.mean(np.abs(a - b))) < 1e-12
    d = np.abs(a - b)
    huber = np.mean(np.where(d < 1.0, 0.5 * d * d, d - 0.5))
    assert abs(float(nn.HuberLoss()(Variable(xa), xb).data) - huber) < 1e-12
    compare_grads(lambda v: F.huber_loss(v, xb, delta=0.7) + F.l1_loss(v, xb) + F.mse_loss(v, xb), a, layout,
                  key=())
    labels = np.random.default_rng(3).integers(0, 3, (2, 13, 11))
    logp = a - np.log(np.sum(np.exp(a), axis=1, keepdims=True))
    ref = -np.mean(np.take_along_axis(logp, labels[:, None], axis=1))
    t = da.asarray(labels, split=layout.kw["split"] - 1)  # labels have no channel axis
    ce = nn.CrossEntropyLoss()(Variable(xa), t)
    assert not agree(comm, abs(float(ce.data) - ref) < 1e-12)
    compare_grads(lambda v: F.cross_entropy(v, t), a, layout, key=())
    if layout is H:  # the finite differences use the replicated field: once
        fd_check(lambda v: F.cross_entropy(v, da.asarray(labels, split=None)), a)


def test_module_containers_and_state_dict():
    nn.init.manual_seed(12)
    model = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(),
                          nn.ModuleList([nn.Conv2d(3, 1, 1)]))
    names = [n for n, _ in model.named_parameters()]
    assert names == ["0.weight", "0.bias", "1.weight", "1.bias", "3.0.weight", "3.0.bias"]
    state = model.state_dict()
    assert list(state) == names + ["1.running_mean", "1.running_var"]
    assert len(model) == 4 and isinstance(model[2], nn.ReLU)
    model.eval()
    assert not any(m.training for m in model.modules())
    model.train()
    numpy_state = {k: host(v) + 1.0 for k, v in state.items()}
    model.load_state_dict(numpy_state)
    for k, v in model.state_dict().items():
        assert_equal(v, numpy_state[k])
    model.load_state_dict({k: da.asarray(v, split=0) for k, v in numpy_state.items()})
    for k, v in model.state_dict().items():
        assert v.layout.is_replicated
        assert_equal(v, numpy_state[k])
    with pytest.raises(KeyError, match="keys do not match"):
        model.load_state_dict({"nope": np.zeros(1)})
    with pytest.raises(ValueError, match="shape mismatch"):
        model.load_state_dict({**numpy_state, "0.bias": np.zeros(7)})


def test_initialisers_are_identical_for_every_layout_and_rank_count():
    nn.init.manual_seed(13)
    conv = nn.Conv2d(2, 4, 3)
    bound = math.sqrt(2 / 6) * math.sqrt(3 / 18)  # kaiming_uniform(a=sqrt(5)): 1/sqrt(fan_in)
    expected = host(da.random.default_rng(13).uniform(-bound, bound, size=(4, 2, 3, 3), split=0))
    np.testing.assert_array_equal(host(conv.weight.data), expected)
    assert conv.weight.data.layout.is_replicated
    assert same_everywhere(float(np.sum(host(conv.weight.data.local) * np.arange(72).reshape(4, 2, 3, 3))))


def small_net():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.GELU(), nn.MaxPool2d(2), nn.Conv2d(4, 4, 3, padding=1),
                         nn.BatchNorm2d(4), nn.SiLU(), nn.Upsample(scale_factor=2), nn.Conv2d(4, 1, 1))


@pytest.mark.parametrize("layout", spatial((1, 1, 12, 10), "split2", "split3", "grid2x2-23"), ids=str)
def test_training_a_small_net_gives_the_same_losses_on_any_layout(layout):
    assert_trains_identically(small_net, field(layout.shape, 15), field(layout.shape, 16), layout, seed=14)


# ------------------------------------------------------------------ torch cross-checks (when installed)
def test_against_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = field((1, 2, 13, 11))
    nn.init.manual_seed(17)
    conv = nn.Conv2d(2, 4, 3, stride=2, padding=1, groups=2)
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(host(conv.weight.data), requires_grad=True)
    bt = torch.tensor(host(conv.bias.data), requires_grad=True)
    yt = tf.max_pool2d(tf.group_norm(tf.conv2d(xt, wt, bt, 2, 1, 1, 2), 2), 2)
    yt.pow(2).sum().backward()
    v = Variable(da.asarray(x, split=2), requires_grad=True)
    y = F.max_pool2d(F.group_norm(conv(v), 2), 2)
    ad.sum(y ** 2).backward()
    assert_equal(y.data, yt.detach().numpy(), rtol=1e-9)
    assert_equal(v.grad, xt.grad.numpy(), rtol=1e-8, atol=1e-12)
    assert_equal(conv.weight.grad, wt.grad.numpy(), rtol=1e-8, atol=1e-12)
    bn_t = tf.batch_norm(xt.detach(), None, None, training=True)
    assert_equal(F.batch_norm(da.asarray(x, split=3), training=True).data, bn_t.numpy(), rtol=1e-9)


@pytest.mark.parametrize("layout", torch_params(LAYOUTS), ids=str)
def test_unet_decoder_step_against_torch(layout):
    """Down (conv, pool), then learned 2x upsampling (ConvTranspose2d, stride == kernel), as in a U-Net."""
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = field(layout.shape)
    nn.init.manual_seed(17)
    conv = nn.Conv2d(2, 4, 3, stride=2, padding=1, groups=2)
    up = nn.ConvTranspose2d(4, 3, 2, stride=2)
    xt = torch.tensor(x, requires_grad=True)
    wt, bt, upw, upb = (torch.tensor(host(p.data), requires_grad=True)
                        for p in (conv.weight, conv.bias, up.weight, up.bias))
    zt = tf.conv_transpose2d(tf.max_pool2d(tf.conv2d(xt, wt, bt, 2, 1, 1, 2), 2), upw, upb, stride=2)
    zt.tanh().pow(2).sum().backward()
    v = Variable(layout.array(x), requires_grad=True)
    z = up(F.max_pool2d(conv(v), 2))
    ad.sum(ad.tanh(z) ** 2).backward()
    assert_equal(z.data, zt.detach().numpy(), rtol=1e-9, atol=1e-12)
    assert_equal(v.grad, xt.grad.numpy(), rtol=1e-8, atol=1e-12)
    for ours, theirs in ((conv.weight, wt), (conv.bias, bt), (up.weight, upw), (up.bias, upb)):
        assert_equal(ours.grad, theirs.grad.numpy(), rtol=1e-8, atol=1e-12)


# ------------------------------------------------------------------ transposed convolution (stride == kernel)
def ref_conv_transpose(x, w, b, stride, groups=1):
    """torch's conv_transpose (padding 0, dilation 1) by scattering one weighted kernel per input cell."""
    nsp = w.ndim - 2
    n, cin = x.shape[:2]
    og, k = w.shape[1], w.shape[2:]
    cg = cin // groups
    y = np.zeros((n, og * groups) + tuple((x.shape[2 + i] - 1) * stride[i] + k[i] for i in range(nsp)))
    for cell in np.ndindex(*x.shape[2:]):
        patch = tuple(slice(c * s, c * s + kk) for c, s, kk in zip(cell, stride, k))
        for g in range(groups):
            y[(slice(None), slice(g * og, (g + 1) * og)) + patch] += np.tensordot(
                x[(slice(None), slice(g * cg, (g + 1) * cg)) + cell], w[g * cg:(g + 1) * cg], axes=([1], [0]))
    return y + b.reshape((1, -1) + (1,) * nsp) if b is not None else y


TRANSPOSE_CASES = [  # in, out, kernel, groups, bias
    (2, 3, 2, 1, True), (2, 4, (3, 2), 2, True), (4, 2, (1, 3), 1, False), (2, 2, 2, 2, False),
]


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@pytest.mark.parametrize("case", TRANSPOSE_CASES, ids=str)
def test_conv_transpose2d_forward_and_backward(case, layout):
    cin, cout, k, groups, bias = case
    nn.init.manual_seed(21)
    up = nn.ConvTranspose2d(cin, cout, k, stride=k, groups=groups, bias=bias)
    kk = (k, k) if isinstance(k, int) else k
    assert up.weight.shape == (cin, cout // groups) + kk
    assert (up.bias is None) if not bias else up.bias.shape == (cout,)
    x = field((1, cin, 13, 11))
    w = host(up.weight.data)
    b = host(up.bias.data) if bias else None
    y = up(layout.array(x))
    ref = ref_conv_transpose(x, w, b, kk, groups)
    assert y.shape == (1, cout, 13 * kk[0], 11 * kk[1])
    assert_equal(y.data, ref, rtol=1e-10, atol=1e-12)
    if layout.id != "replicated":  # local: the output blocks are the input blocks times the stride
        lay = layout.array(x).layout
        assert y.data.layout.dims == lay.dims and y.data.layout.split == lay.split
        assert y.data.layout.sizes[2:] == tuple(tuple(s * kk[i] for s in lay.sizes[2 + i]) for i in range(2))
    target = np.random.default_rng(22).standard_normal(ref.shape)
    params = [up.weight] + ([up.bias] if bias else [])

    def loss(v):
        return F.mse_loss(F.tanh(up(v)), da.asarray(target, split=None))

    compare_grads(loss, x, layout, params, key=case)
    if layout is H:  # the finite differences use the replicated field: once per case
        fd_check(loss, x)


def test_conv_transpose_weight_gradient_finite_differences():
    nn.init.manual_seed(23)
    layout, = spatial((2, 2, 9, 7), "thin-empty2") or spatial((2, 2, 9, 7), "split2")  # split2 on one rank
    x = layout.array(field(layout.shape))
    up = nn.ConvTranspose2d(2, 4, (2, 3), stride=(2, 3), groups=2)

    def loss_of(wv, bv):
        return ad.sum(ad.sin(F.conv_transpose2d(x, wv, bv, (2, 3), groups=2)))

    gw, gb = ad.grad(loss_of, (0, 1))(up.weight.data, up.bias.data)
    w0, b0 = host(up.weight.data), host(up.bias.data)
    e = 1e-6
    for grad, base, which in ((gw, w0, 0), (gb, b0, 1)):
        d = np.random.default_rng(24 + which).standard_normal(base.shape)

        def at(delta):
            args = [up.weight.data, up.bias.data]
            args[which] = da.asarray(base + delta * d, split=None)
            return float(loss_of(*args).data)

        fd = (at(e) - at(-e)) / (2 * e)
        assert grad.layout.is_replicated
        assert abs(fd - np.sum(host(grad.local) * d)) < 1e-6 * max(1, abs(fd)), (which, fd)
        assert same_everywhere(float(np.sum(host(grad.local) * d)))


@pytest.mark.parametrize("nsp,layout", by_ndim({
    1: spatial((2, 2, 13), "split2", "replicated", "thin-empty2"),
    3: spatial((1, 2, 7, 6, 5), "split2", "replicated", "thin-empty2", "grid2x2-24")}))
def test_conv_transpose1d_3d(nsp, layout):
    k = 3 if nsp == 1 else (2, 1, 2)
    nn.init.manual_seed(25)
    up = (nn.ConvTranspose1d if nsp == 1 else nn.ConvTranspose3d)(2, 3, k, stride=k)
    kk = (k,) if nsp == 1 else k
    x = field(layout.shape)
    ref = ref_conv_transpose(x, host(up.weight.data), host(up.bias.data), kk)
    y = up(layout.array(x))
    assert_equal(y.data, ref, rtol=1e-10, atol=1e-12)
    compare_grads(lambda v: ad.sum(up(v) ** 2), x, layout, [up.weight, up.bias], key=nsp)
    if layout.id == "split2":  # the finite differences use the replicated field: once per nsp
        fd_check(lambda v: ad.sum(up(v) ** 2), x)


def test_conv_transpose_on_a_split_channel_axis():
    nn.init.manual_seed(26)
    up = nn.ConvTranspose2d(4, 2, 2, stride=2)
    x = field((1, 4, 9, 7))
    y = up(da.asarray(x, split=1))
    assert_equal(y.data, ref_conv_transpose(x, host(up.weight.data), host(up.bias.data), (2, 2)),
                 rtol=1e-10, atol=1e-12)
    compare_grads(lambda v: ad.sum(up(v) ** 2), x, *spatial(x.shape, "split1"), [up.weight, up.bias])


@pytest.mark.parametrize("layout", POOL_LAYOUTS, ids=str)
def test_conv_transpose_in_a_unet_block(layout):
    """Down (pool on misaligned blocks: redistributed) then learned up, as in a U-Net."""
    nn.init.manual_seed(27)
    block = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.MaxPool2d(2), nn.ConvTranspose2d(2, 1, 2, stride=2))
    x = field((1, 1, 13, 11), 27)  # POOL_LAYOUTS are for 13 rows (odd: the last row is dropped by the pool)
    compare_grads(lambda v: ad.sum(block(v) ** 2), x, layout, list(block.parameters()), key=())


def test_conv_transpose_unsupported_and_bad_input():
    x = da.asarray(field((1, 2, 5, 4)), split=2)
    w = da.asarray(np.ones((2, 3, 2, 2)), split=None)
    for kwargs, name in ((dict(stride=1), "stride"), (dict(stride=2, padding=1), "padding"),
                         (dict(stride=2, output_padding=1), "output_padding"),
                         (dict(stride=2, dilation=2), "dilation")):
        with pytest.raises(NotImplementedError, match=f"unsupported {name}"):
            F.conv_transpose2d(x, w, **kwargs)
        with pytest.raises(NotImplementedError, match=f"ConvTranspose2d: .*unsupported {name}"):
            nn.ConvTranspose2d(2, 3, 2, **kwargs)
    with pytest.raises(NotImplementedError, match="stride == kernel_size"):
        nn.ConvTranspose2d(2, 3, 3, stride=2)
    with pytest.raises(ValueError, match="channels do not match"):
        F.conv_transpose2d(da.asarray(field((1, 3, 5, 4)), split=2), w, stride=2)
    with pytest.raises(ValueError, match="channels must be divisible by groups"):
        nn.ConvTranspose2d(3, 4, 2, stride=2, groups=2)
    with pytest.raises(ValueError, match="padding_mode"):
        nn.ConvTranspose2d(2, 4, 2, stride=2, padding_mode="circular")
    with pytest.raises(ValueError, match="bias shape"):
        F.conv_transpose2d(x, w, da.zeros((4,), split=None), stride=2)
    with pytest.raises(ValueError, match="conv_transpose1d"):
        F.conv_transpose1d(x, w, stride=2)
    with pytest.raises(ValueError, match=r"conv_transpose3d: weight must be \(C_in, C_out / groups, \*kernel\) "
                                         "with 3 kernel axes; got \\(2, 3, 2, 2\\)"):
        F.conv_transpose3d(x, w, stride=2)
    with pytest.raises(ValueError, match=r"conv1d: weight must be \(C_out, C_in / groups, \*kernel\) with 1 kernel"):
        F.conv1d(x, w)
    up = nn.ConvTranspose2d(2, 3, 2, stride=2)
    assert up(x, output_size=(10, 8)).shape == (1, 3, 10, 8)
    with pytest.raises(NotImplementedError, match="output_size"):
        up(x, output_size=(11, 8))


def test_conv_transpose_initialiser_is_torchs_and_identical_everywhere():
    nn.init.manual_seed(28)
    up = nn.ConvTranspose2d(4, 6, 2, stride=2, groups=2)
    fan_in = 3 * 4  # torch: weight.size(1) * receptive field, the weight being (C_in, C_out / groups, *k)
    bound = nn.init.calculate_gain("leaky_relu", math.sqrt(5)) * math.sqrt(3 / fan_in)  # kaiming_uniform(a=sqrt(5))
    assert abs(bound - 1 / math.sqrt(fan_in)) < 1e-15
    rng = da.random.default_rng(28)
    expected = host(rng.uniform(-bound, bound, size=(4, 3, 2, 2), split=0))
    np.testing.assert_array_equal(host(up.weight.data), expected)
    expected_bias = host(rng.uniform(-1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in), size=(6,), split=None))
    np.testing.assert_array_equal(host(up.bias.data), expected_bias)
    assert up.weight.data.layout.is_replicated
    assert same_everywhere(float(np.sum(host(up.weight.data.local) * np.arange(48).reshape(4, 3, 2, 2))))
    assert [n for n, _ in up.named_parameters()] == ["weight", "bias"]


@pytest.mark.parametrize("nsp,layout", torch_params(by_ndim({
    nsp: spatial(shape, "split2", "thin-empty2") for nsp, shape in ((1, (2, 4, 13)), (2, (1, 4, 13, 11)),
                                                                    (3, (1, 4, 7, 6, 5)))})))
def test_conv_transpose_against_torch(nsp, layout):
    torch = pytest.importorskip("torch")
    k = {1: 3, 2: (2, 3), 3: (2, 1, 2)}[nsp]
    ours = {1: nn.ConvTranspose1d, 2: nn.ConvTranspose2d, 3: nn.ConvTranspose3d}[nsp](4, 6, k, stride=k, groups=2)
    theirs = {1: torch.nn.ConvTranspose1d, 2: torch.nn.ConvTranspose2d, 3: torch.nn.ConvTranspose3d}[nsp](
        4, 6, k, stride=k, groups=2, dtype=torch.float64)
    assert tuple(theirs.weight.shape) == ours.weight.shape and tuple(theirs.bias.shape) == ours.bias.shape
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(host(ours.weight.data)))
        theirs.bias.copy_(torch.tensor(host(ours.bias.data)))
    x = field(layout.shape, 29)
    xt = torch.tensor(x, requires_grad=True)
    yt = theirs(xt)
    yt.sin().sum().backward()
    v = Variable(layout.array(x), requires_grad=True)
    y = ours(v)
    ad.sum(ad.sin(y)).backward()
    assert_equal(y.data, yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert_equal(v.grad, xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert_equal(ours.weight.grad, theirs.weight.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert_equal(ours.bias.grad, theirs.bias.grad.numpy(), rtol=1e-10, atol=1e-12)
