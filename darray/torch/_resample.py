"""``interpolate`` / ``nn.Upsample`` on ShardTensors by integer factors: local, with a one-cell halo for the
linear modes.

``nearest`` (and ``nearest-exact``) upsampling by an integer factor ``s``
reads only the block's own cells: every block grows ``s`` times. The linear
modes (``linear``, ``bilinear``, ``trilinear``, ``align_corners=False``)
read one neighbour on each side: the block is extended by a halo of one
cell with torch's edge clamping (``replicate``) at the global edges,
interpolated, and the ``s`` output cells of each ghost are cut off again;
this is exactly torch's result on the whole field.

The linear modes with ``align_corners=True``, or with any other output size
(non-integer factors, downsampling), take the general path
(:func:`linear_sources`): output ``o`` of an axis reads input cells
``i0 = floor(x)`` and ``i0 + 1`` at torch's source coordinate ``x``, and
belongs to the block that owns ``i0``; a halo of one cell (the ``i0 + 1``
past the block's end) is all that moves, and each axis is a gather of two
rows and a weighted sum, in torch's autograd.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .._errors import message
from ._collective import halo
from ._tensor import local, register, unsupported, wrap

__all__ = ["linear_sources"]

_LINEAR = ("linear", "bilinear", "trilinear")


def _factors(func, x, size, scale):
    lay = x._dlayout
    nsp = len(lay.shape) - 2
    if size is not None:
        size = (size,) * nsp if isinstance(size, int) else tuple(size)
        out = []
        for n, m in zip(lay.shape[2:], size):
            if n == 0 or m % n:
                raise unsupported(func, x, f"size {tuple(size)} is not an integer multiple of {lay.shape[2:]}")
            out.append(m // n)
        return tuple(out)
    scale = (scale,) * nsp if isinstance(scale, (int, float)) else tuple(scale)
    if any(float(s) != int(s) or s < 1 for s in scale):
        raise unsupported(func, x, f"scale_factor {scale} (integer factors only)")
    return tuple(int(s) for s in scale)


@register(F.interpolate, F.upsample if hasattr(F, "upsample") else F.interpolate)
def _interpolate(func, args, kwargs):
    names = ("input", "size", "scale_factor", "mode", "align_corners", "recompute_scale_factor", "antialias")
    b = dict({"size": None, "scale_factor": None, "mode": "nearest", "align_corners": None,
              "recompute_scale_factor": None, "antialias": False}, **dict(zip(names, args)), **kwargs)
    x, mode = b["input"], b["mode"]
    lay, comm = x._dlayout, x._dcomm
    if lay.axis_dim[1] is not None:
        raise unsupported(func, x, "the channel axis (1) is cut")
    if mode not in ("nearest", "nearest-exact") + _LINEAR or b["antialias"] or (
            b["align_corners"] and mode not in _LINEAR):
        raise unsupported(func, x, f"mode={mode!r}, align_corners={b['align_corners']}, antialias="
                                   f"{b['antialias']} (nearest or linear modes, no antialias)")
    if mode in _LINEAR and (b["align_corners"] or not _integer(x, b["size"], b["scale_factor"])):
        return _general(func, x, b["size"], b["scale_factor"], bool(b["align_corners"]))
    s = _factors(func, x, b["size"], b["scale_factor"])
    shape = lay.shape[:2] + tuple(n * f for n, f in zip(lay.shape[2:], s))
    sizes = lay.sizes[:2] + tuple(tuple(n * f for n in per) for per, f in zip(lay.sizes[2:], s))
    out_layout = lay.replace(shape=shape, sizes=sizes)
    xl = local(x)
    scale = tuple(float(f) for f in s)
    linear = mode in _LINEAR
    depth = (0, 0) + tuple(1 if linear and lay.axis_dim[2 + i] is not None else 0 for i in range(len(s)))
    padded = halo(xl, lay, comm, depth, "replicate") if any(depth) else xl  # every rank joins the exchange
    if any(n == 0 for n in xl.shape):
        out = xl.new_zeros(tuple(n * f for n, f in zip(xl.shape, (1, 1) + s))) + padded.sum() * 0
        return wrap(out, out_layout, comm)
    if not linear:
        return wrap(F.interpolate(xl, scale_factor=scale, mode=mode), out_layout, comm)
    out = F.interpolate(padded, scale_factor=scale, mode=mode, align_corners=False)
    for i, f in enumerate(s):
        if depth[2 + i]:
            out = out.narrow(2 + i, f, out.shape[2 + i] - 2 * f)
    return wrap(out, out_layout, comm)


def _integer(x, size, scale) -> bool:
    lay = x._dlayout
    nsp = len(lay.shape) - 2
    if size is not None:
        size = (size,) * nsp if isinstance(size, int) else tuple(size)
        return all(n and m % n == 0 for n, m in zip(lay.shape[2:], size))
    scale = (scale,) * nsp if isinstance(scale, (int, float)) else tuple(scale)
    return all(float(f) == int(f) and f >= 1 for f in scale)


def linear_sources(n: int, m: int, align_corners: bool, scale=None):
    """``(i0, i1, lam)`` per output of an axis of ``n`` cells resized to ``m`` (torch's linear interpolation):
    output ``o`` is ``(1 - lam[o]) * x[i0[o]] + lam[o] * x[i1[o]]``."""
    if align_corners:
        r = (n - 1) / (m - 1) if m > 1 else 0.0
    else:
        r = 1.0 / scale if scale else n / m
    i0, i1, lam = [], [], []
    for o in range(m):
        src = r * o if align_corners else max(r * (o + 0.5) - 0.5, 0.0)
        a = min(math.floor(src), n - 1)
        i0.append(a)
        i1.append(a + (1 if a < n - 1 else 0))
        lam.append(src - a)
    return i0, i1, lam


def _general(func, x, size, scale, align):
    lay, comm = x._dlayout, x._dcomm
    nsp = len(lay.shape) - 2
    if size is not None:
        out = (size,) * nsp if isinstance(size, int) else tuple(int(m) for m in size)
        scales = (None,) * nsp
    else:
        scales = (scale,) * nsp if isinstance(scale, (int, float)) else tuple(scale)
        out = tuple(math.floor(n * float(f)) for n, f in zip(lay.shape[2:], scales))
    if len(out) != nsp or any(m <= 0 for m in out):
        raise ValueError(message("interpolate", "the output size must be positive, one per spatial axis", out))
    rank = comm.rank
    start, bshape = lay.block_start(rank), lay.block_shape(rank)
    depth = (0, 0) + tuple(1 if lay.axis_dim[2 + i] is not None else 0 for i in range(nsp))
    xl = local(x)
    y = halo(xl, lay, comm, depth, "replicate") if any(depth) else xl
    sizes = list(lay.sizes[:2])
    for i in range(nsp):
        ax, n, m = 2 + i, lay.shape[2 + i], out[i]
        i0, i1, lam = linear_sources(n, m, align, None if align or scales[i] is None else float(scales[i]))
        offs = lay.offsets[ax]
        sizes.append(tuple(sum(offs[r] <= a < offs[r + 1] for a in i0) for r in range(len(offs) - 1)))
        first = start[ax] - depth[ax]  # the global cell at local index 0
        own = [o for o, a in enumerate(i0) if start[ax] <= a < start[ax] + bshape[ax]]
        idx0 = torch.tensor([i0[o] - first for o in own], dtype=torch.long, device=y.device)
        idx1 = torch.tensor([i1[o] - first for o in own], dtype=torch.long, device=y.device)
        w = torch.tensor([lam[o] for o in own], dtype=y.dtype, device=y.device)
        w = w.reshape((-1,) + (1,) * (nsp - 1 - i))
        y = y.index_select(ax, idx0) * (1 - w) + y.index_select(ax, idx1) * w
    shape = lay.shape[:2] + out
    return wrap(y, lay.replace(shape=shape, sizes=tuple(sizes)), comm)
