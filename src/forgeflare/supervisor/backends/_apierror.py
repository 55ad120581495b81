"""What an API failure an agent CLI reports means for the loop (pure; OpenCode, pi and Codex).

Both CLIs hand on the provider's failure as it came: an HTTP status, the error's ``type``
(``authentication_error``, ``rate_limit_error``, ``overloaded_error``…) and its message. Claude's
usage limit says ``… limit reached|<epoch seconds>``: that epoch is the window's reset.

:func:`classify_api_error` is the one table: auth and permission failures and a bad request are
deterministic (``agent_error`` that waiting cannot fix); a usage limit is ``rate_limited``; billing
or credit is ``quota``; overload, 5xx, 429 without a usage limit and network failures are a
transient ``api_error`` (an outage).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from forgeflare.supervisor.backends._stream import MAX_RESET_AHEAD, epoch_time

__all__ = ["ApiFailure", "classify_api_error", "reset_in_message", "window_reset"]

_LIMIT_RESET = re.compile(r"limit reached\|(\d{9,13})")
_AUTH = re.compile(
    r"authentication_error|permission_error|invalid x-api-key|invalid api key|"
    r"not logged in|unauthori[sz]ed|forbidden|no api key|api key not",
    re.IGNORECASE,
)
_QUOTA = re.compile(r"credit balance|insufficient_quota|quota exceeded|billing", re.IGNORECASE)
_USAGE_LIMIT = re.compile(r"usage limit|limit reached", re.IGNORECASE)
_TRANSIENT = re.compile(
    r"overloaded|rate.?limit|too many requests|\b5\d\d\b|\b429\b|connection|network|"
    r"fetch failed|socket|econn|etimedout|timed? ?out|unavailable|terminated|api_error|"
    r"high demand|at capacity|disconnected|reconnect",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ApiFailure:
    """An agent's API failure, in the loop's words."""

    outcome: str
    """``agent_error``, ``api_error``, ``rate_limited`` or ``quota``."""
    transient: bool = False
    deterministic: bool = False
    """Waiting or repeating cannot fix it (auth, permission, a bad request)."""


def classify_api_error(status: int | None, message: str) -> ApiFailure:
    """``status`` (HTTP, ``None`` when unknown) and ``message`` (the error's text, type and body
    as the CLI gave them) as an :class:`ApiFailure`."""
    if status in (401, 403) or _AUTH.search(message):
        return ApiFailure("agent_error", deterministic=True)
    if _QUOTA.search(message):
        return ApiFailure("quota")
    if _USAGE_LIMIT.search(message):
        return ApiFailure("rate_limited")
    if status in (400, 404, 413, 422):
        return ApiFailure("agent_error", deterministic=True)
    if (status is not None and (status == 429 or status >= 500)) or _TRANSIENT.search(message):
        return ApiFailure("api_error", transient=True)
    return ApiFailure("agent_error")


def reset_in_message(message: str) -> datetime | None:
    """The reset Claude's usage-limit message carries (``… limit reached|1795911614``)."""
    found = _LIMIT_RESET.search(message)
    return epoch_time(int(found[1])) if found else None


def window_reset(at: datetime | None, now: datetime) -> str | None:
    """``at`` as the record's ISO UTC text; ``None`` when unknown, past or over 31 days ahead
    (damage: never clamped)."""
    if at is None or at <= now:
        return None
    try:
        if at - now > MAX_RESET_AHEAD:
            return None
    except OverflowError:
        return None
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
