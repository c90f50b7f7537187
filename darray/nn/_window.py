"""Sliding windows over cut spatial axes: which outputs each block computes and which halo that needs.

Convolutions and pooling share this geometry. Along spatial axis ``i`` output
``o`` reads input cells ``o * stride - pad_lo + j * dilation`` for
``j < kernel``. Output ``o`` is computed by the block that owns its window's
centre (clipped into the axis), so a stride-1 'same' convolution keeps the
input's blocks and empty blocks own no outputs. The halo is the furthest any
block's windows reach past its own cells (symmetric per axis, at most the
axis length); cells past the halo (explicit padding wider than the halo)
are filled locally.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .._errors import message
from .._layout import Layout

__all__ = ["WindowPlan", "window_plan", "output_length"]


def output_length(func, axis, n, kernel, stride, dilation, pads, ceil_mode=False) -> int:
    """torch's output size along one axis (``ceil_mode``: the last window may start in the right padding only)."""
    span = dilation * (kernel - 1) + 1
    pl, pr = pads
    room = n + pl + pr - span
    if room < 0:
        raise ValueError(message(func, f"input too small along spatial axis {axis}", n,
                                 f"at least {span - pl - pr} cells for this kernel, dilation and padding"))
    out = (-(-room // stride) if ceil_mode else room // stride) + 1
    if ceil_mode and (out - 1) * stride >= n + pl:  # a window must start inside the input or the left padding
        out -= 1
    return out


class WindowPlan:
    """Geometry of one windowed op on one input layout (cached): halo widths and the output layout."""

    def __init__(self, func, layout: Layout, channels, ksize, stride, dilation, pads, ceil_mode=False):
        nsp = len(ksize)
        self.ksize, self.stride, self.dilation, self.pads = ksize, stride, dilation, pads
        self.span = tuple(d * (k - 1) + 1 for k, d in zip(ksize, dilation))
        halo = [0] * layout.ndim
        shape, sizes = list(layout.shape), list(layout.sizes)
        if channels is not None:  # a convolution: the channel axis is whole and changes length
            shape[1], sizes[1] = channels, (channels,)
        self.reach, self.n_out = [], []
        for i in range(nsp):
            ax = 2 + i
            n, s, span, (pl, _) = layout.shape[ax], stride[i], self.span[i], pads[i]
            n_out = output_length(func, i, n, ksize[i], s, dilation[i], pads[i], ceil_mode)
            centre = np.clip(np.arange(n_out) * s - pl + (span - 1) // 2, 0, max(n - 1, 0))
            offs = np.asarray(layout.offsets[ax])
            firsts = np.searchsorted(centre, offs, side="left")
            firsts[-1] = n_out
            counts, reach = [], 0
            for b in range(len(offs) - 1):
                o_lo, o_hi = int(firsts[b]), int(firsts[b + 1])
                counts.append(o_hi - o_lo)
                if o_hi > o_lo:
                    need_lo, need_hi = o_lo * s - pl, (o_hi - 1) * s - pl + span
                    reach = max(reach, int(offs[b]) - need_lo, need_hi - int(offs[b + 1]))
            halo[ax] = min(reach, n)
            self.reach.append(reach)
            self.n_out.append(n_out)
            shape[ax], sizes[ax] = n_out, tuple(counts)
        self.halo = tuple(halo)
        self.out = Layout(tuple(shape), layout.dims, layout.split, tuple(sizes))

    def window(self, padded: Layout, rank: int):
        """Per spatial axis: ``(start, stop, pad_lo, pad_hi, n_out)`` in padded-block coordinates."""
        out = []
        starts, oshape, ostart = padded.block_start(rank), self.out.block_shape(rank), self.out.block_start(rank)
        pshape = padded.padded_shape(rank)
        for i in range(len(self.ksize)):
            ax = 2 + i
            h, s, span, pl = padded.halo[ax], self.stride[i], self.span[i], self.pads[i][0]
            o_lo, on = ostart[ax], oshape[ax]
            start = o_lo * s - pl - (starts[ax] - h)
            stop = start + (on - 1) * s + span if on else start
            out.append((start, stop, max(0, -start), max(0, stop - pshape[ax]), on))
        return out

    def global_start(self, rank: int):
        """Per spatial axis: the global input position of this block's first window (may be negative)."""
        ostart = self.out.block_start(rank)
        return tuple(ostart[2 + i] * s - p[0] for i, (s, p) in enumerate(zip(self.stride, self.pads)))


@lru_cache(maxsize=256)
def window_plan(func, layout, channels, ksize, stride, dilation, pads, ceil_mode=False) -> WindowPlan:
    return WindowPlan(func, layout, channels, ksize, stride, dilation, pads, ceil_mode)


def covered(block_shape, win):
    """``(inner, shape)``: the cells of the padded block that ``win`` covers, and the window block's shape."""
    inner = (slice(None),) * 2 + tuple(slice(max(a, 0), min(b, block_shape[2 + i]))
                                       for i, (a, b, *_) in enumerate(win))
    return inner, tuple(block_shape[:2]) + tuple(b - a for a, b, *_ in win)


def extract(xp, block, win, fill, device):
    """The cells ``win`` covers in the padded ``block``: a view when inside, else a copy padded with ``fill``."""
    inner, _ = covered(tuple(block.shape), win)
    sub = block[inner]
    if not any(lo or hi for _, _, lo, hi, _ in win):
        return sub, inner
    shape = tuple(sub.shape[:2]) + tuple(sub.shape[2 + i] + lo + hi for i, (_, _, lo, hi, _) in enumerate(win))
    full = xp.full(shape, fill, dtype=block.dtype, device=device)
    full[(slice(None),) * 2 + tuple(slice(lo, lo + sub.shape[2 + i])
                                    for i, (_, _, lo, _, _) in enumerate(win))] = sub
    return full, inner


def scatter_back(xp, block_shape, gsub, win, inner, device):
    """The gradient of :func:`extract`: ``gsub`` cropped and placed in a zero block of ``block_shape``."""
    crop = (slice(None),) * 2 + tuple(slice(lo, gsub.shape[2 + i] - hi) for i, (_, _, lo, hi, _) in enumerate(win))
    if tuple(block_shape) == tuple(gsub.shape) and not any(lo or hi for _, _, lo, hi, _ in win):
        return gsub
    out = xp.zeros(tuple(block_shape), dtype=gsub.dtype, device=device)
    out[inner] = gsub[crop]
    return out
