"""Adaptive average / max pooling on ShardTensors, where the cut allows it.

Output ``i`` of an axis of ``n`` cells pooled to ``O`` reads the window
``[floor(i n / O), ceil((i + 1) n / O))``. On a cut axis:

- ``O == 1`` (global pooling, ``AdaptiveAvgPool2d(1)``): a mean / max over
  the axis, reduced over the ranks (the result is whole along it);
- otherwise every window must lie inside one block (block edges on window
  edges, e.g. blocks of multiples of ``n / O``): each block pools its own
  windows, no message; a window that straddles two blocks raises
  :class:`NotImplementedError` naming the window and the layout.

Uncut spatial axes are pooled by torch's own kernel on the block.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .._errors import message
from ._tensor import ShardTensor, local, register, unsupported, wrap

__all__ = ["windows"]

_AVG = {F.adaptive_avg_pool1d: 1, F.adaptive_avg_pool2d: 2, F.adaptive_avg_pool3d: 3}
_MAX = {}
for _n in (1, 2, 3):
    for _f in (getattr(F, f"adaptive_max_pool{_n}d"), getattr(F, f"adaptive_max_pool{_n}d_with_indices", None),
               getattr(torch, f"adaptive_max_pool{_n}d", None)):
        if _f is not None:
            _MAX[_f] = _n


def windows(n: int, o: int):
    """torch's adaptive windows ``[(start, stop)]`` of ``n`` cells pooled to ``o``."""
    return [((i * n) // o, ((i + 1) * n + o - 1) // o) for i in range(o)]


def _sizes(name, output_size, shape, nsp):
    if isinstance(output_size, int) or output_size is None:
        output_size = (output_size,) * nsp
    output_size = tuple(output_size)
    if len(output_size) != nsp:
        raise ValueError(message(name, "output_size must have one entry per spatial axis", output_size, nsp))
    out = tuple(shape[i] if o is None else int(o) for i, o in enumerate(output_size))
    if any(o <= 0 for o in out):
        raise ValueError(message(name, "output_size must be positive", out))
    return out


@register(*_AVG, *_MAX)
def _adaptive(func, args, kwargs):
    avg = func in _AVG
    nsp = _AVG[func] if avg else _MAX[func]
    name = f"adaptive_{'avg' if avg else 'max'}_pool{nsp}d"
    b = dict({"return_indices": False}, **dict(zip(("input", "output_size", "return_indices"), args)), **kwargs)
    x = b["input"]
    if not avg and (b["return_indices"] or "with_indices" in getattr(func, "__name__", "")):
        raise unsupported(func, x, "return_indices (indices into a cut tensor)")
    lay = x._dlayout
    if len(lay.shape) != nsp + 2:
        raise unsupported(func, x, f"the input must be batched, (N, C, *spatial) with {nsp + 2} axes")
    out_size = _sizes(name, b["output_size"], lay.shape[2:], nsp)
    whole = [2 + i for i in range(nsp) if out_size[i] == 1 and lay.axis_dim[2 + i] is not None]
    if whole:  # global pooling along a cut axis: a reduction over the ranks
        x = (torch.mean if avg else torch.amax)(x, dim=whole, keepdim=True)
        if not isinstance(x, ShardTensor):
            return _TORCH[avg][nsp](x, out_size)
        lay = x._dlayout
    rank = x._dcomm.rank
    start, bshape = lay.block_start(rank), lay.block_shape(rank)
    sizes, mine = list(lay.sizes), {}
    for i in range(nsp):
        ax, n, o = 2 + i, lay.shape[2 + i], out_size[i]
        sizes[ax] = (o,)
        if lay.axis_dim[ax] is None:
            continue
        offs = lay.offsets[ax]
        owner = []
        for k, (s, e) in enumerate(windows(n, o)):
            blk = next(r for r in range(len(offs) - 1) if offs[r] <= s < offs[r + 1])
            if e > offs[blk + 1]:
                raise unsupported(func, x, f"output {k} of axis {ax} pools cells [{s}, {e}), which straddle the "
                                           f"blocks at {offs[1:-1]}; cut axis {ax} with no window across a block edge "
                                           f"(e.g. at multiples of {n}/{o} cells)")
            owner.append(blk)
        sizes[ax] = tuple(owner.count(r) for r in range(len(offs) - 1))
        mine[ax] = [(s - start[ax], e - start[ax]) for s, e in windows(n, o) if start[ax] <= s < start[ax] + bshape[ax]]
    out_layout = lay.replace(shape=lay.shape[:2] + out_size, sizes=tuple(sizes))
    xl = local(x)
    target = tuple(len(mine[2 + i]) if 2 + i in mine else out_size[i] for i in range(nsp))
    if any(n == 0 for n in xl.shape[2:]) or any(n == 0 for n in target):
        return wrap(xl.new_zeros(xl.shape[:2] + target) + xl.sum() * 0, out_layout, x._dcomm)
    keep = tuple(xl.shape[2 + i] if 2 + i in mine else out_size[i] for i in range(nsp))
    y = _TORCH[avg][nsp](xl, keep)  # the uncut axes (a cut axis kept: one-cell windows)
    for ax, wins in mine.items():
        parts = [y.narrow(ax, s, e - s) for s, e in wins]
        y = torch.cat([p.mean(ax, keepdim=True) if avg else p.amax(ax, keepdim=True) for p in parts], dim=ax)
    return wrap(y, out_layout, x._dcomm)


_TORCH = {True: {1: F.adaptive_avg_pool1d, 2: F.adaptive_avg_pool2d, 3: F.adaptive_avg_pool3d},
          False: {1: F.adaptive_max_pool1d, 2: F.adaptive_max_pool2d, 3: F.adaptive_max_pool3d}}
