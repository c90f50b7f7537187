#!/usr/bin/env python3
"""Write the ```python blocks of the README and the guides into the package DIR/snippets, one module per page.

A page's blocks build on each other (tests/test_snippets.py runs them in one namespace, in order), so each page
becomes one module, its blocks in order; pyproject.toml's mypy settings for ``snippets.*`` apply to them.
Usage: ``python .ci/snippets.py DIR`` (.ci/typecheck runs it, then mypy over DIR/snippets).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "docs" / "index.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]


def blocks(page: Path) -> list[str]:
    """The page's ```python blocks, in order (the same pattern as tests/test_snippets.py)."""
    return re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), flags=re.S | re.M)


def module_name(page: Path) -> str:
    """``docs/guide/numpy-to-darray.md`` -> ``docs_guide_numpy_to_darray`` (a valid, unique module name)."""
    return re.sub(r"\W", "_", page.relative_to(ROOT).with_suffix("").as_posix())


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[0]) / "snippets"
    out.mkdir(parents=True, exist_ok=True)
    (out / "__init__.py").write_text("", encoding="utf-8")
    written = 0
    for page in PAGES:
        found = blocks(page)
        if not found:
            continue
        source = "\n".join(f"# {page.relative_to(ROOT)}, python block {i}\n{block}"
                           for i, block in enumerate(found, 1))
        (out / f"{module_name(page)}.py").write_text(source, encoding="utf-8")
        written += len(found)
    print(f"snippets: {written} python blocks of {len(PAGES)} pages written to {out}")
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
