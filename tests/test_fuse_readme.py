"""The README's fused example: the block after the eager one runs the same sweep with ``@np.fuse``, fused,
and gives the eager loop's field bitwise, at every rank count."""

from __future__ import annotations

import re
from pathlib import Path

import numpy
import pytest

from darray._backend import to_numpy

from test_fuse import PLANNED

pytestmark = pytest.mark.mpi

README = Path(__file__).resolve().parent.parent / "README.md"


def example_blocks() -> tuple[str, str]:
    """The eager block and the fused block of the README's Example section (print lines left out)."""
    section = README.read_text().split("## Example", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```python\n(.*?)^```", section, flags=re.S | re.M)
    assert len(blocks) == 2 and blocks[0].startswith("import darray as np") and blocks[1].startswith("@np.fuse")
    return tuple("\n".join(line for line in b.splitlines() if not line.startswith("print(")) for b in blocks)


@pytest.mark.parametrize("n", [13, 40])
def test_fused_example_equals_the_eager_one(n):
    eager, fused = example_blocks()
    scope: dict = {}
    exec(eager.replace("n = 4096", f"n = {n}").replace("range(100)", "range(3)"), scope)  # README
    exec(fused.replace("range(100)", "range(3)"), scope)  # the README's own text
    u, v = (to_numpy(scope[k].gather()) for k in "uv")
    assert numpy.array_equal(u, v)
    start = scope["np"].exp(-50 * ((scope["xs"] - 0.5) ** 2 + (scope["ys"] - 0.5) ** 2))
    assert not numpy.array_equal(v, to_numpy(start.gather()))  # the sweeps did change the field
    stats = scope["sweep"].stats
    assert stats["fused"] == (3 if PLANNED else 0) and stats["eager"] == (0 if PLANNED else 3), stats
