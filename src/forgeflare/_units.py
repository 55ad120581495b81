"""Counts in short words for a terminal line (``12.3k`` tokens)."""

from __future__ import annotations

__all__ = ["format_tokens"]


def format_tokens(n: int, *, millions: int = 1) -> str:
    """``950``, ``12.3k``, ``1.2M`` (``millions`` digits after the point for millions)."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.{millions}f}M"
