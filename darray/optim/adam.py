"""Adam and AdamW (torch.optim's update, bias corrections included)."""

from __future__ import annotations

import math

from .._errors import message
from ..autodiff.rules import namespace
from .optimizer import Optimizer

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam; ``weight_decay`` adds ``wd * p`` to the gradient (L2), as torch.optim.Adam."""

    _decoupled = False

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.0,
                 amsgrad: bool = False, maximize: bool = False):
        if lr < 0 or eps < 0 or weight_decay < 0 or not all(0 <= b < 1 for b in betas):
            raise ValueError(message(type(self).__name__, "invalid hyper-parameters", (lr, betas, eps, weight_decay)))
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    def _update(self, data, grad, state, group):
        da = namespace()
        lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        g = -grad if group["maximize"] else grad
        if wd and self._decoupled:
            data = data * (1.0 - lr * wd)
        elif wd:
            g = g + data * wd
        step = state.get("step", 0) + 1
        state["step"] = step
        m = state.get("exp_avg")
        v = state.get("exp_avg_sq")
        m = g * (1.0 - b1) if m is None else m * b1 + g * (1.0 - b1)
        v = g * g * (1.0 - b2) if v is None else v * b2 + g * g * (1.0 - b2)
        state["exp_avg"], state["exp_avg_sq"] = m, v
        if group["amsgrad"]:
            vmax = state.get("max_exp_avg_sq")
            vmax = v if vmax is None else da.maximum(vmax, v)
            state["max_exp_avg_sq"] = vmax
            v = vmax
        bc1, bc2 = 1.0 - b1 ** step, 1.0 - b2 ** step
        denom = da.sqrt(v) / math.sqrt(bc2) + eps
        return data - m / denom * (lr / bc1)


class AdamW(Adam):
    """Adam with decoupled weight decay ``p *= 1 - lr * wd`` (torch.optim.AdamW; default wd 0.01)."""

    _decoupled = True

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 1e-2,
                 amsgrad: bool = False, maximize: bool = False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)
