"""Halo exchange (``x.exchange_halos``) and ``map_overlap`` against ``numpy.pad``, on every rank count.

Every rank's padded block (owned cells plus ghost cells) must equal its window
of the global array padded by ``numpy.pad`` axis by axis: boundary
``periodic`` is ``wrap``, ``reflect`` is ``symmetric``, ``nearest`` is
``edge`` and a number is ``constant``; with ``none`` the ghost cells past the
global edges keep what they held (a sentinel written before the exchange).
Layouts cover uneven blocks, empty blocks, blocks narrower than the halo
(multi-hop), replicated arrays and 2-d / 3-d grids at 4 ranks. The adjoint
test checks ``<A x, y> == <x, A^T y>`` for A = "exchange, then return the
padded block", with A^T written independently here in NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray._backend import namespace_of, to_numpy
from darray._core.dtypes import to_numpy_dtype
from darray._core.halo import HaloExchange
from darray.testing import agree, assert_equal, assert_raises_everywhere, uneven_sizes as uneven

pytestmark = pytest.mark.mpi

P = da.default_communicator().size
SHAPES = {1: (13,), 2: (9, 11), 3: (6, 7, 8)}
PAD_MODE = {"periodic": "wrap", "reflect": "symmetric", "nearest": "edge"}
SENTINEL = {"f": -777.0, "i": -777, "c": -777 - 7j, "b": True}


def comm():
    return da.default_communicator()



def thin(n: int, p: int) -> list[int]:
    """One-cell blocks and one big last block: halos wider than most blocks (multi-hop)."""
    return [1] * (p - 1) + [n - (p - 1)]


def layouts(ndim: int) -> dict[str, dict]:
    n = SHAPES[ndim]
    if ndim == 1:
        out = {"split0": dict(split=0), "uneven": dict(split=0, sizes=uneven(n[0], P)),
               "thin": dict(split=0, sizes=thin(n[0], P)), "replicated": dict(split=None)}
    elif ndim == 2:
        out = {"split0": dict(split=0), "split1": dict(split=1),
               "uneven0": dict(split=0, sizes={0: uneven(n[0], P)}),
               "thin1": dict(split=1, sizes={1: thin(n[1], P)}), "replicated": dict(split=None)}
        if P == 4:
            out |= {"grid22": dict(split=(0, 1), grid=(2, 2)), "grid22T": dict(split=(1, 0), grid=(2, 2)),
                    "grid22-none": dict(split=(None, 1), grid=(2, 2)),
                    "grid22-uneven": dict(split=(0, 1), grid=(2, 2), sizes={0: [9, 0], 1: [1, 10]})}
    else:
        out = {"split0": dict(split=0), "uneven1": dict(split=1, sizes={1: uneven(n[1], P)}),
               "split2": dict(split=2), "replicated": dict(split=None)}
        if P == 4:
            out |= {"grid122": dict(split=(0, 1, 2), grid=(1, 2, 2)), "grid22": dict(split=(2, 0), grid=(2, 2))}
    return out


#: Halo widths per ndim: narrow, per-axis, dict, wider than blocks, the whole axis.
HALOS = {1: [1, 3, 6, 13], 2: [1, (2, 0), {1: 3}, (4, 6), (9, 11)], 3: [1, (0, 2, 3), (6, 7, 8)]}
BOUNDARIES = ["none", "periodic", "reflect", "nearest", -1.5]


def values(shape, dtype="float64", seed=0) -> np.ndarray:
    rng = np.random.default_rng([seed, len(shape), sum(shape)])
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(-50, 50, shape).astype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)


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
@pytest.mark.parametrize("boundary", BOUNDARIES, ids=str)
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_exchange_matches_numpy_pad(ndim, boundary):
    """Every layout and halo width of ``HALOS`` (incl. wider than a block and the whole axis), float64."""
    g = values(SHAPES[ndim])
    for name, kw in layouts(ndim).items():
        for halo in HALOS[ndim]:
            x = with_sentinel(g, SENTINEL["f"], halo=halo, boundary=boundary, **kw)
            assert x.exchange_halos() is x
            assert_block(x, padded_model(g, halo, boundary, SENTINEL["f"]), f"{name} halo={halo} boundary={boundary}")


@pytest.mark.parametrize("dtype", ["float32", "int64", "complex128", "bool"])
def test_exchange_dtypes(dtype):
    """Other dtypes, every boundary, on the most cut 2-d layout, a 1-d multi-hop and a 3-d layout."""
    kind = np.dtype(dtype).kind
    constant = {"f": -1.5, "i": 7, "c": 1 - 2j, "b": 1}[kind]
    for boundary in BOUNDARIES:
        b = constant if not isinstance(boundary, str) else boundary
        for ndim, name, halo in [(2, "grid22" if P == 4 else "uneven0", (2, 3)), (1, "thin", 5), (3, "split2", 2)]:
            g = values(SHAPES[ndim], dtype, seed=3)
            x = with_sentinel(g, SENTINEL[kind], halo=halo, boundary=b, **layouts(ndim)[name])
            x.exchange_halos()
            assert to_numpy_dtype(x.block.dtype) == np.dtype(dtype)
            assert_block(x, padded_model(g, halo, b, SENTINEL[kind]), f"{dtype} {name} halo={halo} boundary={b}")


MIXED = [
    (2, ("periodic", "reflect"), (2, 3)),
    (2, ("nearest", "periodic"), (4, 1)),
    (2, {1: "periodic"}, (1, 5)),  # dict: axis 0 keeps "none"
    (2, (2.5, "none"), 3),
    (2, ("reflect", -4.0), (9, 2)),
    (3, ("nearest", -2.0, "periodic"), (2, 3, 4)),
    (3, ("none", "reflect", "periodic"), (3, 7, 1)),
]


@pytest.mark.parametrize("ndim,boundary,halo", MIXED, ids=[f"{n}d-{b}-{h}" for n, b, h in MIXED])
def test_exchange_mixed_boundaries(ndim, boundary, halo):
    """A different boundary per axis: the corners follow ``numpy.pad`` applied axis after axis."""
    g = values(SHAPES[ndim], seed=4)
    for name, kw in layouts(ndim).items():
        x = with_sentinel(g, SENTINEL["f"], halo=halo, boundary=boundary, **kw)
        x.exchange_halos()
        assert_block(x, padded_model(g, halo, boundary, SENTINEL["f"]), f"{name} halo={halo} boundary={boundary}")


@pytest.mark.parametrize("ndim", [2, 3])
def test_exchange_nonblocking(ndim):
    """``wait=False`` returns a handle; the ghosts are right after ``wait()`` (which may be called twice)."""
    g = values(SHAPES[ndim], seed=5)
    for name, kw in layouts(ndim).items():
        x = da.asarray(g, halo=2, boundary="periodic", **kw)
        handle = x.exchange_halos(wait=False)
        assert isinstance(handle, HaloExchange)
        interior = 2.0 * x.local  # work on owned cells while the messages fly
        assert handle.wait() is x
        assert handle.wait() is x
        assert_block(x, padded_model(g, 2, "periodic", None), f"wait=False {name}")
        assert np.array_equal(interior, 2.0 * g[x.layout.block_slices(x.comm.rank)])


def test_repeated_exchanges_reuse_their_plan_safely():
    """Halo exchanges are keyed (transports keep persistent requests per buffer): reuse must stay correct.

    Two arrays of one layout in flight together and waited in reverse order,
    one array exchanged twice before its first wait, an array freed and
    another of the same shape made in its place, and many rounds of new data.
    """
    g = values(SHAPES[2], seed=15)
    for name, kw in layouts(2).items():
        x = da.asarray(g, halo=(2, 1), boundary="periodic", **kw)
        y = da.asarray(-g, halo=(2, 1), boundary="periodic", **kw)
        hx, hy = x.exchange_halos(wait=False), y.exchange_halos(wait=False)
        hy.wait()
        hx.wait()
        assert_block(x, padded_model(g, (2, 1), "periodic", None), f"first of two in flight {name}")
        assert_block(y, padded_model(-g, (2, 1), "periodic", None), f"second of two in flight {name}")
        first = x.exchange_halos(wait=False, force=True)
        second = x.exchange_halos(wait=False, force=True)  # the same buffer twice in flight
        first.wait()
        second.wait()
        assert_block(x, padded_model(g, (2, 1), "periodic", None), f"twice in flight {name}")
        for k in range(3):
            del x
            x = da.asarray(g + k, halo=(2, 1), boundary="periodic", **kw)  # may reuse the freed memory
            x.exchange_halos()
            assert_block(x, padded_model(g + k, (2, 1), "periodic", None), f"round {k} {name}")


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
    assert not agree(comm(), alive == 0), f"{alive} blocks of deleted arrays are still alive"


def test_exchange_freshness_and_force():
    """A second exchange of unchanged data is skipped; ``__setitem__`` marks halos stale; ``force`` refreshes.

    Writing through ``x.local`` is not tracked (documented): only ``force=True`` refreshes then.
    """
    g = values(SHAPES[2], seed=6)
    for name, kw in layouts(2).items():
        x = da.asarray(g, halo=1, boundary="nearest", **kw)
        x.exchange_halos()
        assert_block(x, padded_model(g, 1, "nearest", None), f"first {name}")
        g2 = g + 100.0
        x.local[...] = namespace_of(x.local).asarray(g2[x.layout.block_slices(x.comm.rank)])  # untracked write
        x.exchange_halos()  # skipped: halos believed fresh
        assert_block(x, padded_model(g, 1, "nearest", None), f"untracked write then exchange {name}", owned=g2)
        x.exchange_halos(force=True)
        assert_block(x, padded_model(g2, 1, "nearest", None), f"force=True {name}")
        g3 = g2.copy()
        g3[2:5, 3:] = -3.0
        x[2:5, 3:] = -3.0  # tracked write
        x.exchange_halos(wait=False).wait()
        assert_block(x, padded_model(g3, 1, "nearest", None), f"after setitem {name}")


def test_redistribute_into_halo_layout():
    """``redistribute(halo=, boundary=)`` moves the blocks; the exchange then fills the new ghosts."""
    ndim = 2
    g = values(SHAPES[ndim], seed=7)
    names = list(layouts(ndim))
    src = layouts(ndim)[names[0]]
    for name in names[1:]:
        kw = dict(layouts(ndim)[name])
        x = da.asarray(g, **src).redistribute(kw.pop("split"), kw.pop("grid", None), sizes=kw.pop("sizes", None),
                                              halo=2, boundary="reflect")
        assert x.halo == (2,) * ndim
        x.exchange_halos(force=True)
        assert_block(x, padded_model(g, 2, "reflect", None), f"to {name}")


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


@pytest.mark.parametrize("boundary", ["periodic", "reflect", "nearest"])
@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_exchange_adjoint(ndim, boundary):
    """<A x, y> == <x, A^T y> with A: owned cells -> exchanged padded blocks, summed over ranks.

    Every layout (replicated too: each rank's copy is one term of the sum),
    with a halo wider than some blocks.
    """
    shape = SHAPES[ndim]
    halo = {1: 4, 2: (2, 3), 3: (1, 2, 3)}[ndim]
    xg = values(shape, seed=8)
    for name, kw in layouts(ndim).items():
        x = with_sentinel(xg, np.nan, halo=halo, boundary=boundary, **kw)
        lay = x.layout
        # every rank's y, drawn identically on every rank (the model needs all of them)
        ys = [np.random.default_rng([9, r]).standard_normal(lay.padded_shape(r)) for r in range(P)]
        x.exchange_halos()
        mine = float(np.sum(to_numpy(x.block) * ys[x.comm.rank]))
        lhs = float(np.asarray(x.comm.allreduce(np.asarray([mine]), "sum"))[0])
        rhs = float(np.sum(xg * adjoint_model(lay, ys, boundary)))
        ok = np.isfinite(lhs) and abs(lhs - rhs) <= 1e-10 * max(1.0, abs(rhs))
        failed = agree(x.comm, ok)
        assert not failed, f"{name}: <Ax,y>={lhs} != <x,A^T y>={rhs} on ranks {failed}; {lay}"


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


@pytest.mark.parametrize("boundary", BOUNDARIES, ids=str)
def test_map_overlap_trim(boundary):
    """trim=True with a neighbour stencil: equals the stencil of the globally padded array."""
    for ndim in (1, 2, 3):
        g = values(SHAPES[ndim], seed=10)
        want = cross_reference(g, boundary)
        for name, kw in layouts(ndim).items():
            x = da.asarray(g, **kw)
            got = da.map_overlap(cross, x, depth=1, boundary=boundary)
            assert got.layout.blocks_key == x.layout.blocks_key and not any(got.halo)
            assert_equal(got, want, err_msg=f"{ndim}d {name} boundary={boundary}")


@pytest.mark.parametrize("boundary", ["periodic", "reflect", "nearest", 0.5], ids=str)
def test_map_overlap_no_trim_multihop(boundary):
    """trim=False with a box sum of depth up to wider than blocks, per-axis depths."""
    for ndim, depth in [(1, 1), (1, 4), (2, (1, 2)), (2, (4, 3)), (3, (2, 0, 1))]:
        g = values(SHAPES[ndim], seed=11)
        d = per_axis(depth, ndim, 0)
        want = box(padded_model(g, d, boundary, None), d)
        for name, kw in layouts(ndim).items():
            got = da.map_overlap(lambda b: box(b, d), da.asarray(g, **kw), depth=depth, boundary=boundary,
                                 trim=False)
            assert_equal(got, want, err_msg=f"{ndim}d {name} depth={depth} boundary={boundary}")


def test_map_overlap_several_arrays_and_kwargs():
    """Arrays in different layouts are aligned to the first; kwargs reach ``func``."""
    g, h = values(SHAPES[2], seed=12), values(SHAPES[2], seed=13)
    names = list(layouts(2))
    for a_name in names:
        x = da.asarray(g, **layouts(2)[a_name])
        y = da.asarray(h, **layouts(2)[names[(names.index(a_name) + 1) % len(names)]])
        got = da.map_overlap(lambda a, b, scale: cross(a) + scale * b, x, y, depth=1, boundary="periodic", scale=3.0)
        assert_equal(got, cross_reference(g, "periodic") + 3.0 * h, err_msg=a_name)
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
    x = da.asarray(g, split=0, sizes=uneven(13, P))
    # drops one cell of non-empty blocks only: wrong on some ranks, right on empty ones
    assert_raises_everywhere(ValueError, da.map_overlap, lambda b: b[1:-2] if b.shape[0] > 2 else b[1:-1], x,
                      depth=1, boundary="periodic", trim=False)


@pytest.mark.parametrize("boundary", ["none", "periodic", "reflect", "nearest", 0.25])
def test_map_overlap_matches_dask(boundary):
    """The same function, depth and boundary through ``dask.array.map_overlap``."""
    dask_array = pytest.importorskip("dask.array")
    for ndim in (1, 2):
        g = values(SHAPES[ndim], seed=15)
        chunks = tuple(max(1, n // 3) for n in g.shape)
        want = dask_array.map_overlap(cross, dask_array.from_array(g, chunks=chunks), depth=1, boundary=boundary,
                                      trim=True, dtype=g.dtype).compute(scheduler="synchronous")
        assert np.allclose(want, cross_reference(g, boundary))
        for name, kw in layouts(ndim).items():
            assert_equal(da.map_overlap(cross, da.asarray(g, **kw), depth=1, boundary=boundary), want,
                         err_msg=f"{ndim}d {name} boundary={boundary}")
