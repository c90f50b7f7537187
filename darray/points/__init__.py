"""Point clouds and meshes: sharded point sets, neighbour queries across shards.

A point set is an ``(N, d)`` coordinate DArray with its rows cut over the
ranks (any sizes, empty parts allowed), plus ``(N, ...)`` feature DArrays
cut like it.

- :func:`partition`: recursive coordinate bisection over the ranks; the
  :class:`Partition` moves features along (``take``) and results back
  (``restore``);
- :func:`knn`, :func:`radius`: exact neighbour queries in global numbering,
  the same at every rank count (ties by global index), points within reach
  of another rank's queries exchanged once as ghosts; :func:`to_edges`
  turns their neighbour lists into a graph's edges;
- :class:`GhostPlan`: a graph's owned and ghost nodes over the ranks and
  their persistent exchange (``start``/``wait``; on the tape, the adjoint
  adds ghost gradients onto their owners);
- :func:`gather`, :func:`scatter_add`, :func:`scatter_mean`,
  :func:`scatter_max`: message passing by global index, on the tape.

Local search uses scipy's cKDTree on NumPy blocks (the ``points`` extra:
``pip install 'darray[points]'``, imported on first use) and an exact
brute-force kernel in the blocks' own namespace on the others (CuPy, torch,
array-api-strict), a chunk of queries at a time: the same answers.

Examples
--------
>>> import numpy as np, darray as da
>>> from darray import points
>>> x = da.asarray(np.random.default_rng(0).random((50, 3)), split=0)
>>> d, i = points.knn(x, x, 4)
>>> i.shape, bool((np.asarray(i.gather())[:, 0] == np.arange(50)).all())
((50, 4), True)
"""

from __future__ import annotations

from .ghosts import GhostPlan
from .message import gather, scatter_add, scatter_max, scatter_mean
from .partition import METHODS, Partition, partition
from .query import knn, radius, to_edges

__all__ = ["GhostPlan", "METHODS", "Partition", "gather", "knn", "partition", "radius", "scatter_add", "scatter_max",
           "scatter_mean", "to_edges"]
