"""The notebook's side of ``%%px``: each cell runs on every rank, its outputs are shown once.

:func:`rank_magics` makes ipyparallel's ``ParallelMagics`` (``%px``, ``%%px``,
``%autopx``, ``%pxresult``, ``%pxconfig``) with another way to show a
blocking cell's outputs:

- rank 0's standard output, standard error, figures and other displays,
  streamed while the cell runs, and its value (``Out``) once, as rank 0 has
  it (:class:`Shown`);
- the other ranks' lines only where they differ from rank 0's, after the
  cell, each with its rank (``[rank 1] ...``); their progress-bar redraws
  (lines with a carriage return) never;
- an error: one traceback per different error, headed by the ranks that
  raised it (:class:`RankError`); ranks still running a short while after
  another rank raised are stopped (they would wait for it in the next
  collective) and named;
- Ctrl-C (interrupt the kernel): the ranks' cell is interrupted, and one line
  says so (:class:`Stopped`).

>>> ranks_text([0, 1, 2, 5])
'ranks 0-2, 5'
>>> ranks_text([3])
'rank 3'
"""

from __future__ import annotations

import functools
import queue
import re
import sys
import time

__all__ = ["Front", "rank_magics", "RankError", "Stopped", "Shown", "ranks_text", "other_lines", "out_of_step"]

#: Seconds ranks may go on running after another rank raised before they are interrupted.
STOP_AFTER_ERROR = 1.0
#: Seconds interrupted ranks get to stop before the notebook gives up waiting for them.
STOP_TIMEOUT = 10.0
#: A remote traceback through darray's transports: the rank was stopped inside a darray wait.
_IN_DARRAY_WAIT = re.compile(r"darray[\\/]_comm[\\/]")
#: The process id in the file name IPython gives a cell's code (it differs from rank to rank).
_CELL_FILE = re.compile(r"ipykernel_\d+")
#: Seconds between two looks at the ranks' outputs while a cell runs.
POLL = 0.05


def ranks_text(ranks) -> str:
    """``'rank 3'``, ``'ranks 0-2, 5'``: a sorted list of ranks in words, runs as ranges."""
    ranks = sorted(set(ranks))
    runs: list[list[int]] = []
    for r in ranks:
        if runs and r == runs[-1][-1] + 1:
            runs[-1].append(r)
        else:
            runs.append([r])
    words = ", ".join(f"{run[0]}-{run[-1]}" if len(run) > 2 else ", ".join(map(str, run)) for run in runs)
    return ("rank " if len(ranks) == 1 else "ranks ") + words


def other_lines(text: str, reference: str) -> list[str]:
    """The complete lines of ``text`` that ``reference`` does not have, progress-bar redraws left out.

    Lines that differ only in the engine's process id in a cell's file name
    (``/tmp/ipykernel_<pid>/...``, as warnings name it) count as the same.

    >>> other_lines("same\\n\\r 10%\\r100%\\nrank 1 only\\n", "same\\n")
    ['rank 1 only']
    """
    seen = {_CELL_FILE.sub("ipykernel_", line) for line in reference.split("\n")}
    return [line for line in text.split("\n")
            if line.strip() and "\r" not in line and _CELL_FILE.sub("ipykernel_", line) not in seen]


class Shown:
    """A rank's value of a cell, as that rank displayed it (what ``Out`` shows; the value stays on the ranks)."""

    def __init__(self, data: dict, metadata: dict | None = None) -> None:
        self.data = dict(data)
        self.metadata = dict(metadata or {})

    def _repr_mimebundle_(self, include=None, exclude=None):
        return self.data, self.metadata

    def __repr__(self) -> str:
        return self.data.get("text/plain", "")


class RankError(Exception):
    """A ``%%px`` cell raised on some ranks: one traceback per different error, with the ranks that raised it."""

    def __init__(self, groups: list[tuple[str, list[int], str]], size: int, stopped: list[int],
                 cut_short: list[int] = ()) -> None:
        self.groups = groups  # (headline, ranks, traceback text) per different error
        self.size = size
        self.stopped = stopped
        self.cut_short = list(cut_short)
        super().__init__("; ".join(f"{line} on {ranks_text(ranks)}" for line, ranks, _ in groups))

    def _render_traceback_(self) -> list[str]:
        lines: list[str] = []
        for headline, ranks, traceback in self.groups:
            who = ranks_text(ranks)
            same = "every rank" if len(ranks) == self.size > 1 else who
            lines.append(f"{headline.split(':')[0]} on {same} of {self.size}"
                         + (" (the same error; the traceback is rank %d's)" % ranks[0] if len(ranks) > 1 else ""))
            lines.extend(traceback.splitlines())
        if self.stopped:
            lines.append(f"{ranks_text(self.stopped)} stopped: still running {STOP_AFTER_ERROR:g} s after "
                         "the error (waiting for the ranks that raised)")
        if self.cut_short:
            lines.append(out_of_step(self.cut_short))
        return lines


class Stopped(KeyboardInterrupt):
    """Ctrl-C stopped a ``%%px`` cell on the ranks named (shown as one line)."""

    def _render_traceback_(self) -> list[str]:
        return [f"KeyboardInterrupt: {self}"]


class Front:
    """Runs code on the ranks of ``view`` and shows its outputs once; ``rank_of`` maps engine ids to MPI ranks."""

    def __init__(self, view, rank_of: dict[int, int]) -> None:
        self.view = view
        self.rank_of = dict(rank_of)
        self.last_result = None
        #: Set when a cell stopped ranks inside a darray collective: what happened (shown before each cell).
        self.out_of_step: str | None = None

    def execute(self, code: str) -> Shown | None:
        """Run ``code`` on every rank, streaming rank 0's outputs; rank 0's value, or raise for the ranks' errors."""
        result = self.view.execute(code, silent=False, block=False)
        result._fname = "%px"
        self.last_result = result
        if self.out_of_step:
            print(f"darray: {self.out_of_step}", file=sys.stderr)
        cell = _Cell(result, self.rank_of, self.view.client, len(self.rank_of))
        try:
            return cell.show()
        finally:
            if cell.cut_short:
                self.out_of_step = out_of_step(cell.cut_short)


def rank_magics(shell, front: Front, suffix: str = ""):
    """ipyparallel's parallel magics (``%px``, ``%%px``, ``%autopx``, ...) showing a blocking cell's outputs once.

    The class is made on first use, so that importing this module needs no ipyparallel.
    """
    global _RankMagics
    if _RankMagics is None:
        _RankMagics = _magics_class()
    return _RankMagics(shell, front, suffix)


_RankMagics = None


def _magics_class():
    from ipyparallel.client.magics import ParallelMagics

    class RankMagics(ParallelMagics):
        """ipyparallel's parallel magics, showing a blocking cell's outputs once through ``front``."""

        def __init__(self, shell, front: Front, suffix: str = "") -> None:
            self.front = front
            self._shown = None
            super().__init__(shell, front.view, suffix)

        def parallel_execute(self, cell, block=None, groupby="type", save_name=None, stream_output=None,
                             progress_after=None, signal_on_interrupt=None):
            """Run ``cell`` on the view's engines; when blocking, show its outputs once (the module's docstring)."""
            block = self.view.block if block is None else block
            if not block:
                return super().parallel_execute(cell, block=False, groupby=groupby, save_name=save_name)
            self.front.view = self.view  # (%pxconfig --targets changes the view's targets in place)
            try:
                self._shown = self.front.execute(cell)
                return self._shown
            finally:
                self.last_result = self.front.last_result
                if save_name:
                    self.shell.user_ns[save_name] = self.last_result

        def cell_px(self, line="", cell=None):
            """ipyparallel's ``%%px`` (options and all), returning rank 0's value so that ``Out`` shows it."""
            self._shown = None
            async_result = super().cell_px(line, cell)
            return self._shown if async_result is None else async_result

        cell_px.parser = ParallelMagics.cell_px.parser  # (its options, for magic_arguments)
        cell_px.__doc__ = ParallelMagics.cell_px.__doc__

    return RankMagics


def out_of_step(ranks) -> str:
    """The notice for ranks stopped inside a darray collective: the others may have left it, or never entered it.

    >>> out_of_step([0])
    'the ranks are out of step: rank 0 was stopped inside a darray collective; ranks.restart() starts fresh engines'
    """
    return (f"the ranks are out of step: {ranks_text(ranks)} {'was' if len(ranks) == 1 else 'were'} stopped inside a "
            "darray collective; ranks.restart() starts fresh engines")


class _Cell:
    """One blocking cell on the ranks: follows its outputs and shows them once."""

    def __init__(self, result, rank_of: dict[int, int], client, size: int) -> None:
        self.result = result
        self.client = client
        self.size = size
        engines = list(result._targets) if isinstance(result._targets, list) else [result._targets]
        self.engines = engines
        self.ranks = [rank_of.get(e, e) for e in engines]
        self.first = min(range(len(engines)), key=lambda i: self.ranks[i])  # rank 0 when it takes part
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.pending = {"stdout": "", "stderr": ""}
        self.value = None  # the first rank's execute_result
        self.text = [{"stdout": "", "stderr": ""} for _ in engines]  # every rank's text as written
        self.cut_short: list[int] = []  # ranks stopped inside a darray wait
        self._listen()

    def _md(self, i: int) -> dict:
        return self.result._children[i].output.metadata

    def _done(self, i: int) -> bool:
        return self.result._children[i].done()

    def _raised(self, i: int) -> bool:
        from ipyparallel.error import RemoteError

        return self._done(i) and isinstance(self.result._children[i].result(), RemoteError)

    def _listen(self) -> None:
        """Queue every rank's output messages as they arrive (ipyparallel's IO thread calls back)."""
        self._callbacks = []
        for i, child in enumerate(self.result._children):
            md = child.output.metadata
            for name in ("stdout", "stderr"):  # what arrived before the callback was in place
                if md[name]:
                    self.queue.put((i, "stream", {"name": name, "text": md[name]}))
            for content in md["outputs"]:
                self.queue.put((i, "display_data", content))
            callback = functools.partial(self._arrived, i)
            child.iopub_callbacks.append(callback)
            self._callbacks.append((child, callback))

    def _arrived(self, i: int, msg: dict) -> None:
        self.queue.put((i, msg["header"]["msg_type"], msg["content"]))

    def _stream(self, final: bool = False) -> None:
        """Show what the first rank wrote and displayed since the last look; keep the others' text.

        Text goes out up to its last line end or carriage return (a progress
        bar's redraw is never cut in two); ``final`` flushes the rest.
        """
        from IPython.display import publish_display_data

        while True:
            try:
                i, kind, content = self.queue.get_nowait()
            except queue.Empty:
                break
            if kind == "stream" and content.get("name") in self.pending:
                self.text[i][content["name"]] += content["text"]
                if i == self.first:
                    self.pending[content["name"]] += content["text"]
            elif kind == "execute_result" and i == self.first:
                self.value = content
            elif kind == "display_data" and i == self.first:
                self._write(final=True)
                publish_display_data(data=content.get("data", {}), metadata=content.get("metadata") or {})
        self._write(final)

    def _write(self, final: bool) -> None:
        for name, file in (("stdout", sys.stdout), ("stderr", sys.stderr)):
            text = self.pending[name]
            cut = len(text) if final else max(text.rfind("\n"), text.rfind("\r")) + 1
            if cut:
                file.write(text[:cut])
                file.flush()
                self.pending[name] = text[cut:]

    def _running(self) -> list[int]:
        return [i for i in range(len(self.engines)) if not self._done(i)]

    def _interrupt(self, indices: list[int]) -> None:
        self.client.send_signal("SIGINT", targets=[self.engines[i] for i in indices], block=True)
        deadline = time.monotonic() + STOP_TIMEOUT
        while self._running() and time.monotonic() < deadline:
            self.result.wait(POLL)
            self._stream()
        for i in indices:
            if self._raised(i) and _IN_DARRAY_WAIT.search(self.result._children[i].result().traceback or ""):
                self.cut_short.append(self.ranks[i])

    def _follow(self) -> list[int]:
        """Wait for the cell on every rank, streaming the first rank's outputs; the ranks stopped after an error."""
        error_seen = None
        while True:
            self.result.wait(POLL)
            self._stream()
            running = self._running()
            if not running:
                return []
            if error_seen is None and any(self._raised(i) for i in range(len(self.engines))):
                error_seen = time.monotonic()
            if error_seen is not None and time.monotonic() - error_seen > STOP_AFTER_ERROR:
                self._interrupt(running)
                return sorted(self.ranks[i] for i in running)

    def show(self) -> Shown | None:
        try:
            stopped = self._follow()
        except KeyboardInterrupt:
            running = self._running() or list(range(len(self.engines)))
            self._interrupt(running)
            self._finish_streams()
            still = [self.ranks[i] for i in self._running()]
            if still:
                raise Stopped(f"{ranks_text(still)} did not stop within {STOP_TIMEOUT:g} s; they still run the "
                              "cell (interrupt again, or restart the engines)") from None
            note = f"; {out_of_step(self.cut_short)}" if self.cut_short else ""
            raise Stopped(f"stopped the cell on {ranks_text(self.ranks[i] for i in running)}{note}") from None
        self._finish_streams()
        self._others()
        errors = self._errors(stopped)
        if errors:
            raise RankError(errors, self.size, stopped, self.cut_short)
        value = self.value or self._md(self.first)["execute_result"]
        return Shown(value["data"], value.get("metadata")) if value else None

    def _finish_streams(self) -> None:
        self.result.wait_for_output(1)
        self._stream(final=True)
        for child, callback in self._callbacks:
            child.iopub_callbacks.remove(callback)

    def _others(self) -> None:
        """The other ranks' lines that the first rank did not write, each with its rank, after the cell."""
        first = self.text[self.first]
        for i in sorted(range(len(self.engines)), key=lambda i: self.ranks[i]):
            if i == self.first:
                continue
            for name, file in (("stdout", sys.stdout), ("stderr", sys.stderr)):
                for line in other_lines(self.text[i][name], first[name]):
                    print(f"[rank {self.ranks[i]}] {line}", file=file)

    def _errors(self, stopped: list[int]) -> list[tuple[str, list[int], str]]:
        """(headline, ranks, traceback) per different error, ranks stopped by the front end left out."""
        groups: dict[tuple[str, str], tuple[list[int], str]] = {}
        for i in sorted(range(len(self.engines)), key=lambda i: self.ranks[i]):
            if not self._raised(i) or self.ranks[i] in stopped:
                continue
            error = self.result._children[i].result()
            key = (error.ename, str(error.evalue))
            ranks, _ = groups.setdefault(key, ([], error.traceback or f"{error.ename}: {error.evalue}"))
            ranks.append(self.ranks[i])
        return [(f"{ename}: {evalue}", ranks, tb) for (ename, evalue), (ranks, tb) in groups.items()]
