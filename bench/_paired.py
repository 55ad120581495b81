"""Timing two async calls in alternating rounds, so machine load hits both alike."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable

__all__ = ["alternate", "paired_ratio", "report"]

Call = Callable[[], Awaitable[None]]


async def alternate(base: Call, ours: Call, rounds: int) -> tuple[list[float], list[float]]:
    """Seconds per call of ``base`` and ``ours``, which go first in turn each round."""
    times: tuple[list[float], list[float]] = ([], [])
    sides = [(base, times[0]), (ours, times[1])]
    for i in range(rounds):
        for call, out in sides if i % 2 == 0 else sides[::-1]:
            start = time.perf_counter()
            await call()
            out.append(time.perf_counter() - start)
    return times


def paired_ratio(ours: list[float], base: list[float]) -> float:
    """Median of the per-round ratios: each round's two calls ran back to back under the same
    load, so this is the figure least disturbed by other work on the machine."""
    return statistics.median(x / y for x, y in zip(ours, base, strict=True))


def report(base: tuple[str, list[float]], ours: tuple[str, list[float]], target: str) -> None:
    """Print both sides' medians and minimums, and the ratios ours/base."""
    (base_name, b), (ours_name, o) = base, ours
    width = max(len(base_name), len(ours_name)) + 1
    print(f"rounds: {len(b)}")
    for name, times in (base, ours):
        median, low = statistics.median(times) * 1000, min(times) * 1000
        print(f"{name + ':':<{width}} median {median:.2f} ms, min {low:.2f} ms")
    print(
        f"ratio of medians: {statistics.median(o) / statistics.median(b):.3f}; "
        f"of minimums: {min(o) / min(b):.3f}"
    )
    paired = paired_ratio(o, b)
    print(f"ratio {ours_name}/{base_name} (median of paired rounds): {paired:.3f} ({target})")
