"""The coding agent behind ``forgeflare run``: API client, tools, turn loop, session capture."""

from forgeflare.agent._agent_hooks import BASH_CHECK
from forgeflare.agent._agent_hooks import builtin_hooks
from forgeflare.agent._client import ANTHROPIC_VERSION
from forgeflare.agent._client import DEFAULT_BASE_URL
from forgeflare.agent._client import MessagesClient
from forgeflare.agent._client import parse_retry_after
from forgeflare.agent._client import checked_base_url
from forgeflare.agent._client import resolve_base_url
from forgeflare.agent._client import status_error
from forgeflare.agent._conversation import CONTINUE_PROMPT
from forgeflare.agent._conversation import MAX_CONTINUATIONS
from forgeflare.agent._conversation import MaxTokensAction
from forgeflare.agent._conversation import TRIM_BUDGET_BYTES
from forgeflare.agent._conversation import TRIM_THRESHOLD_TOKENS
from forgeflare.agent._conversation import TRUNCATED_PLACEHOLDER
from forgeflare.agent._conversation import add_user_text
from forgeflare.agent._conversation import classify_max_tokens
from forgeflare.agent._conversation import conversation_bytes
from forgeflare.agent._conversation import drop_null_input_tool_uses
from forgeflare.agent._conversation import recover_conversation
from forgeflare.agent._conversation import should_trim
from forgeflare.agent._conversation import trim_conversation
from forgeflare.agent._display import AgentDisplay
from forgeflare.agent._display import summarize_input
from forgeflare.agent._errors import APIConnectionError
from forgeflare.agent._errors import APIError
from forgeflare.agent._errors import APIRequestError
from forgeflare.agent._errors import APIStatusError
from forgeflare.agent._errors import APITimeoutError
from forgeflare.agent._errors import StreamParseError
from forgeflare.agent._errors import StreamTransientError
from forgeflare.agent._errors import UsageLimitError
from forgeflare.agent._errors import is_transient
from forgeflare.agent._messages import AssistantResponse
from forgeflare.agent._messages import ContentBlock
from forgeflare.agent._messages import Message
from forgeflare.agent._messages import MessagesRequest
from forgeflare.agent._messages import RedactedThinkingBlock
from forgeflare.agent._messages import ServerBlock
from forgeflare.agent._messages import StopReason
from forgeflare.agent._messages import TextBlock
from forgeflare.agent._messages import ThinkingBlock
from forgeflare.agent._messages import ToolResultBlock
from forgeflare.agent._messages import ToolUseBlock
from forgeflare.agent._messages import Usage
from forgeflare.agent._prompt import INSTRUCTIONS_CAP
from forgeflare.agent._prompt import build_system_prompt
from forgeflare.agent._prompt import project_instructions
from forgeflare.agent._reviewer import ask_reviewer
from forgeflare.agent._retry import DEFAULT_BACKOFF
from forgeflare.agent._retry import MAX_RETRY_AFTER
from forgeflare.agent._retry import RetryingClient
from forgeflare.agent._retry import backoff_schedule
from forgeflare.agent._retry import retry_delay
from forgeflare.agent._retry import usage_limit_wait
from forgeflare.agent._run import DEFAULT_MAX_TOKENS
from forgeflare.agent._run import DEFAULT_MODEL
from forgeflare.agent._run import RunOptions
from forgeflare.agent._run import run_agent
from forgeflare.agent._scripted import ScriptedModel
from forgeflare.agent._scripted import ScriptedResponse
from forgeflare.agent._scripted import text_response
from forgeflare.agent._scripted import tool_use_response
from forgeflare.agent._session import SessionWriteError
from forgeflare.agent._session import SessionWriter
from forgeflare.agent._session import key_actions
from forgeflare.agent._session import new_session_id
from forgeflare.agent._session import read_transcript
from forgeflare.agent._session import render_context
from forgeflare.agent._session import transcript_line
from forgeflare.agent._session import transcript_timestamp
from forgeflare.agent._sse import MessageAccumulator
from forgeflare.agent._sse import SSEDecoder
from forgeflare.agent._sse import StreamParser
from forgeflare.agent._sse import parse_sse_bytes
from forgeflare.agent._sse import stream_error_from_event
from forgeflare.agent._turn import Dispatch
from forgeflare.agent._turn import MAX_CONSECUTIVE_BLOCKS
from forgeflare.agent._turn import MAX_STOP_CONTINUATIONS
from forgeflare.agent._turn import MAX_TOOL_ITERATIONS
from forgeflare.agent._turn import MAX_TOTAL_BLOCKS
from forgeflare.agent._turn import ModelClient
from forgeflare.agent._turn import TranscriptSink
from forgeflare.agent._turn import TurnLoop
from forgeflare.agent._turn import TurnResult
from forgeflare.agent._turn import block_limit

__all__ = [
    "ANTHROPIC_VERSION",
    "BASH_CHECK",
    "CONTINUE_PROMPT",
    "DEFAULT_BACKOFF",
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODEL",
    "INSTRUCTIONS_CAP",
    "MAX_CONSECUTIVE_BLOCKS",
    "MAX_CONTINUATIONS",
    "MAX_RETRY_AFTER",
    "MAX_STOP_CONTINUATIONS",
    "MAX_TOOL_ITERATIONS",
    "MAX_TOTAL_BLOCKS",
    "TRIM_BUDGET_BYTES",
    "TRIM_THRESHOLD_TOKENS",
    "TRUNCATED_PLACEHOLDER",
    "APIConnectionError",
    "APIError",
    "APIRequestError",
    "APIStatusError",
    "APITimeoutError",
    "AgentDisplay",
    "AssistantResponse",
    "ContentBlock",
    "Dispatch",
    "MaxTokensAction",
    "Message",
    "MessageAccumulator",
    "MessagesClient",
    "MessagesRequest",
    "ModelClient",
    "RedactedThinkingBlock",
    "RetryingClient",
    "RunOptions",
    "SSEDecoder",
    "ScriptedModel",
    "ScriptedResponse",
    "ServerBlock",
    "SessionWriteError",
    "SessionWriter",
    "StopReason",
    "StreamParseError",
    "StreamParser",
    "StreamTransientError",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolUseBlock",
    "TranscriptSink",
    "TurnLoop",
    "TurnResult",
    "Usage",
    "UsageLimitError",
    "add_user_text",
    "ask_reviewer",
    "backoff_schedule",
    "block_limit",
    "build_system_prompt",
    "builtin_hooks",
    "checked_base_url",
    "classify_max_tokens",
    "conversation_bytes",
    "drop_null_input_tool_uses",
    "is_transient",
    "key_actions",
    "new_session_id",
    "parse_retry_after",
    "parse_sse_bytes",
    "project_instructions",
    "read_transcript",
    "recover_conversation",
    "render_context",
    "resolve_base_url",
    "retry_delay",
    "run_agent",
    "should_trim",
    "status_error",
    "stream_error_from_event",
    "summarize_input",
    "text_response",
    "tool_use_response",
    "transcript_line",
    "transcript_timestamp",
    "trim_conversation",
    "usage_limit_wait",
]
