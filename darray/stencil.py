"""Ready-made stencils on distributed fields: every one moves only halo-wide strips.

All operators are built on :func:`darray.map_overlap` (one halo exchange, then
a purely local computation on each block with its ghost cells), so their cost
is one exchange of ``depth``-wide strips per call.

Boundary modes follow ``scipy.ndimage``: ``"reflect"`` (d c b a | a b c d),
``"nearest"`` (a a | a b), ``"wrap"`` (periodic), ``"constant"`` (``cval``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np

from ._api.manipulation import concat, flip
from ._api.overlap import map_overlap
from ._api.padding import pad_constant
from ._core import DArray
from ._errors import message, names_errors
from ._layout import normalize_axis

__all__ = ["laplacian", "gradient", "correlate", "convolve", "uniform_filter", "gaussian_filter", "pad"]

_MODES = {"reflect": "reflect", "nearest": "nearest", "wrap": "periodic", "periodic": "periodic"}

#: Second-derivative central-difference weights by order of accuracy.
_SECOND_DIFF = {2: (1.0, -2.0, 1.0), 4: (-1 / 12, 4 / 3, -5 / 2, 4 / 3, -1 / 12)}


def _check(func, x):
    if not isinstance(x, DArray):
        raise TypeError(message(func, "expected a DArray", type(x).__name__))
    if x.dtype.kind not in "fc":
        raise TypeError(message(func, "needs a floating-point array", x.dtype, "float32/64 or complex"))


def _boundary(func: str, mode: str, cval: float):
    if mode == "constant":
        return float(cval)
    if mode not in _MODES:
        raise ValueError(message(func, "unknown mode", mode, f"one of {sorted(_MODES) + ['constant']}"))
    return _MODES[mode]


def laplacian(x: DArray, /, *, order: int = 2, spacing=1.0, mode: str = "wrap", cval: float = 0.0) -> DArray:
    """Sum of second derivatives along every axis, central differences of accuracy ``order`` (2 or 4).

    Examples
    --------
    >>> import numpy, darray as da
    >>> x = da.asarray(numpy.arange(5.0) ** 2)
    >>> da.stencil.laplacian(x, mode="nearest").gather().tolist()
    [1.0, 2.0, 2.0, 2.0, -7.0]
    """
    _check("laplacian", x)
    if order not in _SECOND_DIFF:
        raise ValueError(message("laplacian", "unsupported order", order, f"one of {sorted(_SECOND_DIFF)}"))
    weights = _SECOND_DIFF[order]
    depth = len(weights) // 2
    h = _per_axis_spacing("laplacian", spacing, x.ndim)

    def block_laplacian(b):
        out = 0
        for axis in range(b.ndim):
            inner = [slice(depth, b.shape[a] - depth) for a in range(b.ndim)]
            for k, w in enumerate(weights):
                view = list(inner)
                view[axis] = slice(k, b.shape[axis] - 2 * depth + k)
                out = out + (w / h[axis] ** 2) * b[tuple(view)]
        return out

    return map_overlap(block_laplacian, x, depth=depth, boundary=_boundary("laplacian", mode, cval), trim=False)


def _per_axis_spacing(func, spacing, ndim):
    if isinstance(spacing, numbers.Real):
        return (float(spacing),) * ndim
    values = tuple(float(s) for s in spacing)
    if len(values) != ndim:
        raise ValueError(message(func, "one spacing per axis", values, f"{ndim} values"))
    return values


def gradient(f: DArray, /, *varargs, axis=None, edge_order: int = 1):
    """``numpy.gradient`` of a distributed field: central differences inside, one-sided at the edges.

    ``varargs`` are scalar spacings or 1-d coordinate arrays per axis (as in
    NumPy; coordinate vectors are small and replicated). Returns one DArray per
    axis (a single DArray for one axis).
    """
    _check("gradient", f)
    if edge_order not in (1, 2):
        raise ValueError(message("gradient", "edge_order must be 1 or 2", edge_order))
    axes = tuple(range(f.ndim)) if axis is None else tuple(
        normalize_axis("gradient", a, f.ndim) for a in (axis if isinstance(axis, Sequence) else (axis,)))
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacings = [float(varargs[0])] * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError(message("gradient", "wrong number of spacings", len(varargs), f"0, 1 or {len(axes)}"))
    out = [_gradient_axis(f, a, s, edge_order) for a, s in zip(axes, spacings)]
    return out[0] if len(out) == 1 else out


def _gradient_axis(f: DArray, axis: int, spacing, edge_order: int) -> DArray:
    n = f.shape[axis]
    if n < edge_order + 1:
        raise ValueError(message("gradient", f"axis {axis} is too short for edge_order={edge_order}", n,
                                 f"at least {edge_order + 1} points"))
    lead = (slice(None),) * axis

    def at(s):
        return f[lead + (s,)]

    if np.ndim(spacing) == 0:
        h = float(spacing)
        inner = (at(slice(2, None)) - at(slice(None, -2))) / (2 * h)
        if edge_order == 1:
            first = (at(slice(1, 2)) - at(slice(0, 1))) / h
            last = (at(slice(n - 1, n)) - at(slice(n - 2, n - 1))) / h
        else:
            first = (-1.5 * at(slice(0, 1)) + 2 * at(slice(1, 2)) - 0.5 * at(slice(2, 3))) / h
            last = (0.5 * at(slice(n - 3, n - 2)) - 2 * at(slice(n - 2, n - 1)) + 1.5 * at(slice(n - 1, n))) / h
        return concat([first, inner, last], axis=axis)
    coords = np.asarray(spacing.gather() if isinstance(spacing, DArray) else spacing, dtype=np.float64)
    if coords.shape != (n,):
        raise ValueError(message("gradient", "coordinates must be 1-d with the axis length", coords.shape, f"({n},)"))
    dx = np.diff(coords)
    shape = [1] * f.ndim
    shape[axis] = n - 2
    dx1, dx2 = dx[:-1].reshape(shape), dx[1:].reshape(shape)
    a, b, c = -dx2 / (dx1 * (dx1 + dx2)), (dx2 - dx1) / (dx1 * dx2), dx1 / (dx2 * (dx1 + dx2))
    inner = at(slice(None, -2)) * a + at(slice(1, -1)) * b + at(slice(2, None)) * c  # DArray first: any backend
    if edge_order == 1:
        first = (at(slice(1, 2)) - at(slice(0, 1))) / dx[0]
        last = (at(slice(n - 1, n)) - at(slice(n - 2, n - 1))) / dx[-1]
    else:
        d1, d2 = dx[0], dx[1]
        first = (at(slice(0, 1)) * (-(2 * d1 + d2) / (d1 * (d1 + d2))) + at(slice(1, 2)) * ((d1 + d2) / (d1 * d2))
                 - at(slice(2, 3)) * (d1 / (d2 * (d1 + d2))))
        d1, d2 = dx[-2], dx[-1]
        last = (at(slice(n - 3, n - 2)) * (d2 / (d1 * (d1 + d2))) - at(slice(n - 2, n - 1)) * ((d2 + d1) / (d1 * d2))
                + at(slice(n - 1, n)) * ((2 * d2 + d1) / (d2 * (d1 + d2))))
    return concat([first, inner, last], axis=axis)


def correlate(x: DArray, weights, /, *, mode: str = "reflect", cval: float = 0.0) -> DArray:
    """n-d correlation with a small kernel (``scipy.ndimage.correlate`` semantics, origin 0)."""
    _check("correlate", x)
    w = _weights("correlate", weights)
    if w.ndim != x.ndim:
        raise ValueError(message("correlate", "weights need one axis per array axis", w.shape, f"{x.ndim} axes"))
    if x.dtype == np.float32 or x.dtype == np.complex64:  # keep single precision, as scipy.ndimage does
        w = w.astype(np.float32)
    depth = tuple(k // 2 for k in w.shape)
    lo = depth
    hi = tuple(k - 1 - d for k, d in zip(w.shape, depth))
    halo = tuple(max(a, b) for a, b in zip(lo, hi))
    nonzero = np.argwhere(w != 0)

    def block_correlate(b):
        shape = tuple(n - 2 * h for n, h in zip(b.shape, halo))
        out = 0
        for index in nonzero:
            view = tuple(slice(h - d + i, h - d + i + n) for h, d, i, n in zip(halo, depth, index, shape))
            weight = w[tuple(index)]
            if not isinstance(b, np.ndarray):  # a NumPy scalar would turn other backends' blocks into ndarrays
                weight = weight.item()
            out = out + weight * b[view]
        if isinstance(out, int):
            return b[tuple(slice(h, h + n) for h, n in zip(halo, shape))] * 0
        return out

    return map_overlap(block_correlate, x, depth=halo, boundary=_boundary("correlate", mode, cval), trim=False)


def _weights(func: str, weights) -> np.ndarray:
    w = np.asarray(weights.gather() if isinstance(weights, DArray) else weights)
    if w.dtype.kind not in "biufc":
        raise TypeError(message(func, "weights must be numbers", w.dtype, "a numeric array"))
    return w


@names_errors("convolve")
def convolve(x: DArray, weights, /, *, mode: str = "reflect", cval: float = 0.0) -> DArray:
    """n-d convolution with a small kernel (``scipy.ndimage.convolve`` semantics, origin 0)."""
    w = _weights("convolve", weights)
    flipped = w[tuple(slice(None, None, -1) for _ in range(w.ndim))]
    # scipy shifts the flipped kernel's centre for even sizes
    pad = [(1, 0) if k % 2 == 0 else (0, 0) for k in w.shape]
    return correlate(x, np.pad(flipped, pad) if any(p != (0, 0) for p in pad) else flipped, mode=mode, cval=cval)


def _separable(func, x, kernels, mode, cval):
    out = x
    for axis, k in enumerate(kernels):
        if k is None:
            continue
        shape = [1] * x.ndim
        shape[axis] = k.shape[0]
        out = correlate(out, k.reshape(shape), mode=mode, cval=cval)
    return out


def uniform_filter(x: DArray, /, size=3, *, mode: str = "reflect", cval: float = 0.0) -> DArray:
    """Moving average over a box of ``size`` cells (``scipy.ndimage.uniform_filter``), separable."""
    _check("uniform_filter", x)
    if isinstance(size, (str, bytes, numbers.Real)) and not isinstance(size, numbers.Integral):
        raise TypeError(message("uniform_filter", "size must be an int or a tuple of ints", size))
    sizes = (size,) * x.ndim if isinstance(size, numbers.Integral) else tuple(size)
    if not all(isinstance(s, numbers.Integral) and not isinstance(s, bool) for s in sizes):
        raise TypeError(message("uniform_filter", "size must be an int or a tuple of ints", size))
    if any(s < 1 for s in sizes):
        raise ValueError(message("uniform_filter", "size must be at least 1", size))
    kernels = [np.full(s, 1.0 / s) if s > 1 else None for s in sizes]
    return _separable("uniform_filter", x, kernels, mode, cval)


def gaussian_filter(x: DArray, /, sigma, *, truncate: float = 4.0, mode: str = "reflect", cval: float = 0.0):
    """Gaussian smoothing (``scipy.ndimage.gaussian_filter``), separable, radius ``truncate * sigma``."""
    _check("gaussian_filter", x)
    items = (sigma,) * x.ndim if isinstance(sigma, numbers.Real) else tuple(sigma)
    if isinstance(sigma, (str, bytes)) or not all(isinstance(s, numbers.Real) and not isinstance(s, bool)
                                                  for s in items):
        raise TypeError(message("gaussian_filter", "sigma must be a number or a tuple of numbers", sigma))
    sigmas = tuple(float(s) for s in items)
    if any(s < 0 for s in sigmas):
        raise ValueError(message("gaussian_filter", "sigma must be non-negative", sigma))
    kernels: list[np.ndarray | None] = []
    for s in sigmas:
        if s <= 0:
            kernels.append(None)
            continue
        radius = int(truncate * s + 0.5)
        t = np.arange(-radius, radius + 1, dtype=np.float64)
        k = np.exp(-0.5 * (t / s) ** 2)
        kernels.append(k / k.sum())
    return _separable("gaussian_filter", x, kernels, mode, cval)


def pad(x: DArray, pad_width, mode: str = "constant", **kwargs) -> DArray:
    """``numpy.pad`` for modes constant, edge, reflect, symmetric, wrap: edge strips are sliced and joined.

    Mode constant grows the edge blocks and moves nothing (:func:`darray._api.padding.pad_constant`).
    """
    from ._api.creation import full

    if mode == "constant" and isinstance(x, DArray) and set(kwargs) <= {"constant_values"}:
        return pad_constant(x, pad_width, kwargs.get("constant_values", 0))
    if mode not in ("constant", "edge", "reflect", "symmetric", "wrap"):
        raise ValueError(message("pad", "unsupported mode", mode, "constant, edge, reflect, symmetric or wrap"))
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2))
    if np.any(widths < 0):
        raise ValueError(message("pad", "pad widths must be non-negative", pad_width))
    value = kwargs.get("constant_values", 0)
    out = x
    for axis in range(x.ndim):
        before, after = (int(v) for v in widths[axis])
        if not before and not after:
            continue
        n = out.shape[axis]
        lead = (slice(None),) * axis

        def part(s, reverse=False):
            piece = out[lead + (s,)]
            return flip(piece, axis=axis) if reverse else piece

        def strip(width, side):
            if mode == "constant":
                shape = tuple(width if a == axis else m for a, m in enumerate(out.shape))
                return full(shape, value, dtype=out.dtype, comm=out._comm)
            if mode == "edge":
                edge = part(slice(0, 1) if side == "before" else slice(n - 1, n))
                return concat([edge] * width, axis=axis)
            if mode == "wrap":
                return part(slice(n - width, n) if side == "before" else slice(0, width))
            shift = 1 if mode == "reflect" else 0
            if side == "before":
                return part(slice(shift, shift + width), reverse=True)
            return part(slice(n - width - shift, n - shift), reverse=True)

        if mode in ("reflect", "symmetric", "wrap") and max(before, after) > n - (mode == "reflect"):
            raise ValueError(message("pad", f"pad width larger than axis {axis} for mode {mode}",
                                     (before, after), f"at most {n - (mode == 'reflect')}"))
        parts = ([strip(before, "before")] if before else []) + [out] + ([strip(after, "after")] if after else [])
        out = concat(parts, axis=axis)
    return out


def _register_numpy():
    from ._core.protocols import implements

    implements(np.gradient)(lambda f, *varargs, axis=None, edge_order=1: gradient(f, *varargs, axis=axis,
                                                                                   edge_order=edge_order))
    implements(np.pad)(pad)


_register_numpy()
del math
