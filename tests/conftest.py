"""darray's test harness: one pytest run per rank count.

Tests marked ``pytest.mark.mpi`` (on the function or as a module's
``pytestmark``) are distributed tests. The plain ``python -m pytest`` run
executes every test in-process, on one rank. ``tests/test_ranks.py`` then
launches ONE ``mpiexec`` per rank count (2, 3, 4) that runs all ``mpi`` tests
together; inside that child run (``DARRAY_TEST_CHILD=1``, or any launch under
an MPI launcher with more than one rank) this plugin

- deselects every test not marked ``mpi``, and those whose ``mpi(ranks=...)``
  leaves out this rank count; at 3 and 4 ranks (``THIN_PAIRS_AT``) runs a
  covering subset of each test's (``dtype``, ``layout``) parameter pairs;
- makes the ranks agree on each test's outcome: a test that fails (or errors,
  or skips) on some ranks only is reported failed on every rank, with the
  other ranks' failures shown in rank 0's report (ranks > 0 run ``--tb=no``);
- loads a derandomized hypothesis profile, so every rank draws the same
  examples;
- arms ``faulthandler`` shortly before the outer timeout, so that a hang
  (a rank waiting in a collective the others never reach) dumps every rank's
  stack instead of dying silently.

Local backend: ``DARRAY_TEST_BACKEND=numpy|array_api_strict|torch|cupy`` sets
``DARRAY_BACKEND`` (the default backend of new arrays) before darray is
imported, so the whole suite runs with that library's local blocks (the
variable reaches the ``mpiexec`` runs of ``tests/test_ranks.py`` through the
environment). ``array_api_strict`` stands in for CuPy where no GPU is: it
proves that no NumPy-only call sneaks into darray. Tests that cannot run on a
backend are deselected -- not skipped -- each with its reason (the summary counts
them per reason):

- a test or a whole file (``pytestmark``) carries a marker:
  ``pytest.mark.numpy_only(reason=...)`` (NumPy features, such as ufuncs on
  DArrays, or process-level tests: every other backend), or
  ``pytest.mark.not_on("array_api_strict", "torch", reason=...)`` (NumPy
  semantics the standard leaves open, library gaps; ``distributed=True``:
  only in the ``mpiexec`` runs);
- a parameter case, or a doctest in darray/ (no place for a marker), is named
  in a table here: ``NUMPY_ONLY`` for every other backend, then
  ``STRICT_EXCLUDED`` / ``TORCH_EXCLUDED``. Every run checks every entry
  against the tests it collected: an entry whose file is gone, or whose file
  was collected with no test the entry names, stops the run (a renamed test
  would otherwise run again where it fails, or an entry silently match
  nothing).

Loops over dtypes inside tests use ``darray.testing.backend_dtypes()``. The
header names the backend::

    DARRAY_TEST_BACKEND=array_api_strict python -m pytest -k "not test_ranks" tests

This file must not import darray: the harness proves itself before darray does.
"""

from __future__ import annotations

import faulthandler
import hashlib
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

pytest_plugins = ["pytester"]

# Scripts that tests launch under mpiexec; they run collectives at import, so
# --doctest-modules must not import them (under mpiexec -n 2 that hangs collection).
collect_ignore = ["scripts"]

CHILD_ENV = "DARRAY_TEST_CHILD"
TIMEOUT_ENV = "DARRAY_TEST_MPI_TIMEOUT"
DEFAULT_TIMEOUT = 1200.0
# Set by MPI launchers in each rank; the same list as darray._comm._LAUNCHER_VARS
# (not imported: this file must work before darray does).
_LAUNCHER_ENV = ("PMI_SIZE", "PMI_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS", "PMI_FD")

BACKEND_ENV = "DARRAY_TEST_BACKEND"
if os.environ.get(BACKEND_ENV):  # before any test module imports darray (darray.config reads DARRAY_BACKEND)
    os.environ["DARRAY_BACKEND"] = os.environ[BACKEND_ENV]
TEST_BACKEND = os.environ.get("DARRAY_BACKEND") or "numpy"

from darray._api.numpy import names as _numpy_names

#: Deselected for every local backend but NumPy: parameter cases and doctests (whole tests and files carry
#: ``pytest.mark.numpy_only`` instead).
_UFUNC = "NumPy ufuncs on a DArray (np.sin(x), out=, where=, ndarray <op> DArray) run on NumPy blocks only"
NUMPY_ONLY = {
    **{f"tests/test_numpy_names.py::test_ufunc_names_match_numpy[{name}]": "a NumPy ufunc name without a standard "
       "equivalent: " + _UFUNC for name in _numpy_names.UFUNC_NAMES if name not in _numpy_names.STANDARD_EQUIVALENTS},
    **{f"darray/_api/{path}": "the example runs a ufunc method with NumPy's loops (at, reduceat, accumulate of "
       "maximum/subtract): " + _UFUNC for path in ("ufuncs.py::darray._api.ufuncs", "ufunc_methods.py::darray._api."
                                                   "ufunc_methods.accumulate", "ufunc_methods.py::darray._api."
                                                   "ufunc_methods.at", "ufunc_methods.py::darray._api."
                                                   "ufunc_methods.reduceat")},
    **{path: "the example holds dates or records, which live in NumPy blocks only" for path in (
        "darray/_api/sorting.py::darray._api.sorting.time_keys", "darray/_core/fields.py::darray._core.fields.field",
        "darray/_api/numpy/records.py::darray._api.numpy.records.sort_records")},
    **{f"tests/test_bad_input.py::test_bad_call[{name}-": "a NumPy ufunc name without a standard equivalent "
       "refuses other blocks (TypeError) before looking at shapes: " + _UFUNC
       for name in _numpy_names.UFUNC_NAMES if name not in _numpy_names.STANDARD_EQUIVALENTS},
}

#: Deselected for array_api_strict: parameter cases (whole tests carry ``pytest.mark.not_on``) of NumPy
#: semantics that the Array API standard leaves unspecified or forbids, which darray inherits from the local
#: library (NumPy and torch define them).
STRICT_EXCLUDED = {
    "tests/test_methods.py::test_method_matches_numpy[astype-complex]": "complex -> real casts are forbidden by the "
                                                                        "standard",
    "tests/test_methods.py::test_method_matches_numpy[sum(dtype)-bool]": "the standard sums numbers only: "
                                                                         "array-api-strict refuses sum(bool, dtype=)",
    "tests/test_methods.py::test_method_matches_numpy[view(": "array-api-strict arrays have no views (x.view needs "
                                                              "NumPy, CuPy or torch blocks)",
    **{f"tests/test_elementwise.py::test_type_promotion[{pair}]": "mixed-kind promotion (int with float, uint64 "
       "with int64) is unspecified by the standard" for pair in ("int32-float32", "int8-float32", "uint64-int64")},
    **{f"tests/test_elementwise.py::test_python_scalar_promotion[{case}]": "a Python float/complex/bool scalar with "
       "an integer array is unspecified by the standard" for case in ("int32-2.5", "uint16-2.0", "int64-1j",
                                                                       "int16-True")},
    "tests/test_searching.py::test_where_broadcasting[mixed-kinds": "where with a float and an int branch "
                                                                   "(mixed-kind promotion)",
}

#: Deselected for torch: parameter cases and doctests (whole tests carry ``pytest.mark.not_on``) where torch
#: does otherwise than NumPy where the standard leaves it open, and torch's gaps.
#: (Loops over dtypes skip those torch lacks: darray.testing.backend_dtypes().)
_TORCH_UINT = "torch has no arithmetic kernels for uint16/uint32/uint64 (array-api-compat lists no such dtypes)"
_TORCH_FLOAT32 = "torch promotes integers with floats to its default float32 (NumPy: float64); mixed-kind " \
                 "promotion is unspecified by the standard"
TORCH_EXCLUDED = {
    "tests/test_elementwise.py::test_type_promotion[int32-float32]": _TORCH_FLOAT32,
    **{f"tests/test_elementwise.py::test_type_promotion[{pair}]": _TORCH_UINT
       for pair in ("uint16-uint32", "uint32-int32", "uint64-int64")},
    **{f"tests/test_elementwise.py::test_python_scalar_promotion[{case}]": _TORCH_FLOAT32
       for case in ("int32-2.5", "int64-1j")},
    "tests/test_elementwise.py::test_python_scalar_promotion[uint16-2.0]": _TORCH_UINT,
    "tests/test_reductions.py::test_dtype_argument[sum-uint8-uint16-": _TORCH_UINT,
    "darray/interop.py::darray.interop.to_dask": "dask calls NumPy signatures (axis=, keepdims=) on the chunks",
}
#: Backend -> its own parameter cases and doctests (on top of NUMPY_ONLY).
BACKEND_EXCLUDED = {"array_api_strict": STRICT_EXCLUDED, "torch": TORCH_EXCLUDED}
#: The local backends a ``not_on`` marker may name.
BACKENDS = ("numpy", "array_api_strict", "torch", "cupy")

_verdict_comm_key = pytest.StashKey["object"]()
_fault_file_key = pytest.StashKey["object"]()
_backend_dropped_key = pytest.StashKey[dict]()

# --------------------------------------------------------------- hypothesis --
settings.register_profile("default", deadline=None, max_examples=50)
settings.register_profile("long", parent=settings.get_profile("default"), max_examples=2000)
# Under MPI every rank must draw the same examples and take the same path:
# fixed seed, no example database, no timing-dependent health check.
_MPI_SETTINGS = dict(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("mpi", parent=settings.get_profile("default"), **_MPI_SETTINGS)
# CI (``.ci/run`` sets DARRAY_TEST_DERANDOMIZE=1): the in-process runs draw fixed examples too, so that a landing
# never fails on an example no earlier run drew; plain local runs keep exploring new ones.
settings.register_profile("ci", parent=settings.get_profile("default"), derandomize=True, database=None)
settings.load_profile("ci" if os.environ.get("DARRAY_TEST_DERANDOMIZE") else "default")  # --hypothesis-profile wins


def mpi_timeout() -> float:
    """Seconds one ``mpiexec`` run of the distributed suite may take."""
    return float(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT))


def _world():
    """COMM_WORLD when this process was started by an MPI launcher, else None.

    The plain outer run never initialises MPI because of this file.
    """
    if not (os.environ.get(CHILD_ENV) or any(v in os.environ for v in _LAUNCHER_ENV)):
        return None
    from mpi4py import MPI

    return MPI.COMM_WORLD


def _is_distributed(config) -> bool:
    return config.stash.get(_verdict_comm_key, None) is not None


def _backend_exclusions() -> dict[str, str]:
    if TEST_BACKEND == "numpy":
        return {}
    return {**NUMPY_ONLY, **BACKEND_EXCLUDED.get(TEST_BACKEND, {})}


#: Local backends whose array object has no ``tolist()`` (the standard's lacks it; NumPy's and torch's have it).
_NO_TOLIST = {"array_api_strict"}
_TOLIST = "the docstring example prints the gathered block with .tolist(), a NumPy / torch method the standard's " \
          "array object lacks"


def _doctest_calls_tolist(item) -> bool:
    test = getattr(item, "dtest", None)  # a DoctestItem's parsed examples
    return test is not None and any(".tolist()" in example.source for example in test.examples)


def _marked_out(item) -> str | None:
    """Why a ``numpy_only`` or ``not_on`` marker leaves ``item`` out of this run (None: it stays)."""
    if TEST_BACKEND != "numpy":
        mark = item.get_closest_marker("numpy_only")
        if mark is not None:
            return mark.kwargs.get("reason") or "marked numpy_only"
    for mark in item.iter_markers("not_on"):
        if TEST_BACKEND in mark.args and (not mark.kwargs.get("distributed") or os.environ.get(CHILD_ENV)):
            return mark.kwargs["reason"]
    return None


def _matches(nodeid: str, prefix: str) -> bool:
    """Whether a table entry covers ``nodeid``: a whole test (all its parameters), or a parameter prefix
    (``"...::test_sort_1d[bool"``), or an exact doctest id."""
    return nodeid.startswith(prefix) and (len(nodeid) == len(prefix) or "[" in prefix or nodeid[len(prefix)] in "[:")


def _excluded_by(item, exclusions) -> str | None:
    marked = _marked_out(item)
    if marked is not None:
        return marked
    if TEST_BACKEND in _NO_TOLIST and _doctest_calls_tolist(item):
        return _TOLIST
    for prefix, reason in exclusions.items():
        if _matches(item.nodeid, prefix):
            return reason
    return None


def _bad_not_on(item) -> str | None:
    for mark in item.iter_markers("not_on"):
        if (not mark.args or any(b not in BACKENDS for b in mark.args) or not mark.kwargs.get("reason")
                or set(mark.kwargs) - {"reason", "distributed"}):
            return f"{item.nodeid}: not_on(*backends, reason=..., distributed=False) names backends out of " \
                   f"{BACKENDS}; got {mark.args} {mark.kwargs}"
    return None


def _stale_entries(items, config) -> list[str]:
    """The table entries (every backend's, whatever this run's backend) that name no test.

    An entry whose file is gone, or whose file was collected without any test
    the entry covers, is stale: a renamed test or parameter, which would
    otherwise run again on the backend it fails on (or an entry that never
    matched anything). Entries of files this run did not collect whole (``pytest
    tests/test_x.py``, ``pytest tests/test_y.py::test_z``) are not judged.
    """
    rootpath = config.rootpath.resolve()
    if Path(__file__).resolve() != rootpath / "tests" / "conftest.py":
        return []  # a copy of this file elsewhere (tests/test_harness.py's pytester runs): not darray's tests
    collected: dict[str, list[str]] = {}
    for item in items:
        collected.setdefault(item.nodeid.split("::", 1)[0], []).append(item.nodeid)
    for arg in config.args:  # files named with a test id are collected in part
        if "::" in arg:
            path = (config.invocation_params.dir / arg.split("::", 1)[0]).resolve()
            if path.is_relative_to(rootpath):
                collected.pop(path.relative_to(rootpath).as_posix(), None)
    stale = []
    for table, entries in (("NUMPY_ONLY", NUMPY_ONLY), *((f"BACKEND_EXCLUDED[{b!r}]", t)
                                                        for b, t in BACKEND_EXCLUDED.items())):
        for prefix in entries:
            path = prefix.split("::", 1)[0]
            if not (rootpath / path).is_file():
                stale.append(f"{table}: {prefix} (no file {path})")
            elif path in collected and not any(_matches(nodeid, prefix) for nodeid in collected[path]):
                stale.append(f"{table}: {prefix} (no collected test matches)")
    return stale


def pytest_report_header(config):
    return f"darray local backend: {TEST_BACKEND} (set {BACKEND_ENV}=numpy|array_api_strict|torch)"


def _local_darray_reprs() -> None:
    """In tracebacks and assertion messages, show a DArray without gathering it.

    A DArray's repr gathers (collective), and only rank 0 formats tracebacks:
    a failing test would leave rank 0 waiting in a gather the others never
    enter, until the run's timeout. The repr pytest writes there is local.
    """
    from _pytest._io import saferepr

    from darray import DArray

    plain = saferepr.SafeRepr.repr_instance

    def repr_instance(self, x, level):
        if isinstance(x, DArray):
            return f"<DArray shape={x.shape} dtype={x.dtype} layout={x.layout} (not gathered in a traceback)>"
        return plain(self, x, level)

    saferepr.SafeRepr.repr_instance = repr_instance


@pytest.hookimpl(trylast=True)  # after hypothesis' plugin loaded --hypothesis-profile
def pytest_configure(config):
    world = _world()
    if world is None or (world.size == 1 and not os.environ.get(CHILD_ENV)):
        return
    config.stash[_verdict_comm_key] = world.Dup()  # keeps the harness's messages apart
    _local_darray_reprs()

    name = settings.get_current_profile_name()
    if name in ("default", "ci"):
        settings.load_profile("mpi")
    elif name != "mpi":
        settings.register_profile(f"{name}-mpi", parent=settings.get_profile(name), **_MPI_SETTINGS)
        settings.load_profile(f"{name}-mpi")

    # Dump every rank's stacks (to the real stderr, not pytest's capture) and
    # exit before the outer run kills the job; mpiexec then tears it down.
    timeout = mpi_timeout()
    fault_file = os.fdopen(os.dup(2), "w")
    config.stash[_fault_file_key] = fault_file
    faulthandler.dump_traceback_later(max(1.0, timeout - max(10.0, 0.05 * timeout)), exit=True, file=fault_file)


#: File -> [seconds, tests] of this run (setup + call + teardown), for the summary's slowest files.
_file_times: dict[str, list] = {}
#: How many of the slowest files the summary names (``darray time ...`` lines; the launcher relays a child's).
#: (``DARRAY_TEST_SLOWEST_FILES=200`` names more.)
SLOWEST_FILES = int(os.environ.get("DARRAY_TEST_SLOWEST_FILES", "12"))


def pytest_runtest_logreport(report):
    entry = _file_times.setdefault(report.nodeid.split("::", 1)[0], [0.0, 0])
    entry[0] += report.duration
    entry[1] += report.when == "call"


def _slowest_files() -> list[str]:
    ranked = sorted(_file_times.items(), key=lambda item: -item[1][0])[:SLOWEST_FILES]
    return [f"darray time {seconds:7.1f} s  {path} ({tests} tests)" for path, (seconds, tests) in ranked]


#: One line per stage of the run (``darray stage ...``): the in-process run, then each mpiexec run of
#: tests/test_ranks.py (which appends its line through the ``stage_lines`` fixture).
_stage_lines: list[str] = []


@pytest.fixture(scope="session")
def stage_lines() -> list[str]:
    """The stage lines the summary prints last (a distributed stage appends its own)."""
    return _stage_lines


def _in_process_stage(terminalreporter, ranks: int) -> str:
    """This run's stage line: its tests (not the distributed stages that ran as tests) and their time."""
    counts: dict[str, int] = {}
    seconds = 0.0
    for outcome in ("passed", "failed", "skipped", "error", "xfailed", "xpassed"):
        for report in terminalreporter.stats.get(outcome, []):
            if "test_distributed_suite" in getattr(report, "nodeid", "test_distributed_suite"):
                continue
            if outcome == "passed" and report.when != "call":
                continue
            counts[outcome] = counts.get(outcome, 0) + 1
    for path, (duration, _) in _file_times.items():
        if not path.endswith("test_ranks.py"):
            seconds += duration
    said = ", ".join(f"{count} {outcome}" for outcome, count in counts.items() if count) or "no tests"
    where = "1 rank (in-process)" if ranks == 1 else f"{ranks} ranks"
    return f"darray stage  {where}  {said} in {seconds:.0f} s"


def pytest_terminal_summary(terminalreporter, config):
    if not config.getoption("no_summary"):  # the quiet ranks of a distributed run
        for line in _slowest_files():
            terminalreporter.write_line(line)
        if not os.environ.get(CHILD_ENV):
            ranks = config.stash[_verdict_comm_key].size if _verdict_comm_key in config.stash else 1
            for line in [_in_process_stage(terminalreporter, ranks), *_stage_lines]:
                terminalreporter.write_line(line)
    ranks_dropped = {} if config.getoption("no_summary") else config.stash.get(_ranks_dropped_key, {})
    for reason, count in sorted(ranks_dropped.items(), key=lambda item: -item[1]):
        terminalreporter.write_line(f"darray at {config.stash[_verdict_comm_key].size} ranks: {count:4d} tests "
                                    f"deselected: {reason}")
    dropped = config.stash.get(_backend_dropped_key, {})
    if dropped:
        terminalreporter.write_line(f"darray local backend {TEST_BACKEND}: {sum(dropped.values())} tests deselected "
                                    f"(numpy_only / not_on markers; tests/conftest.py tables):")
        for reason, count in sorted(dropped.items(), key=lambda item: -item[1]):
            terminalreporter.write_line(f"  {count:4d}  {reason}")


def pytest_unconfigure(config):
    fault_file = config.stash.get(_fault_file_key, None)
    if fault_file is not None:
        faulthandler.cancel_dump_traceback_later()
        fault_file.close()


def pytest_collection_modifyitems(config, items):
    # Before -k / -m / --deselect drop anything (pytest's own hooks run after a conftest's).
    stale = _stale_entries(items, config)
    if stale:
        raise pytest.UsageError("tests/conftest.py excludes tests that were not collected (renamed or removed? "
                                "update the table):\n  " + "\n  ".join(stale))
    bad = [problem for problem in map(_bad_not_on, items) if problem is not None]
    if bad:
        raise pytest.UsageError("\n".join(bad))
    exclusions = _backend_exclusions()
    if exclusions or TEST_BACKEND != "numpy":
        keep, drop, reasons = [], [], {}
        for item in items:
            reason = _excluded_by(item, exclusions)
            if reason is None:
                keep.append(item)
            else:
                drop.append(item)
                reasons[reason] = reasons.get(reason, 0) + 1
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
            config.stash[_backend_dropped_key] = reasons
    if not _is_distributed(config):
        return
    size = config.stash[_verdict_comm_key].size
    thinned = _thinned_pairs(items) if size in THIN_PAIRS_AT else set()
    keep, drop, reasons = [], [], {}
    for item in items:
        reason = _not_at_this_rank_count(item, size, thinned)
        (keep if reason is None else drop).append(item)
        if reason is not None and reason != _NOT_MPI:
            reasons[reason] = reasons.get(reason, 0) + 1
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
    config.stash[_ranks_dropped_key] = reasons


# ------------------------------------------------- what each rank count runs --
#: Rank counts at which a test parametrized over both ``dtype`` and ``layout`` runs a covering subset of the
#: pairs instead of all of them: every dtype and every layout once (at least), per test and other parameters.
#: The full cross product runs in-process, at 2 ranks and in both strict-block stages. What the rank count
#: changes is the layout (odd counts, a middle block, 2x2 grids: each layout still runs at 3 and 4 ranks, with
#: one dtype); what the dtype changes is the local kernel and the MPI datatype of the messages, which the same
#: layouts' paths exercise at 2 ranks (uneven, empty, last, first-empty and thin blocks exist there too).
#: ``DARRAY_TEST_ALL_PAIRS=1`` runs every pair at every rank count.
THIN_PAIRS_AT = () if os.environ.get("DARRAY_TEST_ALL_PAIRS") else (3, 4)
_THIN = "dtype x layout pairs thinned at 3-4 ranks to each dtype and each layout once (all pairs at 1-2 ranks)"
_NOT_MPI = "not marked mpi"
_ranks_dropped_key = pytest.StashKey[dict]()


def _thinned_pairs(items) -> set:
    """The items (by id) of (dtype, layout) grids that :data:`THIN_PAIRS_AT` leaves out.

    Per test function and values of its other parameters, with ``m`` dtypes
    and ``k`` layouts (in collection order, the same on every rank), the pair
    ``(i, j)`` stays when ``i % k == j`` (more dtypes than layouts) or
    ``j % m == i``: ``max(m, k)`` pairs, every dtype and every layout.
    """
    groups: dict = {}
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "dtype" in params and "layout" in params:
            rest = tuple((k, str(v)) for k, v in params.items() if k not in ("dtype", "layout"))
            groups.setdefault((item.originalname, item.path, rest), []).append(item)
    out = set()
    for group in groups.values():
        dtypes = list(dict.fromkeys(str(it.callspec.params["dtype"]) for it in group))
        layouts = list(dict.fromkeys(str(it.callspec.params["layout"]) for it in group))
        m, k = len(dtypes), len(layouts)
        for it in group:
            i, j = dtypes.index(str(it.callspec.params["dtype"])), layouts.index(str(it.callspec.params["layout"]))
            if (i % k != j) if m > k else (j % m != i):
                out.add(id(it))
    return out


def _not_at_this_rank_count(item, size: int, thinned: set) -> str | None:
    """Why ``item`` does not run in this distributed run of ``size`` ranks (None: it runs).

    ``pytest.mark.mpi(ranks=(2,))`` limits a test to those rank counts (it
    still runs in-process); the module says why.
    """
    marks = list(item.iter_markers("mpi"))
    if not marks:
        return _NOT_MPI
    for mark in marks:
        ranks = mark.kwargs.get("ranks")
        if ranks is not None and size not in ranks:
            return f"marked mpi(ranks={tuple(ranks)})"
    if id(item) in thinned:
        return _THIN
    return None


def pytest_collection_finish(session):
    """Under mpiexec: every rank must have collected the same tests, or every rank stops here.

    A rank whose collection failed (a module that did not import) would
    otherwise leave while the others wait for it in the first collective.
    """
    comm = session.config.stash.get(_verdict_comm_key, None)
    if comm is None:
        return
    ids = "\n".join(item.nodeid for item in session.items)
    mine = (int(session.testsfailed), hashlib.sha256(ids.encode()).hexdigest())
    every = comm.allgather(mine)
    if len(set(every)) > 1:
        detail = "; ".join(f"rank {r}: {n} collection errors, test list {h[:8]}" for r, (n, h) in enumerate(every))
        session.config.get_terminal_writer().line(f"ranks collected different tests ({detail}); stopping every rank",
                                                  red=True)
        session.testsfailed = max(int(session.testsfailed), 1)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    comm = item.config.stash.get(_verdict_comm_key, None)
    if comm is not None:
        _agree_across_ranks(comm, report)
    return report


def _agree_across_ranks(comm, report) -> None:
    """Make ``report``'s outcome the same on every rank.

    If any rank failed, every rank fails; a mix of passed and skipped is a
    failure too (the ranks took different paths). Since pytest only runs a
    test's call phase after a passed setup, agreeing on setup also keeps the
    ranks from entering the test body unevenly.
    """
    if _same_everywhere(comm, report.outcome):
        return
    text = "" if report.passed else _report_text(report)
    outcomes = comm.allgather((report.outcome, text[-4000:]))  # every rank saw the difference: all gather texts
    failed = [r for r, (outcome, _) in enumerate(outcomes) if outcome == "failed"]
    if failed:
        others = [r for r in failed if r != comm.rank]
        summary = f"{report.when} failed on rank(s) {failed} of {comm.size}"
    else:
        others = [r for r, (outcome, _) in enumerate(outcomes) if outcome != report.outcome]
        summary = "ranks disagree: " + ", ".join(f"rank {r} {o}" for r, (o, _) in enumerate(outcomes))
    details = "\n".join(f"---------- rank {r}: {outcomes[r][0]} ----------\n{outcomes[r][1]}" for r in others)
    if report.failed:
        report.sections.append((f"{summary}; the others' reports", details))
    else:
        report.outcome = "failed"
        report.longrepr = f"{summary}; this rank ({comm.rank}) {outcomes[comm.rank][0]}\n{details}"
        if hasattr(report, "wasxfail"):
            del report.wasxfail


#: Outcome codes the ranks compare after every phase of every test (anything else counts as "failed").
_OUTCOME_CODES = {"passed": 0, "skipped": 1, "failed": 2}


def _same_everywhere(comm, outcome: str) -> bool:
    """Whether every rank had ``outcome``: one non-blocking allgather of a byte, polled with yields.

    MPICH's blocking collectives spin on their core; under ``mpiexec -n 4``
    on 2 cores a rank that finished its test first would take the core the
    others need to finish theirs. The wait yields it instead.
    """
    import numpy as np

    mine = np.array([_OUTCOME_CODES.get(outcome, 2)], dtype=np.uint8)
    every = np.empty(comm.size, dtype=np.uint8)
    request = comm.Iallgather(mine, every)
    while not request.Test():
        os.sched_yield()
    return bool((every == mine[0]).all())


def _report_text(report) -> str:
    if isinstance(report.longrepr, tuple):  # a skip: (path, lineno, reason)
        return str(report.longrepr[2])
    return report.longreprtext


# ------------------------------------------------ fixtures of distributed tests --
@pytest.fixture
def comm():
    """darray's default communicator (the world under ``mpiexec``)."""
    import darray

    return darray.default_communicator()


@pytest.fixture
def small_auto_threshold(monkeypatch):
    """Let ``split="auto"`` distribute small test arrays (the same setting on every rank)."""
    import darray

    monkeypatch.setattr(darray.config, "min_distributed_size", 4)


@pytest.fixture
def shared(tmp_path, comm) -> Path:
    """One directory every rank sees: rank 0's ``tmp_path``, broadcast."""
    import numpy as np

    buf = np.zeros(4096, dtype=np.uint8)
    if comm.rank == 0:
        data = str(tmp_path).encode()
        buf[:len(data)] = np.frombuffer(data, dtype=np.uint8)
    path = Path(bytes(np.asarray(comm.bcast(buf, 0))).rstrip(b"\0").decode())
    comm.barrier()
    return path


# ------------------------------------------------------------- the launcher --
@pytest.fixture(scope="session")
def mpiexec_pytest(pytestconfig):
    """Run pytest under ``mpiexec -n nprocs``; return ``(returncode, output)``.

    MPMD launch: rank 0 prints the full report, the other ranks run quietly.
    Rank 0's per-file progress lines (``tests/test_x.py .... [ 12%]``) are
    shown on the terminal as they come, prefixed with the rank count, so a
    long distributed stage never looks stuck; so are its slowest files
    (``darray time ...``) at the end. Skips (fails under ``CI``) when
    mpi4py or mpiexec is missing.
    """
    _require(_has_module("mpi4py"), "mpi4py is not installed (pip install -e '.[test]')")
    mpiexec = _find_mpiexec()
    _require(mpiexec is not None, "no mpiexec next to the Python interpreter or on PATH")
    capture = pytestconfig.pluginmanager.getplugin("capturemanager")
    terminal = pytestconfig.pluginmanager.getplugin("terminalreporter")

    def show(line: str) -> None:
        if terminal is None or capture is None:
            return
        with capture.global_and_fixture_disabled():
            terminal.write_line(line)

    def run(nprocs: int, args: list[str], cwd: Path) -> tuple[int, str]:
        pytest_cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
        quiet = ["-q", "--tb=no", "--no-summary", "--no-header", "--disable-warnings"]
        cmd = [mpiexec, "-n", "1", *pytest_cmd, *args]
        if nprocs > 1:
            cmd += [":", "-n", str(nprocs - 1), *pytest_cmd, *quiet, *args]
        env = dict(os.environ, **{CHILD_ENV: "1", TIMEOUT_ENV: str(mpi_timeout())})
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, errors="replace", start_new_session=True,
        )
        timed_out = threading.Event()

        def expire() -> None:
            timed_out.set()
            _kill_group(proc)

        timer = threading.Timer(mpi_timeout(), expire)
        timer.start()
        lines = []
        try:
            for line in proc.stdout:
                lines.append(line)
                if _PROGRESS.match(line) or line.startswith("darray time "):
                    show(f"  [mpiexec -n {nprocs}] {line.rstrip()}")
            proc.wait()
        finally:
            timer.cancel()
        out = "".join(lines)
        if timed_out.is_set():
            pytest.fail(
                f"mpiexec -n {nprocs}: no result after {mpi_timeout():.0f} s (set {TIMEOUT_ENV} to change); "
                f"output tail:\n{out[-8000:]}",
                pytrace=False,
            )
        return proc.returncode, out

    return run


#: A per-file progress line of rank 0's pytest: ``tests/test_x.py ..F.. [ 12%]``.
_PROGRESS = re.compile(r"^\S+\.py \S.*\[\s*\d+%\]\s*$")


def _kill_group(proc: subprocess.Popen) -> None:
    """End the process group of ``proc``: SIGTERM, then SIGKILL after 10 s."""
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def _find_mpiexec() -> str | None:
    beside = Path(sys.executable).parent / "mpiexec"  # the venv's, matching its mpi4py
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    from shutil import which

    return which("mpiexec")


def _has_module(name: str) -> bool:
    from importlib.util import find_spec

    return find_spec(name) is not None


def _require(condition: bool, reason: str) -> None:
    if condition:
        return
    if os.environ.get("CI"):  # CI installs the test extra: a skip there would hide the MPI suite
        pytest.fail(f"{reason} (fails instead of skipping because CI is set)", pytrace=False)
    pytest.skip(reason)
