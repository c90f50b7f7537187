"""Random arrays that are the same whatever the layout: ``darray.random``.

The global array a call draws depends only on the seed and on how many calls
the generator made before, never on the number of ranks, the grid, the split
axes or uneven block sizes: a 4-rank run reproduces a 1-rank run bit for bit.

How: counter-based streams addressed by global index
----------------------------------------------------
Call number ``c`` of a generator (0, 1, 2, ... counting every drawing method
call) reads stream ``c`` of the Philox4x64-10 counter-based generator keyed by
``SeedSequence(seed).generate_state(2, uint64)``. Word ``t`` of stream ``c``
(a uint64) is word ``t % 4`` of the Philox block at counter
``(c << 128) + t // 4 + 1``, i.e. exactly what NumPy's
``numpy.random.Philox(key=key, counter=c << 128).random_raw(t + 1)[t]`` returns.
Every distribution consumes a fixed number ``w`` of words per element (1 or
2), and the element at global C-order flat index ``i`` reads words
``w*i .. w*i + w - 1``. Each rank therefore computes only its own block's
words, with no communication:

- a block that is one contiguous C-order run (for instance cut along axis 0),
  or whose runs are long, is drawn with NumPy's Philox, one ``random_raw``
  call per run;
- a block made of many short runs (cut along the last axis) is drawn by a
  vectorised NumPy implementation of Philox4x64-10 evaluated on exactly the
  counters the block needs (about 5-10x slower per word than NumPy's C code,
  but no per-row Python loop). Both give identical words (tested).

Distributions (words per element)
---------------------------------
- ``random`` / ``uniform`` (1): float64 from the top 53 bits,
  ``(w >> 11) * 2**-53`` in ``[0, 1)``; float32 from the top 24 bits.
- ``standard_normal`` / ``normal`` (2): Box-Muller on the element's own pair
  of words (``u1`` in ``(0, 1]`` from word ``2i``, ``u2`` from word
  ``2i + 1``), keeping the cosine branch only, so no pairing across elements.
- ``standard_exponential`` / ``exponential`` (1): inverse CDF, ``-log1p(-u)``.
- ``integers`` (1): Lemire's multiply-shift, ``low + (w * range) >> 64``,
  without the rejection step (rejection would make the word count per
  element variable). Each value's probability is ``floor`` or ``ceil`` of
  ``2**64 / range`` over ``2**64``: the bias is below ``range * 2**-64``
  (under ``2**-32`` for every range below ``2**32``).
- ``choice`` with replacement (1): ``integers(0, n)``'s indices; with ``p``,
  inverse CDF (``searchsorted`` of ``u`` in the normalised cumulative sum of
  the replicated ``p``).
- ``permutation`` / ``shuffle`` / ``choice(replace=False)``: a keyed
  pseudo-random permutation of ``[0, n)`` that maps any index on its own: an
  8-round balanced Feistel network on ``2*h`` bits (``2**(2h) >= n``, round
  function a SplitMix64 finaliser of the half xor a round key drawn from the
  call's stream) with cycle-walking for ``n`` that is not a power of four.
  Every rank computes, for the rows it owns in the result, the source row
  ``perm[j]``, and pulls those rows from their owners (one count allgather and
  two point-to-point exchanges; no rank ever holds all ``n`` keys). The
  permutation is a fixed pseudo-random bijection per seed and call: like any
  PRNG it reaches only a tiny fraction of the ``n!`` orders for large ``n``,
  and it is not NumPy's permutation for the same seed.

Values are computed with NumPy on the host and then moved to the requested
local backend / device.

Examples
--------
>>> import darray as da
>>> rng = da.random.default_rng(42)
>>> x = rng.standard_normal((1000, 10), split=1)      # cut along columns
>>> y = da.random.default_rng(42).standard_normal((1000, 10), split=0)
>>> bool(da.all(x == y))                               # same global array
True
"""

from __future__ import annotations

import numbers
import operator
from math import prod

import numpy as np

from .. import _debug
from .._api._common import normalize_shape, resolve_device
from .._comm import resolve_comm
from .._core import make_layout
from .._api.creation import _place
from .._backend import to_numpy
from .._core import DArray, to_numpy_dtype
from .._errors import message

__all__ = ["Generator", "default_rng"]

# ---------------------------------------------------------------- Philox4x64-10, vectorised
_M64 = (1 << 64) - 1
_PHILOX_M = (0xD2E7470EE14C6C93, 0xCA5A826395121157)
_PHILOX_W = (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B)
_LO32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_CHUNK = 16384  # counters per vectorised pass (keeps the temporaries in cache)

#: Runs of at least this many words are drawn with NumPy's Philox, one call per run;
#: blocks of shorter runs use the vectorised kernel.
_LOOP_MIN_RUN = 256


def _mulhilo(a: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """High and low 64-bit halves of the 128-bit products ``a * m`` (uint64 arrays, ``m`` a constant)."""
    m_lo, m_hi = np.uint64(m & 0xFFFFFFFF), np.uint64(m >> 32)
    a_lo = a & _LO32
    a_hi = a >> _S32
    t = a_lo * m_lo
    t >>= _S32
    t += a_hi * m_lo                      # < 2**64: (2**32-1)**2 + 2**32-1
    w = a_lo * m_hi
    w += t & _LO32                        # < 2**64 likewise
    hi = a_hi * m_hi
    hi += t >> _S32
    hi += w >> _S32
    return hi, a * np.uint64(m)


def _philox(counters: np.ndarray, stream: int, key: np.ndarray) -> np.ndarray:
    """Philox4x64-10 blocks at counters ``(stream << 128) + counters``: a ``(n, 4)`` uint64 array."""
    n = counters.shape[0]
    out = np.empty((n, 4), dtype=np.uint64)
    keys = []
    k0, k1 = int(key[0]), int(key[1])
    for _ in range(10):
        keys.append((np.uint64(k0), np.uint64(k1)))
        k0, k1 = (k0 + _PHILOX_W[0]) & _M64, (k1 + _PHILOX_W[1]) & _M64
    c2, c3 = np.uint64(stream & _M64), np.uint64((stream >> 64) & _M64)
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        x0 = counters[start:stop]
        x1 = np.zeros(stop - start, dtype=np.uint64)
        x2 = np.full(stop - start, c2, dtype=np.uint64)
        x3 = np.full(stop - start, c3, dtype=np.uint64)
        for r0, r1 in keys:
            hi0, lo0 = _mulhilo(x0, _PHILOX_M[0])
            hi1, lo1 = _mulhilo(x2, _PHILOX_M[1])
            hi1 ^= x1
            hi1 ^= r0
            hi0 ^= x3
            hi0 ^= r1
            x0, x1, x2, x3 = hi1, lo1, hi0, lo0
        out[start:stop, 0] = x0
        out[start:stop, 1] = x1
        out[start:stop, 2] = x2
        out[start:stop, 3] = x3
    return out


def _seek_state(key: np.ndarray, stream: int, block: int) -> dict:
    """A NumPy Philox state whose next word is word ``4 * block`` of ``stream``."""
    value = (stream << 128) + block
    counter = np.array([(value >> s) & _M64 for s in (0, 64, 128, 192)], dtype=np.uint64)
    return {"bit_generator": "Philox", "state": {"counter": counter, "key": key},
            "buffer": np.zeros(4, dtype=np.uint64), "buffer_pos": 4, "has_uint32": 0, "uinteger": 0}


def _stream_words(key: np.ndarray, stream: int, starts: np.ndarray, length: int) -> np.ndarray:
    """Words ``[s, s + length)`` of ``stream`` for every ``s`` in ``starts`` (increasing, disjoint), flat."""
    runs = starts.shape[0]
    if runs == 0 or length == 0:
        return np.empty(0, dtype=np.uint64)
    if runs == 1 or length >= _LOOP_MIN_RUN:
        bitgen = np.random.Philox(key=key)
        if runs == 1:
            block, skip = divmod(int(starts[0]), 4)
            bitgen.state = _seek_state(key, stream, block)
            return bitgen.random_raw(skip + length)[skip:]
        out = np.empty((runs, length), dtype=np.uint64)
        for k, first in enumerate(starts.tolist()):
            block, skip = divmod(first, 4)
            bitgen.state = _seek_state(key, stream, block)
            out[k] = bitgen.random_raw(skip + length)[skip:]
        return out.reshape(-1)
    index = (starts[:, None] + np.arange(length, dtype=np.int64)).reshape(-1)
    block = index >> 2
    new = np.empty(index.shape[0], dtype=bool)
    new[0] = True
    np.not_equal(block[1:], block[:-1], out=new[1:])
    words = _philox(block[new].astype(np.uint64) + np.uint64(1), stream, key)
    return words[np.cumsum(new) - 1, index & 3]


def _runs(shape: tuple, cells: tuple) -> tuple[np.ndarray, int]:
    """A block's cells as C-order runs of the global array: (flat start of every run, run length)."""
    extent = [s.stop - s.start for s in cells]
    if not shape:
        return np.zeros(1, dtype=np.int64), 1
    if 0 in extent:
        return np.zeros(0, dtype=np.int64), 0
    cut = [a for a in range(len(shape)) if extent[a] != shape[a]]
    if not cut:
        return np.zeros(1, dtype=np.int64), prod(shape)
    k = cut[-1]
    strides = [prod(shape[a + 1:]) for a in range(len(shape))]
    starts = np.full((1,) * k, cells[k].start * strides[k], dtype=np.int64)
    for a in range(k):
        view = [1] * k
        view[a] = extent[a]
        starts = starts + (np.arange(cells[a].start, cells[a].stop, dtype=np.int64) * strides[a]).reshape(view)
    return starts.reshape(-1), extent[k] * strides[k]


# ---------------------------------------------------------------- word -> value transforms
_TWO53 = 1.0 / 9007199254740992.0
_TWO24 = 1.0 / 16777216.0


def _unit(words: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Uniform floats in ``[0, 1)`` from the top 53 (float64) or 24 (float32) bits."""
    if dtype == np.float32:
        return ((words >> np.uint64(40)).astype(np.float32) * np.float32(_TWO24))
    return (words >> np.uint64(11)).astype(np.float64) * _TWO53


def _bounded(words: np.ndarray, span: int) -> np.ndarray:
    """``floor(w * span / 2**64)`` for ``1 <= span <= 2**64`` (Lemire, no rejection): uint64 in ``[0, span)``."""
    if span == 1 << 64:
        return words
    return _mulhilo(words, span)[0]


def _mix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser (a bijective 64-bit mixer)."""
    z = z ^ (z >> np.uint64(30))
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return z


_FEISTEL_ROUNDS = 8


def _feistel(values: np.ndarray, n: int, keys: list) -> np.ndarray:
    """The keyed permutation of ``[0, n)`` applied to ``values`` (uint64, each < n)."""
    if n <= 1:
        return values.copy()
    half = max(1, ((n - 1).bit_length() + 1) // 2)
    shift, mask = np.uint64(half), np.uint64((1 << half) - 1)

    def encrypt(v):
        left, right = v >> shift, v & mask
        for k in keys:
            left, right = right, left ^ (_mix64(right ^ k) & mask)
        return (left << shift) | right

    out = encrypt(values)
    todo = np.flatnonzero(out >= np.uint64(n))
    while todo.size:  # cycle-walking: the domain has fewer than 4n points, so few rounds
        out[todo] = encrypt(out[todo])
        todo = todo[out[todo] >= np.uint64(n)]
    return out


# ---------------------------------------------------------------- pulling rows from their owners
def _take_rows(func: str, x: DArray, rows: np.ndarray) -> np.ndarray:
    """``x[rows]`` restricted to this rank's cells on the other axes, as a NumPy array (collective).

    ``rows`` are global axis-0 indices wanted by this rank. Each request goes
    to the rank that owns the row and shares this rank's block on every other
    axis. One allgather of per-peer counts and two exchanges.
    """
    layout, comm = x._layout, x._comm
    rank = comm.rank
    local = to_numpy(x.local)
    g = layout.axis_dim[0]
    if g is None:
        return local[rows]
    offsets = np.asarray(layout.offsets[0], dtype=np.int64)
    mine = offsets[layout.block_index(rank)[0]]
    coords = list(layout.coords(rank))
    peers = []
    for i in range(layout.dims[g]):
        coords[g] = i
        peers.append(layout.rank(coords))
    owner = np.searchsorted(offsets, rows, side="right") - 1
    order = np.argsort(owner, kind="stable")
    wanted = np.zeros(comm.size, dtype=np.int64)
    wanted[peers] = np.bincount(owner, minlength=len(peers))
    table = to_numpy(comm.allgather(wanted))      # table[p, q]: rows p asks q for
    asked = table[:, rank]

    def regions(counts, trailing=()):
        edges = np.concatenate([[0], np.cumsum(counts)])
        return [(q, (slice(int(edges[q]), int(edges[q + 1])), *trailing)) for q in range(comm.size) if counts[q]]

    requests = np.ascontiguousarray(rows[order], dtype=np.int64)
    incoming = np.empty(int(asked.sum()), dtype=np.int64)
    comm.exchange(requests, regions(wanted), incoming, regions(asked)).wait()
    answers = np.ascontiguousarray(local[incoming - mine])
    got = np.empty((rows.shape[0], *local.shape[1:]), dtype=local.dtype)
    trailing = tuple(slice(0, n) for n in local.shape[1:])
    comm.exchange(answers, regions(asked, trailing), got, regions(wanted, trailing)).wait()
    out = np.empty_like(got)
    out[order] = got
    return out


# ---------------------------------------------------------------- argument checks
def _shape(func: str, size) -> tuple[int, ...]:
    return () if size is None else normalize_shape(func, size)


def _real(func: str, name: str, value) -> float:
    if isinstance(value, DArray):
        value = value._scalar(float, func)
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise TypeError(message(func, f"{name} must be a real scalar", type(value).__name__, "a float"))
    return float(value)


def _int(func: str, name: str, value) -> int:
    try:
        if isinstance(value, bool):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise TypeError(message(func, f"{name} must be an integer", type(value).__name__, "an int")) from None


def _float_dtype(func: str, dtype) -> np.dtype:
    found = to_numpy_dtype(dtype)
    if found not in (np.float32, np.float64):
        raise TypeError(message(func, "unsupported dtype", found, "float32 or float64"))
    return found


class Generator:
    """Draws DArrays whose global values depend only on the seed and the call sequence.

    Create one with :func:`default_rng`. Every drawing method takes the
    layout keywords of the creation functions (``split, grid, sizes, halo,
    boundary, comm, device``) and is collective: every rank makes the same
    calls in the same order (each call uses the next stream; see
    :mod:`darray.random`).

    Examples
    --------
    >>> import darray as da
    >>> rng = da.random.default_rng(0)
    >>> x = rng.integers(0, 10, size=20, split=0)
    >>> bool(da.all((x >= 0) & (x < 10)))
    True
    """

    def __init__(self, seed_seq: np.random.SeedSequence):
        if not isinstance(seed_seq, np.random.SeedSequence):
            raise TypeError(message("Generator", "expected a numpy.random.SeedSequence", type(seed_seq).__name__,
                                    "use darray.random.default_rng(seed)"))
        self._seed_seq = seed_seq
        self._key = seed_seq.generate_state(2, dtype=np.uint64)
        self._calls = 0

    def __repr__(self):
        return f"darray.random.Generator(entropy={self._seed_seq.entropy!r}, calls={self._calls})"

    @property
    def seed_seq(self) -> np.random.SeedSequence:
        """The :class:`numpy.random.SeedSequence` this generator's key comes from."""
        return self._seed_seq

    def spawn(self, n_children: int) -> list[Generator]:
        """``n_children`` independent generators (``SeedSequence.spawn``); call it on every rank alike."""
        n = _int("spawn", "n_children", n_children)
        if n < 0:
            raise ValueError(message("spawn", "n_children must be non-negative", n))
        return [Generator(s) for s in self._seed_seq.spawn(n)]

    # ------------------------------------------------------------ the engine
    def _stream(self) -> int:
        stream = self._calls
        self._calls += 1
        return stream

    def _draw(self, func, shape, words_per_element, transform, split, grid, sizes, halo, boundary, comm,
              device) -> DArray:
        """A new DArray: each rank turns its block's words (``(n, words_per_element)``) into values."""
        comm = resolve_comm(comm)
        xp, dev = resolve_device(device)
        layout = make_layout(func, shape, comm.size, split, grid, sizes, halo, boundary)
        stream = self._stream()
        cells = layout.block_slices(comm.rank)
        starts, length = _runs(shape, cells)
        w = words_per_element
        words = _stream_words(self._key, stream, starts * w, length * w).reshape(-1, w)
        values = transform(words).reshape(layout.block_shape(comm.rank))
        return _place(xp.asarray(values, device=dev), layout, comm, xp)

    # ------------------------------------------------------------ floats
    def random(self, size=None, dtype=np.float64, *, split="auto", grid=None, sizes=None, halo=0,
               boundary="none", comm=None, device=None) -> DArray:
        """Uniform floats in ``[0, 1)`` (float64: 53 random bits; float32: 24).

        size : output shape (None: a 0-d array).
        """
        shape, dtype = _shape("random", size), _float_dtype("random", dtype)
        return self._draw("random", shape, 1, lambda w: _unit(w[:, 0], dtype),
                          split, grid, sizes, halo, boundary, comm, device)

    def uniform(self, low=0.0, high=1.0, size=None, *, split="auto", grid=None, sizes=None, halo=0,
                boundary="none", comm=None, device=None) -> DArray:
        """Uniform float64 in ``[low, high)``: ``low + (high - low) * random()``; scalar bounds."""
        low, high = _real("uniform", "low", low), _real("uniform", "high", high)
        if not np.isfinite(high - low):  # (NumPy's error: the range must be a finite number)
            raise OverflowError(message("uniform", "high - low range exceeds valid bounds", (low, high),
                                        "finite bounds"))
        shape = _shape("uniform", size)
        return self._draw("uniform", shape, 1, lambda w: low + (high - low) * _unit(w[:, 0], np.dtype("float64")),
                          split, grid, sizes, halo, boundary, comm, device)

    def standard_normal(self, size=None, dtype=np.float64, *, split="auto", grid=None, sizes=None, halo=0,
                        boundary="none", comm=None, device=None) -> DArray:
        """Standard normal samples (Box-Muller on each element's own two words)."""
        shape, dtype = _shape("standard_normal", size), _float_dtype("standard_normal", dtype)
        return self._draw("standard_normal", shape, 2, lambda w: _box_muller(w).astype(dtype, copy=False),
                          split, grid, sizes, halo, boundary, comm, device)

    def normal(self, loc=0.0, scale=1.0, size=None, *, split="auto", grid=None, sizes=None, halo=0,
               boundary="none", comm=None, device=None) -> DArray:
        """Normal float64 samples ``loc + scale * standard_normal()``; scalar ``loc`` and ``scale >= 0``."""
        loc, scale = _real("normal", "loc", loc), _real("normal", "scale", scale)
        if not scale >= 0:
            raise ValueError(message("normal", "scale must be non-negative", scale, "scale >= 0"))
        shape = _shape("normal", size)
        return self._draw("normal", shape, 2, lambda w: loc + scale * _box_muller(w),
                          split, grid, sizes, halo, boundary, comm, device)

    def standard_exponential(self, size=None, dtype=np.float64, *, split="auto", grid=None, sizes=None, halo=0,
                             boundary="none", comm=None, device=None) -> DArray:
        """Exponential samples of mean 1 (inverse CDF, ``-log1p(-u)``)."""
        shape, dtype = _shape("standard_exponential", size), _float_dtype("standard_exponential", dtype)
        return self._draw("standard_exponential", shape, 1,
                          lambda w: (-np.log1p(-_unit(w[:, 0], np.dtype("float64")))).astype(dtype, copy=False),
                          split, grid, sizes, halo, boundary, comm, device)

    def exponential(self, scale=1.0, size=None, *, split="auto", grid=None, sizes=None, halo=0,
                    boundary="none", comm=None, device=None) -> DArray:
        """Exponential float64 samples of mean ``scale >= 0`` (scalar)."""
        scale = _real("exponential", "scale", scale)
        if not scale >= 0:
            raise ValueError(message("exponential", "scale must be non-negative", scale, "scale >= 0"))
        shape = _shape("exponential", size)
        return self._draw("exponential", shape, 1,
                          lambda w: scale * -np.log1p(-_unit(w[:, 0], np.dtype("float64"))),
                          split, grid, sizes, halo, boundary, comm, device)

    # ------------------------------------------------------------ integers
    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False, *, split="auto", grid=None,
                 sizes=None, halo=0, boundary="none", comm=None, device=None) -> DArray:
        """Integers in ``[low, high)`` (``[low, high]`` with ``endpoint=True``); ``high=None`` means ``[0, low)``.

        Lemire's multiply-shift on one 64-bit word per element, without
        rejection: bias below ``(high - low) * 2**-64``.
        """
        low = _int("integers", "low", low)
        if high is None:
            low, high = 0, low
        else:
            high = _int("integers", "high", high)
        dtype = to_numpy_dtype(dtype)
        if dtype.kind not in "iu" or dtype.name not in ("int8", "int16", "int32", "int64", "uint8", "uint16",
                                                         "uint32", "uint64"):
            raise TypeError(message("integers", "unsupported dtype", dtype, "an integer dtype"))
        top = high if endpoint else high - 1
        if top < low:
            raise ValueError(message("integers", "empty range", (low, high),
                                     "low <= high" if endpoint else "low < high"))
        info = np.iinfo(dtype)
        if low < info.min or top > info.max:
            raise ValueError(message("integers", f"bounds out of range for {dtype}", (low, high),
                                     f"values in [{info.min}, {info.max}]"))
        span = top - low + 1
        shape = _shape("integers", size)
        offset = np.uint64(low & _M64)

        def transform(words):
            out = _bounded(words[:, 0], span) + offset  # wraps modulo 2**64 to low + k
            return (out if dtype.kind == "u" else out.view(np.int64)).astype(dtype, copy=False)

        return self._draw("integers", shape, 1, transform, split, grid, sizes, halo, boundary, comm, device)

    # ------------------------------------------------------------ sampling and permutations
    def choice(self, a, size=None, replace=True, p=None, *, split="auto", grid=None, sizes=None, halo=0,
               boundary="none", comm=None, device=None) -> DArray:
        """A random sample from ``range(a)`` (``a`` an int) or from a 1-d array or DArray ``a``.

        With replacement the indices are ``integers(0, n)``'s, or, with ``p``,
        inverse-CDF draws on the cumulative sum of ``p`` (held whole on every
        rank). Without replacement (``p`` not supported) sample ``k`` (in
        C order) is element ``perm[k]`` of the call's permutation of
        ``range(n)``, so ``choice(n, k, replace=False)`` equals
        ``permutation(n)[:k]`` drawn at the same call. Values of a DArray
        ``a`` are pulled from their owners (one count allgather, two
        exchanges); the result then lives on ``a``'s communicator and device.
        """
        func = "choice"
        population = None
        if isinstance(a, DArray):
            if a.ndim != 1:
                raise ValueError(message(func, "a must be 1-d", a.shape, "an int or a 1-d array"))
            if comm is not None and comm is not a._comm:
                raise ValueError(message(func, "comm differs from the population's communicator", comm,
                                         "the communicator of a"))
            n, comm = a.shape[0], a._comm
            xp, dev = (a._xp, a.device) if device is None else resolve_device(device)
        else:
            xp, dev = resolve_device(device)
            if isinstance(a, (numbers.Integral, np.integer)) and not isinstance(a, bool):
                n = int(a)
                if n < 0:
                    raise ValueError(message(func, "a must be non-negative", n, "a >= 0"))
            else:
                population = np.asarray(a)
                if population.ndim != 1:
                    raise ValueError(message(func, "a must be 1-d", population.shape, "an int or a 1-d array"))
                n = population.shape[0]
        shape = _shape(func, size)
        count = prod(shape)
        if n == 0 and count:
            raise ValueError(message(func, "a cannot be empty unless no samples are taken", n, "a > 0"))
        cdf = None
        if p is not None:
            if not replace:
                raise NotImplementedError(message(func, "p is not supported without replacement", "p",
                                                  "replace=True"))
            weights = to_numpy(p.gather()) if isinstance(p, DArray) else np.asarray(p)
            if weights.shape != (n,) or weights.dtype.kind not in "iuf":
                raise ValueError(message(func, "p must be real, 1-d, with one entry per element of a",
                                         f"shape {weights.shape} dtype {weights.dtype}", f"shape ({n},)"))
            weights = weights.astype(np.float64)
            if not np.all(np.isfinite(weights)) or np.any(weights < 0):
                raise ValueError(message(func, "probabilities must be finite and non-negative", weights))
            if abs(weights.sum() - 1.0) > np.sqrt(np.finfo(np.float64).eps):
                raise ValueError(message(func, "probabilities do not sum to 1", float(weights.sum()), "1"))
            cdf = np.cumsum(weights)
            cdf /= cdf[-1]
        if not replace and count > n:
            raise ValueError(message(func, "cannot take a larger sample than the population without replacement",
                                     count, f"at most {n}"))
        comm = resolve_comm(comm)
        layout = make_layout(func, shape, comm.size, split, grid, sizes, halo, boundary)
        starts, length = _runs(shape, layout.block_slices(comm.rank))
        if not replace:
            picks = self._permutation_of(n, starts, length)
        elif cdf is None:
            picks = _bounded(_stream_words(self._key, self._stream(), starts, length), max(n, 1)).view(np.int64)
        else:
            u = _unit(_stream_words(self._key, self._stream(), starts, length), np.dtype("float64"))
            picks = np.minimum(np.searchsorted(cdf, u, side="right"), n - 1).astype(np.int64)
        if isinstance(a, DArray):
            values = _take_rows(func, a, picks)
        elif population is not None:
            values = population[picks]
        else:
            values = picks
        block = values.reshape(layout.block_shape(comm.rank))
        return _place(xp.asarray(block, device=dev), layout, comm, xp)

    def permutation(self, x, *, split="auto", grid=None, sizes=None, halo=0, boundary="none", comm=None,
                    device=None) -> DArray:
        """A permuted ``arange(x)`` (``x`` an int), or a permuted copy of ``x`` along axis 0.

        For a DArray ``x`` the result keeps ``x``'s layout (no layout
        keywords) and equals ``x[permutation(len(x))]`` drawn at the same
        call: each rank pulls the rows it owns in the result from their
        owners (one count allgather, two exchanges). A NumPy array ``x`` is
        laid out with the keywords first.
        """
        func = "permutation"
        if isinstance(x, DArray):
            if (split, grid, sizes, halo, boundary, comm, device) != ("auto", None, None, 0, "none", None, None):
                raise TypeError(message(func, "layout keywords apply only when x is an int or a NumPy array",
                                        "layout keywords with a DArray", "none (x keeps its layout)"))
            return self._permuted(func, x)
        if isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, bool):
            n = int(x)
            if n < 0:
                raise ValueError(message(func, "x must be non-negative", n, "x >= 0"))
            comm = resolve_comm(comm)
            xp, dev = resolve_device(device)
            layout = make_layout(func, (n,), comm.size, split, grid, sizes, halo, boundary)
            starts, length = _runs((n,), layout.block_slices(comm.rank))
            values = self._permutation_of(n, starts, length)
            return _place(xp.asarray(values, device=dev), layout, comm, xp)
        from .._api.creation import asarray

        array = np.asarray(x)
        if array.ndim == 0:
            raise ValueError(message(func, "x must be an int or at least 1-d", array.shape))
        return self._permuted(func, asarray(array, split=split, grid=grid, sizes=sizes, halo=halo,
                                            boundary=boundary, comm=comm, device=device))

    def shuffle(self, x) -> None:
        """Permute the DArray ``x`` in place along axis 0, as :meth:`permutation` (ghost cells go stale)."""
        if not isinstance(x, DArray):
            raise TypeError(message("shuffle", "expected a DArray", type(x).__name__))
        out = self._permuted("shuffle", x)
        x.local[...] = out.local
        x._halo_fresh = False

    def _permutation_of(self, n: int, starts: np.ndarray, length: int) -> np.ndarray:
        """``perm[k]`` for the flat indices ``k`` of the given runs, ``perm`` the next stream's permutation."""
        stream = self._stream()
        keys = [np.uint64(w) for w in _stream_words(self._key, stream, np.zeros(1, dtype=np.int64), _FEISTEL_ROUNDS)]
        flat = (starts[:, None] + np.arange(length, dtype=np.int64)).reshape(-1)
        return _feistel(flat.astype(np.uint64), n, keys).view(np.int64)

    def _permuted(self, func: str, x: DArray) -> DArray:
        if x.ndim == 0:
            raise ValueError(message(func, "x must be at least 1-d", x.shape))
        rows = x._layout.block_slices(x._comm.rank)[0]
        source = self._permutation_of(x.shape[0], np.array([rows.start], dtype=np.int64), rows.stop - rows.start)
        values = _take_rows(func, x, source)
        return _place(x._xp.asarray(values, device=x.device), x._layout, x._comm, x._xp)


def _box_muller(words: np.ndarray) -> np.ndarray:
    u1 = ((words[:, 0] >> np.uint64(11)).astype(np.float64) + 1.0) * _TWO53  # (0, 1]
    u2 = _unit(words[:, 1], np.dtype("float64"))
    return np.sqrt(-2.0 * np.log(u1)) * np.cos((2.0 * np.pi) * u2)


def default_rng(seed=None, *, comm=None) -> Generator:
    """A :class:`Generator` from ``seed`` (an int >= 0, a sequence of ints, a SeedSequence or a Generator).

    With ``seed=None`` fresh OS entropy is drawn on rank 0 of ``comm``
    (default: all processes) and broadcast, so every rank holds the same
    generator (collective in that case only).

    Examples
    --------
    >>> import darray as da
    >>> a = da.random.default_rng(7).random(5)
    >>> b = da.random.default_rng(7).random(5)
    >>> bool(da.all(a == b))
    True
    """
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, np.random.SeedSequence):
        return Generator(seed)
    if seed is None:
        entropy = np.random.SeedSequence().entropy
        comm = resolve_comm(comm)
        if comm.size > 1:
            words = np.array([(entropy >> (32 * i)) & 0xFFFFFFFF for i in range(4)], dtype=np.uint32)
            words = to_numpy(comm.bcast(words, 0))
            entropy = sum(int(w) << (32 * i) for i, w in enumerate(words))
        return Generator(np.random.SeedSequence(entropy))
    if isinstance(seed, (np.random.Generator, np.random.BitGenerator)):
        raise TypeError(message("default_rng", "NumPy generators cannot seed a darray generator",
                                type(seed).__name__, "an int, a sequence of ints or a SeedSequence"))
    if _debug.enabled:  # (a seed that differs per rank would stitch several streams into one array)
        _debug.check_arguments(resolve_comm(comm), "default_rng", seed)
    try:
        return Generator(np.random.SeedSequence(seed))
    except (TypeError, ValueError) as error:
        raise type(error)(message("default_rng", "invalid seed", seed,
                                  "an int >= 0, a sequence of ints >= 0 or a SeedSequence")) from None
