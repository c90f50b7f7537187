"""Stochastic gradient descent with momentum, Nesterov momentum and weight decay (torch.optim.SGD)."""

from __future__ import annotations

from .._errors import message
from .optimizer import Optimizer

__all__ = ["SGD"]


class SGD(Optimizer):
    """``p -= lr * update`` with torch's momentum buffer: ``b = mu b + (1 - dampening) g``."""

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, maximize: bool = False):
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(message("SGD", "lr, momentum and weight_decay must be non-negative",
                                     (lr, momentum, weight_decay)))
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(message("SGD", "nesterov needs momentum > 0 and dampening 0", (momentum, dampening)))
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize))

    def _update(self, data, grad, state, group):
        g = -grad if group["maximize"] else grad
        if group["weight_decay"]:
            g = g + data * group["weight_decay"]
        mu = group["momentum"]
        if mu:
            buf = state.get("momentum_buffer")
            buf = g * 1.0 if buf is None else buf * mu + g * (1.0 - group["dampening"])
            state["momentum_buffer"] = buf
            g = g + buf * mu if group["nesterov"] else buf
        return data - g * group["lr"]
