"""Error messages in one format: ``"<function>: <problem>; got <value>, expected <...>"``."""

from __future__ import annotations

__all__ = ["message", "AxisError"]

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
