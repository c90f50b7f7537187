"""The gallery is complete: every example has its committed picture and output, every page shows them.

Cheap by design: no example runs and Sphinx does not build here. The pages
are generated in memory by ``docs/_gen.py`` (what the docs build does) and
their image references checked against ``docs/_static/gallery/``, where
``docs/_gallery.py`` puts what it makes (run it after changing an example).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
GALLERY = DOCS / "_static" / "gallery"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def gen():
    sys.path.insert(0, str(DOCS))
    try:
        import _gallery
        import _gen
    finally:
        sys.path.remove(str(DOCS))
    return _gen, _gallery


def _examples() -> list[str]:
    return sorted(p.stem for p in (ROOT / "examples").glob("*.py") if not p.name.startswith("_"))


def _images(rst: str) -> list[str]:
    return re.findall(r"^\.\. (?:image|figure):: (\S+)", rst, flags=re.M)


def test_there_are_examples():
    assert {"quickstart", "heat2d", "wave3d", "cfd_cavity", "train_surrogate"} <= set(_examples())


@pytest.mark.parametrize("name", _examples())
def test_every_example_has_its_picture_and_output(name, gen):
    _, _gallery = gen
    source = (ROOT / "examples" / f"{name}.py").read_text()
    assert "--plot" in source, f"examples/{name}.py takes no --plot PATH option (docs/_gallery.py passes one)"
    png, txt = GALLERY / f"{name}.png", GALLERY / f"{name}.txt"
    hint = f"run `python docs/_gallery.py {name}` and commit docs/_static/gallery/{name}.*"
    assert png.is_file(), f"no {png.relative_to(ROOT)}: {hint}"
    assert png.read_bytes()[:8] == PNG_MAGIC, f"{png.relative_to(ROOT)} is not a PNG"
    assert png.stat().st_size <= _gallery.MAX_BYTES, (
        f"{png.relative_to(ROOT)} is {png.stat().st_size} bytes; keep gallery pictures under "
        f"{_gallery.MAX_BYTES} (lower the dpi)")
    assert txt.is_file(), f"no {txt.relative_to(ROOT)}: {hint}"
    first = txt.read_text().splitlines()[0]
    assert first == "$ " + " ".join(_gallery.command(name)), (
        f"{txt.relative_to(ROOT)} was made by {first!r}, not by the command docs/_gallery.py runs now: {hint}")


@pytest.mark.parametrize("name", _examples())
def test_every_gallery_page_shows_picture_commands_output_and_source(name, gen):
    _gen, _ = gen
    page = _gen.gallery_page(DOCS, ROOT, name)
    images = _images(page)
    assert images, f"the gallery page of {name} shows no picture"
    for ref in images:
        assert (DOCS / ref.lstrip("/")).is_file(), f"the gallery page of {name} shows a missing image {ref}"
    assert f"python examples/{name}.py" in page
    assert f"mpiexec -n 4 python examples/{name}.py" in page
    assert f"/_static/gallery/{name}.txt" in page, f"the gallery page of {name} shows no printed output"
    assert f"/../examples/{name}.py" in page, f"the gallery page of {name} shows no source"


def test_gallery_index_lists_every_example_and_the_benchmark(gen):
    _gen, _gallery = gen
    index = _gen.gallery_index(DOCS, ROOT)
    for name in _examples():
        assert f"gallery/{name}" in index
    images = _images(index)
    assert f"/_static/gallery/{_gallery.BENCH_COPY.name}" in images, "the benchmark's scaling plot is missing"
    for ref in images:
        assert (DOCS / ref.lstrip("/")).is_file(), f"the gallery index shows a missing image {ref}"
        assert (DOCS / ref.lstrip("/")).stat().st_size <= _gallery.MAX_BYTES, f"{ref} is too large"


def test_images_in_the_markdown_pages_exist():
    """``![...](path)`` and ``{image}``/``{figure}`` directives in docs/**/*.md point at committed files."""
    for md in DOCS.rglob("*.md"):
        if "_build" in md.parts:
            continue
        text = md.read_text()
        refs = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text) + re.findall(r"^```\{(?:image|figure)\} (\S+)", text,
                                                                       flags=re.M)
        for ref in refs:
            target = DOCS / ref.lstrip("/") if ref.startswith("/") else md.parent / ref
            assert target.is_file(), f"{md.relative_to(ROOT)} shows a missing image {ref}"


def test_gallery_files_are_not_ignored_by_git():
    """The pictures must reach the repository: no .gitignore pattern may swallow docs/_static/gallery/."""
    git = shutil.which("git")
    if git is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    files = [str(p.relative_to(ROOT)) for p in sorted(GALLERY.iterdir())]
    ignored = subprocess.run([git, "check-ignore", *files], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert not ignored, f"git ignores gallery files (fix docs/.gitignore or .gitignore): {ignored}"
