"""Layout-preserving manipulations that need no communication."""

from __future__ import annotations

from .._errors import message
from .._layout import Layout, normalize_axis
from .array import DArray

__all__ = ["permute_dims"]


def permute_dims(x: DArray, axes) -> DArray:
    """Reorder axes; each rank transposes its block and the layout follows (no data moves)."""
    axes = tuple(normalize_axis("permute_dims", a, x.ndim) for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(message("permute_dims", "axes must be a permutation", axes, f"of {tuple(range(x.ndim))}"))
    layout = x._layout
    position = {a: i for i, a in enumerate(axes)}
    new = Layout(tuple(layout.shape[a] for a in axes), layout.dims,
                 tuple(None if s is None else position[s] for s in layout.split),
                 tuple(layout.sizes[a] for a in axes), tuple(layout.halo[a] for a in axes),
                 tuple(layout.boundary[a] for a in axes))
    new = new.replace(halo=(0,) * x.ndim, boundary=("none",) * x.ndim) if new.has_halo else new
    return DArray._wrap(x._xp.permute_dims(x.local, axes), new, x._comm, x._xp)
