"""Error messages in one format: ``"<function>: <problem>; got <value>, expected <...>"``."""

from __future__ import annotations

__all__ = ["message", "AxisError", "names_errors", "naming"]

from numpy.exceptions import AxisError


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
