"""Creation functions (Array API chapter "Creation Functions") plus ``from_local``.

Every function takes the layout keywords ``split``, ``grid``, ``sizes``,
``halo``, ``boundary`` and ``comm`` (see :class:`darray.Layout`), and builds
each rank's block directly from global index arithmetic: nothing global-sized
is ever allocated on a rank.
"""

from __future__ import annotations

import datetime
import math
import numbers
from collections.abc import Sequence

import array_api_compat
import numpy as np

from .. import _debug
from .._backend import NUMPY, contiguous_copy, from_numpy, is_numpy_namespace, namespace_of, to_numpy
from .._core import DArray, redistribute_to, target_layout, to_backend_dtype, to_numpy_dtype
from .._core.dtypes import DTYPES, check_dtype, is_extra
from .._core.elementwise import astype, sequence_operand
from .._errors import AxisError, message, names_errors
from .._layout import Layout
from .._comm import default_communicator, resolve_comm
from .._config import config
from .._core import make_layout
from ._common import normalize_shape, resolve_device

__all__ = ["arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "from_local", "full", "full_like",
           "identity", "linspace", "meshgrid", "ones", "ones_like", "tri", "tril", "triu", "zeros", "zeros_like"]


def _check_order(func: str, order, allowed: str = "CF") -> None:
    """NumPy's ``order=``: accepted for NumPy's signatures; blocks are C-ordered whatever it says.

    The global array has no memory order (it is cut into blocks); each block
    is C-ordered (``x.flags``, :mod:`darray._core.flags`), and values never depend on
    ``order``. Values NumPy refuses are refused the same way.
    """
    if order is not None and (not isinstance(order, str) or order.upper() not in allowed):
        raise ValueError(message(func, "unknown order", order, " or ".join(repr(c) for c in allowed)))


def _dtype(xp, dtype, default: str = "float64", func: str = "dtype"):
    return to_backend_dtype(xp, np.dtype(default) if dtype is None else dtype, func)


#: What a creation call on the default layout keywords with NumPy blocks worked out, remembered per
#: (shape, dtype, communicator, min_distributed_size, backend): (layout, padded block shape, NumPy dtype).
#: Only calls that passed every check are remembered, and only for a shape of Python ints (typed exactly:
#: ``(4.0, 3)`` equals ``(4, 3)`` as a key but is refused).
_DEFAULT_REQUESTS: dict = {}


def _default_request(shape, device, split, grid, sizes, halo, boundary, comm):
    """The key of a creation call that asks for the defaults only (see ``_DEFAULT_REQUESTS``), or None."""
    if not (device is None and comm is None and grid is None and sizes is None and type(split) is str
            and split == "auto" and type(halo) is int and halo == 0 and type(boundary) is str and boundary == "none"):
        return None
    if type(shape) is tuple:
        for n in shape:
            if type(n) is not int:
                return None
    elif type(shape) is not int:
        return None
    return shape, default_communicator(), config.min_distributed_size, config.backend


def _filled(func, fill, shape, dtype, device, split, grid, sizes, halo, boundary, comm) -> DArray:
    key = _default_request(shape, device, split, grid, sizes, halo, boundary, comm)
    if key is not None:  # the call a loop makes again and again: one dict lookup, then NumPy
        key = (key, dtype)
        try:
            found = _DEFAULT_REQUESTS.get(key)
        except TypeError:  # (an unhashable dtype argument: the checks below say what is wrong)
            found = key = None
        if found is not None:
            layout, padded, np_dtype = found
            block = np.empty(padded, np_dtype) if fill is None else np.zeros(padded, np_dtype) if fill == 0 \
                else np.full(padded, fill, np_dtype)
            return DArray._wrap(block, layout, key[0][1], NUMPY)
    shape = normalize_shape(func, shape)
    comm = resolve_comm(comm)
    xp, dev = resolve_device(device)
    layout = make_layout(func, shape, comm.size, split, grid, sizes, halo, boundary)
    padded = layout.padded_shape(comm.rank)
    dtype = _dtype(xp, dtype, func=func)
    if fill is None:
        block = xp.empty(padded, dtype=dtype, device=dev)
    elif fill == 0:
        block = xp.zeros(padded, dtype=dtype, device=dev)
    else:
        if isinstance(fill, np.generic) and not is_numpy_namespace(xp):
            fill = fill.item()  # strict namespaces take Python scalars only
        block = xp.full(padded, fill, dtype=dtype, device=dev)
    if key is not None and xp is NUMPY and dev is None:
        if len(_DEFAULT_REQUESTS) > 1024:
            _DEFAULT_REQUESTS.clear()
        _DEFAULT_REQUESTS[key] = (layout, padded, dtype)
    return DArray._wrap(block, layout, comm, xp)


_LAYOUT_DOC = """
    split, grid, sizes, halo, boundary : layout of the result (see :class:`darray.Layout`).
    comm : communicator (default: all processes)."""


def zeros(shape, dtype=None, order="C", *, device=None, split="auto", grid=None, sizes=None, halo=0,
          boundary="none", comm=None) -> DArray:
    """A new array of ``shape`` filled with zeros.

    Examples
    --------
    >>> import darray as da
    >>> float(da.sum(da.zeros((4, 3))))
    0.0
    """
    _check_order("zeros", order)
    return _filled("zeros", 0, shape, dtype, device, split, grid, sizes, halo, boundary, comm)


def ones(shape, dtype=None, order="C", *, device=None, split="auto", grid=None, sizes=None, halo=0,
         boundary="none", comm=None) -> DArray:
    """A new array of ``shape`` filled with ones.

    >>> import darray as da
    >>> float(da.sum(da.ones((4, 3))))
    12.0
    """
    _check_order("ones", order)
    return _filled("ones", 1, shape, dtype, device, split, grid, sizes, halo, boundary, comm)


def empty(shape, dtype=None, order="C", *, device=None, split="auto", grid=None, sizes=None, halo=0,
          boundary="none", comm=None) -> DArray:
    """A new array of ``shape`` with uninitialised owned cells (ghost cells are zero)."""
    _check_order("empty", order)
    if halo:
        return _filled("empty", 0, shape, dtype, device, split, grid, sizes, halo, boundary, comm)
    return _filled("empty", None, shape, dtype, device, split, grid, sizes, halo, boundary, comm)


def full(shape, fill_value, dtype=None, order="C", *, device=None, split="auto", grid=None, sizes=None, halo=0,
         boundary="none", comm=None) -> DArray:
    """A new array of ``shape`` filled with ``fill_value``.

    The default dtype follows the fill value: bool, int64, float64 or complex128.

    >>> import darray as da
    >>> da.full((2,), 7).dtype
    dtype('int64')
    """
    _check_order("full", order)
    if isinstance(fill_value, DArray) and fill_value.ndim == 0:
        fill_value = fill_value._scalar(lambda v: v, "full")
    if isinstance(fill_value, (DArray, list, tuple, np.ndarray)):  # NumPy's array fill, broadcast to ``shape``
        fill = as_darray("full", fill_value)
        dtype = to_numpy_dtype(fill.dtype) if dtype is None else dtype
        out = full(shape, np.zeros((), dtype)[()], dtype, order, device=device, split=split, grid=grid, sizes=sizes,
                   halo=halo, boundary=boundary, comm=comm)
        out[...] = fill
        return out
    if not isinstance(fill_value, (bool, numbers.Number, np.generic)):
        raise TypeError(message("full", "fill_value must be a scalar", type(fill_value).__name__,
                                "bool, int, float or complex"))
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    check_dtype("full", dtype)
    return _filled("full", fill_value if fill_value != 0 or isinstance(fill_value, bool) else 0, shape, dtype,
                   device, split, grid, sizes, halo, boundary, comm)


def _like(func, x, fill, dtype, order, shape, device, split, grid, sizes, halo, boundary):
    _check_order(func, order, "CFAK")
    x = as_darray(func, x)  # an array-like, as NumPy takes: its shape and dtype
    if shape is not None and normalize_shape(func, shape) != x.shape:  # NumPy's shape= override: a new layout
        layout = make_layout(func, normalize_shape(func, shape), x._comm.size, "auto" if split is None else split,
                             grid, sizes, halo or 0, boundary or "none")
    elif split is None and grid is None and sizes is None and halo is None and boundary is None:
        layout = x._layout
    else:
        layout = target_layout(x, func, "auto" if split is None else split, grid, sizes, halo, boundary)
    xp, dev = (x._xp, x.device) if device is None else resolve_device(device)
    dtype = x._block.dtype if dtype is None else to_backend_dtype(xp, dtype, func)
    padded = layout.padded_shape(x._comm.rank)
    if fill is None:
        block = xp.empty(padded, dtype=dtype, device=dev)
    else:
        if isinstance(fill, np.generic) and not is_numpy_namespace(xp):
            fill = fill.item()  # strict namespaces take Python scalars only
        block = xp.full(padded, fill, dtype=dtype, device=dev)
    return DArray._wrap(block, layout, x._comm, xp)


def zeros_like(x, /, dtype=None, order="K", subok=True, shape=None, *, device=None, split=None, grid=None,
               sizes=None, halo=None, boundary=None) -> DArray:
    """Zeros with the shape and (unless given) the layout, dtype and device of ``x``."""
    return _like("zeros_like", x, 0, dtype, order, shape, device, split, grid, sizes, halo, boundary)


def ones_like(x, /, dtype=None, order="K", subok=True, shape=None, *, device=None, split=None, grid=None,
              sizes=None, halo=None, boundary=None) -> DArray:
    """Ones with the shape and (unless given) the layout, dtype and device of ``x``."""
    return _like("ones_like", x, 1, dtype, order, shape, device, split, grid, sizes, halo, boundary)


def empty_like(x, /, dtype=None, order="K", subok=True, shape=None, *, device=None, split=None, grid=None,
               sizes=None, halo=None, boundary=None) -> DArray:
    """Uninitialised array with the shape and (unless given) the layout, dtype and device of ``x``."""
    return _like("empty_like", x, None, dtype, order, shape, device, split, grid, sizes, halo, boundary)


def full_like(x, /, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None, split=None,
              grid=None, sizes=None, halo=None, boundary=None) -> DArray:
    """``fill_value`` everywhere, with the shape and (unless given) the layout, dtype and device of ``x``.

    ``fill_value`` is a scalar (TypeError otherwise) that the dtype holds
    (NumPy's error type, naming ``full_like``, when it cannot be converted).

    >>> import darray as da
    >>> da.full_like(da.zeros(3, dtype=int), 7).tolist()
    [7, 7, 7]
    """
    if isinstance(fill_value, DArray):
        fill_value = fill_value._scalar(lambda v: v, "full_like")
    if not isinstance(fill_value, (bool, numbers.Number, np.generic)):
        raise TypeError(message("full_like", "fill_value must be a scalar",
                                f"{fill_value!r:.60} ({type(fill_value).__name__})", "bool, int, float or complex"))
    try:
        return _like("full_like", x, fill_value, dtype, order, shape, device, split, grid, sizes, halo, boundary)
    except (TypeError, ValueError, OverflowError) as exc:
        if str(exc).startswith("full_like"):
            raise
        raise type(exc)(message("full_like", "fill_value does not fit the dtype",
                                f"{fill_value!r} ({type(exc).__name__}: {exc})", "a value the dtype holds")) from exc


# ---------------------------------------------------------------- from data
def asarray(obj, /, dtype=None, order=None, *, device=None, copy=None, split="auto", grid=None, sizes=None,
            halo=0, boundary="none", comm=None) -> DArray:
    """A DArray from global data that every rank passes identically; each rank keeps its block.

    ``obj`` may be a DArray (re-laid out only if layout keywords are given),
    a NumPy/CuPy/torch array, a nested sequence or a scalar. With
    ``copy=None`` a block is a view of ``obj`` when possible.

    Examples
    --------
    >>> import darray as da
    >>> x = da.asarray([[1, 2, 3], [4, 5, 6]], split=0)
    >>> x.shape, int(da.sum(x))
    ((2, 3), 21)
    """
    if _debug.enabled and not isinstance(obj, DArray):  # every rank must pass the same data (a digest agrees)
        _debug.check_arguments(resolve_comm(comm), "asarray", obj, dtype, split, grid, sizes)
    _check_order("asarray", order, "CFAK")
    key = None
    if type(obj) is np.ndarray and dtype is None and copy is None and obj.dtype in _DTYPE_SET:
        key = _default_request(obj.shape, device, split, grid, sizes, halo, boundary, comm)
        layout = _WHOLE_ASARRAY.get(key)
        if layout is not None and obj.flags.c_contiguous:  # (what the checks below made of this request before)
            return DArray._wrap(obj[...], layout, key[1], NUMPY)  # a view of obj, as below
    if isinstance(obj, DArray):
        out = obj if device is None else _on_device("asarray", obj, device, copy)
        if split != "auto" or grid is not None or sizes is not None or halo or boundary != "none":
            out = redistribute_to(obj, target_layout(obj, "asarray", split, grid, sizes, halo, boundary))
        if dtype is not None and to_numpy_dtype(dtype) != out.dtype:
            out = astype(out, dtype)
        elif copy and out is obj:
            out = astype(obj, obj.dtype, copy=True)
        return out
    comm = resolve_comm(comm)
    foreign = not isinstance(obj, (np.ndarray, np.generic)) and array_api_compat.is_array_api_obj(obj)
    if device is None and foreign:  # a torch / CuPy / array-api-strict array keeps its backend
        xp, dev = namespace_of(obj), None
        data = obj
    else:
        xp, dev = resolve_device(device)
        data = obj
    if not foreign:
        try:
            array = np.asarray(data) if dtype is None else np.asarray(data, dtype=check_dtype("asarray", dtype))
        except ValueError as exc:
            raise ValueError(message("asarray", "cannot make an array of the data", str(exc))) from None
        if array.dtype.kind not in "biufc" and not is_extra(array.dtype):
            raise TypeError(message("asarray", "unsupported data", array.dtype,
                                    "booleans, numbers, dates, durations or records of those"))
        data = array
    elif dtype is not None:
        data = xp.astype(data, to_backend_dtype(xp, dtype))
    found = check_dtype("asarray", data.dtype)
    if is_extra(found):  # (TypeError where the local library lacks it: float16, or dates and records off NumPy)
        to_backend_dtype(xp, found, "asarray")
    layout = make_layout("asarray", tuple(data.shape), comm.size, split, grid, sizes, halo, boundary)
    part = data[layout.block_slices(comm.rank)] if data.ndim else data
    if isinstance(part, np.ndarray) and xp is not namespace_of(part):
        part = from_numpy(xp, part, device=dev)
    elif isinstance(part, np.ndarray) and dev is not None:
        part = xp.asarray(part, device=dev)
    if layout.has_halo:
        block = xp.zeros(layout.padded_shape(comm.rank), dtype=part.dtype, device=dev)
        block[layout.interior(comm.rank)] = part
    else:  # copy=None keeps a view of obj when it is contiguous, like numpy.asarray
        contiguous = getattr(getattr(part, "flags", None), "c_contiguous", True)
        block = contiguous_copy(xp, part) if copy or not contiguous else part
    out = DArray._new(block, layout, comm, xp)
    if key is not None and layout.whole and xp is NUMPY and dev is None:
        if len(_WHOLE_ASARRAY) > 1024:
            _WHOLE_ASARRAY.clear()
        _WHOLE_ASARRAY[key] = layout
    return out


def _on_device(func: str, x: DArray, device, copy) -> DArray:
    """``x`` with its blocks on ``device`` (a backend name or device object); ``x`` itself when already there."""
    xp, dev = resolve_device(device)
    here = x._xp is xp and (dev is None or dev == x.device)
    if here:
        return x
    if copy is False:
        raise ValueError(message(func, "copy=False, but moving the blocks to another device copies them",
                                 f"device={device!r} (the array's: {x.device!r})", "copy=None or True"))
    block = xp.asarray(x._block, device=dev) if x._xp is xp else from_numpy(xp, to_numpy(x._block), device=dev)
    return DArray._new(block, x._layout, x._comm, xp)


#: The whole layout :func:`asarray` gave a NumPy array of a darray dtype on the default keywords, per
#: ``_default_request`` key (shape, communicator, min_distributed_size, backend).
_WHOLE_ASARRAY: dict = {}
_DTYPE_SET = frozenset(DTYPES.values())


def as_darray(func: str, x, like: DArray | None = None) -> DArray:
    """``x`` as a DArray: a DArray as it is; an array-like (list, tuple, range, number, NumPy array) through
    :func:`asarray`.

    The one conversion of array-likes for darray's functions (see
    :mod:`darray._api.array_likes`). Next to a DArray ``like``, the data is
    replicated on ``like``'s ranks and backend (every rank passes the same
    data). Raises ``TypeError`` (``ValueError`` for ragged data) naming
    ``func`` for data that is not booleans or numbers.

    >>> as_darray("sum", [1.0, 2.0]).shape
    (2,)
    """
    if isinstance(x, DArray):
        return x
    if x is None or isinstance(x, (str, bytes)) or not (
            isinstance(x, (bool, numbers.Number, np.generic, list, tuple, np.ndarray, Sequence))
            or hasattr(x, "__array__")
            or hasattr(x, "__array_interface__") or hasattr(x, "__dlpack__")):
        raise TypeError(message(func, "expected a DArray or array-like", type(x).__name__,
                                "a DArray, a NumPy array, a nested sequence or a number"))
    try:
        return asarray(x) if like is None else asarray(x, split=None, comm=like.comm, device=like.device)
    except (TypeError, ValueError) as exc:
        raise type(exc)(message(func, "expected a DArray or array-like of booleans or numbers", type(x).__name__,
                                f"data that makes a bool/int/float/complex array ({exc})")) from exc


def from_local(block, /, *, split=0, grid=None, shape=None, halo=0, boundary="none", comm=None) -> DArray:
    """A DArray from each rank's own block (no copy); block shapes are exchanged with one allgather.

    Every rank passes its block of the same dtype and ndim; the blocks must
    tile the global array along the split axes (sizes may be uneven, blocks
    may be empty). Pass ``shape`` to check the global shape.

    Examples
    --------
    >>> import numpy, darray as da
    >>> x = da.from_local(numpy.ones(5), split=0)   # each rank contributes 5 elements
    >>> x.shape[0] % 5
    0
    """
    comm = resolve_comm(comm)
    if not array_api_compat.is_array_api_obj(block):
        raise TypeError(message("from_local", "block must be an array", type(block).__name__,
                                "a NumPy, CuPy, torch or Array API array"))
    xp = namespace_of(block)
    dtype = to_numpy_dtype(block.dtype)
    ndim = block.ndim
    # one fixed-size allgather of (ndim, dtype, shape...) so ranks can validate before moving data
    info = np.full(34, -1, dtype=np.int64)
    info[0], info[1] = ndim, dtype.num
    info[2:2 + min(ndim, 32)] = tuple(block.shape)[:32]
    table = to_numpy(comm.allgather(info))
    if len(set(table[:, 0])) != 1 or len(set(table[:, 1])) != 1:
        names = {t.num: t.name for t in map(np.dtype, (*np.sctypeDict.values(), dtype))}  # dtype numbers -> names
        got = ", ".join(f"rank {r}: {names.get(int(row[1]), int(row[1]))} ({int(row[0])}-d)"
                        for r, row in enumerate(table))
        raise ValueError(message("from_local", "blocks differ in ndim or dtype across ranks", got,
                                 "the same ndim and dtype on every rank"))
    if ndim > 32:
        raise ValueError(message("from_local", "too many dimensions", ndim, "at most 32"))
    shapes = [tuple(int(v) for v in row[2:2 + ndim]) for row in table]
    probe = Layout.create("from_local", shapes[0] if shapes else (), comm.size, split=split, grid=grid, halo=0)
    global_shape, sizes = _tile(shapes, probe)
    if shape is not None and tuple(shape) != global_shape:
        raise ValueError(message("from_local", "blocks do not tile the given shape", global_shape, tuple(shape)))
    layout = Layout.create("from_local", global_shape, comm.size, split=probe.split, grid=probe.dims,
                           sizes={a: s for a, s in enumerate(sizes) if probe.axis_dim[a] is not None},
                           halo=halo, boundary=boundary)
    if layout.has_halo:
        padded = xp.zeros(layout.padded_shape(comm.rank), dtype=block.dtype, device=namespace_device(block))
        padded[layout.interior(comm.rank)] = block
        block = padded
    return DArray._new(block, layout, comm, xp)


def namespace_device(block):
    import array_api_compat

    return array_api_compat.device(block)


def _tile(shapes, probe: Layout):
    """Global shape and per-axis block sizes from every rank's block shape, or ValueError."""
    ndim = probe.ndim
    global_shape, sizes = [], []
    for axis in range(ndim):
        g = probe.axis_dim[axis]
        if g is None:
            lengths = {s[axis] for s in shapes}
            if len(lengths) != 1:
                raise ValueError(message("from_local", f"blocks differ along unsplit axis {axis}",
                                         [s[axis] for s in shapes], "equal lengths"))
            global_shape.append(lengths.pop())
            sizes.append(None)
            continue
        per_block = {}
        for rank, s in enumerate(shapes):
            i = probe.coords(rank)[g]
            per_block.setdefault(i, set()).add(s[axis])
        if any(len(v) != 1 for v in per_block.values()):
            raise ValueError(message("from_local", f"blocks in one grid slab differ along axis {axis}",
                                     [s[axis] for s in shapes], "equal lengths within a slab"))
        axis_sizes = tuple(per_block[i].pop() for i in range(probe.dims[g]))
        global_shape.append(sum(axis_sizes))
        sizes.append(axis_sizes)
    return tuple(global_shape), sizes


# ---------------------------------------------------------------- ranges
def arange(start, /, stop=None, step=1, dtype=None, *, device=None, split="auto", grid=None, sizes=None, halo=0,
           boundary="none", comm=None) -> DArray:
    """Evenly spaced values in ``[start, stop)``; each rank computes its own block.

    >>> import darray as da
    >>> int(da.sum(da.arange(10)))
    45
    """
    if dtype is not None:
        check_dtype("arange", dtype)
    if stop is None:
        start, stop = 0, start
    if step is None:  # NumPy's default
        step = 1
    start, stop, step = (v.item() if isinstance(v, DArray) and v.ndim == 0 else v for v in (start, stop, step))
    if _is_time(dtype) or any(isinstance(v, (str, np.datetime64, np.timedelta64, datetime.date, datetime.timedelta))
                              for v in (start, stop, step)):
        return _arange_of_times(start, stop, step, dtype, device=device, split=split, grid=grid, sizes=sizes,
                                halo=halo, boundary=boundary, comm=comm)
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if not isinstance(v, (numbers.Real, np.generic)) or isinstance(v, bool):
            raise TypeError(message("arange", f"{name} must be a real number", v))
        if not math.isfinite(v):  # (NumPy's error: ValueError, "arange: cannot compute length")
            raise ValueError(message("arange", f"{name} must be finite", v, "a finite number"))
    if step == 0:
        raise ValueError(message("arange", "step must not be zero", step))
    integral = all(isinstance(v, (numbers.Integral, np.integer)) for v in (start, stop, step))
    n = len(range(int(start), int(stop), int(step))) if integral else max(0, math.ceil((stop - start) / step))
    if dtype is None:
        dtype = np.int64 if integral else np.float64
    comm = resolve_comm(comm)
    xp, dev = resolve_device(device)
    layout = make_layout("arange", (n,), comm.size, split, grid, sizes, halo, boundary)
    lo, hi = layout.block_slices(comm.rank)[0].start, layout.block_slices(comm.rank)[0].stop
    if integral and step < 0 and to_numpy_dtype(dtype).kind == "u":  # CuPy casts the step to the unsigned dtype
        local = xp.astype(xp.arange(start + lo * step, start + hi * step, step, dtype=xp.int64, device=dev),
                          _dtype(xp, dtype))
    elif integral:
        local = xp.arange(start + lo * step, start + hi * step, step, dtype=_dtype(xp, dtype), device=dev)
        if local.shape[0] != hi - lo:  # pragma: no cover - integer arithmetic is exact
            raise AssertionError("arange: block length mismatch")
    else:
        delta = (start + step) - start  # NumPy fills start + i * delta
        index = xp.arange(lo, hi, dtype=xp.float64, device=dev)
        local = xp.astype(index * delta + start, _dtype(xp, dtype))
    return _place(local, layout, comm, xp)


def _is_time(dtype) -> bool:
    return dtype is not None and to_numpy_dtype(dtype).kind in "Mm"


def _arange_of_times(start, stop, step, dtype, *, device, split, grid, sizes, halo, boundary, comm) -> DArray:
    """``arange`` of dates or durations (``arange("2005-02", "2005-03", dtype="datetime64[D]")``): NumPy's
    unit and length, each rank computing its block as int64 counts of that unit."""
    func = "arange"
    try:
        first, last = (np.asarray(v, dtype=dtype) if dtype is not None else np.asarray(v) for v in (start, stop))
        if first.dtype.kind not in "Mm":
            first = first.astype(last.dtype)
        if last.dtype.kind not in "Mm":
            last = last.astype(first.dtype)
        unit = np.result_type(first, last, np.asarray(step) if isinstance(step, np.timedelta64) else first)
        if dtype is not None:
            unit = to_numpy_dtype(dtype)
        step_dtype = np.dtype(unit.str.replace("M8", "m8"))
        begin, end = int(first.astype(unit).view(np.int64)), int(last.astype(unit).view(np.int64))
        count = int(np.asarray(step).astype(step_dtype).view(np.int64)) if isinstance(step, (np.timedelta64,
                                                                                           datetime.timedelta)) \
            else int(step)
    except (TypeError, ValueError) as exc:  # (NumPy's TypeError: bounds that are neither numbers nor dates)
        raise TypeError(message(func, "start, stop and step must be real numbers, or dates and durations",
                                (start, stop, step), f"bounds NumPy converts to one datetime64/timedelta64 unit "
                                f"({exc})")) from None
    if np.isnat(first) or np.isnat(last):
        raise ValueError(message(func, "cannot compute length", (start, stop), "bounds that are not NaT"))
    if count == 0:
        raise ValueError(message(func, "step must not be zero", step))
    n = len(range(begin, end, count))
    comm = resolve_comm(comm)
    xp, dev = resolve_device(device)
    if not is_numpy_namespace(xp):
        raise TypeError(message(func, "unsupported dtype", unit, "NumPy blocks (dates and durations live in NumPy "
                                "arrays only)"))
    layout = make_layout(func, (n,), comm.size, split, grid, sizes, halo, boundary)
    lo, hi = layout.block_slices(comm.rank)[0].start, layout.block_slices(comm.rank)[0].stop
    local = np.arange(begin + lo * count, begin + hi * count, count, dtype=np.int64).view(unit)
    return _place(local, layout, comm, xp)


def linspace(start, stop, /, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None, split="auto",
             grid=None, sizes=None, halo=0, boundary="none", comm=None):
    """``num`` evenly spaced samples from ``start`` to ``stop`` (NumPy's formula, blockwise).

    NumPy's signature (``num=50``, ``endpoint``, ``retstep``, ``dtype``,
    ``axis``) for scalar ``start`` and ``stop``; ``retstep=True`` returns
    ``(samples, step)`` as NumPy does.

    >>> import darray as da
    >>> float(da.max(da.linspace(0, 1, 11)))
    1.0
    >>> da.linspace(0, 1, 5, True, True)[1]
    0.25
    """
    if dtype is not None:
        check_dtype("linspace", dtype)
    if axis not in (0, -1):
        raise AxisError(message("linspace", "axis out of bounds", axis, "0 or -1 for scalar start and stop"))
    if not isinstance(num, numbers.Integral) or isinstance(num, bool):
        raise TypeError(message("linspace", "num must be an integer", num))
    if num < 0:
        raise ValueError(message("linspace", "num must be a non-negative integer", num))
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    if dtype is None:
        dtype = np.complex128 if is_complex else np.float64
    comm = resolve_comm(comm)
    xp, dev = resolve_device(device)
    layout = make_layout("linspace", (num,), comm.size, split, grid, sizes, halo, boundary)
    lo, hi = layout.block_slices(comm.rank)[0].start, layout.block_slices(comm.rank)[0].stop
    div = (num - 1) if endpoint else num
    work = np.complex128 if is_complex else np.float64
    index = np.arange(lo, hi, dtype=np.float64)
    delta = stop - start
    if div > 0:
        step = delta / div
        values = index * step + start if step != 0 else index / div * delta + start
    else:
        values = index * delta + start
    values = values.astype(work, copy=False)
    if endpoint and num > 1 and hi == num and hi > lo:
        values[-1] = stop
    local = xp.asarray(values.astype(to_numpy_dtype(dtype)), device=dev)
    out = _place(local, layout, comm, xp)
    return (out, delta / div if div > 0 else math.nan) if retstep else out


def _place(local, layout: Layout, comm, xp) -> DArray:
    if layout.has_halo:
        block = xp.zeros(layout.padded_shape(comm.rank), dtype=local.dtype, device=namespace_device(local))
        block[layout.interior(comm.rank)] = local
        local = block
    return DArray._wrap(local, layout, comm, xp)


def eye(n_rows, n_cols=None, /, k=0, dtype=None, order="C", *, device=None, split="auto", grid=None, sizes=None,
        halo=0, boundary="none", comm=None) -> DArray:
    """Ones on the ``k``-th diagonal, zeros elsewhere.

    >>> import darray as da
    >>> float(da.sum(da.eye(4, k=1)))
    3.0
    """
    _check_order("eye", order)
    return _band("eye", n_rows, n_cols, k, dtype, False, device, split, grid, sizes, halo, boundary, comm)


def tri(N, M=None, k=0, dtype=float, *, device=None, split="auto", grid=None, sizes=None, halo=0,
        boundary="none", comm=None) -> DArray:
    """Ones at and below the ``k``-th diagonal, zeros above (``numpy.tri``); each rank builds its block.

    >>> import darray as da
    >>> da.tri(3, 3, 0, int).gather().tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    return _band("tri", N, M, k, dtype, True, device, split, grid, sizes, halo, boundary, comm)


def _band(func, n_rows, n_cols, k, dtype, below: bool, device, split, grid, sizes, halo, boundary, comm) -> DArray:
    """Ones where ``col == row + k`` (``below``: ``col <= row + k``), built from global indices block by block."""
    if dtype is not None:
        check_dtype(func, dtype)
    if not isinstance(k, numbers.Integral) or isinstance(k, bool):
        raise TypeError(message(func, "k must be an integer", k))
    n_cols = n_rows if n_cols is None else n_cols
    shape = normalize_shape(func, (n_rows, n_cols))
    comm = resolve_comm(comm)
    xp, dev = resolve_device(device)
    layout = make_layout(func, shape, comm.size, split, grid, sizes, halo, boundary)
    rows, cols = layout.block_slices(comm.rank)
    k = min(max(int(k), -shape[0] - 1), shape[1])  # past the corners every diagonal is empty: any int k fits int64
    r = xp.reshape(xp.arange(rows.start, rows.stop, device=dev) + k, (-1, 1))
    c = xp.reshape(xp.arange(cols.start, cols.stop, device=dev), (1, -1))
    local = xp.astype(c <= r if below else r == c, _dtype(xp, dtype, func=func))
    return _place(local, layout, comm, xp)


def identity(n, dtype=None, *, device=None, split="auto", grid=None, sizes=None, halo=0, boundary="none",
             comm=None) -> DArray:
    """The ``n`` x ``n`` identity matrix (``numpy.identity``): :func:`eye` of ``n``.

    >>> import darray as da
    >>> int(da.sum(da.identity(3, int)))
    3
    """
    return _band("identity", n, n, 0, dtype, False, device, split, grid, sizes, halo, boundary, comm)


def _triangle(func: str, x, k: int, lower: bool) -> DArray:
    x = as_darray(func, x)  # an array-like, as NumPy takes
    if x.ndim < 2:
        raise ValueError(message(func, "needs at least 2 dimensions", x.shape, "a stack of matrices"))
    if isinstance(k, numbers.Integral):  # past the corners: all or nothing, for any int k (no int64 overflow)
        k = min(max(int(k), -x.shape[-2] - 1), x.shape[-1])
    xp = x._xp
    cells = x._layout.block_slices(x._comm.rank)
    r = xp.reshape(xp.arange(cells[-2].start, cells[-2].stop, device=x.device), (-1, 1))
    c = xp.reshape(xp.arange(cells[-1].start, cells[-1].stop, device=x.device), (1, -1))
    keep = (c - r <= k) if lower else (c - r >= k)
    local = xp.where(keep, x.local, xp.zeros((), dtype=x._block.dtype, device=x.device))
    return _place(local, x._layout, x._comm, xp)


def tril(x, /, k: int = 0) -> DArray:
    """Lower triangle of the last two axes (zeros above the ``k``-th diagonal); no communication."""
    return _triangle("tril", x, k, lower=True)


def triu(x, /, k: int = 0) -> DArray:
    """Upper triangle of the last two axes (zeros below the ``k``-th diagonal); no communication."""
    return _triangle("triu", x, k, lower=False)


def meshgrid(*arrays, indexing: str = "xy", split="auto", grid=None, comm=None) -> list[DArray]:
    """Coordinate arrays from 1-d coordinate vectors (NumPy semantics).

    The inputs are 1-d vectors (O(n) each, gathered if distributed); the
    outputs (O(n^d)) are distributed and built blockwise.
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(message("meshgrid", "unknown indexing", indexing, "'xy' or 'ij'"))
    vectors = []
    for a in arrays:
        a = sequence_operand("meshgrid", a)  # a list or tuple: NumPy's array of it
        if getattr(a, "ndim", 1) != 1:
            raise ValueError(message("meshgrid", "inputs must be 1-d", getattr(a, "shape", None)))
        vectors.append(a.gather() if isinstance(a, DArray) else a)
    if not vectors:
        return []
    dtypes = {str(to_numpy_dtype(v.dtype)) if hasattr(v, "dtype") else "" for v in vectors}
    if hasattr(vectors[0], "dtype") and len(dtypes) != 1:
        raise ValueError(message("meshgrid", "inputs must share one dtype", sorted(dtypes)))
    shape = [len(v) if not hasattr(v, "shape") else v.shape[0] for v in vectors]
    if indexing == "xy" and len(shape) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    first = arrays[0]
    comm = first._comm if isinstance(first, DArray) else resolve_comm(comm)
    xp = first._xp if isinstance(first, DArray) else namespace_of(np.asarray(vectors[0]))
    layout = make_layout("meshgrid", tuple(shape), comm.size, split, grid)
    cells = layout.block_slices(comm.rank)
    out = []
    for i, v in enumerate(vectors):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and len(shape) >= 2 else i
        part = xp.asarray(v)[cells[axis]]
        view = [1] * len(shape)
        view[axis] = part.shape[0]
        local = xp.broadcast_to(xp.reshape(part, tuple(view)), layout.block_shape(comm.rank))
        out.append(DArray._wrap(contiguous_copy(xp, local), layout, comm, xp))
    return out


@names_errors("from_dlpack")
def from_dlpack(x, /, *, device=None, copy=None, split="auto", grid=None, sizes=None, halo=0, boundary="none",
                comm=None) -> DArray:
    """A DArray from any DLPack-capable array holding the GLOBAL data (each rank passes the same).

    The standard's ``from_dlpack`` for a distributed namespace: like
    :func:`asarray`, the producer's backend is kept for the local blocks.
    To wrap per-rank blocks instead, use :func:`from_local`.
    """
    if not hasattr(x, "__dlpack__"):
        raise TypeError(message("from_dlpack", "object does not implement __dlpack__", type(x).__name__))
    array = x if array_api_compat.is_array_api_obj(x) else np.from_dlpack(x)
    return asarray(array, device=device, copy=copy, split=split, grid=grid, sizes=sizes, halo=halo,
                   boundary=boundary, comm=comm)
