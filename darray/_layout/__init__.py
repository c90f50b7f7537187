"""Pure layout math: grids, block splits, halos. Imports no MPI and no array library."""

from .blocks import balanced_sizes, check_sizes, locate, offsets
from .grid import coords_of, factorizations, plan_grid, rank_of
from .layout import Layout
from .regions import mirror_source, volume
from .specs import BOUNDARIES, normalize_axis, normalize_boundary, normalize_halo, normalize_split

__all__ = [
    "BOUNDARIES", "Layout", "balanced_sizes", "check_sizes", "coords_of", "factorizations", "locate",
    "mirror_source", "normalize_axis", "normalize_boundary", "normalize_halo", "normalize_split", "offsets",
    "plan_grid", "rank_of", "volume",
]
