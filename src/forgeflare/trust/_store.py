"""The trust records (the user's config directory, never the project) and the check.

A damaged file (not UTF-8, not JSON, odd shapes) is one :class:`TrustStoreError` line naming
the file, never a traceback.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from forgeflare._errors import ConfigError
from forgeflare.disk import RECORD_LIMIT, atomic_write_text, read_limited
from forgeflare.trust._policy import (
    TrustCheck,
    TrustError,
    TrustItem,
    TrustRecord,
    check_trust,
    fingerprint,
    trust_override,
    untrusted_message,
)

__all__ = ["TrustStore", "TrustStoreError", "default_trust_file", "parse_records", "require_trust"]


class TrustStoreError(ConfigError):
    """The trust records cannot be read or are damaged."""


def default_trust_file(env: Mapping[str, str] | None = None) -> Path:
    """``<user config dir>/forgeflare/trust.json`` (XDG_CONFIG_HOME honoured on Linux)."""
    env = os.environ if env is None else env
    xdg = env.get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg) / "forgeflare" / "trust.json"
    import platformdirs

    return Path(platformdirs.user_config_dir("forgeflare")) / "trust.json"


def parse_records(data: Any) -> dict[str, TrustRecord]:
    """The records of a parsed trust.json; ``TypeError`` naming what has the wrong shape."""
    if not isinstance(data, dict) or not isinstance(data.get("projects"), dict):
        raise TypeError("no 'projects' table")
    records: dict[str, TrustRecord] = {}
    for path, rec in data["projects"].items():
        if not isinstance(rec, dict) or not isinstance(rec.get("fingerprint"), str):
            raise TypeError(f"project {path!r}: no fingerprint")
        items = rec.get("items", {})
        if not isinstance(items, dict) or not all(isinstance(v, str) for v in items.values()):
            raise TypeError(f"project {path!r}: 'items' is not a table of digests")
        trusted_at = rec.get("trusted_at", "")
        records[path] = TrustRecord(
            fingerprint=rec["fingerprint"],
            items=dict(items),
            trusted_at=trusted_at if isinstance(trusted_at, str) else "",
        )
    return records


class TrustStore:
    """The trust records in one JSON file, read whole and replaced atomically."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[str, TrustRecord]:
        """Every project's record; an absent file is no record, a damaged one an error."""
        try:
            raw = read_limited(self.path, limit=RECORD_LIMIT)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise TrustStoreError(
                f"{self.path}: cannot read the trust records: {exc.strerror or exc}"
            ) from exc
        try:
            return parse_records(json.loads(raw.decode("utf-8")))
        except (ValueError, TypeError, RecursionError) as exc:
            # UnicodeDecodeError and JSONDecodeError are ValueErrors too.
            why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            raise TrustStoreError(
                f"{self.path}: the trust records are damaged ({why}); remove the file and "
                "trust your projects again"
            ) from exc

    def save(self, records: Mapping[str, TrustRecord]) -> None:
        """Write every record (0600: it says what this user runs)."""
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
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, json.dumps(data, indent=2) + "\n")
            os.chmod(self.path, 0o600)
        except OSError as exc:
            raise TrustStoreError(
                f"{self.path}: cannot write the trust records: {exc.strerror or exc}"
            ) from exc

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
