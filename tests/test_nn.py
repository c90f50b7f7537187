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

pytestmark = pytest.mark.mpi

P = da.default_communicator().size
COMM = da.default_communicator()

# spatial layouts of an (N, C, H, W) field: H cut, W cut, uneven with empty blocks, 2-d grid
LAYOUTS = {"H": dict(split=2), "W": dict(split=3), "replicated": dict(split=None)}
if P > 1:
    LAYOUTS["uneven"] = dict(split=2, sizes={2: [0, 13] if P == 2 else
                                             [1, 0] + [len(b) for b in np.array_split(np.arange(12), P - 2)]})
if P == 4:
    LAYOUTS["grid22"] = dict(split=(2, 3), grid=(2, 2))


def field(shape=(1, 2, 13, 11), seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def same_everywhere(value: float) -> bool:
    values = COMM.allgather(np.asarray([value]))[:, 0]
    return bool(np.all(values == values[0]))


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


def compare_grads(build, x, layout, params=(), rtol=1e-10):
    """Loss and gradients (input and parameters) on the sharded field == on the replicated field."""
    out = {}
    for name, kw in (("dist", layout), ("rep", dict(split=None))):
        for p in params:
            p.grad = None
        v = Variable(da.asarray(x, **kw), requires_grad=True)
        loss = build(v)
        loss.backward()
        out[name] = (float(loss.data), v.grad, [p.grad for p in params])
    (ld, gd, pd), (lr, gr, pr) = out["dist"], out["rep"]
    assert not agree(COMM, abs(ld - lr) <= rtol * max(1.0, abs(lr))), (ld, lr)
    assert gd.layout.blocks_key == da.asarray(x, **layout).layout.blocks_key
    assert_equal(gd, gr.local, rtol=rtol, atol=1e-13)
    for a, b in zip(pd, pr):
        assert_equal(a, b.local, rtol=rtol, atol=1e-13)
        assert same_everywhere(float(np.sum(np.abs(a.local) * np.arange(1, a.local.size + 1).reshape(a.shape))))
    return out


def fd_check(build, x, eps=1e-6, rtol=1e-6):
    """Directional finite difference of ``build`` (replicated, local) against its gradient."""
    v = Variable(da.asarray(x, split=None), requires_grad=True)
    build(v).backward()
    d = np.random.default_rng(99).standard_normal(x.shape)
    plus = float(build(Variable(da.asarray(x + eps * d, split=None))).data)
    minus = float(build(Variable(da.asarray(x - eps * d, split=None))).data)
    fd, an = (plus - minus) / (2 * eps), float(np.sum(v.grad.local * d))
    assert abs(fd - an) <= rtol * max(1.0, abs(an)) + 1e-7, (fd, an)


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


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("case", CONV_CASES, ids=str)
def test_conv2d_forward_and_backward(case, layout):
    stride, padding, dil, groups, mode = case
    nn.init.manual_seed(1)
    conv = nn.Conv2d(2, 4, 3, stride=stride, padding=padding, dilation=dil, groups=groups, padding_mode=mode)
    x = field()
    w, b = conv.weight.data.gather(), conv.bias.data.gather()
    y = conv(da.asarray(x, **LAYOUTS[layout]))
    ref = ref_conv(x, w, b, (stride,) * 2, _pads(padding, 3, dil, 2), (dil,) * 2, groups, mode)
    assert_equal(y.data, ref, rtol=1e-10, atol=1e-12)
    target = np.random.default_rng(3).standard_normal(ref.shape)

    def loss(v):
        return F.mse_loss(conv(v), da.asarray(target, split=None))

    compare_grads(loss, x, LAYOUTS[layout], [conv.weight, conv.bias])
    if layout == "H":
        fd_check(loss, x)


def test_conv2d_weight_gradient_finite_differences():
    nn.init.manual_seed(2)
    x = da.asarray(field(), split=2)
    conv = nn.Conv2d(2, 3, (3, 2), padding=1, stride=(1, 2))

    def loss_of(wv, bv):
        return ad.sum(ad.tanh(F.conv2d(x, wv, bv, (1, 2), 1)))

    w0, b0 = conv.weight.data.gather(), conv.bias.data.gather()
    gw, gb = ad.grad(loss_of, (0, 1))(conv.weight.data, conv.bias.data)
    d = np.random.default_rng(4).standard_normal(w0.shape)
    e = 1e-6
    fd = (float(loss_of(Variable(da.asarray(w0 + e * d, split=None)), conv.bias).data)
          - float(loss_of(Variable(da.asarray(w0 - e * d, split=None)), conv.bias).data)) / (2 * e)
    assert abs(fd - np.sum(gw.local * d)) < 1e-6 * max(1, abs(fd))
    assert gb.shape == b0.shape


@pytest.mark.parametrize("nsp", [1, 3])
def test_conv1d_conv3d(nsp):
    shape = (1, 2, 13) if nsp == 1 else (1, 2, 7, 6, 5)
    nn.init.manual_seed(5)
    conv = (nn.Conv1d if nsp == 1 else nn.Conv3d)(2, 3, 3, padding=1, bias=True)
    x = field(shape)
    layout = dict(split=2)
    y = conv(da.asarray(x, **layout))
    ref = ref_conv(x, conv.weight.data.gather(), conv.bias.data.gather(), (1,) * nsp, [(1, 1)] * nsp, (1,) * nsp, 1)
    assert_equal(y.data, ref, rtol=1e-10, atol=1e-12)
    compare_grads(lambda v: ad.sum(conv(v) ** 2), x, layout, [conv.weight, conv.bias])


def test_conv_on_a_split_channel_axis_redistributes():
    nn.init.manual_seed(6)
    conv = nn.Conv2d(4, 2, 3, padding=1)
    x = field((1, 4, 9, 7))
    y = conv(da.asarray(x, split=1))
    assert_equal(y.data, ref_conv(x, conv.weight.data.gather(), conv.bias.data.gather(), (1, 1), [(1, 1)] * 2,
                                  (1, 1), 1), rtol=1e-10, atol=1e-12)
    compare_grads(lambda v: ad.sum(conv(v) ** 2), x, dict(split=1), [conv.weight])


def ref_pool(x, k, mode):
    n, c, h, w = x.shape
    ho, wo = h // k, w // k
    win = x[:, :, :ho * k, :wo * k].reshape(n, c, ho, k, wo, k)
    return win.mean(axis=(3, 5)) if mode == "avg" else win.max(axis=(3, 5))


POOL_LAYOUTS = dict(LAYOUTS)
if P > 1:
    POOL_LAYOUTS["misaligned"] = dict(split=2, sizes={2: [3] * (P - 1) + [13 - 3 * (P - 1)]})


@pytest.mark.parametrize("layout", sorted(POOL_LAYOUTS))
@pytest.mark.parametrize("kind", ["avg", "max"])
def test_pool2d(kind, layout):
    x = field()
    pool = nn.AvgPool2d(2) if kind == "avg" else nn.MaxPool2d(2)
    y = pool(da.asarray(x, **POOL_LAYOUTS[layout]))
    assert_equal(y.data, ref_pool(x, 2, kind), rtol=1e-12)
    w = np.random.default_rng(7).standard_normal(y.shape)
    compare_grads(lambda v: ad.sum(pool(v) * da.asarray(w, split=None)), x, POOL_LAYOUTS[layout])
    fd_check(lambda v: ad.sum(pool(v) * da.asarray(w, split=None)), x)


def test_pool3_and_upsample():
    x = field()
    y = F.max_pool2d(da.asarray(x, split=3), 3)
    assert_equal(y.data, ref_pool(x, 3, "max"))
    up = nn.Upsample(scale_factor=2)
    for layout in sorted(LAYOUTS):
        u = up(da.asarray(x, **LAYOUTS[layout]))
        assert_equal(u.data, x.repeat(2, axis=2).repeat(2, axis=3))
        w = np.random.default_rng(8).standard_normal(u.shape)
        compare_grads(lambda v: ad.sum(up(v) * da.asarray(w, split=None)), x, LAYOUTS[layout])


@pytest.mark.parametrize("axis", [1, -1])
def test_linear(axis):
    nn.init.manual_seed(9)
    x = field((2, 3, 13, 11))
    features = x.shape[axis]
    lin = nn.Linear(features, 4, axis=axis)
    w, b = lin.weight.data.gather(), lin.bias.data.gather()
    y = lin(da.asarray(x, split=2))
    ref = np.moveaxis(np.moveaxis(x, axis, -1) @ w.T + b, -1, axis)
    assert_equal(y.data, ref, rtol=1e-10)
    for layout in ("H", "W"):
        compare_grads(lambda v: ad.sum(ad.sin(lin(v))), x, LAYOUTS[layout], [lin.weight, lin.bias])


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
    compare_grads(lambda v: ad.sum(module(v) * 1.5), x, LAYOUTS["W"])
    if name != "Softplus":  # the threshold switch is a (tiny) jump
        fd_check(lambda v: ad.sum(module(v) ** 2), x)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_batchnorm2d_training_and_eval(layout):
    x = field((2, 3, 13, 11)) * 2 + 1
    bn = nn.BatchNorm2d(3)
    bn.weight.data = da.asarray(np.array([1.0, 2.0, 0.5]), split=None)
    bn.bias.data = da.asarray(np.array([0.0, 1.0, -1.0]), split=None)
    y = bn(da.asarray(x, **LAYOUTS[layout]))
    mean, var = x.mean(axis=(0, 2, 3), keepdims=True), x.var(axis=(0, 2, 3), keepdims=True)
    ref = (x - mean) / np.sqrt(var + 1e-5) * np.array([1, 2, 0.5]).reshape(1, 3, 1, 1) + \
        np.array([0, 1, -1.0]).reshape(1, 3, 1, 1)
    assert_equal(y.data, ref, rtol=1e-10)
    n = x.size // 3
    assert_equal(bn.running_mean, 0.1 * mean.ravel(), rtol=1e-10)
    assert_equal(bn.running_var, 0.9 + 0.1 * var.ravel() * n / (n - 1), rtol=1e-10)
    bn.eval()
    y = bn(da.asarray(x, **LAYOUTS[layout]))
    ref = (x - 0.1 * mean) / np.sqrt(0.9 + 0.1 * var * n / (n - 1) + 1e-5) * np.array([1, 2, 0.5]).reshape(1, 3, 1, 1) \
        + np.array([0, 1, -1.0]).reshape(1, 3, 1, 1)
    assert_equal(y.data, ref, rtol=1e-10)
    bn.train()
    w = np.random.default_rng(10).standard_normal(x.shape)
    compare_grads(lambda v: ad.sum(bn(v) * da.asarray(w, split=None)), x, LAYOUTS[layout], [bn.weight, bn.bias])
    if layout == "H":
        fd_check(lambda v: ad.sum(bn(v) * da.asarray(w, split=None)), x)


def test_groupnorm_and_layernorm():
    x = field((2, 4, 9, 7))
    gn = nn.GroupNorm(2, 4)
    y = gn(da.asarray(x, split=2))
    g = x.reshape(2, 2, 2, 9, 7)
    ref = ((g - g.mean(axis=(2, 3, 4), keepdims=True)) / np.sqrt(g.var(axis=(2, 3, 4), keepdims=True) + 1e-5))
    assert_equal(y.data, ref.reshape(x.shape), rtol=1e-10)
    w = np.random.default_rng(11).standard_normal(x.shape)
    compare_grads(lambda v: ad.sum(gn(v) * da.asarray(w, split=None)), x, dict(split=2), [gn.weight, gn.bias])
    fd_check(lambda v: ad.sum(gn(v) * da.asarray(w, split=None)), x)
    ln = nn.LayerNorm((9, 7))
    y = ln(da.asarray(x, split=3))
    ref = (x - x.mean(axis=(2, 3), keepdims=True)) / np.sqrt(x.var(axis=(2, 3), keepdims=True) + 1e-5)
    assert_equal(y.data, ref, rtol=1e-10)
    compare_grads(lambda v: ad.sum(ln(v) * da.asarray(w, split=None)), x, dict(split=3), [ln.weight, ln.bias])


def test_dropout_mask_does_not_depend_on_the_layout():
    x = field((1, 2, 13, 11))
    outs = []
    for layout in sorted(LAYOUTS):
        drop = nn.Dropout(0.3, seed=42)
        outs.append(drop(da.asarray(x, **LAYOUTS[layout])).data.gather())
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])
    kept = outs[0] != 0
    np.testing.assert_allclose(outs[0][kept], x[kept] / 0.7)
    assert 0.5 < kept.mean() < 0.9
    drop = nn.Dropout(0.3, seed=42)
    drop.eval()
    assert drop(da.asarray(x, split=2)).gather().tolist() == x.tolist()


def test_losses():
    a, b = field((2, 3, 13, 11), 1), field((2, 3, 13, 11), 2)
    for layout in ("H", "W"):
        xa, xb = da.asarray(a, **LAYOUTS[layout]), da.asarray(b, **LAYOUTS[layout])
        assert abs(float(F.mse_loss(Variable(xa), xb).data) - np.mean((a - b) ** 2)) < 1e-12
        assert abs(float(F.l1_loss(Variable(xa), xb).data) - np.mean(np.abs(a - b))) < 1e-12
        d = np.abs(a - b)
        huber = np.mean(np.where(d < 1.0, 0.5 * d * d, d - 0.5))
        assert abs(float(nn.HuberLoss()(Variable(xa), xb).data) - huber) < 1e-12
        compare_grads(lambda v: F.huber_loss(v, xb, delta=0.7) + F.l1_loss(v, xb) + F.mse_loss(v, xb),
                      a, LAYOUTS[layout])
    labels = np.random.default_rng(3).integers(0, 3, (2, 13, 11))
    logp = a - np.log(np.sum(np.exp(a), axis=1, keepdims=True))
    ref = -np.mean(np.take_along_axis(logp, labels[:, None], axis=1))
    for layout in ("H", "W"):
        t = da.asarray(labels, split=LAYOUTS[layout]["split"] - 1)
        ce = nn.CrossEntropyLoss()(Variable(da.asarray(a, **LAYOUTS[layout])), t)
        assert not agree(COMM, abs(float(ce.data) - ref) < 1e-12)
        compare_grads(lambda v: F.cross_entropy(v, t), a, LAYOUTS[layout])
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
    numpy_state = {k: v.gather() + 1.0 for k, v in state.items()}
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
    expected = da.random.default_rng(13).uniform(-bound, bound, size=(4, 2, 3, 3),
                                                  split=0).gather()
    np.testing.assert_array_equal(conv.weight.data.gather(), expected)
    assert conv.weight.data.layout.is_replicated
    assert same_everywhere(float(np.sum(conv.weight.data.local * np.arange(72).reshape(4, 2, 3, 3))))


def test_training_a_small_net_gives_the_same_losses_on_any_layout():
    def run(layout):
        nn.init.manual_seed(14)
        model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.GELU(), nn.MaxPool2d(2), nn.Conv2d(4, 4, 3, padding=1),
                              nn.BatchNorm2d(4), nn.SiLU(), nn.Upsample(scale_factor=2), nn.Conv2d(4, 1, 1))
        x = da.asarray(field((1, 1, 12, 10), 15), **layout)
        t = da.asarray(field((1, 1, 12, 10), 16), **layout)
        losses = []
        for _ in range(3):
            model.zero_grad()
            loss = F.mse_loss(model(x), t)
            loss.backward()
            with ad.no_grad():
                for p in model.parameters():
                    p.data = p.data - p.grad * 0.1
            losses.append(float(loss.data))
        return losses

    rep = run(dict(split=None))
    assert rep[-1] < rep[0]
    for name in ("H", "W") + (("grid22",) if P == 4 else ()):
        dist = run(LAYOUTS[name])
        assert not agree(COMM, np.allclose(dist, rep, rtol=1e-10, atol=0)), (dist, rep)


# ------------------------------------------------------------------ torch cross-checks (when installed)
def test_against_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    x = field((1, 2, 13, 11))
    nn.init.manual_seed(17)
    conv = nn.Conv2d(2, 4, 3, stride=2, padding=1, groups=2)
    xt = torch.tensor(x, requires_grad=True)
    wt = torch.tensor(conv.weight.data.gather(), requires_grad=True)
    bt = torch.tensor(conv.bias.data.gather(), requires_grad=True)
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
