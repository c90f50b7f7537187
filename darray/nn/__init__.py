"""Neural-network layers for domain-parallel training: one sample sharded spatially over the ranks.

``Module``/``Parameter``/``Sequential``/``ModuleList`` as in torch.nn; layers
take torch's constructor arguments and defaults; data is ``(N, C, *spatial)``
with the spatial axes cut. Parameters are replicated and initialised from
:mod:`darray.nn.init`'s seed, identically on every rank count.

Examples
--------
>>> import numpy as np, darray as da
>>> from darray import nn
>>> nn.init.manual_seed(0)  # doctest: +ELLIPSIS
darray.random.Generator(...)
>>> model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU())
>>> x = da.asarray(np.ones((1, 1, 8, 6)), split=2)
>>> loss = nn.functional.mse_loss(model(x), 0.0)
>>> loss.backward()
>>> model[0].weight.grad.shape
(2, 1, 3, 3)
"""

from __future__ import annotations

from . import functional, init
from ._graph import EdgeConv, GraphConv, MeshGraphNetBlock
from ._neighborhood import NeighborhoodAttention1d, NeighborhoodAttention2d, NeighborhoodAttention3d
from ._position import LearnedPositionEmbedding, SinusoidalPositionEmbedding
from ._tokens import PatchEmbed, PatchUnembed
from ._transformer import MultiheadAttention, TransformerEncoder, TransformerEncoderLayer
from .layers import *
from .layers import __all__ as _layers
from .module import Module, ModuleList, Parameter, Sequential

__all__ = sorted(["Module", "ModuleList", "Parameter", "Sequential", "functional", "init", *_layers,
                  "MultiheadAttention", "TransformerEncoder", "TransformerEncoderLayer",
                  "NeighborhoodAttention1d", "NeighborhoodAttention2d", "NeighborhoodAttention3d",
                  "PatchEmbed", "PatchUnembed", "LearnedPositionEmbedding", "SinusoidalPositionEmbedding",
                  "EdgeConv", "GraphConv", "MeshGraphNetBlock"])
