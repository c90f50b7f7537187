"""Message-passing layers on point clouds and meshes (torch_geometric's names), built on :mod:`darray.points`.

Node features ``x`` are ``(N, C)`` with rows cut over the ranks; a graph is
``edge_index = (src, dst)`` (or a ``(2, E)`` integer DArray, torch's form),
messages flowing from ``src`` to ``dst`` (torch_geometric's
``source_to_target``): rows move by global index (:func:`darray.points.gather`
/ ``scatter_*``, one route per call). Or the graph is a
:class:`darray.points.GhostPlan` built once: each step is then one persistent
ghost exchange and local work. Either way a layer gives the same values at
every rank count.

Examples
--------
>>> import numpy as np, darray as da
>>> x = da.asarray(np.eye(3), split=0)  # three nodes, three features
>>> ring = da.asarray(np.array([[0, 1, 2], [1, 2, 0]]), split=None)  # edge_index: 0 -> 1 -> 2 -> 0
>>> da.nn.GraphConv(3, 2, aggr="mean")(x, ring).shape
(3, 2)
"""

from __future__ import annotations

from .._core import DArray
from .._errors import message
from ..autodiff import Variable, apply, register
from ..points import GhostPlan, gather, scatter_add, scatter_max, scatter_mean
from ..points._rows import row_sizes
from . import functional as F
from ._util import data, redistributed, wrap_storage
from .layers import Linear
from .module import Module, ModuleList

__all__ = ["EdgeConv", "GraphConv", "MeshGraphNetBlock", "concat_features", "AGGREGATIONS"]

#: Aggregations of messages at their target node: torch_geometric's names -> darray.points' reductions.
AGGREGATIONS = {"add": "sum", "sum": "sum", "mean": "mean", "max": "max"}
_SCATTERS = {"sum": scatter_add, "mean": scatter_mean, "max": scatter_max}


def _concat_forward(ctx, *xs):
    xp = xs[0]._xp
    out = xp.concat([x.local for x in xs], axis=-1)
    layout = xs[0]._layout.without_halo()
    width = out.shape[-1]
    sizes = layout.sizes[:-1] + ((width,),)
    return wrap_storage(out, layout.replace(shape=layout.shape[:-1] + (width,), sizes=sizes), xs[0])


def _concat_backward(ctx, g):
    grads, start = [], 0
    for x, need in zip(ctx.xs, ctx.needs):
        stop = start + x.shape[-1]
        grads.append(wrap_storage(g.local[..., start:stop], x._layout.without_halo(), x) if need else None)
        start = stop
    return tuple(grads)


register("graph_concat", _concat_forward, _concat_backward)


def concat_features(*xs):
    """Arrays of the same leading shape joined along their last axis, on the tape.

    The first must be cut by rows; the others are redistributed (on the tape) to its layout when cut otherwise.
    """
    first = data(xs[0])
    if row_sizes(first) is None or len({data(x).shape[:-1] for x in xs}) != 1:
        raise ValueError(message("concat_features", "the arrays differ in leading shape or the first is not cut by "
                                 "rows", [data(x).shape for x in xs], "(N, ...) arrays, the first cut by rows"))
    layouts = [first._layout.replace(shape=data(x).shape, sizes=first._layout.sizes[:-1] + ((data(x).shape[-1],),))
               for x in xs]
    return apply("graph_concat", *(redistributed(x, lay) for x, lay in zip(xs, layouts)))


class _Messages:
    """A graph's message passing: by global index for ``(src, dst)`` edges, locally for a GhostPlan."""

    def __init__(self, func: str, edge_index, n: int):
        self.n, self.plan = n, edge_index if isinstance(edge_index, GhostPlan) else None
        if self.plan is not None:
            return
        if isinstance(edge_index, DArray) and edge_index.ndim == 2 and edge_index.shape[0] == 2:
            self.src, self.dst = edge_index[0], edge_index[1]
        elif isinstance(edge_index, (tuple, list)) and len(edge_index) == 2:
            self.src, self.dst = edge_index
        else:
            raise TypeError(message(func, "edge_index must be (src, dst), a (2, E) integer DArray or a GhostPlan",
                                    type(edge_index).__name__, "torch's edge_index"))

    def at(self, x, end: str):
        """Node rows ``x`` at each edge's ``src`` or ``dst`` end."""
        if self.plan is not None:
            return self.plan.gather(x, end)
        return gather(x, self.src if end == "src" else self.dst)

    def aggregate(self, values, reduce: str):
        """Per-edge ``values`` reduced onto the edges' ``dst`` nodes."""
        if self.plan is not None:
            return self.plan.scatter(values, reduce)
        return _SCATTERS[reduce](values, self.dst, self.n)


def _aggregation(func: str, aggr: str) -> str:
    if aggr not in AGGREGATIONS:
        raise ValueError(message(func, "unknown aggregation", repr(aggr), f"one of {sorted(AGGREGATIONS)}"))
    return AGGREGATIONS[aggr]


class _MLP(Module):
    """``Linear -> ReLU -> Linear`` whose first layer reads several inputs (their concatenation)."""

    def __init__(self, in_features: int, hidden: int, out_features: int):
        super().__init__()
        self.layers = ModuleList([Linear(in_features, hidden), Linear(hidden, out_features)])

    def forward(self, *xs):
        x = xs[0] if len(xs) == 1 else concat_features(*xs)
        return self.layers[1](F.relu(self.layers[0](x)))


class EdgeConv(Module):
    """Dynamic-graph edge convolution (DGCNN; torch_geometric's ``EdgeConv``).

    ``x_i' = aggr_{j -> i} nn([x_i, x_j - x_i])``; ``nn`` maps ``2 C`` features to the output.
    """

    def __init__(self, nn: Module, aggr: str = "max"):
        super().__init__()
        self.reduce = _aggregation("EdgeConv", aggr)
        self.aggr, self.nn = aggr, nn

    def forward(self, x, edge_index):
        graph = _Messages("EdgeConv", edge_index, data(x).shape[0])
        xi, xj = graph.at(x, "dst"), graph.at(x, "src")
        return graph.aggregate(self.nn(concat_features(xi, xj - xi)), self.reduce)

    def extra_repr(self):
        return f"aggr={self.aggr!r}"


class GraphConv(Module):
    """``x_i' = W_1 x_i + W_2 aggr_{j -> i} x_j`` (torch_geometric's ``GraphConv``, Morris et al.)."""

    def __init__(self, in_channels: int, out_channels: int, aggr: str = "add", bias: bool = True):
        super().__init__()
        self.reduce = _aggregation("GraphConv", aggr)
        self.aggr = aggr
        self.lin_rel = Linear(in_channels, out_channels, bias=bias)
        self.lin_root = Linear(in_channels, out_channels, bias=False)

    def forward(self, x, edge_index):
        graph = _Messages("GraphConv", edge_index, data(x).shape[0])
        return self.lin_rel(graph.aggregate(graph.at(x, "src"), self.reduce)) + self.lin_root(x)

    def extra_repr(self):
        return f"aggr={self.aggr!r}"


class MeshGraphNetBlock(Module):
    """One MeshGraphNet processor step (Pfaff et al.): edge MLP, sum at the nodes, node MLP, residuals.

    ``e' = e + mlp_e([e, x_src, x_dst])``, ``x' = x + mlp_n([x, sum_{edges into i} e'])``;
    returns ``(x', e')``. With a :class:`~darray.points.GhostPlan` as ``edge_index``, ``edge_attr`` is in
    the plan's edge order (:meth:`~darray.points.GhostPlan.take_edges`).
    """

    def __init__(self, node_features: int, edge_features: int, hidden_features: int = 64):
        super().__init__()
        self.edge_mlp = _MLP(edge_features + 2 * node_features, hidden_features, edge_features)
        self.node_mlp = _MLP(node_features + edge_features, hidden_features, node_features)

    def forward(self, x, edge_attr, edge_index):
        graph = _Messages("MeshGraphNetBlock", edge_index, data(x).shape[0])
        if not isinstance(edge_attr, Variable):
            edge_attr = Variable(edge_attr)
        edges = edge_attr + self.edge_mlp(edge_attr, graph.at(x, "src"), graph.at(x, "dst"))
        nodes = self.node_mlp(x, graph.aggregate(edges, "sum"))
        return (x if isinstance(x, Variable) else Variable(x)) + nodes, edges
