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

from forgeflare.mockapi._decide import COUNT_TOKENS_PATH
from forgeflare.mockapi._decide import JSONReply
from forgeflare.mockapi._decide import MESSAGES_PATH
from forgeflare.mockapi._decide import MockRequest
from forgeflare.mockapi._decide import Reply
from forgeflare.mockapi._decide import ScriptReply
from forgeflare.mockapi._decide import StreamReply
from forgeflare.mockapi._decide import choose_conversation
from forgeflare.mockapi._decide import decide
from forgeflare.mockapi._decide import first_user_text
from forgeflare.mockapi._decide import record_entry
from forgeflare.mockapi._errors import MockAPIError
from forgeflare.mockapi._errors import MockListenError
from forgeflare.mockapi._errors import MockScriptError
from forgeflare.mockapi._listen import Listen
from forgeflare.mockapi._render import Event
from forgeflare.mockapi._render import count_tokens
from forgeflare.mockapi._render import encode_event
from forgeflare.mockapi._render import encode_sse
from forgeflare.mockapi._render import error_body
from forgeflare.mockapi._render import make_id
from forgeflare.mockapi._render import message_events
from forgeflare.mockapi._render import render_events
from forgeflare.mockapi._render import render_message
from forgeflare.mockapi._repeat import RepeatWindows
from forgeflare.mockapi._script import DEFAULT_ERROR_MESSAGES
from forgeflare.mockapi._script import ERROR_STATUS
from forgeflare.mockapi._script import HTTPErrorSpec
from forgeflare.mockapi._script import RedactedThinkingSpec
from forgeflare.mockapi._script import Script
from forgeflare.mockapi._script import ScriptBlock
from forgeflare.mockapi._script import ScriptConversation
from forgeflare.mockapi._script import ScriptResponse
from forgeflare.mockapi._script import ServerToolResultSpec
from forgeflare.mockapi._script import ServerToolUseSpec
from forgeflare.mockapi._script import StallSpec
from forgeflare.mockapi._script import StreamErrorSpec
from forgeflare.mockapi._script import TextSpec
from forgeflare.mockapi._script import ThinkingSpec
from forgeflare.mockapi._script import ToolUseSpec
from forgeflare.mockapi._script import UsageSpec
from forgeflare.mockapi._script import load_script
from forgeflare.mockapi._script import parse_script
from forgeflare.mockapi._server import run_server
from forgeflare.mockapi._server import serve
from forgeflare.mockapi._spawn import start_mock_api
from forgeflare.mockapi._spawn import stop_mock_api

from forgeflare.mockapi._responses import ResponsesServer
from forgeflare.mockapi._responses import responses_events
from forgeflare.mockapi._responses import responses_sse

__all__ = [
    "COUNT_TOKENS_PATH",
    "DEFAULT_ERROR_MESSAGES",
    "ERROR_STATUS",
    "MESSAGES_PATH",
    "Event",
    "HTTPErrorSpec",
    "JSONReply",
    "Listen",
    "MockAPIError",
    "MockListenError",
    "MockRequest",
    "MockScriptError",
    "RedactedThinkingSpec",
    "RepeatWindows",
    "Reply",
    "ResponsesServer",
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
    "responses_events",
    "responses_sse",
    "run_server",
    "serve",
    "start_mock_api",
    "stop_mock_api",
]
