"""Halo exchange: fill every block's ghost cells from its neighbours in one round of messages.

The plan sends to every neighbour sharing a face, edge or corner (up to
3^d - 1 of them) in one non-blocking round, so box stencils see correct
corners and the interior can be computed while messages fly. Ghost cells on
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

from .._layout import Layout
from .array import DArray
from .plans import Plan

__all__ = ["halo_plan", "exchange_halos", "HaloExchange"]


def _neighbour_index(layout: Layout, index, offset):
    """Block index of the neighbour at ``offset`` (wrapping periodic axes), or None past an edge."""
    out = []
    for axis, (i, o) in enumerate(zip(index, offset)):
        n = len(layout.sizes[axis])
        j = i + o
        if 0 <= j < n:
            out.append(j)
        elif layout.boundary[axis] == "periodic":
            out.append(j % n)
        else:
            return None
    return tuple(out)


def _rank_of_block(layout: Layout, rank: int, index) -> int:
    coords = list(layout.coords(rank))
    for axis, g in enumerate(layout.axis_dim):
        if g is not None:
            coords[g] = index[axis]
    return layout.rank(coords)


def _offsets(layout: Layout):
    choices = [(-1, 0, 1) if h else (0,) for h in layout.halo]
    return [o for o in product(*choices) if any(o)]


@lru_cache(maxsize=256)
def halo_plan(layout: Layout, rank: int) -> Plan:
    """Messages filling ``rank``'s ghost cells from (and serving) its neighbours."""
    index = layout.block_index(rank)
    shape = layout.block_shape(rank)
    halo = layout.halo
    sends, recvs = [], []
    for offset in _offsets(layout):
        nb = _neighbour_index(layout, index, offset)
        if nb is None:
            continue
        peer = _rank_of_block(layout, rank, nb)
        # my ghost cells on side ``offset`` come from the neighbour there
        ghost = tuple(slice(0, h) if o < 0 else slice(h + n, 2 * h + n) if o > 0 else slice(h, h + n)
                      for o, n, h in zip(offset, shape, halo))
        recvs.append((offset, peer, ghost))
        # the neighbour at ``offset`` needs my edge cells as its ghost cells on side ``-offset``
        edge = tuple(slice(n, n + h) if o > 0 else slice(h, 2 * h) if o < 0 else slice(h, h + n)
                     for o, n, h in zip(offset, shape, halo))
        sends.append((tuple(-o for o in offset), peer, edge))
    # both sides order a pair's messages by the receiver's side, so the k-th send matches the k-th receive
    sends.sort(key=lambda m: m[0])
    recvs.sort(key=lambda m: m[0])
    return Plan([(p, r) for _, p, r in sends], [(p, r) for _, p, r in recvs])


def _fill_boundaries(x: DArray) -> None:
    """Ghost cells past the global edges, axis by axis (corners follow, like ``numpy.pad``)."""
    layout = x._layout
    block = x._block
    xp = x._xp
    index = layout.block_index(x._comm.rank)
    ndim = layout.ndim
    for axis, (h, kind) in enumerate(zip(layout.halo, layout.boundary)):
        if not h or kind in ("none", "periodic"):
            continue
        n = layout.block_shape(x._comm.rank)[axis]
        last = len(layout.sizes[axis]) - 1
        for side in ("low", "high"):
            if (side == "low" and index[axis] != 0) or (side == "high" and index[axis] != last):
                continue
            ghost = slice(0, h) if side == "low" else slice(h + n, 2 * h + n)
            where = tuple(ghost if a == axis else slice(None) for a in range(ndim))
            if isinstance(kind, str):
                if kind == "nearest":
                    cell = h if side == "low" else h + n - 1
                    src = block[tuple(slice(cell, cell + 1) if a == axis else slice(None) for a in range(ndim))]
                else:  # reflect: mirror including the edge cell
                    cells = slice(h, 2 * h) if side == "low" else slice(n, n + h)
                    src = xp.flip(block[tuple(cells if a == axis else slice(None) for a in range(ndim))],
                                  axis=axis)
                block[where] = src
            else:
                block[where] = kind


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
        plan = halo_plan(x._layout, x._comm.rank)
        handle = HaloExchange(x, x._comm.exchange(x._block, plan.sends, x._block, plan.recvs))
    return handle.wait() if wait else handle
