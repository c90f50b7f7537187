"""NumPy's legacy random API in darray.random: NumPy's numbers for small draws, layout-free large ones.

- Small draws (fewer than ``darray.config.min_distributed_size`` elements)
  are compared bit for bit with ``numpy.random`` making the same interleaved
  calls after the same seed, one test per layout (``tests/_cases.py``), and
  the MT19937 states are compared afterwards.
- Large draws are compared, on every rank, with the same calls made over a
  one-process communicator (``SelfCommunicator``): the global array must not
  depend on the rank count or the layout. Between them, small draws must
  still be NumPy's, NumPy's stream having advanced by the four words a large
  draw takes (``randint(2**32, size=4, dtype=uint32)``).
- Statistics of large draws are loose (5 sigma).
- Bad input raises NumPy's exception type with one message on every rank and
  leaves the state untouched.
"""

from __future__ import annotations

import warnings

import numpy
import pytest

import darray as da
import darray.random as dr
from darray._backend import to_numpy
from darray._comm import SelfCommunicator
from darray.random import _legacy
from darray.testing import agree, assert_equal, assert_raises_everywhere, uneven_sizes

from _cases import case, layouts

pytestmark = pytest.mark.mpi

SEED = 20241203
SELF = SelfCommunicator()


def named(shape, *more: str) -> list:
    """The layouts to try for ``shape``: darray's default (``default``: no keyword), replicated, split0, uneven0,
    ``split-1`` (2-d and more: ``split=-1``, the last axis of whichever array a call makes) and a 2x2 grid (4 ranks,
    2-d and more), then the catalogue's ``more``."""
    out = [case("default", shape), *layouts(shape, "replicated", "split0", "uneven0")]
    if len(shape) >= 2:
        out += [case("split-1", shape, split=-1), *layouts(shape, "grid2x2")]
    return out + (layouts(shape, *more) if more else [])


def check_everywhere(comm, ok: bool, what: str) -> None:
    failed = agree(comm, bool(ok))
    assert not failed, f"{what}: failed on ranks {failed} of {comm.size}"


def same_state(a, b) -> bool:
    """Two legacy states (tuples of get_state()) are the same."""
    return a[0] == b[0] and numpy.array_equal(a[1], b[1]) and tuple(a[2:]) == tuple(b[2:])


def check_value(got, want, what: str) -> None:
    """A darray result against NumPy's: DArrays bit for bit (collective), anything else by equality and type."""
    if isinstance(want, numpy.ndarray):
        assert isinstance(got, da.DArray), f"{what}: expected a DArray, got {type(got).__name__}"
        assert got.shape == want.shape, (what, got.shape, want.shape)
        assert_equal(got, want, rtol=0.0, err_msg=what)
    else:
        assert type(got) is type(want) and got == want, (what, got, want)


# name -> call(r, **layout keywords) on numpy.random / numpy.random.RandomState or their darray counterparts
SMALL_CALLS = [
    ("rand", lambda r, **kw: r.rand(7, 13, **kw)),
    ("randn", lambda r, **kw: r.randn(13, **kw)),
    ("random scalar", lambda r, **kw: r.random()),
    ("randint", lambda r, **kw: r.randint(-5, 100, size=(13, 7), **kw)),
    ("randint scalar", lambda r, **kw: r.randint(3)),
    ("randint int8", lambda r, **kw: r.randint(-128, 127, size=13, dtype=numpy.int8, **kw)),
    ("normal broadcast loc", lambda r, **kw: r.normal(numpy.arange(7.0), 2.0, size=(13, 7), **kw)),
    ("normal scalar", lambda r, **kw: r.normal(1.0, 3.0)),
    ("uniform", lambda r, **kw: r.uniform(-2.0, 3.0, 13, **kw)),
    ("exponential", lambda r, **kw: r.exponential(2.0, (7, 13), **kw)),
    ("poisson", lambda r, **kw: r.poisson(3.0, 13, **kw)),
    ("binomial", lambda r, **kw: r.binomial(10, 0.4, (7, 13), **kw)),
    ("beta", lambda r, **kw: r.beta(2.0, 5.0, 13, **kw)),
    ("gamma", lambda r, **kw: r.gamma(2.0, 1.5, 13, **kw)),
    ("standard_t", lambda r, **kw: r.standard_t(3.0, 13, **kw)),
    ("lognormal", lambda r, **kw: r.lognormal(0.5, 0.2, 13, **kw)),
    ("randn scalar", lambda r, **kw: r.randn()),
    ("choice int", lambda r, **kw: r.choice(10, 13, **kw)),
    ("choice p", lambda r, **kw: r.choice(numpy.array([2.5, -1.0, 7.0]), (7, 13), p=[0.2, 0.3, 0.5], **kw)),
    ("choice no replace", lambda r, **kw: r.choice(20, 13, replace=False, **kw)),
    ("choice scalar", lambda r, **kw: r.choice(10)),
    ("permutation", lambda r, **kw: r.permutation(13, **kw)),
    ("permutation array", lambda r, **kw: r.permutation(numpy.arange(13 * 7.0).reshape(13, 7), **kw)),
    ("random_sample", lambda r, **kw: r.random_sample((7, 13), **kw)),
    ("random", lambda r, **kw: r.random(13, **kw)),
    ("ranf", lambda r, **kw: r.ranf(13, **kw)),
    ("sample", lambda r, **kw: r.sample(13, **kw)),
    ("bytes", lambda r, **kw: r.bytes(5)),
    ("multinomial", lambda r, **kw: r.multinomial(5, [0.2, 0.3, 0.5], size=7, **kw)),
    ("dirichlet", lambda r, **kw: r.dirichlet([1.0, 2.0], size=13, **kw)),
    ("standard_normal", lambda r, **kw: r.standard_normal((13,), **kw)),
    ("hypergeometric", lambda r, **kw: r.hypergeometric(5, 7, 4, 13, **kw)),
    ("standard_cauchy", lambda r, **kw: r.standard_cauchy(13, **kw)),
]


def run_small(r, kw_for) -> list:
    return [call(r, **kw_for(name)) for name, call in SMALL_CALLS]


def layout_kw(layout, name: str) -> dict:
    """The layout keywords for call ``name`` (sizes= only fits the shapes with 13 or 7 rows it was made for)."""
    if "sizes" in layout.kw:
        return {}
    if layout.id in ("split-1", "grid2x2"):
        return layout.kw if name in ("rand", "randint", "normal broadcast loc", "exponential", "binomial", "choice p",
                                     "random_sample", "permutation array", "multinomial") else {}
    return layout.kw


# ------------------------------------------------------------------ small draws: NumPy's numbers --
@pytest.mark.parametrize("layout", named((13, 7)), ids=str)
def test_module_functions_reproduce_numpy_bit_for_bit(layout):
    """Interleaved calls of many functions after seed(): NumPy's numbers, then NumPy's state."""
    numpy.random.seed(SEED)
    want = run_small(numpy.random, lambda name: {})
    da.random.seed(SEED)
    got = run_small(da.random, lambda name: layout_kw(layout, name))
    for (name, _), g, w in zip(SMALL_CALLS, got, want):
        check_value(g, w, name)
    assert same_state(da.random.get_state(), numpy.random.get_state())


def test_uneven_sizes_keep_numpy_numbers(comm):
    sizes = {0: uneven_sizes(13, comm.size)}
    ref = numpy.random.RandomState(SEED)
    rs = dr.RandomState(SEED)
    for _ in range(3):
        assert_equal(rs.rand(13, 5, split=0, sizes=sizes), ref.rand(13, 5), rtol=0.0)
        assert_equal(rs.randint(0, 1000, (13,), split=0, sizes=sizes), ref.randint(0, 1000, (13,)))
        assert_equal(rs.normal(size=(13, 2), split=0, sizes=sizes), ref.normal(size=(13, 2)), rtol=0.0)


def test_return_types_are_numpys():
    rs = dr.RandomState(SEED)
    assert type(rs.random()) is float and type(rs.rand()) is float and type(rs.randn()) is float
    assert type(rs.randint(5)) is int and type(rs.normal()) is float and type(rs.poisson()) is int
    assert isinstance(rs.random(size=()), da.DArray) and rs.random(size=()).shape == ()
    assert isinstance(rs.normal([0.0, 1.0]), da.DArray)
    assert rs.randint(5, size=3).dtype == numpy.dtype(int) and rs.rand(2).dtype == numpy.float64
    assert rs.randint(0, 2, size=4, dtype=bool).dtype == numpy.bool_
    assert isinstance(rs.bytes(3), bytes)


@pytest.mark.parametrize("layout", layouts((13,), "split0", "replicated", "uneven0"), ids=str)
def test_darray_parameters_broadcast(layout):
    loc, scale = numpy.linspace(-3.0, 3.0, 13), numpy.array([[0.5], [2.0]])
    ref = numpy.random.RandomState(SEED)
    rs = dr.RandomState(SEED)
    dloc = layout.array(loc)
    assert_equal(rs.normal(dloc, scale), ref.normal(loc, scale), rtol=0.0)
    assert_equal(rs.uniform(dloc, dloc + 1.0, size=(4, 13)), ref.uniform(loc, loc + 1.0, size=(4, 13)), rtol=0.0)
    assert_equal(rs.poisson(da.abs(dloc)), ref.poisson(numpy.abs(loc)))
    assert same_state(rs.get_state(), ref.get_state())


@pytest.mark.parametrize("layout", named((13, 4, 3), "split1", "halo0"), ids=str)
def test_shuffle_and_permutation_of_darrays(layout):
    data = numpy.arange(13 * 4 * 3, dtype=numpy.int32).reshape(13, 4, 3)
    ref = numpy.random.RandomState(SEED)
    rs = dr.RandomState(SEED)
    x = layout.array(data.copy())
    rs.shuffle(x)
    expected = data.copy()
    ref.shuffle(expected)
    assert_equal(x, expected, err_msg="shuffle")
    p = rs.permutation(x)
    assert p.layout == x.layout
    assert_equal(p, ref.permutation(expected), err_msg="permutation")
    assert_equal(x, expected, err_msg="permutation must not change its input")
    assert same_state(rs.get_state(), ref.get_state())


def test_shuffle_of_lists_and_numpy_arrays():
    ref = numpy.random.RandomState(SEED)
    rs = dr.RandomState(SEED)
    items, want = list(range(20)), list(range(20))
    rs.shuffle(items)
    ref.shuffle(want)
    assert items == want
    a, b = numpy.arange(12.0).reshape(6, 2), numpy.arange(12.0).reshape(6, 2)
    rs.shuffle(a)
    ref.shuffle(b)
    numpy.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("layout", layouts((200,), "split0", "replicated", "uneven0"), ids=str)
def test_choice_from_a_darray_population(layout, monkeypatch):
    """A distributed population (over the threshold), a small sample: NumPy's sample, values from their owners."""
    monkeypatch.setattr(da.config, "min_distributed_size", 64)
    population = numpy.arange(200, dtype=numpy.float64) ** 2
    a = layout.array(population)
    for out_opts in [dict(), dict(split=0), dict(split=-1)]:
        ref = numpy.random.RandomState(SEED)
        rs = dr.RandomState(SEED)
        assert_equal(rs.choice(a, (5, 7), **out_opts), ref.choice(population, (5, 7)), rtol=0.0)
        assert_equal(rs.choice(a, 13, p=population / population.sum(), **out_opts),
                     ref.choice(population, 13, p=population / population.sum()), rtol=0.0)
        part = da.asarray(population[:50], split=layout.kw["split"])
        assert_equal(rs.choice(part, 9, replace=False, **out_opts),
                     ref.choice(population[:50], 9, replace=False), rtol=0.0)
        assert same_state(rs.get_state(), ref.get_state())


def test_get_state_set_state_round_trip(comm):
    rs = dr.RandomState(SEED)
    rs.randn(3)  # leaves a cached Gaussian: part of the state
    state = rs.get_state()
    assert state[3] == 1
    first = [to_numpy(rs.rand(5).gather()), rs.randn(), to_numpy(rs.randint(0, 9, 4).gather())]
    rs.set_state(state)
    again = [to_numpy(rs.rand(5).gather()), rs.randn(), to_numpy(rs.randint(0, 9, 4).gather())]
    for a, b in zip(first, again):
        numpy.testing.assert_array_equal(a, b)
    ref = numpy.random.RandomState()
    ref.set_state(state)  # a darray state is NumPy's
    numpy.testing.assert_array_equal(ref.rand(5), first[0])
    rs.set_state(numpy.random.RandomState(7).get_state(legacy=False))  # NumPy's dict form too
    assert_equal(rs.rand(4), numpy.random.RandomState(7).rand(4), rtol=0.0)
    keys = numpy.asarray(comm.allgather(numpy.asarray(rs.get_state()[1], dtype=numpy.uint32)))
    check_everywhere(comm, numpy.all(keys == keys[0]), "the state differs across ranks")


def test_random_states_are_independent_of_each_other_and_of_the_global_one():
    da.random.seed(SEED)
    numpy.random.seed(SEED)
    a, b = dr.RandomState(1), dr.RandomState(2)
    ra, rb = numpy.random.RandomState(1), numpy.random.RandomState(2)
    for _ in range(2):
        assert_equal(a.rand(6), ra.rand(6), rtol=0.0)
        assert_equal(b.rand(6), rb.rand(6), rtol=0.0)
    assert_equal(da.random.rand(6), numpy.random.rand(6), rtol=0.0)
    assert not numpy.array_equal(to_numpy(a.rand(6).gather()), to_numpy(b.rand(6).gather()))


def test_seed_none_agrees_across_ranks(comm):
    rs = dr.RandomState()
    keys = numpy.asarray(comm.allgather(numpy.asarray(rs.get_state()[1], dtype=numpy.uint32)))
    check_everywhere(comm, numpy.all(keys == keys[0]), "RandomState() differs across ranks")
    da.random.seed()
    keys = numpy.asarray(comm.allgather(numpy.asarray(da.random.get_state()[1], dtype=numpy.uint32)))
    check_everywhere(comm, numpy.all(keys == keys[0]), "seed() differs across ranks")
    other = numpy.asarray(dr.RandomState().get_state()[1], dtype=numpy.uint32)
    assert not numpy.array_equal(other, keys[0])


def test_seeds_as_numpy_takes_them():
    for seed in (0, 2**32 - 1, [1, 2, 3], numpy.array([7], dtype=numpy.uint32)):
        assert_equal(dr.RandomState(seed).rand(3), numpy.random.RandomState(seed).rand(3), rtol=0.0)


def test_random_integers_is_numpys_deprecated_inclusive_randint():
    rs, ref = dr.RandomState(SEED), numpy.random.RandomState(SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert_equal(rs.random_integers(3, 9, size=13), ref.random_integers(3, 9, size=13))
        assert_equal(rs.random_integers(4, size=13), ref.random_integers(4, size=13))
    with pytest.warns(DeprecationWarning):
        rs.random_integers(5, size=3)


def test_every_randomstate_method_of_numpy(comm, monkeypatch):
    names = {n for n in dir(numpy.random.RandomState) if not n.startswith("_")}
    assert names <= set(dir(dr.RandomState)), sorted(names - set(dir(dr.RandomState)))
    monkeypatch.setattr(da.config, "min_distributed_size", 50)
    one = dr.RandomState(SEED)
    one.tomaxint(13), one.tomaxint()
    expected = to_numpy(one.tomaxint(91, comm=SELF).gather())
    rs, ref = dr.RandomState(SEED), numpy.random.RandomState(SEED)
    assert_equal(rs.tomaxint(13, split=0), ref.tomaxint(13))
    assert rs.tomaxint() == ref.tomaxint()
    big = rs.tomaxint(91, split=0)  # large: counter-based, the same on any number of ranks
    assert big.dtype == numpy.int64 and int(da.min(big)) >= 0
    assert_equal(big, expected)
    ref.randint(2**32, size=4, dtype=numpy.uint32)
    assert same_state(rs.get_state(), ref.get_state())


def test_numpy_names_left_out_name_the_alternative():
    with pytest.raises(AttributeError, match="default_rng"):
        dr.MT19937
    with pytest.raises(AttributeError):
        dr.no_such_name
    assert dr.SeedSequence is numpy.random.SeedSequence
    assert set(dr.__all__) >= {"seed", "rand", "randn", "randint", "random", "choice", "shuffle", "permutation",
                               "get_state", "set_state", "RandomState", "default_rng", "Generator"}
    for name in dr.__all__:
        assert hasattr(dr, name), name


# ------------------------------------------------------------------ large draws: layout-free --
LARGE = (13, 7)  # 91 elements: large with the threshold below


@pytest.fixture
def small_threshold(monkeypatch):
    """Make (13, 7) a large draw (same setting on every rank); tiles of 8 elements for the tiled path."""
    monkeypatch.setattr(da.config, "min_distributed_size", 50)
    monkeypatch.setattr(_legacy, "_TILE", 8)


# name -> (call(r, **layout keywords), large?) ; small ones between them check the state's continuity
MIXED_CALLS = [
    ("rand", lambda r, **kw: r.rand(*LARGE, **kw), True),
    ("small rand", lambda r, **kw: r.rand(3), False),
    ("randn", lambda r, **kw: r.randn(*LARGE, **kw), True),
    ("normal", lambda r, **kw: r.normal(1.0, 2.0, LARGE, **kw), True),
    ("normal array loc", lambda r, **kw: r.normal(numpy.arange(7.0), 0.5, LARGE, **kw), True),
    ("uniform", lambda r, **kw: r.uniform(-1.0, 4.0, LARGE, **kw), True),
    ("small randint", lambda r, **kw: r.randint(0, 100, 5), False),
    ("exponential", lambda r, **kw: r.exponential(3.0, LARGE, **kw), True),
    ("lognormal", lambda r, **kw: r.lognormal(0.0, 0.5, LARGE, **kw), True),
    ("randint", lambda r, **kw: r.randint(-5, 2**40, LARGE, **kw), True),
    ("randint bool", lambda r, **kw: r.randint(0, 2, LARGE, dtype=bool, **kw), True),
    ("randint array high", lambda r, **kw: r.randint(0, numpy.arange(1, 8), LARGE, **kw), True),
    ("poisson", lambda r, **kw: r.poisson(4.0, LARGE, **kw), True),
    ("binomial array p", lambda r, **kw: r.binomial(10, numpy.linspace(0.1, 0.9, 7), LARGE, **kw), True),
    ("gamma", lambda r, **kw: r.gamma(2.0, 1.0, LARGE, **kw), True),
    ("small normal", lambda r, **kw: r.normal(size=4), False),
    ("choice", lambda r, **kw: r.choice(1000, LARGE, **kw), True),
    ("choice p", lambda r, **kw: r.choice(3, LARGE, p=[0.5, 0.25, 0.25], **kw), True),
    ("choice no replace", lambda r, **kw: r.choice(500, LARGE, replace=False, **kw), True),
    ("permutation", lambda r, **kw: r.permutation(91, **kw), True),
    ("small permutation", lambda r, **kw: r.permutation(9), False),
]


def run_mixed(r, kw, numpy_stream=False) -> list:
    out = []
    for _name, call, large in MIXED_CALLS:
        if numpy_stream and large:
            r.randint(2**32, size=4, dtype=numpy.uint32)  # what a large draw takes from the legacy stream
            out.append(None)
        else:
            out.append(call(r, **(kw if large or not numpy_stream else {})))
    return out


def large_on_one_process() -> list:
    """The global arrays of the large draws of :data:`MIXED_CALLS` made over one process."""
    expected = [to_numpy(x.gather()) for x in run_mixed(dr.RandomState(SEED), dict(comm=SELF))]
    for (name, _, large), x in zip(MIXED_CALLS, expected):
        if large:
            assert x.shape in (LARGE, (91,)), name
    assert not numpy.array_equal(expected[0], expected[2])
    return expected


@pytest.mark.parametrize("layout", [c for c in named(LARGE, "halo0") if "sizes" not in c.kw], ids=str)
def test_large_draws_do_not_depend_on_ranks_or_layout(layout, small_threshold):
    expected = large_on_one_process()
    numpy_stream = numpy.random.RandomState(SEED)
    small = run_mixed(numpy_stream, {}, numpy_stream=True)
    rs = dr.RandomState(SEED)
    for (name, call, large), want, numpy_want in zip(MIXED_CALLS, expected, small):
        kw = layout.kw if large and not (layout.id == "grid2x2" and name == "permutation") else {}  # 1-d: no grid
        got = call(rs, **kw)
        assert_equal(got, want, rtol=0.0, err_msg=name)
        if not large:  # between large draws: NumPy's numbers, NumPy's stream advanced 4 words per large draw
            assert_equal(got, numpy_want, rtol=0.0, err_msg=name)
    assert same_state(rs.get_state(), numpy_stream.get_state())


def test_large_draw_on_uneven_blocks(small_threshold):
    rs = dr.RandomState(SEED)
    assert_equal(rs.rand(*LARGE, **layouts(LARGE, "uneven0")[0].kw), large_on_one_process()[0], rtol=0.0)


@pytest.mark.parametrize("layout", layouts((37, 11), "split0", "split1", "replicated", "uneven1", "grid2x2-10"),
                         ids=str)
def test_large_draws_with_many_tiles_and_short_runs(layout, small_threshold):
    shape = layout.shape
    expected = [to_numpy(dr.RandomState(SEED).poisson(3.0, shape, comm=SELF).gather()),
                to_numpy(dr.RandomState(SEED).standard_gamma(numpy.linspace(0.5, 3.0, 11), shape,
                                                             comm=SELF).gather())]
    assert_equal(dr.RandomState(SEED).poisson(3.0, shape, **layout.kw), expected[0])
    assert_equal(dr.RandomState(SEED).standard_gamma(numpy.linspace(0.5, 3.0, 11), shape, **layout.kw), expected[1],
                 rtol=0.0)


@pytest.mark.parametrize("layout", layouts((60, 3), "split0", "replicated", "uneven0"), ids=str)
def test_large_shuffle_and_darray_parameters(layout, small_threshold):
    data = numpy.arange(60 * 3, dtype=numpy.float64).reshape(60, 3)
    ref = dr.RandomState(SEED)
    x = da.asarray(data.copy(), comm=SELF)
    ref.shuffle(x)
    shuffled = to_numpy(x.gather())
    assert not numpy.array_equal(shuffled, data)
    numpy.testing.assert_array_equal(numpy.sort(shuffled, axis=0), data)
    loc = numpy.linspace(-1.0, 1.0, 91)
    z = to_numpy(ref.standard_normal(91, comm=SELF).gather())
    rs = dr.RandomState(SEED)
    y = layout.array(data.copy())
    rs.shuffle(y)
    assert_equal(y, shuffled)
    dloc = da.asarray(loc, split=0)
    # a DArray parameter: loc + scale * z, z the standard normal a fresh draw would give at this call
    assert_equal(rs.normal(dloc, 2.0), z * 2.0 + loc, rtol=0.0)


# ------------------------------------------------------------------ statistics of large draws --
def moments(x) -> tuple[float, float]:
    x = da.astype(x, da.float64)
    return float(da.mean(x)), float(da.var(x))


@pytest.mark.parametrize("name, call, mean, var", [
    ("rand", lambda n: da.random.rand(n, split=0), 0.5, 1 / 12),
    ("randn", lambda n: da.random.randn(n), 0.0, 1.0),
    ("normal", lambda n: da.random.normal(3.0, 2.0, (n // 100, 100), split=-1), 3.0, 4.0),
    ("uniform", lambda n: da.random.uniform(-3.0, 5.0, n), 1.0, 64 / 12),
    ("exponential", lambda n: da.random.exponential(2.5, n), 2.5, 6.25),
    ("randint", lambda n: da.random.randint(0, 10, n), 4.5, 99 / 12),
    ("poisson", lambda n: da.random.poisson(4.0, n, split=0), 4.0, 4.0),
    ("binomial", lambda n: da.random.binomial(20, 0.3, (n // 10, 10)), 6.0, 4.2),
    ("gamma", lambda n: da.random.gamma(2.0, 1.5, n), 3.0, 4.5),
    ("choice p", lambda n: da.random.choice(3, n, p=[0.5, 0.2, 0.3]), 0.8, 0.76),
])
def test_large_draw_statistics(name, call, mean, var):
    n = 10**5
    assert n >= da.config.min_distributed_size
    da.random.seed(SEED)
    x = call(n)
    assert x.size == n
    m, v = moments(x)
    sd = var ** 0.5
    assert abs(m - mean) < 5 * sd / n ** 0.5, (name, m, mean)
    assert abs(v - var) < 5 * var * (2.0 / n) ** 0.5 * 3, (name, v, var)  # loose: kurtosis up to ~ 18


def test_large_permutation_is_a_permutation(comm):
    da.random.seed(SEED)
    n = 3 * da.config.min_distributed_size + 5
    p = da.random.permutation(n)
    assert int(da.sum(da.astype(p, da.int64))) == n * (n - 1) // 2
    counts = da.bincount(p, minlength=n)
    assert int(da.max(counts)) == 1 and int(da.min(counts)) == 1


# ------------------------------------------------------------------ bad input --
BAD = [
    (ValueError, lambda r: r.rand(-1), "rand"),
    (ValueError, lambda r: r.normal(0.0, 1.0, size=(2, -3)), "normal"),
    (TypeError, lambda r: r.rand(2.5), "rand"),
    (ValueError, lambda r: r.randint(5, 5), "randint"),
    (ValueError, lambda r: r.randint(5, 2, size=10**5), "randint"),
    (ValueError, lambda r: r.randint(0, 300, size=3, dtype=numpy.uint8), "randint"),
    (ValueError, lambda r: r.normal(0.0, -1.0, 5), "normal"),
    (ValueError, lambda r: r.normal(0.0, -1.0, 10**5), "normal"),
    (ValueError, lambda r: r.normal(0.0, da.full(10**5, -1.0)), "normal"),
    (ValueError, lambda r: r.normal([0.0, 1.0], 1.0, size=3), "normal"),
    (ValueError, lambda r: r.poisson(-1.0, 10**5), "poisson"),
    (ValueError, lambda r: r.binomial(5, 1.5, 3), "binomial"),
    (OverflowError, lambda r: r.uniform(0.0, numpy.inf, 10**5), "uniform"),
    (ValueError, lambda r: r.choice(3, 2, p=[0.5, 0.6, 0.1]), "choice"),
    (ValueError, lambda r: r.choice(3, 10**5, p=[0.5, 0.6, 0.1]), "choice"),
    (ValueError, lambda r: r.choice(3, 5, replace=False), "choice"),
    (ValueError, lambda r: r.choice(numpy.ones((2, 2)), 2), "choice"),
    (ValueError, lambda r: r.choice(da.ones((2, 2)), 2), "choice"),
    (IndexError, lambda r: r.permutation(da.asarray(3.0)), "permutation"),
    (TypeError, lambda r: r.permutation(da.arange(5), split=0), "permutation"),
    (TypeError, lambda r: r.normal(1.0, 2.0, 3, 4), "normal"),
    (TypeError, lambda r: r.beta(1.0), "beta"),
    (ValueError, lambda r: r.seed(-1), "seed"),
    (TypeError, lambda r: r.seed(1.5), "seed"),
    (ValueError, lambda r: r.set_state(("PCG64", numpy.zeros(624, dtype=numpy.uint32), 0, 0, 0.0)), "set_state"),
    (IndexError, lambda r: r.set_state(("MT19937", numpy.zeros(3, dtype=numpy.uint32), 0)), "set_state"),
    (NotImplementedError, lambda r: r.multinomial(10, [0.5, 0.5], size=10**5), "multinomial"),
    (NotImplementedError, lambda r: r.poisson(da.ones(10**5)), "poisson"),
]


@pytest.mark.parametrize("error, call, name", BAD, ids=[f"{b[2]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input_raises_numpys_type_everywhere_and_keeps_the_state(error, call, name):
    rs = dr.RandomState(SEED)
    rs.rand(2)
    before = rs.get_state()
    text = assert_raises_everywhere(error, call, rs, match=name)
    assert text.startswith(name), text
    assert same_state(rs.get_state(), before), "a failed call must not advance the state"
