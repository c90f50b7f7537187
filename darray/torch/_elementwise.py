"""Elementwise ops, activations and softmax on ShardTensors: local on every block.

Operands are aligned on the global shapes (NumPy broadcasting): a
ShardTensor of the result's layout gives its block; a plain tensor (a
weight, a bias, a constant) of a cut axis's full length is cut to the block
there and broadcast elsewhere, and *promoted*: its gradient, partial on each
block, is summed over the ranks in backward (:func:`darray.torch.promote`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .._errors import message
from .._layout import Layout
from ._collective import promote, redistribute
from ._tensor import ShardTensor, local, register, unsupported, wrap

__all__ = ["align", "out_layout", "elementwise"]

_UNARY = ("abs", "neg", "negative", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin",
          "cos", "tan", "tanh", "sinh", "cosh", "asin", "acos", "atan", "arcsin", "arccos", "arctan", "sigmoid",
          "relu", "sign", "sgn", "floor", "ceil", "round", "trunc", "frac", "reciprocal", "square", "erf", "erfc",
          "erfinv", "logical_not", "isnan", "isfinite", "isinf", "nan_to_num", "positive", "bitwise_not", "logit",
          "deg2rad", "rad2deg", "signbit")
_BINARY = ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "pow", "float_power",
           "maximum", "minimum", "fmax", "fmin", "atan2", "arctan2", "remainder", "fmod", "eq", "ne", "lt", "le",
           "gt", "ge", "greater", "less", "greater_equal", "less_equal", "not_equal", "logical_and", "logical_or",
           "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "where", "clamp", "clip", "clamp_min",
           "clamp_max", "lerp", "addcmul", "addcdiv", "hypot", "copysign", "floor_divide", "xlogy", "heaviside",
           "masked_fill", "isclose")
_DUNDER = ("add", "radd", "iadd", "sub", "rsub", "isub", "mul", "rmul", "imul", "truediv", "rtruediv", "itruediv",
           "div", "rdiv", "idiv", "pow", "rpow", "ipow", "neg", "abs", "pos", "eq", "ne", "lt", "le", "gt", "ge", "and",
           "rand", "iand", "or", "ror", "ior", "xor", "rxor", "ixor", "invert", "floordiv", "rfloordiv", "ifloordiv",
           "mod", "rmod", "imod")
_ACTIVATIONS = ("relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish", "softplus", "softsign",
                "hardtanh", "hardswish", "hardsigmoid", "sigmoid", "tanh", "logsigmoid", "tanhshrink", "threshold",
                "softshrink", "hardshrink", "prelu", "rrelu", "glu_", "relu_", "elu_", "leaky_relu_", "hardtanh_",
                "celu_", "selu_", "threshold_", "rrelu_")


def _funcs():
    out = []
    for name in _UNARY + _BINARY:
        for owner in (torch, torch.Tensor, torch.special):
            f = getattr(owner, name, None)
            if f is not None:
                out.append(f)
        f = getattr(torch.Tensor, name + "_", None)
        if f is not None:
            out.append(f)
    for name in _DUNDER:
        f = getattr(torch.Tensor, f"__{name}__", None)
        if f is not None:
            out.append(f)
    for name in _ACTIVATIONS:
        f = getattr(F, name, None)
        if f is not None:
            out.append(f)
    return out


def out_layout(func, shards) -> Layout:
    """The layout of the result: the broadcast shape, cut like the operand that has it."""
    shape = torch.broadcast_shapes(*(tuple(s._dlayout.shape) for s in shards))
    for s in shards:
        if tuple(s._dlayout.shape) == tuple(shape):
            return s._dlayout
    raise unsupported(func, shards[0], f"no operand has the broadcast shape {tuple(shape)}")


def align(func, a, layout: Layout, comm):
    """Operand ``a`` as a block-aligned local operand of a result of ``layout`` (promoted when whole)."""
    lead = len(layout.shape)
    if isinstance(a, ShardTensor):
        al = a._dlayout
        if al is layout or al == layout:
            return local(a)
        if al.shape == layout.shape and al.dims == layout.dims:  # the same cells cut elsewhere: move what differs
            return redistribute(local(a), al, layout, comm)
        off = lead - len(al.shape)
        cut = []
        for g, axis in enumerate(layout.split):
            if axis is None:
                cut.append(False)
                continue
            i = axis - off
            if i >= 0 and al.shape[i] == layout.shape[axis] and al.split[g] == i and al.sizes[i] == layout.sizes[axis]:
                cut.append(False)
            elif i < 0 or al.shape[i] == 1:
                cut.append(True)
            else:
                raise unsupported(func, a, f"its blocks do not match the other operand's ({layout.sizes})")
        if any(al.split[g] is not None and not (layout.split[g] is not None and al.split[g] == layout.split[g] - off)
               for g in range(len(al.split))):
            raise unsupported(func, a, f"it is cut where the result ({layout.shape}, split {layout.split}) is not")
        return promote(local(a), comm, layout, tuple(cut)) if any(cut) else local(a)
    if not isinstance(a, torch.Tensor) or a.ndim == 0:
        return a
    if a.ndim > lead:
        raise ValueError(message(op_label(func), "operand has more axes than the cut tensor", tuple(a.shape),
                                 f"at most {lead} axes"))
    off = lead - a.ndim
    out = promote(a, comm, layout)
    for _g, axis in enumerate(layout.split):
        if axis is None or axis < off or a.shape[axis - off] == 1:
            continue
        if a.shape[axis - off] != layout.shape[axis]:
            raise ValueError(message(op_label(func), "operands do not broadcast", tuple(a.shape),
                                     f"a shape broadcasting against {layout.shape}"))
        sl = layout.block_slices(comm.rank)[axis]
        out = out.narrow(axis - off, sl.start, sl.stop - sl.start)
    return out


def op_label(func) -> str:
    from ._tensor import op_name

    return op_name(func)


def _shards(args, kwargs):
    found = []
    for a in (*args, *kwargs.values()):
        for b in (a if isinstance(a, (list, tuple)) else (a,)):
            if isinstance(b, ShardTensor):
                found.append(b)
    return found


def _inplace(func, kwargs) -> bool:
    name = getattr(func, "__name__", "")
    return kwargs.get("inplace", False) or (name.endswith("_") and not name.endswith("__")) or \
        name in ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__idiv__", "__ipow__", "__iand__", "__ior__",
                 "__ixor__", "__ifloordiv__", "__imod__")


def elementwise(func, args, kwargs):
    shards = _shards(args, kwargs)
    layout = out_layout(func, shards)
    comm = shards[0]._dcomm
    if _inplace(func, kwargs) and not (isinstance(args[0], ShardTensor) and args[0]._dlayout == layout):
        raise unsupported(func, shards[0], "an in-place op must write into the operand with the result's layout")
    largs = [align(func, a, layout, comm) for a in args]
    lkw = {k: align(func, v, layout, comm) for k, v in kwargs.items()}
    out = func(*largs, **lkw)
    if _inplace(func, kwargs):
        return args[0]
    if isinstance(out, torch.Tensor):
        return wrap(out, layout, comm)
    return out


register(*_funcs())(elementwise)


@register(F.dropout, F.alpha_dropout, F.feature_alpha_dropout, F.dropout1d, F.dropout2d, F.dropout3d,
          torch.dropout, torch.Tensor.dropout if hasattr(torch.Tensor, "dropout") else F.dropout)
def _dropout(func, args, kwargs):
    """Dropout: an independent mask on every block (a different draw than one process would make)."""
    x = args[0]
    names = ("p", "training", "inplace")
    bound = dict(zip(names, args[1:]), **kwargs)
    if func in (F.dropout1d, F.dropout2d, F.dropout3d, F.feature_alpha_dropout) and bound.get("training", True) \
            and bound.get("p", 0.5) > 0:
        raise unsupported(func, x, "channel dropout draws one mask per channel, which the blocks would not share")
    return elementwise(func, args, kwargs)


@register(F.softmax, F.log_softmax, torch.softmax, torch.log_softmax, torch.Tensor.softmax,
          torch.Tensor.log_softmax, torch.cumsum, torch.Tensor.cumsum, F.normalize, F.glu)
def _along_axis(func, args, kwargs):
    """Ops along one axis: local when that axis is whole on every block."""
    x = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 1 if func is F.normalize else -1)
    if func is F.normalize:
        dim = kwargs.get("dim", args[2] if len(args) > 2 else 1)
    if dim is None:
        raise unsupported(func, x, "an implicit dim")
    lay = x._dlayout
    axis = dim % len(lay.shape)
    if lay.axis_dim[axis] is not None:
        raise unsupported(func, x, f"it works along axis {axis}, which is cut")
    out = func(local(x), *args[1:], **kwargs)
    if func is F.glu:
        shape = list(lay.shape)
        shape[axis] //= 2
        sizes = list(lay.sizes)
        sizes[axis] = (shape[axis],)
        lay = lay.replace(shape=tuple(shape), sizes=tuple(sizes))
    return wrap(out, lay, x._dcomm)
