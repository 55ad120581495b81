"""The trust decision, pure: items, records, the override, and the refusal line.

A :class:`TrustItem` is one thing a project would run (or that would loosen a limit or move a
secret); its digest covers its normalised definition and the content of every file it refers
to. :func:`check_trust` is the one decision every command makes; :func:`trust_override` the one
reading of ``FORGEFLARE_TRUST`` (the start banners use it too).
"""

from __future__ import annotations

import hashlib
import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from forgeflare._errors import ConfigError
from forgeflare._words import TRUE_WORDS

__all__ = [
    "TRUST_ENV",
    "TrustCheck",
    "TrustError",
    "TrustItem",
    "TrustRecord",
    "check_trust",
    "fingerprint",
    "trust_command",
    "trust_override",
    "untrusted_message",
]

TRUST_ENV = "FORGEFLARE_TRUST"
"""``FORGEFLARE_TRUST=1`` trusts every project (containers, CI); the start banner says so."""


class TrustError(ConfigError):
    """The project supplies something the user has not trusted (or that changed since)."""


@dataclass(frozen=True)
class TrustItem:
    """One thing a project supplies that runs code, moves a secret or loosens a limit."""

    key: str
    """Stable name, e.g. ``hooks.toml[0] PreToolUse`` or ``[limits] gate``."""
    definition: str
    """The normalised definition (command, event, matcher, value...) as text."""
    files: Mapping[str, str] = field(default_factory=dict)
    """Path (project-relative, or a symlink's target) → sha256 of the content it covers."""
    blind: tuple[str, ...] = ()
    """What the digest cannot see (a ``make`` target's recipe): shown as a warning."""

    @property
    def digest(self) -> str:
        """sha256 over the definition and the covered files' hashes."""
        h = hashlib.sha256(self.definition.encode("utf-8", "surrogatepass"))
        for path in sorted(self.files):
            h.update(f"\0{path}\0{self.files[path]}".encode("utf-8", "surrogatepass"))
        return h.hexdigest()


def fingerprint(items: Iterable[TrustItem]) -> str:
    """One sha256 for a set of items (order-independent)."""
    h = hashlib.sha256()
    for key, digest in sorted((item.key, item.digest) for item in items):
        h.update(f"{key}\0{digest}\n".encode("utf-8", "surrogatepass"))
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


def untrusted_message(project: Path, check: TrustCheck, *, cwd: Path | None = None) -> str:
    """The one line a refusal prints: what is new or changed, and how to review it."""
    parts = []
    if check.new:
        parts.append("new: " + ", ".join(check.new))
    if check.changed:
        parts.append("changed: " + ", ".join(check.changed))
    if check.removed and not parts:
        parts.append("removed: " + ", ".join(check.removed))
    what = "; ".join(parts) or "not trusted"
    here = (cwd if cwd is not None else Path.cwd()).resolve()
    review = trust_command(project.resolve(), here)
    return (
        f"{project}: project hooks and settings are not trusted ({what}); review and trust "
        f"them with `{review}`, or set {TRUST_ENV}=1 to trust every project"
    )


def trust_command(project: Path, cwd: Path) -> str:
    """The command that reviews ``project``'s trust, as typed from ``cwd`` (both real paths):
    ``forgeflare trust`` in the project itself, else ``--dir`` with the shortest path."""
    if project == cwd:
        return "forgeflare trust"
    try:
        shown = project.relative_to(cwd).as_posix()
    except ValueError:
        shown = os.fspath(project)
    return f"forgeflare trust --dir {shlex.quote(shown)}"


def trust_override(env: Mapping[str, str], flag: bool = False) -> bool:
    """``--trust-project``, or ``FORGEFLARE_TRUST`` set to one of :data:`TRUE_WORDS`."""
    return flag or env.get(TRUST_ENV, "").strip().lower() in TRUE_WORDS
