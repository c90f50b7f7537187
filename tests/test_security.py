"""Files darray writes or trusts on a user's behalf: no planted code runs, no planted symlink is followed.

- the fuse cache (``DARRAY_FUSE_CACHE``): a kernel module in the cache that
  differs from the source it is named for never runs (it is rewritten); a
  cache directory that others can write (group- or world-writable, or owned
  by another user) is not used, with a warning naming it; new directories
  are 0700 and new modules 0600;
- traces (``DARRAY_TRACE=trace.json``, ``Trace.to_chrome``), the demo's and
  the benchmark's PNGs and reports: a symlink planted at the output path is
  replaced by a regular file, and the file it pointed at stays unchanged
  (:mod:`darray._files`).

Serial tests (not marked ``mpi``): they are about one process's files.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import warnings

import numpy as np
import pytest

import darray as da
from darray import _files
from darray.fuse import cache as fuse_cache

posix_only = pytest.mark.skipif(os.name != "posix", reason="owner and mode bits are POSIX")


def _source(tmp_path, tag: str = "") -> str:
    """A kernel module like the ones darray.fuse.codegen writes (unique per test: no in-process cache hit)."""
    return ("import numpy as np\nimport numba\n\n\n@numba.njit(cache=True, nogil=True, error_model='numpy')\n"
            f"def kernel(a):  # {tmp_path.name}{tag}\n    return a.sum() * 2\n")


def _module_path(folder, source: str):
    import hashlib

    return folder / f"darray_fuse_{hashlib.sha1(source.encode()).hexdigest()[:20]}.py"


def _planted_line(marker) -> str:
    """A line that leaves the file ``marker`` behind when it runs."""
    return f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n"


@pytest.fixture
def fresh_kernels(monkeypatch):
    """Empty in-process caches of compiled kernels and of reported directories, restored afterwards."""
    pytest.importorskip("numba")
    monkeypatch.setattr(fuse_cache, "_kernels", {})
    monkeypatch.setattr(fuse_cache, "_warned", set(), raising=False)


# ------------------------------------------------------------------ the fuse cache
def test_planted_line_in_a_cached_module_does_not_run(tmp_path, monkeypatch, fresh_kernels):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("DARRAY_FUSE_CACHE", str(folder))
    source = _source(tmp_path)
    path, marker = _module_path(folder, source), tmp_path / "planted-line-ran"
    path.write_text(source + _planted_line(marker))  # the name matches, the text does not
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        kernel = fuse_cache.compiled(source)
    assert not marker.exists(), "the planted line ran"
    assert _messages(record, "does not hold the source it is named for")
    assert kernel(np.arange(5.0)) == 20.0
    assert path.read_text() == source  # rewritten with the real source
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 or os.name != "posix"


def test_planted_line_before_the_source_does_not_run(tmp_path, monkeypatch, fresh_kernels):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("DARRAY_FUSE_CACHE", str(folder))
    source = _source(tmp_path)
    path, marker = _module_path(folder, source), tmp_path / "planted-line-ran"
    path.write_text(_planted_line(marker) + source)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        fuse_cache.compiled(source)
    assert not marker.exists(), "the planted line ran"
    assert _messages(record, "does not hold")


@pytest.mark.skipif(os.environ.get("DARRAY_BACKEND", "numpy") != "numpy" or os.environ.get("DARRAY_FUSE") == "eager",
                    reason="kernels are generated for NumPy blocks only")
def test_planted_lines_in_real_fused_kernels_do_not_run(tmp_path, monkeypatch, fresh_kernels):
    """End to end: every module that darray.fuse wrote for a function is tampered with, then the function rebuilt."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("DARRAY_FUSE_CACHE", str(folder))

    def build():
        @da.fuse
        def f(a, b):
            return da.sum(a * b + 1.0)

        return f

    x = da.asarray(np.arange(12.0), split=0)
    want = float(build()(x, x))
    modules = sorted(folder.glob("darray_fuse_*.py"))
    assert modules, "no kernel module was written"
    marker = tmp_path / "planted-line-ran"
    for path in modules:
        path.write_text(path.read_text() + _planted_line(marker))
    fuse_cache._kernels.clear()  # as a later process would: the modules are read from the cache again
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        assert float(build()(x, x)) == want
    assert not marker.exists(), "the planted line ran"
    assert len(_messages(record, "does not hold")) == len(modules)


def test_a_symlinked_cached_module_is_replaced_not_followed(tmp_path, monkeypatch, fresh_kernels):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("DARRAY_FUSE_CACHE", str(folder))
    source = _source(tmp_path)
    path, marker = _module_path(folder, source), tmp_path / "planted-line-ran"
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_text(source + _planted_line(marker))
    path.symlink_to(elsewhere)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        fuse_cache.compiled(source)
    assert not marker.exists(), "the planted line ran"
    assert _messages(record, "does not hold")
    assert not path.is_symlink() and path.read_text() == source
    assert elsewhere.read_text() == source + _planted_line(marker)  # the link's target is untouched


def test_an_intact_cached_module_is_used_silently(tmp_path, monkeypatch, fresh_kernels):
    folder = tmp_path / "cache"
    monkeypatch.setenv("DARRAY_FUSE_CACHE", str(folder))
    source = _source(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fuse_cache.compiled(source)
        path = _module_path(folder, source)
        before = path.stat().st_mtime_ns
        fuse_cache._kernels.clear()  # as a new process would: the file is checked and used as it is
        assert fuse_cache.compiled(source)(np.ones(3)) == 6.0
    assert path.stat().st_mtime_ns == before


@posix_only
def test_new_cache_directories_are_private(tmp_path, monkeypatch, fresh_kernels):
    folder = tmp_path / "new" / "cache"
    monkeypatch.setenv("DARRAY_FUSE_CACHE", str(folder))
    source = _source(tmp_path)
    fuse_cache.compiled(source)
    for made in (folder, folder / "__pycache__"):
        assert stat.S_IMODE(made.stat().st_mode) == 0o700, made
    assert stat.S_IMODE(_module_path(folder, source).stat().st_mode) == 0o600


@posix_only
@pytest.mark.parametrize("where, mode", [("cache", 0o777), ("cache", 0o770), ("__pycache__", 0o777)])
def test_a_cache_directory_others_can_write_is_not_used(tmp_path, monkeypatch, fresh_kernels, where, mode):
    folder = tmp_path / "cache"
    (folder / "__pycache__").mkdir(parents=True, mode=0o700)
    folder.chmod(0o700)
    unsafe = folder if where == "cache" else folder / "__pycache__"
    unsafe.chmod(mode)
    monkeypatch.setenv("DARRAY_FUSE_CACHE", str(folder))
    source = _source(tmp_path, where)
    path, marker = _module_path(folder, source), tmp_path / "planted-line-ran"
    path.write_text(source + _planted_line(marker))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        kernel = fuse_cache.compiled(source)
        assert fuse_cache.cache_dir() is None
    assert not marker.exists(), "the planted line ran"
    assert kernel(np.arange(5.0)) == 20.0  # compiled in memory
    found = _messages(record, "not using the kernel cache directory")
    assert len(found) == 1  # once per process
    assert repr(str(unsafe)) in found[0] and "DARRAY_FUSE_CACHE" in found[0] and "chmod 700" in found[0]
    assert path.read_text() == source + _planted_line(marker)  # nothing read from or written to it


@posix_only
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root")
def test_a_cache_directory_of_another_user_is_not_used(tmp_path, monkeypatch, fresh_kernels):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o755)
    os.chown(folder, 65534, 65534)
    monkeypatch.setenv("DARRAY_FUSE_CACHE", str(folder))
    with pytest.warns(RuntimeWarning, match="owned by user id 65534"):
        assert fuse_cache.cache_dir() is None


# ------------------------------------------------------------------ output files and planted symlinks
def _planted_link(tmp_path, name: str):
    """``tmp_path/name`` as a symlink to a file holding precious data: (link, target)."""
    target = tmp_path / "precious.txt"
    target.write_text("precious")
    link = tmp_path / name
    link.symlink_to(target)
    return link, target


def _messages(record, text: str) -> list[str]:
    """The messages of the RuntimeWarnings in ``record`` that contain ``text``."""
    return [str(w.message) for w in record if issubclass(w.category, RuntimeWarning) and text in str(w.message)]


def _assert_replaced(link, target) -> None:
    assert target.read_bytes() == b"precious", "written through the planted symlink"
    assert not link.is_symlink() and link.is_file()


def test_trace_is_not_written_through_a_planted_symlink(tmp_path):
    link, target = _planted_link(tmp_path, "trace.json")
    with da.tracing() as t:
        float(da.sum(da.arange(10.0) * 2))
    t.to_chrome(str(link))
    _assert_replaced(link, target)
    assert json.loads(link.read_text())["traceEvents"]


def test_trace_is_not_written_through_a_dangling_planted_symlink(tmp_path):
    link = tmp_path / "trace.json"
    link.symlink_to(tmp_path / "created-elsewhere")
    with da.tracing() as t:
        float(da.sum(da.ones(4)))
    t.to_chrome(str(link))
    assert not (tmp_path / "created-elsewhere").exists() and not link.is_symlink()


def test_darray_trace_variable_does_not_follow_a_planted_symlink(tmp_path):
    link, target = _planted_link(tmp_path, "trace.json")
    env = {k: v for k, v in os.environ.items() if k not in ("PMI_RANK", "OMPI_COMM_WORLD_RANK")}
    env["DARRAY_TRACE"] = "trace.json"
    root = os.path.dirname(os.path.dirname(os.path.abspath(da.__file__)))  # this darray, not another installed one
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-c", "import darray as da; float(da.sum(da.ones(8)))"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    _assert_replaced(link, target)
    assert json.loads(link.read_text())["traceEvents"]


def test_bench_plot_is_not_written_through_a_planted_symlink(tmp_path):
    pytest.importorskip("matplotlib")
    from darray.bench import WORKLOADS
    from darray.bench.plot import plot

    link, target = _planted_link(tmp_path, "bench.png")
    results = {next(iter(WORKLOADS)): {"numpy": {"time": 1.0}, "darray1": {"time": 0.5}}}
    meta = {"ranks": 2, "size": "smoke", "loadavg": {"start": 0.0}}
    assert plot(link, meta, results)
    _assert_replaced(link, target)
    assert link.read_bytes().startswith(b"\x89PNG")


def test_demo_figure_is_not_written_through_a_planted_symlink(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from darray.demo import _save_figure

    link, target = _planted_link(tmp_path, "loss.png")
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3])
    assert _save_figure(fig, str(tmp_path), "loss.png") == "loss.png"
    _assert_replaced(link, target)
    assert link.read_bytes().startswith(b"\x89PNG")


# ------------------------------------------------------------------ darray._files
def test_write_text_safely_replaces_a_symlink_and_keeps_no_temporary(tmp_path):
    link, target = _planted_link(tmp_path, "out.txt")
    _files.write_text_safely(link, "new")
    _assert_replaced(link, target)
    assert link.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt", "precious.txt"]


def test_a_failed_write_leaves_the_target_and_no_temporary(tmp_path):
    path = tmp_path / "out.bin"
    path.write_bytes(b"old")
    with pytest.raises(ZeroDivisionError):
        with _files.replacing(path) as f:
            f.write(b"half")
            1 / 0
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


@posix_only
def test_modes_of_written_files(tmp_path):
    path = tmp_path / "out.txt"
    _files.write_bytes_safely(path, b"x", mode=0o600)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o640)
    _files.write_bytes_safely(path, b"y")  # a replaced regular file keeps its permission bits
    assert stat.S_IMODE(path.stat().st_mode) == 0o640 and path.read_bytes() == b"y"
    umask = os.umask(0o022)
    os.umask(umask)
    _files.write_bytes_safely(tmp_path / "fresh", b"z")  # as open() would: 0666 less the umask
    assert stat.S_IMODE((tmp_path / "fresh").stat().st_mode) == 0o666 & ~umask


@posix_only
def test_private_directory_verdicts(tmp_path):
    assert _files.private_directory(tmp_path / "a" / "b") is None
    assert stat.S_IMODE((tmp_path / "a" / "b").stat().st_mode) == 0o700
    (tmp_path / "a" / "b").chmod(0o757)
    assert "writable by others" in _files.private_directory(tmp_path / "a" / "b")
    (tmp_path / "a" / "b").chmod(0o775)
    assert "writable by group" in _files.private_directory(tmp_path / "a" / "b")
    (tmp_path / "file").write_text("")
    assert _files.private_directory(tmp_path / "file") == "is not a directory"
