"""matplotlib draws DArrays as it draws NumPy arrays (Agg backend): the drawn data equal NumPy's.

Every rank draws (matplotlib gathers a DArray through ``__array__`` /
``__array_function__``: collective, so every rank makes the same calls); the
artists' data are compared with those of the same plot of NumPy arrays.
"""

from __future__ import annotations

import numpy as np
import pytest

import darray as da

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt

pytestmark = [pytest.mark.mpi, pytest.mark.filterwarnings("ignore::UserWarning")]


def _fields(module):
    x = module.linspace(0.0, 2.0, 41)
    gx, gy = module.meshgrid(module.linspace(0.0, 1.0, 13), module.linspace(-1.0, 1.0, 9))
    return x, module.sin(3.0 * x), gx, gy, module.cos(3.0 * gx) * gy


def _drawn(draw, module) -> list[np.ndarray]:
    """The data of every artist ``draw`` adds to a fresh figure, as NumPy arrays."""
    fig = plt.figure()
    try:
        out = draw(fig, *_fields(module))
        ax = fig.axes[0]
        data = [np.asarray(line.get_xydata()) for line in ax.lines]
        data += [np.asarray(c.get_array()) for c in ax.collections if c.get_array() is not None]
        data += [np.asarray(c.get_offsets()) for c in ax.collections]
        data += [np.asarray(im.get_array()) for im in ax.images]
        data += [np.asarray(p.get_xy()) for p in ax.patches if hasattr(p, "get_xy")]
        if isinstance(out, tuple) and len(out) == 3:  # hist: counts and edges
            data += [np.asarray(out[0]), np.asarray(out[1])]
        if hasattr(out, "allsegs"):  # contour, contourf
            data += [np.concatenate(s) for s in out.allsegs if s]
        if hasattr(out, "lines") and hasattr(out.lines, "get_segments"):  # streamplot
            data += [np.concatenate(out.lines.get_segments())]
        if hasattr(out, "U"):  # quiver
            data += [np.asarray(out.U), np.asarray(out.V)]
        if hasattr(out, "_vec"):  # plot_surface: its polygons' vertices
            data += [np.asarray(out._vec)]
        return data
    finally:
        plt.close(fig)


PLOTS = {
    "plot": lambda fig, x, y, gx, gy, z: fig.gca().plot(x, y),
    "scatter": lambda fig, x, y, gx, gy, z: fig.gca().scatter(x, y, c=y),
    "hist": lambda fig, x, y, gx, gy, z: fig.gca().hist(y, bins=7),
    "imshow": lambda fig, x, y, gx, gy, z: fig.gca().imshow(z),
    "contour": lambda fig, x, y, gx, gy, z: fig.gca().contour(gx, gy, z, levels=5),
    "contourf": lambda fig, x, y, gx, gy, z: fig.gca().contourf(gx, gy, z, levels=5),
    "pcolormesh": lambda fig, x, y, gx, gy, z: fig.gca().pcolormesh(gx, gy, z),
    "quiver": lambda fig, x, y, gx, gy, z: fig.gca().quiver(gx, gy, z, -z),
    "streamplot": lambda fig, x, y, gx, gy, z: fig.gca().streamplot(gx, gy, z, np.ones(z.shape)),
    "plot_surface": lambda fig, x, y, gx, gy, z: fig.add_subplot(projection="3d").plot_surface(gx, gy, z),
}


@pytest.mark.parametrize("name", sorted(PLOTS))
def test_matplotlib_draws_darrays_as_numpy_arrays(name, monkeypatch):
    monkeypatch.setattr(da.config, "min_distributed_size", 1)  # cut even these small arrays
    want = _drawn(PLOTS[name], np)
    got = _drawn(PLOTS[name], da)
    assert len(got) == len(want) and want, (name, len(got), len(want))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, err_msg=name)
