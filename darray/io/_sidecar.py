"""The checksum sidecar of a ``.npy`` file (``<path>.sha256``): which checksums describe the file at the path.

``save_npy`` commits two files, the sidecar first and the data second
(:mod:`darray.io._atomic`, rank 0)::

    1. <stage>/x.npy.sha256 -> x.npy.sha256     (the new checksums)
    2. <stage>/x.npy        -> x.npy            (the new data)
    3. the stage removed

A job killed between 1 and 2 leaves the new sidecar beside the previous
data. So that the previous data still verifies, the sidecar (a JSON object)
holds, besides the new data's checksum table (:func:`darray.io._common.checksum_table`):

- ``"file"``: the identity of the file the table describes -- its inode
  number and size (:func:`identity`), taken from the temporary data file,
  which rename 2 moves into place unchanged;
- ``"previous"``: ``{"file": <identity>, "tables": [<table>, ...]}``, the
  identity of the file at the path when the save began and the tables that
  describe it (``[]``: that file has no checksums), or ``null`` (nothing was
  there, or its sidecar was damaged).

The previous entry is chosen by identity (:func:`previous`): the entry of the
replaced sidecar whose identity is that of the file really at the path. After
a save killed between its renames the replaced sidecar's own table describes
data that was never committed; copying that table (as darray did before)
made the next interrupted save's sidecar describe no data on disk, and the
intact previous data then failed verification. By induction one entry of
every sidecar describes the file at the path, however many saves in a row
are interrupted at whatever step.

Loading (:func:`candidates`) verifies against the entry whose identity is
the file's first, then the others (a copied or restored file has another
inode: then every table is tried in turn); an entry that matches and has no
tables means the file has no checksums (the ``MissingChecksumWarning`` case).
A version-1 sidecar (``"previous"``: a bare table, no identities) still loads.

An inode number is reused only after its file is gone; the file at the path
and the temporary of a save exist at the same time, so the identities a
sidecar records never name each other's files.
"""

from __future__ import annotations

import json
import os
import stat

from ._common import CHECKSUM_FORMAT, ChecksumError, CorruptFileError, check_table

__all__ = ["SIDECAR", "candidates", "document", "identity", "previous"]

SIDECAR = ".sha256"
#: The most bytes of a sidecar that are read (a sidecar holds a few tables of one digest per block).
_MAX_BYTES = 1 << 30


def identity(path: str, st: os.stat_result | None = None) -> dict | None:
    """``{"inode": ..., "size": ...}`` of the regular file at ``path`` (symlinks followed), or None.

    Parameters
    ----------
    path : str
        The file (ignored when ``st`` is given).
    st : os.stat_result, optional
        Its stat, when already known (``os.fstat`` of an open file).
    """
    if st is None:
        try:
            st = os.stat(path)
        except OSError:
            return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return {"inode": int(st.st_ino), "size": int(st.st_size)}


def _key(ident) -> tuple[int, int] | None:
    """``(inode, size)`` of a stored identity, or None when it is absent or not one."""
    if not isinstance(ident, dict):
        return None
    inode, size = ident.get("inode"), ident.get("size")
    if type(inode) is not int or type(size) is not int:
        return None
    return inode, size


def document(table: dict, made: os.stat_result, before: dict | None) -> dict:
    """The sidecar of a new data file: its table, the file's identity and the previous entry.

    Parameters
    ----------
    table : dict
        The new data's checksum table.
    made : os.stat_result
        ``os.fstat`` of the temporary data file (written in place afterwards,
        never recreated, so its inode and size stay).
    before : dict or None
        :func:`previous` of the target.
    """
    return {**table, "file": identity("", made), "previous": before}


def _entries(doc) -> list[tuple[tuple[int, int] | None, list]]:
    """``(identity, tables)`` of a parsed sidecar: its own table, then the previous entry (if any).

    Raises ValueError for a sidecar that is not darray's.
    """
    if not isinstance(doc, dict) or doc.get("format") != CHECKSUM_FORMAT:
        raise ValueError("not a darray checksum table")
    current = {k: v for k, v in doc.items() if k not in ("file", "previous")}
    out = [(_key(doc.get("file")), [current])]
    prev = doc.get("previous")
    if isinstance(prev, dict) and "tables" in prev:  # this version: an identity and its tables
        tables = prev["tables"]
        if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
            raise ValueError("damaged previous entry")
        out.append((_key(prev.get("file")), list(tables)))
    elif isinstance(prev, dict):  # a version-1 sidecar: the previous table itself, no identity
        out.append((None, [prev]))
    elif prev is not None:
        raise ValueError("damaged previous entry")
    return out


def _read(side: str):
    with open(side, "rb") as f:
        return json.loads(f.read(_MAX_BYTES))


def _unique(tables: list) -> list:
    seen, out = set(), []
    for t in tables:
        key = json.dumps(t, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(t)
    return out


def previous(path: str, side: str) -> dict | None:
    """The ``"previous"`` entry for a save to ``path``: what describes the file there now (rank 0, before the commit).

    Parameters
    ----------
    path : str
        The target ``.npy`` file.
    side : str
        Its sidecar, ``path + ".sha256"``.

    Returns
    -------
    dict or None
        ``{"file": <identity of the file at path>, "tables": [...]}``: the
        tables of the replaced sidecar's entry for that file (none when it has
        no sidecar); when no entry names the file (it was copied or restored),
        every table of the replaced sidecar. None when nothing is at ``path``
        or its sidecar is damaged.
    """
    here = identity(path)
    if here is None:
        return None
    if not os.path.lexists(side):
        return {"file": here, "tables": []}  # data without checksums (saved with checksum=False, by NumPy)
    try:
        entries = _entries(_read(side))
    except (OSError, ValueError, MemoryError):
        return None  # a damaged sidecar vouches for nothing
    for ident, tables in entries:
        if ident is not None and ident == _key(here):
            return {"file": here, "tables": tables}
    return {"file": here, "tables": _unique([t for _, tables in entries for t in tables])}


def candidates(func: str, path: str, shape, dtype) -> list | None:
    """The block lists (:func:`~darray.io._common.check_table`) to verify the file at ``path`` against, in order.

    Returns
    -------
    list of list or None
        None when there is no sidecar; ``[]`` when the sidecar is that of a
        save killed between its renames over a file without checksums (the
        file there has none); else the tables of the entry whose identity is
        the file's first, then the others of matching shape and dtype.

    Raises
    ------
    CorruptFileError
        The sidecar is damaged.
    ChecksumError
        No table describes an array of the file's shape and dtype.
    """
    side = path + SIDECAR
    if not os.path.exists(side):
        return None
    try:
        entries = _entries(_read(side))
    except (OSError, ValueError, MemoryError) as e:
        raise CorruptFileError(f"{func}: damaged checksum sidecar; got {side!r} ({type(e).__name__}: {e}), "
                               f"expected the JSON checksum table save_npy writes") from e
    here = _key(identity(path))
    first = next((i for i, (ident, _) in enumerate(entries) if ident is not None and ident == here), None)
    if first is not None and not entries[first][1]:
        return []  # this file was saved without checksums; a save over it was killed before its data rename
    order = ([entries[first]] if first is not None else []) + [e for i, e in enumerate(entries) if i != first]
    out, error = [], None
    for _, tables in order:
        for table in tables:
            try:
                out.append(check_table(func, table, shape, dtype))
            except ChecksumError as e:  # another array's table (a save of another shape that was not committed)
                error = error or e
    if not out:
        raise error or ChecksumError(f"{func}: the stored checksums describe another array; got {side!r}, "
                                     f"expected checksums of shape {tuple(shape)}")
    return out
