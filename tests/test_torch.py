"""darray.torch against single-process torch: forward values, input and weight gradients, at 1-4 ranks.

Every check runs the same torch call twice, on the whole tensor in this
process and on a ShardTensor of it, and compares the gathered results (and
gradients) on every rank; the verdict is agreed over the ranks. Layouts:
balanced cuts, uneven cuts with empty blocks, one-cell blocks, and a 2x2
grid at four ranks.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.nn as nn
import torch.nn.functional as F

import darray as da
import darray.torch as dt
from darray.testing import agree, assert_raises_everywhere, uneven_sizes

pytestmark = [pytest.mark.mpi, pytest.mark.numpy_only(reason="torch blocks of their own; the local backend is moot")]

COMM = da.default_communicator()
P = COMM.size
TOL = {torch.float64: 1e-11, torch.float32: 2e-5}


def layouts(shape, axis):
    """``(id, shard keywords)`` over ``shape`` cutting ``axis``: balanced, uneven (an empty block), thin, 2x2."""
    n = shape[axis]
    out = [("split", {"split": axis})]
    if P > 1:
        out.append(("uneven", {"split": axis, "sizes": {axis: uneven_sizes(n, P)}}))
        out.append(("thin", {"split": axis, "sizes": {axis: [1] * (P - 1) + [n - (P - 1)]}}))
    if P == 4 and len(shape) >= 4:
        out.append(("grid2x2", {"split": (axis, axis + 1), "grid": (2, 2)}))
    return out


def close(got, want, dtype) -> bool:
    tol = TOL[dtype]
    return got.shape == want.shape and bool(torch.allclose(got, want, rtol=tol, atol=tol))


def check_module(module, x, kw, dtype=torch.float64, loss=lambda y: (y.sin() ** 2).mean()):
    """``module`` on ShardTensor(x) == on x: output, loss, input gradient, parameter gradients (agreed)."""
    module = module.to(dtype)
    module.zero_grad(set_to_none=True)
    ref = copy.deepcopy(module)
    x = x.to(dtype)
    xs = dt.shard(x, requires_grad=True, **kw)
    y = module(xs)
    lv = loss(y)
    lv.backward()
    xr = x.clone().requires_grad_()
    yr = ref(xr)
    lr = loss(yr)
    lr.backward()
    problems = []
    if not isinstance(y, dt.ShardTensor):
        problems.append(f"output is {type(y).__name__}")
    elif not close(y.full(), yr, dtype):
        problems.append("output")
    if not close(lv.detach(), lr.detach(), dtype):
        problems.append(f"loss {lv.item()} vs {lr.item()}")
    if not close(xs.grad.full(), xr.grad, dtype):
        problems.append("input gradient")
    for (name, p), q in zip(module.named_parameters(), ref.parameters()):
        if q.grad is not None and (p.grad is None or not close(p.grad, q.grad, dtype)):
            problems.append(f"gradient of {name}")
    for (name, b), c in zip(module.named_buffers(), ref.buffers()):
        if b.is_floating_point() and not close(b, c, dtype):
            problems.append(f"buffer {name}")
    assert not agree(COMM, not problems), f"rank {COMM.rank}: {problems}"


def field(shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


# ------------------------------------------------------------------ entry and exit
def test_shard_full_and_darray_without_copies():
    x = field((3, 10))
    for _, kw in layouts((3, 10), 1):
        s = dt.shard(x, **kw)
        assert tuple(s.shape) == (3, 10) and s.size(1) == 10 and s.numel() == 30
        d = s.to_darray()
        n = s.to_darray("numpy")
        back = dt.shard(n)  # a DArray of NumPy blocks: DLPack, no copy
        equal = [torch.equal(s.full(), x), torch.equal(back.full(), x), np.array_equal(n.gather(), x.numpy())]
        same = not s.local().numel() or (d.local.data_ptr() == s.local().data_ptr()
                                         and np.shares_memory(n.local, s.local().numpy())
                                         and back.local().data_ptr() == s.local().data_ptr())
        assert not agree(COMM, same and all(equal)), (same, equal)
    g = field((6, 5))
    a = da.asarray(g.numpy(), split=0)
    assert not agree(COMM, torch.equal(dt.shard(a).full(), g))


def test_full_is_differentiable():
    x = field((2, 9))
    s = dt.shard(x, split=1, requires_grad=True)
    (s.full() ** 2).sum().backward()
    assert not agree(COMM, torch.allclose(s.grad.full(), 2 * x))


# ------------------------------------------------------------------ convolutions
CONV = [  # (nsp, mode, stride, dilation, groups)
    (1, "zeros", 1, 1, 1), (1, "circular", 2, 1, 1), (1, "reflect", 1, 2, 2),
    (2, "zeros", 1, 1, 1), (2, "circular", 1, 1, 2), (2, "reflect", 2, 1, 1), (2, "replicate", 1, 2, 1),
    (3, "zeros", 1, 1, 1), (3, "circular", 2, 1, 1),
]


@pytest.mark.parametrize("nsp,mode,stride,dilation,groups", CONV, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
def test_conv(nsp, mode, stride, dilation, groups, dtype):
    shape = (2, 4) + (11, 6, 5)[:nsp]
    conv = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[nsp]
    torch.manual_seed(0)
    module = conv(4, 6, 3, padding=1, padding_mode=mode, stride=stride, dilation=dilation, groups=groups)
    for _, kw in layouts(shape, 2):
        check_module(module, field(shape), kw, dtype)


def test_conv_same_and_batch_cut():
    torch.manual_seed(1)
    module = nn.Conv2d(3, 2, (3, 5), padding="same")
    check_module(module, field((4, 3, 9, 8)), {"split": 2})
    check_module(module, field((4, 3, 9, 8)), {"split": 0})


def _moved(kw, shape, module):
    """Bytes all ranks send in ``module``'s forward (halo) and backward (halo_adjoint), from darray's tracer."""
    xs = dt.shard(field(shape), requires_grad=True, **kw)
    module(xs)  # a first call agrees on the halo layout (8 bytes, once)
    with da.tracing() as t:
        y = module(xs)
        y.sum().backward()
    sent = {"halo": 0, "halo_adjoint": 0}
    for e in t.events:
        if e["kind"] == "comm" and e["op"] in sent:
            sent[e["op"]] += e["nbytes"]
    other = [e["op"] for e in t.events if e["kind"] == "comm" and e["op"] not in sent]
    # the loss (y.sum()) and the weight and bias gradients, fused: one allreduce each
    assert not agree(COMM, len(other) == 2 * (P > 1)), other
    return tuple(int(v) for v in COMM.allreduce(np.array([sent["halo"], sent["halo_adjoint"]]), "sum"))


@pytest.mark.parametrize("mode", ["zeros", "circular"])
def test_conv_moves_its_halo(mode):
    """One convolution sends its halo forward and the same bytes back: the rows the kernel reads on each side of
    every cut, of every sample and channel (with the wrapped corner columns for the circular mode)."""
    n, c, h, w = 2, 3, 12, 7
    module = nn.Conv2d(c, c, 3, padding=1, padding_mode=mode).double()
    cuts = P - 1 if mode == "zeros" else P  # the circular pad wraps at the global edges too
    width = w if mode == "zeros" else w + 2
    expected = 2 * cuts * n * c * width * 8 if P > 1 else 0
    assert _moved({"split": 2}, (n, c, h, w), module) == (expected, expected)
    if mode == "zeros":  # two rows per side
        wide = nn.Conv2d(c, c, 5, padding=2).double()
        assert _moved({"split": 2}, (n, c, h, w), wide) == (2 * expected, 2 * expected)


# ------------------------------------------------------------------ norms, pooling, resampling
NORMS = {
    "group": lambda: nn.GroupNorm(2, 4),
    "batch": lambda: nn.BatchNorm2d(4),
    "instance": lambda: nn.InstanceNorm2d(4, affine=True),
    "layer": lambda: nn.LayerNorm([9, 8]),
}


@pytest.mark.parametrize("kind", sorted(NORMS))
def test_norm(kind):
    torch.manual_seed(2)
    module = NORMS[kind]()
    with torch.no_grad():
        for p in module.parameters():
            p.add_(torch.randn(p.shape, dtype=p.dtype))
    for _, kw in layouts((3, 4, 9, 8), 2):
        check_module(copy.deepcopy(module), field((3, 4, 9, 8)) * 3 + 1, kw)
    check_module(copy.deepcopy(module), field((4, 4, 9, 8)), {"split": 0})  # batch ranks (BatchNorm sums them)
    if kind == "batch":
        module.eval()
        check_module(module, field((3, 4, 9, 8)), {"split": 2})


POOL = {
    "max": lambda: nn.MaxPool2d(2),
    "max-pad-dil": lambda: nn.MaxPool2d(3, stride=2, padding=1, dilation=1, ceil_mode=True),
    "avg": lambda: nn.AvgPool2d(3, stride=2, padding=1),
    "avg-exclude": lambda: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False, ceil_mode=True),
    "avg1d": lambda: nn.AvgPool1d(2),
    "max3d": lambda: nn.MaxPool3d(2),
    "up-nearest": lambda: nn.Upsample(scale_factor=2),
    "up-bilinear": lambda: nn.Upsample(scale_factor=2, mode="bilinear"),
    "up-linear": lambda: nn.Upsample(scale_factor=3, mode="linear"),
    "up-trilinear": lambda: nn.Upsample(scale_factor=2, mode="trilinear"),
}


@pytest.mark.parametrize("kind", sorted(POOL))
def test_pool_and_resample(kind):
    shape = {"avg1d": (2, 3, 13), "up-linear": (2, 3, 13), "max3d": (1, 2, 9, 6, 5), "up-trilinear": (1, 2, 7, 6, 5)}
    shape = shape.get(kind, (2, 3, 13, 8))
    for _, kw in layouts(shape, 2):
        check_module(POOL[kind](), field(shape), kw)


def test_pad_then_elementwise():
    """A pending F.pad on a cut axis is materialised by any other op (reflect, replicate, circular, constant)."""
    for mode in ("reflect", "replicate", "circular", "constant"):
        for _, kw in layouts((2, 3, 9, 5), 2):
            check_module(nn.Identity(), field((2, 3, 9, 5)), kw,
                         loss=lambda y, m=mode: (F.pad(y, (1, 2, 2, 1), mode=m) ** 2 * 1.5).sum())


# ------------------------------------------------------------------ elementwise, linear, reductions, losses
class Mixed(nn.Module):
    """Elementwise ops with a whole-field parameter (cut to the blocks), permute, linear, reshape, cat."""

    def __init__(self):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(1, 1, 9, 8, dtype=torch.float64))
        self.lin = nn.Linear(4, 5)

    def forward(self, x):
        x = F.silu(x * 2 + self.pos) - torch.tanh(x) / 3
        x = self.lin(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        x = torch.cat([x, x.relu()], dim=1)
        return x.reshape(2, 2, 5, 9, 8).sum(1) + x.softmax(dim=1)[:, :5]


def test_elementwise_linear_and_shapes():
    torch.manual_seed(3)
    for _, kw in layouts((2, 4, 9, 8), 2):
        check_module(Mixed(), field((2, 4, 9, 8)), kw)


REDUCTIONS = {
    "sum": lambda y: y.sum(), "mean-dims": lambda y: y.mean(dim=(2, 3)).pow(2).sum(),
    "var": lambda y: y.var(dim=2).sum() + y.std(), "amax": lambda y: y.amax() + y.amin(dim=2).sum(),
    "mse": lambda y: F.mse_loss(y, torch.ones_like(y) * 0.5), "l1": lambda y: F.l1_loss(y, y.detach() * 0.5),
    "huber": lambda y: F.huber_loss(y, y.detach().cos()),
    "bce-logits": lambda y: F.binary_cross_entropy_with_logits(y, torch.sigmoid(y.detach() * 2)),
    "cross-entropy": lambda y: F.cross_entropy(y, (y.detach().abs().argmax(dim=1))),
}


@pytest.mark.parametrize("kind", sorted(REDUCTIONS))
def test_reductions_and_losses(kind):
    if kind == "cross-entropy":
        def loss(y):
            target = torch.arange(2 * 9 * 8).reshape(2, 9, 8) % 4
            if isinstance(y, dt.ShardTensor):  # cut like the input, without its class axis
                cuts = y._dlayout
                target = dt.shard(target, split=tuple(None if a is None else a - 1 for a in cuts.split),
                                  grid=cuts.dims, sizes={a - 1: cuts.sizes[a] for a in cuts.split if a})
            return F.cross_entropy(y, target)
    else:
        loss = REDUCTIONS[kind]
    for _, kw in layouts((2, 4, 9, 8), 2):
        check_module(nn.Identity(), field((2, 4, 9, 8)), kw, loss=loss)


def test_fused_gradient_sum_and_optimizer_step():
    """Weights used several times get one summed gradient; an optimizer step matches one process."""
    torch.manual_seed(4)
    conv = nn.Conv2d(2, 2, 3, padding=1).double()
    ref = copy.deepcopy(conv)
    x = field((1, 2, 10, 6))
    for model, inp in ((conv, dt.shard(x, split=2)), (ref, x)):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            (model(model(inp)) ** 2).mean().backward()
            opt.step()
    assert not agree(COMM, all(torch.allclose(a, b, rtol=1e-12, atol=1e-14)
                           for a, b in zip(conv.parameters(), ref.parameters())))


# ------------------------------------------------------------------ what is not covered
def test_uncovered_op_raises_naming_op_and_layout():
    s = dt.shard(field((2, 8)), split=1)
    msg = assert_raises_everywhere(NotImplementedError, torch.sort, s, match="sort")
    assert "global shape (2, 8)" in msg and "darray.torch.register" in msg
    if P > 1:  # (at one rank nothing is cut)
        assert_raises_everywhere(NotImplementedError, torch.softmax, s, 1, match="cut")
        assert_raises_everywhere(NotImplementedError, lambda: s[:, 1:3], match="index")
        assert_raises_everywhere(NotImplementedError, F.linear, s, torch.ones(3, 8), match="contracted")
    assert_raises_everywhere(NotImplementedError, lambda: bool(s > 0), match="truth value")


def test_register_a_rule():
    @dt.register(torch.special.expit)
    def _expit(func, args, kwargs):
        x = args[0]
        return dt.wrap(func(dt.local(x)), x._dlayout, x._dcomm)

    try:
        x = field((2, 7))
        assert not agree(COMM, torch.allclose(torch.special.expit(dt.shard(x, split=1)).full(), torch.special.expit(x)))
    finally:
        del dt.RULES[torch.special.expit]


def test_unet_example_equals_one_process():
    """The UNet of examples/torch_unet_unchanged.py: losses and weights equal to plain torch after 2 steps."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
    try:
        import torch_unet_unchanged as example
    finally:
        sys.path.pop(0)
    code = example.main(["--n", "16", "--steps", "2", "--width", "4", "--check"])
    assert not agree(COMM, code == 0)
