"""``nn.MultiheadAttention``, ``nn.TransformerEncoderLayer``, ``nn.TransformerEncoder`` against NumPy.

Forward: a NumPy transcription of torch's layers run on the gathered input
with the layer's own state dict. Gradients: the token-cut run equals the
replicated run (input and every parameter), and the replicated run equals
central finite differences. Dropout in training: the same result whatever
the layout and rank count.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import darray as da
from darray import nn
from darray.autodiff import Variable
from darray.testing import agree, assert_equal, assert_raises_everywhere

from _nn_helpers import COMM, P, host, torch_params

pytestmark = pytest.mark.mpi

N, L, S, E, H = 2, 7, 6, 8, 2


# ------------------------------------------------------------------ NumPy transcriptions of torch's layers
def softmax(s):
    m = s.max(-1, keepdims=True)
    p = np.exp(s - m)
    return p / p.sum(-1, keepdims=True)


def mha_ref(sd, query, key, value, heads, attn_mask=None, kpm=None, causal=False, batch_first=True,
            zero_attn=False):
    """torch's multi_head_attention_forward: (output, per-head weights).

    ``bias_k``/``bias_v`` in ``sd`` (add_bias_kv) and ``zero_attn`` append key/value tokens after the
    projected ones, the masks padded with columns that let every query see them (torch's ``pad``), the
    causal mask too.
    """
    if not batch_first:
        query, key, value = (x.transpose(1, 0, 2) for x in (query, key, value))
    e = sd["out_proj.weight"].shape[0]
    ws = np.split(sd["in_proj_weight"], 3) if "in_proj_weight" in sd else \
        [sd[f"{c}_proj_weight"] for c in "qkv"]
    bs = np.split(sd["in_proj_bias"], 3) if "in_proj_bias" in sd else [0.0] * 3

    def split(x):
        n, length, _ = x.shape
        return x.reshape(n, length, heads, e // heads).transpose(0, 2, 1, 3)

    q, k, v = (x @ w.T + b for x, w, b in zip((query, key, value), ws, bs))
    n, s_len = k.shape[:2]
    if "bias_k" in sd:
        k = np.concatenate([k, np.broadcast_to(sd["bias_k"], (n, 1, e))], axis=1)
        v = np.concatenate([v, np.broadcast_to(sd["bias_v"], (n, 1, e))], axis=1)
    q, k, v = split(q), split(k), split(v)
    if zero_attn:
        k, v = (np.concatenate([x, np.zeros((*x.shape[:2], 1, x.shape[3]))], axis=2) for x in (k, v))
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(e // heads)
    pad = [(0, 0)] * 3 + [(0, k.shape[2] - s_len)]  # the extra columns: seen by every query
    if attn_mask is not None:
        add = np.where(attn_mask, -np.inf, 0.0) if attn_mask.dtype == bool else attn_mask
        add = add.reshape((-1, heads) + add.shape[1:]) if add.ndim == 3 else add
        s = s + np.pad(add, pad[-add.ndim:])
    if kpm is not None:
        s = s + np.pad(np.where(kpm, -np.inf, 0.0), pad[-2:])[:, None, None, :]
    if causal:
        s = np.where(np.pad(np.tril(np.ones((s.shape[-2], s_len), bool)), pad[-2:], constant_values=True), s,
                     -np.inf)
    w = softmax(s)
    n, _, length, _ = q.shape
    out = (w @ v).transpose(0, 2, 1, 3).reshape(n, length, e) @ sd["out_proj.weight"].T
    out = out + sd.get("out_proj.bias", 0.0)
    return (out if batch_first else out.transpose(1, 0, 2)), w


def _gelu(x):
    from scipy.special import erf

    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def layer_ref(sd, x, heads, norm_first=False, activation="relu", batch_first=True, eps=1e-5, prefix=""):
    def p(name):
        return sd[prefix + name]

    def ln(y, i):
        m, var = y.mean(-1, keepdims=True), y.var(-1, keepdims=True)
        return (y - m) / np.sqrt(var + eps) * p(f"norm{i}.weight") + p(f"norm{i}.bias")

    attn = {k[len(prefix) + 10:]: v for k, v in sd.items() if k.startswith(prefix + "self_attn.")}
    act = (lambda y: np.maximum(y, 0)) if activation == "relu" else _gelu

    def sa(y):
        return mha_ref(attn, y, y, y, heads, batch_first=batch_first)[0]

    def ff(y):
        return act(y @ p("linear1.weight").T + p("linear1.bias")) @ p("linear2.weight").T + p("linear2.bias")

    if norm_first:
        x = x + sa(ln(x, 1))
        return x + ff(ln(x, 2))
    x = ln(x + sa(x), 1)
    return ln(x + ff(x), 2)


def numpy_state(module):
    return {k: host(v) for k, v in module.state_dict().items()}


# ------------------------------------------------------------------ layouts of (N, L, E) sequences
def seq_layouts(batch_first=True, length=L):
    t = 1 if batch_first else 0
    out = {"tokens": dict(split=t), "tokens-on-last-rank": dict(split=t, sizes={t: [0] * (P - 1) + [length]})}
    if P == 4 and batch_first:
        out["batch-x-tokens"] = dict(split=(0, 1), grid=(2, 2))
    return out


def seq(seed, shape):
    return np.random.default_rng(seed).standard_normal(shape)


# ------------------------------------------------------------------ MultiheadAttention
@pytest.mark.parametrize("batch_first", [True, False], ids=["batch_first", "seq_first"])
@pytest.mark.parametrize("masks", ["none", "float-mask", "bool-mask+padding", "causal"])
def test_multihead_attention_forward_and_weights(masks, batch_first):
    nn.init.manual_seed(1)
    mha = nn.MultiheadAttention(E, H, batch_first=batch_first)
    with da.autodiff.no_grad():  # nonzero biases, so that every parameter shows up in the output
        mha.in_proj_bias.data = da.asarray(seq(2, (3 * E,)), split=None)
        mha.out_proj.bias.data = da.asarray(seq(3, (E,)), split=None)
    sd = numpy_state(mha)
    shape = (N, L, E) if batch_first else (L, N, E)
    x = seq(4, shape)
    rng = np.random.default_rng(5)
    kw, ref = {}, {}
    if masks == "float-mask":
        ref["attn_mask"] = rng.standard_normal((N * H, L, L))
        kw["attn_mask"] = da.asarray(ref["attn_mask"], split=None)
    elif masks == "bool-mask+padding":
        ref["attn_mask"] = rng.random((L, L)) < 0.3
        np.fill_diagonal(ref["attn_mask"], False)
        ref["kpm"] = np.zeros((N, L), bool)
        ref["kpm"][1, -2:] = True
        kw = dict(attn_mask=da.asarray(ref["attn_mask"], split=None),
                  key_padding_mask=da.asarray(ref["kpm"], split=None))
    elif masks == "causal":
        kw["is_causal"] = ref["causal"] = True
    want, w = mha_ref(sd, x, x, x, H, batch_first=batch_first, **ref)
    for _name, lay in seq_layouts(batch_first).items():
        xd = da.asarray(x, **lay)
        out, weights = mha(xd, xd, xd, **kw)
        assert_equal(out.data, want, rtol=1e-10, atol=1e-12)
        assert_equal(weights.data, w.mean(1), rtol=1e-10, atol=1e-12)
        out2, per_head = mha(xd, xd, xd, need_weights=False, **kw)
        assert per_head is None
        assert_equal(out2.data, want, rtol=1e-10, atol=1e-12)
        assert out.data.layout.blocks_key == xd.layout.blocks_key
        _, per_head = mha(xd, xd, xd, average_attn_weights=False, **kw)
        assert_equal(per_head.data, w, rtol=1e-10, atol=1e-12)


def test_cross_attention_with_kdim_vdim():
    nn.init.manual_seed(6)
    mha = nn.MultiheadAttention(E, H, kdim=3, vdim=5, batch_first=True)
    assert list(mha.state_dict()) == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                                      "out_proj.weight", "out_proj.bias"]
    q, k, v = seq(7, (N, L, E)), seq(8, (N, S, 3)), seq(9, (N, S, 5))
    want, _ = mha_ref(numpy_state(mha), q, k, v, H)
    for name, lay in seq_layouts().items():
        kv = seq_layouts(length=S)[name]
        out, _ = mha(da.asarray(q, **lay), da.asarray(k, **kv), da.asarray(v, **kv), need_weights=False)
        assert_equal(out.data, want, rtol=1e-10, atol=1e-12)


def test_unbatched_input():
    nn.init.manual_seed(14)
    mha = nn.MultiheadAttention(E, H)  # unbatched (L, E): batch_first does not matter, like torch
    x = seq(15, (L, E))
    kpm = np.zeros(L, bool)
    kpm[-1] = True
    want, w = mha_ref(numpy_state(mha), *(x[None],) * 3, H, kpm=kpm[None])
    xd = da.asarray(x, split=0)
    out, weights = mha(xd, xd, xd, key_padding_mask=da.asarray(kpm, split=None))
    assert out.shape == (L, E) and weights.shape == (L, L)
    assert_equal(out.data, want[0], rtol=1e-10, atol=1e-12)
    assert_equal(weights.data, w.mean(1)[0], rtol=1e-10, atol=1e-12)


def test_head_split_and_merge_are_adjoint_and_local():
    """<split(x), y> == <x, split^T(y)> (the tape's backward of split_heads), and no byte moves."""
    from darray.nn._transformer import merge_heads, split_heads

    x, y = seq(16, (N, L, E)), seq(17, (N, H, L, E // H))
    for lay in seq_layouts().values():
        xv = Variable(da.asarray(x, **lay), requires_grad=True)
        with da.tracing() as t:
            heads = split_heads(xv, H)
            back = merge_heads(heads)
        assert not agree(COMM, sum(e["nbytes"] for e in t.events if e["kind"] == "comm") == 0)
        assert_equal(heads.data, x.reshape(N, L, H, E // H).transpose(0, 2, 1, 3))
        assert_equal(back.data, x)
        (heads * da.asarray(y, split=None)).sum().backward()
        lhs = float(np.sum(x.reshape(N, L, H, E // H).transpose(0, 2, 1, 3) * y))
        rhs = float(np.sum(x * host(xv.grad)))
        assert not agree(COMM, abs(lhs - rhs) <= 1e-12 * max(1.0, abs(lhs))), (lhs, rhs)


def _grads(module, x, lay, g, **kw):
    module.zero_grad()
    xv = Variable(da.asarray(x, **lay), requires_grad=True)
    out = module(xv, **kw)
    out = out[0] if isinstance(out, tuple) else out
    loss = (out * da.asarray(g, **lay)).sum()
    loss.backward()
    return float(loss.data), xv.grad, {k: p.grad for k, p in module.named_parameters()}


def check_gradients(module, x, g, layouts, **kw):
    """Every layout's loss and gradients == the replicated run's; the replicated run == finite differences."""
    rep = dict(split=None)
    lr, gr, pr = _grads(module, x, rep, g, **kw)
    for lay in layouts.values():
        ld, gd, pd = _grads(module, x, lay, g, **kw)
        assert not agree(COMM, abs(ld - lr) <= 1e-10 * max(1.0, abs(lr))), (ld, lr)
        assert_equal(gd, host(gr), rtol=1e-9, atol=1e-12)
        for name in pr:
            assert_equal(pd[name], host(pr[name]), rtol=1e-9, atol=1e-12, err_msg=name)
    # central differences along one random direction of the input and of every parameter at once
    eps = 1e-6
    dirs = {k: np.random.default_rng(i).standard_normal(p.shape) for i, (k, p) in
            enumerate(module.named_parameters())}
    dx = np.random.default_rng(99).standard_normal(x.shape)
    analytic = float(np.sum(host(gr) * dx)) + sum(float(np.sum(host(pr[k]) * d)) for k, d in dirs.items())
    base = {k: host(p.data) for k, p in module.named_parameters()}
    values = []
    for sign in (1, -1):
        module.load_state_dict({**{k: base[k] + sign * eps * d for k, d in dirs.items()},
                                **{k: v for k, v in numpy_state(module).items() if k not in dirs}})
        out = module(da.asarray(x + sign * eps * dx, split=None), **kw)
        out = out[0] if isinstance(out, tuple) else out
        values.append(float((out * da.asarray(g, split=None)).sum().data))
    module.load_state_dict({**numpy_state(module), **base})
    fd = (values[0] - values[1]) / (2 * eps)
    assert not agree(COMM, abs(fd - analytic) <= 1e-6 * max(1.0, abs(analytic))), (fd, analytic)


class _SelfAttention(nn.Module):
    def __init__(self, **kw):
        super().__init__()
        self.attn = nn.MultiheadAttention(E, H, batch_first=True, **kw)

    def forward(self, x, **kw):
        return self.attn(x, x, x, need_weights=False, **kw)[0]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_multihead_attention_gradients(causal):
    nn.init.manual_seed(10)
    module = _SelfAttention()
    with da.autodiff.no_grad():
        module.attn.in_proj_bias.data = da.asarray(seq(11, (3 * E,)), split=None)
    check_gradients(module, seq(12, (N, L, E)), seq(13, (N, L, E)), seq_layouts(), is_causal=causal)


# ------------------------------------------------------------------ add_bias_kv and add_zero_attn
EXTRAS = {"bias_kv": dict(add_bias_kv=True), "zero_attn": dict(add_zero_attn=True),
          "bias_kv+zero_attn": dict(add_bias_kv=True, add_zero_attn=True)}


def _with_extras(seed, extras, **kw):
    nn.init.manual_seed(seed)
    mha = nn.MultiheadAttention(E, H, batch_first=True, **EXTRAS[extras], **kw)
    with da.autodiff.no_grad():
        mha.in_proj_bias.data = da.asarray(seq(seed + 1, (3 * E,)), split=None)
    return mha


@pytest.mark.parametrize("masks", ["none", "float-mask+padding", "causal"])
@pytest.mark.parametrize("extras", sorted(EXTRAS))
def test_extra_tokens_forward_and_weights(extras, masks):
    mha = _with_extras(70, extras)
    sd = numpy_state(mha)
    assert list(sd)[:4] == ["in_proj_weight", "in_proj_bias", *(["bias_k", "bias_v"] if "bias_kv" in extras
                                                                  else ["out_proj.weight", "out_proj.bias"])]
    x, rng = seq(72, (N, L, E)), np.random.default_rng(73)
    kw, ref = {}, {}
    if masks == "float-mask+padding":
        ref["attn_mask"], ref["kpm"] = rng.standard_normal((L, L)), np.zeros((N, L), bool)
        ref["kpm"][0, :3] = True
        kw = dict(attn_mask=da.asarray(ref["attn_mask"], split=None), key_padding_mask=da.asarray(ref["kpm"]))
    elif masks == "causal":
        kw["is_causal"] = ref["causal"] = True
    want, w = mha_ref(sd, x, x, x, H, zero_attn="zero_attn" in extras, **ref)
    for lay in seq_layouts().values():
        xd = da.asarray(x, **lay)
        out, weights = mha(xd, xd, xd, average_attn_weights=False, **kw)
        assert weights.shape == (N, H, L, L + len(extras.split("+")))
        assert_equal(out.data, want, rtol=1e-10, atol=1e-12)
        assert_equal(weights.data, w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("extras", ["bias_kv", "bias_kv+zero_attn"])
def test_extra_tokens_gradients(extras):
    """bias_k/bias_v gradients (every rank's queries see the tokens) == the replicated run's == finite differences."""
    module = _SelfAttention(**EXTRAS[extras])
    nn.init.manual_seed(75)
    module.attn = _with_extras(75, extras)
    check_gradients(module, seq(76, (N, L, E)), seq(77, (N, L, E)), seq_layouts(), is_causal=True)


# ------------------------------------------------------------------ the encoder
@pytest.mark.parametrize("norm_first,activation", [(False, "relu"), (True, "gelu")])
def test_encoder_layer_forward_and_gradients(norm_first, activation):
    nn.init.manual_seed(20)
    layer = nn.TransformerEncoderLayer(E, H, dim_feedforward=12, dropout=0.0, activation=activation,
                                       batch_first=True, norm_first=norm_first)
    assert list(layer.state_dict()) == [
        "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight", "self_attn.out_proj.bias",
        "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias",
        "norm2.weight", "norm2.bias"]
    x = seq(21, (N, L, E))
    want = layer_ref(numpy_state(layer), x, H, norm_first, activation)
    for lay in seq_layouts().values():
        assert_equal(layer(da.asarray(x, **lay)).data, want, rtol=1e-10, atol=1e-12)
    check_gradients(layer, x, seq(22, (N, L, E)), seq_layouts())


def test_encoder_stack_sequence_first():
    nn.init.manual_seed(30)
    layer = nn.TransformerEncoderLayer(E, H, dim_feedforward=12)  # torch's defaults: dropout 0.1, seq first
    enc = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(E)).eval()
    sd = numpy_state(enc)
    assert [k for k in sd if k.startswith("layers.1.")] == ["layers.1." + k for k in layer.state_dict()]
    assert list(sd)[-2:] == ["norm.weight", "norm.bias"]
    x = seq(31, (L, N, E))
    want = x
    for i in range(2):
        want = layer_ref(sd, want, H, batch_first=False, prefix=f"layers.{i}.")
    m, var = want.mean(-1, keepdims=True), want.var(-1, keepdims=True)
    want = (want - m) / np.sqrt(var + 1e-5) * sd["norm.weight"] + sd["norm.bias"]
    for lay in seq_layouts(batch_first=False).values():
        assert_equal(enc(da.asarray(x, **lay)).data, want, rtol=1e-10, atol=1e-12)


def test_causal_mask_and_is_causal_agree():
    nn.init.manual_seed(35)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, 12, dropout=0.0, batch_first=True), 2)
    x = seq(36, (N, L, E))
    mask = da.asarray(np.triu(np.ones((L, L), bool), 1), split=None)  # torch's convention: True is masked
    for lay in seq_layouts().values():
        xd = da.asarray(x, **lay)
        assert_equal(enc(xd, mask=mask).data, host(enc(xd, is_causal=True).data), rtol=1e-10, atol=1e-12)


def test_dropout_in_training_is_the_same_on_any_layout():
    """Attention, residual and feed-forward dropout: every layout (and rank count) drops the same cells."""
    x, g = seq(40, (N, L, E)), seq(41, (N, L, E))
    runs = {}
    for name, lay in {"replicated": dict(split=None), **seq_layouts()}.items():
        nn.init.manual_seed(42)
        layer = nn.TransformerEncoderLayer(E, H, 12, dropout=0.3, batch_first=True)
        runs[name] = _grads(layer, x, lay, g)
    lr, gr, pr = runs.pop("replicated")
    for ld, gd, pd in runs.values():
        assert not agree(COMM, abs(ld - lr) <= 1e-10 * max(1.0, abs(lr))), (ld, lr)
        assert_equal(gd, host(gr), rtol=1e-9, atol=1e-12)
        for name in pr:
            assert_equal(pd[name], host(pr[name]), rtol=1e-9, atol=1e-12, err_msg=name)


def test_returned_weights_are_the_dropped_weights_the_output_used():
    nn.init.manual_seed(45)
    mha = nn.MultiheadAttention(E, H, dropout=0.4, bias=False, batch_first=True)
    sd = numpy_state(mha)
    x = seq(46, (N, L, E))
    xd = da.asarray(x, split=1)
    out, w = mha(xd, xd, xd, average_attn_weights=False)
    v = (x @ np.split(sd["in_proj_weight"], 3)[2].T).reshape(N, L, H, E // H).transpose(0, 2, 1, 3)
    want = (host(w.data) @ v).transpose(0, 2, 1, 3).reshape(N, L, E) @ sd["out_proj.weight"].T
    assert_equal(out.data, want, rtol=1e-10, atol=1e-12)
    assert not agree(COMM, bool(np.any(host(w.data) == 0.0)))


def test_bad_arguments_raise_everywhere():
    assert_raises_everywhere(ValueError, nn.MultiheadAttention, 6, 4, match="divisible")
    assert_raises_everywhere(RuntimeError, nn.TransformerEncoderLayer, 8, 2, activation="tanh", match="relu/gelu")
    mha = nn.MultiheadAttention(E, H, batch_first=True)
    x = da.asarray(seq(50, (N, L, E)), split=1)
    assert_raises_everywhere(ValueError, mha, x, x, x, attn_mask=da.zeros((L, L + 1)), match="attn_mask")
    assert_raises_everywhere(ValueError, mha, x, x, x, key_padding_mask=da.zeros((N, L - 1), dtype=bool),
                             match="key_padding_mask")
    assert_raises_everywhere(ValueError, mha, x[..., :4], x, x, match="feature size")


def test_against_torch():
    torch = pytest.importorskip("torch")
    nn.init.manual_seed(60)
    mha = nn.MultiheadAttention(E, H, batch_first=True)
    ref = torch.nn.MultiheadAttention(E, H, batch_first=True, dtype=torch.float64)
    ref.load_state_dict({k: torch.from_numpy(v) for k, v in numpy_state(mha).items()})
    x = seq(61, (N, L, E))
    want, w = ref(*(torch.from_numpy(x),) * 3)
    xd = da.asarray(x, split=1)
    out, weights = mha(xd, xd, xd)
    assert_equal(out.data, want.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert_equal(weights.data, w.detach().numpy(), rtol=1e-10, atol=1e-12)
    q = torch.from_numpy(seq(62, (N, H, L, 4)))
    want = torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    got = nn.functional.scaled_dot_product_attention(*(da.asarray(q.numpy(), split=2),) * 3, is_causal=True)
    assert_equal(got.data, want.numpy(), rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------ torch as the oracle (same weights through load_state_dict)
def _torch_run(torch, ref, xs, gs, **kw):
    """torch's outputs, input gradients and parameter gradients for the loss ``sum(out_i * g_i)``."""
    ts = [torch.from_numpy(x).requires_grad_() for x in xs]
    outs = ref(*ts, **kw)
    outs = [o for o in (outs if isinstance(outs, tuple) else (outs,)) if o is not None]
    sum((o * torch.from_numpy(g)).sum() for o, g in zip(outs, gs)).backward()
    return ([o.detach().numpy() for o in outs], [t.grad.numpy() for t in ts],
            {k: p.grad.numpy() for k, p in ref.named_parameters()})


def _darray_run(module, xs, lays, gs, **kw):
    module.zero_grad()
    vs = [Variable(da.asarray(x, **lay), requires_grad=True) for x, lay in zip(xs, lays)]
    outs = module(*vs, **kw)
    outs = [o for o in (outs if isinstance(outs, tuple) else (outs,)) if o is not None]
    sum((o * da.asarray(g, split=None)).sum() for o, g in zip(outs, gs)).backward()
    return [o.data for o in outs], [v.grad for v in vs], {k: p.grad for k, p in module.named_parameters()}


def assert_same_as_torch(torch, module, ref, xs, lays, gs, **kw):
    ref.load_state_dict({k: torch.from_numpy(v) for k, v in numpy_state(module).items()})
    want = _torch_run(torch, ref, xs, gs, **{k: (torch.from_numpy(host(v)) if isinstance(v, da.DArray) else v)
                                             for k, v in kw.items()})
    got = _darray_run(module, xs, lays, gs, **kw)
    assert sorted(got[2]) == sorted(want[2])
    for a, b in zip(got[0] + got[1], want[0] + want[1]):
        assert_equal(a, b, rtol=1e-10, atol=1e-12)
    for name in want[2]:
        assert_equal(got[2][name], want[2][name], rtol=1e-10, atol=1e-12, err_msg=name)


MHA_TORCH = {"default": {}, "kdim-vdim": dict(kdim=3, vdim=5), "no-bias": dict(bias=False),
             "bias_kv": dict(add_bias_kv=True), "zero_attn": dict(add_zero_attn=True),
             "bias_kv+zero_attn+kdim-vdim": dict(add_bias_kv=True, add_zero_attn=True, kdim=3, vdim=5)}
MHA_CASES = [(config, weights, layout) for config in MHA_TORCH for weights in ("averaged", "per-head", "none")
             for layout in seq_layouts()]


@pytest.mark.parametrize("config,weights,layout", torch_params(MHA_CASES))
def test_multihead_attention_against_torch(config, weights, layout):
    """torch.nn.MultiheadAttention with the same state dict: output, weights, gradients of the inputs and of
    every parameter (key padding mask and an additive mask; float64)."""
    torch = pytest.importorskip("torch")
    cfg = MHA_TORCH[config]
    nn.init.manual_seed(80)
    mha = nn.MultiheadAttention(E, H, batch_first=True, **cfg)
    ref = torch.nn.MultiheadAttention(E, H, batch_first=True, dtype=torch.float64, **cfg)
    assert list(mha.state_dict()) == list(ref.state_dict())
    if "bias" not in cfg:
        with da.autodiff.no_grad():
            mha.in_proj_bias.data = da.asarray(seq(81, (3 * E,)), split=None)
    xs = [seq(82, (N, L, E)), seq(83, (N, S, cfg.get("kdim", E))), seq(84, (N, S, cfg.get("vdim", E)))]
    lays = [seq_layouts()[layout], seq_layouts(length=S)[layout], seq_layouts(length=S)[layout]]
    kpm = np.zeros((N, S))  # additive, like attn_mask (torch deprecates mixing a boolean one with a float one)
    kpm[1, :2] = -np.inf
    x_extra = int(cfg.get("add_bias_kv", False)) + int(cfg.get("add_zero_attn", False))
    gs = [seq(85, (N, L, E)), seq(86, (N, H, L, S + x_extra) if weights == "per-head" else (N, L, S + x_extra))]
    assert_same_as_torch(torch, mha, ref, xs, lays, gs[:1 if weights == "none" else 2],
                         key_padding_mask=da.asarray(kpm, split=None), need_weights=weights != "none",
                         average_attn_weights=weights == "averaged",
                         attn_mask=da.asarray(seq(87, (L, S)), split=None))


ENCODER_CASES = [(norm_first, activation, layout) for norm_first in (False, True) for activation in ("relu", "gelu")
                 for layout in seq_layouts()]


@pytest.mark.parametrize("norm_first,activation,layout", torch_params(ENCODER_CASES))
def test_encoder_against_torch(norm_first, activation, layout):
    """torch.nn.TransformerEncoder (2 layers and a final norm) and one TransformerEncoderLayer with the same state
    dict, dropout 0: output and the gradients of the input and of every parameter (float64)."""
    torch = pytest.importorskip("torch")
    kw = dict(dim_feedforward=12, dropout=0.0, activation=activation, batch_first=True, norm_first=norm_first)
    nn.init.manual_seed(90)
    layer = nn.TransformerEncoderLayer(E, H, **kw)
    ref_layer = torch.nn.TransformerEncoderLayer(E, H, dtype=torch.float64, **kw)
    x, g = seq(91, (N, L, E)), seq(92, (N, L, E))
    lays = [seq_layouts()[layout]]
    assert_same_as_torch(torch, layer, ref_layer, [x], lays, [g])
    enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(E))
    with da.autodiff.no_grad():  # the copies differ, so that a mix-up of layers shows
        enc.layers[1].linear1.weight.data = da.asarray(seq(93, (12, E)), split=None)
    ref = torch.nn.TransformerEncoder(ref_layer, 2, norm=torch.nn.LayerNorm(E, dtype=torch.float64),
                                      enable_nested_tensor=False)
    mask = np.random.default_rng(94).random((L, L)) < 0.3
    np.fill_diagonal(mask, False)
    assert_same_as_torch(torch, enc, ref, [x], lays, [g], mask=da.asarray(mask, split=None))
