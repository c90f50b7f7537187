"""The test cases every test file shares: named layouts of a global shape and seeded values per dtype.

Imported as a plain module (``from _cases import ...``, like ``_nn_helpers``):
pytest's ``prepend`` import mode puts ``tests/`` on ``sys.path``.

Layouts. :func:`catalogue` lists every layout of a shape that the suite
checks, each a :class:`Case` with a readable id and flags (``uneven``,
``empty`` block, ``thin`` blocks narrower than a halo, 2-d ``grid``, ``halo``,
``replicated`` whole copies, ``copies`` of a grid that replicates along one
of its axes). Which cases exist depends on the shape and on the rank count
only -- never on the rank -- so every rank of an ``mpiexec`` run collects
the same parameter list: the cut layouts (``last``, ``first-empty``,
``thin``) exist at more than one rank, the 2x2 grids at four ranks.
A test picks its cases by id with :func:`layouts` and parametrizes over them::

    @pytest.mark.parametrize("layout", layouts((9, 11), "split0", "uneven1", "grid2x2"), ids=str)
    def test_x(layout):
        x = layout.array(values(layout.shape))

:func:`by_ndim` parametrizes over layouts of several shapes (ids ``2d-grid2x2``).

Values. :func:`values` draws a global array of any dtype category (bool, int,
uint, float, complex) from one seed recipe, :func:`generator`: the same
numbers on every rank, whatever the rank count.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import darray as da
from darray.testing import backend_dtypes, uneven_sizes

__all__ = ["COMM", "P", "Case", "case", "catalogue", "layouts", "by_ndim", "param", "each", "FLAGS",
           "DTYPE_CATEGORIES", "dtypes", "category", "generator", "values"]

COMM = da.default_communicator()
#: The rank count: the only thing (besides the shape) that decides which cases exist.
P = COMM.size

#: Flags a case may carry.
FLAGS = frozenset({"uneven", "empty", "thin", "grid", "halo", "replicated", "copies"})


@dataclass(frozen=True)
class Case:
    """One layout of a global ``shape``: ``da.asarray(g, **kw)`` makes it; ``str(case)`` is its test id."""

    id: str
    shape: tuple[int, ...]
    kw: dict[str, Any] = field(hash=False, compare=False)
    flags: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        unknown = self.flags - FLAGS
        assert not unknown, f"unknown flags {sorted(unknown)} of case {self.id}"

    def __str__(self) -> str:
        return self.id

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def array(self, g, **extra) -> da.DArray:
        """``g`` (a NumPy array of ``self.shape``) laid out like this case; ``extra`` adds keywords (``dtype=``)."""
        return da.asarray(g, **self.kw, **extra)


def case(id: str, shape, *flags: str, **kw) -> Case:
    """A case the catalogue does not list (a file's own halo width or boundary, for instance)."""
    return Case(id, tuple(shape), kw, frozenset(flags))


def _axis_name(a: int | None) -> str:
    return "n" if a is None else str(a)


def catalogue(shape, p: int = P) -> dict[str, Case]:
    """Every named layout of ``shape`` at ``p`` ranks, id -> case.

    ``replicated`` / ``replicated-halo``; per axis ``a``: ``split{a}`` (balanced),
    ``uneven{a}`` (:func:`darray.testing.uneven_sizes`: the second block empty),
    ``halo{a}`` (halo 1, periodic) and, at more than one rank, ``last{a}`` (every
    cell on the last rank), ``first-empty{a}`` (rank 0 holds nothing, the rest
    balanced), ``thin{a}`` (one-cell blocks and one big last block); at four
    ranks, 2x2 grids ``grid2x2`` (axes 0, 1),
    ``grid2x2-{a}{b}`` (axes ``a``, ``b``; ``n`` replicates along that grid
    axis; a 1-d array has ``grid2x2-0n`` and ``grid2x2-n0``), and for two or
    more axes ``grid2x2-uneven`` / ``grid2x2-10-uneven`` (axes 0, 1 / 1, 0, with
    an empty and a one-cell block) and, for three axes, ``grid1x2x2``.
    """
    shape = tuple(shape)
    ndim = len(shape)
    out = [case("replicated", shape, "replicated", split=None),
           case("replicated-halo", shape, "replicated", "halo", split=None, halo=1)]
    for a, n in enumerate(shape):
        out += [case(f"split{a}", shape, split=a),
                case(f"uneven{a}", shape, *(("uneven", "empty") if p > 1 else ()), split=a,
                     sizes={a: uneven_sizes(n, p)}),
                case(f"halo{a}", shape, "halo", split=a, halo=1, boundary="periodic")]
        if p > 1:
            out += [case(f"last{a}", shape, "uneven", "empty", split=a, sizes={a: [0] * (p - 1) + [n]}),
                    case(f"first-empty{a}", shape, "uneven", "empty", split=a,
                         sizes={a: [0] + [len(b) for b in np.array_split(np.arange(n), p - 1)]}),
                    case(f"thin{a}", shape, "uneven", "thin", split=a, sizes={a: [1] * (p - 1) + [n - (p - 1)]})]
    if p == 4 and ndim >= 1:
        for a, b in itertools.permutations([*range(ndim), None], 2):
            if a is None and b is None:
                continue
            name = "grid2x2" if (a, b) == (0, 1) else f"grid2x2-{_axis_name(a)}{_axis_name(b)}"
            flags = ("grid", "copies") if None in (a, b) else ("grid",)
            out.append(case(name, shape, *flags, split=(a, b), grid=(2, 2)))
    if p == 4 and ndim >= 2:
        out += [case("grid2x2-uneven", shape, "grid", "uneven", "empty", "thin", split=(0, 1), grid=(2, 2),
                     sizes={0: [shape[0], 0], 1: [1, shape[1] - 1]}),
                case("grid2x2-10-uneven", shape, "grid", "uneven", "empty", "thin", split=(1, 0), grid=(2, 2),
                     sizes={0: [0, shape[0]], 1: [shape[1] - 1, 1]})]
        if ndim >= 3:
            out.append(case("grid1x2x2", shape, "grid", split=(0, 1, 2), grid=(1, 2, 2)))
    return {c.id: c for c in out}


def layouts(shape, *names: str, flags: str | None = None) -> list[Case]:
    """The catalogue's cases ``names`` of ``shape`` that exist at this rank count, in the order given.

    With no names, every case of the catalogue (optionally only those carrying
    flag ``flags``). A name that no rank count has is an error (a typo).
    """
    here = catalogue(shape)
    if not names:
        return [c for c in here.values() if flags is None or flags in c.flags]
    known = here.keys() | catalogue(shape, 4).keys()
    unknown = [n for n in names if n not in known]
    assert not unknown, f"no layouts {unknown} for shape {tuple(shape)}; known: {sorted(known)}"
    return [here[n] for n in names if n in here]


def param(c: Case, *values, prefix: str = "") -> Any:
    """``pytest.param(*values, c)`` named by the case (``prefix-id``)."""
    return pytest.param(*values, c, id=f"{prefix}-{c.id}" if prefix else c.id)


def by_ndim(table: dict[int, list[Case]]) -> list[Any]:
    """Parameters ``(ndim, case)`` over layouts of several shapes, ids ``{ndim}d-{case}``."""
    return [param(c, ndim, prefix=f"{ndim}d") for ndim, cases in table.items() for c in cases]


def each(cases, check, name=str) -> None:
    """``check(case)`` for every one of ``cases`` (the functions, dtypes or options a test loops over inside one
    layout's test): a failing case does not hide the others; the failures are reported together, each under
    ``name(case)``. ``check`` asserts through ``darray.testing`` (which agrees on the verdict), so every rank
    catches the same failures and none runs ahead into a collective."""
    failures = []
    for c in cases:
        try:
            check(c)
        except AssertionError as e:
            failures.append(f"{name(c)}: {e}")
    assert not failures, "\n".join(failures)


# ------------------------------------------------------------------ values
#: Dtypes per category; :func:`dtypes` keeps those of the local backend.
DTYPE_CATEGORIES = {
    "bool": ("bool",),
    "int": ("int8", "int16", "int32", "int64"),
    "uint": ("uint8", "uint16", "uint32", "uint64"),
    "float": ("float32", "float64"),
    "complex": ("complex64", "complex128"),
}


def dtypes(*categories: str) -> list[str]:
    """Dtype names of ``categories`` (all when none) that the local backend has."""
    have = backend_dtypes()
    return [d for c in (categories or DTYPE_CATEGORIES) for d in DTYPE_CATEGORIES[c] if d in have]


def category(dtype) -> str:
    """``bool``, ``int``, ``uint``, ``float`` or ``complex``."""
    return {"b": "bool", "i": "int", "u": "uint", "f": "float", "c": "complex"}[np.dtype(dtype).kind]


def generator(seed: int = 0, *keys: int | str) -> np.random.Generator:
    """The one seed recipe: ``default_rng([seed, *keys])``, a string key counting as the sum of its characters."""
    return np.random.default_rng([seed, *(sum(map(ord, k)) if isinstance(k, str) else int(k) for k in keys)])


def values(shape, dtype="float64", seed: int = 0, *, low=None, high=None, key: int | str = 0,
           rng: np.random.Generator | None = None) -> np.ndarray:
    """A seeded global array of ``shape`` and ``dtype``: the same on every rank.

    ``bool``: fair coin; ``int`` / ``uint``: integers in ``[low, high)``
    (default ``[-50, 50)``; unsigned from ``max(low, 0)``); ``float``: standard normal,
    or uniform in ``[low, high)``; ``complex``: such a real part plus an
    imaginary part of the same law. ``key`` separates draws of one test
    (a function name, an argument number). ``rng``: draw from this
    generator instead (made by :func:`generator` from other keys, where a
    file's checks were tuned on those draws).
    """
    shape = tuple(shape) if np.ndim(shape) else (int(shape),)
    rng = rng or generator(seed, len(shape), sum(shape), *((key,) if key else ()))
    dt = np.dtype(dtype)
    kind = category(dt)
    if kind == "bool":
        return rng.random(shape) < 0.5
    if kind in ("int", "uint"):
        lo = -50 if low is None else low
        lo = max(lo, 0) if kind == "uint" else lo
        return rng.integers(lo, 50 if high is None else high, shape).astype(dt)

    def real():
        return rng.standard_normal(shape) if low is None else rng.uniform(low, high, shape)

    if kind == "complex":
        return (real() + 1j * real()).astype(dt)
    return real().astype(dt)
