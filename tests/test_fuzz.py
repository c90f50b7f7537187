"""Differential fuzzing: random arrays, random layouts, random chains of operations, NumPy as the oracle.

Each example draws a global array (0-3 dims of length 0..9; bool, int32, int64,
float32, float64 or complex128), a layout for it (replicated, ``"auto"``, one
split axis, or a tuple split over an explicit grid whose dims multiply to the
number of ranks; explicit uneven block sizes with empty blocks; halo 0-2 and a
boundary), then a chain of 1-4 operations from :data:`OPS` (elementwise with
scalars or a second array of broadcastable shape and its OWN layout,
reductions, basic indexing with negative steps, reshape, roll, flip, concat,
cumulative_sum, sort, take, boolean masks). The chain runs on the NumPy array
and on the DArray; the gathered result must match (shape, dtype, values;
floats with a tolerance, NaNs equal).

Collective by construction: every rank draws the same examples (the harness
loads a derandomized profile under MPI), and every darray step is followed by
an agreement on its outcome, so that an exception on some ranks only fails
every rank instead of leaving the others waiting.

Examples: :data:`FUZZ_EXAMPLES` (40 with the default profile, the profile's
``max_examples`` with ``--hypothesis-profile long`` or another). The ``fuzz``
marked variant runs only with a non-default profile (or with
``DARRAY_FUZZ_EXAMPLES=<n>``). Run ``pytest -s`` to see the counts printed.

Bugs found by the fuzzer are pinned by the small regression tests at the end.
"""

from __future__ import annotations

import functools
import math
import operator
import os
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st

import darray as da
from darray._layout import Layout
from darray.testing import agree

from _cases import COMM, P, catalogue, layouts

pytestmark = pytest.mark.mpi

_PROFILE = settings.get_current_profile_name()
_DEFAULT_PROFILES = ("default", "mpi")
#: Examples per run of the CI variant: 40 with the default profile; the profile's count with any other.
FUZZ_EXAMPLES = 40 if _PROFILE in _DEFAULT_PROFILES else settings().max_examples
#: Examples of the long (``fuzz`` marked) variant; 0 = skipped.
LONG_EXAMPLES = int(os.environ.get("DARRAY_FUZZ_EXAMPLES", "0") or 0) or (
    0 if _PROFILE in _DEFAULT_PROFILES else settings().max_examples)

DTYPES = ["bool", "int32", "int64", "float32", "float64", "complex128"]
BOUNDARIES = ["none", "periodic", "reflect", "nearest", 0.0, -1.5]

STATS = {"examples": 0, "valid": 0, "ops": 0}
# Known bugs (each pinned by a regression test at the end) are steered around with assume(), so that
# the fuzzer keeps finding new ones; remove the assume() once the bug is fixed.


@pytest.fixture(autouse=True)
def small_auto_threshold(monkeypatch):
    """Let split="auto" distribute the tiny arrays drawn here (same setting on every rank)."""
    monkeypatch.setattr(da.config, "min_distributed_size", 4)


# ------------------------------------------------------------------ drawing arrays and layouts
def _kind(dtype) -> str:
    return np.dtype(dtype).kind


def make_values(shape, dtype, seed: int, special: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        return rng.integers(-6, 7, size=shape).astype(dtype)
    values = np.round(rng.standard_normal(shape) * 3, 2)
    if dtype.kind == "c":
        values = values + 1j * np.round(rng.standard_normal(shape) * 3, 2)
    values = np.asarray(values).astype(dtype)
    if special and values.size:
        flat = values.reshape(-1)
        picks = rng.integers(0, flat.size, size=min(3, flat.size))
        flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0]), size=picks.size)
    return values


def _factorizations(n: int, parts: int) -> list[tuple[int, ...]]:
    """Every ordered tuple of ``parts`` positive ints multiplying to ``n``."""
    if parts == 1:
        return [(n,)]
    out = []
    for d in range(1, n + 1):
        if n % d == 0:
            out += [(d, *rest) for rest in _factorizations(n // d, parts - 1)]
    return out


@st.composite
def block_sizes(draw, n: int, parts: int) -> list[int]:
    """``parts`` non-negative sizes summing to ``n`` (empty blocks welcome)."""
    cuts = sorted(draw(st.lists(st.integers(0, n), min_size=parts - 1, max_size=parts - 1)))
    edges = [0, *cuts, n]
    return [b - a for a, b in zip(edges, edges[1:])]


@functools.cache
def named_layouts(shape: tuple[int, ...]) -> list[dict]:
    """The keywords of the catalogue's cases of ``shape`` (tests/_cases.py) that fit it (the catalogue's ``thin``
    blocks need an axis of a cell per rank, its halos an axis at least as long)."""
    out = []
    for c in catalogue(shape).values():
        try:
            Layout.create("fuzz", shape, P, **c.kw)
        except ValueError:
            continue
        out.append(c.kw)
    return out


@st.composite
def layout_keywords(draw, shape) -> dict:
    """Layout keywords for ``shape`` at ``P`` ranks: a catalogue case (:func:`named_layouts`) or one of its own.

    Its own, because hypothesis explores (and shrinks) what no catalogue case has: any block sizes (empty blocks
    anywhere), every factorization of the rank count into 1-3 grid dims with any axes or copies, negative split
    axes, ``split="auto"``, ghost widths 0-2 with each boundary.
    """
    ndim = len(shape)
    kinds = ["named", "replicated", "auto"] + (["axis", "tuple"] if ndim else [])
    kind = draw(st.sampled_from(kinds))
    spec: dict = {}
    if kind == "named":
        return dict(draw(st.sampled_from(named_layouts(tuple(shape)))))
    if kind == "replicated":
        spec["split"] = None
    elif kind == "auto":
        spec["split"] = "auto"
    elif kind == "axis":
        axis = draw(st.integers(0, ndim - 1))
        spec["split"] = draw(st.sampled_from([axis, axis - ndim]))
        if draw(st.booleans()):
            spec["sizes"] = draw(block_sizes(shape[axis], P))
    else:
        ngrid = draw(st.integers(1, min(3, ndim + 1)))
        grid = draw(st.sampled_from(_factorizations(P, ngrid)))
        axes = draw(st.permutations(list(range(ndim))))
        entries = []
        for g in range(ngrid):
            use_axis = g < len(axes) and draw(st.booleans() if ngrid > 1 else st.just(True))
            entries.append(axes[g] if use_axis else None)
        if all(e is None for e in entries) and ngrid == 1:
            entries = [axes[0]]
        spec["split"] = tuple(entries)
        spec["grid"] = tuple(grid)
        sizes = {}
        for g, axis in enumerate(entries):
            if axis is not None and draw(st.booleans()):
                sizes[axis] = draw(block_sizes(shape[axis], grid[g]))
        if sizes:
            spec["sizes"] = sizes
    if ndim and min(shape) > 0:
        spec["halo"] = draw(st.integers(0, min(2, min(shape))))
        if spec["halo"]:
            spec["boundary"] = draw(st.sampled_from(BOUNDARIES))
    return spec


@st.composite
def arrays(draw, shape=None, dtype=None):
    """(numpy array, layout keywords)."""
    if shape is None:
        ndim = draw(st.integers(0, 3))
        shape = tuple(draw(st.lists(st.integers(0, 9), min_size=ndim, max_size=ndim)))
    if dtype is None:
        dtype = draw(st.sampled_from(DTYPES))
    seed = draw(st.integers(0, 2**32 - 1))
    special = _kind(dtype) in "fc" and draw(st.integers(0, 4)) == 0
    return make_values(shape, dtype, seed, special), draw(layout_keywords(shape))


def broadcastable_shape(draw, shape) -> tuple[int, ...]:
    """A shape that broadcasts with ``shape`` to ``shape`` (trailing dims kept, some set to 1)."""
    keep = draw(st.integers(0, len(shape)))
    tail = shape[len(shape) - keep:]
    return tuple(1 if draw(st.integers(0, 3)) == 0 else n for n in tail)


def scalar_for(draw, dtype):
    kind = _kind(dtype)
    if kind == "b":
        return draw(st.booleans())
    if kind in "iu":
        return draw(st.integers(-4, 4))
    if kind == "f":
        return draw(st.one_of(st.integers(-4, 4), st.sampled_from([0.5, -2.25, 3.0, 1e-3])))
    return draw(st.one_of(st.integers(-3, 3), st.sampled_from([1.5, 2 - 1j, -0.5j])))


# ------------------------------------------------------------------ the operation table
# Dtype categories as in the Array API standard (darray follows it where NumPy is laxer).
NUMERIC, REAL, FLOAT, REAL_FLOAT, COMPLEX, INTEGRAL, BOOL, ANY = "numeric", "real", "float", "real float", \
    "complex", "int|bool", "bool", "any"


def allowed(category: str, dtype) -> bool:
    k = _kind(dtype)
    return {NUMERIC: k in "iufc", REAL: k in "iuf", FLOAT: k in "fc", REAL_FLOAT: k == "f", COMPLEX: k == "c", INTEGRAL: k in "biu",
            BOOL: k == "b", ANY: True}[category]


UNARY = {  # name: category
    "abs": NUMERIC, "negative": NUMERIC, "positive": NUMERIC, "square": NUMERIC, "sign": NUMERIC,
    "sqrt": FLOAT, "exp": FLOAT, "log": FLOAT, "sin": FLOAT, "tanh": FLOAT, "expm1": FLOAT,
    "floor": REAL, "ceil": REAL, "trunc": REAL, "round": NUMERIC,
    "isnan": NUMERIC, "isfinite": NUMERIC, "isinf": NUMERIC, "logical_not": BOOL, "bitwise_invert": INTEGRAL,
    "conj": NUMERIC, "real": NUMERIC, "imag": COMPLEX,
}
BINARY = {
    "add": NUMERIC, "subtract": NUMERIC, "multiply": NUMERIC, "divide": FLOAT, "floor_divide": REAL,
    "remainder": REAL, "maximum": REAL, "minimum": REAL, "atan2": REAL_FLOAT, "hypot": REAL_FLOAT,
    "equal": ANY, "not_equal": ANY, "less": REAL, "greater_equal": REAL,
    "logical_and": BOOL, "logical_or": BOOL, "logical_xor": BOOL,
    "bitwise_and": INTEGRAL, "bitwise_or": INTEGRAL, "bitwise_xor": INTEGRAL,
}
OPERATORS = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul, "divide": operator.truediv,
             "floor_divide": operator.floordiv, "remainder": operator.mod, "equal": operator.eq,
             "not_equal": operator.ne, "less": operator.lt, "greater_equal": operator.ge,
             "bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor}
#: NumPy ufuncs by their NumPy names (``darray.arctan2`` is ``numpy.arctan2`` handed DArrays): name -> category.
NUMPY_UFUNCS = {"arctan2": REAL_FLOAT, "fmod": REAL_FLOAT, "degrees": REAL_FLOAT, "rint": REAL, "fabs": REAL_FLOAT,
                "cbrt": REAL_FLOAT, "exp2": REAL_FLOAT, "logaddexp2": REAL_FLOAT, "fmax": REAL, "fmin": REAL,
                "heaviside": REAL_FLOAT, "power": FLOAT, "absolute": NUMERIC, "true_divide": FLOAT}
#: NumPy functions outside the standard (through ``__array_function__``): name -> category.
NUMPY_FUNCTIONS = {"median": REAL, "quantile": REAL, "percentile": REAL, "nanmean": REAL_FLOAT, "nansum": REAL,
                   "nanmax": REAL_FLOAT, "nanmin": REAL_FLOAT, "nanstd": REAL_FLOAT, "cumsum": NUMERIC,
                   "ptp": REAL, "unique": REAL, "trapezoid": NUMERIC}
REDUCTIONS = {"sum": NUMERIC, "prod": NUMERIC, "min": REAL, "max": REAL, "mean": FLOAT, "var": REAL_FLOAT,
              "std": REAL_FLOAT, "all": ANY, "any": ANY}


class Step:
    """One drawn operation: ``describe`` for the report, ``np_fn(a)`` and ``da_fn(x)``."""

    def __init__(self, describe: str, np_fn, da_fn):
        self.describe, self.np_fn, self.da_fn = describe, np_fn, da_fn


def _axis_arg(draw, ndim, allow_tuple=True):
    if ndim == 0:
        return None
    choices = [st.none(), st.integers(-ndim, ndim - 1)]
    if allow_tuple:
        choices.append(st.lists(st.integers(0, ndim - 1), max_size=ndim, unique=True).map(tuple))
    return draw(st.one_of(*choices))


def second_operand(draw, shape, dtype):
    """(numpy, darray-maker, text) for an operand of ``shape``/``dtype`` with its own layout."""
    b, spec = draw(arrays(shape=shape, dtype=dtype))
    return b, (lambda: da.asarray(b, **spec)), f"array{b.shape} {spec}"


def draw_step(draw, a: np.ndarray) -> Step:
    ndim, dtype = a.ndim, a.dtype
    kinds = ["unary", "binary", "reduce", "getitem", "reshape", "roll", "flip", "concat", "mask", "numpy function"]
    if da.config.backend == "numpy":  # NumPy's ufunc machinery takes DArrays of NumPy blocks only
        kinds.append("numpy ufunc")
    if ndim:
        kinds += ["cumulative_sum", "sort", "take", "argsort", "argmax", "diff", "moveaxis", "repeat", "setitem"]
    kinds += ["where", "clip", "astype", "expand_dims", "tile", "count_nonzero", "unique_values", "matmul"]
    kind = draw(st.sampled_from(kinds))

    if kind in MORE_STEPS:
        return MORE_STEPS[kind](draw, a)

    if kind == "unary":
        name = draw(st.sampled_from(sorted(UNARY)))
        assume(allowed(UNARY[name], dtype))
        if name == "sign" and _kind(dtype) == "c" and da.config.backend != "numpy":
            # x / |x| (array_api_strict, torch) is NaN for infinite x where NumPy says +-1: unspecified by the standard
            with np.errstate(invalid="ignore"):
                assume(bool(np.all(np.isfinite(a))))
        return Step(name, getattr(np, name), getattr(da, name))

    if kind == "binary":
        name = draw(st.sampled_from(sorted(BINARY)))
        assume(allowed(BINARY[name], dtype))
        form = draw(st.sampled_from(["scalar", "rscalar", "array", "rarray"]))
        use_op = name in OPERATORS and draw(st.booleans())
        fn_np = OPERATORS[name] if use_op else getattr(np, name)
        fn_da = OPERATORS[name] if use_op else getattr(da, name)
        if form in ("scalar", "rscalar"):
            s = scalar_for(draw, dtype)
            if name in ("floor_divide", "remainder") and _kind(dtype) in "iu":
                assume(s != 0)
            if form == "scalar":
                return Step(f"{name}(x, {s!r})", lambda a: fn_np(a, s), lambda x: fn_da(x, s))
            if not use_op:  # Array API functions take arrays; python scalars are for operators
                return Step(f"{name}(x, {s!r})", lambda a: fn_np(a, s), lambda x: fn_da(x, s))
            return Step(f"{s!r} {name} x", lambda a: fn_np(s, a), lambda x: fn_da(s, x))
        shape = broadcastable_shape(draw, a.shape)
        b, make_b, text = second_operand(draw, shape, dtype)
        if name in ("floor_divide", "remainder") and _kind(dtype) in "iu":
            b = np.where(b == 0, 1, b).astype(dtype)
            make_b = (lambda b=b, spec=draw(layout_keywords(shape)): da.asarray(b, **spec))
        if form == "array":
            return Step(f"{name}(x, {text})", lambda a: fn_np(a, b), lambda x: fn_da(x, make_b()))
        return Step(f"{name}({text}, x)", lambda a: fn_np(b, a), lambda x: fn_da(make_b(), x))

    if kind == "numpy ufunc":
        name = draw(st.sampled_from(sorted(NUMPY_UFUNCS)))
        assume(allowed(NUMPY_UFUNCS[name], dtype))
        ufunc = getattr(np, name)
        if ufunc.nin == 1:
            return Step(f"{name}(x)", ufunc, getattr(da, name))
        shape = broadcastable_shape(draw, a.shape)
        b, make_b, text = second_operand(draw, shape, dtype)
        return Step(f"{name}(x, {text})", lambda a: ufunc(a, b), lambda x: getattr(da, name)(x, make_b()))

    if kind == "numpy function":
        name = draw(st.sampled_from(sorted(NUMPY_FUNCTIONS)))
        assume(allowed(NUMPY_FUNCTIONS[name], dtype))
        kw = {}
        if name in ("median", "quantile", "percentile", "nanmean", "nansum", "nanmax", "nanmin", "nanstd", "ptp"):
            kw["axis"] = _axis_arg(draw, ndim, allow_tuple=name not in ("ptp",))
            kw["keepdims"] = draw(st.booleans())
        elif name in ("cumsum", "trapezoid") and ndim:
            kw["axis"] = draw(st.integers(-ndim, ndim - 1))
        args = ()
        if name in ("quantile", "percentile"):
            q = draw(st.sampled_from([0.0, 0.25, 0.5, 1.0, (0.1, 0.9)]))
            args = (tuple(100 * v for v in q) if isinstance(q, tuple) else 100 * q,) if name == "percentile" else (q,)
        return Step(f"{name}(x, {args}, {kw})", lambda a: getattr(np, name)(a, *args, **kw),
                    lambda x: getattr(da, name)(x, *args, **kw))

    if kind == "reduce":
        name = draw(st.sampled_from(sorted(REDUCTIONS)))
        assume(allowed(REDUCTIONS[name], dtype))
        axis = _axis_arg(draw, ndim)
        keepdims = draw(st.booleans())
        kw = dict(axis=axis, keepdims=keepdims)
        if name in ("var", "std") and draw(st.booleans()):
            kw["correction"] = draw(st.sampled_from([0, 1]))
        np_kw = dict(kw)
        if "correction" in np_kw:
            np_kw["ddof"] = np_kw.pop("correction")
        if name in ("min", "max"):  # NumPy raises for an empty reduction; darray must too (checked apart)
            axes = range(ndim) if axis is None else ((axis,) if isinstance(axis, int) else axis)
            assume(all(a.shape[ax] for ax in axes))
        return Step(f"{name}(x, {kw})", lambda a: getattr(np, name)(a, **np_kw),
                    lambda x: getattr(da, name)(x, **kw))

    if kind == "getitem":
        key = []
        for n in a.shape[:draw(st.integers(0, ndim))]:
            if n and draw(st.integers(0, 4)) == 0:
                key.append(draw(st.integers(-n, n - 1)))
                continue
            step = draw(st.sampled_from([None, 1, 2, 3, -1, -2, -3]))
            start = draw(st.one_of(st.none(), st.integers(-n - 2, n + 2)))
            stop = draw(st.one_of(st.none(), st.integers(-n - 2, n + 2)))
            key.append(slice(start, stop, step))
        if draw(st.booleans()) and len(key) < ndim:
            key.append(Ellipsis)
        key = tuple(key)
        return Step(f"x[{key}]", lambda a: a[key], lambda x: x[key])

    if kind == "reshape":
        size = a.size
        divisors = [d for d in range(1, max(size, 1) + 1) if size % d == 0] if size else [0, 1, 3]
        nd = draw(st.integers(0 if size == 1 else 1, 3))
        shape = []
        rest = size
        for _ in range(nd - 1):
            d = draw(st.sampled_from([d for d in divisors if (rest % d == 0 if rest else True)] or [1]))
            shape.append(d)
            rest = rest // d if d and rest else rest
        if nd:
            shape.append(rest if size else 0)
        shape = tuple(shape)
        assume(math.prod(shape) == size)
        if shape and size and draw(st.booleans()):
            i = draw(st.integers(0, len(shape) - 1))
            shape = shape[:i] + (-1,) + shape[i + 1:]
        return Step(f"reshape(x, {shape})", lambda a: np.reshape(a, shape), lambda x: da.reshape(x, shape))

    if kind == "roll":
        axis = _axis_arg(draw, ndim)
        if isinstance(axis, tuple):
            assume(axis)
            shift = tuple(draw(st.integers(-12, 12)) for _ in axis)
        else:
            shift = draw(st.integers(-12, 12))
        return Step(f"roll(x, {shift}, axis={axis})", lambda a: np.roll(a, shift, axis=axis),
                    lambda x: da.roll(x, shift, axis=axis))

    if kind == "flip":
        axis = _axis_arg(draw, ndim)
        return Step(f"flip(x, axis={axis})", lambda a: np.flip(a, axis=axis), lambda x: da.flip(x, axis=axis))

    if kind == "concat":
        if ndim == 0:
            axis = None
        else:
            axis = draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1)))
        shape = list(a.shape)
        if axis is not None:
            shape[axis] = draw(st.integers(0, 5))
        elif ndim:
            shape = list(draw(st.lists(st.integers(0, 4), min_size=1, max_size=2)))
        b, make_b, text = second_operand(draw, tuple(shape), dtype)
        first = draw(st.booleans())
        if first:
            return Step(f"concat([x, {text}], axis={axis})", lambda a: np.concat([a, b], axis=axis),
                        lambda x: da.concat([x, make_b()], axis=axis))
        return Step(f"concat([{text}, x], axis={axis})", lambda a: np.concat([b, a], axis=axis),
                    lambda x: da.concat([make_b(), x], axis=axis))

    if kind == "mask":
        assume(_kind(dtype) in "biuf")
        assume(ndim > 0)  # known bug: test_zero_d_boolean_mask
        threshold = scalar_for(draw, dtype) if _kind(dtype) != "b" else True
        if _kind(dtype) == "b":
            return Step("x[x == True]", lambda a: a[a == threshold], lambda x: x[x == threshold])
        return Step(f"x[x > {threshold!r}]", lambda a: a[a > threshold], lambda x: x[x > threshold])

    if kind == "cumulative_sum":
        assume(allowed(NUMERIC, dtype))
        axis = draw(st.integers(-ndim, ndim - 1)) if ndim > 1 or draw(st.booleans()) else None
        include_initial = draw(st.booleans())
        return Step(f"cumulative_sum(x, axis={axis}, include_initial={include_initial})",
                    lambda a: np.cumulative_sum(a, axis=axis, include_initial=include_initial),
                    lambda x: da.cumulative_sum(x, axis=axis, include_initial=include_initial))

    if kind == "sort":
        assume(allowed(REAL, dtype) or _kind(dtype) == "b")
        axis = draw(st.integers(-ndim, ndim - 1))
        descending = draw(st.booleans())
        if descending:  # as array-api-strict: flip(sort(flip(x))), so NaNs come first
            def np_sort(a):
                return np.flip(np.sort(np.flip(a, axis=axis), axis=axis, stable=True), axis=axis)
        else:
            def np_sort(a):
                return np.sort(a, axis=axis, stable=True)
        return Step(f"sort(x, axis={axis}, descending={descending})", np_sort,
                    lambda x: da.sort(x, axis=axis, descending=descending))

    # take
    axis = draw(st.integers(-ndim, ndim - 1)) if ndim > 1 or draw(st.booleans()) else None
    n = a.shape[axis if axis is not None else 0]
    idx = np.asarray(draw(st.lists(st.integers(-n, n - 1), max_size=6)) if n else [], dtype=np.int64)
    as_darray = draw(st.booleans())
    spec = draw(layout_keywords(idx.shape)) if as_darray else None
    return Step(f"take(x, {idx.tolist()}{' as DArray ' + str(spec) if as_darray else ''}, axis={axis})",
                lambda a: np.take(a, idx, axis=axis),
                lambda x: da.take(x, da.asarray(idx, **spec) if as_darray else idx, axis=axis))


def _argsort_step(draw, a):
    assume(allowed(REAL, a.dtype) or _kind(a.dtype) == "b")
    axis, descending = draw(st.integers(-a.ndim, a.ndim - 1)), draw(st.booleans())
    return Step(f"argsort(x, axis={axis}, descending={descending})",
                lambda v: xnp_argsort(v, axis, descending), lambda x: da.argsort(x, axis=axis, descending=descending))


def xnp_argsort(v, axis, descending):
    import array_api_compat.numpy as xnp

    return xnp.argsort(v, axis=axis, descending=descending, stable=True).astype(np.int64)


def _argmax_step(draw, a):
    assume(allowed(REAL, a.dtype))
    name = draw(st.sampled_from(["argmax", "argmin"]))
    axis = draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1)))
    keepdims = draw(st.booleans())
    return Step(f"{name}(x, axis={axis}, keepdims={keepdims})",
                lambda v: getattr(np, name)(v, axis=axis, keepdims=keepdims).astype(np.int64),
                lambda x: getattr(da, name)(x, axis=axis, keepdims=keepdims))


def _diff_step(draw, a):
    assume(_kind(a.dtype) != "b")
    axis, n = draw(st.integers(-a.ndim, a.ndim - 1)), draw(st.integers(0, 2))
    return Step(f"diff(x, n={n}, axis={axis})", lambda v: np.diff(v, n=n, axis=axis),
                lambda x: da.diff(x, n=n, axis=axis))


def _moveaxis_step(draw, a):
    src, dst = draw(st.integers(-a.ndim, a.ndim - 1)), draw(st.integers(-a.ndim, a.ndim - 1))
    return Step(f"moveaxis(x, {src}, {dst})", lambda v: np.moveaxis(v, src, dst), lambda x: da.moveaxis(x, src, dst))


def _repeat_step(draw, a):
    axis = draw(st.integers(-a.ndim, a.ndim - 1))
    repeats = draw(st.one_of(st.integers(0, 3), st.lists(st.integers(0, 3), min_size=a.shape[axis],
                                                              max_size=a.shape[axis])))
    return Step(f"repeat(x, {repeats}, axis={axis})", lambda v: np.repeat(v, repeats, axis=axis),
                lambda x: da.repeat(x, repeats if isinstance(repeats, int) else np.asarray(repeats), axis=axis))


def _setitem_step(draw, a):
    key = tuple(slice(draw(st.one_of(st.none(), st.integers(-n - 1, n))), draw(st.one_of(st.none(),
                                                                                     st.integers(-n - 1, n))),
                      draw(st.sampled_from([None, 1, 2, -1]))) for n in a.shape[:draw(st.integers(1, a.ndim))])
    value = scalar_for(draw, a.dtype)

    def np_set(v):
        v = v.copy()
        v[key] = value
        return v

    def da_set(x):
        x = da.astype(x, x.dtype, copy=True)  # a copy, so that the chain's input is kept
        x[key] = value
        return x
    return Step(f"x[{key}] = {value!r}", np_set, da_set)


def _where_step(draw, a):
    b, make_b, text = second_operand(draw, broadcastable_shape(draw, a.shape), a.dtype)
    threshold = scalar_for(draw, a.dtype) if _kind(a.dtype) not in "bc" else None
    if _kind(a.dtype) == "b":  # the standard promotes no Python int with a bool array: x is its own condition
        return Step(f"where(x, x, {text})", lambda v: np.where(v, v, b), lambda x: da.where(x, x, make_b()))
    if threshold is None:
        return Step(f"where(x != 0, x, {text})", lambda v: np.where(v != 0, v, b),
                    lambda x: da.where(x != 0, x, make_b()))
    return Step(f"where(x > {threshold!r}, x, {text})", lambda v: np.where(v > threshold, v, b),
                lambda x: da.where(x > threshold, x, make_b()))


def _clip_step(draw, a):
    assume(allowed(REAL, a.dtype))
    lo, hi = sorted((scalar_for(draw, a.dtype), scalar_for(draw, a.dtype)))
    return Step(f"clip(x, {lo!r}, {hi!r})", lambda v: np.clip(v, lo, hi), lambda x: da.clip(x, lo, hi))


def _astype_step(draw, a):
    target = draw(st.sampled_from(DTYPES))
    assume(not (_kind(a.dtype) == "c" and target != "complex128"))  # complex -> real: NumPy warns, the standard refuses
    with np.errstate(all="ignore"):
        assume(not (_kind(a.dtype) == "f" and target in ("int32", "int64") and not np.all(np.isfinite(a))))
    return Step(f"astype(x, {target})", lambda v: v.astype(target), lambda x: da.astype(x, target))


def _expand_dims_step(draw, a):
    assume(a.ndim < 3)
    axis = draw(st.integers(-a.ndim - 1, a.ndim))
    return Step(f"expand_dims(x, axis={axis})", lambda v: np.expand_dims(v, axis),
                lambda x: da.expand_dims(x, axis=axis))


def _tile_step(draw, a):
    reps = tuple(draw(st.lists(st.integers(0, 3), min_size=1, max_size=3)))
    return Step(f"tile(x, {reps})", lambda v: np.tile(v, reps), lambda x: da.tile(x, reps))


def _count_nonzero_step(draw, a):
    axis = _axis_arg(draw, a.ndim)
    keepdims = draw(st.booleans())
    return Step(f"count_nonzero(x, axis={axis}, keepdims={keepdims})",
                lambda v: np.asarray(np.count_nonzero(v, axis=axis, keepdims=keepdims)).astype(np.int64),
                lambda x: da.count_nonzero(x, axis=axis, keepdims=keepdims))


def _unique_values_step(draw, a):
    assume(allowed(REAL, a.dtype) or _kind(a.dtype) == "b")
    # the standard leaves the order open; darray sorts (NumPy >= 2.3 hashes): compare with the sorted NaN-distinct one
    return Step("unique_values(x)", lambda v: np.unique(v, equal_nan=False), da.unique_values)


def _matmul_step(draw, a):
    assume(a.ndim in (1, 2) and allowed(NUMERIC, a.dtype))
    k = a.shape[-1]
    other = (k,) if draw(st.booleans()) else (k, draw(st.integers(0, 4)))
    b, make_b, text = second_operand(draw, other, a.dtype)
    return Step(f"matmul(x, {text})", lambda v: np.matmul(v, b), lambda x: da.matmul(x, make_b()))


#: More step kinds: name -> draw(draw, a) -> Step.
MORE_STEPS = {"argsort": _argsort_step, "argmax": _argmax_step, "diff": _diff_step, "moveaxis": _moveaxis_step,
              "repeat": _repeat_step, "setitem": _setitem_step, "where": _where_step, "clip": _clip_step,
              "astype": _astype_step, "expand_dims": _expand_dims_step, "tile": _tile_step,
              "count_nonzero": _count_nonzero_step, "unique_values": _unique_values_step, "matmul": _matmul_step}


# ------------------------------------------------------------------ comparing
def _tolerance(dtype) -> tuple[float, float]:
    if np.dtype(dtype) in (np.float32, np.complex64):
        return 2e-4, 2e-4
    return 1e-9, 1e-9


def check_same(x, expected: np.ndarray, where: str) -> None:
    """Gathered ``x`` equals ``expected``: shape, dtype, values; the verdict agreed by every rank."""
    got = np.asarray(x.gather())
    problem = ""
    if not isinstance(x, da.DArray):
        problem = f"not a DArray: {type(x).__name__}"
    elif got.shape != expected.shape:
        problem = f"shape {got.shape} != {expected.shape}"
    elif got.dtype != expected.dtype:
        problem = f"dtype {got.dtype} != {expected.dtype}"
    elif expected.dtype.kind in "fc":
        rtol, atol = _tolerance(expected.dtype)
        scale = float(np.nanmax(np.abs(expected[np.isfinite(expected)]), initial=1.0)) if expected.size else 1.0
        if not np.allclose(got, expected, rtol=rtol, atol=atol * scale, equal_nan=True):
            problem = f"values differ:\n got {got!r}\n expected {expected!r}"
    elif not np.array_equal(got, expected):
        problem = f"values differ:\n got {got!r}\n expected {expected!r}"
    failed = agree(COMM, not problem)
    assert not failed, f"{where}: {problem or 'differs on other ranks'} (ranks {failed} of {COMM.size})"


def run_darray(fn, where: str):
    """Run one darray step on every rank; an exception anywhere fails every rank (no hang)."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out, error = fn(), None
    except Exception as e:  # agreed below, then reported
        out, error = None, e
    failed = agree(COMM, error is None)
    if failed:
        raise AssertionError(f"{where}: darray raised on ranks {failed} of {COMM.size} where NumPy did not: "
                             f"{type(error).__name__ if error else 'no error here'}: {error}") from error
    return out


def run_numpy(fn, a):
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return np.asarray(fn(a))
    except (TypeError, ValueError, IndexError, ZeroDivisionError, OverflowError):
        assume(False)  # not a valid operation for these operands: the same decision on every rank


# ------------------------------------------------------------------ the property
@st.composite
def cases(draw):
    a, spec = draw(arrays())
    steps, current = [], a
    for _ in range(draw(st.integers(1, 4))):
        step = draw_step(draw, current)
        current = run_numpy(step.np_fn, current)
        steps.append(step)
    return a, spec, steps


def check_case(case) -> None:
    a, spec, steps = case
    STATS["examples"] += 1
    note(f"input {a.dtype}{a.shape} {spec}: {a!r}")
    chain = f"asarray({a.dtype}{a.shape}, {spec})"
    x = run_darray(lambda: da.asarray(a, **spec), chain)
    check_same(x, a, chain)
    expected = a
    for step in steps:
        chain += f" -> {step.describe}"
        note(chain)
        expected = run_numpy(step.np_fn, expected)
        x = run_darray(lambda: step.da_fn(x), chain)
        STATS["ops"] += 1
        check_same(x, expected, chain)
    STATS["valid"] += 1


def _fuzz(examples: int) -> dict:
    before = dict(STATS)

    @settings(max_examples=examples)
    @given(cases())
    def prop(case):
        check_case(case)

    prop()
    done = {k: STATS[k] - before[k] for k in STATS}
    print(f"\ntest_fuzz: {done['valid']} examples passed ({done['examples']} run, {done['ops']} operations) at "
          f"{COMM.size} rank(s), profile {_PROFILE!r}, max_examples={examples}")
    return done


def test_fuzz_chains():
    done = _fuzz(FUZZ_EXAMPLES)
    assert done["valid"] > 0


@pytest.mark.fuzz
@pytest.mark.skipif(not LONG_EXAMPLES, reason="long fuzz run: use --hypothesis-profile long or "
                                               "DARRAY_FUZZ_EXAMPLES=<n>")
def test_fuzz_chains_long():
    done = _fuzz(LONG_EXAMPLES)
    assert done["valid"] > 0


# ------------------------------------------------------------------ regressions found by the fuzzer
def test_zero_d_boolean_mask():
    """x[mask] with a 0-d x and a 0-d mask: NumPy gives shape (1,) (mask True) or (0,) (False)."""
    for value in (True, False):
        a = np.array(value)
        x = da.asarray(a, split=None)
        check_same(x[x], a[a], f"0-d x[x] with x={value}")
    b = np.array(2.5)
    y = da.asarray(b)
    check_same(y[y > 1], b[b > 1], "0-d y[y > 1]")


def test_replicated_operands_on_different_grids():
    """Two replicated operands whose layouts differ only in grid dims (a reduction of a (1, P) grid array and a
    plain 0-d array): no alignment is needed; it once took the piecewise path and failed on 0-d out= views."""
    a = np.array([[True]])
    x = da.asarray(a, split=(None, None), grid=(1, P), halo=0)
    check_same(da.bitwise_and(da.all(x), da.asarray(np.array(True), split=None)), np.bitwise_and(a.all(), True),
               "all(x) & 0-d")
    b = np.arange(6.0).reshape(2, 3)
    y = da.asarray(b, split=(None, None), grid=(1, P))
    check_same(y + da.asarray(b, split=None), b + b, "replicated (1, P) grid + replicated (P,) grid")


NANS = np.array([[np.nan, -0.4], [1.0, 2.0], [3.0, 0.5], [0.1, 0.2], [-7.0, np.nan]], dtype=np.float32)


@pytest.mark.parametrize("layout", layouts(NANS.shape, "split0", "split1", "last0"), ids=str)
def test_min_max_propagate_nan_on_every_rank(layout):
    """MPI's MIN/MAX compare with < and >: a NaN survived or vanished with the reduction order, so at 4 ranks
    max() of an array holding a NaN was NaN on one rank and a number on the others. NaN must win everywhere."""
    x = layout.array(NANS)
    for name in ("max", "min"):
        for axis in (None, 0, 1):
            check_same(getattr(da, name)(x, axis=axis), getattr(np, name)(NANS, axis=axis), f"{name} {axis}")


def test_min_max_of_infinities():
    b = np.array([np.inf, -np.inf, 0.0, 5.0])
    check_same(da.max(da.asarray(b, split=0)), np.max(b), "max with infinities")
    check_same(da.min(da.asarray(b, split=0)), np.min(b), "min with infinities")


def test_zero_d_setitem():
    """``z[...] = value`` on a 0-d array: the block's ``[()]`` is a scalar copy, so the write went nowhere."""
    for value in (da.asarray(1.0, split=None), 4.0, np.float32(3.0), np.array(2.0)):
        z = da.asarray(np.array(2.0), split=None)
        z[...] = value
        check_same(z, np.asarray(np.asarray(value.gather() if isinstance(value, da.DArray) else value),
                                 dtype=np.float64), f"0-d z[...] = {value!r}")
