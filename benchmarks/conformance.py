"""The public Array API test suite (array-api-tests) on darray, at many random examples, on demand.

    python benchmarks/conformance.py PATH/TO/array-api-tests                    # 200 examples, 1 rank
    python benchmarks/conformance.py PATH/TO/array-api-tests --ranks 2          # every array cut over 2 ranks
    python benchmarks/conformance.py PATH --max-examples 20 --seed 1 -- -k creation   # pytest options after --

Runs the suite of a checkout of data-apis/array-api-tests (with its
``array-api`` spec submodule, ``git clone --recursive``) with
``ARRAY_API_TESTS_MODULE=darray``, ``--max-examples`` examples a test (200 by
default: ten times the suite's usual 20) drawn from ``--seed`` (a fresh
random seed unless given; printed, so that a run can be repeated) with an
empty example database, and prints the pass / fail counts and each failing
test. ``--ranks N`` starts ``N`` ranks with ``mpiexec``: each runs the suite
with the same seed (so the same examples), with every array of the suite cut
over the ranks (``DARRAY_MIN_DISTRIBUTED_SIZE=1``, unless
``--min-distributed-size`` says otherwise); the counts of every rank are
printed, and must agree.

The suite's 800 ms deadline per example is off unless ``--deadline``: it
times the machine, not conformance. The first ``devices()`` imports every
installed backend (torch: 2-6 s on a loaded 2-core machine), which fails the
first example of ``test_from_dlpack`` and hypothesis reports it as flaky; and
under ``mpiexec`` a verdict that depends on timing could part the ranks.

The suite needs pytest, hypothesis and ndindex (``pip install ndindex``).
Nothing here is a test of darray's own suite: the run takes minutes (about
1400 tests) and draws new examples each time; ``tests/test_conformance_deep.py``
is the derandomized run CI makes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", type=Path, help="a checkout of data-apis/array-api-tests")
    parser.add_argument("--max-examples", type=int, default=200, help="hypothesis examples per test (200)")
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: a fresh random one)")
    parser.add_argument("--ranks", type=int, default=1, help="MPI ranks (1: in this process's interpreter)")
    parser.add_argument("--min-distributed-size", type=int, default=None,
                        help="DARRAY_MIN_DISTRIBUTED_SIZE for the run (default: 1 at several ranks)")
    parser.add_argument("--deadline", action="store_true",
                        help="keep the suite's 800 ms deadline per example (default: off, see below)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds the whole run may take")
    parser.add_argument("--json", type=Path, default=None, help="also write the counts and failures here")
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:cut])
    args.pytest_args = argv[cut + 1:]  # more pytest options, after --
    return args


# ----------------------------------------------------------------------------- one rank's run --
class _Outcomes:
    """A pytest plugin that records each test's outcome (a failure in setup counts as an error)."""

    def __init__(self):
        self.outcomes: dict[str, str] = {}

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            outcome = "error" if report.failed and report.when != "call" else report.outcome
            if self.outcomes.get(report.nodeid) not in ("failed", "error"):
                self.outcomes[report.nodeid] = outcome


def _rank() -> int:
    for name in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK"):
        if name in os.environ:
            return int(os.environ[name])
    return 0


def worker(suite: Path, out_dir: Path, pytest_args: list[str]) -> int:
    """Run the suite in this process; write ``rank-<r>.json`` (node id -> outcome) into ``out_dir``."""
    import pytest

    plugin = _Outcomes()
    code = pytest.main([str(suite / "array_api_tests"), f"--rootdir={suite}", f"--confcutdir={suite}",
                        "-p", "no:cacheprovider", *pytest_args], plugins=[plugin])
    (out_dir / f"rank-{_rank()}.json").write_text(json.dumps(plugin.outcomes))
    return int(code)


# ------------------------------------------------------------------------------------ the driver --
def run(args: argparse.Namespace) -> dict:
    """Start the ranks, collect their outcomes; the summary as a dict."""
    suite = args.suite.resolve()
    if not (suite / "array_api_tests").is_dir():
        raise SystemExit(f"conformance.py: {suite} holds no array_api_tests/ (a checkout of array-api-tests?)")
    seed = args.seed if args.seed is not None else random.randrange(2**32)
    pytest_args = [f"--max-examples={args.max_examples}", f"--hypothesis-seed={seed}", "-q", "--tb=line",
                   *([] if args.deadline else ["--hypothesis-disable-deadline"]), *args.pytest_args]
    env = dict(os.environ, ARRAY_API_TESTS_MODULE="darray",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), str(suite), os.environ.get("PYTHONPATH")])))
    min_size = args.min_distributed_size if args.min_distributed_size is not None else (1 if args.ranks > 1 else None)
    if min_size is not None:
        env["DARRAY_MIN_DISTRIBUTED_SIZE"] = str(min_size)
    with tempfile.TemporaryDirectory(prefix="darray-conformance-") as tmp:  # also the cwd: a fresh example database
        out_dir = Path(tmp)
        command = [sys.executable, __file__, "--worker", str(suite), str(out_dir), "--", *pytest_args]
        if args.ranks > 1:
            mpiexec = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or "mpiexec"
            command = [mpiexec, "-n", str(args.ranks), *command]
        print(f"conformance: {' '.join(command)}\n  seed {seed}, ranks {args.ranks}, "
              f"DARRAY_MIN_DISTRIBUTED_SIZE={env.get('DARRAY_MIN_DISTRIBUTED_SIZE', '(default)')}", flush=True)
        proc = subprocess.run(command, cwd=tmp, env=env, timeout=args.timeout, check=False)
        per_rank = {}
        for r in range(args.ranks):
            path = out_dir / f"rank-{r}.json"
            per_rank[r] = json.loads(path.read_text()) if path.exists() else None
    counts = {r: dict(Counter(o.values())) if o is not None else None for r, o in per_rank.items()}
    first = per_rank[0] or {}
    failing = sorted(n for n, o in first.items() if o in ("failed", "error"))
    agree = all(o == per_rank[0] for o in per_rank.values())
    return {"seed": seed, "max_examples": args.max_examples, "ranks": args.ranks, "returncode": proc.returncode,
            "min_distributed_size": min_size, "counts": counts, "ranks_agree": agree, "failing": failing}


def report(summary: dict) -> None:
    print()
    for r, c in summary["counts"].items():
        if c is None:
            print(f"rank {r}: no result (the run died; return code {summary['returncode']})")
            continue
        extra = ", ".join(f"{c[k]} {k}" for k in ("skipped", "error", "xfailed", "xpassed") if c.get(k))
        print(f"rank {r}: {c.get('passed', 0)} passed, {c.get('failed', 0)} failed" + (f", {extra}" if extra else ""))
    if not summary["ranks_agree"]:
        print("the ranks disagree on some outcomes")
    for nodeid in summary["failing"]:
        print(f"  FAILED {nodeid}")
    c = summary["counts"].get(0) or {}
    total = c.get("passed", 0) + c.get("failed", 0) + c.get("error", 0)
    if total:
        print(f"pass rate {100.0 * c.get('passed', 0) / total:.1f} % of {total} run "
              f"({summary['max_examples']} examples, seed {summary['seed']}, {summary['ranks']} rank(s))")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        suite, out_dir, rest = Path(argv[1]), Path(argv[2]), argv[3:]
        return worker(suite, out_dir, rest[1:] if rest[:1] == ["--"] else rest)
    args = parse_args(argv)
    summary = run(args)
    report(summary)
    if args.json is not None:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    c = summary["counts"].get(0)
    return 0 if c is not None and summary["ranks_agree"] else 1


if __name__ == "__main__":
    sys.exit(main())
