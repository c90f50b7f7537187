"""Linear algebra (matmul, tensordot, vecdot, matrix_transpose and the linalg extension) against NumPy.

Inputs are global NumPy arrays generated identically on every rank (seeded);
each check lays them out in several ways (row / column cuts, uneven blocks
with an empty block, replicated, 2x2 grids at 4 ranks) and compares with
NumPy on the global inputs through :func:`darray.testing.assert_equal`, which
agrees on the verdict across ranks. Error checks expect the same exception on
every rank (a rank that raised nothing would leave the others waiting).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import darray as da
from darray._api import linalg as la
from darray._api import linear_algebra as lin
from darray.testing import assert_equal, assert_raises_everywhere, uneven_sizes as uneven

from _cases import P, Case, layouts

pytestmark = pytest.mark.mpi

matmul, tensordot, vecdot, matrix_transpose = lin.matmul, lin.tensordot, lin.vecdot, lin.matrix_transpose


def rand(shape, dtype="float64", seed=0) -> np.ndarray:
    rng = np.random.default_rng([seed, len(shape), *shape])
    dt = np.dtype(dtype)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    if dt.kind in "iu":
        return rng.integers(-5, 6, size=shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def specs(shape) -> list[Case]:
    """Layouts (tests/_cases.py) of an array of ``shape``: replicated, a cut of every axis, uneven cuts of the last
    two axes and, at 4 ranks, 2x2 grids of the last two axes (either order, or replicated along one)."""
    n = len(shape)
    grids = ["grid2x2" if (n - 2, n - 1) == (0, 1) else f"grid2x2-{n - 2}{n - 1}", f"grid2x2-{n - 1}{n - 2}",
             f"grid2x2-{n - 2}n"] if n >= 2 else []
    return layouts(shape, "replicated", *(f"split{a}" for a in range(n)), f"uneven{n - 1}",
                   *([f"uneven{n - 2}"] if n >= 2 else []), *grids)


def put(array, spec) -> da.DArray:
    """``array`` laid out like ``spec``: a case of tests/_cases.py or ``asarray`` keywords."""
    return spec.array(array) if isinstance(spec, Case) else da.asarray(array, **spec)


# ------------------------------------------------------------------ matmul
@pytest.mark.parametrize("sa", specs((13, 7)), ids=str)
def test_matmul_2d_every_layout_pair(sa):
    """The left operand's layout is the test's; the right one's is looped over (named in the message)."""
    a, b = rand((13, 7)), rand((7, 5), seed=1)
    for sb in specs(b.shape):
        assert_equal(matmul(put(a, sa), put(b, sb)), a @ b, rtol=1e-10, atol=1e-12, err_msg=f"{sa} @ {sb}")


@pytest.mark.parametrize("sa", specs((13, 7)), ids=str)
def test_matmul_fallback_paths(monkeypatch, sa):
    """With no operand 'small', the cheaper move (row cut / column cut / contraction) is taken."""
    monkeypatch.setattr(lin, "SMALL_OPERAND", 0)
    a, b = rand((13, 7)), rand((7, 5), seed=1)
    for sb in specs(b.shape):
        assert_equal(matmul(put(a, sa), put(b, sb)), a @ b, rtol=1e-10, atol=1e-12, err_msg=f"{sa} @ {sb}")
    # a big result from a contraction-cut pair: replicated partials, then a local cut
    x, y = rand((40, 3)), rand((3, 50), seed=2)
    assert_equal(matmul(put(x, dict(split=1)), put(y, dict(split=0))), x @ y, rtol=1e-10, atol=1e-12)


def test_matmul_vectors():
    v, m, w = rand((7,)), rand((7, 5), seed=1), rand((7,), seed=2)
    mt = m.T.copy()
    for sv, sm in itertools.product(specs(v.shape), specs(m.shape)):
        assert_equal(matmul(put(v, sv), put(m, sm)), v @ m, rtol=1e-10, atol=1e-12, err_msg=f"1-d {sv} @ {sm}")
    for sv, sm in itertools.product(specs(v.shape), specs(mt.shape)):
        assert_equal(matmul(put(mt, sm), put(v, sv)), mt @ v, rtol=1e-10, atol=1e-12, err_msg=f"{sm} @ 1-d {sv}")
    for sv, sw in itertools.product(specs(v.shape), specs(w.shape)):
        assert_equal(matmul(put(v, sv), put(w, sw)), np.asarray(v @ w), rtol=1e-10, err_msg=f"dot {sv} {sw}")


def test_matmul_batched_broadcasting():
    a, b = rand((3, 5, 4)), rand((4, 2), seed=1)
    bt, at = b.T.copy(), np.swapaxes(a, 1, 2).copy()
    for sa, sb in itertools.product(specs(a.shape), specs(b.shape)):
        assert_equal(matmul(put(a, sa), put(b, sb)), a @ b, rtol=1e-10, atol=1e-12, err_msg=f"{sa} @ {sb}")
    for sa, sb in itertools.product(specs(at.shape), specs(bt.shape)):
        assert_equal(matmul(put(bt, sb), put(at, sa)), bt @ at, rtol=1e-10, atol=1e-12, err_msg=f"{sb} @ {sa}")
    x, y = rand((2, 1, 5, 4)), rand((3, 4, 6), seed=3)
    for sx, sy in itertools.product(specs(x.shape)[:4], specs(y.shape)):
        assert_equal(matmul(put(x, sx), put(y, sy)), x @ y, rtol=1e-10, atol=1e-12, err_msg=f"{sx} @ {sy}")


def test_matmul_summa_on_2x2_grid(monkeypatch):
    p = P
    a, b = rand((13, 9)), rand((9, 11), seed=1)
    monkeypatch.setattr(lin, "SMALL_OPERAND", 0)
    if p != 4:
        assert_equal(matmul(put(a, dict(split=0)), put(b, dict(split=1))), a @ b, rtol=1e-10, atol=1e-12)
        return
    grid = dict(split=(0, 1), grid=(2, 2))
    cases = [(grid, grid), (grid, dict(split=0)), (dict(split=None), grid),
             (dict(split=(0, 1), grid=(2, 2), sizes={0: [13, 0], 1: [2, 7]}),
              dict(split=(0, 1), grid=(2, 2), sizes={0: [5, 4], 1: [0, 11]}))]
    for sa, sb in cases:
        c = matmul(put(a, sa), put(b, sb))
        assert_equal(c, a @ b, rtol=1e-10, atol=1e-12, err_msg=f"{sa} @ {sb}")
    c = matmul(put(a, grid), put(b, grid))
    assert c.layout.split == (0, 1) and c.layout.dims == (2, 2)  # SUMMA keeps the 2-d cut


def test_matmul_dtypes():
    a, b = rand((6, 4), "int32"), rand((4, 3), "float32", seed=1)
    for sa, sb in [(dict(split=0), dict(split=None)), (dict(split=1), dict(split=0))]:
        out = matmul(put(a, sa), put(b, sb))
        assert_equal(out, a @ b, rtol=1e-5)
    c, d = rand((5, 4), "complex128"), rand((4, 3), "complex128", seed=1)
    assert_equal(matmul(put(c, dict(split=1)), put(d, dict(split=0))), c @ d, rtol=1e-10, atol=1e-12)
    i, j = rand((5, 4), "int64"), rand((4, 3), "int64", seed=1)
    assert_equal(matmul(put(i, dict(split=0)), put(j, dict(split=1))), i @ j)


def test_matmul_with_numpy_operand():
    a, b = rand((8, 6)), rand((6, 3), seed=1)
    assert_equal(matmul(put(a, dict(split=0)), b), a @ b, rtol=1e-10, atol=1e-12)
    assert_equal(matmul(a, put(b, dict(split=1))), a @ b, rtol=1e-10, atol=1e-12)


def test_matmul_bad_input():
    a = put(rand((13, 7)), dict(split=0))
    assert_raises_everywhere(ValueError, matmul, a, put(rand((6, 5)), dict(split=0)))
    assert_raises_everywhere(ValueError, matmul, a, put(rand((5,)), dict(split=0)))
    assert_raises_everywhere(ValueError, matmul, put(rand((2, 3, 4)), dict(split=0)), put(rand((3, 4, 2)), dict(split=0)))
    assert_raises_everywhere(ValueError, matmul, a, da.asarray(np.float64(1.0)))
    assert_raises_everywhere(TypeError, matmul, put(np.ones((3, 3), bool), dict(split=0)), put(np.ones((3, 3), bool),
                                                                                        dict(split=0)))
    assert_raises_everywhere(TypeError, matmul, 1.0, 2.0)


# ------------------------------------------------------------------ transpose, tensordot, vecdot
def test_matrix_transpose():
    x = rand((3, 5, 4))
    for s in specs(x.shape):
        assert_equal(matrix_transpose(put(x, s)), np.swapaxes(x, -1, -2))
    assert_raises_everywhere(ValueError, matrix_transpose, put(rand((5,)), dict(split=0)))


def test_tensordot():
    a, b = rand((3, 4, 5)), rand((4, 5, 2), seed=1)
    for sa, sb in itertools.product(specs(a.shape)[:4], specs(b.shape)[:4]):
        A, B = put(a, sa), put(b, sb)
        assert_equal(tensordot(A, B, axes=2), np.tensordot(a, b, axes=2), rtol=1e-10, atol=1e-12)
        assert_equal(tensordot(A, B, axes=([1], [0])), np.tensordot(a, b, axes=([1], [0])), rtol=1e-10,
                     atol=1e-12)
        assert_equal(tensordot(A, B, axes=([2, 1], [1, 0])), np.tensordot(a, b, axes=([2, 1], [1, 0])),
                     rtol=1e-10, atol=1e-12)
    c = rand((3,), seed=2)
    assert_equal(tensordot(put(c, dict(split=0)), put(c, dict(split=None)), axes=0), np.tensordot(c, c, axes=0))
    assert_raises_everywhere(ValueError, tensordot, put(a, dict(split=0)), put(b, dict(split=0)), axes=([0], [0]))
    assert_raises_everywhere(ValueError, tensordot, put(a, dict(split=0)), put(b, dict(split=0)), axes=4)


def test_vecdot_real_and_complex():
    x, y = rand((6, 5)), rand((6, 5), seed=1)
    for sx, sy in itertools.product(specs(x.shape), specs(y.shape)[:4]):
        X, Y = put(x, sx), put(y, sy)
        assert_equal(vecdot(X, Y), np.sum(x * y, axis=-1), rtol=1e-10, atol=1e-12)
        assert_equal(vecdot(X, Y, axis=0), np.sum(x * y, axis=0), rtol=1e-10, atol=1e-12)
    c, d = rand((4, 7), "complex128"), rand((7,), "complex128", seed=1)
    for sc, sd in itertools.product(specs(c.shape), specs(d.shape)):
        assert_equal(vecdot(put(c, sc), put(d, sd)), np.vecdot(c, d), rtol=1e-10, atol=1e-12)
    assert_raises_everywhere(ValueError, vecdot, put(x, dict(split=0)), put(rand((6, 4)), dict(split=0)))


# ------------------------------------------------------------------ linalg: elementwise-based
def test_outer_and_cross():
    u, v = rand((7,)), rand((5,), seed=1)
    for su, sv in itertools.product(specs(u.shape), specs(v.shape)):
        assert_equal(la.outer(put(u, su), put(v, sv)), np.outer(u, v), err_msg=f"outer {su} {sv}")
    assert_raises_everywhere(ValueError, la.outer, put(rand((2, 2)), dict(split=0)), put(v, dict(split=0)))
    x, y = rand((6, 3)), rand((6, 3), seed=1)
    for sx, sy in itertools.product(specs(x.shape), specs(y.shape)[:3]):
        assert_equal(la.cross(put(x, sx), put(y, sy)), np.cross(x, y), rtol=1e-10, atol=1e-12,
                     err_msg=f"cross {sx} {sy}")
    xt, yt = x.T.copy(), rand((3, 1), seed=2)
    for s in specs(xt.shape):
        assert_equal(la.cross(put(xt, s), put(yt, dict(split=None)), axis=0), np.cross(xt, yt, axis=0),
                     rtol=1e-10, atol=1e-12, err_msg=f"cross axis=0 {s}")
    assert_raises_everywhere(ValueError, la.cross, put(rand((4, 4)), dict(split=0)), put(rand((4, 4)), dict(split=0)))


def test_diagonal_and_trace():
    for shape in [(7, 5), (5, 8), (3, 6, 6)]:
        x = rand(shape)
        for s, k in itertools.product(specs(shape), [0, 1, -2, 4, -9]):
            X = put(x, s)
            assert_equal(la.diagonal(X, offset=k), np.diagonal(x, offset=k, axis1=-2, axis2=-1).copy(),
                         err_msg=f"diagonal {shape} {s} k={k}")
            assert_equal(la.trace(X, offset=k), np.trace(x, offset=k, axis1=-2, axis2=-1), rtol=1e-10, atol=1e-12,
                         err_msg=f"trace {shape} {s} k={k}")
    i = rand((6, 6), "int32")
    assert_equal(la.trace(put(i, dict(split=0))), np.trace(i))


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_vector_norm():
    x = rand((7, 6))
    x[2, 3] = 0.0
    for s in specs(x.shape):
        X = put(x, s)
        for ord_, axis, keepdims in itertools.product([2, 1, np.inf, -np.inf, 0, 3, -1.5], [None, 0, 1, (0, 1)],
                                                       [False, True]):
            assert_equal(la.vector_norm(X, axis=axis, keepdims=keepdims, ord=ord_),
                         np.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord_), rtol=1e-10,
                         err_msg=f"{s} ord={ord_} axis={axis} keepdims={keepdims}")
    c = rand((5,), "complex128")
    assert_equal(la.vector_norm(put(c, dict(split=0))), np.linalg.vector_norm(c), rtol=1e-10)
    i = rand((5,), "int64")
    assert_equal(la.vector_norm(put(i, dict(split=0)), ord=1), np.linalg.vector_norm(i, ord=1))


def test_matrix_norm():
    for shape in [(7, 5), (2, 6, 4), (40, 3)]:
        x = rand(shape)
        for s in specs(shape)[:5]:
            X = put(x, s)
            for ord_, keepdims in itertools.product(["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf], [False, True]):
                assert_equal(la.matrix_norm(X, ord=ord_, keepdims=keepdims),
                             np.linalg.matrix_norm(x, ord=ord_, keepdims=keepdims), rtol=1e-10,
                             err_msg=f"{shape} {s} ord={ord_} keepdims={keepdims}")
    assert_raises_everywhere(ValueError, la.matrix_norm, put(rand((3, 3)), dict(split=0)), ord=3)


# ------------------------------------------------------------------ TSQR, SVD
def test_tsqr_tall_skinny(monkeypatch):
    p = P
    monkeypatch.setattr(la, "GATHER_LIMIT", 4 * 4 * p)  # the stacked R factors fit; the matrix would not
    a = rand((37, 4))
    for s in [dict(split=0), dict(split=0, sizes={0: uneven(37, p)}), dict(split=1), dict(split=None)]:
        A = put(a, s)
        q, r = la.qr(A)
        assert q.shape == (37, 4) and r.shape == (4, 4)
        cut = [ax for ax, g in enumerate(q.layout.axis_dim) if g is not None]
        assert cut == ([0] if p > 1 and s["split"] is not None else []), f"Q must be cut along rows; got {q.layout}"
        assert r.layout.is_replicated
        assert_equal(matmul(matrix_transpose(q), q), np.eye(4), atol=1e-12, err_msg=f"Q^T Q {s}")
        assert_equal(matmul(q, r), a, rtol=1e-10, atol=1e-12, err_msg=f"Q R {s}")
        assert_equal(da.abs(r), np.abs(np.linalg.qr(a)[1]), rtol=1e-10, atol=1e-12, err_msg=f"|R| {s}")
        if s.get("sizes") is not None:
            assert q.layout.sizes[0] == tuple(uneven(37, p))  # Q keeps the input's row blocks


def test_tsqr_svd_and_svdvals(monkeypatch):
    monkeypatch.setattr(la, "GATHER_LIMIT", 4 * 4 * P)  # TSQR only: gathering would be refused
    a = rand((37, 4))
    want = np.linalg.svd(a, compute_uv=False)
    for s in specs(a.shape)[:4]:
        A = put(a, s)
        u, sv, vh = la.svd(A, full_matrices=False)
        assert_equal(sv, want, rtol=1e-10)
        assert_equal(matmul(u * sv, vh), a, rtol=1e-10, atol=1e-12, err_msg=f"U S Vh {s}")
        assert_equal(matmul(matrix_transpose(u), u), np.eye(4), atol=1e-12)
        assert_equal(la.svdvals(A), want, rtol=1e-10)
        w = put(a.T.copy(), dict(split=s.kw["split"] and 0 if s.kw["split"] is not None else None))
        assert_equal(la.svdvals(w), want, rtol=1e-10, err_msg="wide svdvals")
        u2, s2, vh2 = la.svd(w, full_matrices=False)
        assert_equal(matmul(u2 * s2, vh2), a.T, rtol=1e-10, atol=1e-12, err_msg="wide svd")


# ------------------------------------------------------------------ gathered factorizations
def spd(n, seed=0, batch=()):
    m = rand((*batch, n, n), seed=seed)
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def test_gathered_factorizations():
    a = spd(6)
    g = rand((6, 6), seed=3)
    b = rand((6, 2), seed=4)
    for s in specs(a.shape):
        A, G = put(a, s), put(g, s)
        L = la.cholesky(A)
        assert L.layout.split == A.layout.split
        assert_equal(L, np.linalg.cholesky(a), rtol=1e-10, err_msg=f"cholesky {s}")
        assert_equal(la.cholesky(A, upper=True), np.linalg.cholesky(a, upper=True), rtol=1e-10)
        assert_equal(la.det(G), np.asarray(np.linalg.det(g)), rtol=1e-10)
        sign, logabs = la.slogdet(G)
        ws, wl = np.linalg.slogdet(g)
        assert_equal(sign, np.asarray(ws))
        assert_equal(logabs, np.asarray(wl), rtol=1e-10)
        w, v = la.eigh(A)
        nw, nv = np.linalg.eigh(a)
        assert_equal(w, nw, rtol=1e-10)
        # eigenvectors are unique up to sign (LAPACK drivers differ: NumPy's, torch's): first row >= 0
        assert_equal(v * da.sign(v[:1, :]), nv * np.sign(nv[:1, :]), rtol=1e-10, atol=1e-12)
        assert_equal(la.eigvalsh(A), nw, rtol=1e-10)
        assert_equal(la.inv(G), np.linalg.inv(g), rtol=1e-10, err_msg=f"inv {s}")
        assert_equal(la.pinv(G), np.linalg.pinv(g), rtol=1e-8, atol=1e-12)
        assert_equal(la.matrix_rank(G), np.asarray(np.linalg.matrix_rank(g)))
        assert_equal(la.solve(G, put(b, dict(split=0))), np.linalg.solve(g, b), rtol=1e-10, err_msg=f"solve {s}")
        assert_equal(la.solve(G, put(b[:, 0].copy(), dict(split=None))), np.linalg.solve(g, b[:, 0]), rtol=1e-10)
        for n in [0, 1, 2, 5, -1, -2]:
            assert_equal(la.matrix_power(G, n), np.linalg.matrix_power(g, n), rtol=1e-9, atol=1e-12,
                         err_msg=f"matrix_power {s} n={n}")
        q, r = la.qr(G, mode="complete")
        nq, nr = np.linalg.qr(g, mode="complete")
        assert_equal(q, nq, rtol=1e-10, atol=1e-12)
        assert_equal(r, nr, rtol=1e-10, atol=1e-12)
        u, sv, vh = la.svd(G)
        nu, ns, nvh = np.linalg.svd(g)
        # singular vector pairs are unique up to sign (cuSOLVER and LAPACK choose differently): u's first row >= 0
        flip, nflip = da.sign(u[:1, :]), np.sign(nu[:1, :])
        assert_equal(u * flip, nu * nflip, rtol=1e-10, atol=1e-12)
        assert_equal(sv, ns, rtol=1e-10)
        assert_equal(vh * da.matrix_transpose(flip), nvh * nflip.T, rtol=1e-10, atol=1e-12)
    h = rand((3, 4), seed=5)
    assert_equal(la.pinv(put(h, dict(split=0))), np.linalg.pinv(h), rtol=1e-8, atol=1e-12)
    assert_equal(la.qr(put(h, dict(split=1)))[0], np.linalg.qr(h)[0], rtol=1e-10, atol=1e-12)


def test_gathered_batched():
    a = spd(4, batch=(3,))
    g = rand((3, 4, 4), seed=1)
    for s in specs(a.shape)[:4]:
        A, G = put(a, s), put(g, s)
        assert_equal(la.cholesky(A), np.linalg.cholesky(a), rtol=1e-10)
        assert_equal(la.det(G), np.linalg.det(g), rtol=1e-10)
        assert_equal(la.inv(G), np.linalg.inv(g), rtol=1e-10)
        assert_equal(la.eigvalsh(A), np.linalg.eigvalsh(a), rtol=1e-10)
        assert_equal(la.svdvals(G), np.linalg.svdvals(g), rtol=1e-10)
        assert_equal(la.matrix_power(G, 3), np.linalg.matrix_power(g, 3), rtol=1e-9, atol=1e-12)
        assert_equal(la.solve(G, put(rand((3, 4, 2), seed=2), s)), np.linalg.solve(g, rand((3, 4, 2), seed=2)),
                     rtol=1e-9)


def test_linalg_bad_input(monkeypatch):
    ns = put(rand((4, 3)), dict(split=0))
    for f in (la.inv, la.det, la.cholesky, la.eigh, la.eigvalsh, la.slogdet):
        assert_raises_everywhere(np.linalg.LinAlgError, f, ns)
    assert_raises_everywhere(np.linalg.LinAlgError, la.inv, put(rand((5,)), dict(split=0)))
    assert_raises_everywhere(ValueError, la.solve, put(rand((4, 4)), dict(split=0)), put(rand((3,)), dict(split=0)))
    assert_raises_everywhere(ValueError, la.qr, put(rand((4, 4)), dict(split=0)), mode="r")
    assert_raises_everywhere(TypeError, la.inv, object())  # (NumPy arrays are taken, as np.linalg takes them)
    # above the gather limit: refused on every rank, naming the limit
    monkeypatch.setattr(la, "GATHER_LIMIT", 10)
    big = put(spd(4), dict(split=0))
    for f in (la.inv, la.det, la.cholesky, la.eigh, la.eigvalsh, la.slogdet, la.pinv, la.matrix_rank):
        assert_raises_everywhere(ValueError, f, big)
    assert_raises_everywhere(ValueError, la.solve, big, put(rand((4,)), dict(split=0)))
    assert_raises_everywhere(ValueError, la.qr, big, mode="complete")
    assert_raises_everywhere(ValueError, la.svd, big)
    assert_raises_everywhere(ValueError, la.matrix_norm, big, ord="nuc")
    try:
        la.inv(big)
    except ValueError as e:
        assert "GATHER_LIMIT=10" in str(e)
    # what needs no gather still works above the limit
    assert_equal(la.matrix_power(big, 2), np.linalg.matrix_power(spd(4), 2), rtol=1e-10)
    assert_equal(la.matrix_norm(big), np.linalg.matrix_norm(spd(4)), rtol=1e-10)
