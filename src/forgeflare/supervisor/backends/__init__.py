"""Agent backends: how to start an agent and read its output into an iteration report."""

from forgeflare.supervisor.backends._claude import ClaudeStreamReader, format_tokens, tool_line
from forgeflare.supervisor.backends._codex import CodexStreamReader

__all__ = ["ClaudeStreamReader", "CodexStreamReader", "format_tokens", "tool_line"]
