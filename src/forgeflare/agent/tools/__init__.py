"""The agent's five tools (Read, Glob, Bash, Edit, Grep): schemas, effects and dispatch."""

from forgeflare.agent.tools._bash import terminate_running_commands
from forgeflare.agent.tools._guard import denied_reason
from forgeflare.agent.tools._registry import TOOL_NAMES, dispatch_tool, tool_effect, tool_schemas
from forgeflare.agent.tools._types import ToolEffect, ToolError, ToolOutput

__all__ = [
    "TOOL_NAMES",
    "ToolEffect",
    "ToolError",
    "ToolOutput",
    "denied_reason",
    "dispatch_tool",
    "terminate_running_commands",
    "tool_effect",
    "tool_schemas",
]
