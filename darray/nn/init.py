"""Parameter initialisers: deterministic from a seed, the same values on every rank and rank count.

Draws come from :func:`darray.random.default_rng` (counter-based), so a
model built with the same seed has bit-identical parameters whether it runs
on 1 or 512 ranks. :func:`manual_seed` resets the generator the layers use
by default (like ``torch.manual_seed``); every initialiser also takes an
explicit ``generator``. Parameters are replicated (``split=None``).
"""

from __future__ import annotations

import math

from .._errors import message

__all__ = ["manual_seed", "default_generator", "uniform_", "normal_", "zeros_", "ones_", "constant_",
           "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "xavier_normal_", "calculate_gain",
           "fan_in_and_fan_out"]

_generator = None


def manual_seed(seed: int):
    """Reset the default generator of the initialisers (and of Dropout layers built afterwards)."""
    global _generator
    import darray

    _generator = darray.random.default_rng(seed)
    return _generator


def default_generator():
    """The initialisers' generator (seed 0 until :func:`manual_seed` is called)."""
    return _generator if _generator is not None else manual_seed(0)


def _target(tensor):
    from ..autodiff import Variable

    return tensor.data if isinstance(tensor, Variable) else tensor


def _assign(tensor, values):
    """Store ``values`` (a replicated DArray) in ``tensor`` (a Variable/Parameter) in its layout."""
    from ..autodiff.rules import to_layout

    data = _target(tensor)
    values = to_layout(values.astype(data.dtype), data.layout)
    tensor.data = values
    return tensor


def _draw(kind, tensor, a, b, generator):
    data = _target(tensor)
    rng = generator if generator is not None else default_generator()
    if kind == "uniform":
        values = rng.uniform(a, b, size=data.shape, split=None, comm=data.comm)
    else:
        values = rng.normal(a, b, size=data.shape, split=None, comm=data.comm)
    return _assign(tensor, values)


def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    return _draw("uniform", tensor, a, b, generator)


def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    return _draw("normal", tensor, mean, std, generator)


def constant_(tensor, val: float):
    import darray

    data = _target(tensor)
    return _assign(tensor, darray.full(data.shape, val, dtype=data.dtype, split=None, comm=data.comm))


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def fan_in_and_fan_out(shape) -> tuple[int, int]:
    """torch's fans: ``(C_in * receptive field, C_out * receptive field)`` for a ``(C_out, C_in, *k)`` weight."""
    if len(shape) < 2:
        raise ValueError(message("fan_in_and_fan_out", "needs at least 2 dimensions", shape))
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity: str, param=None) -> float:
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "sigmoid", "identity"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(message("calculate_gain", "unsupported nonlinearity", nonlinearity))


def _fan(tensor, mode):
    fan_in, fan_out = fan_in_and_fan_out(_target(tensor).shape)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(message("kaiming", "unknown mode", mode, "'fan_in' or 'fan_out'"))
    return fan_in if mode == "fan_in" else fan_out


def kaiming_uniform_(tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator=None):
    """U(-b, b) with ``b = gain * sqrt(3 / fan)``; torch's layer default is ``a=sqrt(5)``."""
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / _fan(tensor, mode))
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator=None):
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    fan_in, fan_out = fan_in_and_fan_out(_target(tensor).shape)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    fan_in, fan_out = fan_in_and_fan_out(_target(tensor).shape)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)
