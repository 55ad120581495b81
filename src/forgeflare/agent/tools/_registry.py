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
from forgeflare.agent.tools._inputs import (
    BashInput,
    EditInput,
    GlobInput,
    GrepInput,
    ReadInput,
    ToolInput,
    tool_schema,
)
from forgeflare.agent.tools._read import read_file
from forgeflare.agent.tools._types import ToolEffect, ToolError, ToolOutput

__all__ = ["TOOL_NAMES", "dispatch_tool", "tool_effect", "tool_schemas"]


@dataclass(frozen=True, slots=True)
class _Tool:
    name: str
    effect: ToolEffect
    model: type[ToolInput]
    """The input model; its docstrings are the schema's descriptions."""
    run: Callable[..., ToolOutput] | Callable[..., Awaitable[ToolOutput]]
    streams: bool = False
    """An async tool streaming its output (Bash); the others are synchronous."""


_TOOLS: tuple[_Tool, ...] = (
    _Tool("Read", ToolEffect.PURE, ReadInput, read_file),
    _Tool("Glob", ToolEffect.PURE, GlobInput, glob_files),
    _Tool("Bash", ToolEffect.MUTATING, BashInput, bash_tool, streams=True),
    _Tool("Edit", ToolEffect.MUTATING, EditInput, edit_file),
    _Tool("Grep", ToolEffect.PURE, GrepInput, grep_tool),
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
    return [tool_schema(tool.name, tool.model) for tool in _TOOLS]


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
        # A pure tool changes nothing, so on cancellation (the first Ctrl+C) the turn goes on
        # without it at once; its thread ends by its own bounds. Edit must finish its write.
        out = await trio.to_thread.run_sync(
            functools.partial(tool.run, input, cwd=cwd),
            abandon_on_cancel=tool.effect is ToolEffect.PURE,
        )
        assert isinstance(out, ToolOutput)
        return out
    except ToolError as exc:
        return ToolOutput(str(exc), True)
    except OSError as exc:
        return ToolOutput(f"{name}: {exc.strerror or exc}", True)
    except Exception as exc:
        # A bug in a tool must not end the session: the model sees it and can work around it.
        return ToolOutput(f"{name}: internal error: {type(exc).__name__}: {exc}", True)
