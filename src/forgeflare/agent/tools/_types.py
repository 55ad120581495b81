"""Shared shapes of the tools: their output, their effect class, and input checking.

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
from typing import Any

from forgeflare._errors import ForgeflareError

__all__ = [
    "ALLOW_PATHS_ENV",
    "ToolEffect",
    "ToolError",
    "ToolOutput",
    "allowed_roots",
    "confine",
    "optional_bool",
    "optional_str",
    "require_str",
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


def require_str(tool: str, data: dict[str, Any], key: str) -> str:
    """``data[key]`` as a string, or a ToolError naming the tool and the field."""
    if key not in data or data[key] is None:
        raise ToolError(f"{tool}: missing required field '{key}'")
    value = data[key]
    if not isinstance(value, str):
        raise ToolError(f"{tool}: '{key}' must be a string, got {type(value).__name__}")
    return value


def optional_str(tool: str, data: dict[str, Any], key: str) -> str | None:
    """``data[key]`` as a string, ``None`` when absent, null or empty."""
    if data.get(key) is None:
        return None
    value = require_str(tool, data, key)
    return value or None


def optional_bool(tool: str, data: dict[str, Any], key: str) -> bool | None:
    """``data[key]`` as a bool (the strings "true"/"false" too), ``None`` when absent or null."""
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    # Models sometimes send booleans as strings; accepting them costs nothing.
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise ToolError(f"{tool}: '{key}' must be true or false, got {value!r}")


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
