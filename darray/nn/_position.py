"""Position embeddings added to a field ``(N, C, *spatial)`` cut over the ranks: learned and sinusoidal.

Both live in the field's blocks (batch axis of length 1, not cut), so adding
them is local: no message forward, none backward (the gradient of a learned
embedding is summed over the batch on each block). Add them to the field
before :func:`darray.nn._tokens.flatten_tokens`, and the tokens carry their
global position whatever order the blocks number them in.

- :func:`sincos_position_embedding` / :class:`SinusoidalPositionEmbedding`:
  fixed, computed on every block from the GLOBAL coordinates of its cells,
  so every rank count and layout gives the same values. Spatial axis ``i``
  of ``d`` gets the channels ``[i C/d, (i+1) C/d)``: their first half
  ``sin(x_i w_j)``, their second half ``cos(x_i w_j)`` with
  ``w_j = temperature ** (-j / (C / 2d))`` (MAE's 2-d sin-cos embedding,
  per axis).
- :class:`LearnedPositionEmbedding`: a Parameter ``weight (1, C, *spatial)``
  laid out like the field, drawn from :mod:`darray.nn.init`'s counter-based
  generator (the same values at every rank count).
"""

from __future__ import annotations

import numpy as np

from .._core import DArray
from .._errors import message
from .._layout import Layout
from ..autodiff import no_grad
from ..autodiff.rules import to_layout
from ._tokens import _field_layout
from ._util import as_var, data
from .init import default_generator
from .layers import _ints
from .module import Module, Parameter

__all__ = ["position_layout", "sincos_position_embedding", "SinusoidalPositionEmbedding",
           "LearnedPositionEmbedding"]


def position_layout(layout: Layout, channels: int) -> Layout:
    """The layout of an embedding ``(1, channels, *spatial)`` for a field laid out like ``layout``.

    The field's spatial blocks, the channel axis whole, the batch axis of
    length 1 replicated along any grid dim that cut the batch.
    """
    field = _field_layout("position_layout", layout, channels)
    split = tuple(None if s == 0 else s for s in field.split)
    return field.replace(shape=(1, *field.shape[1:]), split=split, sizes=((1,), *field.sizes[1:]))


def _check_channels(func, channels, nsp):
    if not isinstance(channels, int) or channels < 1 or channels % (2 * nsp):
        raise ValueError(message(func, "the channels must be a positive multiple of 2 * (spatial axes)", channels,
                                 f"a multiple of {2 * nsp}"))


def sincos_position_embedding(like, channels: int | None = None, temperature: float = 10000.0) -> DArray:
    """The fixed sin-cos embedding ``(1, C, *spatial)`` of a field laid out like ``like`` (computed locally).

    ``like``: the field (DArray or Variable); ``channels`` defaults to its
    channels; the dtype is its (float64 for a non-float field). Values depend on the global coordinates only.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> e = sincos_position_embedding(da.zeros((1, 4, 3, 2), split=2))
    >>> np.round(e.gather()[0, :, 1, 0], 4).tolist()  # sin(1), cos(1) for the row; sin(0), cos(0) for the column
    [0.8415, 0.5403, 0.0, 1.0]
    """
    func = "sincos_position_embedding"
    ref = data(like)
    if not isinstance(ref, DArray) or ref.ndim < 3:
        raise ValueError(message(func, "like must be a field (N, C, *spatial)", getattr(ref, "shape", type(ref).__name__)))
    layout = ref._layout
    nsp = layout.ndim - 2
    channels = layout.shape[1] if channels is None else channels
    _check_channels(func, channels, nsp)
    out = position_layout(layout, channels)
    rank = ref._comm.rank
    start, shape = out.block_start(rank)[2:], out.block_shape(rank)[2:]
    per = channels // nsp
    half = per // 2
    omega = float(temperature) ** (-np.arange(half) / half)
    block = np.zeros((1, channels, *shape))
    for i in range(nsp):
        angle = np.multiply.outer(omega, start[i] + np.arange(shape[i]))  # (half, n_i)
        view = (slice(None),) + (None,) * i + (slice(None),) + (None,) * (nsp - 1 - i)
        block[0, i * per:i * per + half] = np.sin(angle)[view]
        block[0, i * per + half:(i + 1) * per] = np.cos(angle)[view]
    xp = ref._xp
    dtype = ref._block.dtype if np.dtype(str(ref.dtype)).kind == "f" else xp.float64
    local = xp.asarray(xp.asarray(block, device=ref.device), dtype=dtype)
    return DArray._wrap(local, out, ref._comm, xp)


class SinusoidalPositionEmbedding(Module):
    """``x + sincos_position_embedding(x)``: a fixed embedding, no parameters (cached per layout).

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> pe = SinusoidalPositionEmbedding(4, spatial_dims=2)
    >>> pe(da.zeros((2, 4, 3, 2), split=2)).shape, pe.state_dict()
    ((2, 4, 3, 2), OrderedDict())
    """

    def __init__(self, embed_dim, spatial_dims=2, temperature=10000.0):
        super().__init__()
        _check_channels("SinusoidalPositionEmbedding", embed_dim, spatial_dims)
        self.embed_dim, self.spatial_dims, self.temperature = embed_dim, spatial_dims, float(temperature)
        object.__setattr__(self, "_cache", {})

    def forward(self, x):
        xd = data(x)
        if xd.ndim != self.spatial_dims + 2 or xd.shape[1] != self.embed_dim:
            raise ValueError(message("SinusoidalPositionEmbedding", "input must be (N, embed_dim, *spatial)",
                                     tuple(xd.shape), f"{self.spatial_dims + 2}-d with {self.embed_dim} channels"))
        key = (xd._layout.blocks_key, str(xd.dtype))
        emb = self._cache.get(key)
        if emb is None:
            emb = self._cache[key] = sincos_position_embedding(xd, temperature=self.temperature)
        return as_var(x) + emb

    def extra_repr(self):
        return f"{self.embed_dim}, spatial_dims={self.spatial_dims}"


class LearnedPositionEmbedding(Module):
    """``x + weight``: a learned embedding ``weight (1, embed_dim, *spatial_shape)`` laid out like the field.

    ``like``: the field (or its Layout) whose blocks the parameter takes;
    without it the parameter is cut along the first spatial axis and moved,
    once, to the blocks of the first field it meets (pass ``like`` to create
    it in place). Initialised ``normal(0, std)`` from
    :func:`darray.nn.init.default_generator` (same values at any rank count).
    state_dict key: ``weight``.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> x = da.zeros((2, 4, 6, 5), split=3)
    >>> pe = LearnedPositionEmbedding(4, (6, 5), like=x)
    >>> pe.weight.data.layout.split == x.layout.split, pe(x).shape
    (True, (2, 4, 6, 5))
    """

    def __init__(self, embed_dim, spatial_shape, std=0.02, like=None, dtype=None):
        super().__init__()
        name = "LearnedPositionEmbedding"
        _ints(name, "embed_dim", embed_dim)
        spatial_shape = tuple(spatial_shape)
        _ints(name, "spatial_shape", spatial_shape, len(spatial_shape))
        shape = (1, embed_dim, *spatial_shape)
        if like is not None:
            layout = like if isinstance(like, Layout) else data(like)._layout
            if tuple(layout.shape[2:]) != spatial_shape:
                raise ValueError(message(name, "like must have the embedding's spatial shape", layout.shape[2:],
                                         spatial_shape))
            layout = position_layout(layout, embed_dim)
            sizes = {a: layout.sizes[a] for a, g in enumerate(layout.axis_dim) if g is not None}
            kw = dict(split=layout.split, grid=layout.dims, sizes=sizes)
        else:
            kw = dict(split=2)
        self.embed_dim, self.spatial_shape = embed_dim, spatial_shape
        values = default_generator().normal(0.0, std, size=shape, **kw)
        self.weight = Parameter(values.astype(dtype) if dtype is not None else values)

    def forward(self, x):
        xd = data(x)
        if tuple(xd.shape[1:]) != (self.embed_dim, *self.spatial_shape):
            raise ValueError(message("LearnedPositionEmbedding", "input must be (N, embed_dim, *spatial_shape)",
                                     tuple(xd.shape), f"(N, {self.embed_dim}, {', '.join(map(str, self.spatial_shape))})"))
        target = position_layout(xd._layout, self.embed_dim)
        if self.weight.data._layout != target:  # once: the parameter takes the field's blocks
            with no_grad():
                self.weight.data = to_layout(self.weight.data, target)
        return as_var(x) + self.weight

    def extra_repr(self):
        return f"{self.embed_dim}, spatial_shape={self.spatial_shape}"
