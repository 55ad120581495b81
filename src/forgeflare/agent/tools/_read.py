"""The Read tool: a text file's contents, with a size limit and clear errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from forgeflare.agent.tools._inputs import ReadInput, parse_input
from forgeflare.agent.tools._limits import MAX_READ_BYTES
from forgeflare.agent.tools._types import ToolError, ToolOutput, resolve_path

__all__ = ["read_file"]

# A NUL byte in the first block is the usual sign of a binary file (what git and grep use).
_SNIFF_BYTES = 8192


def read_file(data: dict[str, Any], *, cwd: Path) -> ToolOutput:
    """Read ``data["file_path"]`` (relative to ``cwd``) as UTF-8 text, returned verbatim."""
    raw = parse_input(ReadInput, "Read", data).file_path
    if not raw:
        raise ToolError("Read: 'file_path' is empty")
    path = resolve_path(cwd, raw)
    try:
        if path.is_dir():
            raise ToolError(f"{raw} is a directory, not a file; use Glob to list its contents")
        size = path.stat().st_size
        if size > MAX_READ_BYTES:
            raise ToolError(
                f"{raw} is {size:,} bytes, over the 1 MB Read limit ({MAX_READ_BYTES:,} bytes); "
                "use Grep to find the part you need, or Bash (head, sed -n) to read a slice"
            )
        with open(path, "rb") as fh:
            # Read one byte past the limit: the file may have grown since stat().
            blob = fh.read(MAX_READ_BYTES + 1)
    except FileNotFoundError:
        raise ToolError(f"file not found: {raw}") from None
    except PermissionError:
        raise ToolError(f"permission denied reading {raw}") from None
    except IsADirectoryError:
        raise ToolError(
            f"{raw} is a directory, not a file; use Glob to list its contents"
        ) from None
    except OSError as exc:
        raise ToolError(f"cannot read {raw}: {exc.strerror or exc}") from exc
    if len(blob) > MAX_READ_BYTES:
        raise ToolError(f"{raw} is over the 1 MB Read limit ({MAX_READ_BYTES:,} bytes)")
    if b"\x00" in blob[:_SNIFF_BYTES]:
        raise ToolError(f"{raw} is a binary file (it contains NUL bytes); Read shows text only")
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{raw} is not UTF-8 text (undecodable byte at offset {exc.start}); "
            "it is probably binary, Read shows text only"
        ) from None
    if not text:
        return ToolOutput(f"(empty file: {raw})")
    return ToolOutput(text)
