"""Error messages in one format (``"<function>: <problem>; got <value>, expected <...>"``) and tracebacks."""

from __future__ import annotations

__all__ = ["message", "AxisError", "names_errors", "naming", "format_error", "is_internal_frame"]

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


def is_internal_frame(filename: str) -> bool:
    """Whether a traceback frame of ``filename`` is darray's own (or the launcher's) rather than the user's.

    >>> is_internal_frame(__file__), is_internal_frame("job.py"), is_internal_frame("<frozen runpy>")
    (True, False, True)
    """
    if filename.startswith("<frozen runpy") or filename.endswith(_LAUNCHERS):
        return True
    return os.path.abspath(filename).startswith(_PACKAGE + os.sep)


def format_error(error: BaseException, debug: bool = False) -> str:
    """The traceback of ``error`` as Python prints it, without darray's internal frames unless ``debug``.

    The frames of darray's modules (and of ``python -m mpi4py``, ``runpy``)
    are left out, with a last line saying how many and that ``DARRAY_DEBUG=1``
    shows them; an exception chained to ``error`` that happened wholly inside
    darray (``raise ... from`` a helper's error) is left out too. A traceback
    with no frame of the user's keeps them all.

    Examples
    --------
    >>> try:
    ...     names_errors("parse")(int)("x")  # darray's wrapper raises, from int's error
    ... except ValueError as error:
    ...     text, full = format_error(error), format_error(error, debug=True)
    >>> print(text.splitlines()[-2])
    ValueError: parse: invalid literal for int() with base 10: 'x'
    >>> text.splitlines()[-1]
    '(2 internal frames hidden; DARRAY_DEBUG=1 shows them)'
    >>> "_errors.py" in text, "_errors.py" in full
    (False, True)
    """
    summary = traceback.TracebackException.from_exception(error)
    hidden = 0 if debug else _hide(summary, set())
    text = "".join(summary.format())
    if hidden:
        text += f"({hidden} internal frame{'s' if hidden > 1 else ''} hidden; DARRAY_DEBUG=1 shows them)\n"
    return text


def _hide(summary: traceback.TracebackException, seen: set) -> int:
    """Drop the internal frames of ``summary`` and of the exceptions chained to it; return how many went."""
    if id(summary) in seen:
        return 0
    seen.add(id(summary))
    frames = list(summary.stack)
    kept = [frame for frame in frames if not is_internal_frame(frame.filename)]
    hidden = 0
    if kept:
        hidden = len(frames) - len(kept)
        summary.stack = traceback.StackSummary.from_list(kept)
    for link in ("__cause__", "__context__"):
        chained = getattr(summary, link, None)
        if chained is None:
            continue
        if chained.stack and all(is_internal_frame(frame.filename) for frame in chained.stack):
            setattr(summary, link, None)  # an error of darray's own helper, renamed or wrapped by darray
            hidden += len(chained.stack)
        else:
            hidden += _hide(chained, seen)
    return hidden
