"""``darray bench``'s PNG: each variant's time relative to NumPy per workload (log scale; needs matplotlib)."""

from __future__ import annotations

from pathlib import Path

from .._files import replacing
from .workloads import WORKLOADS, labels

__all__ = ["plot"]


def plot(path: Path, meta: dict, results: dict) -> bool:
    """Write the ratios of ``results`` to ``path``; False (nothing written) without matplotlib or a NumPy time."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    P = meta["ranks"]
    titles = labels(P)
    cols = ["darray1", "darrayP", "handP", "dask"]
    names = [n for n, row in results.items() if row.get("numpy", {}).get("time")]
    if not names:
        return False
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(names) + 2), 4.2))
    width = 0.8 / len(cols)
    for k, c in enumerate(cols):
        xs, ys = [], []
        for i, n in enumerate(names):
            res, base = results[n].get(c), results[n]["numpy"]["time"]
            if res and "time" in res:
                xs.append(i + (k - (len(cols) - 1) / 2) * width)
                ys.append(res["time"] / base)
        if xs:
            ax.bar(xs, ys, width, label=titles[c])
    ax.axhline(1.0, color="black", linewidth=0.8, label=titles["numpy"])
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([WORKLOADS[n].title.replace("`", "") for n in names], rotation=20, ha="right", fontsize=8)
    ax.set_yscale("log")
    floor = 0.05  # e.g. a redistribution that is a no-op on 1 rank: clip instead of squashing the other bars
    if ax.get_ylim()[0] < floor:
        ax.set_ylim(bottom=floor)
    ax.set_ylabel("time / NumPy (log; below 1 is faster)")
    ax.set_title(f"darray bench, {meta['size']}: 1 vs {P} ranks (load avg {meta['loadavg']['start']})",
                 fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    with replacing(path) as f:  # never through a symlink planted at path
        fig.savefig(f, dpi=110, format="png")
    plt.close(fig)
    return True
