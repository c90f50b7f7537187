"""DArray, its engines (elementwise, reductions) and communication plans."""

from .array import DArray
from .dispatch import install as _install
from .dtypes import DTYPES, to_backend_dtype, to_numpy_dtype
from .elementwise import align_target, apply, astype, local_operand, wrap_like
from .redistribute import gather, make_layout, redistribute_to, target_layout

__all__ = ["DArray", "DTYPES", "align_target", "apply", "astype", "gather", "local_operand", "make_layout",
           "redistribute_to", "target_layout", "to_backend_dtype", "to_numpy_dtype", "wrap_like"]

_install()  # every method, property and operator of DArray, from darray._core.dispatch.TABLE
