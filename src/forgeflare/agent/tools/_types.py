"""Shared shapes of the tools: their output, their effect class, and path confinement.

Errors::

    ForgeflareError
    └── ToolError      one tool call cannot proceed (bad input, missing file, limit hit);
                       dispatch_tool turns it into ToolOutput(is_error=True), never raises it
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from forgeflare._errors import ForgeflareError

__all__ = [
    "ALLOW_PATHS_ENV",
    "ToolEffect",
    "ToolError",
    "ToolOutput",
    "allowed_roots",
    "confine",
    "resolve_path",
]


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """What one tool call sends back to the model as its ``tool_result``."""

    content: str
    is_error: bool = False


class ToolEffect(StrEnum):
    """Whether a tool only looks (safe to run concurrently) or changes something."""

    PURE = "pure"
    MUTATING = "mutating"


class ToolError(ForgeflareError):
    """A tool call cannot proceed; the message is written for the model to act on."""


ALLOW_PATHS_ENV = "FORGEFLARE_ALLOW_PATHS"
"""Directories outside the project the file tools may use (``os.pathsep``-separated); set by
``forgeflare run --allow-path DIR`` and by the loop's ``[security] allow_paths``."""


def allowed_roots(cwd: Path) -> list[Path]:
    """The project directory and the allowed directories, symlinks resolved."""
    roots = [cwd.resolve()]
    for item in os.environ.get(ALLOW_PATHS_ENV, "").split(os.pathsep):
        if item.strip():
            roots.append(Path(os.path.expanduser(item.strip())).resolve())
    return roots


def confine(cwd: Path, path: Path, raw: str) -> Path:
    """``path`` if it lies inside the project or an allowed directory after resolving
    symlinks (``..``, absolute paths, ``~`` and links out of the project are refused)."""
    real = path.resolve()
    for root in allowed_roots(cwd):
        if real == root or real.is_relative_to(root):
            return path
    raise ToolError(
        f"{raw} is outside the project ({cwd.resolve()}); the file tools stay in it. "
        f"Allow a directory with `forgeflare run --allow-path DIR` (or {ALLOW_PATHS_ENV})"
    )


def resolve_path(cwd: Path, raw: str) -> Path:
    """``raw`` as a path: ``~`` expanded, relative paths taken from ``cwd``, confined to the
    project (and allowed directories)."""
    if "\x00" in raw:
        raise ToolError(f"path contains a NUL byte: {raw!r}")
    path = Path(os.path.expanduser(raw))
    return confine(cwd, path if path.is_absolute() else cwd / path, raw)
