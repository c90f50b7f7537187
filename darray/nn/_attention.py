"""Ring attention: ``scaled_dot_product_attention`` on arrays whose token axis is cut over the ranks.

Each rank keeps its block of queries; the key/value blocks travel around the
ring of ranks that cut the token axis (one flat message per hop, started
before the current block is processed, so the transfer overlaps the local
matmuls). Partial results are merged with an online softmax (running max
``m``, running sum ``l``), and the row log-sum-exp ``m + log l`` is kept for
the backward pass, which runs the ring again: K/V travel forward once more,
the partial dK/dV of each block travel one hop behind them, accumulating
each rank's contribution, and return to the block's owner from the last rank
that needs it. Each held key block is processed in chunks of
:func:`key_chunk` keys (cut at the global multiples of the chunk size; the
online softmax merges chunks as it merges blocks), so no rank ever holds
more than ``tokens/P x chunk`` scores per head, and no score matrix is kept.

A causal mask (``is_causal=True``) lets a block stop travelling as soon as no
rank further along the ring has a query at or after its first key: key
blocks entirely in a rank's future are neither computed nor sent there.
An explicit ``attn_mask`` is cut along its query-token axis like the queries
and keeps all its key-token columns on every rank: each rank slices the
columns of the key block it holds locally, so the mask never travels.
Attention dropout draws its keep mask from a counter-based generator at each
score's global index, block by block (forward and again in backward), so it
is the same at any rank count and never stored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .. import _recorder
from .._core import DArray, redistribute_to
from .._core.reductions import combine
from .._errors import message
from .._layout import Layout
from ..autodiff import apply, register
from ..random._counter import _runs, _stream_words, _unit
from . import init
from ._util import data, redistributed, wrap_storage

__all__ = ["scaled_dot_product_attention", "ring_attention", "dropout_stream", "dropout_multipliers", "ring_plan",
           "RingPlan", "Spec", "key_chunk", "KEY_CHUNK_BYTES", "MIN_KEY_CHUNK"]

_FUNC = "scaled_dot_product_attention"


# ------------------------------------------------------------------ the ring's geometry (replicated metadata)
@dataclass(frozen=True)
class RingPlan:
    """Who holds which key block when: the same on every rank, computed from the layouts alone.

    ``size`` ranks cut the token axis (grid dim ``dim``; 1 when it is not cut),
    this rank is ``pos`` on the ring; ``q_off``/``k_off`` are the query/key
    block offsets along the ring (``size + 1`` entries). Block ``j`` starts on
    rank ``j`` and visits ``j + 1, j + 2, ...``; it travels ``hops[j]`` times
    (it stops when no later rank needs it, see :meth:`needs`).
    Built once per layout pair (:func:`ring_plan`).
    """

    dim: int | None
    size: int
    pos: int
    q_off: tuple[int, ...]
    k_off: tuple[int, ...]
    causal: bool

    def needs(self, rank: int, j: int) -> bool:
        """Whether ring rank ``rank``'s queries attend to any key of block ``j``."""
        q0, q1 = self.q_off[rank], self.q_off[rank + 1]
        k0, k1 = self.k_off[j], self.k_off[j + 1]
        if q1 == q0 or k1 == k0:
            return False
        return not self.causal or k0 <= q1 - 1

    def full(self, rank: int, j: int) -> bool:
        """Whether every query of ``rank`` sees every key of block ``j`` (no causal mask to build)."""
        return not self.causal or self.k_off[j + 1] - 1 <= self.q_off[rank]

    @cached_property
    def _hops(self) -> tuple[int, ...]:
        out = []
        for j in range(self.size):
            last = [t for t in range(self.size) if self.needs((j + t) % self.size, j)]
            out.append(last[-1] if last else 0)
        return tuple(out)

    def hops(self, j: int) -> int:
        """How many times block ``j`` moves on (0: it stays with its owner)."""
        return self._hops[j]

    def held(self, step: int) -> int | None:
        """The block this rank holds at ``step`` (None when that block stopped before reaching it)."""
        j = (self.pos - step) % self.size
        return j if step <= self.hops(j) else None


_PLANS: dict = {}  # (q layout, k layout, rank, causal) -> RingPlan: built once per layout pair


def ring_plan(q_layout: Layout, k_layout: Layout, rank: int, causal: bool) -> RingPlan:
    """The :class:`RingPlan` of queries in ``q_layout`` and keys in ``k_layout`` for ``rank`` (cached)."""
    key = (q_layout, k_layout, rank, causal)
    plan = _PLANS.get(key)
    if plan is None:
        t = q_layout.ndim - 2
        g = q_layout.axis_dim[t]
        where = (None, 1, 0) if g is None else (g, q_layout.dims[g], q_layout.coords(rank)[g])
        plan = RingPlan(*where, q_layout.offsets[t], k_layout.offsets[t], causal)
        if len(_PLANS) > 256:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan


def _ring_comm(plan: RingPlan, layout: Layout, comm):
    if plan.size == 1:
        return None
    ring = comm.sub(layout.dims, [d == plan.dim for d in range(len(layout.dims))])
    if ring.rank != plan.pos:  # Cart_sub ordering: a broken invariant, not a user error
        raise RuntimeError(message(_FUNC, "ring communicator rank does not match the grid coordinate", ring.rank,
                                   plan.pos))
    return ring


def _exchange(ring, env, sends, recv_sizes):
    """Start one exchange on the ring: ``sends`` [(peer, flat array)], ``recv_sizes`` [(peer, n)].

    Every rank of the ring calls it at the same step (possibly with nothing
    to move). Returns ``(request, received, starts)``: the flat receive
    buffer and where each receive begins in it.
    """
    xp = env["xp"]
    empty = xp.zeros((0,), dtype=env["dtype"], device=env["device"])
    send = sends[0][1] if len(sends) == 1 else xp.concat([a for _, a in sends]) if sends else empty
    send_regions, start = [], 0
    for peer, a in sends:
        send_regions.append((peer, (slice(start, start + int(a.shape[0])),)))
        start += int(a.shape[0])
    recv = xp.empty((sum(n for _, n in recv_sizes),), dtype=env["dtype"], device=env["device"])
    recv_regions, starts, start = [], [], 0
    for peer, n in recv_sizes:
        recv_regions.append((peer, (slice(start, start + n),)))
        starts.append(start)
        start += n
    return ring.exchange(send, send_regions, recv, recv_regions), recv, starts


def _start_kv(ring, env, step, j, cur, lead, w):
    """Start moving the held K|V block to the next rank (when it still needs to travel) and receiving the next."""
    plan = env["plan"]
    if ring is None or step + 1 >= plan.size:
        return None, None
    jn = (plan.pos - step - 1) % plan.size
    sends = [((plan.pos + 1) % plan.size, cur)] if j is not None and step < plan.hops(j) else []
    recvs = [((plan.pos - 1) % plan.size, math.prod(_block_shape(lead, plan, jn, w)))] \
        if step + 1 <= plan.hops(jn) else []
    request, received, _ = _exchange(ring, env, sends, recvs)
    return request, received


# ------------------------------------------------------------------ local kernels of one key chunk
#: Bytes of one score chunk of the whole query sequence (all leading axes, all ranks together): key blocks are
#: processed :func:`key_chunk` keys at a time, so a rank holds ``L/P x chunk`` scores per head, never ``L/P x S/P``.
KEY_CHUNK_BYTES = 8 << 20
#: The fewest keys of a chunk (thinner matmuls cost more in overhead than they save in memory).
MIN_KEY_CHUNK = 64


def key_chunk(query_shape: tuple, itemsize: int) -> int:
    """Keys per chunk for queries of global shape ``(..., L, E)``: the same at every rank count (replicated).

    Chunks are cut at the global multiples of this size, so the chunks of a
    P-rank run are the 1-rank run's, cut again at the block boundaries.
    """
    rows = math.prod(query_shape[:-1])
    return max(MIN_KEY_CHUNK, KEY_CHUNK_BYTES // max(1, rows * itemsize))


@dataclass(frozen=True)
class Spec:
    """What one attention call needs besides q, k, v (a rule parameter, replicated).

    ``masks``: (DArray laid out by :func:`_mask_for`, boolean?) pairs;
    ``dropout``: ``(p, key, stream)`` of a :mod:`darray.random` generator
    (the keep mask of block ``(rows, cols)`` is ``uniform >= p`` read at the
    cells' global indices of the ``scores_shape`` score array), or None;
    ``chunk``: keys per chunk (:func:`key_chunk`); ``s_len``: the key count
    ``S``: extra key/value tokens (``extra``, replicated) are score columns
    ``S, S + 1, ...``, seen by every query whatever the masks.
    """

    plan: RingPlan
    scale: float
    masks: tuple = ()
    dropout: tuple | None = None
    out_layout: Layout | None = None
    lead_cells: tuple = ()
    scores_shape: tuple = ()
    chunk: int = 1 << 62
    s_len: int = 0
    extra: int = 0


def _env(q: DArray, spec: Spec, extra=()) -> dict:
    return {"xp": q._xp, "dtype": q._block.dtype, "device": q.device, "plan": spec.plan, "scale": spec.scale,
            "masks": [(m.local, is_bool) for m, is_bool in spec.masks], "spec": spec,
            "extra": tuple(_extra_local(x, spec) for x in extra)}


def _extra_local(x: DArray, spec: Spec):
    """The rank's part of a replicated extra key/value array: its rows' leading cells, broadcast axes kept."""
    cells = tuple(slice(None) if n == 1 else c for n, c in zip(x.shape[:-2], spec.lead_cells))
    return x.local[(*cells, ...)]


def _chunks(env, j):
    """``(a, b)``: the local key ranges of block ``j``, cut at the global multiples of the chunk size."""
    plan, c = env["plan"], env["spec"].chunk
    k0, k1 = plan.k_off[j], plan.k_off[j + 1]
    a = k0
    while a < k1:
        b = min(k1, (a // c + 1) * c)
        yield a - k0, b - k0
        a = b


def _scores(xp, env, q, k, cols, masked=True):
    """``q k^T * scale`` of global key columns ``cols``, masks applied; None when the causal mask hides them all.

    ``masked=False``: the extra tokens (no mask, no causal mask: torch pads
    the masks with columns that let every query see them).
    """
    plan = env["plan"]
    c0, c1 = cols
    q0 = plan.q_off[plan.pos]
    causal = masked and plan.causal
    if causal and c0 > q0 + q.shape[-2] - 1:
        return None
    s = xp.matmul(q, xp.matrix_transpose(k)) * env["scale"]
    allowed = None
    for mask, is_bool in env["masks"] if masked else ():
        part = mask if mask.shape[-1] == 1 else mask[..., c0:c1]  # a broadcast key axis applies to every chunk
        if is_bool:
            allowed = part if allowed is None else xp.logical_and(allowed, part)
        else:
            s = s + part
    if causal and c1 - 1 > q0:
        rows = xp.reshape(xp.arange(q0, q0 + q.shape[-2], device=env["device"]), (-1, 1))
        seen = xp.reshape(xp.arange(c0, c1, device=env["device"]), (1, -1)) <= rows
        allowed = seen if allowed is None else xp.logical_and(allowed, seen)
    if allowed is not None:
        s = xp.where(allowed, s, xp.asarray(-math.inf, dtype=env["dtype"], device=env["device"]))
    return s


def _kept(env, cols, shape):
    """Dropout multipliers (0 or ``1/(1-p)``) of this rank's rows and global key columns ``cols``, or None.

    Drawn from the generator's counter stream at the cells' global indices:
    the same as ``generator.random(scores_shape) >= p`` whatever the ranks.
    """
    spec = env["spec"]
    if spec.dropout is None:
        return None
    p, key, stream = spec.dropout
    plan = env["plan"]
    rows = slice(plan.q_off[plan.pos], plan.q_off[plan.pos] + shape[-2])
    starts, length = _runs(spec.scores_shape, (*spec.lead_cells, rows, slice(*cols)))
    keep = _unit(_stream_words(key, stream, starts, length), np.dtype(np.float64)) >= p
    values = np.where(keep, 1.0 / (1.0 - p), 0.0).reshape(shape)
    return env["xp"].asarray(values, dtype=env["dtype"], device=env["device"])


def _finite_or(xp, x, value):
    return xp.where(xp.isfinite(x), x, xp.asarray(value, dtype=x.dtype, device=x.device))


def _split_kv(xp, flat, shape, e):
    block = xp.reshape(flat, shape)
    return block[..., :e], block[..., e:]


def _kv_flat(xp, k, v):
    return xp.reshape(xp.concat([k, v], axis=-1), (-1,))


def _block_shape(lead, plan, j, width):
    return (*lead, plan.k_off[j + 1] - plan.k_off[j], width)


def _extra_cols(env):
    spec = env["spec"]
    return spec.s_len, spec.s_len + spec.extra


# ------------------------------------------------------------------ forward
def _absorb(xp, env, state, q, k, v, cols, masked=True):
    """The online softmax ``(m, l, acc)`` after one more key chunk (global columns ``cols``)."""
    s = _scores(xp, env, q, k, cols, masked)
    if s is None:
        return state
    m, total, acc = state
    m_new = xp.maximum(m, xp.max(s, axis=-1, keepdims=True))
    shift = _finite_or(xp, m_new, 0.0)
    p = xp.exp(s - shift)
    alpha = xp.exp(m - shift)
    kept = _kept(env, cols, p.shape)
    return m_new, total * alpha + xp.sum(p, axis=-1, keepdims=True), \
        acc * alpha + xp.matmul(p if kept is None else p * kept, v)


def _forward(q, k, v, spec: Spec, ring, extra=()):
    env = _env(q, spec, extra)
    xp, dtype, plan = env["xp"], env["dtype"], spec.plan
    ql, kl, vl = q.local, k.local, v.local
    lead, e, ev = tuple(ql.shape[:-2]), int(kl.shape[-1]), int(vl.shape[-1])
    rows = (*lead, int(ql.shape[-2]), 1)
    state = (xp.full(rows, -math.inf, dtype=dtype, device=q.device), xp.zeros(rows, dtype=dtype, device=q.device),
             xp.zeros((*lead, int(ql.shape[-2]), ev), dtype=dtype, device=q.device))
    cur = _kv_flat(xp, kl, vl)
    with _recorder.labelled("attention"):
        for step in range(plan.size):
            j = plan.held(step)
            request, incoming = _start_kv(ring, env, step, j, cur, lead, e + ev)
            if j is not None and plan.needs(plan.pos, j):
                kj, vj = _split_kv(xp, cur, _block_shape(lead, plan, j, e + ev), e)
                k0 = plan.k_off[j]
                for a, b in _chunks(env, j):
                    state = _absorb(xp, env, state, ql, kj[..., a:b, :], vj[..., a:b, :], (k0 + a, k0 + b))
            if step == 0 and env["extra"] and ql.shape[-2]:  # the extra tokens: one more local chunk, no hop
                state = _absorb(xp, env, state, ql, *env["extra"], _extra_cols(env), masked=False)
            if request is not None:
                request.wait()
                cur = incoming
    m, total, acc = state
    seen = total > 0
    out = xp.where(seen, acc / xp.where(seen, total, xp.ones_like(total)), xp.zeros_like(acc))
    lse = xp.where(seen, _finite_or(xp, m, 0.0) + xp.log(xp.where(seen, total, xp.ones_like(total))),
                   xp.full_like(total, -math.inf))
    return out, lse


# ------------------------------------------------------------------ backward
def _grad_chunk(xp, env, q, k, v, g, lse, delta, cols, masked=True):
    """``(dq part, dk, dv)`` of one key chunk (global columns ``cols``), or None when the causal mask hides it."""
    s = _scores(xp, env, q, k, cols, masked)
    if s is None:
        return None
    p = xp.exp(s - lse)
    kept = _kept(env, cols, p.shape)
    dp = xp.matmul(g, xp.matrix_transpose(v))
    ds = p * ((dp if kept is None else dp * kept) - delta) * env["scale"]
    return (xp.matmul(ds, k), xp.matmul(xp.matrix_transpose(ds), q),
            xp.matmul(xp.matrix_transpose(p if kept is None else p * kept), g))


def _block_grads(xp, env, j, kv, q, g, lse, delta, dq):
    """``(dq, flat dK|dV of block j)`` from this rank's queries, key chunk by key chunk."""
    plan, (kj, vj) = env["plan"], kv
    k0, pieces = plan.k_off[j], []
    for a, b in _chunks(env, j):
        part = _grad_chunk(xp, env, q, kj[..., a:b, :], vj[..., a:b, :], g, lse, delta, (k0 + a, k0 + b))
        if part is None:  # keys in every local query's future
            pieces.append(xp.zeros((*kj.shape[:-2], b - a, kj.shape[-1] + vj.shape[-1]), dtype=env["dtype"],
                                   device=env["device"]))
        else:
            dq = dq + part[0]
            pieces.append(xp.concat(part[1:], axis=-1))
    return dq, xp.reshape(pieces[0] if len(pieces) == 1 else xp.concat(pieces, axis=-2), (-1,))


def _extra_grads(xp, env, q, g, lse, delta, dq):
    """``(dq, dk_extra, dv_extra)`` of the extra tokens from this rank's queries (summed over broadcast axes)."""
    ek, ev = env["extra"]
    part = _grad_chunk(xp, env, q, ek, ev, g, lse, delta, _extra_cols(env), masked=False)
    sums = []
    for d, x in zip(part[1:], (ek, ev)):
        axes = tuple(a for a in range(x.ndim - 2) if x.shape[a] == 1 and d.shape[a] != 1)
        sums.append(xp.sum(d, axis=axes, keepdims=True) if axes else d)
    return dq + part[0], *sums


def _backward(lse, q, k, v, out, g, spec: Spec, ring, extra=()):
    env = _env(q, spec, extra)
    xp, dtype, plan = env["xp"], env["dtype"], spec.plan
    ql, kl, vl, ol, gl = q.local, k.local, v.local, out.local, g.local
    lead, e, ev = tuple(ql.shape[:-2]), int(kl.shape[-1]), int(vl.shape[-1])
    w = e + ev
    lse = _finite_or(xp, lse, math.inf)
    delta = xp.sum(gl * ol, axis=-1, keepdims=True)
    dq = xp.zeros(ql.shape, dtype=dtype, device=q.device)
    d_extra = tuple(xp.zeros(x.shape, dtype=dtype, device=q.device) for x in env["extra"])
    cur = _kv_flat(xp, kl, vl)
    mine = None  # this rank's own dK|dV once it has come home
    pending = None  # the dK|dV exchange of the previous step, completed once its partial is needed
    with _recorder.labelled("attention_backward"):
        for step in range(plan.size):
            j = plan.held(step)
            kv_req, kv_in = _start_kv(ring, env, step, j, cur, lead, w)
            local = None
            if j is not None and plan.needs(plan.pos, j):
                kv = _split_kv(xp, cur, _block_shape(lead, plan, j, w), e)
                dq, local = _block_grads(xp, env, j, kv, ql, gl, lse, delta, dq)
            if step == 0 and env["extra"] and ql.shape[-2]:
                dq, *d_extra = _extra_grads(xp, env, ql, gl, lse, delta, dq)
            partial, home = _complete(pending)
            mine = home if home is not None else mine
            grad = None
            if j is not None:
                parts = [x for x in (partial, local) if x is not None]
                grad = parts[0] + parts[1] if len(parts) == 2 else parts[0] if parts else \
                    xp.zeros((math.prod(_block_shape(lead, plan, j, w)),), dtype=dtype, device=q.device)
            pending = _start_grads(ring, env, plan, step, j, grad, lead, w) if ring is not None else None
            if j == plan.pos and plan.hops(plan.pos) == 0:
                mine = grad
            if kv_req is not None:
                kv_req.wait()
                cur = kv_in
        _, home = _complete(pending)
        mine = home if home is not None else mine
    if mine is None:
        mine = xp.zeros((math.prod(_block_shape(lead, plan, plan.pos, w)),), dtype=dtype, device=q.device)
    dk, dv = _split_kv(xp, mine, _block_shape(lead, plan, plan.pos, w), e)
    return dq, xp.asarray(dk, copy=True), xp.asarray(dv, copy=True), tuple(d_extra)


def _start_grads(ring, env, plan, step, j, grad, lead, w):
    """Start moving the held block's dK|dV one hop on, or home from the last rank that needed it.

    Receives the next held block's partial dK|dV from the previous rank and,
    at the step its trip ends, this rank's own. Returns what :func:`_complete` needs.
    """
    prev, nxt = (plan.pos - 1) % plan.size, (plan.pos + 1) % plan.size
    sends, recvs = [], []
    if j is not None and step < plan.hops(j):
        sends.append((nxt, grad))
    elif j is not None and j != plan.pos:
        sends.append((j, grad))
    jn = (plan.pos - step - 1) % plan.size
    forward = step + 1 < plan.size and step + 1 <= plan.hops(jn)
    if forward:
        recvs.append((prev, math.prod(_block_shape(lead, plan, jn, w))))
    home = plan.hops(plan.pos)
    arrives = bool(home) and step == home
    if arrives:
        recvs.append(((plan.pos + home) % plan.size, math.prod(_block_shape(lead, plan, plan.pos, w))))
    request, received, starts = _exchange(ring, env, sends, recvs)
    return request, received, starts, forward, arrives, grad


def _complete(pending):
    """Wait for a :func:`_start_grads` exchange: ``(partial for the next block, own dK|dV)``, None when absent."""
    if pending is None:
        return None, None
    request, received, starts, forward, arrives, _ = pending
    request.wait()
    partial = received[:starts[1] if arrives and forward else received.shape[0]] if forward else None
    return partial, (received[starts[-1]:] if arrives else None)


# ------------------------------------------------------------------ the tape rule
def _rule_forward(ctx, q, k, v, *extra, spec: Spec):
    ring = _ring_comm(spec.plan, q._layout, q._comm)
    out, lse = _forward(q, k, v, spec, ring, extra)
    ctx.saved["lse"] = lse
    return wrap_storage(out, spec.out_layout, q)


def _rule_backward(ctx, g):
    q, k, v, *extra = ctx.xs
    spec = ctx.params["spec"]
    ring = _ring_comm(spec.plan, q._layout, q._comm)
    dq, dk, dv, d_extra = _backward(ctx.saved["lse"], q, k, v, ctx.out, g, spec, ring, extra)
    # every rank's queries saw the (replicated) extra tokens: their gradients sum over the grid dims cutting q
    d_extra = tuple(wrap_storage(combine(d, "sum", q._comm, q._layout), x._layout.replicated(), x) if need else None
                    for d, x, need in zip(d_extra, extra, ctx.needs[3:]))
    return (wrap_storage(dq, q._layout, q) if ctx.needs[0] else None,
            wrap_storage(dk, k._layout, k) if ctx.needs[1] else None,
            wrap_storage(dv, v._layout, v) if ctx.needs[2] else None, *d_extra)


register("attention_ring", _rule_forward, _rule_backward)


# ------------------------------------------------------------------ validation and the public function
def _check_layouts(func: str, q: DArray, k: DArray, v: DArray) -> tuple[Layout, Layout, Layout]:
    """The blockings of q, k, v without halo; ValueError (same on every rank) unless they are ring-compatible."""
    ql, kl, vl = (x._layout.without_halo() for x in (q, k, v))
    t = q.ndim - 2
    for name, lay in (("query", ql), ("key", kl), ("value", vl)):
        if lay.axis_dim[t + 1] is not None:
            raise ValueError(message(func, f"the feature axis of {name} is cut over the ranks", lay.split,
                                     "only the token axis (-2) and leading axes cut"))
    for name, lay in (("key", kl), ("value", vl)):
        if lay.dims != ql.dims or lay.split != ql.split:
            raise ValueError(message(func, f"{name} is not cut like query", (lay.dims, lay.split),
                                     f"the same grid and split as query, {(ql.dims, ql.split)}"))
        if lay.sizes[:t] != ql.sizes[:t]:
            raise ValueError(message(func, f"the leading axes of {name} are not cut like query's", lay.sizes[:t],
                                     ql.sizes[:t]))
    if vl.sizes[t] != kl.sizes[t]:
        raise ValueError(message(func, "the token axes of key and value are cut differently", vl.sizes[t],
                                 f"key's blocks {kl.sizes[t]}"))
    return ql, kl, vl


def _check_shapes(func: str, q, k, v) -> None:
    if q.ndim < 2 or k.ndim != q.ndim or v.ndim != q.ndim:
        raise ValueError(message(func, "query, key and value must have the same number of axes (at least 2)",
                                 (q.shape, k.shape, v.shape), "(..., tokens, features) each"))
    if q.shape[:-2] != k.shape[:-2] or q.shape[:-2] != v.shape[:-2]:
        raise ValueError(message(func, "leading (batch, heads) axes differ", (q.shape, k.shape, v.shape),
                                 "equal leading axes"))
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(message(func, "query and key head dims differ", (q.shape[-1], k.shape[-1]),
                                 "equal feature sizes"))
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(message(func, "key and value token counts differ", (k.shape[-2], v.shape[-2]),
                                 "equal token counts"))
    for x in (k, v):
        if x.dtype != q.dtype or x.dtype.kind not in "f":
            raise TypeError(message(func, "query, key and value must share one real floating dtype",
                                    (q.dtype, k.dtype, v.dtype), "float32 or float64"))


def _mask_for(func, mask, q: DArray, ql: Layout, s_len: int):
    """``mask`` laid out for the ring (rows cut like the queries, all key columns) and whether it is boolean."""
    mask = data(mask)
    if not isinstance(mask, DArray):
        raise TypeError(message(func, "attn_mask must be a DArray", type(mask).__name__, "a DArray or None"))
    full = (*q.shape[:-1], s_len)
    ok = mask.ndim <= len(full) and all(m in (1, n) for m, n in zip(mask.shape[::-1], full[::-1]))
    if not ok:
        raise ValueError(message(func, "attn_mask is not broadcastable to (..., L, S)", mask.shape, full))
    is_bool = mask.dtype.kind == "b"
    if not is_bool and mask.dtype != q.dtype:
        mask = mask.astype(q.dtype)
    scores = ql.replace(shape=full, sizes=(*ql.sizes[:-1], (s_len,)))
    target = scores.broadcast_layout(mask.shape)
    if mask._layout != target:
        mask = redistribute_to(mask, target)
    return mask, is_bool


def dropout_stream(dropout_p: float, generator=None, func: str = _FUNC) -> tuple | None:
    """``(p, key, stream)``: the attention dropout of one call (one draw from ``generator``), or None for ``p == 0``."""
    if not 0.0 <= float(dropout_p) <= 1.0:
        raise ValueError(message(func, "dropout_p out of range", dropout_p, "0 <= dropout_p <= 1"))
    if dropout_p == 0.0:
        return None
    rng = generator if generator is not None else init.default_generator()
    return float(dropout_p), rng._key, rng._stream()


def dropout_multipliers(dropout: tuple, layout: Layout, like: DArray) -> DArray:
    """The dropout multipliers (0 or ``1/(1-p)``) of the whole score array, in ``layout`` (the ring's, as a DArray).

    For a layer that returns the attention weights it used (``need_weights``):
    the same cells the ring dropped.
    """
    p, key, stream = dropout
    rank = like._comm.rank
    starts, length = _runs(layout.shape, layout.block_slices(rank))
    keep = _unit(_stream_words(key, stream, starts, length), np.dtype(np.float64)) >= p
    values = np.where(keep, 1.0 / (1.0 - p), 0.0).reshape(layout.block_shape(rank))
    return wrap_storage(like._xp.asarray(values, dtype=like._block.dtype, device=like.device), layout, like)


def _check_extra(func: str, extra, q: DArray, ql: Layout, k: DArray, v: DArray) -> tuple:
    """The extra key/value tokens ``(k_extra, v_extra)`` replicated, checked against q, k, v (replicated metadata)."""
    if extra is None:
        return ()
    ek, ev = (data(x) for x in extra)
    t = q.ndim - 2
    for name, x, want in (("key", ek, k), ("value", ev, v)):
        if not isinstance(x, DArray) or x.ndim != q.ndim or x.shape[-1] != want.shape[-1] or x.dtype != q.dtype:
            raise ValueError(message(func, f"the extra {name} tokens do not fit {name}", getattr(x, "shape", x),
                                     f"(..., X, {want.shape[-1]}) of dtype {q.dtype}"))
        for a in range(t):
            if x.shape[a] not in (1, q.shape[a]) or (x.shape[a] != 1 and ql.axis_dim[a] is not None):
                raise ValueError(message(func, f"the extra {name} tokens do not broadcast over query's leading "
                                         "axes", x.shape, f"1 on a cut axis, else 1 or {q.shape[a]}"))
    if ek.shape[-2] != ev.shape[-2]:
        raise ValueError(message(func, "extra key and value token counts differ", (ek.shape[-2], ev.shape[-2])))
    return tuple(redistributed(x, data(x)._layout.replicated()) for x in extra)


def ring_attention(query, key, value, masks=(), is_causal: bool = False, scale: float | None = None,
                   dropout: tuple | None = None, func: str = _FUNC, extra=None):
    """The ring behind :func:`scaled_dot_product_attention`, for any number of masks (each boolean or additive).

    Layers call it directly (``nn.MultiheadAttention`` combines a key padding
    mask with an attention mask, and a causal mask with either); ``dropout``
    comes from :func:`dropout_stream`; ``func`` names the caller in error
    messages. ``extra``: ``(k_extra, v_extra)`` of shapes ``(..., X, E)`` and
    ``(..., X, Ev)`` (leading axes 1 or query's; replicated): X more key/value
    tokens after the ``S`` of ``key``/``value`` (``MultiheadAttention``'s
    ``add_bias_kv`` and ``add_zero_attn``), seen by every query whatever the
    masks and ``is_causal`` (torch pads the masks with zero columns). Every
    rank folds them into its online softmax as one more local chunk (no ring
    step); their gradients sum over the ranks.
    """
    q, k, v = data(query), data(key), data(value)
    for name, x in (("query", q), ("key", k), ("value", v)):
        if not isinstance(x, DArray):
            raise TypeError(message(func, f"{name} must be a DArray or Variable", type(x).__name__))
    _check_shapes(func, q, k, v)
    ql, kl, vl = _check_layouts(func, q, k, v)
    extra = _check_extra(func, extra, q, ql, k, v)
    laid = tuple(_mask_for(func, m, q, ql, k.shape[-2]) for m in masks if m is not None)
    t = q.ndim - 2
    n_extra = data(extra[0]).shape[-2] if extra else 0
    spec = Spec(plan=ring_plan(ql, kl, q._comm.rank, bool(is_causal)),
                scale=1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale), masks=laid, dropout=dropout,
                out_layout=ql.replace(shape=(*q.shape[:-1], v.shape[-1]), sizes=(*ql.sizes[:-1], (v.shape[-1],))),
                lead_cells=ql.block_slices(q._comm.rank)[:t], scores_shape=(*q.shape[:-1], k.shape[-2] + n_extra),
                chunk=key_chunk(q.shape, q.dtype.itemsize), s_len=k.shape[-2], extra=n_extra)
    args = [redistributed(x, lay) for x, lay in zip((query, key, value), (ql, kl, vl))]
    return apply("attention_ring", *args, *extra, spec=spec)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None, *, generator=None):
    """torch's ``scaled_dot_product_attention`` on arrays whose token axis is cut: ring attention.

    ``softmax(query @ key^T * scale + mask) @ value`` over ``(..., L, E)``
    queries, ``(..., S, E)`` keys and ``(..., S, Ev)`` values (typically
    ``(batch, heads, tokens, features)``), differentiable on the tape.
    The token axis (-2) may be cut over one grid dim (uneven and empty
    blocks allowed) and the leading axes over others (hybrid data + domain
    parallel); key and value must be cut like query (their own token sizes),
    features whole. ``scale`` defaults to ``1/sqrt(E)``.

    ``attn_mask``: broadcastable to ``(..., L, S)``; boolean (True: take
    part) or additive (added to the scores). It is cut along its query axis
    like the queries, every rank keeping all ``S`` key columns of its rows
    (the mask never travels; each step slices the held key block's
    columns). The mask is a constant: no gradient flows to it.
    ``is_causal``: query ``i`` sees keys ``j <= i`` (torch's top-left
    alignment); key blocks entirely in a rank's future are skipped and not
    sent there. Rows that see no key give 0 (torch's ``_safe_softmax``).

    ``dropout_p > 0`` drops attention weights reproducibly: the keep mask is
    ``generator.random((..., L, S)) >= dropout_p`` read at each cell's
    global index (``generator``: a :func:`darray.random.default_rng`
    generator, by default :func:`darray.nn.init.default_generator`; one draw
    per call), so the result is the same whatever the rank count, and the
    backward pass regenerates the mask of each block instead of storing it.

    Communication: forward, every K/V block moves around the ring once
    (``P - 1`` hops, fewer under a causal mask), each send started before
    the held block is processed; backward, K/V travel again and dK/dV follow
    one hop behind and return to their owner. Memory per rank: one query
    block, two key/value blocks and one ``L/P x chunk`` score chunk at a
    time: each key block is processed :func:`key_chunk` keys at a time
    (about ``KEY_CHUNK_BYTES`` of scores for the whole query sequence, at
    least ``MIN_KEY_CHUNK`` keys), never ``L/P x S/P`` at once.

    Examples
    --------
    >>> import numpy as np, darray as da
    >>> from darray.nn import functional as F
    >>> x = da.asarray(np.arange(24.0).reshape(1, 1, 6, 4) / 24, split=2)
    >>> out = F.scaled_dot_product_attention(x, x, x, is_causal=True)
    >>> np.allclose(np.asarray(out.data)[0, 0, 0], np.arange(4) / 24)
    True
    """
    if is_causal and attn_mask is not None:
        raise ValueError(message(_FUNC, "explicit attn_mask should not be set when is_causal=True",
                                 getattr(data(attn_mask), "shape", attn_mask), "attn_mask=None"))
    for name, x in (("query", query), ("key", key), ("value", value)):
        if not isinstance(data(x), DArray):
            raise TypeError(message(_FUNC, f"{name} must be a DArray or Variable", type(x).__name__))
    _check_shapes(_FUNC, data(query), data(key), data(value))
    return ring_attention(query, key, value, (attn_mask,), is_causal, scale, dropout_stream(dropout_p, generator))
