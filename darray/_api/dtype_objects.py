"""The dtype objects of the namespace (``darray.float64`` is ``numpy.dtype("float64")``)."""

from .._core.dtypes import DTYPES

__all__ = sorted(DTYPES)

bool = DTYPES["bool"]
int8, int16, int32, int64 = (DTYPES[n] for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (DTYPES[n] for n in ("uint8", "uint16", "uint32", "uint64"))
float32, float64 = DTYPES["float32"], DTYPES["float64"]
complex64, complex128 = DTYPES["complex64"], DTYPES["complex128"]
