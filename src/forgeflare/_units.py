"""Figures in short words for a terminal line: tokens (``12.3k``), durations, cost.

The one rendering of each: the loop's lines, ``runs``, ``report``, ``watch`` and the fleet all
print through these, so the same figure reads the same everywhere.
"""

from __future__ import annotations

__all__ = ["format_cost", "format_duration", "format_tokens"]


def format_duration(seconds: float) -> str:
    """``42s``, ``3m 05s``, ``2h 04m``."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    m, sec = divmod(s, 60)
    if m < 60:
        return f"{m}m {sec:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h {m:02d}m"


def format_cost(cost: float | None) -> str:
    """``$1.23``, ``$0.0042`` (cents are too coarse for one small iteration), or
    ``cost unknown`` when no price was known."""
    if cost is None:
        return "cost unknown"
    return f"${cost:.2f}" if cost >= 1 or cost == round(cost, 2) else f"${cost:.4f}"


def format_tokens(n: int, *, millions: int = 1) -> str:
    """``950``, ``12.3k``, ``1.2M`` (``millions`` digits after the point for millions)."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.{millions}f}M"
