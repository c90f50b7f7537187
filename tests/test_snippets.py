"""Every ```python block of the README and the guides runs, at 1-4 ranks.

The blocks of one page run in order in one namespace (a page builds on its
earlier blocks), in one directory every rank shares, with large sizes shrunk
(:data:`SHRINK`) so that the suite stays fast. A page that needs an optional
library runs only where it is installed (:data:`NEEDS`).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "docs" / "index.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]

#: text in a snippet -> what the test runs instead (sizes that would make the suite slow).
SHRINK = (("4096", "256"), ("8192", "256"), ("range(100)", "range(3)"))

#: page -> the library its snippets need (a GPU page needs CuPy and a device).
NEEDS = {"gpu.md": "cupy"}


def _snippets(page: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", page.read_text(), flags=re.S | re.M)


def _ids(page: Path) -> str:
    return str(page.relative_to(ROOT))


def test_the_pages_have_snippets():
    assert sum(len(_snippets(p)) for p in PAGES) >= 20


@pytest.mark.mpi
@pytest.mark.parametrize("page", [p for p in PAGES if _snippets(p)], ids=_ids)
def test_snippets_run(page, shared, monkeypatch, capsys):
    need = NEEDS.get(page.name)
    if need and importlib.util.find_spec(need) is None:
        pytest.skip(f"{page.name} needs {need} (a GPU), not installed here")
    workdir = shared / page.stem
    workdir.mkdir(exist_ok=True)
    monkeypatch.chdir(workdir)
    scope = {"__name__": "__snippets__"}
    for i, source in enumerate(_snippets(page)):
        for old, new in SHRINK:
            source = source.replace(old, new)
        try:
            exec(compile(source, f"{page.name} python block {i + 1}", "exec"), scope)  # our docs
        except Exception as error:  # report which block of which page failed
            pytest.fail(f"{_ids(page)}, python block {i + 1}: {type(error).__name__}: {error}")
    capsys.readouterr()  # snippets print; keep the test output clean
