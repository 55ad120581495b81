"""The Edit tool: exact-match replacement, create and append.

Semantics (the same as the Rust original, so that prompts written for it carry over):

- ``old_str`` must occur in the file exactly as given (whitespace and indentation included);
  once, unless ``replace_all`` is true, in which case every occurrence is replaced;
- an empty ``old_str`` creates a missing file (parent directories too) holding ``new_str``,
  or appends ``new_str`` to an existing one;
- ``old_str`` and ``new_str`` are limited to 100 KB each (an edit, not a file upload: larger
  rewrites go through Bash), and the file itself to the 1 MB Read limit.

The file is rewritten in place, so its mode, owner and hard links stay as they were.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from forgeflare.agent.tools._inputs import EditInput, parse_input
from forgeflare.agent.tools._limits import MAX_EDIT_BYTES, MAX_READ_BYTES
from forgeflare.agent.tools._types import (
    ToolError,
    ToolOutput,
    resolve_path,
)

__all__ = ["edit_file"]


def edit_file(data: dict[str, Any], *, cwd: Path) -> ToolOutput:
    """Apply one Edit call; the result says what changed."""
    args = parse_input(EditInput, "Edit", data)
    raw, old, new, replace_all = args.file_path, args.old_str, args.new_str, args.replace_all
    if not raw:
        raise ToolError("Edit: 'file_path' is empty")
    for key, value in (("old_str", old), ("new_str", new)):
        size = len(value.encode("utf-8"))
        if size > MAX_EDIT_BYTES:
            raise ToolError(
                f"Edit: {key} is {size:,} bytes, over the 100 KB limit ({MAX_EDIT_BYTES:,} "
                "bytes); split the change into smaller edits"
            )
    path = resolve_path(cwd, raw)
    if path.is_dir():
        raise ToolError(f"Edit: {raw} is a directory, not a file")
    if not path.exists():
        if old:
            raise ToolError(
                f"Edit: file not found: {raw} (to create it, pass an empty old_str and the "
                "whole content as new_str)"
            )
        _write(path, raw, new.encode("utf-8"), create=True)
        return ToolOutput(f"Created {raw} ({_size(new)})")
    if old and old == new:
        raise ToolError("Edit: old_str and new_str are identical; nothing would change")
    if not old and not new:
        raise ToolError("Edit: old_str and new_str are both empty; nothing would change")
    content = _read_text(path, raw)
    if not old:
        _write(path, raw, (content + new).encode("utf-8"))
        return ToolOutput(f"Appended {_size(new)} to {raw}")
    count = content.count(old)
    if count == 0:
        raise ToolError(
            f"Edit: old_str not found in {raw}; Read the file and copy the exact text "
            "(whitespace and indentation must match)"
        )
    if count > 1 and not replace_all:
        raise ToolError(
            f"Edit: old_str occurs {count} times in {raw}; include more surrounding lines to "
            "make it unique, or set replace_all to true to replace every occurrence"
        )
    line = content.count("\n", 0, content.index(old)) + 1
    _write(path, raw, content.replace(old, new).encode("utf-8"))
    if count == 1:
        return ToolOutput(f"Replaced 1 occurrence in {raw} (at line {line})")
    return ToolOutput(f"Replaced {count} occurrences in {raw} (first at line {line})")


def _size(text: str) -> str:
    size = len(text.encode("utf-8"))
    return "1 byte" if size == 1 else f"{size:,} bytes"


def _read_text(path: Path, raw: str) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_READ_BYTES:
            raise ToolError(
                f"Edit: {raw} is {size:,} bytes, over the 1 MB limit for editing; use Bash "
                "(sed, a script) to change it"
            )
        blob = path.read_bytes()
    except PermissionError:
        raise ToolError(f"Edit: permission denied reading {raw}") from None
    except OSError as exc:
        raise ToolError(f"Edit: cannot read {raw}: {exc.strerror or exc}") from exc
    if b"\x00" in blob:
        raise ToolError(f"Edit: {raw} is a binary file (it contains NUL bytes)")
    try:
        # Bytes, not text mode: CRLF line endings must survive the round trip unchanged.
        return blob.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"Edit: {raw} is not UTF-8 text; it cannot be edited") from None


def _write(path: Path, raw: str, blob: bytes, *, create: bool = False) -> None:
    try:
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "xb" if create else "r+b") as fh:
            fh.write(blob)
            fh.truncate()
    except FileExistsError:
        raise ToolError(f"Edit: {raw} appeared while it was being created; try again") from None
    except PermissionError:
        raise ToolError(f"Edit: permission denied writing {raw}") from None
    except OSError as exc:
        raise ToolError(f"Edit: cannot write {raw}: {exc.strerror or exc}") from exc
