"""Shared shapes of the tools: their output, their effect class, and path confinement.

Errors::

    ForgeflareError
    └── ToolError      one tool call cannot proceed (bad input, missing file, limit hit);
                       dispatch_tool turns it into ToolOutput(is_error=True), never raises it
"""

from __future__ import annotations

import os
import stat
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
    "extra_links",
    "hard_link_refused",
    "link_refused",
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


def extra_links(path: Path | str) -> int:
    """How many more hard links a regular file has (0 for one, for a directory, or no file)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return 0
    return st.st_nlink - 1 if stat.S_ISREG(st.st_mode) else 0


def link_refused(inside_project_only: bool, extra: int) -> bool:
    """A file of the project with another hard link is refused: its other name may be
    anywhere (``ln ~/.ssh/id_ed25519 notes.txt``), and confinement sees only this one. Files
    in an ``--allow-path`` directory are allowed: the user named that directory."""
    return inside_project_only and extra > 0


def hard_link_refused(cwd: Path, path: Path | str) -> bool:
    """:func:`link_refused` for the file at ``path`` (Grep's filter over many files)."""
    real = Path(path).resolve()
    roots = allowed_roots(cwd)
    inside = [r for r in roots if real == r or real.is_relative_to(r)]
    return link_refused(inside == [roots[0]], extra_links(real))


def confine(cwd: Path, path: Path, raw: str) -> Path:
    """``path`` if it lies inside the project or an allowed directory after resolving
    symlinks (``..``, absolute paths, ``~`` and links out of the project are refused), and
    is not a file of the project with other hard links (:func:`link_refused`)."""
    real = path.resolve()
    roots = allowed_roots(cwd)
    inside = [r for r in roots if real == r or real.is_relative_to(r)]
    if inside:
        extra = extra_links(real)
        if link_refused(inside == [roots[0]], extra):
            raise ToolError(
                f"{raw} has {extra + 1} hard links: its other names may be outside the "
                "project, so the file tools refuse it; to use it anyway, allow its directory "
                f"with `forgeflare run --allow-path DIR` (or {ALLOW_PATHS_ENV})"
            )
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
