"""The benchmark's inputs and result checks: index formulas and position-weighted checksums.

Every variant of a workload (NumPy, darray, Dask, hand-written mpi4py) builds
its block of the same global input from index formulas (:func:`block`), so no
input is ever scattered, and checks its result by a checksum of its block at
its global position (:func:`checksum`), summed over the ranks and compared with
NumPy's (:func:`sums_agree`).

Examples
--------
>>> balanced_rows(7, 3, 0), balanced_rows(7, 3, 2)
(slice(0, 3, None), slice(5, 7, None))
>>> x = dense("mat", (4, 3))
>>> top, bottom = checksum(x[:2], (slice(0, 2), slice(0, 3))), checksum(x[2:], (slice(2, 4), slice(0, 3)))
>>> sums_agree({"x": top + bottom}, {"x": checksum(x, whole(x.shape))})
True
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["balanced_rows", "block", "checksum", "dense", "row_block", "sums_agree", "whole"]


def balanced_rows(n: int, size: int, rank: int) -> slice:
    """Balanced contiguous block of ``range(n)`` for ``rank`` (``numpy.array_split``'s cut)."""
    base, extra = divmod(n, size)
    lo = rank * base + min(rank, extra)
    return slice(lo, lo + base + (1 if rank < extra else 0))


def _index_vectors(slices: Sequence[slice]) -> list[np.ndarray]:
    """Global index vectors of a block, shaped to broadcast (like ``numpy.ix_``)."""
    out = []
    for k, s in enumerate(slices):
        shape = [1] * len(slices)
        shape[k] = s.stop - s.start
        out.append(np.arange(s.start, s.stop, dtype=np.int64).reshape(shape))
    return out


def block(kind: str, slices: Sequence[slice]) -> np.ndarray:
    """The block at ``slices`` of the global input ``kind``: the same numbers for every peer (may broadcast)."""
    idx = _index_vectors(slices)
    if kind == "w1a":
        return (idx[0] % 1024) / 1024.0
    if kind == "w1b":
        return ((idx[0] * 7) % 1000) / 1000.0
    if kind == "w1c":
        return 1.0 + (idx[0] % 3)
    if kind.startswith("field"):  # field<n>: periodic smooth field for Jacobi
        n = int(kind[5:])
        return np.sin(idx[0] * (2 * np.pi / n)) * np.cos(idx[1] * (2 * np.pi / n))
    if kind == "mat":
        return ((idx[0] * 31 + idx[1] * 17) % 1000) / 1000.0
    if kind == "matA":
        return ((idx[0] * 3 + idx[1] * 5) % 17) / 17.0 - 0.5
    if kind == "matB":
        return ((idx[0] * 7 + idx[1] * 11) % 13) / 13.0 - 0.5
    if kind == "keys":  # splitmix64 of the index: no sorted runs, uniform in [0, 1)
        z = idx[0].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        for shift, mult in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
            z ^= z >> np.uint64(shift)
            z *= np.uint64(mult)
        z ^= z >> np.uint64(31)
        return (z >> np.uint64(11)).astype(np.float64) / 2.0 ** 53
    if kind == "cplx":
        re_ = ((idx[0] * 13 + idx[1] * 7) % 101) / 101.0
        im_ = ((idx[0] * 5 + idx[1] * 3) % 37) / 37.0
        return re_ + 1j * im_
    raise KeyError(kind)


def whole(shape: Sequence[int]) -> tuple[slice, ...]:
    """The slices of a whole array of ``shape``."""
    return tuple(slice(0, n) for n in shape)


def row_block(shape: Sequence[int], size: int, rank: int) -> tuple[slice, ...]:
    """The slices of ``rank``'s block of an array of ``shape`` cut along axis 0 over ``size`` ranks."""
    return (balanced_rows(shape[0], size, rank),) + tuple(slice(0, n) for n in shape[1:])


def dense(kind: str, shape: Sequence[int], slices: Sequence[slice] | None = None) -> np.ndarray:
    """:func:`block` as a new, writable, contiguous array of its full size (``slices`` default: the whole array)."""
    slices = whole(shape) if slices is None else slices
    values, size = block(kind, slices), tuple(s.stop - s.start for s in slices)
    return values if values.shape == size else np.ascontiguousarray(np.broadcast_to(values, size))


def checksum(values, slices: Sequence[slice]) -> np.ndarray:
    """Partial sums of a block at global position ``slices``: [sum re, sum re*w, sum im, sum im*w, sum |x|].

    ``w`` depends on the global position, so a misplaced or reordered value changes the checksum.
    """
    b = np.asarray(values)
    if b.size == 0:
        return np.zeros(5)
    w = sum(i * p for i, p in zip(_index_vectors(slices), (7919, 104729, 1299709)))
    w = (w % 1009) / 1009.0 - 0.5
    re_, im_ = np.real(b), np.imag(b)
    return np.array([re_.sum(), (re_ * w).sum(), im_.sum(), (im_ * w).sum(), np.abs(b).sum()], dtype=np.float64)


def sums_agree(got: dict, want: dict) -> bool:
    """Checksums equal up to rounding (relative to the sum of magnitudes); only keys both sides have."""
    keys = set(got) & set(want)
    if not keys:
        return False
    for key in keys:
        g, w = np.asarray(got[key], dtype=np.float64), np.asarray(want[key], dtype=np.float64)
        if g.shape != w.shape:
            return False
        tol = 1e-8 * (abs(float(w[-1])) + 1.0) if w.size == 5 else 1e-9 * (np.abs(w) + 1.0)
        if not np.all(np.abs(g - w) <= tol):
            return False
    return True
