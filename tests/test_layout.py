"""Property tests of the pure layout math in ``darray._layout`` (serial: no MPI, no arrays moved).

Oracles are brute force: ``numpy.array_split`` for balanced sizes, a linear
scan for ``locate``, a counter array for block coverage, and an independent
enumeration of grid factorisations for ``plan_grid``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from darray._layout import (BOUNDARIES, Layout, balanced_sizes, check_sizes, coords_of, locate, offsets, plan_grid,
                            rank_of)

FUNC = "probe_fn"  # the function name passed to the layout code; every error message must start with it


# ----------------------------------------------------------------- oracles --
def all_grids(n: int, k: int) -> list[tuple[int, ...]]:
    """Every ordered k-tuple of positive ints with product n (brute force, independent of darray)."""
    if k == 0:
        return [()] if n == 1 else []
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    return [g for g in itertools.product(divisors, repeat=k) if math.prod(g) == n]


def largest_block(shape, parts) -> int:
    """Cells in the largest block when every axis is cut into balanced parts."""
    return math.prod(max(balanced_sizes(n, p)) for n, p in zip(shape, parts))


def replicas(layout: Layout) -> int:
    """How many ranks hold each block: the product of the grid dims that cut no axis."""
    return math.prod(d for d, s in zip(layout.dims, layout.split) if s is None)


def check_layout(layout: Layout, nprocs: int) -> None:
    """Every structural invariant of a layout, checked by brute force over all ranks."""
    assert layout.nprocs == nprocs == math.prod(layout.dims)
    assert len(layout.split) == len(layout.dims)
    assert len(layout.sizes) == len(layout.halo) == len(layout.boundary) == layout.ndim == len(layout.shape)
    cut = [s for s in layout.split if s is not None]
    assert len(set(cut)) == len(cut), "an axis is cut by two grid dims"
    for g, (d, s) in enumerate(zip(layout.dims, layout.split)):
        if d == 1:
            assert s is None, "a grid dim of size 1 must be normalised to None"
        if s is not None:
            assert 0 <= s < layout.ndim
            assert layout.axis_dim[s] == g
    for axis, n in enumerate(layout.shape):
        g = layout.axis_dim[axis]
        parts = layout.dims[g] if g is not None else 1
        assert len(layout.sizes[axis]) == parts == layout.owners(axis)
        assert all(s >= 0 for s in layout.sizes[axis])
        assert sum(layout.sizes[axis]) == n
        assert layout.offsets[axis] == offsets(layout.sizes[axis])

    counter = np.zeros(layout.shape, dtype=np.int64)
    holders: dict[tuple, list[int]] = {}
    for rank in range(nprocs):
        coords = layout.coords(rank)
        assert layout.rank(coords) == rank
        slices = layout.block_slices(rank)
        assert len(slices) == layout.ndim
        assert all(s.step is None and 0 <= s.start <= s.stop <= n for s, n in zip(slices, layout.shape))
        assert tuple(s.stop - s.start for s in slices) == layout.block_shape(rank)
        assert tuple(s.start for s in slices) == layout.block_start(rank)
        counter[slices] += 1
        holders.setdefault(layout.block_index(rank), []).append(rank)
        # halo: padded storage = block + ghosts on both sides; interior selects exactly the block
        padded = layout.padded_shape(rank)
        assert padded == tuple(b + 2 * h for b, h in zip(layout.block_shape(rank), layout.halo))
        inner = layout.interior(rank)
        assert tuple(s.start for s in inner) == layout.halo
        assert np.empty(padded, dtype=np.int8)[inner].shape == layout.block_shape(rank)
    r = replicas(layout)
    assert np.all(counter == r), f"cells not covered exactly {r} times: {counter}"
    # also for shapes with zero cells: every block index is held by exactly `r` ranks
    n_blocks = math.prod(len(s) for s in layout.sizes)
    assert len(holders) == n_blocks == nprocs // r
    assert all(len(v) == r for v in holders.values())
    for width, n in zip(layout.halo, layout.shape):
        assert width == 0 or n >= width, "halo wider than the axis"
    assert layout == Layout(layout.shape, layout.dims, layout.split, layout.sizes, layout.halo, layout.boundary)
    assert hash(layout) == hash(layout.replace())


# -------------------------------------------------------------- strategies --
shapes = st.integers(0, 3).flatmap(lambda nd: st.lists(st.integers(0, 20), min_size=nd, max_size=nd).map(tuple))
nprocs_st = st.integers(1, 6)


@st.composite
def layout_requests(draw):
    """(shape, nprocs, kwargs for Layout.create, expectations) covering every kind of split spec."""
    shape = draw(shapes)
    ndim = len(shape)
    nprocs = draw(nprocs_st)
    kinds = ["auto", "none", "none-grid", "tuple-grid"]
    if ndim:
        kinds += ["axis", "tuple-nogrid"]
    kind = draw(st.sampled_from(kinds))
    kw: dict = {}
    expect: dict = {"kind": kind}
    if kind == "auto":
        kw["split"] = "auto"
        kw["min_size"] = draw(st.sampled_from([0, 1, 30, 10**6]))
    elif kind == "none":
        kw["split"] = None
        expect["dims"] = (nprocs,)
    elif kind == "none-grid":
        grid = draw(st.sampled_from(all_grids(nprocs, draw(st.integers(1, 3)))))
        kw.update(split=None, grid=grid)
        expect["dims"] = grid
    elif kind == "axis":
        axis = draw(st.integers(-ndim, ndim - 1))
        kw["split"] = axis
        if draw(st.booleans()):
            kw["grid"] = (nprocs,)
        expect.update(dims=(nprocs,), cut={axis % ndim: 0} if nprocs > 1 else {})
    else:
        k = draw(st.integers(1, 3)) if kind == "tuple-grid" else draw(st.integers(1, ndim))
        pool = list(range(ndim))
        entries = []
        for _ in range(k):
            if pool and (kind == "tuple-nogrid" or draw(st.booleans())):
                a = draw(st.sampled_from(pool))
                pool.remove(a)
                entries.append(a - ndim if draw(st.booleans()) else a)
            else:
                entries.append(None)
        kw["split"] = tuple(entries)
        if kind == "tuple-grid":
            grid = draw(st.sampled_from(all_grids(nprocs, k)))
            kw["grid"] = grid
            expect["dims"] = grid
            expect["cut"] = {e % ndim: g for g, e in enumerate(entries) if e is not None and grid[g] > 1}
    return shape, nprocs, kw, expect


# ------------------------------------------------------------------ blocks --
@given(st.integers(0, 60), st.integers(1, 12))
def test_balanced_sizes_match_array_split(n, parts):
    want = tuple(len(a) for a in np.array_split(np.arange(n), parts))
    assert balanced_sizes(n, parts) == want


@given(st.lists(st.integers(0, 5), min_size=1, max_size=8), st.data())
def test_offsets_and_locate_agree_with_a_scan(sizes, data):
    offs = offsets(sizes)
    assert len(offs) == len(sizes) + 1 and offs[0] == 0
    assert tuple(np.diff(offs)) == tuple(sizes)
    total = offs[-1]
    start = data.draw(st.integers(0, total), label="start")
    stop = data.draw(st.integers(start, total), label="stop")
    # brute force: the owner of every cell in [start, stop), then the span from the first to the last owner
    owner = [i for i, s in enumerate(sizes) for _ in range(s)]
    hit = sorted({owner[c] for c in range(start, stop)})
    want = range(hit[0], hit[-1] + 1) if hit else range(0)
    got = locate(offs, start, stop)
    assert isinstance(got, range)
    assert list(got) == list(want), (sizes, start, stop)
    # every block in the answer that has cells really intersects the range
    for i in got:
        assert sizes[i] == 0 or (offs[i] < stop and offs[i + 1] > start)


def test_locate_examples_with_empty_blocks():
    assert list(locate((0, 3, 3, 8), 3, 5)) == [2]  # skips the empty block sitting at start
    assert list(locate((0, 0, 0, 4), 0, 4)) == [2]
    assert list(locate((0, 2, 2, 2, 5), 1, 3)) == [0, 1, 2, 3]  # empty blocks inside the span are included
    assert list(locate((0, 3, 3), 0, 3)) == [0]  # a trailing empty block is not
    assert list(locate((0, 3, 6), 4, 4)) == []


@given(st.integers(0, 30), st.integers(1, 6), st.data())
def test_check_sizes_accepts_every_composition(n, parts, data):
    cuts = sorted(data.draw(st.lists(st.integers(0, n), min_size=parts - 1, max_size=parts - 1)))
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, n])]
    assert check_sizes(FUNC, n, parts, sizes) == tuple(sizes)
    if parts > 1 or n > 0:
        bad = list(sizes)
        bad[0] += 1
        with pytest.raises(ValueError, match=f"^{FUNC}: block sizes do not add up"):
            check_sizes(FUNC, n, parts, bad)


# -------------------------------------------------------------------- grid --
dims_st = st.lists(st.integers(1, 4), max_size=4).map(tuple)


@given(dims_st)
def test_coords_of_and_rank_of_are_inverse(dims):
    n = math.prod(dims)
    seen = set()
    for rank in range(n):
        c = coords_of(rank, dims)
        assert len(c) == len(dims)
        assert all(0 <= ci < d for ci, d in zip(c, dims))
        assert rank_of(c, dims) == rank
        if dims:
            assert c == tuple(int(v) for v in np.unravel_index(rank, dims))  # row-major, like MPI_Cart
        seen.add(c)
    assert len(seen) == n


@given(shapes, nprocs_st, st.data())
def test_plan_grid_minimises_the_largest_block(shape, nprocs, data):
    halo = data.draw(st.none() | st.lists(st.integers(0, 2), min_size=len(shape), max_size=len(shape)).map(tuple))
    parts = plan_grid(shape, nprocs, halo)
    if not shape:
        assert parts == ()
        return
    assert len(parts) == len(shape)
    assert all(isinstance(p, int) and p >= 1 for p in parts)
    assert math.prod(parts) == nprocs
    best = min(largest_block(shape, g) for g in all_grids(nprocs, len(shape)))
    assert largest_block(shape, parts) == best


def test_plan_grid_examples():
    assert plan_grid((1000, 1000), 4) == (4, 1)
    assert plan_grid((3, 1000), 4) == (1, 4)
    assert plan_grid((1024, 1024), 16, halo=(1, 1)) == (4, 4)
    assert plan_grid((), 5) == ()


# ------------------------------------------------------------------ layouts --
@given(layout_requests())
def test_create_tiles_the_index_space(request):
    shape, nprocs, kw, expect = request
    layout = Layout.create(FUNC, shape, nprocs, **kw)
    check_layout(layout, nprocs)
    assert layout.shape == shape
    assert layout.halo == (0,) * len(shape) and layout.boundary == ("none",) * len(shape)
    if "dims" in expect:
        assert layout.dims == expect["dims"]
    if "cut" in expect:
        assert {a: g for a, g in enumerate(layout.axis_dim) if g is not None} == expect["cut"]
    if expect["kind"] in ("none", "none-grid"):
        assert layout.is_replicated
        assert all(layout.block_slices(r) == tuple(slice(0, n) for n in shape) for r in range(nprocs))
    if expect["kind"] == "auto":
        if not shape or nprocs == 1 or math.prod(shape) < kw["min_size"]:
            assert layout.is_replicated and layout.dims == (nprocs,)
        else:
            parts = plan_grid(shape, nprocs)
            want = tuple(layout.dims[g] if g is not None else 1 for g in layout.axis_dim)
            assert want == parts
            assert all(s is not None for s in layout.split) or layout.is_replicated
    # no explicit sizes: every cut axis is balanced like numpy.array_split
    for axis, n in enumerate(shape):
        assert layout.sizes[axis] == balanced_sizes(n, len(layout.sizes[axis]))


@given(layout_requests(), st.data())
@settings(suppress_health_check=[HealthCheck.filter_too_much])  # most requests replicate: only cut ones are kept
def test_explicit_sizes_including_empty_blocks(request, data):
    shape, nprocs, kw, _ = request
    base = Layout.create(FUNC, shape, nprocs, **kw)
    cut = [a for a, g in enumerate(base.axis_dim) if g is not None]
    assume(cut)
    explicit = {}
    for axis in cut:
        parts, n = len(base.sizes[axis]), shape[axis]
        cuts = sorted(data.draw(st.lists(st.integers(0, n), min_size=parts - 1, max_size=parts - 1)))
        explicit[axis] = [b - a for a, b in zip([0, *cuts], [*cuts, n])]
    sizes = explicit[cut[0]] if len(cut) == 1 and data.draw(st.booleans()) else explicit
    layout = Layout.create(FUNC, shape, nprocs, split=base.split, grid=base.dims, sizes=sizes)
    check_layout(layout, nprocs)
    assert layout.blocks_key[:3] == base.blocks_key[:3]
    for axis in range(len(shape)):
        assert layout.sizes[axis] == (tuple(explicit[axis]) if axis in explicit else base.sizes[axis])
    # sizes that do not add up to the axis length are refused
    axis = cut[0]
    wrong = dict(explicit)
    wrong[axis] = [*explicit[axis][:-1], explicit[axis][-1] + 1]
    with pytest.raises(ValueError, match=f"^{FUNC}: block sizes do not add up to the axis length"):
        Layout.create(FUNC, shape, nprocs, split=base.split, grid=base.dims, sizes=wrong)


boundaries = st.sampled_from(BOUNDARIES) | st.integers(-3, 3) | st.floats(-1, 1, allow_nan=False)


@given(layout_requests(), st.data())
def test_halo_is_accepted_exactly_when_no_wider_than_the_axis(request, data):
    """A halo may be wider than a block (multi-hop exchange) but not wider than the axis."""
    shape, nprocs, kw, _ = request
    base = Layout.create(FUNC, shape, nprocs, **kw)
    ndim = len(shape)
    halo = data.draw(st.lists(st.integers(0, 3), min_size=ndim, max_size=ndim).map(tuple))
    boundary = data.draw(st.lists(boundaries, min_size=ndim, max_size=ndim).map(tuple))
    too_wide = any(h and n < h for h, n in zip(halo, shape))
    cut_sizes = {a: base.sizes[a] for a, g in enumerate(base.axis_dim) if g is not None}
    args = dict(split=base.split, grid=base.dims, sizes=cut_sizes or None, halo=halo, boundary=boundary)
    if too_wide:
        with pytest.raises(ValueError, match=f"^{FUNC}: halo wider than axis"):
            Layout.create(FUNC, shape, nprocs, **args)
        with pytest.raises(ValueError, match=f"^{FUNC}: halo wider than axis"):
            base.with_halo(FUNC, halo, boundary)
        return
    layout = Layout.create(FUNC, shape, nprocs, **args)
    check_layout(layout, nprocs)
    assert layout.blocks_key == base.blocks_key
    assert layout.halo == halo and layout.boundary == boundary
    assert layout.has_halo == any(halo)
    assert base.with_halo(FUNC, halo, boundary) == layout
    for rank in range(nprocs):
        assert layout.block_slices(rank) == base.block_slices(rank)
        assert layout.padded_shape(rank) == tuple(b + 2 * h for b, h in zip(base.block_shape(rank), halo))
        assert layout.interior(rank) == tuple(slice(h, h + b) for h, b in zip(halo, base.block_shape(rank)))


@given(layout_requests(), st.data())
def test_auto_split_with_halo_is_valid_or_refused(request, data):
    shape, nprocs, kw, expect = request
    assume(expect["kind"] == "auto")
    halo = data.draw(st.integers(0, 2))
    try:
        layout = Layout.create(FUNC, shape, nprocs, halo=halo, **kw)
    except ValueError as e:
        assert str(e).startswith(f"{FUNC}: halo wider than axis"), e
        assert any(n < halo for n in shape)
        return
    check_layout(layout, nprocs)
    assert layout.halo == (halo,) * len(shape)


@given(layout_requests(), st.data())
def test_reduced_layout_is_consistent(request, data):
    shape, nprocs, kw, _ = request
    ndim = len(shape)
    base = Layout.create(FUNC, shape, nprocs, **kw)
    if ndim and data.draw(st.booleans()):
        base = base.with_halo(FUNC, tuple(min(2, n) for n in shape))
    axes = data.draw(st.sets(st.integers(0, max(ndim - 1, 0))) if ndim else st.just(set()))
    keepdims = data.draw(st.booleans())
    red = base.reduced(sorted(axes), keepdims)
    check_layout(red, nprocs)
    keep = [a for a in range(ndim) if a not in axes]
    assert red.dims == base.dims
    if keepdims:
        assert red.shape == tuple(1 if a in axes else n for a, n in enumerate(shape))
    else:
        assert red.shape == tuple(shape[a] for a in keep)
    for a in axes:
        if keepdims:
            assert red.axis_dim[a] is None and red.halo[a] == 0
    for rank in range(nprocs):
        old, new = base.block_slices(rank), red.block_slices(rank)
        if keepdims:
            assert new == tuple(slice(0, 1) if a in axes else old[a] for a in range(ndim))
        else:
            assert new == tuple(old[a] for a in keep)
    # ranks that held one block of the input hold one block of the result
    assert replicas(red) == replicas(base) * math.prod(base.dims[base.axis_dim[a]] for a in axes
                                                       if base.axis_dim[a] is not None)


@given(layout_requests(), st.data())
def test_broadcast_layout_aligns_with_the_result(request, data):
    shape, nprocs, kw, _ = request
    ndim = len(shape)
    base = Layout.create(FUNC, shape, nprocs, **kw)
    lead = data.draw(st.integers(0, ndim), label="dropped leading axes")
    op_shape = tuple(1 if data.draw(st.booleans()) else n for n in shape[lead:])
    lay = base.broadcast_layout(op_shape)
    check_layout(lay, nprocs)
    assert lay.shape == op_shape and lay.dims == base.dims
    assert lay.halo == (0,) * len(op_shape)
    for i, n in enumerate(op_shape):
        a = i + lead
        aligned = base.axis_dim[a] is not None and n == shape[a]  # the same length, 1 included, is cut alike
        assert (lay.axis_dim[i] is not None) == aligned, (i, base, lay)
        for rank in range(nprocs):
            got = lay.block_slices(rank)[i]
            assert got == (base.block_slices(rank)[a] if aligned else slice(0, n))


@given(layout_requests())
def test_replicated_keeps_the_grid(request):
    shape, nprocs, kw, _ = request
    lay = Layout.create(FUNC, shape, nprocs, **kw).replicated()
    check_layout(lay, nprocs)
    assert lay.is_replicated and replicas(lay) == nprocs


# --------------------------------------------------------------- bad input --
@pytest.mark.parametrize("grid", [(2, 2), (3,), (5, 1), (0, 4), (-2, -2)])
def test_grid_must_multiply_to_nprocs(grid):
    with pytest.raises(ValueError, match=f"^{FUNC}: grid dims must be positive and multiply to the number of ranks"):
        Layout.create(FUNC, (8, 8), 6, split=(0, 1)[:len(grid)], grid=grid)
    with pytest.raises(ValueError, match=f"^{FUNC}: grid dims"):
        Layout.create(FUNC, (8, 8), 6, split=None, grid=grid)


def test_grid_must_be_a_sequence_of_ints():
    with pytest.raises(TypeError, match=f"^{FUNC}: grid must be a sequence"):
        Layout.create(FUNC, (8,), 2, split=0, grid=2)


@pytest.mark.parametrize("shape, nprocs, kw", [
    ((7,), 4, dict(split=0, halo=8)),
    ((3, 8), 2, dict(split=1, halo=(4, 1))),            # the unsplit axis is shorter than its halo
    ((0, 8), 2, dict(split=1, halo=1)),                 # an empty axis has no room for any halo
    ((6, 6), 4, dict(split=(0, 1), grid=(2, 2), halo={1: 7})),
])
def test_halo_wider_than_the_axis(shape, nprocs, kw):
    with pytest.raises(ValueError, match=f"^{FUNC}: halo wider than axis"):
        Layout.create(FUNC, shape, nprocs, **kw)


@pytest.mark.parametrize("shape, nprocs, kw", [
    ((7,), 4, dict(split=0, halo=2)),                   # blocks 2,2,2,1: multi-hop
    ((8,), 2, dict(split=0, sizes=[8, 0], halo=1)),    # an empty block
    ((6, 6), 4, dict(split=(0, 1), grid=(2, 2), halo={1: 6})),
    ((3,), 1, dict(split=None, halo=3)),
])
def test_halo_wider_than_a_block_is_allowed(shape, nprocs, kw):
    layout = Layout.create(FUNC, shape, nprocs, **kw)
    check_layout(layout, nprocs)


@pytest.mark.parametrize("halo", [-1, True, 1.5, (1,), "1"])
def test_bad_halo(halo):
    with pytest.raises((ValueError, TypeError), match=f"^{FUNC}: halo"):
        Layout.create(FUNC, (8, 8), 2, split=0, halo=halo)


@pytest.mark.parametrize("boundary", ["wrap", "", True, None.__class__, ("none",), ("periodic", "mirror")])
def test_unknown_boundary(boundary):
    with pytest.raises(ValueError, match=f"^{FUNC}: (unknown boundary|boundary needs one entry per axis)"):
        Layout.create(FUNC, (8, 8), 2, split=0, boundary=boundary)


@pytest.mark.parametrize("split, grid", [((0, 0), (2, 2)), ((1, -1), (2, 2)), ((0, 0), None), ((0, None, 0), (2, 1, 2))])
def test_repeated_split_axis(split, grid):
    with pytest.raises(ValueError, match=f"^{FUNC}: an axis is split by two grid dims"):
        Layout.create(FUNC, (8, 8), 4, split=split, grid=grid)


@pytest.mark.parametrize("sizes", [[3, 3], [4, 4, 1], {0: [9, 0]}, [9, -1], [8, 0, 0]])
def test_sizes_must_tile_the_axis(sizes):
    with pytest.raises(ValueError, match=f"^{FUNC}: (block sizes do not add up|wrong number of block sizes|"
                                         "block sizes must be non-negative)"):
        Layout.create(FUNC, (8, 3), 2, split=0, sizes=sizes)


def test_sizes_error_messages():
    with pytest.raises(ValueError, match=f"^{FUNC}: block sizes do not add up to the axis length; got \\(3, 3\\)"):
        Layout.create(FUNC, (8,), 2, split=0, sizes=[3, 3])
    with pytest.raises(ValueError, match=f"^{FUNC}: a flat list of block sizes needs exactly one split axis"):
        Layout.create(FUNC, (4, 4), 4, split=(0, 1), grid=(2, 2), sizes=[2, 2])
    with pytest.raises(TypeError, match=f"^{FUNC}: sizes must be"):
        Layout.create(FUNC, (4,), 2, split=0, sizes="22")
    with pytest.raises(ValueError, match=f"^{FUNC}: wrong number of block sizes"):
        Layout.create(FUNC, (4, 4), 4, split=(0, 1), grid=(2, 2), sizes={0: [4]})


def test_flat_sizes_on_a_grid_of_one():
    """A flat sizes list names the blocks of the one split axis; it must also work on one rank, where the grid
    dim of size 1 is normalised to None (as the dict form {0: [5]} does)."""
    # whether a flat list is accepted depends on the split spec only, never on the rank count: a split naming
    # two axes needs the dict form even when one of its grid dims has size 1
    assert Layout.create(FUNC, (5, 3), 2, split=(0, 1), grid=(2, 1), sizes={0: [2, 3]}).sizes == ((2, 3), (3,))
    assert Layout.create(FUNC, (5, 3), 2, split=(0, 1), grid=(1, 2), sizes={1: [3, 0]}).sizes == ((5,), (3, 0))
    for grid in [(2, 1), (1, 2)]:
        with pytest.raises(ValueError, match=f"^{FUNC}: a flat list of block sizes needs exactly one split axis"):
            Layout.create(FUNC, (5, 3), 2, split=(0, 1), grid=grid, sizes=[2, 3])
    assert Layout.create(FUNC, (5, 3), 2, split=(None, 1), grid=(1, 2), sizes=[3, 0]).sizes == ((5,), (3, 0))
    assert Layout.create(FUNC, (5,), 1, split=0, sizes={0: [5]}).sizes == ((5,),)
    assert Layout.create(FUNC, (5,), 1, split=0, sizes=[5]).sizes == ((5,),)
    assert Layout.create(FUNC, (5, 3), 1, split=-1, sizes=[3]).sizes == ((5,), (3,))
    with pytest.raises(ValueError, match=f"^{FUNC}: block sizes do not add up"):
        Layout.create(FUNC, (5,), 1, split=0, sizes=[4])


@pytest.mark.parametrize("shape, kw, exc, text", [
    ((8,), dict(split="rows"), ValueError, "unknown split"),
    ((8,), dict(split=1.5), TypeError, "unknown split"),
    ((8,), dict(split=(0.0,)), TypeError, "split entries must be axes or None"),
    ((8,), dict(split=1), ValueError, "axis out of bounds"),
    ((8,), dict(split=-2), ValueError, "axis out of bounds"),
    ((), dict(split=0), ValueError, "a 0-d array cannot be split"),
    ((8,), dict(split="auto", grid=(1, 2)), ValueError, "a grid of 2 dims cannot cut a 1-d array"),
    ((8, 8), dict(split=0, grid=(1, 2)), ValueError, "an integer split needs a 1-d grid"),
    ((8, 8), dict(split=(0, None)), ValueError, "a split with None entries needs explicit grid dims"),
    ((8, 8), dict(split=(0, 1), grid=(2,)), ValueError, "split needs one entry per grid dimension"),
    ((8, 8), dict(split=(0,), grid=(1, 2)), ValueError, "split needs one entry per grid dimension"),
])
def test_bad_split(shape, kw, exc, text):
    with pytest.raises(exc, match=f"^{FUNC}: {text}"):
        Layout.create(FUNC, shape, 2, **kw)


def test_create_remembers_layouts_but_not_across_spec_types():
    first = Layout.create("t", (10, 4), nprocs=3, split=0, halo=(1, 0))
    assert Layout.create("t", (10, 4), nprocs=3, split=0, halo=(1, 0)) is first
    assert Layout.create("t", [10, 4], nprocs=3, split=[0], halo=[1, 0]) == first  # unhashable specs: built anew
    for bad in (dict(halo=(1.0, 0)), dict(halo=(True, 0)), dict(split=0.0)):  # equal hashes, other types: refused
        with pytest.raises((TypeError, ValueError)):
            Layout.create("t", (10, 4), nprocs=3, **{"split": 0, "halo": (1, 0), **bad})


@pytest.mark.parametrize("shape, nprocs, grid, split", [
    ((4096, 4096), 4, (2, 2), (0, 1)),
    ((4096, 4096), 2, (2,), (0,)),
    ((3, 1000, 1000), 4, (2, 2), (1, 2)),
    ((1000, 3), 4, (4,), (0,)),
])
def test_auto_split_with_a_grid_cuts_the_axes_that_suit_it(shape, nprocs, grid, split):
    """``split='auto'`` with ``grid=``: the grid is kept and the axes are chosen (``darray explain --grid 2,2``)."""
    layout = Layout.create(FUNC, shape, nprocs, split="auto", grid=grid)
    assert (layout.dims, layout.split) == (grid, split)


@pytest.mark.parametrize("shape, nprocs, dims", [
    ((4096, 4096), 4, (2, 2)),   # equal load either way: both named axes are cut
    ((4096, 1024), 4, (2, 2)),
    ((64, 64, 64), 8, (4, 2)),   # split=(0, 1) of a 3-d array
    ((1, 4096), 4, (1, 4)),      # cutting the 1-long axis would make blocks larger: one axis only
    ((4096, 4096), 3, (3, 1)),   # a prime number of ranks cuts one axis
])
def test_two_named_split_axes_are_both_cut(shape, nprocs, dims):
    layout = Layout.create(FUNC, shape, nprocs, split=(0, 1))
    assert layout.dims == dims
