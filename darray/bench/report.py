"""``darray bench``'s Markdown report: verdicts against NumPy, the table of times and ratios, peak RSS, notes."""

from __future__ import annotations

import sys
from pathlib import Path

from .data import sums_agree
from .harness import fmt_time
from .workloads import WORKLOADS, labels

__all__ = ["command_line", "report", "target", "verdicts"]


def verdicts(results: dict) -> None:
    """Mark every variant ok / mismatch against NumPy's checksums (in place)."""
    for name, row in results.items():
        ref = row.get("numpy", {}).get("sums")
        for variant, res in row.items():
            if "sums" not in res:
                continue
            if name == "surrogate":
                res["ok"] = bool(res["sums"].get("finite", [0])[0])
            elif variant == "numpy":
                res["ok"] = True
            else:
                res["ok"] = bool(ref) and sums_agree(res["sums"], ref)


def _cell(res: dict | None, base: float | None, why: str = "n/a") -> str:
    if not res:
        return why
    if "error" in res:
        return "failed"
    t = res["time"]
    text = f"{t / base:.2f} ({fmt_time(t)})" if base else fmt_time(t)
    if not res.get("ok", True):
        text += " MISMATCH"
    return text


def report(meta: dict, results: dict, png_name: str | None) -> str:
    """The Markdown report of one run: ``meta`` (run facts), ``results`` (workload -> variant -> result)."""
    P = meta["ranks"]
    titles = labels(P)
    lines = [f"# darray bench: {meta['size']} ({meta['date']})", ""]
    lines += [f"Command: `{meta['command']}`", ""]
    lines += ["## Machine", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in meta["machine"]]
    la = meta["loadavg"]
    middle = f"; before the {P}-rank part {la['parallel']}" if meta["parallel_ran"] else ""
    lines += [f"| load average (1, 5, 15 min) | start {la['start']}{middle}; end {la['end']} |", ""]
    reps = f"{meta['reps']} reps" if meta["reps"] > 1 else "1 rep"
    lines += ["## Results", "",
              f"Time relative to NumPy on one process (below 1 is faster), median of {reps} after one warm-up, "
              "absolute median time in parentheses. "
              + (f"`da{P}/hand{P}`: darray on {P} ranks over the hand-written mpi4py + NumPy code on {P} ranks "
                 "(the bar; 1.00 = as fast). " if meta["parallel_ran"] else "")
              + meta["parallel_status"], ""]
    cols = ["numpy", "darray1", "darrayP", "handP", "dask"]
    lines.append("| workload | size | " + " | ".join(titles[c] for c in cols) + f" | da{P}/hand{P} |")
    lines.append("|---|---|" + "---|" * (len(cols) + 1))
    for name, row in results.items():
        w = WORKLOADS[name]
        base = row.get("numpy", {}).get("time") if row.get("numpy", {}).get("ok", False) else None
        why = {c: "n/a" for c in cols}
        if not w.available():
            why = {c: "n/a (no darray.nn.surrogate)" for c in cols}
        elif w.numpy is None:
            why = {c: "n/a (darray only)" for c in cols}
        elif w.dask is None:
            why["dask"] = "n/a (no dask equivalent)"
        if "dask" not in meta["have"]:
            why["dask"] = meta["dask_status"]
        if not meta["parallel_ran"]:
            why["darrayP"] = why["handP"] = "not run"
        dp, hp = row.get("darrayP"), row.get("handP")
        bar = f"{dp['time'] / hp['time']:.2f}" if dp and hp and "time" in dp and "time" in hp else "n/a"
        cells = [_cell(row.get(c), base, why[c]) for c in cols]
        lines.append(f"| {w.title} | {w.size(meta['sizes'])} | " + " | ".join(cells) + f" | {bar} |")
    lines += ["", "## Peak RSS per rank (MiB)", "",
              "Peak resident memory of each process for one variant: what was resident before the workload's "
              "inputs were built (the interpreter and imported modules), plus this variant's inputs, plus the "
              "largest growth during one of its warm-up and timed calls (VmHWM). The other variants' inputs, "
              "resident at the same time because the variants take turns, are not counted; the check is "
              "excluded.", ""]
    lines.append("| workload | " + " | ".join(titles[c] for c in cols) + " |")
    lines.append("|---|" + "---|" * len(cols))
    for name, row in results.items():
        cells = []
        for c in cols:
            res = row.get(c)
            cells.append(" / ".join(f"{v:.0f}" for v in res["rss_mb"]) if res and "rss_mb" in res else "-")
        lines.append(f"| {WORKLOADS[name].title} | " + " | ".join(cells) + " |")
    notes = []
    for name, row in results.items():
        seen = []
        for c in cols:
            res = row.get(c) or {}
            if res.get("note") and res["note"] not in seen:
                seen.append(res["note"])
            if res.get("error"):
                seen.append(f"{titles[c]} FAILED: `{res['error']}`")
            if res and "ok" in res and not res["ok"]:
                seen.append(f"{titles[c]}: the result does NOT match NumPy's")
        if seen:
            notes.append(f"- {WORKLOADS[name].title}: " + "; ".join(seen))
    lines += ["", "## Notes", "",
              "- Same data for every peer, built from index formulas; every result checked against NumPy's "
              "by a position-weighted checksum outside the timed region.",
              "- The variants of a workload take turns call by call (NumPy, darray, Dask, NumPy, ...; on "
              f"{P} ranks darray, mpi4py, darray, ...), so a change in the machine's load hits them alike.",
              f"- {P}-rank timings: barriers before and after each call, the per-rep maximum over ranks. "
              "The NumPy, darray-1-rank and Dask columns run in one process, before the "
              f"{P}-rank job, so the runs never overlap.",
              f"- {P}-rank job: darray limits each rank's BLAS/OpenMP threads to cores // ranks per node "
              "(darray._threads; the hand-written code runs in the same processes and shares the limit); "
              "the 1-process columns use the libraries' default threads.",
              "- The machine may be shared: compare the load average above with the core count "
              "before reading small differences (10-15 % noise is usual)."]
    lines += notes
    if png_name:
        lines += ["", f"![ratios vs NumPy]({png_name})"]
    return "\n".join(lines) + "\n"


def target(out: Path, date: str, label: str) -> Path:
    """``out/<date>-<label>.md``, or with ``-2``, ``-3`` ... when taken."""
    stem = f"{date}-{label}"
    path = out / f"{stem}.md"
    k = 2
    while path.exists():
        path = out / f"{stem}-{k}.md"
        k += 1
    return path


def command_line() -> str:
    """This process's command line, as the user typed it (``python -m darray.bench`` or ``darray bench``)."""
    main = Path(sys.argv[0])
    head = "python -m darray.bench" if (main.parent.name, main.name) == ("bench", "__main__.py") else main.name
    return " ".join([head, *sys.argv[1:]])
