"""Waiting, briefly, for the transcript to hold the turn's final message.

Claude Code runs the Stop hook before its transcript always holds the turn's final message:
on 2.1.197 it is missing in about half of multi-message turns and appears 2-46 ms after the
hook first reads. ``last_assistant_message`` is only the trimmed text of that message's *last*
block, and absent when the block is thinking or blank. So the hook reads the transcript again
(bounded polling, ``FORGEFLARE_STOPHOOK_WAIT_MS``, 200 ms by default) until it holds the final
message, judged by :func:`settled`:

- a message that ended in a tool call (``stop_reason`` ``tool_use``) is never the turn's last;
- the message judged at the frame's previous Stop is an old one (the file lags);
- when Claude Code sent ``last_assistant_message``, the message's last text block must be it.

When the time is up, Claude Code's own text is judged if it sent one; otherwise the final
message cannot be known and the hook continues the loop (one more turn costs little; a loop
that ends with nothing done costs the night).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import NamedTuple

from forgeflare.stophook._tail import settled
from forgeflare.stophook._transcript import FinalMessage

__all__ = ["DEFAULT_WAIT_MS", "WAIT_ENV", "Reading", "read_settled", "settled", "wait_seconds"]

WAIT_ENV = "FORGEFLARE_STOPHOOK_WAIT_MS"
DEFAULT_WAIT_MS = 200
_POLL_S = 0.005


def wait_seconds(environ: Mapping[str, str]) -> float:
    """The longest wait for a lagging transcript; the default when unset or not a count
    (the hook has no way to report a bad setting but its stderr, so it does not refuse)."""
    raw = environ.get(WAIT_ENV, "").strip()
    if raw.isdecimal() and raw.isascii():
        return min(int(raw), 60_000) / 1000
    return DEFAULT_WAIT_MS / 1000


class Reading(NamedTuple):
    """What the transcript gave: the final message when it settled in time, and how long the
    hook waited for it."""

    final: FinalMessage | None
    settled: bool
    waited: float


def read_settled(
    read: Callable[[], FinalMessage | None],
    sent: str | None,
    judged: str,
    *,
    wait: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Reading:
    """Read the final message until :func:`settled`, for at most ``wait`` seconds.

    ``read`` raises what it raises (the caller decides what an unreadable file means).
    """
    start = clock()
    while True:
        final = read()
        if settled(final, sent, judged):
            return Reading(final, True, clock() - start)
        left = wait - (clock() - start)
        if left <= 0:
            return Reading(final, False, clock() - start)
        sleep(min(_POLL_S, left))
