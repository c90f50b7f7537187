"""``numpy.lib.stride_tricks`` for DArrays: :func:`sliding_window_view` and :func:`as_strided`.

``numpy.lib.stride_tricks.sliding_window_view(x, ...)`` of a DArray is this
function too (through ``__array_function__``); xarray's ``rolling`` finds it
as ``darray.lib.stride_tricks`` through ``x.__array_namespace__()``.
``as_strided`` reads the cells NumPy's strides address in the C-ordered
global array (a DArray has no single buffer), as a read-only copy.
"""

from .._api.windows import as_strided, sliding_window_view

__all__ = ["as_strided", "sliding_window_view"]
