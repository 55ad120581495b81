"""``repeat_for_ms``: a scripted response that answers again and again for a wall-clock while.

The first request that takes such a response opens its window; every request until the window
has passed gets the same response; the first request after that moves on to the next one.
A ten-minute outage is then one script line, ``{"error": {"status": 529}, "repeat_for_ms":
600000}``, however many retries the client makes.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from forgeflare.mockapi._script import Script

__all__ = ["RepeatWindows"]


class RepeatWindows:
    """When each repeating response was first served; ``clock`` is the wall clock in seconds
    (an outage lasts in real time: a suspended laptop does not stretch or freeze it)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._since: dict[int, float] = {}

    def position(self, script: Script, used: int) -> int:
        """The script position for the next request: past a response whose window is over."""
        while used < len(script.responses):
            window = script.responses[used].repeat_for_ms
            since = self._since.get(used)
            if window is None or since is None or (self._clock() - since) * 1000 < window:
                break
            used += 1
        return used

    def holds(self, script: Script, index: int) -> bool:
        """Response ``index`` was just served: does the script stay on it (it repeats)?"""
        if index >= len(script.responses) or script.responses[index].repeat_for_ms is None:
            return False
        self._since.setdefault(index, self._clock())
        return True
