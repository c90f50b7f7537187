"""Optimizers and learning-rate schedules for darray.nn models (torch.optim's names and defaults).

Parameters are replicated and their gradients identical on every rank, so
each rank applies the same update to its copy: no communication in a step.
:func:`save_checkpoint` / :func:`load_checkpoint` store model + optimizer
(+ scheduler) state in one ``.npz`` readable with ``allow_pickle=False``.
"""

from __future__ import annotations

from ..io.checkpoint import load_checkpoint, save_checkpoint
from . import lr_scheduler
from .adam import Adam, AdamW
from .lr_scheduler import CosineAnnealingLR, StepLR
from .optimizer import Optimizer
from .sgd import SGD

__all__ = sorted(["Adam", "AdamW", "CosineAnnealingLR", "Optimizer", "SGD", "StepLR", "load_checkpoint",
                  "lr_scheduler", "save_checkpoint"])
