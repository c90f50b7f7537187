"""The ``darray`` command: what ``darray info`` reports."""

from __future__ import annotations

import importlib.metadata

from darray import cli


def _rows(text: str) -> dict[str, str]:
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def test_info_lists_the_optional_stack(capsys):
    assert cli.main(["info"]) == 0
    rows = {key.strip(): value.strip() for key, value in _rows(capsys.readouterr().out).items()}
    for name, distributions in cli.OPTIONAL_STACK.items():
        versions = []
        for dist in distributions:
            try:
                versions.append(importlib.metadata.version(dist))
            except importlib.metadata.PackageNotFoundError:
                pass
        assert rows[name] == (versions[0] if versions else "not installed"), name
    assert rows["numpy"] == importlib.metadata.version("numpy")


def test_info_says_whether_the_lean_paths_are_compiled(capsys, monkeypatch):
    from darray._core import compiled

    assert cli.main(["info"]) == 0
    row = _rows(capsys.readouterr().out)["lean paths"].strip()
    assert row.startswith("compiled") == (compiled.lean is not None), row
    monkeypatch.setattr(compiled, "lean", None)
    monkeypatch.setenv("DARRAY_PURE_PYTHON", "1")
    assert cli.main(["info"]) == 0
    assert _rows(capsys.readouterr().out)["lean paths"].strip() == "Python (DARRAY_PURE_PYTHON is set)"


def test_explain_command_prints_what_darray_explain_predicts(capsys):
    import darray as da

    assert cli.main(["explain", "1024", "1024", "-n", "4", "--split", "0", "--boundary", "periodic"]) == 0
    want = da.explain((1024, 1024), nprocs=4, split=0, halo=1, boundary="periodic")
    assert capsys.readouterr().out.strip() == str(want).strip()
    assert cli.main(["explain", "100", "60", "-n", "4", "--split", "0,1", "--grid", "2,2", "--halo", "2"]) == 0
    assert "grid=(2, 2) split=(0, 1) halo=(2, 2)" in capsys.readouterr().out


def test_explain_with_a_grid_alone_cuts_the_axes_of_the_grid(capsys):
    """``darray explain 4096 4096 -n 4 --grid 2,2`` (split 'auto'): the grid's axes are chosen, no traceback."""
    assert cli.main(["explain", "4096", "4096", "-n", "4", "--grid", "2,2"]) == 0
    assert "grid=(2, 2) split=(0, 1)" in capsys.readouterr().out


def test_explain_prints_one_line_for_bad_options(capsys):
    assert cli.main(["explain", "4096", "4096", "-n", "4", "--grid", "3,2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("darray explain: grid dims must be positive and multiply to the number of ranks")
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert cli.main(["explain", "64", "-n", "4", "--grid", "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("darray explain: ") and len(err.splitlines()) == 1


def test_run_names_a_missing_script_in_one_line(capsys, tmp_path):
    assert cli.main(["run", "-n", "2", str(tmp_path / "nothere.py")]) == 2
    err = capsys.readouterr().err
    assert err == f"darray run: no such script: {tmp_path / 'nothere.py'}\n"
