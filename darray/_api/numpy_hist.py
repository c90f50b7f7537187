"""NumPy's multi-dimensional histograms and matrix-vector products for DArrays.

``histogram2d``, ``histogramdd``, ``histogram_bin_edges``, ``matvec``,
``vecmat``, ``einsum_path``, ... (issue #15).
"""

from __future__ import annotations

__all__: list[str] = []
