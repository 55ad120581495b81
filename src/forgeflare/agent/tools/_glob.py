"""The Glob tool: file names matching a pattern, sorted, without any shell.

The pattern goes to :func:`glob.glob` only, so nothing in it is ever executed: ``$(...)``,
``;`` and backticks are plain characters that match (or do not match) file names.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

from forgeflare.agent.tools._inputs import GlobInput, parse_input
from forgeflare.agent.tools._types import (
    ToolError,
    ToolOutput,
    allowed_roots,
    confine,
    resolve_path,
)

__all__ = ["MAX_GLOB_ENTRIES", "glob_files"]

MAX_GLOB_ENTRIES = 1000
"""At most this many paths are returned; the result says how many more matched."""


def glob_files(data: dict[str, Any], *, cwd: Path) -> ToolOutput:
    """Paths matching ``data["pattern"]`` under ``data["path"]`` (default ``cwd``).

    ``**`` matches any number of directories. Hidden files and directories (leading dot)
    are only matched by a pattern that names the dot, as in a shell: ``.github/**``.
    Paths are shown relative to ``cwd`` (absolute when outside it), so Read can open them
    as given; directories end with ``/``.
    """
    args = parse_input(GlobInput, "Glob", data)
    pattern = args.pattern
    if not pattern.strip():
        raise ToolError("Glob: 'pattern' is empty; try '**/*.py'")
    raw_base = args.path
    base = cwd if raw_base is None else resolve_path(cwd, raw_base)
    shown_base = raw_base or "."
    if not base.exists():
        raise ToolError(f"Glob: directory not found: {shown_base}")
    if not base.is_dir():
        raise ToolError(f"Glob: {shown_base} is a file, not a directory; pass its parent")
    if "\x00" in pattern:
        raise ToolError("Glob: pattern contains a NUL byte")
    if os.path.isabs(os.path.expanduser(pattern)) or ".." in Path(pattern).parts:
        # the pattern's own directory part must stay in the project too
        confine(cwd, Path(os.path.expanduser(pattern.split("*")[0] or ".")), pattern)
        if ".." in Path(pattern).parts:
            confine(cwd, base / pattern.split("*")[0], pattern)
    roots = allowed_roots(cwd)
    try:
        found = glob.glob(pattern, root_dir=base, recursive=True)
    except OSError as exc:  # e.g. a directory we may not list
        raise ToolError(f"Glob: cannot search {shown_base}: {exc.strerror or exc}") from exc
    inside = [
        hit for hit in found if any((base / hit).resolve().is_relative_to(root) for root in roots)
    ]
    entries = sorted({_display(base / hit, cwd) for hit in inside})
    if not entries:
        return ToolOutput(f"No files match {pattern!r} in {shown_base}")
    shown = [_mark_dir(entry, cwd) for entry in entries[:MAX_GLOB_ENTRIES]]
    cut = len(entries) - len(shown)
    if cut:
        shown.append(
            f"... {cut} more not shown ({MAX_GLOB_ENTRIES} of {len(entries)} entries); "
            "narrow the pattern or the path"
        )
    return ToolOutput("\n".join(shown))


def _display(path: Path, cwd: Path) -> str:
    # os.path.relpath would walk up with '..' out of cwd; an absolute path reads better there.
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def _mark_dir(entry: str, cwd: Path) -> str:
    full = entry if os.path.isabs(entry) else os.path.join(cwd, entry)
    return entry + "/" if os.path.isdir(full) and not entry.endswith("/") else entry
