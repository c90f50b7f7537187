"""The one elementwise engine behind every function of the table and every operator.

Operands are aligned to one layout (the first full-shaped distributed operand;
others are redistributed to it, replicated operands are sliced locally), then
the backend function runs on local blocks. Identical layouts without halos
take a fast path of one backend call plus O(1) Python.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._errors import message
from .._layout import Layout, balanced_sizes
from .alignment import binary_plan, cells, run_binary, strips
from .array import DArray
from .dtypes import CATEGORIES, check_dtype, to_backend_dtype, to_numpy_dtype
from .. import _recorder
from .._backend import NUMPY as _NUMPY, from_numpy, is_numpy_namespace
from .special_cases import standard_kernel
from .temporaries import reusable as _reusable
from .views import write_through
from .table import ELEMENTWISE, Elementwise

__all__ = ["apply", "apply_inplace", "run_plan", "astype", "align_target", "cheapest_layout",
           "local_operand", "wrap_like", "numbers_array", "sequence_operand", "NUMPY_BOOL_ARITHMETIC"]

_SCALARS = (bool, int, float, complex)
# Functions whose result has the dtype of two equal floating-point operands: only these may
# write into an operand's buffer (comparisons, for one, return booleans).
_SAME_DTYPE = frozenset({"add", "subtract", "multiply", "divide", "pow", "maximum", "minimum", "atan2", "hypot",
                         "copysign", "logaddexp", "nextafter", "remainder", "floor_divide"})
_funcs: dict[tuple[int, str], Any] = {}


def _func(xp, name: str):
    table = _funcs.get(xp)
    if table is None:
        table = _funcs[xp] = {}
    f = table.get(name)
    if f is None:
        f = table[name] = standard_kernel(xp, name)
    return f


def _kind(block) -> str:
    dtype = block.dtype
    return dtype.kind if isinstance(dtype, np.dtype) else to_numpy_dtype(dtype).kind


_KIND_NAMES = {"b": "bool", "i": "a signed integer", "u": "an unsigned integer", "f": "a real floating-point",
               "c": "a complex floating-point", "M": "a datetime64", "m": "a timedelta64", "V": "a record"}


#: Numeric functions that NumPy also computes on booleans, with a darray dtype as result (``mask * 2``,
#: ``b + 1.5``, ``b > 0``, ``abs(b)``, ``b / 2``): on NumPy blocks they follow NumPy's promotion. The others
#: stay refused: NumPy refuses ``-b`` and ``b - b`` itself, and gives float16 (no darray dtype) for ``round``,
#: ``floor``, ``ceil`` and ``trunc`` of booleans. Other blocks follow the standard (no booleans).
NUMPY_BOOL_ARITHMETIC = frozenset({"abs", "add", "conj", "divide", "floor_divide", "greater", "greater_equal",
                                   "isfinite", "isinf", "isnan", "less", "less_equal", "maximum", "minimum",
                                   "multiply", "pow", "real", "remainder", "square"})


#: The functions NumPy computes on dates and durations (``datetime64``/``timedelta64``, NumPy blocks only):
#: NumPy's own kernels pick the result dtype and refuse the pairs that mean nothing (``date + date``).
NUMPY_TIME_FUNCTIONS = frozenset({"abs", "add", "divide", "equal", "floor_divide", "greater", "greater_equal",
                                  "isfinite", "isinf", "isnan", "less", "less_equal", "maximum", "minimum",
                                  "multiply", "negative", "not_equal", "positive", "remainder", "sign",
                                  "subtract"})


def _numpy_kinds(name: str) -> frozenset:
    """The dtype kinds beyond ``name``'s category that NumPy blocks take (booleans, dates, records)."""
    kinds = set("b") if name in NUMPY_BOOL_ARITHMETIC else set()
    if name in NUMPY_TIME_FUNCTIONS:
        kinds |= set("Mm")
    if name in ("equal", "not_equal"):
        kinds.add("V")  # records compare field by field
    return frozenset(kinds)


_NUMPY_KINDS = {row.name: _numpy_kinds(row.name) for row in ELEMENTWISE}


def _check(row: Elementwise, kinds, xp=None) -> None:
    allowed = CATEGORIES[row.category]
    if xp is _NUMPY:
        allowed = allowed | _NUMPY_KINDS[row.name]
    for k in kinds:
        if k not in allowed:
            raise TypeError(message(row.name, "unsupported dtype", f"{_KIND_NAMES.get(k, k)} dtype",
                                    f"a {row.category} dtype"))


# Block dtypes already accepted per local namespace and function: the fast paths test membership here (one
# hash) instead of deriving the dtype's kind on every call. Per namespace, because dtypes of different
# libraries may hash alike and then compare (array_api_strict warns when compared with NumPy's).
_ACCEPTED: dict = {}


def _accepted(xp, name: str) -> set:
    table = _ACCEPTED.get(xp)
    if table is None:
        table = _ACCEPTED[xp] = {row.name: set() for row in ELEMENTWISE}
    return table[name]


def _accept(row: Elementwise, xp, *blocks) -> bool:
    """Check the blocks' dtypes against ``row``'s category (raising TypeError) and remember the good ones.

    True for record blocks (``equal``/``not_equal``), which are never remembered: NumPy's ufuncs have no loop
    for them, and the caller compares them with :func:`_compare_records` instead.
    """
    accepted = _accepted(xp, row.name)
    records = False
    for block in blocks:
        _check(row, _kind(block), xp)
        if block.dtype.names is not None if isinstance(block.dtype, np.dtype) else False:
            records = True
        else:
            accepted.add(block.dtype)
    return records


def _compare_records(name: str):
    """NumPy's operator comparison of record blocks (every field equal), for ``equal``/``not_equal``."""
    def compare(a, b, /):
        return np.asarray(a == b) if name == "equal" else np.asarray(a != b)
    return compare


def apply(row: Elementwise, args: tuple, temps: int = 0) -> DArray:
    """``row.name`` applied to ``args`` (DArrays, Python scalars or array-likes).

    ``temps`` flags operands that are unreferenced temporaries (bit 0: first,
    bit 1: second; see :func:`temporaries`): their buffers may take the result.
    """
    if _recorder.active is not None:
        begin, mark = _recorder.now(), len(_recorder.active)
        out = _apply(row, args, temps)
        _recorder.record_compute(row.name, begin, mark, out.shape)
        return out
    return _apply(row, args, temps)


def _apply(row: Elementwise, args: tuple, temps: int) -> DArray:
    if len(args) != row.nargs:
        raise TypeError(message(row.name, "wrong number of arguments", len(args), str(row.nargs)))
    first = args[0]
    if type(first) is DArray:
        layout = first._layout
        if row.nargs == 1:
            if not layout.has_halo:
                block = first._block
                if block.dtype not in _accepted(first._xp, row.name):
                    _accept(row, first._xp, block)
                out = _func(first._xp, row.name)(block)
                if type(out) is not np.ndarray and isinstance(out, np.generic):
                    out = np.asarray(out)  # NumPy returns scalars for 0-d inputs
                return DArray._wrap(out, layout, first._comm, first._xp)
        else:
            b = args[1]
            if type(b) is DArray and (layout is b._layout or layout == b._layout) and not layout.has_halo \
                    and first._xp is b._xp:
                ba, bb = first._block, b._block
                accepted = _accepted(first._xp, row.name)
                if (ba.dtype not in accepted or bb.dtype not in accepted) and _accept(row, first._xp, ba, bb):
                    return DArray._wrap(_compare_records(row.name)(ba, bb), layout, first._comm, first._xp)
                f = _func(first._xp, row.name)
                if temps and _keeps_dtype(row, f, ba, bb):
                    reuse = _reusable(first) if temps & 1 else None
                    if reuse is None and temps & 2:
                        reuse = _reusable(b)
                    if reuse is not None:
                        return DArray._wrap(f(ba, bb, out=reuse), layout, first._comm, first._xp)
                out = f(ba, bb)
                if type(out) is not np.ndarray and isinstance(out, np.generic):
                    out = np.asarray(out)
                return DArray._wrap(out, layout, first._comm, first._xp)
            if type(b) is DArray and type(first._block) is np.ndarray and type(b._block) is np.ndarray \
                    and b._comm is first._comm and layout.shape == b._layout.shape:
                out = _aligned_binary(row, first, b, temps)
                if out is not None:
                    return out
            if type(b) in _SCALARS and not layout.has_halo:
                return _with_scalar(row, first, b, False, temps & 1)
    elif type(first) in _SCALARS and row.nargs == 2:
        b = args[1]
        if type(b) is DArray and not b._layout.has_halo:
            return _with_scalar(row, b, first, True, temps & 2)
    return _general(row, args, temps)


def _with_scalar(row: Elementwise, x: DArray, scalar, reflected: bool, temporary: int) -> DArray:
    """``x op scalar`` (or ``scalar op x``) on the block; a temporary ``x`` may take the result in place."""
    block = x._block
    if block.dtype not in _accepted(x._xp, row.name):
        _accept(row, x._xp, block)
    f = _func(x._xp, row.name)
    if row.name == "pow" and not reflected:
        special = _COMPLEX_POWERS.get((type(scalar), scalar)) if type(block) is np.ndarray \
            and block.dtype.kind == "c" else None
        if special is not None:
            return DArray._wrap(special(block), x._layout, x._comm, x._xp)
        if scalar == 0.5:
            return DArray._wrap(half_power(x._xp, f, block, scalar), x._layout, x._comm, x._xp)
    if temporary and _keeps_dtype(row, f, block, scalar):
        reuse = _reusable(x)
        if reuse is not None:
            out = f(scalar, block, out=reuse) if reflected else f(block, scalar, out=reuse)
            return DArray._wrap(out, x._layout, x._comm, x._xp)
    out = f(scalar, block) if reflected else f(block, scalar)
    if type(out) is not np.ndarray and isinstance(out, np.generic):
        out = np.asarray(out)
    return DArray._wrap(out, x._layout, x._comm, x._xp)


#: NumPy's operator ``z ** p`` for a complex array and these exponents (its fast scalar power): not ``power``,
#: whose complex algorithm rounds otherwise (a Mandelbrot iteration then escapes at other steps).
_COMPLEX_POWERS = {(int, 2): np.square, (int, -1): np.reciprocal, (float, 0.5): np.sqrt}


def _aligned_binary(row: Elementwise, a: DArray, b: DArray, temps: int) -> DArray | None:
    """``f(a, b)`` for NumPy-block DArrays of one shape cut differently, by a remembered plan (None: the
    general path). The plan is worked out by the general path's own rules (:func:`align_target`,
    :func:`cheapest_layout`) on the first call per pair of layouts and rank, and kept on ``a``'s layout
    under ``("aligned", b's layout, rank)``, where the operators look it up (see :func:`run_plan`).
    """
    if type(_func(a._xp, row.name)) is not np.ufunc:
        return None
    rank = a._comm.rank
    derived = a._layout._derived
    plan = derived.aligned_plan(b._layout, rank)
    if plan is None:
        _, layout = align_target(row.name, (a, b))
        plan = binary_plan(a._layout, b._layout, cheapest_layout([a, b], layout), rank)
        derived.remember_aligned_plan(b._layout, rank, plan)
    return run_plan(row, plan, a, b, temps)


def run_plan(row: Elementwise, plan, a: DArray, b: DArray, temps: int) -> DArray | None:
    """Replay a remembered alignment ``plan`` (:func:`~darray._core.alignment.binary_plan`) of ``a`` and
    ``b``, NumPy-block DArrays on one communicator, with ``row``'s NumPy ufunc (None: not a ufunc).

    A temporary operand (``temps``, see :func:`temporaries`) whose cells are the result's takes the result.
    """
    xp = a._xp
    f = _func(xp, row.name)
    if type(f) is not np.ufunc:
        return None
    ba, bb = a._block, b._block  # (the references _reusable expects of its caller)
    accepted = _accepted(xp, row.name)
    if (ba.dtype not in accepted or bb.dtype not in accepted) and _accept(row, xp, ba, bb):
        return None  # (records: the general path compares them)
    out = None
    if temps and plan.reuses:
        for i, (x, other) in enumerate(((a, b), (b, a))):
            if temps >> i & 1 and plan.operands[i] is None and not x._layout.has_halo \
                    and _keeps_dtype(row, f, x._block, other._block):
                out = _reusable(x)
                if out is not None:
                    break
    return wrap_like(run_binary(plan, f, a, b, out), plan.layout, a)


def _keeps_dtype(row: Elementwise, f, block, other) -> bool:
    """Whether ``f(block, other)`` has ``block``'s dtype, so that a temporary ``block`` may take the result.

    NumPy ufuncs of the same-dtype functions on float or complex blocks, with
    ``other`` of the block's dtype or a Python scalar (which keeps the array's
    dtype; a complex one only a complex array's).
    """
    if type(f) is not np.ufunc or row.name not in _SAME_DTYPE or block.dtype.kind not in "fc" or not block.ndim:
        return False
    if type(other) in _SCALARS:
        return type(other) is not complex or block.dtype.kind == "c"
    return getattr(other, "dtype", None) == block.dtype


def _general(row: Elementwise, args: tuple, temps: int = 0) -> DArray:
    for x in args:  # a type that opts out of NumPy's protocol (e.g. an autodiff Variable) handles the operator
        if getattr(type(x), "__array_ufunc__", False) is None:
            return NotImplemented
    darrays = [x for x in args if isinstance(x, DArray)]
    if not darrays:
        raise TypeError(message(row.name, "needs at least one DArray argument", tuple(type(a).__name__ for a in args)))
    args = tuple(sequence_operand(row.name, x) for x in args)
    # validate every dtype from replicated metadata before anything moves
    _check(row, [check_dtype(row.name, x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype).kind
                 for x in args if not isinstance(x, _SCALARS)], darrays[0]._xp)
    target, layout = align_target(row.name, args)
    layout = cheapest_layout(darrays, layout)
    f = _func(target._xp, row.name)
    if any(getattr(getattr(x, "dtype", None), "names", None) is not None for x in args):
        f = _compare_records(row.name)
    parts = [_aligned_parts(row.name, x, layout, target) for x in args]
    out = _temporary_output(row, f, args, parts, layout, temps) if temps else None
    if all(not isinstance(p, list) for p in parts):
        if row.name == "pow" and not isinstance(parts[0], _SCALARS) and _is_half(parts[1]):
            return wrap_like(half_power(target._xp, f, *parts), layout, target)
        return wrap_like(f(*parts) if out is None else f(*parts, out=out), layout, target)
    return wrap_like(_piecewise(f, parts, layout.block_shape(target._comm.rank), target, out), layout, target)


def numbers_array(func: str, x) -> np.ndarray:
    """The NumPy array NumPy makes of operand ``x`` (replicated input, as every NumPy array meeting a DArray
    is); TypeError, naming ``func``, where that is not an array of booleans or numbers."""
    try:
        array = np.asarray(x)
    except (TypeError, ValueError):
        array = None
    if array is None or array.dtype.kind not in "biufcMm":
        raise TypeError(message(func, "unsupported operand type", type(x).__name__,
                                "a DArray, a NumPy array, a sequence of numbers or a number"))
    return array


def sequence_operand(func: str, x):
    """``x``, or an operand without an array's shape (a list, tuple, range, ``array.array``) as
    :func:`numbers_array` makes it (TypeError for what makes no array of numbers: a set, an object)."""
    if type(x) is list or type(x) is tuple:
        return numbers_array(func, x)
    if x is None or isinstance(x, (DArray, *_SCALARS)) or hasattr(x, "shape"):  # (None: clip's open bound)
        return x
    return numbers_array(func, x)


def _temporary_output(row: Elementwise, f, args: tuple, parts: list, layout: Layout, temps: int):
    """The block of a temporary operand that can take the result in place, or None.

    The operand must be unreferenced (``temps``, from the operator), hold its
    own buffer that nothing else views (:func:`_reusable`; ``parts`` holds the
    one reference it expects of its caller), already lie on the result's blocks
    (its part is its whole block) and keep the result's dtype. Shifted-slice
    stencils then allocate no block per operator beyond NumPy's own.
    """
    if len(args) != 2 or layout.has_halo:
        return None
    for i in (0, 1):
        x = args[i]
        if temps >> i & 1 and type(x) is DArray and parts[i] is x._block and type(x._block) is np.ndarray \
                and x._layout.blocks_key == layout.blocks_key and _keeps_dtype(row, f, x._block, args[1 - i]):
            reuse = _reusable(x)
            if reuse is not None:
                return reuse
    return None


def _aligned_parts(func: str, x, layout: Layout, target: DArray):
    """``x``'s part of ``layout``: a whole local array, or for a DArray cut otherwise, a list of pieces.

    Pieces are ``(region, array)`` in the operand's aligned block: views of
    its own block where it already holds the cells, and received buffers for
    the cells that other ranks own. Shifted slices of one array (stencils
    written with slicing) thereby move only boundary strips and copy nothing
    locally.
    """
    if not isinstance(x, DArray) or x._xp is not target._xp:
        return local_operand(func, x, layout, target)
    want = layout.broadcast_layout(x.shape)
    if x._layout.blocks_key == want.blocks_key or (x._layout.is_replicated and want.is_replicated):
        return x.local
    if x.shape != layout.shape:  # broadcast operands are materialised (they are the small ones)
        return local_operand(func, x, layout, target)
    rank = x._comm.rank
    if 0 in want.block_shape(rank):  # still a collective: serve the other ranks
        buffer = x._xp.empty(want.block_shape(rank), dtype=x._block.dtype, device=x.device)
        x._comm.exchange(x._block, strips(x._layout, want, rank).sends, buffer, []).wait()
        return buffer
    moves = strips(x._layout, want, rank)
    buffer = x._xp.empty(moves.box, dtype=x._block.dtype, device=x.device)
    with _recorder.labelled("align"):
        x._comm.exchange(x._block, moves.sends, buffer, moves.recvs).wait()
    return [(region, buffer[index] if from_buffer else x._block[index]) for region, from_buffer, index in moves.pieces]


def _piecewise(f, parts, shape, target: DArray, out=None):
    """Evaluate ``f`` cell by cell over the partition that the operands' pieces induce (into ``out`` if given)."""
    xp = target._xp
    ndim = len(shape)
    parts_cells = cells(shape, [[region for region, _ in part] for part in parts if isinstance(part, list)])
    empty = tuple((0, 0) for _ in shape)
    if type(f) is np.ufunc and is_numpy_namespace(xp):  # write each cell's result in place: no temporaries
        if out is None:
            probe = f(*[_restrict(part, empty, ndim) for part in parts])  # the result dtype, from empty operands
            out = np.empty(shape, dtype=probe.dtype)
        if out.size:
            for cell in parts_cells:
                f(*[_restrict(part, cell, ndim) for part in parts],
                  out=out[(*(slice(lo, hi) for lo, hi in cell), ...)])  # `...`: a view also at 0-d
        return out
    out = None
    for cell in parts_cells:
        args = [_restrict(part, cell, ndim) for part in parts]
        value = f(*args)
        if out is None:
            out = xp.empty(shape, dtype=value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype,
                           device=target.device)
        out[tuple(slice(lo, hi) for lo, hi in cell)] = value
    if out is None:  # an empty block: evaluate on empty operands for the dtype
        value = f(*[_restrict(part, empty, ndim) for part in parts])
        out = xp.empty(shape, dtype=value.dtype, device=target.device)
    return out


def _restrict(part, cell, ndim):
    """The operand ``part`` restricted to ``cell`` (a (lo, hi) pair per result axis)."""
    if isinstance(part, _SCALARS):
        return part
    if not isinstance(part, list):  # a whole local operand, possibly broadcast (length-1 or missing axes)
        lead = ndim - part.ndim
        return part[tuple(slice(lo, hi) if part.shape[a] != 1 else slice(None)
                          for a, (lo, hi) in enumerate(cell[lead:]))]
    for region, array in part:  # pieces tile the block: the cell lies inside exactly one
        if all(sl.start <= lo and hi <= sl.stop for sl, (lo, hi) in zip(region, cell)):
            return array[tuple(slice(lo - sl.start, hi - sl.start) for sl, (lo, hi) in zip(region, cell))]
    raise AssertionError(f"elementwise: cell {cell} is covered by no piece")  # pragma: no cover


def align_target(func: str, args) -> tuple[DArray, Layout]:
    """The operand whose layout the result takes, and the result's layout."""
    darrays = [x for x in args if isinstance(x, DArray)]
    comm = darrays[0]._comm
    for x in darrays[1:]:
        if x._comm is not comm:
            raise ValueError(message(func, "arrays live on different communicators", None,
                                     "arrays created on the same communicator"))
    shapes = [x.shape if isinstance(x, DArray) else np.shape(x) for x in args if not isinstance(x, _SCALARS)]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(message(func, "shapes cannot be broadcast together", tuple(shapes),
                                 "shapes equal or 1 along every axis")) from None
    full = [x for x in darrays if x.shape == shape]
    if full:
        distributed = [x for x in full if not x._layout.is_replicated]
        if len(distributed) > 1 and any(x._layout.blocks_key != distributed[0]._layout.blocks_key
                                        for x in distributed[1:]):
            # shifted views of one array differ by a few cells per block: aligning to the most balanced
            # one moves the least and keeps chains like a[2:] + a[:-2] + a[1:-1] on one layout
            distributed.sort(key=lambda x: _imbalance(x._layout))
        target = (distributed or full)[0]
        return target, target._layout
    target = max(darrays, key=lambda x: (not x._layout.is_replicated, x.size))
    return target, _expand(target._layout, shape)


def cheapest_layout(darrays, layout: Layout) -> Layout:
    """``layout``, or the balanced layout of its grid when aligning the operands to that moves no more.

    Shifted views of one array (``u[2:] + u[:-2]``) have blocks a cell or two
    off the balanced cut; aligning them all to it costs the same bytes as
    aligning to either, and the result then matches the other views of the
    expression (``u[1:-1]``), which later operators meet without moving.
    """
    cut = [x._layout for x in darrays if x.shape == layout.shape and not x._layout.is_replicated]
    if len(cut) < 2 or all(c.blocks_key == layout.blocks_key for c in cut) \
            or any(c.dims != layout.dims or c.split != layout.split for c in cut):
        return layout
    balanced = layout.replace(sizes=tuple(balanced_sizes(n, len(sz)) if g is not None else sz
                                          for n, sz, g in zip(layout.shape, layout.sizes, layout.axis_dim)))
    if balanced.blocks_key == layout.blocks_key:
        return layout
    cost = sum(_moved(c, layout) for c in cut)
    return balanced if sum(_moved(c, balanced) for c in cut) <= cost else layout


def _moved(a: Layout, b: Layout) -> int:
    """Cells that change rank between two layouts of one grid (sum over ranks of what is not kept)."""
    kept = 1
    for offs_a, offs_b in zip(a.offsets, b.offsets):
        per_axis = 0
        for i in range(len(offs_a) - 1):  # block i of both layouts belongs to the same grid coordinate
            per_axis += max(0, min(offs_a[i + 1], offs_b[i + 1]) - max(offs_a[i], offs_b[i]))
        kept *= per_axis
    total = 1
    for n in a.shape:
        total *= n
    return total - kept


def _imbalance(layout: Layout) -> int:
    """How far the block sizes are from even (0 for a balanced layout)."""
    return sum(max(layout.sizes[a]) - min(layout.sizes[a]) for a, g in enumerate(layout.axis_dim) if g is not None)


def _expand(layout: Layout, shape) -> Layout:
    """A layout for the broadcast ``shape`` cut like ``layout`` (whose shape broadcasts to it)."""
    lead = len(shape) - layout.ndim
    split, sizes = [], []
    for s in layout.split:
        ok = s is not None and layout.shape[s] == shape[s + lead]
        split.append(s + lead if ok else None)
    for a, n in enumerate(shape):
        sizes.append(layout.sizes[a - lead] if a in split else (n,))
    return Layout(shape, layout.dims, split, sizes)


def local_operand(func: str, x, layout: Layout, target: DArray):
    """This rank's part of operand ``x`` aligned with ``layout`` (communicating if x is cut otherwise)."""
    if isinstance(x, _SCALARS):
        if isinstance(x, np.generic) and not is_numpy_namespace(target._xp):
            return x.item()  # np.float64 is a float, but strict namespaces take Python scalars only
        return x
    want = layout.broadcast_layout(x.shape)
    if isinstance(x, DArray):
        if x._layout.blocks_key != want.blocks_key:
            from .redistribute import redistribute_to

            x = redistribute_to(x, want)
        if x._xp is not target._xp:
            return target._xp.asarray(x.local)
        return x.local
    array = np.asarray(x) if not hasattr(x, "__array_namespace__") else x
    if hasattr(array, "dtype"):
        check_dtype(func, array.dtype)  # refuse object and string arrays
    local = array[want.block_slices(target._comm.rank)]
    return from_numpy(target._xp, local, device=target.device)


def wrap_like(out, layout: Layout, like: DArray) -> DArray:
    """Wrap a local result computed on the owned cells of ``layout`` (padding it if it has a halo)."""
    xp = like._xp
    if type(out) is not np.ndarray and isinstance(out, np.generic):
        out = np.asarray(out)
    if layout.has_halo:
        padded = xp.zeros(layout.padded_shape(like._comm.rank), dtype=out.dtype, device=like.device)
        padded[layout.interior(like._comm.rank)] = out
        out = padded
    return DArray._wrap(out, layout, like._comm, xp)


def _is_half(exponent) -> bool:
    """Whether ``exponent`` is the one value 0.5 (a scalar or a one-element floating-point array)."""
    if isinstance(exponent, _SCALARS):
        return type(exponent) is not complex and exponent == 0.5
    if getattr(exponent, "size", None) != 1 or _kind(exponent) != "f":
        return False
    return float(exponent[(0,) * exponent.ndim]) == 0.5


def half_power(xp, f, base, exponent):
    """``base ** exponent`` for an exponent of one value 0.5, with the standard's special cases.

    NumPy (and array_api_strict through it) computes a one-value exponent 0.5 as
    ``sqrt`` (numpy/numpy#21213): ``-inf`` gives NaN and ``-0.0`` gives ``-0.0``
    where ``pow`` (C's, NumPy's own with an array of exponents, the Array API's
    special cases) gives ``+inf`` and ``+0.0``. Those two cells are set right;
    other dtypes than real floating-point ones pass through.
    """
    result = f(base, exponent)
    if _kind(result) != "f" or _kind(base) != "f":  # an integer base holds neither -inf nor -0.0
        return result
    inf = xp.asarray(float("inf"), dtype=result.dtype)
    result = xp.where(base == -inf, inf, result)
    result += 0.0  # turns -0.0 into +0.0 and changes nothing else
    return result


def apply_inplace(row: Elementwise, x: DArray, other) -> DArray:
    """``x op= other``: the result is written into x's block; x's dtype and shape do not change."""
    other = sequence_operand(f"__i{row.operator[2:-2]}__", other)
    if not isinstance(other, (DArray, *_SCALARS)) and not hasattr(other, "shape"):
        return NotImplemented
    if x._link is not None:  # a computed view: the write reaches its base (darray._core.views)
        write_through(x, lambda target: apply_inplace(row, target, other))
        return x
    target, layout = align_target(row.name, (x, other))
    if layout.shape != x.shape:
        raise ValueError(message(f"__i{row.operator[2:-2]}__", "in-place result would change the shape",
                                 layout.shape, f"{x.shape}"))
    rhs = local_operand(row.name, other, x._layout, x)
    local = x.local
    _check(row, [_kind(local)] + ([] if isinstance(rhs, _SCALARS) else [_kind(rhs)]), x._xp)
    f = _func(x._xp, row.name)
    if row.name == "pow" and _kind(local) == "c" and type(local) is np.ndarray and type(rhs) in (int, float) \
            and (type(rhs), rhs) in _COMPLEX_POWERS:  # (NumPy's in-place operator: its fast scalar power)
        _COMPLEX_POWERS[type(rhs), rhs](local, out=local)
    elif row.name == "pow" and _is_half(rhs) and _kind(local) == "f":
        local[...] = half_power(x._xp, f, local, rhs)
    elif isinstance(f, np.ufunc):
        f(local, rhs, out=local, casting="same_kind")
    else:
        result = f(local, rhs)
        if to_numpy_dtype(result.dtype) != x.dtype:
            raise TypeError(message(f"__i{row.operator[2:-2]}__", "in-place result would change the dtype",
                                    to_numpy_dtype(result.dtype), f"{x.dtype}"))
        local[...] = result
    x._halo_fresh = False
    return x


def astype(x: DArray, dtype, /, *, copy: bool = True, device=None) -> DArray:
    """``x`` converted to ``dtype`` (same layout)."""
    target = check_dtype("astype", dtype)
    if not copy and x.dtype == target and device is None:
        return x
    xp = x._xp
    block = x._block
    if type(block) is np.ndarray and device is None:  # NumPy blocks: one call, a C-ordered copy
        return DArray._wrap(block.astype(target, order="C"), x._layout, x._comm, xp)
    block = xp.astype(block, to_backend_dtype(xp, target), copy=True)
    if device is not None:
        block = xp.asarray(block, device=device)
    return DArray._wrap(block, x._layout, x._comm, xp)
