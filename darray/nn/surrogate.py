"""A small U-Net surrogate of one explicit step of the 2-d heat equation, trained on a sharded field.

:class:`SurrogateNet` is built from :mod:`darray.nn` layers only::

    x (1, 1, H, W) --Conv3x3--ReLU--> e (1, c, H, W) ----------------------------+ skip
                                      `--AvgPool2d(2)--Conv3x3--ReLU--Upsample(2)-+--> Conv1x1 --> (1, 1, H, W)

Every 3x3 convolution uses circular padding (a periodic field) or, for a
field that is not, replicate padding; either way the convolutions exchange
one-cell halos with the neighbouring ranks and the result is the
convolution of the whole field. The full-resolution path is
kept narrow (one 1->c 3x3 conv and a 1x1 head): darray's convolutions cost
about as much per cell as NumPy's im2col, and this shape trains a 256x256
field for 200 steps in well under a minute on one core.

:func:`train_surrogate` makes the training pair from one field: input
``u_t``, target ``u_{t+1} = u_t + nu * laplacian(u_t)`` (a 5-point halo
stencil, :func:`darray.stencil.laplacian`; periodic by default). The model
predicts the increment: ``u_{t+1} ~ u_t + r * net((u_t - mean) / std)`` with
``r`` the root mean square of the true increment, and the loss is the mean
squared error of that prediction in units of ``r**2``. So a loss of 1 is the
persistence forecast (``u_{t+1} = u_t``) and 0 is exact. (One explicit step
of a smooth field changes it by little; predicting ``u_{t+1}`` outright
would reward learning the identity.) The field stays sharded over the ranks
throughout: activations are cut like the field, parameters are replicated,
gradients are summed over the ranks by the layers. The loss history is the
same on every rank and, up to rounding (~1e-12 relative), on every rank count.

The boundary must match the field. ``boundary="periodic"`` (the default;
circular padding in the model) expects a periodic field: on a field that is
not, the wrap-around stencil sees a jump at the seam, and while the step of a
smooth field shrinks like ``1/n**2`` with the resolution, the step at the
jump does not: on the 256x256 Gaussian bumps of ``linspace(0, 1, 256)``
three quarters of the target's variance sat on the 2-cell seam band, a small
net cannot amplify so small a jump by the ~1000x the target needs, and the
loss stalled near 0.8 (0.35 at 128x128, where the seam held a quarter). For
a field that is not periodic pass ``boundary="nearest"`` (zero-flux walls:
the stencil and the model's padding replicate the edge cells).

Fields wider than ``max_size`` (default 256) cells along either axis are
first average-pooled by the smallest integer factor that brings both axes
to at most ``max_size`` (trailing rows/columns that do not fill a window
are dropped), and an odd axis loses its last cell so the U-Net's pooling
and upsampling line up. The demo's 1024x1024 field is trained at 256x256.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from .._errors import message
from . import functional as F
from . import init
from .layers import GELU, AvgPool2d, Conv2d, ReLU, Upsample
from .module import Module

__all__ = ["BOUNDARIES", "SurrogateNet", "heat_step", "periodic_bumps", "train_surrogate", "training_pair"]


class SurrogateNet(Module):
    """A two-level U-Net on ``(N, 1, H, W)`` fields (H and W even) with an additive skip connection.

    ``channels``: feature channels of both levels; ``activation``: ``"relu"``
    (default, cheap) or ``"gelu"``; ``padding_mode``: of the 3x3 convolutions
    (``"circular"`` for periodic fields, ``"zeros"``, ``"replicate"``);
    ``comm``: the communicator the parameters live on (default: darray's
    default communicator; pass the data's communicator when it differs, e.g.
    a :class:`darray._comm.SelfCommunicator` reference run inside an MPI job).
    Parameters come from :mod:`darray.nn.init`'s generator, so
    ``nn.init.manual_seed(s)`` before construction fixes them on every rank count.
    """

    def __init__(self, channels: int = 8, activation: str = "relu", padding_mode: str = "circular", comm=None):
        super().__init__()
        if int(channels) < 1:
            raise ValueError(message("SurrogateNet", "channels must be positive", channels, "an int >= 1"))
        if activation not in ("relu", "gelu"):
            raise ValueError(message("SurrogateNet", "unknown activation", activation, "'relu' or 'gelu'"))
        c = int(channels)
        self.channels = c
        self.enc = Conv2d(1, c, 3, padding="same", padding_mode=padding_mode)
        self.act = ReLU() if activation == "relu" else GELU()
        self.down = AvgPool2d(2)
        self.mid = Conv2d(c, c, 3, padding="same", padding_mode=padding_mode)
        self.up = Upsample(scale_factor=2)
        self.head = Conv2d(c, 1, 1)
        if comm is not None:
            _move_parameters(self, comm)

    def forward(self, x):
        e = self.act(self.enc(x))                 # full-resolution features
        m = self.act(self.mid(self.down(e)))      # coarse features (half resolution)
        return self.head(self.up(m) + e)          # skip connection, then a 1x1 projection

    def extra_repr(self):
        return f"channels={self.channels}"


def _move_parameters(model: Module, comm) -> None:
    """Put every (replicated) parameter on ``comm``: same values, no communication."""
    import darray

    for p in model.parameters():
        if p.data.comm is not comm:
            p.data = darray.asarray(p.data.local, dtype=p.data.dtype, split=None, comm=comm, copy=True)


#: ``boundary`` of the training functions -> (:func:`darray.stencil.laplacian` mode, the model's padding_mode)
BOUNDARIES = {"periodic": ("wrap", "circular"), "nearest": ("nearest", "replicate")}


def _boundary(boundary: str) -> tuple[str, str]:
    if boundary not in BOUNDARIES:
        raise ValueError(message("train_surrogate", "unknown boundary", boundary, f"one of {tuple(BOUNDARIES)}"))
    return BOUNDARIES[boundary]


def heat_step(u, nu: float = 0.2, boundary: str = "periodic"):
    """One explicit step of ``du/dt = laplacian(u)``: ``u + nu * laplacian(u)``.

    ``u``: a 2-d DArray (any layout); one exchange of one-cell halos.
    ``nu = dt / dx**2`` (stable for ``nu <= 0.25``); ``boundary``:
    ``"periodic"`` (a periodic grid) or ``"nearest"`` (zero-flux walls: the
    ghost cells repeat the edge cells).
    """
    import darray

    return u + darray.stencil.laplacian(u, mode=_boundary(boundary)[0]) * float(nu)


def periodic_bumps(n: int, *, comm=None, split=0):
    """Three Gaussian-like bumps on an ``n x n`` grid of the unit torus (a smooth periodic test field).

    Bump ``exp(w (cos 2 pi dx + cos 2 pi dy - 2) / (2 pi**2))`` equals
    ``exp(-w (dx**2 + dy**2))`` to leading order near its centre and is smooth
    across the edges, as the periodic heat step expects. Every rank computes
    its own block (``split``: the layout of the result).
    """
    import darray

    grid = darray.linspace(0.0, 1.0, n, endpoint=False, comm=comm)
    ys, xs = darray.meshgrid(grid, grid, indexing="ij", split=split)
    u = darray.zeros_like(xs)
    for cx, cy, w in ((0.3, 0.3, 60.0), (0.7, 0.6, 40.0), (0.5, 0.8, 90.0)):
        phase = darray.cos((xs - cx) * (2 * math.pi)) + darray.cos((ys - cy) * (2 * math.pi)) - 2.0
        u = u + darray.exp(phase * (w / (2 * math.pi ** 2)))
    return u


def _prepare(u, max_size: int):
    """``u`` as a plain 2-d DArray of even sizes, average-pooled when wider than ``max_size``."""
    import darray

    from ..autodiff import Variable, no_grad

    data = u.data if isinstance(u, Variable) else u
    if not isinstance(data, darray.DArray):
        raise TypeError(message("train_surrogate", "expected a DArray field", type(u).__name__, "a DArray"))
    if data.ndim == 4 and data.shape[:2] == (1, 1):
        h, w = data.shape[2:]
    elif data.ndim == 2:
        h, w = data.shape
    else:
        raise ValueError(message("train_surrogate", "expected a 2-d field or a (1, 1, H, W) array", data.shape,
                                 "(H, W) or (1, 1, H, W)"))
    if data.dtype.kind != "f":
        data = data.astype(darray.float64)
    # indexing keeps the cut of the spatial axes (darray.reshape would put the split on the unit axis)
    x = data[None, None] if data.ndim == 2 else data
    factor = max(1, math.ceil(max(h, w) / int(max_size)))
    if factor > 1:
        with no_grad():
            x = F.avg_pool2d(x, factor).data
        h, w = x.shape[2:]
    he, we = h - h % 2, w - w % 2
    if he < 2 or we < 2:
        raise ValueError(message("train_surrogate", "field too small for the U-Net", (h, w),
                                 "at least 2x2 cells after downsampling"))
    if (he, we) != (h, w):
        x = x[:, :, :he, :we]
    return x[0, 0], factor


def training_pair(u, nu: float = 0.2, max_size: int = 256, boundary: str = "periodic"):
    """``(x, y, factor)``: the standardised input ``(1, 1, H, W)`` and the increment target in rms units.

    ``x = (u_t - mean) / std``; ``y = (u_{t+1} - u_t) / rms(u_{t+1} - u_t)``
    with ``u_{t+1} = heat_step(u_t, nu, boundary)``; both cut like ``u``
    (after the downsampling by ``factor`` that ``max_size`` asks for). Collective.
    """
    import darray

    if int(max_size) < 2:
        raise ValueError(message("train_surrogate", "max_size too small", max_size, "an int >= 2"))
    _boundary(boundary)
    field, factor = _prepare(u, max_size)
    increment = heat_step(field, nu, boundary) - field
    mean, std = float(darray.mean(field)), float(darray.std(field))
    rms = math.sqrt(float(darray.mean(increment * increment)))
    x = ((field - mean) * (1.0 / std if std > 0 else 1.0))[None, None]
    y = (increment * (1.0 / rms if rms > 0 else 1.0))[None, None]
    return x, y, factor


def _progress(enabled, rank: int, steps: int):
    """A tqdm bar on rank 0 (None when disabled, not rank 0 or tqdm is absent)."""
    if rank != 0 or enabled is False:
        return None
    if enabled is None:
        import sys

        enabled = bool(getattr(sys.stderr, "isatty", lambda: False)())
        if not enabled:
            return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=steps, desc="training", unit="step", leave=False)


def train_surrogate(u, steps: int = 200, lr: float = 1e-2, log: Callable[[str], object] | None = print,
                    seed: int = 0, *, channels: int = 8, nu: float = 0.2, max_size: int = 256,
                    boundary: str = "periodic", log_every: int | None = None, progress: bool | None = None,
                    model: Module | None = None) -> list[float]:
    """Fit a :class:`SurrogateNet` to one heat-equation step of ``u``; returns the loss of every step.

    ``u``: the field ``u_t``, a 2-d DArray (or ``(1, 1, H, W)``) in any
    layout, typically cut over the ranks; it is used as is (sharded),
    downsampled first when wider than ``max_size`` (see the module notes).
    The target ``u_{t+1}`` comes from :func:`heat_step` (``nu``,
    ``boundary``: ``"periodic"`` for a periodic field, ``"nearest"`` for
    one that is not; see the module notes); the loss is
    the mean squared error of the predicted ``u_{t+1}`` relative to that of
    persistence (module notes). ``steps`` Adam steps with learning rate
    ``lr``; parameters from ``seed`` (:func:`darray.nn.init.manual_seed`)
    unless ``model`` is given.

    ``log``: called on rank 0 only with a line of text at the start, every
    ``log_every`` steps (default ``steps // 10``) and at the end (None:
    silent). ``progress``: a tqdm bar on rank 0 (None: when stderr is a
    terminal and tqdm is installed). Collective: every rank must call it.

    Returns the loss history (``steps`` floats), identical on every rank.
    """
    import numpy as np

    from ..optim import Adam

    steps = int(steps)
    if steps < 0:
        raise ValueError(message("train_surrogate", "steps must be non-negative", steps, "an int >= 0"))
    if lr <= 0:
        raise ValueError(message("train_surrogate", "lr must be positive", lr, "a float > 0"))
    x, y, factor = training_pair(u, nu, max_size, boundary)
    comm = x.comm
    h, w = x.shape[2:]
    say = log if (log is not None and comm.rank == 0) else (lambda *_: None)

    if model is None:
        init.manual_seed(seed)
        model = SurrogateNet(channels, padding_mode=_boundary(boundary)[1], comm=comm)
    else:
        _move_parameters(model, comm)
    model.train()
    optimizer = Adam(model.parameters(), lr=lr)
    every = max(1, steps // 10) if log_every is None else max(1, int(log_every))
    note = f" (downsampled by {factor})" if factor > 1 else ""
    say(f"  training: {type(model).__name__}(channels={getattr(model, 'channels', '?')}) on {h}x{w}{note}, "
        f"{comm.size} rank(s), {boundary} boundary, {steps} Adam steps, lr={lr:g} (loss 1 = persistence)")

    bar = _progress(progress, comm.rank, steps)
    losses: list[float] = []
    t0 = time.perf_counter()
    try:
        for step in range(steps):
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            value = float(loss.data)
            losses.append(value)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{value:.3e}", refresh=False)
            if (step + 1) % every == 0 or step == 0:
                say(f"    step {step + 1:5d}/{steps}  loss {value:.6e}")
    finally:
        if bar is not None:
            bar.close()
    # one broadcast guards against ranks rounding a reduction differently
    history = np.asarray(losses, dtype=np.float64)
    if comm.size > 1 and history.size:
        history = np.asarray(comm.bcast(history, 0))
    losses = [float(v) for v in history]
    if steps:
        say(f"  training: loss {losses[0]:.3e} -> {losses[-1]:.3e} in {time.perf_counter() - t0:.2f} s "
            f"({(time.perf_counter() - t0) / steps * 1e3:.0f} ms/step)")
    return losses
