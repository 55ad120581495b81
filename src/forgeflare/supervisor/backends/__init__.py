"""Agent backends: how to start an agent and read its output into an iteration report.

Importing the package registers the built-in backends (each module registers its own class).
"""

from forgeflare.supervisor.backends._backends import AgentAccount as AgentAccount
from forgeflare.supervisor.backends._backends import BACKENDS as BACKENDS
from forgeflare.supervisor.backends._backends import Backend as Backend
from forgeflare.supervisor.backends._backends import BaseBackend as BaseBackend
from forgeflare.supervisor.backends._backends import COMPLETE_TAG as COMPLETE_TAG
from forgeflare.supervisor.backends._backends import ChildEnd as ChildEnd
from forgeflare.supervisor.backends._backends import CommandBackend as CommandBackend
from forgeflare.supervisor.backends._backends import ForgeflareBackend as ForgeflareBackend
from forgeflare.supervisor.backends._backends import InitTemplate as InitTemplate
from forgeflare.supervisor.backends._backends import LineReader as LineReader
from forgeflare.supervisor.backends._backends import StreamBackend as StreamBackend
from forgeflare.supervisor.backends._claude_backend import ClaudeBackend as ClaudeBackend
from forgeflare.supervisor.backends._claude_backend import HELPER_TTL_ENV as HELPER_TTL_ENV
from forgeflare.supervisor.backends._claude_backend import claude_problems as claude_problems
from forgeflare.supervisor.backends._claude_backend import helper_settings as helper_settings
from forgeflare.supervisor.backends._codex_backend import CodexBackend as CodexBackend
from forgeflare.supervisor.backends._codex_backend import codex_problems as codex_problems
from forgeflare.supervisor.backends._codex_backend import codex_provider_url as codex_provider_url
from forgeflare.supervisor.backends._backends import REPORT_ENV as REPORT_ENV
from forgeflare.supervisor.backends._backends import completion_signal as completion_signal
from forgeflare.supervisor.backends._backends import backend_names as backend_names
from forgeflare.supervisor.backends._backends import register_backend as register_backend
from forgeflare.supervisor.backends._backends import AgentSettings as AgentSettings
from forgeflare.supervisor.backends._claude import ClaudeStreamReader as ClaudeStreamReader
from forgeflare.supervisor.backends._stream import JsonStreamReader as JsonStreamReader
from forgeflare.supervisor.backends._stream import StreamReport as StreamReport
from forgeflare.supervisor.backends._stream import as_int as as_int
from forgeflare.supervisor.backends._stream import json_event as json_event
from forgeflare.supervisor.backends._stream import tool_line as tool_line
from forgeflare.supervisor.backends._codex import CodexStreamReader as CodexStreamReader
from forgeflare.supervisor.backends._report import IterationReport as IterationReport
from forgeflare.supervisor.backends._report import OUTCOMES as OUTCOMES
from forgeflare.supervisor.backends._report import Outcome as Outcome
from forgeflare.supervisor.backends._report import Tokens as Tokens
from forgeflare.supervisor.backends._claude import asked as asked

from forgeflare.supervisor.backends._codex import classify_failure as classify_failure
from forgeflare.supervisor.backends._codex import codex_home as codex_home
from forgeflare.supervisor.backends._codex import codex_model as codex_model
from forgeflare.supervisor.backends._codex import reset_from_message as reset_from_message
from forgeflare.supervisor.backends._codex import reset_from_session as reset_from_session
from forgeflare.supervisor.backends._opencode import OpenCodeBackend as OpenCodeBackend
from forgeflare.supervisor.backends._opencode import OpenCodeStreamReader as OpenCodeStreamReader
from forgeflare.supervisor.backends._pi import PiBackend as PiBackend
from forgeflare.supervisor.backends._pi import PiStreamReader as PiStreamReader

__all__ = sorted(name for name in dir() if not name.startswith("_"))  # what this face imports
