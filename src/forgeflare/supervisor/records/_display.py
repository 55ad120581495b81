"""What the supervisor shows: a live status line on a terminal, plain lines otherwise.

On a terminal (and ``rich`` can colour or not: it honours ``NO_COLOR``), one status line shows
iteration N/MAX, elapsed time, the agent's last tool and its token count, below the agent's own
output. Elsewhere (pipes, CI, tests) every supervisor message is a plain timestamped line on
stderr and the agent's output goes through on stdout. Text from a child or a record reaches the
terminal without escape sequences or bidi controls (``for_terminal``). The refresh is driven by
the loop's trio task, never by a thread.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from forgeflare._clock import utc_timestamp
from forgeflare._termtext import for_terminal
from forgeflare._units import format_cost, format_duration
from forgeflare._words import plural
from forgeflare.disk import append_line
from forgeflare.supervisor.records._records import IterationRecord, RunRecord

if TYPE_CHECKING:  # rich loads with the first live line: a loop in a pipe or a log never does
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

__all__ = [
    "SUMMARY_ROWS",
    "AgentStatus",
    "LoopDisplay",
    "parse_agent_line",
    "report_command",
    "summary_lines",
]

SUMMARY_ROWS = 10
"""The end-of-run summary shows the last this many iterations (``report`` has them all)."""


def _row_words(it: IterationRecord) -> str:
    if it.skipped:
        return f"#{it.number} skipped by next_iteration -> {it.decision}"
    words: list[str] = [it.outcome]
    if it.exit_code is not None:
        words.append(f"exit {it.exit_code}")
    if it.stop_reason:
        words.append(it.stop_reason)
    words.append(f"{it.duration:.1f}s")
    if it.commits:
        words.append(plural(it.commits, "commit"))
    return f"#{it.number} {', '.join(words)} -> {it.decision}"


def report_command(record: RunRecord, cwd: Path) -> str:
    """The command that shows every iteration of ``record``, from ``cwd``."""
    where = "" if Path(record.project_dir) == cwd else f" --dir {record.project_dir}"
    return f"forgeflare report {record.run_id}{where}"


def summary_lines(record: RunRecord, cwd: Path) -> list[str]:
    """The plain end-of-run summary: totals, why it ended, the last iterations, where to look.

    A night of hundreds of iterations stays a screenful: only the last :data:`SUMMARY_ROWS`
    are listed; ``forgeflare report`` shows every one.
    """
    t = record.totals
    rows = record.iterations
    skipped = sum(1 for it in rows if it.skipped)
    counted = record.counted_iterations
    cost = format_cost(t.cost_usd)
    its = plural(counted, "iteration") + (f" ({skipped} skipped)" if skipped else "")
    exit_words = "" if record.exit_code is None else f" (exit {record.exit_code})"
    lines = [
        f"finished: {record.finish_type}{exit_words}; {its}, "
        f"{plural(t.commits, 'commit')}, {t.tokens} tokens, {cost}, "
        f"{_elapsed(t.active_seconds)}"
    ]
    if record.finish_reason:
        lines.append(f"  {record.finish_reason}")
    shown = rows[-SUMMARY_ROWS:]
    if len(shown) < len(rows):
        lines.append(f"  … {plural(len(rows) - len(shown), 'earlier iteration')}")
    lines += [f"  {_row_words(it)}" for it in shown]
    lines.append(f"  every iteration: {report_command(record, cwd)}")
    return lines


_TOOL_RE = re.compile(r"^\s*(?:\[tool\]|▸)\s+([\w.-]+)")
_USAGE_RE = re.compile(r"^\s*\[usage\].*?\btotal=(\d+)")
# Claude Code's stream-json and other agents: look leniently for a tool name and usage.
_JSON_TOOL_RE = re.compile(r'"type"\s*:\s*"tool_use"[^{}]*?"name"\s*:\s*"([\w.-]+)"')


@dataclass(frozen=True, slots=True)
class AgentStatus:
    """What the status line knows about the running agent."""

    last_tool: str = ""
    tokens: int = 0


def parse_agent_line(line: str, status: AgentStatus) -> AgentStatus:
    """Update ``status`` from one line of agent output (unknown lines change nothing)."""
    if match := _TOOL_RE.match(line):
        return replace(status, last_tool=match.group(1))
    if match := _USAGE_RE.match(line):
        return replace(status, tokens=int(match.group(1)))
    if match := _JSON_TOOL_RE.search(line):
        return replace(status, last_tool=match.group(1))
    return status


def _clock() -> str:
    return time.strftime("%H:%M:%S")


def _elapsed(seconds: float) -> str:
    return format_duration(seconds)


def _write(stream: TextIO, text: str) -> None:
    stream.write(text)
    stream.flush()


def _silence_standard_streams() -> None:
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            os.dup2(null, fd)
    os.close(null)


class LoopDisplay:
    """The supervisor's output. ``live=None`` means: live status line when stderr is a TTY."""

    def __init__(
        self,
        *,
        out: TextIO | None = None,
        err: TextIO | None = None,
        live: bool | None = None,
    ) -> None:
        self._out = out or sys.stdout
        self._err = err or sys.stderr
        self.live = self._err.isatty() if live is None else live
        self._rich: Console | None = None
        self._live: Live | None = None
        self.status = AgentStatus()
        self.iteration = 0
        self.max_iterations = 0
        self._started = time.monotonic()
        self.log_file: Path | None = None
        """``loop.log``: every line, each with an ISO UTC time (one file for ``tail -f``)."""
        self.hooks_log: Path | None = None
        """``hooks.log``: lifecycle hook output, each line with an ISO UTC time."""
        self.spent: float | None = None
        self.agent = ""
        """The agent (``BACKEND[:PROFILE]``) the status line names when there is a fallback."""
        self._log_failed = False
        self._terminal_gone = False
        self._held: str | None = None

    @property
    def _console(self) -> Console:
        """The rich console of the live display (made when first used: only a live display
        uses it, and loading rich is 5% of a loop's start)."""
        if self._rich is None:
            from rich.console import Console

            self._rich = Console(file=self._err, highlight=False, soft_wrap=True)
        return self._rich

    def _terminal(self, write: Callable[[], object]) -> None:
        """Write to the terminal unless it is gone.

        When whatever read our output died (a fleet supervisor killed with -9, a closed ssh
        session: EPIPE, EIO), the loop must still stop its agent, run ``finished`` and write its
        records; ``loop.log`` keeps every line. The standard streams are pointed at /dev/null so
        that no later write (or the flush at exit) fails again.
        """
        if self._terminal_gone:
            return
        try:
            write()
        except OSError:
            self._terminal_gone = True
            _silence_standard_streams()

    def _log(self, text: str, *, hooks: bool = False) -> None:
        targets = [self.log_file] + ([self.hooks_log] if hooks else [])
        stamp = utc_timestamp()
        for path in targets:
            if path is None:
                continue
            try:
                append_line(path, f"{stamp} {text.rstrip(chr(10))}\n")
            except OSError as exc:
                if not self._log_failed:
                    self._log_failed = True
                    warning = f"{_clock()} [loop] warning: cannot write {path}: {exc}\n"
                    self._terminal(functools.partial(_write, self._err, warning))

    # -- messages -------------------------------------------------------------------------
    def _line(self, level: str, message: str, style: str) -> None:
        self._log(f"[loop] {level}{message}")
        message = for_terminal(message)
        if self.live:
            from rich.text import Text

            self._terminal(
                lambda: self._console.print(Text(f"{_clock()} {level}{message}", style=style))
            )
        else:
            self._terminal(lambda: _write(self._err, f"{_clock()} [loop] {level}{message}\n"))

    def info(self, message: str) -> None:
        """A normal message."""
        self._line("", message, "cyan")

    def warn(self, message: str) -> None:
        """A warning."""
        self._line("warning: ", message, "yellow")

    def error(self, message: str) -> None:
        """An error the loop survives."""
        self._line("error: ", message, "bold red")

    def output(self, line: bytes | str, *, prefix: str = "") -> None:
        """Echo one line of a child's output and update the status from it."""
        text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
        self._log(prefix + text, hooks=bool(prefix))
        text = for_terminal(text)
        if not prefix:
            self.status = parse_agent_line(text, self.status)
        if self.live:
            from rich.text import Text

            self._terminal(
                lambda: self._console.print(Text(prefix + text.rstrip("\n")), markup=False)
            )
            self.refresh()
        else:
            whole = prefix + text if text.endswith("\n") else prefix + text + "\n"
            self._terminal(lambda: _write(self._out, whole))

    # -- live status line -----------------------------------------------------------------
    def start_iteration(self, iteration: int, max_iterations: int) -> None:
        """A new agent run begins."""
        self.iteration, self.max_iterations = iteration, max_iterations
        self.status = AgentStatus()
        self._started = time.monotonic()
        if self.live and self._live is None:
            self._start_live()

    def hold(self, text: str | None) -> None:
        """Between iterations, a status line that says why the loop holds (``paused ...``);
        ``None`` removes it."""
        self._held = text
        if text is None:
            self.end_iteration()
        elif self.live and self._live is None:
            self._start_live()

    def _start_live(self) -> None:
        """Show the status line (a live display only: rich loads here)."""
        from rich.live import Live

        self._live = Live(self._render(), console=self._console, auto_refresh=False, transient=True)
        self._terminal(self._live.start)

    def _render(self) -> Text:
        from rich.text import Text

        if self._held is not None:
            return Text(f"{self._held}  {_elapsed(time.monotonic() - self._started)}", style="bold")
        most = str(self.max_iterations) if self.max_iterations else "∞"
        tool = self.status.last_tool or "-"
        spent = "" if self.spent is None else f"  spent: {format_cost(self.spent)}"
        agent = f"  agent: {self.agent}" if self.agent else ""
        took = _elapsed(time.monotonic() - self._started)
        return Text(
            f"iteration {self.iteration}/{most}{agent}  {took}"
            f"  last tool: {tool}  tokens: {self.status.tokens}{spent}",
            style="bold",
        )

    def refresh(self) -> None:
        """Redraw the status line (called by the loop's ticker and on agent output)."""
        live = self._live
        if live is not None:
            self._terminal(lambda: live.update(self._render(), refresh=True))

    def end_iteration(self) -> None:
        """The agent run is over: remove the status line."""
        live, self._live = self._live, None
        if live is not None:
            self._terminal(live.stop)

    # -- summary ----------------------------------------------------------------------------
    def summary(self, record: RunRecord) -> None:
        """The end-of-run table."""
        self.end_iteration()
        if not self.live:
            for line in summary_lines(record, Path.cwd().resolve()):
                self._line("", line, "")
            for line in _question_lines(record):
                self._line("", f"  {line}", "")
            return
        from rich.table import Table
        from rich.text import Text

        table = Table(title=f"run {record.run_id}: {record.finish_type}")
        for col in ("#", "outcome", "stop", "time", "tokens", "cost", "commits", "decision"):
            table.add_column(col)
        shown = record.iterations[-SUMMARY_ROWS:]
        if len(shown) < len(record.iterations):
            table.add_row("…", f"{len(record.iterations) - len(shown)} earlier", *[""] * 6)
        for it in shown:
            table.add_row(
                str(it.number),
                "skipped" if it.skipped else it.outcome,
                for_terminal(it.stop_reason or "-"),
                f"{it.duration:.1f}s",
                str(it.tokens.total),
                "-" if it.cost_usd is None else format_cost(it.cost_usd),
                str(it.commits),
                for_terminal(it.decision),
            )
        t = record.totals
        table.add_row(
            "total",
            "",
            "",
            _elapsed(t.active_seconds),
            str(t.tokens),
            "-" if t.cost_usd is None else format_cost(t.cost_usd),
            str(t.commits),
            "",
        )
        self._terminal(lambda: self._console.print(table))
        if record.finish_reason:
            reason = for_terminal(record.finish_reason)
            self._terminal(lambda: self._console.print(Text(reason)))
        more = f"every iteration: {report_command(record, Path.cwd().resolve())}"
        self._terminal(lambda: self._console.print(Text(more)))
        asked = for_terminal("\n".join(_question_lines(record)))
        if asked:
            self._terminal(lambda: self._console.print(Text(asked)))


def _question_lines(record: RunRecord) -> list[str]:
    """The open question and the command that answers it (none without a question)."""
    if record.question is None:
        return []
    return [
        "question:",
        *record.question.splitlines(),
        f'answer with: forgeflare answer --dir {record.project_dir} "TEXT", then forgeflare loop '
        f"--resume --dir {record.project_dir}",
    ]
