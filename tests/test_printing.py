"""Printing (darray._core.printing): NumPy's text for the same values, at any rank count, fetching only what shows.

``str``/``repr`` and darray's ``array2string``/``array_repr``/``array_str``
are compared with NumPy's on the gathered array, over layouts (each split
axis, uneven blocks with an empty one, everything on the last rank,
replicated, a halo, a 2x2 grid at 4 ranks), dtypes, special values and print
options; a large array's printing moves only its corners (``darray.tracing``).
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray.testing import agree, uneven_sizes as uneven

pytestmark = pytest.mark.mpi

P = da.default_communicator().size
COMM = da.default_communicator()


def layouts(shape) -> dict[str, dict]:
    out = {"replicated": dict(split=None)}
    for ax, n in enumerate(shape):
        out[f"split{ax}"] = dict(split=ax)
        if P > 1:
            out[f"split{ax}-uneven"] = dict(split=ax, sizes={ax: uneven(n, P)})
            out[f"split{ax}-last"] = dict(split=ax, sizes={ax: [0] * (P - 1) + [n]})
    if shape and shape[0] >= 2:
        out["halo"] = dict(split=0, halo=1)
    if P == 4 and len(shape) >= 2:
        out["grid22"] = dict(split=(0, 1), grid=(2, 2))
    return out


def values(shape, dtype, special=False) -> np.ndarray:
    rng = np.random.default_rng([sum(shape), len(shape), sum(map(ord, dtype))])
    dt = np.dtype(dtype)
    if dt.kind == "b":
        a = np.asarray(rng.random(shape) < 0.5)
    elif dt.kind in "iu":
        a = rng.integers(0 if dt.kind == "u" else -500, 500, shape).astype(dt)
    elif dt.kind == "c":
        a = ((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) * 100).astype(dt)
    else:
        a = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(dt)
    a = np.asarray(a)
    if special and dt.kind in "fc" and a.size > 4:
        flat = a.reshape(-1)
        flat[0], flat[-1], flat[1], flat[-2] = np.nan, np.inf, -0.0, -np.inf
    return a


def check(x, g, err: str) -> None:
    """Every printing function of ``x`` equals NumPy's of ``g``, on every rank."""
    pairs = [
        ("str", str(x), str(g)),
        ("repr", repr(x), repr(g) if g.ndim else repr(g[()])),
        ("array_repr", da.array_repr(x), np.array_repr(g)),
        ("array_str", da.array_str(x), np.array_str(g)),
        ("array2string", da.array2string(x, separator=", ", prefix="x = "), np.array2string(g, separator=", ",
                                                                                           prefix="x = ")),
        ("format", format(x, ""), format(g, "")),
    ]
    bad = [f"{name}:\n{got}\n!=\n{want}" for name, got, want in pairs if got != want]
    assert not agree(COMM, not bad), f"{err}: " + "\n".join(bad)


SHAPES = [(), (1,), (7,), (13,), (0,), (0, 3), (7, 13), (3, 4, 5), (2000,), (40, 37), (11, 12, 13), (3, 1, 1200)]
DTYPES = ["float64", "float32", "int64", "uint8", "bool", "complex128"]


@pytest.mark.parametrize("shape", SHAPES, ids=[str(s) for s in SHAPES])
def test_print_matches_numpy(shape):
    for dtype in DTYPES:
        g = values(shape, dtype, special=True)
        for layout, kw in layouts(shape).items():
            if "halo" in kw and len(shape) and shape[0] < 2:
                continue
            check(da.asarray(g, **kw), g, f"{shape} {dtype} {layout}")


OPTIONS = [
    dict(threshold=10), dict(threshold=10, edgeitems=1), dict(edgeitems=0, threshold=5), dict(precision=3),
    dict(linewidth=40), dict(suppress=True), dict(sign="+"), dict(floatmode="fixed", precision=2),
    dict(threshold=1, edgeitems=4), dict(legacy="1.25"), dict(formatter={"float": lambda v: f"<{v:.1f}>"}),
]


@pytest.mark.parametrize("options", OPTIONS, ids=[str(sorted(o)) for o in OPTIONS])
def test_print_options_apply(options):
    for shape in [(13,), (7, 13), (3, 4, 5), (200, 30)]:
        if shape == (200, 30) and options.get("edgeitems", 1) == 0:
            continue  # NumPy formats every element then (slowly): (13,) and (7, 13) show it
        for dtype in ["float64", "complex128"]:
            g = values(shape, dtype)
            for layout, kw in layouts(shape).items():
                x = da.asarray(g, **kw)
                with np.printoptions(**options):  # NumPy's options are darray's (darray.printoptions is NumPy's)
                    check(x, g, f"{options} {shape} {dtype} {layout}")
                with da.printoptions(**options):
                    everywhere(str(x) == str(g) and repr(x) == repr(g), f"darray.printoptions {options}")
    saved = da.get_printoptions()
    try:
        da.set_printoptions(threshold=20, edgeitems=2)
        g = values((50,), "float64")
        check(da.asarray(g), g, "set_printoptions")
    finally:
        da.set_printoptions(**saved)


def everywhere(ok: bool, err: str) -> None:
    """Fail on every rank when ``ok`` is false on any (so that no rank runs ahead into a collective)."""
    assert not agree(COMM, bool(ok)), err


def test_function_arguments():
    g = values((300, 20), "float64")
    for layout, kw in layouts(g.shape).items():
        x = da.asarray(g, **kw)
        for args in [dict(threshold=50, edgeitems=2), dict(max_line_width=60, precision=2),
                     dict(separator="|", suffix="!", prefix="  "), dict(threshold=10**9)]:
            everywhere(da.array2string(x, **args) == np.array2string(g, **args), f"{args} {layout}")
        everywhere(da.array_repr(x, 50, 2, True) == np.array_repr(g, 50, 2, True), layout)
        everywhere(da.array_str(x, 50, 2, True) == np.array_str(g, 50, 2, True), layout)
    assert da.array2string(np.arange(3)) == np.array2string(np.arange(3))  # anything NumPy takes
    assert da.array_repr(np.arange(3)) == np.array_repr(np.arange(3))


def test_zero_d_prints_as_numpy_scalars():
    for dtype in DTYPES:
        g = values((7, 13), dtype)
        for layout, kw in layouts(g.shape).items():
            x = da.asarray(g, **kw)
            total = x.sum()  # a distributed sum may round otherwise than NumPy's: print the value it has
            want = np.asarray(total.gather())[()]
            everywhere(type(want) is type(g.sum()) and str(total) == str(want) and repr(total) == repr(want),
                       f"{dtype} {layout}")
            m, want = (x[2, 3], g[2, 3]) if dtype == "complex128" else (x.max(), g.max())
            everywhere(str(m) == str(want) and repr(m) == repr(want), f"{dtype} {layout}")
    assert str(da.asarray(0.53)) == "0.53" and repr(da.asarray(0.53)) == "np.float64(0.53)"
    assert da.array_repr(da.asarray(0.53)) == "array(0.53)"


def test_printing_a_large_array_moves_only_its_corners():
    edge = np.get_printoptions()["edgeitems"]
    for shape, split in [((1000, 1000), 0), ((1000, 1000), 1), ((100, 100, 100), (0, 1) if P == 4 else 2),
                         ((10**6,), 0)]:
        kw = dict(split=split, grid=(2, 2)) if isinstance(split, tuple) else dict(split=split)
        x = da.arange(int(np.prod(shape)), dtype=da.float64).reshape(shape).redistribute(**kw)
        with da.tracing() as t:
            text = str(x)
        moved = sum(e["nbytes"] for e in t.events if e["kind"] == "comm")
        corner = (2 * edge + 1) ** len(shape) * 8
        everywhere(moved <= corner * P, f"{shape}: printing moved {moved} bytes, the corners are {corner}")
        want = str(np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape))
        assert not agree(COMM, text == want), f"{shape}:\n{text}\n!=\n{want}"


def test_layout_stays_available():
    """The text is NumPy's; the layout is in ``x.layout`` and ``darray.explain(x)``."""
    x = da.arange(20.0, split=0)
    assert "Layout" not in repr(x) and "split" not in str(x)
    assert x.layout.shape == (20,) and x.layout.dims == (P,)
    assert f"grid=({P},)" in str(da.explain(x)) and "shape=(20,)" in str(da.explain(x))
