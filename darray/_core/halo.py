"""Halo exchange: fill every block's ghost cells from its neighbours in one round of messages.

The plan sends to every rank owning part of a ghost region (neighbours
sharing a face, edge or corner; ranks further away when the halo is wider
than a block) in one non-blocking round, so box stencils see correct corners
and the interior can be computed while messages fly. Ghost cells on
the global edges are then filled locally, axis by axis, from the boundary
rule (the same result as ``numpy.pad`` of the global array):

=========  =====================  =================
boundary   ghost cells hold       ``numpy.pad`` mode
=========  =====================  =================
none       untouched              --
periodic   the opposite edge      ``wrap``
reflect    the mirrored edge      ``symmetric`` (Dask's reflect)
nearest    the edge cell          ``edge``
a number   that constant          ``constant``
=========  =====================  =================
"""

from __future__ import annotations

from functools import lru_cache
from itertools import product

import numpy as np

from .._backend import is_numpy_namespace
from .. import _debug, _recorder
from .._layout import Layout, locate, mirror_source, volume
from .array import DArray
from .plans import Plan

__all__ = ["halo_plan", "exchange_halos", "HaloExchange", "accumulate_halos"]


def _axis_pieces(lo: int, hi: int, h: int, n: int, periodic: bool):
    """Ghost pieces along one axis: ``(side, dst_start, global_lo, global_hi)``, wrapped if periodic.

    ``side`` is -1 (below the block), 0 (the owned cells) or +1 (above);
    ``dst_start`` is where the piece starts in padded storage.
    """
    out = [(0, h, lo, hi)]
    for side, (a, b) in ((-1, (lo - h, lo)), (1, (hi, hi + h))):
        if a == b:
            continue
        dst = 0 if side < 0 else h + (hi - lo)
        pos = a
        while pos < b:  # split at the domain edges; wrap or drop what lies outside
            if 0 <= pos < n:
                end = min(b, n)
                out.append((side, dst + pos - a, pos, end))
                pos = end
            else:
                end = min(b, 0) if pos < 0 else b
                if periodic and n:
                    k = -(-(-pos) // n) * n if pos < 0 else -(pos // n) * n  # shift into [0, n)
                    g = pos + k
                    piece_end = min(end, pos + (n - g))
                    out.append((side, dst + pos - a, g, g + piece_end - pos))
                    pos = piece_end
                else:
                    pos = end
    return out


def _pieces(layout: Layout, rank: int):
    """This rank's ghost regions, in a canonical order: ``(key, dst_region, global_region)``."""
    starts = layout.block_start(rank)
    shape = layout.block_shape(rank)
    per_axis = []
    for axis, (lo, n, h) in enumerate(zip(starts, shape, layout.halo)):
        periodic = layout.boundary[axis] == "periodic"
        per_axis.append(_axis_pieces(lo, lo + n, h, layout.shape[axis], periodic) if h else [(0, 0, lo, lo + n)])
    out = []
    for combo in product(*per_axis):
        if all(side == 0 for side, *_ in combo):
            continue  # the owned cells themselves
        dst = tuple(slice(d, d + (g1 - g0)) for _, d, g0, g1 in combo)
        out.append((tuple((side, d) for side, d, _, _ in combo), dst, tuple((g0, g1) for _, _, g0, g1 in combo)))
    return out


def _owners_of(layout: Layout, region, reader: int):
    """``(rank, cells)`` for every block of ``layout`` intersecting global ``region``."""
    from .plans import _intersect, _owner

    ranges = [locate(layout.offsets[a], lo, hi) for a, (lo, hi) in enumerate(region)]
    for block in product(*ranges):
        have = tuple((layout.offsets[a][i], layout.offsets[a][i + 1]) for a, i in enumerate(block))
        cells = _intersect(have, region)
        if cells is not None:
            yield _owner(layout, block, reader), cells


@lru_cache(maxsize=256)
def halo_plan(layout: Layout, rank: int) -> Plan:
    """Messages filling ``rank``'s ghost cells from their owners (and serving other ranks' ghosts).

    Ghost regions may span several blocks (halo wider than a neighbour's
    block: multi-hop) and wrap around periodic axes; every piece is one
    message from its owner. Both sides order a pair's messages by the
    receiver's canonical piece order.
    """
    recvs = []
    for _, dst, region in _pieces(layout, rank):
        for owner, cells in _owners_of(layout, region, rank):
            sub = tuple(slice(d.start + c0 - g0, d.start + c1 - g0) for d, (c0, c1), (g0, _) in zip(dst, cells, region))
            recvs.append((owner, sub))
    sends = []
    start = layout.block_start(rank)
    halo = layout.halo
    for reader in range(layout.nprocs):
        for _, _, region in _pieces(layout, reader):
            for owner, cells in _owners_of(layout, region, reader):
                if owner == rank:
                    sends.append((reader, tuple(slice(c0 - s + h, c1 - s + h) for (c0, c1), s, h in
                                                zip(cells, start, halo))))
    return Plan(sends, recvs)


@lru_cache(maxsize=256)
def _fills_edges(layout: Layout) -> bool:
    """Whether some axis has ghosts filled by a rule (reflect, nearest, a constant) rather than messages."""
    return any(h and kind not in ("none", "periodic") for h, kind in zip(layout.halo, layout.boundary))


def _fill_boundaries(x: DArray) -> None:
    """Ghost cells past the global edges, axis by axis (corners follow, like ``numpy.pad``).

    Works for any block, also one whose halo reaches past the edge through a
    narrower neighbour: each outside cell copies its mirror (or edge) cell,
    which lies inside the domain and so is owned or already received.
    """
    layout = x._layout
    if not _fills_edges(layout):
        return
    block = x._block
    xp = x._xp
    rank = x._comm.rank
    starts, shape = layout.block_start(rank), layout.block_shape(rank)
    for axis, (h, kind) in enumerate(zip(layout.halo, layout.boundary)):
        if not h or kind in ("none", "periodic"):
            continue
        n, lo = layout.shape[axis], starts[axis]
        first = lo - h  # global index of padded position 0
        size = shape[axis] + 2 * h
        outside = [p for p in range(size) if not 0 <= first + p < n]
        if not outside:
            continue
        where = [slice(None)] * block.ndim
        if not isinstance(kind, str):
            if not is_numpy_namespace(xp):  # strict namespaces: a Python scalar of the block's kind, cast like NumPy
                kind = np.asarray(kind).astype(x.dtype).item()
            for p in outside:
                where[axis] = slice(p, p + 1)
                block[tuple(where)] = kind
            continue
        sources = [mirror_source(kind, first + p, n) - first for p in outside]
        values = xp.take(block, xp.asarray(sources, device=x.device), axis=axis)
        for i, p in enumerate(outside):
            where[axis] = slice(p, p + 1)
            take = [slice(None)] * block.ndim
            take[axis] = slice(i, i + 1)
            block[tuple(where)] = values[tuple(take)]


class HaloExchange:
    """A started halo exchange; ``wait()`` completes it and fills the global-edge ghosts."""

    __slots__ = ("x", "request")

    def __init__(self, x: DArray, request):
        self.x, self.request = x, request

    def wait(self) -> DArray:
        if self.request is not None:
            self.request.wait()
            self.request = None
            _fill_boundaries(self.x)
            self.x._halo_fresh = True
        return self.x


def exchange_halos(x: DArray, wait: bool = True, force: bool = False):
    """Fill ``x``'s ghost cells; ``wait=False`` returns a :class:`HaloExchange` to ``wait()`` on later.

    Skipped when the halos are already fresh (nothing written since the last
    exchange) unless ``force``. Writing through ``x.local`` directly is not
    tracked: pass ``force=True`` after doing so.
    """
    if not x._layout.has_halo or (x._halo_fresh and not force):
        handle = HaloExchange(x, None)
    else:
        if _debug.enabled:
            _debug.check_collective(x._comm, "exchange_halos", x._layout, str(x.dtype))
        bound = x._halo_exchange
        if bound is None or bound.buf is not x._block:  # made once per block: persistent requests under MPI
            plan = halo_plan(x._layout, x._comm.rank)
            bound = x._halo_exchange = x._comm.bind_exchange(x._block, plan.sends, plan.recvs)
        if _recorder.active is None:
            request = bound.start()
        else:
            with _recorder.labelled("halo"):
                request = bound.start()
        handle = HaloExchange(x, request)
    return handle.wait() if wait else handle


def accumulate_halos(x: DArray) -> DArray:
    """The adjoint of a halo exchange: ghost values are sent back to their owners and ADDED.

    ``x``'s padded block holds gradients with respect to every stored cell
    (owned and ghost); the result (same layout, ghosts zero) holds, in each
    owned cell, its own gradient plus every ghost copy's gradient. Cells past
    a non-periodic global edge are dropped (their value came from a boundary
    rule; see the autodiff rules for reflect/nearest). One round of messages,
    the exact reverse of :func:`halo_plan`.
    """
    layout = x._layout
    xp = x._xp
    rank = x._comm.rank
    out = xp.zeros(layout.padded_shape(rank), dtype=x._block.dtype, device=x.device)
    inner = layout.interior(rank)
    out[inner] = x._block[inner]
    if not layout.has_halo:
        return DArray._wrap(out, layout, x._comm, xp)
    plan = halo_plan(layout, rank)
    # the forward plan's receives are now sends (ghost regions); its sends become receives,
    # each into its own slice of a flat staging buffer so that overlapping targets add up
    volumes = [volume(r) for _, r in plan.sends]
    starts = [0]
    for v in volumes:
        starts.append(starts[-1] + v)
    staging = xp.empty((starts[-1],), dtype=x._block.dtype, device=x.device)
    recvs = [(p, (slice(a, a + v),)) for (p, _), a, v in zip(plan.sends, starts, volumes)]
    send = xp.asarray(x._block, copy=True)
    with _recorder.labelled("halo_adjoint"):
        x._comm.exchange(send, plan.recvs, staging, recvs).wait()
    for (_peer, region), a, v in zip(plan.sends, starts, volumes):
        shape = tuple(s.stop - s.start for s in region)
        out[region] = out[region] + xp.reshape(staging[a:a + v], shape)
    return DArray._wrap(out, layout, x._comm, xp)
