"""``darray.lib``: the parts of ``numpy.lib`` that NumPy code (and xarray) reaches for.

- :mod:`darray.lib.stride_tricks`: ``sliding_window_view`` (distributed; a copy, not a view).
"""

from . import stride_tricks

__all__ = ["stride_tricks"]
