"""Printing DArrays with NumPy's text, fetching only what is shown.

``str(x)`` equals NumPy's ``str`` of the gathered array, and ``repr(x)``
NumPy's ``repr`` (spelled ``array(...)``, as NumPy's), at any rank count and
under NumPy's print options (:func:`numpy.set_printoptions`,
:func:`numpy.printoptions`: ``threshold``, ``edgeitems``, ``precision``,
``linewidth``, ...), which darray shares with NumPy. A 0-d DArray prints as
the NumPy scalar ``x.sum()`` would be in NumPy (``str``: ``0.53``; ``repr``:
``np.float64(0.53)``).

An array of at most ``threshold`` elements is printed whole (it is gathered:
NumPy would show every element too). A larger one is summarized, as NumPy
does, and only its corners move: along every axis longer than
``2 * edgeitems`` the first and last ``edgeitems`` indices, along the others
all. Each rank cuts its share of that corner from its block, and one
allreduce of ``O((2 * edgeitems) ** ndim)`` bytes assembles it on every rank;
NumPy then formats the corner, forced to summarize the same axes, with the
global shape in the text. The layout is not printed: see ``x.layout`` and
:func:`darray.explain`.

Examples
--------
>>> import darray as np
>>> print(np.arange(3000).reshape(3, 1000) * 2)
[[   0    2    4 ... 1994 1996 1998]
 [2000 2002 2004 ... 3994 3996 3998]
 [4000 4002 4004 ... 5994 5996 5998]]
>>> np.linspace(0.0, 1.0, 3)
array([0. , 0.5, 1. ])
>>> print(np.sum(np.ones(4)) / 7)
0.5714285714285714
"""

from __future__ import annotations

import numpy as np
from numpy._core import arrayprint as _arrayprint  # NumPy's repr/str implementations (overridable array2string)

from .._backend import to_numpy
from .._errors import naming
from .array import DArray

__all__ = ["array2string", "array_repr", "array_str", "shown"]


def shown(x: DArray, threshold: int | None = None, edgeitems: int | None = None) -> tuple[np.ndarray, bool]:
    """What printing ``x`` shows, on every rank: ``(the whole array, False)`` or ``(its corners, True)``.

    Collective. The corners keep one filler element in the middle of every
    summarized axis, so that NumPy, told to summarize (``threshold=0``),
    drops exactly that axis's middle, as it would for the whole array.
    """
    options = np.get_printoptions()
    threshold = options["threshold"] if threshold is None else threshold
    edge = options["edgeitems"] if edgeitems is None else edgeitems
    if x.ndim == 0 or x.size <= threshold or edge <= 0:  # edgeitems=0: NumPy's a[-0:] formats every element
        return to_numpy(x.gather()), False
    return _corners(x, edge), True


def _corners(x: DArray, edge: int) -> np.ndarray:
    layout = x._layout
    comm = x._comm
    rank = comm.rank
    wanted, where = [], []  # per axis: the global indices shown, and their positions in the corner array
    for n in x.shape:
        if n > 2 * edge:
            wanted.append(np.r_[0:edge, n - edge:n])
            where.append(np.r_[0:edge, edge + 1:2 * edge + 1])
        else:
            wanted.append(np.arange(n))
            where.append(np.arange(n))
    shape = tuple(len(w) + (1 if n > 2 * edge else 0) for w, n in zip(wanted, x.shape))
    corner = np.zeros(shape, dtype=x.dtype)
    # one owner per cell: ranks replicating the array along a grid dim contribute from its coordinate 0 only
    coords = layout.coords(rank)
    owner = all(c == 0 for c, s in zip(coords, layout.split) if s is None)
    if owner:
        picks, places = [], []
        for block, w, p in zip(layout.block_slices(rank), wanted, where):
            mine = (w >= block.start) & (w < block.stop)
            picks.append(w[mine] - block.start)
            places.append(p[mine])
        if all(len(p) for p in picks):
            xp = x._xp
            part = x.local
            for axis, pick in enumerate(picks):
                part = xp.take(part, xp.asarray(pick, device=x.device), axis=axis)
            corner[np.ix_(*places)] = to_numpy(part)
    # exact for every dtype: bytes of a non-owner are zeros, and each cell has one owner
    raw = corner.reshape(-1).view(np.uint8)
    corner = np.asarray(to_numpy(comm.allreduce(raw, "sum")), dtype=np.uint8).view(x.dtype).reshape(shape)
    for axis, n in enumerate(x.shape):  # the filler: a copy of a shown neighbour (NumPy never formats it)
        if n > 2 * edge and edge:
            index = [slice(None)] * x.ndim
            source = list(index)
            index[axis], source[axis] = edge, edge - 1
            corner[tuple(index)] = corner[tuple(source)]
    return corner


def _options_checked(func: str, format_one) -> None:
    """Format one element with the caller's options: bad options raise NumPy's error type, naming ``func``,
    on every rank, before anything moves."""
    try:
        format_one()
    except (TypeError, ValueError) as error:
        renamed = naming(error, func)
        if renamed is error:
            raise
        raise renamed from error


def array2string(a, max_line_width=None, precision=None, suppress_small=None, separator=" ", prefix="", *,
                 formatter=None, threshold=None, edgeitems=None, sign=None, floatmode=None, suffix="", legacy=None):
    """:func:`numpy.array2string` of a DArray (or of anything NumPy takes), fetching only what is shown.

    Examples
    --------
    >>> import darray as da
    >>> da.array2string(da.arange(5.0), separator=", ")
    '[0., 1., 2., 3., 4.]'
    """
    kwargs = dict(formatter=formatter, threshold=threshold, edgeitems=edgeitems, sign=sign, floatmode=floatmode,
                  suffix=suffix, legacy=legacy)
    if not isinstance(a, DArray):
        return np.array2string(a, max_line_width, precision, suppress_small, separator, prefix, **kwargs)
    _options_checked("array2string", lambda: np.array2string(np.zeros(1, a.dtype), max_line_width, precision,
                                                             suppress_small, separator, prefix, **kwargs))
    values, summarized = shown(a, threshold, edgeitems)
    if summarized:
        kwargs["threshold"] = 0
    return np.array2string(values, max_line_width, precision, suppress_small, separator, prefix, **kwargs)


def _stand_in(a: DArray) -> np.ndarray:
    """An ndarray of ``a``'s global shape and dtype that holds no memory (NumPy reads only those from it)."""
    return np.broadcast_to(np.zeros((), dtype=a.dtype), a.shape)


def _corner_printer(values: np.ndarray):
    def print_corner(_stand_in, *args, **kwargs):
        return np.array2string(values, *args, threshold=0, **kwargs)

    return print_corner


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None) -> str:
    """:func:`numpy.array_repr` of a DArray: NumPy's text for the same values (``shape=`` the global shape).

    Examples
    --------
    >>> import darray as da
    >>> da.array_repr(da.arange(3))
    'array([0, 1, 2])'
    """
    if not isinstance(arr, DArray):
        return np.array_repr(arr, max_line_width, precision, suppress_small)
    _options_checked("array_repr", lambda: np.array_repr(np.zeros(1, arr.dtype), max_line_width, precision,
                                                         suppress_small))
    values, summarized = shown(arr)
    if not summarized:
        return np.array_repr(values, max_line_width, precision, suppress_small)
    return _arrayprint._array_repr_implementation(_stand_in(arr), max_line_width, precision, suppress_small,
                                                  array2string=_corner_printer(values))


def array_str(a, max_line_width=None, precision=None, suppress_small=None) -> str:
    """:func:`numpy.array_str` of a DArray: NumPy's text for the same values.

    Examples
    --------
    >>> import darray as da
    >>> da.array_str(da.arange(3.0) / 2)
    '[0.  0.5 1. ]'
    """
    if not isinstance(a, DArray):
        return np.array_str(a, max_line_width, precision, suppress_small)
    _options_checked("array_str", lambda: np.array_str(np.zeros(1, a.dtype), max_line_width, precision,
                                                       suppress_small))
    values, summarized = shown(a)
    if not summarized:
        return np.array_str(values, max_line_width, precision, suppress_small)
    return _arrayprint._array_str_implementation(_stand_in(a), max_line_width, precision, suppress_small,
                                                 array2string=_corner_printer(values))
