"""NumPy's polynomial and function-application helpers for DArrays.

``polyfit``, ``polyval``, ``roots``, ``poly1d``, ``vectorize``,
``apply_along_axis``, ``kron``, ... (issue #15).
"""

from __future__ import annotations

__all__: list[str] = []
