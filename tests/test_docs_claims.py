"""Every performance claim in the README and the docs carries the command that measures it, and the command exists.

A *claim* is a measured number in prose: a ratio (``1.4-3x``, ``0.27x``) or
a time (``330 ms``, ``7.5 us``, ``283 s``). Each section (the text under one
heading) of README.md, docs/performance.md and docs/guide/*.md that states
one must name, in a code span or a code block, a command that measures it:
``darray bench ...`` or ``python benchmarks/X.py ...``
(also under ``mpiexec -n N``); in the README, the paragraph itself must
name it. A setting is not a claim: write its unit in words ("waits 2
seconds"). Every such command anywhere in those files
must exist: the script file, each ``--option`` in its source, and for the
``darray`` command the subcommand and its options (parsed by its parser).
Cheap by design: nothing is run or timed.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from darray import cli

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "docs" / "performance.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]

#: A measured number: a ratio or a time (a number, a unit, not a word going on).
CLAIM = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?(?:x|\s?(?:ms|µs|us|s))(?![\w²³])")
#: A measuring command: darray's bench / demo, or a benchmark script (maybe under mpiexec, after variables).
COMMAND = re.compile(r"(?:[A-Z_]+=\S+\s+)*(?:mpiexec\s+-n\s+\d+\s+)?(?:darray\s+bench\b|python\s+"
                     r"benchmarks/\w+\.py)[^`\n#]*")
FENCE = re.compile(r"```.*?```", re.S)
SPAN = re.compile(r"`((?:[^`\n]|\n(?!\n))+)`")  # (a code span may wrap, within its paragraph)


def _sections(page: Path) -> list[tuple[str, str]]:
    """(heading, text) of each section of ``page``; headings inside code blocks are not headings.

    The README, read first and alone, is held to more: each of its paragraphs is a section (named by its
    first words), so a claim's command stands next to it.
    """
    text = page.read_text()
    fences = [(m.start(), m.end()) for m in FENCE.finditer(text)]
    if page.name == "README.md":
        starts = [0] + [m.end() for m in re.finditer(r"\n\n+", text) if not any(a <= m.start() < b for a, b in fences)]
        bounds = list(zip(starts, starts[1:] + [len(text)]))
        return [(text[a:b].strip()[:50], text[a:b]) for a, b in bounds if text[a:b].strip()]
    starts = [0] + [m.start() for m in re.finditer(r"^#{1,6} ", text, re.M)
                    if not any(a <= m.start() < b for a, b in fences)]
    bounds = list(zip(starts, starts[1:] + [len(text)]))
    return [(text[a:b].splitlines()[0] if a else "(top)", text[a:b]) for a, b in bounds]


def _prose(section: str) -> str:
    """The section without code blocks, code spans and links' targets: where claims are stated."""
    text = FENCE.sub("", section)
    text = SPAN.sub("", text)
    return re.sub(r"\]\([^)]*\)", "]", text)


def _commands(section: str) -> list[str]:
    """The measuring commands in the code blocks and code spans of ``section``."""
    shell = [m.group(0) for m in FENCE.finditer(section) if re.match(r"```(bash|sh|shell|console|text)?\n", m.group(0))]
    spans = [" ".join(span.split()) for span in SPAN.findall(FENCE.sub("", section))]
    code = shell + spans
    return [m.group(0).strip() for block in code for m in COMMAND.finditer(block)]


def _claims() -> list[tuple[str, str, str]]:
    out = []
    for page in PAGES:
        for heading, section in _sections(page):
            found = CLAIM.findall(_prose(section))
            if found:
                out.append((str(page.relative_to(ROOT)), heading, ", ".join(found[:4])))
    return out


def _all_commands() -> list[tuple[str, str]]:
    return sorted({(str(page.relative_to(ROOT)), command) for page in PAGES
                   for _, section in _sections(page) for command in _commands(section)})


def test_the_claims_are_found():
    """The scan sees the README's claims (a scan that finds nothing would pass everything)."""
    readme = [c for c in _claims() if c[0] == "README.md"]
    assert any("1.3x" in c[2] for c in readme) and any("0.27-0.33x" in c[2] for c in readme), readme
    assert len(_claims()) > 20 and len(_all_commands()) > 20


@pytest.mark.parametrize("page, heading, claims", _claims(), ids=lambda v: str(v)[:60])
def test_every_claim_names_the_command_that_measures_it(page, heading, claims):
    section = dict(_sections(ROOT / page))[heading]
    assert _commands(section), (
        f"{page}, section {heading!r}, states measured numbers ({claims}) without the command that measures "
        f"them: add it in a code span, e.g. `darray bench --only NAME` or `python benchmarks/bench_X.py ...`")


@pytest.mark.parametrize("page, command", _all_commands(), ids=lambda v: str(v)[:70])
def test_every_named_command_exists(page, command):
    words = shlex.split(command.split(";")[0].split("&&")[0].split("|")[0])
    while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
        words.pop(0)
    if words[:1] == ["mpiexec"]:
        words = words[3:]
    if words[0] == "darray":
        try:
            cli.build_parser().parse_args(words[1:])
        except SystemExit:
            pytest.fail(f"{page}: `{command}` is not a valid darray command line")
        return
    assert words[0] == "python", command
    script = ROOT / words[1]
    assert script.is_file(), f"{page}: `{command}` names {words[1]}, which does not exist"
    source = script.read_text()
    for word in words[2:]:
        option = word.split("=")[0]
        if option.startswith("--"):
            assert f'"{option}"' in source or f"'{option}'" in source, (
                f"{page}: `{command}` passes {option}, which {words[1]} does not take")


def test_the_readme_says_what_the_gpu_guide_reports():
    """The README's feature table and docs/guide/gpu.md tell the same story of what ran on a GPU."""
    readme, gpu = (ROOT / "README.md").read_text(), (ROOT / "docs" / "guide" / "gpu.md").read_text()
    ran = re.search(r"Run on one (NVIDIA \w+)", gpu)
    if ran:
        assert "not run on a GPU" not in readme and ran.group(1) in readme, (
            f"docs/guide/gpu.md reports a run on {ran.group(1)}: the README's feature table must say so")
