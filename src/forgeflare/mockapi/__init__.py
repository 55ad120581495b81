"""``forgeflare mock-api``: a scripted, protocol-accurate Anthropic Messages API server.

The server answers ``POST /v1/messages`` (streamed or plain JSON) and
``POST /v1/messages/count_tokens`` from a script of responses consumed in order. The pure
parts are public so that benchmarks and tests can produce the exact bytes it streams::

    from forgeflare.mockapi import encode_sse, render_events
    data = encode_sse(render_events({"content": [{"type": "text", "text": "hi"}]}, model="m"))

``start_mock_api`` / ``stop_mock_api`` run the server as a child process (the demo and the
tests do), without importing trio in the parent. The names load on first use (PEP 562):
`forgeflare mock-api` loads only the server it serves (no ``http.server`` for Messages, no
trio or pydantic for Responses).

Errors (a branch of ``ForgeflareError``)::

    MockAPIError              the server could not do what it was asked
    ├── MockScriptError       the script is missing, unreadable or invalid (a ConfigError)
    └── MockListenError       the listening socket could not be bound
"""

from __future__ import annotations

from forgeflare._lazyface import lazy_face

TYPE_CHECKING = False  # not typing's: as the other lazy faces
if TYPE_CHECKING:  # mypy treats any TYPE_CHECKING as true
    from forgeflare.mockapi._decide import COUNT_TOKENS_PATH as COUNT_TOKENS_PATH
    from forgeflare.mockapi._decide import JSONReply as JSONReply
    from forgeflare.mockapi._decide import MESSAGES_PATH as MESSAGES_PATH
    from forgeflare.mockapi._decide import MockRequest as MockRequest
    from forgeflare.mockapi._decide import Reply as Reply
    from forgeflare.mockapi._decide import ScriptReply as ScriptReply
    from forgeflare.mockapi._decide import StreamReply as StreamReply
    from forgeflare.mockapi._decide import choose_conversation as choose_conversation
    from forgeflare.mockapi._decide import decide as decide
    from forgeflare.mockapi._decide import first_user_text as first_user_text
    from forgeflare.mockapi._decide import record_entry as record_entry
    from forgeflare.mockapi._errors import MockAPIError as MockAPIError
    from forgeflare.mockapi._errors import MockListenError as MockListenError
    from forgeflare.mockapi._errors import MockScriptError as MockScriptError
    from forgeflare.mockapi._listen import Listen as Listen
    from forgeflare.mockapi._render import Event as Event
    from forgeflare.mockapi._render import count_tokens as count_tokens
    from forgeflare.mockapi._render import encode_event as encode_event
    from forgeflare.mockapi._render import encode_sse as encode_sse
    from forgeflare.mockapi._render import error_body as error_body
    from forgeflare.mockapi._render import make_id as make_id
    from forgeflare.mockapi._render import message_events as message_events
    from forgeflare.mockapi._render import render_events as render_events
    from forgeflare.mockapi._render import render_message as render_message
    from forgeflare.mockapi._repeat import RepeatWindows as RepeatWindows
    from forgeflare.mockapi._script import DEFAULT_ERROR_MESSAGES as DEFAULT_ERROR_MESSAGES
    from forgeflare.mockapi._script import ERROR_STATUS as ERROR_STATUS
    from forgeflare.mockapi._script import HTTPErrorSpec as HTTPErrorSpec
    from forgeflare.mockapi._script import RedactedThinkingSpec as RedactedThinkingSpec
    from forgeflare.mockapi._script import Script as Script
    from forgeflare.mockapi._script import ScriptBlock as ScriptBlock
    from forgeflare.mockapi._script import ScriptConversation as ScriptConversation
    from forgeflare.mockapi._script import ScriptResponse as ScriptResponse
    from forgeflare.mockapi._script import ServerToolResultSpec as ServerToolResultSpec
    from forgeflare.mockapi._script import ServerToolUseSpec as ServerToolUseSpec
    from forgeflare.mockapi._script import StallSpec as StallSpec
    from forgeflare.mockapi._script import StreamErrorSpec as StreamErrorSpec
    from forgeflare.mockapi._script import TextSpec as TextSpec
    from forgeflare.mockapi._script import ThinkingSpec as ThinkingSpec
    from forgeflare.mockapi._script import ToolUseSpec as ToolUseSpec
    from forgeflare.mockapi._script import UsageSpec as UsageSpec
    from forgeflare.mockapi._script import load_script as load_script
    from forgeflare.mockapi._script import parse_script as parse_script
    from forgeflare.mockapi._server import run_server as run_server
    from forgeflare.mockapi._server import serve as serve
    from forgeflare.mockapi._spawn import start_mock_api as start_mock_api
    from forgeflare.mockapi._spawn import stop_mock_api as stop_mock_api
    from forgeflare.mockapi._responses import ResponsesServer as ResponsesServer
    from forgeflare.mockapi._responses import responses_events as responses_events
    from forgeflare.mockapi._responses import responses_sse as responses_sse

__getattr__, __dir__, __all__ = lazy_face(
    __name__,
    _decide=(
        "COUNT_TOKENS_PATH JSONReply MESSAGES_PATH MockRequest Reply ScriptReply"
        " StreamReply choose_conversation decide first_user_text record_entry"
    ),
    _errors="MockAPIError MockListenError MockScriptError",
    _listen="Listen",
    _render=(
        "Event count_tokens encode_event encode_sse error_body make_id message_events"
        " render_events render_message"
    ),
    _repeat="RepeatWindows",
    _script=(
        "DEFAULT_ERROR_MESSAGES ERROR_STATUS HTTPErrorSpec RedactedThinkingSpec Script"
        " ScriptBlock ScriptConversation ScriptResponse ServerToolResultSpec"
        " ServerToolUseSpec StallSpec StreamErrorSpec TextSpec ThinkingSpec ToolUseSpec"
        " UsageSpec load_script parse_script"
    ),
    _server="run_server serve",
    _spawn="start_mock_api stop_mock_api",
    _responses="ResponsesServer responses_events responses_sse",
)
