"""The communication of :mod:`darray.torch` as torch autograd functions, each with its adjoint.

Gradients follow one convention: a tensor that every rank holds whole (a
plain ``torch.Tensor``: a weight, a loss) carries its *whole* gradient on
every rank; a :class:`~darray.torch.ShardTensor` carries the gradient of its
own block. Hence the four pairs:

================  ==========================================  ==========================================
function          forward                                     backward
================  ==========================================  ==========================================
``halo``          ghost cells from the neighbours             ghost gradients added on their owners
``to_replicated`` partial sums summed over the domain ranks   identity (the loss is one value)
``all_sum``       as ``to_replicated``                         summed again (a statistic used per block)
``promote``       identity (a whole tensor meets blocks)      the block partials summed over the ranks
================  ==========================================  ==========================================

A leaf ``promote`` (an ``nn.Parameter``) defers its sum: the partial
gradients of every parameter are kept until the end of ``backward()`` and
then summed in one fused allreduce per dtype (:func:`sync_gradients`),
queued on torch's autograd engine the way DDP does.
"""

from __future__ import annotations

import torch

from .._api.overlap import with_halo
from .._backend import namespace_of
from .._core import DArray
from .._core.halo import accumulate_halos
from .._core.reductions import combine
from ..autodiff.rules import fold_boundaries

__all__ = ["halo", "to_replicated", "all_sum", "promote", "sync_gradients", "gather"]

_ENGINE = {"circular": "periodic", "replicate": "nearest", "reflect": "none"}


def _darray(block, layout, comm) -> DArray:
    return DArray._wrap(block, layout, comm, namespace_of(block))


def _reflect(block, layout, rank, adjoint: bool) -> None:
    """torch's ``reflect`` padding (NumPy's ``reflect``: the edge cell not repeated) of the ghosts past the
    global edges, in place; ``adjoint``: their gradients added to their sources, axis by axis in reverse."""
    starts, shape = layout.block_start(rank), layout.block_shape(rank)
    axes = [a for a in range(layout.ndim) if layout.halo[a] and layout.boundary[a] == "none"]
    for axis in (reversed(axes) if adjoint else axes):
        h, n, first = layout.halo[axis], layout.shape[axis], starts[axis] - layout.halo[axis]
        for p in range(shape[axis] + 2 * h):
            g = first + p
            if 0 <= g < n:
                continue
            src = -g if g < 0 else 2 * (n - 1) - g
            here, there = block.narrow(axis, p, 1), block.narrow(axis, src - first, 1)
            if adjoint:
                there += here
                here.zero_()
            else:
                here.copy_(there)


class _Halo(torch.autograd.Function):
    @staticmethod
    def forward(ctx, local, layout, comm, depth, mode, value):
        boundary = tuple(float(value) if mode == "constant" else _ENGINE[mode] for _ in depth)
        padded = with_halo(_darray(local.detach().contiguous(), layout, comm), depth, boundary)
        block = padded._block
        if mode == "reflect":
            _reflect(block, padded._layout, comm.rank, adjoint=False)
        ctx.layout, ctx.comm, ctx.mode = padded._layout, comm, mode
        return block

    @staticmethod
    def backward(ctx, g):
        g = g.contiguous().clone()
        if ctx.mode == "reflect":
            _reflect(g, ctx.layout, ctx.comm.rank, adjoint=True)
        gd = _darray(g, ctx.layout, ctx.comm)
        if ctx.mode == "replicate":
            fold_boundaries(gd)
        return accumulate_halos(gd).local, None, None, None, None, None


def halo(local, layout, comm, depth, mode="constant", value=0.0):
    """``local`` (the block of ``layout``) padded by ``depth`` ghost cells per axis, exchanged through darray's
    halo engine; cells past the global edges follow torch's padding ``mode`` (``constant``, ``reflect``,
    ``replicate``, ``circular``). Backward sends the ghost gradients back to their owners and adds them."""
    return _Halo.apply(local, layout, comm, tuple(depth), mode, value)


class _ToReplicated(torch.autograd.Function):
    @staticmethod
    def forward(ctx, partial, comm, layout, cut):
        return combine(partial.detach().contiguous(), "sum", comm, layout, cut).clone()

    @staticmethod
    def backward(ctx, g):
        return g, None, None, None


def to_replicated(partial, comm, layout, cut=None):
    """The sum of ``partial`` over the grid dims ``cut`` of ``layout`` (default: every cutting dim); its gradient
    passes through unchanged (a replicated result carries its whole gradient on every rank)."""
    return _ToReplicated.apply(partial, comm, layout, cut)


class _AllSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, partial, comm, layout, cut):
        ctx.args = (comm, layout, cut)
        return combine(partial.detach().contiguous(), "sum", comm, layout, cut).clone()

    @staticmethod
    def backward(ctx, g):
        comm, layout, cut = ctx.args
        return combine(g.contiguous(), "sum", comm, layout, cut).clone(), None, None, None


def all_sum(partial, comm, layout, cut=None):
    """A statistic summed over the ranks that is then used on every block (norms): summed forward and backward."""
    return _AllSum.apply(partial, comm, layout, cut)


class _Promote(torch.autograd.Function):
    @staticmethod
    def forward(ctx, whole, comm, layout, cut):
        ctx.args = (comm, layout, cut)
        return whole.view_as(whole)

    @staticmethod
    def backward(ctx, g):
        comm, layout, cut = ctx.args
        return combine(g.contiguous(), "sum", comm, layout, cut).clone(), None, None, None


class _Pending:
    """Partial gradients of promoted leaves, summed at the end of ``backward()`` (one allreduce per group)."""

    def __init__(self):
        self.grads: dict = {}  # id(param) -> [order, param, partial, (comm, layout, cut)]
        self.queued = False
        self.order = 0


_PENDING = _Pending()


class _PromoteLeaf(torch.autograd.Function):
    @staticmethod
    def forward(ctx, param, comm, layout, cut, order):
        ctx.param, ctx.args, ctx.order = param, (comm, layout, cut), order
        return param.view_as(param)

    @staticmethod
    def backward(ctx, g):
        entry = _PENDING.grads.get(id(ctx.param))
        if entry is None:
            _PENDING.grads[id(ctx.param)] = [ctx.order, ctx.param, g.clone(), ctx.args]
        else:
            entry[0] = min(entry[0], ctx.order)
            entry[2] = entry[2] + g
        if not _PENDING.queued:
            _PENDING.queued = True
            torch.autograd.Variable._execution_engine.queue_callback(sync_gradients)
        return None, None, None, None, None


def promote(t, comm, layout, cut=None):
    """``t`` (held whole on every rank) used against the blocks of ``layout``: the gradient of the blocks'
    uses is summed over the grid dims ``cut``. A leaf (a parameter) defers the sum to :func:`sync_gradients`,
    fused with every other parameter's."""
    if not isinstance(t, torch.Tensor) or not t.requires_grad or not any(
            cut if cut is not None else (s is not None for s in layout.split)):
        return t
    if t.is_leaf:
        _PENDING.order += 1
        return _PromoteLeaf.apply(t, comm, layout, cut, _PENDING.order)
    return _Promote.apply(t, comm, layout, cut)


def sync_gradients() -> None:
    """Sum the pending partial gradients of the promoted parameters over the domain ranks and add them to
    ``param.grad``: one allreduce per (ranks, dtype) group, in the order the parameters were first used.

    Runs by itself at the end of ``loss.backward()``; call it after
    ``torch.autograd.backward`` variants that do not run engine callbacks.
    Collective over the ranks of the parameters' layouts.
    """
    entries = sorted(_PENDING.grads.values(), key=lambda e: e[0])
    _PENDING.grads, _PENDING.queued = {}, False
    groups: dict = {}
    for entry in entries:
        comm, layout, cut = entry[3]
        key = (id(comm), layout.dims, tuple(cut) if cut is not None else tuple(s is not None for s in layout.split),
               entry[2].dtype, entry[2].device)
        groups.setdefault(key, []).append(entry)
    for group in groups.values():
        comm, layout, cut = group[0][3]
        flat = torch.cat([e[2].reshape(-1) for e in group])
        total = combine(flat, "sum", comm, layout, cut)
        offset = 0
        for _, param, partial, _ in group:
            part = total[offset:offset + partial.numel()].reshape(partial.shape).to(param.dtype)
            offset += partial.numel()
            with torch.no_grad():
                if param.grad is None:
                    param.grad = part.clone()
                else:
                    param.grad += part


class _Gather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, local, layout, comm):
        ctx.slices = layout.block_slices(comm.rank)
        out = _darray(local.detach().contiguous(), layout, comm).gather()
        return out if isinstance(out, torch.Tensor) else torch.as_tensor(out)

    @staticmethod
    def backward(ctx, g):
        return g[ctx.slices].contiguous(), None, None


def gather(local, layout, comm):
    """The whole tensor on every rank; its gradient (whole on every rank) is cut back to the block."""
    return _Gather.apply(local, layout, comm)


class _Redistribute(torch.autograd.Function):
    @staticmethod
    def forward(ctx, local, source, target, comm):
        from .._core.redistribute import redistribute_to

        ctx.args = (source, target, comm)
        return redistribute_to(_darray(local.detach().contiguous(), source, comm), target).local

    @staticmethod
    def backward(ctx, g):
        from .._core.redistribute import redistribute_to

        source, target, comm = ctx.args
        return redistribute_to(_darray(g.contiguous(), target, comm), source).local, None, None, None


def redistribute(local, source, target, comm):
    """The block of ``target`` from the blocks of ``source`` (same global shape): only the cells that change
    owner move (darray's redistribution); backward moves their gradients back."""
    return _Redistribute.apply(local, source, target, comm)
