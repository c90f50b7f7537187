"""DArray, its engines (elementwise, reductions) and communication plans."""

from .array import DArray
from .dtypes import DTYPES, to_backend_dtype, to_numpy_dtype
from .elementwise import align_target, apply, astype, calibrate_reuse, local_operand, wrap_like
from .redistribute import gather, make_layout, redistribute_to, target_layout

__all__ = ["DArray", "DTYPES", "align_target", "apply", "astype", "gather", "local_operand", "make_layout",
           "redistribute_to", "target_layout", "to_backend_dtype", "to_numpy_dtype", "wrap_like"]

# Six operator calls on 2-element arrays (well under a millisecond): the threshold for reusing temporaries must be
# known before the first operator runs, and measuring it needs DArray's operators, which exist from here on.
calibrate_reuse()
