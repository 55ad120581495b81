"""``forgeflare mock-api``: a scripted, protocol-accurate Anthropic Messages API server.

The server answers ``POST /v1/messages`` (streamed or plain JSON) and
``POST /v1/messages/count_tokens`` from a script of responses consumed in order. The pure
parts are public so that benchmarks and tests can produce the exact bytes it streams::

    from forgeflare.mockapi import encode_sse, render_events
    data = encode_sse(render_events({"content": [{"type": "text", "text": "hi"}]}, model="m"))

``start_mock_api`` / ``stop_mock_api`` run the server as a child process (the demo and the
tests do), without importing trio in the parent.

Errors (a branch of ``ForgeflareError``)::

    MockAPIError              the server could not do what it was asked
    ├── MockScriptError       the script is missing, unreadable or invalid (a ConfigError)
    └── MockListenError       the listening socket could not be bound
"""

from forgeflare.mockapi._decide import (
    COUNT_TOKENS_PATH,
    MESSAGES_PATH,
    JSONReply,
    Reply,
    ScriptReply,
    StreamReply,
    choose_conversation,
    decide,
    first_user_text,
    record_entry,
)
from forgeflare.mockapi._errors import MockAPIError, MockListenError, MockScriptError
from forgeflare.mockapi._render import (
    Event,
    count_tokens,
    encode_event,
    encode_sse,
    error_body,
    make_id,
    message_events,
    render_events,
    render_message,
)
from forgeflare.mockapi._repeat import RepeatWindows
from forgeflare.mockapi._script import (
    DEFAULT_ERROR_MESSAGES,
    ERROR_STATUS,
    HTTPErrorSpec,
    RedactedThinkingSpec,
    Script,
    ScriptBlock,
    ScriptConversation,
    ScriptResponse,
    ServerToolResultSpec,
    ServerToolUseSpec,
    StallSpec,
    StreamErrorSpec,
    TextSpec,
    ThinkingSpec,
    ToolUseSpec,
    UsageSpec,
    load_script,
    parse_script,
)
from forgeflare.mockapi._server import run_server, serve
from forgeflare.mockapi._spawn import start_mock_api, stop_mock_api

__all__ = [
    "COUNT_TOKENS_PATH",
    "DEFAULT_ERROR_MESSAGES",
    "ERROR_STATUS",
    "MESSAGES_PATH",
    "Event",
    "HTTPErrorSpec",
    "JSONReply",
    "MockAPIError",
    "MockListenError",
    "MockScriptError",
    "RedactedThinkingSpec",
    "RepeatWindows",
    "Reply",
    "Script",
    "ScriptBlock",
    "ScriptConversation",
    "ScriptReply",
    "ScriptResponse",
    "ServerToolResultSpec",
    "ServerToolUseSpec",
    "StallSpec",
    "StreamErrorSpec",
    "StreamReply",
    "TextSpec",
    "ThinkingSpec",
    "ToolUseSpec",
    "UsageSpec",
    "choose_conversation",
    "count_tokens",
    "decide",
    "encode_event",
    "encode_sse",
    "error_body",
    "first_user_text",
    "load_script",
    "make_id",
    "message_events",
    "parse_script",
    "record_entry",
    "render_events",
    "render_message",
    "run_server",
    "serve",
    "start_mock_api",
    "stop_mock_api",
]
