"""Checkpoints of model + optimizer + scheduler state in one ``.npz`` (no pickle).

:func:`darray.optim.save_checkpoint` / :func:`darray.optim.load_checkpoint`.
The file is written through the same private staging as every save of
:mod:`darray.io` (:mod:`darray.io._atomic`: no pre-planted symlink is
followed) and a failure on rank 0 is raised on every rank. The model,
optimizer and scheduler are used through their ``state_dict`` /
``load_state_dict`` methods only.
"""

from __future__ import annotations

import json

import numpy as np

import darray

from .._backend import to_numpy
from ._atomic import atomic_targets
from ._common import collective

__all__ = ["load_checkpoint", "save_checkpoint"]


def _gathered(x):
    """The whole value as a NumPy array (any local backend: device blocks are copied to the host)."""
    if isinstance(x, darray.DArray):
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
                if isinstance(v, darray.DArray):
                    arrays[f"optim/{index}/{k}"] = _gathered(v)
                    comm = v.comm
                else:
                    meta["scalars"][f"{index}/{k}"] = v
    if scheduler is not None:
        meta["scheduler"] = scheduler.state_dict()
    arrays["meta"] = np.asarray(json.dumps(meta))
    if comm is None:
        comm = darray.default_communicator()
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
