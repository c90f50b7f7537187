"""Local blocks are C-ordered: every creation function, and elementwise results of C-ordered operands.

A column-major block makes row-cut stencils about 3x slower (the README
example at 2 ranks ran 3.3 s instead of 0.9 s when ``meshgrid`` handed out
Fortran-ordered blocks), so the memory order of blocks is part of the contract.
"""

from __future__ import annotations

import numpy
import pytest

import darray as da

from _cases import layouts

pytestmark = pytest.mark.mpi

N = 150  # 150^2 > darray.config.min_distributed_size: the arrays are cut, not replicated


def _vector(**kw):
    return da.linspace(0.0, 1.0, N, **kw)


def _grid(kw: dict) -> dict:
    """``kw`` for meshgrid, which takes a split and a grid but no block sizes."""
    return {k: v for k, v in kw.items() if k != "sizes"}


#: creation function -> arrays it makes (each at least 2-d, so memory order means something)
CREATORS = {
    "zeros": lambda kw: [da.zeros((N, N - 7), **kw)],
    "ones": lambda kw: [da.ones((N, N - 7), **kw)],
    "empty": lambda kw: [da.empty((N, N - 7), **kw)],
    "full": lambda kw: [da.full((N, N - 7), 2.5, **kw)],
    "eye": lambda kw: [da.eye(N, N - 7, **kw)],
    "meshgrid_ij": lambda kw: da.meshgrid(_vector(), _vector()[:N - 7], indexing="ij", **_grid(kw)),
    "meshgrid_xy": lambda kw: da.meshgrid(_vector()[:N - 7], _vector(), **_grid(kw)),
    "meshgrid_3d": lambda kw: da.meshgrid(_vector(), _vector()[:29], _vector()[:23], indexing="ij", **_grid(kw)),
    "asarray_fortran": lambda kw: [da.asarray(numpy.asfortranarray(numpy.ones((N, N - 7))), **kw)],
    "asarray_fortran_copy": lambda kw: [da.asarray(numpy.asfortranarray(numpy.ones((N, N - 7))), copy=True, **kw)],
    "asarray_transposed": lambda kw: [da.asarray(numpy.ones((N - 7, N)).T, **kw)],
    "from_dlpack_fortran": lambda kw: [da.from_dlpack(numpy.asfortranarray(numpy.ones((N, N - 7))), **kw)],
    "tril": lambda kw: [da.tril(da.ones((N, N - 7), **kw))],
    "triu": lambda kw: [da.triu(da.ones((N, N - 7), **kw))],
    "zeros_like": lambda kw: [da.zeros_like(da.ones((N, N - 7), **kw))],
    "full_like": lambda kw: [da.full_like(da.ones((N, N - 7), **kw), 3.0)],
    "random": lambda kw: [da.random.default_rng(0).random((N, N - 7), **kw)],
}


#: Layouts of the (N, N - 7) arrays (tests/_cases.py); the meshgrids (other shapes) drop the block sizes.
LAYOUTS = layouts((N, N - 7), "split0", "split1", "replicated", "uneven0", "grid2x2")


def _c_ordered(block) -> bool:
    return block.ndim < 2 or block.size == 0 or block.flags.c_contiguous


@pytest.mark.numpy_only
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
@pytest.mark.parametrize("creator", list(CREATORS))
def test_creation_blocks_are_c_ordered(creator, layout):
    for x in CREATORS[creator](layout.kw):  # every array made has N rows
        assert _c_ordered(x.local), (creator, layout, x.local.strides)


@pytest.mark.numpy_only
@pytest.mark.parametrize("layout", LAYOUTS, ids=str)
def test_elementwise_results_of_c_ordered_blocks_are_c_ordered(layout):
    kw = layout.kw
    ys, xs = da.meshgrid(_vector(), _vector(), indexing="ij", **_grid(kw))
    u = da.exp(-50 * ((xs - 0.5) ** 2 + (ys - 0.5) ** 2))
    shifted = u[1:-1, 1:-1] + 0.2 * (u[2:, 1:-1] + u[:-2, 1:-1] - 2 * u[1:-1, 1:-1])
    for x in (u, shifted, da.sqrt(u), u * ys, u > 0.5):
        assert _c_ordered(x.local), (layout, x.local.strides)
