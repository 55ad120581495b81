"""The four agent backends: how to start an agent and read what it did into a report.

A backend builds the argv (the prompt goes on stdin), turns each line of the agent's output
into what the terminal shows (the raw line always goes to the iteration log), and builds the
:class:`IterationReport` from the reader, how the process ended, the agent's ``final`` and an
optional report file. Adding a backend is one class here and one entry in :data:`BACKENDS`.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import ValidationError

from forgeflare._convergence import AgentReport, Final
from forgeflare._pricing import price_usd
from forgeflare.stophook._signals import Mode, find_signal
from forgeflare.supervisor.backends._claude import ClaudeStreamReader
from forgeflare.supervisor.backends._codex import CodexStreamReader
from forgeflare.supervisor.backends._report import IterationReport, Tokens

__all__ = [
    "BACKENDS",
    "COMPLETE_TAG",
    "REPORT_ENV",
    "Backend",
    "ChildEnd",
    "ClaudeBackend",
    "CodexBackend",
    "CommandBackend",
    "ForgeflareBackend",
    "LineReader",
    "completion_signal",
]

REPORT_ENV = "FORGEFLARE_REPORT"
"""Where a ``command`` agent may write its report JSON (``forgeflare schema report``)."""

COMPLETE_TAG = "<loop-done>COMPLETE</loop-done>"


def completion_signal(text: str) -> str | None:
    """``COMPLETE_TAG`` when it stands on its own line, outside code, in ``text``."""
    return COMPLETE_TAG if find_signal(text or "", Mode.LOOP) == COMPLETE_TAG else None


@dataclass(frozen=True)
class ChildEnd:
    """How the agent process ended, as the loop saw it."""

    exit_code: int | None
    """The exit status; ``None`` when a signal or the supervisor ended it."""
    timed_out: bool = False
    stopped: bool = False
    """Ended by Ctrl+C / SIGTERM of the loop."""
    signalled: bool = False
    """Killed by a signal the loop did not send."""


class LineReader(Protocol):
    """Reads an agent's output line by line."""

    def feed(self, line: str) -> list[str]:
        """One line of output in; the lines to show for it out."""
        ...


class _RawReader:
    """Shows each line as it is (the own agent's output is already for people)."""

    def feed(self, line: str) -> list[str]:
        return [line.rstrip("\n")]


def _ended(end: ChildEnd) -> str | None:
    if end.timed_out:
        return "timed_out"
    if end.stopped:
        return "interrupted"
    if end.signalled:
        return "killed"
    return None


_FINAL_OUTCOMES = {
    "api_error": "api_error",
    "rate_limited": "rate_limited",
    "refusal": "refused",
    "budget": "budget",
    "interrupted": "interrupted",
}


def _report_file(path: Path | None) -> IterationReport | None:
    if path is None:
        return None
    try:
        return IterationReport.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError):
        return None


_COMPLETE_PROMPT = (
    f"\nWhen the whole task is done, end your final message with {COMPLETE_TAG} on a "
    "line of its own (not in code). Do not write it before.\n"
)
"""Appended to the prompt of agents that complete by the tag in their final message."""


def _with_model(argv: list[str], model: str, extra: list[str]) -> list[str]:
    return [*argv, *(["--model", model] if model else []), *extra]


class Backend(Protocol):
    """How to run one kind of agent: the loop's whole agent side goes through this seam."""

    name: str
    writes_final: bool
    """Does the agent always write ``convergence.json``'s ``final`` (a missing one = crash)?"""
    prompt_suffix: str
    """Added to every iteration's prompt (how to say the task is complete), or empty."""

    def argv(self, *, python: str, model: str, command: str, extra: list[str]) -> list[str]: ...

    def budget_argv(self, left_usd: float) -> list[str]:
        """Arguments that cap the agent's spend at what the loop has left (none: no cap)."""
        ...

    def reader(self) -> LineReader: ...

    def report(
        self,
        reader: LineReader,
        end: ChildEnd,
        final: Final | None,
        report_file: Path | None,
    ) -> IterationReport: ...


@dataclass
class _PlainBackend:
    """An agent whose output is for people (shown as it is) and that has no completion tag."""

    writes_final: bool = False
    prompt_suffix: str = ""

    def budget_argv(self, left_usd: float) -> list[str]:
        return []

    def reader(self) -> LineReader:
        return _RawReader()


@dataclass
class ForgeflareBackend(_PlainBackend):
    """Our own agent: ``python -P -m forgeflare run``; it reports through ``final``.

    ``-P``: the agent runs with the project as its working directory, and ``-m`` would put that
    directory first on ``sys.path`` (a committed ``trio.py`` would be imported instead of trio).
    """

    name: str = "forgeflare"
    writes_final: bool = True

    def argv(self, *, python: str, model: str, command: str, extra: list[str]) -> list[str]:
        return _with_model([python, "-P", "-m", "forgeflare", "run"], model, extra)

    def budget_argv(self, left_usd: float) -> list[str]:
        return ["--max-cost", f"{max(0.0, left_usd):.6f}"]

    def report(
        self, reader: LineReader, end: ChildEnd, final: Final | None, report_file: Path | None
    ) -> IterationReport:
        outcome = _ended(end)
        if final is None:
            return IterationReport(outcome=outcome or "agent_error", detail="no final written")
        tokens = Tokens(**final.tokens) if final.tokens else Tokens(output=final.total_tokens)
        return IterationReport(
            outcome=outcome or _FINAL_OUTCOMES.get(final.reason, "ok"),
            transient=bool(final.transient) and final.reason == "api_error",
            stop_reason=final.reason,
            tokens=tokens,
            turns=final.requests,
            **final.model_dump(include=set(AgentReport.model_fields)),
        )


@dataclass
class CommandBackend(_PlainBackend):
    """Any command, prompt on stdin; judged by its exit status, or by its report file."""

    name: str = "command"

    def argv(self, *, python: str, model: str, command: str, extra: list[str]) -> list[str]:
        return shlex.split(command) + extra

    def report(
        self, reader: LineReader, end: ChildEnd, final: Final | None, report_file: Path | None
    ) -> IterationReport:
        outcome = _ended(end)
        written = _report_file(report_file)
        if written is not None:
            if outcome is not None:
                written = written.model_copy(update={"outcome": outcome})
            if written.cost_usd is None:
                cost = price_usd(written.model, written.tokens.model_dump())
                written = written.model_copy(update={"cost_usd": cost})
            return written
        if outcome is not None:
            return IterationReport(outcome=outcome)
        if final is not None:  # an agent that writes final like ours
            return ForgeflareBackend().report(reader, end, final, None)
        good = end.exit_code == 0
        return IterationReport(
            outcome="ok" if good else "agent_error",
            stop_reason=None if good else f"exit {end.exit_code}",
        )


@runtime_checkable
class _StreamReader(LineReader, Protocol):
    def report(self) -> dict[str, Any]: ...


@dataclass
class _StreamBackend:
    """An agent whose JSON event stream on stdout is its report, and that completes by the tag."""

    writes_final: bool = False
    prompt_suffix: str = _COMPLETE_PROMPT
    program: ClassVar[str]
    """The command when ``[agent] command`` names none."""
    args: ClassVar[tuple[str, ...]]
    last: ClassVar[tuple[str, ...]] = ()

    def options(self) -> list[str]:
        """This backend's own settings as arguments."""
        return []

    def argv(self, *, python: str, model: str, command: str, extra: list[str]) -> list[str]:
        argv = [*(shlex.split(command) if command else [self.program]), *self.args, *self.options()]
        return [*_with_model(argv, model, extra), *self.last]

    def budget_argv(self, left_usd: float) -> list[str]:
        return []

    def report(
        self, reader: LineReader, end: ChildEnd, final: Final | None, report_file: Path | None
    ) -> IterationReport:
        assert isinstance(reader, _StreamReader), "a stream backend reads with its own reader"
        return _from_stream(reader.report(), end)


@dataclass
class ClaudeBackend(_StreamBackend):
    """Claude Code headless: ``claude -p --output-format stream-json --verbose``."""

    name: str = "claude"
    permission_mode: str = "bypassPermissions"
    program: ClassVar[str] = "claude"
    args: ClassVar[tuple[str, ...]] = ("-p", "--output-format", "stream-json", "--verbose")

    def options(self) -> list[str]:
        return ["--permission-mode", self.permission_mode] if self.permission_mode else []

    def reader(self) -> LineReader:
        return ClaudeStreamReader()


@dataclass
class CodexBackend(_StreamBackend):
    """Codex: ``codex exec --json`` with the prompt on stdin (``-``)."""

    name: str = "codex"
    sandbox: str = "workspace-write"
    program: ClassVar[str] = "codex"
    args: ClassVar[tuple[str, ...]] = ("exec", "--json", "--skip-git-repo-check")
    last: ClassVar[tuple[str, ...]] = ("-",)
    """The prompt comes on stdin."""

    def options(self) -> list[str]:
        return ["--sandbox", self.sandbox] if self.sandbox else []

    def reader(self) -> LineReader:
        return CodexStreamReader()


def _from_stream(fields: Mapping[str, Any], end: ChildEnd) -> IterationReport:
    outcome = _ended(end) or fields["outcome"]
    tokens = Tokens(**fields["tokens"])
    cost = fields.get("cost_usd")
    if cost is None:
        cost = price_usd(fields.get("model"), tokens.model_dump())
    return IterationReport(
        outcome=outcome,
        transient=bool(fields.get("transient")),
        stop_reason=fields.get("stop_reason"),
        tokens=tokens,
        cost_usd=cost,
        resets_at=fields.get("resets_at"),
        turns=int(fields.get("turns") or 0),
        session_id=fields.get("session_id"),
        model=fields.get("model"),
        signal=completion_signal(str(fields.get("final_text") or "")),
    )


BACKENDS: dict[str, type[ForgeflareBackend | CommandBackend | ClaudeBackend | CodexBackend]] = {
    "forgeflare": ForgeflareBackend,
    "command": CommandBackend,
    "claude": ClaudeBackend,
    "codex": CodexBackend,
}
"""Backends by the name ``[agent] backend`` uses."""
