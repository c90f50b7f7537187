"""NumPy's selection functions for DArrays.

``select``, ``choose``, ``compress``, ``extract``, ``place``, ``putmask``,
``copyto``, ``piecewise``, ``fill_diagonal``, ``lexsort``, ... (issue #15).
"""

from __future__ import annotations

__all__: list[str] = []
