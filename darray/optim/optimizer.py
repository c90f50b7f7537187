"""The optimizer base class: parameter groups, ``step``, ``state_dict`` / ``load_state_dict``."""

from __future__ import annotations

import numpy as np

from .._core import DArray
from .._errors import message
from ..autodiff import enable_grad, no_grad
from ..autodiff.rules import restored

__all__ = ["Optimizer"]


class Optimizer:
    """Parameters in groups with hyper-parameters; per-parameter state of DArrays (replicated like the parameters).

    ``step()`` runs outside the tape; every rank updates its copy of every
    parameter identically (the gradients are identical on every rank).
    """

    def __init__(self, params, defaults: dict):
        params = list(params)
        if not params:
            raise ValueError(message(type(self).__name__, "got an empty parameter list", params))
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.defaults = dict(defaults)
        self.param_groups: list[dict] = []
        self.state: dict[int, dict] = {}
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group: dict) -> None:
        group = dict(group)
        group["params"] = list(group["params"])
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        group.setdefault("initial_lr", group["lr"])
        self.param_groups.append(group)

    def _params(self):
        for group in self.param_groups:
            for p in group["params"]:
                yield group, p

    def zero_grad(self, set_to_none: bool = True) -> None:
        for _, p in self._params():
            p.grad = None

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state.setdefault(id(p), {})
                    p.data = self._update(p.data, p.grad, state, group)
        return loss

    def _update(self, data: DArray, grad: DArray, state: dict, group: dict) -> DArray:  # pragma: no cover
        raise NotImplementedError

    # ------------------------------------------------------------ state
    def state_dict(self) -> dict:
        """``{"state": {index: {name: DArray or number}}, "param_groups": [hyper-parameters + indices]}``."""
        index, groups, state = 0, [], {}
        for group in self.param_groups:
            ids = []
            for p in group["params"]:
                if id(p) in self.state:
                    state[index] = dict(self.state[id(p)])
                ids.append(index)
                index += 1
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        params = [p for _, p in self._params()]
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups) or \
                [len(g["params"]) for g in groups] != [len(g["params"]) for g in self.param_groups]:
            raise ValueError(message("load_state_dict", "parameter groups do not match",
                                     [len(g["params"]) for g in groups],
                                     [len(g["params"]) for g in self.param_groups]))
        for mine, saved in zip(self.param_groups, groups):
            for k, v in saved.items():
                if k != "params":
                    mine[k] = v
        self.state = {}
        for index, entries in state_dict["state"].items():
            p = params[int(index)]
            self.state[id(p)] = {k: restored(v, p.data) if isinstance(v, DArray) or np.ndim(v) > 0 else
                                 (v.item() if isinstance(v, np.ndarray) else v) for k, v in entries.items()}
