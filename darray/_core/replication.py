"""A warning, once per process and kind of work, when work meant to be sharded runs whole on every rank.

An array with fewer than ``darray.config.min_distributed_size`` elements is
replicated (every rank holds all of it), and so is a ``darray.stack`` of such
arrays: a ``(4, 1, 64, 64)`` batch built from four ``(1, 64, 64)`` samples
is not cut. A network layer (``darray.nn``) or a fused kernel
(``darray.fuse``) given only replicated inputs on several ranks then computes
the whole batch on every rank: correct, but nothing is shared out.
:func:`warn_replicated` says so once (on rank 0 of the arrays' ranks), with
how to cut the input.
"""

from __future__ import annotations

import warnings

from .element_reads import PerformanceWarning

__all__ = ["warn_replicated", "replicated_inputs"]

_warned: set[str] = set()


def replicated_inputs(arrays) -> bool:
    """Whether ``arrays`` (DArrays) are all replicated over more than one rank (and there is one at least).

    >>> import darray as da
    >>> replicated_inputs([da.ones(3)])  # one rank: nothing to share out
    False
    """
    arrays = list(arrays)
    return bool(arrays) and all(a._comm.size > 1 and a._layout.is_replicated and a.ndim > 0 for a in arrays)


def warn_replicated(kind: str, who: str, arrays, stacklevel: int = 3) -> None:
    """Warn once per ``kind`` (``"darray.nn"``, ``"darray.fuse"``) when ``arrays`` are all replicated on 2+ ranks.

    ``who`` names the layer or the fused function. Call it with the
    DArrays given to the layer or kernel; it costs a few attribute reads
    once warned.
    """
    if kind in _warned:
        return
    arrays = list(arrays)
    if not replicated_inputs(arrays):
        return
    _warned.add(kind)
    first = arrays[0]
    if first._comm.rank != 0:
        return
    warnings.warn(
        f"{kind}: {who} got a replicated input of shape {first.shape} on {first._comm.size} ranks: every rank "
        f"computes all of it, nothing is shared out (an array under darray.config.min_distributed_size="
        f"{_min_size()} elements is replicated unless given split=, and so is a darray.stack of such arrays). "
        f"Cut it, e.g. along the batch axis: x = darray.asarray(x, split=0). Shown once",
        PerformanceWarning, stacklevel=stacklevel)


def _min_size() -> int:
    from .._config import config

    return config.min_distributed_size
