"""What the engines remember per layout: :class:`Derived`, the typed cache every :class:`~darray._layout.Layout` holds.

A layout is immutable and the same object on every rank, so whatever is
computed from it alone (a reduced layout, an index plan, an alignment plan)
is computed once and kept on it, in ``layout._derived``. Each kind of entry
has its own dict and its own named methods; the plans themselves are typed
where they are made (``IndexPlan`` in :mod:`darray._core.indexing`,
``BinaryPlan`` in :mod:`darray._core.alignment`, ``ReductionPlan`` in
:mod:`darray._core.reductions`). Nothing here knows arrays or MPI.

One dict is read from C: :attr:`Derived.whole_by_shape`, the replicated
layout of a whole block's part by its shape (``u[i]``, ``u[1:-1]`` on a
small whole array). ``darray/_core/_lean.c`` (``lean_getitem``) reads it at
the slot offset ``setup`` finds, as ``layout._derived.whole_by_shape[shape]``,
and never writes it: the Python path (:func:`darray._core.indexing.whole_getitem`)
fills it.

Examples
--------
>>> from darray._layout import Layout
>>> lay = Layout((4,), (1,), (None,), ((4,),))
>>> lay._derived.index_plan(("memo",), 0) is None
True
>>> lay._derived.remember_index_plan(("memo",), 0, "plan")
>>> lay._derived.index_plan(("memo",), 0)
'plan'
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

__all__ = ["Derived", "INDEX_PLANS_MAX", "ALIGNED_PLANS_MAX"]

#: Index plans a layout keeps (stencil loops use a handful of keys; a loop over ever new keys keeps only so many).
INDEX_PLANS_MAX = 64
#: Alignment plans a layout keeps (a layout met by ever new others keeps only so many).
ALIGNED_PLANS_MAX = 1024


class Derived:
    """The cache of one layout: facts and derived layouts, index, alignment and reduction plans, agreements.

    Attributes
    ----------
    facts : dict
        Facts and layouts derived from the layout alone, by a key tuple that
        starts with their name (``("shape", rank)``, ``("reduced", axes,
        keepdims)``, ``("permuted", axes)``): :meth:`fact`.
    index_plans : dict
        ``(key memo, rank) -> IndexPlan`` of basic keys, at most
        :data:`INDEX_PLANS_MAX`: :meth:`index_plan`.
    aligned : dict
        ``(other layout, rank) -> BinaryPlan`` of operands cut otherwise, at
        most :data:`ALIGNED_PLANS_MAX`: :meth:`aligned_plan`.
    reductions : dict
        ``(func, axis, keepdims) -> ReductionPlan``: :meth:`reduction_plan`.
    agreed : dict
        The argument keys the ranks agreed on once (:func:`darray._comm.base.agree_once`'s memo).
    whole_by_shape : dict
        ``shape -> Layout``: the replicated layout of a part of a whole
        block, by the part's shape. Read by ``_lean.c`` (see the module).
    """

    __slots__ = ("facts", "index_plans", "aligned", "reductions", "agreed", "whole_by_shape")

    def __init__(self) -> None:
        self.facts: dict[tuple, Any] = {}
        self.index_plans: dict[tuple, Any] = {}
        self.aligned: dict[tuple, Any] = {}
        self.reductions: dict[tuple, Any] = {}
        self.agreed: dict[Hashable, bool] = {}
        self.whole_by_shape: dict[tuple, Any] = {}

    def fact(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """The fact ``key`` of the layout, computed by ``compute()`` the first time."""
        found = self.facts.get(key)
        if found is None:
            found = self.facts[key] = compute()
        return found

    def index_plan(self, memo: Hashable, rank: int) -> Any:
        """The remembered plan of a basic key (by its memo form) on ``rank``, or None."""
        return self.index_plans.get((memo, rank))

    def remember_index_plan(self, memo: Hashable, rank: int, plan: Any) -> None:
        """Keep ``plan`` unless :data:`INDEX_PLANS_MAX` plans are kept already."""
        if len(self.index_plans) < INDEX_PLANS_MAX:
            self.index_plans[memo, rank] = plan

    def aligned_plan(self, other: Any, rank: int) -> Any:
        """The remembered alignment plan of an operand on layout ``other`` on ``rank``, or None."""
        return self.aligned.get((other, rank))

    def remember_aligned_plan(self, other: Any, rank: int, plan: Any) -> None:
        """Keep ``plan`` unless :data:`ALIGNED_PLANS_MAX` plans are kept already."""
        if len(self.aligned) < ALIGNED_PLANS_MAX:
            self.aligned[other, rank] = plan

    def reduction_plan(self, func: str, axis: Any, keepdims: bool) -> Any:
        """The remembered plan of reduction ``func`` over ``axis``, or None."""
        return self.reductions.get((func, axis, keepdims))

    def remember_reduction_plan(self, func: str, axis: Any, keepdims: bool, plan: Any) -> None:
        self.reductions[func, axis, keepdims] = plan

    def whole_layout(self, shape: tuple) -> Any:
        """The replicated layout remembered for a whole block's part of ``shape``, or None."""
        return self.whole_by_shape.get(shape)

    def remember_whole_layout(self, shape: tuple, layout: Any) -> Any:
        self.whole_by_shape[shape] = layout
        return layout

    def __repr__(self) -> str:
        return (f"Derived({len(self.facts)} facts, {len(self.index_plans)} index plans, {len(self.aligned)} "
                f"alignment plans, {len(self.reductions)} reduction plans, {len(self.whole_by_shape)} whole parts)")
