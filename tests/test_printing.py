"""Printing (darray._core.printing): NumPy's text for the same values, at any rank count, fetching only what shows.

``str``/``repr`` and darray's ``array2string``/``array_repr``/``array_str``
are compared with NumPy's on the gathered array, one test per shape and
layout of ``tests/_cases.py`` (each split axis, uneven blocks with an empty
one, everything on the last rank, replicated, a halo, a 2x2 grid at 4 ranks),
over dtypes, special values and print options; a large array's printing moves
only its corners (``darray.tracing``). NumPy's text is computed once per
(shape, dtype, options), not once per layout.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import darray as da
from darray.testing import agree

from _cases import P, category, generator, layouts, values as seeded

pytestmark = pytest.mark.mpi


def values(shape, dtype, special=False) -> np.ndarray:
    """``_cases.values`` for printing: floats spread over magnitudes 1e-3..1e3, integers in [-500, 500),
    complex numbers times 100; ``special``: NaN, inf, -0.0 and -inf at the ends of a float or complex array."""
    kind = category(dtype)
    a = np.asarray(seeded(shape, dtype, low=-500, high=500) if kind in ("int", "uint") else seeded(shape, dtype))
    if kind == "float":
        a = np.asarray(a * 10.0 ** generator(0, len(shape), sum(shape), "magnitude").integers(-3, 4, shape), dtype)
    elif kind == "complex":
        a = np.asarray(a * 100, dtype)
    if special and kind in ("float", "complex") and a.size > 4:
        flat = a.reshape(-1)
        flat[0], flat[-1], flat[1], flat[-2] = np.nan, np.inf, -0.0, -np.inf
    return a


def named(shape) -> list:
    """Replicated; per axis split, uneven (an empty block) and all on the last rank (more than one rank);
    a halo along axis 0 (two or more cells); a 2x2 grid (2-d and more, 4 ranks)."""
    names = ["replicated"]
    for a in range(len(shape)):
        names += [f"split{a}", *((f"uneven{a}", f"last{a}") if P > 1 else ())]
    if shape and shape[0] >= 2:
        names.append("halo0")
    if len(shape) >= 2:
        names.append("grid2x2")
    return layouts(shape, *names)


def over(*shapes) -> list:
    """``layout`` parameters over the layouts of ``shapes``, ids ``{shape}-{layout}``."""
    return [pytest.param(c, id=f"{'x'.join(map(str, shape)) or 'scalar'}-{c}") for shape in shapes
            for c in named(shape)]


#: What :func:`printed` returns, in order.
FUNCTIONS = ("str", "repr", "array_repr", "array_str", "array2string", "format")


def printed(x, xp) -> tuple[str, ...]:
    """The :data:`FUNCTIONS` of ``x`` by ``xp`` (``darray`` or ``numpy``; a 0-d NumPy array's repr is its scalar's)."""
    return (str(x), repr(x) if xp is da or x.ndim else repr(x[()]), xp.array_repr(x), xp.array_str(x),
            xp.array2string(x, separator=", ", prefix="x = "), format(x, ""))


OPTIONS = {
    "threshold10": dict(threshold=10), "threshold10-edge1": dict(threshold=10, edgeitems=1),
    "threshold5-edge0": dict(edgeitems=0, threshold=5), "precision3": dict(precision=3),
    "linewidth40": dict(linewidth=40), "suppress": dict(suppress=True), "sign+": dict(sign="+"),
    "fixed-precision2": dict(floatmode="fixed", precision=2), "threshold1-edge4": dict(threshold=1, edgeitems=4),
    "legacy1.25": dict(legacy="1.25"), "formatter": dict(formatter={"float": lambda v: f"<{v:.1f}>"}),
}
#: The options :func:`test_print_options_apply` runs at this rank count: all in-process and at 2 ranks; at 3 and
#: 4 ranks those that change what is fetched (``threshold``, ``edgeitems``: the whole array or which corners,
#: darray.printing.shown). The others only format the fetched NumPy array, the same whatever the rank count.
OPTIONS_HERE = OPTIONS if P <= 2 else {k: v for k, v in OPTIONS.items() if {"threshold", "edgeitems"} & v.keys()}


@functools.cache
def numpy_printed(shape, dtype, special=False, options=None) -> tuple[np.ndarray, tuple[str, ...]]:
    """The values of (``shape``, ``dtype``) and NumPy's :func:`printed` of them under ``OPTIONS[options]``."""
    g = values(shape, dtype, special)
    with np.printoptions(**OPTIONS.get(options, {})):
        return g, printed(g, np)


def everywhere(comm, bad: list[str]) -> None:
    """Fail on every rank when ``bad`` (this rank's mismatches) is not empty on any, once per test: no rank runs
    ahead into a collective, and one verdict (one collective) covers all the test's checks."""
    assert not agree(comm, not bad), "\n".join(bad)


def mismatches(x, want: tuple[str, ...], err: str) -> list[str]:
    """The printing functions of ``x`` that do not give ``want`` (NumPy's :func:`printed`), with both texts."""
    return [f"{err} {name}:\n{got}\n!=\n{w}" for name, got, w in zip(FUNCTIONS, printed(x, da), want) if got != w]


SHAPES = [(), (1,), (7,), (13,), (0,), (0, 3), (7, 13), (3, 4, 5), (2000,), (40, 37), (11, 12, 13), (3, 1, 1200)]
DTYPES = ["float64", "float32", "int64", "uint8", "bool", "complex128"]


@pytest.mark.parametrize("layout", over(*SHAPES))
def test_print_matches_numpy(comm, layout):
    bad = []
    for dtype in DTYPES:
        g, want = numpy_printed(layout.shape, dtype, special=True)
        bad += mismatches(layout.array(g), want, dtype)
    everywhere(comm, bad)


@pytest.mark.parametrize("layout", over((13,), (7, 13), (3, 4, 5), (200, 30)))
def test_print_options_apply(comm, layout):
    """Every one of :data:`OPTIONS_HERE` (each named in a failure; none hides another) but edgeitems=0 on
    (200, 30): NumPy formats every element then (slowly), and (13,) and (7, 13) show it."""
    bad = []
    for options in OPTIONS_HERE:
        if layout.shape == (200, 30) and OPTIONS[options].get("edgeitems", 1) == 0:
            continue
        for dtype in ["float64", "complex128"]:
            g, want = numpy_printed(layout.shape, dtype, options=options)
            x = layout.array(g)
            with np.printoptions(**OPTIONS[options]):  # NumPy's options are darray's (darray.printoptions is NumPy's)
                bad += mismatches(x, want, f"{options} {dtype}")
            with da.printoptions(**OPTIONS[options]):
                if (str(x), repr(x)) != want[:2]:
                    bad.append(f"darray.printoptions {options} {dtype}:\n{x}\n!=\n{want[0]}")
    everywhere(comm, bad)


def test_set_printoptions(comm):
    saved = da.get_printoptions()
    try:
        da.set_printoptions(threshold=20, edgeitems=2)
        g = values((50,), "float64")
        everywhere(comm, mismatches(da.asarray(g), printed(g, np), "set_printoptions"))
    finally:
        da.set_printoptions(**saved)


ARGUMENTS = [dict(threshold=50, edgeitems=2), dict(max_line_width=60, precision=2),
             dict(separator="|", suffix="!", prefix="  "), dict(threshold=10**9)]


@functools.cache
def numpy_with_arguments() -> tuple[np.ndarray, list[str], str, str]:
    """(300, 20) values and NumPy's ``array2string`` of them with each of :data:`ARGUMENTS`, ``array_repr``,
    ``array_str`` with positional arguments."""
    g = values((300, 20), "float64")
    return (g, [np.array2string(g, **args) for args in ARGUMENTS], np.array_repr(g, 50, 2, True),
            np.array_str(g, 50, 2, True))


@pytest.mark.parametrize("layout", over((300, 20)))
def test_function_arguments(comm, layout):
    g, strings, array_repr, array_str = numpy_with_arguments()
    x = layout.array(g)
    bad = [f"array2string {args}" for args, want in zip(ARGUMENTS, strings) if da.array2string(x, **args) != want]
    bad += ["array_repr"] * (da.array_repr(x, 50, 2, True) != array_repr)
    bad += ["array_str"] * (da.array_str(x, 50, 2, True) != array_str)
    everywhere(comm, bad)


def test_functions_take_numpy_arrays():
    assert da.array2string(np.arange(3)) == np.array2string(np.arange(3))  # anything NumPy takes
    assert da.array_repr(np.arange(3)) == np.array_repr(np.arange(3))


@pytest.mark.parametrize("layout", over((7, 13)))
def test_zero_d_prints_as_numpy_scalars(comm, layout):
    bad = []
    for dtype in DTYPES:
        g = numpy_printed((7, 13), dtype)[0]
        x = layout.array(g)
        total = x.sum()  # a distributed sum may round otherwise than NumPy's: print the value it has
        want = np.asarray(total.gather())[()]
        if not (type(want) is type(g.sum()) and str(total) == str(want) and repr(total) == repr(want)):
            bad.append(f"{dtype} sum: {total!r} {want!r}")
        m, want = (x[2, 3], g[2, 3]) if dtype == "complex128" else (x.max(), g.max())
        if not (str(m) == str(want) and repr(m) == repr(want)):
            bad.append(f"{dtype} element or max: {m!r} {want!r}")
    everywhere(comm, bad)


def test_zero_d_array():
    assert str(da.asarray(0.53)) == "0.53" and repr(da.asarray(0.53)) == "np.float64(0.53)"
    assert da.array_repr(da.asarray(0.53)) == "array(0.53)"


LARGE = [((1000, 1000), 0), ((1000, 1000), 1), ((100, 100, 100), (0, 1) if P == 4 else 2), ((10**6,), 0)]


@pytest.mark.parametrize("shape,split", LARGE, ids=[f"{'x'.join(map(str, s))}-split{''.join(map(str, np.ravel(a)))}"
                                                    for s, a in LARGE])
def test_printing_a_large_array_moves_only_its_corners(comm, shape, split):
    edge = np.get_printoptions()["edgeitems"]
    kw = dict(split=split, grid=(2, 2)) if isinstance(split, tuple) else dict(split=split)
    x = da.arange(int(np.prod(shape)), dtype=da.float64).reshape(shape).redistribute(**kw)
    with da.tracing() as t:
        text = str(x)
    moved = sum(e["nbytes"] for e in t.events if e["kind"] == "comm")
    corner = (2 * edge + 1) ** len(shape) * 8
    want = str(np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape))
    everywhere(comm, [f"printing moved {moved} bytes, the corners are {corner}"] * (moved > corner * P)
               + [f"\n{text}\n!=\n{want}"] * (text != want))


def test_layout_stays_available():
    """The text is NumPy's; the layout is in ``x.layout`` and ``darray.explain(x)``."""
    x = da.arange(20.0, split=0)
    assert "Layout" not in repr(x) and "split" not in str(x)
    assert x.layout.shape == (20,) and x.layout.dims == (P,)
    assert f"grid=({P},)" in str(da.explain(x)) and "shape=(20,)" in str(da.explain(x))
