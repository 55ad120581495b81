"""Command-line commands of this part (registered on the root app by ``forgeflare.cli``)."""

from __future__ import annotations

import typer

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add this part's commands to ``app``."""
