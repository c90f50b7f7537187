"""darray.torch against single-process torch, continued: attention, transposed convolutions, adaptive pooling,
``align_corners`` interpolation.

As in ``tests/test_torch.py`` (whose helpers this file uses): every check runs
the same torch call on the whole tensors in this process and on ShardTensors
of them, and compares the gathered results and the gradients of the inputs
and weights, on every rank, the verdict agreed over the ranks.
"""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")

import torch.nn as nn
import torch.nn.functional as F

import darray.torch as dt
from darray.testing import agree, assert_raises_everywhere
from test_torch import COMM, P, check_module, close, field, layouts
from test_torch import _moved as moved

pytestmark = [pytest.mark.mpi, pytest.mark.numpy_only(reason="torch blocks of their own; the local backend is moot")]

DTYPES = [torch.float64, torch.float32]


def check_function(fn, inputs, kws, dtype, params=(), loss=lambda y: (y.sin() ** 2).mean(), whole_out=False):
    """``fn(*inputs)`` with the inputs cut by ``kws`` (None: left whole) == on whole tensors: output, loss and the
    gradients of every input and of ``params`` (tensors every rank holds whole), agreed over the ranks.
    ``whole_out``: the output is whole on every rank (a plain tensor) at more than one rank."""
    inputs = [t.to(dtype) for t in inputs]
    mine = [p.detach().to(dtype).requires_grad_() for p in params]
    ref = [p.detach().to(dtype).requires_grad_() for p in params]
    cut = [dt.shard(t, requires_grad=True, **kw) if kw is not None else t.clone().requires_grad_()
           for t, kw in zip(inputs, kws)]
    whole = [t.clone().requires_grad_() for t in inputs]
    y = fn(*cut, *mine)
    lv = loss(y)
    lv.backward()
    yr = fn(*whole, *ref)
    lr = loss(yr)
    lr.backward()
    problems = []
    if whole_out and P > 1:
        if isinstance(y, dt.ShardTensor) or not close(y, yr, dtype):
            problems.append("whole output")
    elif not isinstance(y, dt.ShardTensor):
        problems.append(f"output is {type(y).__name__}")
    elif not close(y.full(), yr, dtype):
        problems.append("output")
    if not close(lv.detach(), lr.detach(), dtype):
        problems.append(f"loss {lv.item()} vs {lr.item()}")
    for i, (a, b) in enumerate(zip(cut, whole)):
        got = a.grad.full() if isinstance(a, dt.ShardTensor) else a.grad
        if got is None or not close(got, b.grad, dtype):
            problems.append(f"gradient of input {i}")
    for i, (a, b) in enumerate(zip(mine, ref)):
        if a.grad is None or not close(a.grad, b.grad, dtype):
            problems.append(f"gradient of parameter {i}")
    assert not agree(COMM, not problems), f"rank {COMM.rank}: {problems}"


# ------------------------------------------------------------------ attention: darray's ring
def token_layouts(shape):
    """:func:`layouts` of the token axis (2) of ``(batch, heads, tokens, features)``; at 4 ranks a heads x tokens
    grid instead of one that cuts the features."""
    out = [(name, kw) for name, kw in layouts(shape, 2) if "grid" not in kw]
    if P == 4:
        out.append(("grid2x2", {"split": (1, 2), "grid": (2, 2)}))
    return out


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_attention_ring(causal, dtype):
    """Self-attention, the token axis cut (balanced, uneven with an empty block, thin, batch x tokens grid)."""
    shape = (2, 2, 11, 4)
    q, k, v = field(shape, 1), field(shape, 2), field((2, 2, 11, 3), 3)
    for _, kw in token_layouts(shape):
        check_function(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=causal),
                       (q, k, v), (kw, kw, kw), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_attention_keys_of_another_length_and_masks(dtype):
    """S != L keys (cut on their own sizes), a boolean and an additive mask held whole, an explicit scale."""
    q, k, v = field((2, 3, 9, 4), 1), field((2, 3, 13, 4), 2), field((2, 3, 13, 4), 3)
    allowed = field((9, 13), 4) > -0.5
    bias = field((3, 1, 13), 5)
    for (_, qkw), (_, kkw) in zip(token_layouts(q.shape), token_layouts(k.shape)):
        for mask in (allowed, bias.to(dtype)):
            check_function(lambda a, b, c, m=mask: F.scaled_dot_product_attention(a, b, c, attn_mask=m, scale=0.3),
                           (q, k, v), (qkw, kkw, kkw), dtype)


def test_attention_whole_keys_and_values():
    """Queries cut, keys and values whole (a replicated context): local, their gradients summed over the ranks."""
    q, k, v = field((2, 1, 10, 4), 1), field((2, 1, 6, 4), 2), field((2, 1, 6, 4), 3)
    for _, kw in layouts(q.shape, 2):
        if "grid" not in kw:
            check_function(F.scaled_dot_product_attention, (q, k, v), (kw, None, None), torch.float64)


class TinyTransformer(nn.Module):
    """A plain PyTorch attention block over the tokens of a field (channels last): unchanged on a cut."""

    def __init__(self, d=8, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv, self.proj, self.norm = nn.Linear(d, 3 * d), nn.Linear(d, d), nn.LayerNorm(d)

    def forward(self, x):  # (B, T, d)
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.proj(y.permute(0, 2, 1, 3).reshape(b, t, d))


def test_attention_in_an_unchanged_module():
    torch.manual_seed(5)
    for _, kw in layouts((2, 12, 8), 1):
        check_module(TinyTransformer(), field((2, 12, 8)), kw)


def test_attention_refuses_what_it_cannot_reproduce():
    q = dt.shard(field((1, 1, 8, 4)), split=2)
    assert_raises_everywhere(NotImplementedError, F.scaled_dot_product_attention, q, q, q, dropout_p=0.1,
                             match="dropout_p")
    assert_raises_everywhere(NotImplementedError, F.scaled_dot_product_attention, q, q, q, enable_gqa=True,
                             match="enable_gqa")
    if P > 1:
        assert_raises_everywhere(NotImplementedError, F.scaled_dot_product_attention, q, q, field((1, 1, 8, 4)),
                                 match="key and value")
    assert_raises_everywhere(ValueError, F.scaled_dot_product_attention, q, q, q, attn_mask=torch.ones(8, 8),
                             is_causal=True, match="attn_mask")


# ------------------------------------------------------------------ transposed convolutions: the halo's adjoint
CONVT = [  # (nsp, kernel, stride, padding, output_padding, dilation, groups)
    (1, 3, 2, 1, 1, 1, 1), (1, 4, 2, 1, 0, 1, 2), (1, 1, 3, 0, 2, 1, 1),
    (2, 3, 1, 1, 0, 1, 1), (2, 4, 2, 1, 0, 1, 1), (2, 3, 3, 0, 1, 2, 2), (2, 5, 2, 3, 1, 1, 1),
    (3, 2, 2, 0, 0, 1, 1), (3, 3, 2, 1, 1, 1, 2),
]


@pytest.mark.parametrize("nsp,k,stride,pad,out_pad,dilation,groups", CONVT, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_conv_transpose(nsp, k, stride, pad, out_pad, dilation, groups, dtype):
    shape = (2, 4) + (9, 6, 4)[:nsp]
    convt = {1: nn.ConvTranspose1d, 2: nn.ConvTranspose2d, 3: nn.ConvTranspose3d}[nsp]
    torch.manual_seed(6)
    module = convt(4, 6, k, stride=stride, padding=pad, output_padding=out_pad, dilation=dilation, groups=groups)
    for _, kw in layouts(shape, 2):
        check_module(copy.deepcopy(module), field(shape), kw, dtype)


def test_conv_transpose_after_conv_and_batch_cut():
    """An encoder-decoder pair (the transposed convolution reads the convolution's uneven output blocks)."""
    torch.manual_seed(7)
    module = nn.Sequential(nn.Conv2d(2, 4, 3, stride=2, padding=1), nn.ReLU(),
                           nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1))
    for _, kw in layouts((2, 2, 10, 6), 2):
        check_module(copy.deepcopy(module), field((2, 2, 10, 6)), kw)
    check_module(module, field((4, 2, 10, 6)), {"split": 0})


@pytest.mark.parametrize("k,stride", [(3, 1), (4, 2), (6, 2)])
def test_conv_transpose_moves_its_halo(k, stride):
    """Forward sends what each block's kernel writes past its outputs (``k - stride`` rows over every cut, half to
    each side) and adds it on the owners; backward moves the same bytes back (a halo exchange)."""
    n, c, h, w = 2, 3, 12, 5
    module = nn.ConvTranspose2d(c, c, k, stride=stride, padding=1).double()
    w_out = (w - 1) * stride - 2 + k
    expected = (P - 1) * (k - stride) * n * c * w_out * 8
    module(dt.shard(field((n, c, h, w)), split=2, requires_grad=True)).sum().backward()  # agree on the layouts once
    assert moved({"split": 2}, (n, c, h, w), module) == (expected, expected)


def test_conv_transpose_bad_input():
    x = dt.shard(field((1, 2, 6)), split=2)
    assert_raises_everywhere(ValueError, F.conv_transpose1d, x, torch.ones(2, 2, 3), stride=2, output_padding=2,
                             match="output padding")
    if P > 1:
        assert_raises_everywhere(NotImplementedError, F.conv_transpose1d, dt.shard(field((1, 4, 6)), split=1),
                                 torch.ones(4, 2, 3), match="channel axis")


# ------------------------------------------------------------------ adaptive pooling, general linear resizing
ADAPTIVE = {  # kind: (module, input shape, block sizes of axis 2 at 2, 3, 4 ranks whose edges are window edges)
    "avg-halves": (lambda: nn.AdaptiveAvgPool2d((6, 3)), (2, 3, 12, 7), {2: [6, 6], 3: [4, 0, 8], 4: [2, 4, 0, 6]}),
    "max-halves": (lambda: nn.AdaptiveMaxPool2d((6, None)), (2, 3, 12, 7), {2: [6, 6], 3: [4, 0, 8], 4: [2, 4, 0, 6]}),
    "avg-uneven-windows": (lambda: nn.AdaptiveAvgPool1d(4), (2, 3, 10), {2: [5, 5], 3: [5, 0, 5], 4: [5, 0, 5, 0]}),
    "max-uneven-windows": (lambda: nn.AdaptiveMaxPool3d((4, 2, 1)), (1, 2, 10, 5, 3),
                           {2: [5, 5], 3: [5, 0, 5], 4: [0, 5, 5, 0]}),
}


@pytest.mark.parametrize("kind", sorted(ADAPTIVE))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_adaptive_pool(kind, dtype):
    make, shape, sizes = ADAPTIVE[kind]
    for kw in [{"split": 2, "sizes": {2: sizes[P]}}] if P > 1 else [{"split": 2}]:
        check_module(make(), field(shape), kw, dtype)


@pytest.mark.parametrize("avg", [True, False], ids=["avg", "max"])
def test_adaptive_pool_global(avg):
    """Pooled to one cell along a cut axis (``AdaptiveAvgPool2d(1)``): a reduction over the ranks; whole result."""
    pool = F.adaptive_avg_pool2d if avg else F.adaptive_max_pool2d
    for _, kw in layouts((2, 3, 9, 6), 2):
        if "grid" in kw:  # the other cut axis (3) pooled to 2 windows of 3 cells: each inside its block
            check_function(lambda a: pool(a, (1, 2)), (field((2, 3, 9, 6)),), (kw,), torch.float64)
        else:
            check_function(lambda a: pool(a, 1), (field((2, 3, 9, 6)),), (kw,), torch.float64, whole_out=True)


def test_adaptive_pool_refuses_straddling_windows():
    if P > 1:
        x = dt.shard(field((1, 2, 12, 4)), split=2, sizes={2: [5] + [7 - (P - 2)] + [1] * (P - 2)})
        msg = assert_raises_everywhere(NotImplementedError, F.adaptive_avg_pool2d, x, (6, 4), match="straddle")
        assert "global shape (1, 2, 12, 4)" in msg and "no window across a block edge" in msg


RESIZE = {
    "bilinear-align": lambda: nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
    "linear-align-size": lambda: nn.Upsample(size=20, mode="linear", align_corners=True),
    "trilinear-align": lambda: nn.Upsample(size=(11, 7, 4), mode="trilinear", align_corners=True),
    "bilinear-fraction": lambda: nn.Upsample(scale_factor=1.5, mode="bilinear"),
    "bilinear-down": lambda: nn.Upsample(size=(5, 3), mode="bilinear"),
    "linear-down-align": lambda: nn.Upsample(size=4, mode="linear", align_corners=True),
}


@pytest.mark.parametrize("kind", sorted(RESIZE))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_linear_resize(kind, dtype):
    shape = {"linear-align-size": (2, 3, 13), "linear-down-align": (2, 3, 13), "trilinear-align": (1, 2, 7, 6, 5)}
    shape = shape.get(kind, (2, 3, 13, 8))
    for _, kw in layouts(shape, 2):
        check_module(RESIZE[kind](), field(shape), kw, dtype)
