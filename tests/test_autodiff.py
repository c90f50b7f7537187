"""The autodiff tape and its rules, on every rank count.

Every rule is checked two independent ways, in float64:

- against central finite differences along random directions (on the
  replicated inputs: a purely local computation);
- distributed vs replicated: the same global data cut over the ranks must
  give the same value and the same gradients (within 1e-10 relative) as the
  replicated computation, which is the single-rank result at any rank count.

Communication ops are checked as adjoints: ``<A x, y> == <x, A^T y>``.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da
from darray import autodiff as ad
from darray._backend import to_numpy
from darray.autodiff import Variable
from darray.autodiff.rules import RULES
from darray.testing import agree, assert_equal

from _cases import P, case, generator, layouts, values


def host(x):
    """A DArray's whole value, or a local block, as a NumPy array (any local backend)."""
    return to_numpy(x.gather() if isinstance(x, da.DArray) else x)


pytestmark = pytest.mark.mpi

EPS = 1e-6


def _total(x: da.DArray) -> float:
    return float(da.sum(x))


def check_grads(f, arrays, layouts, *, directions=2, fd_rtol=1e-6, rtol=1e-10):
    """Value and gradients of ``f`` at distributed inputs == replicated ones == finite differences."""
    n = len(arrays)
    dist = [da.asarray(a, **kw) for a, kw in zip(arrays, layouts)]
    rep = [da.asarray(a, split=None) for a in arrays]
    argnums = tuple(range(n))
    value, grads = ad.value_and_grad(f, argnums)(*dist)
    value_r, grads_r = ad.value_and_grad(f, argnums)(*rep)
    v, vr = float(value), float(value_r)
    assert not agree(da.default_communicator(), abs(v - vr) <= rtol * max(1.0, abs(vr))), (v, vr)
    for g, gr, x in zip(grads, grads_r, dist):
        assert g.layout.blocks_key == x.layout.blocks_key, (g.layout, x.layout)
        ref = host(gr.local)  # replicated: the whole gradient on every rank
        assert_equal(g, ref, rtol=rtol, atol=1e-12 * max(1.0, float(np.max(np.abs(ref))) if ref.size else 1.0))
    r = generator(123)
    for _ in range(directions):
        vs = [r.standard_normal(a.shape) for a in arrays]
        plus = float(f(*[Variable(da.asarray(a + EPS * d, split=None)) for a, d in zip(arrays, vs)]).data)
        minus = float(f(*[Variable(da.asarray(a - EPS * d, split=None)) for a, d in zip(arrays, vs)]).data)
        fd = (plus - minus) / (2 * EPS)
        an = sum(float(np.sum(host(gr.local) * d)) for gr, d in zip(grads_r, vs))
        assert abs(fd - an) <= fd_rtol * max(1.0, abs(an)) + 1e-7, (fd, an)
    return value, grads


SHAPE = (7, 5)
#: Cut along each axis, replicated, a 2x2 grid (4 ranks) and (more than one rank) every row on rank 1.
LAYOUTS = layouts(SHAPE, "split0", "split1", "replicated", "grid2x2")
if P > 1:
    LAYOUTS.append(case("on-rank1", SHAPE, "uneven", "empty", split=0, sizes=[0, 7] + [0] * (P - 2)))

UNARY_DOMAIN = {"log": "pos", "log1p": "pos", "log2": "pos", "log10": "pos", "sqrt": "pos", "reciprocal": "pos",
                "acosh": "big", "asin": "unit", "acos": "unit", "atanh": "unit"}


#: Domain name -> the interval ``_values`` draws from.
DOMAINS = {"pos": (0.5, 2.0), "big": (1.5, 3.0), "unit": (-0.8, 0.8), "any": (-1.5, 1.5)}


def _values(kind, shape, seed=0):
    """``_cases.values``: uniform in the interval of domain ``kind``."""
    low, high = DOMAINS[kind]
    return values(shape, seed=seed, low=low, high=high)


@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@pytest.mark.parametrize("name", sorted(ad.rules.ELEMENTWISE_UNARY))
def test_unary_rules(name, layout):
    x = _values(UNARY_DOMAIN.get(name, "any"), SHAPE, 1)
    w = generator(2).standard_normal(SHAPE)
    op = getattr(ad, name)
    check_grads(lambda a: ad.sum(op(a) * da.asarray(w, split=None)), [x], [layout.kw])


@pytest.mark.parametrize("name", ad.rules.NONDIFFERENTIABLE)
def test_piecewise_constant_rules_have_zero_gradient(name):
    x = da.asarray(_values("any", SHAPE) + 0.25, split=0)
    g = ad.grad(lambda a: ad.sum(getattr(ad, name)(a)))(x)
    assert_equal(g, np.zeros(SHAPE))


BINARY_SHAPES = {"same": (SHAPE, SHAPE), "row": (SHAPE, (5,)), "col": (SHAPE, (7, 1)), "outer": ((7, 1), (1, 5))}


@pytest.mark.parametrize("shapes", sorted(BINARY_SHAPES))
@pytest.mark.parametrize("name", sorted(ad.rules.ELEMENTWISE_BINARY))
def test_binary_rules_with_broadcasting(name, shapes):
    sa, sb = BINARY_SHAPES[shapes]
    a, b = _values("any", sa, 3), _values("any", sb, 4)
    if name == "pow":
        a = np.abs(a) + 0.5
    if name in ("divide", "remainder"):
        b = np.sign(b) * (np.abs(b) + 0.5)
    if name == "remainder":  # stay away from the jumps
        a, b = np.round(a, 1) + 0.05, np.full(sb, 0.7)
    w = generator(5).standard_normal(np.broadcast_shapes(sa, sb))
    op = getattr(ad, name)
    la = dict(split=0) if sa[0] == 7 else dict(split=1 if sa[1] == 5 and P > 1 else None)
    lb = dict(split=None) if len(sb) == 1 else (dict(split=0) if sb[0] == 7 else dict(split=None))
    check_grads(lambda x, y: ad.sum(op(x, y) * da.asarray(w, split=None)), [a, b], [la, lb])


def test_maximum_ties_split_the_gradient():
    x = da.asarray(np.array([1.0, 2.0, 3.0]), split=None)
    gx, gy = ad.grad(lambda a, b: ad.sum(ad.maximum(a, b)), (0, 1))(x, x)
    assert_equal(gx, np.full(3, 0.5))
    assert_equal(gy, np.full(3, 0.5))


def test_scalar_operands_and_reflected_operators():
    x = _values("pos", SHAPE)
    check_grads(lambda a: ad.sum(2.0 / a + 3.0 - a * 0.5 + (1.0 - a) ** 2 + 2.0 ** a), [x], [dict(split=0)])


def test_where():
    x, y = _values("any", SHAPE, 1), _values("any", SHAPE, 2)
    cond = x > 0.1
    check_grads(lambda a, b: ad.sum(ad.where(da.asarray(cond, split=0), a * a, b * 3.0)), [x, y],
                [dict(split=0), dict(split=1)])


REDUCTIONS = ["sum", "mean", "max", "min", "var", "std", "prod"]
AXES = [None, 0, 1, (0, 1)]


@pytest.mark.parametrize("layout", layouts(SHAPE, "split0", "split1"), ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_rules(name, axis, keepdims, layout):
    x = _values("pos" if name == "prod" else "any", SHAPE, 7)
    w = generator(8).standard_normal(np.sum(x, axis=axis, keepdims=keepdims).shape)
    op = getattr(ad, name)

    def f(a):
        return ad.sum(op(a, axis=axis, keepdims=keepdims) * da.asarray(w, split=None))

    check_grads(f, [x], [layout.kw], directions=1)


def test_max_ties_share_the_gradient():
    x = da.asarray(np.array([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]]), split=1)
    g = ad.grad(lambda a: ad.sum(ad.max(a, axis=1)))(x)
    assert_equal(g, np.array([[0.0, 0.5, 0.5], [0.5, 0.0, 0.5]]))


def test_var_with_correction():
    x = _values("any", SHAPE, 9)
    check_grads(lambda a: ad.std(a, axis=0, correction=1.0).sum() + ad.var(a, correction=1.0), [x], [dict(split=0)])


@pytest.mark.parametrize("layout", layouts((6, 4, 3), "split0", "split1", "split2"), ids=str)
def test_shape_rules(layout):
    x = _values("any", layout.shape, 11)
    w = generator(12).standard_normal((3, 6, 4))

    def f(a):
        b = ad.permute_dims(a, (2, 0, 1)) * da.asarray(w, split=None)
        c = ad.reshape(b, (3, 24))
        d = ad.expand_dims(c, axis=1)
        e = ad.squeeze(d, axis=1)
        return ad.sum(e * e) + ad.sum(ad.broadcast_to(ad.sum(a, axis=0), (2, 4, 3)) ** 2)

    check_grads(f, [x], [layout.kw])


@pytest.mark.parametrize("key", [(slice(1, 6, 2), slice(None)), (slice(None, None, -1), 2), (3,), (Ellipsis, None, 1),
                                 (slice(None), slice(4, 0, -2))], ids=str)
@pytest.mark.parametrize("layout", layouts(SHAPE, "split0", "split1"), ids=str)
def test_getitem_scatters_into_zeros(layout, key):
    x = _values("any", SHAPE, 13)
    w = generator(14).standard_normal(x[key].shape)
    check_grads(lambda a: ad.sum(a[key] * da.asarray(w, split=None)), [x], [layout.kw], directions=1)


@pytest.mark.parametrize("shapes", [((5, 4), (4, 3)), ((4,), (4, 3)), ((5, 4), (4,)), ((2, 5, 4), (4, 3))], ids=str)
def test_matmul_rule(shapes):
    sa, sb = shapes
    a, b = _values("any", sa, 15), _values("any", sb, 16)
    check_grads(lambda x, y: ad.sum(ad.matmul(x, y) ** 2), [a, b], [dict(split=0), dict(split=None)])
    check_grads(lambda x, y: ad.sum((x @ y) ** 2), [a, b], [dict(split=None), dict(split=0)], directions=1)


# ------------------------------------------------------------------ communication ops
#: (layout name, halo depth) per shape: thin blocks (one cell on each rank but the last) at more than one rank,
#: split0 at one; the 2x2 grid at four ranks.
HALO_DEPTHS = {(13,): [("split0", 2), ("thin0" if P > 1 else "split0", 3)],
               (9, 11): [("split1", (1, 2)), ("replicated", 1), ("grid2x2", 2)]}
HALO_CASES = [pytest.param(c, depth, id=f"{'x'.join(map(str, shape))}-{c}-{depth}")
              for shape, named in HALO_DEPTHS.items() for name, depth in named for c in layouts(shape, name)]


@pytest.mark.parametrize("boundary", ["periodic", "reflect", "nearest", 0.0])
@pytest.mark.parametrize("layout,depth", HALO_CASES)
def test_halo_rule_is_the_adjoint_of_the_exchange(layout, depth, boundary, comm):
    """<A x, y> == <x, A^T y> for A = exchange halos, then expose the padded block."""
    x = layout.array(_values("any", layout.shape, 17))
    padded = ad.halo(Variable(x, requires_grad=True), depth, boundary)
    ax = host(padded.data.block)
    y_block = np.random.default_rng([18, comm.rank]).standard_normal(ax.shape)
    y = da.DArray._wrap(padded.data._xp.asarray(y_block), padded.data.layout, comm, padded.data._xp)
    lhs = comm.allreduce(np.asarray([np.sum(ax * y_block)]), "sum")[0]
    (aty,) = RULES["halo"].backward(padded._node.ctx, y)
    rhs = comm.allreduce(np.asarray([np.sum(host(x.local) * host(aty.local))]), "sum")[0]
    assert not agree(comm, abs(lhs - rhs) <= 1e-11 * max(1.0, abs(lhs))), (lhs, rhs)


def test_redistribute_rule():
    x = _values("any", (9, 6), 19)
    w = generator(20).standard_normal((9, 6))

    def f(a):
        b = ad.redistribute(a * a, split=1)
        assert b.data.layout.split == ((1,) if P > 1 else (None,))
        return ad.sum(b * da.asarray(w, split=1))

    check_grads(f, [x], [dict(split=0)])


def test_replicated_parameter_against_distributed_data_gets_the_global_sum(comm):
    data = _values("any", (2, 3, 13, 11), 21)
    weight = _values("any", (1, 3, 1, 1), 22)
    x = da.asarray(data, split=(2,) if P > 1 else None)
    w = Variable(da.asarray(weight, split=None), requires_grad=True)
    loss = ad.sum(ad.tanh(w * x))
    loss.backward()
    expected = np.sum(data * (1 - np.tanh(data * weight) ** 2), axis=(0, 2, 3), keepdims=True)
    assert_equal(w.grad, expected, rtol=1e-10)
    blocks = comm.allgather(host(w.grad.local))
    assert not agree(comm, all(np.array_equal(blocks[0], b) for b in blocks))  # bit-identical on every rank


# ------------------------------------------------------------------ the tape itself
def test_gradients_accumulate_and_no_grad_records_nothing():
    x = Variable(da.asarray(np.arange(5.0), split=0), requires_grad=True)
    (x * x).sum().backward()
    (x * 3.0).sum().backward()
    assert_equal(x.grad, 2 * np.arange(5.0) + 3)
    with ad.no_grad():
        y = x * 2.0
        assert not ad.is_grad_enabled()
    assert ad.is_grad_enabled()
    assert not y.requires_grad and y.is_leaf
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.sum().backward()
    with pytest.raises(ValueError, match="single-element"):
        (x * 2.0).backward()
    z = x * 2.0
    z.backward(da.asarray(np.ones(5), split=None))
    assert_equal(x.grad, 2 * np.arange(5.0) + 5)


def test_shared_subexpressions_and_detach():
    x = _values("any", (6,), 23)
    check_grads(lambda a: ad.sum((lambda b: b * b + b)(ad.exp(a))), [x], [dict(split=0)])
    v = Variable(da.asarray(x, split=0), requires_grad=True)
    (v.detach() * v).sum().backward()
    assert_equal(v.grad, x)


def test_deep_graph_does_not_recurse():
    x = Variable(da.asarray(np.ones(4), split=0), requires_grad=True)
    y = x
    for _ in range(3000):
        y = y * 1.0 + 0.0
    y.sum().backward()
    assert_equal(x.grad, np.ones(4))


def test_grad_transform_argnums():
    a, b = _values("any", (5,), 24), _values("any", (5,), 25)
    f = lambda x, y: ad.sum(x * y * y)
    ga = ad.grad(f)(da.asarray(a, split=0), da.asarray(b, split=0))
    assert_equal(ga, b * b)
    value, (g0, g1) = ad.value_and_grad(f, (0, 1))(da.asarray(a, split=0), da.asarray(b, split=None))
    assert abs(float(value) - np.sum(a * b * b)) < 1e-12
    assert_equal(g0, b * b)
    assert_equal(g1, 2 * a * b)
    with pytest.raises(ValueError, match="argnums"):
        ad.grad(f, 3)(da.asarray(a), da.asarray(b))


def test_rules_table_covers_the_differentiable_elementwise_functions():
    from darray._core.table import ELEMENTWISE

    floating = {row.name for row in ELEMENTWISE if row.category in ("floating-point", "real floating-point")}
    missing = floating - set(RULES) - {"signbit", "nextafter", "real", "imag", "conj", "isfinite", "isinf",
                                       "isnan"}
    assert not missing, missing
    for name in ("halo", "redistribute", "sum", "mean", "max", "min", "var", "std", "reshape", "permute_dims",
                 "expand_dims", "squeeze", "getitem", "matmul", "where"):
        assert name in RULES


def test_diamond_graphs_are_swept_in_topological_order():
    """A value used directly and through a reduction (centering): both paths must reach it."""
    x = _values("any", (4, 6), 26)
    w = generator(27).standard_normal((4, 6))
    check_grads(lambda a: ad.sum((a - ad.mean(a, axis=0, keepdims=True)) * da.asarray(w, split=None)), [x],
                [dict(split=1)])
    check_grads(lambda a: ad.sum((a - ad.log(ad.sum(ad.exp(a), axis=1, keepdims=True))) * da.asarray(w, split=None)),
                [x], [dict(split=0)])
