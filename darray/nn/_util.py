"""Small helpers shared by the modules of :mod:`darray.nn.functional`."""

from __future__ import annotations

import numbers

from .._core import DArray
from .._errors import message
from .._layout import Layout
from ..autodiff import Variable, redistribute


def data(x):
    """The DArray of a Variable (or ``x`` itself)."""
    return x.data if isinstance(x, Variable) else x


def as_var(x):
    """``x`` as a Variable (a constant when it is a DArray): Variables go first in mixed expressions."""
    return x if isinstance(x, Variable) else Variable(x)


def whole(w: DArray):
    """The whole (small, replicated) array on this rank, as a local block."""
    return w.local if w._layout.is_replicated else w.gather()


def ntuple(func, name, value, n) -> tuple[int, ...]:
    """``value`` (an int or a sequence of ``n`` ints) as an ``n``-tuple; ValueError naming ``func`` otherwise."""
    if isinstance(value, numbers.Integral):
        return (int(value),) * n
    try:
        out = tuple(int(v) for v in value)
    except TypeError:
        raise TypeError(message(func, f"{name} must be an int or a tuple of ints", type(value).__name__)) from None
    if len(out) != n:
        raise ValueError(message(func, f"{name} needs one entry per spatial axis", value, f"{n} entries"))
    return out


def wrap_storage(block, layout: Layout, like: DArray) -> DArray:
    """A DArray of ``layout`` on ``like``'s communicator and backend whose storage (ghost cells included) is ``block``."""
    return DArray._wrap(block, layout, like._comm, like._xp)


def zeros(like: DArray, shape, dtype=None):
    """A local block of zeros on ``like``'s backend and device."""
    return like._xp.zeros(tuple(shape), dtype=dtype if dtype is not None else like._block.dtype, device=like.device)


def check_input(func: str, x, nsp: int) -> None:
    """``x`` must be ``(N, C, *spatial)`` with ``nsp`` spatial axes."""
    if data(x).ndim != nsp + 2:
        raise ValueError(message(func, "input must be (N, C, *spatial)", tuple(data(x).shape),
                                 f"a {nsp + 2}-d array"))


def whole_axis_layout(func: str, layout: Layout, axis: int) -> Layout:
    """``layout`` without halo and with ``axis`` whole (the axis a layer contracts); the other cuts kept."""
    layout = layout.without_halo()
    if layout.axis_dim[axis] is not None:
        split = tuple(None if s == axis % len(layout.shape) else s for s in layout.split)
        layout = Layout.create(func, layout.shape, layout.nprocs, split=split, grid=layout.dims)
    return layout


def whole_channel_layout(func: str, xd) -> Layout:
    """``xd``'s layout without halo and with the channel axis (1) whole (see :func:`whole_axis_layout`)."""
    return whole_axis_layout(func, xd._layout, 1)


def redistributed(x, layout: Layout):
    """``x`` (a Variable or DArray) in ``layout``, redistributed on the tape when it is not already."""
    return x if data(x)._layout == layout else redistribute(x, layout=layout)
