"""Where loop state lives, how it is parsed, and how it is changed safely.

A project's loop state is the user's, not the repository's: one JSON file per project under
the user's state directory (:func:`state_home`), named after the project's real path
(:func:`state_name`), written only by ``stop-hook start`` (or the plugin's ``/forgeflare:loop``,
which runs it), the hook and ``answer``. Its text is the spec's ``loop:current`` message, e.g.
``{"schema": 1, "event": "STATE", "run_id": "…", "updated_at": "2026-01-01T10:00:00Z",
"stack": [{"mode": "loop", "iter": 1, "max": 10, "prompt": "…"}]}``, parsed and rendered by
pure functions.

The places 0.3 used inside the project (``.forgeflare/loop-state.json``, the idle plugin's
``.claude/idle-loop.local.md``) are never read for a decision: a clone could carry one and
drive its reader's Claude Code session. One line names them (:func:`legacy_note`); nothing is
migrated.

Every read-modify-write happens under ``fcntl.flock`` on a lock file beside the state and ends
in an atomic replace, so concurrent hooks lose nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from forgeflare._clock import utc_timestamp
from forgeflare.disk import read_limited
from forgeflare.stophook._claims import ClaimNote, claim_from_json, claim_to_json
from forgeflare.stophook._machine import (
    Corrupt,
    Event,
    Frame,
    LoopRecord,
    StoredState,
)
from forgeflare.stophook._rawstate import (
    LOCK_TIMEOUT_S,
    SCHEMA_VERSION,
    StateLock,
    parse_timestamp,
    read_record,
    write_state_text,
)
from forgeflare.stophook._signals import Mode
from forgeflare.stophook._where import (
    LEGACY_FILES,
    STATE_DIRNAME,
    legacy_files,
    legacy_note,
    lock_file,
    state_dir,
    state_file,
    state_name,
)

__all__ = [
    "JSON_STATE_RELPATH",
    "LEGACY_RELPATHS",
    "LOCK_TIMEOUT_S",
    "MARKDOWN_STATE_RELPATH",
    "SCHEMA_VERSION",
    "STATE_DIRNAME",
    "StateSession",
    "any_state",
    "legacy_note",
    "legacy_states",
    "open_json_state",
    "open_state",
    "parse_json_state",
    "parse_timestamp",
    "render_json_state",
    "state_home",
    "state_lock",
    "state_name",
    "state_path",
]

JSON_STATE_RELPATH, MARKDOWN_STATE_RELPATH = (Path(rel) for rel in LEGACY_FILES)
LEGACY_RELPATHS = (JSON_STATE_RELPATH, MARKDOWN_STATE_RELPATH)
"""Where 0.3 kept a loop's state inside the project: ignored now (one line says so)."""


def _frame(fields: dict[str, Any], where: str) -> Frame | Corrupt:
    """The typed frame of :func:`read_frame`'s checked fields (its claims parsed here)."""
    claims: list[ClaimNote] = []
    for index, item in enumerate(fields["claims"]):
        note = claim_from_json(item)
        if isinstance(note, str):
            return Corrupt(f"{where}: claims[{index}]: {note}")
        claims.append(note)
    return Frame(**{**fields, "mode": Mode(fields["mode"]), "claims": tuple(claims)})


# --- JSON -------------------------------------------------------------------------------------


def parse_json_state(text: str) -> LoopRecord | Corrupt:
    """The record in ``text``; anything invalid (JSON, fields, counts, time) is :class:`Corrupt`."""
    try:
        raw = json.loads(text)
    except ValueError as exc:
        return Corrupt(f"invalid JSON: {exc}")
    checked = read_record(raw)
    if isinstance(checked, str):
        return Corrupt(checked)
    event, run_id, updated_at, fields = checked
    frames: list[Frame] = []
    for index, item in enumerate(fields):
        frame = _frame(item, f"stack[{index}]")
        if isinstance(frame, Corrupt):
            return frame
        frames.append(frame)
    return LoopRecord(event=Event(event), run_id=run_id, updated_at=updated_at, stack=tuple(frames))


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


# --- locking and sessions ---------------------------------------------------------------------


def state_lock(lock_path: Path, *, timeout: float = LOCK_TIMEOUT_S) -> StateLock:
    """Hold an exclusive ``flock`` on ``lock_path`` (see :class:`~._rawstate.StateLock`)."""
    return StateLock(os.fspath(lock_path), timeout=timeout)


def _lock_path(path: Path) -> Path:
    return Path(lock_file(os.fspath(path)))


class StateSession:
    """The loop state of one project, read under its lock; :meth:`commit` writes it back."""

    __slots__ = ("path", "state", "text")

    def __init__(self, path: Path, state: LoopRecord | Corrupt, text: str):
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
        write_state_text(os.fspath(self.path), render_json_state(new_state))


def state_home() -> Path:
    """The folder of every project's loop state (``$XDG_STATE_HOME/forgeflare/stop-hook``)."""
    return Path(state_dir())


def state_path(project_dir: Path) -> Path:
    """Where the loop state of ``project_dir`` (by its real path) lives on this machine."""
    return Path(state_file(project_dir))


def legacy_states(project_dir: Path) -> list[Path]:
    """The 0.3 state files inside ``project_dir``, which are never acted on."""
    return [Path(path) for path in legacy_files(project_dir)]


def any_state(project_dir: Path) -> bool:
    """Whether the project has a loop state (one ``stat``: the hook's cheap first check)."""
    return state_path(project_dir).exists()


def _load(path: Path) -> StateSession | None:
    try:
        raw = read_limited(path)
    except FileNotFoundError:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return StateSession(path, Corrupt(f"not UTF-8: {exc}"), "")
    return StateSession(path, parse_json_state(text), text)


@contextlib.contextmanager
def open_state(
    project_dir: Path, *, timeout: float = LOCK_TIMEOUT_S
) -> Iterator[StateSession | None]:
    """The project's loop state under its lock, or ``None`` when there is none."""
    path = state_path(project_dir)
    if not path.exists():
        yield None
        return
    with state_lock(_lock_path(path), timeout=timeout):
        yield _load(path)


@contextlib.contextmanager
def open_json_state(
    project_dir: Path, *, timeout: float = LOCK_TIMEOUT_S
) -> Iterator[tuple[Path, StateSession | None]]:
    """The state under its lock, whether or not the file exists yet (for ``start``)."""
    path = state_path(project_dir)
    with state_lock(_lock_path(path), timeout=timeout):
        yield path, _load(path)
