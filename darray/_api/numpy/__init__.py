"""NumPy's functions outside the Array API standard, for DArrays: ``import darray as np`` keeps NumPy scripts running.

One module per concern; each function has NumPy's signature and semantics,
and most are registered for ``numpy.<name>(x)`` on DArrays
(``__array_function__``) with one decorator,
:func:`~darray._api.numpy._common.numpy_function`:

- :mod:`.stacking` (``hstack``, ``split``, ``ravel``, ``atleast_2d``, ...),
  :mod:`.edit` (``append``, ``delete``, ``insert``, ``block``, ``r_``, ...),
  :mod:`.arrange` (``rot90``, ``put``), :mod:`.select` (``select``,
  ``choose``, ``compress``, ...), :mod:`.partition`, :mod:`.sets`
  (``intersect1d``, ...), :mod:`.bits` (``packbits``);
- :mod:`.products` (``dot``, ``vdot``, ``inner``, ``cross``, ``kron``,
  ``trace``, ``diag``), :mod:`.linalg` (the rest of ``numpy.linalg``);
- :mod:`.statistics` (``average``, ``cov``, ``corrcoef``, ``bincount``,
  ``digitize``), :mod:`.histograms`, :mod:`.nanfunctions`,
  :mod:`.reductions` (``where=``, ``initial=``, ``out=`` of reductions);
- :mod:`.mathematical` (``nan_to_num``, ``angle``, ``around``, ``interp``,
  ``i0``, ``unwrap``), :mod:`.scimath` (``numpy.emath``), :mod:`.convolve`,
  :mod:`.poly` (legacy polynomials), :mod:`.apply` (``vectorize``,
  ``apply_along_axis``);
- :mod:`.creation` (``array``, ``logspace``, windows, triangle indices),
  :mod:`.index_tricks` (``mgrid``, ``ix_``, ...), :mod:`.misc` (``ndarray``,
  ``errstate``, ...);
- :mod:`.protocols`: the NumPy functions computed by darray's standard ones
  (``numpy.mean``, ``numpy.cumsum``, ``numpy.einsum``, ...);
- :mod:`.names`: NumPy's names in darray's namespace; :mod:`.coverage`: the
  table of NumPy names darray leaves out, with reasons.

The package imports nothing itself: ``darray/__init__.py`` assembles the
namespace from these modules, in order (``protocols`` registers the generic
adapters that later modules may replace).
"""
