"""The block-and-halo layout of one global array over a Cartesian grid of ranks.

Pure metadata: no communication, no arrays. Every rank holds the same
:class:`Layout` and can answer, for any rank, which global cells it owns and
where they sit inside its halo-padded block.
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Mapping, Sequence
from functools import cached_property
from math import prod

from .._errors import message
from .blocks import balanced_sizes, check_sizes, offsets
from .derived import Derived
from .grid import coords_of, rank_of
from .specs import normalize_axis, normalize_boundary, normalize_halo, normalize_split

__all__ = ["Layout", "SMALL_BLOCK_BYTES", "replicated_layout"]

#: Blocks below this many bytes are "small": NumPy's own threshold for reusing a temporary operand's buffer
#: (NPY_MIN_ELIDE_BYTES). Below it the operators skip darray's temporary reuse and call NumPy directly.
SMALL_BLOCK_BYTES = 1 << 18
_WIDEST_ITEM = 16  # bytes per element of the widest darray dtype (complex128)


_CREATED: dict = {}  # Layout.create's memory: hashable specs -> layout
_CREATED_MAX = 4096


def _typed(spec):
    """``spec`` with the type of every scalar in it, so that ``1``, ``1.0`` and ``True`` stay apart."""
    if type(spec) is tuple:
        return tuple(_typed(item) for item in spec)
    return type(spec), spec


class Layout:
    """How a global array of ``shape`` is cut into blocks over a grid of ranks.

    Parameters
    ----------
    shape : global shape.
    dims : grid dims, their product is the number of ranks.
    split : one entry per grid dim: the array axis it cuts, or None (the
        array is replicated along that grid dim). Grid dims of size 1 never
        cut an axis (their entry is normalised to None).
    sizes : per array axis, the block sizes along it (one per block of the
        grid dim that cuts it, or ``(shape[axis],)`` for an uncut axis).
    halo : ghost width per axis (default: none).
    boundary : boundary kind per axis (default: ``"none"``).

    Use :meth:`Layout.create` to build one from user specs.

    Examples
    --------
    >>> lay = Layout.create("example", (10, 4), nprocs=3, split=0)
    >>> lay.sizes
    ((4, 3, 3), (4,))
    >>> lay.block_slices(2)
    (slice(7, 10, None), slice(0, 4, None))
    """

    __slots__ = ("shape", "dims", "split", "sizes", "halo", "boundary", "has_halo", "whole", "small_whole", "_key",
                 "_hash", "_derived", "__dict__")

    def __init__(self, shape, dims, split, sizes, halo=None, boundary=None):
        self.shape = tuple(shape)
        self.dims = tuple(dims)
        self.split = tuple(None if d == 1 else s for s, d in zip(split, self.dims))
        self.sizes = tuple(sizes)
        self.halo = (0,) * len(self.shape) if halo is None else tuple(halo)
        self.boundary = ("none",) * len(self.shape) if boundary is None else tuple(boundary)
        self.has_halo = any(self.halo)
        #: every rank's block is the whole array, with no ghost cells (replicated, no halo): NumPy's meaning
        self.whole = not self.has_halo and all(s is None for s in self.split)
        #: whole and small in every dtype: the operators' lean path (one NumPy call; on a 0-d block NumPy's kernels
        #: give a NumPy scalar, which the lean path makes a 0-d array again)
        self.small_whole = self.whole and prod(self.shape) * _WIDEST_ITEM < SMALL_BLOCK_BYTES
        self._key = (self.shape, self.dims, self.split, self.sizes, self.halo, self.boundary)
        self._hash = hash(self._key)
        self._derived = Derived()  # what is computed from this layout (darray._layout.derived)

    # ------------------------------------------------------------ construction
    @classmethod
    def create(cls, func: str, shape: Sequence[int], nprocs: int, split="auto", grid=None, sizes=None,
               halo=0, boundary="none", min_size: int = 0) -> Layout:
        """Build and validate a layout from user specs (see :func:`darray.asarray`).

        Layouts are immutable: one built from hashable specs is remembered
        (up to :data:`_CREATED_MAX` of them) and returned again for the same specs.
        """
        shape = tuple(shape)
        try:
            key = (cls, shape, nprocs, _typed(split), _typed(grid), _typed(sizes), _typed(halo), boundary, min_size)
            found = _CREATED.get(key)
        except TypeError:  # unhashable specs (lists, dicts): build every time
            key = found = None
        if found is not None:
            return found
        layout = cls._create(func, shape, nprocs, split, grid, sizes, halo, boundary, min_size)
        if key is not None:
            if len(_CREATED) >= _CREATED_MAX:
                _CREATED.clear()
            _CREATED[key] = layout
        return layout

    @classmethod
    def _create(cls, func, shape, nprocs, split, grid, sizes, halo, boundary, min_size) -> Layout:
        shape = tuple(int(n) for n in shape)
        if prod(shape) > sys.maxsize:  # (checked before any rank sizes its block: one error everywhere)
            raise ValueError(f"{func}: array is too big; got shape {shape} ({prod(shape)} elements), expected "
                             f"at most {sys.maxsize} elements, as NumPy")
        ndim = len(shape)
        halo_t = normalize_halo(func, halo, ndim)
        boundary_t = normalize_boundary(func, boundary, ndim)
        dims, split_t = normalize_split(func, split, grid, shape, nprocs, halo_t, min_size)
        named = [None] * ndim  # grid dim named for each axis, even a dim of size 1
        for g, axis in enumerate(split_t):
            if axis is not None:
                named[axis] = g
        explicit = _explicit_sizes(func, sizes, tuple(named), ndim)
        per_axis = []
        for axis, n in enumerate(shape):
            g = named[axis]
            parts = dims[g] if g is not None else 1
            if axis in explicit:
                per_axis.append(check_sizes(func, n, parts, explicit[axis]))
            else:
                per_axis.append(balanced_sizes(n, parts))
        layout = cls(shape, dims, split_t, per_axis, halo_t, boundary_t)
        layout.check_halo(func)
        return layout

    def replace(self, **changes) -> Layout:
        """A copy with some fields changed (no validation beyond halo widths)."""
        fields = dict(shape=self.shape, dims=self.dims, split=self.split, sizes=self.sizes, halo=self.halo,
                      boundary=self.boundary)
        fields.update(changes)
        return Layout(**fields)

    def with_halo(self, func: str, halo=0, boundary=None) -> Layout:
        """The same blocks with other ghost widths / boundaries (validated)."""
        halo_t = normalize_halo(func, halo, self.ndim)
        boundary_t = self.boundary if boundary is None else normalize_boundary(func, boundary, self.ndim)
        layout = self.replace(halo=halo_t, boundary=boundary_t)
        layout.check_halo(func)
        return layout

    def without_halo(self) -> Layout:
        """The same blocks with no ghost cells (``self`` when it has none).

        Examples
        --------
        >>> lay = Layout.create("example", (10,), nprocs=2, split=0, halo=1, boundary="periodic")
        >>> lay.without_halo().halo, lay.without_halo().boundary
        ((0,), ('none',))
        """
        if not self.has_halo and all(b == "none" for b in self.boundary):
            return self
        found = self._derived.facts.get(("without_halo",))
        if found is None:
            found = self._derived.facts[("without_halo",)] = Layout(self.shape, self.dims, self.split, self.sizes)
        return found

    def check_halo(self, func: str) -> None:
        """Refuse ghost widths wider than the axis (wider than a block is fine: multi-hop)."""
        for axis, width in enumerate(self.halo):
            if width and self.shape[axis] < width:
                raise ValueError(message(func, f"halo wider than axis {axis}", width,
                                         f"at most the axis length, {self.shape[axis]}"))

    # ------------------------------------------------------------ identity
    def __eq__(self, other):
        return self is other or (isinstance(other, Layout) and self._hash == other._hash and self._key == other._key)

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return (f"Layout(shape={self.shape}, dims={self.dims}, split={self.split}, sizes={self.sizes}, "
                f"halo={self.halo}, boundary={self.boundary})")

    @cached_property
    def blocks_key(self) -> tuple:
        """What decides which cells each rank owns (halo and boundary excluded)."""
        return (self.shape, self.dims, self.split, self.sizes)

    # ------------------------------------------------------------ grid facts
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nprocs(self) -> int:
        return prod(self.dims)

    @cached_property
    def axis_dim(self) -> tuple:
        """For every array axis, the grid dim that cuts it, or None."""
        return _axis_dims(self.dims, self.split, self.ndim)

    @cached_property
    def offsets(self) -> tuple[tuple[int, ...], ...]:
        """Per axis, the start of every block and the end of the last."""
        return tuple(offsets(s) for s in self.sizes)

    @cached_property
    def is_replicated(self) -> bool:
        """True when every rank holds the whole array."""
        return all(s is None for s in self.split)

    def coords(self, rank: int) -> tuple[int, ...]:
        return coords_of(rank, self.dims)

    def rank(self, coords: Sequence[int]) -> int:
        return rank_of(coords, self.dims)

    def block_index(self, rank: int) -> tuple[int, ...]:
        """Index of ``rank``'s block along every array axis."""
        key = ("index", rank)
        found = self._derived.facts.get(key)
        if found is None:
            c = self.coords(rank)
            found = self._derived.facts[key] = tuple(0 if g is None else c[g] for g in self.axis_dim)
        return found

    # ------------------------------------------------------------ per-rank blocks
    def block_start(self, rank: int) -> tuple[int, ...]:
        return tuple(self.offsets[a][i] for a, i in enumerate(self.block_index(rank)))

    def block_shape(self, rank: int) -> tuple[int, ...]:
        key = ("shape", rank)
        found = self._derived.facts.get(key)
        if found is None:
            found = self._derived.facts[key] = tuple(self.sizes[a][i] for a, i in enumerate(self.block_index(rank)))
        return found

    def block_slices(self, rank: int) -> tuple[slice, ...]:
        """The global cells owned by ``rank``."""
        return tuple(slice(self.offsets[a][i], self.offsets[a][i + 1]) for a, i in enumerate(self.block_index(rank)))

    def padded_shape(self, rank: int) -> tuple[int, ...]:
        """Shape of ``rank``'s storage: its block plus ghost cells on both sides."""
        return tuple(n + 2 * h for n, h in zip(self.block_shape(rank), self.halo))

    def interior(self, rank: int) -> tuple[slice, ...]:
        """Where the owned cells sit inside the padded storage."""
        key = ("interior", rank)
        found = self._derived.facts.get(key)
        if found is None:
            found = self._derived.facts[key] = tuple(slice(h, h + n) for n, h in zip(self.block_shape(rank), self.halo))
        return found

    def owners(self, axis: int) -> tuple[int, ...]:
        """Number of blocks along ``axis`` (1 when the axis is not cut)."""
        return len(self.sizes[axis])

    # ------------------------------------------------------------ derived layouts
    def reduced(self, axes: Sequence[int], keepdims: bool) -> Layout:
        """Layout of a reduction over ``axes``: those axes become replicated (or vanish)."""
        key = ("reduced", tuple(axes), keepdims)
        found = self._derived.facts.get(key)
        if found is None:
            found = self._derived.facts[key] = self._reduced(set(axes), keepdims)
        return found

    def _reduced(self, axes: set, keepdims: bool) -> Layout:
        keep = [a for a in range(self.ndim) if a not in axes]
        if keepdims:
            new_axis = {a: a for a in range(self.ndim)}
            shape = tuple(1 if a in axes else n for a, n in enumerate(self.shape))
            sizes = tuple((1,) if a in axes else s for a, s in enumerate(self.sizes))
        else:
            new_axis = {a: i for i, a in enumerate(keep)}
            shape = tuple(self.shape[a] for a in keep)
            sizes = tuple(self.sizes[a] for a in keep)
        split = tuple(None if s is None or s in axes else new_axis[s] for s in self.split)
        return Layout(shape, self.dims, split, sizes)  # a reduction's result has no ghost cells

    def broadcast_layout(self, shape: Sequence[int]) -> Layout:
        """Layout for an operand of ``shape`` broadcast against this layout's shape.

        Operand axes that match a cut axis are cut the same way; broadcast
        (length-1 or missing) axes are replicated. No halo.
        """
        key = ("broadcast", tuple(shape))
        found = self._derived.facts.get(key)
        if found is None:
            found = self._derived.facts[key] = self._broadcast_layout(tuple(shape))
        return found

    def _broadcast_layout(self, shape: tuple) -> Layout:
        lead = self.ndim - len(shape)
        split, sizes = [], []
        for s in self.split:
            i = None if s is None else s - lead
            # the same length (1 included) is cut the same way; a broadcast axis (1 against n) is replicated
            ok = i is not None and i >= 0 and shape[i] == self.shape[s]
            split.append(i if ok else None)
        for i, n in enumerate(shape):
            a = i + lead
            sizes.append(self.sizes[a] if i in split else (n,))
        return Layout(shape, self.dims, split, sizes)

    def replicated(self) -> Layout:
        """Every rank holds the whole array (same grid)."""
        return replicated_layout(self.dims, self.shape)


_REPLICATED: dict = {}  # (dims, shape) -> its replicated layout


def replicated_layout(dims: tuple[int, ...], shape: tuple[int, ...]) -> Layout:
    """The layout of ``shape`` that every rank of grid ``dims`` holds whole: one object per (dims, shape).

    Layouts are immutable, so one object serves every array of that shape and
    grid (and compares by identity).
    """
    layout = _REPLICATED.get((dims, shape))
    if layout is None:
        if len(_REPLICATED) > _CREATED_MAX:
            _REPLICATED.clear()
        layout = _REPLICATED[dims, shape] = Layout(shape, dims, (None,) * len(dims), tuple((n,) for n in shape))
    return layout


def _axis_dims(dims, split, ndim) -> tuple:
    out = [None] * ndim
    for g, axis in enumerate(split):
        if axis is not None and dims[g] > 1:
            out[axis] = g
    return tuple(out)


def _explicit_sizes(func, sizes, axis_dim, ndim) -> dict:
    if sizes is None:
        return {}
    if isinstance(sizes, Mapping):
        return {normalize_axis(func, a, ndim): s for a, s in sizes.items()}
    cut = [a for a, g in enumerate(axis_dim) if g is not None]
    if isinstance(sizes, Sequence) and all(isinstance(s, numbers.Integral) for s in sizes):
        if len(cut) != 1:
            raise ValueError(message(func, "a flat list of block sizes needs exactly one split axis", tuple(sizes),
                                     "a dict {axis: sizes} for a multi-dimensional grid"))
        return {cut[0]: sizes}
    raise TypeError(message(func, "sizes must be a list of block sizes or a dict {axis: sizes}", sizes))
