"""Stale staging entries of killed saves (darray.io._stage_markers, darray.io.clean_staging).

- A save killed mid-way (SIGKILL of the whole job, 1 and 2 ranks, every saver: zarr, npy, HDF5, checkpoint;
  at a fixed point and at random points, reusing tests/test_faults.py's saver scripts) leaves its staging
  directory; the next save to the same target removes it: no ``.tmp-`` entry is left. A kill between the two
  renames of a commit leaves the only copy of the previous store in its stage: kept until the next commit.
- What looks live is kept: a stage whose marker lock is held, whose creator still runs, or that a fresh save
  of another host made (another host's PIDs cannot be checked).
- What is not provably ours is never touched nor followed: symlinks named like stages (to a valid stage
  elsewhere), stages without darray's marker, a marker that is a symlink, shared (0755) directories, user
  files named like stages, another target's stage. Links inside a stale stage are removed, never followed.
- A problem while removing is the same RuntimeWarning on every rank, never a failure of the save.
- clean_staging: dry runs, thresholds, ``save_npy``'s sidecar-named stages, bad input (the same clear error
  on every rank).

The tests that launch jobs (SIGKILL) are serial and start their own ``mpiexec``; the others are ``mpi`` tests
(rank 0 plants the entries, every rank saves and checks).
"""

from __future__ import annotations

import datetime
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import darray as da
from darray import optim
from darray.io import _atomic, _stage_markers, clean_staging, load, load_hdf5, load_npy, save, save_hdf5, save_npy
from darray.testing import agree, assert_equal, assert_raises_everywhere

zarr = pytest.importorskip("zarr")
h5py = pytest.importorskip("h5py")

from test_faults import KILL_BETWEEN, SAVER, _env, _mpiexec  # the fault tests' saver scripts

pytestmark = pytest.mark.numpy_only(reason="launches its own jobs to test process-level behaviour, which the "
                                           "local block library plays no part in: run in the NumPy stage")

mpi = pytest.mark.mpi
MARKER = _stage_markers.MARKER
DAY = 86400.0


def _ckpt_save(path, x):
    optim.save_checkpoint(path, step=int(np.asarray(x.gather())[1]))


def _ckpt_load(path, split=0):
    return da.asarray(np.arange(6.0) * optim.load_checkpoint(path)["step"], split=split)


FORMATS = {  # saver, loader, target, the target names in the order the saver stages them
    "zarr": (save, load, "x.zarr", ["x.zarr"]),
    "npy": (save_npy, load_npy, "x.npy", ["x.npy.sha256", "x.npy"]),
    "hdf5": (save_hdf5, load_hdf5, "x.h5", ["x.h5"]),
    "ckpt": (_ckpt_save, _ckpt_load, "x.npz", ["x.npz"]),
}


def on_rank0(comm, fn, *args):
    """Run ``fn`` on rank 0 only (preparing files), then a barrier; returns its result on rank 0."""
    out = fn(*args) if comm.rank == 0 else None
    comm.barrier()
    return out


def everywhere(comm, ok: bool, what: str) -> None:
    failed = agree(comm, ok)
    assert not failed, f"{what} (failed on ranks {failed})"


def stages(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if ".tmp-" in p.name)


def snapshot(directory: Path) -> dict:
    """Every path under ``directory`` (links not followed) with its bytes or link target."""
    out = {}
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            p = Path(root) / name
            out[str(p)] = ("link", os.readlink(p)) if p.is_symlink() else (
                ("file", p.read_bytes()) if p.is_file() else ("dir", None))
    return out


def dead_pid() -> int:
    """The PID of a process that has exited and been reaped."""
    proc = subprocess.Popen([shutil.which("true") or sys.executable] + ([] if shutil.which("true") else ["-c", ""]))
    proc.wait()
    return proc.pid


def plant(parent: Path, targets: list[str], *, pid: int | None = None, host: str | None = None, age: float = 0.0,
          name: str | None = None) -> Path:
    """A stage as a save makes it (mkdtemp + darray's marker, lock released), as left by a killed job.

    ``pid``: the creator (default: a dead process of this machine); ``host``: another host name; ``age``:
    seconds since creation (marker and directory times set back too).
    """
    if name is None:
        stage = Path(tempfile.mkdtemp(prefix=f"{targets[0]}.tmp-", dir=parent))
    else:
        stage = parent / name
        stage.mkdir(mode=0o700)
    os.close(_stage_markers.mark(str(stage), targets))
    doc = json.loads((stage / MARKER).read_text())
    if pid is None:
        doc["pid"], doc["start"] = dead_pid(), "0"
    else:
        doc["pid"], doc["start"] = pid, _stage_markers._start_ticks(pid)
    if host is not None:
        doc["host"] = host
    doc["created"] = time.time() - age
    (stage / MARKER).write_text(json.dumps(doc))
    (stage / targets[-1]).write_bytes(b"half-written by a killed save")
    if age:
        os.utime(stage / targets[-1], (doc["created"],) * 2)
        os.utime(stage / MARKER, (doc["created"],) * 2)
        os.utime(stage, (doc["created"],) * 2)
    return stage


def sample(seed=0) -> np.ndarray:
    return np.arange(6.0) * (seed + 2)


# ------------------------------------------------------------------ killed saves (serial: they launch jobs)
JOB = textwrap.dedent("""
    import os, signal, sys, warnings
    warnings.simplefilter("error")                    # a warning from the sweep fails the job
    import numpy as np
    import darray as da
    from darray import optim
    from darray.io import _atomic, load, load_hdf5, load_npy, save, save_hdf5, save_npy

    out, fmt, mode, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    comm = da.default_communicator()
    path = os.path.join(out, {"zarr": "x.zarr", "npy": "x.npy", "hdf5": "x.h5", "ckpt": "x.npz"}[fmt])
    x = da.arange(1000, dtype=da.float64, split=0) * float(k)
    if mode == "die":                                 # the whole job is killed once every rank has written
        def die(tmps, finals):
            comm.barrier()
            if comm.rank == 0:
                os.killpg(os.getpgid(0), signal.SIGKILL)
            comm.barrier()
        _atomic._before_commit = die
    if fmt == "ckpt":
        optim.save_checkpoint(path, step=k)
        got = float(optim.load_checkpoint(path)["step"])
    else:
        {"zarr": save, "npy": save_npy, "hdf5": save_hdf5}[fmt](path, x)
        got = float(np.asarray({"zarr": load, "npy": load_npy, "hdf5": load_hdf5}[fmt](path, split=0)
                               .gather())[1])
    if comm.rank == 0:
        print("round", got, "staging:", *sorted(n for n in os.listdir(out) if ".tmp-" in n), flush=True)
""")


def _job(tmp_path: Path, nprocs: int, *args) -> subprocess.CompletedProcess:
    script = tmp_path / "job.py"
    if not script.exists():
        script.write_text(JOB)
    cmd = [sys.executable, str(script), str(tmp_path / "out"), *map(str, args)]
    if nprocs > 1:
        cmd = [_mpiexec(), "-n", str(nprocs), *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=_env(), start_new_session=True)


def _wait_for_creators(out: Path, timeout: float = 60.0) -> None:
    """Wait until the processes that made the stages in ``out`` have exited.

    A SIGKILLed ``mpiexec`` tears its ranks down asynchronously: a rank may
    still run (and its stage rightly count as live) when the next job starts.
    A stage whose marker was never written counts once it is old enough.
    """
    deadline = time.monotonic() + timeout
    for stage in out.glob("*.tmp-*"):  # killed before its marker existed: abandoned once PARTIAL_GRACE has passed
        if stage.is_dir() and not any(stage.iterdir()):
            time.sleep(max(0.0, stage.stat().st_mtime + _stage_markers.PARTIAL_GRACE + 0.5 - time.time()))
    for marker in out.glob(f"*.tmp-*/{_stage_markers.MARKER}"):
        try:
            pid = json.loads(marker.read_text())["pid"]
        except ValueError:  # killed before its marker was written: abandoned once PARTIAL_GRACE has passed
            time.sleep(max(0.0, marker.stat().st_mtime + _stage_markers.PARTIAL_GRACE + 0.5 - time.time()))
            continue
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                        break
            except OSError:  # no such process (or no /proc: nothing to wait for)
                break
            time.sleep(0.05)


def _next_save_leaves_nothing(tmp_path: Path, nprocs: int, fmt: str, k: int) -> None:
    _wait_for_creators(tmp_path / "out")
    done = _job(tmp_path, nprocs, fmt, "save", k)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert done.stdout.split() == ["round", str(float(k)), "staging:"], done.stdout + done.stderr[-2000:]
    assert stages(tmp_path / "out") == []


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("nprocs", [1, 2])
def test_a_killed_save_leaves_a_stage_that_the_next_save_removes(nprocs, fmt, tmp_path):
    (tmp_path / "out").mkdir()
    seen = []
    for k in (1, 2):  # two jobs killed with everything written, before the rename
        died = _job(tmp_path, nprocs, fmt, "die", k)
        assert died.returncode != 0 and "round" not in died.stdout, died.stdout + died.stderr[-2000:]
        seen.append(stages(tmp_path / "out"))
    # each killed save left its stage; the second one (a save too) removed the first one's
    assert len(seen[0]) == 1 and len(seen[1]) == 1 and seen[0] != seen[1], f"the killed saves left {seen}"
    _next_save_leaves_nothing(tmp_path, nprocs, fmt, 3)


@pytest.mark.parametrize("fmt", ["zarr", "npy"])
def test_a_kill_inside_the_commit_then_the_next_save_leaves_nothing(fmt, tmp_path):
    """tests/test_faults.py's kill between the two renames of a commit: zarr leaves the previous store only in
    its stage (``x.zarr.old``), which must survive the sweep until the next save has committed."""
    out = tmp_path / "out"
    out.mkdir()
    script = tmp_path / "die.py"
    script.write_text(KILL_BETWEEN)
    died = subprocess.run([sys.executable, str(script), str(out), fmt], capture_output=True, text=True,
                          timeout=120, env=_env())
    assert died.returncode == -signal.SIGKILL, died.stderr[-2000:]
    assert stages(out), "the kill left no stage"
    _next_save_leaves_nothing(tmp_path, 1, fmt, 3)


@pytest.mark.parametrize("fmt", ["zarr", "npy"])
@pytest.mark.parametrize("nprocs", [1, 2])
def test_saves_killed_at_random_points_then_the_next_save_leaves_nothing(nprocs, fmt, tmp_path):
    """tests/test_faults.py's saver (a save again and again), SIGKILLed at random points, never cleaned up in
    between: each restarted saver sweeps what the previous kill left; the last save leaves nothing."""
    out = tmp_path / "out"
    out.mkdir()
    script = tmp_path / "saver.py"
    script.write_text(SAVER)
    rng = random.Random(99 + nprocs + len(fmt))
    cmd = [sys.executable, str(script), str(out), str(1 << 18), fmt]
    if nprocs > 1:
        cmd = [_mpiexec(), "-n", str(nprocs), *cmd]
    for _ in range(2):
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
                                start_new_session=True)
        try:
            first = proc.stdout.readline()
            assert first.startswith("done"), f"saver did not complete a round: {first!r}"
            time.sleep(rng.uniform(0.0, 0.5))
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=60)
    _next_save_leaves_nothing(tmp_path, nprocs, fmt, 5)


# ------------------------------------------------------------------ what the sweep removes and keeps
@mpi
@pytest.mark.parametrize("fmt", FORMATS)
def test_stale_stages_are_removed_by_the_next_save(fmt, comm, shared):
    save_fn, load_fn, name, targets = FORMATS[fmt]
    on_rank0(comm, lambda: [plant(shared, targets), plant(shared, targets),  # creators gone (this machine)
                            plant(shared, targets, host="elsewhere", age=2 * DAY)])  # another host's, 2 days old
    everywhere(comm, len(stages(shared)) == 3, "planting failed")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        save_fn(shared / name, da.asarray(sample(1), split=0))
    comm.barrier()  # rank 0 may still be removing the save's own stage
    everywhere(comm, stages(shared) == [], f"stale stages left: {stages(shared)}")
    assert_equal(load_fn(shared / name, split=0), sample(1))


@mpi
@pytest.mark.parametrize("fmt", FORMATS)
def test_live_looking_stages_are_kept(fmt, comm, shared):
    """A held lock (whatever the marker says), a running creator, a fresh stage of another host: kept by the
    save and by clean_staging's default and math.inf thresholds; older_than=0 spares only the locked one."""
    save_fn, load_fn, name, targets = FORMATS[fmt]
    children = []

    def prepare():
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        children.append(sleeper)
        locked = plant(shared, targets)  # its creator is gone, but someone holds the lock
        holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
            import fcntl, os, time
            fd = os.open({str(locked / MARKER)!r}, os.O_RDWR)
            fcntl.flock(fd, fcntl.LOCK_EX)
            print("locked", flush=True)
            time.sleep(600)""")], stdout=subprocess.PIPE, text=True)
        children.append(holder)
        assert holder.stdout.readline().strip() == "locked"
        running = plant(shared, targets, pid=sleeper.pid)  # its creator still runs (no lock)
        mine = plant(shared, targets, pid=os.getpid())  # this very process
        remote = plant(shared, targets, host="elsewhere", age=3600.0)  # another host's, one hour old
        return {"locked": str(locked), "running": str(running), "mine": str(mine), "remote": str(remote)}

    try:
        planted = on_rank0(comm, prepare)
        before = stages(shared)
        everywhere(comm, len(before) == 4, "planting failed")
        save_fn(shared / name, da.asarray(sample(2), split=0))
        comm.barrier()  # rank 0 may still be removing the save's own stage
        everywhere(comm, stages(shared) == before, "the save removed a live-looking stage")
        assert_equal(load_fn(shared / name, split=0), sample(2))
        for older_than in (_stage_markers.STALE_AFTER, math.inf):
            everywhere(comm, clean_staging(shared / name, older_than=older_than) == [], "clean_staging removed one")
        everywhere(comm, stages(shared) == before, "clean_staging removed a live-looking stage")
        removed = clean_staging(shared / name, older_than=0)  # the explicit override: all but the locked one
        want = sorted(planted[k] for k in ("running", "mine", "remote")) if comm.rank == 0 else None
        everywhere(comm, removed == want if comm.rank == 0 else len(removed) == 3,
                   f"older_than=0 removed {removed}, expected {want}")
        if comm.rank == 0:
            children[1].kill()
            children[1].wait()
        comm.barrier()
        # the lock holder is gone: the stage of a dead creator is stale now
        everywhere(comm, len(clean_staging(shared / name, older_than=math.inf)) == 1, "the unlocked stage stayed")
        everywhere(comm, stages(shared) == [], f"left: {stages(shared)}")
    finally:
        for child in children:
            child.kill()
            child.wait()


@mpi
def test_a_stage_holding_the_only_previous_store_is_kept_until_the_commit(comm, shared, monkeypatch):
    """A commit killed mid-swap: the previous store lives only in ``<stage>/x.zarr.old`` and loads from there.
    The next save keeps that stage until it has committed its own store, then removes it."""
    path = shared / "x.zarr"
    save(path, da.asarray(sample(3), split=0))

    def kill_midway():
        stage = plant(shared, ["x.zarr"])
        os.remove(stage / "x.zarr")
        os.replace(path, stage / "x.zarr.old")
        return str(stage)

    stage = on_rank0(comm, kill_midway)
    assert_equal(load(path, split=0), sample(3))  # recovered from the stage
    seen = []
    monkeypatch.setattr(_atomic, "_before_commit", lambda tmps, finals: seen.append(len(stages(shared))))
    save(path, da.asarray(sample(4), split=0))
    everywhere(comm, seen == [2], f"stages before the commit: {seen} (the old one and this save's)")
    everywhere(comm, stages(shared) == [], f"left: {stages(shared)}")
    assert_equal(load(path, split=0), sample(4))
    if comm.rank == 0:
        assert not os.path.lexists(stage)


# ------------------------------------------------------------------ never anything that is not ours
@mpi
def test_symlinks_and_foreign_entries_are_never_touched(comm, shared):
    outside = shared / "outside"
    name = "x.zarr"
    kinds = {}

    def prepare():
        outside.mkdir()
        (outside / "victim.txt").write_text("precious")
        (outside / "victim_dir").mkdir()
        (outside / "victim_dir" / "data").write_text("precious too")
        # a valid, stale stage elsewhere, reachable through a symlink named like a stage
        far = plant(outside, [name], name=f"{name}.tmp-faraway0")
        os.symlink(far, shared / f"{name}.tmp-symlink0")
        os.symlink(outside / "victim_dir", shared / f"{name}.tmp-symlink1")
        os.symlink(outside / "victim.txt", shared / f"{name}.tmp-symlink2")
        # a shared (0755) directory with a valid stale marker: not private, so not ours
        os.chmod(plant(shared, [name], name=f"{name}.tmp-shared00"), 0o755)
        # a private directory without darray's marker (another tool, an old darray version)
        (shared / f"{name}.tmp-nomarker").mkdir(mode=0o700)
        (shared / f"{name}.tmp-nomarker" / name).write_text("someone's")
        # a marker that is a symlink to a valid marker elsewhere
        fake = shared / f"{name}.tmp-linkmark"
        fake.mkdir(mode=0o700)
        os.symlink(far / MARKER, fake / MARKER)
        # a marker that is not darray's format, and one of another target under our prefix
        bad = plant(shared, [name], name=f"{name}.tmp-badjson0")
        (bad / MARKER).write_text("{not json")
        plant(shared, ["x.zarr.backup"], name=f"{name}.tmp-othertgt")
        plant(shared, ["y.zarr"], name="y.zarr.tmp-otherone")
        # user files and directories named like stages
        (shared / f"{name}.tmp-userfile").write_text("mine")
        (shared / f"{name}.tmp-").mkdir()
        (shared / f"{name}.tmp-with.dot").mkdir(mode=0o700)
        # a stale stage of ours holding links out: removed, the links as links
        ours = plant(shared, [name])
        os.symlink(outside / "victim_dir", ours / "link_to_dir")
        os.symlink(outside / "victim.txt", ours / "link_to_file")
        (ours / "sub").mkdir()
        os.symlink(outside / "victim_dir", ours / "sub" / "deeper")
        kinds["ours"] = str(ours)

    on_rank0(comm, prepare)
    ours = _bcast_path(comm, kinds.get("ours"))
    before_outside = snapshot(outside)
    before = [s for s in stages(shared) if s != Path(ours).name]
    before_links = {p.name: os.readlink(p) for p in shared.iterdir() if p.is_symlink()}
    found = clean_staging(shared / name, older_than=0, dry_run=True)
    everywhere(comm, found == [ours], f"dry run found {found}, expected only {ours}")
    save(shared / name, da.asarray(sample(5), split=0))
    everywhere(comm, clean_staging(shared / name, older_than=0) == [], "something else was removed")
    everywhere(comm, snapshot(outside) == before_outside, "something outside changed")
    everywhere(comm, stages(shared) == before, f"foreign entries changed: {stages(shared)} vs {before}")
    everywhere(comm, {p.name: os.readlink(p) for p in shared.iterdir() if p.is_symlink()} == before_links,
               "a symlink was changed")
    assert_equal(load(shared / name, split=0), sample(5))


def _bcast_path(comm, text):
    buf = np.zeros(4096, dtype=np.uint8)
    if comm.rank == 0:
        data = text.encode()
        buf[:len(data)] = np.frombuffer(data, dtype=np.uint8)
    return bytes(np.asarray(comm.bcast(buf, 0))).rstrip(b"\0").decode()


@mpi
def test_a_target_named_like_the_marker_is_refused(comm, shared):
    text = assert_raises_everywhere(ValueError, save, shared / MARKER, da.arange(6.0, split=0))
    assert "reserved" in text and MARKER in text


# ------------------------------------------------------------------ problems are warnings, agreed
def _warned(comm, fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    texts = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    return out, texts


@mpi
def test_problems_while_removing_are_the_same_warning_on_every_rank(comm, shared, monkeypatch):
    path = shared / "x.npy"
    on_rank0(comm, plant, shared, ["x.npy.sha256", "x.npy"])

    def cannot_remove(dir_fd, name, problems, where, expect=None):
        problems.append(f"{where}: Permission denied (simulated)")

    monkeypatch.setattr(_stage_markers, "_remove_tree", cannot_remove)
    _, texts = _warned(comm, save_npy, path, da.asarray(sample(6), split=0))
    everywhere(comm, len(texts) == 1 and "Permission denied (simulated)" in texts[0] and "save_npy" in texts[0],
               f"warnings: {texts}")
    assert_equal(load_npy(path, split=0), sample(6))  # the save went on
    removed, texts = _warned(comm, clean_staging, path)
    everywhere(comm, removed == [] and len(texts) == 1 and "simulated" in texts[0], f"{removed} {texts}")

    def broken(*args, **kwargs):
        raise RuntimeError("sweep bug (simulated)")

    monkeypatch.setattr(_stage_markers, "sweep", broken)
    _, texts = _warned(comm, save_npy, path, da.asarray(sample(7), split=0))
    everywhere(comm, len(texts) == 1 and "sweep bug (simulated)" in texts[0], f"warnings: {texts}")
    assert_equal(load_npy(path, split=0), sample(7))
    monkeypatch.undo()
    everywhere(comm, len(clean_staging(path)) == 1 and stages(shared) == [], f"left: {stages(shared)}")


# ------------------------------------------------------------------ clean_staging
@mpi
def test_clean_staging_dry_run_thresholds_and_sidecar_stages(comm, shared):
    on_rank0(comm, lambda: [plant(shared, ["x.npy.sha256", "x.npy"], host="elsewhere", age=30 * DAY),
                            plant(shared, ["x.zarr"], host="elsewhere", age=30 * DAY)])
    first = clean_staging(shared / "x.npy", dry_run=True)
    everywhere(comm, len(first) == 1 and Path(first[0]).name.startswith("x.npy.sha256.tmp-"), f"{first}")
    everywhere(comm, len(stages(shared)) == 2, "a dry run removed something")
    everywhere(comm, clean_staging(shared / "x.npy", older_than=datetime.timedelta(days=60)) == [], "too young")
    everywhere(comm, clean_staging(shared / "x.npy", older_than=math.inf) == [], "another host's pid was checked")
    everywhere(comm, clean_staging(shared / "x.npy", older_than=datetime.timedelta(days=1)) == first, "not removed")
    everywhere(comm, [s[:11] for s in stages(shared)] == ["x.zarr.tmp-"], f"left: {stages(shared)}")
    everywhere(comm, len(clean_staging(os.fspath(shared / "x.zarr"), older_than=7 * DAY)) == 1, "x.zarr stayed")
    everywhere(comm, clean_staging(shared / "never-saved.zarr") == [], "a target never saved")


@mpi
def test_clean_staging_bad_input(comm, shared):
    target = shared / "x.zarr"
    for bad in (3, None, 2.5):
        text = assert_raises_everywhere(TypeError, clean_staging, bad)
        assert text.startswith("clean_staging: path must be a str or os.PathLike")
    for bad in ("", ".", "/", "a\0b"):
        text = assert_raises_everywhere(ValueError, clean_staging, bad)
        assert text.startswith("clean_staging: invalid target path")
    for bad in ("1h", None, True, [1.0]):
        text = assert_raises_everywhere(TypeError, clean_staging, target, older_than=bad)
        assert text.startswith("clean_staging: older_than must be a number of seconds or a datetime.timedelta")
    for bad in (-1, -0.5, math.nan, datetime.timedelta(seconds=-1)):
        text = assert_raises_everywhere(ValueError, clean_staging, target, older_than=bad)
        assert text.startswith("clean_staging: older_than must be at least 0 seconds")
    for bad in ("yes", 1, None):
        text = assert_raises_everywhere(TypeError, clean_staging, target, dry_run=bad)
        assert text.startswith("clean_staging: dry_run must be a bool")
    text = assert_raises_everywhere(FileNotFoundError, clean_staging, shared / "no" / "x.zarr")
    assert text.startswith("clean_staging: no such directory") and str(shared / "no") in text
    on_rank0(comm, (shared / "file").write_text, "not a directory")
    assert_raises_everywhere(FileNotFoundError, clean_staging, shared / "file" / "x.zarr")
    if comm.size > 1:
        text = assert_raises_everywhere(ValueError, clean_staging, shared / f"mine-{comm.rank}")
        assert "different paths" in text


def test_a_stage_whose_marker_was_never_written_is_removed_once_old(tmp_path):
    """A creator killed between creating its marker and writing it leaves a stage that only holds an empty
    marker: no data, nobody's lock. Removed after PARTIAL_GRACE; kept while fresh, locked, or holding more."""
    import fcntl

    def stage(name, extra=False, age=2 * _stage_markers.PARTIAL_GRACE):
        d = tmp_path / name
        d.mkdir(mode=0o700)
        marker = d / _stage_markers.MARKER
        marker.write_bytes(b'{"format": "darray-sta')  # cut mid-write
        if extra:
            (d / "data").write_bytes(b"x")
        old = time.time() - age
        os.utime(marker, (old, old))
        return d

    old, fresh, fuller, locked = (stage("x.zarr.tmp-old"), stage("x.zarr.tmp-fresh", age=0),
                                  stage("x.zarr.tmp-full", extra=True), stage("x.zarr.tmp-locked"))
    empty_old, empty_fresh = tmp_path / "x.zarr.tmp-emptyold", tmp_path / "x.zarr.tmp-emptyfresh"
    for d, age in ((empty_old, 2 * _stage_markers.PARTIAL_GRACE), (empty_fresh, 0)):  # killed before the marker
        d.mkdir(mode=0o700)
        os.utime(d, (time.time() - age,) * 2)
    holder = os.open(locked / _stage_markers.MARKER, os.O_RDWR)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        found = _stage_markers.sweep(str(tmp_path), ["x.zarr"])
    finally:
        os.close(holder)
    assert sorted(found.removed) == sorted([str(old), str(empty_old)]), found
    assert not old.exists() and fresh.exists() and fuller.exists() and locked.exists()
    assert not empty_old.exists() and empty_fresh.exists()
