"""Command-line options that several commands share, declared once (flag, help) as typed
aliases: ``trust_project: TrustProject = False``.

One declaration keeps a flag meaning the same in every command that takes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["PassEnv", "ProjectDir", "TrustProject"]

TrustProject = Annotated[
    bool,
    typer.Option(
        "--trust-project",
        help="Run the project's hooks without a recorded trust (containers, CI); "
        "also FORGEFLARE_TRUST=1. See `forgeflare trust`.",
    ),
]
"""``--trust-project`` (``run``, ``loop``, ``hooks try``)."""

PassEnv = Annotated[
    list[str] | None,
    typer.Option(
        "--pass-env",
        metavar="NAME",
        help="Pass this secret-looking variable to hooks and tools anyway (repeatable).",
    ),
]
"""``--pass-env`` (``run``, ``loop``)."""

ProjectDir = Annotated[Path, typer.Option("--dir", help="Project directory.", show_default=True)]
"""``--dir`` (``loop``, ``report``)."""
