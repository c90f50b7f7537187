"""Make the gallery's pictures and printed output: run every example once, by hand.

    python docs/_gallery.py                  # every example (a few minutes on 2 cores)
    python docs/_gallery.py heat2d wave3d    # some of them
    python docs/_gallery.py --list           # the commands, without running them
    python docs/_gallery.py --crossover DIR [DIR ...]   # the crossover plot from sweep reports

Each example in :data:`EXAMPLES` runs under ``mpiexec -n RANKS`` (the
``mpiexec`` next to this Python, else the one on ``PATH``) at the small sizes
given there, with ``--plot NAME.png``, in a scratch folder. Its figure and
what it printed (headed by the command) land in ``docs/_static/gallery/`` as
``NAME.png`` and ``NAME.txt``; commit both. The benchmark's scaling plot
(:data:`BENCH`) is copied there too.

``--crossover`` draws ``crossover-2cpu.png`` (used by docs/performance.md)
from the JSON reports of one or more runs of the crossover sweep given in
docs/performance.md (``darray bench`` at five sizes), one folder per run.

The documentation build never runs the examples: ``docs/_gen.py`` writes one
page per example from the committed files, and ``tests/test_docs.py`` checks
that every example has its picture and output.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
OUT = DOCS / "_static" / "gallery"
RANKS = 4
MAX_BYTES = 200_000  # per picture: the repository keeps them

#: Example (``examples/NAME.py``) -> the arguments of its gallery run (``--plot NAME.png`` is added).
#: The order is the gallery's order; an example missing here is run without arguments, after these.
EXAMPLES: dict[str, list[str]] = {
    "quickstart": [],
    "heat2d": ["--n", "128", "--steps", "200"],
    "wave3d": ["--n", "40", "--steps", "60"],
    "cfd_cavity": ["--steps", "300"],
    "train_surrogate": ["--n", "256", "--steps", "200", "--every", "40", "--no-progress"],
    "train_vit_surrogate": ["--n", "64", "--steps", "100", "--every", "20", "--no-progress"],
    "torch_unet_unchanged": ["--n", "32", "--steps", "30"],
}

#: The scaling plot of the committed benchmark run (``darray bench --size medium``), shown in the gallery
#: and in docs/performance.md. ``benchmarks/results/*.png`` is not committed, so a copy is kept here.
BENCH = ROOT / "benchmarks" / "results" / "2026-12-03-medium-2cpu.png"
BENCH_COPY = OUT / "bench-medium-2cpu.png"


def names() -> list[str]:
    """Every example, in gallery order."""
    found = sorted(p.stem for p in (ROOT / "examples").glob("*.py") if not p.name.startswith("_"))
    return [n for n in EXAMPLES if n in found] + [n for n in found if n not in EXAMPLES]


def command(name: str) -> list[str]:
    """The command as shown in the docs (relative paths, ``python``)."""
    return ["mpiexec", "-n", str(RANKS), "python", f"examples/{name}.py", *EXAMPLES.get(name, []),
            "--plot", f"{name}.png"]


def _mpiexec() -> str:
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.is_file() else shutil.which("mpiexec")
    if not found:
        raise SystemExit("docs/_gallery.py: no mpiexec next to this Python or on PATH (pip install mpich)")
    return found


def run(name: str, timeout: float) -> None:
    shown = command(name)
    with tempfile.TemporaryDirectory(prefix=f"gallery-{name}-") as tmp:
        real = [_mpiexec(), *shown[1:3], sys.executable, str(ROOT / shown[4]), *shown[5:]]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
                   OMP_NUM_THREADS="1", MPLBACKEND="Agg")
        print("$ " + " ".join(shown), flush=True)
        proc = subprocess.run(real, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout)
        print(proc.stdout, end="")
        if proc.returncode != 0:
            raise SystemExit(f"docs/_gallery.py: {name} exited {proc.returncode}")
        png = Path(tmp) / f"{name}.png"
        if not png.is_file():
            raise SystemExit(f"docs/_gallery.py: {name} wrote no {png.name} (does it take --plot PATH?)")
        OUT.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(png, OUT / png.name)
        (OUT / f"{name}.txt").write_text("$ " + " ".join(shown) + "\n" + proc.stdout)
    _report(OUT / f"{name}.png")


def copy_bench() -> None:
    if not BENCH.is_file():
        print(f"(no {BENCH.relative_to(ROOT)}: the committed copy {BENCH_COPY.relative_to(ROOT)} stays)")
        return
    OUT.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(BENCH, BENCH_COPY)
    _report(BENCH_COPY)


CROSSOVER = OUT / "crossover-2cpu.png"


def plot_crossover(dirs: list[str]) -> None:
    """Time / NumPy time of W1 and W2 against size: median over the runs, the range as error bars."""
    import json
    import statistics

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = []  # per run: {n: results}
    for d in dirs:
        found = {}
        for path in sorted(Path(d).glob("*-sweep-*.json")):
            found[int(path.stem.rsplit("-", 1)[1])] = json.loads(path.read_text())["results"]
        if not found:
            raise SystemExit(f"docs/_gallery.py: no *-sweep-N.json reports in {d}")
        runs.append(found)
    sizes = sorted(set.intersection(*(set(r) for r in runs)))
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.2), layout="constrained", sharey=True)
    # a sweep report "sweep-N" holds W1 on 4 N**2 elements and W2 on N x N cells (docs/performance.md)
    for ax, (key, title, cells) in zip(axes, [("W1", "W1: a*b+c, sum (elements)", lambda n: 4 * n * n),
                                               ("W2", "W2: Jacobi, 50 sweeps (n x n cells)", lambda n: n * n)]):
        for variant, label, style in [("darray1", "darray, 1 rank", "o-"), ("darrayP", "darray, 2 ranks", "s-"),
                                      ("handP", "mpi4py + NumPy, 2 ranks", "^--")]:
            ratios = [[r[n][key][variant]["time"] / r[n][key]["numpy"]["time"] for r in runs] for n in sizes]
            mid = [statistics.median(x) for x in ratios]
            err = [[m - min(x) for m, x in zip(mid, ratios)], [max(x) - m for m, x in zip(mid, ratios)]]
            ax.errorbar([cells(n) for n in sizes], mid, yerr=err, fmt=style, capsize=3, label=label, ms=4)
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_yticks([0.25, 0.5, 1, 2, 4], labels=["0.25", "0.5", "1", "2", "4"])
        ax.minorticks_off()
        ax.set_xlabel("size on one process")
        ax.set_title(title, fontsize=9)
    axes[0].set_ylabel("time / NumPy, 1 process")
    axes[0].legend(fontsize=7)
    fig.suptitle(f"below 1: distributing pays off (median of {len(runs)} runs, range as bars; 2 cores)", fontsize=9)
    OUT.mkdir(parents=True, exist_ok=True)
    fig.savefig(CROSSOVER, dpi=72)
    plt.close(fig)
    _report(CROSSOVER)


def _report(path: Path) -> None:
    size = path.stat().st_size
    note = "" if size <= MAX_BYTES else f"  TOO LARGE (limit {MAX_BYTES} bytes): lower the dpi"
    print(f"-> {path.relative_to(ROOT)}: {size / 1000:.0f} kB{note}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"examples to run (default all: {' '.join(names())})")
    parser.add_argument("--list", action="store_true", help="print the commands and exit")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per example (default 900)")
    parser.add_argument("--crossover", nargs="+", metavar="DIR", help="draw the crossover plot from sweep reports")
    args = parser.parse_args(argv)
    if args.crossover:
        plot_crossover(args.crossover)
        return 0
    chosen = args.names or names()
    unknown = sorted(set(chosen) - set(names()))
    if unknown:
        parser.error(f"unknown example(s) {unknown}; expected some of {names()}")
    if args.list:
        print("\n".join(" ".join(command(n)) for n in chosen))
        return 0
    for name in chosen:
        run(name, args.timeout)
    if not args.names:
        copy_bench()
    return 0


if __name__ == "__main__":
    sys.exit(main())
