"""Command-line options that several commands share, declared once (flag, help) as typed
aliases: ``trust_project: TrustProject = False``.

One declaration keeps a flag meaning the same in every command that takes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from forgeflare._errors import ConfigError

__all__ = ["OldDir", "PassEnv", "ProjectDir", "TrustProject", "Yes", "project_dir"]

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

Yes = Annotated[
    bool, typer.Option("--yes", "-y", help="Answer yes instead of asking (scripts, no terminal).")
]
"""``--yes`` (``trust``)."""

OldDir = Annotated[
    Path | None,
    typer.Argument(hidden=True, show_default=False, help="Older spelling of --dir."),
]
"""The positional project directory of 0.3, still read (:func:`project_dir` says so)."""


def project_dir(option: Path, positional: Path | None, command: str) -> Path:
    """The project directory from ``--dir`` or the older positional spelling, which still
    works and says once (on stderr) how it is spelled now. Both at once is a usage error, and
    so is a directory that is not there."""
    directory = option
    if positional is not None:
        if option != Path("."):
            raise ConfigError(f"{command}: give the project directory once, as --dir PATH")
        typer.echo(
            f"note: `forgeflare {command} DIR` is now spelled `forgeflare {command} --dir DIR`",
            err=True,
        )
        directory = positional
    if not directory.is_dir():
        what = "not a directory" if directory.exists() else "no such directory"
        raise ConfigError(f"{directory}: {what}")
    return directory
