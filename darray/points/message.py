"""Message passing on the tape: ``gather`` rows by global index, ``scatter_*`` values onto rows.

Global semantics, whatever the cuts: ``gather(x, idx)[e] = x[idx[e]]`` and
``scatter_add(v, idx, n)[i] = sum of v[e] over idx[e] == i`` (torch_scatter's
names and ``dim_size``). Each index is routed once to the rank owning its row
(:class:`_Fetch`, an all-to-all through ``comm.exchange``); gather's adjoint is
scatter_add along the same route and scatter's is gather. Sums at a row are
taken in global edge order, so results are identical at every rank count.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._comm.base import agree
from .._core import DArray
from .._errors import message
from ..autodiff import Variable, apply, redistribute, register
from ._rows import RowRoute, check_rows, host_rows, offsets_of, owners, row_layout, row_sizes, rows_of, wrap_rows

__all__ = ["Rows", "gather", "scatter_add", "scatter_mean", "scatter_max", "REDUCTIONS"]

#: scatter reductions by name.
REDUCTIONS = ("sum", "mean", "max")


class Rows:
    """Items naming rows ``rows`` of this rank's block of ``n_own`` rows; ``send``/``back`` move them (here: no move).

    The engine of the rules: ``gather`` answers ``own[rows]``, ``scatter``
    reduces items onto the rows they name. :class:`_Fetch` routes the items to
    the rows' owners first; a :class:`~darray.points.GhostPlan` uses this
    class as is (its edges already live with their rows).
    """

    def __init__(self, rows: np.ndarray, n_own: int):
        self.rows, self.n_own = rows, int(n_own)
        self._counts = None

    def send(self, values: np.ndarray) -> np.ndarray:
        """Items delivered to the ranks owning their rows (in :attr:`rows` order)."""
        return values

    def back(self, answers: np.ndarray) -> np.ndarray:
        """Answers (in :attr:`rows` order) delivered back to the items' ranks."""
        return answers

    def gather(self, own: np.ndarray) -> np.ndarray:
        """``own[rows]``, delivered to the items: ``(items, width)``."""
        return self.back(own[self.rows])

    def counts(self) -> np.ndarray:
        """How many items name each owned row."""
        if self._counts is None:
            self._counts = np.bincount(self.rows, minlength=self.n_own)
        return self._counts

    def scatter(self, values: np.ndarray, reduce: str):
        """``values`` reduced onto the owned rows they name: ``(own rows, first maximal position or None)``."""
        got = self.send(values)
        width = got.shape[1]
        if reduce == "max":
            low = np.finfo(got.dtype).min if got.dtype.kind == "f" else np.iinfo(got.dtype).min
            out = np.full((self.n_own, width), low, dtype=got.dtype)
            np.maximum.at(out, self.rows, got)
            first = np.full((self.n_own, width), got.shape[0], dtype=np.int64)
            hit, col = np.nonzero(got == out[self.rows])
            np.minimum.at(first, (self.rows[hit], col), hit)
            out[self.counts() == 0] = 0
            return out, first
        out = np.zeros((self.n_own, width), dtype=got.dtype)
        np.add.at(out, self.rows, got)
        if reduce == "mean":
            out /= np.maximum(self.counts(), 1).astype(out.dtype)[:, None]
        return out, None


class _Fetch(Rows):
    """Global row indices ``idx`` (this rank's, host) routed to the owners of rows cut into ``sizes``."""

    def __init__(self, comm, idx: np.ndarray, sizes):
        off = offsets_of(sizes)
        self.route = RowRoute(comm, owners(off, idx))
        super().__init__(self.route.send(idx, "points.message")[:, 0] - off[comm.rank], sizes[comm.rank])

    def send(self, values: np.ndarray) -> np.ndarray:
        return self.route.send(values, "points.message")

    def back(self, answers: np.ndarray) -> np.ndarray:
        return self.route.back(answers, "points.message")


def _index(func: str, idx, n: int) -> np.ndarray:
    """This rank's indices (host int64); TypeError/IndexError on every rank for bad ones."""
    if not isinstance(idx, DArray) or idx.ndim != 1 or idx.dtype.kind not in "iu":
        raise TypeError(message(func, "idx must be a 1-d integer DArray", getattr(idx, "shape", type(idx).__name__),
                                "an (E,) integer DArray"))
    local = host_rows(rows_of(func, idx))[:, 0].astype(np.int64)
    bad = agree(idx._comm, bool(((local >= 0) & (local < n)).all()))
    if bad:
        raise IndexError(message(func, "indices out of range", f"on ranks {bad}", f"0 <= idx < {n}"))
    return local


def _rows_var(func: str, x):
    """``x`` (Variable or DArray) cut by rows, redistributed on the tape when it is not."""
    xd = x.data if isinstance(x, Variable) else x
    if not isinstance(xd, DArray) or xd.ndim == 0:
        raise TypeError(message(func, "the rows must be a DArray with at least one axis",
                                type(xd).__name__, "an (N, ...) DArray"))
    if row_sizes(xd) is None:
        x = redistribute(x, layout=row_layout(func, xd.shape, xd._comm.size))
    return x, (x.data if isinstance(x, Variable) else x)


def _gather_forward(ctx, x, fetch, sizes):
    got = fetch.gather(host_rows(x))
    return wrap_rows(got, x.shape[1:], sizes, x)


def _gather_backward(ctx, g):
    x, fetch = ctx.xs[0], ctx.params["fetch"]
    out, _ = fetch.scatter(host_rows(g), "sum")
    return (wrap_rows(out, x.shape[1:], row_sizes(x), x),)


def _scatter_forward(ctx, v, fetch, sizes, reduce):
    out, first = fetch.scatter(host_rows(v), reduce)
    ctx.saved["first"] = first
    return wrap_rows(out, v.shape[1:], sizes, v)


def _scatter_backward(ctx, g):
    v, fetch, reduce = ctx.xs[0], ctx.params["fetch"], ctx.params["reduce"]
    own = host_rows(g)
    if reduce == "max":
        first = ctx.saved["first"]
        n_in = fetch.rows.shape[0]
        back = np.zeros((n_in + 1, own.shape[1]), dtype=own.dtype)  # row n_in: rows no value reached
        cols = np.broadcast_to(np.arange(own.shape[1]), first.shape)
        back[first, cols] = own
        grad = fetch.back(back[:n_in])
    else:
        if reduce == "mean":
            own = own / np.maximum(fetch.counts(), 1).astype(own.dtype)[:, None]
        grad = fetch.gather(own)
    return (wrap_rows(grad, v.shape[1:], row_sizes(v), v),)


register("points_gather", _gather_forward, _gather_backward)
register("points_scatter", _scatter_forward, _scatter_backward)


def gather(features, idx: DArray):
    """Rows of ``features`` picked by global index: ``out[e] = features[idx[e]]`` (on the tape).

    Parameters
    ----------
    features : ``(N, ...)`` DArray or Variable (cut by rows; another layout is redistributed first).
    idx : ``(E,)`` integer DArray, ``0 <= idx < N``, cut in any way.

    Returns
    -------
    Variable : ``(E, ...)``, rows cut like ``idx``. Its gradient is ``scatter_add`` of the
    output gradient back onto ``features``.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> from darray.points import gather
    >>> x = da.asarray(np.array([[1.0], [2.0], [3.0]]), split=0)
    >>> np.asarray(gather(x, da.asarray(np.array([2, 0, 2]), split=0)).data.gather()).ravel().tolist()
    [3.0, 1.0, 3.0]
    """
    features, xd = _rows_var("gather", features)
    local = _index("gather", idx, xd.shape[0])
    fetch = _Fetch(xd._comm, local, row_sizes(xd))
    return apply("points_gather", features, fetch=fetch, sizes=row_sizes(rows_of("gather", idx)))


def _scatter(func: str, values, idx: DArray, dim_size: int, reduce: str):
    if isinstance(dim_size, bool) or not isinstance(dim_size, numbers.Integral) or dim_size < 0:
        raise ValueError(message(func, "dim_size must be an int >= 0", dim_size, "the number of output rows"))
    values, vd = _rows_var(func, values)
    local = _index(func, idx, int(dim_size))
    check_rows(func, "values", vd, idx.shape[0], row_sizes(rows_of(func, idx)), "idx")
    sizes = row_layout(func, (int(dim_size),), vd._comm.size).sizes[0]
    fetch = _Fetch(vd._comm, local, sizes)
    return apply("points_scatter", values, fetch=fetch, sizes=sizes, reduce=reduce)


def scatter_add(values, idx: DArray, dim_size: int):
    """Sums of ``values`` rows onto ``dim_size`` rows: ``out[i] = sum(values[e] for idx[e] == i)`` (on the tape).

    ``values`` is ``(E, ...)`` cut like ``idx`` (``(E,)`` integers, ``0 <= idx < dim_size``); the
    result is ``(dim_size, ...)`` in balanced rows, zeros where no index points. Sums are taken in
    global edge order: the same bits at every rank count.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> from darray.points import scatter_add
    >>> v = da.asarray(np.array([[1.0], [2.0], [4.0]]), split=0)
    >>> np.asarray(scatter_add(v, da.asarray(np.array([1, 0, 1]), split=0), 3).data.gather()).ravel().tolist()
    [2.0, 5.0, 0.0]
    """
    return _scatter("scatter_add", values, idx, dim_size, "sum")


def scatter_mean(values, idx: DArray, dim_size: int):
    """Means of ``values`` rows onto ``dim_size`` rows (zeros where no index points); see :func:`scatter_add`.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> from darray.points import scatter_mean
    >>> v = da.asarray(np.array([[1.0], [2.0], [4.0]]), split=0)
    >>> np.asarray(scatter_mean(v, da.asarray(np.array([1, 0, 1]), split=0), 3).data.gather()).ravel().tolist()
    [2.0, 2.5, 0.0]
    """
    return _scatter("scatter_mean", values, idx, dim_size, "mean")


def scatter_max(values, idx: DArray, dim_size: int):
    """Maxima of ``values`` rows onto ``dim_size`` rows (zeros where no index points); see :func:`scatter_add`.

    The gradient of each output element goes to the first value (in global order) that attains it.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> from darray.points import scatter_max
    >>> v = da.asarray(np.array([[1.0], [2.0], [4.0]]), split=0)
    >>> np.asarray(scatter_max(v, da.asarray(np.array([1, 0, 1]), split=0), 3).data.gather()).ravel().tolist()
    [2.0, 4.0, 0.0]
    """
    return _scatter("scatter_max", values, idx, dim_size, "max")
