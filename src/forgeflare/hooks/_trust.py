"""Trust: nothing a project supplies runs before the user has trusted exactly that content.

A project can bring executables: ``.forgeflare/hooks.toml`` entries and the scripts they run,
Python hook modules, ``.fresher/hooks/*``, an agent or notify command, Claude Code hooks. Each is
a :class:`TrustItem` whose digest covers its normalised definition and the content of every
project file it refers to. The set of items has one fingerprint. ``forgeflare trust`` records
the items of a project in the user's config directory (never in the project), keyed by the
project's real path; a project is trusted when its fingerprint is the one recorded for its path,
or one recorded for any path (a worktree or clone of a trusted repository with the same
content). Anything else is refused before anything starts, naming what is new or changed.

The decision (:func:`check_trust`) is pure; gathering items and the store are the shell.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forgeflare._errors import ConfigError
from forgeflare._fsutil import atomic_write_text

__all__ = [
    "TRUST_ENV",
    "TrustCheck",
    "TrustError",
    "TrustItem",
    "TrustRecord",
    "TrustStore",
    "agent_trust_items",
    "check_trust",
    "claude_items",
    "command_item",
    "default_trust_file",
    "directory_items",
    "fingerprint",
    "hooks_file_items",
    "python_module_items",
    "require_trust",
    "trust_override",
    "untrusted_message",
]

TRUST_ENV = "FORGEFLARE_TRUST"
"""``FORGEFLARE_TRUST=1`` trusts every project (containers, CI); the start banner says so."""

_PROJECT_VARS = ("FORGEFLARE_PROJECT_DIR", "FRESHER_PROJECT_DIR", "CLAUDE_PROJECT_DIR")
_MAX_FILE_BYTES = 16 * 1024 * 1024


class TrustError(ConfigError):
    """The project supplies executables the user has not trusted (or that changed since)."""


@dataclass(frozen=True)
class TrustItem:
    """One thing a project would run: its key, a definition, and the files it refers to."""

    key: str
    """Stable name, e.g. ``hooks.toml[0] PreToolUse`` or ``.fresher/hooks/started``."""
    definition: str
    """The normalised definition (command, event, matcher, phase, timeout) as text."""
    files: Mapping[str, str] = field(default_factory=dict)
    """Project-relative path → sha256 of the content, for every referenced file inside it."""

    @property
    def digest(self) -> str:
        """sha256 over the definition and the referenced files' hashes."""
        h = hashlib.sha256(self.definition.encode())
        for path in sorted(self.files):
            h.update(f"\0{path}\0{self.files[path]}".encode())
        return h.hexdigest()


def fingerprint(items: Iterable[TrustItem]) -> str:
    """One sha256 for a set of items (order-independent)."""
    h = hashlib.sha256()
    for key, digest in sorted((item.key, item.digest) for item in items):
        h.update(f"{key}\0{digest}\n".encode())
    return h.hexdigest()


@dataclass(frozen=True)
class TrustRecord:
    """What the user trusted for one project path."""

    fingerprint: str
    items: Mapping[str, str]
    """item key → digest."""
    trusted_at: str = ""


@dataclass(frozen=True)
class TrustCheck:
    """The outcome of :func:`check_trust`."""

    trusted: bool
    new: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    reason: str = ""
    """``empty``, ``recorded``, ``same content``, ``override`` when trusted; else ``""``."""


def check_trust(
    items: Sequence[TrustItem],
    records: Mapping[str, TrustRecord],
    project: str,
    *,
    override: bool = False,
) -> TrustCheck:
    """Decide whether ``items`` of ``project`` (its real path) may run.

    Nothing to run is trusted; an override trusts everything; otherwise every item must have
    the digest recorded for it under this path, or all of them under one other path (a clone
    or worktree with the same content). A subset of what was trusted is trusted (``run``
    checks only the agent's hooks, ``loop`` also the lifecycle hooks). When not trusted, the
    difference against this path's record names what is new or changed.
    """
    if not items:
        return TrustCheck(trusted=True, reason="empty")
    if override:
        return TrustCheck(trusted=True, reason="override")
    now = {item.key: item.digest for item in items}

    def covers(record: TrustRecord) -> bool:
        return all(record.items.get(key) == digest for key, digest in now.items())

    own = records.get(project)
    if own is not None and covers(own):
        return TrustCheck(trusted=True, reason="recorded")
    if any(covers(record) for record in records.values()):
        return TrustCheck(trusted=True, reason="same content")
    before: Mapping[str, str] = own.items if own is not None else {}
    return TrustCheck(
        trusted=False,
        new=tuple(k for k in now if k not in before),
        changed=tuple(k for k in now if k in before and before[k] != now[k]),
        removed=tuple(k for k in before if k not in now),
    )


def untrusted_message(project: Path, check: TrustCheck) -> str:
    """The one line a refusal prints: what is new or changed, and how to review it."""
    parts = []
    if check.new:
        parts.append("new: " + ", ".join(check.new))
    if check.changed:
        parts.append("changed: " + ", ".join(check.changed))
    if check.removed and not parts:
        parts.append("removed: " + ", ".join(check.removed))
    what = "; ".join(parts) or "not trusted"
    review = "forgeflare trust" if project == Path.cwd() else f"forgeflare trust {project}"
    return (
        f"{project}: project hooks are not trusted ({what}); review and trust them with "
        f"`{review}`, or set {TRUST_ENV}=1 to trust every project"
    )


def trust_override(env: Mapping[str, str], flag: bool = False) -> bool:
    """``--trust-project`` or ``FORGEFLARE_TRUST`` set to a true value."""
    value = env.get(TRUST_ENV, "").strip().lower()
    return flag or value in {"1", "true", "yes", "on"}


# --- gathering items (reads files) -------------------------------------------------------------


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def _inside(path: Path, project: Path) -> str | None:
    """``path`` relative to ``project`` if it resolves to a regular file inside it."""
    try:
        real = path.resolve()
        rel = real.relative_to(project)
    except (OSError, ValueError, RuntimeError):
        return None
    try:
        if not real.is_file() or real.stat().st_size > _MAX_FILE_BYTES:
            return None
    except OSError:
        return None
    return rel.as_posix()


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command, comments=True)
    except ValueError:
        return command.split()


def referenced_files(command: str, project: Path) -> dict[str, str]:
    """Files inside ``project`` that ``command`` names (as a word, or after ``=``), hashed."""
    project = project.resolve()
    found: dict[str, str] = {}
    for word in _words(command):
        for var in _PROJECT_VARS:
            word = word.replace("${" + var + "}", str(project)).replace("$" + var, str(project))
        candidates = [word]
        if "=" in word:
            candidates.append(word.split("=", 1)[1])
        for candidate in candidates:
            if not candidate or candidate.startswith("-"):
                continue
            path = Path(candidate).expanduser()
            rel = _inside(path if path.is_absolute() else project / path, project)
            if rel is not None and rel not in found:
                found[rel] = _sha256_file(project / rel)
    return found


def command_item(key: str, command: str, project: Path, **definition: object) -> TrustItem:
    """An item for a shell command (plus any named fields), with the files it refers to."""
    fields = {"command": command, **{k: v for k, v in definition.items() if v is not None}}
    return TrustItem(
        key=key,
        definition=json.dumps(fields, sort_keys=True),
        files=referenced_files(command, project),
    )


def hooks_file_items(path: Path, project: Path) -> list[TrustItem]:
    """One item per ``[[hooks]]`` entry of a hooks.toml (none when the file is absent).

    The file is read as TOML only; validation is the hooks layer's job, so a broken file still
    yields items for what it says (and its own bytes as one item, so any edit is seen).
    """
    import tomllib

    if not path.is_file():
        return []
    raw = path.read_bytes()
    try:
        data = tomllib.loads(raw.decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return [TrustItem(key=path.name, definition=hashlib.sha256(raw).hexdigest())]
    entries = data.get("hooks")
    if not isinstance(entries, list):
        return [TrustItem(key=path.name, definition=hashlib.sha256(raw).hexdigest())]
    items: list[TrustItem] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            entry = {"entry": repr(entry)}
        event = entry.get("event")
        key = f"{path.name}[{index}]" + (f" {event}" if isinstance(event, str) else "")
        command = entry.get("command")
        definition = {k: v for k, v in entry.items() if k != "command"}
        items.append(
            command_item(key, command if isinstance(command, str) else "", project, **definition)
        )
    return items


def directory_items(directory: Path, project: Path) -> list[TrustItem]:
    """One item per regular file below ``directory`` (lifecycle hooks and what they call)."""
    project = project.resolve()
    if not directory.is_dir():
        return []
    items: list[TrustItem] = []
    for path in sorted(directory.rglob("*")):
        rel = _inside(path, project)
        if rel is None or (path.is_symlink() and not path.resolve().is_relative_to(project)):
            continue
        executable = os.access(path, os.X_OK)
        items.append(
            TrustItem(
                key=rel,
                definition=json.dumps({"executable": executable}),
                files={rel: _sha256_file(path)},
            )
        )
    return items


def python_module_items(names: Sequence[str], project: Path) -> list[TrustItem]:
    """Items for ``--hooks-module`` names that resolve to files inside the project."""
    project = project.resolve()
    items: list[TrustItem] = []
    for name in names:
        base = project.joinpath(*name.split("."))
        files: dict[str, str] = {}
        if base.with_suffix(".py").is_file():
            rel = _inside(base.with_suffix(".py"), project)
            if rel is not None:
                files[rel] = _sha256_file(project / rel)
        elif base.is_dir():
            for path in sorted(base.rglob("*.py")):
                rel = _inside(path, project)
                if rel is not None:
                    files[rel] = _sha256_file(project / rel)
        if files:
            items.append(TrustItem(key=f"hooks module {name}", definition=name, files=files))
    return items


def claude_items(project: Path) -> list[TrustItem]:
    """Claude Code's project hooks (``.claude/settings.json``) and MCP servers (``.mcp.json``).

    They run when the loop's agent is Claude Code. Every hook command is an item with the files
    it names; ``.mcp.json`` is one item over its whole content (servers start programs).
    """
    project = project.resolve()
    items: list[TrustItem] = []
    settings = project / ".claude" / "settings.json"
    if settings.is_file():
        try:
            hooks = json.loads(settings.read_text(encoding="utf-8")).get("hooks", {})
        except (ValueError, UnicodeDecodeError, AttributeError):
            hooks = None
        if not isinstance(hooks, dict):
            digest = _sha256_file(settings)
            items.append(TrustItem(".claude/settings.json", digest))
            hooks = {}
        for event, groups in sorted(hooks.items()):
            for g, group in enumerate(groups if isinstance(groups, list) else [groups]):
                inner = group.get("hooks", []) if isinstance(group, dict) else []
                matcher = group.get("matcher") if isinstance(group, dict) else None
                for h, spec in enumerate(inner if isinstance(inner, list) else []):
                    command = spec.get("command", "") if isinstance(spec, dict) else ""
                    key = f".claude/settings.json {event}[{g}][{h}]"
                    items.append(
                        command_item(key, str(command), project, event=event, matcher=matcher)
                    )
    mcp = project / ".mcp.json"
    if mcp.is_file():
        items.append(TrustItem(".mcp.json", "mcp servers", {".mcp.json": _sha256_file(mcp)}))
    return items


# --- the store (the user's config directory) ---------------------------------------------------


def default_trust_file(env: Mapping[str, str] | None = None) -> Path:
    """``<user config dir>/forgeflare/trust.json`` (XDG_CONFIG_HOME honoured on Linux)."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg) / "forgeflare" / "trust.json"
    import platformdirs

    return Path(platformdirs.user_config_dir("forgeflare")) / "trust.json"


class TrustStore:
    """The trust records in one JSON file, read whole and replaced atomically."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, TrustRecord]:
        """Every project's record; an absent file is no record, a broken one an error."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise ConfigError(f"{self.path}: cannot read the trust records: {exc}") from exc
        try:
            data: Any = json.loads(text)
            projects = data["projects"]
            return {
                str(path): TrustRecord(
                    fingerprint=str(rec["fingerprint"]),
                    items={str(k): str(v) for k, v in rec.get("items", {}).items()},
                    trusted_at=str(rec.get("trusted_at", "")),
                )
                for path, rec in projects.items()
            }
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(
                f"{self.path}: the trust records are damaged ({exc}); remove the file and "
                "trust your projects again"
            ) from exc

    def save(self, records: Mapping[str, TrustRecord]) -> None:
        """Write every record (0600: it says what this user runs)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "version": 1,
            "projects": {
                path: {
                    "fingerprint": rec.fingerprint,
                    "items": dict(rec.items),
                    "trusted_at": rec.trusted_at,
                }
                for path, rec in sorted(records.items())
            },
        }
        atomic_write_text(self.path, json.dumps(data, indent=2) + "\n")
        os.chmod(self.path, 0o600)

    def trust(self, project: str, items: Sequence[TrustItem], now: str) -> TrustRecord:
        """Record ``items`` as trusted for ``project`` (its real path), beside what was."""
        records = self.load()
        known = dict(records[project].items) if project in records else {}
        known.update({item.key: item.digest for item in items})
        record = TrustRecord(fingerprint=fingerprint(items), items=known, trusted_at=now)
        records[project] = record
        self.save(records)
        return record

    def revoke(self, project: str) -> bool:
        """Forget ``project``; ``False`` when it had no record."""
        records = self.load()
        if records.pop(project, None) is None:
            return False
        self.save(records)
        return True


# --- the check every command makes before it starts --------------------------------------------


def agent_trust_items(
    project: Path, hooks_file: Path | None = None, hooks_modules: Sequence[str] = ()
) -> list[TrustItem]:
    """What ``forgeflare run`` would run from the project: hooks.toml and hook modules."""
    from forgeflare.hooks._config import HOOKS_RELPATH

    path = hooks_file if hooks_file is not None else project / HOOKS_RELPATH
    return [*hooks_file_items(path, project), *python_module_items(hooks_modules, project)]


def require_trust(
    project: Path,
    items: Sequence[TrustItem],
    env: Mapping[str, str],
    *,
    flag: bool = False,
    store: TrustStore | None = None,
) -> TrustCheck:
    """Raise :class:`TrustError` (one line, exit 2) unless ``items`` may run."""
    override = trust_override(env, flag)
    if not items or override:
        return check_trust(items, {}, "", override=override)
    store = store if store is not None else TrustStore(default_trust_file(env))
    real = project.resolve()
    check = check_trust(items, store.load(), str(real), override=override)
    if not check.trusted:
        raise TrustError(untrusted_message(project, check))
    return check
