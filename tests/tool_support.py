"""Calling the async tool dispatch from synchronous tests."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from forgeflare.agent.tools import ToolOutput, dispatch_tool

__all__ = ["run_tool"]


def run_tool(
    name: str,
    input: dict[str, Any] | None,
    *,
    cwd: Path,
    on_output: Callable[[str], None] | None = None,
) -> ToolOutput:
    """``dispatch_tool`` run to its end in a fresh trio run."""
    return trio.run(functools.partial(dispatch_tool, name, input, cwd=cwd, on_output=on_output))
