"""The one timestamp format every record uses (``2026-02-13T19:30:00Z``), and spans of time."""

from __future__ import annotations

from datetime import UTC, datetime

from forgeflare._units import format_duration

__all__ = ["format_wait", "parse_time", "utc_timestamp"]


def utc_timestamp(moment: datetime | None = None) -> str:
    """``moment`` (default: now) in UTC, whole seconds, with a ``Z``."""
    return (moment or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_wait(seconds: float) -> str:
    """A span to wait or waited: the one duration rendering (``45s``, ``12m 00s``, ``1h 04m``)."""
    return format_duration(seconds)


def parse_time(value: object) -> datetime | None:
    """An ISO UTC time from the records, or ``None``."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
