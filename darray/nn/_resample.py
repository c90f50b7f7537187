"""``interpolate``: nearest and (bi/tri)linear resampling with torch's semantics on cut fields.

Resampling is separable: one op per spatial axis whose length changes. Along
that axis output ``o`` reads input cells ``i0[o]`` and ``i1[o] = i0[o] + 1``
(linear; clamped at the last cell) with weights ``l0, l1``, or ``i0[o]``
alone (nearest), computed exactly as torch's CPU kernels do (``scale_factor``
given: the coordinate scale is ``1 / scale_factor`` unless
``recompute_scale_factor``; ``align_corners``; nearest indices in float32).
Output ``o`` is computed by the block owning ``i0[o]``, so a block needs at
most one ghost cell of its upper neighbour (linear) or none (nearest):
the halo is exchanged forward and its gradient returned to the owner backward.

The local kernel is Array-API only: the output is a sum of ``take``s along
the axis times weights; the gradient is the transposed sparse map, grouped by
input cell (a few ``take``s: as many as the most outputs any input feeds).
Nearest upsampling by an integer factor uses ``repeat`` and a reshaped sum.
"""

from __future__ import annotations

import math
import numbers
from functools import lru_cache

import numpy as np

from .. import autodiff as ad
from .._errors import message
from .._layout import Layout
from ..autodiff import apply, register
from ._util import data, wrap_storage, zeros

__all__ = ["interpolate", "upsample"]

_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3}
_MODES = ("nearest", "nearest-exact") + tuple(_LINEAR)


def _taps(mode, n_in, n_out, align_corners, scale):
    """Global ``(index, weight)`` pairs per output cell: arrays of shape ``(taps, n_out)``."""
    o = np.arange(n_out)
    if mode in ("nearest", "nearest-exact"):
        if n_out == n_in:
            idx = o
        elif n_out == 2 * n_in and mode == "nearest":
            idx = o >> 1
        else:
            s = np.float32(1.0 / scale) if scale else np.float32(n_in) / np.float32(n_out)
            pos = o.astype(np.float32) * s if mode == "nearest" else (o + 0.5) * np.float64(s)
            idx = np.minimum(np.floor(np.asarray(pos, dtype=np.float32)).astype(np.int64), n_in - 1)
        return idx[None], np.ones((1, n_out))
    if n_out == n_in:
        return np.stack([o, o]), np.stack([np.ones(n_out), np.zeros(n_out)])
    if align_corners:
        ratio = (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
        src = ratio * o
    else:
        ratio = 1.0 / scale if scale else n_in / n_out
        src = np.maximum(ratio * (o + 0.5) - 0.5, 0.0)
    i0 = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n_in - 1)
    l1 = np.clip(src - i0, 0.0, 1.0)
    i1 = i0 + (i0 < n_in - 1)
    return np.stack([i0, i1]), np.stack([1.0 - l1, l1])


class AxisPlan:
    """Resampling of one axis of one layout: output layout, halo, per-rank gather maps (cached)."""

    def __init__(self, layout: Layout, axis, n_out, mode, align_corners, scale):
        n_in = layout.shape[axis]
        self.axis, self.mode = axis, mode
        self.idx, self.w = _taps(mode, n_in, n_out, align_corners, scale)
        offs = np.asarray(layout.offsets[axis])
        firsts = np.searchsorted(self.idx[0], offs, side="left")
        firsts[-1] = n_out
        self.firsts = firsts
        reach = 0
        for b in range(len(offs) - 1):
            if firsts[b + 1] > firsts[b]:
                part = self.idx[:, firsts[b]:firsts[b + 1]]
                reach = max(reach, int(part.max()) - int(offs[b + 1]) + 1, int(offs[b]) - int(part.min()))
        self.halo = reach
        shape, sizes = list(layout.shape), list(layout.sizes)
        shape[axis], sizes[axis] = n_out, tuple(int(firsts[b + 1] - firsts[b]) for b in range(len(offs) - 1))
        self.out = layout.replace(shape=tuple(shape), sizes=tuple(sizes))
        factor = n_out // n_in if n_in else 0
        self.repeat = factor if (mode == "nearest" and n_in and n_out == factor * n_in
                                 and np.array_equal(self.idx[0], np.arange(n_out) // factor)) else 0
        self._local: dict = {}

    def maps(self, padded: Layout, rank: int, xp, device, dtype):
        """Local gather maps: forward ``[(index, weight)]`` per tap, backward the same grouped by input cell."""
        key = (rank, padded.halo[self.axis], id(xp), str(device), str(dtype))
        found = self._local.get(key)
        if found is not None:
            return found
        ax = self.axis
        origin = padded.block_start(rank)[ax] - padded.halo[ax]
        length = padded.padded_shape(rank)[ax]
        b = padded.block_index(rank)[ax]
        lo, hi = int(self.firsts[b]), int(self.firsts[b + 1])
        idx, w = self.idx[:, lo:hi] - origin, self.w[:, lo:hi]
        shape = [1] * padded.ndim

        def vec(values):  # weights shaped to broadcast along the axis
            shape[ax] = len(values)
            return xp.asarray(np.ascontiguousarray(values).reshape(shape), dtype=dtype, device=device)

        keep = [t for t in range(idx.shape[0]) if np.any(w[t] != 0)] or [0]
        forward = [(xp.asarray(np.ascontiguousarray(idx[t]), dtype=xp.int64, device=device), vec(w[t]))
                   for t in keep]
        # backward: the transposed map, grouped by input cell; pass m takes the m-th output each input feeds
        rows = np.concatenate([idx[t] for t in keep])          # input cell (padded block) of every tap
        cols = np.concatenate([np.arange(hi - lo)] * len(keep))  # its output cell (owned block)
        vals = np.concatenate([w[t] for t in keep])
        nz = vals != 0
        rows, cols, vals = rows[nz], cols[nz], vals[nz]
        order = np.lexsort((cols, rows))
        rows, cols, vals = rows[order], cols[order], vals[order]
        counts = np.bincount(rows, minlength=length)
        nth = np.arange(rows.size) - (np.cumsum(counts) - counts)[rows]
        backward = []
        for m in range(int(counts.max()) if rows.size else 0):
            sel = nth == m
            index, weight = np.zeros(length, np.int64), np.zeros(length)
            index[rows[sel]], weight[rows[sel]] = cols[sel], vals[sel]
            backward.append((xp.asarray(index, dtype=xp.int64, device=device), vec(weight)))
        found = self._local[key] = (forward, backward)
        return found


@lru_cache(maxsize=256)
def _axis_plan(layout, axis, n_out, mode, align_corners, scale) -> AxisPlan:
    return AxisPlan(layout, axis, n_out, mode, align_corners, scale)


def _resample_forward(ctx, p, plan: AxisPlan):
    xp, rank, ax = p._xp, p._comm.rank, plan.axis
    oshape = plan.out.block_shape(rank)
    if any(n == 0 for n in oshape):
        return wrap_storage(zeros(p, oshape), plan.out, p)
    if plan.repeat:
        return wrap_storage(xp.repeat(p.local, plan.repeat, axis=ax), plan.out, p)
    forward, _ = plan.maps(p._layout, rank, xp, p.device, p._block.dtype)
    out = None
    for index, weight in forward:
        term = xp.take(p._block, index, axis=ax) * weight
        out = term if out is None else out + term
    return wrap_storage(out, plan.out, p)


def _resample_backward(ctx, g):
    p = ctx.xs[0]
    plan = ctx.params["plan"]
    xp, rank, ax = p._xp, p._comm.rank, plan.axis
    gl = g.local
    if any(n == 0 for n in gl.shape):
        return (wrap_storage(zeros(p, p._block.shape), p._layout, p),)
    if plan.repeat:  # a sum of strided views: much faster than a reduction over a short inner axis
        out = None
        for i in range(plan.repeat):
            part = gl[(slice(None),) * ax + (slice(i, None, plan.repeat), ...)]
            out = part if out is None else out + part
        return (wrap_storage(out if plan.repeat > 1 else xp.asarray(out, copy=True), p._layout, p),)
    _, backward = plan.maps(p._layout, rank, xp, p.device, p._block.dtype)
    out = None
    for index, weight in backward:
        term = xp.take(gl, index, axis=ax) * weight
        out = term if out is None else out + term
    if out is None:
        out = zeros(p, p._block.shape)
    return (wrap_storage(out, p._layout, p),)


register("resample_local", _resample_forward, _resample_backward)


def _sizes(func, shape, nsp, size, scale_factor, recompute):
    """Output sizes and the scales torch passes to its kernels (None: computed from the sizes)."""
    if (size is None) == (scale_factor is None):
        raise ValueError(message(func, "exactly one of size and scale_factor must be given", (size, scale_factor),
                                 "size=... or scale_factor=..."))
    if size is not None:
        sizes = (size,) * nsp if isinstance(size, numbers.Integral) else tuple(size)
        if len(sizes) != nsp or not all(isinstance(s, numbers.Integral) and s >= 1 for s in sizes):
            raise ValueError(message(func, "size needs one positive int per spatial axis", size,
                                     f"{nsp} ints >= 1"))
        if recompute:
            raise ValueError(message(func, "recompute_scale_factor needs scale_factor, not size", recompute,
                                     "None or False with size"))
        return tuple(int(s) for s in sizes), (None,) * nsp
    scales = (scale_factor,) * nsp if isinstance(scale_factor, numbers.Real) else tuple(scale_factor)
    if len(scales) != nsp or not all(isinstance(s, numbers.Real) and s > 0 for s in scales):
        raise ValueError(message(func, "scale_factor needs one positive number per spatial axis", scale_factor,
                                 f"{nsp} numbers > 0"))
    sizes = tuple(int(math.floor(float(n) * float(s))) for n, s in zip(shape, scales))
    if any(s < 1 for s in sizes):
        raise ValueError(message(func, "scale_factor gives an empty output", scale_factor,
                                 f"at least one output cell per axis of {tuple(shape)}"))
    return sizes, ((None,) * nsp if recompute else tuple(float(s) for s in scales))


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                recompute_scale_factor=None, antialias: bool = False):
    """Resample ``input`` ``(N, C, *spatial)`` to ``size`` or by ``scale_factor`` (torch's ``interpolate``).

    ``mode``: ``'nearest'``, ``'nearest-exact'``, ``'linear'`` (3-d input),
    ``'bilinear'`` (4-d) or ``'trilinear'`` (5-d); ``align_corners`` (linear
    modes only, default False) and ``recompute_scale_factor`` as in torch.
    The result equals torch's on the whole field, whatever the blocks; linear
    modes exchange one ghost cell per resampled axis (forward and backward).
    """
    func = "interpolate"
    xd = data(input)
    if mode not in _MODES:
        raise ValueError(message(func, "unsupported mode", mode, f"one of {_MODES}"))
    nsp = xd.ndim - 2
    if nsp < 1:
        raise ValueError(message(func, "input must be (N, C, *spatial)", tuple(xd.shape), "at least 3-d"))
    if mode in _LINEAR and _LINEAR[mode] != nsp:
        raise ValueError(message(func, f"mode={mode!r} needs a {_LINEAR[mode] + 2}-d input", tuple(xd.shape),
                                 f"a {_LINEAR[mode] + 2}-d input"))
    if align_corners is not None and mode not in _LINEAR:
        raise ValueError(message(func, "align_corners can only be set with the linear modes", align_corners,
                                 "None with mode='nearest'"))
    if antialias:
        raise NotImplementedError(message(func, "antialias is not supported", antialias, "False"))
    if xd.dtype.kind != "f":
        raise TypeError(message(func, "resampling needs a real floating-point input", xd.dtype,
                                "float32 or float64"))
    sizes, scales = _sizes(func, xd.shape[2:], nsp, size, scale_factor, recompute_scale_factor)
    align = bool(align_corners)
    layout = xd._layout.without_halo()
    plans = []
    for i, (n_out, scale) in enumerate(zip(sizes, scales)):
        if n_out == layout.shape[2 + i]:
            continue  # torch: the identity when the length does not change
        plan = _axis_plan(layout, 2 + i, n_out, mode, align, scale)
        plans.append(plan)
        layout = plan.out
    x = input
    if xd._layout.without_halo() != xd._layout:
        x = ad.redistribute(x, layout=xd._layout.without_halo())
    for plan in plans:
        depth = [0] * xd.ndim
        depth[plan.axis] = plan.halo
        padded = ad.halo(x, tuple(depth), "none") if plan.halo else x
        x = apply("resample_local", padded, plan=plan)
    return x if isinstance(x, ad.Variable) else ad.Variable(x)


def upsample(input, size=None, scale_factor=None, mode: str = "nearest", align_corners=None):
    """torch's (deprecated) ``upsample``: :func:`interpolate`."""
    return interpolate(input, size, scale_factor, mode, align_corners)
