"""What dividing the world costs: predicted bytes and messages of halo exchanges, before running.

Plans are pure functions of layouts, so the cost of an exchange at any rank
count is computed here without a communicator (nothing runs at scale).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from ._core import DArray, make_layout
from ._core.halo import halo_plan
from ._core.plans import redistribution_plan
from ._layout import Layout

__all__ = ["Explanation", "explain", "MachineModel"]


@dataclass(frozen=True)
class MachineModel:
    """Costs of the machine darray runs on (defaults measured on the project's 2-core box, see PEERS.md).

    latency_s: one message; bandwidth_Bps: bytes per second between ranks;
    cell_update_s: one stencil update of one float64 cell (memory bound).
    """

    latency_s: float = 2.9e-6
    bandwidth_Bps: float = 5.0e9
    cell_update_s: float = 1.5e-9


@dataclass
class Explanation:
    """The predicted cost of one halo exchange of a layout, per rank."""

    layout: Layout
    itemsize: int
    bytes_sent: list[int] = field(default_factory=list)
    messages: list[int] = field(default_factory=list)
    interior: list[int] = field(default_factory=list)

    @property
    def halo_to_interior(self) -> float:
        """Ghost cells received per owned cell, worst rank."""
        ratios = [b / self.itemsize / max(n, 1) for b, n in zip(self.bytes_sent, self.interior)]
        return max(ratios) if ratios else 0.0

    def exchange_seconds(self, model: MachineModel = MachineModel()) -> float:
        """Predicted time of one exchange on the slowest rank."""
        return max((m * model.latency_s + b / model.bandwidth_Bps for b, m in zip(self.bytes_sent, self.messages)),
                   default=0.0)

    def pays_off(self, model: MachineModel = MachineModel()) -> bool:
        """Whether a stencil step on this layout beats the same step on one rank."""
        total = prod(self.layout.shape)
        one_rank = total * model.cell_update_s
        distributed = max(self.interior, default=0) * model.cell_update_s + self.exchange_seconds(model)
        return distributed < one_rank

    def __str__(self) -> str:
        lay = self.layout
        worst = max(range(len(self.bytes_sent)), key=lambda r: self.bytes_sent[r], default=0)
        lines = [
            f"layout: shape={lay.shape} grid={lay.dims} split={lay.split} halo={lay.halo} boundary={lay.boundary}",
            f"ranks: {lay.nprocs}; largest block {max(self.interior, default=0)} cells",
            f"one halo exchange: {sum(self.bytes_sent)} bytes in {sum(self.messages)} messages in all; "
            f"worst rank {worst} sends {self.bytes_sent[worst] if self.bytes_sent else 0} bytes "
            f"in {self.messages[worst] if self.messages else 0} messages",
            f"halo-to-interior ratio (worst rank): {self.halo_to_interior:.4f}",
            f"predicted exchange time: {self.exchange_seconds() * 1e6:.1f} us; "
            f"distributing {'pays off' if self.pays_off() else 'does NOT pay off'} for a stencil step "
            f"(model: {MachineModel()})",
        ]
        return "\n".join(lines)


def explain(x, /, *, nprocs: int | None = None, split="auto", grid=None, halo=None, boundary=None,
            itemsize: int | None = None) -> Explanation:
    """Predict the halo exchange of ``x`` (a DArray) or of an array of shape ``x`` laid out on ``nprocs`` ranks.

    Examples
    --------
    >>> import darray as da
    >>> e = da.explain((1024, 1024), nprocs=4, split=0, halo={0: 1}, boundary="periodic")
    >>> e.bytes_sent[0], e.messages[0]
    (16384, 2)
    >>> e.pays_off()
    True
    """
    if isinstance(x, DArray):
        layout = x.layout
        itemsize = itemsize or x.dtype.itemsize
        if nprocs is not None and nprocs != layout.nprocs:
            layout = make_layout("explain", layout.shape, nprocs, split, grid, None,
                                 layout.halo if halo is None else halo, layout.boundary if boundary is None else boundary)
    else:
        if isinstance(x, (str, bytes)) or not all(isinstance(n, int) for n in x):
            raise TypeError(f"explain: expected a DArray or a shape; got {x!r}")
        if nprocs is not None and (not isinstance(nprocs, int) or nprocs < 1):
            raise ValueError(f"explain: nprocs must be a positive integer; got {nprocs!r}")
        shape = tuple(x)
        layout = Layout.create("explain", shape, nprocs or 1, split=split, grid=grid, halo=halo or 0,
                               boundary=boundary or "none", min_size=0)
        itemsize = itemsize or 8
    out = Explanation(layout, itemsize)
    for rank in range(layout.nprocs):
        plan = halo_plan(layout, rank)
        out.bytes_sent.append(plan.volume(rank=rank) * itemsize)
        out.messages.append(sum(p != rank for p, _ in plan.sends))
        out.interior.append(prod(layout.block_shape(rank)))
    return out


def redistribution_bytes(src: Layout, dst: Layout, itemsize: int = 8) -> list[int]:
    """Bytes every rank sends to move an array from ``src`` to ``dst`` (same shape and rank count)."""
    return [redistribution_plan(src, dst, rank).volume(rank=rank) * itemsize for rank in range(src.nprocs)]
