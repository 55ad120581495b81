"""``[limits] max_requests_per_hour``, pure: how many requests the hour has left, counted from
the run's rows, and when the next one frees up.

A row's requests are dated at its end (the last of them was sent by then): the count frees
them no earlier than they really leave the hour.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from forgeflare._clock import parse_time
from forgeflare.supervisor.records._records import IterationRecord

__all__ = ["HOUR", "Sent", "hour_allowance", "sent_by_rows"]

HOUR = 3600.0


@dataclass(frozen=True)
class Sent:
    """``requests`` model requests sent by ``at``."""

    at: datetime
    requests: int


def sent_by_rows(rows: Iterable[IterationRecord]) -> list[Sent]:
    """The requests of the run's rows: the agent's turns, and one per review it got."""
    sent = []
    for row in rows:
        start = parse_time(row.started_at)
        if start is None:
            continue
        at = start + timedelta(seconds=row.duration)
        review = row.review
        reviewed = review is not None and (review.complete is not None or review.tokens.total > 0)
        count = row.turns + (1 if reviewed else 0)
        if count:
            sent.append(Sent(at, count))
    return sent


def hour_allowance(
    sent: Sequence[Sent], *, limit: int, now: datetime, window: float = HOUR
) -> tuple[int, datetime | None]:
    """(requests left in the ``window`` before ``now``, and when none is left: the moment
    enough of them have left the window for one more)."""
    recent = sorted((s for s in sent if (now - s.at).total_seconds() < window), key=lambda s: s.at)
    used = sum(s.requests for s in recent)
    if used < limit:
        return limit - used, None
    freed = 0
    for s in recent:
        freed += s.requests
        if used - freed < limit:
            return 0, s.at + timedelta(seconds=window)
    return 0, now  # pragma: no cover - the loop above frees everything at the latest
