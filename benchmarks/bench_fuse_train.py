"""The training-step row of ``bench_fuse.py``: an Adam update of ``n`` float32 parameters, fused vs eager.

The elementwise tail of a training step: with the gradient ``g`` already
reduced, each rank updates its block of the parameters ``p`` and the moments
``m`` and ``v`` (:func:`adam`, written once, run fused and undecorated). The
hand-written bar is what a NumPy user writes (in-place operators, four
temporaries); the bound is the 28 bytes per cell the update must move (read
p, g, m, v; write p, m, v in float32) over the copy bandwidth of this block.
"""

from __future__ import annotations

import numpy as np

import darray as da
from bench_attention import timed

__all__ = ["adam", "optimizer"]


@da.fuse
def adam(p, g, m, v, lr, b1, b2, eps, t):
    """torch.optim.Adam's update (the bias corrections folded into the step size, as torch does)."""
    root = (1 - b2 ** t) ** 0.5
    m_new = m * b1 + g * (1 - b1)
    v_new = v * b2 + g * g * (1 - b2)
    m[:] = m_new
    v[:] = v_new
    p[:] = p - (lr * root / (1 - b1 ** t)) * m_new / (da.sqrt(v_new) + eps * root)


def optimizer(comm, n: int, reps: int) -> dict[str, float]:
    """Seconds per Adam update: fused, eager, hand (NumPy on the block) and the bandwidth bound."""
    rng = da.random.default_rng(7)
    state = [rng.standard_normal(n, split=0).astype(da.float32) for _ in range(3)]
    state.append(da.abs(rng.standard_normal(n, split=0)).astype(da.float32))
    p, g, m, v = state
    args = (1e-3, 0.9, 0.999, 1e-8, 3)
    blocks = [np.ascontiguousarray(x.local) for x in state]
    copy = np.empty_like(blocks[0])

    def hand(p=blocks[0], g=blocks[1], m=blocks[2], v=blocks[3], lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, t=3):
        root = (1 - b2 ** t) ** 0.5
        m *= b1
        m += g * (1 - b1)
        v *= b2
        v += g * g * (1 - b2)
        p -= (lr * root / (1 - b1 ** t)) * m / (np.sqrt(v) + eps * root)

    copy_time = timed(comm, lambda: np.copyto(copy, blocks[0]), reps)  # 8 bytes per float32 cell
    hand_time = timed(comm, hand, reps)  # (no communication: the NumPy code is the hand-written code)
    return {"fused": timed(comm, lambda: adam(p, g, m, v, *args), reps),
            "eager": timed(comm, lambda: adam.__wrapped__(p, g, m, v, *args), reps),
            "hand": hand_time, "numpy": hand_time, "bound": copy_time * 28 / 8}
