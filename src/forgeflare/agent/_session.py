"""Session capture: the transcript of one agent session, in Entire's JSONL format.

Files, under ``.entire/metadata/{session_id}/`` in the project directory:

- ``full.jsonl``: one line per conversation turn, appended (open, write, close) as the turn
  happens, so an agent killed at any moment leaves a valid transcript up to its last turn.
  One caveat no append-only file can avoid: a SIGKILL that lands *inside* the write of a
  large line (the kernel copies page by page and gives up between pages on a fatal signal)
  leaves that last line cut short, without its newline. Every earlier line is intact;
  :func:`read_transcript` returns the complete lines and drops such a tail;
- ``prompt.txt``: the session's first prompt;
- ``context.md``: a metadata header and the key actions, one per tool call, written at exit.

Each line: ``type`` (user/assistant), ``sessionId``, ``uuid``, ``parentUuid`` (the previous
line's uuid, ``null`` first), ``timestamp`` (UTC, ISO 8601 with ``Z``), ``cwd``, ``version``,
``message`` (the Message as JSON; assistant turns may carry ``message.usage``).

Errors::

    ForgeflareError
    └── SessionWriteError   a transcript file could not be written
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from forgeflare import __version__
from forgeflare._errors import ForgeflareError
from forgeflare.agent._messages import Message, ToolUseBlock, Usage
from forgeflare.disk import append_line, atomic_write_text

__all__ = [
    "SessionWriteError",
    "SessionWriter",
    "key_actions",
    "new_session_id",
    "read_transcript",
    "render_context",
    "transcript_line",
    "transcript_timestamp",
]

TRANSCRIPT_NAME = "full.jsonl"
_ACTION_WIDTH = 200  # characters of a key action's argument kept in context.md


class SessionWriteError(ForgeflareError):
    """A session file could not be written (disk full, permissions); names the file."""


def new_session_id(now: datetime | None = None) -> str:
    """A fresh session id, ``{YYYY-MM-DD}-{uuid4}``; the date is UTC unless ``now`` is naive."""
    moment = now or datetime.now(UTC)
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return f"{moment:%Y-%m-%d}-{uuid.uuid4()}"


def transcript_timestamp(now: datetime | None = None) -> str:
    """``now`` (default: the current time) as UTC ISO 8601 with milliseconds and ``Z``."""
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def transcript_line(
    message: Message,
    *,
    session_id: str,
    line_uuid: str,
    parent_uuid: str | None,
    timestamp: str,
    cwd: str,
    version: str,
    usage: Usage | None = None,
) -> dict[str, Any]:
    """One JSONL record (pure: every varying value is a parameter)."""
    body = message.model_dump(mode="json")
    if usage is not None:
        body["usage"] = usage.model_dump(mode="json")
    return {
        "type": message.role,
        "sessionId": session_id,
        "uuid": line_uuid,
        "parentUuid": parent_uuid,
        "timestamp": timestamp,
        "cwd": cwd,
        "version": version,
        "message": body,
    }


# Characters str.splitlines() breaks on that JSON leaves raw (it escapes only C0 controls).
_LINE_BREAKERS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _json_line(record: dict[str, Any]) -> str:
    """Compact JSON on one physical line for every reader, ``splitlines()`` included."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).translate(_LINE_BREAKERS)


def key_actions(messages: Sequence[Message]) -> list[str]:
    """``- **{tool}**: {first argument}`` for every tool call, in order."""
    actions = []
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                actions.append(f"- **{block.name}**: {_first_arg(block.input)}")
    return actions


def _first_arg(data: dict[str, Any] | None) -> str:
    if not data:
        return "(no input)"
    value = next(iter(data.values()))
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    # One line per action: a multi-line command would break the Markdown list.
    lines = text.strip().splitlines() or [""]
    first = lines[0]
    if len(first) > _ACTION_WIDTH:
        first = first[:_ACTION_WIDTH] + " …"
    elif len(lines) > 1:
        first += " …"
    return first or "(empty)"


def render_context(
    *,
    session_id: str,
    model: str,
    started: str,
    ended: str,
    exit_reason: str | None,
    cwd: str,
    version: str,
    messages: Sequence[Message],
) -> str:
    """The text of context.md (pure)."""
    actions = key_actions(messages)
    lines = [
        f"# Session {session_id}",
        "",
        f"- **Session ID**: {session_id}",
        f"- **Model**: {model}",
        f"- **Started**: {started}",
        f"- **Ended**: {ended}",
        f"- **Exit reason**: {exit_reason or 'none'}",
        f"- **Working directory**: {cwd}",
        f"- **forgeflare**: {version}",
        f"- **Messages**: {len(messages)}",
        f"- **Tool calls**: {len(actions)}",
        "",
        "## Key Actions",
        "",
        *(actions or ["(no tool calls)"]),
        "",
    ]
    return "\n".join(lines)


def read_transcript(path: Path) -> list[dict[str, Any]]:
    """The records of a transcript, in order; a torn last line (no newline) is left out.

    Raises ``json.JSONDecodeError`` for a damaged *complete* line: that is not a kill's doing.
    """
    text = path.read_text(encoding="utf-8", errors="replace")
    complete = text[: text.rfind("\n") + 1]
    return [json.loads(line) for line in complete.split("\n") if line]


class SessionWriter:
    """Writes one session's files under ``{project_dir}/.entire/metadata/{session_id}/``.

    The directory is created on the first write; nothing else under ``.entire/`` is touched.
    Thread-safe: lines are appended under a lock, so the parentUuid chain stays linear.
    """

    def __init__(self, project_dir: Path, *, session_id: str | None = None) -> None:
        self.session_id: str = session_id or new_session_id()
        self.directory: Path = project_dir / ".entire" / "metadata" / self.session_id
        self.transcript: Path = self.directory / TRANSCRIPT_NAME
        self._cwd = os.path.abspath(project_dir)
        self._started = transcript_timestamp()
        self._parent: str | None = None
        self._prompt_written = False
        self._lock = threading.Lock()

    def append(self, message: Message, *, usage: Usage | None = None) -> None:
        """Append ``message`` as one JSONL line, written through before this returns."""
        with self._lock:
            line_uuid = str(uuid.uuid4())
            record = transcript_line(
                message,
                session_id=self.session_id,
                line_uuid=line_uuid,
                parent_uuid=self._parent,
                timestamp=transcript_timestamp(),
                cwd=self._cwd,
                version=__version__,
                usage=usage,
            )
            self._append_line(_json_line(record) + "\n")
            self._parent = line_uuid

    def write_prompt(self, text: str) -> None:
        """Write prompt.txt. Only the first call writes: the file holds the first prompt."""
        with self._lock:
            if self._prompt_written:
                return
            self._write_file("prompt.txt", text)
            self._prompt_written = True

    def write_context(
        self, *, model: str, exit_reason: str | None, messages: Sequence[Message]
    ) -> None:
        """Write context.md: metadata header and key actions (replaces an earlier one)."""
        text = render_context(
            session_id=self.session_id,
            model=model,
            started=self._started,
            ended=transcript_timestamp(),
            exit_reason=exit_reason,
            cwd=self._cwd,
            version=__version__,
            messages=messages,
        )
        with self._lock:
            self._write_file("context.md", text)

    def _append_line(self, line: str) -> None:
        try:
            append_line(self.transcript, line)
        except OSError as exc:
            raise SessionWriteError(
                f"cannot append to session transcript {self.transcript}: {exc.strerror or exc}"
            ) from exc

    def _write_file(self, name: str, text: str) -> None:
        path = self.directory / name
        try:
            atomic_write_text(path, text)
        except OSError as exc:
            raise SessionWriteError(f"cannot write {path}: {exc.strerror or exc}") from exc
