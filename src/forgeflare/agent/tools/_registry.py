"""The five tools by name: their schemas, their effect class, and dispatch."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from forgeflare.agent.tools._bash import bash_tool
from forgeflare.agent.tools._edit import edit_file
from forgeflare.agent.tools._glob import glob_files
from forgeflare.agent.tools._grep import grep_tool
from forgeflare.agent.tools._read import read_file
from forgeflare.agent.tools._types import ToolEffect, ToolError, ToolOutput

__all__ = ["TOOL_NAMES", "dispatch_tool", "tool_effect", "tool_schemas"]


@dataclass(frozen=True, slots=True)
class _Tool:
    name: str
    effect: ToolEffect
    description: str
    properties: dict[str, dict[str, Any]]
    required: tuple[str, ...]
    run: Callable[..., ToolOutput] | Callable[..., Awaitable[ToolOutput]]
    streams: bool = False
    """An async tool streaming its output (Bash); the others are synchronous."""


def _str(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _bool(description: str) -> dict[str, Any]:
    return {"type": "boolean", "description": description}


_TOOLS: tuple[_Tool, ...] = (
    _Tool(
        "Read",
        ToolEffect.PURE,
        "Read a UTF-8 text file and return its contents verbatim. Limit: 1 MB; binary files "
        "and directories are refused (use Glob to list a directory).",
        {"file_path": _str("Path of the file, absolute or relative to the working directory.")},
        ("file_path",),
        read_file,
    ),
    _Tool(
        "Glob",
        ToolEffect.PURE,
        "Find files by name pattern, e.g. '**/*.py' or 'src/*.rs' ('**' spans directories). "
        "Returns matching paths sorted, one per line, directories ending in '/'; at most 1000 "
        "entries. Hidden files match only when the pattern names the leading dot.",
        {
            "pattern": _str("Glob pattern, relative to path."),
            "path": _str("Directory to search in (default: the working directory)."),
        },
        ("pattern",),
        glob_files,
    ),
    _Tool(
        "Bash",
        ToolEffect.MUTATING,
        "Run a command with bash in the working directory; stdout and stderr are merged. "
        "Timeout: 120 s (the process group is then killed and partial output returned). "
        "Output over 100 KB is cut in the middle. No stdin; background processes are stopped "
        "when the command finishes. Destructive commands (rm -rf /, mkfs, dd to a device, "
        "force pushes, ...) are refused.",
        {
            "command": _str("The bash command to run."),
            "description": _str("A few words saying what the command is for."),
        },
        ("command",),
        bash_tool,
        streams=True,
    ),
    _Tool(
        "Edit",
        ToolEffect.MUTATING,
        "Edit a text file by exact replacement: old_str must occur exactly once (whitespace "
        "included) unless replace_all is true. An empty old_str creates a missing file (with "
        "parent directories) or appends new_str to an existing one. Limits: old_str and "
        "new_str 100 KB each; the file 1 MB.",
        {
            "file_path": _str("Path of the file, absolute or relative to the working directory."),
            "old_str": _str("Exact text to replace; empty to create or append."),
            "new_str": _str("Replacement text."),
            "replace_all": _bool("Replace every occurrence of old_str (default false)."),
        },
        ("file_path", "old_str", "new_str"),
        edit_file,
    ),
    _Tool(
        "Grep",
        ToolEffect.PURE,
        "Search file contents with a regular expression (ripgrep; .gitignore and hidden files "
        "are skipped). Returns 'path:line:text' lines sorted by path, at most 50 matches.",
        {
            "pattern": _str("Regular expression to search for."),
            "path": _str("File or directory to search (default: the working directory)."),
            "file_type": _str("Only search this file type, e.g. 'py', 'rust', 'js', 'md'."),
            "case_sensitive": _bool(
                "true or false to force it; omitted: smart case (insensitive unless the "
                "pattern has a capital letter)."
            ),
        },
        ("pattern",),
        grep_tool,
    ),
)

_BY_NAME = {tool.name: tool for tool in _TOOLS}

TOOL_NAMES: tuple[str, ...] = tuple(_BY_NAME)
"""The five tool names, in the order of :func:`tool_schemas`."""


def tool_effect(name: str) -> ToolEffect:
    """Read, Glob and Grep are pure; Bash, Edit and any unknown name are mutating."""
    tool = _BY_NAME.get(name)
    return tool.effect if tool is not None else ToolEffect.MUTATING


def tool_schemas() -> list[dict[str, Any]]:
    """The tool definitions for the Messages API (``name``, ``description``, ``input_schema``)."""
    return [
        {
            "name": tool.name,
            "description": tool.description,
            "input_schema": {
                "type": "object",
                "properties": {key: dict(value) for key, value in tool.properties.items()},
                "required": list(tool.required),
            },
        }
        for tool in _TOOLS
    ]


async def dispatch_tool(
    name: str,
    input: dict[str, Any] | None,
    *,
    cwd: Path,
    on_output: Callable[[str], None] | None = None,
) -> ToolOutput:
    """Run tool ``name`` on ``input``: Bash awaited, the file tools in a worker thread.

    Never raises for a tool-level problem (unknown tool, bad or missing input, missing file,
    denied command, timeout): those come back as ``ToolOutput(is_error=True)`` with a message
    the model can act on. ``on_output`` receives Bash output as it arrives.
    """
    tool = _BY_NAME.get(name)
    if tool is None:
        known = ", ".join(TOOL_NAMES)
        return ToolOutput(f"Unknown tool {name!r}; the tools are {known}", True)
    if input is None:
        return ToolOutput(
            f"{name}: the tool input is missing (the response was probably cut off by "
            "max_tokens); send the call again with its complete input",
            True,
        )
    if not isinstance(input, dict):
        return ToolOutput(f"{name}: the tool input must be a JSON object", True)
    try:
        if tool.streams:
            result = tool.run(input, cwd=cwd, on_output=on_output)
            assert not isinstance(result, ToolOutput)
            return await result
        out = await trio.to_thread.run_sync(functools.partial(tool.run, input, cwd=cwd))
        assert isinstance(out, ToolOutput)
        return out
    except ToolError as exc:
        return ToolOutput(str(exc), True)
    except OSError as exc:
        return ToolOutput(f"{name}: {exc.strerror or exc}", True)
    except Exception as exc:
        # A bug in a tool must not end the session: the model sees it and can work around it.
        return ToolOutput(f"{name}: internal error: {type(exc).__name__}: {exc}", True)
