"""Codex's ``codex exec --json`` read into display lines and one report.

Events (codex-cli 0.169, recorded in ``tests/fixtures/codex``): ``thread.started``
(``thread_id``), ``turn.started``, ``item.started`` / ``item.updated`` / ``item.completed`` with
an ``item`` whose type is ``agent_message``, ``reasoning``, ``command_execution`` (command,
exit_code, aggregated_output), ``file_change``, ``mcp_tool_call``, ``web_search``, ``todo_list``
or ``error`` (a warning: the turn goes on); ``turn.completed`` with ``usage``
(``input_tokens`` *including* ``cached_input_tokens`` and ``cache_write_input_tokens``,
``output_tokens``, ``reasoning_output_tokens``); ``turn.failed`` with the turn's final
failure; and top-level ``error`` events, which are mostly Codex's own retry notices
(``Reconnecting... 2/5 (…)``) and, once, the final failure again just before ``turn.failed``.

The outcome comes from the final failure, never from the first error line. Codex's messages:

- ``You’ve hit your usage limit. … try again at 8:30 PM.`` (or ``… at Jan 4th, 2027 9:25 PM.``):
  ``rate_limited``; the time is local to the machine (today, or tomorrow when it has passed);
- ``Quota exceeded. Check your plan and billing details.`` (``insufficient_quota``): ``quota``;
- ``We’re currently experiencing high demand…`` (HTTP 5xx), ``Selected model is at capacity…``
  (503 ``server_is_overloaded``), ``stream disconnected…``: ``api_error``, transient;
- ``exceeded retry limit, last status: 429 Too Many Requests`` (a request-rate limit, not a
  usage window): ``api_error``, transient: waited out like an outage.

Codex's stream names no model and no cost: the model comes from its argv (``--model``/``-m``,
``-c model=…``), else ``model`` in ``$CODEX_HOME/config.toml``; it is priced with provider
``openai``. Codex's session file (``$CODEX_HOME/sessions/…/rollout-*-<thread id>.jsonl``) holds
the usage window's structured reset time, preferred to the message's when present.
Like the Claude Code reader, the reading is pure and never fails on a line it does not
understand (an event whose fields have other types than :data:`SHAPES` names is skipped with a
warning); a reset more than 31 days ahead is ignored; :meth:`CodexStreamReader.report` alone
reads those two files.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from forgeflare._pricing import price_usd
from forgeflare._units import format_tokens
from forgeflare.disk import Tokens
from forgeflare.supervisor.backends._apierror import classify_api_error
from forgeflare.supervisor.backends._stream import (
    MAX_COUNT,
    MAX_RESET_AHEAD,
    NULL,
    JsonStreamReader,
    Shape,
    StreamReport,
    as_int,
    as_str,
    clean_text,
    epoch_time,
    tool_line,
)

__all__ = [
    "SHAPES",
    "CodexStreamReader",
    "classify_failure",
    "codex_home",
    "codex_model",
    "reset_from_message",
    "reset_from_session",
]

_RETRY = re.compile(r"^Reconnecting\.\.\.\s*(\d+)/(\d+)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_TRY_AGAIN = re.compile(
    r"try again at\s+(?:(?P<mon>[A-Z][a-z]{2,8})\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,\s*"
    r"(?P<year>\d{4})\s+)?(?P<h>\d{1,2}):(?P<m>\d{2})\s*(?P<ampm>[AP]M)",
    re.IGNORECASE,
)


_ITEM = {"item": dict}
SHAPES: dict[str, Shape] = {
    "thread.started": {"thread_id": str},
    "turn.completed": {"usage": (dict, NULL)},
    "turn.failed": {"error": (dict, str, NULL)},
    "error": {"message": (str, NULL)},
    "item.started": _ITEM,
    "item.updated": _ITEM,
    "item.completed": _ITEM,
}
"""The types of the fields Codex's events carry that the reader uses."""


def classify_failure(message: str) -> tuple[str, bool]:
    """``(outcome, transient)`` for Codex's final failure message: the agents' one table
    (:func:`~forgeflare.supervisor.backends._apierror.classify_api_error`, Codex gives no
    status)."""
    found = classify_api_error(None, message)
    return found.outcome, found.transient


def reset_from_message(message: str, now: datetime) -> datetime | None:
    """When Codex says to ``try again at …``, in ``now``'s time zone (the machine's local one).

    A time alone is today, or tomorrow when it has passed; a date is taken as written.
    """
    match = _TRY_AGAIN.search(message.replace("\u2019", "'"))
    if match is None:
        return None
    hour = int(match["h"]) % 12 + (12 if match["ampm"].upper() == "PM" else 0)
    minute = int(match["m"])
    if hour > 23 or minute > 59:
        return None
    if match["mon"]:
        try:
            day = datetime.strptime(
                f"{match['mon'][:3]} {match['day']} {match['year']}", "%b %d %Y"
            ).date()
        except ValueError:
            return None
        return datetime(day.year, day.month, day.day, hour, minute, tzinfo=now.tzinfo)
    at = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    return at if at > now else at + timedelta(days=1)


def reset_from_session(lines: Iterable[str]) -> datetime | None:
    """The reset of the usage window that is full (``used_percent`` ≥ 100) in a Codex session
    file's last ``token_count`` event that names rate limits, else ``None``."""
    found: datetime | None = None
    for line in lines:
        if '"rate_limits"' not in line:
            continue
        try:
            payload = json.loads(line).get("payload")
            limits = payload.get("rate_limits") if isinstance(payload, dict) else None
        except (ValueError, AttributeError):
            continue
        if not isinstance(limits, dict):
            continue
        resets = [
            as_int(window.get("resets_at"))
            for window in (limits.get("primary"), limits.get("secondary"))
            if isinstance(window, dict)
            and isinstance(window.get("used_percent"), int | float)
            and window["used_percent"] >= 100
        ]
        found = (epoch_time(max(resets)) or found) if any(resets) else found
    return found


def codex_home(env: Mapping[str, str]) -> Path:
    """``$CODEX_HOME``, else ``~/.codex`` (Codex's own default)."""
    if env.get("CODEX_HOME"):
        return Path(env["CODEX_HOME"])
    return Path(env.get("HOME") or Path.home()) / ".codex"


def _argv_model(argv: Sequence[str]) -> str | None:
    model: str | None = None
    for i, arg in enumerate(argv):
        following = argv[i + 1] if i + 1 < len(argv) else ""
        if arg in ("--model", "-m"):
            model = following or model
        elif arg.startswith("--model="):
            model = arg.partition("=")[2] or model
        elif arg in ("-c", "--config") and following.startswith("model="):
            value = following.partition("=")[2].strip()
            model = value.strip("\"'") or model
    return model


def codex_model(argv: Sequence[str], home: Path) -> str | None:
    """The model Codex runs with: from its argv, else ``model`` in ``home/config.toml``."""
    model = _argv_model(argv)
    if model:
        return model
    try:
        config = tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    value = config.get("model")
    return value if isinstance(value, str) and value else None


def _session_file(home: Path, thread_id: str) -> Path | None:
    if not re.fullmatch(r"[0-9A-Za-z-]{8,64}", thread_id):
        return None
    try:
        found = sorted((home / "sessions").glob(f"*/*/*/rollout-*-{thread_id}.jsonl"))
    except OSError:
        return None
    return found[-1] if found else None


def _too_far(reset: datetime, now: datetime) -> bool:
    try:
        return reset - now > MAX_RESET_AHEAD
    except OverflowError:  # Dec 31st, 9999 11:59 PM at UTC-5 is past datetime's end in UTC
        return True


def _capped(total: Tokens, more: Tokens) -> Tokens:
    """``total + more``, each kind at most :data:`MAX_COUNT` (a damaged stream's counts)."""
    both = {k: min(MAX_COUNT, v + getattr(more, k)) for k, v in total.model_dump().items()}
    return Tokens(**both)


def _turn_tokens(usage: Mapping[str, Any]) -> Tokens:
    """A ``turn.completed`` usage: Codex counts cache reads and writes inside ``input_tokens``,
    so they are subtracted. A count that is not a whole number of tokens counts 0."""
    read = max(0, as_int(usage.get("cached_input_tokens")))
    write = max(0, as_int(usage.get("cache_write_input_tokens")))
    return Tokens(
        input=max(0, as_int(usage.get("input_tokens")) - read - write),
        output=max(0, as_int(usage.get("output_tokens"))),
        cache_read=read,
        cache_write=write,
    )


def _retry_line(match: re.Match[str]) -> str:
    why = f" ({match[3]})" if match[3] else ""
    return f"retrying the API: attempt {match[1]} of {match[2]}{why}"


@dataclass
class CodexStreamReader(JsonStreamReader, shapes=SHAPES):
    """Reads one Codex iteration's JSON event stream, line by line."""

    thread_id: str | None = None
    model: str | None = None
    messages: list[str] = field(default_factory=list)
    turns: int = 0
    completed_turns: int = 0
    spent: Tokens = field(default_factory=Tokens)
    """Tokens of the completed turns (``input`` without the cache reads and writes)."""
    retries: int = 0
    warnings: list[str] = field(default_factory=list)
    failure: str | None = None
    """The turn's final failure (``turn.failed``, else the last error that was no retry)."""
    failed: bool = False
    home: Path | None = None
    """``$CODEX_HOME`` of the run, when known: the session file and the configured model."""
    argv: tuple[str, ...] = ()
    """The argv Codex ran with (its ``--model``)."""
    now: datetime | None = None
    """The time the report is made (local, aware); ``None``: the clock."""

    def setup(self, *, argv: Sequence[str], env: Mapping[str, str]) -> None:
        """What Codex runs with: its argv and environment (for the model and CODEX_HOME)."""
        self.argv = tuple(argv)
        self.home = codex_home(env)

    def event(self, event: dict[str, Any]) -> list[str]:
        kind = event.get("type")
        if kind == "thread.started":
            self.thread_id = as_str(event.get("thread_id")) or self.thread_id
            return [f"thread {self.thread_id or '?'}"]
        if kind == "turn.started":
            self.turns += 1
            return []
        if kind == "turn.completed":
            self.completed_turns += 1
            raw = event.get("usage")
            usage: dict[str, Any] = raw if isinstance(raw, dict) else {}
            self.spent = _capped(self.spent, _turn_tokens(usage))
            return [self.summary_line()]
        if kind == "turn.failed":
            self.failed = True
            error = event.get("error")
            found = error.get("message") if isinstance(error, dict) else error
            message = clean_text(found) if isinstance(found, str) else ""
            shown = self.failure
            self.failure = message or shown or "turn failed"
            # Codex writes the failure as an ``error`` event first: one line per failure.
            return [] if self.failure == shown else [f"failed: {self.failure}"]
        if kind == "error":
            message = clean_text(str(event.get("message") or "error"))
            retry = _RETRY.match(message)
            if retry:
                self.retries += 1
                return [_retry_line(retry)]
            self.failure = message
            return [f"failed: {message}"]
        if kind in ("item.started", "item.updated", "item.completed"):
            item = event.get("item")
            return self._item(kind, item) if isinstance(item, dict) else []
        return super().event(event)

    def _item(self, kind: str, item: dict[str, Any]) -> list[str]:
        itype = item.get("type")
        if itype == "command_execution" and kind == "item.started":
            return [tool_line("Bash", {"command": str(item.get("command", ""))})]
        if kind != "item.completed":
            return []
        if itype == "agent_message" and isinstance(item.get("text"), str):
            self.messages.append(clean_text(item["text"]))
            return [self.messages[-1]]
        if itype == "file_change":
            changes = item.get("changes")
            paths = (
                [str(c.get("path", "?")) for c in changes if isinstance(c, dict)]
                if isinstance(changes, list)
                else []
            )
            return [tool_line("Edit", {"path": ", ".join(paths)})]
        if itype == "mcp_tool_call":
            return [tool_line(f"{item.get('server', 'mcp')}.{item.get('tool', '?')}", {})]
        if itype == "web_search":
            return [tool_line("WebSearch", {"query": str(item.get("query", ""))})]
        if itype == "error":  # an item error is a warning: the turn goes on
            self.warnings.append(clean_text(str(item.get("message", "?"))))
            return [f"warning: {self.warnings[-1]}"]
        return []

    def tokens(self) -> Tokens:
        """Tokens by kind so far (``input`` without the cache reads and writes)."""
        return self.spent

    def outcome(self) -> tuple[str, bool]:
        """``(outcome, transient)`` from the turn's final failure; ``ok`` when it completed."""
        if self.failed or (self.failure is not None and not self.completed_turns):
            return classify_failure(self.failure or "")
        if self.completed_turns:
            return "ok", False
        return "agent_error", False

    def stop_reason(self) -> str | None:
        """What ended the turn, as seen: ``turn.failed``, ``turn.completed`` or nothing."""
        if self.failed:
            return "turn.failed"
        return "turn.completed" if self.completed_turns else None

    def resets_at(self) -> str | None:
        """The usage window's reset: the session file's, else the message's (local time)."""
        reset: datetime | None = None
        if self.home is not None and self.thread_id:
            path = _session_file(self.home, self.thread_id)
            if path is not None:
                try:
                    with path.open(encoding="utf-8", errors="replace") as lines:
                        reset = reset_from_session(lines)
                except OSError:
                    reset = None
        now = self.now or datetime.now().astimezone()
        if reset is None and self.failure:
            reset = reset_from_message(self.failure, now)
        if reset is not None and _too_far(reset, now):
            said = f"reset {reset.isoformat()} is over 31 days ahead: ignored"
            if said not in self.damaged:
                self.damaged.append(said)
            reset = None  # a damaged or far-future reset: waiting on it would end the run
        return reset.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if reset else None

    def streamed_cost_usd(self) -> float | None:
        """What the iteration cost so far: its completed turns at the model's price (Codex
        streams tokens only when a turn completes)."""
        tokens = self.tokens().model_dump()
        return price_usd(self.model, tokens, provider="openai") if any(tokens.values()) else 0.0

    def report(self) -> StreamReport:
        """What this stream says of the iteration; the cost from the model's price."""
        outcome, transient = self.outcome()
        if self.model is None and (self.argv or self.home is not None):
            self.model = codex_model(self.argv, self.home or Path())
        tokens = self.tokens()
        return StreamReport(
            outcome=outcome,
            transient=transient,
            stop_reason=self.stop_reason(),
            tokens=tokens,
            cost_usd=price_usd(self.model, tokens.model_dump(), provider="openai"),
            resets_at=self.resets_at() if outcome == "rate_limited" else None,
            turns=self.completed_turns,
            session_id=self.thread_id,
            model=self.model,
            final_text=self.messages[-1] if self.messages else "",
            detail=self.damage_detail(outcome) or self.failure_detail(outcome),
        )

    def failure_detail(self, outcome: str) -> str | None:
        """The failure's message for an iteration that did not end ``ok`` (its first line)."""
        if outcome == "ok" or not self.failure:
            return None
        return clean_text(self.failure.strip().splitlines()[0])[:300] or None

    def summary_line(self) -> str:
        """One line per completed turn: tokens so far."""
        t = self.tokens()
        return (
            f"■ turn {self.completed_turns} · in {format_tokens(t.input)} "
            f"out {format_tokens(t.output)} · cache r {format_tokens(t.cache_read)} "
            f"w {format_tokens(t.cache_write)}"
        )
