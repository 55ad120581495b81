"""Agent backends: how to start an agent and read its output into an iteration report.

Importing the package registers the built-in backends (each module registers its own class).
"""

from forgeflare.supervisor.backends._backends import AgentAccount
from forgeflare.supervisor.backends._backends import BACKENDS
from forgeflare.supervisor.backends._backends import Backend
from forgeflare.supervisor.backends._backends import BaseBackend
from forgeflare.supervisor.backends._backends import COMPLETE_TAG
from forgeflare.supervisor.backends._backends import ChildEnd
from forgeflare.supervisor.backends._backends import CommandBackend
from forgeflare.supervisor.backends._backends import ForgeflareBackend
from forgeflare.supervisor.backends._backends import InitTemplate
from forgeflare.supervisor.backends._backends import LineReader
from forgeflare.supervisor.backends._backends import StreamBackend
from forgeflare.supervisor.backends._claude_backend import ClaudeBackend
from forgeflare.supervisor.backends._claude_backend import HELPER_TTL_ENV
from forgeflare.supervisor.backends._claude_backend import claude_problems
from forgeflare.supervisor.backends._claude_backend import helper_settings
from forgeflare.supervisor.backends._codex_backend import CodexBackend
from forgeflare.supervisor.backends._codex_backend import codex_problems
from forgeflare.supervisor.backends._codex_backend import codex_provider_url
from forgeflare.supervisor.backends._backends import REPORT_ENV
from forgeflare.supervisor.backends._backends import completion_signal
from forgeflare.supervisor.backends._backends import backend_names
from forgeflare.supervisor.backends._backends import register_backend
from forgeflare.supervisor.backends._backends import AgentSettings
from forgeflare.supervisor.backends._claude import ClaudeStreamReader
from forgeflare.supervisor.backends._stream import JsonStreamReader
from forgeflare.supervisor.backends._stream import StreamReport
from forgeflare.supervisor.backends._stream import as_int
from forgeflare.supervisor.backends._stream import json_event
from forgeflare.supervisor.backends._stream import tool_line
from forgeflare.supervisor.backends._codex import CodexStreamReader
from forgeflare.supervisor.backends._report import IterationReport
from forgeflare.supervisor.backends._report import OUTCOMES
from forgeflare.supervisor.backends._report import Outcome
from forgeflare.supervisor.backends._report import Tokens
from forgeflare.supervisor.backends._claude import asked

from forgeflare.supervisor.backends._codex import classify_failure
from forgeflare.supervisor.backends._codex import codex_home
from forgeflare.supervisor.backends._codex import codex_model
from forgeflare.supervisor.backends._codex import reset_from_message
from forgeflare.supervisor.backends._codex import reset_from_session
from forgeflare.supervisor.backends._opencode import OpenCodeBackend
from forgeflare.supervisor.backends._opencode import OpenCodeStreamReader
from forgeflare.supervisor.backends._pi import PiBackend
from forgeflare.supervisor.backends._pi import PiStreamReader

__all__ = [
    "BACKENDS",
    "COMPLETE_TAG",
    "HELPER_TTL_ENV",
    "OUTCOMES",
    "REPORT_ENV",
    "AgentAccount",
    "AgentSettings",
    "Backend",
    "BaseBackend",
    "ChildEnd",
    "ClaudeBackend",
    "ClaudeStreamReader",
    "CodexBackend",
    "CodexStreamReader",
    "CommandBackend",
    "ForgeflareBackend",
    "InitTemplate",
    "IterationReport",
    "JsonStreamReader",
    "LineReader",
    "OpenCodeBackend",
    "OpenCodeStreamReader",
    "Outcome",
    "PiBackend",
    "PiStreamReader",
    "StreamBackend",
    "StreamReport",
    "Tokens",
    "as_int",
    "asked",
    "backend_names",
    "classify_failure",
    "claude_problems",
    "codex_home",
    "codex_model",
    "codex_problems",
    "codex_provider_url",
    "completion_signal",
    "helper_settings",
    "json_event",
    "register_backend",
    "reset_from_message",
    "reset_from_session",
    "tool_line",
]
