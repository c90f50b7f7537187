"""``fuse``: the decorator, its per-signature plans, its modes and the eager fallback."""

from __future__ import annotations

import functools
import importlib.util
import os
import warnings

import numpy as np
from array_api_compat import is_cupy_array

from .. import _recorder
from .._core.array import DArray
from .._core.replication import warn_replicated
from .cache import signature
from .execute import Plan, run
from .tracing import trace

__all__ = ["fuse", "Fused", "MODES", "mode", "jit_available"]

#: ``DARRAY_FUSE``: ``auto`` (default: fuse with numba when installed, else run eagerly and say so once),
#: ``eager`` (never fuse: the plain function), ``jit`` (fuse; a kernel that fails to compile raises).
MODES = ("auto", "eager", "jit")

_warned = False
_jit: bool | None = None


def mode() -> str:
    """The fusion mode from ``DARRAY_FUSE`` (read at every call, so a test or a job may switch it)."""
    value = os.environ.get("DARRAY_FUSE")
    if value is None:
        return "auto"
    value = value.strip().lower() or "auto"
    if value not in MODES:
        raise ValueError(f"darray.fuse: environment variable DARRAY_FUSE must be one of {MODES}; got {value!r}")
    return value


def jit_available() -> bool:
    """Whether numba is installed (looked up once; imported only when the first kernel compiles)."""
    global _jit
    if _jit is None:
        _jit = importlib.util.find_spec("numba") is not None
    return _jit


def _warn_eager() -> None:
    global _warned
    if not _warned:
        _warned = True
        warnings.warn("darray.fuse: numba is not installed (pip install 'darray[jit]'): fused functions run "
                      "eagerly, with the same results", RuntimeWarning, stacklevel=3)


class Fused:
    """A function of DArrays and scalars, traced once per signature and run as fused kernels.

    ``stats`` counts ``traces`` (signatures traced), ``fused`` (calls run from a plan) and ``eager`` (calls
    run as the plain function: eager mode, no numba, untraceable code, a scalar out of its dtype's range).
    """

    def __init__(self, f):
        functools.update_wrapper(self, f)
        self._plans: dict = {}
        self.stats = {"traces": 0, "fused": 0, "eager": 0}

    def __call__(self, *args, **kwargs):
        chosen = mode()
        arrays = [a for a in (*args, *kwargs.values()) if type(a) is DArray]
        warn_replicated("darray.fuse", f"the fused function {self.__name__}", arrays)
        if chosen == "eager" or not arrays:
            return self._eager(args, kwargs)
        if not jit_available() and not all(is_cupy_array(a.local) for a in arrays):  # (CuPy: no numba needed)
            if chosen == "jit":
                raise ImportError("darray.fuse: DARRAY_FUSE=jit needs numba (pip install 'darray[jit]')")
            _warn_eager()
            return self._eager(args, kwargs)
        key = signature(args, kwargs)
        plan = self._plans.get(key, self) if key is not None else None
        if plan is self:
            plan = self._plans[key] = self._trace(args, kwargs)
        if plan is None or not plan.accepts(args, kwargs):
            return self._eager(args, kwargs)
        self.stats["fused"] += 1
        if chosen == "jit":
            return self._run(key, plan, args, kwargs)
        try:
            return self._run(key, plan, args, kwargs)
        except Exception as e:  # a kernel numba or NVRTC refused (the same on every rank): eager from now on
            if not type(e).__module__.startswith(("numba", "cupy.cuda.compiler", "cupy_backends.cuda.libs.nvrtc")):
                raise
            self._plans[key] = None
            return self._eager(args, kwargs)

    def _run(self, key, plan: Plan, args, kwargs):
        if _recorder.active is None:
            result = run(plan, args, kwargs)
        else:  # traced: the fused kernels are one compute event (their halo exchanges are comm events)
            begin, mark = _recorder.now(), len(_recorder.active)
            result = run(plan, args, kwargs)
            _recorder.record_compute(f"fuse:{getattr(self, '__name__', 'kernel')}", begin, mark)
        if not plan.ran:  # the first call decided every group (from replicated metadata: alike on every rank)
            plan.ran = True
            if not plan.fuses:  # nothing ran as a kernel: the plain function is the same work, less overhead
                self._plans[key] = None
        return result

    @property
    def replay(self) -> dict:
        """Over this function's plans: ``plans`` (stencil groups planned: layouts, halo widths, boxes and kernel
        decided) and ``replays`` (stencil groups run from such a plan, deciding nothing again)."""
        plans = [p for p in self._plans.values() if p is not None]
        return {k: sum(p.stats[k] for p in plans) for k in ("plans", "replays")}

    def _eager(self, args, kwargs):
        self.stats["eager"] += 1
        return self.__wrapped__(*args, **kwargs)

    def _trace(self, args, kwargs) -> Plan | None:
        self.stats["traces"] += 1
        blocks = [a.local for a in (*args, *kwargs.values()) if type(a) is DArray]
        if not (all(type(b) is np.ndarray for b in blocks) or all(is_cupy_array(b) for b in blocks)):
            return None  # kernels run on NumPy blocks (numba) or CuPy blocks (CUDA); other libraries run eagerly
        try:
            return Plan(*trace(self.__wrapped__, args, kwargs))
        except Exception:  # untraceable, or an error eager mode raises itself at this call
            return None

    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)


def fuse(f=None):
    """Decorate a function of DArrays and scalars: traced once per signature, run as fused kernels.

    See :mod:`darray.fuse` for what is traced, how results compare with eager
    darray and how to switch fusion off (``DARRAY_FUSE=eager``).

    Examples
    --------
    >>> import darray as da
    >>> @da.fuse
    ... def energy(a, b, c):
    ...     return da.sum(a * b + c)
    >>> x = da.arange(8, dtype=da.float64)
    >>> float(energy(x, x, 1.0))
    148.0
    >>> float(energy(x, x, 2.0))  # a new scalar value: the same plan and kernel
    156.0
    """
    if f is None:
        return fuse
    if not callable(f):
        raise TypeError(f"darray.fuse: expected a function of DArrays and scalars to decorate; got "
                        f"{type(f).__name__}")
    return Fused(f)
