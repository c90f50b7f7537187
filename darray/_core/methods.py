"""NumPy's ``ndarray`` methods on DArray, generated from ONE table.

:data:`METHODS` maps a method name to the function it calls with the array
first: NumPy's own function (``"numpy.cumsum"``: NumPy hands a DArray to
darray through ``__array_function__``, so ``x.cumsum(0)`` is exactly
``numpy.cumsum(x, 0)``, and a function someone registers later works at once),
a helper of this module, or :data:`ABOVE`: a function of the layer above,
which hands it down with :func:`register_method` when it is imported
(``_core`` never imports or names the layers above it). The functions
DArray's own methods call from above (``x.reshape`` is the public reshape,
``x.sum(where=...)`` the masked reduction, ...) are handed down alike, with
:func:`register_target`, and read as attributes of :data:`targets`; the
names expected are :data:`TARGETS`. The generated method carries NumPy's signature
(``inspect.signature(DArray.cumsum)`` is ``ndarray.cumsum``'s) and costs the
function's call plus one cached lookup:

- ``out=`` (by keyword or at NumPy's position) receives the result:
  ``out[...] = result`` (cast like NumPy), and ``out`` is returned;
- in-place methods (``sort``, ``partition``) write the result back into the
  array (``x[...] = result``) and return None, as NumPy's do.

The hot methods (``reshape``, ``sum``, ``mean``, ``max``, ``min``, ``astype``,
``copy``, ...) are written out in :mod:`darray._core.array_methods` and call their
engines directly (:data:`DIRECT`). What cannot mean anything for an array cut
over ranks is in :data:`EXCLUDED`, each name with its reason and the
alternative; using it raises that reason (a method: ``TypeError`` when called;
an attribute: ``AttributeError``, so that ``hasattr`` probes stay false;
protocol hooks NumPy probes for are simply not defined).

Examples
--------
>>> import darray as np
>>> x = np.arange(12).reshape(3, 4)
>>> x.cumsum(1)[2].tolist()
[8, 17, 27, 38]
>>> x.sort(axis=0)               # in place, like NumPy
>>> x.item(5), x.itemsize, x.strides
(5, 8, (32, 8))
>>> "ctypes" in np.DArray.__dict__ and "ctypes" in EXCLUDED
True
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy

from .._backend import is_numpy_namespace, to_numpy
from .._errors import message

__all__ = ["Method", "METHODS", "ABOVE", "DIRECT", "Excluded", "EXCLUDED", "FlatIter", "TARGETS", "targets",
           "register_method", "register_target", "unregistered", "generated", "into", "item", "fill", "flatten",
           "transpose", "view", "squeeze", "take", "tolist", "tobytes"]


_TYPE = type


#: The functions of the layer above that DArray's own methods call, by the name they are read under.
TARGETS = ("reshape", "conj", "real", "imag", "zeros_like", "equal", "numpy_reduction")


class _Targets:
    """Functions of darray's upper layers, handed down with :func:`register_target` (attributes once registered).

    ``targets.reshape`` costs one attribute lookup; reading one that was not
    registered raises :class:`AttributeError` naming what is missing.
    """

    def __getattr__(self, name: str):
        raise AttributeError(f"darray._core.methods.targets.{name}: not registered"
                             + (" (the layer above _core registers it when darray is imported)" if name in TARGETS
                                else f" (not one of {TARGETS})"))


def resolve(path: str):
    """The object at a dotted ``path`` below NumPy (``"numpy.cumsum"``, ``"numpy.linalg.norm"``)."""
    try:
        return importlib.import_module(path)
    except ImportError:
        module, _, attr = path.rpartition(".")
        return getattr(importlib.import_module(module), attr)


targets = _Targets()


def register_target(name: str, implementation: Callable) -> None:
    """Hand down ``implementation`` as ``targets.<name>``, one of :data:`TARGETS` (called by the layer above).

    Examples
    --------
    >>> import darray
    >>> targets.real(darray.asarray([1 + 2j, 3 - 4j])).tolist()
    [1.0, 3.0]
    """
    if name not in TARGETS:
        raise ValueError(message("register_target", "not a target DArray's methods call", name,
                                 f"one of {TARGETS}"))
    setattr(targets, name, implementation)


def into(func: str, out, result):
    """Write ``result`` into ``out`` (NumPy's ``out=``) and return ``out``."""
    from .array import DArray

    if not isinstance(out, DArray):
        raise TypeError(message(func, "out must be a DArray", type(out).__name__, "a DArray of the result's shape"))
    if out.shape != result.shape:
        raise ValueError(message(func, "out has the wrong shape", out.shape, f"{result.shape}"))
    out[...] = result
    return out


# ---------------------------------------------------------------- helpers the table names
def item(self, *args):
    """One element as a Python scalar (``ndarray.item``): no index (size-1 arrays), a flat index, or one per axis.

    Only that element moves (its owner broadcasts it).
    """
    shape = self.shape
    if len(args) == 1 and isinstance(args[0], tuple):
        args = args[0]
    if not args:
        if self.size != 1:
            raise ValueError(message("item", "can only convert an array of size 1 to a Python scalar", shape,
                                     "an array of size 1, or an index"))
        key = (0,) * self.ndim
    elif len(args) == 1 and self.ndim != 1:
        flat = _int("item", args[0])
        if not -self.size <= flat < self.size:
            raise IndexError(message("item", "index out of bounds", flat, f"an index below size {self.size}"))
        key = tuple(int(i) for i in numpy.unravel_index(flat % self.size, shape))
    else:
        if len(args) != self.ndim:
            raise ValueError(message("item", "incorrect number of indices for array", args, f"{self.ndim} indices"))
        key = tuple(_int("item", i) for i in args)
        for axis, (i, n) in enumerate(zip(key, shape)):
            if not -n <= i < n:
                raise IndexError(message("item", f"index out of bounds for axis {axis} with size {n}", i))
    value = self[key] if key else self
    return to_numpy(value._block)[()].item()  # a 0-d DArray is replicated: every rank holds it


def _int(func: str, i) -> int:
    try:
        return int(numpy.asarray(i).item()) if not isinstance(i, int) else i
    except (TypeError, ValueError):
        raise TypeError(message(func, "an index must be an integer", type(i).__name__, "an int")) from None


def fill(self, value) -> None:
    """Set every element to the scalar ``value`` (``ndarray.fill``), in place; no communication."""
    if numpy.ndim(value) != 0 or getattr(value, "size", 1) != 1:
        raise ValueError(message("fill", "setting an array element with a sequence", numpy.shape(value),
                                 "a scalar"))
    self[...] = value


def flatten(self, order: str = "C"):
    """A flattened copy (``ndarray.flatten``): :func:`numpy.ravel` of the array, copied."""
    return numpy.ravel(self, order).copy()


def transpose(self, *axes):
    """The array with its axes permuted (``ndarray.transpose``): ``x.transpose(1, 0)`` or ``x.transpose((1, 0))``."""
    if not axes or axes == (None,):
        axes = None
    elif len(axes) == 1 and not isinstance(axes[0], (int, numpy.integer)):
        axes = tuple(axes[0])
    return numpy.transpose(self, axes)


def view(self, dtype=None, type=None):  # NumPy's parameter name
    """The same cells read as another dtype, sharing the blocks (``ndarray.view``).

    ``x.view()`` is a new DArray over the same blocks; writes through either
    show in both. A dtype of another itemsize changes the length of the last
    axis, as in NumPy: allowed when no rank cuts that axis and it has no halo
    (each block is then viewed on its own); otherwise redistribute first, or
    convert values with :meth:`DArray.astype`.
    ``type=`` (an ndarray subclass) has no meaning for a DArray. The local
    library must have views (NumPy, CuPy, torch; not array-api-strict).
    """
    from .array import DArray

    if isinstance(dtype, _TYPE) and issubclass(dtype, (numpy.ndarray, DArray)):
        type, dtype = dtype, None
    if isinstance(type, _TYPE) and issubclass(type, DArray):  # (``class C(np.ndarray)`` under ``import darray as np``)
        raise TypeError(message("view", "a view as a subclass of DArray is not supported", type.__name__,
                                "a dtype; keep the DArray in an attribute of your class instead (composition)"))
    if type is not None:
        raise TypeError(message("view", "a view as an ndarray subclass has no meaning for a DArray", type,
                                "a dtype (numpy.asarray(x) gathers an ndarray)"))
    block = self._block
    if dtype is None:
        return DArray._wrap(block, self._layout, self._comm, self._xp)
    dtype = numpy.dtype(dtype)
    from .dtypes import check_dtype

    check_dtype("view", dtype)  # before anything moves: raw bytes, strings and objects have no blocks
    layout = self._layout
    if dtype.itemsize != self.dtype.itemsize:
        moved = _bytes_aligned(self, dtype)
        if moved is not None:  # blocks cut where the new itemsize cannot: a computed view, linked to self
            from .redistribute import redistribute_to
            from .views import link, plain

            def take(base):
                return redistribute_to(plain(base), moved).view(dtype)

            def put(base, out):
                base[...] = plain(out).view(base.dtype)

            return link(take(self), self, take, put)
        layout = _resized_last_axis(self, dtype)
    if not hasattr(block, "view"):
        raise TypeError(message("view", "the local library has no views", _TYPE(block).__name__,
                                "NumPy, CuPy or torch blocks"))
    if is_numpy_namespace(self._xp):
        viewed = block.view(dtype)
    else:
        from .dtypes import to_backend_dtype

        viewed = block.view(to_backend_dtype(self._xp, dtype))
    return DArray._new(viewed, layout, self._comm, self._xp)


def _bytes_aligned(self, dtype):
    """None where each block's part of the last axis holds whole items of ``dtype``; else the layout, cut
    alike but balanced in units of both itemsizes, to move the array to first (the cells of one item of
    ``dtype`` then share a block)."""
    from math import gcd

    from .._layout import balanced_sizes

    layout = self._layout
    old, new = self.dtype.itemsize, dtype.itemsize
    blocks = layout.sizes[-1] if self.ndim else ()
    if not self.ndim or layout.halo[-1] or (self.shape[-1] * old) % new or not any((s * old) % new for s in blocks):
        return None  # (the errors of _resized_last_axis, or nothing to move)
    unit = new // gcd(old, new)  # old items per whole number of new ones
    sizes = tuple(k * unit for k in balanced_sizes(self.shape[-1] // unit, len(blocks)))
    return layout.without_halo().replace(sizes=(*layout.sizes[:-1], sizes))


def _resized_last_axis(self, dtype):
    """The layout of a view as ``dtype`` of another itemsize: the last axis grows or shrinks (each block's
    part of it, when that axis is cut: every block's bytes must divide by the new itemsize)."""
    layout = self._layout
    old, new = self.dtype.itemsize, dtype.itemsize
    got = f"{self.dtype} -> {dtype}"
    if self.ndim == 0:
        raise ValueError(message("view", "a 0-d array cannot change its itemsize", got, f"itemsize {old}"))
    n = self.shape[-1]
    if (n * old) % new:
        raise ValueError(message("view", "the last axis's bytes do not divide by the new itemsize", got,
                                 f"a last axis of a multiple of {new} bytes"))
    blocks = layout.sizes[-1]
    if layout.halo[-1] or any((s * old) % new for s in blocks):
        raise ValueError(message("view", "another itemsize changes the last axis, which has a halo or blocks whose "
                                 "bytes do not divide by the new itemsize", got,
                                 f"itemsize {old}, or x.redistribute(split=0) first"))
    m = n * old // new
    return layout.replace(shape=(*self.shape[:-1], m), sizes=(*layout.sizes[:-1], tuple(s * old // new
                                                                                       for s in blocks)))


def squeeze(self, axis=None):
    """The array without its length-1 axes (``ndarray.squeeze``): all of them, or ``axis``."""
    if axis is None:
        axis = tuple(a for a, n in enumerate(self.shape) if n == 1)
    return numpy.squeeze(self, axis)


def take(self, indices, axis=None, out=None, mode: str = "raise"):
    """Elements at ``indices`` (``ndarray.take``): of the flattened array (``axis=None``) or along ``axis``.

    ``mode="wrap"`` / ``"clip"`` fold the indices into range first, as NumPy;
    n-d indices put their shape at ``axis`` (a 0-d index removes the axis).
    """
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(message("take", "mode must be 'raise', 'wrap' or 'clip'", mode))
    source = self if axis is not None or self.ndim == 1 else numpy.ravel(self)
    if mode != "raise":  # elementwise on the indices (a DArray of indices stays distributed)
        n = source.shape[0 if axis is None else axis]
        idx = indices if hasattr(indices, "gather") else numpy.asarray(indices)
        indices = idx % n if mode == "wrap" else numpy.clip(idx, 0, n - 1)
    axis = 0 if axis is None else axis
    shape = numpy.shape(indices) if not hasattr(indices, "gather") else indices.shape
    if len(shape) == 1:
        return numpy.take(source, indices, axis=axis)
    # n-d indices (NumPy's): take the flattened list, then give the result the indices' shape at ``axis``
    flat = indices.reshape(-1) if hasattr(indices, "gather") else numpy.reshape(indices, -1)
    got = numpy.take(source, flat, axis=axis)
    at = axis % source.ndim
    return got.reshape(*source.shape[:at], *shape, *source.shape[at + 1:])


def tolist(self):
    """The array as nested Python lists (``ndarray.tolist``) on every rank: it gathers the whole array."""
    return to_numpy(self.gather()).tolist()


def tobytes(self, order: str = "C") -> bytes:
    """The raw bytes of the global array (``ndarray.tobytes``) on every rank: it gathers the whole array."""
    return to_numpy(self.gather()).tobytes(order)


class FlatIter:
    """``x.flat``: the array as if flattened (C order), for ``x.flat[i]``, ``x.flat[i] = v``, iteration, ``len``.

    An integer index reads or writes one element through its owner (no
    other data moves); a slice, an index array or a mask goes through the
    raveled array (:func:`numpy.ravel`, which redistributes an n-d array).
    Iterating yields 0-d DArrays, one collective per element: use it for
    small arrays.
    """

    __slots__ = ("base",)

    def __init__(self, base):
        self.base = base

    def __len__(self) -> int:
        return self.base.size

    def _position(self, key):
        if isinstance(key, (int, numpy.integer)) and not isinstance(key, bool):
            n = self.base.size
            if not -n <= key < n:
                raise IndexError(message("flat", f"index out of bounds for size {n}", int(key)))
            return tuple(int(i) for i in numpy.unravel_index(int(key) % n, self.base.shape))
        return None

    def __getitem__(self, key):
        at = self._position(key)
        if at is not None:
            return self.base[at] if at else self.base
        return numpy.ravel(self.base)[key]

    def __setitem__(self, key, value) -> None:
        base = self.base
        at = self._position(key)
        if at is not None:
            base[at if at else ...] = value
            return
        flat = base if base.ndim == 1 else numpy.ravel(base).copy()
        flat[key] = value
        if flat is not base:
            base[...] = flat.reshape(base.shape)

    def __iter__(self):
        for i in range(self.base.size):
            yield self[i]

    def __array__(self, dtype=None, copy=None):
        return numpy.asarray(numpy.ravel(self.base), dtype=dtype)

    def copy(self):
        """A flattened copy of the array (``flatiter.copy``)."""
        return flatten(self.base)


# ---------------------------------------------------------------- THE table
class Method(NamedTuple):
    """A NumPy method on DArray: the function it calls with the array first."""

    target: str | Callable  # "numpy.<name>", a function of this module, or ABOVE (handed down: register_method)
    inplace: bool = False  # NumPy's method changes the array and returns None (sort, partition)
    note: str = ""


#: A row's target for a function of the layer above, handed down with :func:`register_method` when it is imported.
ABOVE = "above"

#: method name -> what it calls. NumPy functions dispatch to darray through ``__array_function__``.
METHODS: dict[str, Method] = {
    "argmax": Method("numpy.argmax"),
    "argmin": Method("numpy.argmin"),
    "argpartition": Method("numpy.argpartition"),
    "argsort": Method("numpy.argsort", note="``kind=`` is ignored: the sort is stable, or ``stable=False``."),
    "choose": Method("numpy.choose"),
    "clip": Method("numpy.clip"),
    "compress": Method(ABOVE),
    "conj": Method(ABOVE),
    "conjugate": Method(ABOVE),
    "cumprod": Method("numpy.cumprod"),
    "cumsum": Method("numpy.cumsum"),
    "diagonal": Method("numpy.diagonal"),
    "dot": Method("numpy.dot"),
    "fill": Method(fill),
    "flatten": Method(flatten),
    "item": Method(item),
    "nonzero": Method("numpy.nonzero"),
    "partition": Method("numpy.partition", inplace=True),
    "ptp": Method("numpy.ptp", note="removed from ndarray in NumPy 2; kept as ``numpy.ptp(x)``."),
    "put": Method(ABOVE),  # numpy.put, with the layer above's note on where it lands
    "ravel": Method("numpy.ravel"),
    "repeat": Method("numpy.repeat"),
    "round": Method("numpy.round"),
    "searchsorted": Method("numpy.searchsorted"),
    "sort": Method("numpy.sort", inplace=True, note="``kind=`` is ignored: the sort is stable."),
    "squeeze": Method(squeeze),
    "swapaxes": Method("numpy.swapaxes"),
    "take": Method(take),
    "tobytes": Method(tobytes),
    "tolist": Method(tolist),
    "trace": Method("numpy.trace"),
    "transpose": Method(transpose),
    "view": Method(view),
}

#: Written out in :mod:`darray._core.array`, calling their engines directly (the hot ones, and attributes).
DIRECT = ("all", "any", "astype", "copy", "max", "mean", "min", "prod", "reshape", "std", "sum", "var", "T", "mT",
          "real", "imag", "flat", "itemsize", "nbytes", "strides", "shape", "size", "ndim", "dtype", "device",
          "to_device")


class Excluded(NamedTuple):
    """A NumPy name that means nothing for an array cut over ranks."""

    kind: str  # "method" (raises TypeError when called), "attribute" (AttributeError), "protocol" (undefined)
    reason: str


_PICKLE = ("pickling would save one rank's block and a communicator; save the global array with "
           "darray.io.save(path, x) (every rank writes its block) or pickle numpy.asarray(x)")
_ONE_BUFFER = "describes one memory buffer, and a DArray is one block per rank: use x.local.{} for this rank's block"

#: NumPy names DArray does not provide, with the reason and the alternative (rendered in the docs).
EXCLUDED: dict[str, Excluded] = {
    "base": Excluded("attribute", "a DArray owns its blocks (views share them: x.view()); "
                                  "x.local.base is this rank's block's base"),
    "ctypes": Excluded("attribute", _ONE_BUFFER.format("ctypes")),
    "data": Excluded("attribute", _ONE_BUFFER.format("data")),
    "byteswap": Excluded("method", "blocks are in the local library's native byte order (CuPy and torch have no "
                                   "other); convert bytes on I/O (darray.io) or numpy.asarray(x).byteswap()"),
    "dump": Excluded("method", _PICKLE),
    "dumps": Excluded("method", _PICKLE),
    "getfield": Excluded("method", "fields of raw memory: DArray dtypes are numeric; use x.view(dtype) (same "
                                   "itemsize) or x.astype(dtype)"),
    "setfield": Excluded("method", "fields of raw memory: DArray dtypes are numeric; assign x[...] = value"),
    "resize": Excluded("method", "resizes one shared buffer in place; make a new array: x.reshape(shape), "
                                 "x[:n], or darray.concat"),
    "tofile": Excluded("method", "writes one buffer; darray.io.save(path, x) writes the global array with every "
                                 "rank writing its own block (MPI-IO)"),
    "__reduce__": Excluded("method", _PICKLE),
    "__reduce_ex__": Excluded("method", _PICKLE),
    "__getstate__": Excluded("method", _PICKLE),
    "__setstate__": Excluded("method", _PICKLE),
    "__array_interface__": Excluded("protocol", "a pointer to one buffer: NumPy falls back to __array__, which "
                                                "gathers (with a warning above darray.config.gather_warn_size)"),
    "__array_struct__": Excluded("protocol", "a pointer to one buffer: NumPy falls back to __array__, which "
                                             "gathers (with a warning above darray.config.gather_warn_size)"),
    "__array_wrap__": Excluded("protocol", "a hook of ndarray subclasses; DArray is no ndarray subclass: ufuncs "
                                           "and functions reach it through __array_ufunc__/__array_function__"),
    "__array_finalize__": Excluded("protocol", "a hook of ndarray subclasses; DArray is no ndarray subclass"),
}


# ---------------------------------------------------------------- generating the methods
def _numpy_parameters(name: str) -> tuple[list[str], set[str]]:
    """NumPy's ``ndarray.<name>``: its positional parameters after ``self``, and all its parameter names.

    Read from the method's ``__text_signature__`` (``"($self, /, axis=None, out=None, *, keepdims=False)"``)
    rather than :func:`inspect.signature`, whose parser would cost 8 ms of ``import darray``.
    """
    text = getattr(getattr(numpy.ndarray, name, None), "__text_signature__", None)
    if not text:
        return [], set()
    positional, names, keyword_only = [], set(), False
    for part in (part.strip() for part in text.strip("()").split(",")[1:]):  # [0] is $self
        if part.startswith("*"):  # *, *args, **kwargs: the positional parameters end here
            keyword_only = True
            names.add(part.lstrip("*"))
        elif part != "/":
            names.add(part.split("=")[0])
            if not keyword_only:
                positional.append(part.split("=")[0])
    return positional, names


def _method(name: str, row: Method) -> Callable:
    positional, parameters = _numpy_parameters(name)
    out_at = positional.index("out") if "out" in positional else None  # where ``out`` sits after ``self``
    takes_out = "out" in parameters
    above = row.target is ABOVE
    cache: list = [row.target] if callable(row.target) else []

    def target():
        if above:
            raise TypeError(f"DArray.{name}: its implementation was not registered (the layer above _core "
                            "registers it with darray._core.dispatch.register_method when darray is imported)")
        if not cache:
            cache.append(resolve(row.target))
        return cache[0]

    if row.inplace:
        def method(self, *args, **kwargs):
            self[...] = (cache[0] if cache else target())(self, *args, **kwargs)
    elif takes_out:
        def method(self, *args, **kwargs):
            out = kwargs.pop("out", None)
            if out_at is not None and len(args) > out_at:
                out = args[out_at]
                args = args[:out_at] + (None,) + args[out_at + 1:]
            result = (cache[0] if cache else target())(self, *args, **kwargs)
            return result if out is None else into(name, out, result)
    else:
        def method(self, *args, **kwargs):
            return (cache[0] if cache else target())(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    if above:
        _PENDING[name] = (cache, method)
        method.__doc__ = f"NumPy's ``ndarray.{name}`` for the global array (registered by the layer above _core)."
    else:
        shown = row.target if isinstance(row.target, str) else f"darray._core.methods.{row.target.__name__}"
        method.__doc__ = _doc(name, shown, row, callable(row.target) and row.target.__doc__ or "", takes_out)
    if hasattr(numpy.ndarray, name):
        method.__wrapped__ = getattr(numpy.ndarray, name)  # inspect.signature shows NumPy's, parsed when asked
    return method


def _doc(name: str, shown: str, row: Method, target_doc: str, takes_out: bool) -> str:
    """A generated method's docstring: what it calls, in place or not, the note, the helper's doc, ``out=``."""
    return (f"NumPy's ``ndarray.{name}`` for the global array: ``{shown}(x, ...)``"
            f"{' written back into x (in place)' if row.inplace else ''}.\n\n"
            + (f"{row.note}\n\n" if row.note else "")
            + (f"{target_doc}\n" if target_doc else "")
            + ("``out=`` receives the result (``out[...] = result``).\n" if takes_out else ""))


#: The generated methods of :data:`ABOVE` rows: name -> (their implementation's cache, the method).
_PENDING: dict[str, tuple[list, Callable]] = {}


def register_method(name: str, implementation: Callable, shown: str, note: str = "") -> None:
    """Hand down ``x.<name>``'s implementation, a row of :data:`METHODS` marked :data:`ABOVE` (by the layer above).

    The method already on DArray (NumPy's signature; ``out=`` and in-place
    as its row says) calls ``implementation(x, ...)`` from now on; its
    docstring names ``shown`` (the implementation's public dotted path) and
    carries ``note``. A name registered twice keeps the first.

    Examples
    --------
    >>> import darray
    >>> darray.DArray.compress.__doc__.splitlines()[0]
    "NumPy's ``ndarray.compress`` for the global array: ``darray._api.numpy.select.ndarray_compress(x, ...)``."
    """
    if name not in _PENDING or METHODS[name].target is not ABOVE:
        raise ValueError(message("register_method", "not a method DArray leaves to the layer above", name,
                                 f"one of {sorted(n for n, row in METHODS.items() if row.target is ABOVE)}"))
    if not callable(implementation):
        raise TypeError(message("register_method", "the implementation must be callable",
                                type(implementation).__name__, "a function taking the array first"))
    cache, method = _PENDING[name]
    if cache:
        return
    row = METHODS[name]._replace(note=note)
    method.__doc__ = _doc(name, shown, row, "", "out" in _numpy_parameters(name)[1])
    cache.append(implementation)


def unregistered() -> list[str]:
    """The names the layer above has not handed down yet: :data:`ABOVE` methods, then :data:`TARGETS`."""
    return ([name for name, (cache, _) in _PENDING.items() if not cache]
            + [name for name in TARGETS if name not in vars(targets)])


def _excluded(name: str, entry: Excluded):
    text = f"{name}: not available for a DArray: {entry.reason}"
    if entry.kind == "attribute":
        def get(self):
            raise AttributeError(text)

        return property(get, doc=text)

    def method(self, *args, **kwargs):
        raise TypeError(text)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = text
    return method


def generated() -> dict[str, Any]:
    """Every generated class attribute: the methods of :data:`METHODS` and the excluded names that raise."""
    out: dict[str, Any] = {name: _method(name, row) for name, row in METHODS.items()}
    out.update({name: _excluded(name, entry) for name, entry in EXCLUDED.items() if entry.kind != "protocol"})
    return out
