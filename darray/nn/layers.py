"""Layers with torch.nn's constructor signatures and defaults, on distributed fields ``(N, C, *spatial)``."""

from __future__ import annotations

import math
import numbers

from .._errors import message
from ..autodiff import Variable, no_grad
from ..autodiff.rules import namespace
from ..random import default_rng
from . import functional as F
from . import init
from ._conv import transpose_geometry
from ._pool import pool
from .module import Module, Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Linear",
           "Identity", "ReLU", "LeakyReLU", "GELU", "SiLU", "Tanh",
           "Sigmoid", "Softplus", "AvgPool1d", "AvgPool2d", "AvgPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d",
           "Upsample", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "LayerNorm", "Dropout",
           "MSELoss", "L1Loss", "HuberLoss", "CrossEntropyLoss"]


def _zeros(shape, dtype="float64"):
    return namespace().zeros(shape, dtype=dtype, split=None)


def _ntuple(value, n):
    return (int(value),) * n if isinstance(value, numbers.Integral) else tuple(int(v) for v in value)


def _ints(layer: str, arg: str, value, n: int | None = None, minimum: int = 1):
    """Check a constructor argument: an int (or, with ``n``, a tuple of ``n`` ints) each at least ``minimum``.

    TypeError / ValueError naming the layer and the argument, before anything
    is built (the same on every rank: arguments are replicated).

    >>> _ints("Conv2d", "kernel_size", -3, 2)
    Traceback (most recent call last):
    ...
    ValueError: Conv2d: kernel_size must be positive; got -3, expected an int >= 1 or a tuple of 2 of them
    """
    what = "positive" if minimum == 1 else f"at least {minimum}" if minimum else "non-negative"
    expected = f"an int >= {minimum}" + (f" or a tuple of {n} of them" if n is not None else "")
    many = n is not None and not isinstance(value, numbers.Integral)
    try:
        items = tuple(value) if many else (value,)
    except TypeError:
        items = (value,)
    if any(not isinstance(v, numbers.Integral) or isinstance(v, bool) for v in items):
        raise TypeError(message(layer, f"{arg} must be {'an int or a tuple of ints' if n else 'an int'}", value,
                                expected))
    if many and len(items) != n:
        raise ValueError(message(layer, f"{arg} has the wrong length", value, expected))
    if any(v < minimum for v in items):
        raise ValueError(message(layer, f"{arg} must be {what}", value, expected))
    return value


def _per_dims(base, doc, **members):
    """torch's 1-, 2- and 3-d classes of ``base`` (``_ConvNd`` -> ``Conv1d, Conv2d, Conv3d``).

    ``doc``: the classes' docstring, ``{n}`` standing for the number of
    spatial axes; ``members``: extra attributes by number of axes
    (``__init__={1: ...}``).
    """
    stem = base.__name__.strip("_")[:-2]
    classes = []
    for n in (1, 2, 3):
        name = f"{stem}{n}d"
        extra = {key: by_n[n] for key, by_n in members.items() if n in by_n}
        classes.append(type(base)(name, (base,), {"__module__": __name__, "__qualname__": name, "_nsp": n,
                                                   "__doc__": doc.format(n=n), **extra}))
    return classes


def _check_conv(name: str, n: int, in_channels, out_channels, kernel_size, stride, dilation, groups) -> None:
    """The arguments every convolution layer shares: channels, kernel, stride, dilation, groups (see :func:`_ints`)."""
    _ints(name, "in_channels", in_channels)
    _ints(name, "out_channels", out_channels)
    _ints(name, "kernel_size", kernel_size, n)
    _ints(name, "stride", stride, n)
    _ints(name, "dilation", dilation, n)
    _ints(name, "groups", groups)


class _ConvNd(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        name, n = type(self).__name__, self._nsp
        _check_conv(name, n, in_channels, out_channels, kernel_size, stride, dilation, groups)
        if not isinstance(padding, str):
            _ints(name, "padding", padding, n, minimum=0)
        if in_channels % groups or out_channels % groups:
            raise ValueError(message(name, "channels must be divisible by groups", (in_channels, out_channels),
                                     f"multiples of groups={groups}"))
        if padding_mode not in ("zeros", "circular", "replicate"):
            raise ValueError(message(name, "unsupported padding_mode", padding_mode,
                                     "'zeros', 'circular' or 'replicate'"))
        if isinstance(padding, str) and padding not in ("same", "valid"):
            raise ValueError(message(name, "unknown padding", padding, "'same', 'valid', an int or a tuple"))
        n = self._nsp
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride, self.dilation = _ntuple(stride, n), _ntuple(dilation, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.groups, self.padding_mode = groups, padding_mode
        dtype = dtype or "float64"
        self.weight = Parameter(_zeros((out_channels, in_channels // groups, *self.kernel_size), dtype))
        self.bias = Parameter(_zeros((out_channels,), dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """torch's default: kaiming_uniform(a=sqrt(5)) weights, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init.fan_in_and_fan_out(self.weight.shape)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        return F.conv(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups,
                      self.padding_mode)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}")


class _ConvTransposeNd(Module):
    """torch's ConvTranspose*d; only the non-overlapping case ``stride == kernel_size`` (learned upsampling)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        name, n = type(self).__name__, self._nsp
        _check_conv(name, n, in_channels, out_channels, kernel_size, stride, dilation, groups)
        _ints(name, "padding", padding, n, minimum=0)
        _ints(name, "output_padding", output_padding, n, minimum=0)
        if groups < 1 or in_channels % groups or out_channels % groups:
            raise ValueError(message(name, "channels must be divisible by groups", (in_channels, out_channels),
                                     f"multiples of groups={groups}"))
        if padding_mode != "zeros":
            raise ValueError(message(name, "only padding_mode='zeros' is supported for transposed convolutions",
                                     padding_mode))
        n = self._nsp
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride, self.padding = _ntuple(stride, n), _ntuple(padding, n)
        self.output_padding, self.dilation = _ntuple(output_padding, n), _ntuple(dilation, n)
        self.groups, self.padding_mode = groups, padding_mode
        transpose_geometry(name, n, self.kernel_size, self.stride, self.padding, self.output_padding,
                              self.dilation)
        dtype = dtype or "float64"
        self.weight = Parameter(_zeros((in_channels, out_channels // groups, *self.kernel_size), dtype))
        self.bias = Parameter(_zeros((out_channels,), dtype)) if bias else None
        self.reset_parameters()

    reset_parameters = _ConvNd.reset_parameters  # torch's: fans from the (C_in, C_out / groups, *k) weight

    def forward(self, x, output_size=None):
        if output_size is not None:
            natural = tuple(m * s for m, s in zip(tuple(x.shape)[2:], self.stride))
            if tuple(output_size)[-self._nsp:] != natural:
                raise NotImplementedError(message(type(self).__name__, "output_size other than the natural size "
                                                  "(input * stride) is not supported", tuple(output_size), natural))
        return F.conv_transpose(x, self.weight, self.bias, self.stride, self.padding, self.output_padding,
                                self.groups, self.dilation, _func=type(self).__name__)

    def extra_repr(self):
        text = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        return text + (", bias=False" if self.bias is None else "")


class Linear(Module):
    """``y = x W^T + b`` over feature axis ``axis`` (torch: the last axis; ``axis=1`` for channels-first)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, axis=-1):
        super().__init__()
        _ints("Linear", "in_features", in_features)
        _ints("Linear", "out_features", out_features)
        self.in_features, self.out_features, self.axis = in_features, out_features, axis
        dtype = dtype or "float64"
        self.weight = Parameter(_zeros((out_features, in_features), dtype))
        self.bias = Parameter(_zeros((out_features,), dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias, self.axis)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, axis={self.axis}"


class Identity(Module):
    def forward(self, x):
        return x


class ReLU(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()

    def forward(self, x):
        return F.relu(x)


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, self.negative_slope)


class GELU(Module):
    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, self.approximate)


class SiLU(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()

    def forward(self, x):
        return F.silu(x)


class Tanh(Module):
    def forward(self, x):
        return F.tanh(x)


class Sigmoid(Module):
    def forward(self, x):
        return F.sigmoid(x)


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x):
        return F.softplus(x, self.beta, self.threshold)


def _check_pool(name: str, n: int, kernel_size, stride, padding, dilation) -> None:
    """The pooling layers' window arguments (see :func:`_ints`); ``stride=None`` means the kernel size."""
    _ints(name, "kernel_size", kernel_size, n)
    if stride is not None:
        _ints(name, "stride", stride, n)
    _ints(name, "padding", padding, n, minimum=0)
    _ints(name, "dilation", dilation, n)


class _MaxPoolNd(Module):
    """torch's MaxPool*d: any stride, padding, dilation and ceil_mode; the gradient goes to the first maximum."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        _check_pool(type(self).__name__, self._nsp, kernel_size, stride, padding, dilation)
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, x):
        return pool(type(self).__name__, x, self.kernel_size, self.stride, self.padding, self.dilation,
                       self.ceil_mode, "max", self._nsp, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class _AvgPoolNd(Module):
    """torch's AvgPool*d: any stride, padding and ceil_mode; count_include_pad and divisor_override."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        _check_pool(type(self).__name__, self._nsp, kernel_size, stride, padding, 1)
        self.kernel_size, self.stride, self.padding, self.ceil_mode = kernel_size, stride, padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, x):
        return pool(type(self).__name__, x, self.kernel_size, self.stride, self.padding, 1, self.ceil_mode,
                       "avg", self._nsp, self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _avg_pool1d_init(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    _AvgPoolNd.__init__(self, kernel_size, stride, padding, ceil_mode, count_include_pad)  # torch's: no divisor


class Upsample(Module):
    """torch's Upsample: ``size`` or ``scale_factor``; modes nearest, nearest-exact, (bi/tri)linear."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        if (size is None) == (scale_factor is None):
            raise ValueError(message("Upsample", "exactly one of size and scale_factor must be given",
                                     (size, scale_factor), "size=... or scale_factor=..."))
        self.size, self.scale_factor, self.mode = size, scale_factor, mode
        self.align_corners, self.recompute_scale_factor = align_corners, recompute_scale_factor

    def forward(self, x):
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                             self.recompute_scale_factor)

    def extra_repr(self):
        what = f"size={self.size}" if self.size is not None else f"scale_factor={self.scale_factor}"
        return f"{what}, mode={self.mode!r}"


class _BatchNormNd(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__()
        _ints(type(self).__name__, "num_features", num_features)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        dtype = dtype or "float64"
        if affine:
            self.weight = Parameter(namespace().ones((num_features,), dtype=dtype, split=None))
            self.bias = Parameter(_zeros((num_features,), dtype))
        else:
            self.weight = self.bias = None
        if track_running_stats:
            self.register_buffer("running_mean", _zeros((num_features,), dtype))
            self.register_buffer("running_var", namespace().ones((num_features,), dtype=dtype, split=None))

    def forward(self, x):
        xd = x.data if isinstance(x, Variable) else x
        if xd.shape[1] != self.num_features:
            raise ValueError(message(type(self).__name__, "channel count differs", xd.shape[1], self.num_features))
        use_batch = self.training or not self.track_running_stats
        if not use_batch:
            return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, False,
                                self.momentum, self.eps)
        y = F.batch_norm(x, None, None, self.weight, self.bias, True, self.momentum, self.eps)
        if self.training and self.track_running_stats:
            with no_grad():
                axes = (0,) + tuple(range(2, xd.ndim))
                count = xd.size // xd.shape[1]
                mean = namespace().mean(xd, axis=axes)
                var = namespace().var(xd, axis=axes, correction=1 if count > 1 else 0)
                m = self.momentum
                self.running_mean = self.running_mean * (1 - m) + mean * m
                self.running_var = self.running_var * (1 - m) + var * m
        return y


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None):
        super().__init__()
        _ints("GroupNorm", "num_groups", num_groups)
        _ints("GroupNorm", "num_channels", num_channels)
        if num_channels % num_groups:
            raise ValueError(message("GroupNorm", "num_channels must be divisible by num_groups", num_channels,
                                     f"a multiple of {num_groups}"))
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        dtype = dtype or "float64"
        if affine:
            self.weight = Parameter(namespace().ones((num_channels,), dtype=dtype, split=None))
            self.bias = Parameter(_zeros((num_channels,), dtype))
        else:
            self.weight = self.bias = None

    def forward(self, x):
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else tuple(normalized_shape)
        self.normalized_shape, self.eps = shape, eps
        dtype = dtype or "float64"
        self.weight = Parameter(namespace().ones(shape, dtype=dtype, split=None)) if elementwise_affine else None
        self.bias = Parameter(_zeros(shape, dtype)) if elementwise_affine and bias else None

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class Dropout(Module):
    """Dropout with a counter-based mask: the same cells drop whatever the rank count.

    ``seed``: the mask generator's seed (default: drawn from
    :func:`darray.nn.init.default_generator`'s seed sequence at construction).
    """

    def __init__(self, p: float = 0.5, inplace: bool = False, seed=None):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(message("Dropout", "probability out of range", p, "0 <= p <= 1"))
        self.p = p
        self.generator = default_rng(seed) if seed is not None else \
            init.default_generator().spawn(1)[0]

    def forward(self, x):
        return F.dropout(x, self.p, self.training, self.generator)


class _Loss(Module):
    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = reduction


class MSELoss(_Loss):
    def forward(self, input, target):
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    def forward(self, input, target):
        return F.l1_loss(input, target, self.reduction)


class HuberLoss(_Loss):
    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, self.reduction, self.delta)


class CrossEntropyLoss(_Loss):
    def __init__(self, reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(reduction)
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.reduction, self.label_smoothing)


# ------------------------------------------------------------------ torch's 1-, 2- and 3-d classes
Conv1d, Conv2d, Conv3d = _per_dims(
    _ConvNd, "{n}-d convolution over ``(N, C, *spatial)`` fields cut along any spatial axes (halos of the needed "
             "width are exchanged; the result is the convolution of the whole field).")

ConvTranspose1d, ConvTranspose2d, ConvTranspose3d = _per_dims(
    _ConvTransposeNd, "Learned {n}-d upsampling (stride == kernel_size): local on every block, blocks grow by "
                      "``stride``.")

MaxPool1d, MaxPool2d, MaxPool3d = _per_dims(
    _MaxPoolNd, "{n}-d maximum over (possibly overlapping, padded) windows; blocks need not align with the "
                "windows (halos).")

AvgPool1d, AvgPool2d, AvgPool3d = _per_dims(
    _AvgPoolNd, "{n}-d average over (possibly overlapping, padded) windows; blocks need not align with the "
                "windows (halos).", __init__={1: _avg_pool1d_init})

BatchNorm1d, BatchNorm2d, BatchNorm3d = _per_dims(
    _BatchNormNd, "Batch normalisation over the batch and {n} spatial axes with statistics combined over every "
                  "rank (torch's defaults).")
