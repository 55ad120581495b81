"""The check before every hook call: is what runs still what was trusted at the start?

An agent may rewrite a trusted hook (or drop a ``json.py`` beside it) in the middle of a run;
the next call of any project hook is then refused with one line. Gathering again parses the
hooks file and hashes files, so the pin first compares a stat signature of everything the
items cover, the directories holding them (a file added or removed changes its directory)
and any ``watch`` path: only when that changed are the items gathered and compared.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from forgeflare.trust._policy import TrustItem, TrustRecord, check_trust, untrusted_message

__all__ = ["TrustPin"]

_Signature = tuple[tuple[int, ...] | None, ...]


def _stat(path: str) -> tuple[int, ...] | None:
    try:
        st = os.stat(path, follow_symlinks=False)
        key: tuple[int, ...] = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        key += (st.st_mode,)
        if os.path.islink(path):
            target = os.stat(path)
            key += (target.st_ino, target.st_size, target.st_mtime_ns, target.st_ctime_ns)
        return key
    except OSError:
        return None


def _watched(project: Path, items: Iterable[TrustItem], watch: Iterable[Path]) -> list[str]:
    paths = {str(project)}
    for item in items:
        for rel in item.files:
            path = project / rel
            paths.add(str(path))
            paths.add(str(path.parent))
    for path in watch:
        paths.add(str(path))
        paths.add(str(path.parent))
    return sorted(paths)


@dataclass
class TrustPin:
    """Items trusted at the start, and how to gather them again."""

    project: Path
    gather: Callable[[], Sequence[TrustItem]]
    trusted: Sequence[TrustItem]
    watch: Sequence[Path] = ()
    """Files the items are read from (the hooks file) that they do not list themselves."""
    _record: TrustRecord = field(init=False)
    _paths: list[str] = field(init=False)
    _signature: _Signature = field(init=False)

    def __post_init__(self) -> None:
        self.project = self.project.resolve()
        self._record = TrustRecord("", {item.key: item.digest for item in self.trusted})
        self._paths = _watched(self.project, self.trusted, self.watch)
        self._signature = self._sign()

    def _sign(self) -> _Signature:
        return tuple(_stat(path) for path in self._paths)

    def refusal(self) -> str | None:
        """``None`` while nothing changed; else the one line naming what did."""
        signature = self._sign()
        if signature == self._signature:
            return None
        try:
            now = self.gather()
        except OSError as exc:
            return f"{self.project}: cannot check the project hooks' trust: {exc}"
        key = str(self.project)
        check = check_trust(now, {key: self._record}, key)
        if check.trusted:
            self._signature = signature  # touched, not changed: cheap again from here
            return None
        return untrusted_message(self.project, check)
