"""Moving a DArray between layouts, and gathering it, through cached plans."""

from __future__ import annotations


from typing import Any

from .. import _debug, _recorder
from .._comm.base import agree_once
from .._config import config
from .._layout import Layout
from .array import DArray
from .plans import gather_plan, redistribution_plan

__all__ = ["redistribute_to", "make_layout", "target_layout", "gather"]


def make_layout(func: str, shape, nprocs: int, split="auto", grid=None, sizes=None, halo=0,
                boundary="none") -> Layout:
    """Validate a user's layout request for an array of ``shape`` on ``nprocs`` ranks.

    Arrays smaller than ``darray.config.min_distributed_size`` are replicated
    when ``split="auto"``.
    """
    return Layout.create(func, shape, nprocs, split=split, grid=grid, sizes=sizes, halo=halo, boundary=boundary,
                         min_size=config.min_distributed_size)


def target_layout(x: DArray, func: str, split="auto", grid=None, sizes=None, halo=None, boundary=None) -> Layout:
    """Validate a user's layout request for ``x`` (same shape, same ranks; halo and boundary kept unless given)."""
    return make_layout(func, x.shape, x._comm.size, split, grid, sizes, x._layout.halo if halo is None else halo,
                       x._layout.boundary if boundary is None else boundary)


def redistribute_to(x: DArray, layout: Layout) -> DArray:
    """``x`` in ``layout``: every rank receives the cells it now owns from their owners.

    Halo cells of the result are not filled (they are stale until exchanged).
    Peak extra memory: the new block.
    """
    if layout == x._layout:
        return x
    if layout.shape != x.shape or layout.nprocs != x._comm.size:
        raise ValueError(f"redistribute: layout does not fit the array; got {layout}, expected shape {x.shape} "
                         f"on {x._comm.size} ranks")
    if _debug.enabled:
        _debug.check_collective(x._comm, "redistribute", x._layout, layout, str(x.dtype))
    else:
        agree_plan(x, "redistribute", layout)
    rank = x._comm.rank
    plan = redistribution_plan(x._layout, layout, rank)
    xp = x._xp
    alloc = xp.zeros if layout.has_halo else xp.empty
    out = alloc(layout.padded_shape(rank), dtype=x._block.dtype, device=x.device)
    with _recorder.labelled("redistribute"):
        x._comm.exchange(x._block, plan.sends, out, plan.recvs).wait()
    return DArray._wrap(out, layout, x._comm, xp)


def agree_plan(x: DArray, func: str, target) -> None:
    """Always on, once per source layout, target and dtype: every rank moves ``x`` to the same ``target``, or
    all raise :class:`~darray._debug.CollectiveMismatch` (:func:`darray._comm.base.agree_once`: a rank that
    planned other messages would otherwise return cells of its own plan, or wait forever)."""
    agree_once(x._comm, x._layout._derived.agreed, (func, x._layout, target, x.dtype))  # (a dtype: str() costs 2 us)


def gather(x: DArray, root: int | None = None) -> Any:
    """The whole array on every rank (``root=None``) or on ``root`` only (others get None)."""
    if root is None:
        full = redistribute_to(x, x._layout.replicated())
        return x._xp.asarray(full.local, copy=True) if full is x else full.local
    if not 0 <= root < x._comm.size:
        raise ValueError(f"gather: root out of range; got {root}, expected 0 <= root < {x._comm.size}")
    if _debug.enabled:
        _debug.check_collective(x._comm, "gather", x._layout, root, str(x.dtype))
    else:
        agree_plan(x, "gather", root)
    rank = x._comm.rank
    plan = gather_plan(x._layout, rank, root)
    xp = x._xp
    shape = x.shape if rank == root else (0,) * x.ndim
    out = xp.empty(shape, dtype=x._block.dtype, device=x.device)
    with _recorder.labelled("gather"):
        x._comm.exchange(x._block, plan.sends, out, plan.recvs).wait()
    return out if rank == root else None
