"""Which of NumPy's public names darray has, and why the others are not there: ONE table.

Every public NumPy name (``numpy.__all__``; ``numpy.linalg``, ``numpy.fft``
and ``numpy.random`` (legacy functions included); the ``numpy.ndarray``
methods and attributes) is, in darray:

- **distributed**: in darray's namespace, computed block by block;
- **local-only** (:data:`LOCAL_ONLY`): in darray's namespace, but it gathers
  the data (or every rank computes the whole): for small arrays, as its
  docstring says;
- **NumPy's own**: the very NumPy object (dtypes, ``errstate``, ``ndindex``,
  ``issubdtype``: nothing in it holds an array);
- **excluded** (:data:`EXCLUDED`): not in darray, with the reason and the
  alternative.

``tests/test_numpy_surface.py`` fails on any public NumPy name that is
neither in darray nor in :data:`EXCLUDED`, and on an exclusion that darray
now has; ``docs/numpy.md`` is generated from :func:`coverage`
(``python docs/_numpy_coverage.py``).

Examples
--------
>>> import darray
>>> rows = coverage(darray)
>>> rows["numpy"]["str_"][0], rows["numpy"]["sum"][0]
('excluded', 'distributed')
"""

from __future__ import annotations

import inspect
from types import ModuleType

import numpy

from ..._core.methods import EXCLUDED as METHOD_EXCLUDED

__all__ = ["EXCLUDED", "LOCAL_ONLY", "SECTIONS", "coverage", "missing", "numpy_names", "stale"]

_DTYPE = ("not a darray dtype: distributed blocks hold the Array API dtypes (bool, int8-64, uint8-64, float32/64, "
          "complex64/128) and NumPy's float16, datetime64, timedelta64 and records of those; strings, objects and "
          "long doubles have no block form (MPI moves fixed-size numbers); use NumPy for this one")
_BUSDAY = ("business-day calendars are outside darray's dates (which have NumPy's arithmetic, comparisons, min/max "
           "and sort); apply numpy.{0} to x.local per block, or on numpy.asarray(x)")
_SUBMODULE = "a NumPy submodule outside darray's scope; use numpy.{0} on gathered (small) arrays"
_NUMPY_TOOL = "NumPy's own build/installation/runtime tool, about NumPy itself; use numpy.{0}"
_ONE_BUFFER = ("about one process's memory buffer; a DArray is one block per rank: ask it of x.local (this rank's "
               "block)")
_BIT_GENERATOR = ("darray.random draws counter-based streams that give the same numbers on any number of ranks; "
                  "NumPy's per-process bit generators cannot (use darray.random.default_rng / RandomState)")

#: NumPy names darray does not have: name (``"linalg.eig"`` for submodules, ``"ndarray.x"`` for methods are
#: in :data:`darray._core.methods.EXCLUDED`) -> the reason and the alternative.
EXCLUDED: dict[str, str] = {
    **{name: _DTYPE for name in ("bytes_", "character", "clongdouble", "complex256", "flexible", "float128",
                                 "longdouble", "object_", "str_")},
    **{name: _BUSDAY.format(name) for name in ("busday_count", "busday_offset", "busdaycalendar", "is_busday")},
    "datetime_as_string": ("returns strings, which darray does not distribute; use "
                           "numpy.datetime_as_string(x.local) per block, or on numpy.asarray(x)"),
    **{name: _SUBMODULE.format(name) for name in ("char", "core", "ctypeslib", "dtypes", "f2py", "ma", "polynomial",
                                                  "rec", "strings", "typing")},
    "testing": ("numpy.testing asserts on NumPy arrays; darray.testing has darray's (assert_equal compares a DArray "
                "with a NumPy array block by block, assert_raises_everywhere checks every rank raises)"),
    **{name: _NUMPY_TOOL.format(name) for name in ("get_include", "show_config", "show_runtime", "test", "info",
                                                   "getbufsize", "setbufsize")},
    "ScalarType": "NumPy's registry of its scalar types (strings, objects, float16 included); use numpy.ScalarType",
    "sctypeDict": "NumPy's registry of its scalar types (strings, objects, float16 included); use numpy.sctypeDict",
    "typecodes": "NumPy's registry of type characters (all its dtypes); use numpy.typecodes",
    "matrix": "numpy.matrix is discouraged by NumPy itself; DArray (darray.ndarray) is the one array type",
    "asmatrix": "numpy.matrix is discouraged by NumPy itself; use darray.asarray",
    "bmat": "numpy.matrix is discouraged by NumPy itself; use darray.block / concat",
    "recarray": "record (structured) dtypes are not darray dtypes; use one DArray per field",
    "record": "record (structured) dtypes are not darray dtypes; use one DArray per field",
    "memmap": ("darray.load reads each rank's region of a .npy file; a memory map is one process's view of one "
               "file: use numpy.memmap on x.local-sized regions"),
    "savez": ("a .npz is a zip archive written by one process; darray.io.save writes a zarr store every rank "
              "writes its blocks into (several arrays: one store each, or save each with darray.save)"),
    "savez_compressed": ("a .npz is a zip archive written by one process; darray.io.save writes a compressed zarr "
                         "store every rank writes its blocks into"),
    "may_share_memory": _ONE_BUFFER,
    "shares_memory": _ONE_BUFFER,
    "require": "requirements on one buffer's flags; every block is C-contiguous, aligned and writeable",
    "nested_iters": "element-by-element iteration in Python over one buffer; iterate x.local (this rank's block)",
    "flatiter": "NumPy's iterator type; DArray.flat is darray's own (darray._core.methods.FlatIter)",
    "frompyfunc": "makes a NumPy ufunc from a Python function; apply it to x.local blocks (elementwise, no halo)",
    **{f"random.{name}": _BIT_GENERATOR for name in ("BitGenerator", "MT19937", "PCG64", "PCG64DXSM", "Philox",
                                                     "SFC64")},
    "broadcast": ("NumPy's broadcast object iterates over element tuples in Python; use darray.broadcast_shapes or "
                  "darray.broadcast_arrays"),
    "fromregex": ("parses a text file with a regular expression into a structured array (no darray dtype); use "
                  "numpy.fromregex and darray.asarray on the fields"),
}

_GATHERS_MATRIX = "gathers the matrix (refused above darray.linalg.GATHER_LIMIT elements)"

#: Names darray has that gather the data or compute the whole on every rank: name -> what it costs.
LOCAL_ONLY: dict[str, str] = {
    "ndenumerate": "gathers the array onto every rank, then iterates in Python",
    "nditer": "gathers each array onto every rank, then iterates in Python (reading only: writes are refused)",
    "savetxt": "gathers the array onto rank 0, which writes the text (at most io.numpy_files.TEXT_MAX_ELEMENTS)",
    "loadtxt": "every rank parses the whole text file, then keeps its block",
    "fromiter": "every rank consumes the iterable, then keeps its block",
    "genfromtxt": "every rank parses the whole text file, then keeps its block",
    **{f"linalg.{name}": _GATHERS_MATRIX for name in ("cholesky", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv",
                                                      "matrix_rank", "pinv", "slogdet", "solve", "tensorinv",
                                                      "tensorsolve")},
    "linalg.cond": "p None/2/-2: singular values (TSQR for tall or wide matrices); other p " + _GATHERS_MATRIX,
    "linalg.lstsq": "TSQR for tall-skinny a (m >= (n + k) * ranks); other shapes " + _GATHERS_MATRIX,
}

#: Section title -> (NumPy module or class, darray attribute path).
SECTIONS: dict[str, tuple[str, str]] = {
    "numpy": ("numpy", ""),
    "numpy.linalg": ("numpy.linalg", "linalg"),
    "numpy.fft": ("numpy.fft", "fft"),
    "numpy.random": ("numpy.random", "random"),
    "numpy.ndarray": ("numpy.ndarray", "DArray"),
}


def numpy_names() -> dict[str, list[str]]:
    """Every public NumPy name per section (``__all__`` of the modules; public attributes of ``ndarray``)."""
    out = {}
    for section, (path, _) in SECTIONS.items():
        obj = numpy
        for part in path.split(".")[1:]:
            obj = getattr(obj, part)
        names = getattr(obj, "__all__", None) if not inspect.isclass(obj) else None
        if names is None:
            names = [n for n in dir(obj) if not n.startswith("_")]
        out[section] = sorted(n for n in names if not n.startswith("_"))
    return out


_ABSENT = object()


def _key(section: str, name: str) -> str:
    return name if section == "numpy" else f"{section.split('.', 1)[1]}.{name}"


def _resolve(namespace: ModuleType, path: str):
    obj = namespace
    for part in filter(None, path.split(".")):
        obj = getattr(obj, part, None)
    return obj


def coverage(namespace: ModuleType) -> dict[str, dict[str, tuple[str, str]]]:
    """Section -> NumPy name -> (status, note) for darray's ``namespace`` (the ``darray`` module).

    status: ``"distributed"``, ``"local-only"``, ``"NumPy's own"``,
    ``"excluded"`` or ``"missing"`` (neither
    in darray nor in the table).
    """
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for section, names in numpy_names().items():
        path = SECTIONS[section][1]
        home = _resolve(namespace, path)
        numpy_home = numpy
        for part in section.split(".")[1:]:
            numpy_home = getattr(numpy_home, part)
        rows = {}
        for name in names:
            key = _key(section, name)
            ours = getattr(home, name, _ABSENT) if home is not None else _ABSENT
            if section == "numpy" and name not in namespace.__all__:
                ours = _ABSENT  # the public namespace: not a submodule some import loaded (darray.testing)
            if section == "numpy.ndarray" and name in METHOD_EXCLUDED:
                rows[name] = ("excluded", METHOD_EXCLUDED[name].reason)
            elif ours is not _ABSENT:
                if key in LOCAL_ONLY:
                    rows[name] = ("local-only", LOCAL_ONLY[key])
                elif section != "numpy.ndarray" and ours is getattr(numpy_home, name, None):
                    rows[name] = ("NumPy's own", "the NumPy object itself (no array in it)")
                else:
                    rows[name] = ("distributed", "")
            elif key in EXCLUDED:
                rows[name] = ("excluded", EXCLUDED[key])
            else:
                rows[name] = ("missing", "")
        out[section] = rows
    return out


def missing(namespace: ModuleType) -> list[str]:
    """NumPy names neither in darray nor in :data:`EXCLUDED` (must be empty)."""
    return [_key(s, n) for s, rows in coverage(namespace).items() for n, (status, _) in rows.items()
            if status == "missing"]


def stale(namespace: ModuleType) -> list[str]:
    """Entries of :data:`EXCLUDED` that darray now has (to remove from the table), or that NumPy lacks."""
    names = {_key(s, n) for s, ns in numpy_names().items() for n in ns}
    rows = coverage(namespace)
    have = {_key(s, n) for s, r in rows.items() for n, (status, _) in r.items()
            if status != "excluded"}
    return sorted(k for k in EXCLUDED if k in have or k not in names)
