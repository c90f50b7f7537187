"""``x.flags`` and ``x.setflags``: NumPy's array flags, for a DArray (what every rank's block has alike).

A DArray's blocks are C-ordered; ``writeable`` is the one flag a script sets:
``x.flags.writeable = False`` (or ``x.setflags(write=False)``) makes every
write to ``x`` raise ``ValueError`` on every rank, as NumPy's read-only arrays
do, until it is set True again. Views NumPy makes read-only
(``numpy.broadcast_to``, ``numpy.diagonal``) are read-only here too.

>>> import darray as da
>>> x = da.zeros(4)
>>> x.flags.writeable = False
>>> x[0] = 1.0
Traceback (most recent call last):
...
ValueError: flags.writeable: assignment destination is read-only, expected a writable copy (x.copy()), as in NumPy
>>> x.flags.writeable = True
>>> x[0] = 1.0
"""

from __future__ import annotations

from .._errors import message
from .array import DArray
from .views import Link, read_only

__all__ = ["Flags", "flags", "setflags"]


class Flags:
    """NumPy's ``flags`` of one DArray: ``writeable`` (settable), ``c_contiguous``, ``f_contiguous``, ``owndata``."""

    __slots__ = ("_array",)

    def __init__(self, array: DArray) -> None:
        self._array = array

    @property
    def writeable(self) -> bool:
        link = self._array._link
        return link is None or link.put is not None

    @writeable.setter
    def writeable(self, value: bool) -> None:
        x = self._array
        link: Link | None = x._link
        if not value:
            if self.writeable:
                read_only(x, "flags.writeable")
                x._link = x._link._replace(held=link)  # (a view's own link comes back with writeable = True)
            return
        if link is not None and link.put is None:
            if link.origin != "flags.writeable":
                raise ValueError(message("flags.writeable", "cannot set WRITEABLE flag to True of this array",
                                         link.origin, "a copy (x.copy()), which is writeable"))
            x._link = link.held

    @property
    def c_contiguous(self) -> bool:
        return True  # (the global array is in C order; each block's memory is the local library's)

    @property
    def f_contiguous(self) -> bool:
        return self._array.ndim <= 1

    @property
    def owndata(self) -> bool:
        return self._array._link is None

    def __getitem__(self, name: str) -> bool:
        names = {"WRITEABLE": "writeable", "W": "writeable", "C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous",
                 "F_CONTIGUOUS": "f_contiguous", "F": "f_contiguous", "OWNDATA": "owndata", "O": "owndata"}
        if name not in names:
            raise KeyError(message("flags", "unknown flag", name, f"one of {sorted(names)}"))
        return getattr(self, names[name])

    def __repr__(self) -> str:
        return "\n".join(f"  {n.upper()} : {getattr(self, n)}" for n in ("c_contiguous", "f_contiguous", "owndata",
                                                                         "writeable"))


def flags(x: DArray) -> Flags:
    """``x.flags``."""
    return Flags(x)


def setflags(x: DArray, write: bool | None = None, align: bool | None = None, uic: bool | None = None) -> None:
    """``x.setflags(write=...)``: NumPy's ``setflags``; only ``write`` means something for a DArray."""
    if uic:
        raise ValueError(message("setflags", "cannot set WRITEBACKIFCOPY flag to True", uic, "None or False"))
    if write is not None:
        Flags(x).writeable = bool(write)
