"""The common part of every JSON event stream reader (Claude Code, Codex, a new backend's).

:class:`JsonStreamReader` takes an agent's output line by line: blank lines are skipped, a line
that is not a JSON object is shown as text, and each event goes to :meth:`~JsonStreamReader.event`,
which a backend's reader overrides (unknown types are counted, never fatal).

Whatever an agent prints, reading it never raises: an event whose fields do not have the types
the reader's :attr:`~JsonStreamReader.shapes` table names is skipped with one shown warning and
recorded in :attr:`~JsonStreamReader.damaged`; the first such line is the ``detail`` of an
iteration whose stream made no sense (``agent_error``). Numbers and times from a stream are
taken only inside sane bounds (:func:`as_int`, :func:`as_cost`, :func:`epoch_time`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from forgeflare.disk import MAX_COUNT, Tokens

__all__ = [
    "MAX_COUNT",
    "MAX_RESET_AHEAD",
    "NULL",
    "NUMBER",
    "JsonStreamReader",
    "Shape",
    "StreamReport",
    "as_cost",
    "as_int",
    "as_str",
    "clean_text",
    "epoch_time",
    "json_event",
    "shape_problem",
    "tool_line",
]

_TOOL_ARG_KEYS = ("command", "file_path", "path", "pattern", "url", "query", "description")
MAX_RESET_AHEAD = timedelta(days=31)
"""A usage window's reset further ahead is damage: ignored, never clamped (DESIGN)."""
_MAX_COST_USD = 1e6
_MAX_YEAR = 9000
"""Later times are damage (and near datetime's end, arithmetic on them overflows)."""
_SHOWN_CHARS = 200
_KEPT_DAMAGE = 20

Shape = Mapping[str, type | tuple[type, ...]]
"""Field name to the type(s) its value may have when present (:data:`NULL` for null)."""
NULL = type(None)
"""The type of JSON's ``null`` in a :data:`Shape`."""
NUMBER = (int, float)
"""A JSON number in a :data:`Shape`."""

_TYPE_WORDS = {
    bool: "a boolean",
    int: "a number",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "an object",
    NULL: "null",
}


def _word(value: object) -> str:
    return _TYPE_WORDS.get(type(value), type(value).__name__)


def shape_problem(event: Mapping[str, Any], shape: Shape) -> str | None:
    """What in ``event`` does not fit ``shape`` (``'model' is a number``), else ``None``.

    A field that is absent fits; a boolean is never a number.
    """
    for key, allowed in shape.items():
        if key not in event:
            continue
        value = event[key]
        kinds = allowed if isinstance(allowed, tuple) else (allowed,)
        if isinstance(value, bool) and bool not in kinds:
            return f"{key!r} is {_word(value)}"
        if not isinstance(value, kinds):
            return f"{key!r} is {_word(value)}"
    return None


def clean_text(text: str) -> str:
    """``text`` without lone surrogates (a stream's ``\\ud800``): safe to print and to write."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="replace").decode("utf-8")
    return text


def shorten(text: str, width: int = _SHOWN_CHARS) -> str:
    """One line of at most ``width`` characters, clean to print."""
    text = clean_text(" ".join(text.split()))
    return text if len(text) <= width else text[: width - 1] + "…"


def tool_line(name: str, tool_input: object, width: int = 100) -> str:
    """``▸ Bash  pytest -q``: a tool call in one line, its main argument shortened."""
    arg = ""
    if isinstance(tool_input, dict):
        for key in _TOOL_ARG_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                arg = value
                break
        else:
            arg = json.dumps(tool_input, ensure_ascii=False)
    arg = " ".join(arg.split())
    if len(arg) > width:
        arg = arg[: width - 1] + "…"
    return f"▸ {name}  {arg}".rstrip()


def json_event(line: str) -> dict[str, Any] | str | None:
    """One line of a JSON event stream: the event, the stripped text when it is not a JSON
    object (shown as it is), or ``None`` for a blank line."""
    stripped = line.strip()
    if not stripped:
        return None
    try:
        event = json.loads(stripped)
    except (ValueError, RecursionError):
        return stripped
    return event if isinstance(event, dict) else stripped


def as_int(value: object) -> int:
    """A count from a stream's JSON: a whole number from 0 to :data:`MAX_COUNT`, else 0
    (booleans are not counts)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT:
        return value
    return 0


def as_str(value: object) -> str | None:
    """A non-empty string from a stream's JSON (clean to print), else ``None``."""
    return clean_text(value) if isinstance(value, str) and value else None


def as_cost(value: object) -> float | None:
    """A cost in USD from a stream's JSON: a finite number from 0 to a million, else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        cost = float(value)
    except OverflowError:
        return None
    return cost if math.isfinite(cost) and 0 <= cost <= _MAX_COST_USD else None


def epoch_time(epoch: object) -> datetime | None:
    """A UTC time from epoch seconds (milliseconds above 10¹²); ``None`` for anything that is
    no positive number or lies past the year 9000."""
    if isinstance(epoch, bool) or not isinstance(epoch, int | float) or not epoch > 0:
        return None
    try:
        seconds = float(epoch)
        if seconds > 1e12:
            seconds /= 1000
        at = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, ValueError, OSError):
        return None
    return at if at.year <= _MAX_YEAR else None


@dataclass(frozen=True, slots=True)
class StreamReport:
    """What an agent's event stream says of its iteration: a stream reader's ``report()``,
    which the backend turns into the :class:`~forgeflare.supervisor.backends.IterationReport`
    (adding how the process ended, the completion signal and a price when none was streamed)."""

    outcome: str
    """One of the report's outcomes, as the stream shows it."""
    transient: bool = False
    """For ``api_error``: an outage (overloaded, 5xx, connection), not a lasting failure."""
    stop_reason: str | None = None
    tokens: Tokens = field(default_factory=Tokens)
    cost_usd: float | None = None
    """The cost the stream states (``None``: priced from :attr:`model` and :attr:`tokens`)."""
    resets_at: str | None = None
    """When a usage window that stopped the iteration resets (ISO 8601, UTC)."""
    turns: int = 0
    session_id: str | None = None
    model: str | None = None
    final_text: str = ""
    """The agent's final message (the completion signal and a question are read from it)."""
    question: str | None = None
    """A question the agent asked through its own question tool."""
    detail: str | None = None


@dataclass
class JsonStreamReader:
    """The common part of a JSON event stream reader: blank lines, text lines, unknown types,
    damaged events."""

    unknown_lines: int = 0
    not_json_lines: int = 0
    lines: int = 0
    """Lines taken so far (blank ones included): the number a warning names."""
    damaged: list[str] = field(default_factory=list)
    """The first damaged events (at most :data:`_KEPT_DAMAGE`): ``line 3: 'model' is a
    number: {…}``."""
    damaged_count: int = 0
    """Every damaged event, kept or not (a stream of nothing else must not fill the memory)."""
    shapes: ClassVar[Mapping[str, Shape]] = {}
    """Event type to the shape its fields must have: each backend's reader names its own
    (``class Reader(JsonStreamReader, shapes=SHAPES)``)."""

    def __init_subclass__(cls, *, shapes: Mapping[str, Shape] | None = None, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if shapes is not None:
            cls.shapes = shapes

    def feed(self, line: str) -> list[str]:
        """Take one line of output; return the lines to show for it (maybe none)."""
        self.lines += 1
        event = json_event(line)
        if event is None:
            return []
        if isinstance(event, str):
            self.not_json_lines += 1
            return [clean_text(event)]
        kind = event.get("type")
        shape = self.shapes.get(kind) if isinstance(kind, str) else None
        problem = shape_problem(event, shape) if shape is not None else None
        if problem is None:
            try:
                return [clean_text(text) for text in self.event(event)]
            except Exception as exc:
                problem = f"unreadable ({type(exc).__name__})"
        entry = f"line {self.lines}: {problem}: {shorten(line)}"
        self.damaged_count += 1
        if len(self.damaged) < _KEPT_DAMAGE:
            self.damaged.append(entry)
        what = f"{shorten(kind, 40)} event" if isinstance(kind, str) else "event"
        return [f"warning: ignored a damaged {what}, {entry}"]

    def event(self, event: dict[str, Any]) -> list[str]:
        """One JSON event; the lines to show for it."""
        self.unknown_lines += 1
        return []

    def damage_detail(self, outcome: str) -> str | None:
        """The report's ``detail`` for damaged events: for an ``agent_error`` the line that
        broke the stream, else how many were ignored; ``None`` without any."""
        if not self.damaged:
            return None
        if outcome == "agent_error":
            return f"the agent's stream made no sense at {self.damaged[0]}"
        more = max(self.damaged_count, len(self.damaged))
        lines = "line" if more == 1 else "lines"
        return f"ignored {more} damaged stream {lines}, first {self.damaged[0]}"
