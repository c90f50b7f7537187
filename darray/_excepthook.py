"""An uncaught exception whose traceback passes through darray: the user's frames, darray's folded into a line.

``python job.py`` with a mistake in ``job.py`` (``y = x[:, :10] + x``) prints
the frames of the script, the line that called darray and the error, with
darray's own frames in between folded into one line
(:func:`darray._errors.format_error`)::

    Traceback (most recent call last):
      File "job.py", line 4, in <module>
        y = x[:, :10] + x
            ~~~~~~~~~~^~~
      [5 frames inside darray hidden; DARRAY_DEBUG=1 shows them]
    ValueError: add: shapes cannot be broadcast together; got ((64, 10), (64, 64)), ...

:func:`install` (run by ``import darray``) makes :func:`excepthook`
``sys.excepthook`` and keeps the hook it replaced, which gets everything
darray does not print itself, unchanged:

- ``KeyboardInterrupt`` (and ``SystemExit``, which never reaches a hook);
- a traceback with no frame of darray's (Python's own traceback);
- every exception with ``DARRAY_DEBUG=1`` (Python's full traceback);
- every exception when the hook replaced was not Python's own
  (``sys.__excepthook__``): a hook installed before darray (a crash
  reporter, a coloured traceback, a kernel's) keeps its output as it was.

Under MPI with more than one rank, :mod:`darray._comm.failure` hands in its
``report`` (:func:`install` with ``report``), which prints one report for the
whole job and ends it; it returns False on one rank, where this module's
rule applies. IPython and Jupyter print a cell's traceback themselves,
without ``sys.excepthook``: darray's frames show there (IPython's ``%xmode``
shortens them).

>>> import sys
>>> install()
>>> sys.excepthook is excepthook
True
"""

from __future__ import annotations

import sys
from typing import Callable

from . import _debug
from ._errors import fold_internal

__all__ = ["install", "excepthook"]

#: The hook :func:`install` replaced, which gets what darray does not print.
_previous: Callable | None = None
#: MPI's one report for the job (``darray._comm.failure.report``): True when it printed.
_report: Callable | None = None


def install(report: Callable | None = None) -> None:
    """Make :func:`excepthook` ``sys.excepthook`` (once); ``report`` (MPI's) reports first from now on."""
    global _previous, _report
    if report is not None:
        _report = report
    if _previous is None:
        _previous = sys.excepthook
        sys.excepthook = excepthook


def excepthook(kind, value, tb) -> None:
    """``sys.excepthook``: MPI's report, else darray's frames folded, else the hook installed before darray."""
    previous = _previous or sys.__excepthook__
    try:
        if _report is not None and _report(kind, value, tb):
            return
        if _folds(kind, previous):
            if value is None:
                value = kind()
            if value.__traceback__ is None and tb is not None:
                value = value.with_traceback(tb)
            text, hidden = fold_internal(value)
            if hidden:
                sys.stderr.write(text)
                sys.stderr.flush()
                return
    except Exception:  # (formatting failed) Python's own traceback, or the hook's before darray
        pass
    previous(kind, value, tb)


def _folds(kind, previous) -> bool:
    """Whether darray prints this exception itself, folded (module docstring)."""
    return (previous is sys.__excepthook__ and not _debug.enabled
            and not issubclass(kind, (KeyboardInterrupt, SystemExit)))
