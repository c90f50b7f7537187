"""Common NumPy functions outside the Array API standard, distributed: ``hstack``, ``split``, ``cov``, ``interp``, ...

Each function has NumPy's signature and semantics and is registered with
``__array_function__``, so that ``numpy.vstack([x, y])`` and
``darray.vstack([x, y])`` give the same DArray. They compose darray's
distributed functions (``concat``, ``reshape``, ``matmul``, ``tensordot``,
``sum``, ``where``, slicing, ...); nothing gathers the whole array. What
moves, where it is not obvious:

- ``dot``/``inner``/``vdot``/``cov``/``corrcoef``: what ``matmul``/``tensordot``/
  ``vecdot`` move (a contraction over a cut axis: local products and an
  allreduce of the small result);
- ``ravel(order="F")``/``vdot`` of arrays cut along a later axis: the C-order
  reshape redistributes;
- ``interp``/``digitize``: elementwise on every block; ``xp``/``fp``/``bins``
  are small and held whole by every rank (a DArray there is allgathered);
- ``bincount``: a local ``numpy.bincount`` per rank and one allreduce of the
  length ``max(x) + 1`` count vector (plus two scalar allreduces for min/max);
  the result is replicated.

Unsupported argument combinations raise NumPy's exception type with a message
naming ``numpy.<function>``, the same on every rank.

Examples
--------
>>> import darray as da
>>> from darray._api.numpy_functions import vstack, average
>>> m = vstack([da.arange(3.0), da.ones(3)])
>>> m.shape, float(average(m, weights=da.asarray([1.0, 3.0]), axis=0)[0])
((2, 3), 0.75)
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Sequence
import numpy as np

import darray as _da

from .._backend import from_numpy, to_numpy
from .._core import DArray
from .._core.elementwise import local_operand, wrap_like
from .._core.protocols import implements
from ._common import first_darray
from .._errors import AxisError, message, names_errors

__all__ = [
    "angle", "around", "array", "array_split", "atleast_1d", "atleast_2d", "atleast_3d", "average", "bincount",
    "column_stack", "corrcoef", "cov", "cross", "diag", "diagonal", "digitize", "dot", "dstack", "hstack", "inner",
    "interp", "nan_to_num", "ravel", "split", "swapaxes", "trace", "vdot", "vstack",
]

_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


# ---------------------------------------------------------------- helpers
def _name(func: str) -> str:
    return f"numpy.{func}"


def _darray(func: str, x, like: DArray | None = None) -> DArray:
    """``x`` as a DArray: a DArray as it is; other data replicated on ``like``'s ranks (every rank passes it)."""
    if isinstance(x, DArray):
        return x
    if x is None or isinstance(x, (str, bytes)):
        raise TypeError(message(_name(func), "expected an array or a number", type(x).__name__,
                                "a DArray, a NumPy array, a nested sequence or a number"))
    array = np.asarray(x)
    if array.dtype.kind not in "biufc":
        raise TypeError(message(_name(func), "unsupported data", array.dtype,
                                "booleans or numbers (bool, int, float or complex)"))
    if like is None:
        return _da.asarray(array)
    return _da.asarray(array, split=None, comm=like.comm, device=like.device)


def _axis(func: str, axis, ndim: int) -> int:
    """``axis`` in ``[0, ndim)``; NumPy's AxisError (a ValueError and IndexError) otherwise."""
    if not isinstance(axis, numbers.Integral) or isinstance(axis, bool):
        raise TypeError(message(_name(func), "axis must be an integer", axis))
    if not -ndim <= axis < ndim:
        raise AxisError(message(_name(func), "axis out of bounds", axis, f"an axis in [{-ndim}, {ndim})"))
    return int(axis) % ndim


def _int(func: str, what: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(message(_name(func), f"{what} must be an integer", value))
    return int(value)


def _no_out(func: str, out) -> None:
    if out is not None:
        raise TypeError(message(_name(func), "out= is not supported for DArrays", type(out).__name__,
                                "None (assign the result instead)"))


def _plain(x: DArray):
    """``x``'s layout without ghost cells (what a result computed on the owned cells has)."""
    return x.layout.replace(halo=(0,) * x.ndim, boundary=("none",) * x.ndim)


def _blocks(func: str, f: Callable[..., np.ndarray], x: DArray, *others) -> DArray:
    """Apply the elementwise NumPy function ``f`` to this rank's owned block of ``x`` (no communication).

    ``others`` (DArrays or arrays of ``x``'s shape) are aligned to ``x``'s
    layout first. Blocks of other backends go through NumPy and back. ``f``
    must not raise on data (callers validate first), so that ranks agree.
    """
    layout = _plain(x)
    blocks = [to_numpy(x.local)] + [to_numpy(local_operand(_name(func), o, layout, x)) for o in others]
    out = np.asarray(f(*blocks))
    return wrap_like(from_numpy(x._xp, out, device=x.device), layout, x)


def _small(func: str, what: str, v) -> np.ndarray:
    """A small argument (``xp``, ``fp``, ``bins``) as a NumPy array held whole by every rank."""
    if isinstance(v, DArray):
        return to_numpy(v.gather())  # small by contract: allgathered once
    return np.asarray(v)


def _bool_product(func: str, a: DArray, b: DArray, product: Callable[[DArray, DArray], DArray]) -> DArray:
    """``product`` for NumPy's boolean semantics (an OR of ANDs): counted in int64, then ``!= 0``."""
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        return product(_da.astype(a, np.int64), _da.astype(b, np.int64)) != 0
    dtype = np.result_type(a.dtype, b.dtype)
    if a.dtype == np.bool_:
        a = _da.astype(a, dtype)
    if b.dtype == np.bool_:
        b = _da.astype(b, dtype)
    return product(a, b)


def _multiply(a: DArray, b: DArray) -> DArray:
    return _bool_product("multiply", a, b, lambda p, q: p * q) if np.bool_ in (a.dtype, b.dtype) else a * b


def _unsupported(func: str, what: str, got, expected: str, exc: type[Exception] = TypeError) -> Exception:
    return exc(message(_name(func), f"{what} is not supported for DArrays", got, expected))


# ---------------------------------------------------------------- atleast_nd
def _atleast(x: DArray, n: int) -> DArray:
    if x.ndim >= n:
        return x
    if x.ndim == 0:
        return _da.reshape(x, (1,) * n)
    if n == 2 or x.ndim == 2:  # (N,) -> (1, N); (M, N) -> (M, N, 1)
        return x[None] if n == 2 else x[..., None]
    return x[None, :, None]  # (N,) -> (1, N, 1)


def _atleast_all(func: str, arys, n: int):
    like = first_darray(*arys)
    res = [_atleast(_darray(func, a, like), n) for a in arys]
    return res[0] if len(res) == 1 else tuple(res)


@implements(np.atleast_1d)
@names_errors("numpy.atleast_1d")
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


@implements(np.atleast_2d)
@names_errors("numpy.atleast_2d")
def atleast_2d(*arys) -> DArray | tuple[DArray, ...]:
    """Each input with at least two dimensions (``numpy.atleast_2d``): (N,) becomes (1, N).

    Examples
    --------
    >>> import darray as da
    >>> atleast_2d(da.arange(3)).shape
    (1, 3)
    """
    return _atleast_all("atleast_2d", arys, 2)


@implements(np.atleast_3d)
@names_errors("numpy.atleast_3d")
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
    if isinstance(tup, DArray) or not isinstance(tup, Sequence) or isinstance(tup, (str, bytes)):
        raise TypeError(message(_name(func), "arrays to stack must be passed as a sequence", type(tup).__name__,
                                "a list or tuple of arrays"))
    if len(tup) == 0:
        raise ValueError(message(_name(func), "need at least one array to concatenate", 0, "one or more arrays"))
    like = first_darray(*tup)
    return [_darray(func, a, like) for a in tup]


def _cast_all(func: str, arrays: list[DArray], dtype, casting: str) -> list[DArray]:
    """NumPy's ``concatenate(..., dtype=, casting=)`` rule: every input must cast to the result dtype."""
    if casting not in _CASTINGS:
        raise ValueError(message(_name(func), "casting must be one of " + ", ".join(map(repr, _CASTINGS)), casting))
    target = np.dtype(dtype) if dtype is not None else np.result_type(*(a.dtype for a in arrays))
    for a in arrays:
        if not np.can_cast(a.dtype, target, casting=casting):
            raise TypeError(message(_name(func), f"cannot cast array data from {a.dtype} to {target} according "
                                    f"to the rule {casting!r}", a.dtype, f"a dtype that casts to {target}"))
    return [a if a.dtype == target else _da.astype(a, target) for a in arrays]


def _concat(func: str, arrays: list[DArray], axis: int) -> DArray:
    ndim = arrays[0].ndim
    for a in arrays[1:]:
        if a.ndim != ndim:
            raise ValueError(message(_name(func), "all the input arrays must have the same number of dimensions",
                                     tuple(a.shape for a in arrays), f"{ndim}-d arrays"))
    axis = _axis(func, axis, ndim)
    for a in arrays[1:]:
        if any(n != m for i, (n, m) in enumerate(zip(a.shape, arrays[0].shape)) if i != axis):
            raise ValueError(message(_name(func), f"all the input array dimensions except for axis {axis} must "
                                     "match exactly", tuple(a.shape for a in arrays), "matching shapes"))
    return _da.concat(arrays, axis=axis) if len(arrays) > 1 else _da.astype(arrays[0], arrays[0].dtype, copy=True)


@implements(np.hstack)
@names_errors("numpy.hstack")
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
    return _concat("hstack", arrays, 0 if arrays[0].ndim == 1 else 1)


@implements(np.vstack)
@names_errors("numpy.vstack")
def vstack(tup: Sequence, *, dtype=None, casting: str = "same_kind") -> DArray:
    """Stack arrays vertically (``numpy.vstack``): 1-d inputs become rows, then join along axis 0.

    Examples
    --------
    >>> import darray as da
    >>> vstack([da.arange(3), da.arange(3)]).shape
    (2, 3)
    """
    arrays = _cast_all("vstack", [_atleast(a, 2) for a in _arrays("vstack", tup)], dtype, casting)
    return _concat("vstack", arrays, 0)


@implements(np.dstack)
@names_errors("numpy.dstack")
def dstack(tup: Sequence) -> DArray:
    """Stack arrays depth-wise (``numpy.dstack``): inputs made at least 3-d, joined along axis 2.

    Examples
    --------
    >>> import darray as da
    >>> dstack([da.ones((2, 3)), da.zeros((2, 3))]).shape
    (2, 3, 2)
    """
    arrays = _cast_all("dstack", [_atleast(a, 3) for a in _arrays("dstack", tup)], None, "same_kind")
    return _concat("dstack", arrays, 2)


@implements(np.column_stack)
@names_errors("numpy.column_stack")
def column_stack(tup: Sequence) -> DArray:
    """Stack 1-d arrays as columns of a 2-d array (``numpy.column_stack``); 2-d inputs join along axis 1.

    Examples
    --------
    >>> import darray as da
    >>> column_stack([da.arange(3), da.arange(3)]).shape
    (3, 2)
    """
    arrays = [_da.reshape(a, (-1, 1)) if a.ndim < 2 else a for a in _arrays("column_stack", tup)]
    return _concat("column_stack", _cast_all("column_stack", arrays, None, "same_kind"), 1)


# ---------------------------------------------------------------- axes and flattening
@implements(np.swapaxes)
@names_errors("numpy.swapaxes")
def swapaxes(a, axis1: int, axis2: int) -> DArray:
    """Interchange two axes (``numpy.swapaxes``); a new DArray (NumPy returns a view), no communication.

    Examples
    --------
    >>> import darray as da
    >>> swapaxes(da.ones((2, 3, 4)), 0, 2).shape
    (4, 3, 2)
    """
    x = _darray("swapaxes", a)
    i, j = _axis("swapaxes", axis1, x.ndim), _axis("swapaxes", axis2, x.ndim)
    perm = list(range(x.ndim))
    perm[i], perm[j] = j, i
    return _da.permute_dims(x, tuple(perm))


@implements(np.ravel)
@names_errors("numpy.ravel")
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
    x = _darray("ravel", a)
    if order not in ("C", "F", "A", "K", None):
        raise ValueError(message(_name("ravel"), "order must be one of 'C', 'F', 'A', or 'K'", order))
    if order == "F" and x.ndim > 1:
        x = _da.permute_dims(x, tuple(reversed(range(x.ndim))))
    return _da.reshape(x, (-1,))


# ---------------------------------------------------------------- products
def _pair(func: str, a, b) -> tuple[DArray, DArray]:
    like = first_darray(a, b)
    return _darray(func, a, like), _darray(func, b, like)


@implements(np.dot)
@names_errors("numpy.dot")
def dot(a, b, out=None) -> DArray:
    """Dot product (``numpy.dot``): a product with 0-d operands, the inner product of 1-d arrays,
    a matrix product of 2-d ones, and a sum over ``a``'s last and ``b``'s second-to-last axis otherwise.

    Runs as :func:`darray.matmul` (``b`` up to 2-d) or :func:`darray.tensordot`; no conjugation.
    Booleans give NumPy's boolean result (an OR of ANDs).

    Examples
    --------
    >>> import darray as da
    >>> float(dot(da.arange(3.0), da.arange(3.0)))
    5.0
    """
    _no_out("dot", out)
    x, y = _pair("dot", a, b)
    if x.ndim == 0 or y.ndim == 0:
        return _multiply(x, y)
    k_axis = 0 if y.ndim == 1 else y.ndim - 2
    if x.shape[-1] != y.shape[k_axis]:
        raise ValueError(message(_name("dot"), f"shapes {x.shape} and {y.shape} not aligned: {x.shape[-1]} "
                                 f"(dim {x.ndim - 1}) != {y.shape[k_axis]} (dim {k_axis})", (x.shape, y.shape),
                                 "a's last axis as long as b's second-to-last (or only) axis"))
    if y.ndim <= 2:
        product = _da.matmul
    else:
        def product(p, q):
            return _da.tensordot(p, q, axes=([p.ndim - 1], [q.ndim - 2]))
    return _bool_product("dot", x, y, product) if np.bool_ in (x.dtype, y.dtype) else product(x, y)


@implements(np.vdot)
@names_errors("numpy.vdot")
def vdot(a, b, /) -> DArray:
    """``sum(conj(ravel(a)) * ravel(b))`` (``numpy.vdot``): a 0-d DArray; the arrays are flattened first.

    Runs as :func:`darray.vecdot` of the raveled arrays (a sum reduction with one allreduce).

    Examples
    --------
    >>> import darray as da
    >>> complex(vdot(da.asarray([1j, 2.0]), da.asarray([1j, 1.0])))
    (3+0j)
    """
    x, y = _pair("vdot", a, b)
    if x.size != y.size:
        raise ValueError(message(_name("vdot"), "vectors have different lengths", (x.size, y.size),
                                 "arrays with the same number of elements"))
    x, y = ravel(x), ravel(y)
    if np.bool_ in (x.dtype, y.dtype):
        return _bool_product("vdot", x, y, lambda p, q: _da.vecdot(p, q))
    return _da.vecdot(x, y)


@implements(np.inner)
@names_errors("numpy.inner")
def inner(a, b, /) -> DArray:
    """Inner product over the last axes (``numpy.inner``): ``tensordot(a, b, axes=([-1], [-1]))``, no conjugation.

    Examples
    --------
    >>> import darray as da
    >>> inner(da.ones((2, 3)), da.ones((4, 3))).shape
    (2, 4)
    """
    x, y = _pair("inner", a, b)
    if x.ndim == 0 or y.ndim == 0:
        return _multiply(x, y)
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(message(_name("inner"), f"shapes {x.shape} and {y.shape} not aligned: {x.shape[-1]} "
                                 f"(dim {x.ndim - 1}) != {y.shape[-1]} (dim {y.ndim - 1})", (x.shape, y.shape),
                                 "last axes of one length"))

    def product(p, q):
        return _da.tensordot(p, q, axes=([p.ndim - 1], [q.ndim - 1]))

    return _bool_product("inner", x, y, product) if np.bool_ in (x.dtype, y.dtype) else product(x, y)


@implements(np.cross)
@names_errors("numpy.cross")
def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> DArray:
    """Cross product of 3-element vectors (``numpy.cross``), vectors along ``axisa``/``axisb``, result along ``axisc``.

    ``axis`` overrides all three. Computed by :func:`darray.linalg.cross`
    (local when the vector axis is not cut, else the operands are re-cut first).
    2-element vectors (deprecated since NumPy 2.0) are not supported.

    Examples
    --------
    >>> import darray as da
    >>> cross(da.asarray([1.0, 0.0, 0.0]), da.asarray([0.0, 1.0, 0.0])).gather().tolist()
    [0.0, 0.0, 1.0]
    """
    if axis is not None:
        axisa = axisb = axisc = axis
    x, y = _pair("cross", a, b)
    x = _da.moveaxis(x, _axis("cross", axisa, x.ndim), -1)
    y = _da.moveaxis(y, _axis("cross", axisb, y.ndim), -1)
    if x.shape[-1] not in (2, 3) or y.shape[-1] not in (2, 3):
        raise ValueError(message(_name("cross"), "incompatible dimensions for cross product (dimension must be "
                                 "2 or 3)", (x.shape[-1], y.shape[-1]), "vectors of 3 elements"))
    if x.shape[-1] == 2 or y.shape[-1] == 2:
        raise _unsupported("cross", "2-element vectors (deprecated in NumPy 2.0)", (x.shape[-1], y.shape[-1]),
                           "vectors of 3 elements", ValueError)
    try:
        shape = np.broadcast_shapes(x.shape[:-1], y.shape[:-1]) + (3,)
    except ValueError:
        raise ValueError(message(_name("cross"), "shape mismatch: objects cannot be broadcast to a single shape",
                                 (x.shape, y.shape), "vector arrays that broadcast")) from None
    c = _axis("cross", axisc, len(shape))
    out = _da.linalg.cross(x, y, axis=-1)
    return _da.moveaxis(out, -1, c) if c != len(shape) - 1 else out


# ---------------------------------------------------------------- splitting
def _slice_axis(x: DArray, axis: int, start: int, stop: int) -> DArray:
    return x[(slice(None),) * axis + (slice(start, stop),)]


def _split(func: str, ary, indices_or_sections, axis, equal: bool) -> list[DArray]:
    x = _darray(func, ary)
    if x.ndim == 0:
        raise ValueError(message(_name(func), "cannot split a 0-d array", x.shape, "an array with ndim >= 1"))
    axis = _axis(func, axis, x.ndim)
    n = x.shape[axis]
    if isinstance(indices_or_sections, DArray):
        raise TypeError(message(_name(func), "indices_or_sections must be an int or a sequence of ints",
                                "a DArray", "a list, tuple or NumPy array of split points"))
    try:
        count = len(indices_or_sections)
    except TypeError:
        count = None
    if count is not None:
        points = [0] + [_int(func, "each split index", i) for i in indices_or_sections] + [n]
    else:
        sections = _int(func, "indices_or_sections", indices_or_sections)
        if equal:
            if sections == 0:
                raise ZeroDivisionError(message(_name(func), "integer modulo by zero", sections,
                                                "a positive number of sections"))
            if n % sections:
                raise ValueError(message(_name(func), "array split does not result in an equal division",
                                         f"{n} elements along axis {axis} into {sections} sections",
                                         f"a number of sections dividing {n}"))
        if sections <= 0:
            raise ValueError(message(_name(func), "number sections must be larger than 0.", sections,
                                     "a positive number of sections"))
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        points = [0]
        for s in sizes:
            points.append(points[-1] + s)
    return [_slice_axis(x, axis, points[i], points[i + 1]) for i in range(len(points) - 1)]


@implements(np.array_split)
@names_errors("numpy.array_split")
def array_split(ary, indices_or_sections, axis: int = 0) -> list[DArray]:
    """Split into sub-arrays along ``axis`` (``numpy.array_split``): ``N`` sections of sizes differing by at
    most one, or at the given indices (Python slice semantics). Each part is a slice: no communication.

    Examples
    --------
    >>> import darray as da
    >>> [p.shape for p in array_split(da.arange(7), 3)]
    [(3,), (2,), (2,)]
    """
    return _split("array_split", ary, indices_or_sections, axis, equal=False)


@implements(np.split)
@names_errors("numpy.split")
def split(ary, indices_or_sections, axis: int = 0) -> list[DArray]:
    """Split into equal sub-arrays along ``axis`` or at the given indices (``numpy.split``).

    An int that does not divide the axis raises ValueError, as in NumPy.

    Examples
    --------
    >>> import darray as da
    >>> [p.gather().tolist() for p in split(da.arange(6), [2, 5])]
    [[0, 1], [2, 3, 4], [5]]
    """
    return _split("split", ary, indices_or_sections, axis, equal=True)


# ---------------------------------------------------------------- statistics
def _axes(func: str, axis, ndim: int) -> tuple[int, ...] | None:
    if axis is None:
        return None
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(_axis(func, a, ndim) for a in items)
    if len(set(axes)) != len(axes):
        raise ValueError(message(_name(func), "repeated axis", tuple(items), "distinct axes"))
    return axes


@implements(np.average)
@names_errors("numpy.average")
def average(a, axis=None, weights=None, returned: bool = False, *, keepdims: bool = False):
    """Weighted average over ``axis`` (``numpy.average``); with ``returned=True`` also the sum of weights.

    ``weights`` has ``a``'s shape, or the shape of ``a`` along ``axis`` (then
    it broadcasts along the other axes). Sums are distributed reductions.
    Integer and boolean input is averaged in float64, as in NumPy.

    Examples
    --------
    >>> import darray as da
    >>> float(average(da.arange(4.0), weights=da.asarray([1.0, 1.0, 1.0, 5.0])))
    2.25
    """
    x = _darray("average", a, first_darray(weights))
    axes = _axes("average", axis, x.ndim)
    keepdims = bool(keepdims) if keepdims is not np._NoValue else False
    if weights is None:
        avg = _da.mean(x, axis=axes, keepdims=keepdims)
        scl = avg.dtype.type(x.size / avg.size)  # NumPy's count (ZeroDivisionError for an empty result, as NumPy)
        if returned:
            return avg, _da.full_like(avg, scl)
        return avg
    w = _darray("average", weights, x)
    if w.shape != x.shape:
        if axes is None:
            raise TypeError(message(_name("average"), "axis must be specified when shapes of a and weights differ",
                                    (x.shape, w.shape), "an axis, or weights of a's shape"))
        if w.shape != tuple(x.shape[ax] for ax in axes):
            raise ValueError(message(_name("average"), "shape of weights must be consistent with shape of a along "
                                     "specified axis", w.shape, f"{tuple(x.shape[ax] for ax in axes)}"))
        order = tuple(int(i) for i in np.argsort(axes))
        if order != tuple(range(len(axes))):
            w = _da.permute_dims(w, order)
        w = _da.reshape(w, tuple(s if ax in axes else 1 for ax, s in enumerate(x.shape)))
    if x.dtype.kind in "biu":
        dtype = np.result_type(x.dtype, w.dtype, np.float64)
    else:
        dtype = np.result_type(x.dtype, w.dtype)
    wd = _da.astype(w, dtype)
    scl = _da.sum(wd, axis=axes, keepdims=keepdims)
    if bool(_da.any(scl == 0.0)):
        raise ZeroDivisionError(message(_name("average"), "weights sum to zero, can't be normalized", None,
                                        "weights with a non-zero sum"))
    avg = _da.sum(_da.astype(x, dtype) * wd, axis=axes, keepdims=keepdims) / scl
    if returned:
        if scl.shape != avg.shape:
            scl = _da.astype(_da.broadcast_to(scl, avg.shape), scl.dtype, copy=True)
        return avg, scl
    return avg


def _check_weights(func: str, name: str, weights, nobs: int, like: DArray, integral: bool) -> DArray:
    w = _da.astype(_darray(func, weights, like), np.float64)
    if integral and not bool(_da.all(w == around(w))):
        raise TypeError(message(_name(func), f"{name} must be integer", None, "whole numbers"))
    if w.ndim > 1:
        raise RuntimeError(message(_name(func), f"cannot handle multidimensional {name}", w.shape, "a 1-d array"))
    if w.ndim == 0 or w.shape[0] != nobs:
        raise RuntimeError(message(_name(func), f"incompatible numbers of samples and {name}", w.shape,
                                   f"{nobs} weights"))
    if bool(_da.any(w < 0)):
        raise ValueError(message(_name(func), f"{name} cannot be negative", None, "weights >= 0"))
    return w


def _rows(x: DArray, rowvar: bool, transpose_1row: bool) -> DArray:
    """``x`` as (variables, observations)."""
    ndim = x.ndim
    x = _atleast(x, 2)
    if not rowvar and (ndim != 1 if not transpose_1row else x.shape[0] != 1):
        x = _da.permute_dims(x, (1, 0))
    return x


@implements(np.cov)
@names_errors("numpy.cov")
def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof: int | None = None, fweights=None,
        aweights=None, *, dtype=None) -> DArray:
    """Covariance matrix (``numpy.cov``): rows are variables (``rowvar=False``: columns), normalised by
    ``N - ddof`` (``ddof`` defaults to 1, or 0 with ``bias=True``); optional ``fweights``/``aweights``.

    The centred data's product with its conjugate transpose runs as
    :func:`darray.matmul`: with observations cut over the ranks, local products
    and one allreduce of the small (variables x variables) result.

    Examples
    --------
    >>> import darray as da
    >>> cov(da.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).gather().tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    if ddof is not None and ddof != int(ddof):
        raise ValueError(message(_name("cov"), "ddof must be integer", ddof))
    like = first_darray(m, y, fweights, aweights)
    x = _darray("cov", m, like)
    if x.ndim > 2:
        raise ValueError(message(_name("cov"), "m has more than 2 dimensions", x.shape, "a 1-d or 2-d array"))
    yv = None
    if y is not None:
        yv = _darray("cov", y, like)
        if yv.ndim > 2:
            raise ValueError(message(_name("cov"), "y has more than 2 dimensions", yv.shape, "a 1-d or 2-d array"))
    if dtype is None:
        dtype = np.result_type(x.dtype, *([yv.dtype] if yv is not None else []), np.float64)
    X = _rows(_da.astype(x, dtype), rowvar, False)
    if X.shape[0] == 0:
        return _da.reshape(_da.zeros(0, dtype=np.float64, comm=X.comm, device=X.device, split=None), (0, 0))
    if yv is not None:
        X = _concat("cov", [X, _rows(_da.astype(yv, dtype), rowvar, True)], 0)
    if ddof is None:
        ddof = 0 if bias else 1
    nobs = X.shape[1]
    w = aw = None
    if fweights is not None:
        w = _check_weights("cov", "fweights", fweights, nobs, X, integral=True)
    if aweights is not None:
        aw = _check_weights("cov", "aweights", aweights, nobs, X, integral=False)
        w = aw if w is None else w * aw
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = float(_da.real(w_sum[0]))  # real weights: a real sum
    if w is None:
        fact = nobs - ddof
    elif ddof == 0:
        fact = w_sum
    elif aw is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * float(_da.sum(w * aw)) / w_sum
    if fact <= 0:
        warnings.warn("numpy.cov: degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    X = X - avg[:, None]
    X_T = _da.permute_dims(X * w[None, :] if w is not None else X, (1, 0))
    if X_T.dtype.kind == "c":
        X_T = _da.conj(X_T)
    with np.errstate(divide="ignore"):
        scale = np.true_divide(1, fact)
    c = _da.matmul(X, X_T) * float(scale)
    ones = tuple(i for i, n in enumerate(c.shape) if n == 1)
    return _da.squeeze(c, axis=ones) if ones else c


def _clip_parts(block: np.ndarray) -> np.ndarray:
    out = block.copy()
    np.clip(out.real, -1, 1, out=out.real)
    np.clip(out.imag, -1, 1, out=out.imag)
    return out


@implements(np.corrcoef)
@names_errors("numpy.corrcoef")
def corrcoef(x, y=None, rowvar: bool = True, bias=np._NoValue, ddof=np._NoValue, *, dtype=None) -> DArray:
    """Pearson correlation coefficients (``numpy.corrcoef``): :func:`cov` scaled by the standard deviations,
    clipped to [-1, 1] (real and imaginary parts separately). ``bias``/``ddof`` have no effect (deprecated in NumPy).

    Examples
    --------
    >>> import darray as da
    >>> corrcoef(da.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).gather().tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    if bias is not np._NoValue or ddof is not np._NoValue:
        warnings.warn("numpy.corrcoef: bias and ddof have no effect and are deprecated", DeprecationWarning,
                      stacklevel=2)
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:  # one variable: nan for nan, inf or 0, else 1
        with np.errstate(divide="ignore", invalid="ignore"):
            return c / c
    d = _da.linalg.diagonal(c)
    stddev = _da.sqrt(_da.real(d))
    c = c / stddev[:, None]
    c = c / stddev[None, :]
    if c.dtype.kind == "c":
        return _blocks("corrcoef", _clip_parts, c)
    return _da.clip(c, -1.0, 1.0)


# ---------------------------------------------------------------- diagonals
def _last_two(func: str, a, axis1, axis2) -> DArray:
    """``a`` with axes ``axis1``, ``axis2`` moved to the end (in that order)."""
    x = _darray(func, a)
    if x.ndim < 2:
        raise ValueError(message(_name(func), "diag requires an array of at least two dimensions", x.shape,
                                 "an array with ndim >= 2"))
    i, j = _axis(func, axis1, x.ndim), _axis(func, axis2, x.ndim)
    if i == j:
        raise ValueError(message(_name(func), "axis1 and axis2 cannot be the same", (axis1, axis2),
                                 "two different axes"))
    perm = tuple(k for k in range(x.ndim) if k not in (i, j)) + (i, j)
    return _da.permute_dims(x, perm) if perm != tuple(range(x.ndim)) else x


@implements(np.trace)
@names_errors("numpy.trace")
def trace(a, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None, out=None) -> DArray:
    """Sum along diagonal ``offset`` of the 2-d sub-arrays over ``axis1``/``axis2`` (``numpy.trace``).

    Runs as :func:`darray.linalg.trace` (each rank sums its diagonal cells, one allreduce).

    Examples
    --------
    >>> import darray as da
    >>> float(trace(da.eye(3)))
    3.0
    """
    _no_out("trace", out)
    offset = _int("trace", "offset", offset)
    return _da.linalg.trace(_last_two("trace", a, axis1, axis2), offset=offset, dtype=dtype)


@implements(np.diagonal)
@names_errors("numpy.diagonal")
def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1) -> DArray:
    """Diagonal ``offset`` of the 2-d sub-arrays over ``axis1``/``axis2``, as the last axis (``numpy.diagonal``).

    A new DArray (NumPy returns a read-only view), from :func:`darray.linalg.diagonal`.

    Examples
    --------
    >>> import darray as da
    >>> diagonal(da.reshape(da.arange(9), (3, 3)), 1).gather().tolist()
    [1, 5]
    """
    offset = _int("diagonal", "offset", offset)
    return _da.linalg.diagonal(_last_two("diagonal", a, axis1, axis2), offset=offset)


@implements(np.diag)
@names_errors("numpy.diag")
def diag(v, k: int = 0) -> DArray:
    """A 2-d array with the 1-d ``v`` on diagonal ``k``, or the diagonal ``k`` of a 2-d ``v`` (``numpy.diag``).

    For 1-d ``v`` the (n+|k|) x (n+|k|) result is cut along its rows (``k >= 0``)
    or columns (``k < 0``) when ``v`` is distributed (only ``v`` moves);
    for a replicated ``v`` it is laid out as :func:`darray.eye` would be.

    Examples
    --------
    >>> import darray as da
    >>> diag(da.asarray([1, 2]), k=1).gather().tolist()
    [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    """
    x = _darray("diag", v)
    k = _int("diag", "k", k)
    if x.ndim == 2:
        return _da.linalg.diagonal(x, offset=k)
    if x.ndim != 1:
        raise ValueError(message(_name("diag"), "input must be 1- or 2-d", x.shape, "a 1-d or 2-d array"))
    n = x.shape[0] + abs(k)
    if k:
        pad = _da.zeros(abs(k), dtype=x.dtype, comm=x.comm, device=x.device, split=None)
        x = _da.concat([x, pad])
    split = "auto" if x.layout.is_replicated else (0 if k >= 0 else 1)
    mask = _da.eye(n, k=k, dtype=np.bool_, comm=x.comm, device=x.device, split=split)
    values = x[:, None] if k >= 0 else x[None, :]  # row i holds v[i] (k >= 0); column j holds v[j] (k < 0)
    return _da.where(mask, values, False if x.dtype == np.bool_ else 0)


# ---------------------------------------------------------------- elementwise
@implements(np.nan_to_num)
@names_errors("numpy.nan_to_num")
def nan_to_num(x, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> DArray:
    """NaN to ``nan``, +inf to ``posinf``, -inf to ``neginf`` (``numpy.nan_to_num``; defaults 0 and the
    dtype's largest/smallest finite values). Complex parts are treated separately. ``copy=False`` writes into ``x``.

    Elementwise (``where``; complex arrays block by block), no communication.

    Examples
    --------
    >>> import darray as da
    >>> nan_to_num(da.asarray([da.nan, da.inf, 1.0]), posinf=9.0).gather().tolist()
    [0.0, 9.0, 1.0]
    """
    xd = _darray("nan_to_num", x)
    kind = xd.dtype.kind
    if kind not in "fc":
        return _da.astype(xd, xd.dtype, copy=True) if copy else xd
    real = np.finfo(xd.dtype)
    hi = real.max if posinf is None else posinf
    lo = real.min if neginf is None else neginf
    if kind == "c":
        out = _blocks("nan_to_num", lambda b: np.nan_to_num(b, copy=True, nan=nan, posinf=hi, neginf=lo), xd)
    else:
        dt = xd.dtype.type
        with np.errstate(over="ignore", invalid="ignore"):  # NumPy casts the values into the dtype likewise
            nan_v, hi_v, lo_v = dt(nan), dt(hi), dt(lo)
        out = _da.where(_da.isnan(xd), nan_v, xd)
        out = _da.where(_da.isinf(xd) & (xd > 0), hi_v, out)
        out = _da.where(_da.isinf(xd) & (xd < 0), lo_v, out)
    if not copy and isinstance(x, DArray):
        if x.ndim:
            x[...] = out
        else:  # x[...] = out on a 0-d DArray indexes its block with (), a copy: write the block directly
            x.local[...] = out.local
        return x
    return out


@implements(np.angle)
@names_errors("numpy.angle")
def angle(z, deg: bool = False) -> DArray:
    """The counterclockwise angle from the positive real axis (``numpy.angle``), in radians or degrees.

    Real input gives 0 or pi (``atan2(0, x)``); integers and booleans are
    computed in float64 (int8/uint8 in float32: NumPy's float16 is not a darray dtype).

    Examples
    --------
    >>> import darray as da
    >>> angle(da.asarray([1.0, 1j, -1.0]), deg=True).gather().tolist()
    [0.0, 90.0, 180.0]
    """
    x = _darray("angle", z)
    if x.dtype.kind == "c":
        a = _da.atan2(_da.imag(x), _da.real(x))
    else:
        dtype = np.angle(np.zeros(0, dtype=x.dtype)).dtype
        xf = _da.astype(x, np.float32 if dtype == np.float16 else dtype)
        a = _da.atan2(_da.zeros_like(xf), xf)
    return a * (180 / np.pi) if deg else a


def _power_of_ten(n: int) -> float:
    """NumPy's ``power_of_ten`` (the C helper of ``around``), to round exactly as NumPy does."""
    if n < 9:
        return (1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8)[n]
    ret = 1e9
    while n > 9:
        ret *= 10.0
        n -= 1
    return ret


@names_errors("numpy.around")
def around(a, decimals: int = 0, out=None) -> DArray:
    """Round to ``decimals`` decimals, halves to even (``numpy.around`` / ``numpy.round``).

    As NumPy: floats are scaled by ``10**decimals``, rounded and scaled back
    (so results carry that scaling's floating-point error); integers are
    unchanged for ``decimals >= 0`` and rounded to tens, hundreds, ... in
    float64 for negative ``decimals``; complex parts are rounded separately.
    Booleans are refused (NumPy gives float16 or fails). Elementwise.

    Examples
    --------
    >>> import darray as da
    >>> around(da.asarray([1.234, 5.675]), 2).gather().tolist()
    [1.23, 5.68]
    >>> around(da.asarray([15, 25, 149]), -1).gather().tolist()
    [20, 20, 150]
    """
    _no_out("around", out)
    x = _darray("around", a)
    decimals = _int("around", "decimals", decimals)
    kind = x.dtype.kind
    if kind == "b":
        raise _unsupported("around", "rounding booleans", x.dtype, "a numeric dtype")
    if kind in "iu" and decimals >= 0:
        return _da.astype(x, x.dtype, copy=True)
    if kind == "c":
        return _blocks("around", lambda b: np.round(b, decimals), x)
    f = _power_of_ten(abs(decimals))
    y = _da.astype(x, np.float64) if kind in "iu" else x
    y = _da.round(y * f) / f if decimals >= 0 else _da.round(y / f) * f
    return _da.astype(y, x.dtype) if kind in "iu" else y


implements(np.around)(around)
implements(np.round)(around)


@implements(np.interp)
@names_errors("numpy.interp")
def interp(x, xp, fp, left=None, right=None, period=None) -> DArray:
    """Piecewise-linear interpolation (``numpy.interp``) of the small 1-d ``(xp, fp)`` at the points ``x``.

    Each rank interpolates its own block of ``x`` with NumPy (elementwise, no
    communication); ``xp``/``fp`` are held whole by every rank (NumPy arrays,
    sequences, or small DArrays, which are allgathered). float64 or complex128 result.

    Examples
    --------
    >>> import darray as da
    >>> interp(da.asarray([0.5, 1.5]), [0.0, 1.0, 2.0], [0.0, 10.0, 0.0]).gather().tolist()
    [5.0, 5.0]
    """
    xd = _darray("interp", x, first_darray(xp, fp))
    if xd.dtype.kind == "c":
        raise TypeError(message(_name("interp"), "x must be real", xd.dtype, "a real numeric dtype"))
    xs, fs = _small("interp", "xp", xp), _small("interp", "fp", fp)
    if xs.dtype.kind == "c":
        raise TypeError(message(_name("interp"), "xp must be real", xs.dtype, "a real numeric dtype"))
    try:  # NumPy's own checks, on data every rank holds: every rank raises alike
        np.interp(np.zeros(1), xs, fs, left, right, period)
    except (TypeError, ValueError) as exc:
        raise type(exc)(message(_name("interp"), str(exc), (xs.shape, fs.shape),
                                "1-d xp and fp of one non-zero length")) from None
    return _blocks("interp", lambda b: np.interp(b, xs, fs, left, right, period), xd)


@implements(np.digitize)
@names_errors("numpy.digitize")
def digitize(x, bins, right: bool = False) -> DArray:
    """Index of the bin of every element of ``x`` (``numpy.digitize``), for small monotonic 1-d ``bins``.

    Elementwise: each rank bins its own block; ``bins`` is held whole by every rank. int64 result.

    Examples
    --------
    >>> import darray as da
    >>> digitize(da.asarray([0.5, 1.5, 3.0]), [0.0, 1.0, 2.0]).gather().tolist()
    [1, 2, 3]
    """
    xd = _darray("digitize", x, first_darray(bins))
    if xd.dtype.kind == "c":
        raise TypeError(message(_name("digitize"), "x may not be complex", xd.dtype, "a real numeric dtype"))
    b = _small("digitize", "bins", bins)
    try:
        np.digitize(np.zeros(1, dtype=xd.dtype), b, right)
    except (TypeError, ValueError) as exc:
        raise type(exc)(message(_name("digitize"), str(exc), b.shape, "monotonic 1-d bins")) from None
    return _blocks("digitize", lambda block: np.digitize(block, b, right).astype(np.int64, copy=False), xd)


# ---------------------------------------------------------------- counting
def _owner(x: DArray) -> bool:
    """Does this rank count its block (coordinate 0 on every grid dim that replicates it)?"""
    layout = x.layout
    coords = layout.coords(x.comm.rank)
    return all(c == 0 for g, c in enumerate(coords) if layout.split[g] is None)


@implements(np.bincount)
@names_errors("numpy.bincount")
def bincount(x, /, weights=None, minlength: int = 0) -> DArray:
    """Occurrences (or sums of ``weights``) of every value ``0..max(x)`` of non-negative ints (``numpy.bincount``).

    Cost: two scalar allreduces (min, max), a local ``numpy.bincount`` per
    rank and one allreduce of the ``max(max(x) + 1, minlength)`` counts. The
    result (int64, float64 with weights) is replicated on every rank.

    Examples
    --------
    >>> import darray as da
    >>> bincount(da.asarray([0, 1, 1, 3])).gather().tolist()
    [1, 2, 0, 1]
    """
    xd = _darray("bincount", x, first_darray(weights))
    if xd.ndim != 1:
        raise ValueError(message(_name("bincount"), "x must be 1-d", xd.shape, "a 1-d array of non-negative ints"))
    if xd.dtype.kind not in "biu":  # NumPy 2 also takes uint64 (values past int64's range count as negative)
        raise TypeError(message(_name("bincount"), f"cannot cast array data from {xd.dtype} to int64 according "
                                "to the rule 'safe'", xd.dtype, "an integer or boolean dtype"))
    if minlength is None or isinstance(minlength, bool) or not isinstance(minlength, numbers.Integral):
        raise TypeError(message(_name("bincount"), "minlength must be an integer", minlength, "an int >= 0"))
    if minlength < 0:
        raise ValueError(message(_name("bincount"), "'minlength' must not be negative", minlength, "an int >= 0"))
    w = None
    if weights is not None:
        w = _darray("bincount", weights, xd)
        if w.shape != xd.shape:
            raise ValueError(message(_name("bincount"), "the weights and list don't have the same length",
                                     (w.shape, xd.shape), "weights of x's shape"))
        if not np.can_cast(w.dtype, np.float64, "safe"):
            raise TypeError(message(_name("bincount"), f"cannot cast weights from {w.dtype} to float64 according "
                                    "to the rule 'safe'", w.dtype, "real weights"))
    if xd.size == 0:  # as NumPy: zeros(minlength) of intp, with or without weights
        return _da.zeros(int(minlength), dtype=np.int64, comm=xd.comm, device=xd.device, split=None)
    length = int(minlength)
    xi = _da.astype(xd, np.int64) if xd.dtype == np.bool_ else xd
    top = int(_da.max(xi))
    if (xd.dtype.kind == "i" and int(_da.min(xi)) < 0) or top > np.iinfo(np.intp).max:
        raise ValueError(message(_name("bincount"), "'list' argument must have no negative elements", None,
                                 "values in [0, 2**63)"))
    length = max(length, top + 1)
    layout = _plain(xd)
    block = to_numpy(xd.local).astype(np.intp, copy=False)
    wblock = None if w is None else to_numpy(local_operand(_name("bincount"), w, layout, xd)).astype(np.float64)
    replicated = xd.layout.is_replicated
    if not replicated and not _owner(xd):  # a copy of a block that another rank counts
        block = block[:0]
        wblock = None if wblock is None else wblock[:0]
    # one dtype on every rank before the allreduce (an empty block's weighted bincount is intp in NumPy)
    counts = np.bincount(block, weights=wblock, minlength=length).astype(np.float64 if w is not None else np.int64)
    if not replicated:
        counts = to_numpy(xd.comm.allreduce(counts, "sum"))
    return _da.asarray(counts, split=None, comm=xd.comm, device=xd.device)


# ---------------------------------------------------------------- creation
_LAYOUT_KEYS = ("split", "grid", "sizes", "halo", "boundary")


@names_errors("numpy.array")
def array(object, dtype=None, *, copy: bool | None = True, order: str | None = "K", subok: bool = False,
          ndmin: int = 0, like=None, device=None, split="auto", grid=None, sizes=None, halo=0, boundary="none",
          comm=None) -> DArray:
    """A DArray from ``object`` (``numpy.array``): :func:`darray.asarray` with ``copy=True`` and ``ndmin``.

    ``object`` is a DArray or global data every rank passes identically;
    ``split``/``grid``/``sizes``/``halo``/``boundary``/``comm``/``device`` as for
    :func:`darray.asarray` (applied after ``ndmin`` prepends ones). ``copy=False``
    raises ValueError when a copy cannot be avoided, as in NumPy 2. ``order`` and
    ``subok`` do not change a DArray (its logical order is C order);
    ``numpy.array(data, like=x)`` dispatches here.

    Examples
    --------
    >>> import darray as da
    >>> array([1, 2, 3], ndmin=2).shape
    (1, 3)
    """
    if order not in ("K", "A", "C", "F", None):
        raise ValueError(message(_name("array"), "order must be one of 'C', 'F', 'A', or 'K'", order))
    ndmin = _int("array", "ndmin", ndmin)
    layout_given = (split != "auto" or grid is not None or sizes is not None or halo or boundary != "none")
    layout = dict(split=split, grid=grid, sizes=sizes, halo=halo, boundary=boundary)
    if isinstance(object, DArray):
        x = object
        if copy is False and ((dtype is not None and np.dtype(dtype) != x.dtype) or layout_given
                              or x.ndim < ndmin):
            raise ValueError(message(_name("array"), "unable to avoid copy while creating an array as requested",
                                     "copy=False", "copy=None or True (a new dtype, layout or ndim needs a copy)"))
        if x.ndim < ndmin:
            x = x[(None,) * (ndmin - x.ndim)]
        out = _da.asarray(x, dtype=dtype, **layout) if layout_given else _da.asarray(x, dtype=dtype)
        if copy and out is object:
            out = _da.astype(out, out.dtype, copy=True)
        return out
    try:
        data = np.array(object, dtype=dtype, copy=copy, ndmin=ndmin)
    except ValueError as exc:
        raise ValueError(message(_name("array"), str(exc), type(object).__name__)) from None
    if comm is None and isinstance(like, DArray):
        comm = like.comm
    return _da.asarray(data, copy=bool(copy) if copy is not None else None, device=device, comm=comm, **layout)


implements(np.array)(lambda object, dtype=None, **kw: array(object, dtype, **kw))
