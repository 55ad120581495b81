"""Codex's ``codex exec --json`` read into display lines and one report.

Events (codex-cli 0.5x): ``thread.started`` (``thread_id``), ``turn.started``,
``item.started`` / ``item.updated`` / ``item.completed`` with an ``item`` whose type is
``agent_message``, ``reasoning``, ``command_execution`` (command, exit_code, aggregated_output),
``file_change``, ``mcp_tool_call``, ``web_search``, ``todo_list`` or ``error``;
``turn.completed`` with ``usage`` (``input_tokens`` *including* ``cached_input_tokens``,
``output_tokens``), ``turn.failed`` and ``error``. Like the Claude Code reader, it is pure and
never fails on a line it does not understand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from forgeflare._units import format_tokens
from forgeflare.supervisor.backends._claude import (
    JsonStreamReader,
    as_int,
    tool_line,
)

__all__ = ["CodexStreamReader"]

_LIMIT = re.compile(r"\b429\b|usage limit|rate limit|too many requests", re.IGNORECASE)
_TRANSIENT = re.compile(
    r"\b5\d\d\b|overloaded|stream disconnected|connection|timed? ?out|reconnect", re.IGNORECASE
)


@dataclass
class CodexStreamReader(JsonStreamReader):
    """Reads one Codex iteration's JSON event stream, line by line."""

    thread_id: str | None = None
    model: str | None = None
    messages: list[str] = field(default_factory=list)
    turns: int = 0
    completed_turns: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0
    errors: list[str] = field(default_factory=list)
    failed: bool = False

    def event(self, event: dict[str, Any]) -> list[str]:
        kind = event.get("type")
        if kind == "thread.started":
            self.thread_id = event.get("thread_id") or self.thread_id
            return [f"thread {self.thread_id or '?'}"]
        if kind == "turn.started":
            self.turns += 1
            return []
        if kind == "turn.completed":
            self.completed_turns += 1
            raw = event.get("usage")
            usage: dict[str, Any] = raw if isinstance(raw, dict) else {}
            self.input_tokens += as_int(usage.get("input_tokens"))
            self.cached_tokens += as_int(usage.get("cached_input_tokens"))
            self.output_tokens += as_int(usage.get("output_tokens"))
            return [self.summary_line()]
        if kind == "turn.failed":
            self.failed = True
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else error
            self.errors.append(str(message or "turn failed"))
            return [f"turn failed: {self.errors[-1]}"]
        if kind == "error":
            self.errors.append(str(event.get("message") or "error"))
            return [f"error: {self.errors[-1]}"]
        if kind in ("item.started", "item.updated", "item.completed"):
            item = event.get("item")
            return self._item(kind, item) if isinstance(item, dict) else []
        return super().event(event)

    def _item(self, kind: str, item: dict[str, Any]) -> list[str]:
        itype = item.get("type")
        if itype == "command_execution" and kind == "item.started":
            return [tool_line("Bash", {"command": item.get("command", "")})]
        if kind != "item.completed":
            return []
        if itype == "agent_message" and isinstance(item.get("text"), str):
            self.messages.append(item["text"])
            return [item["text"]]
        if itype == "file_change":
            changes = item.get("changes")
            paths = (
                [c.get("path", "?") for c in changes if isinstance(c, dict)]
                if isinstance(changes, list)
                else []
            )
            return [tool_line("Edit", {"path": ", ".join(paths)})]
        if itype == "mcp_tool_call":
            return [tool_line(f"{item.get('server', 'mcp')}.{item.get('tool', '?')}", {})]
        if itype == "web_search":
            return [tool_line("WebSearch", {"query": item.get("query", "")})]
        if itype == "error":
            self.errors.append(str(item.get("message", "error")))
            return [f"error: {self.errors[-1]}"]
        return []

    def tokens(self) -> dict[str, int]:
        """Codex counts cached input inside ``input_tokens``: subtract it (DESIGN)."""
        return {
            "input": max(0, self.input_tokens - self.cached_tokens),
            "output": self.output_tokens,
            "cache_read": self.cached_tokens,
            "cache_write": 0,
        }

    def outcome(self) -> tuple[str, bool]:
        """``(outcome, transient)``: a completed turn without failure is ``ok``."""
        text = " ".join(self.errors)
        if self.failed or (self.errors and not self.completed_turns):
            if _LIMIT.search(text):
                return "rate_limited", False
            if _TRANSIENT.search(text):
                return "api_error", True
            return "agent_error", False
        if self.completed_turns:
            return "ok", False
        return "agent_error", False

    def report(self) -> dict[str, Any]:
        """The iteration report fields this stream gives (Codex reports no cost)."""
        outcome, transient = self.outcome()
        return {
            "outcome": outcome,
            "transient": transient,
            "stop_reason": "turn.failed" if self.failed else "turn.completed",
            "tokens": self.tokens(),
            "cost_usd": None,
            "resets_at": None,
            "turns": self.completed_turns,
            "session_id": self.thread_id,
            "model": self.model,
            "final_text": self.messages[-1] if self.messages else "",
        }

    def summary_line(self) -> str:
        """One line per completed turn: tokens so far."""
        t = self.tokens()
        return (
            f"■ turn {self.completed_turns} · in {format_tokens(t['input'])} "
            f"out {format_tokens(t['output'])} · cache r {format_tokens(t['cache_read'])}"
        )
