"""``Module``, ``Parameter``, ``Sequential``, ``ModuleList``: torch.nn's containers over DArrays.

Parameters are replicated Variables (every rank holds the whole weight);
their gradients come out of the tape summed over the ranks, identical on
every rank. ``state_dict`` holds DArrays; ``load_state_dict`` accepts NumPy
arrays or DArrays (any layout: they are moved to the parameter's).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator

import numpy as np

from .._core import DArray
from .._core.replication import warn_replicated
from .._errors import message
from ..autodiff import Variable
from ..autodiff.rules import restored

__all__ = ["Parameter", "Module", "Sequential", "ModuleList"]

#: Module calls in progress (a layer called inside another's forward is not the model's input).
_depth = 0


class Parameter(Variable):
    """A Variable that a :class:`Module` registers as a parameter (``requires_grad=True`` by default)."""

    __slots__ = ()

    def __init__(self, data, requires_grad: bool = True):
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self):
        return f"Parameter(shape={self.shape}, dtype={self.dtype})"


class Module:
    """Base class of layers: attributes that are Parameters or Modules are registered automatically."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # ------------------------------------------------------------ registration
    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__}: call Module.__init__() before assigning attributes")
        for table in (self._parameters, self._buffers, self._modules):
            table.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        elif name in self.__dict__.get("_buffer_names", ()):
            self._buffers[name] = value
        object.__setattr__(self, name, value)

    def register_buffer(self, name: str, value) -> None:
        """A non-trainable state array (running statistics) saved in ``state_dict``."""
        self.__dict__.setdefault("_buffer_names", set()).add(name)
        setattr(self, name, value)

    def register_parameter(self, name: str, value: Parameter | None) -> None:
        setattr(self, name, value)

    def add_module(self, name: str, module: Module) -> None:
        setattr(self, name, module)

    # ------------------------------------------------------------ traversal
    def named_children(self) -> Iterator[tuple[str, Module]]:
        yield from self._modules.items()

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            yield name, module
            for child_name, child in reversed(list(module._modules.items())):
                stack.append((f"{name}.{child_name}" if name else child_name, child))

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        seen = set()
        for name, module in self.named_modules(prefix):
            for pname, p in module._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{name}.{pname}" if name else pname), p

    def parameters(self) -> Iterator[Parameter]:
        for _, p in self.named_parameters():
            yield p

    def named_buffers(self, prefix: str = "") -> Iterator[tuple[str, DArray]]:
        for name, module in self.named_modules(prefix):
            for bname, b in module._buffers.items():
                if b is not None:
                    yield (f"{name}.{bname}" if name else bname), b

    def buffers(self) -> Iterator[DArray]:
        for _, b in self.named_buffers():
            yield b

    # ------------------------------------------------------------ modes
    def train(self, mode: bool = True) -> Module:
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self) -> Module:
        return self.train(False)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            p.grad = None

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad = bool(requires_grad)
        return self

    # ------------------------------------------------------------ state
    def state_dict(self) -> OrderedDict:
        """Parameters and buffers by dotted name, as DArrays."""
        out = OrderedDict()
        for name, p in self.named_parameters():
            out[name] = p.data
        for name, b in self.named_buffers():
            out[name] = b
        return out

    def load_state_dict(self, state, strict: bool = True):
        """Copy values (NumPy arrays or DArrays of the right shapes) into parameters and buffers.

        Returns ``(missing_keys, unexpected_keys)``; with ``strict`` either
        being non-empty raises KeyError (on every rank alike, before any value moves).
        """
        own = self.state_dict()
        missing = [k for k in own if k not in state]
        unexpected = [k for k in state if k not in own]
        if strict and (missing or unexpected):
            raise KeyError(message("load_state_dict", "keys do not match", {"missing": missing,
                                                                            "unexpected": unexpected}))
        for key, value in state.items():
            if key in own and tuple(np.shape(value) if not isinstance(value, DArray) else value.shape) != \
                    own[key].shape:
                raise ValueError(message("load_state_dict", f"shape mismatch for {key!r}",
                                         np.shape(value) if not isinstance(value, DArray) else value.shape,
                                         own[key].shape))
        params = dict(self.named_parameters())
        for key, value in state.items():
            if key not in own:
                continue
            new = restored(value, own[key])
            if key in params:
                params[key].data = new
            else:
                module, _, attr = key.rpartition(".")
                target = dict(self.named_modules())[module] if module else self
                setattr(target, attr, new)
        return missing, unexpected

    # ------------------------------------------------------------ calling
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}.forward is not implemented")

    def __call__(self, *args, **kwargs):
        global _depth
        for a in args:
            if isinstance(a, np.ndarray) or type(a) is list:  # (a NumPy input has no layout to cut it by)
                raise TypeError(message(type(self).__name__, "inputs must be DArrays (or autodiff Variables)",
                                        type(a).__name__, "darray.asarray(x) (cut over the ranks) first"))
        if _depth == 0:  # the model's input (a layer inside may take replicated values: pooled features)
            inputs = [a.data if isinstance(a, Variable) else a for a in args]
            warn_replicated("darray.nn", type(self).__name__, [a for a in inputs if isinstance(a, DArray)])
        _depth += 1
        try:
            return self.forward(*args, **kwargs)
        finally:
            _depth -= 1

    def extra_repr(self) -> str:
        return ""

    def __repr__(self):
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        for name, child in self._modules.items():
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        return "\n".join(lines) + ("\n)" if len(lines) > 1 else ")")


class Sequential(Module):
    """Modules applied one after the other."""

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, index):
        items = list(self._modules.values())
        if isinstance(index, slice):
            return Sequential(*items[index])
        return items[index]

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x


class ModuleList(Module):
    """A list of modules whose parameters are registered."""

    def __init__(self, modules: Iterable[Module] = ()):
        super().__init__()
        for m in modules:
            self.append(m)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, index):
        items = list(self._modules.values())
        return ModuleList(items[index]) if isinstance(index, slice) else items[index]

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for m in modules:
            self.append(m)
        return self
