"""darray.random: the global array depends only on the seed and the call sequence.

Every distributed result is compared, on every rank, with the same calls made
on a fresh generator of the same seed over a one-process communicator
(``SelfCommunicator``): bit-for-bit equality whatever the rank count, split
axis, grid or uneven block sizes. Statistical checks are loose (5 sigma).
All checks are collective (``assert_equal`` / ``agree``) or on replicated
values.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import darray as da
import darray.random as dr
from darray._backend import to_numpy
from darray._comm import SelfCommunicator
from darray._layout import Layout
from darray.testing import agree, assert_equal, uneven_sizes as uneven

from _cases import P, case, layouts

pytestmark = pytest.mark.mpi

SEED = 20240611
SELF = SelfCommunicator()


@pytest.fixture(autouse=True)
def small_auto_threshold(monkeypatch):
    """Let split="auto" distribute the small arrays used here (same setting on every rank)."""
    monkeypatch.setattr(da.config, "min_distributed_size", 4)


def collective_check(comm, ok, what: str) -> None:
    failed = agree(comm, bool(ok))
    assert not failed, f"{what}: failed on ranks {failed} of {comm.size}"


def count(mask) -> int:
    """Number of True cells of a boolean DArray (a replicated int)."""
    return int(da.sum(da.astype(mask, da.int64)))


def every(shape) -> list:
    """The layouts to try for an array of ``shape``: replicated, cut along each axis (balanced, uneven, first
    block empty), halos (periodic), 2x2 grids (cut both ways, copies, uneven with an empty block) at 4 ranks."""
    cuts = [f"{kind}{a}" for a in range(len(shape)) for kind in ("split", "uneven", "first-empty")]
    halos = ("halo0", f"halo{len(shape) - 1}") if len(shape) >= 2 else ()
    return layouts(shape, "replicated", *cuts, *halos, "grid2x2", "grid2x2-10", "grid2x2-0n", "grid2x2-uneven")


SHAPE = (13, 7)

# name -> draw(generator, **layout keywords); every one is called twice in a row
METHODS = {
    "random": lambda g, **kw: g.random(SHAPE, **kw),
    "random_float32": lambda g, **kw: g.random(SHAPE, dtype=np.float32, **kw),
    "uniform": lambda g, **kw: g.uniform(-2.0, 3.0, SHAPE, **kw),
    "standard_normal": lambda g, **kw: g.standard_normal(SHAPE, **kw),
    "standard_normal_float32": lambda g, **kw: g.standard_normal(SHAPE, dtype="float32", **kw),
    "normal": lambda g, **kw: g.normal(1.5, 0.5, SHAPE, **kw),
    "standard_exponential": lambda g, **kw: g.standard_exponential(SHAPE, **kw),
    "exponential": lambda g, **kw: g.exponential(3.0, SHAPE, **kw),
    "integers": lambda g, **kw: g.integers(-7, 1000, SHAPE, **kw),
    "integers_endpoint_int8": lambda g, **kw: g.integers(-128, 127, SHAPE, dtype=np.int8, endpoint=True, **kw),
    "integers_uint64_full": lambda g, **kw: g.integers(0, 2**64 - 1, SHAPE, dtype="uint64", endpoint=True, **kw),
    "integers_int64_full": lambda g, **kw: g.integers(-2**63, 2**63, SHAPE, **kw),
    "choice_int": lambda g, **kw: g.choice(10, SHAPE, **kw),
    "choice_array": lambda g, **kw: g.choice(np.array([2.5, -1.0, 7.0]), SHAPE, **kw),
    "choice_p": lambda g, **kw: g.choice(np.arange(4) * 10, SHAPE, p=[0.1, 0.2, 0.3, 0.4], **kw),
    "choice_no_replace": lambda g, **kw: g.choice(200, SHAPE, replace=False, **kw),
}


# ------------------------------------------------------------------ layout independence --
@functools.cache
def reference(name: str) -> list[np.ndarray]:
    """Two successive draws of ``METHODS[name]`` on one process (computed once per test run)."""
    ref = dr.default_rng(SEED)
    return [to_numpy(METHODS[name](ref, comm=SELF).gather()) for _ in range(2)]


@pytest.mark.parametrize("layout", every(SHAPE), ids=str)
@pytest.mark.parametrize("name", sorted(METHODS))
def test_every_layout_reproduces_one_process(name, layout):
    expected = reference(name)
    assert not np.array_equal(expected[0], expected[1]), "successive calls must differ"
    rng = dr.default_rng(SEED)
    for call in range(2):
        x = METHODS[name](rng, **layout.kw)
        assert x.shape == SHAPE and x.dtype == expected[call].dtype
        assert_equal(x, expected[call], rtol=0.0, err_msg=f"{name} call {call}")


@pytest.mark.parametrize("shape", [(), (0,), (1,), (29,), (0, 4), (5, 0, 3), (4, 5, 6), (2, 3, 4, 5)])
def test_shapes_and_split_axes(shape, comm):
    ref = dr.default_rng(SEED)
    expected = [ref.normal(size=shape, comm=SELF).gather(), ref.integers(5, size=shape, comm=SELF).gather()]
    opts = [dict(split="auto"), dict(split=None)]
    opts += [dict(split=axis) for axis in range(len(shape))]
    if shape:
        opts.append(dict(split=0, sizes={0: uneven(shape[0], comm.size)}))
    if len(shape) >= 3:
        opts.append(dict(split=-1, sizes={-1: uneven(shape[-1], comm.size)}))
    if comm.size == 4 and len(shape) >= 3:
        opts += [dict(split=(2, 1), grid=(2, 2)), dict(split=(0, 2), grid=(2, 2))]
    for o in opts:
        rng = dr.default_rng(SEED)
        assert_equal(rng.normal(size=shape, **o), expected[0], rtol=0.0, err_msg=f"normal {shape} {o}")
        assert_equal(rng.integers(5, size=shape, **o), expected[1], err_msg=f"integers {shape} {o}")


def test_matches_numpy_philox_stream():
    """Call c reads stream c of NumPy's Philox keyed by SeedSequence(seed): an independent oracle."""
    key = np.random.SeedSequence(SEED).generate_state(2, dtype=np.uint64)
    rng = dr.default_rng(SEED)
    for call in range(3):
        raw = np.random.Philox(key=key, counter=call << 128).random_raw(2 * 91)
        got = to_numpy(rng.random((13, 7), comm=SELF).gather())
        np.testing.assert_array_equal(got.ravel(), (raw[:91] >> np.uint64(11)) * 2.0**-53)
    raw = np.random.Philox(key=key, counter=3 << 128).random_raw(2 * 91)
    u1 = ((raw[0::2] >> np.uint64(11)) + 1) * 2.0**-53
    u2 = (raw[1::2] >> np.uint64(11)) * 2.0**-53
    want = np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2)
    np.testing.assert_array_equal(to_numpy(rng.standard_normal((7, 13), comm=SELF).gather()).ravel(), want)


def test_vectorised_kernel_matches_numpy_philox():
    key = np.random.SeedSequence(7).generate_state(2, dtype=np.uint64)
    for stream in (0, 1, 12345, 2**64 + 3):
        counters = np.array([0, 1, 2, 5, 1000, 2**40, 2**63 + 11], dtype=np.uint64)
        got = dr._philox(counters + np.uint64(1), stream, key)
        for c, row in zip(counters.tolist(), got):
            bitgen = np.random.Philox(key=key, counter=(stream << 128) + c)
            np.testing.assert_array_equal(row, bitgen.random_raw(4))


@pytest.mark.parametrize("loop_min", [0, 1 << 40])
@pytest.mark.parametrize("shape", [(11, 6), (3, 9, 5), (50,)])
def test_block_words_on_any_grid(shape, loop_min, monkeypatch):
    """Both word paths (one Philox call per run / the vectorised kernel) give each block its slice."""
    monkeypatch.setattr(dr, "_LOOP_MIN_RUN", loop_min)
    key = np.random.SeedSequence(3).generate_state(2, dtype=np.uint64)
    n = int(np.prod(shape))
    for w in (1, 2):
        full = np.random.Philox(key=key, counter=5 << 128).random_raw(w * n).reshape(*shape, w)
        grids = [(3, -1), (4, 0), (5, len(shape) // 2)] + ([(6, (0, -1))] if len(shape) > 1 else [(7, 0)])
        for nprocs, split in grids:
            grid = (3, 2) if isinstance(split, tuple) else None
            layout = Layout.create("t", shape, nprocs, split=split, grid=grid)
            for rank in range(nprocs):
                cells = layout.block_slices(rank)
                starts, length = dr._runs(shape, cells)
                words = dr._stream_words(key, 5, starts * w, length * w)
                np.testing.assert_array_equal(words.reshape(-1, w), full[cells].reshape(-1, w))


def test_halo_and_array_api_strict_backend(comm):
    pytest.importorskip("array_api_strict")
    expected = dr.default_rng(SEED).random((9, 8), comm=SELF).gather()
    x = dr.default_rng(SEED).random((9, 8), split=0, halo=1, device="array_api_strict")
    assert type(x.local).__module__.startswith("array_api_strict")
    assert_equal(x, expected, rtol=0.0)


# ------------------------------------------------------------------ permutations --
PERM_LAYOUTS = [dict(split=0), dict(split=None), dict(split=-1), dict(split=0, halo=1)]


def perm_layouts(shape) -> list:
    """Cut along the first / last axis, replicated, a halo, uneven; 2x2 grids at 4 ranks (one holding uneven
    copies)."""
    out = layouts(shape, "split0", "replicated", f"split{len(shape) - 1}", "halo0", "uneven0", "grid2x2",
                  "grid2x2-10")
    if P == 4:
        out.append(case("grid2x2-0n-uneven", shape, "grid", "copies", "uneven", split=(0, None), grid=(2, 2),
                        sizes={0: [1, shape[0] - 1]}))
    return out


@pytest.mark.parametrize("layout", [pytest.param(c, id=f"{n}-{c}") for n in [0, 1, 2, 3, 17, 64, 1000]
                                    for c in layouts((n,), "split0", "replicated", "uneven0")])
def test_permutation_of_int_is_a_permutation(layout):
    n = layout.shape[0]
    expected = dr.default_rng(SEED).permutation(n, comm=SELF).gather()
    assert np.array_equal(np.sort(expected), np.arange(n))
    p = dr.default_rng(SEED).permutation(n, **layout.kw)
    assert p.dtype == np.int64
    assert_equal(p, expected)
    if n >= 17:
        assert not np.array_equal(expected, np.arange(n))


@pytest.mark.parametrize("layout", perm_layouts((11, 6)), ids=str)
def test_permutation_of_darray_keeps_layout(layout):
    data = np.arange(11 * 6, dtype=np.float64).reshape(11, 6) * 1.5
    ref = dr.default_rng(SEED)
    first = ref.permutation(data, comm=SELF).gather()
    second = ref.permutation(data, comm=SELF).gather()
    order = dr.default_rng(SEED).permutation(11, comm=SELF).gather()
    np.testing.assert_array_equal(first, data[order])  # permutation(x) == x[permutation(len(x))]
    assert not np.array_equal(first, second)
    x = layout.array(data)
    rng = dr.default_rng(SEED)
    p = rng.permutation(x)
    assert p.layout == x.layout
    assert_equal(p, first)
    assert_equal(rng.permutation(x), second)
    assert_equal(x, data, err_msg="permutation must not change its input")


@pytest.mark.parametrize("layout", perm_layouts((9, 4, 3)) + layouts((9, 4, 3), "split1"), ids=str)
def test_shuffle_in_place(layout):
    data = np.arange(9 * 4 * 3, dtype=np.int32).reshape(9, 4, 3)
    expected = dr.default_rng(SEED).permutation(data, comm=SELF).gather()
    x = layout.array(data.copy())
    dr.default_rng(SEED).shuffle(x)
    assert_equal(x, expected)


def test_permutation_is_roughly_uniform():
    """Every element lands in every position about equally often (loose: each count within 5 sigma)."""
    rng = dr.default_rng(SEED)
    n, trials = 5, 1000
    counts = np.zeros((n, n), dtype=np.int64)
    for _ in range(trials):
        counts[np.arange(n), to_numpy(rng.permutation(n, comm=SELF).gather())] += 1
    mean, sigma = trials / n, np.sqrt(trials * (1 / n) * (1 - 1 / n))
    assert np.all(np.abs(counts - mean) < 5 * sigma), counts
    orders = {tuple(to_numpy(rng.permutation(3, comm=SELF).gather()).tolist()) for _ in range(200)}
    assert len(orders) == 6


def test_choice_without_replacement_is_a_prefix_of_permutation(comm):
    perm = to_numpy(dr.default_rng(SEED).permutation(50, comm=SELF).gather())
    pick = dr.default_rng(SEED).choice(50, (4, 5), replace=False, split=-1)
    assert_equal(pick, perm[:20].reshape(4, 5))
    everything = dr.default_rng(SEED).choice(50, 50, replace=False, split=0)
    assert np.array_equal(np.sort(to_numpy(everything.gather())), np.arange(50))


def test_choice_from_a_distributed_population(comm):
    population = np.arange(37, dtype=np.float64) ** 2
    shape = (5, 7)
    ref = dr.default_rng(SEED)
    expected = [ref.choice(population, shape, comm=SELF).gather(),
                ref.choice(population, shape, replace=False, comm=SELF).gather()]
    for pop_opts in [dict(split=0), dict(split=None), dict(split=0, sizes={0: uneven(37, comm.size)})]:
        a = da.asarray(population, **pop_opts)
        for out_opts in [dict(split=0), dict(split=-1), dict(split=None)]:
            rng = dr.default_rng(SEED)
            x = rng.choice(a, shape, **out_opts)
            assert x.dtype == population.dtype
            assert_equal(x, expected[0], rtol=0.0, err_msg=f"{pop_opts} {out_opts}")
            assert_equal(rng.choice(a, shape, replace=False, **out_opts), expected[1], rtol=0.0)


# ------------------------------------------------------------------ statistics --
def test_normal_moments(comm):
    n = 10**5
    x = dr.default_rng(SEED).standard_normal(n, split=0)
    assert abs(float(da.mean(x))) < 5 / np.sqrt(n)
    assert abs(float(da.var(x)) - 1) < 5 * np.sqrt(2 / n)
    y = dr.default_rng(SEED + 1).normal(3.0, 2.0, (400, 250), split=-1)
    assert abs(float(da.mean(y)) - 3.0) < 5 * 2 / np.sqrt(n)
    assert abs(float(da.var(y)) - 4.0) < 5 * 4 * np.sqrt(2 / n)
    # roughly 68.27% within one sigma
    inside = float(da.mean(da.astype(da.abs(x) < 1, da.float64)))
    assert abs(inside - 0.6827) < 5 * np.sqrt(0.6827 * 0.3173 / n)


def test_exponential_moments(comm):
    n = 10**5
    x = dr.default_rng(SEED).exponential(2.5, n, split=0)
    assert float(da.min(x)) >= 0
    assert abs(float(da.mean(x)) - 2.5) < 5 * 2.5 / np.sqrt(n)
    assert abs(float(da.var(x)) - 6.25) < 5 * 6.25 * np.sqrt(8 / n)  # var of the sample variance: 8 sigma^4 / n


def test_uniform_chi_square(comm):
    n, bins = 10**5, 20
    rng = dr.default_rng(SEED)
    for dtype in ("float64", "float32"):
        x = rng.random(n, dtype=dtype, split=0)
        assert 0.0 <= float(da.min(x)) and float(da.max(x)) < 1.0
        counts = np.array([count((x >= k / bins) & (x < (k + 1) / bins)) for k in range(bins)])
        assert counts.sum() == n
        chi2 = float(((counts - n / bins) ** 2 / (n / bins)).sum())
        assert chi2 < 60, (dtype, chi2)  # 19 degrees of freedom: mean 19, sd ~6
    u = rng.uniform(-3.0, 5.0, n, split=0)
    assert -3.0 <= float(da.min(u)) and float(da.max(u)) < 5.0
    assert abs(float(da.mean(u)) - 1.0) < 5 * 8 / np.sqrt(12 * n)


@pytest.mark.parametrize("low, high, endpoint, dtype", [(0, 7, False, "int64"), (-3, 3, True, "int8"),
                                                        (250, 255, True, "uint8"), (-2**40, -2**40 + 5, False,
                                                                                   "int64")])
def test_integers_bounds_and_coverage(low, high, endpoint, dtype, comm):
    n = 20000
    x = dr.default_rng(SEED).integers(low, high, n, dtype=dtype, endpoint=endpoint, split=0)
    top = high if endpoint else high - 1
    assert x.dtype == np.dtype(dtype)
    assert int(da.min(x)) == low and int(da.max(x)) == top
    span = top - low + 1
    counts = np.array([count(x == low + k) for k in range(span)])
    assert counts.sum() == n
    sigma = np.sqrt(n * (1 / span) * (1 - 1 / span))
    assert np.all(np.abs(counts - n / span) < 5 * sigma), counts


def test_choice_with_p_frequencies(comm):
    n, p = 50000, np.array([0.5, 0.0, 0.2, 0.3])
    x = dr.default_rng(SEED).choice(4, n, p=p, split=0)
    counts = np.array([count(x == k) for k in range(4)])
    assert counts[1] == 0
    sigma = np.sqrt(n * p * (1 - p))
    assert np.all(np.abs(counts - n * p) <= 5 * sigma + 1e-9), counts


# ------------------------------------------------------------------ seeds and streams --
def test_seeds_streams_and_spawn(comm):
    a = dr.default_rng(1).random(100, split=0).gather()
    b = dr.default_rng(2).random(100, split=0).gather()
    assert not np.array_equal(a, b)
    c = dr.default_rng([1, 2]).random(100, split=0).gather()  # a sequence of ints is a seed too
    assert not np.array_equal(a, c)
    ss = np.random.SeedSequence(5)
    assert_equal(dr.default_rng(ss).random(10, split=0), dr.default_rng(5).random(10, comm=SELF).gather(),
                 rtol=0.0)
    rng = dr.default_rng(SEED)
    assert dr.default_rng(rng) is rng
    kids = rng.spawn(2)
    draws = [g.random(50, split=0).gather() for g in (rng, *kids)]
    assert not np.array_equal(draws[0], draws[1]) and not np.array_equal(draws[1], draws[2])
    again = dr.default_rng(SEED).spawn(2)[1].random(50, comm=SELF).gather()
    np.testing.assert_array_equal(draws[2], again)


def test_seed_none_agrees_across_ranks(comm):
    rng = dr.default_rng()
    key = np.asarray(rng._key, dtype=np.uint64)
    keys = np.asarray(comm.allgather(key))
    collective_check(comm, np.all(keys == keys[0]), "default_rng() key differs across ranks")
    x = rng.random(40, split=0)
    assert x.shape == (40,)


def test_failed_call_uses_no_stream():
    rng = dr.default_rng(SEED)
    with pytest.raises(ValueError):
        rng.normal(0.0, -1.0, 5)
    np.testing.assert_array_equal(rng.random(5, comm=SELF).gather(),
                                  dr.default_rng(SEED).random(5, comm=SELF).gather())


# ------------------------------------------------------------------ errors --
@pytest.mark.parametrize("call, error", [
    (lambda g: g.normal(0.0, -1.0, 3), ValueError),
    (lambda g: g.exponential(-2.0, 3), ValueError),
    (lambda g: g.random(3, dtype="int64"), TypeError),
    (lambda g: g.standard_normal(3, dtype="complex128"), TypeError),
    (lambda g: g.integers(5, 5), ValueError),
    (lambda g: g.integers(0, 300, 3, dtype="uint8"), ValueError),
    (lambda g: g.integers(-1, 3, 3, dtype="uint32"), ValueError),
    (lambda g: g.integers(0, 3, 3, dtype="float64"), TypeError),
    (lambda g: g.integers(0.5, 3), TypeError),
    (lambda g: g.random(-1), ValueError),
    (lambda g: g.choice(3, 5, replace=False), ValueError),
    (lambda g: g.choice(0, 2), ValueError),
    (lambda g: g.choice(np.ones((2, 2)), 2), ValueError),
    (lambda g: g.choice(3, 2, p=[0.5, 0.6, 0.1]), ValueError),
    (lambda g: g.choice(3, 2, p=[0.5, 0.5]), ValueError),
    (lambda g: g.choice(3, 2, p=[1.5, -0.5, 0.0]), ValueError),
    (lambda g: g.choice(3, 2, replace=False, p=[0.2, 0.3, 0.5]), NotImplementedError),
    (lambda g: g.permutation(-1), ValueError),
    (lambda g: g.permutation(da.arange(5), split=0), TypeError),
    (lambda g: g.shuffle(np.arange(5)), TypeError),
    (lambda g: g.shuffle(da.asarray(3.0)), ValueError),
    (lambda g: g.random(5, split=3), Exception),
])
def test_errors_raise_on_every_rank(call, error, comm):
    with pytest.raises(error) as info:
        call(dr.default_rng(SEED))
    assert str(info.value).split(":")[0] in ("normal", "exponential", "random", "standard_normal", "integers",
                                             "choice", "permutation", "shuffle") or error is Exception


@pytest.mark.parametrize("seed, error", [(-1, ValueError), (1.5, TypeError), (np.random.default_rng(0), TypeError)])
def test_bad_seeds(seed, error):
    with pytest.raises(error, match="default_rng"):
        dr.default_rng(seed)
