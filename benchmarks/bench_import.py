"""``import darray`` against ``import numpy``: CPU seconds of a fresh interpreter, best of N (issue #18).

    python benchmarks/bench_import.py [--repeat 15]

Each sample is a new ``python -c`` that times ``import numpy`` and then
``import darray`` with :func:`time.process_time` (CPU time, so a busy machine
inflates it less than wall time). The ratio is (numpy + darray) / numpy: what a
NumPy script pays for ``import darray as np`` instead of ``import numpy as np``.
Run once beforehand so the bytecode caches exist (a first import compiles).
"""

from __future__ import annotations

import argparse
import subprocess
import sys

_PROBE = ("import time; t0 = time.process_time(); import numpy; t1 = time.process_time(); import darray; "
          "print(t1 - t0, time.process_time() - t1)")


def sample() -> tuple[float, float]:
    """(numpy, darray) CPU seconds of one fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", _PROBE], check=True, capture_output=True, text=True).stdout
    numpy_s, darray_s = map(float, out.split())
    return numpy_s, darray_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="fresh interpreters to start (default 15)")
    args = parser.parse_args(argv)
    sample()  # writes the bytecode caches if they are missing
    samples = [sample() for _ in range(args.repeat)]
    numpy_s = min(n for n, _ in samples)
    darray_s = min(d for _, d in samples)
    print(f"import numpy            {numpy_s * 1e3:7.1f} ms CPU (best of {args.repeat})")
    print(f"import darray, on top   {darray_s * 1e3:7.1f} ms CPU")
    print(f"ratio (numpy + darray) / numpy: {(numpy_s + darray_s) / numpy_s:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
