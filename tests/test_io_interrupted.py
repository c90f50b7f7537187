"""darray.io commits interrupted at every step, again and again: a load returns the last committed data.

A commit is a short sequence of file-system steps on rank 0 (darray.io._atomic: ``"commit"``, then each
rename and removal; ``.npy``: the sidecar's rename, the data's rename, the stage's removal; zarr: the old
store set aside, the new one renamed into place, the old one and the stage removed; HDF5: one rename, the
stage's removal). ``_atomic._on_step`` lets a test stop a commit at any step:

- *kill*: step ``k`` and every later one do not happen (clean-up included), exactly what a job killed at
  that point leaves on disk (the next save and loads then run as a restarted job's would);
- *fail*: step ``k`` raises OSError (a rename that fails), after which the commit's own recovery runs.

Every save stores distinct data, so a load shows which save it reads. After each save, interrupted or not,
a load (verify=True, the saving layout and another one) must return exactly the data of the last save whose
data rename happened -- never a ChecksumError, a missing-checksum warning or another save's data. The
sequences of interruption points are de Bruijn sequences: every run of ``ORDER`` consecutive points (no
interruption included) occurs once.

Then the cases the sequences do not reach: an interrupted save over a ``.npy`` without checksums (and the
reverse), a sidecar pair copied elsewhere (new inode numbers) and saved over again, and a zarr store set
aside by two killed saves whose stages' modification times lie.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

import darray as da
from darray.io import MissingChecksumWarning, load_npy, save, save_npy
from darray.io import _atomic

from _io_helpers import FORMATS, everywhere, on_rank0

pytest.importorskip("zarr")
pytest.importorskip("h5py")

pytestmark = [pytest.mark.mpi, pytest.mark.usefixtures("small_auto_threshold")]

SHAPE = (13, 4)


def rank0_flag(comm, flag: bool) -> bool:
    """Rank 0's ``flag`` on every rank (the commit's steps run on rank 0 only)."""
    return bool(np.asarray(comm.bcast(np.asarray([flag], dtype=np.int64), 0))[0])


def data(i: int) -> np.ndarray:
    """The array of save number ``i``: every save stores other values."""
    return np.arange(np.prod(SHAPE), dtype=np.float64).reshape(SHAPE) * 0.5 + 1000.0 * i


def de_bruijn(k: int, n: int) -> list[int]:
    """A de Bruijn sequence over ``range(k)`` of order ``n``, made linear: every ``n``-run occurs once."""
    a, out = [0] * k * n, []

    def db(t, p):
        if t > n:
            if n % p == 0:
                out.extend(a[1:p + 1])
        else:
            a[t] = a[t - p]
            db(t + 1, p)
            for j in range(a[t - p] + 1, k):
                a[t] = j
                db(t + 1, t)

    db(1, 1)
    return out + out[:n - 1]


class Interrupt:
    """The ``_atomic._on_step`` hook: stops a commit at its step ``at`` (0-based; past the last: not at all).

    ``mode="kill"``: that step and every later one are skipped (the job is gone); ``mode="fail"``: that
    step, if a rename, raises OSError, and the steps after it (the commit's own recovery) run. ``done``: the
    steps that happened; ``committed``: the rename of the data to ``final`` happened.
    """

    def __init__(self, at: int, final: str, mode: str = "kill"):
        self.at, self.final, self.mode = at, final, mode
        self.steps, self.dead, self.committed, self.done = 0, False, False, []

    def __call__(self, kind: str, paths: tuple) -> bool:
        if self.dead:
            return False
        step, self.steps = self.steps, self.steps + 1
        if step == self.at and self.mode == "kill":
            self.dead = True
            return False
        if step == self.at and kind == "replace":
            raise OSError(f"step {step} ({kind}) failed (simulated)")
        self.done.append((kind, paths))
        if kind == "replace" and paths[1] == self.final and not paths[0].endswith(".old"):
            self.committed = True
        return True


def steps_of(fmt: str, comm, shared, monkeypatch) -> int:
    """How many steps a commit of ``fmt`` takes over an existing target (counted on a complete save)."""
    save_fn, _, name = FORMATS[fmt]
    path = shared / "count" / name
    on_rank0(comm, path.parent.mkdir)
    save_fn(path, da.asarray(data(0), split=0))
    counter = Interrupt(10 ** 9, str(path))
    monkeypatch.setattr(_atomic, "_on_step", counter)
    save_fn(path, da.asarray(data(1), split=0))
    monkeypatch.setattr(_atomic, "_on_step", None)
    return int(np.asarray(comm.bcast(np.asarray([counter.steps], dtype=np.int64), 0))[0])


def interrupted_save(fmt: str, path: Path, i: int, at: int, mode: str, monkeypatch) -> bool:
    """Save ``data(i)`` stopped at step ``at``; True (on every rank) when its data rename happened."""
    save_fn = FORMATS[fmt][0]
    comm = da.default_communicator()
    hook = Interrupt(at, str(path), mode)
    monkeypatch.setattr(_atomic, "_on_step", hook)
    try:
        raised = ""
        try:
            save_fn(path, da.asarray(data(i), split=0 if i % 2 else (1 if comm.size > 1 else 0)))
        except OSError as e:
            raised = str(e)
    finally:
        monkeypatch.setattr(_atomic, "_on_step", None)
    everywhere(comm, not raised or "failed (simulated)" in raised, f"save {i} at step {at}: {raised}")
    return rank0_flag(comm, hook.committed)


def check_loads(fmt: str, path: Path, want: int, what: str) -> None:
    """Every load of ``path`` returns ``data(want)`` exactly, verified, without a missing-checksum warning."""
    load_fn = FORMATS[fmt][1]
    comm = da.default_communicator()
    for spec in (dict(split=0), dict(split=1), dict(split=None)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                got, problem = np.asarray(load_fn(path, verify=True, **spec).gather()), ""
            except Exception as e:  # any failure is reported with the sequence that led to it
                got, problem = None, f"{type(e).__name__}: {e}"
        warned = [str(w.message) for w in caught if issubclass(w.category, MissingChecksumWarning)]
        ok = not problem and not warned and np.array_equal(got, data(want))
        if not problem and not ok and not warned:
            found = [j for j in range(want + 2) if got is not None and np.array_equal(got, data(j))]
            problem = f"loads the data of save {found or '(none: mixed)'}"
        everywhere(comm, ok, f"{fmt} {spec} after {what}: expected save {want}; {problem or warned}")


@pytest.mark.parametrize("mode,order", [("kill", 3), ("fail", 2)])
@pytest.mark.parametrize("fmt", FORMATS)
def test_interrupted_commits_in_a_row_load_the_last_committed_data(fmt, mode, order, comm, shared, monkeypatch):
    """Every run of ``order`` interruption points, at every step of the commit; loads after each save."""
    steps = steps_of(fmt, comm, shared, monkeypatch)
    everywhere(comm, steps >= 3, f"{fmt}: a commit of only {steps} steps")
    path = shared / FORMATS[fmt][2]
    FORMATS[fmt][0](path, da.asarray(data(0), split=0))
    last, history = 0, ["0: complete"]
    for i, at in enumerate(de_bruijn(steps + 1, order), start=1):  # at == steps: not interrupted
        if interrupted_save(fmt, path, i, at, mode, monkeypatch):
            last = i
        history.append(f"{i}: {mode} at step {at}" + (" (committed)" if last == i else ""))
        check_loads(fmt, path, last, ", ".join(history[-order - 1:]))
    FORMATS[fmt][0](path, da.asarray(data(999), split=0))  # and a complete save still works
    check_loads(fmt, path, 999, "a complete save")


# ------------------------------------------------------------------ what the sequences do not reach
@pytest.mark.parametrize("first,second", [(False, True), (True, False)])
def test_npy_interrupted_over_a_file_with_other_checksums(first, second, comm, shared, monkeypatch):
    """An interrupted save with(out) checksums over a file without (with) them: the previous file loads, with
    the warning exactly when it has no checksums, never a ChecksumError."""
    path = shared / "x.npy"
    steps = steps_of("npy", comm, shared, monkeypatch)
    for at in range(steps):
        save_npy(path, da.asarray(data(0), split=0), checksum=first)
        hook = Interrupt(at, str(path))
        monkeypatch.setattr(_atomic, "_on_step", hook)
        save_npy(path, da.asarray(data(1), split=0), checksum=second)
        monkeypatch.setattr(_atomic, "_on_step", None)
        # (a save without checksums removes the sidecar before it renames the data: killed between the two,
        # the previous file is left without its checksums, and loads with the warning)
        sidecar_gone = rank0_flag(comm, ("remove", (str(path) + ".sha256",)) in hook.done)
        want, checked = (1, second) if rank0_flag(comm, hook.committed) else (0, first and not sidecar_gone)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = np.asarray(load_npy(path, split=1).gather())
        warned = [w for w in caught if issubclass(w.category, MissingChecksumWarning)]
        everywhere(comm, np.array_equal(got, data(want)), f"step {at}: expected save {want}")
        everywhere(comm, len(warned) == (0 if checked else 1), f"step {at}: warnings {warned}")
        if not checked:
            text = str(warned[0].message)
            everywhere(comm, text.startswith("load_npy: loading without checksums") and "x.npy" in text, text)


def test_npy_copied_pair_still_verifies_after_interrupted_saves(comm, shared, monkeypatch):
    """A .npy and its sidecar copied elsewhere (other inode numbers) after a save killed between its renames:
    the copy loads; saves over the copy killed there again and again still leave a copy that loads."""
    src, dst = shared / "a" / "x.npy", shared / "b" / "x.npy"
    on_rank0(comm, lambda: (src.parent.mkdir(), dst.parent.mkdir()))
    save_npy(src, da.asarray(data(0), split=0))
    data_rename = 2  # commit, sidecar, data: killed before the data's rename
    for i in (1, 2):
        interrupted_save("npy", src, i, data_rename, "kill", monkeypatch)

    def copy():
        for p in (src, Path(str(src) + ".sha256")):
            shutil.copyfile(p, dst.parent / p.name)

    on_rank0(comm, copy)
    check_loads("npy", dst, 0, "two saves killed before the data rename, then a copy")
    for i in (3, 4, 5):
        interrupted_save("npy", dst, i, data_rename, "kill", monkeypatch)
        check_loads("npy", dst, 0, f"{i - 2} saves over the copy killed before the data rename")
    side = json.loads(Path(str(dst) + ".sha256").read_text())
    everywhere(comm, len(side["previous"]["tables"]) <= 3, f"the sidecar grows: {len(side['previous']['tables'])}")
    save_npy(dst, da.asarray(data(6), split=0))
    check_loads("npy", dst, 6, "a complete save over the copy")


def test_zarr_recovery_reads_the_store_set_aside_last(comm, shared, monkeypatch):
    """Two saves killed mid-swap, with a complete save between them: two stages hold a previous store. Load
    reads the one set aside last (the newer data), also when the stages' modification times say otherwise
    (file systems keep them to a clock tick; another program may touch them)."""
    path = shared / "x.zarr"
    save(path, da.asarray(data(0), split=0))
    mid_swap = 2  # commit, set the old store aside: killed before the new one is renamed into place
    everywhere(comm, not interrupted_save("zarr", path, 1, mid_swap, "kill", monkeypatch), "save 1 committed")
    check_loads("zarr", path, 0, "a save killed mid-swap")
    save(path, da.asarray(data(2), split=0))
    everywhere(comm, not interrupted_save("zarr", path, 3, mid_swap, "kill", monkeypatch), "save 3 committed")

    def older_first():
        asides = sorted(shared.glob("x.zarr.tmp-*/x.zarr.old"))
        assert len(asides) == 2, asides
        newest = max(a.stat().st_mtime for a in asides)
        for a in asides:  # the stage of the store set aside first looks newer
            stamp = newest + 10 if np.array_equal(np.asarray(__import__("zarr").open_array(str(a))[...]),
                                                  data(0)) else newest - 10
            os.utime(a.parent, (stamp, stamp))

    on_rank0(comm, older_first)
    check_loads("zarr", path, 2, "a save killed mid-swap, a complete save, a save killed mid-swap")
