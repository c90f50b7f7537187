"""NumPy's multi-dimensional histograms, bin edges and matrix-vector products for DArrays.

What moves, per function (``p`` ranks):

- ``histogramdd``/``histogram2d``: the sample stays where it is (a 2-d
  sample cut along its coordinate axis is first redistributed to a row cut).
  Global per-coordinate min and max (two allreduces of ``D`` values, only
  when some axis has a bin count and no range), then every rank bins its own
  block with ``numpy.histogramdd`` on the shared edges and one allreduce sums
  the counts. The edges come from NumPy itself, given a two-row stand-in
  sample holding the global minima and maxima (the same edges, checks and
  messages as NumPy, computed from replicated metadata before any data
  moves). Counts and edges are small and replicated on every rank.
- ``histogram_bin_edges``: a bin count or an edge array, as above (two scalar
  allreduces). A rule name (``'auto' 'fd' 'doane' 'scott' 'stone' 'rice'
  'sturges' 'sqrt'``) computes the rule's statistics distributed (size,
  min/max, std, mean, quartiles by a distributed sort, for ``'stone'`` the
  candidate histograms summed in allreduces) and evaluates NumPy's formula on
  those replicated scalars; with ``range=`` the data outside it are dropped
  first (a boolean selection).
- ``matvec``/``vecmat``: distributed :func:`darray.matmul` (what it moves).
- ``einsum_path``: nothing: NumPy's planner runs on shape-only stand-ins.

Examples
--------
>>> import darray as da
>>> from darray._api.numpy.histograms import histogram2d, matvec
>>> h, xe, ye = histogram2d(da.asarray([0.0, 1.0, 1.0]), da.asarray([0.0, 0.0, 1.0]), bins=2)
>>> h.gather().tolist()
[[1.0, 0.0], [1.0, 1.0]]
>>> matvec(da.asarray([[1.0, 2.0], [3.0, 4.0]]), da.asarray([1.0, 1.0])).gather().tolist()
[3.0, 7.0]
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

from ..._backend import to_numpy
from ..._core import DArray, redistribute_to, to_backend_dtype
from ..._core.elementwise import local_operand
from ..._core.protocols import implements
from ..._errors import message, names_errors
from ..._layout import Layout
from .._common import first_darray
from ..creation import asarray
from ..data_types import astype
from ..elementwise import conj
from ..linear_algebra import matmul
from ..manipulation import expand_dims
from ..statistical import all as _all, max as _max, mean, min as _min, std
from ._common import darray_of, owner
from .products import numpy_product

__all__ = ["einsum_path", "histogram2d", "histogram_bin_edges", "histogramdd", "matvec", "vecmat"]


# ---------------------------------------------------------------- helpers
def _scalar(x: DArray):
    """A replicated 0-d DArray as a NumPy scalar of its dtype (the value NumPy's reduction gives)."""
    return to_numpy(x.local)[()]


def _replicated(array, like: DArray) -> DArray:
    return asarray(np.asarray(array), split=None, comm=like.comm, device=like.device)


def _small(v):
    """Bin edges or other small arguments: DArrays allgathered (small by contract), the rest as given."""
    if isinstance(v, DArray):
        return to_numpy(v.gather())
    if isinstance(v, (list, tuple)):
        return type(v)(_small(e) for e in v)
    return v


def _sum_counts(counts: np.ndarray, layout: Layout, comm) -> np.ndarray:
    """Per-rank counts summed over the ranks (one allreduce; replicated layouts need none)."""
    if layout.is_replicated:
        return counts
    return to_numpy(comm.allreduce(counts, "sum"))


def _unsigned_subtract(a, b):
    """``a - b`` for ``a >= b`` without signed overflow (NumPy's ``_unsigned_subtract``)."""
    dt = np.result_type(a, b)
    unsigned = {np.byte: np.ubyte, np.short: np.ushort, np.intc: np.uintc, np.int_: np.uint,
                np.longlong: np.ulonglong}.get(dt.type)
    if unsigned is None:
        return np.subtract(a, b, dtype=dt)
    return np.subtract(np.asarray(a, dtype=dt), np.asarray(b, dtype=dt), casting="unsafe", dtype=unsigned)


# ---------------------------------------------------------------- the sample of histogramdd
def _rows_layout(layout: Layout) -> Layout:
    """The 1-d layout of the rows of a 2-d layout whose axis 1 is not cut."""
    return Layout((layout.shape[0],), layout.dims, layout.split, (layout.sizes[0],), (0,), ("none",))


def _sample(func: str, sample, weights) -> DArray:
    """The sample as an (N, D) DArray cut (if at all) along rows only; ``sample`` is an (N, D) array or a
    sequence of D 1-d arrays of one length, as NumPy takes it."""
    like = first_darray(sample, weights)
    if isinstance(sample, DArray) and sample.ndim == 1:
        sample = [sample]
    if isinstance(sample, DArray) or not isinstance(sample, (list, tuple)):
        s = darray_of(func, sample, like)
        if s.ndim != 2:
            raise ValueError(message(f"numpy.{func}", "the sample must be an (N, D) array or a sequence of D "
                                     "1-d arrays of length N", s.shape, "a 2-d array"))
        la = s.layout
        if la.axis_dim[1] is not None or la.has_halo:  # re-cut: rows only, no ghost cells
            split = tuple(None if a == 1 else a for a in la.split)
            s = redistribute_to(s, la.replace(split=split, sizes=(la.sizes[0], (s.shape[1],)), halo=(0, 0),
                                              boundary=("none", "none")))
        return s
    columns = [darray_of(func, c, like) for c in sample]
    if not columns or any(c.ndim != 1 for c in columns) or len({c.shape[0] for c in columns}) != 1:
        raise ValueError(message(f"numpy.{func}", "the sample must be an (N, D) array or a sequence of D 1-d "
                                 "arrays of length N", [c.shape for c in columns], "1-d arrays of one length"))
    first = next((c for c in columns if not c.layout.is_replicated), columns[0])
    rows = first.layout.without_halo()
    dtype = np.result_type(*(c.dtype for c in columns))
    xp = first._xp
    blocks = [xp.astype(local_operand(f"numpy.{func}", c, rows, first), to_backend_dtype(xp, dtype))
              for c in columns]
    n, d = columns[0].shape[0], len(columns)
    layout = Layout((n, d), rows.dims, rows.split, (rows.sizes[0], (d,)), (0, 0), ("none", "none"))
    block = xp.stack(blocks, axis=1) if blocks[0].shape[0] else xp.zeros((0, d), dtype=blocks[0].dtype)
    return DArray._wrap(block, layout, first.comm, xp)


def _weights(func: str, weights, s: DArray):
    """This rank's weights (NumPy float64, aligned with the rows of ``s``), or None."""
    if weights is None:
        return None
    w = darray_of(func, weights, s)
    if w.shape != (s.shape[0],):
        raise ValueError(message(f"numpy.{func}", "the weights and the sample don't have the same length",
                                 (w.shape, s.shape), f"weights of shape ({s.shape[0]},)"))
    if not np.can_cast(w.dtype, np.float64, "safe"):
        raise TypeError(message(f"numpy.{func}", f"cannot cast weights from {w.dtype} to float64 according to "
                                "the rule 'safe'", w.dtype, "real weights"))
    return to_numpy(local_operand(f"numpy.{func}", w, _rows_layout(s.layout), s)).astype(np.float64)


@implements(np.histogramdd)
@names_errors("numpy.histogramdd")
def histogramdd(sample, bins=10, range=None, density=None, weights=None):  # NumPy's name
    """The multi-dimensional histogram of ``sample`` (``numpy.histogramdd``): ``(H, edges)``.

    ``sample`` is an (N, D) array or a sequence of D 1-d arrays of length N;
    ``bins``, ``range``, ``density``, ``weights`` as NumPy's. Each rank bins
    its own rows with ``numpy.histogramdd`` on edges shared by every rank
    (computed by NumPy from the global minima and maxima, two allreduces of
    D values); one allreduce sums the counts. ``H`` (float64) and the edges
    are small and replicated on every rank. Complex samples are refused.

    Examples
    --------
    >>> import darray as da
    >>> h, edges = histogramdd(da.asarray([[0.0, 0.0], [1.0, 1.0], [1.0, 0.5]]), bins=(2, 1))
    >>> h.gather().tolist(), edges[0].gather().tolist()
    ([[1.0], [2.0]], [0.0, 0.5, 1.0])
    """
    return _histogramdd("histogramdd", sample, bins, range, density, weights)


def _histogramdd(func: str, sample, bins, range, density, weights):  # NumPy's name
    """``numpy.histogramdd``, errors naming ``numpy.<func>``."""
    s = _sample(func, sample, weights)
    if s.dtype.kind not in "biuf":
        raise TypeError(message(f"numpy.{func}", "unsupported sample dtype", s.dtype,
                                "booleans, integers or real floating point"))
    w = _weights(func, weights, s)
    bins, range = _small(bins), _small(range)
    n, d = s.shape
    ranges = range if isinstance(range, (list, tuple, np.ndarray)) and len(range) == d else (None,) * d
    count = not isinstance(bins, (list, tuple, np.ndarray)) or any(np.ndim(b) == 0 for b in bins)
    stand_in = np.zeros((0, d), dtype=s.dtype)  # NumPy's edges for a sample of the same extremes
    if n and count and any(r is None for r in ranges):
        lo, hi = to_numpy(_min(s, axis=0).gather()), to_numpy(_max(s, axis=0).gather())
        stand_in = np.stack([lo, hi]).astype(s.dtype)
    _, edges = np.histogramdd(stand_in, bins=bins, range=range)  # validates bins and range as NumPy
    local = to_numpy(s.local)
    if not s.layout.is_replicated and not owner(s):  # a copy of a block another rank counts
        local, w = local[:0], None if w is None else w[:0]
    hist = np.histogramdd(local, bins=edges, weights=w)[0]
    hist = _sum_counts(hist, s.layout, s.comm)
    if density:  # as NumPy: divide by the widths along each axis, then by the total
        total = hist.sum()
        for i, e in enumerate(edges):
            shape = np.ones(d, int)
            shape[i] = len(e) - 1
            hist = hist / np.diff(e).reshape(shape)
        hist /= total
    return _replicated(hist, s), [_replicated(e, s) for e in edges]


@implements(np.histogram2d)
@names_errors("numpy.histogram2d")
def histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # NumPy's name
    """The 2-d histogram of points ``(x[i], y[i])`` (``numpy.histogram2d``): ``(H, xedges, yedges)``.

    :func:`histogramdd` of the sample ``[x, y]`` (what it moves); ``bins`` is
    an int, an edge array, a pair of either, as NumPy's. The results are
    replicated.

    Examples
    --------
    >>> import darray as da
    >>> h, xe, ye = histogram2d(da.asarray([0.0, 1.0]), da.asarray([1.0, 1.0]), bins=[2, 1])
    >>> h.gather().tolist(), ye.gather().tolist()
    ([[1.0], [1.0]], [0.5, 1.5])
    """
    like = first_darray(x, y, weights)
    xd, yd = darray_of("histogram2d", x, like), darray_of("histogram2d", y, like)
    if xd.ndim != 1 or yd.ndim != 1 or xd.shape != yd.shape:
        raise ValueError(message("numpy.histogram2d", "x and y must be 1-d arrays of the same length",
                                 (xd.shape, yd.shape), "two 1-d arrays of length N"))
    bins = _small(bins)
    try:
        count = len(bins)
    except TypeError:
        count = 1
    if count not in (1, 2):  # one edge array for both axes
        bins = [np.asarray(bins), np.asarray(bins)]
    hist, edges = _histogramdd("histogram2d", [xd, yd], bins, range, density, weights)
    return hist, edges[0], edges[1]


# ---------------------------------------------------------------- histogram_bin_edges
class _Stats:
    """The statistics NumPy's bin-width rules read from the data, computed distributed and cached."""

    def __init__(self, x: DArray, lo, hi, span: tuple):
        self.x, self.size, self.span = x, x.size, span
        self._lo, self._hi = lo, hi

    @property
    def ptp(self):
        if self._lo is None:
            self._lo, self._hi = _scalar(_min(self.x)), _scalar(_max(self.x))
        return _unsigned_subtract(self._hi, self._lo)

    @property
    def std(self):
        return _scalar(std(self.x))

    def skew(self, sigma):
        """The mean of the cubed standardised values (NumPy's ``g1`` in Doane's rule)."""
        x = self.x if self.x.dtype.kind == "f" else astype(self.x, np.float64)
        temp = (x - _scalar(mean(x))) / sigma
        return _scalar(mean(temp * temp * temp))

    @property
    def iqr(self):
        q = to_numpy(np.percentile(self.x, [75, 25]).gather())
        return np.subtract(*q)

    def histograms(self, candidates: list[int]) -> list[np.ndarray]:
        """Global counts of ``numpy.histogram(x, n, range=span)`` for every n (batched allreduces)."""
        x = self.x
        local = to_numpy(x.local).reshape(-1)
        if not x.layout.is_replicated and not owner(x):
            local = local[:0]
        out: list[np.ndarray] = []
        batch: list[int] = []
        for i, nbins in enumerate(candidates):
            batch.append(nbins)
            if sum(batch) >= 2 ** 20 or i == len(candidates) - 1:
                counts = np.concatenate([np.histogram(local, bins=b, range=self.span)[0] for b in batch])
                counts = _sum_counts(counts.astype(np.int64), x.layout, x.comm)
                out += np.split(counts, np.cumsum(batch)[:-1])
                batch = []
        return out


def _sqrt(s: _Stats):
    return s.ptp / np.sqrt(s.size)


def _sturges(s: _Stats):
    return s.ptp / (np.log2(s.size) + 1.0)


def _rice(s: _Stats):
    return s.ptp / (2.0 * s.size ** (1.0 / 3))


def _scott(s: _Stats):
    return (24.0 * np.pi ** 0.5 / s.size) ** (1.0 / 3.0) * s.std


def _fd(s: _Stats):
    return 2.0 * s.iqr * s.size ** (-1.0 / 3.0)


def _auto(s: _Stats):
    return min(max(_fd(s), _sqrt(s) / 2), _sturges(s))


def _doane(s: _Stats):
    n = s.size
    if n > 2:
        sg1 = np.sqrt(6.0 * (n - 2) / ((n + 1.0) * (n + 3)))
        sigma = s.std
        if sigma > 0.0:
            return s.ptp / (1.0 + np.log2(n) + np.log2(1.0 + np.absolute(s.skew(sigma)) / sg1))
    return 0.0


def _stone(s: _Stats):
    n, ptp = s.size, s.ptp
    if n <= 1 or ptp == 0:
        return 0
    upper = max(100, int(np.sqrt(n)))
    candidates = list(range(1, upper + 1))
    scores = []
    for nbins, counts in zip(candidates, s.histograms(candidates)):
        p_k = counts / n
        scores.append((2 - (n + 1) * p_k.dot(p_k)) / (ptp / nbins))
    nbins = candidates[int(np.argmin(scores))]
    if nbins == upper:
        warnings.warn("The number of bins estimated may be suboptimal.", RuntimeWarning, stacklevel=4)
    return ptp / nbins


#: NumPy's bin-width rules (``numpy.histogram_bin_edges``), on distributed statistics.
RULES: dict[str, Callable[[_Stats], float]] = {
    "auto": _auto, "doane": _doane, "fd": _fd, "rice": _rice, "scott": _scott, "sqrt": _sqrt, "stone": _stone,
    "sturges": _sturges,
}


def _outer_edges(x: DArray, range):  # NumPy's name
    """NumPy's ``_get_outer_edges`` (the range, or the global min and max: two allreduces), and the data's
    min and max when they were computed (else None)."""
    func = "numpy.histogram_bin_edges"
    if range is not None:
        first, last = range
        if first > last:
            raise ValueError(message(func, "max must be larger than min in range parameter", range))
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(message(func, f"supplied range of [{first}, {last}] is not finite", range))
    elif x.size == 0:
        first, last = 0, 1
    else:
        first, last = _scalar(_min(x)), _scalar(_max(x))
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(message(func, f"autodetected range of [{first}, {last}] is not finite"))
    lo, hi = (first, last) if range is None and x.size else (None, None)  # the data's own min and max
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last, lo, hi


def _rule_edges(x: DArray, rule: str, range) -> np.ndarray:  # NumPy's name
    func = "numpy.histogram_bin_edges"
    first, last, lo, hi = _outer_edges(x, range)
    if range is not None:
        keep = (x >= first) & (x <= last)
        if not bool(_all(keep)):
            x = x[keep]
    if x.size == 0:
        n_bins = 1
    else:
        width = RULES[rule](_Stats(x, lo, hi, (first, last)))
        if width:
            if np.issubdtype(x.dtype, np.integer) and width < 1:
                width = 1
            n_bins = int(np.ceil(_unsigned_subtract(last, first) / width))
        else:
            n_bins = 1
    bin_type = np.result_type(first, last, np.zeros(0, x.dtype))
    if np.issubdtype(bin_type, np.integer):
        bin_type = np.result_type(bin_type, float)
    edges = np.linspace(first, last, n_bins + 1, endpoint=True, dtype=bin_type)
    if np.any(edges[:-1] >= edges[1:]):
        raise ValueError(message(func, f"Too many bins for data range. Cannot create {n_bins} finite-sized bins",
                                 (first, last)))
    return edges


@implements(np.histogram_bin_edges)
@names_errors("numpy.histogram_bin_edges")
def histogram_bin_edges(a, bins=10, range=None, weights=None) -> DArray:  # NumPy's name
    """The bin edges ``numpy.histogram`` would use (``numpy.histogram_bin_edges``), replicated.

    ``bins`` an int or an edge array: NumPy's edges from the global min and
    max (two scalar allreduces). ``bins`` a rule name (``'auto'``, ``'fd'``,
    ``'doane'``, ``'scott'``, ``'stone'``, ``'rice'``, ``'sturges'``,
    ``'sqrt'``): the rule's statistics are computed distributed (see the
    module notes) and NumPy's formula is applied to them. ``weights`` is only
    checked (as NumPy's; rules refuse weighted data).

    Examples
    --------
    >>> import darray as da
    >>> histogram_bin_edges(da.asarray([0.0, 1.0, 2.0, 3.0]), bins="sturges").gather().tolist()
    [0.0, 1.0, 2.0, 3.0]
    """
    func = "numpy.histogram_bin_edges"
    x = darray_of("histogram_bin_edges", a, first_darray(weights, bins))
    if weights is not None and tuple(np.shape(weights)) != x.shape:
        raise ValueError(message(func, "weights should have the same shape as a", np.shape(weights), x.shape))
    if x.dtype.kind not in "biuf":
        raise TypeError(message(func, "unsupported dtype", x.dtype, "booleans, integers or real floating point"))
    range = _small(range)
    if isinstance(bins, str):
        if bins not in RULES:
            raise ValueError(message(func, f"{bins!r} is not a valid estimator for `bins`", bins,
                                     f"an int, an edge array or one of {sorted(RULES)}"))
        if weights is not None:
            raise TypeError(message(func, "Automated estimation of the number of bins is not supported for "
                                    "weighted data", type(weights).__name__, "weights=None"))
        if x.dtype == np.bool_:
            warnings.warn(f"Converting input from {x.dtype} to {np.uint8} for compatibility.", RuntimeWarning,
                          stacklevel=3)
            x = astype(x, np.uint8)
        return _replicated(_rule_edges(x, bins, range), x)
    bins = _small(bins)
    stand_in = np.zeros(0, dtype=x.dtype)  # NumPy's edges for data of the same extremes
    if x.size and range is None and np.ndim(bins) == 0:
        stand_in = np.asarray([_scalar(_min(x)), _scalar(_max(x))], dtype=x.dtype)
    return _replicated(np.histogram_bin_edges(stand_in, bins=bins, range=range), x)


# ---------------------------------------------------------------- matrix-vector products
def _gufunc_operands(func: str, x1, x2, nd1: int, nd2: int) -> tuple[DArray, DArray]:
    like = first_darray(x1, x2)
    a = darray_of(func, x1, like)
    b = darray_of(func, x2, a)
    if a.ndim < nd1 or b.ndim < nd2:
        raise ValueError(message(f"numpy.{func}", f"operands need at least {nd1} and {nd2} dimensions",
                                 (a.shape, b.shape)))
    if a.comm is not b.comm:
        raise ValueError(message(f"numpy.{func}", "arrays live on different communicators"))
    return a, b


def _check_core(func: str, signature: str, a: DArray, b: DArray, n1: int, n2: int) -> None:
    """The core size ``n`` agrees (``n1``, ``n2``) and the loop axes broadcast (gufunc rules)."""
    nd1, nd2 = (2, 1) if func == "matvec" else (1, 2)
    if n1 != n2:
        raise ValueError(message(f"numpy.{func}", f"the operands' core dimensions differ (signature {signature})",
                                 (a.shape, b.shape), "matching n"))
    try:
        np.broadcast_shapes(a.shape[:a.ndim - nd1], b.shape[:b.ndim - nd2])
    except ValueError:
        raise ValueError(message(f"numpy.{func}", "the loop dimensions cannot be broadcast together",
                                 (a.shape, b.shape))) from None


def _no_options(func: str, kwargs: dict) -> None:
    if kwargs.pop("out", None) is not None or kwargs:
        raise TypeError(message(f"numpy.{func}", "only the two operands are supported for DArrays",
                                sorted(kwargs) or "out=", "no out=, axes=, axis=, dtype= ..."))


@implements(np.matvec)
@names_errors("numpy.matvec")
def matvec(x1, x2, /, **kwargs) -> DArray:
    """Matrix-vector products ``x1[..., m, n] @ x2[..., n]`` broadcast over the leading axes (``numpy.matvec``).

    Distributed :func:`darray.matmul` of ``x1`` and ``x2[..., None]``; NumPy's
    dtypes (booleans: an OR of ANDs). Only the two operands (no ``out=``,
    ``axes=``, ``dtype=``).

    Examples
    --------
    >>> import darray as da
    >>> matvec(da.asarray([[0.0, 1.0], [1.0, 0.0]]), da.asarray([2.0, 3.0])).gather().tolist()
    [3.0, 2.0]
    """
    _no_options("matvec", kwargs)
    a, b = _gufunc_operands("matvec", x1, x2, 2, 1)
    _check_core("matvec", "(m,n),(n)->(m)", a, b, a.shape[-1], b.shape[-1])
    return numpy_product(a, expand_dims(b, axis=-1), matmul)[..., 0]


@implements(np.vecmat)
@names_errors("numpy.vecmat")
def vecmat(x1, x2, /, **kwargs) -> DArray:
    """Vector-matrix products ``conj(x1[..., n]) @ x2[..., n, m]`` broadcast over the leading axes
    (``numpy.vecmat``; the vector is conjugated, as NumPy's).

    Distributed :func:`darray.matmul` of ``conj(x1)[..., None, :]`` and ``x2``;
    NumPy's dtypes. Only the two operands (no ``out=``, ``axes=``, ``dtype=``).

    Examples
    --------
    >>> import darray as da
    >>> vecmat(da.asarray([1.0, 2.0]), da.asarray([[1.0, 0.0], [0.0, 1.0]])).gather().tolist()
    [1.0, 2.0]
    """
    _no_options("vecmat", kwargs)
    a, b = _gufunc_operands("vecmat", x1, x2, 1, 2)
    _check_core("vecmat", "(n),(n,m)->(m)", a, b, a.shape[-1], b.shape[-2])
    if a.dtype.kind == "c":
        a = conj(a)
    return numpy_product(expand_dims(a, axis=-2), b, matmul)[..., 0, :]


# ---------------------------------------------------------------- einsum_path
def _shape_only(x):
    """A DArray's shape-only stand-in: a read-only zero-stride NumPy view of one zero (no data moves)."""
    if isinstance(x, DArray):
        return np.broadcast_to(np.zeros((), dtype=x.dtype), x.shape)
    return x


@implements(np.einsum_path)
@names_errors("numpy.einsum_path")
def einsum_path(*operands, optimize="greedy", einsum_call=False):
    """NumPy's contraction order for ``numpy.einsum`` (``numpy.einsum_path``): ``(path, report)``.

    The planner reads shapes only: it runs on shape-only stand-ins of the
    DArrays (zero-stride views of one zero), identically on every rank; no
    data is read or moved. The result is NumPy's: a list and a string.

    Examples
    --------
    >>> import darray as da
    >>> a, b, c = da.ones((2, 30)), da.ones((30, 40)), da.ones((40, 3))
    >>> einsum_path("ij,jk,kl->il", a, b, c, optimize="optimal")[0]
    ['einsum_path', (0, 1), (0, 1)]
    """
    if einsum_call:
        raise TypeError(message("numpy.einsum_path", "einsum_call=True (NumPy's internal flag) is not supported "
                                "for DArrays", einsum_call, "False"))
    return np.einsum_path(*(_shape_only(x) for x in operands), optimize=optimize)
