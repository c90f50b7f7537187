"""Creation functions against NumPy, on every rank count, for many layouts.

Every check is collective: data comparisons go through
``darray.testing.assert_equal`` (the ranks agree on the verdict) and
rank-dependent facts go through ``agree``; plain ``assert`` is used only on
replicated metadata (shape, dtype, layout), which is the same on every rank.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from array_api_compat import is_cupy_array

import darray as da
from darray._backend import to_numpy
from darray._core.dtypes import to_numpy_dtype
from darray._layout import Layout
from darray.testing import agree, assert_equal

from _cases import P, Case, case, each, layouts

pytestmark = pytest.mark.mpi

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64", "complex64", "complex128"]
NUMERIC = [d for d in DTYPES if d != "bool"]
SHAPES = [(), (0,), (1,), (7,), (13,), (0, 5), (7, 1), (5, 13), (13, 0), (3, 7, 5), (1, 13, 2), (0, 3, 4)]
AUTO_MIN = 4  # split="auto" distributes arrays of at least this many cells in these tests


@pytest.fixture(autouse=True)
def small_auto_threshold(monkeypatch):
    """Let split="auto" distribute the small arrays used here (same setting on every rank)."""
    monkeypatch.setattr(da.config, "min_distributed_size", AUTO_MIN)


# ------------------------------------------------------------------ helpers --
def _collective_call(fn, args, kw):
    """Call ``fn``; if it raises on some ranks only, fail on every rank instead of leaving the others to hang
    in the next collective (a rank-dependent exception is itself a bug: errors must be raised identically)."""
    try:
        out, err = fn(*args, **kw), None
    except Exception as e:  # re-raised below
        out, err = None, e
    comm = da.default_communicator()
    failed = agree(comm, err is None)
    if err is not None:
        if len(failed) != comm.size:
            raise AssertionError(f"{fn.__name__}(*{args!r}, **{kw!r}) raised on ranks {failed} of {comm.size} only "
                                 f"(rank-dependent error): {type(err).__name__}: {err}") from err
        raise err
    if failed:
        raise AssertionError(f"{fn.__name__}(*{args!r}, **{kw!r}) raised on ranks {failed} of {comm.size} only "
                             f"(rank-dependent error); this rank ({comm.rank}) returned normally")
    return out


class _Collective:
    """The ``darray`` namespace with every function call made collective-safe (see ``_collective_call``)."""

    def __getattr__(self, name):
        obj = getattr(da, name)
        if isinstance(obj, type) or not callable(obj):
            return obj

        @functools.wraps(obj)
        def call(*args, **kw):
            return _collective_call(obj, args, kw)

        return call


dx = _Collective()


def collective_check(comm, ok: bool, what: str) -> None:
    """Fail on every rank if ``ok`` is False on any rank."""
    failed = agree(comm, bool(ok))
    assert not failed, f"{what}: failed on ranks {failed} of {comm.size}"


def uneven_sizes(n: int, parts: int) -> list[int]:
    """A deterministic uneven composition of n into parts, with empty blocks when possible."""
    out, left = [], n
    for i in range(parts - 1):
        take = min(left, (2 * i + 3) % 7 if i % 2 == 0 else 0)
        out.append(take)
        left -= take
    out.append(left)
    return out


def flat_sizes(sizes, size):
    """A flat ``sizes`` list for a 1-d grid (one size per rank; at one rank too, see
    test_flat_sizes_list_on_one_rank)."""
    return list(sizes)


def halo_ok(shape, halo, opts=None, size=None) -> bool:
    """Whether a ghost width ``halo`` (int, every axis) is allowed: at most the axis length.

    (Wider than a block is allowed: the halo exchange then takes several hops.)"""
    return not halo or all(n >= halo for n in shape)


def layout_options(shape, size, *, halos=True, explicit_sizes=True) -> list[dict]:
    """Layout keywords to try for ``shape`` on ``size`` ranks (deterministic: the same list on every rank)."""
    ndim = len(shape)
    opts: list[dict] = [dict(split=None), dict(split="auto")]
    if ndim == 0:
        return opts
    opts += [dict(split=axis) for axis in range(ndim)] + [dict(split=-1)]
    if ndim >= 2:
        opts += [dict(split=(0, 1), grid=(size, 1)),  # grid dim 1 is normalised to None
                 dict(split=(0, 1), grid=(1, size)),
                 dict(split=(None, 1), grid=(1, size))]
        if size == 4:
            opts += [dict(split=(0, 1), grid=(2, 2)), dict(split=(1, 0), grid=(2, 2)),
                     dict(split=(None, 0), grid=(2, 2)),
                     dict(split=(0, 1), grid=(2, 2), sizes={0: [shape[0], 0], 1: [0, shape[1]]})]
        if size == 2:
            opts += [dict(split=(0, 1), grid=(2, 1)), dict(split=(1, None), grid=(2, 1))]
    if ndim == 3 and size == 4:
        opts += [dict(split=(2, 0), grid=(2, 2))]
    if explicit_sizes:
        n = shape[0]
        opts += [dict(split=0, sizes={0: [n] + [0] * (size - 1)}),
                 dict(split=0, sizes={-len(shape): [0] * (size - 1) + [n]}),
                 dict(split=0, sizes=flat_sizes(uneven_sizes(n, size), size))]
        if ndim >= 2:
            opts += [dict(split=1, sizes={1: uneven_sizes(shape[1], size)}),
                     dict(split=-1, sizes={-1: uneven_sizes(shape[-1], size)})]
    if halos:
        for base in [dict(split=0), dict(split=-1), dict(split=0, sizes=flat_sizes(uneven_sizes(shape[0], size), size)),
                     dict(split=None)]:
            for h in (1, 2, 5):
                if halo_ok(shape, h, base, size):
                    opts.append(dict(base, halo=h, boundary="periodic" if h == 1 else 0.0))
    return opts


def expected_layout(shape, size, opts) -> Layout:
    """The layout the keywords ask for, built by the (separately tested) layout math."""
    return Layout.create("expected", shape, size, min_size=AUTO_MIN, **opts)


def check(x, expected, opts, comm, *, layout=True, **kw) -> None:
    """``x`` equals ``expected``, has the requested layout, and its block is the padded block."""
    expected = np.asarray(expected)
    assert isinstance(x, da.DArray)
    assert x.shape == expected.shape, (x.shape, expected.shape, opts)
    if layout:
        want = expected_layout(expected.shape, comm.size, opts)
        assert x.layout == want, f"{opts}: layout {x.layout} != {want}"
    assert x.comm.size == comm.size
    assert_equal(x, expected, err_msg=str(opts), **kw)
    check_storage(x, comm, opts)


def shares_memory(a, b) -> bool:
    """Whether two local arrays share memory (CuPy's own test for device arrays: to_numpy copies them)."""
    if is_cupy_array(a):
        import cupy

        return bool(cupy.shares_memory(a, b))
    return bool(np.shares_memory(to_numpy(a), to_numpy(b)))


def check_storage(x, comm, opts="") -> None:
    rank = comm.rank
    ok = (tuple(x.block.shape) == x.layout.padded_shape(rank)
          and tuple(x.local.shape) == x.layout.block_shape(rank)
          and to_numpy_dtype(x.local.dtype) == x.dtype == to_numpy_dtype(x.block.dtype))
    if ok and x.layout.has_halo and math.prod(x.local.shape):  # not .size: a method on torch tensors
        ok = shares_memory(x.local, x.block)  # .local is a view into the padded block
    collective_check(comm, ok, f"{opts}: storage: block {x.block.shape} local {x.local.shape} "
                               f"expected {x.layout.padded_shape(rank)}")


def sample(shape, dtype, seed=0) -> np.ndarray:
    """Deterministic data of ``shape`` and ``dtype`` (the same on every rank)."""
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True).astype(dtype).reshape(shape)
    if dtype.kind == "f":
        return rng.standard_normal(n).astype(dtype).reshape(shape)
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype).reshape(shape)


def fill_for(dtype):
    kind = np.dtype(dtype).kind
    return {"b": True, "i": -3, "u": 7, "f": 2.5, "c": 1 - 2j}[kind]


# ------------------------------------------------------------ zeros & co. --
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_zeros_ones_full_every_layout(shape, comm):
    for opts in layout_options(shape, comm.size):
        check(dx.zeros(shape, **opts), np.zeros(shape), opts, comm)
        check(dx.ones(shape, **opts), np.ones(shape), opts, comm)
        check(dx.full(shape, 2.5, **opts), np.full(shape, 2.5), opts, comm)
        x = dx.empty(shape, **opts)
        assert x.shape == shape and x.dtype == np.float64
        assert x.layout == expected_layout(shape, comm.size, opts)
        check_storage(x, comm, opts)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(13,), (5, 7), (3, 7, 5)], ids=str)
def test_zeros_ones_full_empty_every_dtype(shape, dtype, comm):
    for opts in [dict(split=0), dict(split=-1, halo=1), dict(split="auto")]:
        check(dx.zeros(shape, dtype=dtype, **opts), np.zeros(shape, dtype=dtype), opts, comm)
        check(dx.ones(shape, dtype=getattr(da, dtype), **opts), np.ones(shape, dtype=dtype), opts, comm)
        fill = fill_for(dtype)
        check(dx.full(shape, fill, dtype=dtype, **opts), np.full(shape, fill, dtype=dtype), opts, comm)
        x = dx.empty(shape, dtype=dtype, **opts)
        assert x.shape == shape and x.dtype == np.dtype(dtype)
        check_storage(x, comm, opts)


@pytest.mark.parametrize("fill", [True, False, 0, 7, -2**40, 0.0, -1.5, float("inf"), float("nan"), 1j, 0j,
                                  np.float32(1.5), np.int8(-4), np.uint16(9)], ids=repr)
def test_full_default_dtype_follows_the_fill_value(fill, comm):
    for shape in [(7,), (5, 13)]:
        for opts in [dict(split=0), dict(split=None)]:
            check(dx.full(shape, fill, **opts), np.full(shape, fill), opts, comm)


def test_scalar_shapes_and_int_shapes(comm):
    check(dx.zeros(7), np.zeros(7), dict(split="auto"), comm)
    check(dx.ones(0), np.ones(0), dict(split="auto"), comm)
    check(dx.full((), 3), np.full((), 3), dict(split="auto"), comm)
    check(dx.zeros(np.int64(5), split=0), np.zeros(5), dict(split=0), comm)


# --------------------------------------------------------------- *_like --
LIKE_DTYPES = ["int16", "float32", "complex128", "bool"]


@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (13, 5), (5, 13), (3, 7, 5), (0, 4)], ids=str)
def test_like_functions_keep_layout_dtype(shape, comm):
    """Every layout option with every one of :data:`LIKE_DTYPES` in-process and at 2 ranks; at 3 and 4 ranks one
    dtype per layout option, in rotation (the layout is what the rank count changes; the dtype is the blocks')."""
    for i, opts in enumerate(layout_options(shape, comm.size)):
        for dtype in LIKE_DTYPES if comm.size <= 2 else LIKE_DTYPES[i % len(LIKE_DTYPES):][:1]:
            base = dx.asarray(sample(shape, dtype), **opts)
            ref = sample(shape, dtype)
            for fn, want in [(dx.zeros_like, np.zeros_like(ref)), (dx.ones_like, np.ones_like(ref))]:
                y = fn(base)
                check(y, want, opts, comm)
                assert y.layout == base.layout
            fill = fill_for(dtype)
            check(dx.full_like(base, fill), np.full_like(ref, fill), opts, comm)
            y = dx.empty_like(base)
            assert y.shape == shape and y.dtype == base.dtype and y.layout == base.layout
            check_storage(y, comm, opts)
            # dtype override
            check(dx.zeros_like(base, dtype=dx.int8), np.zeros_like(ref, dtype=np.int8), opts, comm)
            check(dx.full_like(base, 3, dtype="float64"), np.full_like(ref, 3, dtype=np.float64), opts, comm)
            e = dx.empty_like(base, dtype=dx.complex64)
            assert e.dtype == np.complex64 and e.layout == base.layout


@pytest.mark.parametrize("shape", [(7,), (13, 5), (3, 7, 5)], ids=str)
def test_like_functions_with_a_new_layout(shape, comm):
    base = dx.asarray(sample(shape, "float64"), split=0)
    for opts in [dict(split=-1), dict(split=0, halo=1), dict(split=0, sizes={0: uneven_sizes(shape[0], comm.size)})]:
        if not halo_ok(shape, opts.get("halo", 0), opts, comm.size):
            continue
        check(dx.ones_like(base, **opts), np.ones(shape), opts, comm)
        check(dx.zeros_like(base, **opts), np.zeros(shape), opts, comm)
        check(dx.full_like(base, -1, **opts), np.full(shape, -1.0), opts, comm)
        y = dx.empty_like(base, **opts)
        assert y.layout == expected_layout(shape, comm.size, opts)
        check_storage(y, comm, opts)


def test_like_needs_an_array():  # array-likes are taken as NumPy takes them (tests/test_numpy_surface.py)
    for fn in (dx.zeros_like, dx.ones_like, dx.empty_like):
        with pytest.raises(TypeError, match=f"^{fn.__name__}: expected a DArray or array-like"):
            fn(object())
    with pytest.raises(TypeError, match="^full_like: expected a DArray or array-like"):
        dx.full_like("ab", 0)


# ---------------------------------------------------------------- arange --
ARANGE_INT = [(10,), (0,), (1,), (7,), (13,), (-3,), (3, 17, 2), (17, 3, -2), (5, -5, -1), (0, 10, -1), (5, 5),
              (-7, 6, 3), (100, 0, -7)]
ARANGE_FLOAT = [(2.5,), (0.5, 3.7, 0.3), (1.0, -2.0, -0.25), (0, 1, 0.1), (-1, 1, 0.125), (3.0, 1.0), (1, 2, -0.5),
                (0.0, 13.0), (5, 5.0)]


def arange_cases(n: int) -> dict[str, Case]:
    """The layouts of a 1-d result of length ``n`` (``arange``, ``linspace``), id -> case: the catalogue's
    ``replicated``, ``split0`` and ``last0``; ``auto`` (``split="auto"``), ``first0`` (every cell on rank 0),
    ``uneven-list`` (this file's :func:`uneven_sizes` as a flat ``sizes`` list) and ``split0-halo{h}`` (a ghost
    width of 1, 2 or 5 without a boundary, where the axis is that long)."""
    shape = (n,)
    cut = ("uneven", "empty") if P > 1 else ()
    out = layouts(shape, "replicated", "split0", "last0") + [
        case("auto", shape, split="auto"),
        case("first0", shape, *cut, split=0, sizes={0: [n] + [0] * (P - 1)}),
        case("uneven-list", shape, *cut, split=0, sizes=flat_sizes(uneven_sizes(n, P), P))]
    out += [case(f"split0-halo{h}", shape, "halo", split=0, halo=h) for h in (1, 2, 5) if halo_ok(shape, h)]
    return {c.id: c for c in out}


#: The ids of :func:`arange_cases`: one test per layout, the rows of a table looped inside it (each named in a
#: failure; a test per row and layout, some 350 more tests, made the file 40-70% slower at four ranks).
ARANGE_LAYOUTS = list(arange_cases(13))


def each_row(rows, name, length, check_row) -> None:
    """``check_row(args, layout)`` for every row of ``rows`` whose result (of ``length(args)``) has the layout
    ``name`` (a halo wider than a short result has not); the failing rows are reported together."""
    have = [(args, cases[name]) for args in rows if name in (cases := arange_cases(length(args)))]
    each(have, lambda row: check_row(*row), name=lambda row: str(row[0]))


@pytest.mark.parametrize("name", ARANGE_LAYOUTS)
def test_arange_int(name, comm):
    def row(args, layout):
        want = np.arange(*args)
        assert want.dtype == np.int64
        check(dx.arange(*args, **layout.kw), want, layout.kw, comm)

    each_row(ARANGE_INT, name, lambda args: len(np.arange(*args)), row)


@pytest.mark.parametrize("args", ARANGE_INT, ids=str)
def test_arange_int_dtypes(args, comm):
    want = np.arange(*args)
    for dtype in ["int8", "int32", "uint64", "float32", "float64"]:
        if np.dtype(dtype).kind == "u" and want.size and want.min() < 0:
            continue
        want_t = np.arange(*args, dtype=dtype)
        check(dx.arange(*args, dtype=dtype, split=0), want_t, dict(split=0), comm)


@pytest.mark.parametrize("name", ARANGE_LAYOUTS)
def test_arange_float(name, comm):
    def row(args, layout):
        want = np.arange(*args)
        assert want.dtype == np.float64
        check(dx.arange(*args, **layout.kw), want, layout.kw, comm, atol=1e-12)

    each_row(ARANGE_FLOAT, name, lambda args: len(np.arange(*args)), row)


@pytest.mark.parametrize("args", ARANGE_FLOAT, ids=str)
def test_arange_float32(args, comm):
    check(dx.arange(*args, dtype="float32", split=0), np.arange(*args, dtype=np.float32), dict(split=0), comm,
          atol=1e-6)


def test_arange_keywords(comm):
    check(dx.arange(2, stop=11, step=3, split=0), np.arange(2, 11, 3), dict(split=0), comm)
    check(dx.arange(np.int32(4), split=0), np.arange(4), dict(split=0), comm)


# -------------------------------------------------------------- linspace --
LINSPACE = [(0, 1, 0), (0, 1, 1), (0, 1, 2), (0, 1, 7), (0, 1, 13), (-3, 5, 13), (2, 2, 5), (5, -5, 7), (1e-3, 1e3, 11),
            (0, 1 + 1j, 7), (-1j, 2, 4)]


@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("name", ARANGE_LAYOUTS)
def test_linspace(name, endpoint, comm):
    def row(args, layout):
        check(dx.linspace(*args, endpoint=endpoint, **layout.kw), np.linspace(*args, endpoint=endpoint), layout.kw,
              comm, atol=1e-12)

    each_row(LINSPACE, name, lambda args: args[2], row)


@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("args", [a for a in LINSPACE if not any(isinstance(v, complex) for v in a)], ids=str)
def test_linspace_float32(args, endpoint, comm):
    check(dx.linspace(*args, endpoint=endpoint, dtype="float32", split=0),
          np.linspace(*args, endpoint=endpoint, dtype=np.float32), dict(split=0), comm, atol=1e-6)


def test_flat_sizes_list_on_one_rank(comm):
    """A flat sizes list (one size per rank) must work at every rank count, 1 included, like the dict form."""
    sizes = uneven_sizes(13, comm.size)
    want = np.arange(13)
    check(dx.arange(13, split=0, sizes={0: sizes}), want, dict(split=0, sizes={0: sizes}), comm)
    check(dx.arange(13, split=0, sizes=sizes), want, dict(split=0, sizes={0: sizes}), comm)
    check(dx.zeros((13, 2), split=0, sizes=sizes), np.zeros((13, 2)), dict(split=0, sizes={0: sizes}), comm)


def test_linspace_with_empty_trailing_blocks(comm):
    """Ranks whose (empty) block sits at the end must not try to write the endpoint (rank-dependent IndexError)."""
    sizes = [7] + [0] * (comm.size - 1)
    check(dx.linspace(0, 1, 7, split=0, sizes=sizes), np.linspace(0, 1, 7), dict(split=0, sizes=sizes), comm)


def test_linspace_endpoint_is_exact(comm):
    x = dx.linspace(0.1, 0.7, 13, split=0, sizes={0: [0] * (comm.size - 1) + [13]})
    want = np.linspace(0.1, 0.7, 13)
    assert want[-1] == 0.7
    assert_equal(x, want, rtol=0.0)  # every value bit-for-bit, including the endpoint on the last rank


# ------------------------------------------------------------------- eye --
EYE = [((1,), {}), ((7,), {}), ((13,), {}), ((0,), {}), ((7, 13), dict(k=2)), ((13, 7), dict(k=-3)),
       ((5, 5), dict(k=10)), ((5, 5), dict(k=-10)), ((4,), dict(k=1)), ((6, 0), {}), ((1, 9), dict(k=-1)),
       ((9, 1), dict(k=-8)),
       # offsets past int64 (the suite's eye(0, None, k=2**63)): an empty diagonal, never OverflowError
       ((0,), dict(k=2**63)), ((3, 4), dict(k=2**63)), ((4, 3), dict(k=-2**63 - 1)), ((5,), dict(k=2**100)),
       ((5,), dict(k=-2**100)), ((5, 6), dict(k=6)), ((6, 5), dict(k=-6))]


@pytest.mark.parametrize("args, kw", EYE, ids=str)
def test_eye(args, kw, comm):
    want = np.eye(*args, **kw)
    for opts in layout_options(want.shape, comm.size):
        check(dx.eye(*args, **kw, **opts), want, opts, comm)


@pytest.mark.parametrize("k", [2**63, -2**63 - 1, 2**100, -2**100, 4, 5, -6, -7], ids=str)
def test_tri_with_offsets_past_the_corners(k, comm):
    """Ones everywhere or nowhere (NumPy's ``tri`` overflows past int64; the limit of its values)."""
    want = np.tri(6, 5, k=max(min(k, 5), -7))
    for opts in layout_options(want.shape, comm.size):
        check(dx.tri(6, 5, k, **opts), want, opts, comm)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eye_dtypes(dtype, comm):
    for k in (-2, 0, 3):
        check(dx.eye(7, 13, k=k, dtype=dtype, split=0), np.eye(7, 13, k=k, dtype=dtype), dict(split=0), comm)


# ------------------------------------------------------------- tril/triu --
@pytest.mark.parametrize("shape", [(7, 7), (5, 13), (13, 5), (3, 7, 5), (0, 4), (1, 1), (2, 0, 3)], ids=str)
def test_tril_triu(shape, comm):
    ref = sample(shape, "int32")
    for opts in layout_options(shape, comm.size):
        x = dx.asarray(ref, **opts)
        for k in (-20, -2, -1, 0, 1, 3, 20):
            check(dx.tril(x, k=k), np.tril(ref, k=k), opts, comm)
            check(dx.triu(x, k=k), np.triu(ref, k=k), opts, comm)
        check(dx.tril(x), np.tril(ref), opts, comm)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tril_triu_dtypes(dtype, comm):
    ref = sample((7, 13), dtype)
    x = dx.asarray(ref, split=1)
    check(dx.tril(x, k=1), np.tril(ref, k=1), dict(split=1), comm)
    check(dx.triu(x, k=-1), np.triu(ref, k=-1), dict(split=1), comm)


@pytest.mark.parametrize("k", [2**63, -2**63 - 1, 2**100, -2**100], ids=str)
def test_tril_triu_with_offsets_past_int64(k, comm):
    """All or nothing, on every backend (array_api_strict overflowed comparing with such a k)."""
    g = np.arange(1, 31, dtype=np.int64).reshape(5, 6)
    for split in (None, 0, 1):
        x = dx.asarray(g, split=split)
        check(dx.tril(x, k=k), np.tril(g, k=max(min(k, 6), -6)), dict(split=split), comm)
        check(dx.triu(x, k=k), np.triu(g, k=max(min(k, 6), -6)), dict(split=split), comm)


def test_tril_triu_bad_input():
    with pytest.raises(ValueError, match="^tril: needs at least 2 dimensions"):
        dx.tril(dx.arange(5))
    with pytest.raises(TypeError, match="^triu: expected a DArray or array-like"):
        dx.triu(object())


# ---------------------------------------------------------------- asarray --
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_asarray_from_numpy_every_layout(shape, comm):
    ref = sample(shape, "float64")
    for opts in layout_options(shape, comm.size):
        check(dx.asarray(ref, **opts), ref, opts, comm)
        check(dx.asarray(ref, dtype="complex64", **opts), ref.astype(np.complex64), opts, comm)


@pytest.mark.parametrize("dtype", DTYPES)
def test_asarray_every_dtype(dtype, comm):
    for shape in [(13,), (5, 7), (3, 7, 5), ()]:
        ref = sample(shape, dtype)
        for opts in [dict(split="auto"), dict(split=None)] + ([dict(split=0), dict(split=-1, halo=1)] if shape else []):
            x = dx.asarray(ref, **opts)
            check(x, ref, opts, comm)
            assert x.dtype == np.dtype(dtype)


def test_asarray_from_lists_and_scalars(comm):
    cases = [[1, 2, 3, 4, 5, 6, 7], [[1, 2, 3], [4, 5, 6]], [1.5, -2.0, 3.25], [True, False, True, True],
             [1j, 2, 3.5], [[[1], [2]], [[3], [4]], [[5], [6]]], [], [[]], 3, -2.5, True, 1 + 1j,
             np.float32(1.5), np.uint8(200), np.int64(-9)]
    for obj in cases:
        want = np.asarray(obj)
        opts_list = [dict(split="auto"), dict(split=None)]
        if want.ndim:
            opts_list += [dict(split=0), dict(split=-1)]
        for opts in opts_list:
            check(dx.asarray(obj, **opts), want, opts, comm)
        if want.ndim and want.size:
            cast = np.complex64 if want.dtype.kind == "c" else np.float32
            check(dx.asarray(obj, dtype=cast, split=0), want.astype(cast), dict(split=0), comm)
    assert float(dx.asarray(2.5)) == 2.5
    assert int(dx.asarray(np.int16(-3))) == -3


def test_asarray_from_noncontiguous_numpy(comm):
    base = sample((13, 10), "int64")
    for ref in [base[::2], base[:, ::3], base.T, base[::-1, 1:]]:
        for opts in [dict(split=0), dict(split=1), dict(split=0, halo=1)]:
            if halo_ok(ref.shape, opts.get("halo", 0), opts, comm.size):
                check(dx.asarray(ref, **opts), ref, opts, comm)


@pytest.mark.parametrize("shape", [(7,), (13, 5), (5, 13), (3, 7, 5), (0, 3), (1,)], ids=str)
def test_asarray_from_a_darray_with_a_new_layout(shape, comm):
    ref = sample(shape, "float64")
    options = layout_options(shape, comm.size)
    for src in options[::2]:
        x = dx.asarray(ref, **src)
        assert dx.asarray(x) is x  # no layout keywords: the same array
        for dst in options:
            if dst == dict(split="auto"):
                continue  # split="auto" is the "keep" default for a DArray input
            y = dx.asarray(x, **dst)
            check(y, ref, dst, comm)
        check(dx.asarray(x, dtype="int32"), ref.astype(np.int32), src, comm)


def test_asarray_copy(comm):
    ref = np.arange(13.0)
    x = dx.asarray(ref, split=0, copy=True)
    ref[:] = -1
    check(x, np.arange(13.0), dict(split=0), comm)
    y = dx.asarray(x, copy=True)
    check(y, np.arange(13.0), dict(split=0), comm)
    collective_check(comm, not np.shares_memory(y.local, x.local) or x.local.size == 0, "copy=True shares memory")


# ------------------------------------------------------------- from_local --
def tile_1d(lengths, cols=(), dtype="float64", seed=1):
    """The global array whose axis-0 blocks have ``lengths``; plus every rank's block."""
    total = sum(lengths)
    glob = sample((total, *cols), dtype, seed)
    offs = np.concatenate([[0], np.cumsum(lengths)]).astype(int)
    return glob, [glob[offs[r]:offs[r + 1]] for r in range(len(lengths))]


LENGTH_PATTERNS = {
    "uneven": lambda r: (3 * r + 1) % 5,       # 1, 4, 2, 0: an empty block on rank 3
    "first-empty": lambda r: 0 if r == 0 else r + 2,
    "all-empty": lambda r: 0,
    "one": lambda r: 1,
    "last-holds-all": None,
}


def lengths_for(pattern, size):
    if pattern == "last-holds-all":
        return [0] * (size - 1) + [13]
    return [LENGTH_PATTERNS[pattern](r) for r in range(size)]


@pytest.mark.parametrize("pattern", list(LENGTH_PATTERNS))
@pytest.mark.parametrize("cols", [(), (3,), (0,), (2, 4)], ids=str)
def test_from_local_split_0(pattern, cols, comm):
    lengths = lengths_for(pattern, comm.size)
    glob, blocks = tile_1d(lengths, cols)
    block = blocks[comm.rank]
    x = dx.from_local(block, split=0)
    opts = dict(split=0, sizes=lengths if comm.size > 1 else None)
    check(x, glob, opts, comm)
    check(dx.from_local(block, split=0, shape=glob.shape), glob, opts, comm)
    collective_check(comm, x.local.size == 0 or np.shares_memory(x.local, block), "from_local copied the block")


@pytest.mark.parametrize("pattern", ["uneven", "first-empty", "last-holds-all"])
def test_from_local_split_last_axis(pattern, comm):
    lengths = lengths_for(pattern, comm.size)
    glob, blocks = tile_1d(lengths, (4, 3), "int32")
    glob = np.ascontiguousarray(np.moveaxis(glob, 0, -1))  # (4, 3, total): cut along the last axis
    block = np.ascontiguousarray(np.moveaxis(blocks[comm.rank], 0, -1))
    opts = dict(split=2, sizes=lengths if comm.size > 1 else None)
    check(dx.from_local(block, split=-1), glob, opts, comm)


@pytest.mark.parametrize("dtype", DTYPES)
def test_from_local_every_dtype(dtype, comm):
    lengths = lengths_for("uneven", comm.size)
    glob, blocks = tile_1d(lengths, (2,), dtype)
    x = dx.from_local(blocks[comm.rank], split=0)
    assert x.dtype == np.dtype(dtype)
    check(x, glob, dict(split=0, sizes=lengths if comm.size > 1 else None), comm)


@pytest.mark.parametrize("halo", [1, 2])
def test_from_local_with_halo(halo, comm):
    lengths = [r + 2 for r in range(comm.size)]
    glob, blocks = tile_1d(lengths, (5,))
    x = dx.from_local(blocks[comm.rank], split=0, halo=halo, boundary="reflect")
    opts = dict(split=0, sizes=lengths if comm.size > 1 else None, halo=halo, boundary="reflect")
    check(x, glob, opts, comm)
    assert x.halo == (halo, halo)


def test_from_local_replicated(comm):
    glob = sample((4, 5), "complex64")
    x = dx.from_local(glob.copy(), split=None)
    check(x, glob, dict(split=None), comm)
    assert x.layout.is_replicated


def test_from_local_2d_grid(comm):
    if comm.size != 4:
        pytest.skip("a (2, 2) grid needs 4 ranks")
    for rows, cols in [([2, 3], [4, 1]), ([0, 3], [2, 2]), ([1, 1], [0, 0]), ([5, 0], [0, 3])]:
        glob = sample((sum(rows), sum(cols)), "int64", seed=3)
        i, j = divmod(comm.rank, 2)  # row-major grid coordinates
        r0, c0 = sum(rows[:i]), sum(cols[:j])
        block = glob[r0:r0 + rows[i], c0:c0 + cols[j]]
        x = dx.from_local(block, split=(0, 1), grid=(2, 2))
        check(x, glob, dict(split=(0, 1), grid=(2, 2), sizes={0: rows, 1: cols}), comm)
        # the transposed grid: grid dim 0 cuts axis 1
        block_t = glob[sum(rows[:j]):sum(rows[:j + 1]), sum(cols[:i]):sum(cols[:i + 1])]
        x_t = dx.from_local(block_t, split=(1, 0), grid=(2, 2))
        check(x_t, glob, dict(split=(1, 0), grid=(2, 2), sizes={1: cols, 0: rows}), comm)


def test_from_local_2d_grid_of_one_row(comm):
    """grid (size, 1) with split (0, 1): the second grid dim has size 1 and cuts nothing."""
    lengths = lengths_for("uneven", comm.size)
    glob, blocks = tile_1d(lengths, (6,), "uint16")
    x = dx.from_local(blocks[comm.rank], split=(0, 1), grid=(comm.size, 1))
    assert x.layout.axis_dim[1] is None
    check(x, glob, dict(split=(0, 1), grid=(comm.size, 1), sizes={0: lengths} if comm.size > 1 else None), comm)


# ---------------------------------------------------------------- meshgrid --
@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("lengths", [(7, 13), (13, 7), (1, 5), (0, 4), (3, 7, 5), (5,), (2, 0, 3)], ids=str)
def test_meshgrid(lengths, indexing, comm):
    vectors = [np.linspace(-1, 1, n) + i for i, n in enumerate(lengths)]
    want = np.meshgrid(*vectors, indexing=indexing)
    options = [dict(split="auto"), dict(split=None)] + [dict(split=a) for a in range(len(lengths))]
    if len(lengths) >= 2:
        options.append(dict(split=(0, 1), grid=(1, comm.size)))
        if comm.size == 4:
            options.append(dict(split=(0, 1), grid=(2, 2)))
    for opts in options:
        for inputs in (vectors, [dx.asarray(v, split=0) for v in vectors]):
            got = dx.meshgrid(*inputs, indexing=indexing, **opts)
            assert isinstance(got, list) and len(got) == len(want)
            for g, w in zip(got, want):
                check(g, w, opts, comm)


def test_meshgrid_int_and_empty(comm):
    a, b = np.arange(5), np.arange(3) * 10
    for indexing in ("xy", "ij"):
        want = np.meshgrid(a, b, indexing=indexing)
        got = dx.meshgrid(a, b, indexing=indexing, split=0)
        for g, w in zip(got, want):
            check(g, w, dict(split=0), comm)
    assert dx.meshgrid() == []


def test_meshgrid_bad_input():
    with pytest.raises(ValueError, match="^meshgrid: unknown indexing"):
        dx.meshgrid(np.arange(3), indexing="ji")
    with pytest.raises(ValueError, match="^meshgrid: inputs must be 1-d"):
        dx.meshgrid(np.zeros((2, 2)))


# --------------------------------------------------------------- bad input --
@pytest.mark.parametrize("make", [
    lambda: dx.zeros((-1,)), lambda: dx.zeros(-3), lambda: dx.ones((2, -1)), lambda: dx.empty((3, -2)),
    lambda: dx.full((-1,), 1.0), lambda: dx.eye(-1), lambda: dx.eye(3, -2),
], ids=["zeros-tuple", "zeros-int", "ones", "empty", "full", "eye", "eye-cols"])
def test_negative_shape(make):
    with pytest.raises(ValueError, match="^(zeros|ones|empty|full|eye): negative dimensions are not allowed"):
        make()


def test_bad_shape_type():
    with pytest.raises(TypeError, match="^zeros: shape must be"):
        dx.zeros(2.5)
    with pytest.raises(TypeError, match="^ones: shape must be"):
        dx.ones((2, 1.5))


UNSUPPORTED_CREATION = {
    "zeros": lambda dt: dx.zeros(5, dtype=dt, split=0),
    "ones": lambda dt: dx.ones(5, dtype=dt, split=0),
    "empty": lambda dt: dx.empty(5, dtype=dt, split=0),
    "full": lambda dt: dx.full(5, 1, dtype=dt, split=0),
    "arange": lambda dt: dx.arange(5, dtype=dt, split=0),
    "linspace": lambda dt: dx.linspace(0, 1, 5, dtype=dt, split=0),
    "eye": lambda dt: dx.eye(5, dtype=dt, split=0),
    "asarray": lambda dt: dx.asarray([1, 2, 3], dtype=dt, split=0),
    "zeros_like": lambda dt: dx.zeros_like(dx.zeros(5, split=0), dtype=dt),
    "ones_like": lambda dt: dx.ones_like(dx.zeros(5, split=0), dtype=dt),
    "empty_like": lambda dt: dx.empty_like(dx.zeros(5, split=0), dtype=dt),
    "full_like": lambda dt: dx.full_like(dx.zeros(5, split=0), 1, dtype=dt),
}


@pytest.mark.parametrize("dtype", [object, "S3", "U3", "V8", [("name", "U8")], np.longdouble], ids=str)
def test_unsupported_dtype(dtype):
    """Every creation function refuses a dtype outside the Array API set with TypeError ("<func>: unsupported ...").

    One test per dtype; the failure lists every function that misbehaves and how.
    """
    wrong = []
    for func, make in UNSUPPORTED_CREATION.items():
        try:
            x = make(dtype)
        except TypeError as e:
            if not str(e).startswith((f"{func}: unsupported", "dtype: unsupported")):
                wrong.append(f"{func}: TypeError with message {str(e)[:80]!r}")
        except Exception as e:  # report every kind of wrong answer
            wrong.append(f"{func}: {type(e).__name__}: {str(e)[:80]}")
        else:
            wrong.append(f"{func}: accepted, returned dtype {x.dtype}")
    assert not wrong, f"dtype {dtype!r} not refused with TypeError by:\n  " + "\n  ".join(wrong)


@pytest.mark.parametrize("obj", [np.array(["a", "b"]), np.zeros(3, dtype=object), ["a", "b"],
                                 np.zeros(3, dtype=[("name", "U4")])], ids=repr)
def test_asarray_unsupported_data(obj):
    with pytest.raises(TypeError, match="^asarray: unsupported"):
        dx.asarray(obj)


def test_grid_must_multiply_to_the_rank_count(comm):
    n = comm.size
    for make in [lambda: dx.zeros((8, 8), split=(0, 1), grid=(n + 1, 1)),
                 lambda: dx.ones((8, 8), split=(0, 1), grid=(2 * n, 2)),
                 lambda: dx.zeros((8,), split=0, grid=(2 * n,)),
                 lambda: dx.arange(8, split=0, grid=(n + 1,)),
                 lambda: dx.asarray(np.zeros((4, 4)), split=None, grid=(n, 2)),
                 lambda: dx.eye(4, split=(0, 1), grid=(0, n))]:
        with pytest.raises(ValueError, match="^(zeros|ones|arange|asarray|eye): grid dims must be positive and "
                                             "multiply to the number of ranks"):
            make()


def test_bad_layout_keywords_on_creation(comm):
    with pytest.raises(ValueError, match="^zeros: an axis is split by two grid dims"):
        dx.zeros((4, 4), split=(0, 0), grid=(comm.size, 1))
    with pytest.raises(ValueError, match="^ones: unknown boundary"):
        dx.ones(8, split=0, boundary="wrap")
    with pytest.raises(ValueError, match="^arange: block sizes do not add up"):
        dx.arange(8, split=0, sizes={0: [9] + [0] * (comm.size - 1)})
    with pytest.raises(ValueError, match="^full: halo wider than axis 0"):
        dx.full((3,), 1.0, split=None, halo=4)
    with pytest.raises(ValueError, match="^asarray: axis out of bounds"):
        dx.asarray(np.zeros(3), split=1)


def test_from_local_ndim_differs_across_ranks(comm):
    """Rank-dependent ndim: every rank must raise (after the one allgather), none may hang."""
    if comm.size == 1:
        pytest.skip("needs two ranks")
    block = np.zeros((2, 3)) if comm.rank == 0 else np.zeros(4)
    with pytest.raises(ValueError, match="^from_local: blocks differ in ndim or dtype across ranks"):
        dx.from_local(block, split=0)
    block = np.zeros(()) if comm.rank == comm.size - 1 else np.zeros(4)
    with pytest.raises(ValueError, match="^from_local: blocks differ in ndim"):
        dx.from_local(block, split=0)
    # and the communicator still works afterwards
    check(dx.from_local(np.ones(2), split=0), np.ones(2 * comm.size), dict(split=0), comm)


def test_from_local_dtype_differs_across_ranks(comm):
    if comm.size == 1:
        pytest.skip("needs two ranks")
    block = np.zeros(3, dtype=np.float32 if comm.rank % 2 else np.float64)
    with pytest.raises(ValueError, match="^from_local: blocks differ in ndim or dtype"):
        dx.from_local(block, split=0)


def test_from_local_blocks_that_do_not_tile(comm):
    if comm.size == 1:
        pytest.skip("needs two ranks")
    block = np.zeros((2, 3 + comm.rank))  # different lengths along the unsplit axis 1
    with pytest.raises(ValueError, match="^from_local: blocks differ along unsplit axis 1"):
        dx.from_local(block, split=0)
    with pytest.raises(ValueError, match="^from_local: blocks differ along unsplit axis 0"):
        dx.from_local(np.zeros((1 + comm.rank, 2)), split=1)
    with pytest.raises(ValueError, match="^from_local: blocks differ along unsplit axis 0"):
        dx.from_local(np.zeros(1 + comm.rank), split=None)


def test_from_local_grid_slab_mismatch(comm):
    if comm.size != 4:
        pytest.skip("a (2, 2) grid needs 4 ranks")
    rows = 2 + comm.rank  # ranks 0 and 1 share grid row 0 but differ in rows
    with pytest.raises(ValueError, match="^from_local: blocks in one grid slab differ along axis 0"):
        dx.from_local(np.zeros((rows, 3)), split=(0, 1), grid=(2, 2))


def test_from_local_shape_mismatch(comm):
    with pytest.raises(ValueError, match="^from_local: blocks do not tile the given shape"):
        dx.from_local(np.zeros((2, 3)), split=0, shape=(2 * comm.size + 1, 3))


def test_from_local_bad_grid(comm):
    with pytest.raises(ValueError, match="^from_local: grid dims must be positive and multiply"):
        dx.from_local(np.zeros((2, 3)), split=(0, 1), grid=(comm.size + 1, 1))


def test_from_local_halo_wider_than_the_axis(comm):
    with pytest.raises(ValueError, match="^from_local: halo wider than axis 1"):
        dx.from_local(np.zeros((2, 3)), split=0, halo={1: 4})
    with pytest.raises(ValueError, match="^from_local: halo wider than axis 0"):
        dx.from_local(np.zeros((0, 3)), split=0, halo=1)


def test_from_local_halo_wider_than_a_block(comm):
    """Allowed (multi-hop): blocks of 0..2 rows, one empty, with a 2-wide halo."""
    lengths = [0 if r == comm.size - 1 else (r % 2) + 1 for r in range(comm.size)]
    if sum(lengths) < 2:
        lengths[0] = 2
    glob, blocks = tile_1d(lengths, (3,))
    x = dx.from_local(blocks[comm.rank], split=0, halo=2)
    check(x, glob, dict(split=0, sizes=lengths if comm.size > 1 else None, halo=2), comm)


def test_arange_linspace_bad_input():
    with pytest.raises(ValueError, match="^arange: step must not be zero"):
        dx.arange(0, 5, 0)
    with pytest.raises(TypeError, match="^arange: (start|stop) must be a real number"):
        dx.arange(1j)
    with pytest.raises(ValueError, match="^linspace: num must be a non-negative integer"):
        dx.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="^full: fill_value must be a scalar"):
        dx.full(3, "abc")  # (an array fill_value broadcasts, as NumPy)


def test_repeated_default_calls_give_what_the_first_gave(monkeypatch):
    """zeros / ones / empty / full on the default layout keywords remember their layout per request: a repeat
    gives the same array, a changed setting is seen, and a shape the checks refuse is refused every time."""
    for _ in range(2):  # (the first call works everything out; the second takes the remembered request)
        for make, want in ((lambda: da.zeros((5, 13)), np.zeros((5, 13))),
                           (lambda: da.ones(7, dtype="int32"), np.ones(7, "int32")),
                           (lambda: da.full((3, 7, 5), 2.5), np.full((3, 7, 5), 2.5)),
                           (lambda: da.full((5, 13), False), np.full((5, 13), False))):
            got = make()
            assert got.dtype == want.dtype and got.layout == make().layout
            assert_equal(got, want)
        assert da.empty((5, 13)).shape == (5, 13)
        with pytest.raises(TypeError, match="shape must be an int or a tuple of ints"):
            da.zeros((5.0, 13))
        with pytest.raises(ValueError, match="negative dimensions"):
            da.zeros((-5, 13))
        with pytest.raises(TypeError):
            da.zeros((5, 13), dtype=[("name", "U8")])  # (records of numbers are darray dtypes; of text, not)
    distributed = da.zeros((5, 13)).layout
    monkeypatch.setattr(da.config, "min_distributed_size", 10**6)  # (a setting changed: replicated from now on)
    assert da.zeros((5, 13)).layout.whole
    assert da.zeros((5, 13)).layout != distributed or da.zeros((5, 13)).comm.size == 1
    assert da.zeros((5, 13), halo=1).layout.halo == (1, 1)  # (other keywords: the full path)


def test_repeated_asarray_of_numpy_arrays(monkeypatch):
    """``asarray`` of a NumPy array on the default keywords remembers its whole layout: a repeat is a view of the
    array again (``array`` a copy), and every other request takes the checks."""
    monkeypatch.setattr(da.config, "min_distributed_size", 10**6)  # (whole: the remembered case)
    a = np.arange(35.0).reshape(5, 7)
    for _ in range(2):
        x = da.asarray(a)
        assert x.layout.whole and np.shares_memory(to_numpy(x._block), a) and to_numpy(x._block).flags.c_contiguous
        assert_equal(x, a)
        copied = da.array(a)
        assert not np.shares_memory(to_numpy(copied._block), a)
        assert_equal(copied, a)
        assert not np.shares_memory(to_numpy(da.asarray(a, copy=True)._block), a)
        fortran = da.asarray(np.asfortranarray(a))
        assert not isinstance(fortran._block, np.ndarray) or fortran._block.flags.c_contiguous  # (NumPy blocks)
        assert_equal(fortran, a)
        assert da.asarray(a, dtype="float32").dtype == np.float32
        assert da.asarray(a, halo=1).layout.halo == (1, 1)
        with pytest.raises(TypeError):
            da.asarray(np.array(["a", "b"]))


def test_two_named_split_axes_cut_both_at_four_ranks(comm):
    """``split=(0, 1)`` without a grid: both axes are cut where the ranks allow it (2 x 2 at 4 ranks)."""
    g = np.arange(64.0 * 64).reshape(64, 64)
    x = da.asarray(g, split=(0, 1))
    want = {1: (1, 1), 2: (2, 1), 3: (3, 1), 4: (2, 2)}.get(comm.size)
    if want is not None:
        assert x._layout.dims == want
    assert_equal(x, g)
    y = da.zeros((64, 64), split="auto", grid=(comm.size,))  # 'auto' with a grid: the grid kept, an axis chosen
    if comm.size > 1:  # (one rank: nothing is cut)
        assert (y._layout.dims, y._layout.split) == ((comm.size,), (0,))
