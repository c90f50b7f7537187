"""NumPy's index tricks for DArrays: ``indices``, ``mgrid``/``ogrid``, ``ix_``, ``unravel_index``, ``ravel_multi_index``, ...

Grids (:func:`indices`, :data:`mgrid`, :data:`ogrid`, :func:`fromfunction`)
are built block by block: the 1-d coordinate vectors (``O(n)`` per axis) are
replicated, the ``O(n^d)`` grids are distributed (:func:`darray.meshgrid`).
Index conversions (:func:`unravel_index`, :func:`ravel_multi_index`,
:func:`ix_`) are elementwise arithmetic on the index DArrays, in their layout;
the bounds check of ``mode="raise"`` is one reduction. :func:`ndindex` is
NumPy's (it iterates a shape, no array); :func:`ndenumerate` gathers.

Examples
--------
>>> import darray as np
>>> np.mgrid[0:2, 0:3].shape
(2, 2, 3)
>>> [int(i) for i in np.unravel_index(7, (3, 4))]
[1, 3]
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator

import numpy

from ..._core import DArray
from ..._errors import message
from ..creation import arange, as_darray, asarray, meshgrid, zeros
from ..elementwise import clip, logical_or
from ..manipulation import reshape, stack
from ..searching import nonzero
from ..statistical import any as _any

__all__ = ["argwhere", "flatnonzero", "fromfunction", "index_exp", "indices", "isfortran", "ix_", "mgrid",
           "ndenumerate", "ndindex", "nditer", "ogrid", "ravel_multi_index", "s_", "unravel_index"]

#: NumPy's ``ndindex`` iterates index tuples of a shape; it holds no array, so it is NumPy's own.
ndindex = numpy.ndindex
#: NumPy's index-expression builders (``s_[1:3, ::2]`` is a tuple of slices): NumPy's own, no array in them.
s_, index_exp = numpy.s_, numpy.index_exp


def _shape(func: str, shape) -> tuple[int, ...]:
    dims = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    if any(not isinstance(d, numbers.Integral) or isinstance(d, bool) or d < 0 for d in dims):
        raise ValueError(message(func, "dimensions must be non-negative integers", shape, "a tuple of ints >= 0"))
    return tuple(int(d) for d in dims)


def _order(func: str, order) -> None:
    if order not in ("C", "F"):
        raise ValueError(message(func, "unknown order", order, "'C' or 'F'"))


def indices(dimensions, dtype=int, sparse: bool = False, *, split="auto", comm=None):
    """The grid of indices of an array of shape ``dimensions`` (``numpy.indices``), distributed.

    Dense: one DArray of shape ``(len(dimensions), *dimensions)``; sparse: a
    tuple of DArrays broadcastable to ``dimensions``.

    >>> import darray as np
    >>> np.indices((2, 3))[1].gather().tolist()
    [[0, 1, 2], [0, 1, 2]]
    """
    dims = _shape("indices", dimensions)
    if sparse:
        return tuple(reshape(arange(n, dtype=dtype, comm=comm), tuple(n if j == i else 1 for j in range(len(dims))))
                     for i, n in enumerate(dims))
    return _dense("indices", [numpy.arange(n, dtype=numpy.dtype(dtype)) for n in dims], split, comm)


def _dense(func: str, vectors: list, split, comm) -> DArray:
    if not vectors:
        return asarray(numpy.zeros((0,), dtype=numpy.result_type(int)), comm=comm)
    grids = meshgrid(*vectors, indexing="ij", split=split, comm=comm)
    return stack(grids, axis=0)


def fromfunction(function, shape, *, dtype=float, split="auto", comm=None, **kwargs):
    """``function(*indices)`` over the index grid of ``shape`` (``numpy.fromfunction``), distributed.

    ``function`` receives one DArray of indices per axis (each distributed
    like the result) and should compute with darray's functions.

    >>> import darray as np
    >>> np.fromfunction(lambda i, j: i + 10 * j, (2, 2), dtype=int).gather().tolist()
    [[0, 10], [1, 11]]
    """
    dims = _shape("fromfunction", shape)
    grids = meshgrid(*[numpy.arange(n, dtype=numpy.dtype(dtype)) for n in dims], indexing="ij", split=split,
                     comm=comm)
    return function(*grids, **kwargs)


class _Grid:
    """``mgrid[...]`` / ``ogrid[...]``: NumPy's slice grammar, complex steps included (``0:1:5j``)."""

    def __init__(self, sparse: bool):
        self.sparse = sparse
        self.__doc__ = (f"``numpy.{'ogrid' if sparse else 'mgrid'}`` for DArrays: "
                        f"{'open (broadcastable) ' if sparse else 'dense '}grids from slices, distributed.")

    def __getitem__(self, key):
        name = "ogrid" if self.sparse else "mgrid"
        keys = key if isinstance(key, tuple) else (key,)
        for k in keys:
            if not isinstance(k, slice):
                raise TypeError(message(name, "expected slices", type(k).__name__, "start:stop[:step] per axis"))
        vectors = [numpy.mgrid[k] for k in keys]  # O(n) per axis, NumPy's rules (complex step = count)
        dtype = numpy.result_type(*vectors) if vectors else numpy.dtype(int)
        vectors = [v.astype(dtype, copy=False) for v in vectors]
        if not isinstance(key, tuple):
            return asarray(vectors[0])
        if self.sparse:
            return tuple(asarray(v.reshape(tuple(-1 if j == i else 1 for j in range(len(vectors)))))
                         for i, v in enumerate(vectors))
        return _dense(name, vectors, "auto", None)

    def __repr__(self) -> str:
        return f"darray.{'ogrid' if self.sparse else 'mgrid'}"


#: Dense coordinate grids from slices: ``mgrid[0:3, 0:4]`` is a (2, 3, 4) DArray.
mgrid = _Grid(sparse=False)
#: Open grids from slices: ``ogrid[0:3, 0:4]`` is a (3, 1) and a (1, 4) DArray.
ogrid = _Grid(sparse=True)


def ix_(*args) -> tuple[DArray, ...]:
    """Open-mesh index arrays from 1-d sequences (``numpy.ix_``): ``x[ix_(rows, cols)]`` picks a sub-grid.

    Boolean sequences become the indices of their True entries.

    >>> import darray as np
    >>> [a.shape for a in np.ix_([0, 1], [2, 3, 4])]
    [(2, 1), (1, 3)]
    """
    out = []
    for i, a in enumerate(args):
        a = as_darray("ix_", a)
        if a.ndim != 1:
            raise ValueError(message("ix_", "cross index must be 1 dimensional", a.shape, "1-d sequences"))
        if a.dtype.kind == "b":
            a = nonzero(a)[0]
        elif a.dtype.kind not in "iu" and a.size:
            raise IndexError(message("ix_", "arrays used as indices must be of integer (or boolean) type", a.dtype))
        out.append(reshape(a, tuple(-1 if j == i else 1 for j in range(len(args)))))
    return tuple(out)


def _check_bounds(func: str, index: DArray, n: int, what: str) -> None:
    """One reduction: ``ValueError`` on every rank if some ``index`` lies outside ``[0, n)``."""
    if index.size and bool(_any(logical_or(index < 0, index >= n))):
        raise ValueError(message(func, f"{what} out of bounds", f"an index outside [0, {n})", f"indices in [0, {n})"))


def unravel_index(indices, shape, order: str = "C"):
    """Flat indices into a tuple of coordinate arrays for ``shape`` (``numpy.unravel_index``).

    Elementwise on the DArray of indices (in its layout); an integer gives a
    tuple of NumPy integers, as NumPy.

    >>> import darray as np
    >>> [c.gather().tolist() for c in np.unravel_index([1, 5], (2, 3))]
    [[0, 1], [1, 2]]
    """
    dims = _shape("unravel_index", shape)
    _order("unravel_index", order)
    if isinstance(indices, (numbers.Integral, numpy.integer)) and not isinstance(indices, bool):
        return numpy.unravel_index(indices, dims, order=order)
    flat = as_darray("unravel_index", indices)
    if flat.dtype.kind not in "iu":
        raise TypeError(message("unravel_index", "only int indices permitted", flat.dtype, "an integer dtype"))
    total = int(numpy.prod(dims))
    _check_bounds("unravel_index", flat, total, "index")
    coords = []
    rest = flat
    for n in (reversed(dims) if order == "C" else dims):
        coords.append(rest % n if n else rest)
        rest = rest // n if n else rest
    return tuple(reversed(coords)) if order == "C" else tuple(coords)


_MODES = ("raise", "wrap", "clip")


def ravel_multi_index(multi_index, dims, mode="raise", order: str = "C"):
    """Coordinate arrays into flat indices for an array of shape ``dims`` (``numpy.ravel_multi_index``).

    ``mode`` (one or one per axis): ``"raise"`` (one reduction checks the
    bounds), ``"wrap"`` or ``"clip"``. Elementwise on the coordinate DArrays.

    >>> import darray as np
    >>> np.ravel_multi_index(([0, 1], [1, 2]), (2, 3)).gather().tolist()
    [1, 5]
    """
    shape = _shape("ravel_multi_index", dims)
    _order("ravel_multi_index", order)
    modes = (mode,) * len(shape) if isinstance(mode, str) else tuple(mode)
    if len(modes) != len(shape) or any(m not in _MODES for m in modes):
        raise ValueError(message("ravel_multi_index", "unknown mode", mode, f"one of {_MODES} or one per axis"))
    if len(multi_index) != len(shape):
        raise ValueError(message("ravel_multi_index", "parameter multi_index must be a sequence of length "
                                 f"{len(shape)}", len(multi_index)))
    if all(isinstance(i, (numbers.Integral, numpy.integer)) and not isinstance(i, bool) for i in multi_index):
        return numpy.ravel_multi_index(tuple(multi_index), shape, mode=mode, order=order)
    like = next((i for i in multi_index if isinstance(i, DArray)), None)
    coords = [as_darray("ravel_multi_index", i, like) for i in multi_index]
    for c in coords:
        if c.dtype.kind not in "iu":
            raise TypeError(message("ravel_multi_index", "only int indices permitted", c.dtype, "an integer dtype"))
    strides, step = [], 1
    for n in (reversed(shape) if order == "C" else shape):
        strides.append(step)
        step *= n
    if order == "C":
        strides.reverse()
    flat = None
    for c, n, m, s in zip(coords, shape, modes, strides):
        if m == "raise":
            _check_bounds("ravel_multi_index", c, n, "invalid entry in coordinates array;")
        elif m == "wrap":
            c = c % n
        else:
            c = clip(c, 0, n - 1)
        term = c * s
        flat = term if flat is None else flat + term
    return flat


class ndenumerate:  # NumPy's name
    """``(index, value)`` pairs of an array (``numpy.ndenumerate``).

    For a DArray this GATHERS the whole array onto every rank first (one
    allgather, ``O(size)`` memory per rank) and iterates in Python: for small
    arrays only (``numpy.asarray`` warns above ``darray.config.gather_warn_size``).
    Every rank yields every pair.

    >>> import darray as np
    >>> [(i, int(v)) for i, v in np.ndenumerate(np.arange(2))]
    [((0,), 0), ((1,), 1)]
    """

    def __init__(self, arr):
        self._iter = numpy.ndenumerate(numpy.asarray(arr))

    def __iter__(self) -> Iterator:
        return self

    def __next__(self):
        return next(self._iter)


def nditer(op, flags=None, op_flags=None, *args, **kwargs) -> numpy.nditer:
    """NumPy's ``nditer`` over the GATHERED array(s): local-only, for reading small arrays.

    Every rank gathers each DArray operand (one allgather each) and iterates
    alike. Writing through the iterator into a DArray operand (``op_flags``
    ``readwrite`` / ``writeonly``) would change the gathered copy only, so it
    is refused: assign with ``x[...] = ...`` or vectorise instead. ``None``
    operands are NumPy's: the iterator allocates them (a NumPy array, the same
    on every rank, read back from ``it.operands``), and NumPy arrays are
    iterated (and written) as they are.

    >>> import darray as np
    >>> [int(v) for v in np.nditer(np.arange(3))]
    [0, 1, 2]
    >>> it = np.nditer([np.arange(3).reshape(3, 1), np.arange(3).reshape(1, 3), None])
    >>> for a, b, c in it:
    ...     c[...] = a + b
    >>> it.operands[2].tolist()
    [[0, 1, 2], [1, 2, 3], [2, 3, 4]]
    """
    ops = list(op) if isinstance(op, (list, tuple)) else [op]
    for operand, wanted in zip(ops, _operand_flags(op_flags, len(ops))):
        if isinstance(operand, DArray) and any(f in ("readwrite", "writeonly") for f in wanted):
            raise TypeError(message("nditer", "writing through nditer into a DArray would change a gathered copy",
                                    op_flags, "read-only iteration of DArrays; assign with x[...] = value, "
                                    "vectorise, or iterate over a None operand (allocated by nditer)"))
    gathered = [o if o is None else numpy.asarray(o) for o in ops]
    return numpy.nditer(gathered if isinstance(op, (list, tuple)) else gathered[0], flags, op_flags, *args, **kwargs)


def _operand_flags(op_flags, n: int) -> list:
    """Each operand's ``op_flags`` (NumPy's forms: None, one list of flags for all, or one list per operand)."""
    if not op_flags:
        return [()] * n
    if all(isinstance(f, str) for f in op_flags):
        return [tuple(op_flags)] * n
    return [tuple(f) if isinstance(f, (list, tuple)) else (f,) for f in op_flags]


def isfortran(a) -> bool:
    """``numpy.isfortran``: False for a DArray (the global array is in C order; so is every block's own cells
    read through ``x.local``); NumPy's answer for anything else.

    >>> import darray as np
    >>> np.isfortran(np.ones((2, 3)))
    False
    """
    if isinstance(a, DArray):
        return False
    if not isinstance(a, numpy.ndarray):
        raise TypeError(message("isfortran", "expected an array", type(a).__name__, "a DArray or a NumPy array"))
    return bool(numpy.isfortran(a))


def flatnonzero(a) -> DArray:
    """Indices of the non-zero elements of the flattened ``a`` (``numpy.flatnonzero``), distributed.

    >>> import darray as np
    >>> np.flatnonzero([[0, 3], [4, 0]]).gather().tolist()
    [1, 2]
    """
    return nonzero(reshape(as_darray("flatnonzero", a), (-1,)))[0]


def argwhere(a) -> DArray:
    """The ``(N, a.ndim)`` indices of the non-zero elements (``numpy.argwhere``), distributed along N.

    >>> import darray as np
    >>> np.argwhere([[0, 3], [4, 0]]).gather().tolist()
    [[0, 1], [1, 0]]
    """
    x = as_darray("argwhere", a)
    if x.ndim == 0:  # NumPy: a 0-d array is a 1-d one of one element, seen with no axes
        return zeros((int(bool(x)), 0), dtype=numpy.int64, comm=x.comm)
    return stack(nonzero(x), axis=1)
