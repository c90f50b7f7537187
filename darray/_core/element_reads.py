"""A warning, once per line of user code, for loops that read a cut DArray element by element.

On a cut array, ``x[i]`` of one element is a collective: the owner's value
is allgathered (a few microseconds at best, against NumPy's tens of
nanoseconds). A loop ``for i in range(n): ... x[i] ...`` then runs one
message round per element. After :data:`READS_BEFORE_WARNING` such reads
the line doing the latest one gets one :class:`PerformanceWarning` (on rank
0 of the array's ranks) naming what to do instead. Counting costs one
integer increment per element read; only every
:data:`READS_BEFORE_WARNING`-th read looks up its line.
"""

from __future__ import annotations

import sys
import warnings

from .._errors import in_darray

__all__ = ["PerformanceWarning", "READS_BEFORE_WARNING", "count_element_read"]

#: Element reads of cut arrays between two looks at the calling line.
READS_BEFORE_WARNING = 1000
_reads = 0
_warned: set[tuple[str, int]] = set()


class PerformanceWarning(UserWarning):
    """darray runs this code correctly, but far slower than its vectorised form."""


def _user_frame():
    frame = sys._getframe(2)
    while frame is not None and in_darray(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def count_element_read(shape: tuple, rank: int) -> None:
    """Count one element read of a cut array of ``shape``; warn once per user line after many of them."""
    global _reads
    _reads += 1
    if _reads % READS_BEFORE_WARNING:
        return
    frame = _user_frame()
    if frame is None:
        return
    site = (frame.f_code.co_filename, frame.f_lineno)
    if site in _warned:
        return
    _warned.add(site)
    if rank == 0:
        warnings.warn_explicit(
            f"{_reads} element reads of cut DArrays so far (this line: an array of shape {shape}); each is a "
            f"collective (the owner's value is allgathered to every rank), so an element loop runs one message "
            f"round per element. Vectorise it (whole-array expressions or slices), compile it with darray.fuse, "
            f"or loop over a replicated copy (numpy.asarray(x), or x.local for this rank's block)",
            PerformanceWarning, site[0], site[1])
