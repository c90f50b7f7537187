"""``interpolate`` / ``nn.Upsample`` on ShardTensors by integer factors: local, with a one-cell halo for the
linear modes.

``nearest`` (and ``nearest-exact``) upsampling by an integer factor ``s``
reads only the block's own cells: every block grows ``s`` times. The linear
modes (``linear``, ``bilinear``, ``trilinear``, ``align_corners=False``)
read one neighbour on each side: the block is extended by a halo of one
cell with torch's edge clamping (``replicate``) at the global edges,
interpolated, and the ``s`` output cells of each ghost are cut off again;
this is exactly torch's result on the whole field.
"""

from __future__ import annotations

import torch.nn.functional as F

from ._collective import halo
from ._tensor import local, register, unsupported, wrap

__all__ = []

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
    if mode not in ("nearest", "nearest-exact") + _LINEAR or b["align_corners"] or b["antialias"]:
        raise unsupported(func, x, f"mode={mode!r}, align_corners={b['align_corners']}, antialias="
                                   f"{b['antialias']} (nearest or linear modes without align_corners)")
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
