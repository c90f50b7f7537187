"""Computed views: results NumPy gives as views that darray must compute, and whose writes reach their base.

NumPy's basic indexing, transposes and most reshapes return views: a write
through ``a[3]`` changes ``a``. darray's results are true views wherever each
rank's block of the result is a view of its block of the base (slices,
transposes, integers on uncut axes, reshapes that keep every block whole).
Where the result has to be computed -- an integer on a cut axis (its owner
broadcasts the row), a negative step on a cut axis (mirrored ranks swap
blocks), a reshape that moves cells, a view of a computed view -- the result
carries a :class:`Link`: how to compute it from its base again (``take``) and
how to write it back (``put``). Links are made from replicated facts (the
layout, the key), alike on every rank, so every rank runs the same messages
when a write goes through one; the one exception, a reshape that each rank
does locally and that copied on some ranks only, makes links of those ranks
alone, whose ``take`` and ``put`` copy locally and never communicate.

A write through a linked array (``v[k] = ...``, ``v += ...``, ``out=v``)
runs :func:`write_through`: it refreshes the array from its base (so cells
the base changed since are not written back stale), writes, then writes the
array back into its base -- which may itself be linked, so the write climbs
to the array that owns the cells. Like every write, it is collective.

A link holds its base, as NumPy's ``.base`` does. Only a reshape that moves
the cells of an array owning its memory holds it weakly: once nothing else
holds that base nobody can see it change, and writes stay local
(``da.arange(12).reshape(3, 4)`` writes no further than itself).

Reads of a computed view show the base as it was when the view was taken, or
last written through; integer rows of default (1-d grid) layouts are true views
(:func:`darray._core.indexing.getitem`) and see later writes too.

>>> import numpy, darray as da
>>> a = da.zeros((4, 3))
>>> a[2][1] = 5.0
>>> row = a[::-1][0]
>>> row += 1.0
>>> numpy.asarray(a)[[2, 3]].tolist()
[[0.0, 5.0, 0.0], [1.0, 1.0, 1.0]]
"""

from __future__ import annotations

import weakref
from typing import Callable, NamedTuple

from .._errors import message
from .array import DArray

__all__ = ["Link", "link", "read_only", "write_through", "refresh", "written", "plain"]


class Link(NamedTuple):
    """How a computed view relates to the array it was taken from."""

    base: Callable[[], DArray | None]  # the array the view was taken from (None: gone, the link ends)
    take: Callable[[DArray], DArray]  # base -> the view's values, on the view's layout (no link)
    put: Callable[[DArray, DArray], None] | None  # (base, view) -> None: writes the view back; None: read-only
    origin: str = ""  # the call that made a read-only view (named in the error)
    held: Link | None = None  # the link a read-only mark hides (flags.writeable = True brings it back)
    collective: bool = True  # made alike on every rank (else: this rank's alone, and never communicating)


def link(view: DArray, base: DArray, take: Callable[[DArray], DArray],
         put: Callable[[DArray, DArray], None], *, weak: bool = False, collective: bool = True) -> DArray:
    """Mark ``view`` (a new DArray, computed from ``base`` by ``take``) as a view of ``base``; returns it.

    ``weak``: hold ``base`` weakly -- only where no other array can show ``base``'s cells (its blocks own
    their memory, agreed on every rank), so that a dead base means no one can see a write.
    ``collective``: the link is made alike on every rank; a link of this rank alone (``False``: a local
    reshape that copied here only) must run, in ``take`` and ``put``, no message that a rank without the
    link would not send in the same call. A base with a collective link only has views with one.
    """
    view._link = Link(weakref.ref(base) if weak else _Strong(base), take, put, collective=collective)
    return view


class _Strong:
    """A strong reference with a weak reference's call: ``ref()`` is the object."""

    __slots__ = ("target",)

    def __init__(self, target) -> None:
        self.target = target

    def __call__(self):
        return self.target


def _nothing() -> None:
    return None


def read_only(x: DArray, origin: str) -> DArray:
    """Mark ``x`` read-only, as NumPy's ``origin`` view is: every write raises ValueError; returns ``x``."""
    x._link = Link(_nothing, _nothing, None, origin)  # type: ignore[arg-type]
    return x


def _live_base(x: DArray) -> DArray | None:
    """``x``'s base while someone else holds it; otherwise None, and ``x`` is unlinked (nobody can see it change)."""
    base = x._link.base()
    if base is None:
        x._link = None
    return base


def refresh(x: DArray) -> DArray | None:
    """Recompute linked ``x``'s values from its (refreshed) base, in place; returns the base (None: unlinked).

    Every write into a linked array calls this first: a read-only one raises here, on every rank.
    """
    if x._link.put is None:
        raise ValueError(message(x._link.origin, "assignment destination is read-only", None,
                                 "a writable copy (x.copy()), as in NumPy"))
    base = _live_base(x)
    if base is None:
        return None
    if base._link is not None:
        refresh(base)
    fresh = x._link.take(base)
    x.local[...] = fresh.local
    return base


def plain(x: DArray) -> DArray:
    """An unlinked DArray sharing ``x``'s block: writes to it go to ``x``'s cells only."""
    return DArray._wrap(x._block, x._layout, x._comm, x._xp)


def written(x: DArray) -> None:
    """After a write into linked ``x``'s block (refreshed first): write ``x`` back into its base."""
    x._halo_fresh = False
    if x._link is not None:
        base = _live_base(x)
        if base is not None:  # (a copy: refreshing a linked base may rewrite x's cells when x views them)
            x._link.put(base, DArray._wrap(x._xp.asarray(x._block, copy=True), x._layout, x._comm, x._xp))


def write_through(x: DArray, write: Callable[[DArray], object]) -> None:
    """Run ``write`` on linked ``x`` (given :func:`plain` ``x``), then write ``x`` back into its base.

    Collective, like every write: each rank runs the same refresh, write and write-back.
    """
    refresh(x)
    write(plain(x))
    written(x)
