"""Fast Fourier transforms (Array API extension ``fft``), distributed.

Algorithm: slab / pencil decomposition, as in mpi4py-fft and FFTW-MPI. A
transform over ``axes`` proceeds in rounds:

1. every transformed axis that is not cut (each rank holds it whole) is
   transformed locally with the block's backend (``xp.fft`` of the block's
   array-api-compat namespace: NumPy, CuPy, torch, ...);
2. if some transformed axes are still cut, ONE of them is made local by a
   redistribution that moves its grid dim onto an axis that needs no more
   transforming (an axis already transformed or not transformed at all):
   same grid, that split entry pointing to the other axis, balanced blocks.
   Only the ranks of one grid row exchange data (one all-to-all transpose).
   Then back to 1.

When no such axis exists (every other axis is cut or still to transform,
e.g. a 2-d array on a 2x2 grid), the array first moves to a 1-d grid over
all ranks cutting one other axis. A cut 1-d array has no other axis: a
complex transform of it uses the four-step (Cooley-Tukey) algorithm, ``n = n1 * n2``
viewed as an ``(n1, n2)`` array, when ``n`` has a factorization with
``min(n1, n2) >= nprocs``; otherwise it is replicated on every rank, which is
allowed only up to :data:`GATHER_LIMIT` elements (``ValueError`` above it);
real 1-d transforms (rfft, irfft, hfft, ihfft) of a cut 1-d array always
take that replicated path.

Output layout
-------------
By default the result is moved back into the INPUT's layout (same grid,
split and block sizes; an axis whose length changes through ``n``/``s`` gets
balanced blocks; a halo is kept when the shape is unchanged), like FFTW-MPI
without ``FFTW_MPI_TRANSPOSED_OUT``. So ``ifftn(fftn(x))`` has ``x``'s layout
and results combine with the input without further moves. That costs one
extra redistribution (a single all-to-all however many axes were cut).
Why not transposed-out by default: no stateless rule can send the inverse
back to the input's layout (``fft(x, axis=0)`` of a 2-d array cut on axis 0
and of one cut on axis 1 would both end cut on axis 1), so the round trip
``ifftn(fftn(x))`` would depend on history.

Pass ``layout="transposed"`` (a darray extension keyword) to skip it and keep
the layout of the last transpose (``FFTW_MPI_TRANSPOSED_OUT``), or
``layout=some_layout`` (a :class:`darray.Layout` of the result's shape) to
land directly in another layout -- e.g.
``ifftn(fftn(x, layout="transposed"), layout=x.layout)`` costs one transpose
per cut axis each way and returns ``x``'s layout.

Layouts are derived once per (layout, axes) and cached; the redistribution
plans are cached by :func:`darray._core.redistribute_to`.

Normalisation (``norm``): ``"backward"`` (default; the inverse scales by
``1/n``), ``"ortho"`` (``1/sqrt(n)`` both ways) or ``"forward"``; applied
axis by axis by the backend, so the product over axes is the standard one.
Dtypes follow the standard: complex transforms keep complex64/complex128
(real inputs are promoted to the complex type of their precision, integers
to complex128), real outputs are float32/float64.
"""

from __future__ import annotations

import numbers
from functools import lru_cache
from math import isqrt
from typing import NamedTuple

import numpy as np

from .._core import DArray, redistribute_to, to_backend_dtype
from .._core.protocols import implements
from .._errors import message
from .._layout import Layout, balanced_sizes, normalize_axis
from .._comm import resolve_comm
from .._core import make_layout
from ._common import resolve_device
from .creation import _place
from .manipulation import roll

__all__ = ["GATHER_LIMIT", "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]

#: Largest 1-d transform (elements, before and after ``n``) that may be replicated on every rank when the
#: four-step algorithm cannot split it (``n`` has no factor pair with both factors >= the number of ranks).
GATHER_LIMIT = 1 << 22

_NORMS = ("backward", "ortho", "forward")
_REAL_OUT = {"irfft", "hfft"}          # complex -> real
_REAL_IN = {"rfft", "ihfft"}           # real -> complex
_COMPLEX = {"fft", "ifft"}             # complex -> complex


class _Step(NamedTuple):
    """One 1-d transform: backend function ``func`` along ``axis``, input padded/cropped to ``n``."""

    func: str
    axis: int
    n: int
    norm: str

    @property
    def out_len(self) -> int:
        return self.n // 2 + 1 if self.func in _REAL_IN else self.n


# ------------------------------------------------------------------ validation (identical on every rank)
def _check_x(func: str, x, real_input: bool = False) -> None:
    if not isinstance(x, DArray):
        raise TypeError(message(func, "expected a DArray", type(x).__name__))
    kind = x.dtype.kind
    if kind not in "biufc":  # pragma: no cover - DArray dtypes are numeric
        raise TypeError(message(func, "unsupported dtype", x.dtype, "a numeric dtype"))
    if real_input and kind == "c":
        raise TypeError(message(func, "input must be real", x.dtype, "a real floating dtype"))
    if x.ndim == 0:
        raise ValueError(message(func, "input must have at least one dimension", x.shape))


def _check_norm(func: str, norm) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ValueError(message(func, "invalid norm", norm, "'backward', 'ortho' or 'forward'"))
    return norm


def _check_n(func: str, n, default: int, what: str = "n") -> int:
    if n is None:
        n = default
    elif not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(message(func, f"{what} must be an integer", n))
    if n < 1:
        raise ValueError(message(func, f"invalid number of data points ({what})", int(n), "a length >= 1"))
    return int(n)


def _axes_and_s(func: str, x: DArray, s, axes, c2r: bool = False) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Normalised ``axes`` and transform lengths ``s`` (the standard's rules; -1 keeps the input length)."""
    ndim = x.ndim
    if s is not None:
        if isinstance(s, numbers.Integral):
            raise TypeError(message(func, "s must be a sequence of integers", s))
        s = tuple(s)
    if axes is None:
        if s is None:
            axes = tuple(range(ndim))
        else:
            if len(s) > ndim:
                raise ValueError(message(func, "s has more entries than the array has axes", s,
                                         f"at most {ndim} entries"))
            axes = tuple(range(ndim - len(s), ndim))
    else:
        if isinstance(axes, numbers.Integral):
            axes = (axes,)
        axes = tuple(normalize_axis(func, a, ndim) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(message(func, "repeated axis", axes, "distinct axes"))
    if s is None:
        s = (None,) * len(axes)
    elif len(s) != len(axes):
        raise ValueError(message(func, "s and axes must have the same length", (s, axes)))
    lengths = []
    for i, (n, a) in enumerate(zip(s, axes)):
        last = c2r and i == len(axes) - 1
        m = x.shape[a]
        default = 2 * (m - 1) if last else m
        lengths.append(_check_n(func, None if n is None or n == -1 else n, default, "s"))
    return axes, tuple(lengths)


def _check_layout(func: str, layout, x: DArray, steps) -> None:
    """Refuse a ``layout`` request that does not fit the result (shape after ``steps``, ranks)."""
    if layout is None or (isinstance(layout, str) and layout == "transposed"):
        return
    if not isinstance(layout, Layout):
        raise TypeError(message(func, "layout must be None, 'transposed' or a darray.Layout", layout))
    shape = list(x.shape)
    for t in steps:
        shape[t.axis] = t.out_len
    if layout.nprocs != x._comm.size or layout.shape != tuple(shape):
        raise ValueError(message(func, "layout does not fit the result", layout,
                                 f"a layout of shape {tuple(shape)} over {x._comm.size} ranks"))


# ------------------------------------------------------------------ layout derivations (cached)
@lru_cache(maxsize=256)
def _freeing(layout: Layout, axis: int, busy: frozenset) -> Layout | None:
    """A layout in which ``axis`` is not cut, reached by moving its grid dim to a free axis.

    A free axis is neither cut nor in ``busy`` (axes still to transform). Among
    them the first one long enough for every block to be non-empty wins
    (leading axes first: their blocks are contiguous in C order). Without a
    free axis, a 1-d grid over all ranks cutting another axis (not busy if
    possible); None for a 1-d array.
    """
    g = layout.axis_dim[axis]
    if g is None:
        return layout
    shape, ndim = layout.shape, layout.ndim
    p = layout.dims[g]
    free = [a for a in range(ndim) if a != axis and a not in busy and layout.axis_dim[a] is None]
    if free:
        target = min(free, key=lambda a: (shape[a] < p, a))
        split = tuple(target if i == g else s for i, s in enumerate(layout.split))
        sizes = tuple(balanced_sizes(shape[a], p) if a == target else (shape[a],) if a == axis else layout.sizes[a]
                      for a in range(ndim))
        return Layout(shape, layout.dims, split, sizes)
    others = [a for a in range(ndim) if a != axis]
    if not others:
        return None
    nprocs = layout.nprocs
    target = min(others, key=lambda a: (a in busy, shape[a] < nprocs, a))
    sizes = tuple(balanced_sizes(n, nprocs) if a == target else (n,) for a, n in enumerate(shape))
    return Layout(shape, (nprocs,), (target,), sizes)


@lru_cache(maxsize=256)
def _like_input(layout: Layout, shape: tuple) -> Layout:
    """``layout``'s grid and split for an array of ``shape`` (balanced blocks on axes whose length changed)."""
    if shape == layout.shape:
        return layout
    sizes = tuple(layout.sizes[a] if n == layout.shape[a] else
                  balanced_sizes(n, len(layout.sizes[a])) if layout.axis_dim[a] is not None else (n,)
                  for a, n in enumerate(shape))
    return Layout(shape, layout.dims, layout.split, sizes)


def _with_lengths(layout: Layout, lengths: dict) -> Layout:
    """``layout`` with new lengths on uncut axes."""
    shape = tuple(lengths.get(a, n) for a, n in enumerate(layout.shape))
    sizes = tuple((lengths[a],) if a in lengths else s for a, s in enumerate(layout.sizes))
    return Layout(shape, layout.dims, layout.split, sizes, layout.halo, layout.boundary)


# ------------------------------------------------------------------ execution
def _complex_dtype(dtype: np.dtype) -> np.dtype:
    if dtype.kind == "c":
        return dtype
    return np.dtype(np.complex64) if dtype in (np.float16, np.float32) else np.dtype(np.complex128)


def _real_dtype(dtype: np.dtype) -> np.dtype:
    if dtype.kind == "f":
        return np.dtype(np.float32) if dtype == np.float16 else dtype  # (NumPy transforms float16 in float32)
    return np.dtype(np.float32) if dtype == np.complex64 else np.dtype(np.float64)


def _input_dtype(func: str, dtype: np.dtype) -> np.dtype:
    return _real_dtype(dtype) if func in _REAL_IN else _complex_dtype(dtype)


def _apply(y: DArray, steps: list[_Step]) -> DArray:
    """Run ``steps`` (all along uncut axes) on every rank's block: local backend calls only."""
    xp = y._xp
    a = y.local
    rank = y._comm.rank
    plain = y._layout.without_halo() if y._layout.has_halo else y._layout
    layout = _with_lengths(plain, {t.axis: t.out_len for t in steps})
    if 0 in tuple(a.shape):  # an empty block: torch's FFTs refuse zero-length axes, and there is nothing to do
        dtype = _np_dtype(a)
        for step in _grouped(steps):
            dtype = _input_dtype(step[0].func, dtype)
            dtype = _real_dtype(dtype) if step[0].func in _REAL_OUT else _complex_dtype(dtype)
        out = xp.zeros(layout.block_shape(rank), dtype=to_backend_dtype(xp, dtype), device=y.device)
        return DArray._wrap(out, layout, y._comm, xp)
    for step in _grouped(steps):
        want = _input_dtype(step[0].func, _np_dtype(a))
        if _np_dtype(a) != want:
            a = xp.astype(a, to_backend_dtype(xp, want))
        if len(step) > 1:  # several complex axes: one n-d backend call
            a = getattr(xp.fft, step[0].func + "n")(a, s=[t.n for t in step], axes=[t.axis for t in step],
                                                     norm=step[0].norm)
        else:
            t = step[0]
            a = getattr(xp.fft, t.func)(a, n=t.n, axis=t.axis, norm=t.norm)
    if tuple(a.shape) != layout.block_shape(rank):  # pragma: no cover - guards the layout arithmetic
        raise AssertionError(f"fft: block shape {tuple(a.shape)} != {layout.block_shape(rank)}")
    return DArray._wrap(a, layout, y._comm, xp)


def _np_dtype(a) -> np.dtype:
    from .._core import to_numpy_dtype

    return to_numpy_dtype(a.dtype)


def _grouped(steps: list[_Step]) -> list[list[_Step]]:
    """Consecutive complex steps of one function and norm form one n-d call."""
    groups: list[list[_Step]] = []
    for t in steps:
        last = groups[-1] if groups else None
        if last and t.func in _COMPLEX and last[0].func == t.func and last[0].norm == t.norm:
            last.append(t)
        else:
            groups.append([t])
    return groups


def _make_local(y: DArray, axis: int, busy: frozenset) -> DArray:
    target = _freeing(y._layout, axis, busy)
    if target is None:  # a 1-d array: handled before (four-step or replication)
        target = y._layout.replicated()
    return redistribute_to(y, target)


def _execute(x: DArray, first: _Step | None, middle: list[_Step], last: _Step | None, layout) -> DArray:
    """``first``, then ``middle`` (in any order: they commute), then ``last``; then the output layout."""
    y = x if not x._layout.has_halo else DArray._wrap(x.local, x._layout.without_halo(), x._comm, x._xp)
    tail = frozenset({last.axis}) if last is not None else frozenset()
    if first is not None:
        y = _make_local(y, first.axis, frozenset(t.axis for t in middle) | tail | {first.axis})
        y = _apply(y, [first])
    pending = list(middle)
    while pending:
        ready = [t for t in pending if y._layout.axis_dim[t.axis] is None]
        if ready:
            y = _apply(y, ready)
            pending = [t for t in pending if t not in ready]
        else:
            y = _make_local(y, pending[0].axis, frozenset(t.axis for t in pending) | tail)
    if last is not None:
        y = _make_local(y, last.axis, tail)
        y = _apply(y, [last])
    if not first and not middle and not last:  # no axes: a copy in the transform's dtype
        y = y.astype(_complex_dtype(x.dtype))
    return _finish(y, x, layout)


def _finish(y: DArray, x: DArray, layout) -> DArray:
    if layout == "transposed":
        return y
    if layout is None:
        layout = _like_input(x._layout, y.shape)
    return redistribute_to(y, layout)


# ------------------------------------------------------------------ 1-d arrays: four-step or replication
def _four_step_factors(n: int, p: int) -> tuple[int, int] | None:
    """``(n1, n2)`` with ``n1 * n2 == n``, both >= ``p`` and as square as possible, or None."""
    for n1 in range(isqrt(n), 0, -1):
        if n % n1 == 0:
            if n1 >= p:
                return n1, n // n1
            return None
    return None  # pragma: no cover - n >= 1 always has the factor 1


def _one_d(func: str, x: DArray, step: _Step, layout) -> DArray | None:
    """A transform along the only axis of a cut 1-d array (four-step), or None to run it generally.

    Real transforms and lengths without a suitable factorization replicate the
    array (the general path), refused above :data:`GATHER_LIMIT`.
    """
    if x.ndim != 1 or x._layout.axis_dim[0] is None:
        return None
    p = x._comm.size
    factors = _four_step_factors(step.n, p) if step.func in _COMPLEX else None
    if factors is None and max(x.shape[0], step.n, step.out_len) > GATHER_LIMIT:
        raise ValueError(message(func, "a distributed 1-d transform of this length needs a replicated copy",
                                 step.n, f"a length <= darray.fft.GATHER_LIMIT={GATHER_LIMIT}, or for a complex "
                                         f"transform a length n1*n2 with n1, n2 >= {p} (the number of ranks)"))
    return None if factors is None else _four_step(x, step, factors, layout)


def _four_step(x: DArray, step: _Step, factors: tuple[int, int], layout) -> DArray:
    """Cooley-Tukey over ``n = n1 * n2``: ``X[k1 + n1*k2] = sum_j2 W_n^(j2*k1) W_n2^(j2*k2) FFT_n1(x[:, j2])[k1]``.

    Two transposes of an ``(n1, n2)`` view plus the layout moves around them;
    every rank holds O(n / nprocs) elements throughout.
    """
    from .manipulation import permute_dims, reshape

    n1, n2 = factors
    n = step.n
    sign = -1.0 if step.func == "fft" else 1.0
    if x.shape[0] != n:  # pad or crop: a 1-d placement
        x = _resize(x, n)
    a = reshape(x, (n1, n2))                             # a[j1, j2] = x[j1*n2 + j2]
    a = redistribute_to(a, _freeing(a._layout, 0, frozenset({0})))
    a = _apply(a, [_Step(step.func, 0, n1, step.norm)])    # b[k1, j2]
    xp = a._xp
    rows, cols = a._layout.block_slices(a._comm.rank)
    k1 = xp.reshape(xp.arange(rows.start, rows.stop, dtype=xp.int64, device=a.device), (-1, 1))
    j2 = xp.reshape(xp.arange(cols.start, cols.stop, dtype=xp.int64, device=a.device), (1, -1))
    # the exact integer product mod n keeps the phase accurate for large n
    phase = xp.astype((k1 * j2) % n, xp.float64) * (sign * 2.0 * np.pi / n)
    twiddle = xp.astype(xp.cos(phase), a._block.dtype) + xp.astype(xp.sin(phase), a._block.dtype) * 1j
    a = DArray._wrap(a.local * twiddle, a._layout, a._comm, xp)
    a = redistribute_to(a, _freeing(a._layout, 1, frozenset({1})))
    a = _apply(a, [_Step(step.func, 1, n2, step.norm)])    # c[k1, k2] = X[k1 + n1*k2]
    out = reshape(permute_dims(a, (1, 0)), (n,))
    return _finish(out, x, layout)


def _resize(x: DArray, n: int) -> DArray:
    """``x`` cropped or zero-padded to length ``n`` (1-d), cut the way ``x`` is."""
    from .._core.manipulation import place

    layout = _like_input(x._layout.without_halo() if x._layout.has_halo else x._layout, (n,))
    xp = x._xp
    out = DArray._wrap(xp.zeros(layout.block_shape(x._comm.rank), dtype=x._block.dtype, device=x.device),
                       layout, x._comm, xp)
    place(x, out, ((0, min(n, x.shape[0])),), (0,))
    return out


# ------------------------------------------------------------------ public transforms
def _one_axis(func: str, backend: str, x, n, axis, norm, layout, c2r: bool = False) -> DArray:
    _check_x(func, x, real_input=backend in _REAL_IN)
    norm = _check_norm(func, norm)
    axis = normalize_axis(func, axis, x.ndim)
    m = x.shape[axis]
    step = _Step(backend, axis, _check_n(func, n, 2 * (m - 1) if c2r else m), norm)
    _check_layout(func, layout, x, [step])
    done = _one_d(func, x, step, layout)
    if done is not None:
        return done
    if backend in _REAL_IN:
        return _execute(x, step, [], None, layout)
    if backend in _REAL_OUT:
        return _execute(x, None, [], step, layout)
    return _execute(x, None, [step], None, layout)


def _many_axes(func: str, backend: str, x, s, axes, norm, layout) -> DArray:
    _check_x(func, x, real_input=backend == "rfft")
    norm = _check_norm(func, norm)
    axes, lengths = _axes_and_s(func, x, s, axes, c2r=backend == "irfft")
    if backend in _COMPLEX:
        steps = [_Step(backend, a, n, norm) for a, n in zip(axes, lengths)]
        _check_layout(func, layout, x, steps)
        done = _one_d(func, x, steps[0], layout) if len(steps) == 1 else None
        return done if done is not None else _execute(x, None, steps, None, layout)
    if not axes:
        raise ValueError(message(func, "needs at least one axis", axes))
    inner = "fft" if backend == "rfft" else "ifft"
    others = [_Step(inner, a, n, norm) for a, n in zip(axes[:-1], lengths[:-1])]
    edge = _Step(backend, axes[-1], lengths[-1], norm)
    _check_layout(func, layout, x, [*others, edge])
    _one_d(func, x, edge, layout)  # a real 1-d transform: only checks the replication limit
    if backend == "rfft":
        return _execute(x, edge, others, None, layout)
    return _execute(x, None, others, edge, layout)


_LAYOUT_DOC = """
    layout : darray extension: None (default) returns the result in ``x``'s layout;
        ``"transposed"`` keeps the layout of the last transpose; a
        :class:`darray.Layout` of the result's shape lands there."""


def fft(x, /, *, n=None, axis=-1, norm="backward", layout=None) -> DArray:
    """One-dimensional discrete Fourier transform along ``axis`` (``numpy.fft.fft``)."""
    return _one_axis("fft", "fft", x, n, axis, norm, layout)


def ifft(x, /, *, n=None, axis=-1, norm="backward", layout=None) -> DArray:
    """One-dimensional inverse discrete Fourier transform along ``axis``."""
    return _one_axis("ifft", "ifft", x, n, axis, norm, layout)


def fftn(x, /, *, s=None, axes=None, norm="backward", layout=None) -> DArray:
    """n-dimensional discrete Fourier transform over ``axes`` (all by default).

    Examples
    --------
    >>> import numpy, darray as da
    >>> x = da.asarray(numpy.arange(12.0).reshape(3, 4), split=0)
    >>> numpy.allclose(da.fft.fftn(x).gather(), numpy.fft.fftn(numpy.arange(12.0).reshape(3, 4)))
    True
    """
    return _many_axes("fftn", "fft", x, s, axes, norm, layout)


def ifftn(x, /, *, s=None, axes=None, norm="backward", layout=None) -> DArray:
    """n-dimensional inverse discrete Fourier transform over ``axes`` (all by default)."""
    return _many_axes("ifftn", "ifft", x, s, axes, norm, layout)


def rfft(x, /, *, n=None, axis=-1, norm="backward", layout=None) -> DArray:
    """One-dimensional transform of a real signal: the ``n // 2 + 1`` non-negative frequencies."""
    return _one_axis("rfft", "rfft", x, n, axis, norm, layout)


def irfft(x, /, *, n=None, axis=-1, norm="backward", layout=None) -> DArray:
    """Inverse of :func:`rfft`: a real signal of length ``n`` (default ``2 * (m - 1)``)."""
    return _one_axis("irfft", "irfft", x, n, axis, norm, layout, c2r=True)


def rfftn(x, /, *, s=None, axes=None, norm="backward", layout=None) -> DArray:
    """n-dimensional transform of a real array: real-to-complex along the last of ``axes`` (made local first)."""
    return _many_axes("rfftn", "rfft", x, s, axes, norm, layout)


def irfftn(x, /, *, s=None, axes=None, norm="backward", layout=None) -> DArray:
    """Inverse of :func:`rfftn`: complex-to-real along the last of ``axes``, done last."""
    return _many_axes("irfftn", "irfft", x, s, axes, norm, layout)


def hfft(x, /, *, n=None, axis=-1, norm="backward", layout=None) -> DArray:
    """Transform of a Hermitian-symmetric signal (its first half given): a real result of length ``n``."""
    return _one_axis("hfft", "hfft", x, n, axis, norm, layout, c2r=True)


def ihfft(x, /, *, n=None, axis=-1, norm="backward", layout=None) -> DArray:
    """Inverse of :func:`hfft`: the ``n // 2 + 1`` first terms of the Hermitian transform of a real signal."""
    return _one_axis("ihfft", "ihfft", x, n, axis, norm, layout)


def fft2(x, /, *, s=None, axes=(-2, -1), norm="backward", layout=None) -> DArray:
    """Two-dimensional discrete Fourier transform over ``axes`` (``numpy.fft.fft2``: :func:`fftn` over two axes).

    Examples
    --------
    >>> import numpy, darray as da
    >>> x = numpy.arange(12.0).reshape(3, 4)
    >>> numpy.allclose(da.fft.fft2(da.asarray(x, split=0)).gather(), numpy.fft.fft2(x))
    True
    """
    return _many_axes("fft2", "fft", x, s, axes, norm, layout)


def ifft2(x, /, *, s=None, axes=(-2, -1), norm="backward", layout=None) -> DArray:
    """Two-dimensional inverse discrete Fourier transform over ``axes`` (``numpy.fft.ifft2``)."""
    return _many_axes("ifft2", "ifft", x, s, axes, norm, layout)


def rfft2(x, /, *, s=None, axes=(-2, -1), norm="backward", layout=None) -> DArray:
    """Two-dimensional transform of a real array over ``axes`` (``numpy.fft.rfft2``: :func:`rfftn`)."""
    return _many_axes("rfft2", "rfft", x, s, axes, norm, layout)


def irfft2(x, /, *, s=None, axes=(-2, -1), norm="backward", layout=None) -> DArray:
    """Inverse of :func:`rfft2` over ``axes`` (``numpy.fft.irfft2``: :func:`irfftn`)."""
    return _many_axes("irfft2", "irfft", x, s, axes, norm, layout)


_PARAMS_DOC = "\n    Parameters: as the Array API standard; see the module docstring for the algorithm.\n"
for _f in (fft, ifft, fftn, ifftn, rfft, irfft, rfftn, irfftn, hfft, ihfft, fft2, ifft2, rfft2, irfft2):
    _f.__doc__ += _PARAMS_DOC + _LAYOUT_DOC


# ------------------------------------------------------------------ frequencies
def _freq(func: str, n, d, dtype, device, count: int, negative: bool, split, grid, sizes, halo, boundary,
          comm) -> DArray:
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise TypeError(message(func, "n must be an integer", n))
    if n < 1:
        raise ValueError(message(func, "n must be positive", n, "n >= 1"))
    if not isinstance(d, (numbers.Real, np.generic)) or isinstance(d, bool) or d == 0:
        raise ValueError(message(func, "d must be a non-zero real number", d))
    out_dtype = np.dtype(np.float64) if dtype is None else np.dtype(dtype)
    if out_dtype.kind != "f":
        raise ValueError(message(func, "dtype must be a real floating dtype", out_dtype, "float32 or float64"))
    comm = resolve_comm(comm)
    xp, dev = resolve_device(device)
    layout = make_layout(func, (count,), comm.size, split, grid, sizes, halo, boundary)
    cells = layout.block_slices(comm.rank)[0]
    k = np.arange(cells.start, cells.stop, dtype=np.int64)
    if negative:
        k = np.where(k < (n - 1) // 2 + 1, k, k - n)
    values = (k * (1.0 / (n * d))).astype(out_dtype)  # NumPy's formula: integer * (1 / (n * d))
    return _place(xp.asarray(values, device=dev), layout, comm, xp)


def fftfreq(n, /, *, d=1.0, dtype=None, device=None, split="auto", grid=None, sizes=None, halo=0,
            boundary="none", comm=None) -> DArray:
    """Sample frequencies of :func:`fft`: ``[0, 1, ..., n//2 - 1 (or (n-1)//2), -(n//2), ..., -1] / (d * n)``.

    Each rank computes its own block; ``split``, ``grid``, ``sizes``, ``halo``,
    ``boundary``, ``comm`` lay the result out as for :func:`darray.arange`.

    >>> import darray as da
    >>> [float(v) for v in da.fft.fftfreq(4).gather()]
    [0.0, 0.25, -0.5, -0.25]
    """
    return _freq("fftfreq", n, d, dtype, device, n if isinstance(n, numbers.Integral) and n > 0 else 0, True,
                 split, grid, sizes, halo, boundary, comm)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None, split="auto", grid=None, sizes=None, halo=0,
             boundary="none", comm=None) -> DArray:
    """Sample frequencies of :func:`rfft`: ``[0, 1, ..., n//2] / (d * n)`` (distributed like :func:`fftfreq`)."""
    count = n // 2 + 1 if isinstance(n, numbers.Integral) and n > 0 else 0
    return _freq("rfftfreq", n, d, dtype, device, count, False, split, grid, sizes, halo, boundary, comm)


# ------------------------------------------------------------------ shifts
def _shift_axes(func: str, x, axes) -> tuple[int, ...]:
    if not isinstance(x, DArray):
        raise TypeError(message(func, "expected a DArray", type(x).__name__))
    if axes is None:
        return tuple(range(x.ndim))
    if isinstance(axes, numbers.Integral):
        axes = (axes,)
    return tuple(normalize_axis(func, a, x.ndim) for a in axes)


def fftshift(x, /, *, axes=None) -> DArray:
    """Move the zero frequency to the centre: :func:`darray.roll` by ``n // 2`` along ``axes`` (all by default)."""
    axes = _shift_axes("fftshift", x, axes)
    if not axes:
        return x
    return roll(x, tuple(x.shape[a] // 2 for a in axes), axis=axes)


def ifftshift(x, /, *, axes=None) -> DArray:
    """Inverse of :func:`fftshift`: :func:`darray.roll` by ``-(n // 2)`` along ``axes``."""
    axes = _shift_axes("ifftshift", x, axes)
    if not axes:
        return x
    return roll(x, tuple(-(x.shape[a] // 2) for a in axes), axis=axes)


# ------------------------------------------------------------------ numpy.fft.f(x) on DArrays
def _numpy_one_axis(func):
    def impl(a, n=None, axis=-1, norm=None, out=None):
        _no_numpy_out(func.__name__, out)
        return func(a, n=n, axis=axis, norm=_check_norm(f"numpy.fft.{func.__name__}", norm))

    return impl


def _numpy_many_axes(func, two: bool):
    def impl(a, s=None, axes=(-2, -1) if two else None, norm=None, out=None):
        _no_numpy_out(func.__name__, out)
        return func(a, s=s, axes=axes, norm=_check_norm(f"numpy.fft.{func.__name__}", norm))

    return impl


def _no_numpy_out(name: str, out) -> None:
    if out is not None:
        raise TypeError(message(f"numpy.fft.{name}", "out= is not supported for DArrays", type(out).__name__,
                                "None (assign the result instead)"))


for _f in (fft, ifft, rfft, irfft, hfft, ihfft):
    implements(getattr(np.fft, _f.__name__))(_numpy_one_axis(_f))
for _f in (fftn, ifftn, rfftn, irfftn):
    implements(getattr(np.fft, _f.__name__))(_numpy_many_axes(_f, False))
for _f in (fft2, ifft2, rfft2, irfft2):
    implements(getattr(np.fft, _f.__name__))(_numpy_many_axes(_f, True))
implements(np.fft.fftshift)(lambda x, axes=None: fftshift(x, axes=axes))
implements(np.fft.ifftshift)(lambda x, axes=None: ifftshift(x, axes=axes))
