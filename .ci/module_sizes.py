#!/usr/bin/env python3
"""CI: no module under darray/ longer than 800 lines (docs/architecture.md: one concern per module, short enough to hold).

Exit status 1 and one line per offender otherwise. ``EXCEPTIONS`` names the
modules being split right now, each with its issue; remove an entry when its
split lands (an entry for a module that is short again is reported too).
"""

from __future__ import annotations

import sys
from pathlib import Path

LIMIT = 800
#: path relative to the repository root -> the issue that splits it
EXCEPTIONS: dict[str, str] = {}


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    problems = []
    for path in sorted((root / "darray").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        with path.open(encoding="utf-8") as f:
            lines = sum(1 for _ in f)
        if lines > LIMIT and name not in EXCEPTIONS:
            problems.append(f"{name}: {lines} lines (limit {LIMIT}): split it by concern")
        elif lines <= LIMIT and name in EXCEPTIONS:
            problems.append(f"{name}: {lines} lines now: remove its entry from .ci/module_sizes.py EXCEPTIONS")
    for name in sorted(set(EXCEPTIONS) - {p.relative_to(root).as_posix() for p in (root / "darray").rglob("*.py")}):
        problems.append(f"{name}: gone: remove its entry from .ci/module_sizes.py EXCEPTIONS ({EXCEPTIONS[name]})")
    listed = f" (listed exceptions: {', '.join(sorted(EXCEPTIONS))})" if EXCEPTIONS else ""
    print("\n".join(problems) if problems else f"module sizes: no module under darray/ over {LIMIT} lines{listed}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
