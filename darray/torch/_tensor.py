"""The :class:`ShardTensor` type, its rule table and the way in and out (:func:`shard`).

A ShardTensor *is* this rank's block (a ``torch.Tensor`` subclass over the
block's memory, in torch's autograd graph) plus the darray
:class:`~darray._layout.Layout` of the global tensor and the communicator.
Every torch function that meets one goes through
:meth:`ShardTensor.__torch_function__`, which looks the function up in
:data:`RULES` and raises :class:`NotImplementedError` naming the function and
the layout when no rule covers it: nothing is ever gathered silently.
"""

from __future__ import annotations

import torch

from .._comm import default_communicator
from .._comm.base import Communicator
from .._core import DArray
from .._errors import message
from .._layout import Layout
from ._collective import gather

__all__ = ["ShardTensor", "shard", "register", "RULES", "local", "wrap", "is_shard", "unsupported", "op_name",
           "bind_arguments"]

#: torch function -> ``rule(func, args, kwargs)``; extended with :func:`register`.
RULES: dict = {}


def register(*funcs):
    """Decorator: ``rule(func, args, kwargs)`` handles ``funcs`` when a ShardTensor meets them.

    A rule receives the call as torch made it (ShardTensors in ``args`` /
    ``kwargs``), works on the blocks (:func:`local`) and returns ShardTensors
    (:func:`wrap`) or plain tensors (replicated results).

    Examples
    --------
    >>> import torch
    >>> from darray.torch import RULES, register, local, wrap
    >>> @register(torch.special.expit)
    ... def _expit(func, args, kwargs):
    ...     x = args[0]
    ...     return wrap(torch.special.expit(local(x)), x._dlayout, x._dcomm)
    >>> del RULES[torch.special.expit]
    """
    def decorate(rule):
        for f in funcs:
            RULES[f] = rule
        return rule

    return decorate


def op_name(func) -> str:
    """A readable name of a torch function (``torch.nn.functional.conv2d``, ``Tensor.add_``, ``Tensor.shape``)."""
    if getattr(func, "__name__", "") in ("__get__", "__set__"):
        return f"Tensor.{getattr(func.__self__, '__name__', '?')} ({func.__name__.strip('_')})"
    mod = getattr(func, "__module__", None) or ""
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    if name.startswith("TensorBase."):
        name = "Tensor." + name[len("TensorBase."):]
    return f"{mod}.{name}" if mod and not name.startswith("Tensor.") else name


def describe(layout: Layout) -> str:
    cuts = ", ".join(f"axis {a} over {layout.dims[g]} ranks" for g, a in enumerate(layout.split) if a is not None)
    return f"global shape {layout.shape} cut {cuts or 'nowhere'} (grid {layout.dims})"


def unsupported(func, x, why: str = "no rule covers it") -> NotImplementedError:
    """The error for an op without a rule on this layout (raised alike on every rank, before any message)."""
    return NotImplementedError(message(
        "darray.torch", f"{op_name(func)} on a ShardTensor: {why}", describe(x._dlayout),
        "an op with a rule (add one with darray.torch.register, see the module docs), or x.full() first "
        "to gather explicitly"))


def is_shard(x) -> bool:
    return isinstance(x, ShardTensor)


def local(x):
    """The block of ShardTensor ``x`` as a plain tensor (same memory, same autograd graph)."""
    with torch._C.DisableTorchFunctionSubclass():
        if x._dpad is not None:
            from ._pad import materialize

            return materialize(x)
        return x.as_subclass(torch.Tensor)


def bind_arguments(args, kwargs, names, defaults) -> dict:
    """A torch function's arguments by name: ``defaults``, then ``args`` in the order of ``names``, then ``kwargs``."""
    out = dict(defaults)
    out.update(zip(names, args))
    out.update(kwargs)
    return out


def wrap(block, layout: Layout, comm, pad=None) -> ShardTensor:
    """``block`` (a plain tensor, this rank's block of ``layout``) as a ShardTensor (no copy)."""
    with torch._C.DisableTorchFunctionSubclass():
        out = block.as_subclass(ShardTensor)
    out._dlayout, out._dcomm, out._dpad = layout, comm, pad
    return out


class ShardTensor(torch.Tensor):
    """A torch tensor cut into blocks over ranks: this rank's block plus the global layout.

    Made by :func:`shard`; ``x.shape`` and ``x.size()`` are global, the
    memory is the block's (``x.local()``). ``x.full()`` gathers the whole
    tensor (differentiable), ``x.to_darray()`` is the same blocks as a
    :class:`~darray.DArray` (no copy).
    """

    _dlayout: Layout
    _dcomm: Communicator
    _dpad: object = None

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        rule = RULES.get(func)
        if rule is None and getattr(func, "__name__", "") in ("__get__", "__set__"):
            rule = _attribute
        if rule is None:
            first = next(a for a in _walk(args, kwargs) if isinstance(a, ShardTensor))
            raise unsupported(func, first)
        return rule(func, args, kwargs)

    # ------------------------------------------------------------ not torch functions: plain methods
    def local(self) -> torch.Tensor:
        """This rank's block (a plain tensor over the same memory, in the same autograd graph)."""
        return local(self)

    @property
    def layout_(self) -> Layout:
        """The darray layout of the global tensor (replicated metadata)."""
        return self._dlayout

    def full(self) -> torch.Tensor:
        """The whole tensor on every rank (collective; differentiable: the gradient comes back to the blocks)."""
        return gather(local(self), self._dlayout, self._dcomm)

    def to_darray(self, backend: str = "torch") -> DArray:
        """The same blocks as a :class:`~darray.DArray` without a copy: torch blocks, or ``backend="numpy"``
        through DLPack (CPU tensors; the memory is shared, so writes show through both)."""
        block = local(self).detach()
        if backend == "numpy":
            import numpy as np

            block = np.from_dlpack(block)
        elif backend != "torch":
            raise ValueError(message("to_darray", "unknown backend", backend, "'torch' or 'numpy'"))
        from .._backend import namespace_of

        return DArray._wrap(block, self._dlayout, self._dcomm, namespace_of(block))

    def __repr__(self, **kwargs) -> str:
        return f"ShardTensor({describe(self._dlayout)}, block={tuple(local(self).shape)}, rank {self._dcomm.rank})"


def _walk(args, kwargs):
    for a in (*args, *kwargs.values()):
        if isinstance(a, (list, tuple)):
            yield from a
        else:
            yield a


# ------------------------------------------------------------------ metadata and plumbing
def _attribute(func, args, kwargs):
    """Attributes: ``shape`` is global, ``grad`` / ``data`` are ShardTensors, the rest are the block's."""
    x = args[0]
    name = getattr(func.__self__, "__name__", "")
    if func.__name__ == "__get__":
        if name == "shape":
            return torch.Size(x._dlayout.shape)
        with torch._C.DisableTorchFunctionSubclass():
            value = func(*args, **kwargs)
        if name in ("grad", "data") and isinstance(value, torch.Tensor):
            return wrap(value.as_subclass(torch.Tensor), x._dlayout, x._dcomm)
        if name in ("T", "mT", "H", "mH", "real", "imag"):
            raise unsupported(func, x)
        return value
    value = args[1]
    if isinstance(value, ShardTensor):
        value = local(value)
    with torch._C.DisableTorchFunctionSubclass():
        return func(x, value)


@register(torch.Tensor.size)
def _size(func, args, kwargs):
    x = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim")
    shape = torch.Size(x._dlayout.shape)
    return shape if dim is None else shape[dim]


@register(torch.Tensor.numel, torch.numel, torch.Tensor.nelement)
def _numel(func, args, kwargs):
    n = 1
    for s in args[0]._dlayout.shape:
        n *= s
    return n


@register(torch.Tensor.__len__)
def _len(func, args, kwargs):
    return args[0]._dlayout.shape[0]


_PASS = (torch.Tensor.dim, torch.Tensor.ndimension, torch.Tensor.is_floating_point, torch.Tensor.is_complex,
         torch.Tensor.element_size, torch.Tensor.get_device, torch.Tensor.is_contiguous, torch.Tensor.data_ptr,
         torch.Tensor.register_hook, torch.Tensor.retain_grad, torch.Tensor.__hash__, torch.Tensor.storage_offset,
         torch.Tensor.untyped_storage, torch.is_floating_point, torch.is_complex, torch.Tensor.__bool__)


@register(*_PASS)
def _passthrough(func, args, kwargs):
    if func is torch.Tensor.__bool__ and args[0]._dlayout.shape != ():
        raise unsupported(func, args[0], "the truth value of a cut tensor needs its cells from every rank")
    with torch._C.DisableTorchFunctionSubclass():
        return func(*args, **kwargs)


_SAME_LAYOUT = (torch.Tensor.detach, torch.detach, torch.Tensor.clone, torch.clone, torch.Tensor.contiguous,
                torch.Tensor.to, torch.Tensor.float, torch.Tensor.double, torch.Tensor.half, torch.Tensor.bfloat16,
                torch.Tensor.type, torch.Tensor.cpu, torch.Tensor.cuda, torch.Tensor.type_as,
                torch.Tensor.requires_grad_, torch.Tensor.detach_, torch.Tensor.zero_, torch.Tensor.fill_,
                torch.zeros_like, torch.ones_like, torch.empty_like, torch.rand_like, torch.randn_like,
                torch.full_like, torch.Tensor.new_zeros)


@register(*_SAME_LAYOUT)
def _same_layout(func, args, kwargs):
    """Ops of one block that keep the layout (copies, casts, fills, ``*_like``): run on the block."""
    x = args[0]
    if func is torch.Tensor.new_zeros:
        raise unsupported(func, x, "a new tensor of a given shape has no layout")
    rest = [local(a) if isinstance(a, ShardTensor) else a for a in args[1:]]
    out = func(local(x), *rest, **kwargs)
    if func in (torch.Tensor.requires_grad_, torch.Tensor.detach_, torch.Tensor.zero_, torch.Tensor.fill_):
        return x
    return wrap(out, x._dlayout, x._dcomm) if isinstance(out, torch.Tensor) else out


@register(torch.Tensor.backward)
def _backward(func, args, kwargs):
    x = args[0]
    gradient = args[1] if len(args) > 1 else kwargs.pop("gradient", None)
    if gradient is None:
        raise unsupported(func, x, "backward() of a cut tensor needs its gradient (reduce it to a loss first)")
    gradient = local(gradient) if isinstance(gradient, ShardTensor) else gradient
    return torch.autograd.backward(local(x), gradient, **kwargs)


# ------------------------------------------------------------------ entry
def shard(tensor, split=None, grid=None, sizes=None, comm=None, requires_grad: bool | None = None) -> ShardTensor:
    """Cut ``tensor`` over the ranks: a :class:`ShardTensor` holding this rank's block.

    Parameters
    ----------
    tensor : a ``torch.Tensor`` (the same whole tensor on every rank; the
        block is a differentiable slice of it) or a :class:`~darray.DArray`
        (its blocks, without a copy: torch blocks as they are, other CPU
        blocks through DLPack).
    split, grid, sizes : the layout, as in :func:`darray.asarray`: the axis
        (or axes) cut and the grid of ranks, optional block sizes (uneven and
        empty blocks allowed). Ignored for a DArray, which keeps its own.
    comm : the communicator (default: darray's).
    requires_grad : make the ShardTensor a leaf that records gradients.

    Examples
    --------
    >>> import torch, darray.torch as dt
    >>> x = dt.shard(torch.arange(12.0).reshape(3, 4), split=1)
    >>> tuple(x.shape)
    (3, 4)
    >>> torch.equal(x.full(), torch.arange(12.0).reshape(3, 4))
    True
    """
    if isinstance(tensor, DArray):
        d = tensor
        block = d.local
        if not isinstance(block, torch.Tensor):
            block = torch.from_dlpack(block)
        layout = d._layout.without_halo()
        comm = d._comm
    elif isinstance(tensor, torch.Tensor):
        if isinstance(tensor, ShardTensor):
            raise TypeError(message("shard", "tensor is already a ShardTensor", describe(tensor._dlayout),
                                    "a plain torch.Tensor or a DArray"))
        comm = comm or default_communicator()
        layout = Layout.create("shard", tuple(tensor.shape), comm.size, split=split, grid=grid, sizes=sizes)
        block = tensor[layout.block_slices(comm.rank)]
    else:
        raise TypeError(message("shard", "expected a torch.Tensor or a darray.DArray", type(tensor).__name__))
    if requires_grad:
        leaf = torch.Tensor._make_subclass(ShardTensor, block.detach(), True)
        leaf._dlayout, leaf._dcomm, leaf._dpad = layout, comm, None
        return leaf
    return wrap(block, layout, comm)
