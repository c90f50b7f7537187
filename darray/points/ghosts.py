"""Unstructured halos: a ghost-node plan built once from a graph's edges, exchanged every step.

:class:`GhostPlan` takes edges ``(src, dst)`` in global node numbering and
the row cut of the nodes (a node DArray, a :class:`~darray.points.Partition`
or block sizes). Each edge lives on the rank that owns ``dst`` (messages are
aggregated there); the ``src`` nodes owned elsewhere are that rank's
*ghosts*. The plan is PETSc's star forest in miniature: every rank knows
which of its rows each peer needs (packed once into a contiguous staging
buffer) and where each ghost arrives; the buffers and the persistent
point-to-point requests (``comm.bind_exchange``) are made once per feature
width and reused: :meth:`GhostPlan.start` / ``wait`` like the grid halos.

On the tape (:meth:`GhostPlan.exchange`, rule ``points_ghosts``) the
adjoint sends ghost gradients back to their owners and adds them.
"""

from __future__ import annotations

import numpy as np

from .. import _recorder
from .._backend import to_numpy
from .._comm.base import agree
from .._core import DArray
from .._errors import message
from ..autodiff import Variable, apply, register
from ._rows import RowRoute, check_rows, host_rows, offsets_of, owners, row_sizes, rows_of, wrap_rows
from .message import REDUCTIONS, Rows
from .partition import Partition

__all__ = ["GhostPlan", "check_edges"]


def node_sizes(func: str, nodes) -> tuple[int, ...]:
    """Row sizes of the nodes: from a Partition, a row-cut DArray or a sequence of sizes."""
    if isinstance(nodes, Partition):
        return nodes.sizes
    if isinstance(nodes, DArray):
        sizes = row_sizes(nodes)
        if sizes is None:
            raise ValueError(message(func, "the nodes are not cut by rows", nodes.layout, "a DArray cut along axis 0"))
        return sizes
    return tuple(int(s) for s in nodes)


def check_edges(func: str, src, dst, n: int) -> tuple[np.ndarray, np.ndarray]:
    """This rank's edges as int64 host arrays; the same error on every rank for bad edges."""
    for name, e in (("src", src), ("dst", dst)):
        if not isinstance(e, DArray) or e.ndim != 1 or e.dtype.kind not in "iu":
            raise TypeError(message(func, f"{name} must be a 1-d integer DArray of node indices",
                                    getattr(e, "shape", type(e).__name__), "an (E,) integer DArray"))
    check_rows(func, "dst", dst, src.shape[0], row_sizes(src), "src")
    src, dst = rows_of(func, src), rows_of(func, dst)
    s, d = host_rows(src)[:, 0].astype(np.int64), host_rows(dst)[:, 0].astype(np.int64)
    bad = agree(src._comm, bool(((s >= 0) & (s < n)).all() and ((d >= 0) & (d < n)).all()))
    if bad:
        raise IndexError(message(func, "edges name nodes that do not exist", f"indices out of range on ranks {bad}",
                                 f"0 <= index < {n}"))
    return s, d


class GhostPlan:
    """Owned and ghost nodes of a graph over the ranks, and their persistent exchange.

    Parameters
    ----------
    src, dst : ``(E,)`` integer DArrays (cut alike): the edges, in global node numbering.
    nodes : the nodes' row cut: a row-cut DArray, a :class:`~darray.points.Partition` or block sizes.

    Attributes
    ----------
    src, dst : this rank's edges (those whose ``dst`` it owns), as rows of its *extended* block
        (its owned nodes, then its ghosts): NumPy int64 arrays.
    ghosts : global indices of this rank's ghost nodes (sorted).
    sizes, extended_sizes : owned and owned + ghost rows per rank.
    edge_sizes : edges per rank.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> from darray.points import GhostPlan
    >>> x = da.asarray(np.array([[10.0], [11.0], [12.0]]), split=0)  # three nodes, one feature
    >>> src, dst = da.asarray(np.array([1, 2, 0]), split=0), da.asarray(np.array([0, 1, 2]), split=0)
    >>> plan = GhostPlan(src, dst, x)
    >>> ext = plan.exchange(x)  # each rank: its nodes, then the neighbours it lacks
    >>> ext.shape[0] == sum(plan.extended_sizes)
    True
    """

    def __init__(self, src: DArray, dst: DArray, nodes):
        func = "GhostPlan"
        if nodes is None:
            raise TypeError(message(func, "nodes must give the nodes' row cut", None,
                                    "a row-cut DArray, a Partition or block sizes"))
        self.sizes = node_sizes(func, nodes)
        comm = src._comm if isinstance(src, DArray) else None
        if comm is not None and len(self.sizes) != comm.size:
            raise ValueError(message(func, "one node block size per rank needed", self.sizes, f"{comm.size} sizes"))
        offsets = offsets_of(self.sizes)
        s, d = check_edges(func, src, dst, int(offsets[-1]))
        self.comm, rank = comm, comm.rank
        self.n = int(offsets[-1])
        self._edge_route = RowRoute(comm, owners(offsets, d))
        pairs = self._edge_route.send(np.stack([s, d], axis=1), "points.edges")
        lo, hi = int(offsets[rank]), int(offsets[rank + 1])
        owned = (pairs[:, 0] >= lo) & (pairs[:, 0] < hi)
        self.ghosts = np.unique(pairs[~owned, 0])
        n_own = hi - lo
        self.src = np.where(owned, pairs[:, 0] - lo, n_own + np.searchsorted(self.ghosts, pairs[:, 0]))
        self.dst = pairs[:, 1] - lo
        # who needs which of my rows: ghost ids go to their owners once
        request = RowRoute(comm, owners(offsets, self.ghosts))
        self._send_rows = request.send(self.ghosts, "points.ghost_plan")[:, 0] - lo
        self._sends = [(p, r) for p, r in request.recvs]  # my staging rows, in requester order
        self._recvs = [(p, r) for p, r in request.sends]  # my ghost rows, in owner order
        self.extended_sizes = tuple(int(x) for x in np.asarray(comm.allgather(
            np.array([n_own + self.ghosts.shape[0]], dtype=np.int64)))[:, 0])
        self.edge_sizes = self._edge_route_sizes()
        self._bound: dict = {}
        self._local: dict = {}
        self._edge_sizes_in = row_sizes(src)

    def _edge_route_sizes(self) -> tuple[int, ...]:
        return tuple(int(x) for x in np.asarray(self.comm.allgather(
            np.array([self.src.shape[0]], dtype=np.int64)))[:, 0])

    def _binding(self, width: int, dtype):
        """The staging buffer ``(sent rows + ghosts, width)`` and its bound exchange, made once per width and dtype."""
        key = (width, np.dtype(dtype).str)
        if key not in self._bound:
            n_send = self._send_rows.shape[0]
            buf = np.zeros((n_send + self.ghosts.shape[0], width), dtype=dtype)
            whole = (slice(0, width),)
            sends = [(p, r + whole) for p, r in self._sends]
            recvs = [(p, (slice(r[0].start + n_send, r[0].stop + n_send),) + whole) for p, r in self._recvs]
            self._bound[key] = (buf, self.comm.bind_exchange(buf, sends, recvs), n_send)
        return self._bound[key]

    def start(self, rows: np.ndarray):
        """Start sending the ghosts' values: ``rows`` are this rank's owned rows ``(n_own, ...)`` (host).

        Returns a handle whose ``wait()`` gives the ghost rows ``(n_ghosts, ...)`` (a view of the plan's
        buffer, valid until the next ``start`` of the same width and dtype).
        """
        trailing = rows.shape[1:]
        flat = rows.reshape(rows.shape[0], int(np.prod(trailing, dtype=np.int64)))
        buf, bound, n_send = self._binding(flat.shape[1], flat.dtype)
        buf[:n_send] = flat[self._send_rows]
        with _recorder.labelled("points.ghosts"):
            request = bound.start()
        return _Pending(request, buf, n_send, trailing)

    def accumulate(self, grad: np.ndarray) -> np.ndarray:
        """The adjoint: extended-block gradients ``(n_own + n_ghosts, ...)`` summed onto the owned rows (host)."""
        n_own = grad.shape[0] - self.ghosts.shape[0]
        trailing = grad.shape[1:]
        flat = grad.reshape(grad.shape[0], int(np.prod(trailing, dtype=np.int64)))
        width, n_send = flat.shape[1], self._send_rows.shape[0]
        back = np.empty((n_send, width), dtype=flat.dtype)
        whole = (slice(0, width),)
        ghosts = np.ascontiguousarray(flat[n_own:])
        with _recorder.labelled("points.ghosts.adjoint"):
            self.comm.exchange(ghosts, [(p, r + whole) for p, r in self._recvs], back,
                               [(p, r + whole) for p, r in self._sends]).wait()
        out = flat[:n_own].copy()
        np.add.at(out, self._send_rows, back)
        return out.reshape((n_own, *trailing))

    def exchange(self, x):
        """``x`` (``(N, ...)`` nodes cut like the plan, a DArray or Variable) with ghosts: the extended rows.

        The result (a :class:`~darray.autodiff.Variable`) has ``sum(extended_sizes)`` rows, each rank's
        block being its owned rows then its ghosts; its gradient flows back to the owners.
        """
        xd = x.data if isinstance(x, Variable) else x
        check_rows("GhostPlan.exchange", "x", xd, self.n, self.sizes, "the plan's nodes")
        return apply("points_ghosts", x, plan=self)

    def gather(self, x, end: str = "src"):
        """Per-edge rows of the node features ``x`` at the edges' ``src`` (or ``dst``) end, on the tape.

        The result is ``(E, ...)`` in the plan's edge order (:attr:`edge_sizes` rows per rank, each rank's
        edges those whose ``dst`` it owns); ``src`` ends read the ghosts of one :meth:`exchange`.
        """
        if end not in ("src", "dst"):
            raise ValueError(message("GhostPlan.gather", "end must be 'src' or 'dst'", repr(end), "'src' or 'dst'"))
        xd = x.data if isinstance(x, Variable) else x
        check_rows("GhostPlan.gather", "x", xd, self.n, self.sizes, "the plan's nodes")
        if end == "src":
            return apply("points_gather", self.exchange(x), fetch=self._rows("src"), sizes=self.edge_sizes)
        return apply("points_gather", x, fetch=self._rows("dst"), sizes=self.edge_sizes)

    def scatter(self, values, reduce: str = "sum"):
        """Per-edge ``values`` (in the plan's edge order) reduced onto their ``dst`` nodes, on the tape.

        ``reduce`` is ``"sum"``, ``"mean"`` or ``"max"`` (see :func:`darray.points.scatter_add`); the result
        is cut like the plan's nodes. No communication: every edge lives with its ``dst``.
        """
        if reduce not in REDUCTIONS:
            raise ValueError(message("GhostPlan.scatter", "unknown reduction", repr(reduce), f"one of {REDUCTIONS}"))
        vd = values.data if isinstance(values, Variable) else values
        check_rows("GhostPlan.scatter", "values", vd, sum(self.edge_sizes), self.edge_sizes, "the plan's edges")
        return apply("points_scatter", values, fetch=self._rows("dst"), sizes=self.sizes, reduce=reduce)

    def take_edges(self, values: DArray) -> DArray:
        """Per-edge ``values`` cut like the ``src``/``dst`` given to the plan, moved to the plan's edge order."""
        check_rows("GhostPlan.take_edges", "values", values, sum(self.edge_sizes), self._edge_sizes_in,
                   "the plan's src")
        moved = self._edge_route.send(host_rows(rows_of("GhostPlan.take_edges", values)), "points.edges")
        return wrap_rows(moved, values.shape[1:], self.edge_sizes, values)

    def _rows(self, end: str) -> Rows:
        if end not in self._local:
            n_own = self.sizes[self.comm.rank]
            self._local[end] = Rows(self.src, n_own + self.ghosts.shape[0]) if end == "src" else Rows(self.dst, n_own)
        return self._local[end]

    def __repr__(self):
        return f"GhostPlan(nodes={self.sizes}, ghosts={self.extended_sizes}, edges={self.edge_sizes})"


class _Pending:
    __slots__ = ("request", "buf", "n_send", "trailing")

    def __init__(self, request, buf, n_send, trailing):
        self.request, self.buf, self.n_send, self.trailing = request, buf, n_send, trailing

    def wait(self) -> np.ndarray:
        self.request.wait()
        ghosts = self.buf[self.n_send:]
        return ghosts.reshape((ghosts.shape[0], *self.trailing))


def _ghosts_forward(ctx, x, plan):
    own = to_numpy(x.local)
    ghosts = plan.start(own).wait()
    return wrap_rows(np.concatenate([own, ghosts]), x.shape[1:], plan.extended_sizes, x)


def _ghosts_backward(ctx, g):
    x, plan = ctx.xs[0], ctx.params["plan"]
    return (wrap_rows(plan.accumulate(to_numpy(g.local)), x.shape[1:], plan.sizes, x),)


register("points_ghosts", _ghosts_forward, _ghosts_backward)
