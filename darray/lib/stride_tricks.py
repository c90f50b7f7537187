"""``numpy.lib.stride_tricks`` for DArrays: :func:`sliding_window_view`.

``numpy.lib.stride_tricks.sliding_window_view(x, ...)`` of a DArray is this
function too (through ``__array_function__``); xarray's ``rolling`` finds it
as ``darray.lib.stride_tricks`` through ``x.__array_namespace__()``. NumPy's
``as_strided`` has no distributed meaning (strides address one buffer) and
is not provided.
"""

from .._api.windows import sliding_window_view

__all__ = ["sliding_window_view"]
