"""Where loop state lives, how it is parsed, and how it is changed safely.

Two formats, parsed and rendered by pure functions:

* ``.forgeflare/loop-state.json``: the spec's ``loop:current`` message, e.g.
  ``{"schema": 1, "event": "STATE", "run_id": "…", "updated_at": "2026-01-01T10:00:00Z",
  "stack": [{"mode": "loop", "iter": 1, "max": 10, "prompt": "…"}]}``.
* ``.claude/idle-loop.local.md``: the markdown fallback of existing loops, a front matter of
  ``active``, ``mode``, ``iteration``, ``max_iterations`` (optionally ``updated_at``; without it
  the file's modification time is the last update; and ``session_id``; while the loop is
  parked on a question, ``question`` and ``answer`` as JSON strings) and a body that is the
  original prompt. It is updated in place: only the ``iteration`` (and ``updated_at``) lines
  change, and a ``session_id`` line is added when the first Stop claims the loop.

The JSON file wins when both exist. Every read-modify-write happens under ``fcntl.flock`` on
a lock file beside the state and ends in an atomic replace, so concurrent hooks lose nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple

from forgeflare._clock import utc_timestamp
from forgeflare._fsutil import atomic_write_text
from forgeflare._readfile import read_limited
from forgeflare.stophook._claims import ClaimNote, claim_from_json, claim_to_json
from forgeflare.stophook._errors import StateLockTimeout
from forgeflare.stophook._machine import (
    Corrupt,
    Event,
    Frame,
    LoopRecord,
    StoredState,
)
from forgeflare.stophook._signals import Mode

__all__ = [
    "JSON_STATE_RELPATH",
    "LOCK_TIMEOUT_S",
    "MARKDOWN_STATE_RELPATH",
    "SCHEMA_VERSION",
    "MarkdownLoop",
    "StateSession",
    "any_state",
    "open_json_state",
    "open_state",
    "parse_json_state",
    "parse_markdown_state",
    "parse_timestamp",
    "render_json_state",
    "render_markdown_state",
    "state_lock",
    "state_paths",
]

JSON_STATE_RELPATH = Path(".forgeflare") / "loop-state.json"
MARKDOWN_STATE_RELPATH = Path(".claude") / "idle-loop.local.md"
SCHEMA_VERSION = 1
LOCK_TIMEOUT_S = 10.0
"""How long a hook waits for the state lock before failing open (Claude Code waits for a hook
up to its timeout, minutes; a stuck lock holder must not make every stop hang that long)."""

Backend = Literal["json", "markdown"]


# --- timestamps -------------------------------------------------------------------------------


def parse_timestamp(value: object) -> datetime | None:
    """An ISO 8601 instant (``Z`` or ``+00:00``; naive means UTC), or ``None`` if it is not one."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith(("z", "Z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def _count(value: object) -> int | None:
    """A non-negative count from an int or a decimal string (what jq and bash accepted)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.strip().isdecimal() and value.strip().isascii():
        return int(value.strip())
    return None


def _frame(raw: dict[str, Any], where: str, *, mode_default: str | None = None) -> Frame | Corrupt:
    mode_raw = raw.get("mode", mode_default)
    try:
        mode = Mode(str(mode_raw))
    except ValueError:
        return Corrupt(f"{where}: unknown mode {mode_raw!r}")
    iter_key, max_key = ("iter", "max") if mode_default is None else ("iteration", "max_iterations")
    if iter_key not in raw or max_key not in raw:
        return Corrupt(f"{where}: missing {iter_key!r} or {max_key!r}")
    iteration, cap = _count(raw[iter_key]), _count(raw[max_key])
    if iteration is None:
        return Corrupt(f"{where}: {iter_key} {raw[iter_key]!r} is not a non-negative integer")
    if cap is None or cap < 1:
        return Corrupt(f"{where}: {max_key} {raw[max_key]!r} is not a positive integer")
    prompt = raw.get("prompt", "")
    if prompt is None:
        prompt = ""
    if not isinstance(prompt, str):
        return Corrupt(f"{where}: prompt is not a string")
    session_id = raw.get("session_id") or ""
    if not isinstance(session_id, str):
        return Corrupt(f"{where}: session_id is not a string")
    judged = raw.get("judged") or raw.get("judged_message") or ""
    if not isinstance(judged, str):
        return Corrupt(f"{where}: judged is not a string")
    gate, failures = raw.get("gate") or "", raw.get("failures") or ""
    if not isinstance(gate, str) or not isinstance(failures, str):
        return Corrupt(f"{where}: gate or failures is not a string")
    stall_after, stalled = _count(raw.get("stall_after", 0)), _count(raw.get("stalled", 0))
    if stall_after is None or stalled is None:
        return Corrupt(f"{where}: stall_after or stalled is not a non-negative integer")
    evidence = _evidence_fields(raw, where)
    if isinstance(evidence, Corrupt):
        return evidence
    reviewer, base, claims = evidence
    question, answer = raw.get("question") or "", raw.get("answer") or ""
    if not isinstance(question, str) or not isinstance(answer, str):
        return Corrupt(f"{where}: question or answer is not a string")
    return Frame(
        mode=mode,
        iter=iteration,
        max=cap,
        prompt=prompt,
        session_id=session_id,
        judged=judged,
        gate=gate,
        stall_after=stall_after,
        failures=failures,
        stalled=stalled,
        reviewer=reviewer,
        base=base,
        claims=claims,
        question=question,
        answer=answer,
    )


def _evidence_fields(
    raw: dict[str, Any], where: str
) -> tuple[str, str, tuple[ClaimNote, ...]] | Corrupt:
    """A frame's reviewer, start commit and refused claims (absent: none)."""
    reviewer, base = raw.get("reviewer") or "", raw.get("base") or ""
    if not isinstance(reviewer, str) or not isinstance(base, str):
        return Corrupt(f"{where}: reviewer or base is not a string")
    claims_raw = raw.get("claims") or []
    if not isinstance(claims_raw, list):
        return Corrupt(f"{where}: claims is not a list")
    claims: list[ClaimNote] = []
    for index, item in enumerate(claims_raw):
        note = claim_from_json(item)
        if isinstance(note, str):
            return Corrupt(f"{where}: claims[{index}]: {note}")
        claims.append(note)
    return reviewer, base, tuple(claims)


# --- JSON -------------------------------------------------------------------------------------


def parse_json_state(text: str) -> LoopRecord | Corrupt:
    """The record in ``text``; anything invalid (JSON, fields, counts, time) is :class:`Corrupt`."""
    try:
        raw = json.loads(text)
    except ValueError as exc:
        return Corrupt(f"invalid JSON: {exc}")
    if not isinstance(raw, dict):
        return Corrupt("not a JSON object")
    if raw.get("schema") != SCHEMA_VERSION:
        return Corrupt(f"schema {raw.get('schema')!r} is not {SCHEMA_VERSION}")
    try:
        event = Event(str(raw.get("event")))
    except ValueError:
        return Corrupt(f"unknown event {raw.get('event')!r}")
    run_id = raw.get("run_id") or ""
    if not isinstance(run_id, str):
        return Corrupt("run_id is not a string")
    updated_at = parse_timestamp(raw.get("updated_at"))
    if updated_at is None:
        return Corrupt(f"updated_at {raw.get('updated_at')!r} is not an ISO 8601 time")
    stack_raw = raw.get("stack")
    if not isinstance(stack_raw, list):
        return Corrupt("stack is missing or not a list")
    frames: list[Frame] = []
    for index, item in enumerate(stack_raw):
        if not isinstance(item, dict):
            return Corrupt(f"stack[{index}] is not an object")
        frame = _frame(item, f"stack[{index}]")
        if isinstance(frame, Corrupt):
            return frame
        frames.append(frame)
    return LoopRecord(event=event, run_id=run_id, updated_at=updated_at, stack=tuple(frames))


def _render_frame(frame: Frame) -> dict[str, object]:
    doc: dict[str, object] = {
        "mode": str(frame.mode),
        "iter": frame.iter,
        "max": frame.max,
        "prompt": frame.prompt,
    }
    if frame.session_id:  # absent until the first Stop: files stay as they were before
        doc["session_id"] = frame.session_id
    if frame.judged:
        doc["judged"] = frame.judged
    # Absent when unset: files without a gate stay as they were before.
    extra = {
        "gate": frame.gate,
        "stall_after": frame.stall_after,
        "failures": frame.failures,
        "stalled": frame.stalled,
        "reviewer": frame.reviewer,
        "base": frame.base,
        "claims": [claim_to_json(note) for note in frame.claims],
    }
    doc.update({key: value for key, value in extra.items() if value})
    doc.update(_parked_fields(frame))
    return doc


def _parked_fields(frame: Frame) -> dict[str, str]:
    """A parked frame's question (and answer, once given); ``status`` says which, for readers
    of the file (it is derived: the parser goes by ``question`` and ``answer``)."""
    if not frame.question:
        return {}
    if not frame.answer:
        return {"status": "blocked", "question": frame.question}
    return {"status": "answered", "question": frame.question, "answer": frame.answer}


def render_json_state(record: LoopRecord) -> str:
    """The file text for ``record`` (stable key order, one trailing newline)."""
    doc = {
        "schema": SCHEMA_VERSION,
        "event": str(record.event),
        "run_id": record.run_id,
        "updated_at": utc_timestamp(record.updated_at),
        "stack": [_render_frame(f) for f in record.stack],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


# --- markdown fallback ------------------------------------------------------------------------

_FRONT_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:[ \t]*(.*?)[ \t]*$")


class MarkdownLoop(NamedTuple):
    """The markdown file split into front-matter lines, parsed values, and the body."""

    lines: tuple[str, ...]
    values: dict[str, str]
    body: str


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    if " #" in value:  # a trailing YAML comment
        value = value.split(" #", 1)[0].rstrip()
    return value


def _split_markdown(text: str) -> MarkdownLoop | Corrupt:
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return Corrupt("no front matter (the file must start with a '---' line)")
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            break
    else:
        return Corrupt("front matter is not closed by a '---' line")
    values: dict[str, str] = {}
    for line in lines[1:end]:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _FRONT_LINE.match(line.rstrip("\r\n"))
        if match is None:
            return Corrupt(f"front matter line {line.strip()!r} is not 'key: value'")
        values[match.group(1)] = _unquote(match.group(2))
    body = "".join(lines[end + 1 :])
    return MarkdownLoop(lines=tuple(lines[: end + 1]), values=values, body=body)


def parse_markdown_state(text: str, mtime: datetime) -> LoopRecord | Corrupt:
    """The loop in the markdown fallback; ``mtime`` stands in for a missing ``updated_at``."""
    doc = _split_markdown(text)
    if isinstance(doc, Corrupt):
        return doc
    active_raw = doc.values.get("active", "true").lower()
    if active_raw not in ("true", "false", "yes", "no"):
        return Corrupt(f"active {active_raw!r} is not true or false")
    updated_at = mtime
    if "updated_at" in doc.values:
        parsed = parse_timestamp(doc.values["updated_at"])
        if parsed is None:
            return Corrupt(f"updated_at {doc.values['updated_at']!r} is not an ISO 8601 time")
        updated_at = parsed
    raw: dict[str, Any] = dict(doc.values)
    raw["prompt"] = doc.body.strip()
    parked = _markdown_parked(doc)
    if isinstance(parked, Corrupt):
        return parked
    raw.update(parked)
    frame = _frame(raw, "front matter", mode_default="loop")
    if isinstance(frame, Corrupt):
        return frame
    event = Event.STATE if active_raw in ("true", "yes") else Event.DONE
    return LoopRecord(event=event, run_id="", updated_at=updated_at, stack=(frame,))


_PARKED_KEYS = ("question", "answer")
"""Front-matter keys of a parked loop: JSON strings (a question has lines and quotes)."""


def _markdown_parked(doc: MarkdownLoop) -> dict[str, str] | Corrupt:
    """``question`` and ``answer`` from their front-matter lines, JSON-decoded."""
    found: dict[str, str] = {}
    for line in doc.lines:
        match = _FRONT_LINE.match(line.rstrip("\r\n"))
        if match is None or match.group(1) not in _PARKED_KEYS:
            continue
        try:
            value = json.loads(match.group(2))
        except ValueError:
            value = None
        if not isinstance(value, str):
            return Corrupt(f"front matter: {match.group(1)} is not a JSON string")
        found[match.group(1)] = value
    return found


def render_markdown_state(text: str, record: LoopRecord) -> str:
    """``text`` with its ``iteration`` (and ``updated_at``, if present) set from ``record``.

    Everything else (other keys, comments, quoting of untouched lines, the body) is kept.
    """
    doc = _split_markdown(text)
    if isinstance(doc, Corrupt) or len(record.stack) != 1:
        raise ValueError("render_markdown_state needs a parseable file and a one-frame record")
    new_values = {
        "iteration": str(record.stack[0].iter),
        "updated_at": utc_timestamp(record.updated_at),
    }
    session_id = record.stack[0].session_id
    if session_id:
        new_values["session_id"] = session_id
    judged = record.stack[0].judged
    if judged:
        new_values["judged_message"] = judged
    parked = {"question": record.stack[0].question, "answer": record.stack[0].answer}
    new_values.update({k: json.dumps(v, ensure_ascii=False) for k, v in parked.items() if v})
    out: list[str] = []
    for line in doc.lines:
        match = _FRONT_LINE.match(line.rstrip("\r\n"))
        key = match.group(1) if match else None
        if key in _PARKED_KEYS and key not in new_values:
            continue  # answered and resumed: the question goes
        if key in new_values and line.strip() != "---":
            ending = line[len(line.rstrip("\r\n")) :]
            out.append(f"{key}: {new_values[key]}{ending}")
        else:
            out.append(line)
    ending = out[-1][len(out[-1].rstrip("\r\n")) :] or "\n"
    for key in ("session_id", "judged_message", *_PARKED_KEYS):
        if key in new_values and key not in doc.values:
            # Set for the first time: recorded just before the closing '---'.
            out.insert(len(out) - 1, f"{key}: {new_values[key]}{ending}")
    return "".join(out) + doc.body


# --- locking and sessions ---------------------------------------------------------------------


@contextlib.contextmanager
def state_lock(lock_path: Path, *, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_path`` (created if needed).

    Polls with a short back-off up to ``timeout`` seconds, then raises
    :class:`StateLockTimeout`: a hook must never hang on a stuck lock holder.
    """
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StateLockTimeout(
                        f"{lock_path}: lock still held after {timeout:g} s"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.02)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _lock_path(path: Path) -> Path:
    return path.with_name(path.stem.split(".")[0] + ".lock")


class StateSession:
    """The state of one backend, read under its lock; :meth:`commit` writes it back."""

    __slots__ = ("backend", "path", "state", "text")

    def __init__(self, backend: Backend, path: Path, state: LoopRecord | Corrupt, text: str):
        self.backend = backend
        self.path = path
        self.state = state
        self.text = text

    def commit(self, new_state: StoredState) -> None:
        """Persist ``new_state``: ``None`` removes the file; an unchanged state writes nothing."""
        if new_state == self.state:
            return
        if new_state is None or isinstance(new_state, Corrupt):
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            return
        if self.backend == "json":
            atomic_write_text(self.path, render_json_state(new_state))
        else:
            atomic_write_text(self.path, render_markdown_state(self.text, new_state))


def state_paths(project_dir: Path) -> tuple[Path, Path]:
    """The JSON state file and the markdown fallback of ``project_dir``."""
    return project_dir / JSON_STATE_RELPATH, project_dir / MARKDOWN_STATE_RELPATH


def any_state(project_dir: Path) -> bool:
    """Whether a state file exists (a cheap check before reading the transcript)."""
    return any(path.exists() for path in state_paths(project_dir))


def _load(backend: Backend, path: Path) -> StateSession | None:
    try:
        raw = read_limited(path)
        mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except FileNotFoundError:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return StateSession(backend, path, Corrupt(f"not UTF-8: {exc}"), "")
    state = parse_json_state(text) if backend == "json" else parse_markdown_state(text, mtime)
    return StateSession(backend, path, state, text)


@contextlib.contextmanager
def open_state(
    project_dir: Path, *, timeout: float = LOCK_TIMEOUT_S
) -> Iterator[StateSession | None]:
    """The project's loop state under its lock, or ``None`` when there is none.

    The JSON file comes first; the markdown fallback is used only when there is no JSON file.
    """
    json_path, md_path = state_paths(project_dir)
    backends: tuple[tuple[Backend, Path], ...] = (("json", json_path), ("markdown", md_path))
    for backend, path in backends:
        if not path.exists():
            continue
        with state_lock(_lock_path(path), timeout=timeout):
            session = _load(backend, path)
            if session is not None:
                yield session
                return
    yield None


@contextlib.contextmanager
def open_json_state(
    project_dir: Path, *, timeout: float = LOCK_TIMEOUT_S
) -> Iterator[tuple[Path, StateSession | None]]:
    """The JSON state under its lock, whether or not the file exists yet (for ``start``)."""
    path = project_dir / JSON_STATE_RELPATH
    with state_lock(_lock_path(path), timeout=timeout):
        yield path, _load("json", path)
