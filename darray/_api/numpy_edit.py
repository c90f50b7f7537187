"""NumPy's array-editing functions for DArrays.

``append``, ``delete``, ``insert``, ``resize``, the flips and splits by
direction (``fliplr``, ``hsplit``, ...), ``block``, ``trim_zeros``,
``ediff1d``, ... (issue #15).
"""

from __future__ import annotations

__all__: list[str] = []
