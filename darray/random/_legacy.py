"""NumPy's legacy random API (``numpy.random.seed``, ``rand``, ``randn``, ``randint``, ...) for DArrays.

:class:`RandomState` holds a ``numpy.random.RandomState`` (MT19937) in the
same state on every rank; the module-level functions of :mod:`darray.random`
are the methods of one global instance, as NumPy's are bound to
``numpy.random.mtrand._rand``. Every call is collective: every rank makes the
same calls in the same order, so the legacy state stays replicated.

Which numbers: NumPy's, or counter-based
----------------------------------------
A draw whose result has fewer than ``darray.config.min_distributed_size``
elements (the size below which ``split="auto"`` replicates an array) is
**NumPy's, bit for bit**: every rank makes the very call NumPy would make on
its ``RandomState`` and keeps its block of the result (any layout), so the
MT19937 state advances exactly as NumPy's, and a script of many small draws
prints NumPy's numbers throughout. ``size=None`` with scalar parameters
returns what NumPy returns (a Python ``float``/``int``).
``permutation`` / ``shuffle`` follow the length of axis 0 instead (the
permutation is NumPy's whenever the array has fewer rows than the threshold,
whatever its other axes; the rows then move between ranks), and ``choice``
the number of samples (and, without replacement, the population too).

A larger draw is **not NumPy's numbers**. MT19937 cannot skip ahead to an
arbitrary position cheaply, so reproducing NumPy's stream would make every
rank generate the whole global array (O(N) time per rank: the generation
would not get faster with more ranks, and above a few ranks would be slower
than NumPy on one process), which defeats distributing it. Instead the draw
takes four 32-bit words from the legacy stream -- the state advances exactly
as ``numpy.random.randint(2**32, size=4, dtype=numpy.uint32)`` advances it
(the cached Gaussian of ``randn`` is left as it is) -- and keys a
:class:`~darray.random.Generator` with ``SeedSequence(words)``. Each rank then
computes only its own block (in O(block) time and memory for the first two
groups below), and the global array depends only on the seed and the call
sequence, never on the number of ranks or the layout:

- ``random_sample`` (``rand``, ``random``, ``ranf``, ``sample``),
  ``standard_normal`` (``randn``), ``standard_exponential``, ``uniform``,
  ``normal``, ``exponential``, ``lognormal``, ``tomaxint`` and ``randint`` /
  ``random_integers`` with scalar bounds: the Generator's per-element
  streams (see :class:`~darray.random.Generator`), with array or DArray
  parameters applied elementwise through darray (``loc + scale * z``);
- ``permutation``, ``shuffle`` and ``choice``: the Generator's distributed
  permutation and sampling;
- every other distribution (``poisson``, ``binomial``, ``gamma``, ``beta``,
  ...): NumPy's ``numpy.random.Generator`` method of that name on fixed tiles
  of 65536 elements of the global C-order flat index, tile ``t`` drawn from
  ``Philox(key, counter=t << 128)``; a rank draws the tiles its block
  touches (its block plus at most two tiles when it is cut along axis 0; up
  to the whole array when it is cut along the last axis only). Their
  parameters are scalars, NumPy arrays or small DArrays (a DArray parameter
  of ``min_distributed_size`` elements or more raises NotImplementedError);
- ``dirichlet``, ``multinomial`` and ``multivariate_normal`` are NumPy's for
  small results only, and raise NotImplementedError otherwise.

Bad input raises NumPy's exception type, named after the function, on every
rank before the state advances (checked by NumPy's own code on a scratch
state -- which for NumPy-array parameters of a large draw costs a draw of
their size on every rank -- or, for DArray parameters, by a collective
reduction).

Examples
--------
>>> import darray as np
>>> np.random.seed(0)
>>> np.random.rand(3).tolist()
[0.5488135039273248, 0.7151893663724195, 0.6027633760716439]
>>> np.random.randint(10)                  # numpy.random gives the same
3
"""

from __future__ import annotations

import inspect
import numbers
import warnings
from math import prod

import numpy as np

from .._api._common import normalize_shape, resolve_device
from .._comm import resolve_comm
from .._core import make_layout
from .._api.creation import _place, asarray
from .._api.elementwise import exp, isfinite, less
from .._backend import to_numpy
from .._config import config
from .._core import DArray
from .._core.reductions import any as _any
from .._errors import message, naming
from ._counter import Generator, _runs, _take_rows

__all__ = ["RandomState", "SeedSequence", "beta", "binomial", "bytes", "chisquare", "choice", "dirichlet",
           "exponential", "f", "gamma", "geometric", "get_state", "gumbel", "hypergeometric", "laplace", "logistic",
           "lognormal", "logseries", "multinomial", "multivariate_normal", "negative_binomial",
           "noncentral_chisquare", "noncentral_f", "normal", "pareto", "permutation", "poisson", "power", "rand",
           "randint", "randn", "random", "random_integers", "random_sample", "ranf", "rayleigh", "sample", "seed",
           "set_state", "shuffle", "standard_cauchy", "standard_exponential", "standard_gamma", "standard_normal",
           "standard_t", "triangular", "uniform", "vonmises", "wald", "weibull", "zipf"]

_REQUIRED = inspect.Parameter.empty
_LAYOUT = {"split": "auto", "grid": None, "sizes": None, "halo": 0, "boundary": "none", "comm": None, "device": None}
#: Elements per tile of the tiled large-array path (fixed: the global array must not depend on it per rank).
_TILE = 1 << 16

# ---------------------------------------------------------------- the distributions, one table
# name -> (parameters before ``size``: (name, default), large-array path, example arguments)
#   "engine": the counter-based Generator's per-element streams + elementwise darray ops (O(block))
#   "tiles":  numpy.random.Generator's method of the same name on fixed tiles of the flat index
#   "vector": one sample is a vector (trailing axis): NumPy's numbers for small results only
_DISTRIBUTIONS: dict[str, tuple[tuple, str, str]] = {
    "beta": ((("a", _REQUIRED), ("b", _REQUIRED)), "tiles", "2.0, 3.0"),
    "binomial": ((("n", _REQUIRED), ("p", _REQUIRED)), "tiles", "10, 0.5"),
    "chisquare": ((("df", _REQUIRED),), "tiles", "3.0"),
    "dirichlet": ((("alpha", _REQUIRED),), "vector", "[1.0, 2.0]"),
    "exponential": ((("scale", 1.0),), "engine", "2.0"),
    "f": ((("dfnum", _REQUIRED), ("dfden", _REQUIRED)), "tiles", "3.0, 5.0"),
    "gamma": ((("shape", _REQUIRED), ("scale", 1.0)), "tiles", "2.0"),
    "geometric": ((("p", _REQUIRED),), "tiles", "0.3"),
    "gumbel": ((("loc", 0.0), ("scale", 1.0)), "tiles", ""),
    "hypergeometric": ((("ngood", _REQUIRED), ("nbad", _REQUIRED), ("nsample", _REQUIRED)), "tiles", "5, 7, 4"),
    "laplace": ((("loc", 0.0), ("scale", 1.0)), "tiles", ""),
    "logistic": ((("loc", 0.0), ("scale", 1.0)), "tiles", ""),
    "lognormal": ((("mean", 0.0), ("sigma", 1.0)), "engine", ""),
    "logseries": ((("p", _REQUIRED),), "tiles", "0.5"),
    "multinomial": ((("n", _REQUIRED), ("pvals", _REQUIRED)), "vector", "10, [0.2, 0.8]"),
    "multivariate_normal": ((("mean", _REQUIRED), ("cov", _REQUIRED)), "vector", "[0.0, 1.0], [[1.0, 0.0], [0, 1]]"),
    "negative_binomial": ((("n", _REQUIRED), ("p", _REQUIRED)), "tiles", "3, 0.5"),
    "noncentral_chisquare": ((("df", _REQUIRED), ("nonc", _REQUIRED)), "tiles", "3.0, 1.0"),
    "noncentral_f": ((("dfnum", _REQUIRED), ("dfden", _REQUIRED), ("nonc", _REQUIRED)), "tiles", "3.0, 5.0, 1.0"),
    "normal": ((("loc", 0.0), ("scale", 1.0)), "engine", "1.0, 2.0"),
    "pareto": ((("a", _REQUIRED),), "tiles", "3.0"),
    "poisson": ((("lam", 1.0),), "tiles", "4.0"),
    "power": ((("a", _REQUIRED),), "tiles", "3.0"),
    "random_sample": ((), "engine", ""),
    "rayleigh": ((("scale", 1.0),), "tiles", ""),
    "standard_cauchy": ((), "tiles", ""),
    "standard_exponential": ((), "engine", ""),
    "standard_gamma": ((("shape", _REQUIRED),), "tiles", "2.0"),
    "standard_normal": ((), "engine", ""),
    "standard_t": ((("df", _REQUIRED),), "tiles", "4.0"),
    "triangular": ((("left", _REQUIRED), ("mode", _REQUIRED), ("right", _REQUIRED)), "tiles", "0.0, 1.0, 3.0"),
    "uniform": ((("low", 0.0), ("high", 1.0)), "engine", "-1.0, 1.0"),
    "vonmises": ((("mu", _REQUIRED), ("kappa", _REQUIRED)), "tiles", "0.0, 4.0"),
    "wald": ((("mean", _REQUIRED), ("scale", _REQUIRED)), "tiles", "1.0, 2.0"),
    "weibull": ((("a", _REQUIRED),), "tiles", "2.0"),
    "zipf": ((("a", _REQUIRED),), "tiles", "2.0"),
}

#: Large "engine" draws: (Generator method giving z, value from z and the parameters).
_ENGINE = {
    "random_sample": ("random", lambda z: z),
    "standard_normal": ("standard_normal", lambda z: z),
    "standard_exponential": ("standard_exponential", lambda z: z),
    "normal": ("standard_normal", lambda z, loc, scale: z * scale + loc),
    "uniform": ("random", lambda z, low, high: z * (high - low) + low),
    "exponential": ("standard_exponential", lambda z, scale: z * scale),
    "lognormal": ("standard_normal", lambda z, mean, sigma: exp(z * sigma + mean)),
}

#: Checks of DArray parameters of "engine" draws, by a collective reduction: (parameters, bad cells, error, text).
_DARRAY_CHECKS = {
    "normal": (("scale",), lambda scale: less(scale, 0), ValueError, "scale < 0"),
    "exponential": (("scale",), lambda scale: less(scale, 0), ValueError, "scale < 0"),
    "lognormal": (("sigma",), lambda sigma: less(sigma, 0), ValueError, "sigma < 0"),
    "uniform": (("low", "high"), lambda low, high: ~isfinite(high - low), OverflowError, "Range exceeds valid bounds"),
}

#: The parameter whose last axis is the length of one sample of a "vector" distribution.
_VECTOR_LENGTH = {"dirichlet": "alpha", "multinomial": "pvals", "multivariate_normal": "mean"}

#: NumPy's aliases: public name -> the RandomState method that draws for it.
_ALIASES = {"random": "random_sample", "ranf": "random_sample", "sample": "random_sample"}

SeedSequence = np.random.SeedSequence  # NumPy's, re-exported: default_rng takes one

_scratch_state = None


def _scratch() -> np.random.RandomState:
    """A RandomState whose numbers nobody uses: NumPy's own argument checks run on it."""
    global _scratch_state
    if _scratch_state is None:
        _scratch_state = np.random.RandomState(0)
    return _scratch_state


def _renamed(error: Exception, func: str, values: list) -> Exception:
    """NumPy's ``error`` in darray's format: same type, ``"<func>: <NumPy's text>; got <parameters>"``."""
    got = tuple(v if np.ndim(v) == 0 and not isinstance(v, DArray) else f"<array of shape {np.shape(v)}>"
                for v in values)
    try:
        return type(error)(message(func, str(error), got))
    except Exception:  # an exception type with another constructor: name the function only
        return naming(error, func)


def _small(count: int) -> bool:
    return count < config.min_distributed_size


def _gathered(value):
    """A DArray parameter as a NumPy array (every rank the whole of it), anything else as it is."""
    return to_numpy(value.gather()) if isinstance(value, DArray) else value


def _laid_out(values, layout: dict):
    """NumPy's result as darray returns it: scalars as they are, arrays as DArrays laid out by ``layout``."""
    if not isinstance(values, np.ndarray):
        return values
    return asarray(values, **layout)


def _permuted_by(func: str, x: DArray, order: np.ndarray) -> DArray:
    """``x[order]`` in ``x``'s layout: each rank pulls the rows it owns in the result (``order`` replicated)."""
    rows = x._layout.block_slices(x._comm.rank)[0]
    values = _take_rows(func, x, np.ascontiguousarray(order[rows], dtype=np.int64))
    return _place(x._xp.asarray(values, device=x.device), x._layout, x._comm, x._xp)


def _tiled(func: str, method: str, generator: Generator, params: list, shape: tuple, dtype: np.dtype, layout: dict,
           extra: dict) -> DArray:
    """``numpy.random.Generator.<method>`` on fixed tiles of the flat index; each rank keeps its cells."""
    comm = resolve_comm(layout["comm"])
    xp, dev = resolve_device(layout["device"])
    lay = make_layout(func, shape, comm.size, layout["split"], layout["grid"], layout["sizes"], layout["halo"],
                      layout["boundary"])
    key = generator._key  # after the layout checks: the legacy state advances only for a valid call
    starts, length = _runs(shape, lay.block_slices(comm.rank))
    total = prod(shape)
    values = np.empty(0, dtype=dtype)
    if starts.size and length:
        first, last = starts // _TILE, (starts + length - 1) // _TILE
        counts = last - first + 1
        steps = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        tiles = np.unique(np.repeat(first, counts) + steps)
        views = [p if np.ndim(p) == 0 else np.broadcast_to(p, shape) for p in params]
        arrays = any(np.ndim(v) for v in views)
        buffer = np.empty((tiles.size, _TILE), dtype=dtype)
        for k, t in enumerate(tiles.tolist()):  # one NumPy call per tile of 65536 elements
            lo, hi = t * _TILE, min(total, (t + 1) * _TILE)
            cells = np.unravel_index(np.arange(lo, hi), shape) if arrays else ()
            args = [v if np.ndim(v) == 0 else v[cells] for v in views]
            draw = getattr(np.random.Generator(np.random.Philox(key=key, counter=t << 128)), method)
            buffer[k, :hi - lo] = draw(*args, size=hi - lo, **extra)
        flat = (starts[:, None] + np.arange(length, dtype=np.int64)).reshape(-1)
        values = buffer[np.searchsorted(tiles, flat // _TILE), flat % _TILE]
    block = values.reshape(lay.block_shape(comm.rank))
    return _place(xp.asarray(block, device=dev), lay, comm, xp)


class _Keyed(Generator):
    """A Generator for one large legacy draw, keyed by four words of the legacy stream.

    The words are taken when the Generator first reads its key, i.e. when it
    draws, after its own argument checks: a call that raises leaves the
    legacy state untouched.
    """

    def __init__(self, owner: RandomState):
        self._owner = owner
        self._calls = 0
        self._drawn_key = None

    @property
    def _key(self) -> np.ndarray:
        if self._drawn_key is None:
            words = self._owner._mt().randint(1 << 32, size=4, dtype=np.uint32)
            self._seed_seq = np.random.SeedSequence([int(w) for w in words])
            self._drawn_key = self._seed_seq.generate_state(2, dtype=np.uint64)
        return self._drawn_key


class RandomState:
    """NumPy's legacy ``RandomState`` (MT19937) held identically on every rank.

    ``seed`` is what ``numpy.random.RandomState`` takes (an int in
    ``[0, 2**32)``, a 1-d sequence of such ints, or None). With None the
    state is seeded, at first use, from OS entropy drawn on rank 0 of
    ``comm`` (default: all processes) and broadcast -- a collective call.
    The methods are NumPy's, plus the layout keywords of the creation
    functions (``split, grid, sizes, halo, boundary, comm, device``); they are
    collective. Results of fewer than ``darray.config.min_distributed_size``
    elements are NumPy's numbers; larger ones come from counter-based streams
    (see :mod:`darray.random` for exactly when).

    Examples
    --------
    >>> import numpy
    >>> import darray as da
    >>> rs = da.random.RandomState(1)
    >>> x = rs.normal(0.0, 2.0, size=(2, 3))
    >>> bool(da.all(x == numpy.random.RandomState(1).normal(0.0, 2.0, size=(2, 3))))
    True
    >>> state = rs.get_state()
    >>> a = rs.randint(0, 100, size=5)
    >>> rs.set_state(state)
    >>> bool(da.all(rs.randint(0, 100, size=5) == a))
    True
    """

    def __init__(self, seed=None, *, comm=None):
        self._state: np.random.RandomState | None = None
        self._comm = comm
        if seed is not None:
            self.seed(seed)

    def __repr__(self):
        return "darray.random.RandomState(MT19937)"

    # ------------------------------------------------------------ state
    def _mt(self) -> np.random.RandomState:
        """The replicated NumPy state (seeded from rank 0's entropy at first use when no seed was given)."""
        if self._state is None:
            self.seed(None)
        return self._state

    def seed(self, seed=None) -> None:
        """Reseed as ``numpy.random.RandomState.seed`` (None: rank 0's OS entropy, broadcast; collective).

        Examples
        --------
        >>> import darray as da
        >>> rs = da.random.RandomState()
        >>> rs.seed(3)
        >>> rs.random_sample()
        0.5507979025745755
        """
        if seed is None:
            entropy = np.random.SeedSequence().entropy
            words = np.array([(entropy >> (32 * i)) & 0xFFFFFFFF for i in range(4)], dtype=np.uint32)
            comm = resolve_comm(self._comm)
            if comm.size > 1:
                words = to_numpy(comm.bcast(words, 0))
            seed = words
        try:
            state = np.random.RandomState(seed)
        except (TypeError, ValueError) as error:
            raise naming(error, "seed") from None
        self._state = state

    def get_state(self, legacy: bool = True):
        """The MT19937 state, as ``numpy.random.RandomState.get_state`` (the same on every rank).

        Examples
        --------
        >>> import darray as da
        >>> da.random.RandomState(0).get_state()[0]
        'MT19937'
        """
        return self._mt().get_state(legacy=legacy)

    def set_state(self, state) -> None:
        """Restore a state from :meth:`get_state` (or NumPy's); pass the same state on every rank.

        Examples
        --------
        >>> import darray as da
        >>> rs = da.random.RandomState(0)
        >>> state = rs.get_state()
        >>> first = rs.rand()
        >>> rs.set_state(state)
        >>> rs.rand() == first
        True
        """
        try:
            _scratch().set_state(state)  # NumPy half-writes a state it then rejects: try it on the scratch first
            self._mt().set_state(state)
        except (TypeError, ValueError, IndexError) as error:
            raise naming(error, "set_state") from None

    # ------------------------------------------------------------ the generic draw
    def _distribution(self, name: str, params: dict, size, layout: dict, extra: dict | None = None,
                      method: str | None = None):
        """Draw ``name`` (NumPy method ``method``) with ``params`` (ordered), ``size`` and layout keywords."""
        method = method or name
        extra = extra or {}
        spec, kind, _ = _DISTRIBUTIONS.get(method, ((), "tiles", ""))  # randint with array bounds: tiles
        values = list(params.values())
        if kind == "vector":
            shape = () if size is None else normalize_shape(name, size)
            vector = params[_VECTOR_LENGTH[method]]
            vector_shape = vector.shape if isinstance(vector, DArray) else np.shape(vector)
            count = prod(shape) * (vector_shape[-1] if vector_shape else 1)
            if not _small(count):
                raise NotImplementedError(message(name, "this many values (one sample is a vector) are drawn by "
                                                  "NumPy only", count, "fewer than darray.config."
                                                  f"min_distributed_size = {config.min_distributed_size}; draw "
                                                  "blocks with numpy.random per rank and darray.from_local"))
            return self._exact(name, method, values, size, layout, extra)
        shapes = [v.shape if isinstance(v, DArray) else np.shape(v) for v in values]
        try:
            broadcast = np.broadcast_shapes(*shapes)
        except ValueError:
            raise ValueError(message(name, "parameters cannot be broadcast together", shapes)) from None
        if size is None:
            shape = broadcast
        else:
            shape = normalize_shape(name, size)
            try:
                fits = np.broadcast_shapes(shape, broadcast) == shape
            except ValueError:
                fits = False
            if not fits:
                raise ValueError(message(name, "parameters do not broadcast to size", shapes,
                                         f"shapes broadcastable to {shape}"))
        if _small(prod(shape)):
            return self._exact(name, method, values, size, layout, extra)
        # ---- a large draw: checks first (the state must not advance on bad input), then counter-based streams
        large = [isinstance(v, DArray) and not _small(v.size) for v in values]
        if kind == "tiles":
            if any(large):
                raise NotImplementedError(message(name, "a DArray parameter this large is not supported",
                                                  [v.shape for v, big in zip(values, large) if big],
                                                  "scalars, NumPy arrays or DArrays of fewer than "
                                                  "darray.config.min_distributed_size elements"))
            values = [_gathered(v) for v in values]
        dummies = [spec[i][1] if isinstance(v, DArray) else v for i, v in enumerate(values)]
        dtype = self._check(name, method, dummies, extra)
        checked = _DARRAY_CHECKS.get(method)
        if checked and any(isinstance(params[p], DArray) for p in checked[0]):
            args = [asarray(params[p]) if not isinstance(params[p], DArray) else params[p] for p in checked[0]]
            if bool(_any(checked[1](*args))):
                raise checked[2](message(name, checked[3], "a DArray parameter violating it"))
        if kind == "engine":
            base, combine = _ENGINE[method]
            z = getattr(_Keyed(self), base)(shape, **layout)
            operands = [v if isinstance(v, DArray) or np.ndim(v) == 0 else asarray(v, comm=layout["comm"],
                                                                                   device=layout["device"])
                        for v in values]
            return combine(z, *operands)
        target = {"randint": "integers", "random_integers": "integers"}.get(method, method)
        return _tiled(name, target, _Keyed(self), values, shape, dtype, layout, extra)

    def _check(self, name: str, method: str, values: list, extra: dict) -> np.dtype:
        """NumPy's own checks of the parameters on a scratch state; the result dtype NumPy would give."""
        scalar = all(np.ndim(v) == 0 for v in values)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                out = getattr(_scratch(), method)(*values, size=1 if scalar else None, **extra)
        except (TypeError, ValueError, IndexError, OverflowError) as error:
            raise _renamed(error, name, values) from None
        return np.asarray(out).dtype

    def _numpy(self, name: str, method: str, *args, **kwargs):
        """NumPy's call on the replicated state: NumPy's numbers, the state advancing as NumPy's."""
        args = [_gathered(v) for v in args]
        try:
            return getattr(self._mt(), method)(*args, **kwargs)
        except (TypeError, ValueError, IndexError, OverflowError) as error:
            raise _renamed(error, name, args) from None

    def _exact(self, name: str, method: str, values: list, size, layout: dict, extra: dict):
        """:meth:`_numpy` with ``size``, laid out as ``layout`` says (scalars stay scalars)."""
        return _laid_out(self._numpy(name, method, *values, size=size, **extra), layout)

    # ------------------------------------------------------------ NumPy's convenience forms
    def rand(self, *dims, split="auto", grid=None, sizes=None, halo=0, boundary="none", comm=None, device=None):
        """Uniform floats in ``[0, 1)`` of shape ``dims``, as ``numpy.random.rand(d0, d1, ...)``.

        No dims: a Python float. Equal to ``random_sample(size=dims)``.

        Examples
        --------
        >>> import darray as da
        >>> da.random.RandomState(0).rand(2, 3).shape
        (2, 3)
        """
        layout = dict(split=split, grid=grid, sizes=sizes, halo=halo, boundary=boundary, comm=comm, device=device)
        return self._distribution("rand", {}, dims or None, layout, method="random_sample")

    def randn(self, *dims, split="auto", grid=None, sizes=None, halo=0, boundary="none", comm=None, device=None):
        """Standard normal floats of shape ``dims``, as ``numpy.random.randn(d0, d1, ...)``.

        No dims: a Python float. Equal to ``standard_normal(size=dims)``.

        Examples
        --------
        >>> import darray as da
        >>> da.random.RandomState(0).randn(4).shape
        (4,)
        """
        layout = dict(split=split, grid=grid, sizes=sizes, halo=halo, boundary=boundary, comm=comm, device=device)
        return self._distribution("randn", {}, dims or None, layout, method="standard_normal")

    def randint(self, low, high=None, size=None, dtype=int, *, split="auto", grid=None, sizes=None, halo=0,
                boundary="none", comm=None, device=None):
        """Integers in ``[low, high)`` (``[0, low)`` when ``high`` is None), as ``numpy.random.randint``.

        Examples
        --------
        >>> import darray as da
        >>> x = da.random.RandomState(0).randint(5, 10, size=6)
        >>> bool(da.all((x >= 5) & (x < 10)))
        True
        """
        layout = dict(split=split, grid=grid, sizes=sizes, halo=halo, boundary=boundary, comm=comm, device=device)
        return self._integers("randint", low, high, size, dtype, layout)

    def random_integers(self, low, high=None, size=None, *, split="auto", grid=None, sizes=None, halo=0,
                        boundary="none", comm=None, device=None):
        """Integers in ``[low, high]`` (``[1, low]`` when ``high`` is None); deprecated in NumPy, use randint.

        Examples
        --------
        >>> import warnings
        >>> import darray as da
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", DeprecationWarning)
        ...     x = da.random.RandomState(0).random_integers(3, size=4)
        >>> bool(da.all((x >= 1) & (x <= 3)))
        True
        """
        layout = dict(split=split, grid=grid, sizes=sizes, halo=halo, boundary=boundary, comm=comm, device=device)
        return self._integers("random_integers", low, high, size, None, layout)

    def _integers(self, name: str, low, high, size, dtype, layout: dict):
        params = {"low": low, "high": high}
        extra = {} if dtype is None else {"dtype": dtype}
        scalar = all(np.ndim(_gathered(v) if isinstance(v, DArray) else v) == 0 for v in (low, high))
        shape = None if size is None else normalize_shape(name, size)
        if not scalar or shape is None or _small(prod(shape)):
            return self._distribution(name, params, size, layout, extra)
        # a large draw with scalar bounds: the Generator's integers (one word per element, O(block))
        values = [_gathered(v) for v in (low, high)]
        out_dtype = self._check(name, name, values, extra)
        low, high = values
        if high is None:
            low, high = (1 if name == "random_integers" else 0), low
        low, high = int(low), int(high)
        if name == "random_integers":
            warnings.warn("This function is deprecated. Please call randint(low, high + 1) instead",
                          DeprecationWarning, stacklevel=3)
        kind = out_dtype if out_dtype != np.bool_ else np.dtype(np.uint8)
        out = _Keyed(self).integers(low, high, shape, dtype=kind, endpoint=name == "random_integers", **layout)
        return out if out_dtype == kind else out.astype(out_dtype)

    def choice(self, a, size=None, replace=True, p=None, *, split="auto", grid=None, sizes=None, halo=0,
               boundary="none", comm=None, device=None):
        """A random sample from ``range(a)`` or from the 1-d array or DArray ``a``, as ``numpy.random.choice``.

        NumPy's sample when fewer than ``darray.config.min_distributed_size``
        values are drawn (and, without replacement, the population is that
        small too); the values of a DArray ``a`` are pulled from their owners.
        Otherwise :meth:`darray.random.Generator.choice` keyed by the legacy
        stream.

        Examples
        --------
        >>> import numpy
        >>> import darray as da
        >>> x = da.random.RandomState(5).choice(10, size=4, replace=False)
        >>> bool(da.all(x == numpy.random.RandomState(5).choice(10, size=4, replace=False)))
        True
        """
        layout = dict(split=split, grid=grid, sizes=sizes, halo=halo, boundary=boundary, comm=comm, device=device)
        shape = () if size is None else normalize_shape("choice", size)
        if isinstance(a, DArray):
            if a.ndim != 1:
                raise ValueError(message("choice", "a must be 1-dimensional", a.shape, "a 1-d array or an int"))
            n = a.shape[0]
        elif isinstance(a, (numbers.Integral, np.integer)) and not isinstance(a, bool):
            n = int(a)
        else:
            n = np.shape(a)[0] if np.ndim(a) else -1
        if not (_small(prod(shape)) and (replace or _small(n))):
            return _Keyed(self).choice(a, size, replace, _gathered(p), **layout)
        if not isinstance(a, DArray):
            return _laid_out(self._numpy("choice", "choice", a, size, replace, p), layout)
        picks = np.asarray(self._numpy("choice", "choice", n, shape, replace, p))
        comm = a._comm if layout["comm"] is None else layout["comm"]
        lay = make_layout("choice", shape, comm.size, split, grid, sizes, halo, boundary)
        mine = np.ascontiguousarray(picks[lay.block_slices(comm.rank)].reshape(-1), dtype=np.int64)
        values = _take_rows("choice", a, mine).reshape(lay.block_shape(comm.rank))
        xp, dev = (a._xp, a.device) if device is None else resolve_device(device)
        return _place(xp.asarray(values, device=dev), lay, comm, xp)

    def permutation(self, x, *, split="auto", grid=None, sizes=None, halo=0, boundary="none", comm=None,
                    device=None):
        """A permuted ``arange(x)`` (an int), or a permuted copy of ``x`` along axis 0, as ``numpy.random.permutation``.

        NumPy's permutation when axis 0 has fewer than
        ``darray.config.min_distributed_size`` entries (the rows of a DArray
        then move from their owners: one count allgather, two exchanges);
        otherwise :meth:`darray.random.Generator.permutation` keyed by the
        legacy stream. A DArray keeps its layout.

        Examples
        --------
        >>> import darray as da
        >>> da.random.RandomState(0).permutation(5).tolist()
        [2, 0, 1, 3, 4]
        """
        layout = dict(split=split, grid=grid, sizes=sizes, halo=halo, boundary=boundary, comm=comm, device=device)
        if isinstance(x, DArray):
            if layout != _LAYOUT:
                raise TypeError(message("permutation", "layout keywords apply only when x is an int or a NumPy "
                                        "array", "layout keywords with a DArray", "none (x keeps its layout)"))
            if x.ndim == 0:
                raise IndexError(message("permutation", "x must be an integer or at least 1-dimensional", x.shape))
            if not _small(x.shape[0]):
                return _Keyed(self).permutation(x)
            return _permuted_by("permutation", x, self._mt().permutation(x.shape[0]))
        n = int(x) if isinstance(x, (numbers.Integral, np.integer)) and not isinstance(x, bool) else None
        rows = n if n is not None else (np.shape(x)[0] if np.ndim(x) else 0)
        if not _small(rows):
            return _Keyed(self).permutation(x, **layout)
        return _laid_out(self._numpy("permutation", "permutation", x), layout)

    def shuffle(self, x) -> None:
        """Shuffle ``x`` in place along axis 0, as ``numpy.random.shuffle`` (a DArray's ghost cells go stale).

        NumPy's order when axis 0 has fewer than
        ``darray.config.min_distributed_size`` entries; a list or NumPy array
        is shuffled by NumPy on every rank.

        Examples
        --------
        >>> import darray as da
        >>> x = da.arange(6)
        >>> da.random.RandomState(0).shuffle(x)
        >>> x.tolist()
        [5, 2, 1, 3, 0, 4]
        """
        if not isinstance(x, DArray):
            try:
                self._mt().shuffle(x)
            except (TypeError, ValueError) as error:
                raise naming(error, "shuffle") from None
            return
        if x.ndim == 0:
            raise TypeError(message("shuffle", "x must be at least 1-dimensional", x.shape))
        if not _small(x.shape[0]):
            _Keyed(self).shuffle(x)
            return
        out = _permuted_by("shuffle", x, self._mt().permutation(x.shape[0]))
        x.local[...] = out.local
        x._halo_fresh = False

    def tomaxint(self, size=None, *, split="auto", grid=None, sizes=None, halo=0, boundary="none", comm=None,
                 device=None):
        """Integers in ``[0, sys.maxsize]`` (int64), as ``numpy.random.RandomState.tomaxint``.

        Examples
        --------
        >>> import darray as da
        >>> int(da.min(da.random.RandomState(0).tomaxint(5))) >= 0
        True
        """
        layout = dict(split=split, grid=grid, sizes=sizes, halo=halo, boundary=boundary, comm=comm, device=device)
        shape = None if size is None else normalize_shape("tomaxint", size)
        if shape is None or _small(prod(shape)):
            return _laid_out(self._numpy("tomaxint", "tomaxint", size), layout)
        return _Keyed(self).integers(0, np.iinfo(np.int64).max, shape, endpoint=True, **layout)

    def bytes(self, length: int) -> bytes:
        """``length`` random bytes (Python ``bytes``, the same on every rank), as ``numpy.random.bytes``.

        Examples
        --------
        >>> import darray as da
        >>> len(da.random.RandomState(0).bytes(10))
        10
        """
        try:
            return self._mt().bytes(length)
        except (TypeError, ValueError) as error:
            raise naming(error, "bytes") from None


def _method(name: str, params: tuple, example: str):
    """The RandomState method ``name(params..., size=None, *, layout keywords)`` drawing through the table."""
    P = inspect.Parameter
    signature = inspect.Signature(
        [P("self", P.POSITIONAL_OR_KEYWORD)]
        + [P(p, P.POSITIONAL_OR_KEYWORD, default=d) for p, d in params]
        + [P("size", P.POSITIONAL_OR_KEYWORD, default=None)]
        + ([P("check_valid", P.POSITIONAL_OR_KEYWORD, default="warn"), P("tol", P.POSITIONAL_OR_KEYWORD,
                                                                        default=1e-8)]
           if name == "multivariate_normal" else [])
        + [P(k, P.KEYWORD_ONLY, default=v) for k, v in _LAYOUT.items()])
    numpy_name = _ALIASES.get(name, name)

    def method(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise naming(error, name) from None
        bound.apply_defaults()
        values = dict(bound.arguments)
        self = values.pop("self")
        layout = {k: values.pop(k) for k in _LAYOUT}
        size = values.pop("size")
        extra = {k: values.pop(k) for k in ("check_valid", "tol") if k in values}
        return self._distribution(name, values, size, layout, extra, method=numpy_name)

    method.__name__ = method.__qualname__ = name
    method.__signature__ = signature
    args = example + ", " if example else ""
    method.__doc__ = (
        f"NumPy's ``numpy.random.RandomState.{numpy_name}``, drawing a DArray (a scalar for ``size=None`` and "
        "scalar parameters).\n\n"
        "Results of fewer than ``darray.config.min_distributed_size`` elements are NumPy's numbers; larger ones "
        "come from counter-based streams keyed by the legacy stream (see :mod:`darray.random`). Layout "
        "keywords as the creation functions'.\n\n"
        "Examples\n--------\n"
        ">>> import numpy\n>>> import darray as da\n"
        f">>> x = da.random.RandomState(0).{name}({args}size=3)\n"
        f">>> bool(da.all(x == numpy.random.RandomState(0).{numpy_name}({args}size=3)))\nTrue\n")
    return method


for _name, (_params, _kind, _example) in _DISTRIBUTIONS.items():
    setattr(RandomState, _name, _method(_name, _params, _example))
for _name in _ALIASES:
    setattr(RandomState, _name, _method(_name, (), ""))
del _name, _params, _kind, _example

# ---------------------------------------------------------------- the module-level functions
_rand = RandomState()  # seeded at first use (from rank 0's entropy) unless seed() is called first

seed = _rand.seed
get_state = _rand.get_state
set_state = _rand.set_state
rand = _rand.rand
randn = _rand.randn
randint = _rand.randint
random_integers = _rand.random_integers
choice = _rand.choice
bytes = _rand.bytes
shuffle = _rand.shuffle
permutation = _rand.permutation
random_sample = _rand.random_sample
random = _rand.random
ranf = _rand.ranf
sample = _rand.sample
beta = _rand.beta
binomial = _rand.binomial
chisquare = _rand.chisquare
dirichlet = _rand.dirichlet
exponential = _rand.exponential
f = _rand.f
gamma = _rand.gamma
geometric = _rand.geometric
gumbel = _rand.gumbel
hypergeometric = _rand.hypergeometric
laplace = _rand.laplace
logistic = _rand.logistic
lognormal = _rand.lognormal
logseries = _rand.logseries
multinomial = _rand.multinomial
multivariate_normal = _rand.multivariate_normal
negative_binomial = _rand.negative_binomial
noncentral_chisquare = _rand.noncentral_chisquare
noncentral_f = _rand.noncentral_f
normal = _rand.normal
pareto = _rand.pareto
poisson = _rand.poisson
power = _rand.power
rayleigh = _rand.rayleigh
standard_cauchy = _rand.standard_cauchy
standard_exponential = _rand.standard_exponential
standard_gamma = _rand.standard_gamma
standard_normal = _rand.standard_normal
standard_t = _rand.standard_t
triangular = _rand.triangular
uniform = _rand.uniform
vonmises = _rand.vonmises
wald = _rand.wald
weibull = _rand.weibull
zipf = _rand.zipf

#: NumPy's names darray.random leaves out, and what to use instead.
_ELSEWHERE = {
    **{name: "darray.random.default_rng(seed) (counter-based streams) or darray.random.RandomState(seed) (MT19937)"
       for name in ("MT19937", "PCG64", "PCG64DXSM", "Philox", "SFC64", "BitGenerator", "get_bit_generator",
                    "set_bit_generator")},
    "mtrand": "darray.random's functions (bound to one global RandomState, like numpy.random.mtrand._rand)",
}


def __getattr__(name: str):
    if name in _ELSEWHERE:
        raise AttributeError(message("darray.random", f"NumPy's numpy.random.{name} has no darray counterpart",
                                     name, _ELSEWHERE[name]))
    raise AttributeError(f"module 'darray.random' has no attribute {name!r}")
