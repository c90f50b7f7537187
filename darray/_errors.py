"""Error messages in one format (``"<function>: <problem>; got <value>, expected <...>"``) and tracebacks."""

from __future__ import annotations

__all__ = ["message", "AxisError", "names_errors", "naming", "format_error", "fold_internal", "is_internal_frame"]

import os
import traceback

from numpy.exceptions import AxisError

_PACKAGE = os.path.dirname(os.path.abspath(__file__))
#: Frames of the launchers that run a script (``python -m mpi4py script.py``, ``runpy``): never the user's.
_LAUNCHERS = (os.sep + os.path.join("mpi4py", "run.py"), os.sep + os.path.join("mpi4py", "__main__.py"))


def message(func: str, problem: str, got: object = None, expected: object = None) -> str:
    """Format an error message the way every darray function reports bad input.

    Examples
    --------
    >>> message("reshape", "cannot reshape", (3, 4), "a shape with 12 elements")
    'reshape: cannot reshape; got (3, 4), expected a shape with 12 elements'
    """
    text = f"{func}: {problem}"
    if got is not None:
        text += f"; got {got!r}" if not isinstance(got, str) else f"; got {got}"
    if expected is not None:
        text += f", expected {expected}"
    return text


def naming(exc: Exception, func: str, mentioned: str | None = None) -> Exception:
    """``exc`` with ``"<func>: "`` in front of its message (same type), or ``exc`` itself.

    Left as it is when its message starts with ``func`` or contains
    ``mentioned``, or when its type takes no message alone.
    """
    text = str(exc)
    if text.startswith(func) or (mentioned is not None and mentioned in text):
        return exc
    try:
        return type(exc)(f"{func}: {text}")
    except Exception:  # an exception type with another constructor: leave it as it is
        return exc


def names_errors(func: str):
    """Decorate a public function so bad input raised by a helper still names ``func``.

    NumPy-type errors (TypeError, ValueError, IndexError and subclasses)
    whose message does not start with ``func`` are re-raised with the same type
    and ``"<func>: "`` in front (:func:`naming`); the original stays chained.
    """
    import functools

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            try:
                return f(*args, **kwargs)
            except (TypeError, ValueError, IndexError) as exc:
                renamed = naming(exc, func)
                if renamed is exc:
                    raise
                raise renamed from exc

        return wrapper

    return decorate


def in_darray(filename: str) -> bool:
    """Whether ``filename`` (a code object's, a frame's) is a module of darray's own.

    >>> in_darray(__file__), in_darray("job.py")
    (True, False)
    """
    return os.path.abspath(filename).startswith(_PACKAGE + os.sep)


def is_internal_frame(filename: str) -> bool:
    """Whether a traceback frame of ``filename`` is darray's own (or the launcher's) rather than the user's.

    >>> is_internal_frame(__file__), is_internal_frame("job.py"), is_internal_frame("<frozen runpy>")
    (True, False, True)
    """
    return _is_launcher(filename) or in_darray(filename)


def format_error(error: BaseException, debug: bool = False) -> str:
    """The traceback of ``error`` as Python prints it, darray's internal frames folded unless ``debug``.

    Each run of frames of darray's modules prints as one line where it was,
    saying how many and that ``DARRAY_DEBUG=1`` shows them
    (:func:`fold_internal`); the frames of the launcher that ran the script
    (``python -m mpi4py``, ``runpy``: ``darray run``) are left out without a
    line; the frames of the user's code around them (the line that called
    darray, a function darray called back) stay.

    Examples
    --------
    >>> try:
    ...     names_errors("parse")(int)("x")  # darray's wrapper raises, from int's error
    ... except ValueError as error:
    ...     text, full = format_error(error), format_error(error, debug=True)
    >>> print(text.splitlines()[-2])
      [1 frame inside darray hidden, and the error darray raised it from; DARRAY_DEBUG=1 shows them]
    >>> print(text.splitlines()[-1])
    ValueError: parse: invalid literal for int() with base 10: 'x'
    >>> "_errors.py" in text, "_errors.py" in full
    (False, True)
    """
    if debug:
        return "".join(traceback.TracebackException.from_exception(error).format())
    return fold_internal(error)[0]


def fold_internal(error: BaseException) -> tuple[str, int]:
    """The traceback of ``error`` with each run of internal frames folded into one line, and how many were folded.

    A frame is internal when :func:`is_internal_frame` says so; frames of
    other files (the user's script, a ``map_overlap`` function or a fused
    function's body that darray called back) are never folded. An exception
    chained to ``error`` (``raise ... from``, or raised while handling
    another) is folded alike; one that happened wholly inside darray (a
    helper's error that darray renamed) is left out, and the line before the
    error says so. A traceback with no frame of the user's keeps them all.
    Zero folded frames: the text is Python's own traceback.
    """
    summary = traceback.TracebackException.from_exception(error)
    hidden = _fold(summary, set())
    return "".join(summary.format()), hidden


#: The line in place of a run of internal frames.
FOLD = "  [{count} {frames} inside darray hidden{more}; DARRAY_DEBUG=1 shows them]\n"


class _Folded(traceback.StackSummary):
    """Frames to print, with lines in place of the runs of internal frames left out (:func:`fold_internal`)."""

    runs: list = []  # lists of the frames kept, and the lines in place of the others, in order

    def format(self, *args, **kwargs) -> list[str]:  # (3.13 passes colorize=)
        lines: list[str] = []
        for run in self.runs:
            if isinstance(run, str):
                lines.append(run)
            else:
                lines.extend(traceback.StackSummary.from_list(run).format(*args, **kwargs))
        return lines


def _fold_line(run: list, more: str = "") -> str | None:
    """The line in place of ``run``; None for the launcher's frames alone (``runpy``, ``python -m mpi4py``)."""
    count = sum(not _is_launcher(frame.filename) for frame in run)
    if count == 0:
        return None
    return FOLD.format(count=count, frames="frame" if count == 1 else "frames", more=more)


def _is_launcher(filename: str) -> bool:
    return filename.startswith("<frozen runpy") or filename.endswith(_LAUNCHERS)


def _fold(summary: traceback.TracebackException, seen: set) -> int:
    """Fold the internal frames of ``summary`` and of the exceptions chained to it; return how many went."""
    if id(summary) in seen:
        return 0
    seen.add(id(summary))
    hidden = 0
    dropped = ""  # a chained exception left out whole: what the fold line says of it
    for link in ("__cause__", "__context__"):
        chained = getattr(summary, link, None)
        if chained is None:
            continue
        if chained.stack and all(is_internal_frame(frame.filename) for frame in chained.stack):
            setattr(summary, link, None)  # an error of darray's own helper, renamed or wrapped by darray
            hidden += len(chained.stack)
            dropped = dropped or ("the error darray raised it from" if link == "__cause__"
                                  else "the error darray was handling")
        else:
            hidden += _fold(chained, seen)
    for member in getattr(summary, "exceptions", None) or ():  # an ExceptionGroup's members
        hidden += _fold(member, seen)
    frames = list(summary.stack)
    if not any(not is_internal_frame(frame.filename) for frame in frames):
        return hidden  # no frame of the user's: keep them all
    runs: list = []
    for frame in frames:
        internal = is_internal_frame(frame.filename)
        if runs and runs[-1][0] is internal:
            runs[-1][1].append(frame)
        else:
            runs.append([internal, [frame]])
    lines: list = []
    for index, (internal, run) in enumerate(runs):
        if internal:
            last = index == len(runs) - 1
            line = _fold_line(run, f", and {dropped}" if last and dropped else "")
            lines.extend([line] if line else [])
            dropped = "" if line and last else dropped
            hidden += len(run)
        else:
            lines.append(run)
    if dropped:
        lines.append(f"  [{dropped} hidden; DARRAY_DEBUG=1 shows it]\n")
    folded = _Folded(frame for frame in frames if not is_internal_frame(frame.filename))
    folded.runs = lines
    summary.stack = folded
    return hidden
