"""Retry of Messages API calls (plan item 3b): a pure delay rule and the loop that applies it.

:func:`retry_delay` decides; :class:`RetryingClient` sleeps, logs and calls again. The sleep
and the schedule are injectable so tests never wait for real.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta

import trio

from forgeflare.agent._client import MessagesClient
from forgeflare.agent._errors import (
    APIError,
    APIStatusError,
    StreamTransientError,
    UsageLimitError,
    is_transient,
)
from forgeflare.agent._messages import AssistantResponse, MessagesRequest

__all__ = [
    "DEFAULT_BACKOFF",
    "MAX_RETRY_AFTER",
    "RetryingClient",
    "backoff_schedule",
    "retry_delay",
    "usage_limit_wait",
]

DEFAULT_BACKOFF: tuple[float, ...] = (2, 4, 8, 16)
"""Seconds to wait before retry 1, 2, 3, 4; its length is the number of retries."""

MAX_RETRY_AFTER = 60.0
"""A server's ``retry-after`` is obeyed up to this many seconds (a bad header cannot stall us)."""


def retry_delay(attempt: int, error: APIError, schedule: Sequence[float]) -> float | None:
    """Seconds to wait before retry number ``attempt`` (1-based) after ``error``.

    ``None`` means give up: the error is permanent, or ``attempt`` is outside
    ``1..len(schedule)``. A status error's ``retry-after`` overrides the schedule, capped at
    :data:`MAX_RETRY_AFTER` and never shorter than the schedule's first step, the minimum
    backoff: a 529 storm answered with ``retry-after: 0`` would otherwise spend every retry in
    under a second.
    """
    if attempt < 1 or attempt > len(schedule) or not is_transient(error):
        return None
    floor = max(float(schedule[0]), 0.0)
    if isinstance(error, APIStatusError) and error.retry_after is not None:
        after = error.retry_after
        if math.isfinite(after):
            return min(max(after, floor), max(MAX_RETRY_AFTER, floor))
    return max(float(schedule[attempt - 1]), 0.0)


def backoff_schedule(env: Mapping[str, str]) -> tuple[float, ...]:
    """:data:`DEFAULT_BACKOFF` scaled by ``FORGEFLARE_TIME_SCALE`` (0..1, the supervisor's
    setting that shrinks every wait for tests and demos; anything else means 1)."""
    try:
        scale = float(env.get("FORGEFLARE_TIME_SCALE", "1"))
    except ValueError:
        scale = 1.0
    if not 0 <= scale <= 1:
        scale = 1.0
    return tuple(step * scale for step in DEFAULT_BACKOFF)


def usage_limit_wait(error: APIError) -> float | None:
    """Seconds a 429 asks to wait when that is beyond :data:`MAX_RETRY_AFTER` (a usage window),
    from ``retry-after`` or the rate-limit reset headers; ``None`` for an ordinary error."""
    if not isinstance(error, APIStatusError) or error.status != 429:
        return None
    waits = [w for w in (error.retry_after, error.reset_in) if w is not None and math.isfinite(w)]
    if not waits or max(waits) <= MAX_RETRY_AFTER:
        return None
    return max(waits)


def _log_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class RetryingClient:
    """A :class:`MessagesClient` with retries: what the turn loop holds (its ``send``).

    Transient errors are retried after :func:`retry_delay`; permanent errors are raised at
    once, and after the last retry the last error is raised. Each retry logs
    ``[retry] Attempt {n}/{max}: {error} — waiting {delay}s``; when the failed attempt had
    started streaming (text may already be on screen), it also logs
    ``[retry] Retrying from beginning of response...`` and calls ``on_discard`` (the display
    drops or marks the text it was shown).
    """

    def __init__(
        self,
        client: MessagesClient,
        *,
        schedule: Sequence[float] = DEFAULT_BACKOFF,
        sleep: Callable[[float], Awaitable[None]] = trio.sleep,
        log: Callable[[str], None] = _log_stderr,
        on_discard: Callable[[], None] = lambda: None,
    ) -> None:
        self.client = client
        self.schedule = tuple(schedule)
        self._sleep = sleep
        self._log = log
        self._on_discard = on_discard

    async def send(
        self, request: MessagesRequest, *, on_text: Callable[[str], None] | None = None
    ) -> AssistantResponse:
        """Send ``request``, retrying transient failures; return the complete response."""
        retries = len(self.schedule)
        attempt = 0
        while True:
            streamed = False

            def relay(text: str) -> None:
                nonlocal streamed
                streamed = True
                if on_text is not None:
                    on_text(text)

            try:
                return await self.client.stream(request, on_text=relay)
            except APIError as error:
                window = usage_limit_wait(error)
                if window is not None:
                    # Waiting hours inside one request helps nobody: end the turn and say when.
                    resets_at = datetime.now(UTC) + timedelta(seconds=window)
                    raise UsageLimitError(
                        f"{error} (limit resets at {resets_at:%Y-%m-%dT%H:%M:%SZ})",
                        resets_at=resets_at,
                    ) from error
                attempt += 1
                delay = retry_delay(attempt, error, self.schedule)
                if delay is None:
                    raise
                self._log(f"[retry] Attempt {attempt}/{retries}: {error} — waiting {delay:g}s")
                if streamed or isinstance(error, StreamTransientError):
                    self._on_discard()  # what this attempt streamed is not the answer
                    self._log("[retry] Retrying from beginning of response...")
                await self._sleep(delay)
