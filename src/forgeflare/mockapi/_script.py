"""The mock server's script: a list of scripted responses, validated when loaded.

A script is JSON (or TOML when the file name ends in ``.toml``)::

    {"responses": [{"content": [{"type": "text", "text": "Hi."}], "stop_reason": "end_turn"},
                   {"error": {"status": 529, "type": "overloaded_error"}}],
     "when_exhausted": "error"}

Every request to ``POST /v1/messages`` consumes the next response, in order. A script for
parallel clients holds several conversations instead, each chosen by a substring of the
request's first user message and consumed in its own order::

    {"conversations": [{"match": "parser", "responses": [...]},
                       {"match": "lexer", "responses": [...]}]}
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from forgeflare.disk import Loc, error_key, loads, scrub_surrogates, validation_message
from forgeflare.mockapi._errors import MockScriptError

__all__ = [
    "DEFAULT_ERROR_MESSAGES",
    "ERROR_STATUS",
    "HTTPErrorSpec",
    "RedactedThinkingSpec",
    "Script",
    "ScriptBlock",
    "ScriptConversation",
    "ScriptResponse",
    "ServerToolResultSpec",
    "ServerToolUseSpec",
    "StallSpec",
    "StreamErrorSpec",
    "TextSpec",
    "ThinkingSpec",
    "ToolUseSpec",
    "UsageSpec",
    "load_script",
    "parse_script",
]

#: HTTP status the real API uses for each error type (used when a script gives only one).
ERROR_STATUS: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}

#: Message used when a script gives an error type but no message.
DEFAULT_ERROR_MESSAGES: dict[str, str] = {
    "invalid_request_error": "Invalid request",
    "authentication_error": "invalid x-api-key",
    "billing_error": "Billing error",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "Not found",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": "Number of requests has exceeded your rate limit.",
    "api_error": "Internal server error",
    "timeout_error": "Request timeout",
    "overloaded_error": "Overloaded",
}


def _type_for_status(status: int) -> str:
    for name, code in ERROR_STATUS.items():
        if code == status:
            return name
    return "api_error" if status >= 500 else "invalid_request_error"


class _Spec(BaseModel):
    # Unknown keys are typos in a hand-written script: reject them rather than ignore them.
    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)


class TextSpec(_Spec):
    """A text block, streamed as ``text_delta`` chunks."""

    type: Literal["text"]
    text: str


class ToolUseSpec(_Spec):
    """A tool call, streamed as ``input: {}`` then ``input_json_delta`` chunks."""

    type: Literal["tool_use"]
    id: str | None = None
    """Tool-use id; a deterministic ``toolu_...`` id is generated when absent."""
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class ThinkingSpec(_Spec):
    """Extended thinking, streamed as ``thinking_delta`` chunks then one ``signature_delta``."""

    type: Literal["thinking"]
    thinking: str
    signature: str | None = None
    """Signature sent back by clients; a deterministic one is generated when absent."""


class RedactedThinkingSpec(_Spec):
    """Redacted thinking: its ``data`` arrives whole in ``content_block_start``."""

    type: Literal["redacted_thinking"]
    data: str


class ServerToolUseSpec(_Spec):
    """A server tool call (web search and the like), streamed like ``tool_use``."""

    type: Literal["server_tool_use"]
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class ServerToolResultSpec(_Spec):
    """A server tool's result: it arrives whole in ``content_block_start``."""

    type: Literal["web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result"]
    tool_use_id: str
    content: Any


ScriptBlock = Annotated[
    TextSpec
    | ToolUseSpec
    | ThinkingSpec
    | RedactedThinkingSpec
    | ServerToolUseSpec
    | ServerToolResultSpec,
    Field(discriminator="type"),
]


class UsageSpec(_Spec):
    """Token counts to report; omitted counts are estimated from the request or content."""

    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    cache_creation_input_tokens: int = Field(default=0, ge=0)
    cache_read_input_tokens: int = Field(default=0, ge=0)


class HTTPErrorSpec(_Spec):
    """Answer with an HTTP error instead of a message.

    Give ``status`` or ``type`` (or both); the other is the real API's counterpart.
    """

    status: int | None = Field(default=None, ge=400, le=599)
    type: str | None = None
    message: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    """Extra response headers, e.g. ``{"retry-after": "0"}`` or ``{"x-should-retry": "false"}``."""

    @model_validator(mode="after")
    def _status_or_type(self) -> HTTPErrorSpec:
        if self.status is None and self.type is None:
            raise ValueError("an error needs a status or a type")
        return self

    @property
    def error_status(self) -> int:
        """The HTTP status to send."""
        if self.status is not None:
            return self.status
        return ERROR_STATUS.get(self.type or "", 500)

    @property
    def error_type(self) -> str:
        """The ``error.type`` to send."""
        return self.type if self.type is not None else _type_for_status(self.error_status)

    @property
    def error_message(self) -> str:
        """The ``error.message`` to send."""
        return _message_or_default(self.message, self.error_type)


def _message_or_default(message: str | None, error_type: str) -> str:
    """The scripted message, else the API's usual message for ``error_type``."""
    return message if message is not None else DEFAULT_ERROR_MESSAGES.get(error_type, "Error")


class StreamErrorSpec(_Spec):
    """Send an ``event: error`` after ``after_events`` events of the stream, then end it."""

    type: str = "overloaded_error"
    message: str | None = None
    after_events: int = Field(default=0, ge=0)

    @property
    def error_message(self) -> str:
        """The ``error.message`` to send."""
        return _message_or_default(self.message, self.type)


class StallSpec(_Spec):
    """Pause ``ms`` milliseconds after ``after_events`` events (for read-timeout tests)."""

    after_events: int = Field(default=0, ge=0)
    ms: int = Field(ge=0)


class ScriptResponse(_Spec):
    """One scripted answer to ``POST /v1/messages``.

    ``delay_ms`` and ``error`` apply to every request; ``stall``, ``event_delay_ms`` and
    truncation only to streams; a ``stream_error`` becomes an HTTP error of its type when the
    request does not stream.
    """

    content: list[ScriptBlock] = Field(default_factory=list)
    stop_reason: Literal[
        "end_turn", "max_tokens", "tool_use", "stop_sequence", "pause_turn", "refusal"
    ] = "end_turn"
    stop_sequence: str | None = None
    usage: UsageSpec = Field(default_factory=UsageSpec)
    model: str | None = None
    """Model name to report; the request's ``model`` when absent."""
    delay_ms: int = Field(default=0, ge=0)
    """Wait this long before sending the response (headers included)."""
    event_delay_ms: int = Field(default=0, ge=0)
    """Wait this long between stream events (a slow, real-time stream)."""
    chunk_chars: int = Field(default=16, ge=1)
    """Characters per text, thinking and input-JSON delta."""
    stall: StallSpec | None = None
    truncate_after_events: int | None = Field(default=None, ge=0)
    """Send only this many events, then end the body and close: no ``message_stop``."""
    truncate_mode: Literal["eof", "drop"] = "eof"
    """``eof`` ends the HTTP body cleanly; ``drop`` closes the connection mid-body."""
    stream_error: StreamErrorSpec | None = None
    error: HTTPErrorSpec | None = None
    repeat_for_ms: int | None = Field(default=None, ge=0)
    """Answer every request with this response for this long (wall clock, from the first
    request it answered), then move on: an outage of N ms, whatever the clients retry."""

    @model_validator(mode="after")
    def _error_is_exclusive(self) -> ScriptResponse:
        if self.error is not None and (
            self.content or self.stream_error is not None or self.truncate_after_events is not None
        ):
            raise ValueError("'error' cannot be combined with content, stream_error or truncation")
        return self


class ScriptConversation(_Spec):
    """One conversation of a multi-conversation script: its own responses, in its own order."""

    match: str = Field(min_length=1)
    """Chooses this conversation: a substring of the request's first user message, or the name
    of one of its tools."""
    responses: list[ScriptResponse] = Field(default_factory=list)


class Script(_Spec):
    """A whole script: the responses in order, and what to do once they are used up."""

    responses: list[ScriptResponse] = Field(default_factory=list)
    conversations: list[ScriptConversation] = Field(default_factory=list)
    """Instead of ``responses``: conversations chosen by a substring of the first user message
    (the first that matches wins), for parallel clients such as a fleet's loops."""
    when_exhausted: Literal["error", "end_turn"] = "error"
    """``error``: a 500 ``api_error`` saying so; ``end_turn``: a plain end_turn text answer."""
    exhausted_text: str = "Done."
    """The text of the ``end_turn`` answer given once the script is exhausted."""
    require_auth: bool = False
    """Answer 401 to requests with neither ``x-api-key`` nor ``Authorization: Bearer``."""

    @model_validator(mode="after")
    def _responses_or_conversations(self) -> Script:
        if self.responses and self.conversations:
            raise ValueError("give 'responses' or 'conversations', not both")
        return self


_BLOCK_TAGS = frozenset({"text", "tool_use", "thinking", "redacted_thinking"})


def _script_key(loc: Loc) -> str:
    # pydantic adds the discriminator tag to the path; it only repeats the block type.
    return error_key(loc, tags=_BLOCK_TAGS) or "(top level)"


def parse_script(data: object, *, source: str = "script") -> Script:
    """Validate already-parsed script data; raise ``MockScriptError`` naming ``source``."""
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        line = validation_message(exc, source, key=_script_key, count_others=True)
        raise MockScriptError(f"mock script {line}") from exc


def load_script(path: Path) -> Script:
    """Read and validate a script file (TOML when it ends in ``.toml``, JSON otherwise)."""
    return parse_script(read_script_data(path, "'responses' or 'conversations'"), source=str(path))


def read_script_data(path: Path, expected: str) -> Mapping[str, Any]:
    """A script file's object (TOML when it ends in ``.toml``, JSON otherwise); ``expected``
    names its keys in the one line a file that holds no object gets."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise MockScriptError(f"mock script {path}: file not found") from exc
    except OSError as exc:
        raise MockScriptError(f"mock script {path}: cannot read: {exc.strerror or exc}") from exc
    data: Any
    if path.suffix.lower() == ".toml":
        try:
            data = scrub_surrogates(tomllib.loads(raw.decode("utf-8")))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise MockScriptError(f"mock script {path}: invalid TOML: {exc}") from exc
    else:
        try:
            data = loads(raw)  # lone surrogates replaced: the server could not send them
        except ValueError as exc:
            raise MockScriptError(f"mock script {path}: invalid JSON: {exc}") from exc
    if not isinstance(data, Mapping):
        raise MockScriptError(f"mock script {path}: expected an object with {expected}")
    return data
