"""Halo exchange (``x.exchange_halos``) and ``map_overlap`` against ``numpy.pad``, on every rank count.

Every rank's padded block (owned cells plus ghost cells) must equal its window
of the global array padded by ``numpy.pad`` axis by axis: boundary
``periodic`` is ``wrap``, ``reflect`` is ``symmetric``, ``nearest`` is
``edge`` and a number is ``constant``; with ``none`` the ghost cells past the
global edges keep what they held (a sentinel written before the exchange).
Layouts (``tests/_cases.py``, one test each) cover uneven blocks, empty
blocks, blocks narrower than the halo (multi-hop), replicated arrays and
2-d / 3-d grids at 4 ranks. The adjoint
test checks ``<A x, y> == <x, A^T y>`` for A = "exchange, then return the
padded block", with A^T written independently here in NumPy.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import darray as da
from darray._backend import namespace_of, to_numpy
from darray._core.dtypes import to_numpy_dtype
from darray._core.halo import HaloExchange
from darray.testing import agree, assert_equal, assert_raises_everywhere

from _cases import COMM, P, by_ndim, catalogue, layouts, values

pytestmark = pytest.mark.mpi

SHAPES = {1: (13,), 2: (9, 11), 3: (6, 7, 8)}
PAD_MODE = {"periodic": "wrap", "reflect": "symmetric", "nearest": "edge"}
SENTINEL = {"f": -777.0, "i": -777, "c": -777 - 7j, "b": True}

#: Uneven and empty blocks, blocks narrower than the halo (``thin``: multi-hop), replicated, 2-d / 3-d grids.
LAYOUTS = {1: layouts(SHAPES[1], "split0", "uneven0", "thin0", "replicated"),
           2: layouts(SHAPES[2], "split0", "split1", "uneven0", "thin1", "replicated", "grid2x2", "grid2x2-10",
                      "grid2x2-n1", "grid2x2-uneven"),
           3: layouts(SHAPES[3], "split0", "uneven1", "split2", "replicated", "grid1x2x2", "grid2x2-20")}


#: Halo widths per ndim: narrow, per-axis, dict, wider than blocks, the whole axis.
HALOS = {1: [1, 3, 6, 13], 2: [1, (2, 0), {1: 3}, (4, 6), (9, 11)], 3: [1, (0, 2, 3), (6, 7, 8)]}
BOUNDARIES = ["none", "periodic", "reflect", "nearest", -1.5]


def per_axis(spec, ndim, default):
    if isinstance(spec, dict):
        return tuple(spec.get(a, default) for a in range(ndim))
    if isinstance(spec, (tuple, list)):
        return tuple(spec)
    return (spec,) * ndim


def _np_pad(g: np.ndarray, halo, boundary) -> np.ndarray:
    """``numpy.pad`` axis after axis, one mode per axis (no ``none`` axes)."""
    out = g
    for axis, (h, b) in enumerate(zip(per_axis(halo, g.ndim, 0), per_axis(boundary, g.ndim, "none"))):
        width = [(0, 0)] * g.ndim
        width[axis] = (h, h)
        if isinstance(b, str):
            out = np.pad(out, width, mode=PAD_MODE[b])
        else:
            out = np.pad(out, width, mode="constant", constant_values=np.asarray(b).astype(g.dtype))
    return out


def padded_model(g: np.ndarray, halo, boundary, sentinel) -> np.ndarray:
    """The global array with its ghost frame, as the halo docs define it.

    In-domain (and periodic) ghosts copy their cell; then, axis after axis,
    the ghosts past a global edge are filled by the boundary rule (corners
    follow); ``none`` leaves them as they were (``sentinel``, or what an
    earlier axis's rule wrote there). Without ``none`` axes this is exactly
    ``numpy.pad`` applied axis after axis, which is checked here too.
    """
    halos = per_axis(halo, g.ndim, 0)
    bounds = per_axis(boundary, g.ndim, "none")
    index, inside = [], []
    for h, b, n in zip(halos, bounds, g.shape):
        i = np.arange(-h, n + h)
        index.append(np.mod(i, n) if b == "periodic" else np.clip(i, 0, n - 1))
        inside.append((b == "periodic") | ((i >= 0) & (i < n)))
    model = np.full(tuple(n + 2 * h for n, h in zip(g.shape, halos)), sentinel, dtype=g.dtype)
    mask = np.ones(model.shape, dtype=bool)
    for axis, ok in enumerate(inside):
        mask &= ok.reshape([-1 if a == axis else 1 for a in range(g.ndim)])
    model[mask] = g[np.ix_(*index)][mask]
    for axis, (h, b, n) in enumerate(zip(halos, bounds, g.shape)):
        if not h or b in ("none", "periodic"):
            continue
        where = np.flatnonzero(~inside[axis])
        i = where - h
        if isinstance(b, str):
            src = np.clip(i, 0, n - 1) if b == "nearest" else np.where(i < 0, -i - 1, 2 * n - 1 - i)
            values = np.take(model, src + h, axis=axis)
        else:
            values = np.asarray(b).astype(g.dtype)
        key = [slice(None)] * g.ndim
        key[axis] = where
        model[tuple(key)] = values
    if "none" not in bounds:
        assert np.array_equal(model, _np_pad(g, halos, bounds), equal_nan=g.dtype.kind in "fc")
    return model


def window(layout, rank, model):
    """``rank``'s padded block inside the padded global model (model index = global index + halo)."""
    return model[tuple(slice(s, s + n + 2 * h) for s, n, h in
                       zip(layout.block_start(rank), layout.block_shape(rank), layout.halo))]


def assert_block(x, expected_padded, msg="", owned=None):
    """Every rank's padded storage equals its window of ``expected_padded`` (verdict agreed).

    ``owned``: a global array whose cells replace the owned part of each window.
    """
    want = window(x.layout, x.comm.rank, expected_padded)
    if owned is not None:
        want = want.copy()
        want[x.layout.interior(x.comm.rank)] = owned[x.layout.block_slices(x.comm.rank)]
    got = to_numpy(x.block)
    ok = got.shape == want.shape and got.dtype == want.dtype and np.array_equal(got, want)
    problem = "" if ok else f"rank {x.comm.rank}: got\n{got}\nexpected\n{want}"
    failed = agree(x.comm, ok)
    assert not failed, f"{msg}: padded blocks differ on ranks {failed}; layout {x.layout}\n{problem}"


def with_sentinel(g, sentinel, **kw):
    """``g`` laid out with halos whose storage holds ``sentinel`` everywhere but the owned cells."""
    x = da.asarray(g, **kw)
    xp = namespace_of(x.block)
    x.block[...] = sentinel
    x.local[...] = xp.asarray(g[x.layout.block_slices(x.comm.rank)])
    return x


# ------------------------------------------------------------------ exchange vs numpy.pad
@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_exchange_matches_numpy_pad(ndim, layout):
    """Every boundary and halo width of ``HALOS`` (incl. wider than a block and the whole axis), float64."""
    g = values(SHAPES[ndim])
    for boundary in BOUNDARIES:
        for halo in HALOS[ndim]:
            x = with_sentinel(g, SENTINEL["f"], halo=halo, boundary=boundary, **layout.kw)
            assert x.exchange_halos() is x
            assert_block(x, padded_model(g, halo, boundary, SENTINEL["f"]), f"halo={halo} boundary={boundary}")


#: The most cut 2-d layout, a 1-d multi-hop and a 3-d layout, with their halo widths.
DTYPE_CASES = [(catalogue(SHAPES[2]).get("grid2x2") or catalogue(SHAPES[2])["uneven0"], (2, 3)),
               (catalogue(SHAPES[1]).get("thin0") or catalogue(SHAPES[1])["split0"], 5),
               (catalogue(SHAPES[3])["split2"], 2)]


@pytest.mark.parametrize("layout,halo", [pytest.param(c, h, id=f"{c.ndim}d-{c}") for c, h in DTYPE_CASES])
@pytest.mark.parametrize("dtype", ["float32", "int64", "complex128", "bool"])
def test_exchange_dtypes(dtype, layout, halo):
    """Other dtypes, every boundary."""
    kind = np.dtype(dtype).kind
    constant = {"f": -1.5, "i": 7, "c": 1 - 2j, "b": 1}[kind]
    g = values(layout.shape, dtype, seed=3)
    for boundary in BOUNDARIES:
        b = constant if not isinstance(boundary, str) else boundary
        x = with_sentinel(g, SENTINEL[kind], halo=halo, boundary=b, **layout.kw)
        x.exchange_halos()
        assert to_numpy_dtype(x.block.dtype) == np.dtype(dtype)
        assert_block(x, padded_model(g, halo, b, SENTINEL[kind]), f"{dtype} halo={halo} boundary={b}")


MIXED = [
    (2, ("periodic", "reflect"), (2, 3)),
    (2, ("nearest", "periodic"), (4, 1)),
    (2, {1: "periodic"}, (1, 5)),  # dict: axis 0 keeps "none"
    (2, (2.5, "none"), 3),
    (2, ("reflect", -4.0), (9, 2)),
    (3, ("nearest", -2.0, "periodic"), (2, 3, 4)),
    (3, ("none", "reflect", "periodic"), (3, 7, 1)),
]


@pytest.mark.parametrize("ndim,layout", by_ndim({2: LAYOUTS[2], 3: LAYOUTS[3]}))
def test_exchange_mixed_boundaries(ndim, layout):
    """A different boundary per axis (each row of ``MIXED``): the corners follow ``numpy.pad`` axis after axis."""
    g = values(SHAPES[ndim], seed=4)
    for boundary, halo in [(b, h) for n, b, h in MIXED if n == ndim]:
        x = with_sentinel(g, SENTINEL["f"], halo=halo, boundary=boundary, **layout.kw)
        x.exchange_halos()
        assert_block(x, padded_model(g, halo, boundary, SENTINEL["f"]), f"halo={halo} boundary={boundary}")


@pytest.mark.parametrize("ndim,layout", by_ndim({2: LAYOUTS[2], 3: LAYOUTS[3]}))
def test_exchange_nonblocking(ndim, layout):
    """``wait=False`` returns a handle; the ghosts are right after ``wait()`` (which may be called twice)."""
    g = values(SHAPES[ndim], seed=5)
    x = layout.array(g, halo=2, boundary="periodic")
    handle = x.exchange_halos(wait=False)
    assert isinstance(handle, HaloExchange)
    interior = 2.0 * x.local  # work on owned cells while the messages fly
    assert handle.wait() is x
    assert handle.wait() is x
    assert_block(x, padded_model(g, 2, "periodic", None), "wait=False")
    assert np.array_equal(to_numpy(interior), 2.0 * g[x.layout.block_slices(x.comm.rank)])


@pytest.mark.parametrize("layout", LAYOUTS[2], ids=str)
def test_repeated_exchanges_reuse_their_plan_safely(layout):
    """Halo exchanges are keyed (transports keep persistent requests per buffer): reuse must stay correct.

    Two arrays of one layout in flight together and waited in reverse order,
    one array exchanged twice before its first wait, an array freed and
    another of the same shape made in its place, and many rounds of new data.
    """
    g = values(SHAPES[2], seed=15)
    x = layout.array(g, halo=(2, 1), boundary="periodic")
    y = layout.array(-g, halo=(2, 1), boundary="periodic")
    hx, hy = x.exchange_halos(wait=False), y.exchange_halos(wait=False)
    hy.wait()
    hx.wait()
    assert_block(x, padded_model(g, (2, 1), "periodic", None), "first of two in flight")
    assert_block(y, padded_model(-g, (2, 1), "periodic", None), "second of two in flight")
    first = x.exchange_halos(wait=False, force=True)
    second = x.exchange_halos(wait=False, force=True)  # the same buffer twice in flight
    first.wait()
    second.wait()
    assert_block(x, padded_model(g, (2, 1), "periodic", None), "twice in flight")
    for k in range(3):
        del x
        x = layout.array(g + k, halo=(2, 1), boundary="periodic")  # may reuse the freed memory
        x.exchange_halos()
        assert_block(x, padded_model(g + k, (2, 1), "periodic", None), f"round {k}")


def test_exchange_keeps_no_block_alive():
    """What a halo exchange keeps for reuse (persistent requests) lives and dies with its array."""
    import gc
    import weakref

    g = values(SHAPES[2], seed=16)
    refs = []
    for _ in range(5):
        x = da.asarray(g, halo=1, boundary="periodic", split=0)
        x.exchange_halos()
        refs.append(weakref.ref(x.block))
        del x
    gc.collect()
    alive = sum(r() is not None for r in refs)
    assert not agree(COMM, alive == 0), f"{alive} blocks of deleted arrays are still alive"


@pytest.mark.parametrize("layout", LAYOUTS[2], ids=str)
def test_exchange_freshness_and_force(layout):
    """A second exchange of unchanged data is skipped; ``__setitem__`` marks halos stale; ``force`` refreshes.

    Writing through ``x.local`` is not tracked (documented): only ``force=True`` refreshes then.
    """
    g = values(SHAPES[2], seed=6)
    x = layout.array(g, halo=1, boundary="nearest")
    x.exchange_halos()
    assert_block(x, padded_model(g, 1, "nearest", None), "first")
    g2 = g + 100.0
    x.local[...] = namespace_of(x.local).asarray(g2[x.layout.block_slices(x.comm.rank)])  # untracked write
    x.exchange_halos()  # skipped: halos believed fresh
    assert_block(x, padded_model(g, 1, "nearest", None), "untracked write then exchange", owned=g2)
    x.exchange_halos(force=True)
    assert_block(x, padded_model(g2, 1, "nearest", None), "force=True")
    g3 = g2.copy()
    g3[2:5, 3:] = -3.0
    x[2:5, 3:] = -3.0  # tracked write
    x.exchange_halos(wait=False).wait()
    assert_block(x, padded_model(g3, 1, "nearest", None), "after setitem")


@pytest.mark.parametrize("layout", LAYOUTS[2][1:], ids=str)
def test_redistribute_into_halo_layout(layout):
    """``redistribute(halo=, boundary=)`` from the first layout moves the blocks; the exchange fills the new ghosts."""
    g = values(SHAPES[2], seed=7)
    kw = dict(layout.kw)
    x = LAYOUTS[2][0].array(g).redistribute(kw.pop("split"), kw.pop("grid", None), sizes=kw.pop("sizes", None),
                                            halo=2, boundary="reflect")
    assert x.halo == (2, 2)
    x.exchange_halos(force=True)
    assert_block(x, padded_model(g, 2, "reflect", None))


def test_bad_halo_specs_raise_everywhere():
    g = values(SHAPES[2])
    assert_raises_everywhere(ValueError, da.asarray, g, split=0, halo=10)  # wider than axis 0
    assert_raises_everywhere(ValueError, da.asarray, g, split=0, halo=-1)
    assert_raises_everywhere(ValueError, da.asarray, g, split=0, halo=(1, 2, 3))
    assert_raises_everywhere(ValueError, da.asarray, g, split=0, halo=1, boundary="mirror")
    assert_raises_everywhere(ValueError, da.asarray, g, split=0, halo=1, boundary=True)


# ------------------------------------------------------------------ adjoint
def _source_index(boundary, n):
    """Global index -> owner cell for one axis (the linear part of each boundary rule)."""
    if boundary == "periodic":
        return lambda i: np.mod(i, n)
    if boundary == "nearest":
        return lambda i: np.clip(i, 0, n - 1)
    # reflect (numpy 'symmetric'), also for halos as wide as the axis
    return lambda i: np.where(i < 0, -i - 1, np.where(i >= n, 2 * n - 1 - i, i))


def adjoint_model(layout, ys, boundary) -> np.ndarray:
    """A^T y: every rank's padded values summed back into the global cells they were copied from."""
    out = np.zeros(layout.shape)
    for rank, y in enumerate(ys):
        idx = [_source_index(boundary, n)(np.arange(s - h, s + m + h))
               for s, m, h, n in zip(layout.block_start(rank), layout.block_shape(rank), layout.halo, layout.shape)]
        np.add.at(out, np.ix_(*idx), y)
    return out


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_exchange_adjoint(ndim, layout):
    """<A x, y> == <x, A^T y> with A: owned cells -> exchanged padded blocks, summed over ranks.

    Boundaries periodic, reflect and nearest; replicated layouts too (each
    rank's copy is one term of the sum); a halo wider than some blocks.
    """
    halo = {1: 4, 2: (2, 3), 3: (1, 2, 3)}[ndim]
    xg = values(SHAPES[ndim], seed=8)
    for boundary in ("periodic", "reflect", "nearest"):
        x = with_sentinel(xg, np.nan, halo=halo, boundary=boundary, **layout.kw)
        lay = x.layout
        # every rank's y, drawn identically on every rank (the model needs all of them)
        ys = [np.random.default_rng([9, r]).standard_normal(lay.padded_shape(r)) for r in range(P)]
        x.exchange_halos()
        mine = float(np.sum(to_numpy(x.block) * ys[x.comm.rank]))
        lhs = float(np.asarray(x.comm.allreduce(np.asarray([mine]), "sum"))[0])
        rhs = float(np.sum(xg * adjoint_model(lay, ys, boundary)))
        ok = np.isfinite(lhs) and abs(lhs - rhs) <= 1e-10 * max(1.0, abs(rhs))
        failed = agree(x.comm, ok)
        assert not failed, f"{boundary}: <Ax,y>={lhs} != <x,A^T y>={rhs} on ranks {failed}; {lay}"


# ------------------------------------------------------------------ map_overlap
def cross(b: np.ndarray) -> np.ndarray:
    """b plus its two neighbours along every axis, where both exist (trim=True friendly)."""
    out = namespace_of(b).asarray(b, copy=True)
    for axis in range(b.ndim):
        if b.shape[axis] < 3:  # no cell has both neighbours (array-api-strict refuses the empty slices)
            continue
        inner = [slice(None)] * b.ndim
        lo, hi = list(inner), list(inner)
        inner[axis], lo[axis], hi[axis] = slice(1, -1), slice(None, -2), slice(2, None)
        out[tuple(inner)] += b[tuple(lo)] + b[tuple(hi)]
    return out


def cross_reference(g, boundary):
    """``cross`` of the global array with its boundary applied: what ``map_overlap(cross, trim=True)`` gives."""
    if boundary == "none":
        return cross(g)
    return cross(padded_model(g, 1, boundary, None))[(slice(1, -1),) * g.ndim]


def box(b: np.ndarray, depth) -> np.ndarray:
    """Sum over the (2d+1)^n box around each owned cell (trim=False: returns the owned part)."""
    shape = tuple(n - 2 * d for n, d in zip(b.shape, depth))
    out = namespace_of(b).zeros(shape, dtype=b.dtype)
    for offs in np.ndindex(*(2 * d + 1 for d in depth)):
        out += b[tuple(slice(o, o + n) for o, n in zip(offs, shape))]
    return out


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_map_overlap_trim(ndim, layout):
    """trim=True with a neighbour stencil, every boundary: equals the stencil of the globally padded array."""
    g = values(SHAPES[ndim], seed=10)
    x = layout.array(g)
    for boundary in BOUNDARIES:
        got = da.map_overlap(cross, x, depth=1, boundary=boundary)
        assert got.layout.blocks_key == x.layout.blocks_key and not any(got.halo)
        assert_equal(got, cross_reference(g, boundary), err_msg=f"boundary={boundary}")


@pytest.mark.parametrize("ndim,layout", by_ndim(LAYOUTS))
def test_map_overlap_no_trim_multihop(ndim, layout):
    """trim=False with a box sum of depth up to wider than blocks, per-axis depths, four boundaries."""
    g = values(SHAPES[ndim], seed=11)
    x = layout.array(g)
    for depth in {1: [1, 4], 2: [(1, 2), (4, 3)], 3: [(2, 0, 1)]}[ndim]:
        d = per_axis(depth, ndim, 0)
        for boundary in ("periodic", "reflect", "nearest", 0.5):
            got = da.map_overlap(lambda b: box(b, d), x, depth=depth, boundary=boundary, trim=False)
            assert_equal(got, box(padded_model(g, d, boundary, None), d), err_msg=f"depth={depth} boundary={boundary}")


@pytest.mark.parametrize("index", range(len(LAYOUTS[2])), ids=[str(c) for c in LAYOUTS[2]])
def test_map_overlap_several_arrays_and_kwargs(index):
    """Arrays in different layouts (this one and the next) are aligned to the first; kwargs reach ``func``."""
    g, h = values(SHAPES[2], seed=12), values(SHAPES[2], seed=13)
    x = LAYOUTS[2][index].array(g)
    other = LAYOUTS[2][(index + 1) % len(LAYOUTS[2])]
    y = other.array(h)
    got = da.map_overlap(lambda a, b, scale: cross(a) + scale * b, x, y, depth=1, boundary="periodic", scale=3.0)
    assert_equal(got, cross_reference(g, "periodic") + 3.0 * h, err_msg=f"second array {other}")
    assert got.layout.blocks_key == x.layout.blocks_key


def test_map_overlap_reuses_fresh_halos():
    """An input already carrying the halo is used as is; repeated calls agree."""
    g = values(SHAPES[2], seed=14)
    x = da.asarray(g, split=0, halo=1, boundary="periodic")
    first = da.map_overlap(cross, x, depth=1, boundary="periodic")
    second = da.map_overlap(cross, x, depth=1, boundary="periodic")
    assert_equal(first, cross_reference(g, "periodic"))
    assert_equal(second, cross_reference(g, "periodic"))


def test_map_overlap_bad_arguments_raise_everywhere():
    g = values(SHAPES[2])
    x = da.asarray(g, split=0)
    assert_raises_everywhere(TypeError, da.map_overlap, cross, g)
    assert_raises_everywhere(ValueError, da.map_overlap, cross, x, da.asarray(g[:3], split=0))
    assert_raises_everywhere(ValueError, da.map_overlap, cross, x, depth=-1)
    assert_raises_everywhere(ValueError, da.map_overlap, cross, x, depth=10)
    assert_raises_everywhere(ValueError, da.map_overlap, cross, x, boundary="mirror")


def test_map_overlap_wrong_block_shape_raises_everywhere(monkeypatch):
    """A func returning the wrong shape on some blocks only fails on every rank under DARRAY_DEBUG.

    (Without debugging the check is local, to keep stencil loops free of an extra collective;
    the abort hook then ends an MPI job with the message.)
    """
    import darray._debug

    monkeypatch.setattr(darray._debug, "enabled", True)
    g = values(SHAPES[1])
    x = catalogue(SHAPES[1])["uneven0"].array(g)
    # drops one cell of non-empty blocks only: wrong on some ranks, right on empty ones
    assert_raises_everywhere(ValueError, da.map_overlap, lambda b: b[1:-2] if b.shape[0] > 2 else b[1:-1], x,
                      depth=1, boundary="periodic", trim=False)


def test_map_overlap_trim_refuses_a_block_of_another_shape():
    """``trim=True`` cuts the ghost cells off what func returns: a block a row short would come out shifted by a
    row (it did, silently). It raises on every rank, at every layout of cells."""
    g = values(SHAPES[2])
    for name in ("split0", "replicated"):
        x = catalogue(SHAPES[2])[name].array(g)
        for boundary in ("periodic", "nearest"):
            assert_raises_everywhere(ValueError, da.map_overlap, lambda b: b[1:, ...], x, depth=1, boundary=boundary,
                                     match="shape it was given")


@functools.cache
def dask_cross(ndim: int, boundary) -> np.ndarray:
    """``cross`` of the seed-15 array through ``dask.array.map_overlap`` (computed once per process)."""
    dask_array = pytest.importorskip("dask.array")
    g = values(SHAPES[ndim], seed=15)
    chunks = tuple(max(1, n // 3) for n in g.shape)
    want = dask_array.map_overlap(cross, dask_array.from_array(g, chunks=chunks), depth=1, boundary=boundary,
                                  trim=True, dtype=g.dtype).compute(scheduler="synchronous")
    assert np.allclose(want, cross_reference(g, boundary))
    return want


@pytest.mark.parametrize("ndim,layout", by_ndim({1: LAYOUTS[1], 2: LAYOUTS[2]}))
def test_map_overlap_matches_dask(ndim, layout):
    """The same function, depth and boundary through ``dask.array.map_overlap``."""
    pytest.importorskip("dask.array")
    x = layout.array(values(SHAPES[ndim], seed=15))
    for boundary in ("none", "periodic", "reflect", "nearest", 0.25):
        assert_equal(da.map_overlap(cross, x, depth=1, boundary=boundary), dask_cross(ndim, boundary),
                     err_msg=f"boundary={boundary}")
