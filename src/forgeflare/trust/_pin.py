"""The check before every hook call: is what runs still what was trusted at the start?

An agent may rewrite a trusted hook (or drop a ``json.py`` beside it) in the middle of a run;
the next call of any project hook is then refused with one line. Gathering is the same as at
the start; file hashes are stat-cached, so an unchanged project costs a few ``stat`` calls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from forgeflare.trust._policy import TrustItem, TrustRecord, check_trust, untrusted_message

__all__ = ["TrustPin"]


@dataclass
class TrustPin:
    """Items trusted at the start, and how to gather them again."""

    project: Path
    gather: Callable[[], Sequence[TrustItem]]
    trusted: Sequence[TrustItem]
    _record: TrustRecord = field(init=False)

    def __post_init__(self) -> None:
        self._record = TrustRecord("", {item.key: item.digest for item in self.trusted})

    def refusal(self) -> str | None:
        """``None`` while nothing changed; else the one line naming what did."""
        try:
            now = self.gather()
        except OSError as exc:
            return f"{self.project}: cannot check the project hooks' trust: {exc}"
        key = str(self.project)
        check = check_trust(now, {key: self._record}, key)
        return None if check.trusted else untrusted_message(self.project, check)
