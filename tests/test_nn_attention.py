"""Ring attention (``darray.nn.functional.scaled_dot_product_attention``) against a dense NumPy reference.

Forward and gradients of query, key and value on the gathered inputs, at any
rank count: token axes cut evenly, unevenly, with every block but one empty,
queries and keys cut differently, a 2x2 grid cutting batch and tokens;
causal, boolean and additive masks; key blocks processed whole and in
chunks of a few keys; extra key/value tokens every rank holds (torch's
``add_bias_kv``/``add_zero_attn``). One test counts the bytes the tracer
saw: each K/V block moves once around the ring. Where torch is installed,
``torch.nn.functional.scaled_dot_product_attention`` is a second oracle.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray.autodiff import Variable
from darray.nn import _attention
from darray.nn import functional as F
from darray.testing import agree, assert_equal, assert_raises_everywhere

from _nn_helpers import COMM, P, host, torch_params

pytestmark = pytest.mark.mpi

B, H, L, S, E, EV = 2, 2, 7, 9, 3, 4


def dense(q, k, v, mask=None, causal=False, scale=None):
    """softmax(q k^T * scale + mask) v and the weights; rows that see no key give 0."""
    s = q @ np.swapaxes(k, -1, -2) * (1 / np.sqrt(q.shape[-1]) if scale is None else scale)
    allowed = np.ones(s.shape, bool)
    if causal:
        allowed &= np.tril(np.ones(s.shape[-2:], bool))
    if mask is not None:
        if mask.dtype == bool:
            allowed = allowed & mask
        else:
            s = s + mask
    s = np.where(allowed, s, -np.inf)
    m = s.max(-1, keepdims=True)
    p = np.exp(s - np.where(np.isfinite(m), m, 0))
    total = p.sum(-1, keepdims=True)
    w = np.where(total > 0, p / np.where(total > 0, total, 1), 0)
    return w @ v, w


def dense_grads(q, k, v, w, g, scale=None, kept=1.0):
    """Analytic vector-Jacobian products of ``(w * kept) @ v`` (``kept``: dropout multipliers) for the gradient ``g``."""
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    dp = (g @ np.swapaxes(v, -1, -2)) * kept
    ds = w * (dp - (dp * w).sum(-1, keepdims=True)) * scale
    return ds @ k, np.swapaxes(ds, -1, -2) @ q, np.swapaxes(w * kept, -1, -2) @ g


def inputs(seed=0, lq=L, s=S):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((B, H, lq, E)), rng.standard_normal((B, H, s, E)),
            rng.standard_normal((B, H, s, EV)), rng.standard_normal((B, H, lq, EV)))


def _last(n):
    return [0] * (P - 1) + [n]


#: name -> (layout of q, layout of k and v): every case exists at every rank count.
LAYOUTS = {
    "even": (dict(split=2), dict(split=2)),
    "q-on-last-rank": (dict(split=2, sizes={2: _last(L)}), dict(split=2)),
    "kv-on-first-rank": (dict(split=2), dict(split=2, sizes={2: [S] + [0] * (P - 1)})),
    "replicated": (dict(split=None), dict(split=None)),
    "batch-only": (dict(split=0), dict(split=0)),
}
if P == 4:
    LAYOUTS["batch-x-tokens"] = (dict(split=(0, 2), grid=(2, 2)), dict(split=(0, 2), grid=(2, 2)))
    LAYOUTS["two-rings-of-copies"] = (dict(split=(None, 2), grid=(2, 2)), dict(split=(None, 2), grid=(2, 2)))


@pytest.fixture
def chunks_of(monkeypatch):
    """``chunks_of(n)``: key blocks processed ``n`` keys at a time (cut at the global multiples of ``n``)."""
    def set_chunk(n):
        if n is not None:
            monkeypatch.setattr(_attention, "KEY_CHUNK_BYTES", 0)
            monkeypatch.setattr(_attention, "MIN_KEY_CHUNK", n)
    return set_chunk


def test_key_chunk_bounds_the_score_chunk():
    assert _attention.key_chunk((1, 4, 16384, 16), 8) == _attention.MIN_KEY_CHUNK  # 64 keys: 32 MiB of scores
    assert _attention.key_chunk((1, 1, 100, 16), 8) * 100 * 8 <= _attention.KEY_CHUNK_BYTES


def run(q, k, v, g, qkw, kkw, **kw):
    """The ring's output and the gradients of q, k, v for the loss ``sum(out * g)``."""
    qv, kv, vv = (Variable(da.asarray(x, **lay), requires_grad=True) for x, lay in ((q, qkw), (k, kkw), (v, kkw)))
    out = F.scaled_dot_product_attention(qv, kv, vv, **kw)
    (out * da.asarray(g, **qkw)).sum().backward()
    return out.data, qv.grad, kv.grad, vv.grad


def check(got, want, rtol=1e-10, atol=1e-12):
    for x, y in zip(got, want):
        assert_equal(x, y, rtol=rtol, atol=atol)


@pytest.mark.parametrize("chunk", [None, 2], ids=["whole-blocks", "chunks-of-2"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_forward_and_gradients_equal_dense(name, causal, chunk, chunks_of):
    chunks_of(chunk)
    q, k, v, g = inputs()
    qkw, kkw = LAYOUTS[name]
    got = run(q, k, v, g, qkw, kkw, is_causal=causal)
    out, w = dense(q, k, v, causal=causal)
    check(got, (out, *dense_grads(q, k, v, w, g)))
    assert got[0].layout.blocks_key[1:] == da.asarray(g, **qkw).layout.blocks_key[1:]
    assert got[1].layout.blocks_key == da.asarray(q, **qkw).layout.blocks_key


@pytest.mark.parametrize("kind", ["bool", "additive", "bool-2d", "bool-rows"])
def test_masks(kind, chunks_of):
    chunks_of(3)  # chunks that straddle the block boundaries: each slices its own mask columns
    q, k, v, g = inputs(1)
    rng = np.random.default_rng(5)
    if kind == "bool":
        mask = rng.random((B, 1, L, S)) < 0.6
        mask[0, 0, 3] = False  # a row that sees nothing: 0, like torch's safe softmax
    elif kind == "additive":
        mask = rng.standard_normal((B, H, L, S))
    elif kind == "bool-2d":
        mask = rng.random((L, S)) < 0.7
    else:  # one column broadcast over every key block: whole rows on or off
        mask = rng.random((L, 1)) < 0.6
    for qkw, kkw in (LAYOUTS["even"], LAYOUTS["q-on-last-rank"]):
        mkw = {key: val for key, val in qkw.items()} if mask.ndim == 4 else dict(split=None)
        got = run(q, k, v, g, qkw, kkw, attn_mask=da.asarray(mask, **mkw))
        out, w = dense(q, k, v, mask=mask)
        check(got, (out, *dense_grads(q, k, v, w, g)))


def test_scale_and_cross_attention_lengths():
    q, k, v, g = inputs(2, lq=5, s=11)
    got = run(q, k, v, g, dict(split=2), dict(split=2), scale=0.3, is_causal=True)
    out, w = dense(q, k, v, causal=True, scale=0.3)
    check(got, (out, *dense_grads(q, k, v, w, g, scale=0.3)))


def test_float32_stays_float32():
    q, k, v, g = inputs(7)
    got = run(*(x.astype(np.float32) for x in (q, k, v, g)), dict(split=2), dict(split=2), is_causal=True)
    out, w = dense(q, k, v, causal=True)
    assert all(x.dtype == da.float32 for x in got)
    for x, y in zip(got, (out, *dense_grads(q, k, v, w, g))):
        assert_equal(x, y.astype(np.float32), rtol=1e-4, atol=1e-5)


def test_gradient_matches_finite_differences():
    q, k, v, _ = inputs(3, lq=4, s=5)
    d = [np.random.default_rng(9 + i).standard_normal(x.shape) for i, x in enumerate((q, k, v))]

    def loss(xs, grad=False):
        vs = [Variable(da.asarray(x, split=2), requires_grad=grad) for x in xs]
        out = F.scaled_dot_product_attention(*vs, is_causal=True)
        value = (out * out).sum()
        if grad:
            value.backward()
        return float(value.data), vs

    _, vs = loss((q, k, v), grad=True)
    analytic = sum(float(np.sum(host(vv.grad) * dd)) for vv, dd in zip(vs, d))
    eps = 1e-6
    plus = loss([x + eps * dd for x, dd in zip((q, k, v), d)])[0]
    minus = loss([x - eps * dd for x, dd in zip((q, k, v), d)])[0]
    assert not agree(COMM, abs((plus - minus) / (2 * eps) - analytic) <= 1e-6 * max(1.0, abs(analytic)))


@pytest.mark.parametrize("chunk", [None, 2], ids=["whole-blocks", "chunks-of-2"])
@pytest.mark.parametrize("name", ["even", "q-on-last-rank"])
def test_dropout_is_the_same_on_any_rank_count(name, chunk, chunks_of):
    """The keep mask is ``rng.random((B, H, L, S)) >= p`` at global indices: a 1-rank oracle reproduces it."""
    chunks_of(chunk)
    q, k, v, g = inputs(6)
    p = 0.3
    u = host(da.random.default_rng(7).random((B, H, L, S), split=None))
    kept = (u >= p) / (1 - p)
    qkw, kkw = LAYOUTS[name]
    got = run(q, k, v, g, qkw, kkw, dropout_p=p, generator=da.random.default_rng(7))
    _, w = dense(q, k, v)
    check(got, ((w * kept) @ v, *dense_grads(q, k, v, w, g, kept=kept)))


def test_memory_is_bounded_by_the_key_chunk(monkeypatch):
    """Forward + backward over 2048 tokens allocate far less than one 2048 x 2048 score block (32 MiB): the key
    blocks go through in chunks of 64 keys (1 MiB of scores), whatever the rank count."""
    import tracemalloc

    monkeypatch.setattr(_attention, "KEY_CHUNK_BYTES", 1 << 20)
    n = 2048
    assert _attention.key_chunk((1, 1, n, 4), 8) == 64
    rng = np.random.default_rng(12)
    xs = [Variable(da.asarray(rng.standard_normal((1, 1, n, 4)), split=2), requires_grad=True) for _ in range(3)]
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        F.scaled_dot_product_attention(*xs, is_causal=True).sum().backward()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert not agree(COMM, peak < 8 * 2 ** 20), peak


# ------------------------------------------------------------------ extra key/value tokens (add_bias_kv, add_zero_attn)
X = 2
EXTRA_LAYOUTS = ["even", "q-on-last-rank", "kv-on-first-rank", "replicated"] + \
    (["batch-x-tokens", "two-rings-of-copies"] if P == 4 else [])


@pytest.mark.parametrize("chunk", [None, 2], ids=["whole-blocks", "chunks-of-2"])
@pytest.mark.parametrize("kind", ["plain", "causal", "bool-mask", "additive-mask+dropout"])
@pytest.mark.parametrize("name", EXTRA_LAYOUTS)
def test_extra_tokens_equal_dense(name, kind, chunk, chunks_of):
    """X replicated key/value tokens after the S of key/value: every query sees them, whatever the masks;
    their gradients (broadcast over the batch) sum over the ranks."""
    chunks_of(chunk)
    q, k, v, g = inputs(8)
    rng = np.random.default_rng(9)
    ek, ev = rng.standard_normal((1, H, X, E)), rng.standard_normal((1, H, X, EV))
    kf = np.concatenate([k, np.broadcast_to(ek, (B, H, X, E))], axis=2)
    vf = np.concatenate([v, np.broadcast_to(ev, (B, H, X, EV))], axis=2)
    mask, kept, dropout = None, 1.0, None
    oracle = np.ones((L, S + X), bool)  # the dense oracle's mask over all S + X columns: the extra ones seen
    if kind == "causal":
        oracle[:, :S] = np.tril(np.ones((L, S), bool))
    elif kind == "bool-mask":
        mask = rng.random((B, 1, L, S)) < 0.4
        oracle = np.concatenate([mask, np.ones((B, 1, L, X), bool)], axis=-1)
    elif kind == "additive-mask+dropout":
        mask = rng.standard_normal((L, S))
        oracle = np.concatenate([mask, np.zeros((L, X))], axis=-1)
        kept = (host(da.random.default_rng(3).random((B, H, L, S + X), split=None)) >= 0.25) / 0.75
        dropout = _attention.dropout_stream(0.25, da.random.default_rng(3))
    masks = () if mask is None else (da.asarray(mask, split=None),)
    qkw, kkw = LAYOUTS[name]
    qv, kv, vv = (Variable(da.asarray(x, **lay), requires_grad=True) for x, lay in ((q, qkw), (k, kkw), (v, kkw)))
    ekv, evv = (Variable(da.asarray(x, split=None), requires_grad=True) for x in (ek, ev))
    out = _attention.ring_attention(qv, kv, vv, masks, kind == "causal", None, dropout, extra=(ekv, evv))
    (out * da.asarray(g, **qkw)).sum().backward()
    _, w = dense(q, kf, vf, mask=oracle)
    dq, dkf, dvf = dense_grads(q, kf, vf, w, g, kept=kept)
    check((out.data, qv.grad, kv.grad, vv.grad, ekv.grad, evv.grad),
          ((w * kept) @ vf, dq, dkf[..., :S, :], dvf[..., :S, :], dkf[..., S:, :].sum(0, keepdims=True),
           dvf[..., S:, :].sum(0, keepdims=True)))


# ------------------------------------------------------------------ torch's scaled_dot_product_attention
TORCH_CASES = [(kind, name) for kind in ("plain", "bool-mask", "float-mask", "causal")
               for name in ("even", "q-on-last-rank", "kv-on-first-rank")] + [("scale+causal-cross", "even")]


@pytest.mark.parametrize("kind,name", torch_params(TORCH_CASES))
def test_against_torch_sdpa(kind, name):
    """Forward and the q, k, v gradients == torch's, float64, token axes cut (uneven and empty blocks)."""
    torch = pytest.importorskip("torch")
    lq, s = (5, 11) if kind == "scale+causal-cross" else (L, S)
    q, k, v, g = inputs(10, lq=lq, s=s)
    rng = np.random.default_rng(11)
    mask, kw = None, {}
    if kind == "bool-mask":
        mask = rng.random((B, 1, lq, s)) < 0.5
        mask[..., 1] = True  # every row sees a key (torch's fused kernels give NaN on a row that sees none)
    elif kind == "float-mask":
        mask = rng.standard_normal((lq, s))
    elif kind == "causal":
        kw = dict(is_causal=True)
    elif kind == "scale+causal-cross":
        kw = dict(is_causal=True, scale=0.3)
    tq, tk, tv = (torch.from_numpy(x).requires_grad_() for x in (q, k, v))
    want = torch.nn.functional.scaled_dot_product_attention(
        tq, tk, tv, attn_mask=None if mask is None else torch.from_numpy(mask), **kw)
    (want * torch.from_numpy(g)).sum().backward()
    qkw, kkw = LAYOUTS[name]
    got = run(q, k, v, g, qkw, kkw, attn_mask=None if mask is None else da.asarray(mask, split=None), **kw)
    check(got, (want.detach().numpy(), tq.grad.numpy(), tk.grad.numpy(), tv.grad.numpy()))


def _kv_bytes(n_tokens, itemsize=8):
    return B * H * n_tokens * (E + EV) * itemsize


def test_kv_travel_once_around_the_ring():
    q, k, v, _ = inputs(4)
    qkw = dict(split=2)
    qd, kd, vd = (da.asarray(x, **qkw) for x in (q, k, v))
    sizes = da.asarray(k, **qkw).layout.sizes[2]
    r = COMM.rank
    for causal in (False, True):
        with da.tracing() as t:
            F.scaled_dot_product_attention(qd, kd, vd, is_causal=causal)
        sent = sum(e["nbytes"] for e in t.events if e["kind"] == "comm" and e["op"] == "attention")
        # block j starts on rank j and is sent on by every rank but the last to need it
        if causal:  # equal q/k blocks: block j is needed by ranks j..P-1 and stops at P-1
            want = sum(_kv_bytes(sizes[j]) for j in range(r + 1)) if r < P - 1 else 0
        else:  # every block but the next rank's (it has been everywhere once it reaches rank r)
            want = sum(_kv_bytes(n) for j, n in enumerate(sizes) if j != (r + 1) % P) if P > 1 else 0
        assert not agree(COMM, sent == want), (causal, sent, want)


def test_backward_moves_kv_once_more_and_dkdv_home():
    """Backward: K/V go round again and each block's dK|dV (same size) makes P hops, the last one home."""
    q, k, v, g = inputs(5)
    qv, kv, vv = (Variable(da.asarray(x, split=2), requires_grad=True) for x in (q, k, v))
    out = F.scaled_dot_product_attention(qv, kv, vv)
    loss = (out * da.asarray(g, split=2)).sum()
    with da.tracing() as t:
        loss.backward()
    sent = sum(e["nbytes"] for e in t.events if e["kind"] == "comm" and e["op"] == "attention_backward")
    sizes = da.asarray(k, split=2).layout.sizes[2]
    r = COMM.rank
    kv_bytes = sum(_kv_bytes(n) for j, n in enumerate(sizes) if j != (r + 1) % P)
    want = kv_bytes + sum(_kv_bytes(n) for n in sizes) if P > 1 else 0
    assert not agree(COMM, sent == want), (sent, want)


def test_bad_input_raises_everywhere():
    q, k, v, _ = inputs()
    qd, kd, vd = (da.asarray(x, split=2) for x in (q, k, v))
    f = F.scaled_dot_product_attention
    assert_raises_everywhere(ValueError, f, qd, kd, vd, dropout_p=1.5, match="scaled_dot_product_attention")
    assert_raises_everywhere(ValueError, f, qd, kd[..., :2], vd, match="head dims")
    assert_raises_everywhere(ValueError, f, qd, kd, vd, attn_mask=da.zeros((L, S + 1)), match="broadcastable")
    assert_raises_everywhere(ValueError, f, qd, kd, vd, attn_mask=da.zeros((L, S)), is_causal=True,
                             match="is_causal")
    ring, ek, ev = _attention.ring_attention, da.zeros((1, H, X, E)), da.zeros((1, H, X, EV))
    assert_raises_everywhere(ValueError, ring, qd, kd, vd, extra=(ev, ev), match="extra key tokens")
    assert_raises_everywhere(ValueError, ring, qd, kd, vd, extra=(ek, ev[:, :, :1]), match="token counts differ")
    if P > 1:
        other = da.asarray(k, split=1)
        assert_raises_everywhere(ValueError, f, qd, other, vd, match="not cut like query")
        uneven = da.asarray(v, split=2, sizes={2: [S] + [0] * (P - 1)})
        assert_raises_everywhere(ValueError, f, qd, kd, uneven, match="cut differently")
        batch_cut = [da.asarray(x, split=0) for x in (q, k, v)]  # extra tokens per batch item on a cut batch axis
        assert_raises_everywhere(ValueError, ring, *batch_cut, extra=(da.zeros((B, H, X, E)), ev),
                                 match="do not broadcast")
