"""The one timestamp format every record uses: ``2026-02-13T19:30:00Z``."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["utc_timestamp"]


def utc_timestamp(moment: datetime | None = None) -> str:
    """``moment`` (default: now) in UTC, whole seconds, with a ``Z``."""
    return (moment or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
