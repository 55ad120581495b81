"""Claude Code's ``--output-format stream-json`` read into display lines and one report.

Facts from Claude Code 2.1 (``claude -p --output-format stream-json --verbose``): one JSON
object per line; ``system``/``init`` names the session and model; each ``assistant`` line holds
one content block (text, tool_use, thinking); ``user`` lines carry tool results;
``rate_limit_event`` lines give the usage window's state (``rejected`` with ``resetsAt`` epoch
seconds when a limit is hit); the last line is ``result`` with the turn count, the cost in USD
and the usage. Claude Code has been seen writing one event inside another's line: a line that
is not JSON is shown as text, unknown types are counted and skipped, nothing is fatal. No
``result`` line at all is an ``agent_error``.

:class:`ClaudeStreamReader` is pure: ``feed(line)`` returns what to show, ``report()`` the
iteration report fields (DESIGN "Records and outcomes").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from forgeflare._units import format_tokens
from forgeflare.supervisor.backends._stream import JsonStreamReader, as_int, json_event, tool_line

__all__ = [
    "ClaudeStreamReader",
    "JsonStreamReader",
    "as_int",
    "asked",
    "json_event",
    "tool_line",
]

_LIMIT_RESET = re.compile(r"limit reached\|(\d{9,13})")


def asked(tool_input: object) -> list[str]:
    """The question texts of an ``AskUserQuestion`` call (``questions[].question``)."""
    if not isinstance(tool_input, dict):
        return []
    items = tool_input.get("questions")
    found = [
        str(q["question"]).strip()
        for q in (items if isinstance(items, list) else [])
        if isinstance(q, dict) and str(q.get("question") or "").strip()
    ]
    if not found and isinstance(tool_input.get("question"), str):
        found = [tool_input["question"].strip()]
    return [q for q in found if q]


def _iso(epoch: object) -> str | None:
    if isinstance(epoch, bool) or not isinstance(epoch, int | float) or epoch <= 0:
        return None
    if epoch > 1e12:  # milliseconds
        epoch = epoch / 1000
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class ClaudeStreamReader(JsonStreamReader):
    """Reads one Claude Code iteration's stream, line by line."""

    session_id: str | None = None
    model: str | None = None
    texts: list[str] = field(default_factory=list)
    result: dict[str, Any] | None = None
    rate_limit: dict[str, Any] | None = None
    rate_limit_error: bool = False
    questions: list[str] = field(default_factory=list)
    """Questions the agent asked with Claude Code's ``AskUserQuestion`` tool."""

    def event(self, event: dict[str, Any]) -> list[str]:
        kind = event.get("type")
        if kind == "system":
            return self._system(event)
        if kind == "assistant":
            return self._assistant(event)
        if kind == "user":
            return []
        if kind == "rate_limit_event":
            info = event.get("rate_limit_info")
            if isinstance(info, dict):
                self.rate_limit = info
                if info.get("status") == "rejected":
                    until = _iso(info.get("resetsAt"))
                    return [f"usage limit reached; resets {until or 'at an unknown time'}"]
            return []
        if kind == "result":
            self.result = event
            return [self.summary_line()]
        return super().event(event)

    def _system(self, event: dict[str, Any]) -> list[str]:
        if event.get("subtype") == "init":
            self.session_id = event.get("session_id") or self.session_id
            self.model = event.get("model") or self.model
            return [f"session {self.session_id or '?'} · model {self.model or '?'}"]
        return []

    def _assistant(self, event: dict[str, Any]) -> list[str]:
        if event.get("error") == "rate_limit":
            self.rate_limit_error = True
        message = event.get("message")
        if not isinstance(message, dict):
            return []
        out: list[str] = []
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                self.texts.append(block["text"])
                out.append(block["text"])
            elif block.get("type") == "tool_use":
                out.append(tool_line(str(block.get("name", "?")), block.get("input")))
                if block.get("name") == "AskUserQuestion":
                    # Headless, nobody answers the question tool: it parks the loop instead.
                    self.questions.extend(asked(block.get("input")))
        return out

    # --- the report ---------------------------------------------------------------------------

    def tokens(self) -> dict[str, int]:
        """Tokens of the whole iteration, from the result's usage (zeros without one)."""
        usage = (self.result or {}).get("usage")
        usage = usage if isinstance(usage, dict) else {}
        return {
            "input": as_int(usage.get("input_tokens")),
            "output": as_int(usage.get("output_tokens")),
            "cache_read": as_int(usage.get("cache_read_input_tokens")),
            "cache_write": as_int(usage.get("cache_creation_input_tokens")),
        }

    def resets_at(self) -> str | None:
        """When the usage window that stopped this iteration resets, if known: from the
        rate-limit event, else from a ``usage limit reached|<epoch>`` message."""
        info = self.rate_limit or {}
        known = _iso(info.get("resetsAt"))
        if known is not None:
            return known
        for text in [str((self.result or {}).get("result") or ""), *self.texts[-3:]]:
            match = _LIMIT_RESET.search(text)
            if match:
                return _iso(int(match.group(1)))
        return None

    def outcome(self) -> tuple[str, bool]:
        """``(outcome, transient)`` by DESIGN's names; the loop overrides it when it killed."""
        result = self.result
        limited = self.rate_limit_error or (self.rate_limit or {}).get("status") == "rejected"
        if result is None:
            return ("rate_limited", False) if limited else ("agent_error", False)
        status = result.get("api_error_status")
        if limited or status == 429:
            return "rate_limited", False
        if not result.get("is_error") and result.get("subtype") in ("success", "error_max_turns"):
            return "ok", False
        if isinstance(status, int):
            return "api_error", status >= 500 or status in (408, 409)
        return "agent_error", False

    def final_text(self) -> str:
        """The result text, else the last assistant text."""
        result = self.result or {}
        text = result.get("result")
        if isinstance(text, str) and text:
            return text
        return self.texts[-1] if self.texts else ""

    def report(self) -> dict[str, Any]:
        """The iteration report fields this stream gives."""
        result = self.result or {}
        outcome, transient = self.outcome()
        cost = result.get("total_cost_usd")
        return {
            "outcome": outcome,
            "transient": transient,
            "stop_reason": result.get("subtype") or (None if self.result else "no_result"),
            "tokens": self.tokens(),
            "cost_usd": float(cost) if isinstance(cost, int | float) else None,
            "resets_at": self.resets_at() if outcome == "rate_limited" else None,
            "turns": as_int(result.get("num_turns")),
            "session_id": result.get("session_id") or self.session_id,
            "model": self.model,
            "final_text": self.final_text(),
            "question": "\n".join(self.questions) or None,
        }

    def summary_line(self) -> str:
        """One line for the result: outcome, turns, tokens, cost."""
        report = self.report()
        t = report["tokens"]
        parts = [
            f"■ {report['outcome']}",
            f"{report['turns']} turns",
            f"in {format_tokens(t['input'])} out {format_tokens(t['output'])}",
        ]
        if t["cache_read"] or t["cache_write"]:
            cache_r, cache_w = format_tokens(t["cache_read"]), format_tokens(t["cache_write"])
            parts.append(f"cache r {cache_r} w {cache_w}")
        if report["cost_usd"] is not None:
            parts.append(f"${report['cost_usd']:.4f}")
        return " · ".join(parts)
