"""A notebook drives 2 MPI ranks: examples/interactive.ipynb runs under nbclient against a real cluster.

One serial test starts a Jupyter kernel (nbclient), which starts a 2-engine
ipyparallel cluster under the venv's ``mpiexec`` (``darray.interactive.start``),
runs the example notebook's cells and then a few cells of its own (Ctrl-C, an
error on one rank while the other waits in a collective, ``ranks.restart()``),
and checks that every output shows once. The cluster's files live in a
temporary ``IPYTHONDIR``; whatever is still running there at the end is
stopped. About 30 s on an idle 2-core machine.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("ipyparallel", reason="darray.interactive needs ipyparallel (pip install 'darray[notebook]')")
pytest.importorskip("nbclient", reason="the notebook test runs the notebook with nbclient (pip install nbclient)")
nbformat = pytest.importorskip("nbformat", reason="the notebook test reads the notebook with nbformat")

pytestmark = pytest.mark.numpy_only(reason="starts its own MPI cluster from a Jupyter kernel")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "examples" / "interactive.ipynb"
CELL_TIMEOUT = 120  # a hang guard per cell; each takes seconds

#: Cells the test adds before the notebook's last one (``ranks.stop()``), by name.
EXTRA = {
    # Ctrl-C: the kernel interrupts itself (SIGINT, as Jupyter's interrupt does) while the ranks sleep.
    "interrupt": "import os, signal, threading\n"
                 "threading.Timer(3.0, os.kill, (os.getpid(), signal.SIGINT)).start()\n"
                 "get_ipython().run_cell_magic('px', '', 'import time\\ntime.sleep(120)')",
    "after_interrupt": "%%px\nfloat(da.sum(u))",
    # rank 1 raises while rank 0 waits for it in a sum over the cut axis
    "one_rank": "%%px\nfrom mpi4py import MPI\nif MPI.COMM_WORLD.rank == 1:\n    raise ValueError('only here')\n"
                "float(da.sum(u))",
    "out_of_step": "%%px\n3 * 7",
    "restart": "ranks.restart()",
    "fresh": "%%px\nimport darray as da\nfloat(da.sum(da.ones((300, 300), split=0)))",
    "plain": "ranks.run('6 * 7')",
}


def _texts(cell, kind: str) -> str:
    return "".join(o.text for o in cell.outputs if o.output_type == "stream" and o.name == kind)


def _shown(text: str) -> list[str]:
    """The lines as a terminal or Jupyter shows them: each line's last carriage-return redraw."""
    return [line.split("\r")[-1] for line in text.split("\n") if line.split("\r")[-1].strip()]


def _of(cell, output_type: str) -> list:
    return [o for o in cell.outputs if o.output_type == output_type]


def _stop_leftovers(ipython_dir: Path) -> None:
    """Stop any cluster whose file is still in ``ipython_dir`` (the kernel died before stopping it)."""
    import ipyparallel as ipp

    for path in ipython_dir.glob("profile_*/security/cluster-*.json"):
        try:
            ipp.Cluster.from_file(str(path)).stop_cluster_sync()
        except Exception as e:  # report, go on with the others
            print(f"could not stop the cluster of {path}: {e}")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The notebook's cells and EXTRA's, executed: {name or index: cell}."""
    from nbclient import NotebookClient

    ipython_dir = tmp_path_factory.mktemp("ipython")
    mp = pytest.MonkeyPatch()
    mp.setenv("IPYTHONDIR", str(ipython_dir))  # the kernel, the controller and the engines inherit it
    mp.setenv("PYTHONPATH", ":".join(filter(None, [str(ROOT), __import__("os").environ.get("PYTHONPATH")])))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    last = nb.cells.pop()
    assert "ranks.stop()" in last.source
    names = {}
    for name, source in EXTRA.items():
        names[name] = len(nb.cells)
        nb.cells.append(nbformat.v4.new_code_cell(source))
    names["stop"] = len(nb.cells)
    nb.cells.append(last)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT, startup_timeout=60, allow_errors=True,
                            kernel_name="python3", resources={"metadata": {"path": str(ROOT)}})
    try:
        client.execute()
    finally:
        _stop_leftovers(ipython_dir)
        mp.undo()
    cells = {i: c for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    cells.update({name: nb.cells[i] for name, i in names.items()})
    return cells


def _code(run, marker: str):
    """The notebook's code cell whose source contains ``marker``."""
    found = [c for k, c in run.items() if isinstance(k, int) and marker in c.source]
    assert len(found) == 1, f"the notebook has {len(found)} cells with {marker!r}"
    return found[0]


def test_start(run):
    cell = _code(run, "darray.interactive.start(2)")
    assert not _of(cell, "error"), cell.outputs
    assert "2 MPI ranks" in _of(cell, "execute_result")[0].data["text/plain"]


def test_darray_shown_once(run):
    cell = _code(run, "u = da.exp(")
    assert not _of(cell, "error") and not _texts(cell, "stdout"), cell.outputs
    results = _of(cell, "execute_result")
    assert len(results) == 1
    text = results[0].data["text/plain"]
    assert text.startswith("array([[") and text.count("array(") == 1, text


def test_prints_once_and_per_rank_lines(run):
    cell = _code(run, "this rank's block")
    lines = _shown(_texts(cell, "stdout"))
    assert lines == ["this rank's block: (128, 256)", "cells in all: 65536"], lines
    assert not _of(cell, "error")


def test_progress_bar_once(run):
    cell = _code(run, "tqdm(range(50)")
    assert not _of(cell, "error"), cell.outputs
    bars = [line for line in _shown(_texts(cell, "stderr")) if "diffusion" in line]
    assert len(bars) == 1 and "50/50" in bars[0], bars
    lines = _shown(_texts(cell, "stdout"))
    assert len(lines) == 1 and lines[0].startswith("total heat "), lines


def test_figure_once(run):
    cell = _code(run, "plt.subplots")
    assert not _of(cell, "error"), cell.outputs
    pictures = [o for o in _of(cell, "display_data") if "image/png" in o.data]
    assert len(pictures) == 1 and not _of(cell, "execute_result")


def test_error_on_every_rank_one_traceback(run):
    cell = _code(run, "u[n, 0]")
    errors = _of(cell, "error")
    assert len(errors) == 1 and len(cell.outputs) == 1, cell.outputs
    lines = errors[0].traceback
    assert lines[0].startswith("IndexError on every rank of 2"), lines[0]
    assert sum("Traceback (most recent call last)" in line for line in lines) == 1


def test_interrupt_one_line(run):
    cell = run["interrupt"]
    assert [o.output_type for o in cell.outputs] == ["error"], cell.outputs
    assert cell.outputs[0].traceback == ["KeyboardInterrupt: stopped the cell on ranks 0, 1"]
    after = run["after_interrupt"]  # the ranks are free again, and in step (time.sleep is no collective)
    assert [o.output_type for o in after.outputs] == ["execute_result"], after.outputs


def test_error_on_one_rank_stops_the_waiting_one(run):
    cell = run["one_rank"]
    errors = _of(cell, "error")
    assert len(errors) == 1 and len(cell.outputs) == 1, cell.outputs
    lines = errors[0].traceback
    assert lines[0] == "ValueError on rank 1 of 2", lines[0]
    assert any("only here" in line for line in lines)
    assert re.search(r"rank 0 stopped", lines[-2]) and "out of step" in lines[-1], lines[-2:]
    notice = run["out_of_step"]
    assert "out of step" in _texts(notice, "stderr")
    assert _of(notice, "execute_result")[0].data["text/plain"] == "21"


def test_restart(run):
    assert not _of(run["restart"], "error"), run["restart"].outputs
    fresh = run["fresh"]
    assert [o.output_type for o in fresh.outputs] == ["execute_result"], fresh.outputs
    assert fresh.outputs[0].data["text/plain"] == "90000.0"
    assert run["plain"].outputs[0].data["text/plain"] == "42"


def test_stop(run):
    assert not _of(run["stop"], "error"), run["stop"].outputs
