"""Random DArrays: ``darray.random``, NumPy's ``numpy.random`` for distributed arrays.

Two APIs, as in NumPy:

- :func:`default_rng` / :class:`Generator`: counter-based streams (detailed
  in ``darray/random/_counter.py``'s docstring); the global array depends
  only on the seed and the call sequence, never on the number of ranks or the
  layout, and every rank computes only its own block. Not NumPy's
  ``default_rng`` numbers.
- NumPy's legacy API: :func:`seed`, :func:`rand`, :func:`randn`,
  :func:`randint`, :func:`normal`, :func:`choice`, :func:`shuffle`, ...
  bound to one global :class:`RandomState`, as ``numpy.random``'s functions
  are bound to ``numpy.random.mtrand._rand``. Results of fewer than
  ``darray.config.min_distributed_size`` elements are NumPy's numbers bit for
  bit (the MT19937 state advancing exactly as NumPy's); larger ones come from
  counter-based streams keyed by four words of the legacy stream, the same on
  any number of ranks. The guide's page "From a NumPy script to darray" says
  exactly when darray gives NumPy's numbers; ``darray/random/_legacy.py``'s
  docstring says why.

Examples
--------
>>> import darray as np
>>> np.random.seed(0)
>>> np.random.rand(3).tolist()
[0.5488135039273248, 0.7151893663724195, 0.6027633760716439]
>>> x = np.random.default_rng(42).standard_normal((1000, 10), split=1)
>>> y = np.random.default_rng(42).standard_normal((1000, 10), split=0)
>>> bool(np.all(x == y))                               # same global array
True
"""

from __future__ import annotations

import sys
import types

from . import _counter
from ._counter import _LOOP_MIN_RUN, Generator, _philox, _runs, _stream_words, default_rng
from ._legacy import (
    RandomState, SeedSequence, beta, binomial, bytes, chisquare, choice, dirichlet, exponential, f, gamma, geometric,
    get_state, gumbel, hypergeometric, laplace, logistic, lognormal, logseries, multinomial, multivariate_normal,
    negative_binomial, noncentral_chisquare, noncentral_f, normal, pareto, permutation, poisson, power, rand, randint,
    randn, random, random_integers, random_sample, ranf, rayleigh, sample, seed, set_state, shuffle, standard_cauchy,
    standard_exponential, standard_gamma, standard_normal, standard_t, triangular, uniform, vonmises, wald, weibull,
    zipf)
from ._legacy import __getattr__  # NumPy names left out: an error naming the alternative

__all__ = [
    "Generator", "RandomState", "SeedSequence", "beta", "binomial", "bytes", "chisquare", "choice", "default_rng",
    "dirichlet", "exponential", "f", "gamma", "geometric", "get_state", "gumbel", "hypergeometric", "laplace",
    "logistic", "lognormal", "logseries", "multinomial", "multivariate_normal", "negative_binomial",
    "noncentral_chisquare", "noncentral_f", "normal", "pareto", "permutation", "poisson", "power", "rand", "randint",
    "randn", "random", "random_integers", "random_sample", "ranf", "rayleigh", "sample", "seed", "set_state",
    "shuffle", "standard_cauchy", "standard_exponential", "standard_gamma", "standard_normal", "standard_t",
    "triangular", "uniform", "vonmises", "wald", "weibull", "zipf",
]


class _Package(types.ModuleType):
    """``darray.random`` itself: setting the tunable ``_LOOP_MIN_RUN`` here sets it where it is read (``_counter``)."""

    def __setattr__(self, name, value):
        if name == "_LOOP_MIN_RUN":
            setattr(_counter, name, value)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
