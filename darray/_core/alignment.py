"""Aligning an operand cut one way with a result cut another: the strips that move, and a remembered plan.

Shifted slices of one cut array (``u[1:-1] + u[2:]``, a stencil written with
slices) have blocks a cell or two apart. Aligning one with the other moves
only boundary strips: the cells of the result's block that the operand's
rank does not hold arrive in a buffer the size of the strips
(:func:`strips`), and the block splits into cells, each inside one piece of
every operand (:func:`cells`).

The general elementwise path works this out for any operands. For two
DArrays of one shape it depends only on their layouts, the result's layout
and the rank, so :func:`binary_plan` works it out once (kept on the first
operand's layout by the caller) and :func:`run_binary` replays it: both
exchanges started together, one ufunc call per cell into the result, the cells
that need no received strip while the strips travel.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import product
from typing import Any, NamedTuple

import numpy as np

from .. import _recorder
from .._layout import Layout
from .plans import redistribution_plan

__all__ = ["Strips", "strips", "cells", "BinaryPlan", "binary_plan", "run_binary"]


class Strips(NamedTuple):
    """What one rank does to hold its part of ``want`` from an operand laid out as ``src``."""

    sends: tuple  #: (peer, region of the operand's block) for every other rank that needs cells
    recvs: tuple  #: (peer, region of the receive buffer) for every other rank that sends cells
    box: tuple  #: the receive buffer's shape: the bounding box of what arrives
    #: (region of the result's block, from the buffer?, region of the operand's block or of the buffer):
    #: pieces that tile the result's block
    pieces: tuple


@lru_cache(maxsize=512)
def strips(src: Layout, want: Layout, rank: int) -> Strips:
    """The messages and pieces that align ``rank``'s part of an operand laid out as ``src`` with ``want``."""
    plan = redistribution_plan(src, want, rank)
    sends = tuple((p, r) for p, r in plan.sends if p != rank)
    recvs = [(p, r) for p, r in plan.recvs if p != rank]
    ndim = len(src.shape)
    # the received cells (boundary strips, for shifted slices) land in a buffer of their bounding box only
    corner = [min((r[a].start for _, r in recvs), default=0) for a in range(ndim)]
    box = tuple(max(max((r[a].stop for _, r in recvs), default=0) - corner[a], 0) for a in range(ndim))
    moved = tuple((p, tuple(slice(sl.start - c, sl.stop - c) for sl, c in zip(r, corner))) for p, r in recvs)
    own = [(dst, False, src_region) for (p, src_region), (_, dst) in
           zip([s for s in plan.sends if s[0] == rank], [r for r in plan.recvs if r[0] == rank])]
    arriving = [(r, True, m) for (_, r), (_, m) in zip(recvs, moved)]
    return Strips(sends, moved, box, tuple(own + arriving))


def cells(shape: tuple, regions: list) -> list:
    """The cells (a ``(lo, hi)`` pair per axis) that ``regions`` (lists of block regions) cut ``shape`` into."""
    cuts = [{0, n} for n in shape]
    for pieces in regions:
        for region in pieces:
            for a, sl in enumerate(region):
                cuts[a].update((sl.start, sl.stop))
    bounds = [sorted(c) for c in cuts]
    return list(product(*[list(zip(b[:-1], b[1:])) for b in bounds]))


class BinaryPlan(NamedTuple):
    """``f(a, b)`` for two DArrays of one shape on ``layout``, on one rank."""

    layout: Layout  #: the result's layout
    shape: tuple  #: the result's block shape on this rank (owned cells)
    operands: tuple  #: per operand: its :class:`Strips`, or None when its own cells are the result's
    #: per cell: (index of the result's block, per operand (from the buffer?, index of its source)); the cells
    #: that need no received strip come first
    cells: tuple
    #: whether an operand's block may take the result: the result has no halo and an operand's own cells are its
    reuses: bool
    early: int  #: how many leading cells need no received strip: they are computed while the strips travel
    #: (operand's index, communicator, dtype) -> the operand's bound strips (``comm.bind_strips``), made when met
    routes: dict


def binary_plan(a: Layout, b: Layout, layout: Layout, rank: int) -> BinaryPlan:
    """Work out once how two operands laid out as ``a`` and ``b`` meet on ``layout`` (see the module)."""
    operands, regions = [], []
    want = layout.without_halo()
    for src in (a, b):
        if src.blocks_key == layout.blocks_key or (src.is_replicated and layout.is_replicated):
            operands.append(None)
        else:
            operands.append(strips(src, want, rank))
            regions.append([piece[0] for piece in operands[-1].pieces])
    shape = layout.block_shape(rank)
    plan = []
    for cell in cells(shape, regions) if 0 not in shape else ():
        own = tuple(slice(lo, hi) for lo, hi in cell)
        sources = []
        for operand in operands:
            if operand is None:  # the operand's local cells, as the result's
                sources.append((False, own))
                continue
            for region, from_buffer, index in operand.pieces:  # pieces tile the block: the cell lies in one
                if all(sl.start <= lo and hi <= sl.stop for sl, (lo, hi) in zip(region, cell)):
                    sources.append((from_buffer, tuple(slice(i.start + lo - sl.start, i.start + hi - sl.start)
                                                       for i, sl, (lo, hi) in zip(index, region, cell))))
                    break
            else:  # pragma: no cover
                raise AssertionError(f"elementwise: cell {cell} is covered by no piece")
        plan.append(((*own, ...), tuple(sources)))  # `...`: a view also at 0-d
    plan.sort(key=lambda cell: any(from_buffer for from_buffer, _ in cell[1]))  # (stable: own cells first)
    early = sum(not any(from_buffer for from_buffer, _ in cell[1]) for cell in plan)
    return BinaryPlan(layout, shape, tuple(operands), tuple(plan),
                      not layout.has_halo and any(operand is None for operand in operands), early, {})


#: (ufunc, dtype, dtype) -> the result's dtype, as the ufunc resolves it
_RESULT_DTYPES: dict = {}


def _result_dtype(f: np.ufunc, a: np.dtype, b: np.dtype) -> np.dtype:
    key = (f, a, b)
    found = _RESULT_DTYPES.get(key)
    if found is None:
        if len(_RESULT_DTYPES) > 4096:
            _RESULT_DTYPES.clear()
        found = _RESULT_DTYPES[key] = f.resolve_dtypes((a, b, None))[2]
    return found


def run_binary(plan: BinaryPlan, f: Any, a, b, out) -> Any:
    """Replay ``plan`` with the NumPy ufunc ``f`` on DArrays ``a`` and ``b`` into ``out`` (a new block if None).

    Both operands' strips travel together, while the cells that need none of
    them are computed; each cell is one ufunc call.
    """
    if _recorder.active is None:
        a_buffer, b_buffer, requests = _start(plan, a, b)
    else:
        with _recorder.labelled("align"):
            a_buffer, b_buffer, requests = _start(plan, a, b)
    # an operand with strips is indexed in its whole block; one without, in its owned cells
    a_block = a._block if a_buffer is not None or not a._layout.has_halo else a.local
    b_block = b._block if b_buffer is not None or not b._layout.has_halo else b.local
    if out is None:
        a_dtype, b_dtype = a._block.dtype, b._block.dtype
        dtype = _RESULT_DTYPES.get((f, a_dtype, b_dtype))  # (dtypes are falsy: no ``or``)
        out = np.empty(plan.shape, dtype=_result_dtype(f, a_dtype, b_dtype) if dtype is None else dtype)
    cells, early = plan.cells, plan.early
    for index, ((_, a_index), (_, b_index)) in cells[:early] if early < len(cells) else cells:
        f(a_block[a_index], b_block[b_index], out=out[index])
    if requests:
        if _recorder.active is None:
            for request in requests:
                request.wait()
        else:
            with _recorder.labelled("align"):
                for request in requests:
                    request.wait()
        for index, ((a_from_buffer, a_index), (b_from_buffer, b_index)) in cells[early:]:
            f((a_buffer if a_from_buffer else a_block)[a_index], (b_buffer if b_from_buffer else b_block)[b_index],
              out=out[index])
    return out


def _start(plan: BinaryPlan, a, b) -> tuple:
    """Start moving both operands' strips: (a's buffer, b's buffer, requests); None for an operand with none.

    Each operand's strips are bound once per communicator and dtype
    (:meth:`bind_strips`): the buffer they land in is the plan's, read by
    :func:`run_binary` before it returns.
    """
    buffers, requests = [None, None], []
    for i, x, operand in ((0, a, plan.operands[0]), (1, b, plan.operands[1])):
        if operand is not None:
            block = x._block
            route = plan.routes.get((i, x._comm, block.dtype))
            if route is None:
                route = plan.routes[i, x._comm, block.dtype] = x._comm.bind_strips(
                    np.empty(operand.box, dtype=block.dtype), operand.sends, operand.recvs)
            buffers[i] = route.buffer
            requests.append(route.start(block))
    return buffers[0], buffers[1], requests
