"""Agent backends: how to start an agent and read its output into an iteration report."""

from forgeflare.supervisor.backends._backends import (
    BACKENDS,
    COMPLETE_TAG,
    REPORT_ENV,
    Backend,
    ChildEnd,
    ClaudeBackend,
    CodexBackend,
    CommandBackend,
    ForgeflareBackend,
    LineReader,
    completion_signal,
)
from forgeflare.supervisor.backends._claude import (
    ClaudeStreamReader,
    JsonStreamReader,
    as_int,
    json_event,
    tool_line,
)
from forgeflare.supervisor.backends._codex import CodexStreamReader
from forgeflare.supervisor.backends._report import OUTCOMES, IterationReport, Outcome, Tokens

__all__ = [
    "BACKENDS",
    "COMPLETE_TAG",
    "OUTCOMES",
    "REPORT_ENV",
    "Backend",
    "ChildEnd",
    "ClaudeBackend",
    "ClaudeStreamReader",
    "CodexBackend",
    "CodexStreamReader",
    "CommandBackend",
    "ForgeflareBackend",
    "IterationReport",
    "JsonStreamReader",
    "LineReader",
    "Outcome",
    "Tokens",
    "as_int",
    "completion_signal",
    "json_event",
    "tool_line",
]
