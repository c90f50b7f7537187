"""Layout-preserving manipulations that need no communication."""

from __future__ import annotations

from numpy import ndarray

from .. import _recorder
from .._errors import message
from .._layout import Layout, normalize_axis
from .array import DArray

__all__ = ["permute_dims", "permuted", "place", "balanced_like"]


def permute_dims(x: DArray, axes) -> DArray:
    """Reorder axes; each rank transposes its block and the layout follows (no data moves)."""
    axes = tuple(normalize_axis("permute_dims", a, x.ndim) for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(message("permute_dims", "axes must be a permutation", axes, f"of {tuple(range(x.ndim))}"))
    return permuted(x, axes)


def permuted(x: DArray, axes: tuple[int, ...]) -> DArray:
    """:func:`permute_dims` for ``axes`` known to be a permutation of ``x``'s axes (``x.T``): no checks.

    The result's layout is remembered on ``x``'s layout, per permutation.
    """
    layout = x._layout
    new = layout._derived.facts.get(("permuted", axes))
    if new is None:
        position = {a: i for i, a in enumerate(axes)}
        new = Layout(tuple(layout.shape[a] for a in axes), layout.dims,
                     tuple(None if s is None else position[s] for s in layout.split),
                     tuple(layout.sizes[a] for a in axes), tuple(layout.halo[a] for a in axes),
                     tuple(layout.boundary[a] for a in axes))
        new = layout._derived.facts["permuted", axes] = new.without_halo() if new.has_halo else new
    block = x._block
    if type(block) is ndarray and not layout.has_halo:  # (NumPy's own transpose: the same view)
        return DArray._wrap(block.transpose(axes), new, x._comm, x._xp)
    return DArray._wrap(x._xp.permute_dims(x.local, axes), new, x._comm, x._xp)


def place(x: DArray, out: DArray, region, offset) -> None:
    """Copy the cells of ``x`` inside global ``region`` to ``region + offset`` of ``out`` (collective)."""
    from .plans import placement_plan

    plan = placement_plan(x._layout, out._layout, x._comm.rank, tuple(region), tuple(offset))
    block = x._block if x._xp is out._xp else out._xp.asarray(x._block)
    with _recorder.labelled("place"):
        x._comm.exchange(block, plan.sends, out._block, plan.recvs).wait()
    out._halo_fresh = False


def balanced_like(layout: Layout, shape, nprocs: int) -> Layout:
    """A layout for ``shape`` cut along the same axes as ``layout`` (balanced blocks, no halo)."""
    from .._layout import balanced_sizes

    sizes = tuple(balanced_sizes(n, len(layout.sizes[a])) if layout.axis_dim[a] is not None else (n,)
                  for a, n in enumerate(shape))
    return Layout(tuple(shape), layout.dims, layout.split, sizes)
