"""NumPy's ndarray surface on DArray (darray._core.methods) against NumPy's own methods, on every rank count.

Two generated checks: every name of ``dir(numpy.ndarray)`` is provided by
DArray or listed in ``EXCLUDED`` with its reason (``object``'s defaults aside,
named below); and every method case runs on a DArray and on the NumPy
array gathered from it, over the layouts of ``tests/_cases.py`` (each split
axis, uneven blocks with an empty one, everything on the last rank,
replicated, a 2x2 grid at 4 ranks) and several dtypes. The table's cases loop
over the layouts inside (their ids are the table's, which tests/conftest.py
names); the other tests take one layout each.
"""

from __future__ import annotations

import copy
import inspect
import pickle

import numpy as np
import pytest

import darray as da
from darray import DArray
from darray._core.dispatch import register_method, register_target, unregistered
from darray._core.methods import ABOVE, DIRECT, EXCLUDED, METHODS
from darray.testing import agree, assert_equal, assert_raises_everywhere

from _cases import COMM, P, generator, layouts, values

pytestmark = pytest.mark.mpi

#: Names of dir(numpy.ndarray) whose ``object`` default is already NumPy's behaviour.
OBJECT_DEFAULTS = {
    "__class__": "the type", "__doc__": "the docstring", "__init_subclass__": "subclassing hook",
    "__subclasshook__": "ABC hook", "__getattribute__": "attribute access", "__setattr__": "attribute setting",
    "__delattr__": "attribute deletion", "__dir__": "dir()", "__new__": "DArray(...) itself refuses (see __init__)",
}


def method_layouts(shape) -> list:
    """Replicated; per axis cut evenly, unevenly (more than one rank) and all on the last rank; a 2x2 grid."""
    per_axis = [[f"split{ax}", *([f"uneven{ax}"] if P > 1 else []), f"last{ax}"] for ax in range(len(shape))]
    return layouts(shape, "replicated", *sum(per_axis, []), *(["grid2x2"] if len(shape) >= 2 else []))


def method_values(shape, dtype, seed=0) -> np.ndarray:
    """Small integers (-4..4, unsigned 0..4) keep products and float32 sums exact."""
    return values(shape, dtype, rng=generator(seed, sum(shape), dtype),
                  **(dict(low=-4, high=5) if np.dtype(dtype).kind in "iu" else {}))


def made(layout, dtype="float64", seed=0):
    """``(DArray, NumPy array)`` of ``layout``'s shape."""
    g = method_values(layout.shape, dtype, seed)
    return layout.array(g), g.copy()


def cases(shape, dtype, seed=0):
    """``(layout id, DArray, NumPy array)`` for every layout of ``method_layouts``."""
    g = method_values(shape, dtype, seed)
    return [(str(c), c.array(g), g.copy()) for c in method_layouts(shape)]


def same(got, want, err: str) -> None:
    """``got`` (from the DArray) equals ``want`` (from NumPy): arrays, scalars, tuples, Python values."""
    if isinstance(want, tuple) and not isinstance(got, DArray):
        assert isinstance(got, tuple) and len(got) == len(want), f"{err}: got {type(got).__name__}"
        for i, (g, w) in enumerate(zip(got, want)):
            same(g, w, f"{err}[{i}]")
        return
    if isinstance(want, (np.ndarray, np.generic)):
        assert isinstance(got, DArray), f"{err}: expected a DArray, got {type(got).__name__}"
        assert_equal(got, np.asarray(want), err_msg=err)
        return
    ok = type(got) is type(want) and (got == want or (got != got and want != want))
    assert not agree(COMM, bool(ok)), f"{err}: got {got!r}, expected {want!r}"


S2 = (7, 13)
S1 = (13,)
NUMERIC = ["float64", "float32", "int64", "complex128"]
REAL = ["float64", "float32", "int64", "int16"]
ALL = ["float64", "float32", "int64", "uint8", "bool", "complex128"]


def _sorted_search(a):
    b = a.ravel()
    b.sort()
    return b.searchsorted(b[3] if b.dtype.kind != "c" else 0)


def _in_place(f):
    def run(a):
        f(a)
        return a

    return run


#: (id, shape, dtypes, call on a DArray, call on the NumPy array or None for the same).
CASES = [
    ("choose", S2, ["int64", "uint8"], lambda a: (a % 3).choose([a, 2 * a, 7]), None),
    ("choose(clip)", S2, ["int64"], lambda a: a.choose([a, a + 1], mode="clip"), None),
    ("compress", S2, ALL, lambda a: a.compress([True, False, True, True], axis=0), None),
    ("compress(flat)", S2, ["float64"], lambda a: a.compress([1, 0, 1] * 5), None),
    ("reshape(13,7)", S2, ALL, lambda a: a.reshape(13, 7), None),
    ("reshape((7,-1))", S2, ALL, lambda a: a.reshape((-1, 7)), None),
    ("reshape(91)", S2, ["float64"], lambda a: a.reshape(91), None),
    ("reshape-F", S2, ["int64"], lambda a: a.reshape(13, 7, order="F"), None),
    ("ravel", S2, ALL, lambda a: a.ravel(), None),
    ("ravel-F", S2, ["float64"], lambda a: a.ravel("F"), None),
    ("flatten", S2, ALL, lambda a: a.flatten(), None),
    ("sum", S2, ALL, lambda a: a.sum(), None),
    ("sum(0)", S2, ALL, lambda a: a.sum(0), None),
    ("sum(1,keepdims)", S2, NUMERIC, lambda a: a.sum(axis=1, keepdims=True), None),
    ("sum(dtype)", S2, ["int64", "int16"], lambda a: a.sum(0, dtype=np.float64), None),
    ("sum(dtype)-bool", S2, ["bool"], lambda a: a.sum(0, dtype=np.float64), None),
    ("prod(1)", S2, NUMERIC, lambda a: a.prod(1), None),
    ("mean", S2, NUMERIC, lambda a: a.mean(), None),
    ("mean(0)", S2, NUMERIC, lambda a: a.mean(0), None),
    ("mean(1,dtype)", S2, ["float64", "int64"], lambda a: a.mean(1, dtype=np.float32), None),
    ("std(ddof)", S2, ["float64", "float32", "int64"], lambda a: a.std(ddof=1), None),
    ("var(0,ddof)", S2, ["float64", "float32", "int64"], lambda a: a.var(0, ddof=1), None),
    ("std(1)", S2, ["float64", "complex128"], lambda a: a.std(1), None),
    ("min(0)", S2, REAL + ["bool"], lambda a: a.min(0), None),
    ("max", S2, REAL + ["bool"], lambda a: a.max(), None),
    ("min(1,keepdims)", S2, REAL, lambda a: a.min(1, keepdims=True), None),
    ("all(0)", S2, ALL, lambda a: a.all(0), None),
    ("any", S2, ALL, lambda a: a.any(), None),
    ("any(1)", S2, ALL, lambda a: a.any(1), None),
    ("argmax", S2, REAL, lambda a: a.argmax(), None),
    ("argmax(0)", S2, REAL, lambda a: a.argmax(0), None),
    ("argmin(1,keepdims)", S2, REAL, lambda a: a.argmin(1, keepdims=True), None),
    ("argsort(0)", S2, REAL, lambda a: a.argsort(0, kind="stable"), None),
    ("argsort", S1, REAL, lambda a: a.argsort(kind="stable"), None),
    ("sort(in place)", S2, REAL + ["bool"], _in_place(lambda a: a.sort()), None),
    ("sort(0,in place)", S2, REAL, _in_place(lambda a: a.sort(0)), None),
    ("cumsum", S2, NUMERIC, lambda a: a.cumsum(), None),
    ("cumsum(1)", S2, NUMERIC, lambda a: a.cumsum(1), None),
    ("cumprod(0)", S2, ["float64", "int64"], lambda a: a.cumprod(0), None),
    ("clip", S2, ["float64", "float32", "int64"], lambda a: a.clip(-1, 1), None),
    ("clip(max=)", S2, ["float64"], lambda a: a.clip(max=0.5), None),
    ("round(2)", S2, ["float64", "float32", "complex128"], lambda a: a.round(2), None),
    ("round", S2, ["float64", "int64"], lambda a: a.round(), None),
    ("repeat(2,0)", S2, ALL, lambda a: a.repeat(2, axis=0), None),
    ("repeat(3)", S1, ALL, lambda a: a.repeat(3), None),
    ("tolist", S2, ALL, lambda a: a.tolist(), None),
    ("item(5)", S2, ALL, lambda a: a.item(5), None),
    ("item(-1)", S2, ALL, lambda a: a.item(-1), None),
    ("item(2,9)", S2, ALL, lambda a: a.item(2, 9), None),
    ("item((6,0))", S2, ALL, lambda a: a.item((6, 0)), None),
    ("item()", (1, 1), ALL, lambda a: a.item(), None),
    ("flat[40]", S2, ALL, lambda a: a.flat[40], None),
    ("flat[-1]", S2, ALL, lambda a: a.flat[-1], None),
    ("flat[3:50:4]", S2, ALL, lambda a: a.flat[3:50:4], None),
    ("len(flat)", S2, ["float64"], lambda a: len(a.flat), None),
    ("list(flat)", (3, 2), ["int64"], lambda a: [int(v) for v in a.flat], None),
    ("flat[40]=", S2, ALL, _in_place(lambda a: a.flat.__setitem__(40, 1)), None),
    ("flat[2:30:3]=", S2, NUMERIC, _in_place(lambda a: a.flat.__setitem__(slice(2, 30, 3), 7)), None),
    ("itemsize", S2, ALL, lambda a: a.itemsize, None),
    ("nbytes", S2, ALL, lambda a: a.nbytes, None),
    ("strides", S2, ALL, lambda a: a.strides, None),
    ("strides-3d", (3, 4, 5), ["float32"], lambda a: a.strides, None),
    ("diagonal", S2, ALL, lambda a: a.diagonal(), None),
    ("diagonal(2)", S2, NUMERIC, lambda a: a.diagonal(2), None),
    ("trace", S2, NUMERIC, lambda a: a.trace(), None),
    ("trace(-1)", S2, NUMERIC, lambda a: a.trace(-1), None),
    ("view(same itemsize)", S2, ["float64"], lambda a: a.view(np.int64), None),
    ("view(int32->float32)", S2, ["float32"], lambda a: a.view(np.int32), None),
    ("T", S2, ALL, lambda a: a.T, None),
    ("T-1d", S1, ALL, lambda a: a.T, None),
    ("T-3d", (3, 4, 5), ["int64"], lambda a: a.T, None),
    ("transpose()", S2, ALL, lambda a: a.transpose(), None),
    ("transpose(1,0)", S2, ALL, lambda a: a.transpose(1, 0), None),
    ("transpose((1,0))", S2, ALL, lambda a: a.transpose((1, 0)), None),
    ("transpose(2,0,1)", (3, 4, 5), ["float64"], lambda a: a.transpose(2, 0, 1), None),
    ("swapaxes", S2, ALL, lambda a: a.swapaxes(0, 1), None),
    ("squeeze", (7, 1, 13), ALL, lambda a: a.squeeze(), None),
    ("squeeze(1)", (7, 1, 13), ["float64"], lambda a: a.squeeze(1), None),
    ("nonzero", S2, ALL, lambda a: a.nonzero(), None),
    ("conj", S2, NUMERIC, lambda a: a.conj(), None),
    ("conjugate", S2, NUMERIC, lambda a: a.conjugate(), None),
    ("real", S2, NUMERIC + ["bool"], lambda a: a.real, None),
    ("imag", S2, NUMERIC + ["bool"], lambda a: a.imag, None),
    ("real=", S2, ["complex128", "float64"], _in_place(lambda a: setattr(a, "real", 2.0)), None),
    ("imag=", S2, ["complex128"], _in_place(lambda a: setattr(a, "imag", -1.0)), None),
    ("dot", S2, ["float64", "int64", "complex128"], lambda a: a.dot(a.T), None),
    ("dot-1d", S1, ["float64", "int64"], lambda a: a.dot(a), None),
    ("fill", S2, ALL, _in_place(lambda a: a.fill(1)), None),
    ("put", S2, NUMERIC, _in_place(lambda a: a.put([0, 50, -1, 50], [2, 3])), None),
    ("put-1d", S1, NUMERIC, _in_place(lambda a: a.put([0, 5, -1], [9])), None),
    ("put(wrap)", S1, ["int64"], _in_place(lambda a: a.put([13, 27], [1, 2], mode="wrap")), None),
    ("take", S2, ALL, lambda a: a.take([0, 3, 50, -1]), None),
    ("take(axis=1)", S2, ALL, lambda a: a.take([0, 2, 12], axis=1), None),
    ("take(wrap)", S2, ["float64", "int64"], lambda a: a.take([0, 95, -100], mode="wrap"), None),
    ("take(clip,axis=0)", S2, ["float64"], lambda a: a.take(np.array([[0, 9], [-3, 4]]), axis=0, mode="clip"), None),
    ("take(0-d)", S2, ["float64"], lambda a: a.take(5, axis=1), None),
    ("take(DArray)", S2, ["float64"], lambda a: a.take(a.astype(np.int64).ravel()[:5] % 7, axis=0, mode="clip"),
     lambda a: a.take(a.astype(np.int64).ravel()[:5] % 7, axis=0, mode="clip")),
    ("searchsorted", S2, REAL, _sorted_search, None),
    ("ptp(0)", S2, REAL, lambda a: a.ptp(0), lambda a: np.ptp(a, 0)),
    ("astype", S2, ["float64", "float32", "int64", "uint8", "bool"], lambda a: a.astype(np.float32), None),
    ("astype-complex", S2, ["complex128"], lambda a: a.astype(np.float32), None),
    ("astype(casting)", S2, ["int16", "float32"], lambda a: a.astype(np.float64, casting="safe"), None),
    ("copy", S2, ALL, lambda a: a.copy(), None),
    ("copy(F)", S2, ["float64"], lambda a: a.copy(order="F"), None),
    ("tobytes", S2, ALL, lambda a: a.tobytes(), None),
    ("__copy__", S2, ALL, lambda a: copy.copy(a), None),
    ("__deepcopy__", S2, ALL, lambda a: copy.deepcopy(a), None),
    ("__iter__", (4, 3), ALL, lambda a: tuple(a), None),
    ("__contains__", S2, ["int64", "float64"], lambda a: a[3, 4] in a, lambda a: a[3, 4] in a),
    ("__contains__-no", S2, ["int64"], lambda a: 99 in a, None),
    ("divmod", S2, ["int64", "float64"], lambda a: divmod(a, 3), None),
    ("rdivmod", S2, ["int64", "float64"], lambda a: divmod(7, a + 10), None),
    ("__format__", S2, ["float64", "int64"], lambda a: format(a.sum(), ".3f" if a.dtype.kind == "f" else "d"), None),
    ("format-nd", S2, ["float64"], lambda a: format(a, ""), None),
    ("__abs__", S2, NUMERIC, lambda a: abs(a), None),
    ("__len__", S2, ["float64"], lambda a: len(a), None),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_method_matches_numpy(case):
    name, shape, dtypes, call, numpy_call = case
    for dtype in dtypes:
        for layout, x, g in cases(shape, dtype):
            err = f"{name} {dtype} {layout}"
            want = (numpy_call or call)(g)
            got = call(x)
            same(got, want, err)


@pytest.mark.parametrize("layout", method_layouts(S2), ids=str)
def test_out_receives_the_result(layout):
    x, g = made(layout)
    for name, call in [
        ("sum(0,out=)", lambda a, o: a.sum(0, out=o)),
        ("sum(0,None,out)", lambda a, o: a.sum(0, None, o)),
        ("max(0,out)", lambda a, o: a.max(0, o)),
        ("mean(0,out=)", lambda a, o: a.mean(0, out=o)),
        ("std(0,out=)", lambda a, o: a.std(0, out=o, ddof=1)),
        ("argmax(0,out)", lambda a, o: a.argmax(0, o)),
        ("round(1,out)", lambda a, o: a.round(1, o)),
        ("clip(out=)", lambda a, o: a.clip(-1, 1, out=o)),
    ]:
        want = call(g, None)
        o = da.zeros(want.shape, dtype=want.dtype, split=None)
        got = call(x, o)
        assert got is o, f"{name}: out is not returned"
        same(o, want, f"{name}")
    o = da.zeros((7, 13), dtype="float32")
    x.cumsum(1, out=o)  # cast into out's dtype, like NumPy
    same(o, g.cumsum(1, out=np.zeros((7, 13), dtype="float32")), "cumsum out float32")
    assert_raises_everywhere(ValueError, x.sum, 0, out=da.zeros(3), match="out has the wrong shape")
    assert_raises_everywhere(TypeError, x.sum, 0, out=np.zeros(13), match="out must be a DArray")


@pytest.mark.parametrize("layout", method_layouts(S2), ids=str)
@pytest.mark.not_on("array_api_strict", reason="array-api-strict arrays have no views (x.view needs NumPy, CuPy or "
                                               "torch blocks)")
def test_views_share_the_blocks(layout):
    x, g = made(layout)
    v = x.view(np.int64)
    v[...] = 0
    same(x, np.zeros(S2), "view writes through")
    x.view()[2] = 1.5
    g = np.zeros(S2)
    g[2] = 1.5
    same(x, g, "view() writes through")


@pytest.mark.parametrize("layout", method_layouts(S2), ids=str)
def test_copies_are_independent(layout):
    x, g = made(layout)
    for make in (copy.copy, copy.deepcopy, lambda a: a.copy(), lambda a: a.flatten()):
        c = make(x)
        c[...] = 0
        same(x, g, "a copy wrote into its source")
    first, second = copy.deepcopy([x, x])
    assert first is second and first is not x, "deepcopy keeps one copy per array"


def test_signatures_are_numpys():
    for name in [*(m for m in METHODS if m != "ptp"), "sum", "mean", "std", "var", "max", "min", "all", "any", "prod"]:
        numpy_params = [p for p in inspect.signature(getattr(np.ndarray, name)).parameters.values()
                        if p.kind != p.VAR_KEYWORD]
        ours = list(inspect.signature(getattr(DArray, name)).parameters.values())
        assert [p.name for p in ours[:len(numpy_params)]] == [p.name for p in numpy_params], \
            f"{name}: {ours} vs NumPy's {numpy_params}"
        assert [p.default for p in ours[1:len(numpy_params)]] == [p.default for p in numpy_params[1:]], name


#: Dunders NumPy users reach on NumPy scalars (what a 0-d DArray stands for) beyond dir(numpy.ndarray).
SCALAR_DUNDERS = {"__round__"}
NDARRAY_NAMES = sorted((set(dir(np.ndarray)) | SCALAR_DUNDERS) - set(OBJECT_DEFAULTS))


def _provided(name: str) -> bool:
    return any(name in vars(c) for c in DArray.__mro__ if c is not object)


@pytest.mark.parametrize("name", NDARRAY_NAMES)
def test_every_ndarray_name_is_provided_or_excluded(name):
    assert _provided(name) or name in EXCLUDED, f"numpy.ndarray.{name}: neither on DArray nor in EXCLUDED"
    if name in EXCLUDED:
        assert len(EXCLUDED[name].reason) > 20, f"{name}: EXCLUDED needs a reason"


#: Methods whose NumPy function darray does not implement yet: they raise NumPy's TypeError ("no
#: implementation found") until someone registers it (then add a case to CASES).
WAITING: set[str] = set()


def test_every_method_has_a_case():
    tested = {c[0].split("(")[0].split("-")[0].split("[")[0] for c in CASES} | {"partition", "argpartition"}
    untested = set(METHODS) - tested - WAITING
    assert not untested, f"methods without a case against NumPy: {sorted(untested)}"
    x = da.arange(6.0)
    for name in sorted(WAITING):
        assert_raises_everywhere(TypeError, getattr(x, name), [0, 1], match=name)


@pytest.mark.parametrize("layout", method_layouts(S2), ids=str)
def test_partition_methods(layout):
    """``partition`` (in place) and ``argpartition``: NumPy's at ``kth``, and the partition property around it."""
    for dtype in ["float64", "int64"]:
        x, g = made(layout, dtype)
        want = np.sort(g, axis=1)
        for kth, axis in [(3, 1), (-1, 1), (2, 0)]:
            y = x.copy()
            y.partition(kth, axis=axis)
            idx = x.argpartition(kth, axis=axis)
            picked = da.take_along_axis(x, idx, axis=axis)
            srt = np.sort(g, axis=axis)
            for got, what in ((y, "partition"), (picked, "argpartition")):
                err = f"{what} kth={kth} axis={axis} {dtype}"
                k = kth % g.shape[axis]
                at = (slice(None), k) if axis == 1 else (k, slice(None))
                same(got[at], srt[at], err)
                pivot = got[(slice(None), slice(k, k + 1)) if axis == 1 else (slice(k, k + 1), slice(None))]
                before = got[(slice(None), slice(0, k)) if axis == 1 else (slice(0, k), slice(None))]
                after = got[(slice(None), slice(k, None)) if axis == 1 else (slice(k, None), slice(None))]
                ok = bool((before <= pivot).all()) and bool((after >= pivot).all())
                assert ok, f"{err}: not partitioned"
                same(da.sort(got, axis=axis), srt, f"{err}: not a permutation")
        assert want.shape == g.shape


@pytest.mark.parametrize("layout", method_layouts(S2), ids=str)
def test_round_of_zero_d(layout):
    x, g = made(layout)
    assert round(x.max()) == round(g.max()) and type(round(x.max())) is int
    same(round(x.max(), 2), np.round(g.max(), 2), "round(0-d, 2)")


def test_the_layer_above_registered_everything():
    """Every row marked ABOVE and every target came down from _api (darray._api.methods) when darray was imported."""
    assert unregistered() == []
    above = sorted(name for name, row in METHODS.items() if row.target is ABOVE)
    assert above and all(inspect.signature(getattr(DArray, name)) == inspect.signature(getattr(np.ndarray, name))
                         for name in above if name != "ptp")
    with pytest.raises(ValueError, match="register_method"):
        register_method("cumsum", np.cumsum, "numpy.cumsum")  # _core's own row: nothing to hand down
    with pytest.raises(ValueError, match="register_target"):
        register_target("sum", np.sum)


def test_tables_name_real_methods():
    for name in [*METHODS, *EXCLUDED]:
        assert name in dir(np.ndarray) or name == "ptp", f"{name} is no ndarray name"
    assert not set(METHODS) & set(EXCLUDED) and not set(METHODS) & set(DIRECT)


@pytest.mark.parametrize("name", sorted(EXCLUDED))
def test_excluded_names_say_why(name):
    x = da.arange(6.0)
    entry = EXCLUDED[name]
    if entry.kind == "protocol":
        assert not hasattr(x, name), f"{name} must stay undefined (NumPy probes for it)"
    elif entry.kind == "attribute":
        assert_raises_everywhere(AttributeError, getattr, x, name, match=entry.reason[:30])
        assert not hasattr(x, name)
    else:
        assert_raises_everywhere(TypeError, getattr(x, name), match=entry.reason[:30])


@pytest.mark.parametrize("layout", method_layouts(S2), ids=str)
def test_what_darray_refuses_says_why(layout):
    """NumPy takes these; a DArray refuses them with one message on every rank."""
    x, g = made(layout)
    assert_raises_everywhere(TypeError, x.view, np.ndarray, match="subclass")

    class Sub(da.ndarray):  # (NumPy's subclass pattern, written against ``import darray as np``)
        pass

    assert_raises_everywhere(TypeError, x.view, Sub, match="subclass of DArray")


@pytest.mark.parametrize("layout", method_layouts(S2), ids=str)
@pytest.mark.not_on("array_api_strict", reason="array-api-strict arrays have no views (x.view needs NumPy, CuPy or "
                                               "torch blocks)")
def test_view_with_another_itemsize(layout):
    """NumPy's view as a dtype of another itemsize changes the last axis: done block by block (a cut last axis
    too: each block's part of it grows or shrinks; a halo there is refused)."""
    x, g = made(layout)
    if x.layout.halo[-1]:
        assert_raises_everywhere(ValueError, x.view, np.float32, match="halo")
    else:
        same(x.view(np.float32), g.view(np.float32), "view float32")
        same(x.view(np.float32).view(np.float64), g, "view float32 and back")
        same(x.view(np.uint8), g.view(np.uint8), "view uint8")


@pytest.mark.parametrize("layout", method_layouts(S2), ids=str)
def test_view_itemsize_not_dividing(layout):
    x, g = made(layout)
    with pytest.raises(ValueError):
        g.view(np.complex128)
    assert_raises_everywhere(ValueError, x.view, np.complex128, match="divide")


def test_pickle_says_why():
    x = da.arange(6.0)
    assert_raises_everywhere(TypeError, pickle.dumps, x, match="darray.io.save")


def test_truth_value_of_one_cell():
    """Every layout of one-cell arrays (cheap: looped here, named in the message)."""
    for name, x, g in cases((1, 1), "float64") + cases((1,), "int64"):
        assert bool(x) == bool(g), name
        for convert in (int, float, complex):  # NumPy 2.4: only 0-d arrays convert
            assert_raises_everywhere(TypeError, convert, x, match="0-dimensional")


@pytest.mark.parametrize("layout", method_layouts(S2), ids=str)
def test_truth_value_and_conversions(layout):
    x, g = made(layout)
    msg = assert_raises_everywhere(ValueError, bool, x)
    assert msg.startswith("The truth value of an array with more than one element is ambiguous. "
                          "Use a.any() or a.all()")
    assert float(x.sum()) == pytest.approx(float(g.sum()))
    assert int(x.astype(np.int64).max()) == int(g.astype(np.int64).max())
    assert complex(x.mean()) == pytest.approx(complex(g.mean()))
    assert round(x.max()) == round(g.max()) and type(round(x.max())) is int
    assert_raises_everywhere(ValueError, bool, x[:0], match="empty")
    assert_raises_everywhere(TypeError, len, x.sum(), match="len()")
    assert_raises_everywhere(TypeError, iter, x.sum())
    assert_raises_everywhere(TypeError, round, x, match="__round__")
    assert_raises_everywhere(TypeError, format, x, ".2f", match="__format__")
    i = da.asarray(3)
    assert [10, 20, 30, 40][i] == 40 and operator_index(i) == 3
    assert_raises_everywhere(TypeError, operator_index, da.asarray([3]), match="scalar index")
    assert_raises_everywhere(TypeError, operator_index, da.asarray(3.0), match="scalar index")


def operator_index(v):
    import operator

    return operator.index(v)


BAD = [
    ("item() of many", lambda x: x.item(), ValueError, "size 1"),
    ("item out of range", lambda x: x.item(91), IndexError, "out of bounds"),
    ("item axis out of range", lambda x: x.item(1, 13), IndexError, "axis 1"),
    ("item wrong count", lambda x: x.item(1, 2, 3), ValueError, "incorrect number of indices"),
    ("flat out of range", lambda x: x.flat[-92], IndexError, "out of bounds"),
    ("fill sequence", lambda x: x.fill([1, 2]), ValueError, "sequence"),
    ("put out of range", lambda x: x.put([91], [1.0]), IndexError, "out of bounds"),
    ("take out of range", lambda x: x.take([91]), IndexError, "out of bounds"),
    ("take mode", lambda x: x.take([1], mode="nearest"), ValueError, "mode"),
    ("put mode", lambda x: x.put([1], [1.0], mode="nearest"), ValueError, "mode"),
    ("reshape order", lambda x: x.reshape(91, order="K"), ValueError, "order"),
    ("astype casting", lambda x: x.astype(np.int32, casting="safe"), TypeError, "casting='safe'"),
    ("del", lambda x: x.__delitem__(0), ValueError, "cannot delete"),
    ("imag= of real", lambda x: setattr(x, "imag", 1.0), TypeError, "imaginary part"),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_input_raises_everywhere(case):
    _, call, exc, match = case
    for _layout, x, g in cases(S2, "float64"):
        with pytest.raises(exc):
            call(g)  # NumPy raises the same type
        assert_raises_everywhere(exc, call, x, match=match)


def test_hot_methods_are_direct():
    """The hot methods call their engines: no NumPy dispatch (``__array_function__``) on the way."""
    x = da.arange(12.0).reshape(3, 4)
    seen = []
    import darray._core.protocols as protocols

    real = protocols.array_function

    def spy(*args, **kwargs):
        seen.append(args[1])
        return real(*args, **kwargs)

    protocols.array_function = spy
    try:
        x.reshape(4, 3), x.sum(0), x.mean(), x.max(1), x.min(), x.astype(np.float32), x.copy()
    finally:
        protocols.array_function = real
    assert not seen, f"hot methods went through __array_function__: {seen}"
