"""Claude Code's ``--output-format stream-json`` read into display lines and one report.

Facts from Claude Code 2.1 (``claude -p --output-format stream-json --verbose``): one JSON
object per line; ``system``/``init`` names the session and model; each ``assistant`` line holds
one content block (text, tool_use, thinking); ``user`` lines carry tool results;
``rate_limit_event`` lines give the usage window's state (``rejected`` with ``resetsAt`` epoch
seconds when a limit is hit); ``system``/``api_retry`` lines are Claude Code's own retries of
the API (``attempt``, ``max_retries``, ``retry_delay_ms``, ``error_status``); an ``assistant``
line may carry an ``error`` (``server_error`` when the API could not be reached: the text is
``API Error: Unable to connect to API (ConnectionRefused)``); the last line is ``result`` with
the turn count, the cost in USD and the usage (``subtype`` is ``success`` even then, with
``is_error`` true and ``api_error_status`` null). From 2.1.315 a session may write several
``result`` lines (``result_index`` 0, 1, …; one per turn it ran): each carries its own
``usage`` and ``num_turns`` (all are counted), ``total_cost_usd`` is the session's so far (the
highest counts); an error result carries ``api_error_status``, ``api_error_type``
(``authentication_error``, ``overloaded_error`` …) and ``terminal_reason`` (``api_error``),
and its ``assistant`` line an ``error`` (``authentication_failed``, ``billing_error`` …): the
outcome is read from these fields before the result's words. Claude Code has been seen writing
one event inside another's line: a line that is not JSON is shown as text, unknown types are
counted and skipped, nothing is fatal. No ``result`` line at all is an ``agent_error``; an
event whose fields have other types than :data:`SHAPES` names is skipped with a warning, and
when that leaves no result the report's ``detail`` names the line that broke the stream.

:class:`ClaudeStreamReader` is pure: ``feed(line)`` returns what to show, ``report()`` the
iteration report fields (DESIGN "Records and outcomes").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from forgeflare._pricing import price_usd
from forgeflare._units import format_tokens
from forgeflare.disk import Tokens
from forgeflare.supervisor.backends._stream import (
    MAX_RESET_AHEAD,
    NULL,
    NUMBER,
    JsonStreamReader,
    Shape,
    StreamReport,
    as_cost,
    as_int,
    as_str,
    clean_text,
    epoch_time,
    json_event,
    tool_line,
)

__all__ = [
    "SHAPES",
    "ClaudeStreamReader",
    "JsonStreamReader",
    "as_int",
    "asked",
    "json_event",
    "tool_line",
]

_LIMIT_RESET = re.compile(r"limit reached\|(\d{9,13})")
_UNREACHABLE = re.compile(
    r"unable to connect to api|connection error|connection refused|econnrefused|econnreset"
    r"|fetch failed|socket hang up|timed? ?out|overloaded|\b5\d\d\b",
    re.IGNORECASE,
)
"""An error result's text that means the API was down or unreachable: an outage."""
_OUTAGE_ERRORS = frozenset({"server_error", "overloaded_error", "api_error"})
"""An ``assistant`` line's ``error`` (or a result's ``api_error_type``) that means the API side
failed."""
_QUOTA_ERRORS = frozenset({"billing_error"})
"""An ``assistant`` line's ``error`` (or ``api_error_type``) that means no credit is left."""


SHAPES: dict[str, Shape] = {
    "system": {
        "subtype": str,
        "session_id": str,
        "model": str,
        "attempt": (int, NULL),
        "max_retries": (int, NULL),
        "retry_delay_ms": (*NUMBER, NULL),
        "error_status": (int, NULL),
    },
    "assistant": {"message": dict, "error": (str, NULL), "parent_tool_use_id": (str, NULL)},
    "user": {"message": (dict, NULL)},
    "rate_limit_event": {"rate_limit_info": dict},
    "result": {
        "subtype": str,
        "is_error": bool,
        "api_error_status": (int, NULL),
        "num_turns": int,
        "result": (str, NULL),
        "stop_reason": (str, NULL),
        "session_id": str,
        "total_cost_usd": (*NUMBER, NULL),
        "usage": dict,
        "result_index": (int, NULL),
        "api_error_type": (str, NULL),
        "terminal_reason": (str, NULL),
    },
}
"""The types of the fields Claude Code 2.1's events carry that the reader uses."""


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
    at = epoch_time(epoch)
    return at.strftime("%Y-%m-%dT%H:%M:%SZ") if at is not None else None


def _retry_line(event: dict[str, Any]) -> str:
    """``retrying the API: attempt 3 of 10, 8 s (HTTP 529)``: Claude Code's own retry."""
    attempt, most = as_int(event.get("attempt")), as_int(event.get("max_retries"))
    delay = event.get("retry_delay_ms")
    words = f"retrying the API: attempt {attempt or '?'}" + (f" of {most}" if most else "")
    if isinstance(delay, int | float) and not isinstance(delay, bool):
        words += f", {delay / 1000:.0f} s" if delay >= 1000 else f", {delay / 1000:.1f} s"
    status = event.get("error_status")
    if isinstance(status, int) and not isinstance(status, bool):
        words += f" (HTTP {status})"
    return words


@dataclass
class ClaudeStreamReader(JsonStreamReader, shapes=SHAPES):
    """Reads one Claude Code iteration's stream, line by line."""

    session_id: str | None = None
    model: str | None = None
    texts: list[str] = field(default_factory=list)
    result: dict[str, Any] | None = None
    """The last ``result`` line."""
    results: list[dict[str, Any]] = field(default_factory=list)
    """Every ``result`` line, in order (several from 2.1.315: one per turn of the session)."""
    rate_limit: dict[str, Any] | None = None
    rate_limit_error: bool = False
    questions: list[str] = field(default_factory=list)
    """Questions the agent asked with Claude Code's ``AskUserQuestion`` tool."""
    final_id: str | None = None
    final_texts: list[str] = field(default_factory=list)
    """Text blocks of the last assistant message (one line per block, sharing its id)."""
    final_calls_tool: bool = False
    """The last assistant message called a tool: it is not the turn's final message."""
    api_error: str | None = None
    """The ``error`` of an ``assistant`` line (``server_error`` …), when one had it."""
    retries: int = 0
    usage: dict[str, Tokens] = field(default_factory=dict)
    """Each API message's usage as streamed (by message id; subagents' too): what it cost
    before its result line says."""
    now: datetime | None = None
    """The time the report is made (aware); ``None``: the clock."""

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
            self.results.append(event)
            return [self.summary_line()]
        return super().event(event)

    def _system(self, event: dict[str, Any]) -> list[str]:
        if event.get("subtype") == "init":
            self.session_id = as_str(event.get("session_id")) or self.session_id
            self.model = as_str(event.get("model")) or self.model
            return [f"session {self.session_id or '?'} · model {self.model or '?'}"]
        if event.get("subtype") == "api_retry":
            self.retries += 1
            return [_retry_line(event)]
        return []

    def _assistant(self, event: dict[str, Any]) -> list[str]:
        if event.get("error") == "rate_limit":
            self.rate_limit_error = True
        elif isinstance(event.get("error"), str):
            self.api_error = event["error"]
        message = event.get("message")
        if isinstance(message, dict) and isinstance(message.get("usage"), dict):
            # Repeated per content block with the same id: the last one counts.
            self.usage[str(message.get("id"))] = Tokens.from_usage(message["usage"])
        if not isinstance(message, dict) or event.get("parent_tool_use_id"):
            return []  # a subagent's message is not the turn's
        message_id = message.get("id")
        if not isinstance(message_id, str) or message_id != self.final_id:
            self.final_id = message_id if isinstance(message_id, str) else None
            self.final_texts = []  # a new message: the final one so far
            self.final_calls_tool = False
        out: list[str] = []
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                text = clean_text(block["text"])
                self.texts.append(text)
                self.final_texts.append(text)
                out.append(text)
            elif block.get("type") == "tool_use":
                self.final_calls_tool = True
                out.append(tool_line(str(block.get("name", "?")), block.get("input")))
                if block.get("name") == "AskUserQuestion":
                    # Headless, nobody answers the question tool: it parks the loop instead.
                    self.questions.extend(clean_text(q) for q in asked(block.get("input")))
        return out

    # --- the report ---------------------------------------------------------------------------

    def tokens(self) -> Tokens:
        """Tokens of the whole iteration: every result's usage (zeros without one)."""
        usages = (result.get("usage") for result in self.results)
        return sum((Tokens.from_usage(u if isinstance(u, dict) else {}) for u in usages), Tokens())

    def turns(self) -> int:
        """Model turns of the whole iteration: every result's ``num_turns``."""
        return sum(as_int(result.get("num_turns")) for result in self.results)

    def cost_usd(self) -> float | None:
        """The session's cost: the highest ``total_cost_usd`` of its results (each says the
        session's total so far), ``None`` when none says one."""
        costs = [as_cost(result.get("total_cost_usd")) for result in self.results]
        known = [cost for cost in costs if cost is not None]
        return max(known) if known else None

    def streamed_cost_usd(self) -> float | None:
        """What the iteration cost so far: the result's cost once it came, else its messages'
        streamed usage at the model's price (``None``: no price known)."""
        cost = self.cost_usd()
        if cost is not None:
            return cost
        if not self.usage:
            return 0.0
        return price_usd(self.model, sum(self.usage.values(), Tokens()).model_dump())

    def resets_at(self) -> str | None:
        """When the usage window that stopped this iteration resets, if known: from the
        rate-limit event, else from a ``usage limit reached|<epoch>`` message. A reset more
        than 31 days ahead is damage: ignored, and said in the report's ``detail``."""
        info = self.rate_limit or {}
        at = epoch_time(info.get("resetsAt"))
        if at is None:
            for text in [str((self.result or {}).get("result") or ""), *self.texts[-3:]]:
                match = _LIMIT_RESET.search(text)
                if match:
                    at = epoch_time(int(match.group(1)))
                    break
        if at is None:
            return None
        stamp = at.strftime("%Y-%m-%dT%H:%M:%SZ")
        if at - (self.now or datetime.now(UTC)) > MAX_RESET_AHEAD:
            said = f"reset {stamp} is over 31 days ahead: ignored"
            if said not in self.damaged:
                self.damaged.append(said)
            return None
        return stamp

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
        kind = as_str(result.get("api_error_type"))
        if self.api_error in _QUOTA_ERRORS or kind in _QUOTA_ERRORS:
            return "quota", False
        if isinstance(status, int):
            return "api_error", status >= 500 or status in (408, 409) or kind in _OUTAGE_ERRORS
        text = str(result.get("result") or "")
        if result.get("is_error") and (
            self.api_error in _OUTAGE_ERRORS or kind in _OUTAGE_ERRORS or _UNREACHABLE.search(text)
        ):
            return "api_error", True  # the API could not be reached: an outage
        return "agent_error", False

    def error_detail(self, outcome: str) -> str | None:
        """The agent's own line for a failed iteration: the error result's text, after its
        structured type (``authentication_error: Invalid API key``); else the damaged stream's
        detail. ``None`` for a good iteration."""
        result = self.result or {}
        if outcome == "ok" or not result.get("is_error"):
            return self.damage_detail(outcome)
        text = clean_text(str(result.get("result") or "")).strip()
        kind = as_str(result.get("api_error_type")) or as_str(self.api_error)
        line = f"{kind}: {text}" if kind and text else text or kind
        return line or self.damage_detail(outcome)

    def stop_reason(self) -> str | None:
        """Why the agent stopped: an error subtype (``error_max_turns``), else the result's own
        ``stop_reason`` (``end_turn``) unless it is an error; never ``success``."""
        result = self.result
        if result is None:
            return "no_result"
        subtype = result.get("subtype")
        if isinstance(subtype, str) and subtype.startswith("error"):
            return clean_text(subtype)
        reason = as_str(result.get("stop_reason"))
        return reason if not result.get("is_error") else None

    def final_text(self) -> str:
        """The final assistant message's text, all its text blocks (the completion rule, as the
        stop-hook reads it; Claude Code's ``result`` holds only the last block), else the
        result text."""
        if self.final_texts and not self.final_calls_tool:
            return "\n".join(self.final_texts)
        result = self.result or {}
        text = as_str(result.get("result"))
        if text:
            return text
        return self.texts[-1] if self.texts else ""

    def report(self) -> StreamReport:
        """What this stream says of the iteration."""
        result = self.result or {}
        outcome, transient = self.outcome()
        return StreamReport(
            outcome=outcome,
            transient=transient,
            stop_reason=self.stop_reason(),
            tokens=self.tokens(),
            cost_usd=self.cost_usd(),
            resets_at=self.resets_at() if outcome == "rate_limited" else None,
            turns=self.turns(),
            session_id=as_str(result.get("session_id")) or self.session_id,
            model=self.model,
            final_text=self.final_text(),
            question="\n".join(self.questions) or None,
            detail=self.error_detail(outcome),
        )

    def summary_line(self) -> str:
        """One line for the result: outcome, turns, tokens, cost."""
        report = self.report()
        t = report.tokens
        parts = [
            f"■ {report.outcome}",
            f"{report.turns} turns",
            f"in {format_tokens(t.input)} out {format_tokens(t.output)}",
        ]
        if t.cache_read or t.cache_write:
            cache_r, cache_w = format_tokens(t.cache_read), format_tokens(t.cache_write)
            parts.append(f"cache r {cache_r} w {cache_w}")
        if report.cost_usd is not None:
            parts.append(f"${report.cost_usd:.4f}")
        return " · ".join(parts)
