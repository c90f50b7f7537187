"""NumPy's stacking, splitting and reshaping functions outside the standard: ``hstack``, ``split``, ``ravel``, ...

Each has NumPy's signature and semantics and is registered with
``__array_function__``, so that ``numpy.vstack([x, y])`` and
``darray.vstack([x, y])`` give the same DArray. They compose darray's
distributed functions (``concat``, ``reshape``, ``permute_dims``, slicing);
nothing gathers the whole array. The stacked result is cut like the first
array (see :func:`darray.concat`); ``split`` and ``array_split`` return
slices (no communication); ``ravel(order="F")`` of an array cut along a later
axis redistributes (a C-order reshape).

Examples
--------
>>> import darray as da
>>> from darray._api.numpy.stacking import vstack
>>> vstack([da.arange(3.0), da.ones(3)]).shape
(2, 3)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..._core import DArray
from ..._errors import message
from .._common import first_darray
from ..data_types import astype
from ..manipulation import permute_dims, reshape
from ._common import CASTINGS, axis_of, concatenate, darray_of, numpy_function, numpy_name, split_along

__all__ = ["array_split", "atleast_1d", "atleast_2d", "atleast_3d", "column_stack", "dstack", "hstack", "ravel",
           "split", "swapaxes", "vstack"]


# ---------------------------------------------------------------- atleast_nd
def _atleast(x: DArray, n: int) -> DArray:
    if x.ndim >= n:
        return x
    if x.ndim == 0:
        return reshape(x, (1,) * n)
    if n == 2 or x.ndim == 2:  # (N,) -> (1, N); (M, N) -> (M, N, 1)
        return x[None] if n == 2 else x[..., None]
    return x[None, :, None]  # (N,) -> (1, N, 1)


def _atleast_all(func: str, arys, n: int):
    like = first_darray(*arys)
    res = [_atleast(darray_of(func, a, like), n) for a in arys]
    return res[0] if len(res) == 1 else tuple(res)


@numpy_function(np.atleast_1d)
def atleast_1d(*arys) -> DArray | tuple[DArray, ...]:
    """Each input with at least one dimension (``numpy.atleast_1d``): a 0-d array becomes shape (1,).

    One input gives one array, several a tuple. No communication.

    Examples
    --------
    >>> import darray as da
    >>> atleast_1d(da.asarray(3.0)).shape
    (1,)
    """
    return _atleast_all("atleast_1d", arys, 1)


@numpy_function(np.atleast_2d)
def atleast_2d(*arys) -> DArray | tuple[DArray, ...]:
    """Each input with at least two dimensions (``numpy.atleast_2d``): (N,) becomes (1, N).

    Examples
    --------
    >>> import darray as da
    >>> atleast_2d(da.arange(3)).shape
    (1, 3)
    """
    return _atleast_all("atleast_2d", arys, 2)


@numpy_function(np.atleast_3d)
def atleast_3d(*arys) -> DArray | tuple[DArray, ...]:
    """Each input with at least three dimensions (``numpy.atleast_3d``): (N,) -> (1, N, 1), (M, N) -> (M, N, 1).

    Examples
    --------
    >>> import darray as da
    >>> atleast_3d(da.ones((2, 3))).shape
    (2, 3, 1)
    """
    return _atleast_all("atleast_3d", arys, 3)


# ---------------------------------------------------------------- stacking
def _arrays(func: str, tup) -> list[DArray]:
    if isinstance(tup, DArray) and tup.ndim:  # NumPy iterates an array's axis 0 (np.dstack(np.mgrid[...]))
        tup = [tup[i] for i in range(tup.shape[0])]
    if isinstance(tup, DArray) or not isinstance(tup, Sequence) or isinstance(tup, (str, bytes)):
        raise TypeError(message(numpy_name(func), "arrays to stack must be passed as a sequence", type(tup).__name__,
                                "a list or tuple of arrays"))
    if len(tup) == 0:
        raise ValueError(message(numpy_name(func), "need at least one array to concatenate", 0, "one or more arrays"))
    like = first_darray(*tup)
    return [darray_of(func, a, like) for a in tup]


def _cast_all(func: str, arrays: list[DArray], dtype, casting: str) -> list[DArray]:
    """NumPy's ``concatenate(..., dtype=, casting=)`` rule: every input must cast to the result dtype."""
    if casting not in CASTINGS:
        raise ValueError(message(numpy_name(func), "casting must be one of " + ", ".join(map(repr, CASTINGS)), casting))
    target = np.dtype(dtype) if dtype is not None else np.result_type(*(a.dtype for a in arrays))
    for a in arrays:
        if not np.can_cast(a.dtype, target, casting=casting):
            raise TypeError(message(numpy_name(func), f"cannot cast array data from {a.dtype} to {target} according "
                                    f"to the rule {casting!r}", a.dtype, f"a dtype that casts to {target}"))
    return [a if a.dtype == target else astype(a, target) for a in arrays]


@numpy_function(np.hstack)
def hstack(tup: Sequence, *, dtype=None, casting: str = "same_kind") -> DArray:
    """Stack arrays horizontally (``numpy.hstack``): along axis 0 for 1-d inputs, else axis 1.

    The result is cut like the first array (see :func:`darray.concat`).

    Examples
    --------
    >>> import darray as da
    >>> hstack([da.arange(2), da.arange(3)]).gather().tolist()
    [0, 1, 0, 1, 2]
    """
    arrays = [_atleast(a, 1) for a in _arrays("hstack", tup)]
    arrays = _cast_all("hstack", arrays, dtype, casting)
    return concatenate("hstack", arrays, 0 if arrays[0].ndim == 1 else 1)


@numpy_function(np.vstack)
def vstack(tup: Sequence, *, dtype=None, casting: str = "same_kind") -> DArray:
    """Stack arrays vertically (``numpy.vstack``): 1-d inputs become rows, then join along axis 0.

    Examples
    --------
    >>> import darray as da
    >>> vstack([da.arange(3), da.arange(3)]).shape
    (2, 3)
    """
    arrays = _cast_all("vstack", [_atleast(a, 2) for a in _arrays("vstack", tup)], dtype, casting)
    return concatenate("vstack", arrays, 0)


@numpy_function(np.dstack)
def dstack(tup: Sequence) -> DArray:
    """Stack arrays depth-wise (``numpy.dstack``): inputs made at least 3-d, joined along axis 2.

    Examples
    --------
    >>> import darray as da
    >>> dstack([da.ones((2, 3)), da.zeros((2, 3))]).shape
    (2, 3, 2)
    """
    arrays = _cast_all("dstack", [_atleast(a, 3) for a in _arrays("dstack", tup)], None, "same_kind")
    return concatenate("dstack", arrays, 2)


@numpy_function(np.column_stack)
def column_stack(tup: Sequence) -> DArray:
    """Stack 1-d arrays as columns of a 2-d array (``numpy.column_stack``); 2-d inputs join along axis 1.

    Examples
    --------
    >>> import darray as da
    >>> column_stack([da.arange(3), da.arange(3)]).shape
    (3, 2)
    """
    arrays = [reshape(a, (-1, 1)) if a.ndim < 2 else a for a in _arrays("column_stack", tup)]
    return concatenate("column_stack", _cast_all("column_stack", arrays, None, "same_kind"), 1)


# ---------------------------------------------------------------- axes and flattening
@numpy_function(np.swapaxes)
def swapaxes(a, axis1: int, axis2: int) -> DArray:
    """Interchange two axes (``numpy.swapaxes``); a new DArray (NumPy returns a view), no communication.

    Examples
    --------
    >>> import darray as da
    >>> swapaxes(da.ones((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    x = darray_of("swapaxes", a)
    i, j = axis_of("swapaxes", axis1, x.ndim), axis_of("swapaxes", axis2, x.ndim)
    perm = list(range(x.ndim))
    perm[i], perm[j] = j, i
    return permute_dims(x, tuple(perm))


@numpy_function(np.ravel)
def ravel(a, order: str = "C") -> DArray:
    """The flattened array (``numpy.ravel``), 1-d, in C order (``"C"``, ``"A"``, ``"K"``) or ``"F"`` order.

    A DArray's logical order is C order, so ``"A"`` and ``"K"`` equal ``"C"``.
    Local when every block is a run of whole rows; otherwise the reshape redistributes.

    Examples
    --------
    >>> import darray as da
    >>> ravel(da.reshape(da.arange(6), (2, 3)), order="F").gather().tolist()
    [0, 3, 1, 4, 2, 5]
    """
    x = darray_of("ravel", a)
    if order not in ("C", "F", "A", "K", None):
        raise ValueError(message(numpy_name("ravel"), "order must be one of 'C', 'F', 'A', or 'K'", order))
    if order == "F" and x.ndim > 1:
        x = permute_dims(x, tuple(reversed(range(x.ndim))))
    return reshape(x, (-1,))


# ---------------------------------------------------------------- splitting
@numpy_function(np.array_split)
def array_split(ary, indices_or_sections, axis: int = 0) -> list[DArray]:
    """Split into sub-arrays along ``axis`` (``numpy.array_split``): ``N`` sections of sizes differing by at
    most one, or at the given indices (Python slice semantics). Each part is a slice: no communication.

    Examples
    --------
    >>> import darray as da
    >>> [p.shape for p in array_split(da.arange(7), 3)]
    [(3,), (2,), (2,)]
    """
    return split_along("array_split", ary, indices_or_sections, axis, equal=False)


@numpy_function(np.split)
def split(ary, indices_or_sections, axis: int = 0) -> list[DArray]:
    """Split into equal sub-arrays along ``axis`` or at the given indices (``numpy.split``).

    An int that does not divide the axis raises ValueError, as in NumPy.

    Examples
    --------
    >>> import darray as da
    >>> [p.gather().tolist() for p in split(da.arange(6), [2, 5])]
    [[0, 1], [2, 3, 4], [5]]
    """
    return split_along("split", ary, indices_or_sections, axis, equal=True)
