"""The optimizer base class and checkpoints of model + optimizer state to ``.npz`` (no pickle)."""

from __future__ import annotations

import json

import numpy as np

from .._core import DArray
from .._errors import message

__all__ = ["Optimizer", "save_checkpoint", "load_checkpoint"]


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
        from ..autodiff import enable_grad, no_grad

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
        from ..nn.module import _as_layout

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
            self.state[id(p)] = {k: _as_layout(v, p.data) if isinstance(v, DArray) or np.ndim(v) > 0 else
                                 (v.item() if isinstance(v, np.ndarray) else v) for k, v in entries.items()}


def _gathered(x):
    """The whole value as a NumPy array (any local backend: device blocks are copied to the host)."""
    from .._backend import to_numpy

    if isinstance(x, DArray):
        return np.asarray(to_numpy(x.gather()))
    return np.asarray(x)


def save_checkpoint(path, model=None, optimizer=None, scheduler=None, **extra) -> None:
    """Write model parameters/buffers, optimizer state and scheduler state to one ``.npz`` (collective).

    Arrays are gathered and rank 0 writes; hyper-parameters go in as a JSON
    string array, so the file loads with ``allow_pickle=False``.
    """
    arrays = {}
    meta = {"extra": {k: v for k, v in extra.items()}}
    comm = None
    if model is not None:
        for name, value in model.state_dict().items():
            arrays[f"model/{name}"] = _gathered(value)
            comm = value.comm
    if optimizer is not None:
        sd = optimizer.state_dict()
        meta["param_groups"] = sd["param_groups"]
        meta["scalars"] = {}
        for index, entries in sd["state"].items():
            for k, v in entries.items():
                if isinstance(v, DArray):
                    arrays[f"optim/{index}/{k}"] = _gathered(v)
                    comm = v.comm
                else:
                    meta["scalars"][f"{index}/{k}"] = v
    if scheduler is not None:
        meta["scheduler"] = scheduler.state_dict()
    arrays["meta"] = np.asarray(json.dumps(meta))
    if comm is None:
        import darray

        comm = darray.default_communicator()
    from darray.io._atomic import atomic_targets  # private staging dir (no pre-planted symlink is followed)
    from darray.io._common import collective  # a failure on rank 0 is raised on every rank (no hang)

    with atomic_targets("save_checkpoint", comm, [path]) as (tmp,):
        def write():
            if comm.rank == 0:
                with open(tmp, "wb") as f:  # a file object: np.savez adds no ".npz" suffix
                    np.savez(f, **arrays)

        collective(comm, write, func="save_checkpoint")


def load_checkpoint(path, model=None, optimizer=None, scheduler=None) -> dict:
    """Read a checkpoint written by :func:`save_checkpoint` (every rank reads; no pickle). Returns ``extra``."""
    with np.load(path, allow_pickle=False) as f:
        meta = json.loads(str(f["meta"]))
        arrays = {k: f[k] for k in f.files if k != "meta"}
    if model is not None:
        model.load_state_dict({k[len("model/"):]: v for k, v in arrays.items() if k.startswith("model/")})
    if optimizer is not None and "param_groups" in meta:
        state: dict = {}
        for k, v in arrays.items():
            if k.startswith("optim/"):
                _, index, name = k.split("/", 2)
                state.setdefault(int(index), {})[name] = v
        for k, v in meta["scalars"].items():
            index, name = k.split("/", 1)
            state.setdefault(int(index), {})[name] = v
        optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    if scheduler is not None and "scheduler" in meta:
        scheduler.load_state_dict(meta["scheduler"])
    return meta["extra"]
