"""Always-on agreement checks folded into messages that are sent anyway.

An ``allreduce`` carries two extra elements (one for ``prod``) in its own
buffer, an ``allgather`` of up to :data:`GATHER_LIMIT` bytes eight extra bytes
per rank. They encode a small signature of the call (operator, dtype, buffer
size and what the caller adds, e.g. a reduction's global shape and axes), so
that ranks that entered the same collective with different operations or
metadata raise :class:`~darray._debug.CollectiveMismatch` instead of
returning wrong numbers. Nothing extra is sent and no collective is added.

How each operator carries a signature ``s`` (a small integer). Each rank
compares the reduced extras with what they are when every rank passed its own
``s``; that holds on one rank exactly when all ``s`` are equal, so every
rank's verdict is the same:

==========  =====================  ==========================================
operator    extra elements         reduced extras when all ranks agree
==========  =====================  ==========================================
``sum``     ``s, s*s``             ``P*s, P*s*s`` (Cauchy-Schwarz: only then)
``min``     ``s, M - s``           ``s, M - s`` (min and max both equal ``s``)
``max``     ``s, M - s``           ``s, M - s``
``prod``    ``2**k``               ``2**(k*P)`` (floats only)
==========  =====================  ==========================================

All extras are small integers, exact in the buffer's dtype and in any
reduction order. Booleans, 8- and 16-bit types, logical operators and
integer products carry none (``DARRAY_DEBUG=1`` checks them).

>>> import numpy as np
>>> buffer, check = fold(np.ones(3), "sum", 2, ("sum", (7,), (0,)))
>>> buffer.shape, check(buffer * 2)  # two equal ranks summed
((5,), True)
"""

from __future__ import annotations

import zlib

import numpy as np

__all__ = ["fold", "gather_fold", "GATHER_LIMIT"]

#: Largest allgather contribution (bytes) that carries a signature: bigger ones would pay a copy.
GATHER_LIMIT = 1 << 16
_MANTISSA = {"f": lambda d: np.finfo(d).nmant + 1, "i": lambda d: 8 * d.itemsize - 1, "u": lambda d: 8 * d.itemsize}
_plans: dict = {}


def _number(key) -> int:
    return zlib.crc32(repr(key).encode())


def _plan(op: str, dtype: np.dtype, n: int, size: int, key):
    """``(buffer, head, verdict)`` for one call signature: a reusable send buffer of ``n`` values plus the
    extras (already in place), its first ``n`` values, and the verdict on the reduced extras; all None when
    the call carries none."""
    part = np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype
    if part.kind not in _MANTISSA or part.itemsize < 4 or op not in ("sum", "min", "max", "prod"):
        return None, None, None
    s = _number(key)
    if op == "prod":
        if part.kind != "f":
            return None, None, None
        room = np.finfo(part).maxexp // size  # 2**(k*P) must stay finite
        if room < 2:
            return None, None, None
        k = 1 + s % min(room, 16)
        expected = 2.0 ** (k * size)
        extra = [2.0 ** k]

        def verdict(out) -> bool:
            return out.item(n).real == expected
    else:
        bits = min(10, (_MANTISSA[part.kind](part) - size.bit_length()) // 2)
        if bits < 3:
            return None, None, None
        s = 1 + s % ((1 << bits) - 1)
        m = (1 << bits) + 1
        if op == "sum":
            extra = [s, s * s]
            expected = (size * s, size * s * s)
        else:
            extra = [s, m - s]
            expected = (s, m - s)
        first, second = expected
        n1 = n + 1

        def verdict(out) -> bool:
            return out.item(n) == first and out.item(n1) == second
    buffer = np.empty(n + len(extra), dtype=dtype)
    buffer[n:] = extra
    return buffer, buffer[:n], verdict


def fold(send: np.ndarray, op: str, size: int, sign=None):
    """``(buffer, check)``: ``send`` (C-contiguous) with the signature appended, or ``(send, None)``.

    ``check(reduced_buffer)`` is True when every rank passed the same
    signature (then ``reduced_buffer[:send.size]`` is the result). The
    buffer is reused by the next call with the same signature: use it before.
    """
    dtype, shape = send.dtype, send.shape
    key = (op, dtype, shape, size, sign)
    plan = _plans.get(key)
    if plan is None:
        if len(_plans) > 4096:
            _plans.clear()
        plan = _plans[key] = _plan(op, dtype, send.size, size, (op, dtype.str, send.size, sign))
        if plan[0] is not None:
            plan = _plans[key] = (plan[0], plan[1].reshape(shape), plan[2])
    buffer, head, verdict = plan
    if buffer is None:
        return send, None
    head[...] = send
    return buffer, verdict


def gather_fold(send: np.ndarray, sign=None):
    """``(buffer, unpack)`` for an allgather: ``send``'s bytes plus an 8-byte signature, or ``(send, None)``.

    ``unpack(table)`` takes the gathered ``(P, nbytes + 8)`` bytes and returns
    ``(stacked values, ranks grouped by signature)``; one group (None) means agreement.
    """
    nbytes = send.nbytes
    if nbytes > GATHER_LIMIT or not send.flags.c_contiguous:
        return send, None
    key = ("allgather", send.dtype.char, nbytes, sign)
    plan = _plans.get(key)
    if plan is None:
        sig = _number((key[0], send.dtype.str, nbytes, sign)).to_bytes(8, "little")
        buffer = np.empty(nbytes + 8, dtype=np.uint8)
        buffer[nbytes:] = np.frombuffer(sig, dtype=np.uint8)
        plan = _plans[key] = (buffer, sig)
    buffer, sig = plan
    buffer[:nbytes] = send.reshape(-1).view(np.uint8)
    dtype, shape = send.dtype, send.shape

    def unpack(table):
        values = table[:, :nbytes].copy().view(dtype).reshape(table.shape[0], *shape)
        sigs = table[:, nbytes:]
        if sigs.tobytes() == sig * table.shape[0]:
            return values, None
        groups: dict = {}
        for rank, row in enumerate(sigs):
            groups.setdefault(row.tobytes(), []).append(rank)
        return values, groups

    return buffer, unpack
