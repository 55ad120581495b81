"""What the OpenCode and pi readers share: tokens and cost added up per model request, the
session's failure read with one table (:mod:`._apierror`), and a retry the CLI would wait too
long for, which asks the loop to end the agent (:attr:`CliStreamReader.end_reason`) and keeps the
window's reset instead."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

from forgeflare._units import format_tokens
from forgeflare.disk import Final, Tokens
from forgeflare.security import AgentBox
from forgeflare.supervisor.backends._apierror import (
    classify_api_error,
    reset_in_message,
    window_reset,
)
from forgeflare.supervisor.backends._backends import (
    ChildEnd,
    LineReader,
    StreamBackend,
    _found,
    _from_stream,
)
from forgeflare.supervisor.backends._report import IterationReport
from forgeflare.supervisor.backends._stream import (
    MAX_COUNT,
    JsonStreamReader,
    StreamReport,
    as_cost,
)

__all__ = ["RETRY_WAIT_LIMIT", "CliBackend", "CliStreamReader"]

RETRY_WAIT_LIMIT = 60.0
"""Seconds: a retry the CLI schedules further ahead is the loop's to wait, not the CLI's."""


def _zero_tokens() -> dict[str, int]:
    return {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}


@dataclass
class CliStreamReader(JsonStreamReader):
    """The common state of an agent CLI's stream reader (pure)."""

    cli: str = "the agent"
    """The CLI's name in shown lines."""
    model: str | None = None
    session_id: str | None = None
    messages: list[str] = field(default_factory=list)
    requests: int = 0
    """Model requests that ended (OpenCode's steps, pi's assistant messages)."""
    stop: str | None = None
    """The last request's own reason for ending."""
    tokens: dict[str, int] = field(default_factory=_zero_tokens)
    cost: float = 0.0
    failure: str | None = None
    status: int | None = None
    """The failure's HTTP status, when the CLI names it."""
    retry_reset: datetime | None = None
    end_reason: str | None = None
    """Set when the agent should be ended now (a retry wait the loop keeps instead)."""
    retry_limit: float = RETRY_WAIT_LIMIT
    now: datetime | None = None
    """The time the report is made; ``None``: the clock."""

    def add_request(self, more: dict[str, int], cost: object) -> str:
        """One finished model request's tokens and cost; the line that shows the totals."""
        self.requests += 1
        for key, value in more.items():
            self.tokens[key] = min(MAX_COUNT, self.tokens[key] + value)
        self.cost += as_cost(cost) or 0.0
        t = self.tokens
        return (
            f"■ request {self.requests} · in {format_tokens(t['input'])} "
            f"out {format_tokens(t['output'])} · cache r {format_tokens(t['cache_read'])} "
            f"w {format_tokens(t['cache_write'])}"
        )

    def retry(self, attempt: int, wait: float, message: str, at: datetime | None) -> str:
        """A retry the CLI scheduled ``wait`` seconds ahead (at ``at`` when known)."""
        line = f"retrying the API: attempt {attempt or '?'}, {wait:.0f} s"
        if wait <= self.retry_limit:
            return f"{line} ({message[:200]})"
        self.failure = message
        self.retry_reset = reset_in_message(message) or at
        self.end_reason = f"{self.cli} would wait {wait:.0f} s to retry ({message[:200]})"
        return f"{line}: over {self.retry_limit:.0f} s, ending {self.cli} (the loop waits)"

    def outcome(self) -> tuple[str, bool]:
        """``(outcome, transient)``: a long retry wait is a usage window; else the failure's
        meaning; else ``ok`` once a request ended."""
        if self.end_reason is not None:
            return "rate_limited", False
        if self.failure is not None:
            failure = classify_api_error(self.status, self.failure)
            return failure.outcome, failure.transient
        return ("ok", False) if self.requests else ("agent_error", False)

    def streamed_cost_usd(self) -> float | None:
        """What the CLI says the iteration cost so far."""
        return self.cost

    def report(self) -> StreamReport:
        """What this stream says of the iteration."""
        outcome, transient = self.outcome()
        now = self.now or datetime.now(UTC)
        reset = self.retry_reset or reset_in_message(self.failure or "")
        detail = self.end_reason or (self.failure if outcome != "ok" else None)
        return StreamReport(
            outcome=outcome,
            transient=transient,
            stop_reason="error" if self.failure and outcome != "ok" else self.stop,
            tokens=Tokens(**self.tokens),
            cost_usd=self.cost if self.requests else None,
            resets_at=window_reset(reset, now) if outcome == "rate_limited" else None,
            turns=self.requests,
            session_id=self.session_id,
            model=self.model,
            final_text=self.messages[-1] if self.messages else "",
            detail=detail or self.damage_detail(outcome),
        )


@dataclass
class CliBackend(StreamBackend):
    """A CLI read by a :class:`CliStreamReader`: its command found and its own offline check
    (:meth:`problem`) before the night; a report from its stream, where an end the reader asked
    for is no interruption."""

    box: ClassVar[AgentBox] = "own"
    demo_api: ClassVar[str | None] = "messages"
    demo_shell_tool: ClassVar[str] = "bash"
    demo_args: ClassVar[tuple[str, ...]] = ("--model", "anthropic/claude-sonnet-4-5")
    """Both speak Anthropic's Messages API, call their shell tool ``bash`` and take the model
    as ``provider/model``."""

    def problem(self, env: Mapping[str, str]) -> str | None:
        """An offline fact that would make every iteration fail, with its fix."""
        return None

    def preflight(self, project: Path, argv: list[str], env: Mapping[str, str]) -> None:
        _found(project, argv, env, getattr(self, "name", "command"))

    def problems(self, env: Mapping[str, str], argv: Sequence[str], *, root: bool) -> list[str]:
        problem = self.problem(env)
        return [problem] if problem else []

    def report(
        self, reader: LineReader, end: ChildEnd, final: Final | None, report_file: Path | None
    ) -> IterationReport:
        assert isinstance(reader, CliStreamReader), "a CLI backend reads with its own reader"
        if reader.end_reason is not None:  # the loop ended it to keep the window itself
            end = ChildEnd(exit_code=end.exit_code, timed_out=end.timed_out)
        return _from_stream(reader.report(), end)
