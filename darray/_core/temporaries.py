"""Temporary reuse: an operator's result written into the buffer of an operand nothing else holds.

NumPy reuses an unreferenced temporary's buffer in ``a * b + c`` for plain
ndarrays (temporary elision); doing the same keeps darray as fast as NumPy on
expressions. Two tests decide it, both by reference counts:

- :func:`temporaries`, at the operator: which operands only the running
  expression holds. It reads the calling frame, so it must run at a fixed
  depth below the code that wrote the operator (:data:`CALLER_FRAME`), and
  the reference count of such an operand depends on the interpreter: both
  are checked once, at import, by :func:`calibrate_reuse`, which raises if
  the frames are not laid out as this module expects.
- :func:`reusable`, in the engine: whether a temporary's block is a plain
  buffer nothing else views.

The frame layout: ``temporaries`` is called by an operator's general path
(``_general_method`` in :mod:`darray._core.operators`), which is called by
the operator's lean front: the compiled ``Lean`` object (no Python frame)
where ``darray._core._lean`` was built, the Python front (``_lean_method``,
``_checked_method``) otherwise, itself called by the code that wrote the
operator.
"""

from __future__ import annotations

import dis
import sys

import numpy as np

from .._backend import NUMPY
from .._layout import Layout
from .._layout.layout import SMALL_BLOCK_BYTES
from . import compiled
from .array import DArray

__all__ = ["CALLER_FRAME", "calibrate_reuse", "reusable", "temporaries"]

# Largest reference count, seen inside ``temporaries``, of an operand that nothing but the running expression
# holds. Calibrated at import (``calibrate_reuse``) because it depends on the interpreter; 0 disables the reuse.
_TEMPORARY_REFS = 0
#: How many frames above ``temporaries`` the code that wrote the operator runs: temporaries <- the general path
#: <- the operator's lean front (a Python frame unless compiled) <- the caller. Checked by calibrate_reuse.
CALLER_FRAME = 3 if compiled.lean is None else 2
_probe: list | None = None


def reusable(x: DArray):
    """The block of temporary ``x`` if it is a plain buffer that only ``x`` holds.

    Expected references: ``x._block``, the engine's local, this local, getrefcount's
    argument, and ``x._local`` when it is the block itself.
    """
    block = x._block
    if block.base is not None or sys.getrefcount(block) > 4 + (x._local is block):
        return None
    return block


#: The interpreter's binary-operator instructions (``BINARY_OP`` since 3.11, ``BINARY_ADD``, ... before).
_OPERATOR_OPCODES = frozenset(code for name, code in dis.opmap.items()
                              if name.startswith(("BINARY_", "INPLACE_"))
                              and name not in ("BINARY_SUBSCR", "BINARY_SLICE"))
_CODE_BYTES: dict = {}


def _called_by_operator(frame) -> bool:
    """Whether ``frame`` is executing a binary-operator instruction (not a call such as ``x.__add__(y)``)."""
    code = frame.f_code
    raw = _CODE_BYTES.get(code)
    if raw is None:
        if len(_CODE_BYTES) > 1024:
            _CODE_BYTES.clear()
        raw = _CODE_BYTES[code] = code.co_code  # (a copy per access on 3.11+: remembered)
    return raw[frame.f_lasti] in _OPERATOR_OPCODES


def temporaries(a, b) -> int:
    """Which of two operator operands are unreferenced temporaries (bit 0: a, bit 1: b).

    Only called from the operators' general path, one call below the
    operator's lean front (see the module): that frame layout fixes the
    reference counts; a named array (a variable, an argument, a list item)
    always has one reference more when the interpreter runs the operator. A
    direct call (``x.__add__(y)``, ``operator.add``) holds one reference less,
    so like NumPy (which checks its C callers) only an operator instruction in
    the calling frame counts.
    """
    limit = _TEMPORARY_REFS
    if _probe is not None:
        _probe.append((sys.getrefcount(a), sys.getrefcount(b), sys._getframe(CALLER_FRAME).f_code))
        return 0
    if not _called_by_operator(sys._getframe(CALLER_FRAME)):
        return 0
    return (sys.getrefcount(a) <= limit) | ((sys.getrefcount(b) <= limit) << 1)


def _calibrate() -> int:
    """The reference count of a temporary operand as :func:`temporaries` sees it on this interpreter.

    Returns 0 (reuse off) unless temporaries are strictly below named operands
    on both sides of an operator. Raises AssertionError where
    :data:`CALLER_FRAME` does not reach this function's frame from
    ``temporaries``: the frames are not laid out as the module says.
    """
    global _probe
    from .._comm import SelfCommunicator

    n = SMALL_BLOCK_BYTES // 8  # blocks the operators' short path leaves to the engine
    layout = Layout((n,), (1,), (None,), ((n,),))
    comm = SelfCommunicator()

    def make():
        return DArray._wrap(np.ones(n), layout, comm, NUMPY)

    named_a, named_b = make(), make()
    named_a + named_b, named_a - named_b, 2.0 * named_a  # (each operator's first call writes its lean path)
    _probe = []
    try:
        named_a + named_b
        make() + make()
        named_a - named_b
        make() - make()
        2.0 * named_a  # reflected operators probe (scalar, array)
        2.0 * make()
        probes = list(_probe)
    finally:
        _probe = None
    here = sys._getframe(0).f_code
    if len(probes) != 6 or any(code is not here for _, _, code in probes):
        raise AssertionError(f"darray._core.temporaries: the operators' frames are not laid out as expected "
                             f"(CALLER_FRAME={CALLER_FRAME} from temporaries() reaches "
                             f"{[code.co_name for _, _, code in probes]}, expected the operator's caller "
                             f"{here.co_name!r} six times)")
    (na, nb, _), (ta, tb, _), (na2, nb2, _), (ta2, tb2, _), (_, nr, _), (_, tr, _) = probes
    temporary = max(ta, tb, ta2, tb2, tr)
    return temporary if temporary < min(na, nb, na2, nb2, nr) else 0


def calibrate_reuse() -> None:
    """Check the frame layout and set the temporary-reuse threshold (once, when DArray is assembled)."""
    global _TEMPORARY_REFS
    _TEMPORARY_REFS = _calibrate()
